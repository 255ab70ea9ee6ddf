// A budgeting scenario driven through a client nobody here wrote: types generated from
// openapi.yaml by openapi-typescript (api.d.ts, made by client_build.sh), calls made by
// openapi-fetch, the whole file type-checked by tsc. Every response the server sends is
// validated with ajv (JSON Schema 2020-12, strict mode) against the schema openapi.yaml gives
// for its operation, status and content type; an undocumented status or content type fails.
//
// usage: node scenario.mjs GPUCOST_BINARY OPENAPI_YAML embedded|database
//   database mode needs DATABASE_URL (tests/pg/with_pg.sh sets it): the scenario migrates,
//   seeds and issues keys with the binary's own commands first.
// Prints one line per check and ends with "N responses validated, M mismatches; K checks failed".

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

import createClient, { type Middleware } from "openapi-fetch";

import type { components, paths } from "./api.js";

type Schema = components["schemas"];
type JsonObject = Record<string, unknown>;

const require = createRequire(import.meta.url);
const Ajv2020: typeof import("ajv/dist/2020.js").default = require("ajv/dist/2020");
const addFormats: typeof import("ajv-formats").default = require("ajv-formats");
const YAML: typeof import("yaml") = require("yaml");

const [binary, specPath, mode] = process.argv.slice(2);
if (!binary || !specPath || (mode !== "embedded" && mode !== "database")) {
    console.error("usage: node scenario.mjs GPUCOST_BINARY OPENAPI_YAML embedded|database");
    process.exit(2);
}

// ---------------------------------------------------------------------------------------------
// Checks and counts.

let checksFailed = 0;
let checksPassed = 0;
let responsesValidated = 0;
let mismatches = 0;

function check(ok: boolean, what: string): boolean {
    if (ok) {
        checksPassed++;
    } else {
        checksFailed++;
        console.log(`not ok - ${what}`);
    }
    return ok;
}

// ---------------------------------------------------------------------------------------------
// The contract, loaded strictly (a duplicate key is an error) and compiled by ajv.

const spec = YAML.parse(readFileSync(specPath, "utf8"), { uniqueKeys: true, strict: true }) as {
    paths: Record<string, Record<string, JsonObject>>;
    components: { schemas: Record<string, unknown>; responses: Record<string, JsonObject> };
};

const kSchemaId = "urn:gpucost:openapi";

// Component schemas live under $defs of one schema document; the document's
// "#/components/schemas/X" references point there.
function rewriteRefs(node: unknown): unknown {
    if (Array.isArray(node)) {
        return node.map(rewriteRefs);
    }
    if (node !== null && typeof node === "object") {
        const out: JsonObject = {};
        for (const [key, value] of Object.entries(node as JsonObject)) {
            if (key === "$ref" && typeof value === "string" &&
                value.startsWith("#/components/schemas/")) {
                out[key] = `${kSchemaId}#/$defs/${value.slice("#/components/schemas/".length)}`;
            } else {
                out[key] = rewriteRefs(value);
            }
        }
        return out;
    }
    return node;
}

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
// OpenAPI's own annotations inside schemas; they do not constrain values.
ajv.addVocabulary(["example", "discriminator", "xml", "externalDocs"]);
// Money (openapi.yaml's info, "Money"): a decimal amount with at most so many places.
ajv.addFormat("decimal", { type: "number", validate: (x: number) => Number.isFinite(x) });
ajv.addKeyword({
    keyword: "x-fraction-digits",
    type: "number",
    schemaType: "number",
    validate: (digits: number, value: number) => Number(value.toFixed(digits)) === value,
});
ajv.addSchema({ $id: kSchemaId, $defs: rewriteRefs(spec.components.schemas) as JsonObject });

const compiled = new Map<string, ReturnType<typeof ajv.compile>>();

function validatorFor(key: string, schema: unknown): ReturnType<typeof ajv.compile> {
    let v = compiled.get(key);
    if (!v) {
        v = ajv.compile(rewriteRefs(schema) as JsonObject);
        compiled.set(key, v);
    }
    return v;
}

function documentedResponse(template: string, method: string, status: number): JsonObject | null {
    const op = spec.paths[template]?.[method] as { responses?: Record<string, JsonObject> } | undefined;
    let response = op?.responses?.[String(status)] ?? op?.responses?.["default"];
    if (!response) {
        return null;
    }
    const ref = response["$ref"];
    if (typeof ref === "string") {
        response = spec.components.responses[ref.slice("#/components/responses/".length)];
    }
    return response ?? null;
}

