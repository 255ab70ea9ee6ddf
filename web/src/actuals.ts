// A saved scenario's plan against its bill (database mode: GET /v1/scenarios/{id}/actuals): the
// planned and the actual effective cost by calendar month as a chart and a table, the gap, the
// months with no charges yet, and the charges billed in another currency (listed, not converted).
// Every figure is the answer's; the page adds and converts nothing.
import { api, asProblem, type Schemas } from "./api";
import { groupedBars, legend } from "./chart";
import { monthName } from "./budget";
import { h, num, prose, scrollBox, usd, usdShort } from "./dom";

type Answer = Schemas["ScenarioActuals"];
type Month = Answer["months"][number];

// Members the answer may carry beside those openapi.yaml has today (being
// added to the same answer): the plan's accelerator charges (`planned`), the gap of those charges
// split into price and quantity (`accelerator_split`), the price paid per accelerator-hour, and
// the implied speed (`progress`). Read when present; nothing here depends on them.
interface PlannedSpend { accelerator_hours?: number; effective_usd_per_accelerator_hour?: number }
interface Split { gap_usd?: number; price_effect_usd?: number; quantity_effect_usd?: number; decomposition?: string; explanation?: string }
interface Progress { tokens_done_b?: number; tokens_planned_b?: number; as_of?: string; actual_accelerator_hours?: number;
                     estimated_accelerator_hours?: number | null; actual_to_estimated_hours_ratio?: number | null }
interface Extras { planned?: PlannedSpend; accelerator_split?: Split; progress?: Progress | null; actual?: { effective_usd_per_accelerator_hour?: number } }
const extras = (v: unknown): Extras => (v !== null && typeof v === "object" ? (v as Extras) : {});
const finite = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const plannedHoursOf = (v: unknown): number | undefined => finite(extras(v).planned?.accelerator_hours);

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
        ...summary(data), ...acceleratorSplit(data), ...chart(data), monthsTable(data), ...otherCurrencies(data));
}

// The plan against the bill to date (the headline) and the whole plan apart; the totals; the
// months without charges; what the plan has no budget for.
function summary(a: Answer): HTMLElement[] {
    const plannedHours = plannedHoursOf(a);
    const rows: [string, string, string, number | undefined][] = [
        ["Planned, whole plan (the saved plan's budget)", a.has_budget ? usd(a.planned_usd, 2) : "no monthly budget", "planned", a.planned_usd],
        ["Actual effective cost", usd(a.actual.effective_cost_usd, 2), "actual", a.actual.effective_cost_usd],
        ["Gap against the whole plan (actual − planned, months not billed yet included)", signedUsd(a.gap_usd), "gap", a.gap_usd],
        ["Billed cost", usd(a.actual.billed_cost_usd, 2), "billed", a.actual.billed_cost_usd],
        ["List cost", usd(a.actual.list_cost_usd, 2), "list", a.actual.list_cost_usd],
        ["Accelerator-hours (actual)", num(a.actual.accelerator_hours, 1), "hours", a.actual.accelerator_hours],
        ["Charges", num(a.actual.rows, 0), "rows", a.actual.rows],
    ];
    if (plannedHours !== undefined) rows.splice(6, 0, ["Accelerator-hours (planned)", num(plannedHours, 1), "planned-hours", plannedHours]);
    const without = a.months_without_actuals;
    return [
        ...toDateHeadline(a),
        h("p", { class: "lede" }, `In ${a.currency}: the charges' FOCUS effective cost (after discounts and commitments) set against the plan, ` +
          `the charges being those tagged ${a.tag_key} = ${a.scenario_id}.` +
          (a.has_budget ? "" : " Only training and serving plans have a monthly budget; the months below are the charges alone.")),
        h("dl", { class: "kv", "data-testid": "pva-totals" }, ...rows.flatMap(([k, v, id, raw]) =>
            [h("dt", {}, k), h("dd", { "data-testid": `pva-${id}`, "data-value": raw ?? "" }, v)])),
        h("p", { "data-testid": "pva-without" }, without.length > 0
            ? `No charges yet for ${monthList(without)}.`
            : a.months.length > 0 ? "Every month listed has charges." : "No planned month and no charges yet."),
    ].filter((e): e is HTMLParagraphElement | HTMLDListElement => e !== null);
}

