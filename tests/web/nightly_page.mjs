// Drives Debian's Chromium through kabd's nightly pages with Playwright
// and prints what it saw as one JSON object; tests/integration/t_web.sh
// asserts on it, on a database seeded by tests/web/seed_nightly.sh.
//
//   [KAB_TOKEN=TOKEN] node nightly_page.mjs BASE_URL JOB SHORT_JOB OUT_DIR
//
// With KAB_TOKEN every request of the page carries it.
//
// It opens history.html?job=JOB and reads each series' plot (its points,
// their hover text, the gaps, the CI band, the change-point markers),
// history.html?job=SHORT_JOB (one night: not enough nights) and a name
// with no history (the page says so; the API's 404 is its only error),
// then regressions.html (rows, their order, titles and intervals, links,
// the bisection under a bisected one: its first bad commit, steps, git
// bisect log, and its mark on the trend plot), follows the job list's
// link to it and a job page's link to its history. Screenshots go to OUT_DIR (history.png, regressions.png).
// Every wait is bounded; one that times out ends the script with an error
// naming what it waited for.
import { chromium } from "playwright-core";

const [base, job, shortJob, out] = process.argv.slice(2);
if (!base || !job || !shortJob || !out) {
	console.error("usage: node nightly_page.mjs BASE_URL JOB SHORT_JOB OUT_DIR");
	process.exit(2);
}
const seen = { console_errors: [] };
const extraHTTPHeaders = process.env.KAB_TOKEN ? { Authorization: `Bearer ${process.env.KAB_TOKEN}` } : {};
let page;

async function waitFor(desc, wait) {
	try {
		return await wait;
	} catch (e) {
		const err = await page.textContent("#error", { timeout: 1000 }).catch(() => "(none)");
		throw new Error(`waiting for ${desc}: ${String(e && e.message || e).split("\n")[0]}; url ${page.url()}, error line "${err}"`);
	}
}

// a page whose console errors and failed requests go to list
async function newPage(browser, list) {
	const p = await browser.newPage({ viewport: { width: 1280, height: 1200 }, extraHTTPHeaders });
	p.on("console", m => { if (m.type() === "error") list.push(m.text()); });
	p.on("pageerror", e => list.push(String(e)));
	p.on("response", r => { if (r.status() >= 400) list.push(`${r.status()} ${r.url()}`); });
	return p;
}

// what one series' plot shows
function readSeries(sec) {
	const svg = sec.querySelector("svg.trend");
	const pts = [...svg.querySelectorAll("circle.pt")];
	const attr = (e, k) => e.getAttribute(k);
	return {
		metric: sec.dataset.metric,
		workload: sec.dataset.workload,
		heading: sec.querySelector("h2").textContent,
		points: pts.map(c => ({ point: +attr(c, "data-point"), job: +attr(c, "data-job"), date: attr(c, "data-date"),
			forced: c.classList.contains("forced"), title: c.querySelector("title").textContent })),
		gaps: [...svg.querySelectorAll("rect.gap")].map(g => ({ point: +attr(g, "data-point"), state: attr(g, "data-state"),
			title: g.querySelector("title").textContent })),
		bands: [...svg.querySelectorAll("polygon.band")].map(b => attr(b, "points").split(" ").length),
		changes: [...svg.querySelectorAll("g.cp")].map(g => ({ point: +attr(g, "data-point"), job: +attr(g, "data-job"),
			label: g.querySelector("text").textContent, title: g.querySelector("title").textContent })),
		culprits: [...svg.querySelectorAll("g.culprit")].map(g => ({ point: +attr(g, "data-point"), job: +attr(g, "data-job"),
			label: g.querySelector("text").textContent, title: g.querySelector("title").textContent })),
		notenough: sec.querySelector(".notenough")?.textContent || null,
		// a point's y never sits on the baseline for a gap: the gaps have no circle at all
		point_indexes_of_gaps: [...svg.querySelectorAll("rect.gap")].map(g => +attr(g, "data-point"))
			.filter(i => pts.some(c => +attr(c, "data-point") === i)),
	};
}