// Validates one response against the document; reads a clone, so the caller can still read it.
async function validateResponse(template: string, method: string, response: Response) {
    const what = `${method.toUpperCase()} ${template} -> ${response.status}`;
    const documented = documentedResponse(template, method.toLowerCase(), response.status);
    if (!documented) {
        mismatches++;
        console.log(`mismatch - ${what}: status not documented`);
        return;
    }
    const content = documented["content"] as Record<string, { schema?: unknown }> | undefined;
    const mediaType = (response.headers.get("content-type") ?? "").split(";")[0]!.trim();
    const text = await response.clone().text();
    if (!content) {
        responsesValidated++;
        if (text.length !== 0) {
            mismatches++;
            console.log(`mismatch - ${what}: a body where none is documented`);
        }
        return;
    }
    const media = content[mediaType];
    if (!media) {
        mismatches++;
        console.log(`mismatch - ${what}: content type '${mediaType}' not documented`);
        return;
    }
    let body: unknown = text;
    if (mediaType.endsWith("json")) {
        try {
            body = JSON.parse(text);
        } catch {
            mismatches++;
            console.log(`mismatch - ${what}: body is not JSON`);
            return;
        }
    }
    responsesValidated++;
    if (media.schema === undefined) {
        return;
    }
    const validate = validatorFor(`${method} ${template} ${response.status} ${mediaType}`,
                                  media.schema);
    if (!validate(body)) {
        mismatches++;
        console.log(`mismatch - ${what}: ${ajv.errorsText(validate.errors, { dataVar: "body" })}`);
    }
}

const validating: Middleware = {
    async onResponse({ request, response, schemaPath }) {
        await validateResponse(schemaPath, request.method, response);
    },
};

// Requests the typed client cannot make (a wrong content type, CSV, a raw body) go through
// this, validated the same way.
async function raw(base: string, template: string, path: string, init: RequestInit = {}) {
    const response = await fetch(base + path, init);
    await validateResponse(template, init.method ?? "GET", response);
    return response;
}

// ---------------------------------------------------------------------------------------------
// The server.

function startServer(args: string[], env: NodeJS.ProcessEnv): Promise<{ proc: ChildProcess; port: number }> {
    return new Promise((resolve, reject) => {
        const proc = spawn(binary!, ["--port", "0", "--access-log", "false", ...args],
                           { env, stdio: ["ignore", "ignore", "pipe"] });
        let buffered = "";
        const timer = setTimeout(() => reject(new Error("no 'listening' line in 20 s")), 20_000);
        proc.stderr!.on("data", (chunk: Buffer) => {
            buffered += chunk.toString();
            for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
                const line = buffered.slice(0, nl);
                buffered = buffered.slice(nl + 1);
                try {
                    const entry = JSON.parse(line) as { msg?: string; port?: number };
                    if (entry.msg === "listening" && entry.port) {
                        clearTimeout(timer);
                        resolve({ proc, port: entry.port });
                    }
                } catch {
                    // not a log line
                }
            }
        });
        proc.on("exit", (code) => reject(new Error(`gpucost exited with ${code} before listening`)));
    });
}

function stopServer(proc: ChildProcess): Promise<number | null> {
    return new Promise((resolve) => {
        const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
        proc.on("exit", (code) => {
            clearTimeout(timer);
            resolve(code);
        });
        proc.kill("SIGTERM");
    });
}

// ---------------------------------------------------------------------------------------------
// The scenario's steps.

// Answers that also come as CSV declare each media type on its own in openapi.yaml, so naming
// the media types the client reads (openapi-fetch's second type parameter) types them as their
// JSON form alone: no narrowing (the plans below are annotated with their schemas, so a JSON |
// string union fails tsc).
type JsonMedia = "application/json" | "application/problem+json";
type Client = ReturnType<typeof createClient<paths, JsonMedia>>;

async function discover(api: Client, base: string) {
    const index = await api.GET("/");
    // "/" answers a browser (Accept: text/html) with the planning page; this client gets JSON,
    // typed as JSON alone (the annotation fails to compile if the page's string were mixed in).
    const entry: paths["/"]["get"]["responses"][200]["content"]["application/json"] | undefined =
        index.data;
    check(index.response.status === 200 && entry?.openapi === "/openapi.yaml",
          "the index links the contract");
    const health = await api.GET("/healthz");
    check(health.response.status === 200, "healthz answers 200");
    const ready = await api.GET("/readyz");
    check(ready.response.status === 200, "readyz answers 200");
    const document = await raw(base, "/openapi.yaml", "/openapi.yaml");
    check((await document.text()) === readFileSync(specPath!, "utf8"),
          "the served contract is the file this client was generated from");
}

async function chooseAccelerators(api: Client): Promise<string[]> {
    const all = await api.GET("/v1/accelerators");
    const ids = (all.data?.items ?? []).map((a) => a.id);
    check(ids.length > 0 && all.data?.total_count === ids.length,
          `accelerators listed (${ids.length}) match total_count`);
    const nvidia = await api.GET("/v1/accelerators", { params: { query: { vendor: ["NVIDIA"] } } });
    check((nvidia.data?.items.length ?? 0) > 0, "NVIDIA accelerators are listed");
    for (const id of ids) {
        const one = await api.GET("/v1/accelerators/{id}", { params: { path: { id } } });
        check(one.data?.id === id, `accelerator ${id} reads back`);
    }
    const unknown = await api.GET("/v1/accelerators/{id}", { params: { path: { id: "h100-sxmm" } } });
    check(unknown.response.status === 404, "an unknown accelerator is 404");
    return ids;
}

