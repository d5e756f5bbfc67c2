#!/usr/bin/env bash
# [swap] zswap in front of a real swap device for the whole job: zswap on,
# its shrinker on, compressor and pool size, all in force in every run and
# put back after; zswap really storing pages; the zswap counters come out
# in the report. And the bad values of those keys, each with its line.
#
# What is checked is what kab controls (the parameters it writes and reads
# back, the zram device it makes, the counters it records) and what
# follows from a fixed amount of work. How much of a run's overflow of the
# 1% pool lands in zram, and how much of it the kernel's asynchronous
# shrink worker writes back, depends on the machine's speed and memory: a
# fresh machine of this kind had pswpout 0 in one run, and this one had
# zswpwb 0 over whole jobs. Those numbers are printed, not checked.
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
args = --vm 2 --vm-bytes 1G --vm-keep --vm-method lfsr32 --vm-madvise normal --vm-ops 2048 --timeout 240
memory.max = 128M
timeout = 300s
JOB
# The work is a count, not a time: --vm-ops 2048 is one lfsr32 write pass
# over each worker's 512M (a vm bogo op is 4096 stores of 128 bytes), and
# stress-ng stops there. With --timeout 10 a run ended wherever the
# machine had got to: stress-ng first touches its whole buffer with zeros
# (the swap core keeps those in its zero map, not in zswap), and here that
# alone took most of the 10 s, leaving zswpout at 339 to 180134 a run.
# --vm-madvise normal: stress-ng otherwise picks a random madvise advice
# for the buffer in every run.
$KAB check "$IT_TMP/z.job" >"$IT_TMP/norm" 2>"$IT_TMP/err"
check "kab check accepts the zswap keys" [ $? -eq 0 ]
check "and prints them back" bash -c "grep -qx 'zswap = on' '$IT_TMP/norm' && grep -qx 'zswap.shrinker = on' '$IT_TMP/norm' &&
	grep -qx 'zswap.compressor = $comp' '$IT_TMP/norm' && grep -qx 'zswap.max_pool_percent = 1' '$IT_TMP/norm'"
db=$IT_TMP/z.db
$KAB run --db "$db" "$IT_TMP/z.job" >"$IT_TMP/out" 2>"$IT_TMP/log"
check "the job runs (exit 0)" [ $? -eq 0 ]
# kab's own actions, in its log: the zram device and each parameter
check "the log shows the 2G zram device and each zswap parameter set for the job" bash -c \
	"grep -q 'swap: /dev/zram[0-9]* (2G) enabled' '$IT_TMP/log' && grep -q 'swap: $Z/enabled=Y' '$IT_TMP/log' &&
	grep -q 'swap: $Z/shrinker_enabled=Y' '$IT_TMP/log' && grep -q 'swap: $Z/compressor=$comp' '$IT_TMP/log' &&
	grep -q 'swap: $Z/max_pool_percent=1' '$IT_TMP/log'"
# ok: a fixed amount of work with room for all of it in swap (1G of data
# against 2G of zram), so neither the OOM killer nor the timeout ends it
check "both runs ok" [ "$(sql "$db" "select count(*) from runs where status = 'ok'")" = 2 ]
# (these checks read the pairs' runs, pair >= 0: the workload's uncounted
# warm-up, the first and cold run, is checked on its own at the end)
check "each run did its fixed work: 2048 vm bogo ops, one write pass over 2 x 512M" \
	[ "$(sql "$db" "select count(*) from metrics m join runs r on r.id = m.run_id where r.pair >= 0 and m.name = 'stress-ng.bogo_ops' and m.value = 2048")" = 2 ]
# what each run had in force, as kab read it back from the kernel at the
# run (runs.knobs), and the swap it ran on (runs.swap_devices)
for kv in enabled=Y shrinker_enabled=Y compressor=$comp max_pool_percent=1; do
	check "both runs recorded zswap $kv in force" \
		[ "$(sql "$db" "select count(*) from runs where pair >= 0 and instr(knobs, '$Z/$kv' || char(10)) > 0")" = 2 ]
done
check "both runs swapped to the one zram device kab made, 2G" \
	[ "$(sql "$db" "select count(*) from runs where pair >= 0 and swap_devices glob '/dev/zram[0-9]*' and swap_devices not like '% %'
		and swap_total between 2147483648 - 1048576 and 2147483648")" = 2 ]
m() { sql "$db" "select cast($1(m.value) as int) from metrics m join runs r on r.id = m.run_id where r.pair >= 0 and m.name = '$2'"; }
# zswap stores: each run writes 1G of lfsr32 data (not zero, so not the
# zero map's) in a 128M memcg, so at least 896M of it leaves memory, and
# zswap, on and with the pool empty at the run's start (the previous
# run's entries went with its process), stores the first of it
check "zswap took pages in every run (zswpout min $(m min vmstat.zswpout))" [ "$(m min vmstat.zswpout)" -gt 0 ]
# every page the pool writes back is written to the swap device behind it
# (counted in pswpout too), and the only swap is kab's zram; both counters
# are final once the workload has exited, when its entries are gone
check "in every run zram got at least the pages the pool wrote back (pswpout >= zswpwb)" \
	[ "$(sql "$db" "select count(*) from runs r where r.pair >= 0 and (select value from metrics where run_id = r.id and name = 'vmstat.pswpout')
		>= (select value from metrics where run_id = r.id and name = 'vmstat.zswpwb')")" = 2 ]
echo "  measured, not checked (the machine's speed and memory decide them): zram behind the 1% pool got" \
	"pswpout $(m min vmstat.pswpout)..$(m max vmstat.pswpout) pages a run, the pool wrote back" \
	"zswpwb $(m min vmstat.zswpwb)..$(m max vmstat.zswpwb) a run, zswap stored zswpout" \
	"$(m min vmstat.zswpout)..$(m max vmstat.zswpout)"
check "every run recorded zswpout, zswpwb and pswpout (a counter that did not move is a 0, not missing)" \
	[ "$(sql "$db" "select count(*) from metrics m join runs r on r.id = m.run_id where r.pair >= 0 and m.name in ('vmstat.zswpout', 'vmstat.zswpwb', 'vmstat.pswpout')")" = 6 ]
check "the uncounted warm-up ran with zswap on in force too" \
	[ "$(sql "$db" "select count(*) from runs where status = 'warmup' and pair = -1 and instr(knobs, '$Z/enabled=Y' || char(10)) > 0")" = 1 ]
$KAB report 1 --db "$db" >"$IT_TMP/report"
# the table leaves out a counter that stayed 0 in every run, so zswpwb and
# pswpout are in it only when they moved; zswpout always did
check "the table has zswpout" grep -q 'vmstat.zswpout' "$IT_TMP/report"
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
