#!/usr/bin/env bash
# What readers of kabd's API can make it hold. A job at the run budget,
# 50,000 runs with their provenance, output tails, settings and two
# metrics each, is put straight into the database of a kabd serving
# --public-read. As user nobody, over TCP and without the token, two
# clients at once walk GET /jobs/ID/runs page by page while two more ask
# for its largest page and /health is asked every 0.1 s. kabd's peak RSS
# (VmHWM) stays under 100 MB: the handler that loaded every run took it
# from 12 MB to 1.57 GB here and kept /health waiting 37 s. /health
# answers within 3 s, each page is within its caps (500 runs, 1 MiB and a
# row), and each walk gets the 50,000 runs exactly once, in order. The
# job's report and GET /jobs/ID stay under the same bound, and bad page
# parameters get a 400 naming the parameter.
. "$(dirname "$0")/lib.sh"
it_begin
[ -x "$KABD" ] || skip_all "$KABD is not built"
for t in curl sqlite3 runuser python3; do
	command -v $t >/dev/null || skip_all "$t is not installed"
done
id nobody >/dev/null 2>&1 || skip_all "there is no user nobody"
trap 'kabd_stop; it_cleanup' EXIT

RUNS=50000          # JOB_STEPS_MAX: 1000 pairs x 2 variants x 25 workloads
RSS_MAX_KB=$((100 * 1024))
HEALTH_MAX_S=3
PAGE_ROWS=500       # API_PAGE_MAX
PAGE_BYTES=$((1024 * 1024 + 64 * 1024)) # API_PAGE_BYTES and a row
DB=$IT_TMP/db/kab.db
PY=python3

kabd_up --db "$DB" --public-read || { fail "kabd starts with --public-read"; it_end; exit; }
ok "kabd starts on 127.0.0.1:$PORT with --public-read"
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$KABD_PID/status"; }
mb() { echo "$(( $1 / 1024 )) MB"; }

# ---- the job: 25 workloads of 1000 pairs of two variants, all run ----
check "kabd's database is new" [ "$(sql "$DB" "select count(*) from jobs")" = 0 ]
text="[job]
name = budget
pairs = 1000
[variant A]
name = a
[variant B]
name = b"
for w in $(seq 0 24); do text="$text
[workload w$w]
type = command
command = true"
done
sqlite3 -batch "$DB" >"$IT_TMP/insert.out" 2>&1 <<EOF
.timeout 10000
BEGIN IMMEDIATE;
INSERT INTO jobs (id, name, file, text, status, created, started, finished, pairs, job_order, swap, kab_version,
 schema_version, kernel_release) VALUES (1, 'budget', 'budget.job', '$text', 'done', 1.7e9, 1.7e9, 1.7e9 + $RUNS,
 1000, 'abba', 'none', '0.1', 12, '$(uname -r)');
