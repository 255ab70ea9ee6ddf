// Rent vs buy: POST /v1/plans/rent-vs-buy; cumulative cost of renting, of each rent option the
// answer lists (commitments among them) and of owning, with the break-even month marked.
import { compareBlock } from "../compare";
import { latest } from "../latest";
import { saveBlock } from "../scenarios";
import { priceBookFields, withPriceBook } from "../money";
import { api, downloadCsv, jsonAnswer, type Schemas } from "../api";
import { legend, lines, seriesClass, type Series } from "../chart";
import { offeringPicker } from "../picker";
import { assumptionsBlock, showOutcome, clearProblem, field, formShell, h, input, months, num, optNumber, pct, percentInput, priceTypeName, prose,
         readPercent, refuseUnreadable, select, usdShort,
         table, usd, warningsBlock } from "../dom";

type Request = Schemas["RentVsBuyRequest"];
type Plan = Schemas["RentVsBuyPlan"];

export function rentBuyView(root: HTMLElement, accelerators: Schemas["Accelerator"][]): void {
    const buyable = accelerators.filter((a) => a.purchase_price_usd !== null && a.purchase_price_usd !== undefined);
    const accel = select(buyable.map((a) => [a.id, a.name] as [string, string]),
                         buyable.some((a) => a.id === "h100-sxm") ? "h100-sxm" : (buyable[0]?.id ?? ""),
                         { "data-testid": "r-accelerator" });
    const count = input({ type: "number", min: 1, step: 1, value: 8, "data-testid": "r-count" });
    const util = percentInput(70, { "data-testid": "r-util" });
    const offering = input({ type: "text", value: "aws-p5.48xlarge-us-east-1-on-demand", autocomplete: "off",
                             "data-testid": "r-offering" });
    const rate = input({ type: "number", min: 0, step: "any", "data-testid": "r-rate" });
    const horizon = input({ type: "number", min: 1, max: 360, step: 1, value: 60, "data-testid": "r-horizon" });
    const discount = percentInput(8, { "data-testid": "r-discount" });
    // The API's members the form fills through others: the count gives capex and opex, the
    // offering (or the rate) the rent.
    count.dataset.also = "/buy/capex_usd /buy/opex_usd_per_month";
    count.dataset.alsoWords = "Give the number of accelerators to buy: the purchase and running costs follow from it.";
    offering.dataset.also = "/rent/usd_per_month";
    offering.dataset.alsoWords = "Pick an offering to rent, or give a USD rate per accelerator-hour below.";
    const form = formShell("Rent vs buy", [
        field("Accelerator to buy", accel, "/buy/accelerator"),
        field("Accelerators", count, "/buy/total_accelerators"),
        field("Utilisation (%)", util, "/buy/utilization", "share of the hours the owned accelerators work"),
        field("Rent: offering id", offering, "/rent/offering_id", "or leave empty and give a rate"),
        offeringPicker(offering, ["on_demand", "commit_1y", "commit_3y"], "r-picker"),
        field("Rent: USD per accelerator-hour", rate, "/rent/usd_per_accelerator_hour", "overrides the offering"),
        field("Horizon (months)", horizon, "/horizon_months"),
        field("Discount rate (% a year)", discount, "/discount_rate_annual"),
        ...priceBookFields(),
    ], "Compare", "rentbuy-form");
    const out = h("div", { class: "results", "data-testid": "rentbuy-results" });

    form.addEventListener("submit", async (e) => {
        e.preventDefault();
        clearProblem(form);
        const r = optNumber(rate);
        const utilization = readPercent(util);
        const discountRate = readPercent(discount);
        const run = latest(form, out);
        if (refuseUnreadable(form, [[util, utilization], [discount, discountRate], [count, optNumber(count)],
                                    [rate, r], [horizon, optNumber(horizon)]])) {
            run.done();
            return;
        }
        const body: Request = {
            buy: { accelerator: accel.value, total_accelerators: optNumber(count), utilization },
            rent: r !== undefined ? { usd_per_accelerator_hour: r }
                : { offering_id: offering.value.trim() || undefined },
            horizon_months: optNumber(horizon), discount_rate_annual: discountRate,
        };
        out.replaceChildren(h("p", { role: "status" }, "Comparing…"));
        const answer = await run.call((signal) => api.POST("/v1/plans/rent-vs-buy", { ...withPriceBook(form, body), signal }));
        if (!answer) return;  // another request (or an edit of the form) superseded this one
        run.done();
        const { data, error, response } = answer;
        showOutcome(form, out, jsonAnswer<Plan>(data), error, response.status, (a) => render(a, body, form), (a) => [compareBlock(form, [
            { label: "Break-even (months)", value: a.break_even_months, format: (v) => num(v, 1) },
            { label: "Break-even utilisation", value: a.break_even_utilization, format: (v) => pct(v) },
            { label: "NPV of renting", value: a.npv_rent_usd, format: (v) => usd(v) },
            { label: "NPV of owning", value: a.npv_own_usd, format: (v) => usd(v) },
            { label: "Monthly cost of renting", value: a.monthly_rent_usd, format: (v) => usd(v) },
        ]), saveBlock("rent-vs-buy", withPriceBook(form, body).body)]);
    });
    root.replaceChildren(h("h2", {}, "Rent vs buy"),
        h("p", { class: "lede" }, "Cumulative cash spent renting against owning (purchase up front, then power, hosting and staff)."),
        form, out);
}

