// Hand-written SVG charts: a scatter (cost vs time) with a front line and reference lines, and a
// line chart (cumulative cost by month) with a marked point. Axes carry their units; every mark
// keeps its raw value in data-x / data-y so a test can read back exactly what was drawn.
const NS = "http://www.w3.org/2000/svg";

// `value`: how one value written beside its mark reads, when it needs more digits than the ticks.
export interface Axis { label: string; log?: boolean; format: (v: number) => string; short?: string; value?: (v: number) => string }
// The axis title for the width drawn: the short one on a phone.
const titleOf = (a: Axis): string => (W < 560 && a.short ? a.short : a.label);
export interface Point { x: number; y: number; label: string; group?: string }
export interface RefLine { axis: "x" | "y"; value: number; label: string }
export interface Series { name: string; points: { x: number; y: number }[]; dashed?: boolean; commit?: boolean }
// A series' classes (colour by position, dash by kind), shared by its line and its legend mark.
export const seriesClass = (s: Series, i: number): string => `s${i}${s.dashed ? " dashed" : ""}${s.commit ? " commit" : ""}`;

// Charts are drawn at the width they are shown at (one SVG unit a CSS pixel), so that their
// labels keep their size on a phone and the chart uses a wide screen.
let W = 720, H = 380;
const M = { left: 78, right: 20, top: 16, bottom: 52 };
function fit(): void {
    const main = document.getElementById("main");
    const style = main ? getComputedStyle(main) : null;
    const inner = main ? main.clientWidth - parseFloat(style!.paddingLeft) - parseFloat(style!.paddingRight) : 720;
    W = Math.round(Math.min(1232, Math.max(300, inner || 720)));
    H = W < 560 ? 300 : 380;
}

// Charts redraw at the new width when the window's size changes (a phone turned, a window
// resized): each chart keeps the function that draws it, and a resize (settled for 150 ms)
// replaces every chart drawn at another width than the one it would have now.
const makers = new WeakMap<Element, () => SVGSVGElement>();
function keep(make: () => SVGSVGElement): SVGSVGElement {
    const el = make();
    el.dataset.width = String(W);
    makers.set(el, make);
    return el;
}
let resizeTimer: number | undefined;
if (typeof window !== "undefined") {
    window.addEventListener("resize", () => {
        window.clearTimeout(resizeTimer);
        resizeTimer = window.setTimeout(() => {
            fit();
            for (const el of document.querySelectorAll<SVGSVGElement>("svg.chart")) {
                const make = makers.get(el);
                if (!make || el.dataset.width === String(W)) continue;
                const again = keep(make);
                el.replaceWith(again);
            }
        }, 150);
    });
}

// The fewest decimals (from `least` to `most`) at which values that differ (to the millionth, the
// API's precision for rates) are written differently: bars of $0.0512 and $0.0534 must not both
// read "$0.05".
export function distinguishingDigits(values: number[], least = 2, most = 6): number {
    const distinct = new Set(values.map((v) => Math.round(v * 1e6))).size;
    for (let d = least; d < most; d++) {
        if (new Set(values.map((v) => v.toFixed(d))).size === distinct) return d;
    }
    return most;
}

// A label in lines of at most `width` characters, broken at spaces (a longer word alone on its
// line): labels are wrapped, never cut.
export function wrapLabel(text: string, width: number): string[] {
    const lines: string[] = [];
    let line = "";
    for (const word of text.split(" ")) {
        if (line && (line + " " + word).length > width) {
            lines.push(line);
            line = word;
        } else {
            line = line ? `${line} ${word}` : word;
        }
    }
    if (line) lines.push(line);
    return lines;
}

function svg(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
    const el = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
    if (text !== undefined) el.textContent = text;
    return el;
}