// Walks every page of one offerings query; the pages must add up to total_count exactly,
// with no offering twice.
async function walkOfferings(api: Client,
                             query: NonNullable<paths["/v1/offerings"]["get"]["parameters"]["query"]>,
                             label: string): Promise<Schema["Offering"][]> {
    const seen: Schema["Offering"][] = [];
    const ids = new Set<string>();
    let cursor: string | undefined;
    let total = -1;
    for (let page = 0; page < 1000; page++) {
        const res = await api.GET("/v1/offerings", { params: { query: { ...query, cursor } } });
        if (!check(res.response.status === 200 && res.data !== undefined,
                   `offerings page ${page} of ${label} answers 200`)) {
            return seen;
        }
        const data = res.data!;
        total = data.total_count;
        for (const o of data.items) {
            check(!ids.has(o.id), `offering ${o.id} appears once in ${label}`);
            ids.add(o.id);
            seen.push(o);
        }
        cursor = data.next_cursor ?? undefined;
        if (!cursor) {
            break;
        }
    }
    check(seen.length === total, `the walk over ${label} found ${seen.length} = total_count ${total}`);
    return seen;
}

async function shopOfferings(api: Client, accelerators: string[]): Promise<Schema["Offering"][]> {
    const everything = await walkOfferings(api, { limit: 7, sort: "id" }, "the whole catalog by id");
    for (const sort of ["usd_per_hour", "-usd_per_accelerator_hour", "accelerator_count",
                        "-as_of", "provider"] as const) {
        await walkOfferings(api, { limit: 11, sort }, `the whole catalog by ${sort}`);
    }
    for (const accelerator of accelerators) {
        await walkOfferings(api, { accelerator: [accelerator], limit: 3 }, `accelerator ${accelerator}`);
    }
    for (const price_type of ["on_demand", "spot"] as const) {
        await walkOfferings(api, { price_type: [price_type], min_accelerator_count: 8, limit: 5 }, `${price_type} x8+`);
    }
    for (const o of everything) {
        const one = await api.GET("/v1/offerings/{id}", { params: { path: { id: o.id } } });
        check(one.data?.usd_per_hour === o.usd_per_hour, `offering ${o.id} reads back its price`);
    }
    const providers = await api.GET("/v1/providers");
    check((providers.data?.items.length ?? 0) > 0, "providers are listed");
    const catalog = await api.GET("/v1/catalog");
    check(catalog.response.status === 200, "the catalog summary answers 200");
    return everything;
}

async function estimate(api: Client) {
    const training = await api.POST("/v1/estimates/training", {
        body: {
            model: { params_b: 7 },
            tokens_b: 100,
            hardware: { accelerator: "h100-sxm", total_accelerators: 64 },
            precision: "bf16",
        },
    });
    check(training.response.status === 200, "a 7B training estimate answers 200");
    const inference = await api.POST("/v1/estimates/inference", {
        body: {
            model: { params_b: 8 },
            hardware: { accelerator: "l40s", total_accelerators: 1 },
            input_tokens: 1000,
            output_tokens: 250,
        },
    });
    check(inference.response.status === 200, "an 8B inference estimate answers 200");
    const roofline = await api.POST("/v1/estimates/roofline", {
        body: { accelerator: "h100-sxm", precision: "bf16",
                ops: [{ kind: "gemm", m: 4096, n: 4096, k: 4096 }] },
    });
    check(roofline.response.status === 200, "a roofline answers 200");
}

