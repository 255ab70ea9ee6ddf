// A saved scenario's plan against its bill (database mode: GET /v1/scenarios/{id}/actuals): the
// planned and the actual effective cost by calendar month as a chart and a table, the gap, the
// months with no charges yet, and the charges billed in another currency (listed, not converted).
// Every figure is the answer's; the page adds and converts nothing.
import { api, asProblem, type Schemas } from "./api";
import { groupedBars, legend } from "./chart";
import { monthName } from "./budget";
import { h, num, scrollBox, usd, usdShort } from "./dom";

type Answer = Schemas["ScenarioActuals"];
type Month = Answer["months"][number];

// Members the answer may carry beside those openapi.yaml has today: the plan's accelerator-hours
// and the gap split into price and quantity (issue 25 section 4, being added to the same answer).
// Read when present, by the names `gpucost actuals compare` uses for the same figures; nothing
// here depends on them.
interface PlannedHours { accelerator_hours?: number }
interface Extras {
    planned?: PlannedHours; planned_accelerator_hours?: number;
    price_effect_usd?: number; quantity_effect_usd?: number; explanation?: string;
}
const extras = (v: unknown): Extras => (v !== null && typeof v === "object" ? (v as Extras) : {});
const finite = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const plannedHoursOf = (v: unknown): number | undefined =>
    finite(extras(v).planned?.accelerator_hours) ?? finite(extras(v).planned_accelerator_hours);

const kPlanWords: Record<string, string> = { spot: "spot", "rent-vs-buy": "rent-vs-buy", training: "training", inference: "serving" };

// Dollars with their sign written out, as a gap reads: "+$1,234.56 over plan" / "-$…".
const signedUsd = (v: number): string => `${v > 0 ? "+" : v < 0 ? "−" : ""}${usd(Math.abs(v), 2)}`;
const gapWords = (v: number): string => (v > 0 ? `${usd(v, 2)} over plan` : v < 0 ? `${usd(-v, 2)} under plan` : "exactly on plan");
const monthList = (ms: string[]): string => {
    const names = ms.map(monthName);
    return names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
};

// Reads the answer with the key given (spend is confidential: a key of either scope) and draws it
// into `out`; a refusal is said in words, with what to do for a missing or refused key.
export async function planVsActual(s: Schemas["ScenarioSummary"], key: string, out: HTMLElement): Promise<void> {
    out.replaceChildren(h("p", { role: "status" }, `Reading the charges of “${s.name}”…`));
    const { data, error, response } = await api.GET("/v1/scenarios/{id}/actuals", {
        params: { path: { id: s.id } }, headers: key ? { Authorization: `Bearer ${key}` } : {},
    });
    if (!data) {
        const p = asProblem(error, response.status);
        const why = response.status === 401 ? " Give an API key above (read or admin scope): spend is confidential."
            : response.status === 403 ? " This key may not read spend." : "";
        out.replaceChildren(h("h3", {}, `“${s.name}”: plan vs actual`),
            h("p", { class: "field-error", "data-testid": "pva-error" },
              `The plan vs actual could not be read: the server answered ${p.status} ${p.title}: ${p.detail}${/[.!?]$/.test(p.detail) ? "" : "."}${why}`));
        return;
    }
    out.replaceChildren(h("h3", { "data-testid": "pva-title" }, `“${s.name}”: plan vs actual`),
        ...summary(data), ...chart(data), monthsTable(data), ...otherCurrencies(data));
}