class Scale {
    constructor(private lo: number, private hi: number, private a: number, private b: number,
                readonly log: boolean) {}
    static fit(values: number[], a: number, b: number, log = false): Scale {
        const vs = values.filter((v) => Number.isFinite(v) && (!log || v > 0));
        let lo = Math.min(...vs), hi = Math.max(...vs);
        if (!Number.isFinite(lo)) { lo = log ? 1 : 0; hi = log ? 10 : 1; }
        if (log) {
            lo = Math.pow(10, Math.floor(Math.log10(lo)));
            hi = Math.pow(10, Math.ceil(Math.log10(hi)));
            if (hi <= lo) hi = lo * 10;  // one value, or all on one power of ten: a decade around it
        } else {
            lo = Math.min(0, lo);
            hi = hi <= lo ? lo + 1 : hi * 1.05;
        }
        return new Scale(lo, hi, a, b, log);
    }
    map(v: number): number {
        const t = this.log ? (Math.log10(v) - Math.log10(this.lo)) / (Math.log10(this.hi) - Math.log10(this.lo))
                           : (v - this.lo) / (this.hi - this.lo);
        return this.a + t * (this.b - this.a);
    }
    ticks(): number[] {
        if (this.log) {
            const out: number[] = [];
            for (let p = this.lo; p <= this.hi * 1.0001; p *= 10) out.push(p);
            return out;
        }
        const step = niceStep((this.hi - this.lo) / 5);
        const out: number[] = [];
        for (let v = Math.ceil(this.lo / step) * step; v <= this.hi + 1e-9; v += step) out.push(v);
        return out;
    }
    contains(v: number): boolean { return v >= Math.min(this.lo, this.hi) && v <= Math.max(this.lo, this.hi); }
}

function niceStep(raw: number): number {
    if (!(raw > 0) || !Number.isFinite(raw)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

function frame(title: string, xAxis: Axis, yAxis: Axis, x: Scale, y: Scale): SVGSVGElement {
    const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title,
                              class: "chart" }) as SVGSVGElement;
    root.append(svg("title", {}, title));
    const axes = svg("g", { class: "axes" });
    for (const t of x.ticks()) {
        const px = x.map(t);
        axes.append(svg("line", { x1: px, x2: px, y1: M.top, y2: H - M.bottom, class: "grid" }),
                    svg("text", { x: px, y: H - M.bottom + 16, "text-anchor": "middle" }, xAxis.format(t)));
    }
    for (const t of y.ticks()) {
        const py = y.map(t);
        axes.append(svg("line", { x1: M.left, x2: W - M.right, y1: py, y2: py, class: "grid" }),
                    svg("text", { x: M.left - 6, y: py + 4, "text-anchor": "end" }, yAxis.format(t)));
    }
    axes.append(svg("line", { x1: M.left, x2: W - M.right, y1: H - M.bottom, y2: H - M.bottom, class: "axis" }),
                svg("line", { x1: M.left, x2: M.left, y1: M.top, y2: H - M.bottom, class: "axis" }),
                svg("text", { x: (M.left + W - M.right) / 2, y: H - 10, "text-anchor": "middle",
                              class: "axis-label", "data-testid": "x-label" }, titleOf(xAxis)),
                svg("text", { x: 14, y: (M.top + H - M.bottom) / 2, "text-anchor": "middle", class: "axis-label",
                              transform: `rotate(-90 14 ${(M.top + H - M.bottom) / 2})`, "data-testid": "y-label" },
                    titleOf(yAxis)));
    root.append(axes);
    return root;
}

// The height at the top of a chart where vertical reference lines write their labels.
const kRefLabelRow = 20;

function refLines(root: SVGElement, lines: RefLine[], x: Scale, y: Scale): void {
    for (const l of lines) {
        const s = l.axis === "x" ? x : y;
        if (!s.contains(l.value)) continue;
        const p = s.map(l.value);
        const g = svg("g", { class: "ref", "data-ref": l.label, "data-value": l.value });
        if (l.axis === "x") {
            // Labels near the right edge go to the line's left so they stay inside the chart.
            const left = p > W * 0.7;
            g.append(svg("line", { x1: p, x2: p, y1: M.top, y2: H - M.bottom }),
                     svg("text", { x: left ? p - 4 : p + 4, y: M.top + 12, "text-anchor": left ? "end" : "start" }, l.label));
        } else {
            g.append(svg("line", { x1: M.left, x2: W - M.right, y1: p, y2: p }),
                     svg("text", { x: W - M.right - 4, y: p - 4, "text-anchor": "end" }, l.label));
        }
        root.append(g);
    }
}

