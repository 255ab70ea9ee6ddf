// The planning page (GET /) in headless Chromium (Debian's chromium, driven by playwright-core
// from the root package.json) against the real binary: every view's form is filled, and what the
// tables and charts show is compared with the API's own answer to the same request, fetched here
// directly; a bad value must show the API's error next to the field it names. Also checks the
// headers the page and its assets are served with, that nothing is loaded from another host, the
// 390 px layout, keyboard tabs and labelled controls. Per view at 1280 and 390 px: no NaN/undefined
// in text or SVG, nothing hidden shown, nothing past the right edge on the phone, axe-core (WCAG 2.1
// AA) clean, charts readable; nothing-qualifies answers in words, the mixed spot headline, offerings
// picked from a list, results reproduced from their URL after a reload, the printed page. Then, in
// fresh pages in the light and the dark colour scheme: no console error, axe-core clean, the
// planner's button within 10 Tab presses, every refused value at its field, money with thousands
// separators, tables within 1280 px, the charts' print key, labels and values. Prints
// the bundle size (bytes, gzip) and the time to first render; takes a screenshot per view at 1280
// and 390 px into SCREENSHOT_DIR.
//
// usage: node web_page_test.mjs GPUCOST_BINARY SCREENSHOT_DIR [CHROMIUM]
// Prints one line per check and ends with 'N passed, M failed'.

import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { startServer } from "../contract/serve.mjs";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");

const [binary, shotDir, executablePath = "/usr/bin/chromium"] = process.argv.slice(2);
if (!binary || !shotDir) {
    console.error("usage: node web_page_test.mjs GPUCOST_BINARY SCREENSHOT_DIR [CHROMIUM]");
    process.exit(2);
}
mkdirSync(shotDir, { recursive: true });
let passed = 0;
let failed = 0;
function check(ok, what) {
    ok ? passed++ : failed++;
    console.log(`${ok ? "ok" : "not ok"} - ${what}`);
    return ok;
}
// Figures compare to the cent / the thousandth: the page keeps the API's numbers in data-value.
const close = (a, b) => Math.abs(Number(a) - Number(b)) <= 1e-9 * Math.max(1, Math.abs(Number(b)));

// A CSV the page offers for download, as rows of cells (RFC 4180 quoting).
function parseCsv(text) {
    const rows = [];
    let row = [], cell = "", quoted = false;
    for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (quoted) {
            if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; }
            else if (c === '"') quoted = false;
            else cell += c;
        } else if (c === '"') quoted = true;
        else if (c === ",") { row.push(cell); cell = ""; }
        else if (c === "\r" && text[i + 1] === "\n") { row.push(cell); rows.push(row); row = []; cell = ""; i++; }
        else cell += c;
    }
    if (cell !== "" || row.length) { row.push(cell); rows.push(row); }
    return rows;
}
async function downloaded(page, selector, name) {
    const [download] = await Promise.all([page.waitForEvent("download", { timeout: 10000 }), page.click(selector)]);
    const path = join(shotDir, name);
    await download.saveAs(path);
    return (await import("node:fs")).readFileSync(path, "utf8");
}

// The page's CSV cell rule itself (web/src/csv.ts, compiled here with the page's esbuild): cells a
// spreadsheet would take for a formula are neutralised, quotes and separators quoted.
async function checkCsvRule() {
    const { createRequire: cr } = await import("node:module");
    const webRequire = cr(new URL("../../web/package.json", import.meta.url));
    const esbuild = webRequire("esbuild");
    const src = (await import("node:fs")).readFileSync(new URL("../../web/src/csv.ts", import.meta.url), "utf8");
    const { code } = await esbuild.transform(src, { loader: "ts", format: "esm" });
    const mod = await import("data:text/javascript;base64," + Buffer.from(code).toString("base64"));
    const cases = [["=1+2", "'=1+2"], ["+1", "'+1"], ["-2", "'-2"], ["@SUM(A1)", "'@SUM(A1)"], ["\tx", "'\tx"],
                   ["\rx", "\"'\rx\""], ["a,b", '"a,b"'], ['say "hi"', '"say ""hi"""'], ["=A1,B1", "\"'=A1,B1\""],
                   ["plain", "plain"], [12.5, "12.5"], [null, ""]];
    const bad = cases.filter(([v, want]) => mod.csvCell(v) !== want).map(([v, want]) => `${JSON.stringify(v)} -> ${JSON.stringify(mod.csvCell(v))}, want ${JSON.stringify(want)}`);
    check(bad.length === 0, `CSV cells beginning with = + - @ TAB CR are neutralised, separators and quotes quoted (${bad.join("; ")})`);
}

const { proc, port } = await startServer(binary);
const base = `http://127.0.0.1:${port}`;
const getJson = async (path) => (await fetch(base + path)).json();
const postJson = async (path, body) => (await fetch(base + path, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })).json();

async function checkServing() {
    const page = await fetch(`${base}/`, { headers: { Accept: "text/html,application/xhtml+xml,*/*;q=0.8" } });
    check(page.status === 200 && page.headers.get("content-type") === "text/html; charset=utf-8",
          `GET / for a browser is text/html (${page.headers.get("content-type")})`);
    const csp = page.headers.get("content-security-policy") ?? "";
    check(csp.includes("default-src 'none'") && csp.includes("script-src 'self'") && !csp.includes("unsafe-inline"),
          `the page's Content-Security-Policy keeps it to this server (${csp})`);
    check(page.headers.get("x-content-type-options") === "nosniff", "the page is nosniff");
    check(page.headers.get("cache-control") === "no-cache" && /^"[0-9a-f]{16}(-gzip|-br)?"$/.test(page.headers.get("etag") ?? ""),
          `the page is revalidated (Cache-Control ${page.headers.get("cache-control")}, ETag ${page.headers.get("etag")})`);
    const again = await fetch(`${base}/`, { headers: { Accept: "text/html", "If-None-Match": page.headers.get("etag") } });
    check(again.status === 304, `a revalidation with the same ETag answers 304 (${again.status})`);
    const html = await page.text();
    const json = await fetch(`${base}/`);
    check(json.headers.get("content-type").startsWith("application/json") && (await json.json()).service === "gpucost",
          "GET / without text/html in Accept is still the JSON entry point");
    const assets = [...html.matchAll(/(?:src|href)="(\/web\/app\.[0-9a-f]{16}\.(js|css))"/g)];
    check(assets.length === 2, `the page names a hashed script and stylesheet (${assets.map((a) => a[1]).join(", ")})`);
    let bytes = 0;
    let gzipped = 0;
    for (const [, path, ext] of assets) {
        const res = await fetch(base + path);
        const body = Buffer.from(await res.arrayBuffer());
        bytes += body.length;
        gzipped += gzipSync(body, { level: 9 }).length;
        const type = ext === "js" ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8";
        check(res.status === 200 && res.headers.get("content-type") === type, `${path} is ${type}`);
        check(res.headers.get("cache-control") === "public, max-age=31536000, immutable", `${path} is cached as immutable`);
    }
    const missing = await fetch(`${base}/web/app.0000000000000000.js`);
    check(missing.status === 404 && missing.headers.get("content-type") === "application/problem+json",
          "an asset name from another build is a 404 problem");
    console.log(`# bundle: ${bytes} bytes (${gzipped} bytes gzip -9), index.html ${html.length} bytes`);
}

// Every control of the page has a label (a <label for>, an enclosing label or a legend's fieldset).
async function unlabelledControls(page) {
    return page.evaluate(() => [...document.querySelectorAll("input, select, textarea")]
        .filter((el) => el.labels.length === 0 && !el.getAttribute("aria-label"))
        .map((el) => el.outerHTML.slice(0, 80)));
}

// What the page must never show, checked in the view on screen: NaN, undefined or Infinity in
// its text or in an SVG attribute, and an element marked hidden that still takes space.
async function brokenFigures(page) {
    return page.evaluate(() => {
        const bad = /\b(NaN|undefined|Infinity)\b/;
        const out = [];
        const text = document.body.innerText;
        const m = bad.exec(text);
        if (m) out.push(`text "…${text.slice(Math.max(0, m.index - 40), m.index + 20)}…"`);
        for (const el of document.querySelectorAll("svg, svg *")) {
            for (const a of el.attributes) if (bad.test(a.value)) out.push(`<${el.tagName} ${a.name}="${a.value.slice(0, 40)}">`);
        }
        return out.slice(0, 3);
    });
}
async function hiddenButShown(page) {
    return page.evaluate(() => [...document.querySelectorAll("[hidden]")]
        .filter((el) => el.getClientRects().length > 0).map((el) => el.outerHTML.slice(0, 80)));
}
async function checkClean(page, what) {
    const broken = await brokenFigures(page);
    check(broken.length === 0, `${what}: no NaN, undefined or Infinity in text or SVG (${broken.join(" | ")})`);
    const shown = await hiddenButShown(page);
    check(shown.length === 0, `${what}: no element marked hidden is visible (${shown.join(" | ")})`);
}

// Elements past the window's right edge (a wide table's own scroll box excepted), and the page's
// own scroll width.
async function sideways(page) {
    return page.evaluate(() => {
        const w = document.documentElement.clientWidth;
        const out = [];
        if (document.documentElement.scrollWidth > w) out.push(`document ${document.documentElement.scrollWidth} px wide`);
        for (const el of document.querySelectorAll("body *")) {
            if (el.parentElement?.closest(".scroll, svg")) continue;
            const r = el.getBoundingClientRect();
            if (r.width > 0 && r.right > w + 0.5) out.push(`<${el.tagName.toLowerCase()} class="${el.getAttribute("class") ?? ""}"> to ${r.right.toFixed(0)} px`);
        }
        return out.slice(0, 4);
    });
}

async function fieldError(page, form, field) {
    const loc = page.locator(`[data-testid=${form}] .field-error[data-field="${field}"]`);
    await loc.waitFor({ timeout: 10000 });
    const id = await loc.getAttribute("id");
    const described = await page.locator(`[data-testid=${form}] [aria-describedby="${id}"]`).count();
    return { text: await loc.textContent(), described };
}

async function showTab(page, id) {
    await page.click(`[data-tab=${id}]`);
    await page.waitForSelector(`#panel-${id}:not([hidden])`);
}

// The view's main figure at the bottom of the window, its recommendation above it.
async function screenshots(page, name, bottomSelector) {
    if (bottomSelector) {
        await page.$eval(bottomSelector, (el) => el.scrollIntoView({ block: "end" })).catch(() => {});
    }
    await page.screenshot({ path: join(shotDir, `${name}-1280.png`) });
}

// The catalog at a glance: one short row per offering, at most two lines (the source cut, not
// wrapped), the memory per accelerator shown.
async function catalogRows(page, width) {
    const tallest = await page.$$eval("[data-testid=offerings] tbody tr", (r) => Math.max(...r.map((x) => x.getBoundingClientRect().height)));
    check(tallest <= 48, `catalog at ${width} px: every offering in a row of at most two lines (tallest row ${tallest.toFixed(0)} px)`);
    const heads = await page.$$eval("[data-testid=offerings] thead th", (t) => t.map((x) => x.textContent));
    check(heads.some((x) => /Memory/.test(x)), "the offerings table shows the memory per accelerator");
}

