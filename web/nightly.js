// kab's nightly pages: a job name's history as trend plots
// (history.html?job=NAME, from GET /api/v1/history) and the list of
// change points, their confirmations and their bisections
// (regressions.html, from GET /api/v1/regressions and
// /api/v1/bisections/ID). Loaded after kab.js, whose helpers it uses (el,
// svg, getJSON, getAll, showError, fmt, ticks). Every string from the API goes
// into the page as text.
"use strict";

const NIGHT_GAP = { failed: "failed", cancelled: "cancelled", "no-estimate": "no estimate", missed: "no job" };

// a number the plot can place (the API writes null for one it could not compute)
function isNum(v) {
	return typeof v === "number" && Number.isFinite(v);
}

function shortSha(sha) {
	return sha ? String(sha).slice(0, 12) : "";
}

// "+1.2%", one decimal, for the plot's labels
function pct1(v) {
	return v === null || v === undefined ? "–" : (v > 0 ? "+" : "") + v.toFixed(1) + "%";
}

// "1a2b3c4d5e6f mm: subject", or what is known instead
function commitText(c) {
	if (!c || !c.sha) return "no commit recorded";
	return `${shortSha(c.sha)} ${c.subject || ""}`.trim();
}

// What a trend plot marks a regression's first bad night with, from its
// bisection (the regression's "bisection"): {label, title}, or null while
// it runs, when it ended otherwise, or when it named no commit. The
// commit named is the title's (harness/report/regress_bisect.c): the
// first confirmed culprit, else the first layout-sensitive one, else the
// first range.
function culpritMark(b) {
	if (!b || b.state !== "done" || !Array.isArray(b.culprits)) return null;
	const c = b.culprits.find(x => x.answer === "culprit") || b.culprits.find(x => x.answer === "layout-sensitive") ||
		b.culprits.find(x => x.answer === "range");
	if (!c) return null;
	const more = b.culprits.length > 1 ? ` +${b.culprits.length - 1} more` : "";
	if (c.answer === "layout-sensitive")
		return { label: `layout-sensitive ${shortSha(c.sha)}${more}`,
			title: [`bisection ${b.id}: ${c.sha} is layout-sensitive, not a regression: its effect vanishes with forced alignment`,
				c.subject || ""].join("\n") };
	if (c.answer === "range")
		return { label: `first bad commit: one of ${c.n_candidates} commits${more}`,
			title: `bisection ${b.id}: the first bad commit is one of ${c.n_candidates} commits` + (c.reason ? ` (${c.reason})` : "") };
	return { label: `first bad commit ${shortSha(c.sha)}${more}`,
		title: [`bisection ${b.id}: first bad commit ${c.sha}`, c.subject || "", `${c.author || "?"}, ${c.date || "?"}`].join("\n") };
}

function historyLink(job, metric, workload) {
	const q = new URLSearchParams({ job });
	if (metric) q.set("metric", metric);
	if (workload) q.set("workload", workload);
	return "/history.html?" + q.toString();
}

/* ---- the history page ---- */

// The hover text of one point of a series.
function nightTitle(p) {
	if (p.state === "missed")
		return `${p.date}: ${p.days} day${p.days === 1 ? "" : "s"} with no job`;
	const lines = [`night ${p.date}, job ${p.job}`, `commit ${commitText(p.commit)}`];
	if (p.state === "measured")
		lines.push(`estimate ${fmtPct(p.estimate_pct)} [${fmtPct(p.ci_low_pct)}, ${fmtPct(p.ci_high_pct)}]` +
			(p.verdict ? `, ${p.verdict}` : "") + (p.pairs ? `, ${p.pairs} pairs` : ""));
	else if (p.state === "no-estimate")
		lines.push(`no estimate (${p.runs_failed} of ${p.runs} runs failed)`);
	else
		lines.push(p.state + (p.reason ? `: ${p.reason}` : ""));
	// the tracking's words, "force-pushed: 1a2b... is not an ancestor of 3c4d..."
	if (p.commit && p.commit.event)
		lines.push(`branch ${p.commit.event}`);
	else if (p.force_pushed)
		lines.push("branch force-pushed");
	return lines.join("\n");
}

