"""A FOCUS 1.2 checker for cost-and-usage CSV, written from the specification's own rules
(FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec at tag v1.2: specification/columns/*.md, and the
attributes column_handling, key_value_format, numeric_format, datetime_format, unit_format and
discount_handling). Every MUST of those files that a cost forecast can break is checked, and
the SHOULDs that apply to one; each message quotes the rule's own sentence and names the
column, as `row N, Column: <the specification's sentence>` (dataset-wide rules: `dataset`).

What a forecast cannot show is not checked: invoice sums (a forecast has no invoice), and
rules that need the provider's price list or documentation (SkuPriceId "MUST reference a SKU
Price in a provider-supplied price list"). Presence: the columns FOCUS makes mandatory, and the
conditional ones the clouds gpucost forecasts (AWS, Azure, Google Cloud) support: commitment
discounts, capacity reservations, published price lists, provisioned resources, regions, tags,
usage measurement, negotiated prices, sub accounts (CONDITIONAL below). BillingAccountType and
SubAccountType are required only "when the provider supports more than one possible ...
value"; a forecast's one account has one, so they are not required.

validate(text) -> list of problem strings (empty: valid); validate_dataset([text, ...]) checks
several files as one FOCUS dataset (the dataset-wide rules across all of them).
"""
import csv
import io
import json
import re

MANDATORY = [
    "BilledCost", "BillingAccountId", "BillingAccountName", "BillingCurrency",
    "BillingPeriodEnd", "BillingPeriodStart", "ChargeCategory", "ChargeClass",
    "ChargeDescription", "ChargePeriodEnd", "ChargePeriodStart", "ContractedCost",
    "EffectiveCost", "InvoiceIssuerName", "ListCost", "PricingQuantity", "PricingUnit",
    "ProviderName", "PublisherName", "ServiceCategory", "ServiceName",
]
# "... MUST be present in a FOCUS dataset when the provider supports ..." for what the clouds
# support, and the RECOMMENDED columns a forecast can fill.
CONDITIONAL = [
    "AvailabilityZone", "CapacityReservationId", "CapacityReservationStatus",
    "CommitmentDiscountCategory", "CommitmentDiscountId", "CommitmentDiscountName",
    "CommitmentDiscountQuantity", "CommitmentDiscountStatus", "CommitmentDiscountType",
    "CommitmentDiscountUnit", "ConsumedQuantity", "ConsumedUnit", "ContractedUnitPrice",
    "ListUnitPrice", "PricingCategory", "PricingCurrency", "RegionId", "RegionName",
    "ResourceId", "ResourceName", "ResourceType", "SkuId", "SkuMeter", "SkuPriceDetails",
    "SkuPriceId", "SubAccountId", "SubAccountName", "Tags",
]
RECOMMENDED = ["ChargeFrequency", "InvoiceId", "ServiceSubcategory"]
REQUIRED = MANDATORY + CONDITIONAL + RECOMMENDED