async function catalog(page) {
    const first = await getJson("/v1/offerings?sort=usd_per_accelerator_hour&limit=25");
    await page.waitForSelector("[data-testid=offerings] tbody tr");
    const ids = await page.$$eval("[data-testid=offerings] tbody tr", (rows) => rows.map((r) => r.dataset.id));
    check(JSON.stringify(ids) === JSON.stringify(first.items.map((o) => o.id)),
          `the offerings table shows the API's first page in order (${ids.length} rows)`);
    const perAcc = await page.$$eval("[data-testid=offerings] tbody tr td:nth-child(6)", (c) => c.map((x) => x.dataset.value));
    check(perAcc.every((v, i) => close(v, first.items[i].usd_per_accelerator_hour)),
          "USD per accelerator-hour matches the API row by row");
    await catalogRows(page, 1280);
    const offCsv = parseCsv(await downloaded(page, "[data-testid=offerings-csv]", "offerings.csv").catch(() => ""));
    check(offCsv.length === first.items.length + 1 && offCsv[0][0] === "offering_id" &&
          offCsv.slice(1).every((r, i) => r[0] === first.items[i].id && close(r[7], first.items[i].usd_per_accelerator_hour) &&
                                          r[9] === first.items[i].region),
          `the offerings CSV is exactly the ${first.items.length} rows shown, in order, at the API's prices (${offCsv.length - 1} rows)`);
    const status = await page.textContent("[data-testid=catalog-status]");
    check(status.startsWith(`${first.total_count} offerings match`), `the status counts the API's total (${status})`);

    // A second page through the API's cursor.
    await page.click("[data-testid=next-page]");
    const second = await getJson(`/v1/offerings?sort=usd_per_accelerator_hour&limit=25&cursor=${encodeURIComponent(first.next_cursor)}`);
    await page.waitForFunction((id) => document.querySelector("[data-testid=offerings] tbody tr")?.dataset.id === id,
                               second.items[0].id);
    const ids2 = await page.$$eval("[data-testid=offerings] tbody tr", (rows) => rows.map((r) => r.dataset.id));
    check(JSON.stringify(ids2) === JSON.stringify(second.items.map((o) => o.id)), "Next page shows the cursor's page");

    // Filters and a sort by clicking a column heading.
    await page.selectOption("[data-testid=f-price-type]", "spot");
    await page.fill("[data-testid=f-min-acc]", "8");
    await page.click("[data-testid=catalog-form] button[type=submit]");
    await page.click("th button[data-sort=usd_per_hour]");
    const filtered = await getJson("/v1/offerings?price_type=spot&min_accelerator_count=8&sort=usd_per_hour&limit=25");
    await page.waitForFunction((n) => document.querySelector("[data-testid=catalog-status]")?.textContent
        ?.startsWith(`${n} offerings match`) && document.querySelector("th[aria-sort=ascending] button[data-sort=usd_per_hour]"),
                               filtered.total_count);
    const ids3 = await page.$$eval("[data-testid=offerings] tbody tr", (rows) => rows.map((r) => r.dataset.id));
    check(ids3.length > 0 && JSON.stringify(ids3) === JSON.stringify(filtered.items.map((o) => o.id)),
          `filtered (spot, >= 8 accelerators) and sorted by USD/hour: the API's ${filtered.total_count} matches in order`);
    (await fromUrl(page, "catalog filtered and sorted",
                   async (p) => p.waitForFunction((id) => document.querySelector("[data-testid=offerings] tbody tr")?.dataset.id === id,
                                                  filtered.items[0].id, { timeout: 15000 })
                       .then(() => p.$$eval("[data-testid=offerings] tbody tr", (r) => r.map((x) => x.dataset.id).join(","))).catch(() => null),
                   filtered.items.map((o) => o.id).join(",")))?.close();

    const accs = await getJson("/v1/accelerators");
    const accRows = await page.$$eval("[data-testid=accelerators] tbody tr", (r) => r.length);
    check(accRows === accs.items.length, `the accelerators table lists all ${accs.items.length}`);
    await page.fill("[data-testid=f-min-acc]", "0");
    await page.click("[data-testid=catalog-form] button[type=submit]");
    const err = await fieldError(page, "catalog-form", "min_accelerator_count");
    check(err.text.includes("at least 1") && err.described === 1,
          `min_accelerator_count = 0: the API's error is shown at its field ("${err.text}")`);
    await page.fill("[data-testid=f-min-acc]", "");
    await page.selectOption("[data-testid=f-price-type]", "");
    await page.click("[data-testid=catalog-form] button[type=submit]");
    await page.waitForSelector("[data-testid=catalog-form] .field-error", { state: "detached" });
    await checkClean(page, "catalog at 1280 px");
    await page.waitForSelector("[data-testid=price-summary] tbody tr", { timeout: 10000 }).catch(() => {});
    await page.waitForFunction(() => /^\d+ offerings/.test(document.querySelector("[data-testid=catalog-status]")?.textContent ?? ""),
                               null, { timeout: 10000 }).catch(() => {});
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshots(page, "catalog");

    // "Plan with this" on a catalog row opens the planner with the offering filled in.
    const want = "aws-p5.48xlarge-us-east-1-spot";
    await page.selectOption("[data-testid=f-price-type]", "spot");
    await page.fill("[data-testid=f-min-acc]", "8");
    // The H100 family keeps the row on the first page however many spot regions the catalog has.
    await page.selectOption("[data-testid=f-family]", "h100");
    await page.click("[data-testid=catalog-form] button[type=submit]");
    const planned = await page.waitForSelector(`[data-testid=offerings] tr[data-id="${want}"] [data-testid=plan-with]`, { timeout: 10000 })
        .then((b) => b.click()).then(() => page.waitForSelector("[data-testid=spot-results] [data-testid=spot-offering]", { timeout: 15000 }))
        .then(() => page.textContent("[data-testid=spot-offering]")).catch(() => "");
    const viaRow = await postJson("/v1/plans/spot", { job_hours: 100, nodes: 1, checkpoint_minutes: 5, restart_minutes: 10,
                                                       deadline_hours: 130, spot_offering_id: want });
    const rowCost = await page.getAttribute("[data-testid=row-spot-expected] td:nth-child(3)", "data-value", { timeout: 2000 }).catch(() => null);
    check(planned === want && close(rowCost, viaRow.expected_spot_cost_usd),
          `"Plan with this" on the catalog's ${want} row opens Spot with it: the API's expected cost (${rowCost})`);
    await page.selectOption("[data-testid=s-source]", "hand").catch(() => {});
    await showTab(page, "catalog");
    await page.fill("[data-testid=f-min-acc]", "");
    await page.selectOption("[data-testid=f-family]", "");
    await page.selectOption("[data-testid=f-price-type]", "");
    await page.click("[data-testid=catalog-form] button[type=submit]");

    // Prices by accelerator: every accelerator first, per provider and price type, the cheapest,
    // median and range of the API's offerings; then one accelerator.
    const everyOffering = [];
    for (let cursor = ""; ;) {
        const pageOf = await getJson(`/v1/offerings?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
        everyOffering.push(...pageOf.items);
        if (!pageOf.next_cursor) break;
        cursor = pageOf.next_cursor;
    }
    const stats = (items) => {
        const out = {};
        for (const o of items) (out[`${o.accelerator}|${o.provider}|${o.price_type}`] ??= []).push(o.usd_per_accelerator_hour);
        for (const k of Object.keys(out)) {
            const v = out[k].sort((a, b) => a - b);
            const n = v.length;
            out[k] = { min: v[0], max: v[n - 1], mid: n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, n };
        }
        return out;
    };
    const readSummary = () => page.$$eval("[data-testid=price-summary] tbody tr", (r) => r.map((x) =>
        [`${x.dataset.accelerator}|${x.dataset.provider}|${x.dataset.priceType}`, Number(x.children[4].dataset.value),
         Number(x.children[5]?.dataset.value), Number(x.children[7]?.textContent)]));
    const all = stats(everyOffering);
    await page.waitForFunction((n) => document.querySelectorAll("[data-testid=price-summary] tbody tr").length === n,
                               Object.keys(all).length, { timeout: 15000 }).catch(() => {});
    const allRows = await readSummary();
    check(allRows.length === Object.keys(all).length &&
          allRows.every(([k, min, mid, n]) => all[k] && close(min, all[k].min) && close(mid, all[k].mid) && n === all[k].n),
          `prices by accelerator, all ${new Set(everyOffering.map((o) => o.accelerator)).size} accelerators at once: the cheapest, median and count of the API's ${everyOffering.length} offerings per accelerator, provider and price type (${allRows.length} rows)`);
    const memCell = await page.$eval("[data-testid=price-summary] tbody tr[data-accelerator=h100-sxm] td:nth-child(2)", (c) => c.textContent).catch(() => "");
    const accList = (await getJson("/v1/accelerators")).items;
    check(memCell === `${accList.find((a) => a.id === "h100-sxm").memory_gb} GB`, `the summary shows the accelerator's memory (H100 SXM: ${memCell})`);
    const sumCsv = parseCsv(await downloaded(page, "[data-testid=summary-csv]", "prices-by-accelerator.csv").catch(() => ""));
    check(sumCsv.length === allRows.length + 1 && sumCsv.slice(1).every((r, i) => `${r[0]}|${r[3]}|${r[4]}` === allRows[i][0] && close(r[5], allRows[i][1])),
          `the prices-by-accelerator CSV is exactly the ${allRows.length} rows shown (${sumCsv.length - 1} rows)`);
    await page.selectOption("[data-testid=sum-accelerator]", "h100-sxm", { timeout: 3000 }).catch(() => {});
    const h100 = { items: everyOffering.filter((o) => o.accelerator === "h100-sxm") };
    const cheapest = {};
    for (const o of h100.items) {
        const k = `${o.accelerator}|${o.provider}|${o.price_type}`;
        cheapest[k] = Math.min(cheapest[k] ?? Infinity, o.usd_per_accelerator_hour);
    }
    await page.waitForFunction((n) => document.querySelectorAll("[data-testid=price-summary] tbody tr").length === n,
                               Object.keys(cheapest).length, { timeout: 15000 }).catch(() => {});
    const summary = await readSummary().catch(() => []);
    check(summary.length === Object.keys(cheapest).length && summary.every(([k, v]) => close(v, cheapest[k])),
          `prices by accelerator (H100 SXM): the cheapest of the API's offerings per provider and price type (${summary.length} rows)`);
    if (summary.length > 0) {
        const [, prov, type] = summary[0][0].split("|");
        const shown = await getJson(`/v1/offerings?provider=${prov}&accelerator=h100-sxm&price_type=${type}&sort=usd_per_hour&limit=25`);
        await page.click("[data-testid=price-summary] tbody tr:first-child button");
        await page.waitForFunction((n) => document.querySelector("[data-testid=catalog-status]")?.textContent?.startsWith(`${n} offerings match`),
                                   shown.total_count, { timeout: 10000 }).catch(() => {});
        const ids = await page.$$eval("[data-testid=offerings] tbody tr", (r) => r.map((x) => x.dataset.id).sort());
        check(JSON.stringify(ids) === JSON.stringify(shown.items.map((o) => o.id).sort()),
              `its "Show offerings" lists the API's ${shown.total_count} offerings of ${prov}, ${type}`);
        await page.selectOption("[data-testid=f-accelerator]", "");
        await page.selectOption("[data-testid=f-price-type]", "");
        await page.uncheck(`[data-testid=catalog-form] input[name=provider][value=${prov}]`);
        await page.click("[data-testid=catalog-form] button[type=submit]");
    }
}

async function training(page) {
    await showTab(page, "training");
    await page.selectOption("[data-testid=t-model]", "llama-3.1-8b");
    await page.fill("[data-testid=t-tokens]", "100");
    await page.fill("[data-testid=t-deadline]", "720");
    await page.fill("[data-testid=t-budget]", "150000");
    await page.click("[data-testid=training-form] button[type=submit]");
    const body = { model: "llama-3.1-8b", tokens_b: 100, mode: "pretrain", precision: "bf16",
                   constraints: { deadline_hours: 720, budget_usd: 150000, price_types: ["on_demand", "spot"] }, limit: 200 };
    const plan = await postJson("/v1/plans/training", body);
    await page.waitForSelector("[data-testid=recommendation]");
    const recCost = await page.getAttribute("[data-testid=rec-cost]", "data-value");
    check(close(recCost, plan.recommendation.expected_cost_usd),
          `the recommendation's expected cost is the API's (${plan.recommendation.expected_cost_usd})`);
    // The API's sentence, its dollar amounts rounded and with thousands separators, price types by name.
    const words = (t) => t.replace(/\$[0-9][0-9,.]*/g, "$").replace(/\bon_demand\b/g, "on-demand")
        .replace(/\bcommit_1y\b/g, "1-year commitment").replace(/\bcommit_3y\b/g, "3-year commitment")
        .replace(/\bcapacity_block\b/g, "capacity block");
    check(words(await page.textContent("[data-testid=reasoning]")) === words(plan.reasoning), "the reasoning is the API's");
    const rows = await page.$$eval("[data-testid=options] tbody tr", (r) => r.map((x) => `${x.dataset.id}/${x.dataset.nodes}`));
    check(JSON.stringify(rows) === JSON.stringify(plan.options.slice(0, 20).map((o) => `${o.offering.id}/${o.nodes}`)),
          `the ranked options are the API's first ${rows.length}, in order`);
    const pts = await page.$$eval("[data-testid=training-results] svg .points circle",
                                  (c) => c.map((x) => [Number(x.dataset.x), Number(x.dataset.y)]));
    check(pts.length === plan.options.length &&
          pts.every(([x, y], i) => close(x, plan.options[i].expected_wall_clock_hours) && close(y, plan.options[i].expected_cost_usd)),
          `the scatter draws every option at the API's expected hours and cost (${pts.length} points)`);
    const front = await page.getAttribute("[data-testid=pareto-front]", "data-count");
    check(Number(front) === plan.pareto_front.length, `the Pareto front line joins the API's ${plan.pareto_front.length} points`);
    const refs = await page.$$eval("[data-testid=training-results] svg .ref", (g) => g.map((x) => Number(x.dataset.value)));
    check(refs.includes(720) && refs.includes(150000), "the deadline and budget lines are drawn");
    const labels = await page.$$eval("[data-testid=training-results] svg .axis-label", (t) => t.map((x) => x.textContent));
    check(labels.some((l) => l.includes("hours")) && labels.some((l) => l.includes("USD")), `the axes carry units (${labels.join("; ")})`);
    const months = await page.$$eval("#panel-training [data-testid=monthly] tbody tr", (r) => r.map((x) => [x.dataset.month, Number(x.children[1].dataset.value)]));
    check(months.length === plan.budget.monthly.length && months.length > 0 &&
          months.every(([m, v], i) => m === plan.budget.monthly[i].month && close(v, plan.budget.monthly[i].usd)),
          `the cash by calendar month is the API's budget.monthly (${months.map(([m]) => m).join(", ")})`);
    const best = await page.$$eval("[data-testid=best-by-provider] tbody tr", (r) => r.map((x) => x.dataset.id));
    check(JSON.stringify(best) === JSON.stringify(plan.best_by_provider.map((o) => o.offering.id)), "best per provider is the API's");
    const warnings = await page.$$eval("[data-testid=training-results] [data-testid=warnings] li", (l) => l.map((x) => x.textContent));
    check(warnings.length === plan.warnings.length, `all ${plan.warnings.length} warnings are listed`);
    check(warnings.length > 0 && warnings.every((w) => !w.startsWith("/") && !/\$\d{4}/.test(w)),
          `warnings name what they are about in words, dollars with separators ("${warnings[0]}")`);
    const tableText = await page.innerText("[data-testid=options]");
    check(!/\b(on_demand|commit_1y|commit_3y|capacity_block|aws|gcp|azure|vastai|runpod|lambda|coreweave)\b/.test(tableText),
          "the options table names price types and providers in words (on-demand, AWS), not API ids");
    const recHours = await page.textContent("[data-testid=rec-hours]");
    check(/h \([0-9.]+ (days|months)\)/.test(recHours), `the recommended run's hours also in days or months ("${recHours}")`);
    const summary = await page.textContent("[data-testid=training-results] [data-testid=assumptions] summary");
    check(summary.includes(`(${plan.assumptions.length})`), `the assumptions can be shown (${summary})`);
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("[data-testid=training-results] [data-testid=csv]")]);
    const csvPath = join(shotDir, "training-plan.csv");
    await download.saveAs(csvPath);
    const csv = (await import("node:fs")).readFileSync(csvPath, "utf8");
    check(csv.startsWith("offering_id,provider,") && csv.trim().split("\n").length === plan.options.length + 1,
          `the CSV download is the API's CSV export (${csv.trim().split("\n").length - 1} rows)`);
    await screenshots(page, "training", "[data-testid=training-results] figure");
    const again = await fromUrl(page, "training plan", attrOf("[data-testid=rec-cost]"), plan.recommendation.expected_cost_usd);
    if (again) { await printed(again, "training plan"); await again.close(); } else check(false, "training plan printed");

    await checkClean(page, "training, from the model library");
    const announced = await page.textContent("[data-testid=training-form] [data-testid=announce]").catch(() => "");
    check(announced.startsWith("Recommended:") &&
          await page.getAttribute("[data-testid=training-form] [data-testid=announce]", "aria-live") === "polite",
          `the result is announced to screen readers (an aria-live region: "${announced.slice(0, 50)}…")`);

    // A parameter count is a model only when "a shape" is chosen: otherwise its box is not shown.
    check(!(await page.isVisible("[data-testid=t-params]")) && !(await page.isVisible("[data-testid=t-hf]")),
          "with a library model chosen, the parameter count and config.json boxes are not shown");
    await page.selectOption("[data-testid=t-model-source]", "shape");
    check(await page.isVisible("[data-testid=t-params]") && !(await page.isVisible("[data-testid=t-model]")),
          "with \"a shape\" chosen, the parameter count is shown and the library model is not");
    await page.fill("[data-testid=t-params]", "70");
    await page.click("[data-testid=training-form] button[type=submit]");
    const shaped = await postJson("/v1/plans/training", { ...body, model: { params_b: 70 } });
    await page.waitForFunction((v) => Number(document.querySelector("[data-testid=rec-cost]")?.dataset.value) === v,
                               shaped.recommendation.expected_cost_usd, { timeout: 15000 }).catch(() => {});
    check(close(await page.getAttribute("[data-testid=rec-cost]", "data-value"), shaped.recommendation.expected_cost_usd),
          `70 B parameters plan a 70 B model (${shaped.recommendation.expected_cost_usd.toFixed(0)} USD)`);
    await page.selectOption("[data-testid=t-model-source]", "library");

    await page.fill("[data-testid=t-tokens]", "-1");
    await page.click("[data-testid=training-form] button[type=submit]");
    const err = await fieldError(page, "training-form", "/tokens_b");
    check(err.described === 1 && err.text.includes("Training tokens") && !err.text.includes("tokens_b") && !/\b1e7\b/.test(err.text),
          `tokens -1: the error is at its field, in the form's words ("${err.text}")`);
    await page.fill("[data-testid=t-tokens]", "100");
}

