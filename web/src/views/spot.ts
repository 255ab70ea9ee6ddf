// Spot: POST /v1/plans/spot; expected cost and time on spot with and without interruptions against
// on-demand, the checkpoint interval and the chance of meeting the deadline.
import { api, type Schemas } from "../api";
import { compareBlock } from "../compare";
import { latest } from "../latest";
import { saveBlock } from "../scenarios";
import { priceBookFields, withPriceBook } from "../money";
import { csvButton, type Cell } from "../csv";
import { offeringPicker } from "../picker";
import { assumptionsBlock, showOutcome, clearProblem, duration, field, formShell, h, input, num, optNumber, pct, prose, select,
         showProblem, table,
         usd, warningsBlock } from "../dom";

type Request = Schemas["SpotPlanRequest"];
type Plan = Schemas["SpotPlan"];

export function spotView(root: HTMLElement): void {
    const hours = input({ type: "number", min: 0, step: "any", value: 100, "data-testid": "s-hours" });
    const od = input({ type: "number", min: 0, step: "any", value: 98.32, "data-testid": "s-od" });
    const sp = input({ type: "number", min: 0, step: "any", value: 30, "data-testid": "s-spot" });
    const rate = input({ type: "number", min: 0, max: 10, step: "any", value: 0.01, "data-testid": "s-rate" });
    const offering = input({ type: "text", autocomplete: "off", placeholder: "aws-trn1.32xlarge-us-east-1-spot",
                             "data-testid": "s-offering" });
    // Prices by hand, or from a spot offering (its catalog price, Spot Advisor rate and on-demand
    // twin): one or the other is shown and sent, never both.
    const source = select([["hand", "typed in below"], ["offering", "a spot offering in the catalog"]], "hand",
                          { "data-testid": "s-source" });
    // Every spot offering: one without Spot Advisor data is planned at the worst bucket, and the
    // answer says so in its warnings.
    const picker = offeringPicker(offering, ["spot"], "s-picker");
    const nodes = input({ type: "number", min: 1, step: 1, value: 1, "data-testid": "s-nodes" });
    const ckpt = input({ type: "number", min: 0, step: "any", value: 5, "data-testid": "s-ckpt" });
    const restart = input({ type: "number", min: 0, step: "any", value: 10, "data-testid": "s-restart" });
    const deadline = input({ type: "number", min: 0, step: "any", value: 130, "data-testid": "s-deadline" });
    const byHand = [field("On-demand USD per instance-hour", od, "/on_demand_usd_per_hour"),
                    field("Spot USD per instance-hour", sp, "/spot_usd_per_hour"),
                    field("Interruptions per instance-hour", rate, "/interruptions_per_hour")];
    const fromCatalog = [field("Spot offering id", offering, "/spot_offering_id",
                               "its price, interruption rate and on-demand twin come from the catalog; one without interruption data is planned at the worst bucket (>20 %), as its warnings say"), picker];
    const showSource = () => {
        for (const f of byHand) f.hidden = source.value !== "hand";
        for (const f of fromCatalog) f.hidden = source.value !== "offering";
    };
    source.onchange = showSource;
    showSource();
    const form = formShell("Spot plan", [
        field("Job length (failure-free hours)", hours, "/job_hours", "240 h is 10 days"),
        field("Prices and interruption rate", source, "price_source"),
        ...byHand, ...fromCatalog,
        field("Nodes", nodes, "/nodes"),
        field("Checkpoint write (minutes)", ckpt, "/checkpoint_minutes"),
        field("Restart (minutes)", restart, "/restart_minutes"),
        field("Deadline (hours)", deadline, "/deadline_hours", "empty: none"),
        ...priceBookFields(),
    ], "Price the risk", "spot-form");
    const out = h("div", { class: "results", "data-testid": "spot-results" });
    form.addEventListener("submit", async (e) => {
        e.preventDefault();
        clearProblem(form);
        const id = source.value === "offering" ? offering.value.trim() : "";
        const run = latest(form, out);
        if (source.value === "offering" && !id) {
            run.done();
            showProblem(form, { type: "about:blank", title: "No offering", status: 400, code: "client", detail: "",
                                errors: [{ field: "/spot_offering_id", detail: "Pick a spot offering from the list, or type its id." }] });
            return;
        }
        const body: Request = {
            job_hours: optNumber(hours), nodes: optNumber(nodes), checkpoint_minutes: optNumber(ckpt),
            restart_minutes: optNumber(restart), deadline_hours: optNumber(deadline),
            ...(id ? { spot_offering_id: id } : { on_demand_usd_per_hour: optNumber(od), spot_usd_per_hour: optNumber(sp),
                                                   interruptions_per_hour: optNumber(rate) }),
        };
        out.replaceChildren(h("p", { role: "status" }, "Pricing…"));
        const answer = await run.call((signal) => api.POST("/v1/plans/spot", { ...withPriceBook(form, body), signal }));
        if (!answer) return;  // another request (or an edit of the form) superseded this one
        run.done();
        const { data, error, response } = answer;
        showOutcome(form, out, data, error, response.status, (a) => render(a, form), (a) => [compareBlock(form, [
            { label: "Expected cost of the recommended plan", value: recommendedCost(a), format: (v) => usd(v) },
            { label: "On-demand cost", value: a.on_demand_cost_usd, format: (v) => usd(v) },
            { label: "Expected cost on spot", value: a.expected_spot_cost_usd, format: (v) => usd(v) },
            { label: "Expected hours on spot", value: a.expected_spot_hours, format: (v) => duration(v) },
            { label: "Deadline probability (spot alone)", value: a.spot_deadline_probability, format: (v) => pct(v) },
        ]), saveBlock("spot", withPriceBook(form, body).body)]);
    });
    root.replaceChildren(h("h2", {}, "Spot"),
        h("p", { class: "lede" }, "What interruptions cost: checkpoints, lost work and restarts, priced against on-demand."),
        form, out);
}