INSERT INTO variants (job_id, idx, label, name, kernel, knobs) VALUES (1, 0, 'A', 'a', 'running', ''),
 (1, 1, 'B', 'b', 'running', '');
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 24)
INSERT INTO workloads (job_id, idx, name, type) SELECT 1, i, 'w' || i, 'command' FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $RUNS - 1)
INSERT INTO steps (id, job_id, seq, pair, variant_idx, workload_idx, status)
 SELECT i + 1, 1, i, (i % 2000) / 2, i % 2, i / 2000, 'finished' FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $RUNS - 1),
 s(settings, tail) AS (SELECT replace(hex(zeroblob(24)), '00', 'transparent_hugepage/hugepages-64kB/enabled=never
'), replace(hex(zeroblob(1000)), '00', 'ok'))
INSERT INTO runs (id, job_id, step_id, pair, variant_idx, workload_idx, status, exit_code, term_signal, started,
 finished, pid, kab_version, schema_version, kernel_release, boot_id, cmdline, cpus, mem_total, swap_total,
 swap_devices, cgroup_version, cgroup_path, knobs, memory_max, stdout_tail, stderr_tail, settings, conditioning)
 SELECT i + 1, 1, i + 1, (i % 2000) / 2, i % 2, i / 2000, 'ok', 0, 0, 1.7e9 + i, 1.7e9 + i + 0.9, 1000 + i,
 '0.1', 12, '$(uname -r)', '2b1c7e0e-9a52-4f5e-8d0e-3f1f0c2a9b77',
 'BOOT_IMAGE=/boot/vmlinuz root=UUID=0b7e9f3c-1d2a-4c5b-9e8f-7a6b5c4d3e2f ro quiet console=ttyS0,115200',
 2, 25769803776, 8589934592, '/dev/zram0', 1, '/sys/fs/cgroup/memory/kab/job1-run' || (i + 1),
 '/proc/sys/vm/swappiness=60
/proc/sys/vm/page-cluster=3
', 1073741824, tail, tail, settings, 'drop_caches=3
compact=1
' FROM n, s;
INSERT INTO metrics (run_id, name, value, unit) SELECT id, 'time.wall_s', 0.9 + (id % 7) * 0.01, 's' FROM runs;
INSERT INTO metrics (run_id, name, value, unit) SELECT id, 'rusage.sys_s', 0.1 + (id % 5) * 0.01, 's' FROM runs;
COMMIT;
EOF
check "a job of $RUNS runs, each with its output tails, settings and 2 metrics, is in kabd's database" \
	[ "$(sql "$DB" "select count(*) from runs where job_id = 1 and length(stdout_tail) = 2000")" = $RUNS ]
[ -s "$IT_TMP/insert.out" ] && sed 's/^/    sqlite3: /' "$IT_TMP/insert.out"
JOB=1
START_KB=$(hwm)

# ---- two walks and two largest pages at once, as nobody; /health meanwhile ----
# walk N: GET /jobs/$JOB/runs as nobody, limit=500, each page after the
# one before's next_after, into $IT_TMP/walkN/PAGE.json; 0 when a page
# ends the list with "next_after": null
walk() {
	local d=$IT_TMP/walk$1 after="" i=0
	mkdir -p "$d"
	while [ $i -lt 1000 ]; do
		runuser -u nobody -- curl -sf --max-time 120 \
			"$URL/api/v1/jobs/$JOB/runs?limit=$PAGE_ROWS${after:+&after=$after}" >"$d/$i.json" || return 1
		after=$(tail -c 64 "$d/$i.json" | sed -n 's/.*"next_after": \([0-9]*\)}$/\1/p')
		i=$((i + 1))
		if [ -z "$after" ]; then
			tail -c 64 "$d/$((i - 1)).json" | grep -q '"next_after": null}$'
			return
		fi
	done
	return 1
}
# big N: one GET as nobody that asks for a million runs
big() { runuser -u nobody -- curl -sf --max-time 120 "$URL/api/v1/jobs/$JOB/runs?limit=1000000" >"$IT_TMP/big$1.json"; }
# /health every 0.1 s until $IT_TMP/stop exists: "SECONDS HTTP-CODE" a line
health_watch() {
	while [ ! -e "$IT_TMP/stop" ]; do
		curl -s -o /dev/null --max-time 60 -w '%{time_total} %{http_code}\n' "$URL/health"
		sleep 0.1
	done >"$IT_TMP/health.times"
}
health_watch &
hw=$!
t0=$SECONDS
walk 1 & w1=$!
walk 2 & w2=$!
big 1 & b1=$!
big 2 & b2=$!
wait $w1; rc1=$?
wait $w2; rc2=$?
wait $b1; rb1=$?
wait $b2; rb2=$?
touch "$IT_TMP/stop"
wait $hw
took=$((SECONDS - t0))
PEAK_KB=$(hwm)
echo "    kabd's peak RSS: $(mb "$PEAK_KB") (after the insert: $(mb "$START_KB")); the reads took $took s"
check "both walks end at a page whose next_after is null" [ $rc1 = 0 -a $rc2 = 0 ]
check "both largest pages answered" [ $rb1 = 0 -a $rb2 = 0 ]
check "kabd's peak RSS stayed under $(mb $RSS_MAX_KB): $(mb "$PEAK_KB")" [ "$PEAK_KB" -lt $RSS_MAX_KB ]
read -r probes slowest bad < <(awk '{ n++; if ($1 > m) m = $1; if ($2 != 200) b++ } END { printf "%d %.3f %d\n", n, m, b }' \
	"$IT_TMP/health.times")
echo "    /health: $probes answers during the reads, the slowest in $slowest s"
check "/health answered 200 every time, at least 10 times" [ "$probes" -ge 10 -a "$bad" = 0 ]
check "/health always answered within $HEALTH_MAX_S s (slowest $slowest s)" \
	awk -v s="$slowest" -v m=$HEALTH_MAX_S 'BEGIN { exit !(s < m) }'

# pages DIR: each page is JSON within the caps, its next_after its last
# run's id (null on the last page), and the pages hold every run of the
# database once, in order
pages() {
	sql "$DB" "select id from runs where job_id = $JOB order by id" >"$IT_TMP/ids"
	$PY - "$1" "$IT_TMP/ids" $PAGE_ROWS $PAGE_BYTES <<'EOF'
import json, os, sys
d, ids, rows_max, bytes_max = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
want = [int(x) for x in open(ids)]
got = []
files = sorted(os.listdir(d), key=lambda f: int(f.split(".")[0]))
for k, f in enumerate(files):
    p = os.path.join(d, f)
    size = os.path.getsize(p)
    try:
        page = json.load(open(p))
    except ValueError:
        sys.exit(f"page {k}: {size} bytes, not JSON")
    runs = [r["id"] for r in page["runs"]]
    if len(runs) > rows_max or size > bytes_max:
        sys.exit(f"page {k}: {len(runs)} runs, {size} bytes")
    last = k == len(files) - 1
    if page["next_after"] != (None if last else runs[-1]):
        sys.exit(f"page {k}: next_after {page['next_after']}, its last run {runs[-1] if runs else None}")
    if any(not {"id", "step", "pair", "variant", "workload", "status", "provenance"} <= set(r) for r in page["runs"]):
        sys.exit(f"page {k}: a run without the fields of a run")
    got += runs
if got != want:
    sys.exit(f"{len(got)} runs, {len(set(got))} distinct, in order: {got == sorted(got)}; the database has {len(want)}")
print(f"{len(files)} pages, {len(got)} runs")
EOF
}
for n in 1 2; do
	out=$(pages "$IT_TMP/walk$n" 2>&1)
	check "walk $n: every page within $PAGE_ROWS runs and $PAGE_BYTES bytes, and the $RUNS runs once each, in order ($out)" \
		[ $? = 0 ]
done
for n in 1 2; do
	check "a million runs asked for: $PAGE_ROWS given, and next_after $PAGE_ROWS" $PY -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    sys.exit("not JSON")
sys.exit(not (len(d["runs"]) == 500 and d["runs"][0]["id"] == 1 and d.get("next_after") == 500))' "$IT_TMP/big$n.json"
done

# ---- the job's report and the job itself ----
code=$(runuser -u nobody -- curl -s -o /dev/null --max-time 300 -w '%{http_code}' "$URL/api/v1/jobs/$JOB/report?format=json")
REPORT_KB=$(hwm)
check "GET /jobs/$JOB/report as nobody: 200" [ "$code" = 200 ]
check "and kabd's peak RSS is still under $(mb $RSS_MAX_KB): $(mb "$REPORT_KB")" [ "$REPORT_KB" -lt $RSS_MAX_KB ]
runuser -u nobody -- curl -s --max-time 60 "$URL/api/v1/jobs/$JOB" >"$IT_TMP/job.json"
check "GET /jobs/$JOB: $RUNS of $RUNS runs done, counted by the database" $PY -c '
import json, sys
p = json.load(open(sys.argv[1]))["progress"]
sys.exit(not (p["runs_done"] == p["runs_total"] == int(sys.argv[2])))' "$IT_TMP/job.json" $RUNS

# ---- bad page parameters: 400, naming the parameter ----
expect400() { # description, path?query, words the error says
	local code
	code=$(runuser -u nobody -- curl -s -o - -w '\n%{http_code}' "$URL/api/v1/$2" 2>/dev/null)
	if [ "${code##*$'\n'}" = 400 ] && grep -qF "$3" <<<"$code"; then ok "$1: 400, \"$3\""
	else fail "$1: want 400 saying \"$3\", got: $(head -c 300 <<<"$code")"; fi
}
R=jobs/$JOB/runs
expect400 "runs?limit=0" "$R?limit=0" "limit must be a number from 1 to 500"
expect400 "runs?limit=ten" "$R?limit=ten" "limit must be"
expect400 "runs?after=-1" "$R?after=-1" "after must be an id"
expect400 "runs?after=x" "$R?after=x" "after must be an id"
expect400 "runs with an unknown parameter" "$R?offset=5" 'unknown parameter \"offset\"'
expect400 "runs with limit twice" "$R?limit=5&limit=6" 'parameter \"limit\" is given twice'
expect400 "jobs?limit=0" "jobs?limit=0" "limit must be"
expect400 "regressions?after=0" "regressions?after=0" "after must be an id"

check "kabd still answers /health" [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/health")" = 200 ]
check "kabd logged no error" bash -c "! grep -q 'error:' '$IT_TMP/kabd.log'"
kabd_stop
check "kabd exits 0 on SIGTERM" [ $? = 0 ]
it_end