const browser = await chromium.launch({
	executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
	args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"],
});
try {
	page = await newPage(browser, seen.console_errors);

	// ---- the history of JOB ----
	await page.goto(`${base}/history.html?job=${encodeURIComponent(job)}`);
	await waitFor("a trend plot's points", page.waitForSelector("svg.trend circle.pt", { timeout: 20000 }));
	seen.title = await page.textContent("#title");
	seen.summary = await page.textContent("#summary");
	seen.note_hidden = await page.$eval("#note", e => e.hidden);
	seen.series = await page.evaluate(`[...document.querySelectorAll("section.series")].map(${readSeries.toString()})`);
	seen.metric_options = await page.$$eval("#metric option", os => os.map(o => o.value));
	// hovering a point: the browser's tooltip is its <title>; the hover
	// itself must not raise an error
	await page.hover("svg.trend circle.pt >> nth=2");
	// the markup in a commit subject is text: no element was made of it
	seen.injected = await page.$$eval("svg b, svg script, main b", es => es.length);
	await page.screenshot({ path: `${out}/history.png`, fullPage: true });

	// the other metric, chosen in the select: the page shows that one alone
	const other = seen.metric_options.find(m => m && m !== seen.series[0].metric);
	if (other) {
		await page.selectOption("#metric", other);
		await waitFor(`the plot of ${other}`, page.waitForFunction(m =>
			document.querySelectorAll("section.series").length === 1 &&
			document.querySelector("section.series").dataset.metric === m &&
			document.querySelector("section.series svg.trend circle.pt"), other, { timeout: 20000 }));
		seen.chosen_metric = { metric: other, url: page.url(),
			points: await page.$$eval("section.series svg.trend circle.pt", cs => cs.length) };
	}

	// ---- one night: not enough nights ----
	await page.goto(`${base}/history.html?job=${encodeURIComponent(shortJob)}`);
	await waitFor("the one-night history's plot", page.waitForSelector("svg.trend circle.pt", { timeout: 20000 }));
	seen.short = {
		note: await page.$eval("#note", e => e.hidden ? null : e.textContent),
		series_note: await page.$eval("section.series .notenough", e => e.textContent).catch(() => null),
		points: await page.$$eval("svg.trend circle.pt", cs => cs.length),
		bands: await page.$$eval("svg.trend polygon.band", bs => bs.length),
		changes: await page.$$eval("svg.trend g.cp", gs => gs.length),
	};

	// ---- regressions ----
	await page.goto(`${base}/regressions.html`);
	await waitFor("the regressions' rows", page.waitForSelector("#regressions tbody tr.regression", { timeout: 20000 }));
	seen.atom_link = await page.$eval('link[rel="alternate"][type="application/atom+xml"]', l => l.getAttribute("href")).catch(() => null);
	seen.atom_anchor = await page.$eval("#atom", a => a.getAttribute("href")).catch(() => null);
	seen.regressions = await page.$$eval("#regressions tbody tr.regression", trs => trs.map(tr => ({
		id: +tr.dataset.id,
		class: tr.className,
		title: tr.querySelector("td.title div").textContent,
		state: tr.querySelector("td.state").textContent,
		last_good: tr.querySelectorAll("td.commit")[0].textContent,
		first_bad: tr.querySelectorAll("td.commit")[1].textContent,
		confirmation: tr.querySelector("td.confirmation").textContent,
		confirm_href: tr.querySelector("a.confirm-job")?.getAttribute("href") || null,
		history_href: tr.querySelector("a.history")?.getAttribute("href") || null,
	})));
	// each change's trend plot, in the row under it
	await waitFor("the regressions' trend plots", page.waitForSelector("#regressions tbody tr.trend-row", { timeout: 20000 }));
	seen.regression_plots = await page.$$eval("#regressions tbody tr.trend-row", trs => trs.map(tr => ({
		id: +tr.dataset.id,
		plot: !!tr.querySelector("svg.trend"),
		after: tr.previousElementSibling ? +tr.previousElementSibling.dataset.id : null,
		text: tr.textContent.slice(0, 200),
	})));
	// a bisected change's bisection, in a row under it: its state, first
	// bad commit and confirmation (the regression's JSON), its steps and
	// git bisect log (GET /bisections/ID); its first bad commit marked on
	// the change's trend plot
	if (await page.$("#regressions tbody tr.bisection-row"))
		await waitFor("the bisections' steps", page.waitForSelector("#regressions tbody tr.bisection-row table.steps", { timeout: 20000 }));
	seen.bisections = await page.$$eval("#regressions tbody tr.bisection-row", trs => trs.map(tr => {
		let above = tr.previousElementSibling;
		while (above && !above.classList.contains("regression")) above = above.previousElementSibling;
		return {
			id: +tr.dataset.id,
			bisection: +tr.dataset.bisection,
			under: above ? +above.dataset.id : null,
			heading: tr.querySelector("h3").textContent,
			reason: tr.querySelector(".reason")?.textContent || null,
			culprits: [...tr.querySelectorAll(".culprit")].map(c => ({ answer: c.dataset.answer, sha: c.dataset.sha || null,
				text: c.textContent })),
			counts: tr.querySelector(".counts")?.textContent || null,
			steps: [...tr.querySelectorAll("table.steps tbody tr")].map(r => [...r.cells].map(td => td.textContent)),
			log: tr.querySelector("pre.bisect-log")?.textContent || null,
		};
	}));
	seen.culprit_marks = await page.$$eval("#regressions tbody tr.trend-row", trs => trs.map(tr => ({ id: +tr.dataset.id,
		marks: [...tr.querySelectorAll("svg.trend g.culprit")].map(g => ({ point: +g.getAttribute("data-point"),
			job: +g.getAttribute("data-job"), label: g.querySelector("text").textContent,
			title: g.querySelector("title").textContent })) })));
	// the markup in the culprit's subject is text: no element was made of it
	seen.regressions_injected = await page.$$eval("main i, main script", es => es.length);
	await page.screenshot({ path: `${out}/regressions.png`, fullPage: true });
	// a regression's history link opens that metric's plot
	const href = seen.regressions.find(r => / regression(: first bad commit .*)?$/.test(r.title))?.history_href;
	if (href) {
		await page.click(`a.history[href="${href}"]`);
		await waitFor("the linked history's plot", page.waitForSelector("svg.trend circle.pt", { timeout: 20000 }));
		seen.followed_history = { url: page.url(),
			series: await page.$$eval("section.series", ss => ss.map(s => s.dataset.metric)),
			marks: await page.$$eval("svg.trend g.cp text", ts => ts.map(t => t.textContent)) };
	}

	// ---- the links to these pages ----
	await page.goto(`${base}/`);
	await waitFor("the job list's link to the regressions", page.click("#regressions-link", { timeout: 20000 }));
	await waitFor("the regressions page, followed from the job list", page.waitForSelector("#regressions tbody tr.regression", { timeout: 20000 }));
	seen.followed_regressions = page.url();
	const first = seen.series[0].points[0].job;
	await page.goto(`${base}/jobs/${first}`);
	await waitFor(`job ${first}'s link to its history`, page.click("#history-link", { timeout: 20000 }));
	await waitFor("the history page, followed from a job", page.waitForSelector("svg.trend circle.pt", { timeout: 20000 }));
	seen.followed_job_history = page.url();
	await page.close();

	// ---- a name with no history: said so; the API's 404 is the page's only error ----
	const errors404 = [];
	const p404 = await newPage(browser, errors404);
	page = p404;
	await p404.goto(`${base}/history.html?job=no-such-nightly`);
	await waitFor("the page to say there is no history", p404.waitForFunction(() =>
		!document.getElementById("error").hidden, null, { timeout: 20000 }));
	seen.missing = { error: await p404.textContent("#error"), plots: await p404.$$eval("svg.trend", s => s.length),
		errors: errors404 };
	await p404.close();
} catch (e) {
	seen.error = String(e && e.message || e);
} finally {
	await browser.close();
}
console.log(JSON.stringify(seen));