async function plan(api: Client, base: string, offerings: Schema["Offering"][]) {
    const training = await api.POST("/v1/plans/training", {
        body: {
            model: { params_b: 7 },
            tokens_b: 100,
            constraints: { deadline_hours: 720, budget_usd: 100000, price_types: ["on_demand", "spot"] },
            limit: 5,
        },
    });
    const trainingPlan: Schema["TrainingPlan"] | undefined = training.data;
    check(training.response.status === 200 && (trainingPlan?.options.length ?? 0) > 0,
          "a 7B training plan has options");
    const csv = await raw(base, "/v1/plans/training", "/v1/plans/training", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/csv" },
        body: JSON.stringify({ model: { params_b: 7 }, tokens_b: 100, limit: 3 }),
    });
    check(csv.status === 200 && (await csv.text()).startsWith("offering_id,"),
          "the training plan comes back as CSV");

    const spotByNumbers = await api.POST("/v1/plans/spot", {
        body: { job_hours: 100, on_demand_usd_per_hour: 98.32, spot_usd_per_hour: 30,
                interruptions_per_hour: 0.1 },
    });
    check(spotByNumbers.response.status === 200, "a spot plan from numbers answers 200");
    // Named spot offerings: any may lack a bucket or an on-demand twin (409, documented);
    // at least one of them must plan.
    let spotPlanned = 0;
    for (const o of offerings.filter((x) => x.price_type === "spot" && x.spot_interruption)) {
        const res = await api.POST("/v1/plans/spot", {
            body: { spot_offering_id: o.id, workload: { model: { params_b: 7 }, tokens_b: 20 } },
        });
        spotPlanned += res.response.status === 200 ? 1 : 0;
    }
    check(spotPlanned > 0, `spot plans from named offerings: ${spotPlanned} answered 200`);

    const rentVsBuy = await api.POST("/v1/plans/rent-vs-buy", {
        body: {
            buy: { accelerator: "h100-sxm", total_accelerators: 8 },
            rent: { offering_id: offerings.find((o) => o.accelerator === "h100-sxm" &&
                                                       o.price_type === "on_demand")?.id ?? "none" },
        },
    });
    check(rentVsBuy.response.status === 200, "rent vs buy against a named offering answers 200");
    // Members always sent are required: the catalog version reads as a string, not `| undefined`.
    if (rentVsBuy.data) {
        const version: string = rentVsBuy.data.catalog_version;
        check(version.length > 0, "a rent-vs-buy plan names its catalog version");
    }
    const inference = await api.POST("/v1/plans/inference", {
        body: {
            model: { params_b: 8 },
            input_tokens: 1000,
            output_tokens: 250,
            traffic: { requests_per_second: 5 },
            limit: 3,
        },
    });
    check(inference.response.status === 200, "a serving plan answers 200");
    const servingPlan: Schema["InferencePlan"] | undefined = inference.data;
    const served = servingPlan?.options[0];
    check(served !== undefined && (servingPlan?.total_count ?? 0) >= 1 &&
          served.total_accelerators === served.nodes * served.offering.accelerator_count &&
          Math.abs(served.cluster_usd_per_hour - served.nodes * served.offering.usd_per_hour) < 1e-6,
          "a serving option rents nodes x accelerator_count accelerators at nodes x usd_per_hour");

    // An inline price book, and the plan as FOCUS forecast rows.
    const booked = await api.POST("/v1/plans/training", {
        body: {
            model: { params_b: 7 },
            tokens_b: 100,
            constraints: { providers: ["aws"], price_types: ["on_demand"] },
            limit: 3,
            price_book: { name: "acme EDP", version: 2,
                          rules: [{ provider: "aws", discount_fraction: 0.18 },
                                  { provider: "azure", instance_family: "Standard_ND96isr",
                                    discount_fraction: 0.2 }] },
        },
    });
    const bookedPlan: Schema["TrainingPlan"] | undefined = booked.data;
    const first = bookedPlan?.options[0]?.offering;
    check(booked.response.status === 200 && bookedPlan?.pricing_basis === "price_book" &&
          bookedPlan.price_book?.name === "acme EDP" && first?.list_usd_per_hour !== undefined &&
          Math.abs(first.usd_per_hour - first.list_usd_per_hour * 0.82) < 1e-6,
          "a training plan through a price book shows list beside the effective price");
    check(trainingPlan?.pricing_basis === "list", "a plan without a book is priced at list");
    const focus = await raw(base, "/v1/plans/training", "/v1/plans/training?format=focus", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ model: { params_b: 7 }, tokens_b: 100, limit: 3 }),
    });
    check(focus.status === 200 && (await focus.text()).startsWith("AvailabilityZone,BilledCost,"),
          "the training plan comes back as FOCUS forecast rows");
}

