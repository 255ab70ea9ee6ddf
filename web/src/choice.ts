// Choosing one of a plan's ranked options, not only the recommendation, and setting two options
// side by side. The choice belongs to the result on screen: it is kept in the form
// (data-choice, data-compare-options) and in the URL (option, compare_options: the options' keys,
// rememberForm), so a shared link reopens the same chosen option and the printout shows it, with
// that link. A person planning other inputs starts again from the recommendation.
import { formState, h, rememberForm } from "./dom";

// A fact about an option, as the chosen card and the side-by-side table show it; `value` is the
// API's number behind the text (data-value), `format` how a difference of it is written.
export interface Fact { label: string; text: string; value?: number | null; format?: (v: number) => string }
export interface Choosable { key: string; name: string; facts: Fact[] }

const kMaxCompared = 2;
const refreshers = new WeakMap<HTMLFormElement, () => void>();
const watched = new WeakSet<HTMLFormElement>();

const chosenKey = (form: HTMLFormElement): string => form.dataset.choice ?? "";
const comparedKeys = (form: HTMLFormElement): string[] => (form.dataset.compareOptions ?? "").split(",").filter(Boolean);

// A person's own submit of other inputs than the result's forgets the choice; a plan opened from
// a link (no submitter) keeps the one the link names.
function forgetOnNewInputs(form: HTMLFormElement): void {
    if (watched.has(form)) return;
    watched.add(form);
    form.addEventListener("submit", (e) => {
        if (!e.submitter || formState(form).toString() === form.dataset.inputs) return;
        form.dataset.choice = "";
        form.dataset.compareOptions = "";
    });
}

function setChoice(form: HTMLFormElement, choice: string, compared: string[]): void {
    form.dataset.choice = choice;
    form.dataset.compareOptions = compared.join(",");
    rememberForm(form, form.dataset.inputs);
    refreshers.get(form)?.();
}

// The buttons in an option's row: choose it, and set it beside another.
export function choiceCell(form: HTMLFormElement, key: string, name: string): HTMLElement {
    const choose = h("button", { type: "button", class: "plan-with", "data-testid": "choose", "data-key": key,
                                 "aria-pressed": String(chosenKey(form) === key), "aria-label": `Choose ${name}` }, "Choose");
    choose.onclick = () => setChoice(form, chosenKey(form) === key ? "" : key, comparedKeys(form));
    const compare = h("button", { type: "button", class: "plan-with", "data-testid": "compare-option", "data-key": key,
                                  "aria-pressed": String(comparedKeys(form).includes(key)), "aria-label": `Compare ${name}` }, "Compare");
    compare.onclick = () => {
        const keys = comparedKeys(form);
        setChoice(form, chosenKey(form), keys.includes(key) ? keys.filter((k) => k !== key) : [...keys, key].slice(-kMaxCompared));
    };
    return h("td", { class: "choose" }, choose, " ", compare);
}

function difference(a: Fact, b: Fact): string {
    if (a.value === null || a.value === undefined || b.value === null || b.value === undefined || !b.format) return "";
    const d = b.value - a.value;
    if (d === 0) return "same";
    const pctText = a.value !== 0 ? ` (${d > 0 ? "+" : "−"}${Math.abs((d / a.value) * 100).toFixed(1)} %)` : "";
    return `${d > 0 ? "+" : "−"}${b.format(Math.abs(d))}${pctText}`;
}

function factsList(o: Choosable): HTMLElement {
    return h("dl", { class: "kv" }, ...o.facts.flatMap((f) => [
        h("dt", {}, f.label), h("dd", { "data-label": f.label, "data-value": f.value ?? undefined }, f.text)]));
}

