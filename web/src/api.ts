// The one client of the page: openapi-fetch over the types generated from openapi.yaml, same
// origin (the page is served by the API it calls). Errors come back as RFC 9457 problems.
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/api";

export type Schemas = components["schemas"];
// A problem as the page shows it: the server's, or one the page makes itself (a form it checks
// before sending, a transport failure), which has its own codes and no request id.
export type Problem = Omit<Schemas["Problem"], "code" | "request_id"> & {
    code: Schemas["Problem"]["code"] | "client" | "network" | "error";
    request_id?: string;
};
export type Assumption = NonNullable<Schemas["Assumptions"]>[number];

// The page reads JSON answers (and problem+json errors); answers that also come as CSV are typed
// as their JSON form by naming the media types here, so no answer needs narrowing from a string.
export type JsonMedia = "application/json" | "application/problem+json";
export const api = createClient<paths, JsonMedia>({ baseUrl: window.location.origin });

// A failed call as the page shows it: the server's problem, or a transport failure shaped like one.
export function asProblem(error: unknown, status: number): Problem {
    if (error && typeof error === "object" && "detail" in error) {
        const p = error as Partial<Problem>;
        return {
            type: p.type ?? "about:blank", title: p.title ?? "Error", status: p.status ?? status,
            detail: p.detail ?? "", code: p.code ?? "error", errors: p.errors ?? [], field: p.field,
        } as Problem;
    }
    return { type: "about:blank", title: "Error", status, detail: String(error ?? "request failed"),
             code: "network", errors: [] } as Problem;
}

// Fetches the CSV form of a plan (same body, Accept: text/csv) and hands it to the browser as a
// download; the page never formats CSV itself.
export async function downloadCsv(path: "/v1/plans/training" | "/v1/plans/inference" | "/v1/plans/rent-vs-buy",
                                  body: unknown, filename: string): Promise<void> {
    const res = await fetch(path, { method: "POST", body: JSON.stringify(body),
                                    headers: { "Content-Type": "application/json", Accept: "text/csv" } });
    if (!res.ok) throw new Error(`CSV export failed: HTTP ${res.status}`);
    const url = URL.createObjectURL(await res.blob());
    const a = document.createElement("a");
    a.href = url;
    a.download = filename;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// The plans answer JSON or CSV (by Accept); the page asks for JSON, so a string here is a fault.
export function jsonAnswer<T>(data: unknown): T | undefined {
    return data !== null && typeof data === "object" ? (data as T) : undefined;
}
export type OfferingQuery = NonNullable<paths["/v1/offerings"]["get"]["parameters"]["query"]>;