// Nothing qualifies: a $1 budget. The page says which constraint binds and what to change, at
// the budget's control, and lists the nearest options (the API's include_infeasible), each with
// what it misses; no chart of nothing, no CSV of nothing.
async function trainingNothing(page, width) {
    await showTab(page, "training");
    await page.selectOption("[data-testid=t-model-source]", "library");
    await page.selectOption("[data-testid=t-model]", "llama-3.1-8b");
    await page.fill("[data-testid=t-tokens]", "100");
    await page.fill("[data-testid=t-deadline]", "720");
    await page.fill("[data-testid=t-budget]", "1");
    await page.click("[data-testid=training-form] button[type=submit]");
    const body = { model: "llama-3.1-8b", tokens_b: 100, mode: "pretrain", precision: "bf16",
                   constraints: { deadline_hours: 720, budget_usd: 1, price_types: ["on_demand", "spot"] } };
    const plan = await postJson("/v1/plans/training", { ...body, limit: 200 });
    const nearest = await postJson("/v1/plans/training", { ...body, limit: 20, include_infeasible: true, sort: "expected_cost" });
    const binding = plan.binding_constraints[0];
    const note = await page.locator("[data-testid=training-form] .field-note[data-field='/constraints/budget_usd']")
        .textContent({ timeout: 15000 }).catch(() => "");
    const best = `$${Math.round(binding.best_value).toLocaleString("en-US")}`;
    check(note.includes("budget binds") && note.includes(best) && note.includes("Raise the budget"),
          `${width} px, $1 budget: the budget's control says it binds and what to change ("${note}")`);
    const rows = await page.$$eval("[data-testid=nearest-options] tbody tr", (r) => r.map((x) => `${x.dataset.id}/${x.dataset.nodes}`));
    check(rows.length > 0 && JSON.stringify(rows) === JSON.stringify(nearest.options.map((o) => `${o.offering.id}/${o.nodes}`)),
          `${width} px, $1 budget: the nearest ${rows.length} options are the API's include_infeasible options, in order`);
    const missed = await page.textContent("[data-testid=nearest-options] tbody tr [data-testid=misses]").catch(() => "");
    check(/over the budget/.test(missed), `${width} px, $1 budget: each nearest option says what it misses ("${missed}")`);
    check(await page.locator("[data-testid=training-results] [data-testid=csv]").count() === 0,
          `${width} px, $1 budget: no CSV button for nothing`);
    await checkClean(page, `training at ${width} px with a $1 budget`);
    await page.fill("[data-testid=t-budget]", "150000");
}

// Serving with an impossible time to first token: why, in words, at the control; no empty chart,
// no API field names.
async function servingNothing(page, width) {
    await showTab(page, "serving");
    await page.fill("[data-testid=v-ttft]", "1");
    await page.click("[data-testid=serving-form] button[type=submit]");
    const note = await page.locator("[data-testid=serving-form] .field-note[data-field='/latency/max_time_to_first_token_ms']")
        .textContent({ timeout: 15000 }).catch(() => "");
    check(note.includes("latency targets"), `${width} px, 1 ms to first token: the control says what to change ("${note}")`);
    const text = await page.textContent("[data-testid=serving-results]");
    check(/cannot meet the latency targets/.test(text) && !/skipped/.test(text),
          `${width} px, 1 ms to first token: the reasons are in words, not API field names`);
    check(await page.locator("[data-testid=serving-results] svg, [data-testid=serving-results] [data-testid=csv]").count() === 0,
          `${width} px, 1 ms to first token: no empty chart, no CSV of nothing`);
    await checkClean(page, `serving at ${width} px with 1 ms to first token`);
    await page.fill("[data-testid=v-ttft]", "1000");
}

async function rentBuy(page) {
    await showTab(page, "rent-vs-buy");
    await page.fill("[data-testid=r-count]", "16");
    // Percentages as people type them: 70 (%) utilisation, 8 (%) a year.
    await page.fill("[data-testid=r-util]", "70");
    await page.fill("[data-testid=r-discount]", "8 %").catch(() => page.fill("[data-testid=r-discount]", "8"));
    await page.click("[data-testid=rentbuy-form] button[type=submit]");
    const plan = await postJson("/v1/plans/rent-vs-buy", {
        buy: { accelerator: "h100-sxm", total_accelerators: 16, utilization: 0.7 },
        rent: { offering_id: "aws-p5.48xlarge-us-east-1-on-demand" }, horizon_months: 60, discount_rate_annual: 0.08 });
    await page.waitForSelector("[data-testid=break-even-months], [data-testid=rentbuy-form] .field-error");
    const be = await page.getAttribute("[data-testid=break-even-months]", "data-value", { timeout: 2000 }).catch(() => null);
    check(close(be, plan.break_even_months),
          `utilisation typed 70 and discount rate 8 %: break-even month is the API's for 0.7 and 0.08 (${plan.break_even_months})`);
    (await fromUrl(page, "rent vs buy", attrOf("[data-testid=break-even-months]"), plan.break_even_months))?.close();
    const beu = await page.getAttribute("[data-testid=break-even-utilization]", "data-value", { timeout: 2000 }).catch(() => null);
    check(close(beu, plan.break_even_utilization), `break-even utilisation is the API's (${plan.break_even_utilization})`);
    const series = await page.$$eval("[data-testid=rentbuy-results] svg .series",
                                     (s) => Object.fromEntries(s.map((x) => [x.dataset.series, Number(x.dataset.lastY)])));
    const last = plan.cumulative[plan.cumulative.length - 1];
    check(close(series.rent, last.rent_usd) && close(series.own, last.own_usd),
          `the cumulative curves end at the API's month ${last.month} totals`);
    const marker = await page.$$eval("[data-testid=rentbuy-results] svg .ref", (g) => g.map((x) => Number(x.dataset.value)));
    check(marker.length === 1 && close(marker[0], plan.break_even_months), "the break-even month is marked on the chart");
    await checkClean(page, "rent-vs-buy at 1280 px");
    await screenshots(page, "rent-vs-buy", "[data-testid=rentbuy-results] figure");
    await page.fill("[data-testid=r-util]", "150");
    await page.click("[data-testid=rentbuy-form] button[type=submit]");
    const err = await fieldError(page, "rentbuy-form", "/buy/utilization");
    check(err.described === 1 && /percentage from 0 to 100/.test(err.text),
          `utilisation 150 %: words at its field ("${err.text}")`);
    await page.fill("[data-testid=r-util]", "70");
    // No count: the API's complaint about /buy/capex_usd (a member not on the form) is said at the count.
    await page.fill("[data-testid=r-count]", "");
    await page.click("[data-testid=rentbuy-form] button[type=submit]");
    const capex = await fieldError(page, "rentbuy-form", "/buy/capex_usd").catch(() => ({ text: "", described: 0 }));
    const above = await page.textContent("[data-testid=rentbuy-form] .form-error");
    check(capex.described === 1 && /number of accelerators/.test(capex.text) && !/capex|\/buy\//.test(above + capex.text),
          `no accelerator count: words at the count, no API member names ("${capex.text}"; above the button: "${above}")`);
    await page.fill("[data-testid=r-count]", "16");
}

async function spot(page) {
    await showTab(page, "spot");
    await page.fill("[data-testid=s-rate]", "0.05");
    await page.click("[data-testid=spot-form] button[type=submit]");
    const plan = await postJson("/v1/plans/spot", { job_hours: 100, nodes: 1, checkpoint_minutes: 5, restart_minutes: 10,
        deadline_hours: 130, on_demand_usd_per_hour: 98.32, spot_usd_per_hour: 30, interruptions_per_hour: 0.05 });
    await page.waitForSelector("[data-testid=row-spot-expected]");
    const exp = await page.$$eval("[data-testid=row-spot-expected] td", (c) => c.map((x) => x.dataset.value));
    check(close(exp[1], plan.expected_spot_hours) && close(exp[2], plan.expected_spot_cost_usd),
          `expected spot hours and cost are the API's (${plan.expected_spot_hours.toFixed(2)} h, $${plan.expected_spot_cost_usd.toFixed(0)})`);
    const od = await page.$$eval("[data-testid=row-on-demand] td", (c) => c.map((x) => x.dataset.value));
    check(close(od[2], plan.on_demand_cost_usd), "on-demand cost is the API's");
    check(close(await page.getAttribute("[data-testid=checkpoint-interval]", "data-value"), plan.checkpoint_interval_hours),
          "the checkpoint interval is the API's");
    check(close(await page.getAttribute("[data-testid=deadline-probability]", "data-value"), plan.spot_deadline_probability),
          `the deadline probability is the API's (${plan.spot_deadline_probability})`);
    await checkClean(page, "spot at 1280 px");
    await screenshots(page, "spot", "[data-testid=spot-table]");
    await page.fill("[data-testid=s-rate]", "20");
    await page.click("[data-testid=spot-form] button[type=submit]");
    const err = await fieldError(page, "spot-form", "/interruptions_per_hour");
    check(err.described === 1, `20 interruptions an hour: the error is at its field ("${err.text}")`);
    await page.fill("[data-testid=s-rate]", "0.05");
}