// Cost (y) against time (x); `front` is drawn as a line through its points in x order.
export function scatter(title: string, xAxis: Axis, yAxis: Axis, points: Point[], front: Point[],
                        lines: RefLine[]): SVGSVGElement {
    return keep(() => drawScatter(title, xAxis, yAxis, points, front, lines));
}
function drawScatter(title: string, xAxis: Axis, yAxis: Axis, points: Point[], front: Point[],
                     lines: RefLine[]): SVGSVGElement {
    fit();
    const xs = [...points, ...front].map((p) => p.x).concat(lines.filter((l) => l.axis === "x").map((l) => l.value));
    const ys = [...points, ...front].map((p) => p.y).concat(lines.filter((l) => l.axis === "y").map((l) => l.value));
    const x = Scale.fit(xs, M.left, W - M.right, xAxis.log);
    const y = Scale.fit(ys, H - M.bottom, M.top, yAxis.log);
    const root = frame(title, xAxis, yAxis, x, y);
    refLines(root, lines, x, y);
    const dots = svg("g", { class: "points" });
    for (const p of points) {
        const c = svg("circle", { cx: x.map(p.x), cy: y.map(p.y), r: 3.5, class: `pt ${p.group ?? ""}`,
                                  "data-x": p.x, "data-y": p.y });
        c.append(svg("title", {}, p.label));
        dots.append(c);
    }
    root.append(dots);
    const sorted = [...front].sort((a, b) => a.x - b.x);
    if (sorted.length > 0) {
        root.append(svg("polyline", { class: "front", "data-testid": "pareto-front", "data-count": sorted.length,
                                      points: sorted.map((p) => `${x.map(p.x)},${y.map(p.y)}`).join(" ") }));
        const g = svg("g", { class: "front-points" });
        for (const p of sorted) {
            const c = svg("circle", { cx: x.map(p.x), cy: y.map(p.y), r: 5, "data-x": p.x, "data-y": p.y });
            c.append(svg("title", {}, `Pareto front: ${p.label}`));
            g.append(c);
        }
        root.append(g);
    }
    pointReadout(root, title, points, x, y);
    return root;
}

// The scatter from the keyboard: the chart is focusable, the arrow keys step through the points
// in order of x (then y), Home/End jump to the first and last; the point is ringed, its label
// shown in a box and announced to screen readers.
function pointReadout(root: SVGSVGElement, title: string, points: Point[], x: Scale, y: Scale): void {
    const order = [...points].sort((a, b) => a.x - b.x || a.y - b.y);
    if (order.length === 0) return;
    const g = svg("g", { class: "readout", visibility: "hidden", "data-testid": "readout" });
    const ring = svg("circle", { r: 7, class: "ring" });
    const box = svg("rect", { rx: 4, class: "readout-box" });
    const texts = svg("text", {});
    g.append(ring, box, texts);
    root.append(g);
    root.setAttribute("tabindex", "0");
    root.setAttribute("aria-label", `${title}; use the arrow keys to read the points one by one`);
    const live = svg("desc", { "aria-live": "polite" });
    root.append(live);
    const maxChars = Math.max(20, Math.floor((W - M.left - M.right - 12) / 6.6));
    let at = 0;
    const showAt = (i: number) => {
        at = Math.max(0, Math.min(order.length - 1, i));
        const p = order[at]!;
        const px = x.map(p.x), py = y.map(p.y);
        ring.setAttribute("cx", String(px));
        ring.setAttribute("cy", String(py));
        // The label's name and its figures (after the last ": ") on lines of their own, wrapped
        // to the chart's width.
        const cut = p.label.lastIndexOf(": ");
        const rows = (cut > 0 ? [p.label.slice(0, cut), p.label.slice(cut + 2)] : [p.label])
            .flatMap((r) => wrapLabel(r, maxChars));
        rows.push(`point ${at + 1} of ${order.length}`);
        texts.replaceChildren(...rows.map((r, k) => svg("tspan", { x: 0, dy: k === 0 ? 0 : 15 }, r)));
        const width = Math.max(...rows.map((r) => r.length)) * 6.6 + 12;
        const left = Math.max(M.left + 2, Math.min(W - M.right - width - 2, px + 10));
        const top = py - rows.length * 15 - 20 > M.top ? py - rows.length * 15 - 20 : Math.min(py + 12, H - M.bottom - rows.length * 15 - 10);
        box.setAttribute("x", String(left));
        box.setAttribute("y", String(top));
        box.setAttribute("width", String(width));
        box.setAttribute("height", String(rows.length * 15 + 8));
        texts.setAttribute("transform", `translate(${left + 6} ${top + 15})`);
        g.setAttribute("visibility", "visible");
        g.setAttribute("data-x", String(p.x));
        g.setAttribute("data-y", String(p.y));
        live.textContent = `${p.label} (point ${at + 1} of ${order.length})`;
    };
    root.addEventListener("focus", () => showAt(at));
    root.addEventListener("blur", () => g.setAttribute("visibility", "hidden"));
    root.addEventListener("keydown", (e) => {
        const step = { ArrowRight: 1, ArrowLeft: -1, ArrowUp: 1, ArrowDown: -1, PageUp: 10, PageDown: -10 }[e.key];
        if (step !== undefined) showAt(at + step);
        else if (e.key === "Home") showAt(0);
        else if (e.key === "End") showAt(order.length - 1);
        else return;
        e.preventDefault();
    });
}

