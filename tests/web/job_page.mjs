// Drives Debian's Chromium through kabd's pages with Playwright and prints
// what it saw as one JSON object; tests/integration/t_web.sh asserts on it.
//
//   [KAB_TOKEN=TOKEN] node job_page.mjs BASE_URL JOB_ID SCREENSHOT.png
//
// With KAB_TOKEN every request of the page carries it (kabd over TCP
// without --public-read wants it on reads too).
//
// It opens the job page while the job runs and watches the progress line
// change without a reload, waits for the job to finish, reads the report
// rows, their verdicts, the metrics folded away for being zero and the
// per-run plot, saves a screenshot of the page as it opened, clicks
// another metric's row, reads the sample series the page opened on (with
// the run's list of series and that series' values, from the API),
// chooses another, renders the report once more with equivalence margins
// added (the fields the statistics are gaining) and once as it is, then
// follows the job's link from the list.

// KAB_SEEN_DIR: each progress line it sees ("run 2 of 6") it also marks
// there as a file (run-2-of-6), so that the test's workload can hold a run
// until the page has shown it. Every wait is bounded; one that times out
// ends the script with an error naming what it waited for and what the
// page showed then.
import { chromium } from "playwright-core";
import { writeFileSync } from "node:fs";

const [base, id, shot] = process.argv.slice(2);
if (!base || !id || !shot) {
	console.error("usage: node job_page.mjs BASE_URL JOB_ID SCREENSHOT.png");
	process.exit(2);
}
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const seen = { progress: [], console_errors: [] };
const extraHTTPHeaders = process.env.KAB_TOKEN ? { Authorization: `Bearer ${process.env.KAB_TOKEN}` } : {};
const seenDir = process.env.KAB_SEEN_DIR;
let page;

// what the page shows now, for a wait that timed out
async function pageState() {
	const text = async sel => ((await page.textContent(sel, { timeout: 1000 }).catch(() => null)) ?? "(none)").trim().slice(0, 200);
	const count = async sel => page.$$eval(sel, es => es.length).catch(() => "?");
	return `url ${page.url()}; status "${await text("#st-status")}"; progress "${await text("#st-progress")}"; ` +
		`error "${await text("#error")}"; ${await count("table.report tbody tr.metric-row")} report rows; ` +
		`${await count("#runs-svg circle.pt")} run points; plot "${await text("#plot-title")}"; ` +
		`${await count("#samples-svg polyline")} sample lines`;
}
// waitFor(DESC, PROMISE): PROMISE (a Playwright wait with its timeout); when
// it fails, the error says what was awaited and what the page showed
async function waitFor(desc, wait) {
	try {
		return await wait;
	} catch (e) {
		throw new Error(`waiting for ${desc}: ${String(e && e.message || e).split("\n")[0]}; the page showed: ${await pageState()}`);
	}
}

