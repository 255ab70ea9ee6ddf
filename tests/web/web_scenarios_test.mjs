// The planning page in database mode (issue 24 item 8: save a plan as a scenario, open saved
// scenarios), in headless Chromium against the real binary on a throwaway PostgreSQL 15. Run by
// web_page_test.mjs through tests/pg/with_pg.sh (which sets DATABASE_URL), or by hand:
//   tests/pg/with_pg.sh node tests/web/web_scenarios_test.mjs GPUCOST_BINARY SCREENSHOT_DIR [CHROMIUM]
// Migrates and seeds the database, creates a read-scope API key, then: a result saved without a
// key shows the API's 401 in words; with the key it is saved (the API lists it with the request the
// page sent); the saved scenarios are listed as the API lists them; opening one plans it again in
// its planner, with the API's figures for the saved request; "What changed" is the API's
// evaluation on today's prices; axe-core finds no violation.
// Prints one line per check and ends with 'N passed, M failed'.
import { spawn, spawnSync } from "node:child_process";
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

function gpucost(...args) {
    const r = spawnSync(binary, args, { encoding: "utf8", timeout: 60000 });
    if (r.status !== 0) throw new Error(`gpucost ${args.join(" ")} failed: ${r.stderr}`);
    return r.stdout.trim();
}
gpucost("migrate");
gpucost("seed");
const key = gpucost("apikey", "create", "--scope", "read", "--name", "web page test").split(/\s+/).find((w) => w.startsWith("gpc_"));
const adminKey = gpucost("apikey", "create", "--scope", "admin", "--name", "web page test admin").split(/\s+/).find((w) => w.startsWith("gpc_"));
check(/^gpc_/.test(key ?? "") && /^gpc_/.test(adminKey ?? ""), "gpucost apikey create gives a read-scope and an admin key");

function startServer() {
    return new Promise((resolve, reject) => {
        const proc = spawn(binary, ["--port", "0", "--access-log", "false"], { stdio: ["ignore", "ignore", "pipe"] });
        let buffered = "";
        const timer = setTimeout(() => reject(new Error("no 'listening' line in 30 s")), 30000);
        proc.stderr.on("data", (chunk) => {
            buffered += chunk.toString();
            for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
                const line = buffered.slice(0, nl);
                buffered = buffered.slice(nl + 1);
                try {
                    const entry = JSON.parse(line);
                    if (entry.msg === "listening") { clearTimeout(timer); resolve({ proc, port: entry.port }); }
                } catch { /* not a log line */ }
            }
        });
        proc.on("exit", (code) => reject(new Error(`gpucost exited with ${code}`)));
    });
}
const { proc, port } = await startServer();
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
    // On a phone: the list and a result's save form fit the width (wide tables scroll in their box).
    await page.setViewportSize({ width: 390, height: 844 });
    for (const tab of ["scenarios", "training"]) {
        await showTab(page, tab);
        const over = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        check(over <= 0, `${tab} at 390 px: no sideways scrolling (${over} px over)`);
        await accessible(page, `${tab} at 390 px`);
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
