// Training planner: POST /v1/plans/training with a model from the library, a pasted Hugging Face
// config or a shape; shows the recommendation and its reasoning, the ranked options, cost against
// time with the Pareto front and the deadline/budget lines, the best option per provider.
import { api, downloadCsv, jsonAnswer, type Schemas } from "../api";
import { scatter, legend, type RefLine } from "../chart";
import { monthlyCash } from "../budget";
import { choiceBlock, choiceCell, type Choosable } from "../choice";
import { compareBlock } from "../compare";
import { latest } from "../latest";
import { saveBlock } from "../scenarios";
import { priceBookFields, withPriceBook } from "../money";
import { acceleratorOptions, assumptionsBlock, showOutcome, checkboxes, checkedValues, clearProblem, duration, field, formShell, h, input, kStalePriceDays, listOf, noteAt, num, optNumber,
         pct, PRECISIONS, PRICE_TYPES, PROVIDERS, priceTypeName, prose, providerName, select, showProblem, table, usd, usdShort,
         warningsBlock } from "../dom";
import { asOfCell, familyOptions } from "./catalog";

type Request = Schemas["TrainingPlanRequest"];
type Plan = Schemas["TrainingPlan"];
type Option = Schemas["TrainingPlanOption"];

// Options asked for: enough for the chart to show the spread, few enough to draw quickly.
const kChartOptions = 200;
const kTableRows = 20;

