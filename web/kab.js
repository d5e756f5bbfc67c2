// kab's pages: the job list and a job's page, built from kabd's JSON API
// alone (/api/v1/...). Plots are plain SVG made here; nightly.js (the
// history and regressions pages) uses the helpers below.
"use strict";

const API = "/api/v1";
const POLL_MS = 2000;
const COLORS = ["#3b7dd8", "#e07b24", "#2a9d5c", "#c2261d", "#8a4fc7", "#7a6a3a", "#d6479b", "#4a5a6a"];
const MARKERS = { better: "▲", worse: "▼", changed: "≠", same: "~", undecided: "?", none: "–" };
const SVGNS = "http://www.w3.org/2000/svg";

// An element with attributes and children (strings become text, never HTML).
function el(tag, attrs, ...kids) {
	const e = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs || {}))
		if (v !== null && v !== undefined) e.setAttribute(k, v);
	for (const k of kids)
		if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
	return e;
}

function svg(tag, attrs, text) {
	const e = document.createElementNS(SVGNS, tag);
	for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
	if (text !== undefined) e.textContent = text;
	return e;
}

async function getJSON(path) {
	const r = await fetch(API + path, { cache: "no-store" });
	let body = null;
	try { body = await r.json(); } catch (e) { /* not JSON: reported below */ }
	if (!r.ok) {
		const e = new Error((body && body.error) || `${path}: HTTP ${r.status}`);
		e.status = r.status;
		throw e;
	}
	if (body === null) throw new Error(`${path}: the reply is not JSON`);
	return body;
}

// Every row of a paged list (GET /jobs/ID/runs, /regressions) after the
// row `after` (null: from the first): its pages of up to 500 rows, each
// after the page before's next_after, in order.
async function getAll(path, key, after = null) {
	const sep = path.includes("?") ? "&" : "?";
	const rows = [];
	do {
		const d = await getJSON(`${path}${sep}limit=500` + (after ? `&after=${after}` : ""));
		rows.push(...d[key]);
		after = d.next_after;
	} while (after);
	return rows;
}

function showError(msg) {
	const p = document.getElementById("error");
	p.textContent = msg;
	p.hidden = !msg;
}

// Numbers never in exponent notation: whole above 100000, else five
// significant digits ("206388029", "28238.6", "0.0000012").
function fmt(v) {
	if (v === null || v === undefined || Number.isNaN(v)) return "–";
	if (Math.abs(v) >= 1e5) return v.toLocaleString("en-US", { maximumFractionDigits: 0 });
	return v.toLocaleString("en-US", { maximumSignificantDigits: 5 });
}

// Human units, as the text report has them (harness/report/report_unit.c): times
// below the second and sizes get the unit their larger value reads best
// in; seconds and other units stay as they are.
const UNIT_STEPS = {
	time: [["ns", 1], ["µs", 1e3], ["ms", 1e6], ["s", 1e9]],
	size: [["B", 1], ["KiB", 1024], ["MiB", 1024 ** 2], ["GiB", 1024 ** 3], ["TiB", 1024 ** 4]],
};
const UNIT_FAMILY = { ns: ["time", 0], us: ["time", 1], "µs": ["time", 1], ms: ["time", 2],
	bytes: ["size", 0], B: ["size", 0], KiB: ["size", 1], kB: ["size", 1] };

// The scale for numbers of a unit whose largest magnitude is big:
// {div, suffix}; suffix "" leaves them as fmt() prints them.
function unitScale(unit, big) {
	const f = UNIT_FAMILY[unit];
	if (!f || !(big > 0)) return { div: 1, suffix: "" };
	const steps = UNIT_STEPS[f[0]], at = steps[f[1]][1];
	let k = 0;
	while (k + 1 < steps.length && big * at >= steps[k + 1][1]) k++;
	return { div: steps[k][1] / at, suffix: steps[k][0] };
}

