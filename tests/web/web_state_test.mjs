// The planning page's state in headless Chromium (Debian's chromium, driven by playwright-core)
// against the real binary: what the page shows is always the answer to the form as it now stands.
// In every view a first request is held (route interception) while a second is asked: the first is
// aborted, the submit button is disabled while a plan is computed, and the page shows the API's own
// answer to the second request (fetched here directly), never the first's. The printout's "from"
// link is the address of the plan shown. One of a plan's ranked options that is not the
// recommendation can be chosen and two set side by side; the link reopens that choice in a fresh
// browser, which prints it.
//
// usage: node web_state_test.mjs GPUCOST_BINARY [CHROMIUM]
// Prints one line per check and ends with 'N passed, M failed'.

import { createRequire } from "node:module";
import { startServer } from "../contract/serve.mjs";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");

const [binary, executablePath = "/usr/bin/chromium"] = process.argv.slice(2);
if (!binary) {
    console.error("usage: node web_state_test.mjs GPUCOST_BINARY [CHROMIUM]");
    process.exit(2);
}
let passed = 0;
let failed = 0;
function check(ok, what) {
    ok ? passed++ : failed++;
    console.log(`${ok ? "ok" : "not ok"} - ${what}`);
    return ok;
}
const close = (a, b) => a !== null && a !== undefined && a !== "" &&
    Math.abs(Number(a) - Number(b)) <= 1e-9 * Math.max(1, Math.abs(Number(b)));
// Script errors of the page the requests are superseded on, taken by each check.
const pageErrors = [];
// How long a first answer is held back: long enough that a page which waits for it shows it last.
const kHoldMs = 8000;
// A page that lacks what is checked fails within this, not the test's whole budget.
const kWaitMs = 15000;

const { proc, port } = await startServer(binary);
const base = `http://127.0.0.1:${port}`;
const answerOf = async (request) => {
    const init = request.method() === "POST"
        ? { method: "POST", headers: { "Content-Type": "application/json" }, body: request.postData() } : {};
    return (await fetch(base + new URL(request.url()).pathname + new URL(request.url()).search, init)).json();
};

// The value `get` gives once it gives one (within kWaitMs), else undefined.
async function until(get) {
    for (const end = Date.now() + kWaitMs; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
        const value = get();
        if (value !== undefined && value !== null) return value;
    }
    return undefined;
}

async function open(context, hash) {
    const page = await context.newPage();
    await page.goto(`${base}/${hash}`);
    await page.waitForSelector("body[data-ready=true]");
    return page;
}

// Holds the first request to `path` (a URL that `match` accepts) for kHoldMs and lets every later
// one through; records the later ones and what became of the first.
async function holdFirst(page, path, match = () => true) {
    const held = { first: null, later: [] };
    let seen;
    held.seen = new Promise((resolve) => { seen = resolve; });
    const handler = async (route) => {
        const request = route.request();
        if (held.first || !match(request.url())) {
            if (held.first && match(request.url())) held.later.push(request);
            return route.continue();
        }
        held.first = request;
        held.outcome = new Promise((resolve) => {
            page.on("requestfailed", (r) => { if (r === request) resolve("aborted"); });
            page.on("requestfinished", (r) => { if (r === request) resolve("answered"); });
        });
        seen();
        await new Promise((resolve) => { held.timer = setTimeout(resolve, kHoldMs); });
        await route.continue().catch(() => {});  // the page may have aborted it meanwhile
    };
    await page.route(`**${path}*`, handler);
    held.release = async () => {
        clearTimeout(held.timer);
        await page.unroute(`**${path}*`, handler);
    };
    return held;
}

// Every value `attr` of `selector` takes on the page from now on (the first answer must never be
// one of them).
async function recordShown(page, selector, attr) {
    await page.evaluate(({ selector, attr }) => {
        window.__shown = [];
        window.__shownObserver?.disconnect();
        const note = () => { for (const el of document.querySelectorAll(selector)) window.__shown.push(el.getAttribute(attr)); };
        window.__shownObserver = new MutationObserver(note);
        window.__shownObserver.observe(document.body, { subtree: true, childList: true, attributes: true });
    }, { selector, attr });
}
const shownValues = (page) => page.evaluate(() => window.__shown ?? []);

