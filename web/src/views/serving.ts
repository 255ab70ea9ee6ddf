// Serving: POST /v1/plans/inference; cost per million tokens of each option against the API price
// it is compared with, the monthly cost of serving the traffic, and the recommended option's cash
// by calendar month (the answer's budget view).
import { api, downloadCsv, jsonAnswer, type Schemas } from "../api";
import { daysWithin, monthlyCash } from "../budget";
import { bars, distinguishingDigits } from "../chart";
import { choiceBlock, choiceCell, type Choosable } from "../choice";
import { compareBlock } from "../compare";
import { latest } from "../latest";
import { saveBlock } from "../scenarios";
import { priceBookFields, withPriceBook } from "../money";
import { acceleratorOptions, assumptionsBlock, showOutcome, checkboxes, checkedValues, clearProblem, field, formShell, h, input, listOf, noteAt, num, optNumber, pct,
         PRECISIONS, PRICE_TYPES, priceTypeName, prose, PROVIDERS, providerName, select, table, usd, warningsBlock } from "../dom";
import { servingAccelerators, servingNodes, servingTotal } from "../fields";

type Request = Schemas["InferencePlanRequest"];
type Plan = Schemas["InferencePlan"];
type Option = Schemas["InferencePlanOption"];

const kOptions = 15;