// When the plan recommends mixed, the headline is the mixed plan's saving (not spot alone's), and
// the table has a mixed row, marked recommended. 240 h on 8 nodes, deadline 250 h.
async function spotMixed(page, width) {
    await showTab(page, "spot");
    const fill = { "s-hours": "240", "s-nodes": "8", "s-deadline": "250", "s-od": "98.32", "s-spot": "30", "s-rate": "0.01" };
    for (const [id, v] of Object.entries(fill)) await page.fill(`[data-testid=${id}]`, v);
    await page.click("[data-testid=spot-form] button[type=submit]");
    const plan = await postJson("/v1/plans/spot", { job_hours: 240, nodes: 8, checkpoint_minutes: 5, restart_minutes: 10,
        deadline_hours: 250, on_demand_usd_per_hour: 98.32, spot_usd_per_hour: 30, interruptions_per_hour: 0.01 });
    const mixedSaving = plan.on_demand_cost_usd - plan.expected_mixed_cost_usd;
    await page.waitForSelector("[data-testid=spot-results] [data-testid=savings]");
    await page.waitForFunction(() => /mixed|move to on-demand/.test(document.querySelector("[data-testid=spot-results] h3")?.textContent ?? ""),
                               null, { timeout: 10000 }).catch(() => {});
    const saving = await page.getAttribute("[data-testid=savings]", "data-value");
    const text = await page.textContent("[data-testid=savings]");
    const shown = `$${Math.round(mixedSaving).toLocaleString("en-US")}`;
    check(plan.recommendation === "mixed" && close(saving, mixedSaving) && text.includes(shown),
          `${width} px, spot recommends mixed: the headline saving is the mixed plan's (${text}), not spot alone's`);
    const mixedRow = await page.$$eval("[data-testid=row-mixed] td", (c) => c.map((x) => x.dataset.value ?? x.textContent));
    check(mixedRow.length === 4 && close(mixedRow[2], plan.expected_mixed_cost_usd) &&
          await page.locator("[data-testid=row-mixed].chosen").count() === 1,
          `${width} px: the table has the mixed row at the API's cost, marked recommended (${mixedRow.join(" | ")})`);
    const reasoning = await page.textContent("[data-testid=spot-results] [data-testid=reasoning]");
    check(!/\$\d{4}/.test(reasoning) && reasoning.includes("$123,130"), `${width} px: dollars in the reasoning have thousands separators`);
    if (width === 1280) {
        const spotCsv = parseCsv(await downloaded(page, "[data-testid=spot-results] [data-testid=csv]", "spot-plan.csv").catch(() => ""));
        const byRun = Object.fromEntries(spotCsv.slice(1).map((r) => [r[0], r]));
        check(spotCsv.length === 5 && close(byRun["on-demand"]?.[2], plan.on_demand_cost_usd) &&
              close(byRun["spot, expected with interruptions"]?.[1], plan.expected_spot_hours) &&
              close(byRun["spot, expected with interruptions"]?.[2], plan.expected_spot_cost_usd) &&
              close(byRun["mixed: start on spot, move to on-demand when behind"]?.[2], plan.expected_mixed_cost_usd) &&
              byRun["mixed: start on spot, move to on-demand when behind"]?.[4] === "true",
              `the spot CSV is the table's 4 rows at the API's hours and costs, the mixed run marked recommended (${spotCsv.length - 1} rows)`);
    }
    const spotHours = await page.textContent("[data-testid=row-spot-expected] td:nth-child(2)");
    check(/days\)$/.test(spotHours), `${width} px: spot hours also in days ("${spotHours}")`);
    await checkClean(page, `spot at ${width} px, mixed`);
    (await fromUrl(page, `${width} px, spot (mixed)`, attrOf("[data-testid=savings]"), mixedSaving))?.close();
    const back = { "s-hours": "100", "s-nodes": "1", "s-deadline": "130", "s-rate": "0.05" };
    for (const [id, v] of Object.entries(back)) await page.fill(`[data-testid=${id}]`, v);
}

// An offering picked from a list: typed prices give way to the offering's (and are not shown);
// the plan is the API's for that id, and names the on-demand offering it compared with.
async function spotPick(page, width) {
    await showTab(page, "spot");
    await page.selectOption("[data-testid=s-source]", "offering").catch(() => {});
    check(!(await page.isVisible("[data-testid=s-od]")) && !(await page.isVisible("[data-testid=s-rate]")),
          `${width} px, spot from an offering: the typed prices and rate are not shown`);
    // Spot offerings without Spot Advisor data (GCP's, among others) plan at the worst bucket,
    // so the list offers them too.
    await page.fill("[data-testid=s-picker-search]", "gcp spot", { timeout: 3000 }).catch(() => {});
    const gcpListed = await page.locator("[data-testid=s-picker-list] button").first()
        .waitFor({ timeout: 5000 }).then(() => true).catch(() => false);
    check(gcpListed, `${width} px, spot: offerings without interruption data are in the list too`);
    const id = await pickOffering(page, "s-picker", "h100 aws");
    check(id !== null && (await page.inputValue("[data-testid=s-offering]").catch(() => "")) === id,
          `${width} px, spot: an offering picked from the list fills the offering (${id})`);
    await page.click("[data-testid=spot-form] button[type=submit]");
    const plan = await postJson("/v1/plans/spot", { job_hours: 100, nodes: 1, checkpoint_minutes: 5, restart_minutes: 10,
                                                     deadline_hours: 130, spot_offering_id: id });
    const named = await page.waitForSelector("[data-testid=spot-results] [data-testid=on-demand-offering]", { timeout: 10000 })
        .then(() => page.textContent("[data-testid=on-demand-offering]")).catch(() => "");
    const cost = await page.getAttribute("[data-testid=row-spot-expected] td:nth-child(3)", "data-value", { timeout: 2000 }).catch(() => null);
    check(close(cost, plan.expected_spot_cost_usd) && named === plan.on_demand_offering_id,
          `${width} px, spot on ${id}: the API's expected cost, compared with ${plan.on_demand_offering_id} (shown: "${named}")`);
    await checkClean(page, `spot at ${width} px, from an offering`);
    await page.selectOption("[data-testid=s-source]", "hand").catch(() => {});
}

async function pickOffering(page, picker, words) {
    try {
        await page.fill(`[data-testid=${picker}-search]`, words, { timeout: 3000 });
        const first = page.locator(`[data-testid=${picker}-list] button`).first();
        await first.waitFor({ timeout: 10000 });
        const id = await first.getAttribute("data-id");
        await first.click();
        return id;
    } catch {
        return null;
    }
}

async function rentPick(page, width) {
    await showTab(page, "rent-vs-buy");
    const id = await pickOffering(page, "r-picker", "h100 gcp 3-year");
    check(id !== null && (await page.inputValue("[data-testid=r-offering]")) === id,
          `${width} px, rent vs buy: an offering picked from the list fills the offering (${id})`);
    await page.click("[data-testid=rentbuy-form] button[type=submit]");
    const plan = await postJson("/v1/plans/rent-vs-buy", {
        buy: { accelerator: "h100-sxm", total_accelerators: 16, utilization: 0.7 },
        rent: { offering_id: id }, horizon_months: 60, discount_rate_annual: 0.08 });
    await page.waitForFunction((n) => document.querySelectorAll("[data-testid=rent-options] tbody tr").length === n,
                               plan.rent_options?.length ?? 0, { timeout: 10000 }).catch(() => {});
    const be = await page.getAttribute("[data-testid=break-even-months]", "data-value", { timeout: 2000 }).catch(() => null);
    const rows = await page.$$eval("[data-testid=rent-options] tbody tr", (r) => r.length);
    check(id !== null && (plan.break_even_months === null ? be === "" : close(be, plan.break_even_months)) &&
          rows === (plan.rent_options?.length ?? 0) && rows > 0,
          `${width} px, rent vs buy on ${id}: the API's break-even and its ${rows} rent options`);
    await checkClean(page, `rent vs buy at ${width} px, from a picked offering`);
    await page.fill("[data-testid=r-offering]", "aws-p5.48xlarge-us-east-1-on-demand").catch(() => {});
}

async function serving(page) {
    await showTab(page, "serving");
    await page.click("[data-testid=serving-form] button[type=submit]");
    const plan = await postJson("/v1/plans/inference", { model: "llama-3.1-8b", precision: "bf16", input_tokens: 1000,
        output_tokens: 250, traffic: { requests_per_second: 5 },
        latency: { max_time_to_first_token_ms: 1000, max_inter_token_latency_ms: 50 },
        constraints: { price_types: ["on_demand"] },
        api_price: { usd_per_million_input_tokens: 0.2, usd_per_million_output_tokens: 0.6 }, limit: 15 });
    await page.waitForSelector("[data-testid=serving-options] tbody tr");
    const rows = await page.$$eval("[data-testid=serving-options] tbody tr",
                                   (r) => r.map((x) => [x.dataset.id, Number(x.children[11].dataset.value)]));
    check(rows.length === plan.options.length &&
          rows.every(([id, v], i) => id === plan.options[i].offering.id && close(v, plan.options[i].usd_per_million_output_tokens)),
          `the options and their USD per million output tokens are the API's (${rows.length})`);
    (await fromUrl(page, "serving plan", attrOf("[data-testid=serving-options] tbody tr", "data-id"), plan.options[0].offering.id))?.close();
    const barsDrawn = await page.$$eval("[data-testid=serving-results] [data-testid=options-chart] svg .bar", (b) => b.map((x) => Number(x.dataset.x)));
    check(barsDrawn.length === plan.options.length && barsDrawn.every((v, i) => close(v, plan.options[i].usd_per_million_output_tokens)),
          "the bar chart draws the same figures");
    const ref = await page.$$eval("[data-testid=serving-results] [data-testid=options-chart] svg .ref", (g) => g.map((x) => Number(x.dataset.value)));
    check(ref.length === 1 && ref[0] === 0.6, "the API price it compares with is drawn");
    await servingMonthly(page, plan, "from the defaults (12 months from today)");
    await checkClean(page, "serving at 1280 px");
    await screenshots(page, "serving-monthly", "#panel-serving [data-testid=monthly]");
    await screenshots(page, "serving", "[data-testid=serving-results] figure");
    // Only the providers ticked: AWS.
    await page.check("[data-testid=serving-form] input[name='/constraints/providers'][value=aws]").catch(() => {});
    await page.click("[data-testid=serving-form] button[type=submit]");
    const awsOnly = await postJson("/v1/plans/inference", { model: "llama-3.1-8b", precision: "bf16", input_tokens: 1000,
        output_tokens: 250, traffic: { requests_per_second: 5 },
        latency: { max_time_to_first_token_ms: 1000, max_inter_token_latency_ms: 50 },
        constraints: { price_types: ["on_demand"], providers: ["aws"] },
        api_price: { usd_per_million_input_tokens: 0.2, usd_per_million_output_tokens: 0.6 }, limit: 15 });
    await page.waitForFunction((id) => document.querySelector("[data-testid=serving-options] tbody tr")?.dataset.id === id,
                               awsOnly.options[0]?.offering.id, { timeout: 10000 }).catch(() => {});
    const awsRows = await page.$$eval("[data-testid=serving-options] tbody tr", (r) => r.map((x) => x.dataset.id));
    check(awsRows.length > 0 && JSON.stringify(awsRows) === JSON.stringify(awsOnly.options.map((o) => o.offering.id)),
          `serving for AWS only: the API's ${awsRows.length} AWS options`);
    await page.uncheck("[data-testid=serving-form] input[name='/constraints/providers'][value=aws]").catch(() => {});
    // 4-bit weights with 16-bit math (weight_precision): the API's figures for that request.
    await page.selectOption("[data-testid=v-weight-precision]", "fp4").catch(() => {});
    await page.click("[data-testid=serving-form] button[type=submit]");
    const w4 = await postJson("/v1/plans/inference", { model: "llama-3.1-8b", precision: "bf16", weight_precision: "fp4",
        input_tokens: 1000, output_tokens: 250, traffic: { requests_per_second: 5 },
        latency: { max_time_to_first_token_ms: 1000, max_inter_token_latency_ms: 50 },
        constraints: { price_types: ["on_demand"] },
        api_price: { usd_per_million_input_tokens: 0.2, usd_per_million_output_tokens: 0.6 }, limit: 15 });
    const w4First = w4.options[0]?.usd_per_million_output_tokens;
    await page.waitForFunction((v) => {
        const cell = document.querySelector("[data-testid=serving-options] tbody tr:first-child")?.children[11];
        return cell !== undefined && Math.abs(Number(cell.dataset.value) - v) <= 1e-9 * Math.max(1, v);
    }, w4First, { timeout: 10000 }).catch(() => {});
    const w4Rows = await page.$$eval("[data-testid=serving-options] tbody tr",
                                     (r) => r.map((x) => [x.dataset.id, Number(x.children[11].dataset.value)]));
    check(w4Rows.length === w4.options.length && w4.options.length > 0 &&
          w4Rows.every(([id, v], i) => id === w4.options[i].offering.id && close(v, w4.options[i].usd_per_million_output_tokens)) &&
          w4First !== plan.options[0].usd_per_million_output_tokens,
          `serving with 4-bit weights and bf16 math: the API's ${w4Rows.length} options (weight_precision fp4), ` +
          `first at ${w4First} against ${plan.options[0].usd_per_million_output_tokens} with 16-bit weights`);
    await page.selectOption("[data-testid=v-weight-precision]", "").catch(() => {});
    // A quantised release (gpt-oss: checkpoint_precision fp4) is served as stored: the default
    // option says so for it and not for a 16-bit model.
    await page.selectOption("[data-testid=v-model]", "gpt-oss-120b").catch(() => {});
    const storedLabel = await page.$eval("[data-testid=v-weight-precision] option[value='']", (o) => o.textContent);
    await page.selectOption("[data-testid=v-model]", "llama-3.1-8b").catch(() => {});
    const plainLabel = await page.$eval("[data-testid=v-weight-precision] option[value='']", (o) => o.textContent);
    check(storedLabel.includes("checkpoint stores them (fp4)") && plainLabel === "as the precision",
          `the weights' default names gpt-oss's stored width ("${storedLabel}"), a 16-bit model's the precision ("${plainLabel}")`);
    await page.fill("[data-testid=v-in]", "0");
    await page.click("[data-testid=serving-form] button[type=submit]");
    const err = await fieldError(page, "serving-form", "/input_tokens");
    check(err.described === 1, `input_tokens = 0: the error is at its field ("${err.text}")`);
    await page.fill("[data-testid=v-in]", "1000");
}

