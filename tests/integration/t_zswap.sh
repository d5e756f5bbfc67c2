#!/usr/bin/env bash
# [swap] zswap in front of a real swap device for the whole job: zswap on,
# its shrinker writing back to zram, compressor and pool size; the zswap
# counters come out in the table; every zswap parameter is put back after.
# And the bad values of those keys, each with its line.
. "$(dirname "$0")/lib.sh"
it_begin
Z=/sys/module/zswap/parameters
[ -w $Z/enabled ] || skip_all "this kernel has no zswap module parameters ($Z)"
[ -e $Z/shrinker_enabled ] || skip_all "this kernel's zswap has no shrinker_enabled"
params=(enabled shrinker_enabled compressor max_pool_percent)
before=$(for p in "${params[@]}"; do echo "$p=$(cat $Z/$p)"; done)
restore() { local l; while IFS= read -r l; do echo "${l#*=}" >"$Z/${l%%=*}" 2>/dev/null; done <<<"$before"; }
trap 'restore; it_cleanup' EXIT
comp=lzo
grep -qw lz4 /proc/crypto 2>/dev/null || modprobe -q lz4 2>/dev/null
grep -qw lz4 /proc/crypto 2>/dev/null && comp=lz4

cat >"$IT_TMP/z.job" <<JOB
[job]
name = it-zswap
pairs = 1
interval = 0.2s
[swap]
device = zram
size = 2G
zswap = on
zswap.shrinker = on
zswap.compressor = $comp
zswap.max_pool_percent = 1
[variant A]
name = swappy-60
sysctl vm.swappiness = 60
[variant B]
name = swappy-100
sysctl vm.swappiness = 100
[workload vm]
type = stress-ng
args = --vm 2 --vm-bytes 2G --vm-keep --vm-method lfsr32 --timeout 10
memory.max = 128M
JOB
$KAB check "$IT_TMP/z.job" >"$IT_TMP/norm" 2>"$IT_TMP/err"
check "kab check accepts the zswap keys" [ $? -eq 0 ]
check "and prints them back" bash -c "grep -qx 'zswap = on' '$IT_TMP/norm' && grep -qx 'zswap.shrinker = on' '$IT_TMP/norm' &&
	grep -qx 'zswap.compressor = $comp' '$IT_TMP/norm' && grep -qx 'zswap.max_pool_percent = 1' '$IT_TMP/norm'"
db=$IT_TMP/z.db
$KAB run --db "$db" "$IT_TMP/z.job" >"$IT_TMP/out" 2>"$IT_TMP/log"
check "the job runs (exit 0)" [ $? -eq 0 ]
check "the log shows zswap set for the job" grep -q "swap: $Z/enabled=Y" "$IT_TMP/log"
check "both runs ok" [ "$(sql "$db" "select count(*) from runs where status = 'ok'")" = 2 ]
# over the pairs' runs: the workload's warm-up (the first, cold run, not
# counted) is left out of what these checks say about every run
m() { sql "$db" "select cast(min(m.value) as int) from metrics m join runs r on r.id = m.run_id where m.name = '$1' and r.pair >= 0"; }
check "zswap took pages in every run (zswpout min $(m vmstat.zswpout))" [ "$(m vmstat.zswpout)" -gt 0 ]
# zram behind zswap gets pages in every run: written back, or stored there
# when the full pool rejects them. The workload must overflow the 1% pool
# (245 MB on 24 GiB): lfsr32 data compresses about 3:1, and with
# --vm-bytes 1G the compressed data sat at the pool's edge, so one run in
# four never filled it (pswpout 0); with 2G every run fills it (pswpout at
# least 126k pages in 4 runs). How much of that is writeback (the
# kernel's asynchronous shrink worker) varies from run to run, so the
# writeback itself is asserted over the job.
check "zram behind the 1% pool got pages in every run (pswpout min $(m vmstat.pswpout))" [ "$(m vmstat.pswpout)" -gt 0 ]
wb=$(sql "$db" "select cast(sum(m.value) as int) from metrics m join runs r on r.id = m.run_id where m.name = 'vmstat.zswpwb' and r.pair >= 0")
check "the pool wrote back to zram (zswpwb $wb over the job, min $(m vmstat.zswpwb) a run)" [ "${wb:-0}" -gt 0 ]
check "the runs recorded zswap on in force (the warm-up too)" [ "$(sql "$db" "select count(*) from runs where knobs like '%$Z/enabled=Y%'")" = 3 ]
$KAB report 1 --db "$db" >"$IT_TMP/report"
check "the table has zswpout and zswpwb" bash -c "grep -q 'vmstat.zswpout' '$IT_TMP/report' && grep -q 'vmstat.zswpwb' '$IT_TMP/report'"
after=$(for p in "${params[@]}"; do echo "$p=$(cat $Z/$p)"; done)
check "every zswap parameter is back as it was" [ "$before" = "$after" ]
check "journal empty" [ "$(sql "$db" "select count(*) from journal")" = 0 ]

# ---- bad values, each with its line ----
bad() { # description, line, pattern, key = value
	local d=$1 line=$2 pat=$3 kv=$4
	sed "s|^zswap = on\$|$kv|" "$IT_TMP/z.job" >"$IT_TMP/bad.job"
	$KAB check "$IT_TMP/bad.job" >/dev/null 2>"$IT_TMP/err"
	check "$d: exit 2 with line $line" bash -c "[ $? -eq 2 ] && grep -q 'bad.job:$line: .*$pat' '$IT_TMP/err'"
}
bad "zswap = maybe" 8 'choices: keep, off, on' "zswap = maybe"
bad "zswap.max_pool_percent = 0" 8 'out of range' "zswap.max_pool_percent = 0"
bad "zswap.max_pool_percent = 101" 8 'out of range' "zswap.max_pool_percent = 101"
bad "zswap.shrinkr (a typo)" 8 'did you mean' "zswap.shrinkr = on"
bad "zswap.compressor = no such" 8 'zswap.compressor' "zswap.compressor = no such"
if compgen -G "/sys/block/zram*/comp_algorithm" >/dev/null; then
	bad "zram algorithm = nosuchzip, naming those zram has" 8 "algorithm = nosuchzip: zram here has no such compressor; it has: .*lzo" "algorithm = nosuchzip"
else
	IT_SKIP=$((IT_SKIP + 1)); echo "  skip zram algorithm = nosuchzip: no zram device to ask for its algorithms"
fi
bad "zswap.compressor = nosuchzip (a compressor the kernel lacks), naming those it has" 8 "no nosuchzip compressor .*use one it has (.*$comp" "zswap.compressor = nosuchzip"
check "nothing changed by the failed checks" [ "$before" = "$(for p in "${params[@]}"; do echo "$p=$(cat $Z/$p)"; done)" ]
it_end