// Lines over a shared x; `marker` (e.g. the break-even month) is drawn as a labelled vertical line.
export function lines(title: string, xAxis: Axis, yAxis: Axis, series: Series[], marker?: RefLine): SVGSVGElement {
    return keep(() => drawLines(title, xAxis, yAxis, series, marker));
}
function drawLines(title: string, xAxis: Axis, yAxis: Axis, series: Series[], marker?: RefLine): SVGSVGElement {
    fit();
    const xs = series.flatMap((s) => s.points.map((p) => p.x));
    const ys = series.flatMap((s) => s.points.map((p) => p.y));
    const x = Scale.fit(xs, M.left, W - M.right, false);
    const y = Scale.fit(ys, H - M.bottom, M.top, false);
    const root = frame(title, xAxis, yAxis, x, y);
    series.forEach((s, i) => {
        const last = s.points[s.points.length - 1];
        root.append(svg("polyline", { class: `series ${seriesClass(s, i)}`, "data-series": s.name,
                                      "data-last-y": last?.y ?? "",
                                      points: s.points.map((p) => `${x.map(p.x)},${y.map(p.y)}`).join(" ") }));
    });
    if (marker) refLines(root, [marker], x, y);
    readout(root, title, xAxis, yAxis, series, x, y);
    return root;
}

// The values at one x, on hover (nearest point to the pointer) or from the keyboard (the chart is
// focusable; arrow keys move along x, Home/End jump): a vertical line and a box listing each
// series' value, also announced to screen readers.
function readout(root: SVGSVGElement, title: string, xAxis: Axis, yAxis: Axis, series: Series[], x: Scale, y: Scale): void {
    const xsAll = [...new Set(series.flatMap((s) => s.points.map((p) => p.x)))].sort((a, b) => a - b);
    if (xsAll.length === 0) return;
    const g = svg("g", { class: "readout", visibility: "hidden", "data-testid": "readout" });
    const line = svg("line", { y1: M.top, y2: H - M.bottom });
    const box = svg("rect", { rx: 4, class: "readout-box" });
    const texts = svg("text", {});
    g.append(line, box, texts);
    root.append(g);
    root.setAttribute("tabindex", "0");
    root.setAttribute("aria-label", `${title}; use the arrow keys to read the values`);
    const live = svg("desc", { "aria-live": "polite" });
    root.append(live);
    let at = xsAll.length - 1;
    const showAt = (i: number) => {
        at = Math.max(0, Math.min(xsAll.length - 1, i));
        const xv = xsAll[at]!;
        const px = x.map(xv);
        line.setAttribute("x1", String(px));
        line.setAttribute("x2", String(px));
        const rows = [`${xAxis.label}: ${xAxis.format(xv)}`, ...series.map((s) => {
            const p = s.points.find((q) => q.x === xv);
            return p ? `${s.name}: ${yAxis.format(p.y)}` : "";
        }).filter(Boolean)];
        texts.replaceChildren(...rows.map((r, k) => svg("tspan", { x: 0, dy: k === 0 ? 0 : 15 }, r)));
        const width = Math.max(...rows.map((r) => r.length)) * 6.4 + 12;
        const left = Math.max(M.left + 2, px + width + 12 > W - M.right ? px - width - 8 : px + 8);
        // Below the row where reference lines write their labels (the break-even month), which
        // the box must never cover.
        const top = M.top + kRefLabelRow;
        box.setAttribute("x", String(left));
        box.setAttribute("y", String(top));
        box.setAttribute("width", String(width));
        box.setAttribute("height", String(rows.length * 15 + 8));
        texts.setAttribute("transform", `translate(${left + 6} ${top + 14})`);
        for (const t of texts.querySelectorAll("tspan")) t.setAttribute("x", "0");
        g.setAttribute("visibility", "visible");
        live.textContent = rows.join("; ");
        void y;
    };
    const hide = () => g.setAttribute("visibility", "hidden");
    root.addEventListener("mousemove", (e) => {
        const ctm = root.getScreenCTM();
        if (!ctm) return;
        const sx = (e.clientX - ctm.e) / ctm.a;
        let best = 0;
        xsAll.forEach((v, i) => { if (Math.abs(x.map(v) - sx) < Math.abs(x.map(xsAll[best]!) - sx)) best = i; });
        showAt(best);
    });
    root.addEventListener("mouseleave", () => { if (document.activeElement !== root) hide(); });
    root.addEventListener("focus", () => showAt(at));
    root.addEventListener("blur", hide);
    root.addEventListener("keydown", (e) => {
        const step = { ArrowRight: 1, ArrowLeft: -1, ArrowUp: 1, ArrowDown: -1 }[e.key];
        if (step !== undefined) showAt(at + step);
        else if (e.key === "Home") showAt(0);
        else if (e.key === "End") showAt(xsAll.length - 1);
        else return;
        e.preventDefault();
    });
}

