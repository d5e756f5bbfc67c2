// The job page's number formatting and row groups (web/kab.js), without a
// browser: kab.js runs in a bare context and its functions are called.
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
vm.runInContext(src + "\n;globalThis.t = { fmt, fmtUnit, unitScale, fmtP, metricGroup };", ctx);
const { fmt, fmtUnit, unitScale, fmtP, metricGroup } = ctx.t;

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
console.log(`format: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
