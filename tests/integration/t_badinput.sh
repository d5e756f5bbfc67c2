#!/usr/bin/env bash
# Bad input is refused before anything runs, with a clear error, and
# nothing on the machine changes.
. "$(dirname "$0")/lib.sh"
it_begin

base() { cat <<JOB
[job]
name = it-bad
pairs = 1
[swap]
device = zram
size = 64M
[variant A]
name = a
sysctl vm.swappiness = 61
[variant B]
name = b
$1
[workload w]
$2
memory.max = 64M
JOB
}

base "sysctl vm.swappiness = 62" $'type = command\ncommand = kab-no-such-program --flag' >"$IT_TMP/missing.job"
$KAB run --db "$IT_TMP/m.db" "$IT_TMP/missing.job" >"$IT_TMP/out" 2>"$IT_TMP/err"
check "missing workload binary: exit 2" [ $? -eq 2 ]
check "missing workload binary: error names file, line and program" grep -qE "missing.job:[0-9]+: .*kab-no-such-program.*not installed" "$IT_TMP/err"
check "missing workload binary: no database written" [ ! -e "$IT_TMP/m.db" ]

# hpage_pmd_size exists but is read-only: the write fails at preflight
ro=/sys/kernel/mm/transparent_hugepage/hpage_pmd_size
if [ -e "$ro" ]; then
	base "sysfs $ro = 4096" $'type = command\ncommand = true' >"$IT_TMP/ro.job"
	$KAB run --db "$IT_TMP/ro.db" "$IT_TMP/ro.job" >"$IT_TMP/out" 2>"$IT_TMP/err"
	rc=$?
	check "unwritable knob: kab run fails" [ $rc -ne 0 ]
	check "unwritable knob: error names file, line, path and errno" grep -qE "ro.job:[0-9]+: variant \"b\": cannot write \"4096\" to $ro" "$IT_TMP/err"
	check "unwritable knob: no run happened" [ "$(sql "$IT_TMP/ro.db" "select count(*) from runs")" = 0 ]
	check "unwritable knob: job marked failed with a reason" [ "$(sql "$IT_TMP/ro.db" "select status from jobs")" = failed ]
else
	IT_SKIP=$((IT_SKIP + 1)); echo "  skip unwritable knob: $ro missing"
fi

base "sysctl vm.swappiness = lots" $'type = command\ncommand = true' >"$IT_TMP/inval.job"
$KAB run --db "$IT_TMP/i.db" "$IT_TMP/inval.job" >"$IT_TMP/out" 2>"$IT_TMP/err"
check "value the kernel rejects: kab run fails before any run" [ "$(sql "$IT_TMP/i.db" "select count(*) from runs")" = 0 ]
check "value the kernel rejects: error names the value and the file" grep -q 'cannot write "lots" to /proc/sys/vm/swappiness' "$IT_TMP/err"
it_end