// The serving plan's cash by calendar month: the table, the bars and the total
// are the API's budget view, each month's days those of [start_date, end_date).
async function readServingMonthly(p) {
    return p.evaluate(() => ({
        rows: [...document.querySelectorAll("#panel-serving [data-testid=monthly] tbody tr")].map((x) =>
            ({ month: x.dataset.month, days: Number(x.children[1]?.textContent), usd: Number(x.children[2]?.dataset.value) })),
        bars: [...document.querySelectorAll("#panel-serving [data-testid=monthly-chart] svg .bar")].map((x) => Number(x.dataset.x)),
        total: document.querySelector("#panel-serving [data-testid=budget-total]")?.dataset.value ?? null,
    }));
}
async function servingMonthly(page, plan, what) {
    const b = plan.budget;
    const shown = await readServingMonthly(page);
    const dayMs = 86400000;
    const span = b ? (Date.parse(b.end_date) - Date.parse(b.start_date)) / dayMs : NaN;
    check(b !== null && b !== undefined && shown.rows.length === b.monthly.length && shown.rows.length > 0 &&
          shown.rows.every((r, i) => r.month === b.monthly[i].month && close(r.usd, b.monthly[i].usd)) &&
          shown.bars.length === b.monthly.length && shown.bars.every((v, i) => close(v, b.monthly[i].usd)) &&
          close(shown.total, b.total_usd) && shown.rows.reduce((n, r) => n + r.days, 0) === span,
          `serving ${what}: the cash by calendar month (table, bars, total) is the API's budget ` +
          `(${shown.rows.length} months ${b?.monthly[0]?.month}..${b?.monthly.at(-1)?.month}, ${span} days, total ${b?.total_usd})`);
    const cents = (v) => Math.round(Number(v) * 100);
    check(b && b.monthly.every((m, i) => Math.abs(cents(m.usd) - shown.rows[i].days * b.usd_per_day * 100) <= 1),
          `serving ${what}: each month is its days × the API's ${b?.usd_per_day} USD a day, within a cent`);
}

// Serving's budget view with a start date and months typed: the API's for the same request, and
// reproduced from the URL.
async function servingBudget(page) {
    await showTab(page, "serving");
    await page.fill("[data-testid=v-months]", "3", { timeout: 3000 }).catch(() => {});
    await page.fill("[data-testid=v-start]", "2027-01-15", { timeout: 3000 }).catch(() => {});
    await page.click("[data-testid=serving-form] button[type=submit]");
    const plan = await postJson("/v1/plans/inference", { model: "llama-3.1-8b", precision: "bf16", input_tokens: 1000,
        output_tokens: 250, traffic: { requests_per_second: 5 },
        latency: { max_time_to_first_token_ms: 1000, max_inter_token_latency_ms: 50 },
        constraints: { price_types: ["on_demand"] },
        api_price: { usd_per_million_input_tokens: 0.2, usd_per_million_output_tokens: 0.6 }, limit: 15,
        budget_months: 3, start_date: "2027-01-15" });
    await page.waitForFunction((v) => document.querySelector("#panel-serving [data-testid=budget-total]")?.dataset.value === String(v),
                               plan.budget?.total_usd, { timeout: 15000 }).catch(() => {});
    check(plan.budget?.start_date === "2027-01-15" && plan.budget?.end_date === "2027-04-15" &&
          JSON.stringify(plan.budget.monthly.map((m) => m.month)) === JSON.stringify(["2027-01", "2027-02", "2027-03", "2027-04"]),
          `the API's serving budget for 3 months from 2027-01-15 runs to 2027-04-15 over 4 calendar months`);
    await servingMonthly(page, plan, "for 3 months from 2027-01-15");
    const again = await fromUrl(page, "serving's cash by month", attrOf("#panel-serving [data-testid=budget-total]"), plan.budget?.total_usd);
    if (again) {
        const shown = await readServingMonthly(again);
        check(JSON.stringify(shown.rows.map((r) => r.month)) === JSON.stringify(plan.budget.monthly.map((m) => m.month)),
              "serving's cash by month after a reload: the same months");
        await again.close();
    }
    await page.fill("[data-testid=v-months]", "0", { timeout: 3000 }).catch(() => {});
    await page.click("[data-testid=serving-form] button[type=submit]");
    const err = await fieldError(page, "serving-form", "/budget_months").catch(() => ({ text: "", described: 0 }));
    check(err.described === 1 && /between 1 and 60/.test(err.text) && !err.text.includes("budget_months"),
          `0 months of cash: the API's error at its control, in the form's words ("${err.text}")`);
    await page.fill("[data-testid=v-months]", "12", { timeout: 3000 }).catch(() => {});
    await page.fill("[data-testid=v-start]", "", { timeout: 3000 }).catch(() => {});
    await servingConfidence(page);
}

// Sizing to a probability of carrying the traffic: out of range is the API's error at its
// control; in range the plan echoes it.
async function servingConfidence(page) {
    await page.fill("[data-testid=v-confidence]", "2", { timeout: 3000 }).catch(() => {});
    await page.click("[data-testid=serving-form] button[type=submit]");
    const err = await fieldError(page, "serving-form", "/uncertainty/traffic_confidence").catch(() => ({ text: "", described: 0 }));
    check(err.described === 1 && /0\.999/.test(err.text),
          `a traffic confidence of 2: the API's error at its control ("${err.text}")`);
    await page.fill("[data-testid=v-confidence]", "0.99", { timeout: 3000 }).catch(() => {});
    await page.click("[data-testid=serving-form] button[type=submit]");
    const echoed = await page.waitForFunction(() => (document.querySelector("[data-testid=serving-results]")?.textContent ?? "")
        .includes("traffic_confidence"), null, { timeout: 15000 }).then(() => true).catch(() => false);
    check(echoed, "a traffic confidence of 0.99: the plan's answer names traffic_confidence");
    await page.fill("[data-testid=v-confidence]", "", { timeout: 3000 }).catch(() => {});
}

// Filters. Training: accelerators, the cluster's size, verified and recent
// prices only; the plan is the API's for the same constraints.
async function trainingFilters(page) {
    await showTab(page, "training");
    await page.check("[data-testid=training-form] input[name='/constraints/accelerators'][value=h100-sxm]", { timeout: 3000 }).catch(() => {});
    await page.fill("[data-testid=t-min-acc]", "16", { timeout: 3000 }).catch(() => {});
    await page.check("[data-testid=training-form] input[name='/constraints/verified_only']", { timeout: 3000 }).catch(() => {});
    await page.fill("[data-testid=t-max-age]", "180", { timeout: 3000 }).catch(() => {});
    await page.fill("[data-testid=t-regions]", "us-east4, north-america", { timeout: 3000 }).catch(() => {});
    await page.click("[data-testid=training-form] button[type=submit]");
    const plan = await postJson("/v1/plans/training", { model: "llama-3.1-8b", tokens_b: 100, mode: "pretrain", precision: "bf16",
        constraints: { deadline_hours: 720, budget_usd: 150000, price_types: ["on_demand", "spot"], accelerators: ["h100-sxm"],
                       min_total_accelerators: 16, verified_only: true, max_price_age_days: 180,
                       regions: ["us-east4", "north-america"] }, limit: 200 });
    const want = plan.options.slice(0, 20).map((o) => `${o.offering.id}/${o.nodes}`);
    await page.waitForFunction((w) => [...document.querySelectorAll("[data-testid=options] tbody tr")]
        .map((x) => `${x.dataset.id}/${x.dataset.nodes}`).join(",") === w, want.join(","), { timeout: 15000 }).catch(() => {});
    const rows = await page.$$eval("[data-testid=options] tbody tr", (r) => r.map((x) => `${x.dataset.id}/${x.dataset.nodes}`));
    const recCost = await page.getAttribute("[data-testid=rec-cost]", "data-value").catch(() => null);
    check(plan.options.length > 0 && JSON.stringify(rows) === JSON.stringify(want) && close(recCost, plan.recommendation.expected_cost_usd) &&
          plan.options.every((o) => o.offering.accelerator === "h100-sxm" && o.total_accelerators >= 16 &&
                             ["us-east4", "north-america"].includes(o.offering.region)),
          `training on H100 SXM only in us-east4 or north-america, 16 or more accelerators, verified prices at most 180 days old: the API's ${plan.total_count} options and recommendation (${recCost})`);
    const again = await fromUrl(page, "training with filters", attrOf("[data-testid=rec-cost]"), plan.recommendation.expected_cost_usd);
    await again?.close();
    await page.uncheck("[data-testid=training-form] input[name='/constraints/accelerators'][value=h100-sxm]", { timeout: 3000 }).catch(() => {});
    await page.uncheck("[data-testid=training-form] input[name='/constraints/verified_only']", { timeout: 3000 }).catch(() => {});
    await page.fill("[data-testid=t-min-acc]", "", { timeout: 3000 }).catch(() => {});
    await page.fill("[data-testid=t-max-age]", "", { timeout: 3000 }).catch(() => {});
    await page.fill("[data-testid=t-regions]", "", { timeout: 3000 }).catch(() => {});
}

// Two scenarios side by side: a result pinned as A, the next one (B) beside
// it; the inputs and figures are the API's and the rows that differ are marked.
async function trainingCompare(page) {
    await showTab(page, "training");
    const body = { model: "llama-3.1-8b", tokens_b: 100, mode: "pretrain", precision: "bf16",
                   constraints: { deadline_hours: 720, budget_usd: 150000, price_types: ["on_demand", "spot"] }, limit: 200 };
    const [planA, planB] = [await postJson("/v1/plans/training", body), await postJson("/v1/plans/training", { ...body, tokens_b: 200 })];
    await page.fill("[data-testid=t-tokens]", "100", { timeout: 3000 }).catch(() => {});
    await page.click("[data-testid=training-form] button[type=submit]");
    await page.waitForFunction((v) => Number(document.querySelector("[data-testid=rec-cost]")?.dataset.value) === v,
                               planA.recommendation.expected_cost_usd, { timeout: 15000 }).catch(() => {});
    const pinned = await page.click("[data-testid=training-results] [data-testid=pin-a]", { timeout: 5000 }).then(() => true, () => false);
    await page.fill("[data-testid=t-tokens]", "200", { timeout: 3000 }).catch(() => {});
    await page.click("[data-testid=training-form] button[type=submit]");
    const rows = await page.waitForSelector("[data-testid=compare-table]", { timeout: 15000 })
        .then(() => page.$$eval("[data-testid=compare-table] tbody tr[data-label]", (r) => r.map((x) => ({
            label: x.dataset.label, kind: x.dataset.kind, diff: x.classList.contains("diff"),
            a: x.children[1].dataset.value ?? x.children[1].textContent, b: x.children[2].dataset.value ?? x.children[2].textContent,
            mark: x.children[3].textContent }))))
        .catch(() => []);
    const row = (l) => rows.find((r) => r.label === l) ?? {};
    const tokens = row("Training tokens (billions)"), model = row("Model"), cost = row("Recommended run's expected cost");
    check(pinned && tokens.diff && tokens.a === "100" && tokens.b === "200" && /differs/.test(tokens.mark) && model.diff === false &&
          cost.diff && close(cost.a, planA.recommendation.expected_cost_usd) && close(cost.b, planB.recommendation.expected_cost_usd) &&
          cost.mark.includes("+"),
          `training, A (100 B tokens) pinned and B (200 B tokens) side by side: the tokens row marked as differing, the model not, ` +
          `the API's expected costs (${cost.a} and ${cost.b}, "${cost.mark}")`);
    await accessible(page, "training with A and B side by side");
    // The link reproduces the comparison: A's inputs are in the URL beside B's.
    const url = page.url();
    const fresh = await page.context().newPage();
    await fresh.setViewportSize(page.viewportSize());
    const readCompare = (p) => p.waitForSelector("[data-testid=compare-table]", { timeout: 30000 })
        .then(() => p.waitForFunction((v) => Number(document.querySelector("[data-testid=rec-cost]")?.dataset.value) === v,
                                      planB.recommendation.expected_cost_usd, { timeout: 30000 }))
        .then(() => p.$$eval("[data-testid=compare-table] tbody tr[data-label]", (r) => Object.fromEntries(r.map((x) => [x.dataset.label, {
            a: x.children[1].dataset.value ?? x.children[1].textContent, b: x.children[2].dataset.value ?? x.children[2].textContent,
            diff: x.classList.contains("diff") }]))))
        .catch(() => ({}));
    const same = (rs) => rs["Training tokens (billions)"]?.a === "100" && rs["Training tokens (billions)"]?.b === "200" &&
        rs["Training tokens (billions)"]?.diff && close(rs["Recommended run's expected cost"]?.a, planA.recommendation.expected_cost_usd) &&
        close(rs["Recommended run's expected cost"]?.b, planB.recommendation.expected_cost_usd);
    await fresh.goto(url).catch(() => {});
    const opened = await readCompare(fresh);
    await fresh.reload().catch(() => {});
    const reloaded = await readCompare(fresh);
    check(/[?&]compare_a=/.test(url) && same(opened) && same(reloaded),
          `training, A and B side by side: the link (A's inputs in the URL, ${url.slice(url.indexOf("#"), url.indexOf("#") + 50)}…) ` +
          `opened and reloaded shows the same comparison, the API's costs (${reloaded["Recommended run's expected cost"]?.a} and ` +
          `${reloaded["Recommended run's expected cost"]?.b})`);
    await fresh.close();
    await page.click("[data-testid=training-results] [data-testid=clear-a]", { timeout: 3000 }).catch(() => {});
    check(await page.locator("[data-testid=compare-table]").count() === 0 && !page.url().includes("compare_a="),
          "Clear A drops the comparison, and A from the URL");
    await page.fill("[data-testid=t-tokens]", "100", { timeout: 3000 }).catch(() => {});
}

