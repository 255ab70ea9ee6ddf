// The planning page in database mode (save a plan as a scenario, open saved
// scenarios), in headless Chromium against the real binary on a throwaway PostgreSQL 15. Run by
// web_page_test.mjs through tests/pg/with_pg.sh (which sets DATABASE_URL), or by hand:
//   tests/pg/with_pg.sh node tests/web/web_scenarios_test.mjs GPUCOST_BINARY SCREENSHOT_DIR [CHROMIUM]
// Migrates and seeds the database, creates a read-scope API key, then: a result saved without a
// key shows the API's 401 in words; with the key it is saved (the API lists it with the request the
// page sent); the saved scenarios are listed as the API lists them; opening one plans it again in
// its planner, with the API's figures for the saved request; "What changed" is the API's
// evaluation on today's prices; axe-core finds no violation.
// Prints one line per check and ends with 'N passed, M failed'.
import { gpucostCommand, startServer } from "../contract/serve.mjs";
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");
const [binary, shotDir, executablePath = "/usr/bin/chromium"] = process.argv.slice(2);
if (!binary || !shotDir || !process.env.DATABASE_URL) {
    console.error("usage (DATABASE_URL set, e.g. by tests/pg/with_pg.sh): node web_scenarios_test.mjs GPUCOST_BINARY SCREENSHOT_DIR [CHROMIUM]");
    process.exit(2);
}
let passed = 0;
let failed = 0;
function check(ok, what) {
    ok ? passed++ : failed++;
    console.log(`${ok ? "ok" : "not ok"} - database mode: ${what}`);
    return ok;
}
const close = (a, b) => Math.abs(Number(a) - Number(b)) <= 1e-9 * Math.max(1, Math.abs(Number(b)));

const gpucost = (...args) => gpucostCommand(binary, ...args);
gpucost("migrate");
gpucost("seed");
const key = gpucost("apikey", "create", "--scope", "read", "--name", "web page test").split(/\s+/).find((w) => w.startsWith("gpc_"));
const adminKey = gpucost("apikey", "create", "--scope", "admin", "--name", "web page test admin").split(/\s+/).find((w) => w.startsWith("gpc_"));
check(/^gpc_/.test(key ?? "") && /^gpc_/.test(adminKey ?? ""), "gpucost apikey create gives a read-scope and an admin key");

const { proc, port } = await startServer(binary, { database: true });
const base = `http://127.0.0.1:${port}`;
const getJson = async (path) => (await fetch(base + path)).json();
const postJson = async (path, body, headers = {}) => {
    const r = await fetch(base + path, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) });
    return { status: r.status, body: await r.json() };
};

const axeSource = (await import("node:fs")).readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
async function accessible(page, what) {
    await page.evaluate(axeSource);
    const violations = await page.evaluate(async () => (await window.axe.run(document, {
        runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })).violations
        .map((v) => `${v.id}: ${v.nodes.length} (${v.nodes[0]?.target.join(" ")})`));
    check(violations.length === 0, `${what}: axe-core (WCAG 2.1 AA) finds no violation (${violations.join("; ")})`);
}
async function showTab(page, id) {
    await page.click(`[data-tab=${id}]`);
    await page.waitForSelector(`#panel-${id}:not([hidden])`);
}