export function servingView(root: HTMLElement, models: Schemas["LibraryModel"][], accelerators: Schemas["Accelerator"][]): void {
    const model = select(models.map((m) => [m.id, `${m.name} (${m.published_params_b} B)`] as [string, string]),
                         models.some((m) => m.id === "llama-3.1-8b") ? "llama-3.1-8b" : (models[0]?.id ?? ""),
                         { "data-testid": "v-model" });
    const precision = select(PRECISIONS, "bf16", { "data-testid": "v-precision" });
    // Weight-only quantisation (weight_precision): a 4-bit checkpoint served with 16-bit math.
    const weights = select([["", "as the precision"], ["fp8", "fp8"], ["int8", "int8"], ["fp4", "4-bit (AWQ, GPTQ, MXFP4)"]],
                           "", { "data-testid": "v-weight-precision" });
    // A model whose release is quantised (the library's checkpoint_precision: gpt-oss's MXFP4) is
    // served at its stored width unless the precision is narrower: the default option says so.
    const storedWidth = (): string | undefined => {
        const stored = models.find((m) => m.id === model.value)?.structure["checkpoint_precision"];
        return typeof stored === "string" ? stored : undefined;
    };
    const labelDefaultWeights = (): void => {
        const stored = storedWidth();
        const first = weights.options.item(0);
        if (first) first.textContent = stored ? `as the checkpoint stores them (${stored})` : "as the precision";
    };
    model.addEventListener("change", labelDefaultWeights);
    labelDefaultWeights();
    const inTok = input({ type: "number", min: 1, step: 1, value: 1000, "data-testid": "v-in" });
    const outTok = input({ type: "number", min: 1, step: 1, value: 250, "data-testid": "v-out" });
    const rps = input({ type: "number", min: 0, step: "any", value: 5, "data-testid": "v-rps" });
    const ttft = input({ type: "number", min: 0, step: "any", value: 1000, "data-testid": "v-ttft" });
    const itl = input({ type: "number", min: 0, step: "any", value: 50, "data-testid": "v-itl" });
    // Size to a probability of carrying the traffic (uncertainty.traffic_confidence); empty: by
    // the utilisation alone.
    const confidence = input({ type: "number", min: 0.5, max: 0.999, step: "any", inputmode: "decimal",
                               "data-testid": "v-confidence" });
    const apiIn = input({ type: "number", min: 0, step: "any", value: 0.2, "data-testid": "v-api-in" });
    const apiOut = input({ type: "number", min: 0, step: "any", value: 0.6, "data-testid": "v-api-out" });
    const priceTypes = checkboxes("/constraints/price_types", PRICE_TYPES.slice(0, 2), ["on_demand"]);
    const providers = checkboxes("/constraints/providers", PROVIDERS, []);
    const regions = input({ type: "text", autocomplete: "off", placeholder: "us-east-1, europe-west4", "data-testid": "v-regions" });
    const accels = checkboxes("/constraints/accelerators", acceleratorOptions(accelerators), [],
                              "Accelerators (none ticked: any)", true);
    // Trusted prices only, as in training: the plan leaves the others out (skipped.unverified_price,
    // skipped.price_too_old).
    const verifiedOnly = checkboxes("/constraints/verified_only", [["true", "verified prices only"]], [], "Prices");
    const maxAge = input({ type: "number", min: 0, step: "any", inputmode: "decimal", "data-testid": "v-max-age" });
    // The budget view: calendar months from a start date (the API's defaults: 12, today).
    const budgetMonths = input({ type: "number", min: 1, max: 60, step: 1, value: 12, "data-testid": "v-months" });
    const startDate = input({ type: "date", "data-testid": "v-start" });
    const form = formShell("Serving plan", [
        field("Model", model, "/model"), field("Precision", precision, "/precision"),
        field("Weights stored as", weights, "/weight_precision",
              "weight-only quantisation: weights at this width, the math at the precision above"),
        field("Input tokens per request", inTok, "/input_tokens"),
        field("Output tokens per request", outTok, "/output_tokens"),
        field("Requests per second", rps, "/traffic/requests_per_second"),
        field("Max time to first token (ms)", ttft, "/latency/max_time_to_first_token_ms"),
        field("Max inter-token latency (ms)", itl, "/latency/max_inter_token_latency_ms"),
        field("Size to carry the traffic with probability", confidence, "/uncertainty/traffic_confidence",
              "0.5 to 0.999, the estimate's measured error counted; empty: sized at 70 % load only"),
        field("API price: USD per million input tokens", apiIn, "/api_price/usd_per_million_input_tokens"),
        field("API price: USD per million output tokens", apiOut, "/api_price/usd_per_million_output_tokens"),
        field("Months of cash flow", budgetMonths, "/budget_months", "calendar months from the start date, 1 to 60"),
        field("Start date", startDate, "/start_date", "empty: today (UTC)"),
    ], "Plan serving", "serving-form", { legend: "Which offerings (optional)", controls: [
        priceTypes, providers,
        field("Regions", regions, "/constraints/regions", "the provider's region ids, separated by commas; empty: any"),
        accels,
        verifiedOnly,
        field("Prices at most this many days old", maxAge, "/constraints/max_price_age_days",
              "empty: any age; 180 leaves out the stale ones"),
        ...priceBookFields(),
    ] });
    const out = h("div", { class: "results", "data-testid": "serving-results" });
    form.addEventListener("submit", async (e) => {
        e.preventDefault();
        clearProblem(form);
        const api_price = optNumber(apiIn) === undefined && optNumber(apiOut) === undefined ? undefined
            : { usd_per_million_input_tokens: optNumber(apiIn), usd_per_million_output_tokens: optNumber(apiOut) };
        const types = checkedValues(priceTypes, "/constraints/price_types");
        const provs = checkedValues(providers, "/constraints/providers");
        const accs = checkedValues(accels, "/constraints/accelerators");
        const regs = listOf(regions);
        const verified = checkedValues(verifiedOnly, "/constraints/verified_only").length > 0;
        const age = optNumber(maxAge);
        const body: Request = {
            model: model.value, precision: precision.value as Request["precision"],
            weight_precision: (weights.value || undefined) as Request["weight_precision"],
            input_tokens: Number(inTok.value), output_tokens: Number(outTok.value),
            traffic: { requests_per_second: optNumber(rps) },
            latency: { max_time_to_first_token_ms: optNumber(ttft), max_inter_token_latency_ms: optNumber(itl) },
            uncertainty: optNumber(confidence) === undefined ? undefined : { traffic_confidence: optNumber(confidence) },
            constraints: types.length || provs.length || accs.length || regs || verified || age !== undefined
                ? { price_types: types.length ? types : undefined, providers: provs.length ? provs : undefined,
                    accelerators: accs.length ? accs : undefined, regions: regs,
                    verified_only: verified ? true : undefined, max_price_age_days: age } : undefined,
            api_price, limit: kOptions,
            budget_months: optNumber(budgetMonths), start_date: startDate.value || undefined,
        };
        const run = latest(form, out);
        out.replaceChildren(h("p", { role: "status" }, "Planning…"));
        const answer = await run.call((signal) => api.POST("/v1/plans/inference", { ...withPriceBook(form, body), signal }));
        if (!answer) return;  // another request (or an edit of the form) superseded this one
        run.done();
        const { data, error, response } = answer;
        const plan = jsonAnswer<Plan>(data);
        showOutcome(form, out, plan, error, response.status, (a) => render(a, body, form), (a) => [compareBlock(form, [
            { label: "Recommended option's monthly cost", value: a.recommendation?.monthly_cost_usd, format: (v) => usd(v) },
            { label: "Recommended option's USD per million output tokens", value: a.recommendation?.usd_per_million_output_tokens, format: (v) => usd(v, 4) },
            { label: "Recommended option's accelerators", value: a.recommendation ? servingAccelerators(a.recommendation) : undefined, format: (v) => num(v, 0) },
            { label: "Options meeting the targets", value: servingTotal(a), format: (v) => num(v, 0) },
        ]), saveBlock("inference", withPriceBook(form, body).body)]);
        if (plan && plan.options.length === 0 && (plan.skipped["latency_target_unmet"] ?? 0) > 0) {
            noteAt(form, "/latency/max_time_to_first_token_ms",
                   "No offering meets the latency targets: allow more time to the first token or between tokens.");
        }
    });
    root.replaceChildren(h("h2", {}, "Serving"),
        h("p", { class: "lede" }, "Serving a model on rented accelerators, sized to the traffic and latency targets, ",
          "priced per million tokens against an API."), form, out);
}