CHARGE_CATEGORY = {"Usage", "Purchase", "Tax", "Credit", "Adjustment"}
CHARGE_CLASS = {"Correction"}
CHARGE_FREQUENCY = {"One-Time", "Recurring", "Usage-Based"}
PRICING_CATEGORY = {"Standard", "Dynamic", "Committed", "Other"}
COMMITMENT_DISCOUNT_CATEGORY = {"Spend", "Usage"}
USED_UNUSED = {"Used", "Unused"}
SERVICE_SUBCATEGORY = {
    "AI and Machine Learning": ["AI Platforms", "Bots", "Generative AI", "Machine Learning",
                                "Natural Language Processing"],
    "Analytics": ["Analytics Platforms", "Business Intelligence", "Data Processing", "Search",
                  "Streaming Analytics"],
    "Business Applications": ["Productivity and Collaboration"],
    "Compute": ["Containers", "End User Computing", "Quantum Compute", "Serverless Compute",
                "Virtual Machines"],
    "Databases": ["Caching", "Data Warehouses", "Ledger Databases", "NoSQL Databases",
                  "Relational Databases", "Time Series Databases"],
    "Developer Tools": ["Developer Platforms", "Continuous Integration and Deployment",
                        "Development Environments", "Source Code Management",
                        "Quality Assurance"],
    "Identity": ["Identity and Access Management"],
    "Integration": ["API Management", "Messaging", "Workflow Orchestration"],
    "Internet of Things": ["IoT Analytics", "IoT Platforms"],
    "Management and Governance": ["Architecture", "Compliance", "Cost Management",
                                  "Data Governance", "Disaster Recovery", "Endpoint Management",
                                  "Observability", "Support"],
    "Media": ["Content Creation", "Gaming", "Media Streaming", "Mixed Reality"],
    "Migration": ["Data Migration", "Resource Migration"],
    "Mobile": [],
    "Multicloud": ["Multicloud Integration"],
    "Networking": ["Application Networking", "Content Delivery", "Network Connectivity",
                   "Network Infrastructure", "Network Routing", "Network Security"],
    "Security": ["Secret Management", "Security Posture Management",
                 "Threat Detection and Response"],
    "Storage": ["Backup Storage", "Block Storage", "File Storage", "Object Storage",
                "Storage Platforms"],
    "Web": ["Application Platforms"],
    "Other": [],
}
for _category, _subs in SERVICE_SUBCATEGORY.items():
    _subs.append(f"Other ({_category})")
SERVICE_CATEGORY = set(SERVICE_SUBCATEGORY)
PARENT_CATEGORY = {s: c for c, subs in SERVICE_SUBCATEGORY.items() for s in subs}

# NumericFormat: an integer, a decimal or E notation whose exponent carries a sign only when
# negative; no "+", no commas, no units.
DECIMAL = re.compile(r"^-?\d+(\.\d+)?([eE]-?\d+)?$")
DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
CURRENCY = re.compile(r"^[A-Z]{3}$")
PASCAL_CASE = re.compile(r"^[A-Z][A-Za-z0-9]*$")
# UnitFormat's recommended units: data sizes, counts and times (plural forms of counts and
# times; a count-based noun not listed is allowed if capitalized).
UNIT_TIMES = {"Year", "Month", "Day", "Hour", "Minute", "Second"}
UNIT_SIZES = {p + s for p in ("", "K", "M", "G", "T", "P", "E") for s in ("b", "B")} | \
    {p + "i" + s for p in ("K", "M", "G", "T", "P", "E") for s in ("b", "B")}

DECIMALS = {"BilledCost", "CommitmentDiscountQuantity", "ConsumedQuantity", "ContractedCost",
            "ContractedUnitPrice", "EffectiveCost", "ListCost", "ListUnitPrice",
            "PricingQuantity"}
DATETIMES = {"BillingPeriodEnd", "BillingPeriodStart", "ChargePeriodEnd", "ChargePeriodStart"}
ALLOWED = {
    "ChargeCategory": CHARGE_CATEGORY, "ChargeClass": CHARGE_CLASS,
    "ChargeFrequency": CHARGE_FREQUENCY, "PricingCategory": PRICING_CATEGORY,
    "CommitmentDiscountCategory": COMMITMENT_DISCOUNT_CATEGORY,
    "CommitmentDiscountStatus": USED_UNUSED, "CapacityReservationStatus": USED_UNUSED,
    "ServiceCategory": SERVICE_CATEGORY, "ServiceSubcategory": set(PARENT_CATEGORY),
}
NOT_NULL = ["BilledCost", "BillingAccountId", "BillingCurrency", "BillingPeriodEnd",
            "BillingPeriodStart", "ChargeCategory", "ChargeFrequency", "ChargePeriodEnd",
            "ChargePeriodStart", "ContractedCost", "EffectiveCost", "InvoiceIssuerName",
            "ListCost", "PricingCurrency", "ProviderName", "PublisherName", "ServiceCategory",
            "ServiceName", "ServiceSubcategory"]
