// Catalog browser: the offerings search (GET /v1/offerings) with its filters, sort and cursor
// paging, and the hardware model (GET /v1/accelerators).
import { api, asProblem, type OfferingQuery, type Schemas } from "../api";
import { csvButton } from "../csv";
import { latest } from "../latest";
import { ageDays, checkboxes, checkedValues, field, formShell, h, input, kStalePriceDays, num, optNumber,
         formState, PRICE_TYPES, priceTypeName, PROVIDERS, providerName, rememberForm, scrollBox, select, showProblem, clearProblem, table, usd } from "../dom";

type Offering = Schemas["Offering"];
type Sort = NonNullable<OfferingQuery["sort"]>;

// A filter of several values, as the API's array parameters take them; none: no filter.
const listOrUndefined = (values: string[]): string[] | undefined => (values.length ? values : undefined);

const kPageSize = 25;

const SORTABLE: { key: string; label: string; numeric?: boolean }[] = [
    { key: "provider", label: "Provider" }, { key: "", label: "Instance" },
    { key: "accelerator_count", label: "Accelerators", numeric: true }, { key: "", label: "Price type" },
    { key: "usd_per_hour", label: "USD / hour", numeric: true },
    { key: "usd_per_accelerator_hour", label: "USD / accelerator-hour", numeric: true },
    { key: "accelerator_memory_gb", label: "Memory", numeric: true },
    { key: "", label: "Region" }, { key: "as_of", label: "As of" }, { key: "", label: "Source" },
    { key: "", label: "Verified" }, { key: "", label: "Plan" },
];

// "Plan with this": the planner that takes this offering opens with it filled in (spot offerings
// in Spot, the others in Rent vs buy), the planner's other inputs as they stand.
function planWith(o: Offering): void {
    const tab = o.price_type === "spot" ? "spot" : "rent-vs-buy";
    const form = document.querySelector<HTMLFormElement>(`#panel-${tab} form.plan-form`);
    if (!form) return;
    const q = formState(form);
    if (tab === "spot") {
        q.set("price_source", "offering");
        q.set("spot_offering_id", o.id);
    } else {
        q.set("rent/offering_id", o.id);
        q.delete("rent/usd_per_accelerator_hour");
        const accel = form.querySelector<HTMLSelectElement>("select[name='/buy/accelerator']");
        if (accel && [...accel.options].some((x) => x.value === o.accelerator)) q.set("buy/accelerator", o.accelerator);
    }
    window.location.hash = `${tab}?${q.toString()}`;
}