// The totals and the gap in words; the months without charges; what the plan has no budget for.
function summary(a: Answer): HTMLElement[] {
    const plannedHours = plannedHoursOf(a);
    const x = extras(a);
    const rows: [string, string, string, number | undefined][] = [
        ["Planned (the saved plan's budget)", a.has_budget ? usd(a.planned_usd, 2) : "no monthly budget", "planned", a.planned_usd],
        ["Actual effective cost", usd(a.actual.effective_cost_usd, 2), "actual", a.actual.effective_cost_usd],
        ["Gap (actual − planned)", signedUsd(a.gap_usd), "gap", a.gap_usd],
        ["Billed cost", usd(a.actual.billed_cost_usd, 2), "billed", a.actual.billed_cost_usd],
        ["List cost", usd(a.actual.list_cost_usd, 2), "list", a.actual.list_cost_usd],
        ["Accelerator-hours (actual)", num(a.actual.accelerator_hours, 1), "hours", a.actual.accelerator_hours],
        ["Charges", num(a.actual.rows, 0), "rows", a.actual.rows],
    ];
    if (plannedHours !== undefined) rows.splice(6, 0, ["Accelerator-hours (planned)", num(plannedHours, 1), "planned-hours", plannedHours]);
    if (finite(x.price_effect_usd) !== undefined) rows.push(["Of the gap: price (discounts, spot, another offering)", signedUsd(x.price_effect_usd!), "price-effect", x.price_effect_usd]);
    if (finite(x.quantity_effect_usd) !== undefined) rows.push(["Of the gap: quantity (more or fewer hours)", signedUsd(x.quantity_effect_usd!), "quantity-effect", x.quantity_effect_usd]);
    const without = a.months_without_actuals;
    return [
        h("p", { class: "figures", "data-testid": "pva-headline" }, a.has_budget
            ? `Actual ${usd(a.actual.effective_cost_usd, 2)} against ${usd(a.planned_usd, 2)} planned: ${gapWords(a.gap_usd)}.`
            : `Actual ${usd(a.actual.effective_cost_usd, 2)}; this ${kPlanWords[a.plan] ?? a.plan} plan has no monthly budget to set it against.`),
        h("p", { class: "lede" }, `In ${a.currency}: the charges' FOCUS effective cost (after discounts and commitments) set against the plan, ` +
          `the charges being those tagged ${a.tag_key} = ${a.scenario_id}.` +
          (a.has_budget ? "" : " Only training and serving plans have a monthly budget; the months below are the charges alone.")),
        x.explanation ? h("p", { "data-testid": "pva-explanation" }, x.explanation) : null,
        h("dl", { class: "kv", "data-testid": "pva-totals" }, ...rows.flatMap(([k, v, id, raw]) =>
            [h("dt", {}, k), h("dd", { "data-testid": `pva-${id}`, "data-value": raw ?? "" }, v)])),
        h("p", { "data-testid": "pva-without" }, without.length > 0
            ? `No charges yet for ${monthList(without)}.`
            : a.months.length > 0 ? "Every month listed has charges." : "No planned month and no charges yet."),
    ].filter((e): e is HTMLParagraphElement | HTMLDListElement => e !== null);
}

// Planned against actual by month (dollars; accelerator-hours too when the plan's are given).
function chart(a: Answer): HTMLElement[] {
    if (a.months.length === 0) return [];
    const dollars = groupedBars(`Planned and actual effective cost by calendar month, ${a.currency}`,
        { label: `Effective cost in the month (${a.currency})`, short: a.currency, format: (v) => usdShort(v) },
        a.months.map((m) => ({ label: monthName(m.month), bars: [
            { series: 0, name: "Plan", value: a.has_budget ? m.planned_usd : null, missing: "no budget" },
            { series: 1, name: "Actual", value: m.has_actuals ? m.actual.effective_cost_usd : null, missing: "no charges yet" }] })));
    const out = [h("figure", { "data-testid": "pva-chart" }, dollars),
                 legend([{ name: "Planned", cls: "s0" }, { name: "Actual (effective cost)", cls: "s1" }])];
    const hours = a.months.map(plannedHoursOf);
    if (hours.some((v) => v !== undefined)) {
        out.push(h("figure", { "data-testid": "pva-hours-chart" }, groupedBars("Planned and actual accelerator-hours by calendar month",
            { label: "Accelerator-hours in the month", short: "Accelerator-hours", format: (v) => num(v, 0) },
            a.months.map((m, i) => ({ label: monthName(m.month), bars: [
                { series: 0, name: "Plan", value: hours[i] ?? null, missing: "not given" },
                { series: 1, name: "Actual", value: m.has_actuals ? m.actual.accelerator_hours : null, missing: "no charges yet" }] })))));
    }
    return out;
}