const browser = await chromium.launch({
	executablePath,
	args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"],
});
try {
	page = await browser.newPage({ viewport: { width: 1280, height: 1400 }, extraHTTPHeaders });
	page.on("console", m => { if (m.type() === "error") seen.console_errors.push(m.text()); });
	page.on("pageerror", e => seen.console_errors.push(String(e)));
	page.on("response", r => { if (r.status() >= 400) seen.console_errors.push(`${r.status()} ${r.url()}`); });
	await page.goto(`${base}/jobs/${id}`);

	// live progress: record each distinct text of the progress line until
	// the status says the job ended (the page polls; no reload here)
	const t0 = Date.now();
	let status = "", ended = false;
	while (Date.now() - t0 < 120000) {
		const p = (await page.textContent("#st-progress")) || "";
		const run = p.replace(/,.*$/, "");
		if (run.startsWith("run ") && seen.progress[seen.progress.length - 1] !== run) {
			seen.progress.push(run);
			if (seenDir) writeFileSync(`${seenDir}/${run.replace(/ /g, "-")}`, "");
		}
		status = (await page.textContent("#st-status")) || "";
		if ((ended = /^(done|failed|cancelled|interrupted)/.test(status))) break;
		await page.waitForTimeout(250);
	}
	seen.status = status;
	if (!ended)
		throw new Error(`timed out after 120 s waiting for the page to show the job ended; progress seen: ${JSON.stringify(seen.progress)}; the page showed: ${await pageState()}`);
	// the report is fetched again once the job has ended
	await waitFor("a point in the per-run plot", page.waitForSelector("#runs-svg circle.pt", { timeout: 20000 }));
	await waitFor("the progress line at its last run (run N of N) with the plot drawn", page.waitForFunction(() =>
		document.querySelectorAll("#runs-svg circle.pt").length >= 1 &&
		/run (\d+) of \1/.test(document.getElementById("st-progress").textContent), null, { timeout: 20000 }));
	seen.final_progress = await page.textContent("#st-progress");
	seen.rows = await page.$$eval("table.report tbody tr.metric-row", trs => trs.map(tr => tr.dataset.metric));
	seen.verdicts = await page.$$eval("td.verdict", tds => tds.map(td => td.textContent));
	seen.verdict_rows = await page.$$eval("table.report tbody tr.metric-row", trs => trs.map(tr =>
		[tr.dataset.metric, [...tr.querySelectorAll("td.verdict")].map(td => td.textContent)]));
	seen.verdict_titles = await page.$$eval("td.verdict", tds => tds.map(td => td.title));
	seen.headers = await page.$$eval("table.report thead th", ths => ths.map(th => th.textContent));
	// the metrics zero in every run: folded under the table, not rows
	seen.zero = await page.$$eval("details.zero", ds => ds.map(d => ({
		workload: d.dataset.workload, open: d.open, summary: d.querySelector("summary").textContent,
		names: d.querySelector("p").textContent.split(", ") })));
	// what q was corrected over, under each table
	seen.family = await page.$$eval("p.family", ps => ps.map(p => p.textContent));
	seen.groups = await page.$$eval("table.report tbody tr.group", trs => trs.map(tr => tr.textContent));
	seen.table_text = await page.$$eval("table.report", ts => ts.map(t => t.textContent).join("\n"));
	seen.plot_title_before = await page.textContent("#plot-title");
	seen.points_before = await page.$$eval("#runs-svg circle.pt", cs => cs.map(c => c.dataset.variant));

	// the page as a newcomer first sees it: the sample plot drawn on the
	// series the page chose
	await waitFor("a sample series' line", page.waitForSelector("#samples-svg polyline", { state: "attached", timeout: 20000 }));
	await page.screenshot({ path: shot, fullPage: true });

	// click another metric's row: it becomes the selected one and the plot follows
	const target = seen.rows.find(m => m === "time.wall_s") || seen.rows[1];
	seen.clicked = target;
	await waitFor(`a click on the ${target} row`, page.click(`table.report tbody tr[data-metric="${target}"]`, { timeout: 20000 }));
	await waitFor(`the plot's title to name ${target}`,
		page.waitForFunction(t => document.getElementById("plot-title").textContent.includes(t), target, { timeout: 20000 }));
	seen.plot_title_after = await page.textContent("#plot-title");
	seen.selected_rows = await page.$$eval("table.report tbody tr.selected", trs => trs.map(tr => tr.dataset.metric));
	seen.points_after = await page.$$eval("#runs-svg circle.pt", cs => cs.length);

	// a sample series: the one the page opened on, the run's list of series
	// and that series' values as the API gives them; then pick another
	// metric in the select, the line is redrawn (a flat series is a
	// zero-height line: attached, not "visible")
	await waitFor("a sample series' line", page.waitForSelector("#samples-svg polyline", { state: "attached", timeout: 20000 }));
	const options = await page.$$eval("#sample-metric option", os => os.map(o => o.value));
	const current = await page.inputValue("#sample-metric");
	seen.sample_run = await page.inputValue("#sample-run");
	seen.sample_default = current;
	seen.sample_default_label = await page.$eval("#sample-metric", s => s.selectedOptions[0].textContent);
	seen.sample_constant_labels = await page.$$eval("#sample-metric option", os => os.filter(o => o.textContent.endsWith(" (constant)")).map(o => o.value));
	seen.sample_plot_label = await page.$eval("#samples-svg", s => s.textContent.includes(s.ownerDocument.getElementById("sample-metric").value));
	Object.assign(seen, await page.evaluate(async ([run, metric]) => {
		const get = async p => (await fetch("/api/v1" + p)).json();
		const list = await get(`/runs/${run}/samples`);
		const one = await get(`/runs/${run}/samples?metric=${encodeURIComponent(metric)}`);
		return { sample_series: list.series, sample_default_values: one.values };
	}, [seen.sample_run, current]));
	const other = options.find(o => o !== current && /^(memcg|memory)\./.test(o)) ||
		options.find(o => o !== current && o.startsWith("vmstat.")) || options.find(o => o !== current);
	seen.sample_metric_before = current;
	seen.sample_metric = other;
	await waitFor(`sample metric ${other} to be chosen`, page.selectOption("#sample-metric", other, { timeout: 20000 }));
	await waitFor(`the sample plot to name ${other}`, page.waitForFunction(o => {
		const s = document.querySelector("#samples-svg");
		return s && s.textContent.includes(o);
	}, other, { timeout: 20000 }));
	seen.sample_polylines = await page.$$eval("#samples-svg polyline", ps => ps.length);


	// the report once more as the statistics will give it (an equivalence
	// margin, a minimum change and a 90% CI per comparison, no epsilon):
	// a margin column and verdicts that say what they rest on; then as it is
	seen.margin = await page.evaluate(() => {
		const real = job.report;
		const hasEq = real.workloads.some(w => w.metrics.some(m => m.comparisons.some(c => c.equivalence_pct != null)));
		const look = () => ({
			headers: [...document.querySelectorAll("table.report thead th")].map(th => th.textContent),
			cells: [...document.querySelectorAll("table.report td.margin")].map(td => td.textContent),
			titles: [...document.querySelectorAll("table.report td.verdict")].map(td => td.title),
			text: document.getElementById("report").textContent,
		});
		const added = JSON.parse(JSON.stringify(real));
		for (const w of added.workloads)
			for (const m of w.metrics)
				for (const c of m.comparisons) {
					delete c.epsilon_pct;
					Object.assign(c, { equivalence_pct: 2, min_change_pct: 1, ci90_low_pct: -2.5, ci90_high_pct: 1.25 });
				}
		renderReport(added);
		const withMargin = look();
		renderReport(real);
		return { report_has_equivalence: hasEq, added: withMargin, as_is: look() };
	});

	// the job list links to the job; following the link opens its page
	await page.goto(`${base}/`);
	await waitFor(`the job list's link to job ${id}`, page.waitForSelector(`a[href="/jobs/${id}"]`, { timeout: 20000 }));
	await waitFor(`a click on the link to job ${id}`, page.click(`a[href="/jobs/${id}"]`, { timeout: 20000 }));
	await waitFor(`job ${id}'s page, followed from the list, to plot its runs`, page.waitForSelector("#runs-svg circle.pt", { timeout: 20000 }));
	seen.followed_url = page.url();
	seen.followed_title = await page.textContent("#title");
} catch (e) {
	seen.error = String(e && e.message || e);
} finally {
	await browser.close();
}
console.log(JSON.stringify(seen));
