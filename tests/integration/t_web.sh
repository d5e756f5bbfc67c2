#!/usr/bin/env bash
# kabd's pages in a real browser: a short job submitted with curl, then
# Playwright drives Debian's headless Chromium (tests/web/job_page.mjs):
# the job page shows live progress while the job runs, then the report
# rows, each verdict as its word and marker (as the JSON report has it),
# the metrics zero in every run folded under the table (the names the
# text report leaves out), and an SVG plot with a point per run; a
# screenshot of the page as it opened goes to tests/out/job.png; a click
# on another row re-plots it; the sample plot opens on a series that
# moves (the one the page's rule picks from the run's list of series),
# another is chosen; the report rendered with equivalence margins shows
# them, as it is shows no margin it lacks; the job list's link opens the
# page. kab.js's rules without a browser (tests/web/format.mjs), and lab.js's
# (tests/web/lab.mjs). Also the
# run samples API (the list's summaries agree with the series) and the
# static-file guards: nothing outside the web root,
# not through "..", %2e or a symlink. Then the nightly pages on a history
# and regressions seeded into the database (tests/web/seed_nightly.sh,
# tests/web/nightly_page.mjs): the trend plot's points, gaps, CI band,
# change-point marker and hover text, not enough nights, a name with no
# history, the regressions newest first with their CIs and links;
# screenshots tests/out/history.png and regressions.png.
. "$(dirname "$0")/lib.sh"
it_begin "a browser (chromium and playwright-core: make web-deps)"
[ -x "$KABD" ] || skip_all "$KABD is not built"
command -v curl >/dev/null || skip_all "curl is not installed"
CHROMIUM=$(command -v chromium) || skip_all "chromium is not installed (Debian's chromium package; make deps)"
command -v node >/dev/null || skip_all "node is not installed (make web-deps)"
[ -f tests/web/node_modules/playwright-core/package.json ] || skip_all "playwright-core is not installed in tests/web (make web-deps)"
PY=/usr/bin/python3
[ -x $PY ] || skip_all "$PY is not installed (for JSON checks)"

trap 'kabd_stop; it_cleanup' EXIT

DB="$IT_TMP/web.db"
start_kabd() { kabd_start "$1" --db "$DB" --web-root "$2"; } # PORT WEBROOT
kabd_up --db "$DB" --web-root web
if [ -z "$PORT" ]; then
	cat "$IT_TMP/kabd.log"
	fail "kabd starts with --web-root web"
	it_end; exit
fi
ok "kabd starts on 127.0.0.1:$PORT with --web-root web"

# req METHOD PATH [curl args...]: prints the status; the body is in
# $IT_TMP/body. With the token (kabd_start's); a POST as a job.
req() {
	local m=$1 p=$2 h=(-H "$AUTH"); shift 2
	[ "$m" = POST ] && h+=(-H "$JOB_CT")
	curl -s --path-as-is -o "$IT_TMP/body" -w '%{http_code}' -X "$m" "${h[@]}" "$@" "$URL$p"
}
# jget KEY...: a field of the JSON in $IT_TMP/body (list indexes as numbers)
jget() {
	$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    d = d[int(k)] if isinstance(d, list) else d[k]
print(d)' "$IT_TMP/body" "$@" 2>/dev/null
}
ended() { # ID: the job has ended (prints its status; $s)
	req GET "/api/v1/jobs/$1" >/dev/null
	s=$(jget status)
	echo "job $1 is \"$s\", $(jget progress runs_done) of $(jget progress runs_total) runs done"
	case $s in done|failed|cancelled|interrupted) return 0 ;; esac
	return 1
}
wait_done() { # ID SECONDS: the job ends, done
	wait_for -s "echo 'kabd.log ends:'; tail -n 15 '$IT_TMP/kabd.log'" "job $1 to end" "$2" ended "$1" || return 1
	[ "$s" = done ] || { echo "    job $1 ended \"$s\", not done"; return 1; }
}