// The accelerator charges' gap split into price and quantity, the price paid per
// accelerator-hour against the plan's, and the implied speed, when the answer gives them.
function acceleratorSplit(a: Answer): HTMLElement[] {
    const x = extras(a), split = x.accelerator_split, progress = x.progress;
    const rows: [string, string, string, number][] = [];
    const add = (label: string, v: number | undefined, text: (v: number) => string, id: string) => {
        if (v !== undefined) rows.push([label, text(v), id, v]);
    };
    // Cents hide the difference between prices under a dollar an hour (a serving plan's $0.1650).
    const perHour = (v: number) => `${usd(v, Math.abs(v) < 1 ? 4 : 2)} per accelerator-hour`;
    // A price per accelerator-hour is only a price where there were hours (the answer gives 0 without).
    if ((plannedHoursOf(a) ?? 0) > 0) add("Planned price", finite(x.planned?.effective_usd_per_accelerator_hour), perHour, "planned-price");
    if (a.actual.accelerator_hours > 0) add("Price paid", finite(x.actual?.effective_usd_per_accelerator_hour), perHour, "actual-price");
    add("Gap of the accelerator charges", finite(split?.gap_usd), signedUsd, "split-gap");
    add("of which price (discounts, spot, another offering)", finite(split?.price_effect_usd), signedUsd, "price-effect");
    add("of which quantity (more or fewer accelerator-hours)", finite(split?.quantity_effect_usd), signedUsd, "quantity-effect");
    const ratio = finite(progress?.actual_to_estimated_hours_ratio);
    const speed = progress && finite(progress.tokens_done_b) !== undefined
        ? h("p", { "data-testid": "pva-progress", "data-value": ratio ?? "" },
            `Progress: ${num(progress.tokens_done_b, 1)} of ${num(progress.tokens_planned_b, 1)} billion tokens` +
            `${progress.as_of ? ` as of ${progress.as_of.slice(0, 10)}` : ""}, for ${num(progress.actual_accelerator_hours, 1)} accelerator-hours billed` +
            (ratio === undefined ? "; too little to measure the speed yet."
                : ` against ${num(progress.estimated_accelerator_hours, 1)} estimated: ${num(ratio, 2)} times the estimate's hours` +
                  ` (${ratio > 1 ? "slower" : ratio < 1 ? "faster" : "as fast as"}${ratio === 1 ? "" : " than"} estimated).`))
        : null;
    if (rows.length === 0 && !split?.explanation && !speed) return [];
    return [h("section", { "data-testid": "pva-split", "aria-label": "Price and quantity" },
        h("h4", {}, "Accelerator charges: price and quantity"),
        split?.explanation ? h("p", { "data-testid": "pva-explanation" }, prose(split.explanation)) : null,
        rows.length ? h("dl", { class: "kv" }, ...rows.flatMap(([k, v, id, raw]) =>
            [h("dt", {}, k), h("dd", { "data-testid": `pva-${id}`, "data-value": raw }, v)])) : null,
        split?.decomposition ? h("p", { class: "lede" }, split.decomposition) : null,
        speed)];
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

// The chart's figures as a table (its text alternative), with the totals in the last row. A
// column the answer has no figure for (planned accelerator-hours, the split) is left out.
type Row = { month?: Month; planned: number; actual: Schemas["ActualSpend"]; has: boolean; gap: number; x: Extras };
function monthsTable(a: Answer): HTMLElement {
    const money = (v: number | undefined) => (v === undefined ? "–" : usd(v, 2));
    const signed = (v: number | undefined) => (v === undefined ? "–" : signedUsd(v));
    const hours = (v: number | undefined) => (v === undefined ? "–" : num(v, 1));
    const columns: [string, (r: Row) => number | undefined, (v: number | undefined, r: Row) => string, boolean][] = [
        ["Planned", (r) => r.planned, (v) => (a.has_budget ? money(v) : "–"), true],
        ["Actual effective", (r) => (r.has ? r.actual.effective_cost_usd : undefined), (v) => (v === undefined ? "no charges yet" : money(v)), true],
        ["Gap", (r) => r.gap, signed, true],
        ["Billed", (r) => r.actual.billed_cost_usd, (v, r) => (r.has ? money(v) : "–"), true],
        ["List", (r) => r.actual.list_cost_usd, (v, r) => (r.has ? money(v) : "–"), true],
        ["Planned accelerator-hours", (r) => plannedHoursOf(r.x), hours, false],
        ["Accelerator-hours", (r) => r.actual.accelerator_hours, hours, true],
        ["Charges", (r) => r.actual.rows, (v) => num(v, 0), true],
        ["Price effect", (r) => finite(r.x.accelerator_split?.price_effect_usd), signed, false],
        ["Quantity effect", (r) => finite(r.x.accelerator_split?.quantity_effect_usd), signed, false],
    ];
    const rows: Row[] = a.months.map((m) => ({ month: m, planned: m.planned_usd, actual: m.actual, has: m.has_actuals, gap: m.gap_usd, x: extras(m) }));
    const total: Row = { planned: a.planned_usd, actual: a.actual, has: true, gap: a.gap_usd, x: extras(a) };
    // Optional columns only where some row has a figure.
    const shown = columns.filter(([, value, , always]) => always || [...rows, total].some((r) => value(r) !== undefined));
    const line = (r: Row, attrs: Record<string, string>, head: string) => h("tr", attrs, h("th", { scope: "row" }, head),
        ...shown.map(([, value, text]) => h("td", { class: "num", "data-value": value(r) ?? "" }, text(value(r), r))));
    return scrollBox("Plan vs actual by month table", h("table", { "data-testid": "pva-months" },
        h("caption", { class: "sr-only" }, `Planned and actual cost by calendar month (${a.currency})`),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Month"), ...shown.map(([t]) => h("th", { scope: "col", class: "num" }, t)))),
        h("tbody", {}, ...rows.map((r) => line(r, { "data-month": r.month!.month, "data-has-actuals": String(r.has) }, monthName(r.month!.month)))),
        h("tfoot", {}, line(total, { "data-month": "total" }, "Total"))));
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

// The headline a budget owner reads: the plan against the bill over the months billed so far,
// and the whole plan's figure labelled apart (its future months are not under-spend).
function toDateHeadline(a: Answer): HTMLElement[] {
    const d = a.to_date;
    const pct = (f: number | null) => (f === null ? "" : ` (${f > 0 ? "+" : f < 0 ? "−" : ""}${num(Math.abs(f) * 100, 1)} %)`);
    const plannedMonths = a.months.filter((m) => m.planned_usd !== 0).length;
    const full = h("p", { "data-testid": "pva-full-plan", "data-value": a.planned_usd },
        a.has_budget ? `Whole plan: ${usd(a.planned_usd, 2)} over ${num(plannedMonths, 0)} month${plannedMonths === 1 ? "" : "s"}` +
                       `${d ? ` (${num(a.months.filter((m) => m.month > d.through_month).length, 0)} not billed yet)` : ""}.`
                     : "This plan has no monthly budget.");
    if (!d) {
        return [h("p", { class: "figures", "data-testid": "pva-headline" }, a.has_budget ? "No charges yet: nothing billed to set against the plan."
            : `No charges yet; this ${kPlanWords[a.plan] ?? a.plan} plan has no monthly budget to set them against.`), full];
    }
    const through = `${num(d.months, 0)} month${d.months === 1 ? "" : "s"}, through ${monthName(d.through_month)}, the last billed`;
    const text = a.has_budget
        ? `To date (${through}): actual ${usd(d.actual_effective_cost_usd, 2)} against ${usd(d.planned_usd, 2)} planned: ${gapWords(d.gap_usd)}${pct(d.gap_fraction)}.`
        : `To date (${through}): actual ${usd(d.actual_effective_cost_usd, 2)}; this ${kPlanWords[a.plan] ?? a.plan} plan has no monthly budget to set it against.`;
    return [h("p", { class: "figures", "data-testid": "pva-headline", "data-gap": d.gap_usd, "data-planned": d.planned_usd }, text), full];
}