// A legend: a dot per point group, or for line series (`line: true`) a short line drawn with the
// series' own class, so a dashed series has a dashed mark.
export function legend(items: { name: string; cls: string; line?: boolean }[]): HTMLElement {
    const ul = document.createElement("ul");
    ul.className = "legend";
    for (const i of items) {
        const li = document.createElement("li");
        if (i.line) {
            const mark = svg("svg", { class: "mark", viewBox: "0 0 28 10", width: 28, height: 10, "aria-hidden": "true" });
            mark.append(svg("line", { x1: 1, x2: 27, y1: 5, y2: 5, class: `series ${i.cls}` }));
            li.append(mark, i.name);
        } else {
            // A drawn dot, not a coloured background: printers drop backgrounds, so a printed key
            // would lose its colours.
            const mark = svg("svg", { class: "mark dot", viewBox: "0 0 12 12", width: 12, height: 12, "aria-hidden": "true" });
            mark.append(svg("circle", { cx: 6, cy: 6, r: 5, class: `swatch ${i.cls}` }));
            li.append(mark, i.name);
        }
        ul.append(li);
    }
    return ul;
}

// Horizontal bars (one per option) against a reference value drawn as a vertical line.
export function bars(title: string, valueAxis: Axis, items: { label: string; value: number }[],
                     ref?: RefLine): SVGSVGElement {
    return keep(() => drawBars(title, valueAxis, items, ref));
}
function drawBars(title: string, valueAxis: Axis, items: { label: string; value: number }[],
                  ref?: RefLine): SVGSVGElement {
    fit();
    const left = Math.round(Math.min(250, W * 0.4)), top = 10, bottom = 46, lineH = 14;
    const valueOf = valueAxis.value ?? valueAxis.format;
    const right = Math.max(64, ...items.map((i) => valueOf(i.value).length * 7.4 + 8));
    // Labels past this many characters go on more lines (each bar's row is as tall as its label).
    const kMaxLabelChars = Math.floor((left - 10) / 7.4);
    const labels = items.map((it) => wrapLabel(it.label, kMaxLabelChars));
    const rowHs = labels.map((l) => Math.max(22, l.length * lineH + 8));
    const rowTops = rowHs.map((_, i) => top + rowHs.slice(0, i).reduce((a, b) => a + b, 0));
    const height = top + bottom + rowHs.reduce((a, b) => a + b, 0);
    const values = items.map((i) => i.value).concat(ref ? [ref.value] : []);
    const x = Scale.fit(values, left, W - right, false);
    const root = svg("svg", { viewBox: `0 0 ${W} ${height}`, role: "img", "aria-label": title, class: "chart" }) as SVGSVGElement;
    root.append(svg("title", {}, title));
    for (const t of x.ticks()) {
        const px = x.map(t);
        root.append(svg("line", { x1: px, x2: px, y1: top, y2: height - bottom, class: "grid" }),
                    svg("text", { x: px, y: height - bottom + 14, "text-anchor": "middle" }, valueAxis.format(t)));
    }
    items.forEach((it, i) => {
        const y = rowTops[i]!, rowH = rowHs[i]!, lines = labels[i]!;
        const bar = svg("rect", { x: left, y: y + 3, width: Math.max(1, x.map(it.value) - left), height: rowH - 6,
                                  class: "bar", "data-x": it.value });
        bar.append(svg("title", {}, `${it.label}: ${valueOf(it.value)}`));
        const label = svg("text", { x: left - 6, y: y + rowH / 2 + 4 - ((lines.length - 1) * lineH) / 2, "text-anchor": "end",
                                    "data-label": it.label });
        label.append(...lines.map((l, k) => svg("tspan", { x: left - 6, dy: k === 0 ? 0 : lineH }, l)));
        // The value beside its bar: readable without hovering.
        root.append(label, bar,
                    svg("text", { x: x.map(it.value) + 4, y: y + rowH / 2 + 4, class: "value" }, valueOf(it.value)));
    });
    root.append(svg("line", { x1: left, x2: left, y1: top, y2: height - bottom, class: "axis" }),
                svg("text", { x: (left + W - right) / 2, y: height - 8, "text-anchor": "middle", class: "axis-label",
                              "data-testid": "x-label" }, valueAxis.label));
    if (ref && x.contains(ref.value)) {
        const px = x.map(ref.value);
        const g = svg("g", { class: "ref", "data-ref": ref.label, "data-value": ref.value });
        const leftOf = px > W * 0.7;
        g.append(svg("line", { x1: px, x2: px, y1: top, y2: height - bottom }),
                 svg("text", { x: leftOf ? px - 4 : px + 4, y: height - bottom - 4, "text-anchor": leftOf ? "end" : "start" },
                     ref.label));
        root.append(g);
    }
    return root;
}