// A first plan held back, the form changed and planned again: the first request is aborted, the
// submit button disabled while the plan is computed, the second answer shown and the first never.
async function superseded(page, v) {
    const what = `${v.tab}: a slow first answer never replaces a later one`;
    const same = v.same ?? close;
    try {
        await page.click(`[data-tab=${v.tab}]`);
        await page.waitForSelector(`#panel-${v.tab}:not([hidden])`);
        const held = await holdFirst(page, v.path, v.match);
        await v.first(page);
        await page.click(`${v.form} button[type=submit]`, { timeout: kWaitMs });
        await held.seen;
        if (v.plan !== false) {
            check(await page.isDisabled(`${v.form} button[type=submit]`),
                  `${v.tab}: the submit button is disabled while the plan is computed`);
        }
        await recordShown(page, v.figure, v.attr);
        await v.second(page);
        await page.click(`${v.form} button[type=submit]`, { timeout: kWaitMs });
        const outcome = await held.outcome;
        const old = v.expected(await answerOf(held.first));
        const secondRequest = await until(() => held.later[held.later.length - 1]);
        v.answer = secondRequest ? await answerOf(secondRequest) : null;
        const want = v.answer ? v.expected(v.answer) : null;
        await page.waitForFunction(({ sel, attr, w }) => document.querySelector(sel)?.getAttribute(attr) === String(w),
                                   { sel: v.figure, attr: v.attr, w: want }, { timeout: kWaitMs }).catch(() => {});
        // A first answer the page did not abort arrives kHoldMs after it was asked: give it the
        // time to be drawn.
        if (outcome === "answered") await page.waitForTimeout(1000);
        const shown = await page.getAttribute(v.figure, v.attr);
        const history = await shownValues(page);
        const shownRight = secondRequest !== undefined && v.isSecond(secondRequest) && same(shown, want) && !same(shown, old) &&
            String(want) !== String(old) && !history.some((x) => same(x, old));
        const words = `the page shows the API's answer to the form as it now stands (${shown}; the API: ${want}), ` +
            `never the first's (${old}; shown: ${[...new Set(history)].join(", ")})`;
        const errors = pageErrors.splice(0);
        // The catalog already dropped late answers; there the point is that the request stops.
        if (v.plan === false) {
            check(outcome === "aborted" && shownRight && errors.length === 0,
                  `${v.tab}: the superseded search is aborted (it was ${outcome}) and ${words}`);
        } else {
            check(outcome === "aborted" && errors.length === 0,
                  `${v.tab}: the superseded request is aborted (it was ${outcome}), without a script error (${errors.join(" | ")})`);
            check(shownRight, `${v.tab}: ${words}`);
        }
        await held.release();
        return true;
    } catch (e) {
        return check(false, `${what} (${e.message.split("\n")[0]})`);
    }
}

