// The lab page's pure rules (web/lab.js) and the history page's choice of
// API (web/nightly.js's historyApi: one machine's lab history when the
// page names a machine), without a browser: the scripts run in a bare
// context and their functions are called.
//
//   node tests/web/lab.mjs      prints "lab: N passed, M failed"
import { readFileSync } from "node:fs";
import vm from "node:vm";

const here = new URL(".", import.meta.url);
const read = f => readFileSync(new URL("../../web/" + f, here), "utf8");
const ctx = { document: { addEventListener() {} }, location: {}, URLSearchParams };
vm.createContext(ctx);
vm.runInContext(read("kab.js") + "\n" + read("nightly.js") + "\n" + read("lab.js") +
	"\n;globalThis.t = { heartbeatAge, memoryWords, labPath, labPageLink, labHistoryLink, labReportLink, queued, historyApi };", ctx);
const t = ctx.t;

let passed = 0, failed = 0;
function eq(got, want, what) {
	const g = JSON.stringify(got), w = JSON.stringify(want);
	if (g === w) { passed++; return; }
	failed++;
	console.log(`FAIL ${what}: got ${g}, want ${w}`);
}

eq(t.heartbeatAge(4.2), "4 s ago", "a fresh heartbeat");
eq(t.heartbeatAge(600), "10 min ago", "ten minutes");
eq(t.heartbeatAge(7200), "2 h ago", "two hours");
eq(t.heartbeatAge(3 * 86400), "3 d ago", "three days");
eq(t.heartbeatAge(null), "–", "no heartbeat");
eq(t.memoryWords(8 * 1024 ** 3), "8.0 GiB", "8 GiB");
eq(t.memoryWords(64 * 1024 ** 3), "64 GiB", "64 GiB");
eq(t.labPath("jobs", "", 200), "/lab/jobs?limit=200", "every machine's jobs");
eq(t.labPath("jobs", "lab 3&x", 200), "/lab/jobs?machine=lab+3%26x&limit=200", "a machine's, its name encoded");
eq(t.labPath("regressions", "lab3"), "/lab/regressions?machine=lab3", "a machine's change points");
eq(t.labPageLink(""), "/lab.html", "the page unfiltered");
eq(t.labPageLink("lab3"), "/lab.html?machine=lab3", "the page filtered");
eq(t.labHistoryLink("lab3", "nightly-mm"), "/history.html?job=nightly-mm&machine=lab3", "a machine's history");
eq(t.labReportLink(42), "/api/v1/lab/jobs/42/report", "a job's report");
eq(t.queued([{ id: 5, state: "queued" }, { id: 2, state: "running" }, { id: 3, state: "queued" }]).map(j => j.id), [3, 5],
	"the queue, oldest first");
eq(t.historyApi("nightly-mm", null, null, null), "/history?job=nightly-mm", "a machine's own history");
eq(t.historyApi("nightly-mm", "lab3", "time.wall_s", null, "text"),
	"/lab/history?machine=lab3&job=nightly-mm&metric=time.wall_s&format=text", "a lab machine's history");

console.log(`lab: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