const barLabel = (o: Option) => `${o.offering.instance_type} (${providerName(o.offering.provider)})`;
const name = (o: Option) => `${servingNodes(o)} × ${o.offering.instance_type} (${providerName(o.offering.provider)}, ${priceTypeName(o.offering.price_type)})`;

// An option as the URL names it when chosen: its offering and instance count.
const optionKey = (o: Option): string => `${o.offering.id}/${o.nodes}`;

// What the chosen card and the side-by-side table say of an option.
function choosable(o: Option): Choosable {
    const off = o.offering;
    return { key: optionKey(o), name: name(o), facts: [
        { label: "Monthly cost", text: usd(o.monthly_cost_usd), value: o.monthly_cost_usd, format: (v) => usd(v) },
        { label: "USD per million output tokens", text: usd(o.usd_per_million_output_tokens, 4), value: o.usd_per_million_output_tokens,
          format: (v) => usd(v, 4) },
        { label: "Saving against the API", text: pct(o.savings_vs_api_fraction) },
        { label: "Accelerators", text: `${servingAccelerators(o)} × ${off.accelerator} on ${servingNodes(o)} instances`,
          value: servingAccelerators(o), format: (v) => num(v, 0) },
        { label: "Chance it carries the traffic", text: pct(o.traffic_met_probability),
          value: o.traffic_met_probability, format: (v) => pct(v) },
        { label: "Time to first token", text: `${num(o.time_to_first_token_ms, 0)} ms` },
        { label: "Inter-token latency", text: `${num(o.inter_token_latency_ms, 1)} ms` },
        { label: "Price", text: `${usd(off.usd_per_hour, 2)} an instance-hour, ${priceTypeName(off.price_type)}, ${off.region}` },
        { label: "Price as of", text: `${off.as_of}${off.as_of_estimated ? " (estimated)" : ""}` },
        { label: "Price verified", text: off.verified ? "yes" : "no" },
    ] };
}

// Why offerings were left out, in words, with the API's example of each reason.
function skippedWords(plan: Plan, body: Request): string[] {
    const example = (k: string) => plan.skipped_examples?.[k] ? ` (for example, ${plan.skipped_examples[k]})` : "";
    const words: Record<string, (n: number) => string> = {
        latency_target_unmet: (n) => `${n} cannot meet the latency targets${example("latency_target_unmet")}. ` +
            "Allow a longer time to first token or inter-token latency.",
        does_not_fit: (n) => `${n} do not have the memory for the model${example("does_not_fit")}. ` +
            "A smaller model or precision fits more.",
        precision_unsupported: (n) => `${n} have no published ${body.precision ?? "bf16"} speed${example("precision_unsupported")}. ` +
            "Another precision may allow them.",
        filtered: (n) => `${n} are outside the price types, providers, regions or accelerators chosen. Allow more of them to consider those.`,
        not_for_inference: (n) => `${n} are not offered for serving${example("not_for_inference")}.`,
        unverified_price: (n) => `${n} have a price that is not verified${example("unverified_price")}. ` +
            "Untick \"verified prices only\" to consider them.",
        price_too_old: (n) => `${n} have a price older than the age asked for${example("price_too_old")}. ` +
            "A larger age, or none, considers them.",
    };
    return Object.entries(plan.skipped).filter(([, n]) => n > 0).map(([k, n]) =>
        words[k]?.(n) ?? `${n} left out: ${k.replace(/_/g, " ")}${example(k)}.`);
}