const views = [
    { tab: "training", path: "/v1/plans/training", form: "[data-testid=training-form]",
      figure: "[data-testid=rec-cost]", attr: "data-value",
      first: (p) => p.fill("[data-testid=t-tokens]", "100"), second: (p) => p.fill("[data-testid=t-tokens]", "1000"),
      isSecond: (r) => r.postDataJSON().tokens_b === 1000, expected: (a) => a.recommendation?.expected_cost_usd },
    { tab: "spot", path: "/v1/plans/spot", form: "[data-testid=spot-form]",
      figure: "[data-testid=row-on-demand] td[data-value]:nth-child(3)", attr: "data-value",
      first: (p) => p.fill("[data-testid=s-hours]", "100"), second: (p) => p.fill("[data-testid=s-hours]", "300"),
      isSecond: (r) => r.postDataJSON().job_hours === 300, expected: (a) => a.on_demand_cost_usd },
    { tab: "rent-vs-buy", path: "/v1/plans/rent-vs-buy", form: "[data-testid=rentbuy-form]",
      figure: "[data-testid=break-even-months]", attr: "data-value",
      first: (p) => p.fill("[data-testid=r-util]", "70"), second: (p) => p.fill("[data-testid=r-util]", "40"),
      isSecond: (r) => r.postDataJSON().buy.utilization === 0.4, expected: (a) => a.break_even_months },
    { tab: "serving", path: "/v1/plans/inference", form: "[data-testid=serving-form]",
      figure: "[data-testid=serving-options] tbody tr:first-child td[data-value]", attr: "data-value",
      first: (p) => p.fill("[data-testid=v-rps]", "5"), second: (p) => p.fill("[data-testid=v-rps]", "40"),
      isSecond: (r) => r.postDataJSON().traffic.requests_per_second === 40, expected: (a) => a.options[0]?.monthly_cost_usd },
    { tab: "catalog", plan: false, path: "/v1/offerings", form: "[data-testid=catalog-form]", match: (url) => url.includes("limit=25"),
      figure: "[data-testid=offerings] tbody tr:first-child", attr: "data-id",
      first: (p) => p.selectOption("[data-testid=f-accelerator]", "a100-sxm4-80gb"),
      second: (p) => p.selectOption("[data-testid=f-accelerator]", "h100-sxm"),
      isSecond: (r) => r.url().includes("accelerator=h100-sxm"), expected: (a) => a.items[0]?.id,
      same: (a, b) => a !== null && a !== undefined && a === b },
];

// A link opened while a plan is on its way (back, forward, a pasted link) supersedes it too.
async function supersededByLink(page) {
    const what = "training: a link opened while a plan is computed supersedes it";
    try {
        await page.click("[data-tab=training]");
        const held = await holdFirst(page, "/v1/plans/training");
        await page.fill("[data-testid=t-tokens]", "200");
        await page.click("[data-testid=training-form] button[type=submit]", { timeout: kWaitMs });
        await held.seen;
        await recordShown(page, "[data-testid=rec-cost]", "data-value");
        const hash = new URL(page.url()).hash.replace(/tokens_b=\d+/, "tokens_b=300");
        await page.evaluate((h) => { window.location.hash = h; }, hash);
        const outcome = await held.outcome;
        if (outcome === "answered") await page.waitForTimeout(1000);
        await page.waitForSelector("[data-testid=rec-cost]", { timeout: kWaitMs });
        const second = held.later.find((r) => r.postDataJSON().tokens_b === 300);
        const want = second ? (await answerOf(second)).recommendation.expected_cost_usd : null;
        const old = (await answerOf(held.first)).recommendation.expected_cost_usd;
        await page.waitForFunction((w) => Number(document.querySelector("[data-testid=rec-cost]")?.dataset.value) === w, want,
                                   { timeout: kWaitMs }).catch(() => {});
        const shown = await page.getAttribute("[data-testid=rec-cost]", "data-value");
        const history = await shownValues(page);
        await held.release();
        return check(outcome === "aborted" && close(shown, want) && !history.some((x) => close(x, old)) && pageErrors.length === 0,
                     `${what}: the first request ${outcome}, the page shows ${shown} (the API for 300 B tokens: ${want}; ` +
                     `for 200 B: ${old}, never shown)`);
    } catch (e) {
        return check(false, `${what} (${e.message.split("\n")[0]})`);
    }
}

// The printed "from" address of the view on screen.
async function printedFrom(page) {
    await page.emulateMedia({ media: "print" });
    const from = await page.evaluate(() => {
        const box = [...document.querySelectorAll("[data-testid=printed-inputs]")].find((el) => el.getClientRects().length > 0);
        return /Printed \d{4}-\d\d-\d\d from (\S+)/.exec(box?.innerText ?? "")?.[1] ?? null;
    });
    await page.emulateMedia({ media: "screen" });
    return from;
}