// Plan vs actual: a serving scenario planned for December to February, with
// actual charges imported as a FOCUS export (POST /v1/actuals) tagged with its id: two in US
// dollars in December (one spot), one in euros in January, one tagged with another scenario. The
// page's chart and table must be the API's answer, and its totals the export's figures added by
// hand: effective 4513.28 + 1049.67 = 5562.95 USD, billed the same, list 5504 + 1049.67 =
// 6553.67, accelerator-hours (100 + 50 hours) x 8 H100s = 1200; the euros listed, not converted.
const kFocusHeader = "BilledCost,EffectiveCost,ListCost,ConsumedQuantity,ConsumedUnit,ChargeCategory,ChargePeriodStart,BillingCurrency,ProviderName,RegionId,PricingCategory,x_UsageType,Tags";
function focusExport(id) {
    const tag = (v) => `"{""gpucost-scenario"":""${v}""}"`;
    return [kFocusHeader,
        `4513.28,4513.28,5504,100,Hrs,Usage,2026-12-01T00:00:00Z,USD,AWS,us-east-1,Standard,USE1-BoxUsage:p5.48xlarge,${tag(id)}`,
        `1049.67,1049.67,1049.67,50,Hrs,Usage,2026-12-05T00:00:00Z,USD,AWS,us-east-1,Dynamic,USE1-SpotUsage:p5.48xlarge,${tag(id)}`,
        `850.00,850.00,1000.00,10,Hrs,Usage,2027-01-02T00:00:00Z,EUR,AWS,us-east-1,Standard,USE1-BoxUsage:p5.48xlarge,${tag(id)}`,
        `900.00,900.00,1000.00,20,Hrs,Usage,2026-12-09T00:00:00Z,USD,AWS,us-east-1,Standard,USE1-BoxUsage:p5.48xlarge,${tag("another-team")}`,
    ].join("\n") + "\n";
}
const money = (v) => "$" + Math.abs(v).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const cents = (a, b) => Math.abs(Number(a) - Number(b)) < 0.005;

// The plan's accelerator-hours and the gap's price/quantity split, when the answer has them (being
// added to GET /v1/scenarios/{id}/actuals beside this page; read by the page's names for them).
async function splitChecks(page, answer) {
    const hoursOf = (v) => v?.planned?.accelerator_hours;
    const shown = await page.evaluate(() => ({
        hours: [...document.querySelectorAll("[data-testid=pva-hours-chart] g.group")].map((g) => g.querySelector("rect[data-series=Plan]")?.dataset.x ?? null),
        price: document.querySelector("[data-testid=pva-price-effect]")?.dataset.value,
        quantity: document.querySelector("[data-testid=pva-quantity-effect]")?.dataset.value,
        explanation: document.querySelector("[data-testid=pva-explanation]")?.textContent ?? null,
    }));
    if (hoursOf(answer) === undefined) console.log("# plan vs actual: the answer has no planned accelerator-hours; their chart not checked");
    else check(answer.months.every((m, i) => hoursOf(m) === undefined ? shown.hours[i] === null : close(shown.hours[i], hoursOf(m))),
               `the planned accelerator-hours chart is the API's (${shown.hours.join(", ")})`);
    const price = answer.accelerator_split?.price_effect_usd, quantity = answer.accelerator_split?.quantity_effect_usd;
    if (price === undefined && quantity === undefined) console.log("# plan vs actual: the answer has no price/quantity split; not checked");
    else check(cents(shown.price ?? NaN, price ?? NaN) === (price !== undefined) && cents(shown.quantity ?? NaN, quantity ?? NaN) === (quantity !== undefined) &&
               (shown.explanation?.replace(/(\d),(?=\d{3}\b)/g, "$1") ?? null) === (answer.accelerator_split?.explanation ?? null),
               `the gap's price and quantity parts and its explanation are the API's (${shown.price}, ${shown.quantity})`);
    // The API's sentence as the page shows it: amounts in USD with thousands separators.
    const unseparatedUsd = (shown.explanation ?? "").match(/(?<![\d.])\d{4,}(?:\.\d+)? USD\b/g) ?? [];
    const splitFraction = (shown.explanation ?? "").match(/\d\.\d+,\d{3}/g) ?? [];  // "4.6,358": a separator in a fraction
    check(unseparatedUsd.length === 0 && splitFraction.length === 0,
          `plan vs actual's explanation has thousands separators, none in a fraction (${[...unseparatedUsd, ...splitFraction].join(", ")})`);
}