export function catalogView(root: HTMLElement, accelerators: Schemas["Accelerator"][]): void {
    const provider = checkboxes("provider", PROVIDERS, []);
    const provider_ = provider;
    const accel = select([["", "any"], ...accelerators.map((a) => [a.id, a.name] as [string, string])], "",
                         { "data-testid": "f-accelerator" });
    const priceType = select([["", "any"], ...PRICE_TYPES], "", { "data-testid": "f-price-type" });
    const priceType_ = priceType;
    const region = input({ type: "text", placeholder: "us-east-1", autocomplete: "off" });
    // Where and which kind: a country or continent (the API's region table) and a family of
    // accelerators ("h100": every H100 variant).
    const country = input({ type: "text", placeholder: "US", autocomplete: "off", "data-testid": "f-country" });
    const continent = select([["", "any"], ...CONTINENTS], "", { "data-testid": "f-continent" });
    const family = select([["", "any"], ...familyOptions(accelerators)], "", { "data-testid": "f-family" });
    const minAcc = input({ type: "number", min: 1, step: 1, inputmode: "numeric", "data-testid": "f-min-acc" });
    const maxPrice = input({ type: "number", min: 0, step: 0.01, inputmode: "decimal", "data-testid": "f-max-price" });
    const verified = input({ type: "checkbox", "data-testid": "f-verified" });
    // The sort is a control too (the column headings set it), so that it goes into the URL.
    const sortSelect = select(SORTABLE.filter((c) => c.key).flatMap((c) => [
        [c.key, `${c.label}, ${c.numeric || c.key === "as_of" ? "lowest" : "A"} first`],
        [`-${c.key}`, `${c.label}, ${c.numeric || c.key === "as_of" ? "highest" : "Z"} first`]] as [string, string][]),
        "usd_per_accelerator_hour", { "data-testid": "f-sort" });
    const sortField = field("Sort by", sortSelect, "sort");
    const form = formShell("Offering filters", [
        provider,
        field("Accelerator", accel, "accelerator"),
        field("Price type", priceType, "price_type"),
        field("Region", region, "region"),
        field("Country", country, "country", "ISO code, e.g. US; several separated by commas"),
        field("Continent", continent, "continent"),
        field("Accelerator family", family, "accelerator_family", "every variant, e.g. all H100s"),
        field("Min accelerators per instance", minAcc, "min_accelerator_count"),
        field("Max USD per accelerator-hour", maxPrice, "max_usd_per_accelerator_hour"),
        sortField,
        h("div", { class: "field inline" }, h("label", {}, verified, " verified prices only")),
    ], "Search", "catalog-form");
    verified.setAttribute("data-field", "verified");
    verified.name = "verified";
    verified.value = "true";

    let cursors: (string | undefined)[] = [undefined];  // cursor of each page seen, for Previous
    const status = h("p", { class: "status", role: "status", "aria-live": "polite", "data-testid": "catalog-status" });
    const results = h("div", {});
    const prev = h("button", { type: "button", "data-testid": "prev-page" }, "Previous page");
    const next = h("button", { type: "button", "data-testid": "next-page" }, "Next page");
    // The rows on screen as CSV: this page, in this order.
    let shownItems: Offering[] = [];
    const csv = csvButton("Download these offerings as CSV", "offerings.csv", () => ({
        head: ["offering_id", "provider", "instance_type", "accelerator", "accelerator_count", "price_type", "usd_per_hour",
               "usd_per_accelerator_hour", "accelerator_memory_gb", "region", "as_of", "as_of_estimated", "source", "verified"],
        rows: shownItems.map((o) => [o.id, o.provider, o.instance_type, o.accelerator, o.accelerator_count, o.price_type, o.usd_per_hour,
                                     o.usd_per_accelerator_hour, o.accelerator_memory_gb, o.region, o.as_of, o.as_of_estimated ?? false,
                                     o.source, o.verified]),
    }), "offerings-csv");

    const query = (): OfferingQuery => ({
        provider: listOrUndefined(checkedValues(provider, "provider")),
        accelerator: accel.value ? [accel.value] : undefined,
        price_type: priceType.value ? [priceType.value] as OfferingQuery["price_type"] : undefined,
        region: region.value.trim() ? [region.value.trim()] : undefined,
        country: listOrUndefined(country.value.split(/[\s,]+/).filter(Boolean)),
        continent: continent.value ? [continent.value] as OfferingQuery["continent"] : undefined,
        accelerator_family: family.value ? [family.value] : undefined,
        min_accelerator_count: optNumber(minAcc),
        max_usd_per_accelerator_hour: optNumber(maxPrice),
        verified: verified.checked ? true : undefined,
        sort: sortSelect.value as Sort, limit: kPageSize, cursor: cursors[cursors.length - 1],
    });

    // Each offering's commitment prices, read once, shown beside its on-demand price.
    const commitments = commitmentIndex();
    // Only the latest request is shown: a sort clicked while a search is on its way aborts it (and
    // one that started while this one waited for the commitment prices wins).
    let generation = 0;
    async function load(): Promise<void> {
        const mine = ++generation;
        const run = latest(form, null, false);
        clearProblem(form);
        status.textContent = "Loading…";
        const answer = await run.call((signal) => api.GET("/v1/offerings", { params: { query: query() }, signal }));
        if (!answer) return;
        run.done();
        const { data, error, response } = answer;
        if (!data) {
            status.textContent = "";
            showProblem(form, asProblem(error, response.status));
            return;
        }
        const page = cursors.length;
        status.textContent = `${data.total_count} offerings match; page ${page} of ` +
            `${Math.max(1, Math.ceil(data.total_count / kPageSize))}` + (data.catalog_version ? ` (catalog version ${data.catalog_version})` : "");
        rememberForm(form);
        shownItems = data.items;
        csv.hidden = data.items.length === 0;
        await commitments.ready;
        if (mine !== generation) return;
        results.replaceChildren(offeringsTable(data.items, sortSelect.value, (key) => {
            sortSelect.value = sortSelect.value === key ? `-${key}` : key;
            cursors = [undefined];
            void load();
        }, commitments.byOffering));
        // The time to first render the test reports: navigation start to the first table drawn.
        if (performance.getEntriesByName("gpucost:first-render").length === 0) performance.mark("gpucost:first-render");
        prev.disabled = cursors.length <= 1;
        next.disabled = data.next_cursor === null;
        next.onclick = () => { cursors.push(data.next_cursor ?? undefined); void load(); };
    }
    prev.onclick = () => { cursors.pop(); void load(); };
    form.addEventListener("submit", (e) => { e.preventDefault(); cursors = [undefined]; void load(); });

    root.replaceChildren(
        summaryView(accelerators, (accelerator, provider, priceType) => {
            accel.value = accelerator;
            priceType_.value = priceType;
            for (const box of provider_.querySelectorAll<HTMLInputElement>("input[type=checkbox]")) box.checked = box.value === provider;
            cursors = [undefined];
            void load();
            results.scrollIntoView?.({ block: "start" });
        }),
        h("h2", {}, "Offerings"),
        h("p", { class: "lede" }, "Every priced offering in the catalog. Click a column heading to sort; ",
          "prices marked estimated have an inferred date, stale ones are over ", kStalePriceDays, " days old."),
        form, status, results, h("div", { class: "pager" }, prev, next, " ", csv),
        h("h2", {}, "Accelerators"),
        acceleratorsTable(accelerators));
    void load();
}