export function trainingView(root: HTMLElement, models: Schemas["LibraryModel"][], accelerators: Schemas["Accelerator"][]): void {
    const source = select([["library", "from the model library"], ["hf", "a Hugging Face config.json"],
                           ["shape", "a shape (parameters)"]], "library", { "data-testid": "t-model-source" });
    const modelId = select(models.map((m) => [m.id, `${m.name} (${m.published_params_b} B)`] as [string, string]),
                           models.find((m) => m.id === "llama-3.1-8b") ? "llama-3.1-8b" : (models[0]?.id ?? ""),
                           { "data-testid": "t-model" });
    const hf = h("textarea", { rows: 6, spellcheck: "false", placeholder: '{"hidden_size": 4096, "num_hidden_layers": 32, …}',
                               "data-testid": "t-hf" });
    const paramsB = input({ type: "number", min: 0, step: "any", value: 7, "data-testid": "t-params" });
    const tokens = input({ type: "number", min: 0, step: "any", value: 100, required: true, "data-testid": "t-tokens" });
    const mode = select([["pretrain", "pretrain"], ["full_finetune", "full fine-tune"], ["lora", "LoRA"],
                         ["qlora", "QLoRA"]], "pretrain", { "data-testid": "t-mode" });
    const precision = select(PRECISIONS, "bf16", { "data-testid": "t-precision" });
    const deadline = input({ type: "number", min: 0, step: "any", value: 720, "data-testid": "t-deadline" });
    const budget = input({ type: "number", min: 0, step: "any", value: 150000, "data-testid": "t-budget" });
    const maxAcc = input({ type: "number", min: 1, step: 1, inputmode: "numeric", placeholder: "4096", "data-testid": "t-max-acc" });
    const minAcc = input({ type: "number", min: 1, step: 1, inputmode: "numeric", placeholder: "1", "data-testid": "t-min-acc" });
    const providers = checkboxes("/constraints/providers", PROVIDERS, []);
    const priceTypes = checkboxes("/constraints/price_types", PRICE_TYPES, ["on_demand", "spot"]);
    // Which accelerators may be used (none ticked: any), so the "allow more accelerators" advice
    // can be followed here.
    const accels = checkboxes("/constraints/accelerators", acceleratorOptions(accelerators), [],
                              "Accelerators (none ticked: any)", true);
    // Trusted prices only: verified ones, or ones at most so many days old (the plan leaves the
    // others out: skipped.unverified_price, skipped.price_too_old).
    const verifiedOnly = checkboxes("/constraints/verified_only", [["true", "verified prices only"]], [], "Prices");
    const regions = input({ type: "text", autocomplete: "off", placeholder: "us-east-1, europe-west4", "data-testid": "t-regions" });
    const maxAge = input({ type: "number", min: 0, step: "any", inputmode: "decimal", "data-testid": "t-max-age" });
    // "In the US", "any H100": the API's geography (its region table) and accelerator families.
    const countries = input({ type: "text", autocomplete: "off", placeholder: "US", "data-testid": "t-countries" });
    const family = select([["", "any"], ...familyOptions(accelerators)], "", { "data-testid": "t-family" });

    const libraryField = field("Model", modelId, "/model");
    const hfField = field("Hugging Face config.json", hf, "/model/hf_config");
    const shapeField = field("Parameters (billions)", paramsB, "/model/params_b");
    const showSource = () => {
        libraryField.hidden = source.value !== "library";
        hfField.hidden = source.value !== "hf";
        shapeField.hidden = source.value !== "shape";
    };
    source.onchange = showSource;
    showSource();

    const form = formShell("Training plan", [
        field("Model given as", source, "model_source"), libraryField, hfField, shapeField,
        field("Training tokens (billions)", tokens, "/tokens_b"),
        field("Mode", mode, "/mode"), field("Precision", precision, "/precision"),
        field("Deadline (hours)", deadline, "/constraints/deadline_hours", "empty: none; 720 h is 30 days"),
        field("Budget (USD)", budget, "/constraints/budget_usd", "empty: none"),
        field("Fewest accelerators in the cluster", minAcc, "/constraints/min_total_accelerators", "empty: 1"),
        field("Most accelerators in the cluster", maxAcc, "/constraints/max_total_accelerators", "empty: up to 4,096"),
        verifiedOnly,
        field("Prices at most this many days old", maxAge, "/constraints/max_price_age_days",
              "empty: any age; 180 leaves out the stale ones"),
        providers, priceTypes,
        field("Regions", regions, "/constraints/regions", "the provider's region ids, separated by commas; empty: any"),
        field("Countries", countries, "/constraints/countries", "ISO codes such as US, separated by commas; empty: anywhere"),
        field("Accelerator family", family, "/constraints/accelerator_families", "every variant, e.g. all H100s"),
        accels,
        ...priceBookFields(),
    ], "Plan the run", "training-form");
    const out = h("div", { class: "results", "data-testid": "training-results" });

    const request = (): Request | string => {
        let model: Request["model"];
        if (source.value === "library") model = modelId.value;
        else if (source.value === "shape") model = { params_b: optNumber(paramsB) ?? null };
        else {
            try { model = { hf_config: JSON.parse(hf.value) as Record<string, never> }; }
            catch (e) { return `the config is not JSON: ${(e as Error).message}`; }
        }
        const provs = checkedValues(providers, "/constraints/providers");
        const types = checkedValues(priceTypes, "/constraints/price_types") as NonNullable<Request["constraints"]>["price_types"];
        const accs = checkedValues(accels, "/constraints/accelerators");
        return {
            model, tokens_b: Number(tokens.value), mode: mode.value as Request["mode"],
            precision: precision.value as Request["precision"],
            constraints: { deadline_hours: optNumber(deadline), budget_usd: optNumber(budget),
                           max_total_accelerators: optNumber(maxAcc), min_total_accelerators: optNumber(minAcc),
                           accelerators: accs.length ? accs : undefined, regions: listOf(regions),
                           countries: listOf(countries), accelerator_families: family.value ? [family.value] : undefined,
                           verified_only: checkedValues(verifiedOnly, "/constraints/verified_only").length ? true : undefined,
                           max_price_age_days: optNumber(maxAge),
                           providers: provs.length ? provs : undefined, price_types: types?.length ? types : undefined },
            limit: kChartOptions,
        };
    };

    form.addEventListener("submit", async (e) => {
        e.preventDefault();
        clearProblem(form);
        const body = request();
        const run = latest(form, out);
        if (typeof body === "string") {
            run.done();
            showProblem(form, { type: "about:blank", title: "Invalid config", status: 400, detail: body, code: "client",
                                errors: [{ field: "/model/hf_config", detail: body }] });
            return;
        }
        out.replaceChildren(h("p", { role: "status" }, "Planning…"));
        const answer = await run.call((signal) => api.POST("/v1/plans/training", { ...withPriceBook(form, body), signal }));
        if (!answer) return;  // another request (or an edit of the form) superseded this one
        const { data, error, response } = answer;
        const plan = jsonAnswer<Plan>(data);
        // Nothing qualifies: ask again for the options that miss, nearest first (the fastest when
        // only the deadline binds, else the cheapest), to show what relaxing would buy.
        let nearest: Plan | undefined;
        if (plan && plan.feasible_count === 0 && plan.binding_constraints.length > 0) {
            const timeOnly = plan.binding_constraints.every((b) => b.constraint === "deadline_hours");
            const again = await run.call((signal) => api.POST("/v1/plans/training", { signal, ...withPriceBook(form, { ...body, include_infeasible: true,
                                                                          limit: kTableRows, sort: timeOnly ? "time" : "expected_cost" }) }));
            if (!again) return;
            nearest = jsonAnswer<Plan>(again.data);
        }
        run.done();
        showOutcome(form, out, plan, error, response.status, (a) => renderPlan(a, body, form, nearest), (a) => [compareBlock(form, [
            { label: "Recommended run's expected cost", value: a.recommendation?.expected_cost_usd, format: (v) => usd(v) },
            { label: "Recommended run's expected time", value: a.recommendation?.expected_wall_clock_hours, format: (v) => duration(v) },
            { label: "Recommended run's accelerators", value: a.recommendation?.total_accelerators, format: (v) => num(v, 0) },
            { label: "Options meeting every constraint", value: a.feasible_count, format: (v) => num(v, 0) },
        ]), saveBlock("training", withPriceBook(form, body).body)]);
        for (const b of plan?.feasible_count === 0 ? plan.binding_constraints : []) {
            noteAt(form, `/constraints/${b.constraint}`, bindingWords(b, body));
        }
    });

    root.replaceChildren(h("h2", {}, "Training planner"),
        h("p", { class: "lede" }, "Every offering × node count priced for one training run; ",
          "spot options include the expected cost of interruptions."), form, out);
}