FOCUS_COLUMNS = set(REQUIRED) | {"BillingAccountType", "SubAccountType",
                                 "PricingCurrencyContractedUnitPrice",
                                 "PricingCurrencyEffectiveCost", "PricingCurrencyListUnitPrice"}

# Relative tolerance for cost = unit price x quantity and for sums (the CSV rounds to 6
# decimals).
TOLERANCE = 1e-4


def _is(value):
    return value not in ("", None)


def _num(value):
    return float(value) if _is(value) and DECIMAL.match(value) else None


def _close(a, b):
    return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))


def _unit_problem(unit):
    """None when `unit` follows UnitFormat's forms; else why not."""
    def word(w, plural):
        if w in UNIT_SIZES:
            return True
        base = w[:-1] if plural and w.endswith("s") else w
        return base in UNIT_TIMES or (w[:1].isupper() and w.isalpha())
    m = re.match(r"^(?:(\d+) )?([A-Za-z]+)(?:-([A-Za-z]+)|/(?:(\d+) )?([A-Za-z]+))?$", unit)
    if not m:
        return "is not one of UnitFormat's forms"
    _, units, per_time, _, slash_time = m.groups()
    if not word(units, True):
        return f"'{units}' is not a recommended unit"
    if per_time and not (per_time.endswith("s") and per_time[:-1] in UNIT_TIMES):
        return f"'{per_time}' is not a plural time unit"
    if slash_time and slash_time not in UNIT_TIMES and not (
            slash_time.endswith("s") and slash_time[:-1] in UNIT_TIMES):
        return f"'{slash_time}' is not a time unit"
    return None


def _key_value_problem(value):
    """KeyValueFormat: "a serialized JSON string, consistent with the ECMA 404 definition of an
    object"; values "number, string, true, false, or null"."""
    try:
        pairs = json.loads(value, object_pairs_hook=lambda p: p)
    except ValueError:
        return ("Key-Value Format columns MUST contain a serialized JSON string, consistent "
                "with the ECMA 404 definition of an object.")
    if not isinstance(pairs, list):
        return ("Key-Value Format columns MUST contain a serialized JSON string, consistent "
                "with the ECMA 404 definition of an object.")
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        return "Keys in a key-value pair MUST be unique within an object."
    if any(isinstance(v, list) for _, v in pairs):
        return "Values in a key-value pair MUST NOT be an object or an array."
    return None


def _format_problems(row):
    out = []
    for column, value in row.items():
        if not _is(value) or column not in FOCUS_COLUMNS:
            continue
        if column in DECIMALS and not DECIMAL.match(value):
            out.append((column, f"{column} MUST conform to NumericFormat requirements "
                                f"('{value}')."))
        elif column in DATETIMES and not DATETIME.match(value):
            out.append((column, f"{column} MUST conform to DateTimeFormat requirements "
                                f"('{value}')."))
        elif column in ("BillingCurrency", "PricingCurrency") and not CURRENCY.match(value):
            out.append((column, f"{column} MUST conform to CurrencyFormat requirements "
                                f"('{value}')."))
        elif column in ALLOWED and value not in ALLOWED[column]:
            out.append((column, f"{column} MUST be one of the allowed values ('{value}')."))
        elif column in ("Tags", "SkuPriceDetails"):
            problem = _key_value_problem(value)
            if problem:
                out.append((column, f"{column} MUST conform to KeyValueFormat requirements: "
                                    f"{problem}"))
        elif column in ("PricingUnit", "ConsumedUnit", "CommitmentDiscountUnit"):
            problem = _unit_problem(value)
            if problem:
                out.append((column, f"{column} SHOULD conform to UnitFormat requirements "
                                    f"('{value}' {problem})."))
    for column in NOT_NULL:
        if column in row and not _is(row[column]):
            out.append((column, f"{column} MUST NOT be null."))
    return out


def _rule(out, broken, column, sentence):
    if broken:
        out.append((column, sentence))


