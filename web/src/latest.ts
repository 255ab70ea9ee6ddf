// Only the answer to the form as it now stands is shown. Each form has at most one request on its
// way: a new one (a submit, a link opened, a page of the catalog) aborts the one before, an edit of
// the form aborts the one asked with the old inputs, and an answer that arrives for an aborted
// request is dropped, however late. While a plan is computed its submit button is disabled, so
// repeated clicks do not send repeated requests.
import { formState, h } from "./dom";

interface Running { controller: AbortController; inputs: string; out: HTMLElement | null; busy: boolean; refocus: boolean }

const running = new WeakMap<HTMLFormElement, Running>();
const watched = new WeakSet<HTMLFormElement>();

export interface Latest {
    // The answer of `call`, or undefined when this request was superseded (aborted) meanwhile.
    call<T>(call: (signal: AbortSignal) => Promise<T>): Promise<T | undefined>;
    // The request is answered: the submit button is enabled again.
    done(): void;
}

function submitButton(form: HTMLFormElement): HTMLButtonElement | null {
    return form.querySelector<HTMLButtonElement>("button[type=submit]");
}

function setBusy(form: HTMLFormElement, run: Running, busy: boolean): void {
    const button = submitButton(form);
    if (busy) {
        run.refocus = document.activeElement === button;
        if (button) button.disabled = true;
        form.setAttribute("aria-busy", "true");
        run.out?.setAttribute("aria-busy", "true");
        return;
    }
    if (button) button.disabled = false;
    form.removeAttribute("aria-busy");
    run.out?.removeAttribute("aria-busy");
    // Disabling the focused button drops the focus to the page: give it back.
    if (run.refocus && (document.activeElement === document.body || document.activeElement === null)) button?.focus();
}

function abort(form: HTMLFormElement): void {
    const run = running.get(form);
    if (!run) return;
    running.delete(form);
    run.controller.abort();
    setBusy(form, run, false);
}

// A person changing an input while its plan is on the way: that plan no longer answers the form.
function watchEdits(form: HTMLFormElement): void {
    if (watched.has(form)) return;
    watched.add(form);
    const edited = (e: Event) => {
        const run = running.get(form);
        const target = e.target as HTMLInputElement | null;
        if (!run || !run.busy || !target?.name || formState(form).toString() === run.inputs) return;
        abort(form);
        run.out?.replaceChildren(h("p", { role: "status", "data-testid": "inputs-changed" },
                                   "The inputs changed before the answer came; submit the form to plan them."));
    };
    form.addEventListener("input", edited);
    form.addEventListener("change", edited);
}

// Starts the form's request, aborting the one before it. `busy`: disable the submit button until
// done() (the planners); `out`: where the page says that an edit dropped the request.
export function latest(form: HTMLFormElement, out: HTMLElement | null = null, busy = true): Latest {
    abort(form);
    watchEdits(form);
    const run: Running = { controller: new AbortController(), inputs: formState(form).toString(), out, busy, refocus: false };
    running.set(form, run);
    if (busy) setBusy(form, run, true);
    const signal = run.controller.signal;
    const current = () => running.get(form) === run && !signal.aborted;
    const done = () => {
        if (running.get(form) !== run) return;
        running.delete(form);
        if (busy) setBusy(form, run, false);
    };
    return {
        done,
        async call<T>(call: (signal: AbortSignal) => Promise<T>): Promise<T | undefined> {
            try {
                const answer = await call(signal);
                return current() ? answer : undefined;
            } catch (e) {
                if (signal.aborted || !current()) return undefined;
                done();  // a transport failure: the form can be sent again
                throw e;
            }
        },
    };
}
