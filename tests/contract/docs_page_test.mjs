// GET /docs in headless Chromium (Debian's chromium, driven by playwright-core from
// package.json): the Redoc page renders the served openapi.yaml and lists every operation,
// every file it loads comes from the server itself (no CDN), and the page and its bundle carry
// the right content types.
//
// usage: node docs_page_test.mjs GPUCOST_BINARY OPENAPI_YAML [CHROMIUM]
// Prints one line per check and ends with 'N passed, M failed'.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { startServer } from "./serve.mjs";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");
const YAML = require("yaml");

const [binary, specPath, executablePath = "/usr/bin/chromium"] = process.argv.slice(2);
let passed = 0;
let failed = 0;
function check(ok, what) {
    ok ? passed++ : failed++;
    console.log(`${ok ? "ok" : "not ok"} - ${what}`);
    return ok;
}

const spec = YAML.parse(readFileSync(specPath, "utf8"), { uniqueKeys: true });
const operations = [];
for (const item of Object.values(spec.paths)) {
    for (const [method, op] of Object.entries(item)) {
        if (op && typeof op === "object" && op.operationId) {
            operations.push({ method, id: op.operationId, summary: op.summary });
        }
    }
}

const { proc, port } = await startServer(binary);
const base = `http://127.0.0.1:${port}`;
let browser;
try {
    const page = await fetch(`${base}/docs`);
    check(page.status === 200, "GET /docs answers 200");
    check(page.headers.get("content-type") === "text/html; charset=utf-8",
          `the page is text/html (${page.headers.get("content-type")})`);
    check((page.headers.get("content-security-policy") ?? "").includes("script-src 'self'"),
          "the page's Content-Security-Policy allows scripts from this server only");
    const bundle = await fetch(`${base}/docs/redoc.standalone.js`);
    check(bundle.status === 200 && bundle.headers.get("content-type") === "text/javascript; charset=utf-8",
          `the bundle is text/javascript (${bundle.headers.get("content-type")})`);
    check((await bundle.text()).length > 100000, "the bundle is Redoc's, not a stub");

    browser = await chromium.launch({ executablePath, headless: true,
                                      args: ["--no-sandbox", "--disable-gpu"] });
    const tab = await browser.newPage();
    const foreign = [];
    const problems = [];
    tab.on("request", (r) => {
        if (!r.url().startsWith(base) && !r.url().startsWith("blob:") && !r.url().startsWith("data:")) {
            foreign.push(r.url());
        }
    });
    tab.on("console", (m) => {
        if (m.type() === "error") problems.push(m.text());
    });
    tab.on("pageerror", (e) => problems.push(String(e)));
    await tab.goto(`${base}/docs`, { waitUntil: "load", timeout: 60000 });
    const first = operations[0];
    await tab.waitForSelector(`[data-section-id$="operation/${first.id}"]`, { timeout: 60000 });
    const listed = await tab.evaluate(() => Array.from(document.querySelectorAll("[data-section-id]"))
        .map((e) => e.getAttribute("data-section-id")));
    let missing = 0;
    for (const op of operations) {
        if (!listed.some((id) => id.endsWith(`operation/${op.id}`))) {
            missing++;
            console.log(`  missing: ${op.method.toUpperCase()} ${op.id}`);
        }
    }
    check(missing === 0, `all ${operations.length} operations of openapi.yaml are listed (${missing} missing)`);
    const title = await tab.evaluate(() => document.querySelector("h1")?.textContent ?? "");
    check(title.includes(spec.info.title), `the page shows the API title (${title})`);
    check(foreign.length === 0, `nothing loaded from elsewhere (${foreign.slice(0, 3).join(", ")})`);
    check(problems.length === 0, `no console errors or CSP violations (${problems.slice(0, 2).join(" | ")})`);
} finally {
    if (browser) await browser.close();
    proc.kill("SIGTERM");
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
