// Small DOM helpers: element creation, number formatting, and the parts every view shares
// (result panels, warnings, assumptions, field errors).
import { asProblem, type Assumption, type Problem } from "./api";

type Attrs = Record<string, string | number | boolean | undefined | null>;
type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]):
        HTMLElementTagNameMap[K] {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
        if (v === undefined || v === null || v === false) continue;
        if (v === true) el.setAttribute(k, "");
        else el.setAttribute(k, String(v));
    }
    append(el, children);
    return el;
}

export function append(el: Node, children: Child[]): void {
    for (const c of children) {
        if (c === null || c === undefined || c === false) continue;
        el.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
    }
}

export const usd = (v: number | null | undefined, digits = 0): string =>
    v === null || v === undefined ? "–" :
    "$" + v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
// Dollars for an axis: $950, $12k, $1.5M, $10M.
export function usdShort(v: number): string {
    const a = Math.abs(v);
    const short = (x: number, unit: string) =>
        "$" + x.toLocaleString("en-US", { maximumFractionDigits: Math.abs(x) < 10 ? 1 : 0 }) + unit;
    if (a >= 1e9) return short(v / 1e9, "B");
    if (a >= 1e6) return short(v / 1e6, "M");
    if (a >= 1e4) return short(v / 1e3, "k");
    return usd(v, a > 0 && a < 10 && v !== Math.round(v) ? 2 : 0);
}
export const num = (v: number | null | undefined, digits = 1): string =>
    v === null || v === undefined ? "–" :
    v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
export const pct = (v: number | null | undefined, digits = 1): string =>
    v === null || v === undefined ? "–" : (v * 100).toFixed(digits) + " %";

// Hours as people think of them: the hours, and beside them days (from two days) or months (from
// two months, 730 h each).
export function duration(hours: number | null | undefined, digits = 1): string {
    if (hours === null || hours === undefined || !Number.isFinite(hours)) return "–";
    const h = `${num(hours, digits)} h`;
    if (hours >= 2 * 730) return `${h} (${num(hours / 730, 1)} months)`;
    if (hours >= 48) return `${h} (${num(hours / 24, 1)} days)`;
    return h;
}

// Months, and years beside them from two years.
export const months = (m: number): string => m >= 24 ? `${num(m, 1)} months (${num(m / 12, 1)} years)` : `${num(m, 1)} months`;

// A note under a control: why the plan found nothing, and what to change there (not an error of
// the value itself). Cleared with the form's problems.
export function noteAt(form: HTMLFormElement, fieldName: string, text: string): void {
    const control = form.querySelector<HTMLElement>(`[data-field="${CSS.escape(fieldName)}"]`);
    (control?.closest(".field") ?? control)?.append(h("p", { class: "field-note", "data-testid": "field-note", "data-field": fieldName }, text));
}

// Days from an ISO date to today (UTC), for the "stale" mark.
export function ageDays(isoDate: string): number {
    return Math.floor((Date.now() - Date.parse(isoDate + "T00:00:00Z")) / 86400000);
}
// A price older than this is marked stale: the planners warn past the same 180 days
// (max_price_age_days' default in openapi.yaml).
export const kStalePriceDays = 180;

// A collapsed table of the constants behind a figure (the answer's `assumptions`).
export function assumptionsBlock(list: Assumption[] | undefined, label = "Assumptions"): HTMLElement {
    const rows = (list ?? []).map((a) =>
        h("tr", {}, h("td", {}, a.name), h("td", { class: "num" }, a.value === null ? "–" : String(a.value)),
          h("td", {}, a.unit), h("td", {}, a.description ?? ""), h("td", { class: "src" }, a.source ?? "")));
    return h("details", { class: "assumptions", "data-testid": "assumptions" },
             h("summary", {}, `${label} (${rows.length})`),
             scrollBox(`${label}: table`,
               h("table", {}, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Name"),
                                                  h("th", { scope: "col" }, "Value"), h("th", { scope: "col" }, "Unit"),
                                                  h("th", { scope: "col" }, "What"), h("th", { scope: "col" }, "Source"))),
                 h("tbody", {}, ...rows))));
}

// What a warning's JSON pointer is about, in words: the form's control that fills it, or one of
// the plans' own parts; nothing when neither (the sentence stands alone).
const kPartNames: Record<string, string> = {
    "/recommendation/offering": "The recommended offering", "/recommendation": "The recommended option",
    "/fastest/offering": "The fastest option's offering", "/fastest": "The fastest option",
    "/cheapest/offering": "The cheapest option's offering",
};
function aboutWords(pointer: string, form?: HTMLFormElement): string {
    if (kPartNames[pointer]) return kPartNames[pointer];
    const control = form ? controlFor(form, pointer) : null;
    return control ? labelOf(control) : "";
}

