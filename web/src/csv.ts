// CSV of what a table shows, made in the browser (the spot plan and the catalog have no CSV
// answer of their own): RFC 4180 quoting, CRLF line ends, and every cell that a spreadsheet would
// read as a formula (beginning with = + - @, a tab or a carriage return) neutralised by a leading
// apostrophe, so that an offering's source text can never run as a formula.
export type Cell = string | number | boolean | null | undefined;

export function csvCell(value: Cell): string {
    let s = value === null || value === undefined ? "" : String(value);
    if (/^[=+\-@\t\r]/.test(s)) s = "'" + s;
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvText(head: string[], rows: Cell[][]): string {
    return [head, ...rows].map((r) => r.map(csvCell).join(",")).join("\r\n") + "\r\n";
}

// Hands the CSV to the browser as a download.
export function downloadText(filename: string, text: string, type = "text/csv;charset=utf-8"): void {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const a = document.createElement("a");
    a.href = url;
    a.download = filename;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function csvButton(label: string, filename: string, rows: () => { head: string[]; rows: Cell[][] },
                          testid = "csv"): HTMLButtonElement {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "csv";
    b.dataset.testid = testid;
    b.textContent = label;
    b.onclick = () => { const t = rows(); downloadText(filename, csvText(t.head, t.rows)); };
    return b;
}
