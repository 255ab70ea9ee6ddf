// Saved scenarios (database mode: POST/GET /v1/scenarios): a planner's result can be saved under a
// name with its request (an API key is needed to write; the page keeps the key in memory only,
// never in the URL), and the saved ones are listed and opened in their planner, which plans them
// again on today's prices. Without a database the API answers 409 and the view says so in words.
import { api, asProblem, type Schemas } from "./api";
import { planVsActual } from "./actuals";
import { field, h, input, num, scrollBox } from "./dom";
import { commitmentsBlock, uploadBlock } from "./money";

export type PlanName = "spot" | "rent-vs-buy" | "training" | "inference";
const kTabOf: Record<string, string> = { spot: "spot", "rent-vs-buy": "rent-vs-buy", training: "training", inference: "serving" };
const kPlanWords: Record<string, string> = { spot: "Spot", "rent-vs-buy": "Rent vs buy", training: "Training planner", inference: "Serving" };

let databaseMode = false;
let unavailable = "";  // the API's words when the mode could not be read
let apiKey = "";
let refreshList: (() => void) | null = null;

// The key and the mode, for the price-book and upload controls (money.ts).
export const currentKey = (): string => apiKey;
export const databaseModeOn = (): boolean => databaseMode;
export function setKey(key: string): void {
    apiKey = key;
    syncKey();
}

// Asks once, at start, in a way that cannot fail for the mode: /healthz names the database only
// in database mode (GET /v1/scenarios would answer 409 without one, an error in the console).
export async function detectScenarios(): Promise<void> {
    const { data, error, response } = await api.GET("/healthz");
    databaseMode = data?.database !== undefined;
    if (!data) unavailable = asProblem(error, response.status).detail;
}

let saveCounter = 0;
// Under a planner's result in database mode: a name, the API key, and Save.
export function saveBlock(plan: PlanName, request: unknown): HTMLElement | null {
    if (!databaseMode) return null;
    const n = ++saveCounter;
    const name = input({ type: "text", autocomplete: "off", value: `${kPlanWords[plan]} ${new Date().toISOString().slice(0, 16).replace("T", " ")}`,
                         "data-testid": "scenario-name", id: `scenario-name-${n}` });
    const key = input({ type: "password", autocomplete: "off", value: apiKey, "data-testid": "scenario-key", id: `scenario-key-${n}` });
    key.oninput = () => { apiKey = key.value.trim(); };
    const status = h("p", { role: "status", "data-testid": "scenario-status" });
    const form = h("form", { class: "save-form", "data-testid": "save-scenario", "aria-label": "Save as a scenario", novalidate: true },
        h("h3", {}, "Save as a scenario"),
        h("div", { class: "grid" },
          field("Scenario name", name, "/name"),
          field("API key", key, "authorization", "needed to save (read or admin scope); kept in this page only")),
        h("button", { type: "submit", class: "csv" }, "Save scenario"), status);
    form.addEventListener("submit", async (e) => {
        e.preventDefault();
        status.className = "";
        status.textContent = "Saving…";
        const { data, error, response } = await api.POST("/v1/scenarios", {
            body: { name: name.value, plan, request: request as Schemas["PlanRequest"] },
            headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {},
        });
        if (data) {
            status.textContent = `Saved as “${data.name}” (scenario ${data.id}); it is listed under Saved scenarios.`;
            status.dataset.id = data.id;
            refreshList?.();
            return;
        }
        const p = asProblem(error, response.status);
        status.className = "field-error";
        const why = response.status === 401 ? " Give an API key above (any scope may save)."
            : response.status === 403 ? " This key may not save scenarios." : "";
        status.textContent = `Not saved: the server answered ${p.status} ${p.title}: ${p.detail}${/[.!?]$/.test(p.detail) ? "" : "."}${why}`;
    });
    return form;
}