export function warningsBlock(list: { field: string; detail: string }[] | undefined, form?: HTMLFormElement): HTMLElement | null {
    if (!list || list.length === 0) return null;
    return h("div", { class: "warnings", role: "note", "data-testid": "warnings" },
             h("strong", {}, `Warnings (${list.length})`),
             h("ul", {}, ...list.map((w) => {
                 const about = aboutWords(w.field, form);
                 return h("li", { "data-field": w.field }, about ? h("strong", {}, `${about}: `) : null, prose(w.detail));
             })));
}

export const PRICE_TYPE_NAMES: Record<string, string> = {
    on_demand: "on-demand", spot: "spot", commit_1y: "1-year commitment", commit_3y: "3-year commitment",
    capacity_block: "capacity block",
};
// The providers by the names the API gives them (GET /v1/providers, read once at start by
// setProviders, before any view is drawn), in its display order: the page keeps no list of its own.
export const PROVIDERS: [string, string][] = [];
const providerNames = new Map<string, string>();
export function setProviders(list: { id: string; name: string }[]): void {
    PROVIDERS.splice(0, PROVIDERS.length, ...list.map((p): [string, string] => [p.id, p.name]));
    providerNames.clear();
    for (const p of list) providerNames.set(p.id, p.name);
}
export const priceTypeName = (id: string): string => PRICE_TYPE_NAMES[id] ?? id.replace(/_/g, " ");
export const providerName = (id: string): string => providerNames.get(id) ?? id;

// The API's sentences as the page shows them: dollar amounts with thousands separators
// ("$64297.86" -> "$64,298"; "5562.95 USD" -> "5,562.95 USD", never the digits after a decimal
// point: "4.6358 USD" stays), price types by name, no pointers to skipped.* counts.
export function prose(text: string): string {
    return text
        .replace(/ \((?:see )?skipped\.[a-z_]+\)/g, "")  // an API field name the page does not show
        .replace(/\$(\d{4,})(\.\d+)?/g, (_m, whole: string, frac: string | undefined) => usd(Number(whole + (frac ?? ""))))
        .replace(/(?<![\d.])(\d{4,})(\.\d+)? (USD|EUR|GBP)\b/g, (_m, whole: string, frac: string | undefined, cur: string) =>
            `${Number(whole).toLocaleString("en-US")}${frac ?? ""} ${cur}`)
        .replace(/\b(on_demand|commit_1y|commit_3y|capacity_block)\b/g, (m) => PRICE_TYPE_NAMES[m] ?? m);
}

// "must be at least 1" under its control reads as a sentence: "Accelerators must be at least 1."
function sentence(label: string, detail: string): string {
    const text = /^(must|is|should|has|cannot|can't|needs?) /.test(detail) && label ? `${label.replace(/ \(.*\)$/, "")} ${detail}` : detail;
    return text.charAt(0).toUpperCase() + text.slice(1) + (/[.!?)]$/.test(text) ? "" : ".");
}

// The label a control is known by on the page (its <label>, or its fieldset's legend).
function labelOf(control: HTMLElement): string {
    const label = (control as HTMLInputElement).labels?.[0]?.textContent
        ?? control.closest("fieldset")?.querySelector("legend")?.textContent ?? "";
    return label.trim();
}

// The API's bounds in words: "must be a number > 0 and <= 10000000" reads "must be more than 0
// and at most 10,000,000", "an integer" "a whole number".
const kBoundWords: [RegExp, string][] = [[/>=\s*/g, "at least "], [/<=\s*/g, "at most "], [/>\s*/g, "more than "],
                                         [/<\s*/g, "less than "], [/\ban integer\b/g, "a whole number"],
                                         [/\bmust be a number (more|less|at)/g, "must be $1"]];
