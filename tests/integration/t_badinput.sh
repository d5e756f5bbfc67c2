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

# hpage_pmd_size exists but is read-only: refused before anything is touched
ro=/sys/kernel/mm/transparent_hugepage/hpage_pmd_size
if [ -e "$ro" ]; then
	base "sysfs $ro = 4096" $'type = command\ncommand = true' >"$IT_TMP/ro.job"
	$KAB run --db "$IT_TMP/ro.db" "$IT_TMP/ro.job" >"$IT_TMP/out" 2>"$IT_TMP/err"
	check "read-only knob: exit 2" [ $? -eq 2 ]
	check "read-only knob: error names file, line and path" grep -qE "ro.job:[0-9]+: sysfs $ro is read-only" "$IT_TMP/err"
	check "read-only knob: no database written" [ ! -e "$IT_TMP/ro.db" ]
else
	IT_SKIP=$((IT_SKIP + 1)); echo "  skip read-only knob: $ro missing"
fi

# a value the kernel refuses is only found by writing it: kab tries every
# knob value once before the first run and puts it back
base "sysctl vm.swappiness = lots" $'type = command\ncommand = true' >"$IT_TMP/inval.job"
$KAB run --db "$IT_TMP/i.db" "$IT_TMP/inval.job" >"$IT_TMP/out" 2>"$IT_TMP/err"
check "value the kernel rejects: kab run fails before any run" [ "$(sql "$IT_TMP/i.db" "select count(*) from runs")" = 0 ]
check "value the kernel rejects: error names file, line, value and path" grep -qE 'inval.job:[0-9]+: variant "b": cannot write "lots" to /proc/sys/vm/swappiness' "$IT_TMP/err"
check "value the kernel rejects: job recorded failed with the reason" [ "$(sql "$IT_TMP/i.db" "select status from jobs")" = failed ]
check "value the kernel rejects: swappiness untouched, journal empty" [ "$(sql "$IT_TMP/i.db" "select count(*) from journal")" = 0 ]
it_end