# ---- a short real job: two variants one swappiness step apart ----
# 7 runs: the 6 of 3 pairs and, first, the workload's uncounted warm-up.
# Its first run (the warm-up) waits until the browser has shown "run 1 of
# 7", its second until it has shown "run 2 of 7" (job_page.mjs marks each
# progress line it sees in $IT_TMP/seen; 60 s at most): the page sees the
# progress change however long Chromium takes to start.
mkdir "$IT_TMP/seen"
cat >"$IT_TMP/web.job" <<'JOB'
[job]
name = web-page
pairs = 3
primary = command.answer
[variant A]
name = base
sysctl vm.swappiness = 60
[variant B]
name = more-swappy
sysctl vm.swappiness = 61
[workload w]
type = command
command = sh -c "for n in 1 2; do mkdir @SEEN@/held-$n 2>/dev/null || continue; i=0;
  while [ ! -e @SEEN@/run-$n-of-7 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done;
  test -e @SEEN@/run-$n-of-7 || echo the page did not show run $n of 7 within 60 s >&2; break; done;
  sleep 1.5; echo kab-metric answer $(cat /proc/sys/vm/swappiness) things"
JOB
sed -i "s|@SEEN@|$IT_TMP/seen|g" "$IT_TMP/web.job"
code=$(req POST /api/v1/jobs --data-binary @"$IT_TMP/web.job")
id=$(jget id)
check "POST /jobs: 201 with an id" [ "$code" = 201 -a -n "$id" ]
# the browser opens the page while the job runs and stays until it ends
mkdir -p tests/out
rm -f tests/out/job.png
HOME="$IT_TMP" CHROMIUM="$CHROMIUM" KAB_TOKEN="${AUTH#Authorization: Bearer }" KAB_SEEN_DIR="$IT_TMP/seen" timeout 240 node tests/web/job_page.mjs "$URL" "$id" "$PWD/tests/out/job.png" \
	>"$IT_TMP/seen.json" 2>"$IT_TMP/playwright.log"
[ $? = 124 ] && echo "  timed out after 240 s waiting for the browser (tests/web/job_page.mjs); it had marked: $(ls "$IT_TMP/seen" | tr '\n' ' ')"
check "Playwright drove chromium through the pages without an error" \
	$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit("error" in d)' "$IT_TMP/seen.json"
cp "$IT_TMP/seen.json" tests/out/browser-seen.json 2>/dev/null
[ -s "$IT_TMP/playwright.log" ] && sed 's/^/    /' "$IT_TMP/playwright.log" | head -20
seen_error=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1])).get("error", ""))' "$IT_TMP/seen.json" 2>&1)
[ -n "$seen_error" ] && echo "    browser: $seen_error" | head -20
check "job $id ends done within 120 s" wait_done "$id" 120

# ---- the samples API ----
req GET "/api/v1/jobs/$id/runs" >/dev/null
run=$(jget runs 0 id)
check "GET /runs/$run/samples lists metric names" \
	bash -c "[ \"\$(curl -s -H '$AUTH' -o '$IT_TMP/body' -w '%{http_code}' '$URL/api/v1/runs/$run/samples')\" = 200 ]"
metric=$(jget metrics 0)
check "the list is not empty and has no t_ns" [ -n "$metric" -a "$(grep -c '"t_ns"' "$IT_TMP/body")" = 0 ]
cp "$IT_TMP/body" "$IT_TMP/series.json"
check "the list gives each series its summary (n, min, max, mean, changes), in the order of the names" $PY -c 'import json,sys
d = json.load(open(sys.argv[1]))
sys.exit(not ([s["name"] for s in d["series"]] == d["metrics"] and
	all(set(s) == {"name", "n", "min", "max", "mean", "changes"} and s["n"] > 0 and float(s["min"]) * (1 - 1e-12) <= s["mean"] <= float(s["max"]) * (1 + 1e-12) for s in d["series"])))' "$IT_TMP/series.json"
code=$(req GET "/api/v1/runs/$run/samples?metric=$metric")
n_t=$($PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["t_s"]), len(d["values"]), d["metric"], d["run"])' \
	"$IT_TMP/body" 2>/dev/null)
read -r nt nv m r <<<"$n_t"
check "GET /runs/$run/samples?metric=$metric: 200, t_s and values of one length (${nt:-?})" \
	[ "$code" = 200 -a "${nt:-0}" -gt 0 -a "${nt:-0}" = "${nv:-x}" -a "$m" = "$metric" -a "$r" = "$run" ]