async function planVsActualChecks(page) {
    const saved = await postJson("/v1/scenarios", { name: "web test: serving, plan vs actual", plan: "inference", request: {
        model: "llama-3.1-8b", input_tokens: 1000, output_tokens: 200, traffic: { requests_per_second: 5 },
        budget_months: 3, start_date: "2026-12-01" } }, { Authorization: `Bearer ${key}` });
    const id = saved.body.id;
    check(saved.status === 201 && id, `a serving scenario planned from 2026-12-01 for 3 months is saved (scenario ${id})`);
    await showTab(page, "scenarios");
    await page.click("#panel-scenarios button:text-is('Refresh')");
    const button = `[data-testid=scenarios] tr[data-id="${id}"] [data-testid=scenario-actuals]`;
    await page.waitForSelector(button, { timeout: 10000 });
    // A spot plan has no monthly budget: the page says so rather than drawing a plan of $0.
    const spotId = (await getJson("/v1/scenarios")).items.find((x) => x.plan === "spot")?.id;
    const spot = await fetch(`${base}/v1/scenarios/${spotId}/actuals`, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.json());
    await page.click(`[data-testid=scenarios] tr[data-id="${spotId}"] [data-testid=scenario-actuals]`).catch(() => {});
    const spotHeadline = await page.waitForFunction(() => /no monthly budget/.test(document.querySelector("[data-testid=pva-headline]")?.textContent ?? ""),
        null, { timeout: 10000 }).then(() => page.textContent("[data-testid=pva-headline]"), () => "");
    check(spot.has_budget === false && spot.months.length === 0 && /spot plan has no monthly budget/.test(spotHeadline) &&
          await page.locator("[data-testid=plan-vs-actual] [data-testid=pva-chart]").count() === 0,
          `a spot scenario (no budget, no charges) says so in words, with no empty chart ("${spotHeadline}")`);
    // Without a key: the API's 401, in words, saying what to do.
    await page.fill("[data-testid=scenarios-key]", "");
    await page.dispatchEvent("[data-testid=scenarios-key]", "input");
    await page.click(button);
    const refused = await page.waitForSelector("[data-testid=plan-vs-actual] [data-testid=pva-error]", { timeout: 10000 })
        .then((e) => e.textContent(), () => "");
    const noKey = await fetch(`${base}/v1/scenarios/${id}/actuals`).then(async (r) => ({ status: r.status, body: await r.json() }));
    check(noKey.status === 401 && refused.includes("401") && refused.includes(noKey.body.detail) && /API key/.test(refused),
          `plan vs actual without a key shows the API's refusal in words ("${refused}")`);

    const imported = await fetch(`${base}/v1/actuals`, { method: "POST", body: focusExport(id),
        headers: { "Content-Type": "text/csv", Authorization: `Bearer ${adminKey}` } }).then(async (r) => ({ status: r.status, body: await r.json() }));
    check(imported.status === 201 && imported.body.added === 4, `a FOCUS export tagged with scenario ${id} is imported (${JSON.stringify(imported.body)})`);
    const answer = await fetch(`${base}/v1/scenarios/${id}/actuals`, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.json());
    check(cents(answer.actual?.effective_cost_usd, 5562.95) && cents(answer.actual?.list_cost_usd, 6553.67) &&
          close(answer.actual?.accelerator_hours, 1200) && answer.other_currencies?.[0]?.currency === "EUR" &&
          JSON.stringify(answer.months_without_actuals) === JSON.stringify(["2027-01", "2027-02"]),
          `the API's plan vs actual has the export's figures added by hand (${JSON.stringify(answer.actual)})`);

    // With the key (typed in the view, the button pressed from the keyboard): the API's figures.
    await page.fill("[data-testid=scenarios-key]", key);
    await page.focus(button);
    await page.keyboard.press("Enter");
    await page.waitForSelector("[data-testid=plan-vs-actual] [data-testid=pva-months]", { timeout: 10000 }).catch(() => {});
    const shown = await page.evaluate(() => {
        const root = document.querySelector("[data-testid=plan-vs-actual]");
        // Each row's cells by their column's heading (columns the answer has no figure for are left out).
        const heads = [...(root?.querySelectorAll("[data-testid=pva-months] thead th") ?? [])].slice(1).map((th) => th.textContent);
        const cells = (tr) => Object.fromEntries([...tr.querySelectorAll("td")].map((td, i) => [heads[i], { text: td.textContent, value: td.dataset.value }]));
        return {
            rows: [...(root?.querySelectorAll("[data-testid=pva-months] tbody tr") ?? [])].map((tr) => ({ month: tr.dataset.month, has: tr.dataset.hasActuals, cells: cells(tr) })),
            total: cells(root?.querySelector("[data-testid=pva-months] tfoot tr") ?? document.createElement("tr")),
            columns: heads,
            bars: [...(root?.querySelectorAll("[data-testid=pva-chart] g.group") ?? [])].map((g) => ({ label: g.dataset.label,
                plan: g.querySelector("rect[data-series=Plan]")?.dataset.x, actual: g.querySelector("rect[data-series=Actual]")?.dataset.x ?? null,
                missing: g.querySelector("text.missing")?.textContent ?? "" })),
            headline: root?.querySelector("[data-testid=pva-headline]")?.textContent ?? "",
            full: root?.querySelector("[data-testid=pva-full-plan]")?.textContent ?? "",
            without: root?.querySelector("[data-testid=pva-without]")?.textContent ?? "",
            gap: root?.querySelector("[data-testid=pva-gap]")?.dataset.value,
            other: [...(root?.querySelectorAll("[data-testid=pva-other-currencies] tbody tr") ?? [])].map((tr) => tr.textContent),
        };
    });
    const monthsOk = shown.rows.length === answer.months.length && answer.months.every((m, i) => {
        const r = shown.rows[i];
        const c = r?.cells ?? {};
        return r && r.month === m.month && r.has === String(m.has_actuals) && cents(c.Planned?.value, m.planned_usd) &&
            c.Planned?.text === money(m.planned_usd) && cents(c.Gap?.value, m.gap_usd) && c.Gap?.text.endsWith(money(m.gap_usd)) &&
            (m.has_actuals ? cents(c["Actual effective"]?.value, m.actual.effective_cost_usd) && c["Actual effective"]?.text === money(m.actual.effective_cost_usd)
                           : c["Actual effective"]?.text === "no charges yet");
    });
    check(monthsOk && answer.months.length === 3, `the table has the API's months, planned, actual and gap (${shown.rows.map((r) => `${r.month}: ${["Planned", "Actual effective", "Gap"].map((k) => r.cells[k]?.text).join(" / ")}`).join("; ")})`);
    const t = shown.total;
    check(cents(t.Planned?.value, answer.planned_usd) && cents(t["Actual effective"]?.value, 5562.95) && cents(t.Gap?.value, answer.gap_usd) &&
          cents(t.Billed?.value, 5562.95) && cents(t.List?.value, 6553.67) && close(t["Accelerator-hours"]?.value, 1200) && t.Charges?.value === "2" &&
          cents(shown.gap, answer.gap_usd) && shown.headline.includes(money(5562.95)) && shown.headline.includes(money(answer.to_date?.planned_usd ?? NaN)) &&
          shown.full.includes(money(answer.planned_usd)),
          `the totals and headline are the API's (and the export's by hand): "${shown.headline}"`);
    const barsOk = shown.bars.length === answer.months.length && answer.months.every((m, i) => {
        const b = shown.bars[i];
        return b && cents(b.plan, m.planned_usd) && (m.has_actuals ? cents(b.actual, m.actual.effective_cost_usd) : b.actual === null && /no charges yet/.test(b.missing));
    });
    check(barsOk, `the chart draws the API's planned and actual cost per month, months without charges said in words (${JSON.stringify(shown.bars)})`);
    check(/Jan 2027 and Feb 2027/.test(shown.without), `the months without charges are named ("${shown.without}")`);
    check(shown.other.length === 1 && shown.other[0].includes("EUR") && shown.other[0].includes("850.00") && !shown.headline.includes("850"),
          `the euro charge is listed, not converted (${shown.other.join("; ")})`);
    await splitChecks(page, answer);
    await accessible(page, "plan vs actual at 1280 px");
    await page.$eval("[data-testid=plan-vs-actual]", (e) => e.scrollIntoView());
    await page.screenshot({ path: join(shotDir, "plan-vs-actual-1280.png") });
    await page.locator("[data-testid=plan-vs-actual]").screenshot({ path: join(shotDir, "plan-vs-actual-section-1280.png") }).catch(() => {});
}