// The faults a client meets; each answer must be the documented problem.
async function misuse(api: Client, base: string) {
    const unknownParameter = await raw(base, "/v1/offerings", "/v1/offerings?gpu=h100");
    check(unknownParameter.status === 400, "an unknown query parameter is 400");
    const badLimit = await api.GET("/v1/offerings", { params: { query: { limit: 0 } } });
    check(badLimit.response.status === 422, "limit 0 is 422");
    const unknownField = await raw(base, "/v1/estimates/roofline", "/v1/estimates/roofline", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ accelerator: "h100-sxm", ops: [], colour: "red" }),
    });
    check(unknownField.status === 400, "an unknown body field is 400");
    const unknownAccelerator = await api.POST("/v1/estimates/roofline", {
        body: { accelerator: "h100-sxmm", precision: "bf16", ops: [{ kind: "gemm", m: 1, n: 1, k: 1 }] },
    });
    check(unknownAccelerator.response.status === 422, "an unknown accelerator id is 422");
    const firstPage = await api.GET("/v1/offerings", { params: { query: { limit: 2, price_type: ["spot"] } } });
    const cursor = firstPage.data?.next_cursor ?? "none";
    const otherQuery = await api.GET("/v1/offerings", {
        params: { query: { limit: 2, price_type: ["on_demand"], cursor } },
    });
    check(otherQuery.response.status === 400 && otherQuery.error?.field === "cursor",
          "a cursor replayed on another query is 400 naming the cursor");
    const ranged = await raw(base, "/v1/offerings", "/v1/offerings?limit=2",
                             { headers: { Range: "bytes=0-10" } });
    check(ranged.status === 200 && (await ranged.json() as { items?: unknown[] }).items?.length === 2,
          "a Range header is ignored: the whole answer comes back");
    const missingField = await raw(base, "/v1/plans/rent-vs-buy", "/v1/plans/rent-vs-buy", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ rent: { usd_per_month: 1 } }),
    });
    check(missingField.status === 422, "a missing required field is 422");
    const textEstimate = await raw(base, "/v1/estimates/roofline", "/v1/estimates/roofline", {
        method: "POST",
        headers: { "Content-Type": "text/plain" },
        body: JSON.stringify({ accelerator: "h100-sxm", precision: "bf16", ops: [] }),
    });
    check(textEstimate.status === 415, "a text/plain body is 415 on estimates too");
    const unknownConstraint = await raw(base, "/v1/plans/training", "/v1/plans/training", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ model: { params_b: 7 }, tokens_b: 1,
                               constraints: { accelerators: ["h100-sxmm"] } }),
    });
    check(unknownConstraint.status === 422, "an unknown accelerator in plan constraints is 422");
    const textBody = await raw(base, "/v1/plans/spot", "/v1/plans/spot", {
        method: "POST",
        headers: { "Content-Type": "text/plain" },
        body: JSON.stringify({ job_hours: 1 }),
    });
    check(textBody.status === 415, "a text/plain body is 415");
}

// Without a database, history, as_of and scenarios answer 409 database_required, which a
// client must not retry (no Retry-After).
async function embeddedOnly(api: Client, offerings: Schema["Offering"][]) {
    const id = offerings[0]?.id ?? "none";
    const needsDatabase = (what: string, response: Response, code: string | undefined) =>
        check(response.status === 409 && code === "database_required" &&
              !response.headers.has("Retry-After"), `${what} is 409 database_required`);
    const history = await api.GET("/v1/offerings/{id}/history", { params: { path: { id } } });
    needsDatabase("price history", history.response, history.error?.code);
    const asOf = await api.GET("/v1/offerings", { params: { query: { as_of: "2026-01-01" } } });
    needsDatabase("as_of", asOf.response, asOf.error?.code);
    const scenarios = await api.GET("/v1/scenarios");
    needsDatabase("saved scenarios", scenarios.response, scenarios.error?.code);
    const calibrated = await api.POST("/v1/plans/training", {
        body: { model: { params_b: 7 }, tokens_b: 10, calibration: { scenario_ids: ["1"] } },
    });
    needsDatabase("calibration", calibrated.response, calibrated.error?.code);
    const progress = await api.PUT("/v1/scenarios/{id}/progress", {
        params: { path: { id: "1" } }, body: { tokens_done_b: 1, as_of: "2026-01-10" },
    });
    needsDatabase("progress", progress.response, progress.error?.code);
}

function gpucostCommand(...args: string[]): string {
    return execFileSync(binary!, [...args, "--database-url", process.env["DATABASE_URL"]!],
                        { encoding: "utf8", timeout: 60_000, stdio: ["ignore", "pipe", "pipe"] }).trim();
}

// A negotiated price book stored once, versioned, and named by id in a plan.
async function storedPriceBook(api: ReturnType<typeof createClient<paths, JsonMedia>>, base: string) {
    const created = await api.POST("/v1/price-books", {
        body: { id: "client-edp", name: "client EDP",
                rules: [{ provider: "aws", discount_fraction: 0.18 }] },
    });
    check(created.response.status === 201 && created.data?.version === 1,
          "an admin stores a price book (version 1)");
    const replaced = await api.PUT("/v1/price-books/{id}", {
        params: { path: { id: "client-edp" }, header: { "If-Match": created.response.headers.get("ETag") ?? "" } },
        body: { name: "client EDP", rules: [{ provider: "aws", discount_fraction: 0.2 }] },
    });
    check(replaced.response.status === 200 && replaced.data?.version === 2,
          "a PUT writes version 2 of the book");
    const first = await api.GET("/v1/price-books/{id}", {
        params: { path: { id: "client-edp" }, query: { version: 1 } },
    });
    check(first.data?.rules[0]?.discount_fraction === 0.18, "version 1 stays readable");
    const plan = await api.POST("/v1/plans/training", {
        body: { model: { params_b: 7 }, tokens_b: 100, limit: 3, price_book: "client-edp",
                constraints: { providers: ["aws"], price_types: ["on_demand"] } },
    });
    const option = plan.data?.options[0]?.offering;
    check(plan.response.status === 200 && plan.data?.price_book?.id === "client-edp" &&
          plan.data?.price_book?.version === 2 && option?.list_usd_per_hour !== undefined &&
          Math.abs(option.usd_per_hour - option.list_usd_per_hour * 0.8) < 1e-6,
          "a training plan names the stored book by id and is priced with its latest version");
    const pinned = await api.POST("/v1/plans/training", {
        body: { model: { params_b: 7 }, tokens_b: 100, limit: 3, price_book: { id: "client-edp", version: 1 },
                constraints: { providers: ["aws"], price_types: ["on_demand"] } },
    });
    const pinnedOption = pinned.data?.options[0]?.offering;
    check(pinned.response.status === 200 && pinned.data?.price_book?.version === 1 &&
          pinnedOption?.list_usd_per_hour !== undefined &&
          Math.abs(pinnedOption.usd_per_hour - pinnedOption.list_usd_per_hour * 0.82) < 1e-6,
          "a plan names version 1 of the book as {id, version}");
    const listed = await api.GET("/v1/price-books");
    check(listed.data?.items.some((b) => b.id === "client-edp") === true, "the book is listed");
    await commitmentsOnBook(api);
    await keyDefaultBook(api, base);
    const deleted = await api.DELETE("/v1/price-books/{id}", { params: { path: { id: "client-edp" } } });
    check(deleted.response.status === 204, "an admin deletes the book");
}