def _nullability(row):
    """The columns' "nullability is defined as follows" rules."""
    out = []
    g = row.get
    category = g("ChargeCategory")
    correction = g("ChargeClass") == "Correction"
    usage_or_purchase = category in ("Usage", "Purchase")
    priced = usage_or_purchase and not correction
    for column in ("ContractedUnitPrice", "ListUnitPrice", "PricingCategory", "PricingQuantity",
                   "SkuId", "SkuPriceId"):
        if column not in row:
            continue
        _rule(out, category == "Tax" and _is(g(column)), column,
              f'{column} MUST be null when ChargeCategory is "Tax".')
        _rule(out, priced and not _is(g(column)), column,
              f'{column} MUST NOT be null when ChargeCategory is "Usage" or "Purchase" and '
              f'ChargeClass is not "Correction".')
    _rule(out, "PricingUnit" in row and _is(g("PricingUnit")) != _is(g("PricingQuantity")),
          "PricingUnit", "PricingUnit MUST be null when PricingQuantity is null. PricingUnit "
          "MUST NOT be null when PricingQuantity is not null.")
    if "ConsumedQuantity" in row:
        unused = g("CommitmentDiscountStatus") == "Unused"
        _rule(out, (category != "Usage" or unused) and _is(g("ConsumedQuantity")),
              "ConsumedQuantity", 'ConsumedQuantity MUST be null when ChargeCategory is not '
              '"Usage", or when ChargeCategory is "Usage" and CommitmentDiscountStatus is '
              '"Unused".')
        _rule(out, category == "Usage" and not unused and not correction and
              not _is(g("ConsumedQuantity")), "ConsumedQuantity",
              'ConsumedQuantity MUST NOT be null when ChargeClass is not "Correction" (for '
              'ChargeCategory "Usage" and CommitmentDiscountStatus not "Unused").')
        _rule(out, _is(g("ConsumedUnit")) != _is(g("ConsumedQuantity")), "ConsumedUnit",
              "ConsumedUnit MUST be null when ConsumedQuantity is null. ConsumedUnit MUST NOT "
              "be null when ConsumedQuantity is not null.")
    for column in ("ResourceName", "ResourceType"):
        _rule(out, column in row and _is(g(column)) and not _is(g("ResourceId")), column,
              f"{column} MUST be null when ResourceId is null.")
    _rule(out, "ResourceType" in row and _is(g("ResourceId")) and not _is(g("ResourceType")),
          "ResourceType", "ResourceType MUST NOT be null when ResourceId is not null.")
    _rule(out, _is(g("ResourceName")) and g("ResourceName") == g("ResourceId"), "ResourceName",
          "ResourceName MUST NOT duplicate ResourceId when the resource is not provisioned "
          "interactively or only has a system-generated ResourceId.")
    _rule(out, "RegionName" in row and _is(g("RegionName")) != _is(g("RegionId")), "RegionName",
          "RegionName MUST be null when RegionId is null. RegionName MUST NOT be null when "
          "RegionId is not null.")
    _rule(out, "SubAccountName" in row and _is(g("SubAccountName")) != _is(g("SubAccountId")),
          "SubAccountName", "SubAccountName MUST be null when SubAccountId is null. "
          "SubAccountName MUST NOT be null when SubAccountId is not null.")
    _rule(out, _is(g("SkuMeter")) and not _is(g("SkuId")), "SkuMeter",
          "SkuMeter MUST be null when SkuId is null.")
    _rule(out, "SkuMeter" in row and _is(g("SkuId")) and not _is(g("SkuMeter")), "SkuMeter",
          "SkuMeter SHOULD NOT be null when SkuId is not null.")
    _rule(out, _is(g("SkuPriceDetails")) and not _is(g("SkuPriceId")), "SkuPriceDetails",
          "SkuPriceDetails MUST be null when SkuPriceId is null.")
    _rule(out, "ChargeDescription" in row and not _is(g("ChargeDescription")),
          "ChargeDescription", "ChargeDescription SHOULD NOT be null.")
    out += _commitment_nullability(row, usage_or_purchase, correction)
    cr = _is(g("CapacityReservationId"))
    _rule(out, _is(g("CapacityReservationStatus")) and not cr, "CapacityReservationStatus",
          "CapacityReservationStatus MUST be null when CapacityReservationId is null.")
    _rule(out, "CapacityReservationStatus" in row and cr and category == "Usage" and
          not _is(g("CapacityReservationStatus")), "CapacityReservationStatus",
          'CapacityReservationStatus MUST NOT be null when CapacityReservationId is not null '
          'and ChargeCategory is "Usage".')
    return out


