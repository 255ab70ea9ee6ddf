// Two scenarios side by side: a planner's result can be pinned as "A"; every later result of the
// same planner ("B") is shown beside it, inputs and headline figures, the rows that differ marked
// (a mark and the word "differs", not colour alone) and each figure's difference given. A lives in
// this page only (not in the URL); "Clear A" forgets it.
import { h, inputsOf } from "./dom";

export interface Figure { label: string; value: number | null | undefined; format: (v: number) => string }
interface Snapshot { inputs: [string, string][]; figures: Figure[]; url: string }

const pinned = new WeakMap<HTMLFormElement, Snapshot>();

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
    const now: Snapshot = { inputs: inputsOf(form), figures, url: "" };
    const box = h("section", { class: "compare", "data-testid": "compare", "aria-label": "Compare two scenarios" });
    const draw = () => {
        const a = pinned.get(form);
        const pin = h("button", { type: "button", class: "csv", "data-testid": "pin-a" },
                      a ? "Pin this result as A instead" : "Pin this result as A to compare");
        pin.onclick = () => {
            now.url = window.location.href;  // the URL holds this result's inputs once it is drawn
            pinned.set(form, now);
            draw();
            box.querySelector<HTMLElement>("button")?.focus();
        };
        if (!a || a === now) {
            box.replaceChildren(h("h3", {}, "Compare scenarios"),
                h("p", {}, a === now ? "This result is pinned as A: change the inputs and plan again to see both side by side."
                                     : "Pin this result as A, change the inputs and plan again: the two are shown side by side."),
                a === now ? clearButton() : pin);
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
                h("thead", {}, h("tr", {}, h("th", { scope: "col" }, ""), h("th", { scope: "col" }, "A (pinned)"),
                                 h("th", { scope: "col" }, "B (this result)"), h("th", { scope: "col" }, "B against A"))),
                h("tbody", {}, head("Inputs"), ...inputRows, head("Results"), ...figureRows))),
            h("p", {}, h("a", { href: a.url }, "Open A's inputs"), " "), pin, " ", clearButton());
    };
    const clearButton = () => {
        const b = h("button", { type: "button", class: "csv", "data-testid": "clear-a" }, "Clear A");
        b.onclick = () => { pinned.delete(form); draw(); };
        return b;
    };
    draw();
    return box;
}