check "the times start at 0 and rise" $PY -c 'import json,sys; t=json.load(open(sys.argv[1]))["t_s"]; sys.exit(not (t[0] == 0 and t == sorted(t)))' "$IT_TMP/body"
summary_agrees() { # METRIC: the list's summary of METRIC is what its values give
	[ "$(req GET "/api/v1/runs/$run/samples?metric=$1")" = 200 ] && $PY -c 'import json,sys
v = json.load(open(sys.argv[1]))["values"]
s = [x for x in json.load(open(sys.argv[2]))["series"] if x["name"] == sys.argv[3]][0]
ch = sum(a != b for a, b in zip(v, v[1:]))
sys.exit(not (s["n"] == len(v) and s["min"] == min(v) and s["max"] == max(v) and s["changes"] == ch and
	abs(s["mean"] - sum(v) / len(v)) <= 1e-9 * max(1, abs(s["mean"]))))' "$IT_TMP/body" "$IT_TMP/series.json" "$1"
}
for m in $($PY -c 'import json,sys
d = json.load(open(sys.argv[1]))["series"]
moving = [s["name"] for s in d if s["max"] > s["min"]]
print(" ".join(dict.fromkeys([d[0]["name"]] + moving[:1] + moving[-1:])))' "$IT_TMP/series.json"); do
	check "the summary of $m agrees with its values (n, min, max, mean, changes)" summary_agrees "$m"
done
check "an unknown metric: 404" [ "$(req GET "/api/v1/runs/$run/samples?metric=no.such")" = 404 ]
check "metric=t_ns is not a metric: 404" [ "$(req GET "/api/v1/runs/$run/samples?metric=t_ns")" = 404 ]
check "SQL in the metric is data: 404" [ "$(req GET "/api/v1/runs/$run/samples?metric=x%27%20OR%201=1--")" = 404 ]
check "an empty metric: 400" [ "$(req GET "/api/v1/runs/$run/samples?metric=")" = 400 ]
check "an unknown run: 404" [ "$(req GET "/api/v1/runs/999999/samples?metric=$metric")" = 404 ]
check "a non-numeric run: 404" [ "$(req GET "/api/v1/runs/abc/samples")" = 404 ]
check "POST on samples: 405" [ "$(req POST "/api/v1/runs/$run/samples")" = 405 ]

# ---- static pages ----
not_found() { # status: 404 and no byte of a file outside the web root
	[ "$1" = 404 ] && ! grep -qE 'root:|secret|in a subdirectory' "$IT_TMP/body"
}
ctype() { curl -s --path-as-is -H "$AUTH" -o /dev/null -w '%{http_code} %{content_type}' "$URL$1"; }
check "GET /: the job list page" [ "$(ctype /)" = "200 text/html; charset=utf-8" ]
check "GET /jobs/$id: the job page" bash -c "curl -s -H '$AUTH' '$URL/jobs/$id' | grep -q 'data-page=\"job\"'"
check "GET /kab.js: JavaScript" [ "$(ctype /kab.js)" = "200 text/javascript; charset=utf-8" ]
check "GET /kab.css: CSS" [ "$(ctype /kab.css)" = "200 text/css; charset=utf-8" ]
for p in /jobs/abc /jobs/0 /jobs/1/x /nothing.html /README.md /.git /../etc/passwd /%2e%2e/etc/passwd \
	/%2E%2E%2Fetc%2Fpasswd /web/../../etc/passwd /..%2f..%2fetc%2fpasswd /kab.js/ "/kab%00.js" /etc/passwd; do
	check "GET $p: 404, nothing from outside" not_found "$(req GET "$p")"
done
check "POST /: 404 or 405" bash -c "c=\$(curl -s -H '$AUTH' -o /dev/null -w '%{http_code}' -X POST '$URL/'); [ \$c = 404 -o \$c = 405 ]"
check "the pages need the token too: GET / without it is 401" [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/")" = 401 ]

# ---- what the browser saw (tests/web/job_page.mjs) ----
seen() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))' "$IT_TMP/seen.json" "$1" 2>/dev/null; }
echo "    browser saw: progress $(seen 'progress'), then $(seen 'final_progress')"
check "the page showed live progress: at least 2 run counts before the end ($(seen 'len(progress)'))" \
	[ "$(seen 'len(progress)')" -ge 2 ]
check "the page shows the job done" [ "$(seen 'status')" = done ]
check "the page ends at run 7 of 7 (the warm-up and 6)" bash -c "[[ '$(seen 'final_progress')' == 'run 7 of 7'* ]]"
check "the report has the command's row (command.answer)" [ "$(seen '"command.answer" in rows')" = True ]
check "the rows are grouped: primary first, counters last ($(seen 'groups'))" \
	[ "$(seen 'groups[:1] == ["primary metrics"] and groups[-1] == "counters"')" = True ]