// Serving's region and accelerator filters: the API's options for the same constraints.
async function servingFilters(page) {
    await showTab(page, "serving");
    await page.fill("[data-testid=v-regions]", "us-east-1", { timeout: 3000 }).catch(() => {});
    for (const a of ["h100-sxm", "a100-sxm4-80gb"]) {
        await page.check(`[data-testid=serving-form] input[name='/constraints/accelerators'][value=${a}]`, { timeout: 3000 }).catch(() => {});
    }
    await page.check("[data-testid=serving-form] input[name='/constraints/verified_only']", { timeout: 3000 }).catch(() => {});
    await page.fill("[data-testid=v-max-age]", "365", { timeout: 3000 }).catch(() => {});
    await page.click("[data-testid=serving-form] button[type=submit]");
    const plan = await postJson("/v1/plans/inference", { model: "llama-3.1-8b", precision: "bf16", input_tokens: 1000,
        output_tokens: 250, traffic: { requests_per_second: 5 },
        latency: { max_time_to_first_token_ms: 1000, max_inter_token_latency_ms: 50 },
        constraints: { price_types: ["on_demand"], regions: ["us-east-1"], accelerators: ["h100-sxm", "a100-sxm4-80gb"],
                       verified_only: true, max_price_age_days: 365 },
        api_price: { usd_per_million_input_tokens: 0.2, usd_per_million_output_tokens: 0.6 }, limit: 15 });
    const want = plan.options.map((o) => o.offering.id).join(",");
    await page.waitForFunction((w) => [...document.querySelectorAll("[data-testid=serving-options] tbody tr")]
        .map((x) => x.dataset.id).join(",") === w, want, { timeout: 15000 }).catch(() => {});
    const rows = await page.$$eval("[data-testid=serving-options] tbody tr", (r) => r.map((x) => x.dataset.id));
    check(rows.length > 0 && rows.join(",") === want &&
          plan.options.every((o) => o.offering.region === "us-east-1" && ["h100-sxm", "a100-sxm4-80gb"].includes(o.offering.accelerator)),
          `serving in us-east-1 on H100 SXM or A100 80 GB only, verified prices at most 365 days old: the API's ${rows.length} options (${rows.join(", ")})`);
    (await fromUrl(page, "serving with filters", attrOf("[data-testid=serving-options] tbody tr", "data-id"), plan.options[0]?.offering.id))?.close();
    await page.fill("[data-testid=v-regions]", "", { timeout: 3000 }).catch(() => {});
    await page.uncheck("[data-testid=serving-form] input[name='/constraints/verified_only']", { timeout: 3000 }).catch(() => {});
    await page.fill("[data-testid=v-max-age]", "", { timeout: 3000 }).catch(() => {});
    for (const a of ["h100-sxm", "a100-sxm4-80gb"]) {
        await page.uncheck(`[data-testid=serving-form] input[name='/constraints/accelerators'][value=${a}]`, { timeout: 3000 }).catch(() => {});
    }
}

// The result on screen, reproduced from its URL: the same URL in a fresh page, then reloaded,
// shows the same figure. `read` returns the figure from a page (null when absent).
async function fromUrl(page, what, read, expected) {
    const url = page.url();
    const fresh = await page.context().newPage();
    await fresh.setViewportSize(page.viewportSize());
    let got = null;
    try {
        await fresh.goto(url);
        await fresh.waitForSelector("body[data-ready=true]");
        await fresh.reload();
        await fresh.waitForSelector("body[data-ready=true]");
        got = await read(fresh);
        const ok = check(got !== null && (typeof expected === "number" ? close(got, expected) : got === expected),
                         `${what}: reproduced from its URL after a reload (${url.slice(url.indexOf("#"), url.indexOf("#") + 60)}…)`);
        return ok ? fresh : (await fresh.close(), null);
    } catch (e) {
        check(false, `${what}: reproduced from its URL after a reload (${e.message.split("\n")[0]})`);
        await fresh.close();
        return null;
    }
}
const attrOf = (selector, attr = "data-value") => async (p) =>
    p.waitForSelector(selector, { timeout: 15000 }).then(() => p.getAttribute(selector, attr)).catch(() => null);

// Printing: the result with its inputs, catalog version and price dates; no tabs, form or buttons.
async function printed(page, what) {
    await page.emulateMedia({ media: "print" });
    const shown = await page.evaluate(() => {
        const visible = (sel) => [...document.querySelectorAll(sel)].some((el) => el.getClientRects().length > 0);
        return { nav: visible("nav"), form: visible("form"), button: visible("button"),
                 inputs: [...document.querySelectorAll("[data-testid=printed-inputs]")].find((el) => el.getClientRects().length > 0)?.innerText ?? "" };
    });
    check(!shown.nav && !shown.form && !shown.button && /Inputs/.test(shown.inputs) && /Catalog version \w+/.test(shown.inputs) &&
          /Prices dated \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d/.test(shown.inputs),
          `${what} printed: no tabs, form or buttons; the inputs, catalog version and price dates (${shown.inputs.replace(/\s+/g, " ").slice(0, 90)}…)`);
    await page.emulateMedia({ media: "screen" });
}

// The charts as drawn at this width: as wide as the view (not stopped at 760 px), labels at a
// readable size (>= 10 px), every label inside its chart, the y-axis title clear of the tick
// labels; line charts show their values from the keyboard, a dashed series has a dashed legend mark.
async function chartsRead(page, tab, width) {
    const charts = await page.$$eval(`#panel-${tab} svg.chart`, (svgs) => svgs.map((s) => {
        const box = s.getBoundingClientRect();
        const texts = [...s.querySelectorAll("text")].filter((t) => t.textContent && t.getClientRects().length > 0 &&
                                                              !t.closest("[visibility=hidden]"));
        const small = texts.filter((t) => t.getBoundingClientRect().height < 10).map((t) => t.textContent);
        const outside = texts.filter((t) => {
            const r = t.getBoundingClientRect();
            return r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1;
        }).map((t) => t.textContent);
        const yTitle = s.querySelector("[data-testid=y-label]")?.getBoundingClientRect();
        const overlap = yTitle ? texts.filter((t) => t.dataset.testid !== "y-label" && (() => {
            const r = t.getBoundingClientRect();
            return r.left < yTitle.right && r.right > yTitle.left && r.top < yTitle.bottom && r.bottom > yTitle.top;
        })()).map((t) => t.textContent) : [];
        return { width: box.width, small, outside, overlap };
    }));
    const view = await page.$eval(`#panel-${tab}`, (p) => p.getBoundingClientRect().width);
    check(charts.length > 0 && charts.every((c) => c.width >= Math.min(view, 1232) - 2),
          `${tab} at ${width} px: charts use the view's width (${charts.map((c) => c.width.toFixed(0)).join(", ")} of ${view.toFixed(0)} px)`);
    check(charts.every((c) => c.small.length === 0), `${tab} at ${width} px: chart labels at least 10 px high (${charts.flatMap((c) => c.small).slice(0, 3).join(", ")})`);
    check(charts.every((c) => c.outside.length === 0), `${tab} at ${width} px: no chart label cut at the chart's edge (${charts.flatMap((c) => c.outside).slice(0, 3).join(", ")})`);
    check(charts.every((c) => c.overlap.length === 0), `${tab} at ${width} px: the y-axis title clear of the tick labels (${charts.flatMap((c) => c.overlap).slice(0, 3).join(", ")})`);
    if (tab === "training") {
        // The scatter from the keyboard: Home is the fastest option, the arrow keys step on.
        const xs = await page.$$eval("#panel-training svg.chart .points circle", (c) => c.map((x) => Number(x.dataset.x)));
        await page.focus("#panel-training svg.chart").catch(() => {});
        await page.keyboard.press("Home");
        const first = await page.$eval("#panel-training svg.chart [data-testid=readout]", (g) => ({
            visible: g.getAttribute("visibility") === "visible", x: Number(g.dataset.x), text: g.textContent,
            live: g.closest("svg").querySelector("desc[aria-live]")?.textContent ?? "" })).catch(() => ({}));
        await page.keyboard.press("ArrowRight");
        const second = await page.$eval("#panel-training svg.chart [data-testid=readout]", (g) => Number(g.dataset.x)).catch(() => NaN);
        check(first.visible && close(first.x, Math.min(...xs)) && second >= first.x && /\$[0-9]/.test(first.text) &&
              new RegExp(`point 1 of ${xs.length}`).test(first.live),
              `training at ${width} px: the scatter reads out its points from the keyboard (Home: "${(first.live ?? "").slice(0, 80)}…")`);
        const inside = await page.$eval("#panel-training svg.chart", (s) => {
            const box = s.getBoundingClientRect();
            return [...s.querySelectorAll("[data-testid=readout] text")].every((t) => {
                const r = t.getBoundingClientRect();
                return r.left >= box.left - 1 && r.right <= box.right + 1;
            });
        }).catch(() => false);
        check(inside, `training at ${width} px: the scatter's readout stays inside the chart`);
        await page.keyboard.press("Tab");
    }
    if (tab !== "rent-vs-buy") return;
    const dashed = await page.$$eval(`#panel-${tab} .legend li`, (li) => li.filter((x) => x.textContent.includes("net of resale"))
        .map((x) => { const m = x.querySelector("line, path, svg *"); return m ? getComputedStyle(m).strokeDasharray : "none"; }));
    check(dashed.length === 1 && dashed[0] !== "none", `${tab} at ${width} px: the dashed series has a dashed legend mark (${dashed[0]})`);
    await page.focus(`#panel-${tab} svg.chart`).catch(() => {});
    await page.keyboard.press("ArrowLeft");
    const shown = await page.$eval(`#panel-${tab} [data-testid=readout]`, (g) => g.getAttribute("visibility") === "visible" ? g.textContent : "")
        .catch(() => "");
    check(/months from purchase: \d+/.test(shown) && /rent: \$/.test(shown),
          `${tab} at ${width} px: the chart reads out its values from the keyboard ("${shown.slice(0, 70)}")`);
}

// A resized window redraws the charts at their new width (no new request): each chart's drawing
// is as wide as it is shown, and still draws the same points.
async function chartsResize(page, tab) {
    const before = await page.$$eval(`#panel-${tab} svg.chart`, (s) => s.map((x) => x.querySelectorAll(".points [data-x], .bar").length));
    await page.setViewportSize({ width: 800, height: 860 });
    await page.waitForFunction((t) => [...document.querySelectorAll(`#panel-${t} svg.chart`)].every((s) =>
        Math.abs(s.viewBox.baseVal.width - s.getBoundingClientRect().width) <= 2), tab, { timeout: 5000 }).catch(() => {});
    const after = await page.$$eval(`#panel-${tab} svg.chart`, (s) => s.map((x) => ({
        drawn: x.viewBox.baseVal.width, shown: x.getBoundingClientRect().width, marks: x.querySelectorAll(".points [data-x], .bar").length })));
    check(after.length > 0 && after.every((c, i) => Math.abs(c.drawn - c.shown) <= 2 && c.marks === before[i]),
          `${tab}, window resized from 1280 to 800 px: the charts are redrawn at their new width (${after.map((c) => `${c.drawn.toFixed(0)} drawn, ${c.shown.toFixed(0)} shown`).join("; ")}), the same marks`);
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.waitForTimeout(400);
}

