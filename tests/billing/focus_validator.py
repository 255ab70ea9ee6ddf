"""A FOCUS 1.2 validator for cost-and-usage CSV, written from the specification's column rules
(FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec, specification/columns/*.md: data type,
nullability, allowed values, and the cross-column rules below). It checks the columns a file
has; `require` names the columns that must be present (the mandatory ones gpucost writes).

validate(rows, header) -> list of "row N, Column: problem" strings (empty: valid).
"""
import csv
import io
import json
import re

# Mandatory columns of FOCUS 1.2 that every gpucost forecast carries.
MANDATORY = [
    "BilledCost", "BillingAccountId", "BillingAccountName", "BillingCurrency",
    "BillingPeriodEnd", "BillingPeriodStart", "ChargeCategory", "ChargeClass",
    "ChargeDescription", "ChargePeriodEnd", "ChargePeriodStart", "ContractedCost",
    "ContractedUnitPrice", "EffectiveCost", "InvoiceIssuerName", "ListCost", "ListUnitPrice",
    "PricingCategory", "PricingQuantity", "PricingUnit", "ProviderName", "PublisherName",
    "ServiceCategory", "ServiceName",
]

CHARGE_CATEGORY = {"Usage", "Purchase", "Tax", "Credit", "Adjustment"}
CHARGE_CLASS = {"Correction"}
CHARGE_FREQUENCY = {"One-Time", "Recurring", "Usage-Based"}
PRICING_CATEGORY = {"Standard", "Dynamic", "Committed", "Other"}
COMMITMENT_DISCOUNT_CATEGORY = {"Spend", "Usage"}
COMMITMENT_DISCOUNT_STATUS = {"Used", "Unused"}
SERVICE_CATEGORY = {
    "AI and Machine Learning", "Analytics", "Business Applications", "Compute", "Databases",
    "Developer Tools", "Multicloud", "Identity", "Integration", "Internet of Things",
    "Management and Governance", "Media", "Migration", "Mobile", "Networking", "Security",
    "Storage", "Web", "Other",
}

DECIMAL = re.compile(r"^-?(\d+)(\.\d+)?([eE][-+]?\d+)?$")
DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
CURRENCY = re.compile(r"^[A-Z]{3}$")

# Column -> (type, nullable). Types: decimal, datetime, currency, string, json, and allowed
# value sets. Nullable columns may be empty; conditional rules are checked below.
COLUMNS = {
    "AvailabilityZone": ("string", True),
    "BilledCost": ("decimal", False),
    "BillingAccountId": ("string", False),
    "BillingAccountName": ("string", True),
    "BillingCurrency": ("currency", False),
    "BillingPeriodEnd": ("datetime", False),
    "BillingPeriodStart": ("datetime", False),
    "ChargeCategory": (CHARGE_CATEGORY, False),
    "ChargeClass": (CHARGE_CLASS, True),
    "ChargeDescription": ("string", True),
    "ChargeFrequency": (CHARGE_FREQUENCY, True),
    "ChargePeriodEnd": ("datetime", False),
    "ChargePeriodStart": ("datetime", False),
    "CommitmentDiscountCategory": (COMMITMENT_DISCOUNT_CATEGORY, True),
    "CommitmentDiscountId": ("string", True),
    "CommitmentDiscountName": ("string", True),
    "CommitmentDiscountStatus": (COMMITMENT_DISCOUNT_STATUS, True),
    "CommitmentDiscountType": ("string", True),
    "ConsumedQuantity": ("decimal", True),
    "ConsumedUnit": ("string", True),
    "ContractedCost": ("decimal", False),
    "ContractedUnitPrice": ("decimal", True),
    "EffectiveCost": ("decimal", False),
    "InvoiceId": ("string", True),
    "InvoiceIssuerName": ("string", False),
    "ListCost": ("decimal", False),
    "ListUnitPrice": ("decimal", True),
    "PricingCategory": (PRICING_CATEGORY, True),
    "PricingCurrency": ("currency", True),
    "PricingQuantity": ("decimal", True),
    "PricingUnit": ("string", True),
    "ProviderName": ("string", False),
    "PublisherName": ("string", False),
    "RegionId": ("string", True),
    "RegionName": ("string", True),
    "ResourceId": ("string", True),
    "ResourceName": ("string", True),
    "ResourceType": ("string", True),
    "ServiceCategory": (SERVICE_CATEGORY, False),
    "ServiceName": ("string", False),
    "SkuId": ("string", True),
    "SkuPriceId": ("string", True),
    "SubAccountId": ("string", True),
    "SubAccountName": ("string", True),
    "Tags": ("json", True),
}

# Relative tolerance for cost = unit price x quantity (the CSV rounds to 6 decimals).
PRODUCT_TOLERANCE = 1e-4