def _commitment_nullability(row, usage_or_purchase, correction):
    out = []
    g = row.get
    cd = _is(g("CommitmentDiscountId"))
    for column in ("CommitmentDiscountCategory", "CommitmentDiscountType"):
        if column in row:
            _rule(out, _is(g(column)) != cd, column,
                  f"{column} MUST be null when CommitmentDiscountId is null. {column} MUST NOT "
                  f"be null when CommitmentDiscountId is not null.")
    _rule(out, _is(g("CommitmentDiscountName")) and not cd, "CommitmentDiscountName",
          "CommitmentDiscountName MUST be null when CommitmentDiscountId is null.")
    _rule(out, _is(g("CommitmentDiscountStatus")) and not cd, "CommitmentDiscountStatus",
          "CommitmentDiscountStatus MUST be null when CommitmentDiscountId is null.")
    _rule(out, "CommitmentDiscountStatus" in row and cd and g("ChargeCategory") == "Usage" and
          not _is(g("CommitmentDiscountStatus")), "CommitmentDiscountStatus",
          'CommitmentDiscountStatus MUST NOT be null when CommitmentDiscountId is not null and '
          'Charge Category is "Usage".')
    if "CommitmentDiscountQuantity" in row:
        quantity = _is(g("CommitmentDiscountQuantity"))
        applies = usage_or_purchase and cd
        _rule(out, applies and not correction and not quantity, "CommitmentDiscountQuantity",
              'CommitmentDiscountQuantity MUST NOT be null when ChargeClass is not "Correction" '
              '(ChargeCategory "Usage" or "Purchase" and CommitmentDiscountId not null).')
        _rule(out, not applies and quantity, "CommitmentDiscountQuantity",
              "CommitmentDiscountQuantity MUST be null in all other cases.")
        _rule(out, _is(g("CommitmentDiscountUnit")) != quantity, "CommitmentDiscountUnit",
              "CommitmentDiscountUnit MUST be null when CommitmentDiscountQuantity is null. "
              "CommitmentDiscountUnit MUST NOT be null when CommitmentDiscountQuantity is not "
              "null.")
    # discount_handling: "Rows with a commitment discount applied to them MUST include a
    # CommitmentDiscountId."
    _rule(out, g("PricingCategory") == "Committed" and "CommitmentDiscountId" in row and not cd,
          "CommitmentDiscountId", 'CommitmentDiscountId MUST NOT be null when a charge is '
          'related to a commitment discount (PricingCategory "Committed").')
    return out


