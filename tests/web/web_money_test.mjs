// Negotiated prices, the bill and "in the US" on the planning page, in headless Chromium against
// the real binary in database mode (a throwaway PostgreSQL 15 from tests/pg/with_pg.sh):
//   tests/pg/with_pg.sh node tests/web/web_money_test.mjs GPUCOST_BINARY [CHROMIUM]
// A finance user's task: a stored price book chosen on the training planner (its figure is the
// API's for the request with that book), the plan kept to the US and to H100s, saved; a FOCUS
// export uploaded on the page; the saved plan against its bill read to date (the months not
// billed yet left out of the headline, the whole plan's figure apart). Then the catalog filtered
// to "US" and an accelerator family, and the commitment prices beside an on-demand price.
// Prints one line per check and ends with 'N passed, M failed'.
import { gpucostCommand, startServer } from "../contract/serve.mjs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");
const [binary, executablePath = "/usr/bin/chromium"] = process.argv.slice(2);
if (!binary || !process.env.DATABASE_URL) {
    console.error("usage (DATABASE_URL set, e.g. by tests/pg/with_pg.sh): node web_money_test.mjs GPUCOST_BINARY [CHROMIUM]");
    process.exit(2);
}
let passed = 0;
let failed = 0;
function check(ok, what) {
    ok ? passed++ : failed++;
    console.log(`${ok ? "ok" : "not ok"} - ${what}`);
    return ok;
}
const close = (a, b) => Math.abs(Number(a) - Number(b)) <= 1e-9 * Math.max(1, Math.abs(Number(b)));
const money = (v) => "$" + Math.abs(v).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const kWait = { timeout: 15000 };

const gpucost = (...args) => gpucostCommand(binary, ...args);
gpucost("migrate");
gpucost("seed");
const admin = gpucost("apikey", "create", "--scope", "admin", "--name", "finance").split(/\s+/).find((w) => w.startsWith("gpc_"));

const { proc, port } = await startServer(binary, { database: true });
const base = `http://127.0.0.1:${port}`;
const auth = { Authorization: `Bearer ${admin}` };
const getJson = async (path, headers = {}) => (await fetch(base + path, { headers })).json();
const postJson = async (path, body, headers = {}) => {
    const r = await fetch(base + path, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) });
    return { status: r.status, body: await r.json() };
};

// The negotiated book: 20 % off every AWS price.
const book = await postJson("/v1/price-books", { id: "acme-2026", name: "ACME EDP", rules: [{ provider: "aws", discount_fraction: 0.2 }] }, auth);
check(book.status === 201, `a stored price book is created through the API (${book.status})`);

// A charge of this month (the plan starts today), tagged with the scenario, as a FOCUS export.
const now = new Date();
const month = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, "0")}`;
function focusExport(id) {
    const tag = `"{""gpucost-scenario"":""${id}""}"`;
    return ["BilledCost,EffectiveCost,ListCost,ConsumedQuantity,ConsumedUnit,ChargeCategory,ChargePeriodStart,BillingCurrency,ProviderName,RegionId,PricingCategory,x_UsageType,Tags",
            `4513.28,4513.28,5504,100,Hrs,Usage,${month}-01T00:00:00Z,USD,AWS,us-east-1,Standard,USE1-BoxUsage:p5.48xlarge,${tag}`].join("\n") + "\n";
}

// The training plan with the stored book, kept to the US and to H100s: the request the page sends
// names them, and the figure shown is the API's for that request.
async function bookPlan(page) {
    await page.goto(`${base}/#training`);
    await page.waitForSelector("body[data-ready=true]");
    // 200 B tokens without a deadline on one 8-GPU node (about 850 h, longer than any month):
    // a run over this month and the next whatever the day, so that the plan has a month not
    // billed yet. Without the cap the on-demand recommendation (the spot price is stale) takes
    // 4 nodes for about 210 h, which fits in one month.
    await page.fill("[data-testid=t-tokens]", "200", kWait);
    await page.fill("[data-testid=t-deadline]", "");
    await page.fill("[data-testid=t-max-acc]", "8", kWait);
    // AWS only, so that the book's AWS discount prices the recommendation.
    await page.check("[data-testid=training-form] input[name='/constraints/providers'][value=aws]", kWait);
    await page.fill("#panel-training [data-testid=price-book-key]", admin, kWait);
    await page.click("#panel-training [data-testid=list-price-books]", kWait);
    const listed = await page.waitForFunction(() => /1 price book listed/.test(document.querySelector("#panel-training [data-testid=price-book-status]")?.textContent ?? ""),
                                              null, kWait).then(() => true, () => false);
    const offered = await page.$$eval("datalist option", (o) => o.map((x) => x.value)).catch(() => []);
    check(listed && offered.includes("acme-2026"), `the planner lists the key's stored books (${offered.join(", ")})`);
    await page.fill("#panel-training [data-testid=price-book]", "acme-2026", kWait);
    await page.fill("[data-testid=t-countries]", "US", kWait);
    await page.selectOption("[data-testid=t-family]", "h100", kWait);
    const sent = page.waitForRequest((r) => r.url().endsWith("/v1/plans/training") && r.method() === "POST", kWait);
    await page.click("[data-testid=training-form] button[type=submit]");
    const request = await sent;
    const body = JSON.parse(request.postData() ?? "{}");
    check(body.price_book === "acme-2026" && request.headers().authorization === `Bearer ${admin}` &&
          JSON.stringify(body.constraints?.countries) === '["US"]' && JSON.stringify(body.constraints?.accelerator_families) === '["h100"]',
          `the plan request names the book (with the key), the country and the family (${JSON.stringify({ price_book: body.price_book, c: body.constraints })})`);
    const plan = (await postJson("/v1/plans/training", body, auth)).body;
    const list = (await postJson("/v1/plans/training", { ...body, price_book: undefined })).body;
    await page.waitForSelector("[data-testid=rec-cost]", kWait);
    const shown = await page.getAttribute("[data-testid=rec-cost]", "data-value");
    check(plan.pricing_basis === "price_book" && close(shown, plan.recommendation?.expected_cost_usd) &&
          plan.recommendation?.expected_cost_usd < list.recommendation?.expected_cost_usd,
          `the figure is the API's with the book (${shown}; at list prices ${list.recommendation?.expected_cost_usd})`);
    const usRegions = new Set((await getJson("/v1/offerings?country=US&accelerator_family=h100&limit=500")).items.map((o) => o.region));
    check(plan.options.length > 0 && plan.options.every((o) => usRegions.has(o.offering.region) && o.offering.accelerator.startsWith("h100")),
          `every option is an H100 in a US region (${[...new Set(plan.options.map((o) => `${o.offering.provider} ${o.offering.region}`))].join(", ")})`);
    return body;
}