check "no number in exponent notation on the page" [ "$(seen '__import__("re").search(r"\d[eE][+-]?\d", table_text) is None')" = True ]
# what the browser saw against the JSON and text reports the page reads
req GET "/api/v1/jobs/$id/report?format=json" >/dev/null
cp "$IT_TMP/body" "$IT_TMP/report.json"
req GET "/api/v1/jobs/$id/report?format=text" >/dev/null
cp "$IT_TMP/body" "$IT_TMP/report.txt"
# both EXPR: EXPR over what the browser saw, the JSON report (rep), the
# names the text report leaves out for being zero (text_zero) and the
# run's list of series from the API (series); shown(VERDICT) is the text
# its cell should have: "▲ better", ..., "–" for no verdict
both() {
	$PY -c 'import json,sys
d = json.load(open(sys.argv[1])); rep = json.load(open(sys.argv[2]))
MARK = {"better": "▲", "worse": "▼", "changed": "≠", "same": "~", "undecided": "?"}
shown = lambda v: MARK[v] + " " + v if v in MARK else "–"
fold = [l for l in open(sys.argv[3]) if l.startswith("All zero in every run (left out): ")]
text_zero = fold[0].split(": ", 1)[1].strip().split(", ") if fold else []
series = json.load(open(sys.argv[4]))["series"]
print(eval(sys.argv[5], dict(d, d=d, rep=rep, text_zero=text_zero, series=series, MARK=MARK, shown=shown)))' \
		"$IT_TMP/seen.json" "$IT_TMP/report.json" "$IT_TMP/report.txt" "$IT_TMP/series.json" "$1" 2>&1 | tail -n 1
}
check "each verdict says its word beside its marker ($(seen 'sorted(set(verdicts))'))" \
	[ "$(both 'any(v in MARK for v in [t.split(" ", 1)[-1] for t in verdicts]) and all(t in [shown(v) for v in MARK] + ["–"] for t in verdicts)')" = True ]
check "each row's verdicts are the JSON report's" \
	[ "$(both 'all(cells == [shown(c["verdict"]) for c in m["comparisons"]] for name, cells in verdict_rows for m in rep["workloads"][0]["metrics"] if m["name"] == name)')" = True ]
check "the verdict column is headed \"verdict\"" [ "$(seen 'headers[-1]')" = verdict ]
zero_json='[m["name"] for m in rep["workloads"][0]["metrics"] if any(x is not None for v in m["variants"] for x in v["values"]) and all(x in (0, None) for v in m["variants"] for x in v["values"])]'
echo "    zero in every run: $(both "$zero_json")"
check "metrics zero in every run are folded under the table ($(both 'len(zero) and zero[0]["summary"]'))" \
	[ "$(both 'len(zero) == 1 and zero[0]["names"] == '"$zero_json"' and len(zero[0]["names"]) >= 1')" = True ]
check "their line: \"N metrics zero in every run\", folded (closed)" \
	[ "$(both 'zero[0]["summary"] == "%d metric%s zero in every run (left out of the table)" % (len(zero[0]["names"]), "" if len(zero[0]["names"]) == 1 else "s") and not zero[0]["open"]')" = True ]
check "under the table, the BH family the JSON names ($(seen 'family[0] if family else None'))" \
	[ "$(both 'len(family) == 1 and family[0].startswith("q: Benjamini-Hochberg over the %d metric" % rep["workloads"][0]["bh_family"])')" = True ]
check "the same names the text report leaves out" [ "$(both 'sorted(zero[0]["names"]) == sorted(text_zero)')" = True ]
check "none of them is a row of the table" [ "$(both 'not set(zero[0]["names"]) & set(rows)')" = True ]
check "every metric is a row or folded" \
	[ "$(both 'sorted(rows + zero[0]["names"]) == sorted(m["name"] for m in rep["workloads"][0]["metrics"])')" = True ]
check "the per-run plot has one point per run (6): $(seen 'len(points_before)')" [ "$(seen 'len(points_before)')" = 6 ]
check "the per-run plot has one point per counted run (6, not the warm-up): $(seen 'len(points_before)')" [ "$(seen 'len(points_before)')" = 6 ]
check "3 points for each variant" [ "$(seen 'sorted(map(points_before.count, set(points_before)))')" = "[3, 3]" ]
check "a click on the $(seen 'clicked') row plots it" \
	[ "$(seen 'clicked in plot_title_after and plot_title_after != plot_title_before')" = True ]