// Two series that end within 0.5 % of each other are drawn on top of each other: the legend says so.
function coincides(s: Series, before: Series[]): string {
    const last = (t: Series) => t.points[t.points.length - 1]?.y ?? NaN;
    const same = before.find((t) => Math.abs(last(t) - last(s)) <= 0.005 * Math.max(1, Math.abs(last(t))));
    return same ? ` (on the ${same.name} line)` : "";
}

function render(plan: Plan, body: Request, form: HTMLFormElement): HTMLElement[] {
    const series: Series[] = [
        { name: "rent", points: plan.cumulative.map((c) => ({ x: c.month, y: c.rent_usd })) },
        { name: "own", points: plan.cumulative.map((c) => ({ x: c.month, y: c.own_usd })) },
        { name: "own, net of resale", dashed: true,
          points: plan.cumulative.map((c) => ({ x: c.month, y: c.own_net_of_resale_usd })) },
    ];
    // Commitments: their monthly charge accumulated over the horizon (the table gives their totals
    // for whole terms).
    for (const o of plan.rent_options ?? []) {
        if (o.price_type === "on_demand") continue;
        series.push({ name: `rent, ${priceTypeName(o.price_type)}`, commit: true,
                      points: plan.cumulative.map((c) => ({ x: c.month, y: o.monthly_usd * c.month })) });
    }
    const be = plan.break_even_months;
    const chart = lines("Cumulative cost of renting and owning by month",
                        { label: "months from purchase", format: (v) => num(v, 0) },
                        { label: "cumulative cost (USD)", format: (v) => usdShort(v) }, series,
                        be !== null && be !== undefined ? { axis: "x", value: be, label: `break-even ${num(be, 1)} months` } : undefined);
    const csv = h("button", { type: "button", "data-testid": "csv" }, "Download the monthly series as CSV");
    csv.onclick = () => void downloadCsv("/v1/plans/rent-vs-buy", body, "rent-vs-buy.csv");
    return [
        h("section", { class: "card", "data-testid": "recommendation" },
          h("h3", {}, `Recommendation: ${plan.recommendation === "buy" ? "buy" : "rent"}`),
          h("dl", { class: "kv" },
            h("dt", {}, "Break-even"), h("dd", { "data-testid": "break-even-months", "data-value": be ?? "" },
                                           be === null || be === undefined ? "never" : months(be)),
            h("dt", {}, "Break-even utilisation"), h("dd", { "data-testid": "break-even-utilization",
                                                             "data-value": plan.break_even_utilization ?? "" },
                                                       pct(plan.break_even_utilization)),
            h("dt", {}, "Monthly: rent / own"), h("dd", {}, `${usd(plan.monthly_rent_usd)} / ${usd(plan.monthly_own_usd)}`),
            h("dt", {}, `NPV over ${plan.horizon_months ?? "?"} months: rent / own`),
            h("dd", { "data-testid": "npv" }, `${usd(plan.npv_rent_usd)} / ${usd(plan.npv_own_usd)}`)),
          h("p", { "data-testid": "reasoning" }, prose(plan.reasoning))),
        warningsBlock(plan.warnings, form) ?? h("span", {}),
        h("figure", {}, chart, h("figcaption", {}, legend(series.map((s, i) => ({
            name: s.name + coincides(s, series.slice(0, i)), cls: seriesClass(s, i), line: true }))))),
        plan.rent_options?.length ? table(["Price type", "Offering", "USD / accelerator-hour", "Monthly", "Billed months",
                                           "Total", "NPV", "Cheaper than buying"],
            plan.rent_options.map((o) => h("tr", {}, h("td", {}, priceTypeName(o.price_type)), h("td", {}, o.offering_id),
                h("td", { class: "num" }, usd(o.usd_per_accelerator_hour, 3)), h("td", { class: "num" }, usd(o.monthly_usd)),
                h("td", { class: "num" }, o.billed_months), h("td", { class: "num" }, usd(o.total_usd)),
                h("td", { class: "num" }, usd(o.npv_usd)), h("td", {}, o.cheaper_than_buying ? "yes" : "no"))),
            "rent-options", [2, 3, 4, 5, 6]) : h("span", {}),
        csv,
        assumptionsBlock(plan.assumptions),
    ];
}