def _values(row):
    """Values and the cross-column rules of one row."""
    out = []
    g = row.get
    category = g("ChargeCategory")
    correction = g("ChargeClass") == "Correction"
    quantity = _num(g("PricingQuantity"))
    for cost, price in (("ListCost", "ListUnitPrice"), ("ContractedCost", "ContractedUnitPrice")):
        unit_price, total = _num(g(price)), _num(g(cost))
        _rule(out, unit_price is not None and unit_price < 0, price,
              f"{price} MUST be a non-negative decimal value.")
        if unit_price is not None and quantity is not None and total is not None and \
                not correction:
            _rule(out, not _close(unit_price * quantity, total), cost,
                  f"The product of {price} and PricingQuantity MUST match the {cost} when "
                  f"{price} is not null, PricingQuantity is not null, and ChargeClass is not "
                  f'"Correction" ({unit_price} x {quantity} != {total}).')
        if unit_price is None and total is not None and category == "Credit":
            _rule(out, not _close(total, _num(g("BilledCost")) or 0), cost,
                  f'{cost} of a charge unrelated to other charges (e.g., when the ChargeCategory '
                  f'is "Credit") MUST match the BilledCost.')
    effective = _num(g("EffectiveCost"))
    _rule(out, category == "Purchase" and effective not in (None, 0.0) and
          g("ChargeFrequency") != "Usage-Based", "EffectiveCost",
          'EffectiveCost MUST be 0 when ChargeCategory is "Purchase" and the purchase is '
          'intended to cover future eligible charges.')
    _rule(out, category == "Purchase" and g("ChargeFrequency") == "Usage-Based",
          "ChargeFrequency", 'ChargeFrequency MUST NOT be "Usage-Based" when ChargeCategory is '
          '"Purchase".')
    _rule(out, g("PricingCategory") == "Committed" and category == "Purchase",
          "PricingCategory", 'PricingCategory MUST be "Committed" when the charge is subject to '
          'an existing commitment discount and is not the purchase of the commitment discount.')
    # discount_handling: "The BilledCost MUST be 0 for any row where the commitment covers the
    # entire cost for the charge period."
    _rule(out, g("PricingCategory") == "Committed" and category == "Usage" and
          _num(g("BilledCost")) not in (None, 0.0), "BilledCost",
          "The BilledCost MUST be 0 for any row where the commitment covers the entire cost for "
          "the charge period.")
    # discount_handling: Unused rows "MUST have their CommitmentDiscountId and ResourceId set to
    # the ID assigned to the commitment discount"; the same for a purchase.
    if _is(g("CommitmentDiscountId")) and (g("CommitmentDiscountStatus") == "Unused" or
                                          category == "Purchase"):
        _rule(out, g("ResourceId") != g("CommitmentDiscountId"), "ResourceId",
              "The CommitmentDiscountId and ResourceId MUST be set to the ID assigned to the "
              "commitment discount.")
    _rule(out, g("CommitmentDiscountStatus") == "Used" and not _is(g("ResourceId")),
          "ResourceId", "ResourceId MUST be set to the ID of the resource that received the "
          "discount.")
    _rule(out, g("CapacityReservationStatus") == "Unused" and
          not _is(g("CapacityReservationId")), "CapacityReservationId",
          "CapacityReservationId MUST NOT be null when a charge represents the unused portion "
          "of a capacity reservation.")
    sub = g("ServiceSubcategory")
    _rule(out, _is(sub) and sub in PARENT_CATEGORY and PARENT_CATEGORY[sub] !=
          g("ServiceCategory"), "ServiceSubcategory",
          "ServiceSubcategory MUST have one and only one parent ServiceCategory as specified in "
          "the allowed values below.")
    for start, end in (("ChargePeriodStart", "ChargePeriodEnd"),
                       ("BillingPeriodStart", "BillingPeriodEnd")):
        _rule(out, _is(g(start)) and _is(g(end)) and not g(start) < g(end), end,
              f"{end} MUST be the exclusive end bound of the "
              f"{'charge' if start.startswith('Charge') else 'billing'} period (after {start}).")
    details = g("SkuPriceDetails")
    if _is(details) and not _key_value_problem(details):
        for key in json.loads(details):
            _rule(out, not key.startswith("x_") and not PASCAL_CASE.match(key), "SkuPriceDetails",
                  f'Property key MUST begin with the string "x_" unless it is a FOCUS-defined '
                  f"property ('{key}').")
    return out