// Prices by accelerator, the view people come for first (as `sky show-gpus` and the price
// comparison sites): per accelerator (all of them at first, or one), per provider and price type,
// the cheapest, median and range of USD per accelerator-hour over its offerings (GET
// /v1/offerings, every page), with the accelerator's memory; a row's button shows those
// offerings below.
interface SummaryRow { acc: string; prov: string; type: string; min: number; max: number; mid: number; n: number; name?: string | null }

export function summarize(items: Offering[]): SummaryRow[] {
    const groups = new Map<string, Offering[]>();
    for (const o of items) {
        const k = `${o.accelerator}|${o.provider}|${o.price_type}`;
        if (!groups.has(k)) groups.set(k, []);
        groups.get(k)!.push(o);
    }
    return [...groups.entries()].map(([k, list]) => {
        const [acc = "", prov = "", type = ""] = k.split("|");
        const prices = list.map((o) => o.usd_per_accelerator_hour).sort((a, b) => a - b);
        const mid = prices.length % 2 ? prices[(prices.length - 1) / 2]! : (prices[prices.length / 2 - 1]! + prices[prices.length / 2]!) / 2;
        return { acc, prov, type, min: prices[0]!, max: prices[prices.length - 1]!, mid, n: prices.length, name: list[0]?.provider_name };
    });
}

function summaryView(accelerators: Schemas["Accelerator"][],
                     show: (accelerator: string, provider: string, priceType: string) => void): HTMLElement {
    const accName = new Map(accelerators.map((a) => [a.id, a.name]));
    const accMemory = new Map(accelerators.map((a) => [a.id, a.memory_gb]));
    const pick = select([["", "all accelerators"], ...accelerators.map((a) => [a.id, a.name] as [string, string])], "",
                        { "data-testid": "sum-accelerator" });
    const out = h("div", { "data-testid": "summary" });
    let shown: SummaryRow[] = [];
    const csv = csvButton("Download these prices as CSV", "prices-by-accelerator.csv", () => ({
        head: ["accelerator", "accelerator_name", "memory_gb", "provider", "price_type", "cheapest_usd_per_accelerator_hour",
               "median_usd_per_accelerator_hour", "highest_usd_per_accelerator_hour", "offerings"],
        rows: shown.map((r) => [r.acc, accName.get(r.acc) ?? r.acc, accMemory.get(r.acc), r.prov, r.type, r.min, r.mid, r.max, r.n]),
    }), "summary-csv");
    // Another accelerator picked while the pages of one are on their way aborts them.
    let running: AbortController | null = null;
    const draw = async () => {
        running?.abort();
        const mine = new AbortController();
        running = mine;
        const items: Offering[] = [];
        let cursor: string | undefined;
        try {
            do {
                const { data } = await api.GET("/v1/offerings", { params: { query: { accelerator: pick.value ? [pick.value] : undefined, limit: 500, cursor } },
                                                                  signal: mine.signal });
                if (!data) break;
                items.push(...data.items);
                cursor = data.next_cursor ?? undefined;
            } while (cursor);
        } catch (e) {
            if (mine.signal.aborted) return;
            throw e;
        }
        if (running !== mine) return;
        // By accelerator (by name), then cheapest first.
        const rows = summarize(items).sort((a, b) =>
            (accName.get(a.acc) ?? a.acc).localeCompare(accName.get(b.acc) ?? b.acc) || a.min - b.min);
        shown = rows;
        csv.hidden = rows.length === 0;
        out.replaceChildren(rows.length === 0 ? h("p", {}, "No offering of this accelerator in the catalog.")
            : table(["Accelerator", "Memory", "Provider", "Price type", "Cheapest", "Median", "Range", "Offerings", ""], rows.map((r, i) => {
                const label = `${accName.get(r.acc) ?? r.acc}, ${r.name ?? providerName(r.prov)}, ${priceTypeName(r.type)}`;
                const b = h("button", { type: "button", class: "plan-with", "aria-label": `Show ${r.n} offering${r.n === 1 ? "" : "s"}: ${label}` },
                            `Show ${r.n}`);
                b.onclick = () => show(r.acc, r.prov, r.type);
                // The accelerator's name and memory once per accelerator (its first row).
                const first = i === 0 || rows[i - 1]!.acc !== r.acc;
                const mem = accMemory.get(r.acc);
                return h("tr", { "data-accelerator": r.acc, "data-provider": r.prov, "data-price-type": r.type, class: first ? "group-start" : undefined },
                         h("td", {}, first ? accName.get(r.acc) ?? r.acc : h("span", { class: "sr-only" }, accName.get(r.acc) ?? r.acc)),
                         h("td", { class: "num" }, first ? (mem ? `${num(mem, 0)} GB` : "–") : ""),
                         h("td", {}, r.name ?? providerName(r.prov)), h("td", {}, priceTypeName(r.type)),
                         h("td", { class: "num", "data-value": r.min }, usd(r.min, 2)), h("td", { class: "num", "data-value": r.mid }, usd(r.mid, 2)),
                         h("td", { class: "num" }, r.min === r.max ? "–" : `${usd(r.min, 2)}–${usd(r.max, 2)}`),
                         h("td", { class: "num" }, r.n), h("td", {}, b));
            }), "price-summary", [1, 4, 5, 6, 7]));
    };
    pick.onchange = () => void draw();
    void draw();
    return h("section", { "aria-labelledby": "sum-title" },
             h("h2", { id: "sum-title" }, "Prices by accelerator"),
             h("p", { class: "lede" }, "USD per accelerator-hour across providers and price types: the cheapest, the median and the range ",
               "of each provider's offerings. \"Show\" lists them below."),
             h("div", { class: "grid" }, field("Accelerator", pick, "summary_accelerator")), out, csv);
}