// axe-core's WCAG 2.0/2.1 A and AA rules on the view as it stands (evaluated through the
// debugging protocol, which the page's CSP does not govern).
const axeSource = (await import("node:fs")).readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
async function accessible(page, what) {
    await page.evaluate(axeSource);
    // Beside the WCAG rules, a table heading with no text (a best-practice rule).
    const violations = await page.evaluate(async () => [
        ...(await window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })).violations,
        ...(await window.axe.run(document, { runOnly: { type: "rule", values: ["empty-table-header"] } })).violations]
        .map((v) => `${v.id}: ${v.nodes.length} (${v.nodes[0]?.target.join(" ")})`));
    check(violations.length === 0, `${what}: axe-core (WCAG 2.1 AA) finds no violation (${violations.join("; ")})`);
}

// The page as a keyboard user, a dark-mode user and a reader of its sentences and charts meets
// it, each in a fresh page: no error in the console from the first load on, every view clean for
// axe-core in light and in dark (the system's colour scheme, emulated), dark colours applied, the
// training planner's button a few Tab presses from the top and the catalog's filters before its
// results, every value a form refuses said at its control at once and in words, money in
// sentences with thousands separators, no table that needs sideways scrolling at 1280 px, charts
// that keep their key in print, never cover the break-even label, tell their bars apart and do not
// cut their labels, provider names as GET /v1/providers gives them.
const kResults = { training: "training-results", "rent-vs-buy": "rentbuy-results", spot: "spot-results", serving: "serving-results" };
async function freshPage(browser, scheme, hash) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: scheme });
    const page = await context.newPage();
    const errors = [];
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${base}/${hash}`);
    await page.waitForSelector("body[data-ready=true]");
    return { page, errors };
}
// Tab presses from the top of the page until `done` holds for the focused element (at most
// `most`). The first press from the top lands on the page's first link (a skip link), which is
// focused here: a click on a tab would otherwise leave the browser counting on from the tab.
async function tabsTo(page, done, most, arg) {
    await page.evaluate(() => { window.scrollTo(0, 0); document.querySelector("body a[href]")?.focus(); });
    for (let n = 1; n <= most; n++) {
        if (await page.evaluate(done, arg)) return n;
        await page.keyboard.press("Tab");
    }
    return Infinity;
}
// Relative luminance of a computed CSS colour (rgb(...)).
const luminance = (css) => {
    const [r, g, b] = (css.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => {
        const c = Number(v) / 255;
        return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
// Money in the view's text without thousands separators ($64297, 5562.95 USD).
const unseparated = (text) => text.match(/\$\d{4,}(?:\.\d+)?|\b\d{4,}(?:\.\d+)? (?:USD|EUR)\b/g) ?? [];

async function polish(browser) {
    const started = Date.now();
    // Light: the first load and every view with no console error (a failed request included).
    const light = await freshPage(browser, "light", "#training");
    const { page } = light;
    const training = await tabsTo(page, () => document.activeElement?.matches("[data-testid=training-form] button[type=submit]"), 80);
    check(training <= 10, `from the top of the page, "Plan the run" is reached in ${training} Tab presses (at most 10)`);
    const presses = {};
    for (const [tab, form] of [["rent-vs-buy", "rentbuy-form"], ["spot", "spot-form"], ["serving", "serving-form"]]) {
        await showTab(page, tab);
        presses[tab] = await tabsTo(page, (f) => document.activeElement?.matches(`[data-testid=${f}] button[type=submit]`), 30, form);
    }
    check(presses["rent-vs-buy"] <= 10 && presses.spot <= 10,
          `rent vs buy's and spot's buttons within 10 Tab presses too (${presses["rent-vs-buy"]}, ${presses.spot}; serving ${presses.serving})`);
    await showTab(page, "training");
    await page.evaluate(() => document.activeElement?.blur());
    const skips = await page.$$eval("a[data-skip]", (a) => a.map((x) => x.textContent));
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    const intoForm = await page.evaluate(() => !!document.activeElement?.closest("#panel-training form"));
    check(skips.length >= 2 && intoForm, `skip links at the top (${skips.join(", ")}); the first takes the focus into the view's form`);
    const bg = await page.evaluate(() => [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]);
    check(luminance(bg[0]) > 0.8 && luminance(bg[1]) < 0.1, `light colour scheme: dark text on a light page (${bg.join(" on ")})`);
    await showTab(page, "catalog");
    const catalogFilters = await tabsTo(page, () => !!document.activeElement?.closest("[data-testid=catalog-form]"), 130);
    check(catalogFilters <= 10, `the catalog's filters come before its results: reached in ${catalogFilters} Tab presses from the top`);
    // Provider names are the API's (GET /v1/providers), in its order, in the filters and the tables.
    const providers = (await getJson("/v1/providers")).items;
    const boxes = await page.$$eval("[data-testid=catalog-form] input[name=provider]", (i) => i.map((x) => [x.value, x.parentElement.textContent.trim()]));
    check(JSON.stringify(boxes) === JSON.stringify(providers.map((p) => [p.id, p.name])),
          `the provider filter lists GET /v1/providers' names in its order (${boxes.map((b) => b[1]).join(", ")})`);
    for (const tab of ["training", "rent-vs-buy", "spot", "serving", "scenarios", "catalog"]) await showTab(page, tab);
    check(light.errors.length === 0, `light: no console error from the first load through every view (${light.errors.slice(0, 2).join(" | ")})`);
    // The form's faults all at once: four values the controls' bounds refuse, each said at its control.
    await showTab(page, "training");
    const bad = { "t-tokens": "-1", "t-min-acc": "0", "t-max-acc": "1.5", "t-max-age": "-3" };
    for (const [id, v] of Object.entries(bad)) await page.fill(`[data-testid=${id}]`, v);
    await page.click("[data-testid=training-form] button[type=submit]");
    await page.waitForSelector("[data-testid=training-form] .field-error", { timeout: 10000 }).catch(() => {});
    const errs = await page.$$eval("[data-testid=training-form] .field-error", (e) => e.map((x) => ({
        field: x.dataset.field, text: x.textContent,
        at: !!document.querySelector(`[aria-describedby="${x.id}"]`)?.closest(".field")?.contains(x) })));
    const wanted = ["/tokens_b", "/constraints/min_total_accelerators", "/constraints/max_total_accelerators", "/constraints/max_price_age_days"];
    check(wanted.every((f) => errs.some((e) => e.field === f && e.at)) && errs.every((e) => !/\/|_|“/.test(e.text)),
          `four bad values: each one's error at its own control, in words (${errs.map((e) => `"${e.text}"`).join(" ")})`);
    // The API's errors (422 names every field it refuses), each at its control, in words.
    for (const [id, v] of Object.entries(bad)) await page.fill(`[data-testid=${id}]`, id === "t-tokens" ? "100" : "");
    await page.fill("[data-testid=t-deadline]", "0");
    await page.selectOption("[data-testid=t-model-source]", "shape");
    await page.fill("[data-testid=t-params]", "0");
    await page.click("[data-testid=training-form] button[type=submit]");
    const api = await (await fetch(`${base}/v1/plans/training`, { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ model: { params_b: 0 }, tokens_b: 100, mode: "pretrain", precision: "bf16",
                               constraints: { deadline_hours: 0, budget_usd: 150000, price_types: ["on_demand", "spot"] }, limit: 200 }) })).json();
    await page.waitForSelector("[data-testid=training-form] .field-error", { timeout: 10000 }).catch(() => {});
    const serverErrs = await page.$$eval("[data-testid=training-form] .field-error", (e) => e.map((x) => ({ field: x.dataset.field, text: x.textContent })));
    check(api.errors.length > 0 && api.errors.every((a) => serverErrs.some((e) => e.field === a.field)) && serverErrs.every((e) => !/\/|_|[<>]=?/.test(e.text)),
          `the API's ${api.errors.length} refused fields (${api.errors.map((a) => a.field).join(", ")}), each at its control in words (${serverErrs.map((e) => `"${e.text}"`).join(" ")})`);
    await page.context().close();

    // Dark: every view with its result, axe-core clean, no console error, no table cut at 1280 px.
    const dark = await freshPage(browser, "dark", "#catalog");
    const dp = dark.page;
    const colours = await dp.evaluate(() => [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]);
    check(luminance(colours[0]) < 0.05 && luminance(colours[1]) > 0.6, `dark colour scheme: light text on a dark page (${colours.join(" on ")})`);
    const money = [];
    const cut = [];
    for (const tab of ["catalog", "training", "rent-vs-buy", "spot", "serving", "scenarios"]) {
        await showTab(dp, tab);
        if (kResults[tab]) {
            await dp.click(`#panel-${tab} form button[type=submit]`);
            await dp.waitForSelector(`[data-testid=${kResults[tab]}] [data-testid=recommendation]`, { timeout: 20000 }).catch(() => {});
        } else if (tab === "catalog") {
            await dp.waitForSelector("[data-testid=price-summary] tbody tr", { timeout: 10000 }).catch(() => {});
        }
        if (tab === "training") await screenshots(dp, "training-dark", "[data-testid=training-results] figure");
        money.push(...unseparated(await dp.innerText(`#panel-${tab}`)));
        cut.push(...await dp.$$eval(`#panel-${tab} .scroll`, (s, t) => s.filter((x) => x.scrollWidth > x.clientWidth + 1)
            .map((x) => `${t}: ${x.getAttribute("aria-label")} ${x.scrollWidth} in ${x.clientWidth} px`), tab));
    }
    // axe-core once over every view with its result, all shown at once (one run instead of six).
    await dp.evaluate(() => document.querySelectorAll("[role=tabpanel]").forEach((p) => { p.hidden = false; }));
    await accessible(dp, "every view in dark mode, with its result");
    await showTab(dp, "training");
    check(money.length === 0, `money in every view's text has thousands separators (${money.slice(0, 3).join(", ")})`);
    check(cut.length === 0, `at 1280 px no table is wider than the view (${cut.join("; ")})`);
    check(dark.errors.length === 0, `dark: no console error in any view (${dark.errors.slice(0, 2).join(" | ")})`);
    await polishCharts(dp);
    await dp.context().close();
    console.log(`# the light and dark fresh-page checks took ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

// The charts of the views drawn in `page` (training, rent vs buy, serving with their defaults).
async function polishCharts(page) {
    // Printed, the scatter keeps its key: drawn dots in the points' own colours (printers drop
    // backgrounds).
    await showTab(page, "training");
    await page.emulateMedia({ media: "print" });
    const key = await page.evaluate(() => {
        const fig = document.querySelector("[data-testid=training-results] figure:has(svg.chart .points)");
        const fillOf = (sel) => { const el = fig?.querySelector(sel); return el ? getComputedStyle(el).fill : "none"; };
        return [...(fig?.querySelectorAll(".legend li") ?? [])].map((li) => {
            const mark = li.querySelector("svg circle, svg line");
            return { name: li.textContent.trim(), shown: li.getClientRects().length > 0, fill: mark ? getComputedStyle(mark).fill : "none",
                     points: { "on-demand": fillOf(".pt.on_demand"), spot: fillOf(".pt.spot") }[li.textContent.trim()] };
        });
    });
    await page.emulateMedia({ media: "screen" });
    check(key.length >= 3 && key.every((k) => k.shown) && key.filter((k) => k.points).every((k) => k.fill === k.points && k.fill !== "none"),
          `the printed scatter keeps its colour key, drawn in the points' colours (${key.map((k) => `${k.name} ${k.fill}`).join(", ")})`);
    // Rent vs buy: the readout box, at every month, clear of the break-even label; the earlier
    // crossing of the dashed line explained.
    await showTab(page, "rent-vs-buy");
    const covered = await page.$eval("#panel-rent-vs-buy svg.chart", (svg) => {
        const label = svg.querySelector(".ref text")?.getBoundingClientRect();
        const box = svg.querySelector(".readout-box");
        if (!label || !box) return ["no break-even label or readout"];
        const out = [];
        svg.dispatchEvent(new FocusEvent("focus"));
        svg.dispatchEvent(new KeyboardEvent("keydown", { key: "Home" }));
        for (let i = 0; i < 400; i++) {
            const r = box.getBoundingClientRect();
            if (r.left < label.right && r.right > label.left && r.top < label.bottom && r.bottom > label.top) out.push(svg.querySelector("desc")?.textContent.slice(0, 30));
            const before = svg.querySelector("desc")?.textContent;
            svg.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight" }));
            if (svg.querySelector("desc")?.textContent === before) break;
        }
        svg.dispatchEvent(new FocusEvent("blur"));
        return out;
    });
    check(covered.length === 0, `rent vs buy: the value box covers the break-even label at no month (${covered.slice(0, 2).join(" | ")})`);
    const rb = await postJson("/v1/plans/rent-vs-buy", { buy: { accelerator: "h100-sxm", total_accelerators: 8, utilization: 0.7 },
        rent: { offering_id: "aws-p5.48xlarge-us-east-1-on-demand" }, horizon_months: 60, discount_rate_annual: 0.08 });
    const c = rb.cumulative;
    const k = c.findIndex((p, i) => i > 0 && c[i - 1].own_net_of_resale_usd > c[i - 1].rent_usd && p.own_net_of_resale_usd <= p.rent_usd);
    const d0 = c[k - 1]?.own_net_of_resale_usd - c[k - 1]?.rent_usd, d1 = c[k]?.own_net_of_resale_usd - c[k]?.rent_usd;
    const crossing = k > 0 ? c[k - 1].month + (c[k].month - c[k - 1].month) * d0 / (d0 - d1) : null;
    const said = await page.$eval("#panel-rent-vs-buy [data-testid=resale-crossing]", (p) => [Number(p.dataset.value), p.textContent]).catch(() => [NaN, ""]);
    check(crossing !== null && Math.abs(said[0] - crossing) < 1e-6 && said[1].includes(crossing.toFixed(1)) && /resale/.test(said[1]),
          `rent vs buy: the dashed line's earlier crossing (month ${crossing?.toFixed(2)}, break-even ${rb.break_even_months?.toFixed(1)}) is explained ("${said[1].slice(0, 120)}")`);
    // Serving: each bar's value with the decimals that tell the options apart.
    await showTab(page, "serving");
    const values = await page.$$eval("[data-testid=options-chart] svg .bar", (b) => b.map((x) => Number(x.dataset.x)));
    const shown = await page.$$eval("[data-testid=options-chart] svg text.value", (t) => t.map((x) => x.textContent));
    const distinct = new Set(values.map((v) => Math.round(v * 1e6))).size;
    check(values.length > 1 && new Set(shown).size === distinct &&
          shown.every((s, i) => Math.abs(Number(s.replace(/[$,]/g, "")) - values[i]) <= 0.5 * Math.pow(10, -(s.split(".")[1]?.length ?? 0)) + 1e-12),
          `serving: the ${values.length} bars' values tell the ${distinct} different costs apart (${[...new Set(shown)].slice(0, 4).join(", ")}…)`);
    // No chart label cut, at 1280 and at 390 px.
    for (const width of [1280, 390]) {
        if (width !== 1280) {
            await page.setViewportSize({ width, height: 844 });
            await page.waitForFunction(() => [...document.querySelectorAll("svg.chart")].every((s) => s.dataset.width !== "1232"), null, { timeout: 5000 }).catch(() => {});
        }
        const cutLabels = [];
        for (const tab of ["training", "rent-vs-buy", "serving"]) {
            await showTab(page, tab);
            cutLabels.push(...await page.$$eval(`#panel-${tab} svg.chart`, (svgs) => svgs.flatMap((s) => {
                const out = [...s.querySelectorAll("text")].filter((t) => t.textContent.includes("…")).map((t) => t.textContent);
                // A bar's label is its whole name, on as many lines as it takes.
                for (const t of s.querySelectorAll("text:has(+ rect.bar)")) {
                    const full = t.nextElementSibling.querySelector("title")?.textContent.replace(/: [^:]*$/, "") ?? "";
                    if (t.textContent.replace(/\s/g, "") !== full.replace(/\s/g, "")) out.push(`${t.textContent} (of ${full})`);
                }
                return out;
            })));
        }
        check(cutLabels.length === 0, `charts at ${width} px: no label cut (${cutLabels.slice(0, 3).join(", ")})`);
    }
    await page.setViewportSize({ width: 1280, height: 860 });
}

