// A plan's cash by calendar month: the training and serving answers' budget view
// (`budget.monthly`, calendar months in cents adding up to the total), as bars and a table.
import { bars } from "./chart";
import { h, table, usd, usdShort } from "./dom";

export interface MonthSpend { month: string; usd: number }

export const monthName = (m: string): string =>
    new Date(`${m}-01T00:00:00Z`).toLocaleString("en-US", { month: "short", year: "numeric", timeZone: "UTC" });

// `lead` says what is paid for and holds the total; `days` (serving) gives each month's days
// paid for, shown beside it, as a view's first and last months may be part months. The table
// shows cents, as the months add up to the total to the cent.
export function monthlyCash(monthly: MonthSpend[], lead: HTMLElement, chartTitle: string,
                            days?: (month: string) => number): HTMLElement[] {
    if (monthly.length === 0) return [];
    const rows = monthly.map((m) => h("tr", { "data-month": m.month },
        h("td", {}, monthName(m.month)), days ? h("td", { class: "num" }, days(m.month)) : null,
        h("td", { class: "num", "data-value": m.usd }, usd(m.usd, 2))));
    return [
        h("h3", {}, "Cash by calendar month"),
        lead,
        h("figure", { "data-testid": "monthly-chart" },
          bars(chartTitle, { label: "USD in the month", format: (v) => usdShort(v) },
               monthly.map((m) => ({ label: monthName(m.month), value: m.usd })))),
        days ? table(["Month", "Days", "USD"], rows, "monthly", [1, 2]) : table(["Month", "USD"], rows, "monthly", [1]),
    ];
}

// Days of `month` (YYYY-MM) within [start, end) (YYYY-MM-DD, end the day after the last).
export function daysWithin(month: string, start: string, end: string): number {
    const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 86400000;
    const first = day(`${month}-01`);
    const [y, m] = month.split("-").map(Number) as [number, number];
    const next = Date.UTC(y, m, 1) / 86400000;  // Date.UTC's month is 0-based: m is the next one
    return Math.max(0, Math.min(next, day(end)) - Math.max(first, day(start)));
}