// An API error detail in the page's words: a leading JSON pointer (the field the message is shown
// at) dropped, the request member names it quotes become the labels of the controls that fill
// them, bounds in words, 1e7 becomes 10,000,000.
function errorWords(form: HTMLFormElement, detail: string): string {
    const bare = detail.replace(/^\/[A-Za-z0-9_/]*:\s*/, "");
    return kBoundWords.reduce((t, [re, w]) => t.replace(re, w), prose(bare))
        .replace(/\b[a-z]+(?:_[a-z0-9]+)+\b/g, (m) => {
            const control = form.querySelector<HTMLElement>(`[data-field$="/${CSS.escape(m)}"], [data-field="${CSS.escape(m)}"]`);
            return control ? `“${labelOf(control)}”` : m.replace(/_/g, " ");
        })
        .replace(/\b(\d+(?:\.\d+)?)e\+?(\d+)\b/g, (_m, a: string, b: string) =>
            (Number(a) * Math.pow(10, Number(b))).toLocaleString("en-US"))
        .replace(/(^|[\s(])(\d{5,})\b/g, (_m, pre: string, n: string) => pre + Number(n).toLocaleString("en-US"));
}

// Shows a problem next to the form controls it names (data-field holds the JSON pointer or query
// parameter each control fills); what names no control goes to the form's own message.
export function showProblem(form: HTMLFormElement, problem: Problem): void {
    // A comparison being restored from the URL (compare.ts) stops at a refused plan.
    delete form.dataset.restoreA;
    delete form.dataset.restoreB;
    clearProblem(form);
    const entries = problem.errors.length > 0 ? problem.errors
        : [{ field: problem.field ?? "", detail: problem.detail }];
    const general: string[] = [];
    for (const e of entries) {
        const control = controlFor(form, e.field);
        if (!control) {
            general.push(errorWords(form, e.detail));
            continue;
        }
        // A control may carry its own sentence (data-words), for values it shows differently from
        // the API (percentages) or members it stands for (data-also).
        const own = control.dataset.field === e.field || !control.dataset.also?.split(" ").includes(e.field);
        const words = (own ? control.dataset.words : control.dataset.alsoWords) ?? sentence(labelOf(control), errorWords(form, e.detail));
        if (control.getAttribute("aria-invalid") === "true") continue;  // one sentence per control
        const id = `${control.id}-error`;
        control.setAttribute("aria-invalid", "true");
        control.setAttribute("aria-describedby", id);
        (control.closest(".field") ?? control).append(h("p", { class: "field-error", id, role: "alert", "data-testid": "field-error",
                                                          "data-field": e.field, title: e.detail }, words));
    }
    if (general.length > 0) {
        form.querySelector(".form-error")?.replaceChildren(`${problem.title}: ${general.join("; ")}`);
    }
}

function controlFor(form: HTMLFormElement, field: string): HTMLElement | null {
    if (!field) return null;
    // The named field, or the closest enclosing one a control fills (/model/hf_config/x -> /model).
    for (let f = field; f.length > 0; f = f.slice(0, Math.max(0, f.lastIndexOf("/")))) {
        const el = form.querySelector<HTMLElement>(`[data-field="${CSS.escape(f)}"], [data-also~="${CSS.escape(f)}"]`);
        if (el) return el;
        if (!f.includes("/")) break;
    }
    return null;
}

export function clearProblem(form: HTMLFormElement): void {
    form.querySelectorAll(".field-error, .field-note").forEach((e) => e.remove());
    form.querySelectorAll("[aria-invalid]").forEach((e) => {
        e.removeAttribute("aria-invalid");
        e.removeAttribute("aria-describedby");
    });
    form.querySelector(".form-error")?.replaceChildren();
}

let idCounter = 0;
// A labelled control in its .field wrapper; `field` is the request member it fills.
export function field(label: string, control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
                      fieldName: string, hint?: string): HTMLElement {
    control.id ||= `c${++idCounter}`;
    control.setAttribute("data-field", fieldName);
    control.name ||= fieldName;
    return h("div", { class: "field" }, h("label", { for: control.id }, label), control,
             hint ? h("small", {}, hint) : null);
}

export function input(attrs: Attrs): HTMLInputElement { return h("input", attrs); }
export function select(options: [string, string][], value: string, attrs: Attrs = {}): HTMLSelectElement {
    const s = h("select", attrs, ...options.map(([v, l]) => h("option", { value: v }, l)));
    s.value = value;
    return s;
}
export function checkboxes(name: string, options: [string, string][], checked: string[], legendText?: string,
                           wide = false): HTMLElement {
    return h("fieldset", { class: wide ? "checks wide" : "checks", "data-field": name },
             h("legend", {}, legendText ?? name.split("/").pop()!.replace(/_/g, " ")),
             ...options.map(([v, l]) => h("label", {}, h("input", { type: "checkbox", value: v, name,
                                                                      checked: checked.includes(v) }), " ", l)));
}
export function checkedValues(root: HTMLElement, name: string): string[] {
    return [...root.querySelectorAll<HTMLInputElement>(`input[type=checkbox][name="${name}"]:checked`)]
        .map((i) => i.value);
}
// A percentage as people type it ("70", "70 %", "7.5%"), for a 0–1 member: 0.7. Empty gives
// undefined; anything else NaN, which the form refuses before sending.
export function percentInput(value: number, attrs: Attrs = {}): HTMLInputElement {
    const el = input({ type: "text", inputmode: "decimal", value, ...attrs });
    el.dataset.percent = "true";
    el.dataset.words = "Give a percentage from 0 to 100, such as 70.";
    return el;
}
export function readPercent(el: HTMLInputElement): number | undefined {
    const t = el.value.replace(/%/g, "").trim();
    if (t === "") return undefined;
    return /^[0-9]*\.?[0-9]+$/.test(t) ? Number(t) / 100 : NaN;
}
// Numbers the browser could not read (NaN) are refused here, with words at their control: the
// API would only see null.
export function refuseUnreadable(form: HTMLFormElement, values: [HTMLInputElement, number | undefined][]): boolean {
    const bad = values.filter(([, v]) => v !== undefined && Number.isNaN(v));
    if (bad.length > 0) {
        showProblem(form, { type: "about:blank", title: "Not a number", status: 400, code: "client", detail: "",
                            errors: bad.map(([el]) => ({ field: el.dataset.field ?? "", detail: el.dataset.words ?? "Give a number." })) } as Problem);
    }
    return bad.length > 0;
}

// A list typed as words ("us-east-1, europe-west4"): its items, or undefined when empty.
export function listOf(el: HTMLInputElement): string[] | undefined {
    const items = el.value.split(/[\s,]+/).map((x) => x.trim()).filter(Boolean);
    return items.length ? items : undefined;
}
// The accelerators as checkbox options, by name.
export const acceleratorOptions = (list: { id: string; name: string }[]): [string, string][] =>
    list.map((a) => [a.id, a.name]);

// An optional number: empty gives undefined, so the request leaves the member out.
export function optNumber(el: HTMLInputElement): number | undefined {
    return el.value.trim() === "" ? undefined : Number(el.value);
}

// A view's form: its main controls, the button, then `more` (settings with defaults and filters
// that narrow the choice) under their own heading, so that the button is a few Tab presses from
// the top of the page. Every value the controls' own bounds refuse is said at its control, all at
// once, before anything is sent (the API answers a value it cannot read alone, as the first fault).
export function formShell(title: string, controls: HTMLElement[], submit: string, testid: string,
                          more?: { legend: string; controls: HTMLElement[] }): HTMLFormElement {
    const form = h("form", { class: "plan-form", "data-testid": testid, novalidate: true, "aria-label": title },
             h("div", { class: "grid" }, ...controls),
             h("p", { class: "form-error", role: "alert" }),
             h("p", { class: "sr-only announce", role: "status", "aria-live": "polite", "data-testid": "announce" }),
             h("button", { type: "submit" }, submit),
             more ? h("fieldset", { class: "more" }, h("legend", {}, more.legend), h("div", { class: "grid" }, ...more.controls)) : null);
    // Registered before the view's own handler, so a refused form never reaches it.
    form.addEventListener("submit", (e) => {
        const faults = boundFaults(form);
        if (faults.length === 0) return;
        e.preventDefault();
        e.stopImmediatePropagation();
        showProblem(form, { type: "about:blank", title: "Check the values", status: 400, code: "client", detail: "", errors: faults } as Problem);
        // The result shown was for other values: it goes, as when the API refuses the form.
        form.parentElement?.querySelector(".results")?.replaceChildren();
        form.querySelector(".announce")?.replaceChildren(`${faults.length} value${faults.length === 1 ? " is" : "s are"} refused; see the messages at the fields.`);
    });
    return form;
}

// The values a form's controls refuse by their own bounds: a number input's min, max and a whole
// step, a percentage's 0 to 100 (its data-words), text where a number goes.
function boundFaults(form: HTMLFormElement): { field: string; detail: string }[] {
    const out: { field: string; detail: string }[] = [];
    for (const el of form.querySelectorAll<HTMLInputElement>("input[type=number], input[data-percent]")) {
        if (el.closest("[hidden]") || el.disabled || !el.dataset.field) continue;
        const detail = el.dataset.percent ? percentFault(el) : numberFault(el);
        if (detail) out.push({ field: el.dataset.field, detail });
    }
    return out;
}
function percentFault(el: HTMLInputElement): string {
    const v = readPercent(el);
    return v === undefined || (v >= 0 && v <= 1) ? "" : el.dataset.words ?? "Give a percentage from 0 to 100.";
}
function numberFault(el: HTMLInputElement): string {
    const v = el.validity;
    if (v.badInput) return "must be a number";
    const whole = el.step === "1";
    const bounds = el.min !== "" && el.max !== "" ? `between ${el.min} and ${el.max}` : el.min !== "" ? `at least ${el.min}` : `at most ${el.max}`;
    if (v.rangeUnderflow || v.rangeOverflow) return `must be ${whole ? "a whole number, " : ""}${bounds}`;
    if (whole && v.stepMismatch) return "must be a whole number";
    return "";
}

// A wide table's own scroll box: reachable from the keyboard (arrow keys scroll it) and named.
export function scrollBox(label: string, child: HTMLElement): HTMLElement {
    return h("div", { class: "scroll", tabindex: 0, role: "region", "aria-label": label }, child);
}

export function table(head: string[], rows: HTMLElement[], testid: string, numericCols: number[] = []): HTMLElement {
    return scrollBox(`${testid.replace(/-/g, " ")} table`,
             h("table", { "data-testid": testid },
               h("thead", {}, h("tr", {}, ...head.map((c, i) =>
                   h("th", { scope: "col", class: numericCols.includes(i) ? "num" : undefined }, c)))),
               h("tbody", {}, ...rows)));
}

export const PRICE_TYPES: [string, string][] = [["on_demand", "on-demand"], ["spot", "spot"],
    ["commit_1y", "1-year commitment"], ["commit_3y", "3-year commitment"], ["capacity_block", "capacity block"]];
export const PRECISIONS: [string, string][] = ["bf16", "fp16", "fp8", "fp32", "tf32", "int8", "fp4"].map((p) => [p, p]);

// A form's inputs as the URL keeps them: each named control by its request member without the
// leading slash ("constraints/deadline_hours"), a group of checkboxes as its checked values
// joined by commas. Controls hidden by another choice are left out.
export function formState(form: HTMLFormElement): URLSearchParams {
    const out = new URLSearchParams();
    const groups = new Map<string, string[]>();
    for (const el of form.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>("input, select, textarea")) {
        if (!el.name || el.closest("[hidden]")) continue;
        const key = el.name.replace(/^\//, "");
        if (el instanceof HTMLInputElement && el.type === "checkbox") {
            if (!groups.has(key)) groups.set(key, []);
            if (el.checked) groups.get(key)!.push(el.value);
        } else if (el instanceof HTMLInputElement && el.type === "radio") {
            if (el.checked) out.set(key, el.value);
        } else if (el.value !== "") {
            out.set(key, el.value);
        }
    }
    for (const [k, v] of groups) out.set(k, v.join(","));
    return out;
}
// Fills a form from the URL's inputs (what formState wrote); returns whether any was given.
export function applyState(form: HTMLFormElement, params: URLSearchParams): boolean {
    if ([...params.keys()].length === 0) return false;
    for (const el of form.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>("input, select, textarea")) {
        if (!el.name) continue;
        const v = params.get(el.name.replace(/^\//, ""));
        if (v === null && el.closest("[hidden]")) continue;  // not given, and not in use (another choice is)
        if (el instanceof HTMLInputElement && el.type === "checkbox") {
            if (v !== null) el.checked = v.split(",").includes(el.value);
        } else if (el instanceof HTMLInputElement && el.type === "radio") {
            if (v !== null) el.checked = el.value === v;
        } else {
            el.value = v ?? "";
        }
        el.dispatchEvent(new Event("change"));
    }
    return true;
}
// The URL member holding a pinned comparison's A (compare.ts): A's own inputs, as formState
// writes them, so that a link reproduces the side-by-side comparison.
export const kPinnedParam = "compare_a";
// The URL members holding the option of the plan a person chose and the two set side by side
// (choice.ts): the options' keys, so that a link or a print shows that option, not only the
// recommendation.
export const kChoiceParam = "option";
export const kCompareOptionsParam = "compare_options";

// The address of a view's result: the page with #view?inputs.
function resultUrl(panel: HTMLElement, query: string): string {
    return `${window.location.origin}${window.location.pathname}#${panel.id.replace(/^panel-/, "")}${query ? `?${query}` : ""}`;
}

// After a result: the view's inputs go into the URL (#tab?inputs), so a reload or a shared link
// gives the same result; with A pinned (form.dataset.pinnedA), A's inputs too. `inputs` is the
// result's query when it is not the form's as it stands.
export function rememberForm(form: HTMLFormElement, inputs = formState(form).toString()): void {
    const panel = form.closest<HTMLElement>("[role=tabpanel]");
    const params = new URLSearchParams(inputs);
    form.dataset.inputs = params.toString();
    if (form.dataset.pinnedA !== undefined) params.set(kPinnedParam, form.dataset.pinnedA);
    if (form.dataset.choice) params.set(kChoiceParam, form.dataset.choice);
    if (form.dataset.compareOptions) params.set(kCompareOptionsParam, form.dataset.compareOptions);
    const query = params.toString();
    form.dataset.query = query;
    if (!panel) return;
    // The printout says where it came from: this result's own address.
    const url = resultUrl(panel, query);
    for (const a of panel.querySelectorAll<HTMLAnchorElement>("a[data-testid=printed-from]")) {
        a.href = url;
        a.textContent = url;
    }
    // Only the view on screen writes the URL (a view loading in the background does not).
    if (panel.hidden) return;
    const hash = url.slice(url.indexOf("#"));
    if (window.location.hash !== hash) history.replaceState(null, "", hash);
}

// What a printed result needs beside its figures: the inputs, the catalog version and the dates
// of the prices it used. Shown only in print.
// The inputs as the form shows them: each control's label and value (a select's option text, a
// group of checkboxes' ticked labels or "any"); controls hidden by another choice left out.
export function inputsOf(form: HTMLFormElement): [string, string][] {
    const out: [string, string][] = [];
    for (const el of form.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>("input, select, textarea")) {
        if (el.closest("[hidden]") || (el instanceof HTMLInputElement && (el.type === "checkbox" || el.type === "radio"))) continue;
        const value = el instanceof HTMLSelectElement ? el.selectedOptions[0]?.textContent ?? el.value : el.value;
        if (value === "") continue;
        out.push([labelOf(el), value]);
    }
    for (const group of form.querySelectorAll<HTMLFieldSetElement>("fieldset.checks")) {
        if (group.closest("[hidden]")) continue;
        const checked = [...group.querySelectorAll<HTMLInputElement>("input:checked")].map((i) => i.parentElement?.textContent?.trim());
        out.push([group.querySelector("legend")?.textContent ?? "", checked.join(", ") || "any"]);
    }
    return out;
}

export function printedInputs(form: HTMLFormElement, answer: unknown): HTMLElement {
    const rows = inputsOf(form).flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]);
    const text = JSON.stringify(answer ?? {});
    const dates = [...text.matchAll(/"as_of":"(\d{4}-\d{2}-\d{2})/g)].map((m) => m[1]!).sort();
    const version = /"catalog_version":"([^"]+)"/.exec(text)?.[1];
    return h("section", { class: "print-only printed-inputs", "data-testid": "printed-inputs" },
             h("h3", {}, "Inputs"), h("dl", { class: "kv" }, ...rows),
             h("p", {}, version ? `Catalog version ${version}. ` : "",
               dates.length ? `Prices dated ${dates[0]} to ${dates[dates.length - 1]}. ` : "",
               `Printed ${new Date().toISOString().slice(0, 10)} from `,
               // The result's address, written when the result is remembered (rememberForm).
               h("a", { "data-testid": "printed-from" })));
}

// A form's outcome: the views drawn from the API's answer, or its problem shown at the fields
// it names (and the output emptied).
export function showOutcome<T>(form: HTMLFormElement, out: HTMLElement, answer: T | undefined,
                               error: unknown, status: number,
                               draw: (answer: T) => (HTMLElement | null)[],
                               extra?: (answer: T) => (HTMLElement | null)[]): void {
    const announce = form.querySelector(".announce");
    if (!answer) {
        out.replaceChildren();
        showProblem(form, asProblem(error, status));
        announce?.replaceChildren("The plan was refused; see the messages at the fields.");
        return;
    }
    out.replaceChildren(printedInputs(form, answer), ...[...draw(answer), ...(extra?.(answer) ?? [])]
        .filter((e): e is HTMLElement => e !== null));
    // Screen readers hear the result's headline when it arrives.
    announce?.replaceChildren(out.querySelector("[data-testid=recommendation] h3")?.textContent ?? "Result ready.");
    rememberForm(form);
}