check "the clicked row is the one selected" [ "$(seen 'selected_rows == [clicked]')" = True ]
check "the new plot has 6 points too" [ "$(seen 'points_after')" = 6 ]
echo "    the sample plot opened on $(seen 'sample_default') of run $(seen 'sample_run'): $(seen 'sample_default_values[:12]')"
check "the sample plot opens on a series that moves ($(seen 'sample_default'))" \
	[ "$(seen 'max(sample_default_values) > min(sample_default_values)')" = True ]
check "the run has constant series, and none of them is the default ($(seen 'len(sample_constant_labels)') constant)" \
	[ "$(seen 'len(sample_constant_labels) > 0 and sample_default not in sample_constant_labels and not sample_default_label.endswith("(constant)")')" = True ]
check "the constant series are labelled so in the list" \
	[ "$(seen 'sorted(sample_constant_labels) == sorted(s["name"] for s in sample_series if s["n"] > 0 and s["min"] == s["max"])')" = True ]
# the page's rule, written again: a primary metric that moves, else the
# largest (max - min) / |mean| of the series that change in at least half
# the intervals
rule='[p for p in [m["name"] for m in rep["workloads"][0]["metrics"] if m["primary"]] if any(s["name"] == p and s["n"] > 1 and s["max"] > s["min"] for s in sample_series)][:1] or [max([s for s in sample_series if s["n"] > 1 and s["max"] > s["min"] and 2 * s["changes"] >= s["n"] - 1] or [s for s in sample_series if s["n"] > 1 and s["max"] > s["min"]], key=lambda s: (s["max"] - s["min"]) / abs(s["mean"]))["name"]]'
check "it is the moving series with the largest relative spread ($(both "$rule"))" \
	[ "$(both "sample_default == ($rule)[0]")" = True ]
check "choosing sample metric $(seen 'sample_metric') (was $(seen 'sample_metric_before')) draws its series" [ "$(seen 'sample_polylines')" -ge 1 ]
check "the report as it is: no margin column, as the JSON has no equivalence_pct, and no epsilon" \
	[ "$(seen 'margin["report_has_equivalence"] or ("same within" not in margin["as_is"]["headers"] and not margin["as_is"]["cells"])') $(seen '"epsilon" not in margin["as_is"]["text"] and "ε" not in margin["as_is"]["text"]')" = "True True" ]
check "with equivalence_pct in the JSON: a \"same within\" column of ±2% and verdicts that name it" \
	[ "$(seen '"same within" in margin["added"]["headers"] and len(margin["added"]["cells"]) > 0 and set(margin["added"]["cells"]) == {"±2%"} and all("±2%" in t for t in margin["added"]["titles"])')" = True ]
check "kab.js's formatting, folding, verdict texts and default series rules (tests/web/format.mjs): $(node tests/web/format.mjs 2>&1 | tail -n 1)" \
	node tests/web/format.mjs
check "lab.js's rules and the history page's lab API (tests/web/lab.mjs): $(node tests/web/lab.mjs 2>&1 | tail -n 1)" \
	node tests/web/lab.mjs
check "no JavaScript error or failed request on the pages $(seen 'console_errors')" [ "$(seen 'len(console_errors)')" = 0 ]
check "following the job list's link opens job $id's page" \
	[ "$(seen 'followed_url.endswith("/jobs/'$id'")')" = True ]
size=$(stat -c %s tests/out/job.png 2>/dev/null || echo 0)
check "a screenshot tests/out/job.png ($size bytes)" [ "$size" -gt 20000 ]
check "it is a PNG" bash -c "head -c 8 tests/out/job.png | od -An -tx1 | tr -d ' \n' | grep -q '^89504e470d0a1a0a$'"

# ---- the nightly pages (tests/web/nightly_page.mjs) ----
# A history and its regressions seeded into kabd's database as kabd caches
# them (tests/web/seed_nightly.sh: no job runs): 17 nights of nightly-web,
# the 03-06 night failed, 03-13 missed, a step on 03-10; nightly-short has
# one night; three regressions, the confirmed one bisected (done, its
# culprit's subject holding markup).
if ! command -v sqlite3 >/dev/null; then
	echo "  skip the nightly pages: sqlite3 is not installed (it seeds the history)"
	IT_SKIP=$((IT_SKIP + 1))