// Saved, an export uploaded on the page, and the plan against the bill read to date.
async function planVsActual(page) {
    await page.fill("[data-testid=training-results] [data-testid=scenario-key]", admin, kWait);
    await page.click("[data-testid=training-results] [data-testid=save-scenario] button[type=submit]");
    await page.waitForSelector("[data-testid=training-results] [data-testid=scenario-status][data-id]", kWait);
    const id = await page.getAttribute("[data-testid=training-results] [data-testid=scenario-status]", "data-id");
    const saved = await getJson(`/v1/scenarios/${id}`, auth);
    check(saved.request?.price_book === "acme-2026", `the saved scenario keeps its book (${saved.request?.price_book})`);
    await page.click("[data-tab=scenarios]");
    await page.setInputFiles("[data-testid=focus-file]", { name: "focus.csv", mimeType: "text/csv", buffer: Buffer.from(focusExport(id)) }, kWait);
    await page.click("[data-testid=focus-upload] button[type=submit]");
    const added = await page.waitForSelector("[data-testid=focus-status][data-added]", kWait)
        .then(() => page.getAttribute("[data-testid=focus-status]", "data-added"), () => null);
    const imports = await getJson("/v1/actuals/imports", auth);
    check(added === "1" && imports.items?.length === 1 && imports.items[0].added === 1,
          `the export uploaded on the page is the API's import (${added} added; ${await page.textContent("[data-testid=focus-status]").catch(() => "")})`);
    const listed = await page.waitForSelector(`[data-testid=scenarios] tr[data-id="${id}"]`, kWait).then(() => true, () => false);
    if (!listed) console.log(`# the scenarios listed: ${await page.textContent("[data-testid=scenario-list]").catch(() => "none")}`);
    await page.click(`[data-testid=scenarios] tr[data-id="${id}"] [data-testid=scenario-actuals]`, kWait);
    await page.waitForSelector("[data-testid=plan-vs-actual] [data-testid=pva-headline]", kWait);
    const answer = await getJson(`/v1/scenarios/${id}/actuals`, auth);
    const d = answer.to_date;
    const headline = await page.textContent("[data-testid=pva-headline]");
    const full = await page.getAttribute("[data-testid=pva-full-plan]", "data-value").catch(() => null);
    const toDatePlanned = answer.months.filter((m) => m.month <= month).reduce((s, m) => s + m.planned_usd, 0);
    check(d?.through_month === month && Math.abs(d.planned_usd - toDatePlanned) < 0.005 && Math.abs(d.actual_effective_cost_usd - 4513.28) < 0.005,
          `the API's to-date figures are this month's plan and the export's charge (${JSON.stringify(d)})`);
    const split = answer.accelerator_split, whole = answer.accelerator_split_full_plan;
    check(answer.months.length >= 2 && d?.planned_usd < answer.planned_usd &&
          split?.explanation?.startsWith(`Over the months billed so far (through ${month}): `) &&
          whole?.explanation?.startsWith("Over the whole plan: ") && whole.gap_usd < split.gap_usd,
          `the plan runs past the month billed, and its later months are left out to date (${answer.months.map((m) => `${m.month}: ${m.planned_usd}`).join(", ")}; ` +
          `accelerator_split gap ${split?.gap_usd}, accelerator_split_full_plan gap ${whole?.gap_usd})`);
    check(d !== undefined && d !== null && headline.includes(money(d.actual_effective_cost_usd)) && headline.includes(money(d.planned_usd)) &&
          !headline.includes(money(answer.planned_usd)) && headline.includes(d.gap_usd > 0 ? "over plan" : "under plan") && close(full, answer.planned_usd),
          `the headline is the plan to date against the bill, the whole plan apart ("${headline}"; whole plan ${full})`);
}