type Binding = Plan["binding_constraints"][number];

// Which constraint binds, by how much, and what to change, in words.
function bindingWords(b: Binding, body: Request): string {
    const c = body.constraints ?? {};
    if (b.constraint === "budget_usd") {
        const which = b.others_met && c.deadline_hours !== undefined ? " that meets the deadline" : "";
        return `The budget binds: the cheapest option${which} costs ${usd(b.best_value)}, ${usd(b.shortfall)} more than ` +
               `the ${usd(b.limit)} budget. Raise the budget to at least ${usd(Math.ceil(b.best_value))}` +
               `${b.others_met ? "" : " and allow more time"}, or allow more providers or price types.`;
    }
    if (b.constraint === "deadline_hours") {
        const which = b.others_met && c.budget_usd !== undefined ? " within the budget" : "";
        return `The deadline binds: the fastest option${which} takes ${duration(b.best_value)}, ` +
               `${duration(b.shortfall)} more than the ${duration(b.limit)} deadline. Allow at least ` +
               `${num(Math.ceil(b.best_value), 0)} hours${b.others_met ? "" : " and a larger budget"}, ` +
               "or allow more providers or price types.";
    }
    return b.message;
}

// The options the API lists when none meets every constraint: each with what it misses.
function renderNothing(plan: Plan, body: Request, form: HTMLFormElement, nearest: Plan | undefined): (HTMLElement | null)[] {
    const options = nearest?.options ?? [];
    const point = (o: Option) => ({ x: o.expected_wall_clock_hours, y: o.expected_cost_usd, group: o.offering.price_type,
                                    label: `${optionName(o)}: ${duration(o.expected_wall_clock_hours)}, ${usd(o.expected_cost_usd)}` });
    return [
        h("section", { class: "card nothing", "data-testid": "recommendation" },
          h("h3", {}, "No option meets every constraint"),
          h("ul", { "data-testid": "binding" }, ...plan.binding_constraints.map((b) => h("li", {}, bindingWords(b, body))))),
        warningsBlock(plan.warnings, form),
        options.length ? h("h3", {}, `The ${options.length} nearest options (none meets every constraint)`) : null,
        options.length ? h("figure", {}, scatter("Expected cost against expected time of the nearest options",
            { label: "expected wall-clock time (hours, log scale)", short: "expected hours (log scale)", log: true, format: (v) => num(v, 0) },
            { label: "expected cost (USD, log scale)", short: "expected USD (log scale)", log: true, format: (v) => usdShort(v) },
            options.map(point), [], refLines(body))) : null,
        options.length ? optionsTable(options, "nearest-options", true) : null,
        assumptionsBlock(plan.assumptions),
    ];
}