// "206 ms", "1.50 µs", "0": three significant digits in the row's unit.
function fmtUnit(v, sc) {
	if (!sc.suffix || v === null || v === undefined || Number.isNaN(v)) return fmt(v);
	if (v === 0) return "0";
	const x = v / sc.div, a = Math.abs(x);
	const d = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : Math.min(6, 2 - Math.floor(Math.log10(a)));
	return x.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d }) + " " + sc.suffix;
}

function fmtP(v) {
	if (v === null || v === undefined) return "–";
	return v < 0.001 ? "<0.001" : v.toFixed(3);
}

// Row groups of the job page: the job's primary metrics, the workload's
// own (stress-ng.*, pageout.*, ...), then the system's counters.
const COUNTER_PREFIXES = ["vmstat.", "interrupts.", "memcg.", "memcg_psi.", "psi.", "rusage.", "time."];
const GROUPS = ["primary metrics", "the workload's own metrics", "counters"];
function metricGroup(m) {
	if (m.primary) return 0;
	return COUNTER_PREFIXES.some(p => m.name.startsWith(p)) ? 2 : 1;
}

function fmtPct(v) {
	return v === null || v === undefined ? "–" : (v > 0 ? "+" : "") + v.toFixed(2) + "%";
}

function localTime(iso) {
	return iso ? new Date(iso).toLocaleString() : "–";
}

/* ---- the job list ---- */

async function jobsPage() {
	const tbody = document.querySelector("#jobs tbody");
	const more = document.getElementById("more");
	let after = null;
	async function load() {
		try {
			const d = await getJSON("/jobs?limit=100" + (after ? "&after=" + after : ""));
			for (const j of d.jobs) {
				tbody.append(el("tr", {},
					el("td", { class: "num" }, el("a", { href: "/jobs/" + j.id }, j.id)),
					el("td", {}, el("a", { href: "/jobs/" + j.id }, j.name || "(unnamed)")),
					el("td", { class: "status-" + j.status }, j.status),
					el("td", {}, localTime(j.created)),
					el("td", {}, localTime(j.finished))));
			}
			if (!d.jobs.length && !after)
				tbody.append(el("tr", {}, el("td", { colspan: 5 }, "no jobs yet")));
			after = d.next_after;
			more.hidden = !after;
			showError("");
		} catch (e) {
			showError("cannot list the jobs: " + e.message);
		}
	}
	more.addEventListener("click", ev => { ev.preventDefault(); load(); });
	await load();
}

/* ---- plots ---- */

