// Two scenarios side by side: a planner's result can be pinned as "A"; every later result of the
// same planner ("B") is shown beside it, inputs and headline figures, the rows that differ marked
// (a mark and the word "differs", not colour alone) and each figure's difference given. A's inputs
// go into the URL beside B's (compare_a, rememberForm), so a reload or a shared link plans A again,
// pins it and plans B: the same comparison. "Clear A" forgets it.
import { applyState, formState, h, inputsOf, rememberForm } from "./dom";

export interface Figure { label: string; value: number | null | undefined; format: (v: number) => string }
// A result: its inputs as shown and as the URL keeps them (formState), and its headline figures.
interface Snapshot { inputs: [string, string][]; figures: Figure[]; query: string }

const pinned = new WeakMap<HTMLFormElement, Snapshot>();

// A comparison from the URL: plans A (`aQuery`); its result is pinned as A (compareBlock), then
// B (`bQuery`) is planned and shown beside it. A refused plan stops it (showProblem).
export function restoreComparison(form: HTMLFormElement, aQuery: string, bQuery: string): void {
    form.dataset.restoreA = aQuery;
    form.dataset.restoreB = bQuery;
    applyState(form, new URLSearchParams(aQuery));
    form.requestSubmit();
}

const shown = (f: Figure | undefined): string =>
    f === undefined || f.value === null || f.value === undefined || !Number.isFinite(f.value) ? "–" : f.format(f.value);

function difference(a: Figure | undefined, b: Figure): string {
    if (!a || a.value === null || a.value === undefined || b.value === null || b.value === undefined) return "";
    const d = b.value - a.value;
    if (d === 0) return "same";
    const pctText = a.value !== 0 ? ` (${d > 0 ? "+" : "−"}${Math.abs((d / a.value) * 100).toFixed(1)} %)` : "";
    return `${d > 0 ? "+" : "−"}${b.format(Math.abs(d))}${pctText}`;
}

// The compare block under a result: a button to pin it as A, or A and this result side by side.
export function compareBlock(form: HTMLFormElement, figures: Figure[]): HTMLElement {
    const now: Snapshot = { inputs: inputsOf(form), figures, query: formState(form).toString() };
    const pin = (s: Snapshot) => { pinned.set(form, s); form.dataset.pinnedA = s.query; };
    if (form.dataset.restoreA !== undefined) {
        // A of a comparison from the URL: pinned, then B planned (after this result is drawn).
        const b = form.dataset.restoreB ?? "";
        delete form.dataset.restoreA;
        delete form.dataset.restoreB;
        pin(now);
        if (b !== "" && b !== now.query) {
            setTimeout(() => { if (applyState(form, new URLSearchParams(b))) form.requestSubmit(); });
        }
    }
    const box = h("section", { class: "compare", "data-testid": "compare", "aria-label": "Compare two scenarios" });
    const view = form.closest<HTMLElement>("[role=tabpanel]")?.id.replace(/^panel-/, "") ?? "";
    const draw = () => {
        const a = pinned.get(form);
        const pinButton = h("button", { type: "button", class: "csv", "data-testid": "pin-a" },
                            a ? "Pin this result as A instead" : "Pin this result as A to compare");
        pinButton.onclick = () => {
            pin(now);
            rememberForm(form, now.query);  // the URL keeps A from now on
            draw();
            box.querySelector<HTMLElement>("button")?.focus();
        };
        if (!a || a === now) {
            box.replaceChildren(h("h3", {}, "Compare scenarios"),
                h("p", {}, a === now ? "This result is pinned as A: change the inputs and plan again to see both side by side."
                                     : "Pin this result as A, change the inputs and plan again: the two are shown side by side."),
                a === now ? clearButton() : pinButton);
            return;
        }
        const labels = [...new Set([...a.inputs.map(([k]) => k), ...now.inputs.map(([k]) => k)])];
        const aIn = new Map(a.inputs), bIn = new Map(now.inputs);
        const mark = (differs: boolean) => differs ? h("span", { class: "differs" }, "≠ differs") : h("span", { class: "same" }, "same");
        const inputRows = labels.map((l) => {
            const va = aIn.get(l) ?? "–", vb = bIn.get(l) ?? "–";
            return h("tr", { class: va !== vb ? "diff" : undefined, "data-kind": "input", "data-label": l },
                     h("th", { scope: "row" }, l), h("td", {}, va), h("td", {}, vb), h("td", {}, mark(va !== vb)));
        });
        const figureRows = now.figures.map((fb) => {
            const fa = a.figures.find((f) => f.label === fb.label);
            const d = difference(fa, fb);
            const differs = shown(fa) !== shown(fb);
            return h("tr", { class: differs ? "diff" : undefined, "data-kind": "figure", "data-label": fb.label },
                     h("th", { scope: "row" }, fb.label),
                     h("td", { class: "num", "data-value": fa?.value ?? "" }, shown(fa)),
                     h("td", { class: "num", "data-value": fb.value ?? "" }, shown(fb)),
                     h("td", { class: "num" }, differs ? h("span", { class: "differs" }, `≠ ${d || "differs"}`) : mark(false)));
        });
        const head = (t: string) => h("tr", { class: "section" }, h("th", { scope: "colgroup", colspan: 4 }, t));
        box.replaceChildren(h("h3", {}, "A (pinned) and B (this result) side by side"),
            h("div", { class: "scroll", tabindex: 0, role: "region", "aria-label": "Scenarios A and B" },
              h("table", { "data-testid": "compare-table" },
                h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Input or figure"), h("th", { scope: "col" }, "A (pinned)"),
                                 h("th", { scope: "col" }, "B (this result)"), h("th", { scope: "col" }, "B against A"))),
                h("tbody", {}, head("Inputs"), ...inputRows, head("Results"), ...figureRows))),
            h("p", {}, h("a", { href: `#${view}?${a.query}` }, "Open A's inputs"), " "), pinButton, " ", clearButton());
    };
    const clearButton = () => {
        const b = h("button", { type: "button", class: "csv", "data-testid": "clear-a" }, "Clear A");
        b.onclick = () => {
            pinned.delete(form);
            delete form.dataset.pinnedA;
            rememberForm(form, now.query);
            draw();
        };
        return b;
    };
    draw();
    return box;
}