// The commitments a portfolio should buy (POST /v1/plans/commitments): a run saved on the book
// is the demand it reads, and the answer echoes the slip asked for.
async function commitmentsOnBook(api: ReturnType<typeof createClient<paths, JsonMedia>>) {
    const run = await api.POST("/v1/scenarios", {
        body: { name: "client run on the book", plan: "training",
                request: { model: { params_b: 7 }, tokens_b: 100, price_book: "client-edp",
                           constraints: { providers: ["aws"], price_types: ["on_demand"] } } },
    });
    const id = String(run.data?.id ?? "0");
    const commitments = await api.POST("/v1/plans/commitments", {
        body: { price_book: "client-edp", slip_days: 30 },
    });
    check(run.response.status === 201 && commitments.response.status === 200 &&
          commitments.data?.scenarios.some((s) => s.scenario_id === id) === true &&
          commitments.data?.assumptions.some((a) => a.name === "commitment.slip_days" &&
                                                    a.value === 30) === true,
          "the commitments route reads the run saved on the book and echoes slip_days");
    const deleted = await api.DELETE("/v1/scenarios/{id}", { params: { path: { id } } });
    check(deleted.response.status === 204, "the run on the book is deleted again");
}

// A team key whose default book prices its plans; the book is not deleted under it.
async function keyDefaultBook(admin: ReturnType<typeof createClient<paths, JsonMedia>>, base: string) {
    const key = gpucostCommand("apikey", "create", "--scope", "read", "--name", "client-team",
                               "--price-book", "client-edp");
    const team = createClient<paths, JsonMedia>({ baseUrl: base, headers: { Authorization: `Bearer ${key}` } });
    team.use(validating);
    const body = { model: { params_b: 7 }, tokens_b: 100, limit: 3,
                   constraints: { providers: ["aws"], price_types: ["on_demand"] as ("on_demand")[] } };
    let plan = await team.POST("/v1/plans/training", { body });
    for (let i = 0; i < 100 && plan.data?.pricing_basis !== "price_book"; ++i) {
        await new Promise((done) => setTimeout(done, 50));  // the servers re-read the keys
        plan = await team.POST("/v1/plans/training", { body });
    }
    check(plan.data?.price_book?.id === "client-edp" && plan.data?.price_book?.version === 2 &&
          plan.data?.price_book?.from_key_default === true,
          "a team key's plan without price_book is priced with the key's default book");
    const atList = await team.POST("/v1/plans/training", { body: { ...body, price_book: null } });
    check(atList.data?.pricing_basis === "list", "\"price_book\": null plans at list prices");
    const refused = await admin.DELETE("/v1/price-books/{id}", { params: { path: { id: "client-edp" } } });
    check(refused.response.status === 409, "a key's default book is not deleted");
    gpucostCommand("apikey", "price-book", key.split("_")[1] ?? "", "none");
}

