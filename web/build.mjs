// Builds the planning page: types from ../openapi.yaml (openapi-typescript), a strict type check
// (tsc --noEmit, so an API change that breaks the page breaks this build), then one bundle
// (esbuild) and its stylesheet. Writes index.html, app.js and app.css to --outdir (default dist/);
// the server names the assets by their content hash when it serves them.
//   node build.mjs [--outdir DIR] [--typecheck-only]
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import openapiTS, { astToString } from "openapi-typescript";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const outIndex = args.indexOf("--outdir");
const outdir = resolve(outIndex >= 0 ? args[outIndex + 1] : join(here, "dist"));
const typecheckOnly = args.includes("--typecheck-only");

const spec = new URL("../openapi.yaml", import.meta.url);
// The generator's defaults, as any integrator's client gets them (openapi.yaml states request
// defaults in descriptions, so no member becomes required by having one).
const ast = await openapiTS(spec);
mkdirSync(join(here, "src/generated"), { recursive: true });
const types = "// Generated from openapi.yaml by web/build.mjs; do not edit.\n" + astToString(ast);
writeFileSync(join(here, "src/generated/api.d.ts"), types);

execFileSync(process.execPath, [join(here, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", here],
             { stdio: "inherit" });
if (typecheckOnly) process.exit(0);

mkdirSync(outdir, { recursive: true });
await esbuild.build({
    entryPoints: [join(here, "src/main.ts")],
    bundle: true,
    minify: true,
    format: "iife",
    target: ["es2020"],
    outfile: join(outdir, "app.js"),
    legalComments: "none",
    logLevel: "warning",
});
await esbuild.build({
    entryPoints: [join(here, "src/style.css")],
    bundle: true,
    minify: true,
    outfile: join(outdir, "app.css"),
    logLevel: "warning",
});
copyFileSync(join(here, "src/index.html"), join(outdir, "index.html"));
const size = (f) => readFileSync(join(outdir, f)).length;
console.log(`web: ${outdir}: app.js ${size("app.js")} B, app.css ${size("app.css")} B`);