function offeringsTable(items: Offering[], sort: string, onSort: (key: string) => void,
                        commitmentsOf: Map<string, Offering[]>): HTMLElement {
    const head = h("tr", {}, ...SORTABLE.map((c) => {
        if (!c.key) return h("th", { scope: "col", class: c.numeric ? "num" : undefined }, c.label);
        const dir = sort === c.key ? "ascending" : sort === `-${c.key}` ? "descending" : undefined;
        const b = h("button", { type: "button", class: "sort", "data-sort": c.key },
                    c.label, dir ? (dir === "ascending" ? " ▲" : " ▼") : "");
        b.onclick = () => onSort(c.key);
        return h("th", { scope: "col", "aria-sort": dir ?? "none", class: c.numeric ? "num" : undefined }, b);
    }));
    const rows = items.map((o) => h("tr", { "data-id": o.id },
        h("td", {}, o.provider_name ?? providerName(o.provider)),
        h("td", {}, o.instance_type),
        h("td", { class: "num" }, `${o.accelerator_count} × ${o.accelerator}`),
        h("td", {}, priceTypeName(o.price_type)),
        h("td", { class: "num", "data-value": o.usd_per_hour }, usd(o.usd_per_hour, 2), commitmentNote(o, commitmentsOf)),
        h("td", { class: "num", "data-value": o.usd_per_accelerator_hour }, usd(o.usd_per_accelerator_hour, 3)),
        h("td", { class: "num" }, o.accelerator_memory_gb ? `${num(o.accelerator_memory_gb, 0)} GB` : "–"),
        h("td", {}, o.region),
        h("td", {}, asOfCell(o.as_of, o.as_of_estimated ?? false)),
        h("td", { class: "src", title: o.source }, sourceCell(o.source)),
        h("td", {}, o.verified ? "yes" : h("span", { class: "tag warn" }, "no")),
        h("td", {}, planButton(o))));
    return scrollBox("Offerings table", h("table", { "data-testid": "offerings" }, h("thead", {}, head),
                                           h("tbody", {}, ...rows)));
}

// The seven continents as the API names them (GET /v1/offerings `continent`).
const CONTINENTS: [string, string][] = [["africa", "Africa"], ["antarctica", "Antarctica"], ["asia", "Asia"], ["europe", "Europe"],
    ["north-america", "North America"], ["oceania", "Oceania"], ["south-america", "South America"]];