def _type_problem(kind, value):
    if isinstance(kind, set):
        return None if value in kind else f"'{value}' is not one of {sorted(kind)}"
    if kind == "decimal":
        return None if DECIMAL.match(value) else f"'{value}' is not a decimal"
    if kind == "datetime":
        return None if DATETIME.match(value) else f"'{value}' is not an ISO 8601 UTC date-time"
    if kind == "currency":
        return None if CURRENCY.match(value) else f"'{value}' is not an ISO 4217 code"
    if kind == "json":
        try:
            parsed = json.loads(value)
        except ValueError:
            return "is not JSON"
        if not isinstance(parsed, dict):
            return "must be a JSON object of tags"
        return None
    return None


def _cross_column(row):
    """The specification's conditional rules between columns."""
    out = []
    category = row.get("ChargeCategory")
    correction = row.get("ChargeClass") == "Correction"
    usage_or_purchase = category in ("Usage", "Purchase")
    if "PricingCategory" in row and usage_or_purchase and not correction:
        if not row["PricingCategory"]:
            out.append(("PricingCategory", "must not be null for Usage and Purchase charges"))
    if "PricingQuantity" in row and "PricingUnit" in row:
        if usage_or_purchase and not correction and (not row["PricingQuantity"]
                                                     or not row["PricingUnit"]):
            out.append(("PricingQuantity", "PricingQuantity and PricingUnit must not be null "
                                           "for Usage and Purchase charges"))
        if bool(row["PricingQuantity"]) != bool(row["PricingUnit"]):
            out.append(("PricingUnit", "must be null exactly when PricingQuantity is"))
    if "ConsumedQuantity" in row:
        if category == "Usage" and not correction and not row["ConsumedQuantity"]:
            out.append(("ConsumedQuantity", "must not be null for Usage charges"))
        if category != "Usage" and row["ConsumedQuantity"]:
            out.append(("ConsumedQuantity", "must be null unless ChargeCategory is Usage"))
        if bool(row["ConsumedQuantity"]) != bool(row.get("ConsumedUnit", "")):
            out.append(("ConsumedUnit", "must be null exactly when ConsumedQuantity is"))
    if category == "Usage" and row.get("ChargeFrequency") == "One-Time":
        out.append(("ChargeFrequency", "a Usage charge is not One-Time"))
    if category == "Tax" and row.get("PricingCategory"):
        out.append(("PricingCategory", "must be null for Tax charges"))
    for cost, price in (("ListCost", "ListUnitPrice"), ("ContractedCost", "ContractedUnitPrice")):
        if row.get(price) and row.get("PricingQuantity") and DECIMAL.match(row[price]) \
                and DECIMAL.match(row["PricingQuantity"]) and DECIMAL.match(row.get(cost, "")):
            expected = float(row[price]) * float(row["PricingQuantity"])
            if abs(float(row[cost]) - expected) > PRODUCT_TOLERANCE * max(1.0, abs(expected)):
                out.append((cost, f"{row[cost]} is not {price} x PricingQuantity ({expected})"))
    for start, end in (("ChargePeriodStart", "ChargePeriodEnd"),
                       ("BillingPeriodStart", "BillingPeriodEnd")):
        if row.get(start) and row.get(end) and not row[start] < row[end]:
            out.append((end, f"must be after {start}"))
    if category == "Credit" and row.get("BilledCost") and DECIMAL.match(row["BilledCost"]) \
            and float(row["BilledCost"]) > 0:
        out.append(("BilledCost", "a credit is not positive"))
    return out


def validate(text, require=MANDATORY):
    """Problems of FOCUS CSV `text`, one string each (empty list: valid)."""
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    problems = [f"header: missing mandatory column {c}" for c in require if c not in header]
    problems += [f"header: column {c} is neither FOCUS nor x_-prefixed" for c in header
                 if c not in COLUMNS and not c.startswith("x_")]
    if len(set(header)) != len(header):
        problems.append("header: a column is repeated")
    for n, row in enumerate(reader, start=2):
        if None in row or any(v is None for v in row.values()):
            problems.append(f"row {n}: wrong number of cells")
            continue
        for column, value in row.items():
            if column not in COLUMNS:
                continue
            kind, nullable = COLUMNS[column]
            if value == "":
                if not nullable:
                    problems.append(f"row {n}, {column}: must not be null")
                continue
            problem = _type_problem(kind, value)
            if problem:
                problems.append(f"row {n}, {column}: {problem}")
        problems += [f"row {n}, {c}: {p}" for c, p in _cross_column(row)]
    return problems


if __name__ == "__main__":
    import sys
    failed = False
    for path in sys.argv[1:]:
        with open(path, newline="") as f:
            found = validate(f.read())
        for p in found:
            print(f"{path}: {p}")
        failed = failed or bool(found)
    sys.exit(1 if failed else 0)
