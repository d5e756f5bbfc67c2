#!/usr/bin/env bash
# kabd's pages in a real browser: a short job submitted with curl, then
# Playwright drives Debian's headless Chromium (tests/web/job_page.mjs):
# the job page shows live progress while the job runs, then the report
# rows, a verdict marker and an SVG plot with a point per run; a click on
# another row re-plots it, a sample metric is chosen, a screenshot goes to
# tests/out/job.png, and the job list's link opens the page. Also the run
# samples API and the static-file guards: nothing outside the web root,
# not through "..", %2e or a symlink.
. "$(dirname "$0")/lib.sh"
it_begin
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
# Its first run waits until the browser has shown "run 1 of 6", its second
# until it has shown "run 2 of 6" (job_page.mjs marks each progress line it
# sees in $IT_TMP/seen; 60 s at most): the page sees the progress change
# however long Chromium takes to start.
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
  while [ ! -e @SEEN@/run-$n-of-6 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done;
  test -e @SEEN@/run-$n-of-6 || echo the page did not show run $n of 6 within 60 s >&2; break; done;
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
code=$(req GET "/api/v1/runs/$run/samples?metric=$metric")
n_t=$($PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["t_s"]), len(d["values"]), d["metric"], d["run"])' \
	"$IT_TMP/body" 2>/dev/null)
read -r nt nv m r <<<"$n_t"
check "GET /runs/$run/samples?metric=$metric: 200, t_s and values of one length (${nt:-?})" \
	[ "$code" = 200 -a "${nt:-0}" -gt 0 -a "${nt:-0}" = "${nv:-x}" -a "$m" = "$metric" -a "$r" = "$run" ]
check "the times start at 0 and rise" $PY -c 'import json,sys; t=json.load(open(sys.argv[1]))["t_s"]; sys.exit(not (t[0] == 0 and t == sorted(t)))' "$IT_TMP/body"
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
check "the page ends at run 6 of 6" bash -c "[[ '$(seen 'final_progress')' == 'run 6 of 6'* ]]"
check "the report has the command's row (command.answer)" [ "$(seen '"command.answer" in rows')" = True ]
check "the rows are grouped: primary first, counters last ($(seen 'groups'))" \
	[ "$(seen 'groups[:1] == ["primary metrics"] and groups[-1] == "counters"')" = True ]
check "no number in exponent notation on the page" [ "$(seen '__import__("re").search(r"\d[eE][+-]?\d", table_text) is None')" = True ]
check "a verdict marker in the report ($(seen 'verdicts[:1]'))" [ "$(seen 'any(v in "▲▼≠~?" for v in verdicts)')" = True ]
check "the per-run plot has one point per run (6): $(seen 'len(points_before)')" [ "$(seen 'len(points_before)')" = 6 ]
check "3 points for each variant" [ "$(seen 'sorted(map(points_before.count, set(points_before)))')" = "[3, 3]" ]
check "a click on the $(seen 'clicked') row plots it" \
	[ "$(seen 'clicked in plot_title_after and plot_title_after != plot_title_before')" = True ]
check "the clicked row is the one selected" [ "$(seen 'selected_rows == [clicked]')" = True ]
check "the new plot has 6 points too" [ "$(seen 'points_after')" = 6 ]
check "choosing sample metric $(seen 'sample_metric') (was $(seen 'sample_metric_before')) draws its series" [ "$(seen 'sample_polylines')" -ge 1 ]
check "no JavaScript error or failed request on the pages $(seen 'console_errors')" [ "$(seen 'len(console_errors)')" = 0 ]
check "following the job list's link opens job $id's page" \
	[ "$(seen 'followed_url.endswith("/jobs/'$id'")')" = True ]
size=$(stat -c %s tests/out/job.png 2>/dev/null || echo 0)
check "a screenshot tests/out/job.png ($size bytes)" [ "$size" -gt 20000 ]
check "it is a PNG" bash -c "head -c 8 tests/out/job.png | od -An -tx1 | tr -d ' \n' | grep -q '^89504e470d0a1a0a$'"

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