// The chosen option (its facts, and its first figure against the recommendation's).
function chosenCard(form: HTMLFormElement, o: Choosable, recommended: Choosable | undefined): HTMLElement {
    const back = h("button", { type: "button", class: "csv", "data-testid": "clear-choice" }, "Back to the recommendation");
    back.onclick = () => setChoice(form, "", comparedKeys(form));
    const first = o.facts.find((f) => f.format);
    const against = first && recommended && recommended.key !== o.key
        ? recommended.facts.find((f) => f.label === first.label) : undefined;
    return h("section", { class: "card chosen-option", "data-testid": "chosen", "data-key": o.key },
             h("h3", {}, `Your choice: ${o.name}`),
             recommended?.key === o.key ? h("p", {}, "This is the recommended option.")
                 : recommended ? h("p", { "data-testid": "chosen-against" },
                     `Chosen instead of the recommendation (${recommended.name})`,
                     against && first ? `: ${first.label.toLowerCase()} ${difference(against, first)}.` : ".") : null,
             factsList(o), back);
}

function sideBySide(form: HTMLFormElement, a: Choosable, b: Choosable): HTMLElement {
    const stop = h("button", { type: "button", class: "csv", "data-testid": "clear-compare" }, "Stop comparing");
    stop.onclick = () => setChoice(form, chosenKey(form), []);
    const rows = b.facts.map((fb) => {
        const fa = a.facts.find((f) => f.label === fb.label) ?? { label: fb.label, text: "–" };
        const differs = fa.text !== fb.text;
        const d = difference(fa, fb);
        return h("tr", { class: differs ? "diff" : undefined, "data-label": fb.label },
                 h("th", { scope: "row" }, fb.label),
                 h("td", { "data-value": fa.value ?? undefined }, fa.text),
                 h("td", { "data-value": fb.value ?? undefined }, fb.text),
                 h("td", {}, differs ? h("span", { class: "differs" }, `≠ ${d || "differs"}`) : h("span", { class: "same" }, "same")));
    });
    return h("section", { class: "compare", "data-testid": "option-compare", "aria-label": "Two options side by side" },
             h("h3", {}, "Two options side by side"),
             h("div", { class: "scroll", tabindex: 0, role: "region", "aria-label": "Options 1 and 2" },
               h("table", { "data-testid": "option-compare-table" },
                 h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Option"),
                                  h("th", { scope: "col", "data-key": a.key }, `1: ${a.name}`),
                                  h("th", { scope: "col", "data-key": b.key }, `2: ${b.name}`),
                                  h("th", { scope: "col" }, "2 against 1"))),
                 h("tbody", {}, ...rows))),
             stop);
}

// The chosen option and the two compared, above the result; redrawn when a row's button is
// pressed.
export function choiceBlock(form: HTMLFormElement, options: Choosable[], recommendedKey: string | undefined): HTMLElement {
    forgetOnNewInputs(form);
    const byKey = new Map(options.map((o) => [o.key, o]));
    const recommended = recommendedKey ? byKey.get(recommendedKey) : undefined;
    const box = h("div", { class: "choice", "data-testid": "choice" });
    const draw = () => {
        const key = chosenKey(form);
        const chosen = byKey.get(key);
        const compared = comparedKeys(form).map((k) => byKey.get(k)).filter((o): o is Choosable => o !== undefined);
        box.replaceChildren(
            chosen ? chosenCard(form, chosen, recommended)
                : key ? h("p", { class: "field-note", "data-testid": "choice-missing" },
                          "The option chosen in this link is not among this plan's options (its price or the catalog may have ",
                          "changed); the recommendation is shown.") : "",
            compared.length === kMaxCompared ? sideBySide(form, compared[0]!, compared[1]!)
                : compared.length === 1 ? h("p", { "data-testid": "compare-one" },
                                            `Press “Compare” on a second option to set it beside ${compared[0]!.name}.`) : "");
        const panel = form.closest("[role=tabpanel]") ?? document;
        for (const b of panel.querySelectorAll<HTMLElement>("button[data-testid=choose]")) {
            b.setAttribute("aria-pressed", String(b.dataset.key === key));
            b.closest("tr")?.classList.toggle("chosen", b.dataset.key === key);
        }
        for (const b of panel.querySelectorAll<HTMLElement>("button[data-testid=compare-option]")) {
            b.setAttribute("aria-pressed", String(comparedKeys(form).includes(b.dataset.key ?? "")));
        }
    };
    refreshers.set(form, draw);
    draw();
    // The rows' buttons are drawn after this block: mark the chosen row once they are there.
    queueMicrotask(draw);
    return box;
}