function refLines(body: Request): RefLine[] {
    const deadline = body.constraints?.deadline_hours;
    const budget = body.constraints?.budget_usd;
    return [
        ...(deadline !== undefined ? [{ axis: "x" as const, value: deadline, label: `deadline ${num(deadline, 0)} h` }] : []),
        ...(budget !== undefined ? [{ axis: "y" as const, value: budget, label: `budget ${usd(budget)}` }] : []),
    ];
}

function renderPlan(plan: Plan, body: Request, form: HTMLFormElement, nearest?: Plan): (HTMLElement | null)[] {
    if (plan.feasible_count === 0) return renderNothing(plan, body, form, nearest);
    const rec = plan.recommendation;
    const lines = refLines(body);
    const point = (o: Option) => ({ x: o.expected_wall_clock_hours, y: o.expected_cost_usd, group: o.offering.price_type,
                                    label: `${optionName(o)}: ${num(o.expected_wall_clock_hours)} h, ${usd(o.expected_cost_usd)}` });
    const chart = scatter("Expected cost against expected time of every feasible option",
                          { label: "expected wall-clock time (hours, log scale)", short: "expected hours (log scale)", log: true, format: (v) => num(v, 0) },
                          { label: "expected cost (USD, log scale)", short: "expected USD (log scale)", log: true, format: (v) => usdShort(v) },
                          plan.options.map(point), plan.pareto_front.map(point), lines);
    const csv = h("button", { type: "button", "data-testid": "csv" }, "Download options as CSV");
    csv.onclick = () => void downloadCsv("/v1/plans/training", body, "training-plan.csv");
    return [
        choiceBlock(form, [...plan.options, ...plan.best_by_provider].map(choosable), rec ? optionKey(rec) : undefined),
        h("section", { class: "card recommendation", "data-testid": "recommendation" },
          h("h3", {}, rec ? `Recommended: ${optionName(rec)}` : "No option meets every constraint"),
          rec ? h("p", { class: "figures" },
                  h("span", { "data-testid": "rec-cost", "data-value": rec.expected_cost_usd }, usd(rec.expected_cost_usd)),
                  " expected, ",
                  h("span", { "data-testid": "rec-hours", "data-value": rec.expected_wall_clock_hours },
                    duration(rec.expected_wall_clock_hours)),
                  `, p10–p90 ${usd(rec.cost_usd_p10)}–${usd(rec.cost_usd_p90)}`) : null,
          h("p", { "data-testid": "reasoning" }, prose(plan.reasoning ?? "")),
          plan.binding_constraints.length ? h("ul", { "data-testid": "binding" },
              ...plan.binding_constraints.map((b) => h("li", {}, prose(b.message)))) : null),
        warningsBlock(plan.warnings, form),
        h("p", { "data-testid": "counts" }, `${plan.feasible_count} feasible options of ${plan.offerings_considered ?? "?"} `,
          `offerings considered; ${plan.pareto_front.length} on the Pareto front.`),
        h("figure", {}, chart,
          h("figcaption", {}, legend([{ name: "on-demand", cls: "on_demand" }, { name: "spot", cls: "spot" },
                                      { name: "other price types", cls: "other" }, { name: "Pareto front", cls: "front" }]))),
        ...monthly(plan),
        h("h3", {}, "Best option per provider"),
        optionsTable(plan.best_by_provider, "best-by-provider", false, form),
        h("h3", {}, `Ranked options (first ${Math.min(kTableRows, plan.options.length)} of ${plan.total_count})`),
        optionsTable(plan.options.slice(0, kTableRows), "options", false, form),
        csv,
        assumptionsBlock(plan.assumptions),
    ];
}

// An option as the URL names it when chosen: its offering and node count.
const optionKey = (o: Option): string => `${o.offering.id}/${o.nodes}`;