// Grouped horizontal bars: one group per category (a month), one bar per series in it (planned,
// actual), each bar's series name and value written beside it so the colours are not the only
// key. A bar whose value is null is not drawn; its `missing` words are written in its place.
export interface BarGroup { label: string; bars: { series: number; name: string; value: number | null; missing?: string }[] }
export function groupedBars(title: string, valueAxis: Axis, groups: BarGroup[]): SVGSVGElement {
    return keep(() => drawGroupedBars(title, valueAxis, groups));
}
function drawGroupedBars(title: string, valueAxis: Axis, groups: BarGroup[]): SVGSVGElement {
    fit();
    const rowH = 20, gapH = 10, left = Math.round(Math.min(160, W * 0.28)), right = 110, top = 10, bottom = 46;
    const rows = groups.reduce((n, g) => n + g.bars.length, 0);
    const height = top + bottom + rowH * rows + gapH * Math.max(0, groups.length - 1);
    const values = groups.flatMap((g) => g.bars.map((b) => b.value).filter((v): v is number => v !== null));
    const x = Scale.fit(values, left, W - right, false);
    const root = svg("svg", { viewBox: `0 0 ${W} ${height}`, role: "img", "aria-label": title, class: "chart grouped" }) as SVGSVGElement;
    root.append(svg("title", {}, title));
    for (const t of x.ticks()) {
        const px = x.map(t);
        root.append(svg("line", { x1: px, x2: px, y1: top, y2: height - bottom, class: "grid" }),
                    svg("text", { x: px, y: height - bottom + 14, "text-anchor": "middle" }, valueAxis.format(t)));
    }
    const zero = x.map(0);
    let y = top;
    for (const group of groups) {
        const g = svg("g", { class: "group", "data-label": group.label });
        g.append(svg("text", { x: left - 8, y: y + (rowH * group.bars.length) / 2 + 4, "text-anchor": "end", class: "group-label" }, group.label));
        for (const b of group.bars) {
            if (b.value === null) {
                g.append(svg("text", { x: zero + 4, y: y + rowH * 0.7, class: "missing", "data-series": b.name }, `${b.name}: ${b.missing ?? "none"}`));
            } else {
                const px = x.map(b.value);
                const bar = svg("rect", { x: Math.min(zero, px), y: y + 2, width: Math.max(1, Math.abs(px - zero)), height: rowH - 4,
                                          class: `bar s${b.series}`, "data-x": b.value, "data-series": b.name });
                bar.append(svg("title", {}, `${group.label}, ${b.name}: ${valueAxis.format(b.value)}`));
                g.append(bar, svg("text", { x: Math.max(zero, px) + 4, y: y + rowH * 0.7, class: "value" },
                                  `${b.name} ${valueAxis.format(b.value)}`));
            }
            y += rowH;
        }
        root.append(g);
        y += gapH;
    }
    root.append(svg("line", { x1: zero, x2: zero, y1: top, y2: height - bottom, class: "axis" }),
                svg("text", { x: (left + W - right) / 2, y: height - 8, "text-anchor": "middle", class: "axis-label",
                              "data-testid": "x-label" }, titleOf(valueAxis)));
    return root;
}
