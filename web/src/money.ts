// Negotiated prices and the bill on the page (database mode): a stored price book chosen on every
// planner (GET /v1/price-books, sent as the plan request's price_book), and a FOCUS export
// uploaded (POST /v1/actuals, admin key) so that a saved scenario's plan vs actual has charges.
// The API key is the one the page keeps in memory for scenarios (scenarios.ts), never in the URL.
import { api, asProblem, type Schemas } from "./api";
import { currentKey, databaseModeOn, setKey } from "./scenarios";
import { h, input, num, pct, table, usd } from "./dom";

type Book = Schemas["StoredPriceBook"];

// The books the key lists, offered by every planner's control (read once per key).
let books: Book[] = [];
let controlCount = 0;
const kBookList = "price-books-listed";

// One datalist for every planner: the control is a text field (a link or a saved scenario that
// names a book fills it before any book is listed), the list its suggestions.
function bookList(): HTMLDataListElement {
    let list = document.getElementById(kBookList) as HTMLDataListElement | null;
    if (!list) {
        list = h("datalist", { id: kBookList });
        document.body.append(list);
    }
    return list;
}

// Lists the key's books (every page) into every planner's control; the status in words.
async function loadBooks(status: HTMLElement): Promise<void> {
    const key = currentKey();
    if (!key) { status.textContent = "Give an API key (read or admin scope) to list your team's price books."; return; }
    status.textContent = "Listing price books…";
    const found: Book[] = [];
    let cursor: string | undefined;
    do {
        const { data, error, response } = await api.GET("/v1/price-books", {
            params: { query: { limit: 500, cursor } }, headers: { Authorization: `Bearer ${key}` } });
        if (!data) {
            const p = asProblem(error, response.status);
            status.textContent = `The price books could not be listed: ${p.status} ${p.title}: ${p.detail}`;
            return;
        }
        found.push(...data.items);
        cursor = data.next_cursor ?? undefined;
    } while (cursor);
    books = found;
    bookList().replaceChildren(...books.map((b) => h("option", { value: b.id }, `${b.name} (version ${b.latest_version})`)));
    for (const s of document.querySelectorAll("[data-testid=price-book-status]")) {
        s.textContent = books.length === 0 ? "This key's team has no stored price book."
            : `${books.length} price book${books.length === 1 ? "" : "s"} listed; a plan with one is priced at its negotiated prices.`;
    }
}

// A planner's price book: a stored book's id, offered from the books the API key lists (empty:
// list prices); nothing without a database (stored books need one).
export function priceBookFields(): HTMLElement[] {
    if (!databaseModeOn()) return [];
    bookList();
    const sel = input({ type: "text", name: "/price_book", "data-field": "/price_book", "data-testid": "price-book",
                        list: kBookList, autocomplete: "off", placeholder: "none: list prices", id: `price-book-${++controlCount}` });
    const key = input({ type: "password", autocomplete: "off", value: currentKey(), "data-testid": "price-book-key",
                        id: `${sel.id}-key`, "aria-label": "API key to list price books" });
    key.oninput = () => setKey(key.value.trim());
    const status = h("small", { "data-testid": "price-book-status", role: "status" }, "");
    const list = h("button", { type: "button", class: "csv", "data-testid": "list-price-books" }, "List my books");
    list.onclick = () => void loadBooks(status);
    return [h("div", { class: "field price-book" },
              h("label", { for: sel.id }, "Price book"), sel,
              h("small", {}, "a stored book's id (your negotiated prices; “List my books” offers them); empty: list prices"),
              h("div", { class: "inline" }, key, " ", list), status)];
}

// The plan request with the chosen book by its id, and the key that may read it (stored books
// are confidential); none chosen, the request as it was, at list prices.
export function withPriceBook<T extends object>(form: HTMLFormElement, body: T): { body: T; headers: Record<string, string> } {
    const chosen = form.querySelector<HTMLInputElement>("input[name='/price_book']")?.value.trim() ?? "";
    if (!chosen) return { body, headers: {} };
    const key = currentKey();
    return { body: { ...body, price_book: chosen }, headers: key ? { Authorization: `Bearer ${key}` } : {} };
}

