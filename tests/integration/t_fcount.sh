#!/usr/bin/env bash
# fcount = FUNCTION…: on this host. Where tracing works the counts are
# real (the QEMU guest of t_cgroup_v2 checks lru_add_drain > 0); where it
# is refused, the run still goes on and ok, and each function is recorded
# unavailable with the kernel's reason, listed under "Not measured" in the
# report. Nothing is left in tracefs, and tracefs is unmounted again if
# kab mounted it. Bad function names are caught by kab check.
. "$(dirname "$0")/lib.sh"
it_begin
mounts_before=$(grep -c tracefs /proc/mounts)
cat >"$IT_TMP/fc.job" <<'JOB'
[job]
name = it-fcount
pairs = 1
[variant A]
name = a
sysctl vm.swappiness = 60
[variant B]
name = b
sysctl vm.swappiness = 61
[workload w]
type = command
command = sh -c "sync; echo kab-metric x 1"
fcount = lru_add_drain ksys_sync
JOB
db=$IT_TMP/fc.db
$KAB run --db "$db" "$IT_TMP/fc.job" >"$IT_TMP/out" 2>"$IT_TMP/log"
check "the job runs (exit 0)" [ $? -eq 0 ]
check "both runs ok" [ "$(sql "$db" "select count(*) from runs where status = 'ok'")" = 2 ]
counted=$(sql "$db" "select count(*) from metrics where name in ('fcount.lru_add_drain', 'fcount.ksys_sync')")
unavail=$(sql "$db" "select count(*) from run_unavailable where metric in ('fcount.lru_add_drain', 'fcount.ksys_sync') and reason <> ''")
echo "    counted: $counted, unavailable: $unavail; $(sql "$db" "select reason from run_unavailable limit 1")"
# 3 runs: the pair's 2 and, before them, the workload's uncounted warm-up,
# which counts its functions like any run
check "each function of each run is counted or recorded unavailable with a reason" [ $((counted + unavail)) = 6 ]
if [ "$counted" = 6 ]; then
	check "counts are real: ksys_sync called at least once per run" \
		[ "$(sql "$db" "select count(*) from metrics where name = 'fcount.ksys_sync' and value >= 1")" = 3 ]
else
	check "the log says why and that the run goes on" grep -q "function counts unavailable: .*the run goes on" "$IT_TMP/log"
	$KAB report 1 --db "$db" >"$IT_TMP/report"
	check "the text report lists them under Not measured" bash -c \
		"grep -q '^Not measured on this machine:' '$IT_TMP/report' && grep -q '  fcount.lru_add_drain: .* (3 runs)' '$IT_TMP/report'"
	$KAB report 1 --db "$db" --format json >"$IT_TMP/report.json"
	check "the JSON report has them in \"unavailable\"" /usr/bin/python3 -c \
		'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not any(u.startswith("fcount.ksys_sync: ") for u in d["unavailable"]))' "$IT_TMP/report.json"
fi
check "tracefs mounts as before ($mounts_before)" [ "$(grep -c tracefs /proc/mounts)" = "$mounts_before" ]
for t in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ -d $t/instances ] && check "no kab tracing instance left in $t" bash -c "! ls $t/instances | grep -q '^kab-'"
done
check "journal empty" [ "$(sql "$db" "select count(*) from journal")" = 0 ]

# bad names
for bad in "1abc" "foo-bar" "a/b" "lru_add_drain lru_add_drain"; do
	sed "s|^fcount = .*|fcount = $bad|" "$IT_TMP/fc.job" >"$IT_TMP/bad.job"
	$KAB check "$IT_TMP/bad.job" >/dev/null 2>"$IT_TMP/err"
	check "fcount = $bad: exit 2 with line 13" bash -c "[ $? -eq 2 ] && grep -q 'bad.job:13: .*\\(function\\)' '$IT_TMP/err'"
done
it_end
