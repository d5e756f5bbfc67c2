// Opens a finished job's page in Debian's Chromium and prints, as one JSON
// object, its variants line (a job that boots kernels: each variant's
// kernel, boots, failed boots, last switch time) and the page's errors;
// tests/integration/t_kexec.sh asserts on it.
//
//   [KAB_TOKEN=TOKEN] node boots_line.mjs BASE_URL JOB_ID
//
// With KAB_TOKEN every request of the page carries it.
import { chromium } from "playwright-core";

const [base, id] = process.argv.slice(2);
if (!base || !id) {
	console.error("usage: node boots_line.mjs BASE_URL JOB_ID");
	process.exit(2);
}
const seen = { variants: "", status: "", console_errors: [] };
const browser = await chromium.launch({
	executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
	args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"],
});
try {
	const extraHTTPHeaders = process.env.KAB_TOKEN ? { Authorization: `Bearer ${process.env.KAB_TOKEN}` } : {};
	const page = await browser.newPage({ extraHTTPHeaders });
	page.on("console", m => { if (m.type() === "error") seen.console_errors.push(m.text()); });
	page.on("pageerror", e => seen.console_errors.push(String(e)));
	page.on("response", r => { if (r.status() >= 400) seen.console_errors.push(`${r.status()} ${r.url()}`); });
	await page.goto(`${base}/jobs/${id}`);
	// the page fills the line from GET /api/v1/jobs/ID once it has loaded;
	// when it does not within 20 s, "error" says so and what the page showed
	// (the line as it is then is in "variants", for the test to judge)
	const waited = await page.waitForFunction(() => /boot/.test(document.getElementById("st-variants")?.textContent || ""),
		null, { timeout: 20000 }).then(() => true, e => String(e && e.message || e).split("\n")[0]);
	seen.variants = (await page.textContent("#st-variants")) || "";
	seen.status = (await page.textContent("#st-status")) || "";
	if (waited !== true) {
		seen.error = `timed out after 20 s waiting for the variants line to name boots (${waited}); ` +
			`it shows "${seen.variants}", status "${seen.status}", error line "${(await page.textContent("#error")) || ""}"`;
		console.error(seen.error);
	}
} finally {
	await browser.close();
}
console.log(JSON.stringify(seen));