def _dataset(rows):
    """The rules over many rows: consistency of ids and a commitment's sums."""
    out = []

    def unique(key_of, value_of, column, sentence, rows_=rows):
        seen = {}
        for r in rows_:
            key = key_of(r)
            if key is None or not _is(value_of(r)):
                continue
            seen.setdefault(key, set()).add(value_of(r))
        for key, values in sorted(seen.items(), key=lambda kv: str(kv[0])):
            if len(values) > 1:
                out.append(f"dataset, {column}: {sentence} ({key}: {sorted(values)})")

    unique(lambda r: r.get("SkuPriceId") or None, lambda r: r.get("SkuId"), "SkuPriceId",
           "SkuPriceId MUST have one and only one parent SkuId.")
    unique(lambda r: r.get("ServiceName") or None, lambda r: r.get("ServiceCategory"),
           "ServiceName", "ServiceName MUST have one and only one ServiceCategory that best "
           "aligns with its primary purpose, except when no suitable ServiceCategory is "
           "available.")
    unique(lambda r: r.get("ServiceName") or None, lambda r: r.get("ServiceSubcategory"),
           "ServiceName", "ServiceName SHOULD have one and only one ServiceSubcategory that "
           "best aligns with its primary purpose, except when no suitable ServiceSubcategory is "
           "available.")
    unique(lambda r: r.get("SkuId") or None, lambda r: r.get("SkuMeter"), "SkuMeter",
           "SkuMeter SHOULD remain consistent over time for a given SkuId.")
    unique(lambda r: r.get("CommitmentDiscountId") or None,
           lambda r: r.get("CommitmentDiscountUnit"), "CommitmentDiscountUnit",
           "CommitmentDiscountUnit MUST remain consistent over time for a given "
           "CommitmentDiscountId.")

    # The functionality of an instance SKU: its provider, region and instance type (the
    # FOCUS-defined SkuPriceDetails property InstanceType); its price type is not.
    def functionality(r):
        try:
            instance = json.loads(r.get("SkuPriceDetails") or "{}").get("InstanceType")
        except (ValueError, AttributeError):
            return None
        return (r.get("ProviderName"), r.get("RegionId"), instance) if instance else None
    unique(functionality, lambda r: r.get("SkuId"), "SkuId",
           "SkuId MUST remain consistent across PricingCategory values.")
    out += _commitment_sums(rows)
    return out


def _commitment_sums(rows):
    """discount_handling and EffectiveCost's rules per CommitmentDiscountId, where the dataset
    holds the commitment's purchase."""
    out = []
    by_id = {}
    for r in rows:
        if _is(r.get("CommitmentDiscountId")):
            by_id.setdefault(r["CommitmentDiscountId"], []).append(r)
    for cid, charges in sorted(by_id.items()):
        purchases = [r for r in charges if r.get("ChargeCategory") == "Purchase"]
        if not purchases:
            continue  # bought before the dataset's periods (owned capacity)
        usage = [r for r in charges if r.get("ChargeCategory") == "Usage"]
        usage_effective = sum(_num(r.get("EffectiveCost")) or 0 for r in usage)
        purchase_billed = sum(_num(r.get("BilledCost")) or 0 for r in purchases)
        if not _close(usage_effective, purchase_billed):
            out.append(f"dataset, EffectiveCost: The sum of EffectiveCost where ChargeCategory "
                       f'is "Usage" MUST equal the sum of BilledCost where ChargeCategory is '
                       f'"Purchase" ({cid}: {usage_effective} != {purchase_billed}).')
        # "If a commitment is not fully utilized, the provider MUST include a row that
        # represents the unused portion of the commitment for that charge period."
        for p in purchases:
            if p.get("ChargeFrequency") != "Recurring":
                continue
            eligible = _num(p.get("CommitmentDiscountQuantity")) or 0
            period = p.get("ChargePeriodStart")
            consumed = sum(_num(r.get("CommitmentDiscountQuantity")) or 0 for r in usage
                           if r.get("ChargePeriodStart") == period)
            if consumed < eligible * (1 - TOLERANCE):
                out.append(f"dataset, CommitmentDiscountStatus: If a commitment is not fully "
                           f"utilized, the provider MUST include a row that represents the "
                           f"unused portion of the commitment for that charge period ({cid}, "
                           f"{period}: {consumed} of {eligible} accounted for).")
    return out