elif ! tests/web/seed_nightly.sh "$DB" 2>"$IT_TMP/seed.log"; then
	sed 's/^/    /' "$IT_TMP/seed.log"
	fail "tests/web/seed_nightly.sh seeds a history and regressions"
else
	rm -f tests/out/history.png tests/out/regressions.png
	HOME="$IT_TMP" CHROMIUM="$CHROMIUM" KAB_TOKEN="${AUTH#Authorization: Bearer }" timeout 180 \
		node tests/web/nightly_page.mjs "$URL" nightly-web nightly-short "$PWD/tests/out" \
		>"$IT_TMP/nightly.json" 2>"$IT_TMP/nightly.log"
	[ $? = 124 ] && echo "  timed out after 180 s waiting for the browser (tests/web/nightly_page.mjs)"
	[ -s "$IT_TMP/nightly.log" ] && sed 's/^/    /' "$IT_TMP/nightly.log" | head -20
	cp "$IT_TMP/nightly.json" tests/out/nightly-seen.json 2>/dev/null
	like() { [[ $1 == $2 ]]; } # TEXT GLOB
	# nseen EXPR: EXPR over what the browser saw (s: the primary series)
	nseen() {
		$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["series"][0] if d.get("series") else {}
print(eval(sys.argv[2], {}, dict(d, s=s, d=d)))' "$IT_TMP/nightly.json" "$1" 2>/dev/null
	}
	check "Playwright drove chromium through the nightly pages without an error $(nseen 'error' | head -c 300)" \
		[ "$(nseen '"error" not in d')" = True ]
	check "the history page names the job ($(nseen 'title'))" [ "$(nseen 'title')" = "Nightly history: nightly-web" ]
	check "a plot of the primary metric (stress-ng.bogo_ops_per_s)" [ "$(nseen 's["metric"]')" = stress-ng.bogo_ops_per_s ]
	check "one point per measured night: 16 ($(nseen 'len(s["points"])'))" [ "$(nseen 'len(s["points"])')" = 16 ]
	check "no point on 03-06 (failed) or 03-13 (no job)" \
		[ "$(nseen '[p["date"] for p in s["points"] if p["date"] in ("2026-03-06", "2026-03-13")]')" = "[]" ]
	check "the failed night is a gap, with its reason on hover" \
		[ "$(nseen 'any(g["state"] == "failed" and "2026-03-06" in g["title"] and "exited 1" in g["title"] for g in s["gaps"])')" = True ]
	check "the missed day is a gap too" [ "$(nseen '[g["state"] for g in s["gaps"]]')" = "['failed', 'missed']" ]
	check "a gap has no point drawn on it" [ "$(nseen 's["point_indexes_of_gaps"]')" = "[]" ]
	check "the points keep their places: the gaps sit between them" \
		[ "$(nseen 'sorted([p["point"] for p in s["points"]] + [g["point"] for g in s["gaps"]]) == list(range(18))')" = True ]
	check "the CI band: a piece per run of measured nights (3: $(nseen 's["bands"]'))" [ "$(nseen 'len(s["bands"])')" = 3 ]
	check "one change-point marker, at 03-10 (its first bad night)" \
		[ "$(nseen '[(c["point"], "first bad 2026-03-10" in c["title"], "last good 2026-03-09" in c["title"]) for c in s["changes"]]')" = "[(9, True, True)]" ]
	check "the marker's label: the mean before and after ($(nseen 's["changes"][0]["label"]'))" \
		like "$(nseen 's["changes"][0]["label"]')" '+0.1% → -6.0%*'
	check "the marker names the confirmed regression" like "$(nseen 's["changes"][0]["label"]')" '*regression #*'
	check "a point's hover text names the night, the job, the commit and the estimate with its CI" \
		[ "$(nseen 'bool(__import__("re").search(r"^night 2026-03-01, job \d+\ncommit [0-9a-f]{12} mm: nightly commit 1\nestimate [+-][0-9.]+% \[[+-][0-9.]+%, [+-][0-9.]+%\]", s["points"][0]["title"]))')" = True ]
	check "a night without a tracked commit says so" \
		[ "$(nseen '"no commit recorded" in s["points"][1]["title"]')" = True ]
	check "the force-pushed night (03-14) is marked, and its hover says so" \
		[ "$(nseen '[(p["date"], "force-pushed" in p["title"]) for p in s["points"] if p["forced"]]')" = "[('2026-03-14', True)]" ]
	check "a commit subject's markup stays text" \
		[ "$(nseen 'd["injected"] == 0 and any("<script>alert(1)</script>" in p["title"] for p in s["points"])')" = True ]
	check "the metric list offers every metric with history" \
		[ "$(nseen 'metric_options')" = "['', 'stress-ng.bogo_ops_per_s', 'vmstat.pgscan_anon']" ]
	check "choosing vmstat.pgscan_anon plots it alone (16 points)" \
		[ "$(nseen 'chosen_metric["points"] == 16 and "metric=vmstat.pgscan_anon" in chosen_metric["url"]')" = True ]
	check "one night: not enough nights, said ($(nseen 'short["note"]'))" \
		[ "$(nseen 'short["note"].startswith("not enough nights") and short["series_note"].startswith("not enough nights")')" = True ]
	check "one night: its point and band, no change point" [ "$(nseen '(short["points"], short["bands"], short["changes"])')" = "(1, 1, 0)" ]
	check "a name with no history: \"$(nseen 'missing["error"]')\", no plot" \
		[ "$(nseen 'missing["error"] == "no nightly history for job no-such-nightly" and missing["plots"] == 0')" = True ]
	check "a name with no history: the API's 404 is its only failed request" \
		[ "$(nseen 'all("404" in e and "/api/v1/history" in e or "status of 404" in e for e in missing["errors"])')" = True ]
	check "the regressions page lists 3, newest first ($(nseen '[r["id"] for r in regressions]'))" \
		[ "$(nseen '[r["id"] for r in regressions] == sorted([r["id"] for r in regressions], reverse=True) and len(regressions) == 3')" = True ]
	check "each change carries its metric's trend plot, in the row under it ($(nseen 'regression_plots'))" \
		[ "$(nseen '[(p["id"], p["plot"], p["after"] == p["id"]) for p in regression_plots] == [(r["id"], True, True) for r in regressions]')" = True ]
	check "the newest is the acknowledged improvement, then the open regression, then the one not confirmed" \
		[ "$(nseen '[(__import__("re").search(r"(improvement|regression|confirmed)(:|$)", r["title"]).group(1), r["class"]) for r in regressions]')" = "[('improvement', 'regression acknowledged'), ('regression', 'regression open'), ('confirmed', 'regression not-confirmed')]" ]
	# the bisection's commits, as seed_nightly.sh names them
	bsha() { printf 'kab-web-commit-%s' "$1" | sha1sum | cut -c1-12; }
	cul=$(bsha culprit) par=$(bsha culprit-parent) step1=$(bsha step-1)
	check "a row's 0-day title names its bisection's first bad commit ($(nseen 'regressions[1]["title"]'))" \
		like "$(nseen 'regressions[1]["title"]')" "\\[origin:mm-unstable\\] *: stress-ng.bogo_ops_per_s -5.8% regression: first bad commit $cul \"mm: <i>culprit</i> & co\""
	check "the confirmation's estimate with its CI and verdict" \
		like "$(nseen 'regressions[1]["confirmation"]')" '-5.80% \[-7.10%, -4.40%\] p 0.001, worse*'
	check "a row not confirmed shows its interval and why" \
		like "$(nseen 'regressions[2]["confirmation"]')" '-0.40% \[-1.20%, +0.50%\]*says same*'
	check "the commit range: last good and first bad, short shas and subjects" \
		[ "$(nseen 'bool(__import__("re").search(r"2026-03-09 [0-9a-f]{12} mm: nightly commit 9$", regressions[1]["last_good"]) and __import__("re").search(r"2026-03-10 [0-9a-f]{12} mm: nightly commit 10$", regressions[1]["first_bad"]))')" = True ]
	check "links to the confirmation job and to the metric's history" \
		[ "$(nseen 'regressions[1]["confirm_href"].startswith("/job.html?id=") and regressions[1]["history_href"] == "/history.html?job=nightly-web&metric=stress-ng.bogo_ops_per_s&workload=stress-vm"')" = True ]
	check "the history link opens that metric's plot, its change point marked" \
		[ "$(nseen 'followed_history["series"] == ["stress-ng.bogo_ops_per_s"] and len(followed_history["marks"]) == 1')" = True ]
	check "the bisected regression has its bisection in a row under it, the others none ($(nseen '[(b["id"], b["under"], b["heading"]) for b in bisections]'))" \
		[ "$(nseen 'len(bisections) == 1 and bisections[0]["id"] == bisections[0]["under"] == regressions[1]["id"] and bisections[0]["heading"] == "bisection %d: done" % bisections[0]["bisection"]')" = True ]
	check "the bisection's first bad commit: sha, subject as text, author, date ($(nseen 'bisections[0]["culprits"]' | head -c 300))" \
		[ "$(nseen "len(bisections[0][\"culprits\"]) == 1 and bisections[0][\"culprits\"][0][\"answer\"] == \"culprit\" and bisections[0][\"culprits\"][0][\"sha\"].startswith(\"$cul\") and bisections[0][\"culprits\"][0][\"text\"].startswith(\"first bad commit $cul mm: <i>culprit</i> & coA U Thor <author@example.org>, 2026-03-10T08:00:00+00:00\")")" = True ]
	check "its confirmation against its parent, with the CI" \
		[ "$(nseen "\"against its parent $par: -5.70% [-6.90%, -4.50%], 10 pairs, confirmed\" in bisections[0][\"culprits\"][0][\"text\"]")" = True ]
	check "its steps: commit, pairs, estimate [CI], decision and why ($(nseen 'bisections[0]["steps"]' | head -c 300))" \
		[ "$(nseen "[r[1] for r in bisections[0][\"steps\"]] == [\"$step1\", \"$cul\", \"$par\"] and bisections[0][\"steps\"][1][2:4] == [\"6\", \"-5.90% [-7.00%, -4.80%]\"] and [r[4].split(\"shift\")[0] for r in bisections[0][\"steps\"]] == [\"good\", \"bad\", \"good\"]")" = True ]
	check "its builds and boots, and git bisect log in a <pre>" \
		[ "$(nseen 'bisections[0]["counts"] == "3 steps, 4 builds, 52 boots" and bisections[0]["log"].startswith("git bisect start\n# good: [")')" = True ]
	check "the regression's trend plot marks the first bad commit on its first bad night (03-10) ($(nseen 'culprit_marks'| head -c 300))" \
		[ "$(nseen "[(p[\"id\"], m[\"point\"], m[\"label\"], \"mm: <i>culprit</i> & co\" in m[\"title\"]) for p in culprit_marks for m in p[\"marks\"]] == [(regressions[1][\"id\"], 9, \"first bad commit $cul\", True)]")" = True ]
	check "the history page marks it too ($(nseen 's["culprits"]' | head -c 300))" \
		[ "$(nseen "[(c[\"point\"], c[\"label\"]) for c in s[\"culprits\"]] == [(9, \"first bad commit $cul\")]")" = True ]
	check "the culprit's subject's markup stays text" [ "$(nseen 'regressions_injected')" = 0 ]
	check "the Atom feed is linked (link rel=alternate and in the page)" \
		[ "$(nseen 'atom_link == atom_anchor == "/api/v1/regressions.atom"')" = True ]
	check "the job list links to the regressions page" [ "$(nseen 'followed_regressions.endswith("/regressions.html")')" = True ]
	check "a job's page links to its name's history" [ "$(nseen 'followed_job_history.endswith("/history.html?job=nightly-web")')" = True ]
	check "no JavaScript error or failed request on the nightly pages $(nseen 'console_errors')" [ "$(nseen 'len(console_errors)')" = 0 ]
	for f in history regressions; do
		size=$(stat -c %s tests/out/$f.png 2>/dev/null || echo 0)
		check "a screenshot tests/out/$f.png ($size bytes)" [ "$size" -gt 20000 ]
	done
fi

# ---- a symlink in the web root is not followed ----
kabd_stop
root=$IT_TMP/webroot
mkdir -p "$root/sub"
cp web/index.html "$root/"
echo 'secret' >"$IT_TMP/outside.html"
ln -s "$IT_TMP/outside.html" "$root/link.html"
ln -s /etc/passwd "$root/passwd.html"
ln -s "$PWD/web" "$root/web"
echo 'in a subdirectory' >"$root/sub/page.html"
if start_kabd "$PORT" "$root"; then
	check "the temporary web root serves its index" [ "$(ctype /)" = "200 text/html; charset=utf-8" ]
	for p in /link.html /passwd.html /web /web/index.html /sub/page.html /sub; do
		check "GET $p (through a symlink or a subdirectory): 404" not_found "$(req GET "$p")"
	done
else
	fail "kabd restarts with a temporary web root"
fi
kabd_stop
it_end