let browser;
try {
    browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${base}/#spot`);
    await page.waitForSelector("body[data-ready=true]");

    // Spot from its defaults; saved without a key: the API's 401, in words.
    await page.click("[data-testid=spot-form] button[type=submit]");
    await page.waitForSelector("[data-testid=spot-results] [data-testid=save-scenario]", { timeout: 15000 });
    await page.fill("[data-testid=spot-results] [data-testid=scenario-name]", "web test: spot from the form");
    await page.click("[data-testid=spot-results] [data-testid=save-scenario] button[type=submit]");
    const refused = await page.waitForFunction(() => /^Not saved/.test(document.querySelector("[data-testid=spot-results] [data-testid=scenario-status]")?.textContent ?? ""),
                                               null, { timeout: 10000 }).then(() => page.textContent("[data-testid=spot-results] [data-testid=scenario-status]"), () => "");
    const noKey = await postJson("/v1/scenarios", { name: "x", plan: "spot", request: { job_hours: 1 } });
    check(noKey.status === 401 && refused.includes("401") && refused.includes(noKey.body.detail) && /API key/.test(refused),
          `saving without a key shows the API's refusal in words ("${refused}")`);

    // With the key: saved, and the API has it with the request the page sent.
    await page.fill("[data-testid=spot-results] [data-testid=scenario-key]", key);
    await page.click("[data-testid=spot-results] [data-testid=save-scenario] button[type=submit]");
    const spotId = await page.waitForFunction(() => document.querySelector("[data-testid=spot-results] [data-testid=scenario-status]")?.dataset.id,
                                              null, { timeout: 10000 }).then((h) => h.jsonValue(), () => null);
    const spotSaved = spotId ? await getJson(`/v1/scenarios/${spotId}`) : {};
    const spotBody = { job_hours: 100, nodes: 1, checkpoint_minutes: 5, restart_minutes: 10, deadline_hours: 130,
                       on_demand_usd_per_hour: 98.32, spot_usd_per_hour: 30, interruptions_per_hour: 0.01 };
    check(spotSaved.name === "web test: spot from the form" && spotSaved.plan === "spot" &&
          Object.entries(spotBody).every(([k, v]) => spotSaved.request?.[k] === v),
          `with the key the spot plan is saved (scenario ${spotId}) with the form's request (${JSON.stringify(spotSaved.request)})`);

    // A training plan too (the key is kept in the page, not asked again).
    await showTab(page, "training");
    await page.click("[data-testid=training-form] button[type=submit]");
    await page.waitForSelector("[data-testid=training-results] [data-testid=save-scenario]", { timeout: 20000 });
    await page.fill("[data-testid=training-results] [data-testid=scenario-name]", "web test: training from the form");
    await page.click("[data-testid=training-results] [data-testid=save-scenario] button[type=submit]");
    const trainId = await page.waitForFunction(() => document.querySelector("[data-testid=training-results] [data-testid=scenario-status]")?.dataset.id,
                                               null, { timeout: 10000 }).then((h) => h.jsonValue(), () => null);
    const trainSaved = trainId ? await getJson(`/v1/scenarios/${trainId}`) : {};
    check(trainSaved.plan === "training" && trainSaved.request?.model === "llama-3.1-8b" && trainSaved.request?.tokens_b === 100,
          `a training plan saved with the same key (scenario ${trainId})`);
    check(!page.url().includes(key), "the API key never goes into the URL");
    // Rent vs buy (percentages on the form, fractions in the request).
    await showTab(page, "rent-vs-buy");
    await page.fill("[data-testid=r-util]", "55");
    await page.click("[data-testid=rentbuy-form] button[type=submit]");
    await page.waitForSelector("[data-testid=rentbuy-results] [data-testid=save-scenario]", { timeout: 20000 });
    await page.fill("[data-testid=rentbuy-results] [data-testid=scenario-name]", "web test: rent vs buy at 55 %");
    await page.click("[data-testid=rentbuy-results] [data-testid=save-scenario] button[type=submit]");
    const rentId = await page.waitForFunction(() => document.querySelector("[data-testid=rentbuy-results] [data-testid=scenario-status]")?.dataset.id,
                                              null, { timeout: 10000 }).then((h) => h.jsonValue(), () => null);
    const rentSaved = rentId ? await getJson(`/v1/scenarios/${rentId}`) : {};
    check(rentSaved.plan === "rent-vs-buy" && rentSaved.request?.buy?.utilization === 0.55 && rentSaved.request?.discount_rate_annual === 0.08,
          `a rent-vs-buy plan saved with utilisation 55 % and discount 8 % as the request's 0.55 and 0.08 (scenario ${rentId})`);
    await page.fill("[data-testid=r-util]", "70");
    await page.click("[data-testid=rentbuy-form] button[type=submit]");

    // The saved scenarios, as the API lists them.
    await showTab(page, "scenarios");
    const listed = await getJson("/v1/scenarios");
    await page.waitForFunction((n) => document.querySelectorAll("[data-testid=scenarios] tbody tr").length === n,
                               listed.items.length, { timeout: 10000 }).catch(() => {});
    const rows = await page.$$eval("[data-testid=scenarios] tbody tr", (r) => r.map((x) => [x.dataset.id, x.children[0].textContent]));
    check(rows.length === 3 && JSON.stringify(rows) === JSON.stringify(listed.items.map((s) => [s.id, s.name])),
          `the saved scenarios are listed as the API lists them (${rows.map((r) => r[1]).join("; ")})`);
    // What changed since saving: the training plan's recommended offering gets a new price (an
    // admin write), and "What changed" shows the API's evaluation on today's prices.
    const recId = trainSaved.saved_result?.recommendation?.offering?.id;
    const current = recId ? await getJson(`/v1/offerings/${recId}`) : {};
    const put = recId ? await fetch(`${base}/v1/offerings/${recId}/price`, { method: "PUT",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${adminKey}` },
        body: JSON.stringify({ usd_per_hour: Math.round(current.usd_per_hour * 0.5 * 100) / 100, source: "web page test: half price", verified: true }) }) : { status: 0 };
    const evaluation = await postJson(`/v1/scenarios/${trainId}/evaluate`, {});
    await page.click(`[data-testid=scenarios] tr[data-id="${trainId}"] [data-testid=evaluate-scenario]`).catch(() => {});
    const shownEval = await page.waitForSelector("[data-testid=scenario-changes] [data-testid=evaluation]", { timeout: 10000 })
        .then((e) => e.evaluate((x) => ({ changed: x.dataset.changed, count: Number(x.dataset.count), text: x.textContent,
                                          rows: document.querySelectorAll("[data-testid=scenario-changes] [data-testid=changes] tbody tr").length })), () => ({}));
    check(put.status === 200 && evaluation.status === 200 && evaluation.body.changed === true && shownEval.changed === "true" &&
          shownEval.count === evaluation.body.change_count && shownEval.rows === evaluation.body.changes.length,
          `after a new price for ${recId}, "What changed" gives the API's evaluation of the saved training plan: ` +
          `${shownEval.rows} changed values listed ("${shownEval.text}")`);
    await accessible(page, "saved scenarios at 1280 px");
    await page.screenshot({ path: join(shotDir, "scenarios-1280.png") });

    // Opening one plans its request again in its planner: the API's figures for that request.
    const spotNow = await postJson("/v1/plans/spot", spotSaved.request ?? {});
    await page.click(`[data-testid=scenarios] tr[data-id="${spotId}"] [data-testid=open-scenario]`);
    await page.waitForSelector("#panel-spot:not([hidden]) [data-testid=recommended-cost]", { timeout: 15000 }).catch(() => {});
    const spotShown = await page.getAttribute("[data-testid=recommended-cost]", "data-value").catch(() => null);
    const recCost = spotNow.body.recommendation === "spot" ? spotNow.body.expected_spot_cost_usd
        : spotNow.body.recommendation === "mixed" ? spotNow.body.expected_mixed_cost_usd : spotNow.body.on_demand_cost_usd;
    check(close(spotShown, recCost), `opening the spot scenario plans it in Spot: the API's expected cost for its request (${spotShown})`);
    await showTab(page, "scenarios");
    const trainNow = await postJson("/v1/plans/training", trainSaved.request ?? {});
    await page.click(`[data-testid=scenarios] tr[data-id="${trainId}"] [data-testid=open-scenario]`);
    await page.waitForFunction((v) => Number(document.querySelector("#panel-training [data-testid=rec-cost]")?.dataset.value) === v,
                               trainNow.body.recommendation?.expected_cost_usd, { timeout: 20000 }).catch(() => {});
    const trainShown = await page.getAttribute("#panel-training [data-testid=rec-cost]", "data-value").catch(() => null);
    check(close(trainShown, trainNow.body.recommendation?.expected_cost_usd),
          `opening the training scenario plans it in the training planner: the API's expected cost (${trainShown})`);
    await accessible(page, "training result with its save form at 1280 px");
    await showTab(page, "scenarios");
    const rentNow = await postJson("/v1/plans/rent-vs-buy", rentSaved.request ?? {});
    await page.click(`[data-testid=scenarios] tr[data-id="${rentId}"] [data-testid=open-scenario]`).catch(() => {});
    await page.waitForFunction((v) => document.querySelector("#panel-rent-vs-buy:not([hidden]) [data-testid=break-even-utilization]")?.dataset.value === String(v),
                               rentNow.body.break_even_utilization, { timeout: 20000 }).catch(() => {});
    const util = await page.inputValue("[data-testid=r-util]").catch(() => "");
    const beShown = await page.getAttribute("#panel-rent-vs-buy [data-testid=break-even-utilization]", "data-value").catch(() => null);
    check(util === "55" && close(beShown, rentNow.body.break_even_utilization),
          `opening the rent-vs-buy scenario fills utilisation as 55 (%) and gives the API's break-even utilisation (${beShown})`);
    await planVsActualChecks(page);
    // On a phone: the list and a result's save form fit the width (wide tables scroll in their box).
    await page.setViewportSize({ width: 390, height: 844 });
    for (const tab of ["scenarios", "training"]) {
        await showTab(page, tab);
        const over = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        check(over <= 0, `${tab} at 390 px: no sideways scrolling (${over} px over)`);
        await accessible(page, `${tab} at 390 px`);
    }
    await showTab(page, "scenarios");
    const outside = await page.evaluate(() => {
        const svg = document.querySelector("[data-testid=pva-chart] svg");
        if (!svg) return ["no chart"];
        const box = svg.getBoundingClientRect();
        return [...svg.querySelectorAll("text")].filter((t) => { const r = t.getBoundingClientRect();
            return r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1); }).map((t) => t.textContent);
    });
    check(outside.length === 0, `plan vs actual at 390 px: every chart label inside the chart (${outside.join("; ")})`);
    await page.$eval("[data-testid=plan-vs-actual]", (e) => e.scrollIntoView()).catch(() => {});
    await page.screenshot({ path: join(shotDir, "plan-vs-actual-390.png") });
    check(errors.length === 0, `no script errors (${errors.slice(0, 3).join(" | ")})`);
} catch (e) {
    check(false, `the test ran to the end (${e.stack ?? e})`);
} finally {
    await browser?.close();
    proc.kill("SIGTERM");
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