// Round tick values covering [lo, hi].
function ticks(lo, hi, n) {
	if (!(hi > lo)) { const d = Math.abs(lo) || 1; lo -= d / 2; hi += d / 2; }
	const raw = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
	const step = [1, 2, 5, 10].map(m => m * mag).find(s => s >= raw);
	const out = [];
	for (let t = Math.floor(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Number(t.toPrecision(12)));
	if (out[0] > lo) out.unshift(out[0] - step);
	if (out[out.length - 1] < hi) out.push(out[out.length - 1] + step);
	return out;
}

// series: [{name, color, points: [{x, y, title}]}]; opts: xlabel, ylabel,
// line (join the points), dots (a circle per point), id.
function plot(series, opts) {
	const W = 900, H = 320, R = 150, T = 16, B = 44;
	const pts = series.flatMap(s => s.points);
	const root = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, id: opts.id || "", class: "plot" });
	if (!pts.length) {
		root.append(svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle" }, "no values"));
		return root;
	}
	const xs = pts.map(p => p.x), ys = pts.map(p => p.y);
	// a margin around the points, so none sits on an axis or the frame
	const pad = (lo, hi) => { const d = (hi - lo) * 0.05 || Math.abs(lo) * 0.05 || 1; return [lo - d, hi + d]; };
	const [xa, xb] = pad(Math.min(...xs), Math.max(...xs)), [ya, yb] = pad(Math.min(...ys), Math.max(...ys));
	// values never below 0 get no negative ticks, only the margin under 0
	const nonneg = Math.min(...ys) >= 0;
	const xt = ticks(xa, xb, 8).filter(t => !opts.integerX || Number.isInteger(t)), yt = ticks(ya, yb, 5).filter(t => !nonneg || t >= 0);
	// room on the left for the widest tick label beside the axis title
	const L = Math.max(80, 30 + 6.5 * Math.max(...yt.map(t => (opts.yfmt || fmt)(t).length)));
	const x0 = xa, x1 = xb, y0 = nonneg ? Math.min(ya, yt[0]) : yt[0], y1 = yt[yt.length - 1];
	const sx = x => L + (x - x0) / (x1 - x0) * (W - L - R);
	const sy = y => H - B - (y - y0) / (y1 - y0) * (H - T - B);
	for (const t of yt) {
		root.append(svg("line", { class: "grid", x1: L, x2: W - R, y1: sy(t), y2: sy(t) }));
		root.append(svg("text", { x: L - 6, y: sy(t) + 4, "text-anchor": "end" }, (opts.yfmt || fmt)(t)));
	}
	for (const t of xt.filter(t => t >= xa && t <= xb))
		root.append(svg("text", { x: sx(t), y: H - B + 16, "text-anchor": "middle" }, fmt(t)));
	root.append(svg("line", { class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B }));
	root.append(svg("line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B }));
	root.append(svg("text", { x: (L + W - R) / 2, y: H - 8, "text-anchor": "middle" }, opts.xlabel || ""));
	root.append(svg("text", { x: 14, y: (T + H - B) / 2, "text-anchor": "middle",
		transform: `rotate(-90 14 ${(T + H - B) / 2})` }, opts.ylabel || ""));
	series.forEach((s, i) => {
		if (opts.line && s.points.length > 1)
			root.append(svg("polyline", { fill: "none", stroke: s.color, "stroke-width": 1.5,
				points: s.points.map(p => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(" ") }));
		if (opts.dots)
			for (const p of s.points) {
				const c = svg("circle", { class: "pt", cx: sx(p.x), cy: sy(p.y), r: 5, fill: s.color,
					"data-variant": s.name });
				c.append(svg("title", {}, p.title || `${s.name}: ${fmt(p.y)}`));
				root.append(c);
			}
		const ly = T + 10 + i * 18;
		root.append(svg("rect", { x: W - R + 16, y: ly - 9, width: 12, height: 12, fill: s.color }));
		root.append(svg("text", { x: W - R + 34, y: ly + 1 }, s.name));
	});
	return root;
}

/* ---- the job page ---- */

function jobId() {
	const m = location.pathname.match(/\/jobs\/(\d+)\/?$/);
	if (m) return m[1];
	const q = new URLSearchParams(location.search).get("id");
	return q && /^\d+$/.test(q) ? q : null;
}

const job = { id: null, info: null, report: null, runs: [], selected: null, reportKey: "" };

function renderStatus(j) {
	job.info = j;
	document.title = `kab: job ${j.id} ${j.name || ""}`;
	document.getElementById("title").textContent = `Job ${j.id}: ${j.name || "(unnamed)"}`;
	// a job's nights are the ended jobs of its name (history.html)
	const hist = document.getElementById("st-history");
	if (j.name && !hist.firstElementChild)
		hist.replaceChildren(el("a", { id: "history-link", href: "/history.html?" + new URLSearchParams({ job: j.name }) },
			`the history of ${j.name}`));
	const st = document.getElementById("st-status");
	st.textContent = j.status + (j.reason ? ` (${j.reason})` : "");
	st.className = "status-" + j.status;
	const p = j.progress;
	const cur = p.current;
	const i = Math.min(p.runs_done + (cur ? 1 : 0), p.runs_total);
	document.getElementById("st-progress").textContent =
		`run ${i} of ${p.runs_total}` + (p.runs_skipped ? `, ${p.runs_skipped} skipped` : "") +
		(p.elapsed_s != null ? `, ${duration(p.elapsed_s)} elapsed` : "") +
		(p.eta_s != null ? `, about ${duration(p.eta_s)} left` : "");
	document.getElementById("st-current").textContent =
		cur ? `variant ${cur.variant}, workload ${cur.workload}, ${pairWords(cur.pair)}` : (p.stage || "–");
	document.getElementById("st-variants").textContent =
		(j.variants || []).map(v => v.name + (v.kernel ? ` (kernel: ${v.kernel}${bootsOf(j, v.name)})` : "")).join(", ") || "–";
	const frac = p.runs_total ? (p.runs_done + p.runs_skipped) / p.runs_total : 0;
	document.getElementById("st-bar").style.width = (100 * frac).toFixed(1) + "%";
}

/* A job that boots kernels: "; 2 boots, 1 failed, switch to ready 10.4 s" */
// The API's pair counts from 1; 0 is a workload's uncounted warm-up run.
function pairWords(p) {
	return p > 0 ? `pair ${p}` : "warm-up (not counted)";
}

function bootsOf(j, name) {
	const b = (j.boots || []).filter(x => x.variant === name);
	if (!b.length) return "";
	const ok = b.filter(x => x.status === "ok");
	const failed = b.filter(x => x.status === "failed").length;
	const last = ok.length ? ok[ok.length - 1].kexec_s : null;
	return `; ${ok.length} boot${ok.length === 1 ? "" : "s"}, ${failed} failed` +
		(last != null ? `, switch to ready ${last.toFixed(1)} s` : "");
}

function duration(s) {
	s = Math.round(s);
	if (s < 60) return `${s} s`;
	if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
	return `${Math.floor(s / 3600)} h ${Math.floor(s % 3600 / 60)} min`;
}

// What a verdict rests on, for its cell's hover text, from the thresholds
// the report gives (min_change_pct, equivalence_pct, the 90% CI); with
// none of them, the verdict alone.
function verdictWhy(c) {
	const v = c.verdict, eq = c.equivalence_pct, min = c.min_change_pct;
	const ci90 = c.ci90_low_pct != null && c.ci90_high_pct != null ?
		`the 90% CI ${fmtPct(c.ci90_low_pct)} … ${fmtPct(c.ci90_high_pct)}` : null;
	const change = min != null ? `a significant change of at least ${fmtMargin(min)}` : null;
	if (v === "same" && eq != null)
		return `same: ${ci90 || "the 90% CI"} lies inside ±${fmtMargin(eq)}`;
	if ((v === "better" || v === "worse" || v === "changed") && change)
		return `${v}: ${change}, its 95% CI excluding 0`;
	if (v === "undecided" && (change || eq != null))
		return "undecided: " + [change && `not ${change}`,
			eq != null && `${ci90 || "the 90% CI"} not inside ±${fmtMargin(eq)}`].filter(Boolean).join(", ");
	return v;
}

function fmtMargin(v) {
	return fmt(v) + "%";
}

// The verdict as a word beside its marker: "▲ better", "? undecided".
function verdictCell(c) {
	const v = c ? c.verdict : "none";
	const marker = MARKERS[v] || "?";
	return el("td", { class: "verdict " + v, title: c ? verdictWhy(c) : "no comparison" },
		v === "none" || !MARKERS[v] ? marker : `${marker} ${v}`);
}

// A metric that is 0 in every run of every variant: the text report
// leaves it out of its table ("All zero in every run (left out)"), and so
// does the page, naming it below the table instead.
function allZero(m) {
	let any = false;
	for (const vd of m.variants)
		for (const x of vd.values || []) {
			if (x === null || x === undefined) continue;
			if (x !== 0) return false;
			any = true;
		}
	return any;
}

function renderReport(rep) {
	job.report = rep;
	const box = document.getElementById("tables");
	box.replaceChildren();
	const vars = rep.variants;
	// what makes the comparison doubtful (most of a variant's runs lost to OOM kills), first
	for (const wl of rep.warnings || [])
		box.append(el("p", { class: "error warning" }, wl));
	for (const [wi, w] of rep.workloads.entries()) {
		const tolerated = w.oom && w.oom.policy === "tolerate" ?
			`; oom = tolerate: ${w.oom.counted_runs_with_kills} counted run(s) had memcg OOM kills` : "";
		box.append(el("h3", {}, `workload ${w.name}`),
			el("p", { class: "legend" }, `${w.pairs} pair${w.pairs === 1 ? "" : "s"}` + (w.stop_reason ? `, stopped: ${w.stop_reason}` : "") + tolerated));
		const zero = w.metrics.filter(allZero);
		const shown = w.metrics.filter(m => !allZero(m));
		// the equivalence margin: a column only when the report gives it
		const margin = shown.some(m => m.comparisons.some(c => c.equivalence_pct != null));
		const head = el("tr", {}, el("th", {}, "metric"), el("th", {}, "unit"));
		for (const v of vars) head.append(el("th", {}, `${v} mean`), el("th", {}, "cov"));
		for (const v of vars.slice(1)) {
			head.append(el("th", {}, `${v} vs ${vars[0]}`), el("th", {}, "CI"), el("th", {}, "q"));
			if (margin)
				head.append(el("th", { class: "margin", title: "equivalence margin: same when the 90% CI of the change lies inside ±margin" }, "same within"));
			head.append(el("th", {}, "verdict"));
		}
		const tbody = el("tbody");
		const ncols = 2 + 2 * vars.length + (margin ? 5 : 4) * (vars.length - 1);
		const rows = shown.map((m, i) => ({ m, i, g: metricGroup(m) })).sort((a, b) => a.g - b.g || a.i - b.i);
		let group = -1;
		for (const { m, g } of rows) {
			if (g !== group) {
				group = g;
				tbody.append(el("tr", { class: "group" }, el("th", { colspan: ncols }, GROUPS[g])));
			}
			const big = Math.max(0, ...m.variants.map(vd => vd.mean === null ? 0 : Math.abs(vd.mean)));
			const sc = unitScale(m.unit, big);
			const tr = el("tr", { class: "metric-row" + (m.primary ? " primary" : ""), "data-metric": m.name },
				el("td", { class: "metric", title: m.label || "" }, m.name), el("td", {}, sc.suffix || m.unit || ""));
			for (const vd of m.variants)
				tr.append(el("td", { class: "num" }, fmtUnit(vd.mean, sc)),
					el("td", { class: "num" }, vd.cov_pct === null ? "–" : vd.cov_pct.toFixed(1) + "%"));
			for (const c of m.comparisons) {
				const cls = "num " + c.verdict;
				tr.append(el("td", { class: cls }, fmtPct(c.delta_pct)),
					el("td", { class: "num" }, c.ci_low_pct === null ? "–" :
						`${fmtPct(c.ci_low_pct)} … ${fmtPct(c.ci_high_pct)}`),
					el("td", { class: "num" }, fmtP(c.q_value)));
				if (margin)
					tr.append(el("td", { class: "num margin" }, c.equivalence_pct == null ? "–" : "±" + fmtMargin(c.equivalence_pct)));
				tr.append(verdictCell(c));
			}
			tr.addEventListener("click", () => selectMetric(wi, m.name));
			tbody.append(tr);
		}
		box.append(el("table", { class: "report", "data-workload": w.name }, el("thead", {}, head), tbody));
		// what q was corrected over (the JSON's bh_family): the metrics that could reach p < 0.05
		if (w.bh_family != null && vars.length > 1)
			box.append(el("p", { class: "legend family", "data-workload": w.name },
				`q: Benjamini-Hochberg over the ${w.bh_family} metric${w.bh_family === 1 ? "" : "s"} that could reach p < 0.05; ` +
				(w.holm_primaries ? `the ${w.holm_primaries} primary metrics Holm-adjusted among themselves` : "a primary metric judged on its own p") +
				`. Verdicts: a change needs p (q) < 0.05, the 95% CI clear of 0 and at least min_change; same: the 90% CI inside the margin.`));
		if (zero.length)
			box.append(el("details", { class: "zero", "data-workload": w.name },
				el("summary", {}, `${zero.length} metric${zero.length === 1 ? "" : "s"} zero in every run (left out of the table)`),
				el("p", {}, zero.map(m => m.name).join(", "))));
	}
	if (!rep.workloads.some(w => w.metrics.length))
		box.append(el("p", {}, "no results yet"));
	if (rep.runs_not_counted && rep.runs_not_counted.length)
		box.append(el("p", { class: "legend" }, "not counted: " + rep.runs_not_counted.join("; ")));
	// the selected metric, or the first primary one (of those in a table)
	let sel = job.selected;
	if (!sel || !rep.workloads[sel.wi] || !rep.workloads[sel.wi].metrics.some(m => m.name === sel.metric)) {
		sel = null;
		for (const [wi, w] of rep.workloads.entries()) {
			const rows = w.metrics.filter(x => !allZero(x));
			const m = rows.find(x => x.primary) || (!sel && rows[0]);
			if (m && (!sel || m.primary)) { sel = { wi, metric: m.name }; if (m.primary) break; }
		}
	}
	if (sel) selectMetric(sel.wi, sel.metric);
}

// Per-run values of one metric in execution order (run ids), by variant.
function selectMetric(wi, name) {
	job.selected = { wi, metric: name };
	const rep = job.report, w = rep.workloads[wi];
	const m = w.metrics.find(x => x.name === name);
	for (const tr of document.querySelectorAll("table.report tbody tr.metric-row"))
		tr.classList.toggle("selected", tr.closest("table").dataset.workload === w.name && tr.dataset.metric === name);
	const series = rep.variants.map((v, vi) => ({ name: v, color: COLORS[vi % COLORS.length], points: [] }));
	const runs = job.runs.filter(r => r.workload === w.name).sort((a, b) => a.id - b.id);
	const used = new Set();
	runs.forEach((r, order) => {
		const vi = rep.variants.indexOf(r.variant);
		if (vi < 0 || r.status !== "ok" || used.has(vi + ":" + r.pair)) return;
		const y = m.variants[vi].values[r.pair - 1];
		if (y === null || y === undefined) return;
		used.add(vi + ":" + r.pair);
		series[vi].points.push({ x: order + 1, y, run: r });
	});
	const big = Math.max(0, ...series.flatMap(s => s.points.map(p => Math.abs(p.y))));
	const sc = unitScale(m.unit, big);
	for (const s of series)
		for (const p of s.points) p.title = `run ${p.run.id}: ${p.run.variant}, pair ${p.run.pair}: ${fmtUnit(p.y, sc)}`;
	document.getElementById("plot-title").textContent = `Per-run values: ${name} (${w.name})`;
	document.getElementById("runs-plot").replaceChildren(
		plot(series, { id: "runs-svg", dots: true, integerX: true, xlabel: "run, in execution order",
			yfmt: y => fmt(y / sc.div),
			ylabel: `${m.name}${sc.suffix || m.unit ? " (" + (sc.suffix || m.unit) + ")" : ""}` }));
}

// The series a run's sample plot opens on, from the run's list of series
// (GET /runs/RUN/samples: name, n, min, max, mean, changes): the first of
// the job's primary metrics that moves in this run, else the moving series
// with the largest relative spread, (max − min) / |mean|, of those that
// change in at least half the sample intervals (a counter that ticks once
// near zero has a large spread and shows nothing), else of all moving
// ones; a constant series only when nothing moves.
function defaultSeries(series, primaries) {
	const moves = s => s.n > 1 && s.max > s.min;
	for (const p of primaries || []) {
		const s = series.find(x => x.name === p);
		if (s && moves(s)) return p;
	}
	const moving = series.filter(moves);
	const steady = moving.filter(s => 2 * s.changes >= s.n - 1);
	const spread = s => (s.max - s.min) / Math.abs(s.mean);
	let best = null;
	for (const s of steady.length ? steady : moving)
		if (!best || spread(s) > spread(best)) best = s;
	return best ? best.name : series.length ? series[0].name : "";
}

async function loadSamples() {
	const runSel = document.getElementById("sample-run"), metSel = document.getElementById("sample-metric");
	const box = document.getElementById("samples-plot");
	const run = runSel.value;
	if (!run) { box.replaceChildren(el("p", {}, "no run has ended yet")); return; }
	try {
		if (metSel.dataset.run !== run) {
			const d = await getJSON(`/runs/${run}/samples`);
			// a series the reader chose stays chosen from run to run
			const keep = metSel.dataset.chosen ? metSel.value : "";
			const series = d.series || d.metrics.map(name => ({ name }));
			const flat = new Set(series.filter(s => s.n > 0 && s.max === s.min).map(s => s.name));
			metSel.replaceChildren(...d.metrics.map(n => el("option", { value: n }, flat.has(n) ? `${n} (constant)` : n)));
			const r = job.runs.find(x => String(x.id) === run);
			const w = r && job.report && job.report.workloads.find(x => x.name === r.workload);
			metSel.value = d.metrics.includes(keep) ? keep :
				defaultSeries(series, w ? w.metrics.filter(m => m.primary).map(m => m.name) : []);
			metSel.dataset.run = run;
		}
		if (!metSel.value) { box.replaceChildren(el("p", {}, "this run has no sampled series")); return; }
		const s = await getJSON(`/runs/${run}/samples?metric=${encodeURIComponent(metSel.value)}`);
		const r = job.runs.find(x => String(x.id) === run);
		const vi = job.report ? job.report.variants.indexOf(r && r.variant) : 0;
		// in the unit its largest value reads best in (MiB, ms), round ticks in it
		const sc = unitScale(s.unit, Math.max(0, ...s.values));
		const unit = sc.suffix || s.unit;
		const points = s.t_s.map((t, i) => ({ x: t, y: s.values[i] / sc.div }));
		box.replaceChildren(plot([{ name: r ? r.variant : "run " + run, color: COLORS[Math.max(vi, 0) % COLORS.length], points }],
			{ id: "samples-svg", line: true, xlabel: "seconds since the run's first sample",
				ylabel: s.metric + (unit ? ` (${unit})` : "") }));
	} catch (e) {
		box.replaceChildren(el("p", { class: "error" }, e.message));
	}
}

// The job's runs: a run that has ended never changes, so only the runs
// from the first one still going (all of them the first time) are asked for.
async function loadRuns(id, have) {
	let keep = have.findIndex(r => r.status === "started");
	if (keep < 0) keep = have.length;
	const more = await getAll(`/jobs/${id}/runs`, "runs", keep ? have[keep - 1].id : null);
	return have.slice(0, keep).concat(more);
}

function renderRunChoices() {
	const runSel = document.getElementById("sample-run");
	const keep = runSel.value;
	const done = job.runs.filter(r => r.status !== "started" && r.status !== "running");
	if (runSel.options.length === done.length) return;
	runSel.replaceChildren(...done.map(r =>
		el("option", { value: r.id }, `run ${r.id}: ${r.variant}, ${r.workload}, ${pairWords(r.pair)}`)));
	if (keep && done.some(r => String(r.id) === keep)) runSel.value = keep;
	loadSamples();
}

async function poll() {
	let j;
	try {
		j = await getJSON(`/jobs/${job.id}`);
		renderStatus(j);
		const key = `${j.status}:${j.progress.runs_done}:${j.progress.runs_skipped}`;
		if (key !== job.reportKey) {
			const [runs, rep] = await Promise.all([loadRuns(job.id, job.runs || []),
				getJSON(`/jobs/${job.id}/report?format=json`)]);
			job.runs = runs;
			renderReport(rep);
			renderRunChoices();
			job.reportKey = key;
		}
		showError("");
	} catch (e) {
		showError(e.message);
		if (e.status === 404) return;
	}
	if (!j || j.status === "queued" || j.status === "running")
		setTimeout(poll, POLL_MS);
}

function jobPage() {
	job.id = jobId();
	if (!job.id) { showError("no job id in the address (/jobs/ID)"); return; }
	document.getElementById("sample-run").addEventListener("change", loadSamples);
	const metSel = document.getElementById("sample-metric");
	metSel.addEventListener("change", () => { metSel.dataset.chosen = "1"; loadSamples(); });
	poll();
}

document.addEventListener("DOMContentLoaded", () => {
	if (document.body.dataset.page === "jobs") jobsPage();
	else if (document.body.dataset.page === "job") jobPage();
});