// The commitments the plan saved on the book should buy, asked for on the page: what it shows is
// the API's answer for the same book and slip.
async function commitments(page) {
    await page.fill("[data-testid=commit-book]", "acme-2026", kWait);
    await page.fill("[data-testid=commit-slip]", "30", kWait);
    await page.click("[data-testid=commit-form] button[type=submit]");
    const shown = await page.waitForSelector("[data-testid=commit-status][data-count]", kWait)
        .then(() => page.getAttribute("[data-testid=commit-status]", "data-count"), () => null);
    const answer = (await postJson("/v1/plans/commitments", { price_book: "acme-2026", slip_days: 30 }, auth)).body;
    const text = await page.textContent("[data-testid=commit-status]").catch(() => "");
    check(answer.scenarios?.length === 1 && shown === String(answer.commitments?.length) &&
          text.includes(`${answer.scenarios.filter((s) => s.counted).length} of 1 saved scenario counted`),
          `the page shows the API's commitments for the book's saved scenario (${shown}; "${text}")`);
}

// The catalog kept to the US and to one accelerator family, as the API lists them; and the
// commitment prices beside an on-demand price, as the catalog has them.
async function catalogFilters(page) {
    await page.click("[data-tab=catalog]");
    await page.fill("[data-testid=f-country]", "us", kWait);
    await page.selectOption("[data-testid=f-family]", "a100", kWait);
    await page.selectOption("[data-testid=f-price-type]", "on_demand");
    await page.click("[data-testid=catalog-form] button[type=submit]");
    const api = await getJson("/v1/offerings?country=us&accelerator_family=a100&price_type=on_demand&limit=25");
    const all = await getJson("/v1/offerings?accelerator_family=a100&price_type=on_demand&limit=1");
    await page.waitForFunction((n) => (document.querySelector("[data-testid=catalog-status]")?.textContent ?? "").startsWith(`${n} offerings match`),
                               api.total_count, kWait).catch(() => {});
    const rows = await page.$$eval("[data-testid=offerings] tbody tr", (r) => r.map((x) => x.dataset.id));
    check(api.total_count > 0 && api.total_count < all.total_count && JSON.stringify(rows) === JSON.stringify(api.items.map((o) => o.id)),
          `"US" and the A100 family list the API's offerings (${api.total_count} of ${all.total_count})`);
    const notes = await page.$$eval("[data-testid=offerings] tbody tr [data-testid=commitments] small",
        (s) => s.map((x) => ({ row: x.closest("tr").dataset.id, id: x.dataset.id, value: Number(x.dataset.value), saving: Number(x.dataset.saving) })));
    const note = notes.find((n) => n.id?.endsWith("commit-1y"));
    const commit = note ? await getJson(`/v1/offerings/${note.id}`) : null;
    const od = note ? api.items.find((o) => o.id === note.row) : null;
    check(note !== undefined && close(note.value, commit?.usd_per_hour) && Math.abs(note.saving - (1 - commit.usd_per_hour / od.usd_per_hour)) < 1e-9 &&
          commit.instance_type === od.instance_type && commit.region === od.region,
          `an on-demand price shows its 1-year commitment and the saving (${JSON.stringify(note)})`);
    const bad = await page.fill("[data-testid=f-country]", "XX").then(() => page.click("[data-testid=catalog-form] button[type=submit]"))
        .then(() => page.waitForSelector("[data-testid=catalog-form] [data-testid=field-error][data-field=country]", kWait)).then(() => true, () => false);
    check(bad, "a country the API does not know is refused at the Country field");
}

let browser;
try {
    browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    for (const step of [bookPlan, planVsActual, commitments, catalogFilters]) {
        try { await step(page); } catch (e) { check(false, `${step.name} ran to the end (${e.message?.split("\n")[0] ?? e})`); }
    }
    check(errors.length === 0, `no script errors (${errors.slice(0, 3).join(" | ")})`);
} catch (e) {
    check(false, `the test ran to the end (${e.stack ?? e})`);
} finally {
    await browser?.close();
    proc.kill("SIGTERM");
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