// The page's own rule for money in the API's sentences (web/src/dom.ts prose, bundled here with the
// page's esbuild, its API client left out): thousands separators for dollars and for amounts in USD.
async function checkMoneyWords() {
    const { createRequire: cr } = await import("node:module");
    const esbuild = cr(new URL("../../web/package.json", import.meta.url))("esbuild");
    const { outputFiles } = await esbuild.build({
        entryPoints: [new URL("../../web/src/dom.ts", import.meta.url).pathname], bundle: true, write: false, format: "esm",
        plugins: [{ name: "no-api", setup: (b) => {
            b.onResolve({ filter: /^\.\/api$/ }, () => ({ path: "api", namespace: "stub" }));
            b.onLoad({ filter: /.*/, namespace: "stub" }, () => ({ contents: "export const asProblem = () => ({});", loader: "js" }));
        } }],
    });
    const mod = await import("data:text/javascript;base64," + Buffer.from(outputFiles[0].text).toString("base64"));
    const cases = [["owning costs $1103727 in present value", "owning costs $1,103,727 in present value"],
                   ["5562.95 USD effective, 6553.67 list", "5,562.95 USD effective, 6553.67 list"],
                   ["a total of 123456 USD", "a total of 123,456 USD"], ["12.34 USD per accelerator-hour", "12.34 USD per accelerator-hour"],
                   ["in 2027 and 2028", "in 2027 and 2028"],
                   ["4.6358 USD paid per accelerator-hour", "4.6358 USD paid per accelerator-hour"],
                   ["a gap of -34490.29 USD", "a gap of -34,490.29 USD"]];
    const bad = cases.filter(([t, want]) => mod.prose(t) !== want).map(([t, want]) => `"${t}" -> "${mod.prose(t)}", want "${want}"`);
    check(bad.length === 0, `money in sentences gets thousands separators, in dollars and in USD (${bad.join("; ")})`);
}

let browser;
try {
    await checkServing();
    await checkCsvRule().catch((e) => check(false, `the CSV cell rule could be compiled and run (${e.message})`));
    browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
    const page = await context.newPage();
    const foreign = [];
    const consoleErrors = [];
    page.on("request", (r) => { if (!r.url().startsWith(base) && !r.url().startsWith("data:") && !r.url().startsWith("blob:")) foreign.push(r.url()); });
    // The browser logs each 4xx answer as a failed resource; the bad values below cause them on purpose.
    page.on("console", (m) => {
        if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) consoleErrors.push(m.text());
    });
    page.on("pageerror", (e) => consoleErrors.push(String(e)));

    const t0 = Date.now();
    await page.goto(`${base}/`);
    await page.waitForSelector("[data-testid=offerings] tbody tr");
    const firstRenderMs = Date.now() - t0;
    const [fcp, rendered] = await page.evaluate(() => [
        performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null,
        performance.getEntriesByName("gpucost:first-render")[0]?.startTime ?? null]);
    const ms = (v) => (v === null ? "n/a" : `${v.toFixed(0)} ms`);
    console.log(`# time to first render: ${ms(rendered)} from navigation start to the offerings table drawn ` +
                `(page's own clock; first contentful paint ${ms(fcp)}; ${firstRenderMs} ms from the test's goto, ` +
                `browser start-up included)`);

    await catalog(page);
    await training(page);
    await trainingFilters(page);
    await trainingCompare(page);
    await trainingNothing(page, 1280);
    await rentBuy(page);
    await spot(page);
    await spotMixed(page, 1280);
    await spotPick(page, 1280);
    await rentPick(page, 1280);
    await serving(page);
    await servingBudget(page);
    await servingFilters(page);
    await servingNothing(page, 1280);

    for (const tab of ["training", "rent-vs-buy", "serving"]) {
        await showTab(page, tab);
        await page.click(`#panel-${tab} form button[type=submit]`);
        await page.waitForSelector(`#panel-${tab} svg.chart`);
        await chartsRead(page, tab, 1280);
        if (tab === "training") await chartsResize(page, tab);
    }
    // Without a database: the saved-scenarios view says so with the API's words, and no result
    // offers to save.
    const noDb = await fetch(`${base}/v1/scenarios`).then(async (r) => ({ status: r.status, body: await r.json() }));
    await showTab(page, "scenarios").catch(() => {});
    const unavailable = await page.textContent("[data-testid=scenarios-unavailable]").catch(() => "");
    check(noDb.status === 409 && unavailable.includes("database mode") && unavailable.includes("without a database") &&
          await page.locator("[data-testid=save-scenario]").count() === 0,
          `without a database (GET /healthz names none) the saved-scenarios view says so ("${unavailable.slice(0, 120)}…") and no result offers to save`);
    // Plan vs actual needs the database too: no control for it, and the view says so.
    check(/plan against the actual charges/.test(unavailable) && await page.locator("[data-testid=scenario-actuals], [data-testid=plan-vs-actual]").count() === 0,
          "without a database there is no plan-vs-actual control and the view says plan vs actual needs database mode");
    for (const tab of ["catalog", "training", "rent-vs-buy", "spot", "serving", "scenarios"]) {
        if (!check(await page.$(`[data-tab=${tab}]`) !== null, `the ${tab} tab is there`)) continue;
        await showTab(page, tab);
        if (tab === "spot") {
            await page.click("[data-testid=spot-form] button[type=submit]");
            await page.waitForSelector("[data-testid=spot-results] [data-testid=recommendation]");
        }
        await accessible(page, `${tab} at 1280 px`);
    }
    check((await unlabelledControls(page)).length === 0, "every form control has a label");
    await page.focus("[data-tab=scenarios]", { timeout: 3000 }).catch(() => {});
    await page.keyboard.press("ArrowRight");
    const moved = await page.waitForFunction(() => document.querySelector("[data-tab=catalog]")?.getAttribute("aria-selected") === "true",
                                             null, { timeout: 5000 }).then(() => true, () => false);
    check(moved && await page.evaluate(() => document.activeElement?.dataset.tab) === "catalog",
          "arrow keys move between the tabs");
    check(foreign.length === 0, `nothing is loaded from another host (${foreign.length})`);
    check(consoleErrors.length === 0, `no script errors (${consoleErrors.slice(0, 3).join(" | ")})`);

    // Phone width (390 px, an iPhone 12-15): each view's task from its form as it stands, then no
    // sideways scrolling of the page (wide tables scroll inside their own box) and nothing
    // sticking out of the window, no broken figure, nothing hidden shown.
    await page.setViewportSize({ width: 390, height: 844 });
    const results = { training: "training-results", "rent-vs-buy": "rentbuy-results", spot: "spot-results",
                      serving: "serving-results" };
    for (const tab of ["catalog", "training", "rent-vs-buy", "spot", "serving", "scenarios"]) {
        if (!check(await page.$(`[data-tab=${tab}]`) !== null, `the ${tab} tab is there at 390 px`)) continue;
        await showTab(page, tab);
        if (results[tab]) {
            await page.click(`#panel-${tab} form button[type=submit]`);
            await page.waitForSelector(`[data-testid=${results[tab]}] [data-testid=recommendation]`);
            // The phone's result from its URL too: the same headline after a reload.
            const headline = `[data-testid=${results[tab]}] [data-testid=recommendation] h3`;
            const shown = await page.textContent(headline).catch(() => null);
            (await fromUrl(page, `${tab} at 390 px`, (p) => p.waitForSelector(headline, { timeout: 15000 })
                .then(() => p.textContent(headline)).catch(() => null), shown))?.close();
        }
        if (!["catalog", "spot", "scenarios"].includes(tab)) await chartsRead(page, tab, 390);
        if (tab === "catalog") await catalogRows(page, 390);
        await accessible(page, `${tab} at 390 px`);
        const over = await sideways(page);
        check(over.length === 0, `${tab} at 390 px: no sideways scrolling, nothing past the right edge (${over.join(" | ")})`);
        await checkClean(page, `${tab} at 390 px`);
        await page.screenshot({ path: join(shotDir, `${tab}-390.png`) });
    }
    await trainingNothing(page, 390);
    await spotMixed(page, 390);
    await spotPick(page, 390);
    await rentPick(page, 390);
    await servingNothing(page, 390);
    await polish(browser);
    await checkMoneyWords().catch((e) => check(false, `the money rule could be compiled and run (${e.message})`));
} catch (e) {
    check(false, `the test ran to the end (${e.stack ?? e})`);
} finally {
    await browser?.close();
    proc.kill("SIGTERM");
}

// Database mode (saving and opening scenarios): web_scenarios_test.mjs against a throwaway
// PostgreSQL 15 started by tests/pg/with_pg.sh; its checks count with these.
{
    const { existsSync } = await import("node:fs");
    const { spawnSync } = await import("node:child_process");
    const withPg = new URL("../pg/with_pg.sh", import.meta.url).pathname;
    if (!existsSync(`${process.env.PGBIN ?? "/usr/lib/postgresql/15/bin"}/initdb`)) {
        console.log("# database mode not tested: no PostgreSQL 15 (tests/pg/with_pg.sh needs its initdb)");
    } else {
        const run = spawnSync("/bin/bash", [withPg, process.execPath, new URL("./web_scenarios_test.mjs", import.meta.url).pathname,
                                            binary, shotDir, executablePath], { encoding: "utf8", timeout: 180000 });
        const out = (run.stdout ?? "") + (run.stderr ?? "");
        process.stdout.write(out.split("\n").filter((l) => !/^\d+ passed, \d+ failed$/.test(l)).join("\n"));
        const m = /(\d+) passed, (\d+) failed/.exec(out);
        if (m) { passed += Number(m[1]); failed += Number(m[2]); }
        if (!m) check(false, `database mode: the test ran to the end (exit ${run.status}${run.error ? `, ${run.error.message}` : ""})`);
    }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