function render(plan: Plan, body: Request, form: HTMLFormElement): (HTMLElement | null)[] {
    if (plan.options.length === 0) {
        return [
            h("section", { class: "card nothing", "data-testid": "recommendation" },
              h("h3", {}, "No option meets the targets"),
              h("p", {}, `No offering can serve ${num(plan.requests_per_second, 2)} requests a second within the latency ` +
                "targets and constraints. Of the offerings in the catalog:"),
              h("ul", { "data-testid": "skipped" }, ...skippedWords(plan, body).map((w) => h("li", {}, w)))),
            warningsBlock(plan.warnings, form),
            assumptionsBlock(plan.assumptions),
        ];
    }
    const apiOut = body.api_price?.usd_per_million_output_tokens;
    // Each bar's value with as many decimals as it takes to tell the options apart.
    const digits = distinguishingDigits(plan.options.map((o) => o.usd_per_million_output_tokens));
    const chart = bars("USD per million output tokens of each option against the API price",
                       { label: "USD per million output tokens", format: (v) => usd(v, 2), value: (v) => usd(v, digits) },
                       plan.options.map((o) => ({ label: barLabel(o), value: o.usd_per_million_output_tokens })),
                       apiOut !== undefined ? { axis: "x", value: apiOut, label: `API ${usd(apiOut, 2)}` } : undefined);
    const csv = h("button", { type: "button", "data-testid": "csv" }, "Download options as CSV");
    csv.onclick = () => void downloadCsv("/v1/plans/inference", body, "serving-plan.csv");
    const rows = plan.options.map((o) => h("tr", { "data-id": o.offering.id, "data-key": optionKey(o) },
        h("td", {}, providerName(o.offering.provider)), h("td", {}, o.offering.instance_type), h("td", {}, priceTypeName(o.offering.price_type)),
        h("td", { class: "num" }, o.tensor_parallel), h("td", { class: "num" }, o.replicas),
        h("td", { class: "num" }, servingNodes(o)), h("td", { class: "num" }, servingAccelerators(o)),
        h("td", { class: "num" }, num(o.time_to_first_token_ms, 0)), h("td", { class: "num" }, num(o.inter_token_latency_ms, 1)),
        h("td", { class: "num", "data-value": o.monthly_cost_usd }, usd(o.monthly_cost_usd)),
        h("td", { class: "num", "data-value": o.usd_per_million_input_tokens }, usd(o.usd_per_million_input_tokens, 4)),
        h("td", { class: "num", "data-value": o.usd_per_million_output_tokens }, usd(o.usd_per_million_output_tokens, 4)),
        h("td", { class: "num" }, usd(o.api_monthly_cost_usd)), h("td", { class: "num" }, pct(o.savings_vs_api_fraction)),
        choiceCell(form, optionKey(o), name(o))));
    return [
        choiceBlock(form, plan.options.map(choosable), plan.recommendation ? optionKey(plan.recommendation) : undefined),
        h("section", { class: "card", "data-testid": "recommendation" },
          h("h3", {}, plan.recommendation ? `Recommended: ${name(plan.recommendation)}` : "No option meets the targets"),
          h("p", { "data-testid": "reasoning" }, prose(plan.reasoning ?? ""))),
        warningsBlock(plan.warnings, form),
        h("p", { "data-testid": "counts" }, `${servingTotal(plan)} options meet the targets; `,
          `${num(plan.output_tokens_per_second, 0)} output tokens/s to serve; the ${plan.options.length} cheapest shown.`),
        h("figure", { "data-testid": "options-chart" }, chart),
        table(["Provider", "Instance", "Price type", "Tensor parallel", "Replicas", "Nodes", "Accelerators", "TTFT ms",
               "ITL ms", "Monthly", "USD / M input", "USD / M output", "API monthly", "Saving vs API", "Choose or compare"],
              rows, "serving-options", [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]),
        csv,
        ...monthly(plan),
        assumptionsBlock(plan.assumptions),
    ];
}

// The recommended option's cash by calendar month (the API's budget view): every day of the
// months asked for, around the clock; the first and last months may be part months.
function monthly(plan: Plan): HTMLElement[] {
    const b = plan.budget;
    const rec = plan.recommendation;
    if (!b || !rec) return [];
    const lastDay = new Date(Date.parse(`${b.end_date}T00:00:00Z`) - 86400000).toISOString().slice(0, 10);
    return monthlyCash(b.monthly,
        h("p", {}, `The recommended ${name(rec)} around the clock for ${b.months} calendar month${b.months === 1 ? "" : "s"}, `,
          `${b.start_date}${b.start_date_source === "today" ? " (today)" : ""} to ${lastDay}, at ${usd(b.usd_per_day, 2)} a day: `,
          h("strong", { "data-testid": "budget-total", "data-value": b.total_usd }, usd(b.total_usd, 2)),
          " in all (the monthly cost above is an average month of 730 hours)."),
        "The recommended option's cost by calendar month", (m) => daysWithin(m, b.start_date, b.end_date));
}