# The presence rules' own conditions ("... MUST be present in a FOCUS dataset when ...").
PRESENT_WHEN = {
    "AvailabilityZone": "the provider supports deploying resources or services within an "
                        "availability zone",
    "CapacityReservationId": "the provider supports capacity reservations",
    "CapacityReservationStatus": "the provider supports capacity reservations",
    "ConsumedQuantity": "the provider supports the measurement of usage",
    "ConsumedUnit": "the provider supports the measurement of usage",
    "ContractedUnitPrice": "the provider supports negotiated pricing concepts",
    "ListUnitPrice": "the provider publishes unit prices exclusive of discounts",
    "PricingCategory": "the provider supports more than one pricing category across all SKUs",
    "PricingCurrency": "the provider supports pricing and billing in different currencies",
    "RegionId": "the provider supports deploying resources or services within a region",
    "RegionName": "the provider supports deploying resources or services within a region",
    "ResourceId": "the provider supports billing based on provisioned resources",
    "ResourceName": "the provider supports billing based on provisioned resources",
    "ResourceType": "the provider supports billing based on provisioned resources and supports "
                    "assigning types to resources",
    "SubAccountId": "the provider supports a sub account construct",
    "SubAccountName": "the provider supports a sub account construct",
    "Tags": "the provider supports setting user or provider-defined tags",
}
for _c in CONDITIONAL:
    if _c.startswith("CommitmentDiscount"):
        PRESENT_WHEN[_c] = "the provider supports commitment discounts"
    elif _c.startswith("Sku"):
        PRESENT_WHEN[_c] = ("the provider supports unit pricing concepts and publishes price "
                            "lists, publicly or as part of contracting")


def _presence(column):
    if column in RECOMMENDED or column == "AvailabilityZone":
        verb = "is RECOMMENDED to be present"
    else:
        verb = "MUST be present"
    when = f" when {PRESENT_WHEN[column]}" if column in PRESENT_WHEN else ""
    return f"{column} {verb} in a FOCUS dataset{when}."


def _header_problems(header, require):
    problems = [f"header, {c}: {_presence(c)}" for c in require if c not in header]
    problems += [f"header, {c}: Custom columns MUST be prefixed with a consistent `x_` prefix "
                 f"to identify them as external, custom columns." for c in header
                 if c not in FOCUS_COLUMNS and not c.startswith("x_")]
    if len(set(header)) != len(header):
        problems.append("header: a column is repeated")
    custom = [i for i, c in enumerate(header) if c.startswith("x_")]
    if custom and any(c in FOCUS_COLUMNS for c in header[custom[0]:]):
        problems.append("header: Custom columns SHOULD be listed after all FOCUS columns and "
                        "SHOULD NOT be intermixed.")
    return problems


def _rows_of(text, label, require):
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    problems = [f"{label}{p}" for p in _header_problems(header, require)]
    rows = []
    for n, row in enumerate(reader, start=2):
        if None in row or any(v is None for v in row.values()):
            problems.append(f"{label}row {n}: wrong number of cells")
            continue
        rows.append(row)
        for column, problem in _format_problems(row) + _nullability(row) + _values(row):
            problems.append(f"{label}row {n}, {column}: {problem}")
    return rows, problems


def validate_dataset(texts, require=REQUIRED):
    """Problems of several FOCUS CSV texts taken as one dataset (empty list: valid)."""
    rows, problems = [], []
    for i, text in enumerate(texts):
        label = f"file {i + 1}, " if len(texts) > 1 else ""
        file_rows, file_problems = _rows_of(text, label, require)
        rows += file_rows
        problems += file_problems
    return problems + _dataset(rows)


def validate(text, require=REQUIRED):
    """Problems of FOCUS CSV `text`, one string each (empty list: valid)."""
    return validate_dataset([text], require)


if __name__ == "__main__":
    import sys
    texts = []
    for path in sys.argv[1:]:
        with open(path, newline="") as f:
            texts.append(f.read())
    found = validate_dataset(texts)
    for p in found:
        print(p)
    sys.exit(1 if found else 0)
