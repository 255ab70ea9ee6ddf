// Spot: POST /v1/plans/spot; expected cost and time on spot with and without interruptions against
// on-demand, the checkpoint interval and the chance of meeting the deadline.
import { api, type Schemas } from "../api";
import { assumptionsBlock, showOutcome, clearProblem, field, formShell, h, input, num, optNumber, pct, table,
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
    const nodes = input({ type: "number", min: 1, step: 1, value: 1, "data-testid": "s-nodes" });
    const ckpt = input({ type: "number", min: 0, step: "any", value: 5, "data-testid": "s-ckpt" });
    const restart = input({ type: "number", min: 0, step: "any", value: 10, "data-testid": "s-restart" });
    const deadline = input({ type: "number", min: 0, step: "any", value: 130, "data-testid": "s-deadline" });
    const form = formShell("Spot plan", [
        field("Job length (failure-free hours)", hours, "/job_hours"),
        field("On-demand USD per instance-hour", od, "/on_demand_usd_per_hour"),
        field("Spot USD per instance-hour", sp, "/spot_usd_per_hour"),
        field("Interruptions per instance-hour", rate, "/interruptions_per_hour"),
        field("Or a spot offering id", offering, "/spot_offering_id", "replaces the three figures above"),
        field("Nodes", nodes, "/nodes"),
        field("Checkpoint write (minutes)", ckpt, "/checkpoint_minutes"),
        field("Restart (minutes)", restart, "/restart_minutes"),
        field("Deadline (hours)", deadline, "/deadline_hours", "empty: none"),
    ], "Price the risk", "spot-form");
    const out = h("div", { class: "results", "data-testid": "spot-results" });
    form.addEventListener("submit", async (e) => {
        e.preventDefault();
        clearProblem(form);
        const id = offering.value.trim();
        const body: Request = {
            job_hours: optNumber(hours), nodes: optNumber(nodes), checkpoint_minutes: optNumber(ckpt),
            restart_minutes: optNumber(restart), deadline_hours: optNumber(deadline),
            ...(id ? { spot_offering_id: id } : { on_demand_usd_per_hour: optNumber(od), spot_usd_per_hour: optNumber(sp),
                                                   interruptions_per_hour: optNumber(rate) }),
        };
        out.replaceChildren(h("p", { role: "status" }, "Pricing…"));
        const { data, error, response } = await api.POST("/v1/plans/spot", { body });
        showOutcome(form, out, data, error, response.status, render);
    });
    root.replaceChildren(h("h2", {}, "Spot"),
        h("p", { class: "lede" }, "What interruptions cost: checkpoints, lost work and restarts, priced against on-demand."),
        form, out);
}

function render(p: Plan): HTMLElement[] {
    // Without interruptions the spot run still writes its checkpoints: failure_free_hours.
    const freeHours = p.failure_free_hours ?? p.job_hours;
    const freeCost = freeHours * (p.spot_cluster_usd_per_hour ?? 0);
    const row = (what: string, hours: number | undefined, cost: number | undefined, testid: string, prob?: number | null) =>
        h("tr", { "data-testid": testid }, h("td", {}, what),
          h("td", { class: "num", "data-value": hours ?? "" }, num(hours, 1)),
          h("td", { class: "num", "data-value": cost ?? "" }, usd(cost)),
          h("td", { class: "num" }, prob === undefined ? "" : pct(prob)));
    return [
        h("section", { class: "card", "data-testid": "recommendation" },
          h("h3", {}, `Recommendation: ${p.recommendation.replace(/_/g, " ")}`),
          h("dl", { class: "kv" },
            h("dt", {}, "Checkpoint every"), h("dd", { "data-testid": "checkpoint-interval",
                                                       "data-value": p.checkpoint_interval_hours },
                                                 `${num(p.checkpoint_interval_hours, 2)} h (Young: ${num(p.young_checkpoint_interval_hours, 2)} h)`),
            h("dt", {}, "Expected interruptions"), h("dd", {}, num(p.expected_interruptions, 1)),
            h("dt", {}, "Expected overhead"), h("dd", {}, pct(p.expected_overhead_fraction)),
            h("dt", {}, "Expected saving"), h("dd", { "data-testid": "savings", "data-value": p.expected_savings_usd },
                                                `${usd(p.expected_savings_usd)} (${pct(p.expected_savings_fraction)})`),
            h("dt", {}, "Deadline probability (spot)"),
            h("dd", { "data-testid": "deadline-probability", "data-value": p.spot_deadline_probability ?? "" },
              p.spot_deadline_probability === null || p.spot_deadline_probability === undefined ? "no deadline"
                : pct(p.spot_deadline_probability))),
          h("p", { "data-testid": "reasoning" }, p.reasoning)),
        warningsBlock(p.warnings) ?? h("span", {}),
        table(["Run", "Hours", "Cost (USD)", "P(meets deadline)"], [
            row("on-demand", p.on_demand_hours, p.on_demand_cost_usd, "row-on-demand", p.on_demand_deadline_probability),
            row("spot without interruptions", freeHours, freeCost, "row-spot-free"),
            row("spot, expected with interruptions", p.expected_spot_hours, p.expected_spot_cost_usd, "row-spot-expected",
                p.spot_deadline_probability),
        ], "spot-table", [1, 2, 3]),
        assumptionsBlock(p.assumptions),
    ];
}
