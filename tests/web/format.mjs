// The job page's number formatting, row groups, the rows it folds away,
// the verdicts' hover text and the sample series it opens on (web/kab.js),
// and the nightly pages' mark of a bisection's first bad commit
// (web/nightly.js), without a browser: the scripts run in a bare context
// and their functions are called.
//
//   node tests/web/format.mjs      prints "format: N passed, M failed"
//
// The rules are the text report's (harness/report/report_unit.c): human units
// for times below the second and sizes, never exponent notation.
import { readFileSync } from "node:fs";
import vm from "node:vm";

const here = new URL(".", import.meta.url);
const src = readFileSync(new URL("../../web/kab.js", here), "utf8");
const ctx = { document: { addEventListener() {} }, location: {}, URLSearchParams };
vm.createContext(ctx);
vm.runInContext(src + "\n;globalThis.t = { fmt, fmtUnit, unitScale, fmtP, metricGroup, allZero, verdictWhy, defaultSeries };", ctx);
const { fmt, fmtUnit, unitScale, fmtP, metricGroup, allZero, verdictWhy, defaultSeries } = ctx.t;

let passed = 0, failed = 0;
function eq(got, want, what) {
	if (got === want) { passed++; return; }
	failed++;
	console.log(`FAIL ${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}
const u = (unit, v, big = Math.abs(v)) => fmtUnit(v, unitScale(unit, big));

eq(u("ns", 206388029), "206 ms", "206388029 ns");
eq(u("ns", 1500), "1.50 µs", "1500 ns");
eq(u("ns", 0, 1500), "0", "0 ns in a µs row");
eq(u("ns", -26388029, 206388029), "-26.4 ms", "a negative value");
eq(u("bytes", 3221225472), "3.00 GiB", "3 GiB");
eq(u("KiB", 204800), "200 MiB", "200 MiB in KiB");
eq(u("s", 12.5), "12.5", "seconds stay");
eq(u("pages", 206388029), "206,388,029", "pages: raw, whole");
for (const v of [2.064e8, 1e21, 1.5e-9, 123456789012, 0.000001234, -3e12])
	eq(/e/i.test(fmt(v)), false, `fmt(${v}) has no exponent (${fmt(v)})`);
eq(fmt(28238.634), "28,239", "five significant digits");
eq(fmt(null), "–", "null");
eq(fmtP(1e-7), "<0.001", "tiny q");
eq(fmtP(0.0421), "0.042", "q");
eq(metricGroup({ name: "stress-ng.bogo_ops_per_s", primary: true }), 0, "primary");
eq(metricGroup({ name: "pageout.ns_mean", primary: false }), 1, "the workload's own");
eq(metricGroup({ name: "vmstat.pgscan_anon", primary: false }), 2, "a counter");
eq(metricGroup({ name: "rusage.sys_s", primary: false }), 2, "rusage is a counter");

// rows folded as the text report folds them: 0 in every run of every side
const vals = (...sides) => ({ variants: sides.map(values => ({ values })) });
eq(allZero(vals([0, 0, 0], [0, 0, 0])), true, "zero everywhere");
eq(allZero(vals([0, null, 0], [0, 0, null])), true, "zero where measured");
eq(allZero(vals([0, 0, 0], [0, 0, 1])), false, "one run not zero");
eq(allZero(vals([null], [null])), false, "no value at all is not zero");
eq(allZero(vals([0, 0], [0, 0], [0, 3])), false, "a third variant not zero");

// a verdict's hover text: the thresholds when the report has them, and
// never the epsilon that the statistics gave up
const cmp = { verdict: "same", epsilon_pct: 7 };
eq(verdictWhy(cmp), "same", "no thresholds: the word alone");
eq(verdictWhy({ verdict: "same", equivalence_pct: 2, ci90_low_pct: -0.5, ci90_high_pct: 0.75 }),
	"same: the 90% CI -0.50% … +0.75% lies inside ±2%", "same, with its margin");
eq(verdictWhy({ verdict: "worse", min_change_pct: 1, equivalence_pct: 2 }),
	"worse: a significant change of at least 1%, its 95% CI excluding 0", "worse, with min_change");
eq(verdictWhy({ verdict: "undecided", min_change_pct: 1, equivalence_pct: 2.5, ci90_low_pct: -4, ci90_high_pct: 1 }),
	"undecided: not a significant change of at least 1%, the 90% CI -4.00% … +1.00% not inside ±2.5%", "undecided");

// the series a run's sample plot opens on
const ser = (name, min, max, mean, changes, n = 10) => ({ name, n, min, max, mean, changes });
const flat = ser("interrupts.24", 5, 5, 5, 0);
const small = ser("memcg.pgmajfault", 0, 2, 0.3, 2);       // ticks twice near zero
const big = ser("memcg.cache", 0, 2e8, 1.2e8, 7);          // rises steadily
const bigger = ser("memcg.rss", 1e6, 3e8, 1e8, 8);
const slow = ser("interrupts.LOC", 1e9, 1e9 + 900, 1e9 + 450, 9);
eq(defaultSeries([flat, small, big, slow], []), "memcg.cache", "the steady mover with the largest spread");
eq(defaultSeries([flat, big, bigger, slow], []), "memcg.rss", "the larger spread of two steady movers");
eq(defaultSeries([flat, small], []), "memcg.pgmajfault", "a rare mover beats a constant");
eq(defaultSeries([flat, ser("interrupts.25", 7, 7, 7, 0)], []), "interrupts.24", "nothing moves: the first");
eq(defaultSeries([flat, big, slow], ["interrupts.LOC"]), "interrupts.LOC", "a primary metric that moves");
eq(defaultSeries([flat, big], ["interrupts.24"]), "memcg.cache", "a constant primary is not the default");
eq(defaultSeries([flat, big], ["pageout.ns_mean"]), "memcg.cache", "a primary with no series");
eq(defaultSeries([ser("one.sample", 3, 3, 3, 0, 1), big], []), "memcg.cache", "one sample does not move");
eq(defaultSeries([], []), "", "no series");

// the nightly pages (web/nightly.js): what a trend plot marks a
// regression's first bad night with, from its bisection; the commit the
// title names (harness/report/regress_bisect.c)
const nsrc = readFileSync(new URL("../../web/nightly.js", here), "utf8");
const nctx = { document: { addEventListener() {} }, location: {}, URLSearchParams };
vm.createContext(nctx);
vm.runInContext(src + "\n" + nsrc + "\n;globalThis.t = { culpritMark, effectText };", nctx);
const { culpritMark, effectText } = nctx.t;
const culprit = (sha, answer = "culprit") => ({ answer, sha, subject: "mm: s", author: "A <a@b>", date: "2026-03-09",
	confirmation: { estimate_pct: -5.8 } });
eq(culpritMark(null), null, "no bisection: no mark");
eq(culpritMark({ id: 1, state: "running", culprits: [] }), null, "a running bisection: no mark");
eq(culpritMark({ id: 1, state: "failed", culprits: [] }), null, "a failed one: no mark");
eq(culpritMark({ id: 2, state: "done", culprits: [culprit("1a2b3c4d5e6f708192a3")] }).label,
	"first bad commit 1a2b3c4d5e6f", "a culprit: its short sha");
eq(culpritMark({ id: 2, state: "done", culprits: [culprit("1a2b3c4d5e6f708192a3")] }).title,
	"bisection 2: first bad commit 1a2b3c4d5e6f708192a3\nmm: s\nA <a@b>, 2026-03-09", "its hover: sha, subject, author, date");
eq(culpritMark({ id: 2, state: "done", culprits: [culprit("aaaa", "unconfirmed"), culprit("bbbbbbbbbbbbbbbb")] }).label,
	"first bad commit bbbbbbbbbbbb +1 more", "a split: the confirmed one, +1 more");
eq(culpritMark({ id: 2, state: "done", culprits: [{ answer: "range", n_candidates: 3 }] }).label,
	"first bad commit: one of 3 commits", "a range");
eq(culpritMark({ id: 2, state: "done", culprits: [culprit("aaaa", "unconfirmed")] }), null, "unconfirmed only: no mark");
eq(effectText({ estimate_pct: 9.8, ci_lo_pct: 8.1, ci_hi_pct: 11.5 }), "+9.80% [+8.10%, +11.50%]", "a step's estimate [CI]");
eq(effectText({ estimate_pct: null }), "not measured", "a step not measured");
console.log(`format: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
