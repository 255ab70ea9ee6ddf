// The planning page: one tab per view, the tab in the URL's hash so a view can be linked.
import { api } from "./api";
import { restoreComparison } from "./compare";
import { applyState, h, kChoiceParam, kCompareOptionsParam, kPinnedParam } from "./dom";
import { detectScenarios, scenariosView } from "./scenarios";
import { catalogView } from "./views/catalog";
import { rentBuyView } from "./views/rentbuy";
import { servingView } from "./views/serving";
import { spotView } from "./views/spot";
import { trainingView } from "./views/training";

const TABS = [["catalog", "Catalog"], ["training", "Training planner"], ["rent-vs-buy", "Rent vs buy"],
              ["spot", "Spot"], ["serving", "Serving"], ["scenarios", "Saved scenarios"]] as const;
type Tab = (typeof TABS)[number][0];

async function start(): Promise<void> {
    const main = document.getElementById("main")!;
    const nav = document.getElementById("tabs")!;
    const [accs, models] = await Promise.all([api.GET("/v1/accelerators"), api.GET("/v1/models"), detectScenarios()]);
    const accelerators = accs.data?.items ?? [];
    const library = models.data?.items ?? [];
    const panels = new Map<Tab, HTMLElement>();
    const buttons = TABS.map(([id, label]) => {
        const panel = h("section", { id: `panel-${id}`, role: "tabpanel", "aria-labelledby": `tab-${id}`, hidden: true });
        panels.set(id, panel);
        const b = h("button", { type: "button", role: "tab", id: `tab-${id}`, "aria-controls": `panel-${id}`,
                                "data-tab": id }, label);
        // Back to a view keeps its inputs (and so its result) in the URL.
        b.onclick = () => {
            const query = panel.querySelector<HTMLFormElement>("form.plan-form")?.dataset.query;
            window.location.hash = id + (query ? `?${query}` : "");
        };
        return b;
    });
    nav.replaceChildren(...buttons);
    // Arrow keys move between tabs (the WAI-ARIA tabs pattern); Tab moves into the panel.
    nav.addEventListener("keydown", (e) => {
        const i = buttons.findIndex((b) => b === document.activeElement);
        if (i < 0 || (e.key !== "ArrowRight" && e.key !== "ArrowLeft")) return;
        const next = buttons[(i + (e.key === "ArrowRight" ? 1 : buttons.length - 1)) % buttons.length]!;
        next.focus();
        next.click();
    });
    main.replaceChildren(...panels.values());
    catalogView(panels.get("catalog")!, accelerators);
    trainingView(panels.get("training")!, library, accelerators);
    rentBuyView(panels.get("rent-vs-buy")!, accelerators);
    spotView(panels.get("spot")!);
    servingView(panels.get("serving")!, library, accelerators);
    scenariosView(panels.get("scenarios")!);

    // The URL is #view or #view?inputs: a link with inputs fills the view's form and runs it, so a
    // reload or a shared link shows the same result.
    const show = () => {
        const [want = "", query = ""] = window.location.hash.slice(1).split(/\?(.*)/s);
        const tab: Tab = TABS.some(([id]) => id === want) ? (want as Tab) : "catalog";
        const form = panels.get(tab)?.querySelector<HTMLFormElement>("form.plan-form");
        // form.dataset.query: the inputs of the result on screen (rememberForm).
        if (form && query && query !== form.dataset.query) {
            form.dataset.query = query;
            const params = new URLSearchParams(query);
            const pinnedA = params.get(kPinnedParam);
            params.delete(kPinnedParam);
            // The option chosen and those compared are the result's (choice.ts): kept for it.
            form.dataset.choice = params.get(kChoiceParam) ?? "";
            form.dataset.compareOptions = params.get(kCompareOptionsParam) ?? "";
            params.delete(kChoiceParam);
            params.delete(kCompareOptionsParam);
            // A link to a comparison plans A, pins it, then plans B (compare.ts).
            if (pinnedA !== null && pinnedA !== form.dataset.pinnedA) restoreComparison(form, pinnedA, params.toString());
            else if (applyState(form, params)) form.requestSubmit();
        }
        for (const [id, panel] of panels) panel.hidden = id !== tab;
        for (const b of buttons) {
            const on = b.dataset.tab === tab;
            b.setAttribute("aria-selected", String(on));
            b.tabIndex = on ? 0 : -1;
        }
    };
    window.addEventListener("hashchange", show);
    show();
    document.body.dataset.ready = "true";
}

void start();