// Plans with `tokens` B tokens from the form; the API's answer to the page's own request (as
// the server sent it to the page).
async function planTokens(page, tokens) {
    const answered = page.waitForResponse((r) => r.url().endsWith("/v1/plans/training") && r.request().postDataJSON()?.tokens_b === tokens);
    await page.fill("[data-testid=t-tokens]", String(tokens));
    await page.click("[data-testid=training-form] button[type=submit]", { timeout: kWaitMs });
    const plan = await (await answered).json();
    await page.waitForFunction((w) => Number(document.querySelector("[data-testid=rec-cost]")?.dataset.value) === w,
                               plan.recommendation.expected_cost_usd, { timeout: kWaitMs });
    return plan;
}

const trainingKey = (o) => `${o.offering.id}/${o.nodes}`;
const hashParams = (url) => new URLSearchParams(new URL(url).hash.replace(/^#[^?]*\??/, ""));
const chosenFigure = (label) => async (p) => p.waitForSelector("[data-testid=chosen]", { timeout: kWaitMs })
    .then(() => p.$eval(`[data-testid=chosen] dd[data-label="${label}"]`, (d) => ({ key: d.closest("[data-testid=chosen]").dataset.key,
                                                                                     value: d.dataset.value })))
    .catch(() => ({ key: null, value: null }));
const sideBySide = async (p) => p.waitForSelector("[data-testid=option-compare-table]", { timeout: kWaitMs }).then(() => p.evaluate(() => {
    const t = document.querySelector("[data-testid=option-compare-table]");
    const keys = [...t.querySelectorAll("thead th[data-key]")].map((th) => th.dataset.key);
    const cost = [...t.querySelectorAll("tr[data-label='Expected cost'] td[data-value]")].map((td) => Number(td.dataset.value));
    return { keys, cost };
})).catch(() => ({ keys: [], cost: [] }));

// The printout's link on the first plan of a session and on the next; then one of the ranked
// options that is not the recommendation chosen, two options compared, the printed link of that
// choice opened in a fresh browser (which shows and prints the same choice); a new plan of the
// person's starts again from the recommendation.
async function printAndChoose(browser, context) {
    const page = await open(context, "#training");
    try {
        await planTokens(page, 100);
        const first = await printedFrom(page);
        check(first === page.url() && /tokens_b=100\b/.test(first ?? ""),
              `the first plan of a session prints the address of that plan (${first}; the page: ${page.url()})`);
        const plan = await planTokens(page, 300);
        const second = await printedFrom(page);
        check(second === page.url() && /tokens_b=300\b/.test(second ?? ""),
              `a second plan prints its own address, not the previous inputs (${second})`);

        const rec = trainingKey(plan.recommendation);
        const table = plan.options.slice(0, 20);
        const pick = table.find((o) => trainingKey(o) !== rec && o.offering.verified) ?? table.find((o) => trainingKey(o) !== rec);
        const other = table.find((o) => trainingKey(o) !== rec && o !== pick);
        const row = (o) => `[data-testid=options] tr[data-key="${trainingKey(o)}"]`;
        await page.click(`${row(pick)} [data-testid=choose]`, { timeout: kWaitMs });
        const chosen = await chosenFigure("Expected cost")(page);
        check(chosen.key === trainingKey(pick) && close(chosen.value, pick.expected_cost_usd) &&
              hashParams(page.url()).get("option") === trainingKey(pick),
              `training: a ranked option that is not the recommendation can be chosen: its card shows the API's expected cost ` +
              `(${chosen.value}; the API: ${pick.expected_cost_usd}) and the URL names it`);
        check(await page.getAttribute(`${row(pick)} [data-testid=choose]`, "aria-pressed") === "true" &&
              await page.getAttribute(`${row(pick)}`, "class") === "chosen",
              "training: the chosen option's row is marked and its button pressed");
        await page.click(`${row(pick)} [data-testid=compare-option]`);
        await page.click(`${row(other)} [data-testid=compare-option]`);
        const pair = await sideBySide(page);
        check(JSON.stringify(pair.keys) === JSON.stringify([trainingKey(pick), trainingKey(other)]) &&
              close(pair.cost[0], pick.expected_cost_usd) && close(pair.cost[1], other.expected_cost_usd),
              `training: two options side by side, each with the API's expected cost (${pair.cost.join(", ")})`);

        // The printed link, given to a fresh browser (no storage, no history).
        const link = await printedFrom(page);
        check(link === page.url(), `the printout links the choice on screen (${link?.slice(link.indexOf("#"), link.indexOf("#") + 60)}…)`);
        const fresh = await browser.newContext({ viewport: { width: 1280, height: 860 } });
        const reopened = await open(fresh, new URL(link ?? base).hash);
        const again = await chosenFigure("Expected cost")(reopened);
        const pairAgain = await sideBySide(reopened);
        check(again.key === trainingKey(pick) && close(again.value, pick.expected_cost_usd) &&
              JSON.stringify(pairAgain.keys) === JSON.stringify(pair.keys),
              `training: the link reopens the same chosen option (${again.key}) and the same two side by side in a fresh browser`);
        await reopened.emulateMedia({ media: "print" });
        const printed = await reopened.evaluate(() => {
            const card = document.querySelector("[data-testid=chosen]");
            const recCard = document.querySelector("#panel-training [data-testid=recommendation]");
            return { shown: (card?.getClientRects().length ?? 0) > 0, text: card?.innerText ?? "",
                     first: Boolean(card && recCard && card.compareDocumentPosition(recCard) & Node.DOCUMENT_POSITION_FOLLOWING) };
        });
        await reopened.emulateMedia({ media: "screen" });
        const from = await printedFrom(reopened);
        check(printed.shown && printed.first && printed.text.includes(pick.offering.instance_type) &&
              from === reopened.url() && hashParams(from).get("option") === trainingKey(pick),
              `training: the reopened choice prints the chosen option before the recommendation, with the link that reopens it`);
        await fresh.close();

        await planTokens(page, 120);
        check(await page.locator("[data-testid=chosen]").count() === 0 && !hashParams(page.url()).has("option") &&
              await page.locator("[data-testid=choose]").count() > 0,
              "training: a new plan of other inputs starts again from the recommendation (no choice kept, none in the URL)");
    } catch (e) {
        check(false, `training: the printout's link and choosing an option (${e.message.split("\n")[0]})`);
    } finally {
        await page.close();
    }
}

// On the serving result left by `superseded` (the API's answer `plan`): an option that is not the
// recommendation chosen, its link opened in a fresh browser.
async function chooseServing(browser, page, plan) {
    try {
        await page.click("[data-tab=serving]");
        const key = (o) => `${o.offering.id}/${o.nodes}`;
        const pick = plan.options.find((o) => key(o) !== key(plan.recommendation));
        await page.click(`[data-testid=serving-options] tr[data-key="${key(pick)}"] [data-testid=choose]`, { timeout: kWaitMs });
        const fresh = await browser.newContext({ viewport: { width: 1280, height: 860 } });
        const reopened = await open(fresh, new URL(page.url()).hash);
        const again = await chosenFigure("Monthly cost")(reopened);
        check(again.key === key(pick) && close(again.value, pick.monthly_cost_usd),
              `serving: an option that is not the recommendation chosen, and reopened from its link in a fresh browser ` +
              `(${again.key}: ${again.value}; the API: ${pick.monthly_cost_usd})`);
        await fresh.close();
    } catch (e) {
        check(false, `serving: choosing an option (${e.message.split("\n")[0]})`);
    }
}

let browser;
try {
    browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await open(context, "");
    await page.waitForSelector("[data-testid=offerings] tbody tr");
    await page.waitForSelector("[data-testid=price-summary]");
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    for (const v of views) await superseded(page, v);
    await supersededByLink(page);
    await chooseServing(browser, page, views.find((v) => v.tab === "serving").answer);
    await page.close();
    await printAndChoose(browser, context);
} catch (e) {
    check(false, `the test ran to the end (${e.stack ?? e})`);
} finally {
    await browser?.close();
    proc.kill("SIGTERM");
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