// What the chosen card and the side-by-side table say of an option.
function choosable(o: Option): Choosable {
    const off = o.offering;
    return { key: optionKey(o), name: optionName(o), facts: [
        { label: "Expected cost", text: usd(o.expected_cost_usd), value: o.expected_cost_usd, format: (v) => usd(v) },
        { label: "Expected time", text: duration(o.expected_wall_clock_hours), value: o.expected_wall_clock_hours, format: (v) => duration(v) },
        { label: "Cost p10–p90", text: `${usd(o.cost_usd_p10)}–${usd(o.cost_usd_p90)}` },
        { label: "Accelerators", text: `${o.total_accelerators} × ${off.accelerator}`, value: o.total_accelerators, format: (v) => num(v, 0) },
        { label: "Price", text: `${usd(off.usd_per_hour, 2)} an instance-hour, ${priceTypeName(off.price_type)}` },
        { label: "Price as of", text: `${off.as_of}${off.as_of_estimated ? " (estimated)" : ""}` +
                                      `${o.price_age_days !== null && o.price_age_days > kStalePriceDays ? ` (stale, ${o.price_age_days} days old)` : ""}` },
        { label: "Price verified", text: off.verified ? "yes" : "no" },
        ...(o.deadline_probability !== null ? [{ label: "Finishes by the deadline", text: pct(o.deadline_probability) }] : []),
    ] };
}

const optionName = (o: Option): string =>
    `${o.nodes} × ${o.offering.instance_type} (${o.total_accelerators} × ${o.offering.accelerator}, ` +
    `${priceTypeName(o.offering.price_type)}, ${providerName(o.offering.provider)} ${o.offering.region})`;

// The recommended run's cash by calendar month (the API's budget view), as bars and a table.
function monthly(plan: Plan): HTMLElement[] {
    const b = plan.budget;
    if (!b) return [];
    const parts = [b.storage_usd ? `storage ${usd(b.storage_usd)}` : "", b.egress_usd ? `egress ${usd(b.egress_usd)}` : ""].filter(Boolean);
    return monthlyCash(b.monthly,
        h("p", {}, `The recommended run starting ${b.start_date}${b.start_date_source === "today" ? " (today)" : ""}: `,
          h("strong", { "data-testid": "budget-total", "data-value": b.total_usd }, usd(b.total_usd, 2)),
          ` in all${parts.length ? `, of which ${parts.join(" and ")}` : ""}.`),
        "The recommended run's cost by calendar month");
}

// What an option misses, in words.
const misses = (o: Option): string => o.violations.map((v) =>
    v.constraint === "budget_usd" ? `${usd(v.value - v.limit)} over the budget`
        : v.constraint === "deadline_hours" ? `${duration(v.value - v.limit)} past the deadline`
        : `${v.constraint.replace(/_/g, " ")} ${num(v.value)} (limit ${num(v.limit)})`).join("; ");

// `choosing`: the form whose result lists these options, for a Choose and a Compare button a row.
function optionsTable(options: Option[], testid: string, withMisses = false, choosing?: HTMLFormElement): HTMLElement {
    const rows = options.map((o) => h("tr", { "data-id": o.offering.id, "data-nodes": o.nodes, "data-key": optionKey(o) },
        h("td", {}, providerName(o.offering.provider)), h("td", {}, o.offering.instance_type),
        h("td", {}, priceTypeName(o.offering.price_type)), h("td", {}, o.offering.region),
        h("td", { class: "num" }, o.nodes), h("td", { class: "num" }, o.total_accelerators),
        h("td", { class: "num", "data-value": o.expected_wall_clock_hours }, num(o.expected_wall_clock_hours)),
        h("td", { class: "num", "data-value": o.expected_cost_usd }, usd(o.expected_cost_usd)),
        h("td", { class: "num" }, `${usd(o.cost_usd_p10)}–${usd(o.cost_usd_p90)}`),
        h("td", {}, asOfCell(o.offering.as_of, o.offering.as_of_estimated)),
        withMisses ? h("td", { "data-testid": "misses" }, misses(o)) : null,
        choosing ? choiceCell(choosing, optionKey(o), optionName(o)) : null));
    return table(["Provider", "Instance", "Price type", "Region", "Nodes", "Accelerators", "Expected hours",
                  "Expected cost", "p10–p90", "Price as of", ...(withMisses ? ["Misses"] : []), ...(choosing ? ["Choose or compare"] : [])],
                 rows, testid, [4, 5, 6, 7, 8]);
}