// Plan vs actual: a training scenario's progress, the accelerator split of
// GET .../actuals, and a later plan asking for calibration from it (no charges yet: refused,
// naming the scenario).
async function planVsActual(api: ReturnType<typeof createClient<paths, JsonMedia>>) {
    const request = { model: { params_b: 7 }, tokens_b: 10, start_date: "2026-01-01",
                      constraints: { providers: ["aws"], price_types: ["on_demand" as const] } };
    const saved = await api.POST("/v1/scenarios", {
        body: { name: "client run", plan: "training", request },
    });
    check(saved.response.status === 201, "a training scenario is saved");
    const id = String(saved.data?.id ?? "0");
    const progress = await api.PUT("/v1/scenarios/{id}/progress", {
        params: { path: { id } }, body: { tokens_done_b: 2, as_of: "2026-01-10" },
    });
    check(progress.response.status === 200 && progress.data?.tokens_done_b === 2,
          "the owner records the tokens done");
    const badProgress = await api.PUT("/v1/scenarios/{id}/progress", {
        params: { path: { id } }, body: { tokens_done_b: -1, as_of: "2026-01-10" },
    });
    check(badProgress.response.status === 422 && badProgress.error?.field === "/tokens_done_b",
          "negative tokens are 422 naming /tokens_done_b");
    const compared = await api.GET("/v1/scenarios/{id}/actuals", { params: { path: { id } } });
    check(compared.response.status === 200 && (compared.data?.planned.accelerator_hours ?? 0) > 0 &&
          compared.data?.accelerator_split.quantity_effect_usd ===
              compared.data?.accelerator_split.gap_usd &&
          compared.data?.progress?.actual_to_estimated_hours_ratio === null,
          "without charges the whole gap is quantity and no speed is implied");
    const uncharged = await api.POST("/v1/plans/training", {
        body: { ...request, calibration: { scenario_ids: [id] } },
    });
    check(uncharged.response.status === 422 &&
          uncharged.error?.field === "/calibration/scenario_ids/0",
          "calibration from a scenario without charges is 422 naming it");
    // The bill arrives: a FOCUS export whose p5.48xlarge hours (8 accelerators each) are a
    // quarter of the plan's accelerator-hours for a fifth of its tokens, so the run is 1.25
    // times slower than estimated.
    const plannedHours = compared.data?.planned.accelerator_hours ?? 0;
    const instanceHours = (plannedHours * 0.25) / 8;
    const focus =
        "BilledCost,EffectiveCost,ListCost,ConsumedQuantity,ConsumedUnit,ChargeCategory," +
        "ChargePeriodStart,BillingCurrency,ProviderName,RegionId,PricingCategory,x_UsageType,Tags\n" +
        `${instanceHours * 98.32},${instanceHours * 78.66},${instanceHours * 98.32},${instanceHours},` +
        "Hours,Usage,2026-01-05T00:00:00Z,USD,AWS,us-east-1,Standard,USE1-BoxUsage:p5.48xlarge," +
        `"{""gpucost-scenario"":""${id}""}"\n` +
        "0.50,0.50,0.50,1,Requests,Usage,2026-01-05T00:00:00Z,USD,AWS,us-east-1,Standard," +
        `USE1-Requests-Tier1,"{""gpucost-scenario"":""${id}""}"\n`;
    const importFocus = () => api.POST("/v1/actuals", {
        body: focus, bodySerializer: (text: string) => text,
        headers: { "Content-Type": "text/csv" },
    });
    const imported = await importFocus();
    check(imported.response.status === 201 && imported.data?.kept === 1 &&
          imported.data?.added === 1 && imported.data?.skipped.non_accelerator === 1,
          `POST /v1/actuals keeps the accelerator row and skips the other (${JSON.stringify(imported.data ?? imported.error)})`);
    const again = await importFocus();
    check(again.response.status === 201 && again.data?.added === 0 &&
          again.data?.already_imported === 1, "the same export again adds nothing");
    const charged = await api.GET("/v1/scenarios/{id}/actuals", { params: { path: { id } } });
    const ratio = charged.data?.progress?.actual_to_estimated_hours_ratio ?? 0;
    check(charged.response.status === 200 && Math.abs(ratio - 1.25) < 1e-6 &&
          Math.abs((charged.data?.actual.accelerator_hours ?? 0) - plannedHours * 0.25) < 1e-6,
          `the charges imply 1.25 x the estimated hours (answered ${ratio})`);
    const calibrated = await api.POST("/v1/plans/training", {
        body: { ...request, calibration: { scenario_ids: [id] } },
    });
    const factor = calibrated.data?.assumptions?.find((a) => a.name === "calibration_hours_factor");
    check(calibrated.response.status === 200 && Math.abs(Number(factor?.value ?? 0) - 1.25) < 1e-6,
          "a later plan calibrated from the scenario echoes the factor 1.25");
}

