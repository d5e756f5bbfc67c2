#!/usr/bin/env bash
# The kbuild workload: a small real kernel build (tinyconfig, init/) in a
# 512M memcg with zram swap, from the shared source cache (unpacked on first
# use, about a minute), each run in a fresh object directory; a make that
# fails and a memcg far too small are recorded failed and the job goes on;
# bad keys are file:line errors.
. "$(dirname "$0")/lib.sh"
it_begin
[ -r /usr/src/linux-source-6.1.tar.xz ] || [ -f "${KAB_KBUILD_CACHE:-/var/cache/kab/src}/linux-source-6.1/Makefile" ] ||
	skip_all "Debian's linux-source-6.1 is not installed (apt-get install linux-source-6.1)"
for p in make gcc bc flex bison; do command -v $p >/dev/null || skip_all "$p is not installed"; done

SRC=${KAB_KBUILD_CACHE:-/var/cache/kab/src}/linux-source-6.1
# each job's directory (its workloads' w<i> inside), under the state directory
jobdirs() { ls -d "$STATE_DIRECTORY"/jobs/* 2>/dev/null | sort; }
jobdirs >"$IT_TMP/jobdirs.before"

cat >"$IT_TMP/kb.job" <<JOB
[job]
name = it-kbuild
pairs = 1
interval = 0.5s
; no warm-up: this test checks what each run of the adapter records, run
; by run; the warm-up (an uncounted run like these, on by default) is
; tested in t_e2e, t_aa and t_oom, and a kernel build is the slow part
warmup = 0

[swap]
device = zram
size = 512M

[variant A]
name = swappy-60
sysctl vm.swappiness = 60

[variant B]
name = swappy-100
sysctl vm.swappiness = 100

[workload tiny]
type = kbuild
config = tinyconfig
target = init/
jobs = 2
drop_caches = yes
memory.max = 512M
timeout = 5m
JOB
db="$IT_TMP/kb.db"
t0=$(date +%s)
$KAB run --db "$db" "$IT_TMP/kb.job" >"$IT_TMP/out" 2>"$IT_TMP/err"
rc=$?
echo "  (build job took $(($(date +%s) - t0)) s)"
check "kab run exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || tail -20 "$IT_TMP/err"
check "job is done" [ "$(sql "$db" "select status from jobs where id=1")" = done ]
check "2 runs, both ok" [ "$(sql "$db" "select count(*) from runs where status='ok'")" = 2 ]
check "kbuild.ok = 1 in both runs" [ "$(sql "$db" "select count(*) from metrics where name='kbuild.ok' and value=1")" = 2 ]
objs=$(sql "$db" "select group_concat(cast(value as integer), ' ') from metrics where name='kbuild.objects'")
check "kbuild.objects > 0 and the same in both runs ($objs)" \
	[ "$(sql "$db" "select count(*) || ',' || count(distinct value) || ',' || min(value > 0) from metrics where name='kbuild.objects'")" = "2,1,1" ]
check "wall, user and sys time recorded, user > 0" \
	[ "$(sql "$db" "select count(*) from metrics where name in ('time.wall_s','rusage.user_s','rusage.sys_s') and value > 0")" = 6 ]
check "memcg counters sampled" [ "$(sql "$db" "select count(*) from metrics where name='memcg.peak_bytes' and value > 0")" = 2 ]
for r in 1 2; do
	echo "  run $r: $(sql "$db" "select group_concat(name || '=' || printf('%.2f', value), ' ') from metrics where run_id=$r and name in ('time.wall_s','rusage.user_s','rusage.sys_s','kbuild.objects','memcg.peak_bytes')")"
done
check "the unpacked source is cached with its stamp" [ -f "$SRC/Makefile" -a -f "$SRC.stamp" ]
check "the source cache is not written to (no .o, .config, include/config)" \
	[ -z "$(find "$SRC" \( -name '*.o' -o -name .config -o -name '*.cmd' \) -print -quit)" -a ! -e "$SRC/include/config" ]
check "no file in the source cache is newer than its stamp" [ -z "$(find "$SRC" -newer "$SRC.stamp" -print -quit)" ]
check "per-job directories removed" diff "$IT_TMP/jobdirs.before" <(jobdirs)

# A make that fails and a memcg too small to compile in: recorded, the job goes on.
cat >"$IT_TMP/fail.job" <<JOB
[job]
name = it-kbuild-fail
pairs = 1
warmup = 0

[swap]
device = none

[variant A]
[variant B]

[workload nodir]
type = kbuild
config = tinyconfig
target = no-such-target
jobs = 2

[workload starved]
type = kbuild
config = tinyconfig
target = init/
jobs = 2
memory.max = 16M
memory.swap.max = 0
timeout = 3m
JOB
fdb="$IT_TMP/fail.db"
$KAB run --db "$fdb" "$IT_TMP/fail.job" >"$IT_TMP/fout" 2>"$IT_TMP/ferr"
rc=$?
check "kab run finishes the failing job (exit 0)" [ $rc -eq 0 ]
[ $rc -eq 0 ] || tail -20 "$IT_TMP/ferr"
check "job is done" [ "$(sql "$fdb" "select status from jobs")" = done ]
check "make of an unknown target: both runs failed with make's exit status 2" \
	[ "$(sql "$fdb" "select count(*) from runs where workload_idx=0 and status='failed' and exit_code=2")" = 2 ]
check "make's error is in the stderr tail" \
	[ "$(sql "$fdb" "select count(*) from runs where workload_idx=0 and stderr_tail like '%No rule to make target%no-such-target%'")" = 2 ]
check "and the run's reason ends with it (exited with status 2: make: *** …)" \
	[ "$(sql "$fdb" "select count(*) from runs where workload_idx=0 and reason like 'exited with status 2: %make%no-such-target%'")" = 2 ]
check "and kbuild.ok = 0" [ "$(sql "$fdb" "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx=0 and m.name='kbuild.ok' and m.value=0")" = 2 ]
echo "  starved runs: $(sql "$fdb" "select group_concat(status || ' (' || reason || ')', '; ') from runs where workload_idx=1")"
check "a 16M memcg without swap: both runs oom-killed" \
	[ "$(sql "$fdb" "select count(*) from runs where workload_idx=1 and status='oom-killed'")" = 2 ]
check "per-job directories removed after the failing job" diff "$IT_TMP/jobdirs.before" <(jobdirs)

# Bad keys: every one reported with file:line, nothing run.
cat >"$IT_TMP/bad.job" <<JOB
[job]
name = it-kbuild-bad

[variant A]
[variant B]

[workload w]
type = kbuild
source = /nonexistent/linux
config = defconfg
jobs = two
target = -k vmlinux
drop_caches = maybe

[workload w2]
type = kbuild
source = linux
config = /nonexistent/.config
jobs = 0

[workload w3]
type = kbuild
target = init/ no-such-dir/
JOB
$KAB check "$IT_TMP/bad.job" >"$IT_TMP/bout" 2>"$IT_TMP/berr"
rc=$?
check "kab check exits 2 on bad keys" [ $rc -eq 2 ]
f="$IT_TMP/bad.job"
check "missing source tree: file:line" grep -q "^$f:9: .*source /nonexistent/linux is not a directory" "$IT_TMP/berr"
check "unknown config with a hint" grep -q "^$f:10: .*unknown config \"defconfg\" (did you mean \"defconfig\"?)" "$IT_TMP/berr"
check "non-numeric jobs" grep -q "^$f:11: .*jobs \"two\" must be a whole number" "$IT_TMP/berr"
check "an option in target" grep -q "^$f:12: .*target \"-k\" is a make option" "$IT_TMP/berr"
check "drop_caches not yes/no" grep -q "^$f:13: .*drop_caches \"maybe\"" "$IT_TMP/berr"
check "relative source" grep -q "^$f:17: .*must be \"debian\" or an absolute path" "$IT_TMP/berr"
check "missing config file" grep -q "^$f:18: .*config /nonexistent/.config is not a readable file" "$IT_TMP/berr"
check "jobs = 0" grep -q "^$f:19: .*jobs \"0\" must be a whole number from 1" "$IT_TMP/berr"
check "a directory target not in the tree (make would build nothing and succeed)" \
	grep -q "^$f:23: .*target \"no-such-dir/\": there is no directory no-such-dir in $SRC" "$IT_TMP/berr"
[ "$IT_FAIL" -eq 0 ] || cat "$IT_TMP/berr"
it_end
