// kab's lab page: the lab's machines, queue, jobs and change points, from
// kabd's /api/v1/lab routes, filtered by machine (?machine=HOST). Uses
// kab.js's helpers (el, getJSON, showError, localTime). The functions
// before the page's are pure: tests/web/lab.mjs calls them.
"use strict";

// "12 s", "3 min", "2 h", "4 d" ago, from a heartbeat's age in seconds
function heartbeatAge(s) {
	if (typeof s !== "number" || !Number.isFinite(s) || s < 0) return "–";
	if (s < 90) return `${Math.round(s)} s ago`;
	if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
	if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`;
	return `${Math.round(s / 86400)} d ago`;
}

// memory in GiB, one decimal below 10
function memoryWords(bytes) {
	if (typeof bytes !== "number" || !(bytes > 0)) return "–";
	const g = bytes / 1024 ** 3;
	return (g < 10 ? g.toFixed(1) : Math.round(g)) + " GiB";
}

// the API paths of the lists, with the machine filter when there is one
function labPath(list, machine, limit) {
	const q = new URLSearchParams();
	if (machine) q.set("machine", machine);
	if (limit) q.set("limit", String(limit));
	const s = q.toString();
	return `/lab/${list}` + (s ? "?" + s : "");
}

// this page filtered on a machine ("" or null: every machine)
function labPageLink(machine) {
	return machine ? "/lab.html?" + new URLSearchParams({ machine }).toString() : "/lab.html";
}

// one machine's history of a job name (history.html reads /lab/history)
function labHistoryLink(machine, job) {
	return "/history.html?" + new URLSearchParams({ job, machine }).toString();
}

// the report a job's counted attempt uploaded
function labReportLink(id) {
	return `${API}/lab/jobs/${encodeURIComponent(id)}/report`;
}

// the queued jobs of a list, oldest first (the order machines claim them)
function queued(jobs) {
	return jobs.filter(j => j.state === "queued").sort((a, b) => a.id - b.id);
}

/* ---- the page ---- */

function machineCell(name) {
	return name ? el("a", { href: labPageLink(name) }, name) : "–";
}

function renderMachines(ms, machine) {
	const tbody = document.querySelector("#machines tbody");
	tbody.replaceChildren();
	for (const m of ms) {
		if (machine && m.hostname !== machine && m.id !== machine) continue;
		tbody.append(el("tr", {},
			el("td", { title: m.id }, machineCell(m.hostname)),
			el("td", { class: "status-" + m.state }, m.state),
			el("td", {}, heartbeatAge(m.heartbeat_age_s)),
			el("td", { class: "num" }, m.cpus),
			el("td", { class: "num" }, memoryWords(m.memory)),
			el("td", {}, m.arch),
			el("td", {}, m.kernel),
			el("td", {}, (m.tags || []).join(" "))));
	}
	if (!tbody.children.length)
		tbody.append(el("tr", {}, el("td", { colspan: 8 }, machine ? `no machine ${machine} in the lab` : "no machine has joined the lab")));
}

function renderQueue(jobs, whys) {
	const tbody = document.querySelector("#queue tbody");
	tbody.replaceChildren();
	for (const j of queued(jobs))
		tbody.append(el("tr", {},
			el("td", { class: "num" }, j.id),
			el("td", {}, j.selector || "any machine"),
			el("td", { class: "num" }, `${j.attempts} of ${j.max_attempts}`),
			el("td", {}, j.submitted_by),
			el("td", {}, localTime(j.created)),
			el("td", { class: "why" }, whys[j.id] || "")));
	if (!tbody.children.length)
		tbody.append(el("tr", {}, el("td", { colspan: 6 }, "nothing waits")));
}

function renderJobs(jobs) {
	const tbody = document.querySelector("#jobs tbody");
	tbody.replaceChildren();
	for (const j of jobs) {
		const ended = j.state === "done" || j.state === "failed" || j.state === "cancelled";
		tbody.append(el("tr", {},
			el("td", { class: "num" }, j.id),
			el("td", { class: "status-" + j.state, title: j.reason || null }, j.state),
			el("td", { title: j.machine_id || null }, machineCell(j.machine)),
			el("td", { class: "num" }, `${j.attempts} of ${j.max_attempts}`),
			el("td", {}, j.selector || "any machine"),
			el("td", {}, localTime(j.created)),
			el("td", {}, localTime(j.finished)),
			el("td", {}, ended ? el("a", { href: labReportLink(j.id), class: "report" }, "report") : "")));
	}
	if (!jobs.length)
		tbody.append(el("tr", {}, el("td", { colspan: 8 }, "no lab jobs")));
}

function renderRegressions(rows) {
	const tbody = document.querySelector("#regressions tbody");
	tbody.replaceChildren();
	for (const r of rows)
		tbody.append(el("tr", {},
			el("td", { title: r.machine_detail || r.machine_id }, machineCell(r.machine)),
			el("td", {}, r.title || `#${r.local_id}`),
			el("td", {}, r.kind || r.state),
			el("td", {}, el("a", { href: labHistoryLink(r.machine_id || r.machine, r.job), class: "history" }, r.job),
				" ", r.metric),
			el("td", {}, [r.lab_good_job, r.lab_bad_job].map(x => x === null || x === undefined ? "–" : x).join(" → "))));
	if (!rows.length)
		tbody.append(el("tr", {}, el("td", { colspan: 5 }, "no change points uploaded")));
}

async function labPage() {
	const machine = new URLSearchParams(location.search).get("machine") || "";
	const select = document.getElementById("machine");
	if (machine) document.getElementById("title").textContent = `Lab: ${machine}`;
	select.addEventListener("change", ev => { location.href = labPageLink(ev.target.value); });
	const input = document.getElementById("history-job"), link = document.getElementById("history-link");
	input.addEventListener("input", () => {
		const job = input.value.trim();
		link.hidden = !job || !machine;
		link.textContent = machine ? `open ${job} on ${machine}` : "pick a machine first";
		if (job && machine) link.href = labHistoryLink(machine, job);
	});
	try {
		const [ms, js, rs] = await Promise.all([getJSON("/lab/machines"), getJSON(labPath("jobs", machine, 200)),
			getJSON(labPath("regressions", machine, 200))]);
		for (const m of ms.machines)
			select.append(el("option", { value: m.hostname }, m.hostname));
		select.value = machine;
		renderMachines(ms.machines, machine);
		// why each queued job waits, machine by machine (GET /lab/jobs/ID)
		const whys = {};
		for (const j of queued(js.jobs).slice(0, 20))
			whys[j.id] = (await getJSON(`/lab/jobs/${j.id}`)).why || "";
		renderQueue(js.jobs, whys);
		renderJobs(js.jobs);
		renderRegressions(rs.regressions);
		const q = queued(js.jobs).length;
		document.getElementById("summary").textContent =
			`${ms.machines.length} machine${ms.machines.length === 1 ? "" : "s"}, ${q} job${q === 1 ? "" : "s"} queued` +
			(machine ? ` (jobs of ${machine})` : "");
		showError("");
	} catch (e) {
		document.getElementById("summary").textContent = "";
		showError(e.status === 404 ? e.message : "cannot read the lab: " + e.message);
	}
}

document.addEventListener("DOMContentLoaded", () => {
	if (document.body.dataset.page === "lab") labPage();
});