// Accelerator families as the API forms them (an id up to its first "-"), each with its members.
export function familyOptions(accelerators: { id: string; name: string }[]): [string, string][] {
    const families = new Map<string, string[]>();
    for (const a of accelerators) {
        const f = a.id.split("-")[0]!.toLowerCase();
        families.set(f, [...(families.get(f) ?? []), a.name]);
    }
    return [...families.entries()].sort(([a], [b]) => a.localeCompare(b))
        .map(([f, names]) => [f, names.length > 1 ? `${f.toUpperCase()}: all ${names.length} (${names.join(", ")})` : names[0]!]);
}

// The commitment offerings (1 and 3 years) by the on-demand offering they commit to: the same
// provider, instance type and region. Read once (every page), for the note beside each price.
const twinKey = (o: Offering): string => `${o.provider}|${o.instance_type}|${o.region}`;
function commitmentIndex(): { byOffering: Map<string, Offering[]>; ready: Promise<void> } {
    const byOffering = new Map<string, Offering[]>();
    const ready = (async () => {
        let cursor: string | undefined;
        do {
            const { data } = await api.GET("/v1/offerings", { params: { query: { price_type: ["commit_1y", "commit_3y"], limit: 500, cursor, sort: "id" } } });
            if (!data) return;
            for (const o of data.items) byOffering.set(twinKey(o), [...(byOffering.get(twinKey(o)) ?? []), o]);
            cursor = data.next_cursor ?? undefined;
        } while (cursor);
    })();
    return { byOffering, ready };
}

// Beside an on-demand price: each commitment's price and what it saves against on-demand
// ("1-year commitment $39.66/h, saves 28 %"), as the catalog has them.
function commitmentNote(o: Offering, commitmentsOf: Map<string, Offering[]>): HTMLElement | null {
    if (o.price_type !== "on_demand") return null;
    const terms = (commitmentsOf.get(twinKey(o)) ?? []).sort((a, b) => a.price_type.localeCompare(b.price_type));
    if (terms.length === 0) return null;
    // On the price's line (a catalog row is one line): " · 1-year commitment $25.55/h, saves 37 %".
    return h("span", { class: "commitments", "data-testid": "commitments" }, ...terms.map((c) => {
        const saving = o.usd_per_hour > 0 ? 1 - c.usd_per_hour / o.usd_per_hour : 0;
        return h("small", { "data-price-type": c.price_type, "data-value": c.usd_per_hour, "data-saving": saving, "data-id": c.id },
                 ` · ${priceTypeName(c.price_type)} ${usd(c.usd_per_hour, 2)}/h, saves ${num(saving * 100, 0)} %`);
    }));
}

function planButton(o: Offering): HTMLElement {
    const text = o.price_type === "spot" ? "Spot risk" : "Rent vs buy";
    const b = h("button", { type: "button", class: "plan-with", "data-testid": "plan-with",
                            "aria-label": `${text} with ${o.id}` }, text);
    b.onclick = () => planWith(o);
    return b;
}

export function asOfCell(asOf: string, estimated: boolean): HTMLElement {
    const stale = ageDays(asOf) > kStalePriceDays;
    return h("span", {}, asOf,
             estimated ? h("span", { class: "tag", title: "the source is undated; the date is inferred" }, "estimated") : null,
             stale ? h("span", { class: "tag warn", title: `older than ${kStalePriceDays} days` }, "stale") : null);
}

// Sources are free text that often embeds a URL; link the URL, keep the rest as text.
function sourceCell(source: string): Node {
    const m = /https?:\/\/[^\s)]+/.exec(source);
    if (!m) return document.createTextNode(source);
    return h("a", { href: m[0], rel: "noopener noreferrer", target: "_blank" }, source);
}

function acceleratorsTable(list: Schemas["Accelerator"][]): HTMLElement {
    const precisions = ["fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4"] as const;
    const rows = list.map((a) => h("tr", { "data-id": a.id },
        h("td", {}, a.name), h("td", {}, a.vendor),
        ...precisions.map((p) => h("td", { class: "num" }, num(a.dense_peak_tflops[p], 0))),
        h("td", { class: "num" }, num(a.memory_gb, 0)), h("td", { class: "num" }, num(a.memory_gb_per_s, 0))));
    return table(["Accelerator", "Vendor", ...precisions.map((p) => `${p} TFLOP/s`), "Memory GB", "Bandwidth GB/s"],
                 rows, "accelerators", [2, 3, 4, 5, 6, 7, 8, 9, 10]);
}