// The chart's figures as a table (its text alternative), with the totals in the last row.
function monthsTable(a: Answer): HTMLElement {
    const hours = a.months.map(plannedHoursOf);
    const withHours = hours.some((v) => v !== undefined);
    const head = ["Month", "Planned", "Actual effective", "Gap", "Billed", "List", ...(withHours ? ["Planned accelerator-hours"] : []),
                  "Accelerator-hours", "Charges"];
    const cell = (text: string, value?: number) => h("td", { class: "num", "data-value": value ?? "" }, text);
    const row = (m: Month, i: number) => h("tr", { "data-month": m.month, "data-has-actuals": String(m.has_actuals) },
        h("th", { scope: "row" }, monthName(m.month)),
        cell(a.has_budget ? usd(m.planned_usd, 2) : "–", m.planned_usd),
        m.has_actuals ? cell(usd(m.actual.effective_cost_usd, 2), m.actual.effective_cost_usd) : cell("no charges yet"),
        cell(signedUsd(m.gap_usd), m.gap_usd),
        cell(m.has_actuals ? usd(m.actual.billed_cost_usd, 2) : "–", m.actual.billed_cost_usd),
        cell(m.has_actuals ? usd(m.actual.list_cost_usd, 2) : "–", m.actual.list_cost_usd),
        ...(withHours ? [cell(hours[i] === undefined ? "–" : num(hours[i], 1), hours[i])] : []),
        cell(num(m.actual.accelerator_hours, 1), m.actual.accelerator_hours), cell(num(m.actual.rows, 0), m.actual.rows));
    const total = h("tr", { "data-month": "total" }, h("th", { scope: "row" }, "Total"),
        cell(a.has_budget ? usd(a.planned_usd, 2) : "–", a.planned_usd), cell(usd(a.actual.effective_cost_usd, 2), a.actual.effective_cost_usd),
        cell(signedUsd(a.gap_usd), a.gap_usd), cell(usd(a.actual.billed_cost_usd, 2), a.actual.billed_cost_usd),
        cell(usd(a.actual.list_cost_usd, 2), a.actual.list_cost_usd),
        ...(withHours ? [cell(plannedHoursOf(a) === undefined ? "–" : num(plannedHoursOf(a), 1), plannedHoursOf(a))] : []),
        cell(num(a.actual.accelerator_hours, 1), a.actual.accelerator_hours), cell(num(a.actual.rows, 0), a.actual.rows));
    return scrollBox("Plan vs actual by month table", h("table", { "data-testid": "pva-months" },
        h("caption", { class: "sr-only" }, `Planned and actual cost by calendar month (${a.currency})`),
        h("thead", {}, h("tr", {}, ...head.map((t, i) => h("th", { scope: "col", class: i === 0 ? undefined : "num" }, t)))),
        h("tbody", {}, ...a.months.map(row)), h("tfoot", {}, total)));
}

// Charges in another currency: listed as billed, never converted (no exchange rate is assumed).
function otherCurrencies(a: Answer): HTMLElement[] {
    if (a.other_currencies.length === 0) return [];
    return [
        h("h4", {}, "Charges in other currencies (not converted, not in the figures above)"),
        scrollBox("Charges in other currencies table", h("table", { "data-testid": "pva-other-currencies" },
            h("thead", {}, h("tr", {}, ...["Currency", "Month", "Charges", "Effective cost"].map((t, i) =>
                h("th", { scope: "col", class: i >= 2 ? "num" : undefined }, t)))),
            h("tbody", {}, ...a.other_currencies.map((c) => h("tr", { "data-currency": c.currency, "data-month": c.month },
                h("td", {}, c.currency), h("td", {}, monthName(c.month)), h("td", { class: "num" }, num(c.rows, 0)),
                h("td", { class: "num", "data-value": c.effective_cost },
                  `${c.effective_cost.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })} ${c.currency}`)))))),
    ];
}