type ImportReport = { rows_read: number; kept: number; added: number; already_imported: number; tag_key: string;
                      import_id: string; skipped: Record<string, number> };

// Upload a FOCUS export (CSV as the cloud writes it) with an admin key: the API's report in words.
export function uploadBlock(onImported: () => void): HTMLElement | null {
    if (!databaseModeOn()) return null;
    const file = input({ type: "file", accept: ".csv,text/csv", "data-testid": "focus-file", id: "focus-file" });
    const tag = input({ type: "text", autocomplete: "off", placeholder: "gpucost-scenario", "data-testid": "focus-tag-key", id: "focus-tag-key" });
    const status = h("p", { role: "status", "data-testid": "focus-status" });
    const form = h("form", { class: "save-form", "data-testid": "focus-upload", "aria-label": "Upload a FOCUS export", novalidate: true },
        h("h3", {}, "Upload a FOCUS export"),
        h("p", { class: "lede" }, "The cloud's cost export (FOCUS 1.0–1.2, CSV). Charges tagged with a scenario's id become its actual spend; ",
          "sending the same export again stores nothing twice. Needs an admin key (give it under API key above)."),
        h("div", { class: "grid" },
          h("div", { class: "field" }, h("label", { for: file.id }, "Export (CSV)"), file),
          h("div", { class: "field" }, h("label", { for: tag.id }, "Tag key"), tag,
            h("small", {}, "the FOCUS Tags key holding the scenario id; empty: gpucost-scenario"))),
        h("button", { type: "submit", class: "csv" }, "Upload export"), status);
    form.addEventListener("submit", async (e) => {
        e.preventDefault();
        status.className = "";
        const chosen = file.files?.[0];
        if (!chosen) { status.className = "field-error"; status.textContent = "Choose the export's CSV file first."; return; }
        status.textContent = `Uploading ${chosen.name}…`;
        const key = currentKey();
        const query = tag.value.trim() ? `?tag_key=${encodeURIComponent(tag.value.trim())}` : "";
        const res = await fetch(`/v1/actuals${query}`, { method: "POST", body: await chosen.text(),
            headers: { "Content-Type": "text/csv", ...(key ? { Authorization: `Bearer ${key}` } : {}) } });
        const answer: unknown = await res.json().catch(() => null);
        if (!res.ok) {
            const p = asProblem(answer, res.status);
            const why = res.status === 401 ? " Give an admin key above." : res.status === 403 ? " Uploading needs an admin key." : "";
            status.className = "field-error";
            status.textContent = `Not imported: the server answered ${p.status} ${p.title}: ${p.detail}${p.field ? ` (${p.field})` : ""}.${why}`;
            return;
        }
        const r = answer as ImportReport;
        const skipped = Object.entries(r.skipped ?? {}).map(([k, v]) => `${num(v, 0)} ${k.replace(/_/g, " ")}`).join(", ");
        status.dataset.added = String(r.added);
        status.textContent = `Imported ${chosen.name} (import ${r.import_id}): ${num(r.rows_read, 0)} rows read, ${num(r.kept, 0)} accelerator ` +
            `charges kept, ${num(r.added, 0)} new and ${num(r.already_imported, 0)} already imported` +
            `${skipped ? `; skipped: ${skipped}` : ""}. Open a scenario's "Plan vs actual" to see them against its plan.`;
        onImported();
    });
    return form;
}

type Commitments = Schemas["CommitmentsPlan"];