function changeTitle(c) {
	const side = (what, s) => `${what} ${s.date}, job ${s.job}, ${commitText(s.commit)}`;
	return [`change point at ${c.first_bad.date}`,
		`mean ${fmtPct(c.mean_before_pct)} over ${c.nights_before} nights, then ${fmtPct(c.mean_after_pct)} over ${c.nights_after}` +
		(isNum(c.delta_points) ? ` (${c.delta_points > 0 ? "+" : ""}${c.delta_points.toFixed(1)} points)` : ""),
		`change of the mean ${fmtPct(c.change_pct)}, p ${fmtP(c.p_value)}`,
		side("last good", c.last_good), side("first bad", c.first_bad)].join("\n");
}

// Contiguous runs of measured points, as lists of point indexes: a line
// or a band never crosses a gap.
function measuredRuns(points) {
	const runs = [];
	let cur = null;
	points.forEach((p, i) => {
		if (p.state === "measured" && isNum(p.estimate_pct)) {
			if (!cur) runs.push(cur = []);
			cur.push(i);
		} else {
			cur = null;
		}
	});
	return runs;
}

// One series: x is the point's place in the series (a gap keeps its
// place, so it shows as a gap), y the night's estimate against the
// baseline with its CI as a band; change points are vertical markers
// between the last good and the first bad night. marks: the regressions
// recorded for this series, by first bad job; culprits: their bisections'
// first bad commits (culpritMark), by first bad job, marked on that night.
function trendPlot(s, marks, id, culprits = {}) {
	const W = 900, H = 300, L = 64, R = 20, T = 30, B = 46;
	const pts = s.points;
	const root = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, id, class: "plot trend" });
	const ys = [0];
	for (const p of pts)
		if (p.state === "measured")
			for (const v of [p.estimate_pct, p.ci_low_pct, p.ci_high_pct]) if (isNum(v)) ys.push(v);
	for (const c of s.change_points)
		for (const v of [c.mean_before_pct, c.mean_after_pct]) if (isNum(v)) ys.push(v);
	const yt = ticks(Math.min(...ys), Math.max(...ys), 5);
	const y0 = yt[0], y1 = yt[yt.length - 1];
	const slot = (W - L - R) / Math.max(pts.length, 1);
	const sx = i => L + slot * (i + 0.5);
	const sy = y => H - B - (y - y0) / (y1 - y0) * (H - T - B);
	for (const t of yt) {
		root.append(svg("line", { class: "grid", x1: L, x2: W - R, y1: sy(t), y2: sy(t) }));
		root.append(svg("text", { x: L - 6, y: sy(t) + 4, "text-anchor": "end" }, (t > 0 ? "+" : "") + fmt(t) + "%"));
	}
	root.append(svg("line", { class: "baseline", x1: L, x2: W - R, y1: sy(0), y2: sy(0) }));
	root.append(svg("text", { class: "baseline-label", x: W - R - 4, y: sy(0) - 4, "text-anchor": "end" },
		`${s.baseline || "baseline"} (0%)`));
	// the nights that measured nothing: a shaded slot, never a zero
	pts.forEach((p, i) => {
		if (p.state === "measured" && isNum(p.estimate_pct)) return;
		const g = svg("rect", { class: "gap " + p.state, x: sx(i) - slot / 2, y: T, width: slot, height: H - T - B,
			"data-point": i, "data-state": p.state });
		g.append(svg("title", {}, nightTitle(p)));
		root.append(g);
		const mark = svg("text", { class: "gap-label", x: sx(i), y: T + 12, "text-anchor": "middle" },
			p.state === "missed" ? "…" : "×");
		mark.append(svg("title", {}, nightTitle(p)));
		root.append(mark);
	});
	// the CI band and the line, one piece per run of measured nights (a
	// night without a CI bound narrows the band to its estimate)
	const hi = i => isNum(pts[i].ci_high_pct) ? pts[i].ci_high_pct : pts[i].estimate_pct;
	const lo = i => isNum(pts[i].ci_low_pct) ? pts[i].ci_low_pct : pts[i].estimate_pct;
	for (const run of measuredRuns(pts)) {
		const hw = run.length === 1 ? Math.min(6, slot / 3) : 0; // a lone night: a short bar
		const upper = run.map(i => `${(sx(i) - hw).toFixed(1)},${sy(hi(i)).toFixed(1)}`);
		const lower = run.slice().reverse().map(i => `${(sx(i) + hw).toFixed(1)},${sy(lo(i)).toFixed(1)}`);
		if (hw) upper.push(`${(sx(run[0]) + hw).toFixed(1)},${sy(hi(run[0])).toFixed(1)}`);
		if (hw) lower.push(`${(sx(run[0]) - hw).toFixed(1)},${sy(lo(run[0])).toFixed(1)}`);
		root.append(svg("polygon", { class: "band", points: upper.concat(lower).join(" ") }));
		if (run.length > 1)
			root.append(svg("polyline", { class: "trend-line",
				points: run.map(i => `${sx(i).toFixed(1)},${sy(pts[i].estimate_pct).toFixed(1)}`).join(" ") }));
	}
	// change points: the means either side, and a marker before the first bad night
	for (const c of s.change_points) {
		const xa = sx(c.from_point) - slot / 2, xm = (sx(c.last_good.point) + sx(c.first_bad.point)) / 2,
			xb = sx(c.to_point) + slot / 2;
		if (isNum(c.mean_before_pct))
			root.append(svg("line", { class: "cp-mean", x1: xa, x2: xm, y1: sy(c.mean_before_pct), y2: sy(c.mean_before_pct) }));
		if (isNum(c.mean_after_pct))
			root.append(svg("line", { class: "cp-mean", x1: xm, x2: xb, y1: sy(c.mean_after_pct), y2: sy(c.mean_after_pct) }));
		const g = svg("g", { class: "cp", "data-point": c.first_bad.point, "data-job": c.first_bad.job });
		g.append(svg("title", {}, changeTitle(c) + (marks[c.first_bad.job] ? "\n" + marks[c.first_bad.job] : "")));
		g.append(svg("line", { class: "cp-line", x1: xm, x2: xm, y1: T - 8, y2: H - B }));
		const label = `${pct1(c.mean_before_pct)} → ${pct1(c.mean_after_pct)}` +
			(marks[c.first_bad.job] ? ` (${marks[c.first_bad.job]})` : "");
		g.append(svg("text", { class: "cp-label", x: xm + 4, y: T - 12, "text-anchor": xm > W / 2 ? "end" : "start" }, label));
		root.append(g);
	}
	// a bisection's first bad commit, on the night it landed in
	pts.forEach((p, i) => {
		const m = p.job !== undefined && culprits[p.job];
		if (!m) return;
		const x = sx(i), right = x > (L + W - R) / 2;
		const g = svg("g", { class: "culprit", "data-point": i, "data-job": p.job });
		g.append(svg("title", {}, m.title));
		g.append(svg("line", { class: "culprit-line", x1: x, x2: x, y1: T, y2: H - B }));
		g.append(svg("text", { class: "culprit-label", x: right ? x - 4 : x + 4, y: H - B - 6,
			"text-anchor": right ? "end" : "start" }, m.label));
		root.append(g);
	});
	// a point per measured night; a force-pushed one is drawn hollow, ringed
	pts.forEach((p, i) => {
		if (p.state !== "measured" || !isNum(p.estimate_pct)) return;
		const c = svg("circle", { class: "pt night" + (p.force_pushed ? " forced" : ""), cx: sx(i), cy: sy(p.estimate_pct),
			r: 4.5, "data-point": i, "data-job": p.job, "data-date": p.date });
		c.append(svg("title", {}, nightTitle(p)));
		root.append(c);
		if (p.force_pushed)
			root.append(svg("text", { class: "forced-label", x: sx(i), y: sy(p.estimate_pct) + 18, "text-anchor": "middle" }, "force-push"));
	});
	// dates under the axis, as many as fit
	const every = Math.max(1, Math.ceil(pts.length / Math.floor((W - L - R) / 80)));
	pts.forEach((p, i) => {
		if (i % every === 0)
			root.append(svg("text", { x: sx(i), y: H - B + 16, "text-anchor": "middle" }, p.date));
	});
	root.append(svg("line", { class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B }));
	root.append(svg("line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B }));
	root.append(svg("text", { x: (L + W - R) / 2, y: H - 8, "text-anchor": "middle" }, "night"));
	root.append(svg("text", { x: 14, y: (T + H - B) / 2, "text-anchor": "middle", transform: `rotate(-90 14 ${(T + H - B) / 2})` },
		`${s.variant} vs ${s.baseline} (%)`));
	return root;
}

function directionWords(d) {
	return d === "higher" ? "higher is better" : d === "lower" ? "lower is better" : "no direction";
}

function renderHistory(h, marksOf, culpritsOf) {
	const box = document.getElementById("series");
	box.replaceChildren();
	document.getElementById("summary").textContent =
		`${h.nights} night${h.nights === 1 ? "" : "s"} from ${localTime(h.first)} to ${localTime(h.last)}, ` +
		`${h.failed} failed or cancelled; the most measured nights of a series: ${h.measured}`;
	const note = document.getElementById("note");
	note.textContent = h.state === "ok" ? "" : (h.note || "not enough nights") + ": no change points yet";
	note.hidden = h.state === "ok";
	if (!h.series.length)
		box.append(el("p", {}, h.metric ? `no rows of metric ${h.metric}` : "no series"));
	h.series.forEach((s, si) => {
		const sec = el("section", { class: "series", "data-metric": s.metric, "data-workload": s.workload, id: `s-${si}` });
		sec.append(el("h2", {}, `${s.workload}: ${s.metric}`),
			el("p", { class: "legend" }, `${s.unit ? s.unit + ", " : ""}${directionWords(s.direction)}; ` +
				`${s.variant} against ${s.baseline}${s.primary ? ", primary" : ""}; ${s.measured} measured night` +
				`${s.measured === 1 ? "" : "s"}; ${s.change_points.length} change point${s.change_points.length === 1 ? "" : "s"}`));
		if (s.state !== "ok")
			sec.append(el("p", { class: "notenough" }, s.note || "not enough nights"));
		sec.append(trendPlot(s, marksOf(s), `trend-${si}`, culpritsOf(s)));
		box.append(sec);
	});
	const sel = document.getElementById("metric");
	sel.replaceChildren(el("option", { value: "" }, "the primary metrics"),
		...h.metrics.map(m => el("option", { value: m }, m)));
	sel.value = h.metric || "";
}

// The regressions recorded for a job name, by series and first bad job:
// "confirmed regression #2"; none when they cannot be read.
// In a lab (machine given) the machine's uploaded ones, whose first bad
// night is the lab's job (lab_bad_job), as the lab history's points are.
async function regressionMarks(job, machine) {
	try {
		if (!machine)
			return (await getAll("/regressions", "regressions")).filter(r => r.job === job);
		const q = new URLSearchParams({ machine, job, limit: "1000" });
		return (await getJSON("/lab/regressions?" + q.toString())).regressions.map(r =>
			({ ...r, first_bad: r.first_bad && r.lab_bad_job ? { ...r.first_bad, job: r.lab_bad_job } : null }));
	} catch (e) {
		return [];
	}
}

// The history's API path and query: the machine's own (/history), or one
// lab machine's (/lab/history?machine=...) when the page names a machine.
function historyApi(job, machine, metric, workload, format) {
	const q = new URLSearchParams(machine ? { machine, job } : { job });
	if (metric) q.set("metric", metric);
	if (workload) q.set("workload", workload);
	if (format) q.set("format", format);
	return (machine ? "/lab/history?" : "/history?") + q.toString();
}

async function historyPage() {
	const q = new URLSearchParams(location.search);
	const job = q.get("job"), metric = q.get("metric"), workload = q.get("workload"), machine = q.get("machine");
	const title = document.getElementById("title");
	if (!job) { showError("no job name in the address (history.html?job=NAME)"); return; }
	const on = machine ? ` on ${machine}` : "";
	document.title = `kab: history of ${job}${on}`;
	title.textContent = `Nightly history: ${job}${on}`;
	document.getElementById("as-text").href = API + historyApi(job, machine, metric, null, "text");
	document.getElementById("metric").addEventListener("change", ev => {
		const p = new URLSearchParams({ job });
		if (machine) p.set("machine", machine);
		if (ev.target.value) p.set("metric", ev.target.value);
		location.search = p.toString();
	});
	let h;
	try {
		h = await getJSON(historyApi(job, machine, metric, workload));
	} catch (e) {
		document.getElementById("summary").textContent = "";
		showError(e.status === 404 && !metric && !workload ? `no nightly history for job ${job}${on}` :
			e.status === 404 || e.status === 400 ? e.message : "cannot read the history: " + e.message);
		return;
	}
	const regs = await regressionMarks(job, machine);
	const ofSeries = s => regs.filter(r => r.workload === s.workload && r.metric === s.metric && r.first_bad);
	renderHistory(h, s => {
		const marks = {};
		for (const r of ofSeries(s))
			if (!marks[r.first_bad.job])
				marks[r.first_bad.job] = `${r.kind} #${r.id}`;
		return marks;
	}, s => {
		const culprits = {};
		for (const r of ofSeries(s)) {
			const m = culpritMark(r.bisection);
			if (m && !culprits[r.first_bad.job])
				culprits[r.first_bad.job] = m;
		}
		return culprits;
	});
	showError("");
}

/* ---- the regressions page ---- */

function nightCell(n) {
	if (!n) return el("td", {}, "–");
	return el("td", { class: "commit" },
		el("a", { href: `/jobs/${n.job}` }, `job ${n.job}`), " ", el("span", { class: "date" }, n.night ? n.night.slice(0, 10) : ""), " ",
		n.sha ? el("code", { title: n.sha }, shortSha(n.sha)) : "no commit recorded",
		n.subject ? el("span", { class: "subject" }, " " + n.subject) : null);
}

function confirmationCell(r) {
	const c = r.confirmation || {};
	const td = el("td", { class: "confirmation" });
	if (isNum(c.estimate_pct))
		td.append(el("span", { class: "estimate " + (c.verdict || "none") },
			`${fmtPct(c.estimate_pct)} [${fmtPct(c.ci_low_pct)}, ${fmtPct(c.ci_high_pct)}]`),
			` p ${fmtP(c.p)}, ${c.verdict || "no verdict"}`);
	else
		td.append(r.state === "pending" ? "waiting for its job" : "no estimate");
	if (c.job !== null && c.job !== undefined)
		td.append(" · ", el("a", { href: `/job.html?id=${encodeURIComponent(c.job)}`, class: "confirm-job" }, `job ${c.job}`));
	if (c.reason)
		td.append(el("div", { class: "legend reason" }, c.reason));
	return td;
}

// confirmed regressions worse, improvements better, the rest grey
const KIND_CLASS = { regression: "worse", improvement: "better", change: "changed" };

function regressionRow(r) {
	// the kind says what a change that is not confirmed is; a confirmed one is open or acknowledged
	const state = r.state === "confirmed" ? (r.open ? "open" : "acknowledged") : r.state;
	const stateCell = el("td", { class: "state" }, el("span", { class: "kind " + (KIND_CLASS[r.kind] || "none") }, r.kind));
	if (r.state === "confirmed")
		stateCell.append(el("div", { class: "open-state" }, state));
	if (r.acknowledged)
		stateCell.append(el("div", { class: "legend" }, `by ${r.acknowledged_by || "?"}, ${localTime(r.acknowledged)}`));
	const d = r.detection || {};
	return el("tr", { id: `r${r.id}`, class: "regression " + state, "data-id": r.id },
		el("td", { class: "num" }, r.id),
		el("td", { class: "title" }, el("div", {}, r.title),
			el("div", { class: "legend" }, `detected ${localTime(r.detected)}; nightly ${pct1(d.mean_before_pct)} → ` +
				`${pct1(d.mean_after_pct)}, p ${fmtP(d.p)}`)),
		stateCell,
		nightCell(r.last_good),
		nightCell(r.first_bad),
		el("td", {}, r.machine || "–"),
		el("td", {}, el("a", { href: historyLink(r.job, r.metric, r.workload), class: "history" }, r.job),
			el("div", { class: "legend" }, `${r.workload}: ${r.metric}`)),
		confirmationCell(r));
}

// Under each change, the trend plot of its metric's history with the
// change marked: one GET a job, metric and workload (kabd caches them).
async function trendRows(rows) {
	const key = r => `${r.job}\n${r.metric}\n${r.workload}`;
	const got = new Map();
	for (const r of rows)
		if (!got.has(key(r)))
			got.set(key(r), getJSON("/history?" + new URLSearchParams({ job: r.job, metric: r.metric, workload: r.workload }).toString())
				.catch(() => null));
	for (const r of rows) {
		const h = await got.get(key(r));
		const s = h && h.series.find(x => x.metric === r.metric && x.workload === r.workload);
		const td = el("td", { colspan: 8, class: "trend-cell" });
		const m = r.first_bad && culpritMark(r.bisection);
		if (s)
			td.append(trendPlot(s, r.first_bad ? { [r.first_bad.job]: `${r.kind} #${r.id}` } : {}, `trend-r${r.id}`,
				m ? { [r.first_bad.job]: m } : {}));
		else
			td.append(el("span", { class: "legend" }, "no history of this metric to plot"));
		const row = document.getElementById(`r${r.id}`);
		if (row)
			row.after(el("tr", { class: "trend-row", "data-id": r.id }, td));
	}
}

// "+9.80% [+8.10%, +11.50%]", or what stands for it
function effectText(e) {
	return e && isNum(e.estimate_pct) ? `${fmtPct(e.estimate_pct)} [${fmtPct(e.ci_lo_pct)}, ${fmtPct(e.ci_hi_pct)}]` : "not measured";
}

// One answer of a bisection: its first bad commit with its author, date
// and confirmation against its parent; or a range of commits.
function culpritBlock(c) {
	const div = el("div", { class: "culprit", "data-answer": c.answer || "", "data-sha": c.sha || null });
	if (c.answer === "range") {
		div.append(el("span", { class: "answer" }, `first bad commit: one of ${c.n_candidates} commits`),
			c.reason ? el("span", { class: "legend" }, `: ${c.reason}`) : null);
		return div;
	}
	const e = c.confirmation || {};
	const words = { culprit: "first bad commit", "layout-sensitive": "layout-sensitive (not a regression) first bad commit" };
	const ctl = c.controls || {};
	const control = (what, k) => k ? el("div", { class: "control", "data-decision": k.decision || "" }, `${what}: `,
		el("span", { class: "estimate" }, effectText(k)),
		`, ${k.pairs ?? "?"} pairs, ${k.decision || "?"}`, k.reason ? el("span", { class: "legend" }, `: ${k.reason}`) : null,
		k.note ? el("span", { class: "legend" }, ` [${k.note}]`) : null) : null;
	div.append(el("span", { class: "answer" }, words[c.answer] || "unconfirmed first bad commit"), " ",
		el("code", { class: "sha", title: c.sha || "" }, shortSha(c.sha)), " ",
		el("span", { class: "subject" }, c.subject || ""),
		el("div", { class: "legend author" }, `${c.author || "?"}, ${c.date || "?"}`),
		el("div", { class: "confirmation" }, "against its parent ", el("code", { title: c.parent || "" }, shortSha(c.parent)), ": ",
			el("span", { class: "estimate" }, effectText(e)),
			`, ${e.pairs ?? "?"} pairs, ${e.decision || "?"}`, e.reason ? el("span", { class: "legend" }, `: ${e.reason}`) : null),
		control("reverted on BAD", ctl.revert), control("with forced alignment", ctl.align));
	return div;
}

// The steps of a bisection: each commit against GOOD with its pairs,
// estimate [CI], decision and why; while it runs (no report yet), its
// step jobs.
function stepsTable(d) {
	const rep = d && d.report;
	if (rep && Array.isArray(rep.steps))
		return el("table", { class: "list steps" },
			el("thead", {}, el("tr", {}, el("th", {}, "#"), el("th", {}, "commit"), el("th", {}, "pairs"),
				el("th", {}, "estimate [95% CI]"), el("th", {}, "decision"))),
			el("tbody", {}, ...rep.steps.map((s, i) => el("tr", { class: "step", "data-sha": s.sha || "" },
				el("td", { class: "num" }, i + 1),
				el("td", { class: "commit" }, el("code", { title: s.sha || "" }, shortSha(s.sha))),
				el("td", { class: "num" }, s.pairs ?? "–"),
				el("td", {}, effectText(s)),
				el("td", { class: "decision" }, el("span", { class: "mark " + (s.decision || "none") }, s.decision || "?"),
					s.reason ? el("div", { class: "legend" }, s.reason) : null)))));
	const jobs = d && Array.isArray(d.step_jobs) ? d.step_jobs : [];
	return el("table", { class: "list steps" },
		el("thead", {}, el("tr", {}, el("th", {}, "step job"), el("th", {}, "commit"), el("th", {}, "against"),
			el("th", {}, "pairs"), el("th", {}, "status"))),
		el("tbody", {}, ...(jobs.length ? jobs.map(j => el("tr", { class: "step-job" },
			el("td", {}, j.job !== null && j.job !== undefined ? el("a", { href: `/job.html?id=${encodeURIComponent(j.job)}` }, `job ${j.job}`) : "not queued"),
			el("td", { class: "commit" }, el("code", { title: j.sha || "" }, shortSha(j.sha))),
			el("td", { class: "commit" }, el("code", { title: j.base || "" }, shortSha(j.base))),
			el("td", { class: "num" }, j.pairs ?? "–"),
			el("td", {}, (j.status || "waiting") + (j.reason ? `: ${j.reason}` : "")))) :
			[el("tr", {}, el("td", { colspan: 5 }, "no step job yet"))])));
}

// A regression's bisection, from its "bisection" (state, culprits,
// counts) and GET /bisections/ID (steps and git bisect log): a row under
// the regression's.
function bisectionRow(r) {
	const b = r.bisection;
	const sec = el("section", { class: "bisection", "data-bisection": b.id, "data-state": b.state });
	sec.append(el("h3", {}, `bisection ${b.id}: ${b.state}`),
		b.reason ? el("p", { class: "legend reason" }, b.reason) : null);
	for (const c of b.culprits || [])
		sec.append(culpritBlock(c));
	if (b.steps !== null && b.steps !== undefined)
		sec.append(el("p", { class: "legend counts" }, `${b.steps} step${b.steps === 1 ? "" : "s"}, ` +
			`${b.builds} build${b.builds === 1 ? "" : "s"}, ${b.boots} boot${b.boots === 1 ? "" : "s"}`));
	const steps = el("div", { class: "steps-box" }, el("span", { class: "legend" }, "reading its steps…"));
	sec.append(steps);
	getJSON(`/bisections/${encodeURIComponent(b.id)}`).then(d => {
		steps.replaceChildren(stepsTable(d));
		const log = d.report && d.report.log;
		if (log)
			steps.append(el("details", { class: "log" }, el("summary", {}, "git bisect log"), el("pre", { class: "bisect-log" }, log)));
	}).catch(e => steps.replaceChildren(el("span", { class: "error" }, `cannot read bisection ${b.id}: ${e.message}`)));
	return el("tr", { class: "bisection-row", "data-id": r.id, "data-bisection": b.id }, el("td", { colspan: 8 }, sec));
}

async function regressionsPage() {
	const tbody = document.querySelector("#regressions tbody");
	try {
		// newest first, whatever order the list comes in
		const rows = (await getAll("/regressions", "regressions")).sort((a, b) =>
			(b.detected || "").localeCompare(a.detected || "") || b.id - a.id);
		tbody.replaceChildren(...rows.flatMap(r => r.bisection ? [regressionRow(r), bisectionRow(r)] : [regressionRow(r)]));
		if (!rows.length)
			tbody.append(el("tr", {}, el("td", { colspan: 8 }, "no change points recorded")));
		await trendRows(rows);
		const open = rows.filter(r => r.open).length;
		document.getElementById("summary").textContent =
			`${rows.length} change point${rows.length === 1 ? "" : "s"}, ${open} open`;
		showError("");
	} catch (e) {
		showError("cannot list the regressions: " + e.message);
	}
}

document.addEventListener("DOMContentLoaded", () => {
	if (document.body.dataset.page === "history") historyPage();
	else if (document.body.dataset.page === "regressions") regressionsPage();
});