// A saved request as the planner's URL inputs (what formState writes): each member by its path,
// arrays joined by commas, a pasted config as its JSON; percentages as the form shows them.
function requestQuery(request: Record<string, unknown>, form: HTMLFormElement | null): URLSearchParams {
    const q = new URLSearchParams();
    const walk = (obj: Record<string, unknown>, prefix: string) => {
        for (const [k, v] of Object.entries(obj)) {
            const path = prefix + k;
            if (v === null || v === undefined) continue;
            if (Array.isArray(v)) q.set(path, v.join(","));
            else if (typeof v === "object" && !form?.querySelector(`[name="/${CSS.escape(path)}"]`)) walk(v as Record<string, unknown>, `${path}/`);
            else q.set(path, typeof v === "object" ? JSON.stringify(v, null, 2) : String(v));
        }
    };
    walk(request, "");
    for (const el of form?.querySelectorAll<HTMLInputElement>("input[data-percent]") ?? []) {
        const k = el.name.replace(/^\//, "");
        const v = q.get(k);
        if (v !== null && v !== "" && Number.isFinite(Number(v))) q.set(k, String(Math.round(Number(v) * 100 * 1e6) / 1e6));
    }
    // The planners' own choices between ways of giving a value.
    if (form?.querySelector("[name=model_source]")) {
        q.set("model_source", q.has("model/hf_config") ? "hf" : q.has("model/params_b") ? "shape" : "library");
    }
    if (form?.querySelector("[name=price_source]")) q.set("price_source", q.has("spot_offering_id") ? "offering" : "hand");
    return q;
}

export function scenariosView(root: HTMLElement): void {
    root.replaceChildren(h("h2", {}, "Saved scenarios"),
        h("p", { class: "lede" }, "Plans saved with their request (POST /v1/scenarios): open one to plan it again in its planner, on today's prices."));
    if (!databaseMode) {
        root.append(h("p", { class: "card", "data-testid": "scenarios-unavailable" },
            "Saved scenarios, and their plan against the actual charges, need the server's database mode (PostgreSQL; see docs/database.md). ",
            unavailable ? h("span", {}, "This server answered: ", h("q", {}, unavailable)) : "This server runs on its built-in catalog, without a database."));
        return;
    }
    const list = h("div", { "data-testid": "scenario-list" });
    const changes = h("section", { "data-testid": "scenario-changes", "aria-live": "polite" });
    const actuals = h("section", { "data-testid": "plan-vs-actual", "aria-live": "polite" });
    const status = h("p", { role: "status", class: "status", "data-testid": "scenarios-status" });
    const more = h("button", { type: "button", class: "csv", hidden: true }, "More");
    const refresh = h("button", { type: "button", class: "csv" }, "Refresh");
    let items: Schemas["ScenarioSummary"][] = [];
    let cursor: string | null = null;
    const draw = () => {
        list.replaceChildren(items.length === 0 ? h("p", {}, "No scenario saved yet: plan something and save it under its result.")
            : scrollBox("Saved scenarios table", h("table", { "data-testid": "scenarios" },
                h("thead", {}, h("tr", {}, ...["Name", "Planner", "Saved", "By", "Catalog version", ""].map((t) => h("th", { scope: "col" }, t)))),
                h("tbody", {}, ...items.map((s) => {
                    const open = h("button", { type: "button", class: "plan-with", "data-testid": "open-scenario",
                                               "aria-label": `Open ${s.name} in ${kPlanWords[s.plan] ?? s.plan}` }, "Open");
                    open.onclick = () => void openScenario(s.id, status);
                    const again = h("button", { type: "button", class: "plan-with", "data-testid": "evaluate-scenario",
                                                "aria-label": `What changed in ${s.name} since it was saved` }, "What changed");
                    again.onclick = () => void evaluateScenario(s, changes);
                    const spend = h("button", { type: "button", class: "plan-with", "data-testid": "scenario-actuals",
                                                "aria-label": `Plan vs actual spend of ${s.name}` }, "Plan vs actual");
                    spend.onclick = () => { syncKey(); void planVsActual(s, apiKey, actuals); };
                    return h("tr", { "data-id": s.id }, h("td", {}, s.name), h("td", {}, kPlanWords[s.plan] ?? s.plan),
                             h("td", {}, s.created_at.replace("T", " ").slice(0, 16)), h("td", {}, s.created_by),
                             h("td", {}, s.catalog_version), h("td", { class: "actions" }, open, " ", again, " ", spend));
                })))));
        more.hidden = cursor === null;
    };
    const load = async (reset: boolean) => {
        syncKey();  // after a save, the key it used
        if (reset) { items = []; cursor = null; }
        // Scenarios are the key's team's: listed with the key when one is given.
        const { data, error, response } = await api.GET("/v1/scenarios", { params: { query: { limit: 50, cursor: cursor ?? undefined } },
                                                                           headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {} });
        if (!data) { status.textContent = `The list could not be read: ${asProblem(error, response.status).detail}`; return; }
        items.push(...data.items);
        cursor = data.next_cursor;
        status.textContent = `${items.length} scenario${items.length === 1 ? "" : "s"} listed${cursor ? "; more below" : ""}.`;
        draw();
    };
    more.onclick = () => void load(false);
    refresh.onclick = () => void load(true);
    refreshList = () => void load(true);
    root.append(keyBlock(), uploadBlock(() => void load(true)) ?? "", commitmentsBlock() ?? "", status, list, h("p", {}, more, " ", refresh), changes, actuals);
    void load(true);
}

// The key that reads spend ("Plan vs actual": a key of either scope, as spend is confidential),
// the same one the save forms keep: typed in one place, used in both, never put in the URL.
let keyInput: HTMLInputElement | null = null;
function keyBlock(): HTMLElement {
    keyInput = input({ type: "password", autocomplete: "off", value: apiKey, "data-testid": "scenarios-key", id: "scenarios-key" });
    keyInput.oninput = () => { apiKey = keyInput?.value.trim() ?? ""; };
    return h("div", { class: "grid key-block" },
        field("API key", keyInput, "authorization", "needed for plan vs actual (read or admin scope: spend is confidential) and, admin scope, to upload an export; kept in this page only"));
}
// A key typed under a result since the view was drawn shows here too.
function syncKey(): void {
    if (keyInput && keyInput.value.trim() !== apiKey) keyInput.value = apiKey;
}

async function openScenario(id: string, status: HTMLElement): Promise<void> {
    const { data, error, response } = await api.GET("/v1/scenarios/{id}", { params: { path: { id } } });
    if (!data) { status.textContent = `Scenario ${id} could not be opened: ${asProblem(error, response.status).detail}`; return; }
    const tab = kTabOf[data.plan];
    if (!tab) { status.textContent = `Scenario ${id} is a ${data.plan} plan, which this page has no view for.`; return; }
    const form = document.querySelector<HTMLFormElement>(`#panel-${tab} form.plan-form`);
    window.location.hash = `${tab}?${requestQuery(data.request as Record<string, unknown>, form).toString()}`;
}

// A saved scenario planned again on today's prices (POST /v1/scenarios/{id}/evaluate): whether its
// answer changed, and the values that did (the answer's JSON pointers, saved and now, the change).
async function evaluateScenario(s: Schemas["ScenarioSummary"], out: HTMLElement): Promise<void> {
    out.replaceChildren(h("p", { role: "status" }, `Planning “${s.name}” again…`));
    const { data, error, response } = await api.POST("/v1/scenarios/{id}/evaluate", { params: { path: { id: s.id } } });
    if (!data) {
        out.replaceChildren(h("p", { class: "field-error" }, `“${s.name}” could not be planned again: ${asProblem(error, response.status).detail}`));
        return;
    }
    // Numbers as numbers; text (a reasoning sentence, say) cut to a line, its whole in the cell's title.
    const full = (v: unknown) => (v === null || v === undefined ? "–" : typeof v === "number" ? num(v, Number.isInteger(v) ? 0 : 2)
        : typeof v === "object" ? JSON.stringify(v) : String(v));
    const value = (v: unknown) => { const t = full(v); return t.length > 48 ? t.slice(0, 47) + "…" : t; };
    const list = data.changes ?? [];
    const count = data.change_count ?? list.length;
    out.replaceChildren(h("h3", {}, `“${s.name}” on today's prices`),
        data.result === null ? h("p", { class: "field-error", "data-testid": "evaluation" },
                                 `It no longer plans: ${data.error?.detail ?? "the API gave no reason"}.`)
            : h("p", { "data-testid": "evaluation", "data-changed": String(data.changed), "data-count": count },
                data.changed ? `${num(count, 0)} value${count === 1 ? "" : "s"} of its answer changed since it was saved` +
                               `${list.length < count ? ` (the first ${list.length} below)` : ""} (catalog version ${data.catalog_version}).`
                             : `Nothing in its answer changed since it was saved (catalog version ${data.catalog_version}).`),
        list.length === 0 ? "" : scrollBox("Changed values table", h("table", { "data-testid": "changes" },
            h("thead", {}, h("tr", {}, ...["Value (in the answer)", "Saved", "Now", "Change"].map((t) => h("th", { scope: "col" }, t)))),
            h("tbody", {}, ...list.map((c) => h("tr", {}, h("td", {}, h("code", {}, c.path)),
                h("td", { class: "num wrap", title: full(c.saved) }, c.saved_length !== undefined ? `${c.saved_length} items` : value(c.saved)),
                h("td", { class: "num wrap", title: full(c.now) }, c.now_length !== undefined ? `${c.now_length} items` : value(c.now)),
                h("td", { class: "num" }, c.delta === undefined ? "" : `${c.delta > 0 ? "+" : ""}${value(c.delta)}` +
                    (c.delta_percent === null || c.delta_percent === undefined ? "" : ` (${c.delta_percent > 0 ? "+" : ""}${num(c.delta_percent, 1)} %)`))))))));
}