// The commitments a book's saved scenarios should buy (POST /v1/plans/commitments, a key of either
// scope): per line the term, instances, the utilisation it assumes, the saving, and what a slip
// of the plans would leave unused. Every figure is the answer's.
export function commitmentsBlock(): HTMLElement | null {
    if (!databaseModeOn()) return null;
    bookList();
    const book = input({ type: "text", list: kBookList, autocomplete: "off", "data-testid": "commit-book", id: "commit-book" });
    const slip = input({ type: "number", min: "0", max: "1095", step: "1", value: "90", "data-testid": "commit-slip", id: "commit-slip" });
    const status = h("p", { role: "status", "data-testid": "commit-status" });
    const out = h("div", { "data-testid": "commit-result" });
    const form = h("form", { class: "save-form", "data-testid": "commit-form", "aria-label": "Commitments to buy", novalidate: true },
        h("h3", {}, "Commitments to buy"),
        h("p", { class: "lede" }, "From the saved training and serving scenarios that plan with a stored price book: how many instances to reserve ",
          "for 1 or 3 years, the utilisation that assumes, the saving against on-demand, and what is left unused if the plans start later."),
        h("div", { class: "grid" },
          h("div", { class: "field" }, h("label", { for: book.id }, "Price book"), book, h("small", {}, "a stored book's id; its saved scenarios are the demand")),
          h("div", { class: "field" }, h("label", { for: slip.id }, "Slip (days)"), slip, h("small", {}, "how much later the plans may start"))),
        h("button", { type: "submit", class: "csv" }, "Recommend commitments"), status, out);
    form.addEventListener("submit", async (e) => {
        e.preventDefault();
        out.replaceChildren();
        status.className = "";
        if (!book.value.trim()) { status.className = "field-error"; status.textContent = "Give a stored price book's id first."; return; }
        status.textContent = "Reading the saved scenarios…";
        const key = currentKey();
        const slipDays = slip.value.trim() === "" ? undefined : Number(slip.value);
        const { data, error, response } = await api.POST("/v1/plans/commitments", {
            body: { price_book: book.value.trim(), slip_days: slipDays }, headers: key ? { Authorization: `Bearer ${key}` } : {} });
        if (!data) {
            const p = asProblem(error, response.status);
            status.className = "field-error";
            status.textContent = `No recommendation: the server answered ${p.status} ${p.title}: ${p.detail}${p.field ? ` (${p.field})` : ""}.` +
                (response.status === 401 ? " Give an API key above (read or admin scope)." : "");
            return;
        }
        showCommitments(data, status, out);
    });
    return form;
}

function showCommitments(a: Commitments, status: HTMLElement, out: HTMLElement): void {
    const counted = a.scenarios.filter((s) => s.counted).length;
    status.dataset.count = String(a.commitments.length);
    status.textContent = `${counted} of ${a.scenarios.length} saved scenario${a.scenarios.length === 1 ? "" : "s"} counted; ` +
        (a.commitments.length === 0 ? "no commitment pays for the demand they plan."
            : `${a.commitments.length} commitment${a.commitments.length === 1 ? "" : "s"} from ${a.start_date}: ` +
              `${usd(a.totals.commitment_cost_usd, 2)} over their terms, saving ${usd(a.totals.expected_saving_usd, 2)} ` +
              `(${usd(a.totals.slipped_saving_usd, 2)} if the plans slip).`);
    const rows = a.commitments.map((c) => h("tr", { "data-offering": c.offering_id },
        h("td", {}, c.on_demand_offering_id), h("td", {}, c.term), h("td", { class: "num" }, num(c.instances, 0)),
        h("td", { class: "num" }, pct(c.expected.utilisation)), h("td", { class: "num" }, pct(c.break_even_utilisation)),
        h("td", { class: "num" }, usd(c.expected.saving_usd, 2)), h("td", { class: "num" }, usd(c.slipped.unused_cost_usd, 2))));
    const skipped = a.scenarios.filter((s) => !s.counted).map((s) => h("li", {}, `Scenario ${s.scenario_id}: ${s.skipped_reason ?? "not counted"}.`));
    out.replaceChildren(...(rows.length > 0 ? [table(["Offering", "Term", "Instances", "Utilisation", "Break-even", "Saving", "Unused if slipped"],
                                                     rows, "commit-table", [2, 3, 4, 5, 6])] : []),
                        ...(skipped.length > 0 ? [h("ul", { "data-testid": "commit-skipped" }, ...skipped)] : []));
}