async function databaseOnly(base: string, offerings: Schema["Offering"][]) {
    const admin = gpucostCommand("apikey", "create", "--scope", "admin", "--name", "client-admin");
    const api = createClient<paths, JsonMedia>({ baseUrl: base, headers: { Authorization: `Bearer ${admin}` } });
    api.use(validating);
    const target = offerings.find((o) => o.price_type === "on_demand")!;
    const history = await api.GET("/v1/offerings/{id}/history", {
        params: { path: { id: target.id } },
    });
    check(history.response.status === 200, "price history answers 200");
    const newPrice = Math.round(target.usd_per_hour * 93) / 100;
    // The server checks keys against its in-memory copy of the key table, reloaded when the
    // command line's write is NOTIFYed (docs/database.md): a key used at once may be refused
    // with 401 until then, as an integrator would see it. The Idempotency-Key makes the
    // retry safe.
    const correct = () => api.PUT("/v1/offerings/{id}/price", {
        params: { path: { id: target.id }, header: { "If-Match": history.data!.etag,
                                                     "Idempotency-Key": "client-scenario-1" } },
        body: { usd_per_hour: newPrice, source: "client scenario: negotiated 7 % off" },
    });
    let written = await correct();
    for (let wait = 0; written.response.status === 401 && wait < 50; wait++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        written = await correct();
    }
    check(written.response.status === 200,
          `an admin corrects a price (answered ${written.response.status}: ${JSON.stringify(written.error ?? {})})`);
    const readBack = await api.GET("/v1/offerings/{id}", { params: { path: { id: target.id } } });
    check(readBack.data?.usd_per_hour === newPrice, "the corrected price is served at once");
    const before = await api.GET("/v1/offerings/{id}", {
        params: { path: { id: target.id }, query: { as_of: "2020-01-01T00:00:00Z" } },
    });
    check(before.response.status === 200 || before.response.status === 404,
          "as_of before the catalog answers from history");
    const saved = await api.POST("/v1/scenarios", {
        body: { name: "client budget", plan: "spot", tags: ["client", "q3"],
                request: { job_hours: 100, on_demand_usd_per_hour: 98.32, spot_usd_per_hour: 30,
                           interruptions_per_hour: 0.1 } },
    });
    check(saved.response.status === 201, "a scenario is saved");
    check(saved.data?.catalog_version === (saved.data?.saved_result as { catalog_version?: string })
              ?.catalog_version, "a scenario names the catalog_version of its saved answer");
    const listed = await api.GET("/v1/scenarios", { params: { query: { tag: "client", plan: "spot" } } });
    check((listed.data?.items.length ?? 0) > 0 && listed.data?.total_count === listed.data?.items.length,
          "saved scenarios are listed by tag and plan, with total_count");
    const id = saved.data?.id ?? "0";
    const one = await api.GET("/v1/scenarios/{id}", { params: { path: { id: String(id) } } });
    check(one.response.status === 200, "the saved scenario reads back");
    const evaluated = await api.POST("/v1/scenarios/{id}/evaluate", {
        params: { path: { id: String(id) } },
    });
    check(evaluated.response.status === 200, "the saved scenario re-evaluates");
    const renamed = await api.PATCH("/v1/scenarios/{id}", {
        params: { path: { id: String(id) }, header: { "If-Match": one.response.headers.get("ETag") ?? "" } },
        body: { name: "client budget, renamed", tags: ["q4"] },
    });
    check(renamed.response.status === 200 && renamed.data?.name === "client budget, renamed" &&
          renamed.data?.tags.join() === "q4", "the owner renames the scenario and replaces its tags");
    const badTag = await api.PATCH("/v1/scenarios/{id}", {
        params: { path: { id: String(id) } }, body: { tags: [""] },
    });
    check(badTag.response.status === 422 && badTag.error?.field === "/tags/0",
          "an empty tag is 422 naming /tags/0");
    const deleted = await api.DELETE("/v1/scenarios/{id}", { params: { path: { id: String(id) } } });
    check(deleted.response.status === 204, "the owner deletes the scenario");
    const gone = await api.GET("/v1/scenarios/{id}", { params: { path: { id: String(id) } } });
    check(gone.response.status === 404, "a deleted scenario is gone");
    await storedPriceBook(api, base);
    await planVsActual(api);
    const retired = await api.DELETE("/v1/offerings/{id}", { params: { path: { id: target.id } } });
    check(retired.response.status === 200, "an admin retires an offering");
}

async function main() {
    const env = { ...process.env };
    const serverArgs: string[] = [];
    if (mode === "embedded") {
        delete env["DATABASE_URL"];
    } else {
        gpucostCommand("migrate");
        gpucostCommand("seed");
        serverArgs.push("--database-url", env["DATABASE_URL"]!);
    }
    const { proc, port } = await startServer(serverArgs, env);
    const base = `http://127.0.0.1:${port}`;
    const api = createClient<paths, JsonMedia>({ baseUrl: base });
    api.use(validating);
    try {
        await discover(api, base);
        const accelerators = await chooseAccelerators(api);
        const offerings = await shopOfferings(api, accelerators);
        await estimate(api);
        await plan(api, base, offerings);
        await misuse(api, base);
        if (mode === "embedded") {
            await embeddedOnly(api, offerings);
        } else {
            await databaseOnly(base, offerings);
        }
    } finally {
        const code = await stopServer(proc);
        check(code === 0, `gpucost exits 0 on SIGTERM (got ${code})`);
    }
    console.log(`${mode} mode: ${responsesValidated} responses validated, ${mismatches} mismatches; ` +
                `${checksPassed} checks passed, ${checksFailed} failed`);
    process.exit(mismatches === 0 && checksFailed === 0 && responsesValidated > 0 ? 0 : 1);
}

main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
});