const kPlanWords: Record<Plan["recommendation"], string> = {
    spot: "run on spot", on_demand: "run on-demand",
    mixed: "start on spot, move to on-demand when behind",
};

// The recommended plan's own expected cost (mixed: the mixed cost; on-demand: on-demand's).
function recommendedCost(p: Plan): number {
    return p.recommendation === "spot" ? p.expected_spot_cost_usd
        : p.recommendation === "mixed" && p.expected_mixed_cost_usd !== null && p.expected_mixed_cost_usd !== undefined ? p.expected_mixed_cost_usd
        : p.on_demand_cost_usd;
}

function render(p: Plan, form: HTMLFormElement): HTMLElement[] {
    // Without interruptions the spot run still writes its checkpoints: failure_free_hours.
    const freeHours = p.failure_free_hours ?? p.job_hours;
    const freeCost = freeHours * (p.spot_cluster_usd_per_hour ?? 0);
    const mixedCost = p.expected_mixed_cost_usd ?? null;
    // The recommended plan's own cost and saving: the headline never shows spot alone's saving
    // when spot alone is not what is recommended.
    const rec = p.recommendation;
    const recCost = rec === "spot" ? p.expected_spot_cost_usd : rec === "mixed" && mixedCost !== null ? mixedCost
        : p.on_demand_cost_usd;
    const recSaving = p.on_demand_cost_usd - recCost;
    const recFraction = rec === "spot" ? p.expected_savings_fraction
        : rec === "mixed" ? (p.expected_mixed_savings_fraction ?? recSaving / p.on_demand_cost_usd) : 0;
    const row = (what: string, hours: string, hoursValue: number | undefined, cost: number | undefined, testid: string,
                 prob: number | null | undefined, chosen: boolean) =>
        h("tr", { "data-testid": testid, class: chosen ? "chosen" : undefined },
          h("td", {}, what, chosen ? h("span", { class: "tag" }, "recommended") : null),
          h("td", { class: "num", "data-value": hoursValue ?? "" }, hours),
          h("td", { class: "num", "data-value": cost ?? "" }, usd(cost)),
          h("td", { class: "num" }, prob === undefined || prob === null ? "" : pct(prob)));
    const spotAlone = rec === "spot" ? null
        : h("p", { "data-testid": "spot-alone" }, `Spot alone would be expected to save ${usd(p.expected_savings_usd)} ` +
            `(${pct(p.expected_savings_fraction)})` +
            (p.spot_deadline_probability !== null && p.spot_deadline_probability !== undefined
                ? `, but it finishes by the deadline with probability ${pct(p.spot_deadline_probability)}.` : "."));
    type Run = [string, string, number | undefined, number | undefined, string, number | null | undefined, boolean];
    const runs: Run[] = [
        ["on-demand", duration(p.on_demand_hours), p.on_demand_hours, p.on_demand_cost_usd, "row-on-demand",
         p.on_demand_deadline_probability, rec === "on_demand"],
        ["spot without interruptions", duration(freeHours), freeHours, freeCost, "row-spot-free", undefined, false],
        ["spot, expected with interruptions", duration(p.expected_spot_hours), p.expected_spot_hours,
         p.expected_spot_cost_usd, "row-spot-expected", p.spot_deadline_probability, rec === "spot"],
        ...(mixedCost !== null
            ? [["mixed: start on spot, move to on-demand when behind",
                p.deadline_hours !== null && p.deadline_hours !== undefined ? `by the deadline, ${duration(p.deadline_hours)}` : "",
                undefined, mixedCost, "row-mixed", undefined, rec === "mixed"] as Run] : []),
    ];
    return [
        h("section", { class: "card", "data-testid": "recommendation" },
          h("h3", {}, `Recommendation: ${kPlanWords[rec]}`),
          h("dl", { class: "kv" },
            h("dt", {}, "Expected cost of the recommended plan"),
            h("dd", { "data-testid": "recommended-cost", "data-value": recCost }, usd(recCost)),
            h("dt", {}, "Expected saving against on-demand"),
            h("dd", { "data-testid": "savings", "data-value": recSaving },
              rec === "on_demand" ? "none (on-demand is recommended)" : `${usd(recSaving)} (${pct(recFraction)})`),
            h("dt", {}, "Checkpoint every"), h("dd", { "data-testid": "checkpoint-interval",
                                                       "data-value": p.checkpoint_interval_hours },
                                                 `${num(p.checkpoint_interval_hours, 2)} h (Young: ${num(p.young_checkpoint_interval_hours, 2)} h)`),
            h("dt", {}, "Expected interruptions"), h("dd", {}, num(p.expected_interruptions, 1)),
            h("dt", {}, "Expected overhead on spot"), h("dd", {}, pct(p.expected_overhead_fraction)),
            h("dt", {}, "Deadline probability (spot alone)"),
            h("dd", { "data-testid": "deadline-probability", "data-value": p.spot_deadline_probability ?? "" },
              p.spot_deadline_probability === null || p.spot_deadline_probability === undefined ? "no deadline"
                : pct(p.spot_deadline_probability)),
            p.spot_offering_id ? h("dt", {}, "Spot offering") : null,
            p.spot_offering_id ? h("dd", { "data-testid": "spot-offering" }, p.spot_offering_id) : null,
            p.on_demand_offering_id ? h("dt", {}, "Compared with on-demand offering") : null,
            p.on_demand_offering_id ? h("dd", { "data-testid": "on-demand-offering" }, p.on_demand_offering_id) : null),
          spotAlone,
          h("p", { "data-testid": "reasoning" }, prose(p.reasoning))),
        warningsBlock(p.warnings, form) ?? h("span", {}),
        table(["Run", "Hours", "Cost (USD)", "P(meets deadline)"], runs.map((r) => row(...r)), "spot-table", [1, 2, 3]),
        // The table's rows as CSV, the figures as the API gave them.
        csvButton("Download this table as CSV", "spot-plan.csv", () => ({
            head: ["run", "hours", "cost_usd", "deadline_probability", "recommended"],
            rows: runs.map(([what, , hoursValue, cost, , prob, chosen]): Cell[] =>
                [what, hoursValue, cost, prob, chosen]),
        })),
        assumptionsBlock(p.assumptions),
    ];
}
