#!/usr/bin/env bash
# A real mm series measured end to end, as on a lab machine, in QEMU
# (software emulation): kab builds a baseline and a patched kernel from a
# git tree of Debian's linux-source-6.1 (tinyconfig plus
# tests/qemu/guest-6.1.config), the patched one with seed 004's patches 1
# and 3 backported to 6.1 (tests/data/kernels/004-lru-drain-6.1.mbox,
# applied by kab with git am). The guest boots the baseline kab built; its
# kabd runs a job over both builds (the ones recorded on the host, by id),
# 6 boots of each in ABBA order, kexec between the two built kernels after
# every boot, seed 004's mmap / fill / MADV_PAGEOUT / write-again loop in
# a memcg with fcount = lru_add_drain counted by the guest kernel's
# function tracer. The host reads the guest's database and checks that the
# table says what the patch did: fewer lru_add_drain() calls, better.
#
# The swap: zswap in front of a swap file on the guest's virtio disk, not
# zram. On 6.1 a swap-in from zram (a synchronous device) with a swap
# count of 1 skips the swap cache, so it never reaches do_swap_page's
# drain (measured: 197 calls on the baseline against 196 with zram over
# 3 repetitions of 25,600 pages). zswap stores synchronously, so the pages
# leave the swap cache at the pageout, and the file is not synchronous, so
# the refault reads them back through the swap cache: the path the
# backported patch 2 drops a drain from. Both variants run with
# vm.page-cluster = 0: with readahead, swap_cluster_readahead drains the
# LRU caches itself after reading (mm/swap_state.c), so do_swap_page finds
# the page on the LRU and does not drain; without it, every write refault
# of a page in the swap cache drains, as every one does upstream.
#
# Then, with kab-built kernels on the host's kabd: a series that does not
# apply (the posting's own patch 1, against a newer tree) and a build that
# fails end the job failed, with the reason.
#
# The builds are cached (/var/cache/kab/test-patch: their database and
# kernels; the objects in the kernel tests' work directory), so a warm run
# compiles nothing. KAB_PATCH_BOOTS (default 6) sets the boots a variant.
. "$(dirname "$0")/lib.sh"
it_begin QEMU
for p in git gcc make flex bison bc cpio qemu-system-x86_64 mkfs.ext4 debugfs dumpe2fs /usr/bin/python3; do
	command -v "$p" >/dev/null || skip_all "$p is not installed"
done
[ -x /bin/busybox ] || skip_all "busybox-static is not installed"
for p in build/kabd build/kab-pageout; do [ -x "$p" ] || skip_all "$p is not built"; done
. tests/integration/kernel_tree.sh
kt_build_user
t_cleanup() { it_cleanup; kt_cleanup; }
trap t_cleanup EXIT
kt_git_tree
skip() { skip_all "$@"; }
. tests/qemu/lib.sh

tmp=$IT_TMP
BOOTS=${KAB_PATCH_BOOTS:-6}
CACHE=${KAB_TEST_PATCH_CACHE:-/var/cache/kab/test-patch}
# the lab machine's state directory: where the host builds the kernels and
# where the guest mounts its disk, so the paths the builds recorded hold
# on both
LAB=$CACHE/lab
BUILDS_DB=$CACHE/builds.db
SERIES=$PWD/tests/data/kernels/004-lru-drain-6.1.mbox
mkdir -p "$LAB" && chmod 700 "$CACHE" "$LAB"

build_variant() { # NAME [SERIES]: a [variant] that kab builds for the guest
	cat <<JOB
[variant ${3:-A}]
name = $1
kernel = build
tree = $KT_TREE
base = $KT_BASE
config = tinyconfig
config.fragment = $PWD/tests/qemu/guest-6.1.config
${2:+series = $2}
JOB
}
swap_and_workload() {
	cat <<JOB
[swap]
device = file
size = 512M
zswap = on

[workload loop]
type = pageout
size = 100M
reps = 3
fill = pattern
refault = yes
memory.max = 192M
timeout = 600s
fcount = lru_add_drain

[metric fcount.lru_add_drain]
direction = lower
label = lru_add_drain() calls
JOB
}

# ---- 1: kab build on the host: baseline and patched ----
{
	printf '[job]\nname = seed-004-lru-drain-6.1\n\n'
	build_variant base
	build_variant drop-drain "$SERIES" B
	swap_and_workload
} >"$tmp/host.job"
echo "  building the baseline and the patched kernel (cached in $CACHE)"
t0=$SECONDS
nice -n 5 "$KAB" build --db "$BUILDS_DB" --kernels-dir "$LAB/kernels" --work-dir "$KT_WORK" "$tmp/host.job" >"$tmp/build.out" 2>&1
rc=$?
check "kab build of the baseline and the patched kernel exits 0 ($((SECONDS - t0)) s)" [ $rc -eq 0 ]
[ $rc -eq 0 ] || tail -n 30 "$tmp/build.out" | sed 's/^/    /'
grep -E '^variant' "$tmp/build.out" | sed 's/^/    /'
A=$(sed -nE 's/^variant base: build ([0-9]+).*/\1/p' "$tmp/build.out")
B=$(sed -nE 's/^variant drop-drain: build ([0-9]+).*/\1/p' "$tmp/build.out")
[ -n "$A" ] && [ -n "$B" ] || skip_all "no builds to boot (kab build failed)"
bq() { sql "$BUILDS_DB" "$1"; }
check "two builds with different kernelreleases" [ "$(bq "select count(distinct kernelrelease) from builds where id in ($A, $B) and status = 'ok'")" = 2 ]
check "the patched build applied both backported patches, in order" \
	[ "$(bq "select patches from builds where id = $B" | grep -v '^$' | cut -f1 | tr '\n' '|')" = "[PATCH 1/2] mm: avoid unnecessary lru drain for wp_can_reuse_anon_folio()|[PATCH 2/2] mm: entirely remove lru_add_drain in do_swap_page|" ]
check "both on the same base commit" [ "$(bq "select count(distinct base_sha) from builds where id in ($A, $B)")" = 1 ]
objs=$(bq "select objects from builds where id = $B")
check "the patched build compiled only what its series touches and the kernelrelease: $objs objects" \
	eval '[ -n "$objs" ] && [ "$objs" -ge 1 ] && [ "$objs" -le 25 ]'
base_objs=$(bq "select objects from builds where id = $A")
if grep -q "^variant base: build $A reused" "$tmp/build.out"; then
	echo "    warm: the baseline was reused, not rebuilt (it compiled $base_objs objects when it was built)"
else
	echo "    cold: the baseline compiled $base_objs objects"
fi
for id in $A $B; do
	check "build $id's image is in the lab's kernels directory" [ -s "$LAB/kernels/$id/bzImage" ]
done

# ---- 2: the guest: its disk and its initramfs ----
qemu_root_init "$tmp/root" tests/qemu/guest-kexec.sh
echo "$LAB" >"$qemu_root/etc/kabt-state"
for p in build/kab build/kabd build/kab-pageout; do
	qemu_copy_bin "$PWD/$p"
	cp "$p" "$qemu_root/usr/bin/"
done
qemu_copy_bin "$(command -v sqlite3)"
qemu_cpio "$tmp/initrd.gz"

# the job the guest's kabd runs: both builds by id, ABBA, one run a boot;
# one primary metric (two are Holm-adjusted, and 6 boots' smallest p, 1/32,
# doubled is above 0.05), the system time a secondary one
{
	cat <<JOB
[job]
name = seed-004-lru-drain-6.1
boots = $BOOTS
runs_per_boot = 1
interval = 0.5s
panic = 3
primary = fcount.lru_add_drain
metrics = rusage.sys_s

[variant A]
name = base
kernel = build
build = $A
sysctl vm.page-cluster = 0
initrd = $LAB/img/initrd.gz

[variant B]
name = drop-drain
kernel = build
build = $B
sysctl vm.page-cluster = 0
initrd = $LAB/img/initrd.gz

JOB
	swap_and_workload
} >"$tmp/guest.job"
stage=$tmp/stage
mkdir -p "$stage/img" "$stage/kernels"
chmod 700 "$stage"
cp "$tmp/initrd.gz" "$stage/img/initrd.gz"
cp -a "$LAB/kernels/$A" "$LAB/kernels/$B" "$stage/kernels/"
cp "$tmp/guest.job" "$stage/job.kab"
# the guest's database starts as the host's build records
sqlite3 "$BUILDS_DB" ".backup '$stage/kab.db'"
mkfs.ext4 -q -F -d "$stage" "$tmp/lab.img" 1G || skip_all "mkfs.ext4 -d failed"

# ---- 3: boot the baseline kab built; kabd switches from there ----
nboots=$((2 * BOOTS))
echo "  booting QEMU on build $A (software emulation): $nboots boots by kexec, one run each"
t0=$SECONDS
timeout 2400 qemu-system-x86_64 -accel tcg -m 1536 -smp 2 -nographic \
	-kernel "$LAB/kernels/$A/bzImage" -initrd "$tmp/initrd.gz" -append "console=ttyS0 quiet" \
	-drive "file=$tmp/lab.img,format=raw,if=virtio" </dev/null >"$tmp/lab.console" 2>&1 8>&- &
QEMU_PID=$!
IT_PIDS+=("$QEMU_PID")
wait "$QEMU_PID"
qrc=$?
mkdir -p tests/out && tr -d '\r' <"$tmp/lab.console" >tests/out/patch-lab.console
guest_s=$((SECONDS - t0))
check "the guest ran the job to its end and powered off ($guest_s s, qemu exit $qrc)" grep -q '^KABT done' "$tmp/lab.console"
grep -q '^KABT done' "$tmp/lab.console" || tr -d '\r' <"$tmp/lab.console" | grep -v '^\s*$' | tail -n 40 | sed 's/^/    /'

db=$tmp/lab.db
debugfs -R "dump /kab.db $db" "$tmp/lab.img" >/dev/null 2>&1
[ -s "$db" ] || { fail "the guest's database is on its disk"; it_end; exit; }
chmod 600 "$db"
check "the guest unmounted its disk cleanly" \
	[ "$(dumpe2fs -h "$tmp/lab.img" 2>/dev/null | awk -F: '/^Filesystem state/ {gsub(/ /, "", $2); print $2}')" = clean ]
q() { sql "$db" "$1"; }
check "the job is done" [ "$(q "select status from jobs where id = 1")" = done ]
check "the guest's builds are the host's (ids, inputs, kernelreleases)" \
	[ "$(q "select group_concat(id || ':' || inputs_key || ':' || kernelrelease, ' ') from builds where id in ($A, $B)")" = \
	  "$(bq "select group_concat(id || ':' || inputs_key || ':' || kernelrelease, ' ') from builds where id in ($A, $B)")" ]
check "the guest built nothing" [ "$(q "select count(*) from builds")" = "$(bq "select count(*) from builds")" ]
check "the variants are builds $A and $B" [ "$(q "select group_concat(build_id, ' ') from (select build_id from variants where job_id = 1 order by idx)")" = "$A $B" ]
check "$nboots boots, all ok, all by kexec" [ "$(q "select count(*) || '/' || sum(status = 'ok' and method = 'kexec') from boots")" = "$nboots/$nboots" ]
abba=$(for i in $(seq 1 $((BOOTS / 2))); do printf 0110; done)
[ $((BOOTS % 2)) = 1 ] && abba=${abba}01
check "the boots went A B B A ..." [ "$(q "select group_concat(variant_idx, '') from (select variant_idx from boots order by id)")" = "$abba" ]
check "$BOOTS boots of each variant, each on its variant's build" \
	[ "$(q "select group_concat(n, ' ') from (select count(*) n from boots where status = 'ok' and build_id = case variant_idx when 0 then $A else $B end group by variant_idx order by variant_idx)")" = "$BOOTS $BOOTS" ]
# besides them the workload's uncounted warm-up, in the first boot (A's)
# before its run there: no boot of its own
check "$nboots runs, all ok, one in each boot" \
	[ "$(q "select count(*) || '/' || sum(status = 'ok') || '/' || count(distinct boot_id) from runs where pair >= 0")" = "$nboots/$nboots/$nboots" ]
check "and the warm-up, first, in A's first boot" \
	[ "$(q "select count(*) || '/' || min(r.id = (select min(id) from runs) and r.status = 'warmup' and r.variant_idx = 0
		and r.boot_id = (select boot_id from boots order by id limit 1)) from runs r where r.pair = -1")" = 1/1 ]
check "every run on the build its variant names (boot, kab.build marker, kernelrelease)" \
	[ "$(q "select count(*) from runs r join boots b on b.boot_id = r.boot_id join builds k on k.id = b.build_id
		join variants v on v.job_id = 1 and v.idx = r.variant_idx
		where r.status = 'ok' and b.variant_idx = r.variant_idx and k.id = v.build_id
		and r.kernel_release = k.kernelrelease and r.cmdline like '%kab.build=' || k.id || '%'")" = $nboots ]
check "lru_add_drain() was counted in every run, by the function tracer" \
	[ "$(q "select count(*) from metrics m join runs r on r.id = m.run_id where r.pair >= 0 and m.name = 'fcount.lru_add_drain'")/$(q "select count(*) from run_unavailable where metric like 'fcount.%'")" = "$nboots/0" ]
check "the refault went through swap in every run (every page swapped out)" \
	[ "$(q "select count(*) from metrics m join runs r on r.id = m.run_id where r.pair >= 0 and m.name = 'pageout.swapped_pct' and m.value >= 99")" = $nboots ]
check "the guest left no cgroup, swap or journal entry" grep -q 'KABT cleanup: kab cgroups 0, swaps 0, journal 0' "$tmp/lab.console"
check "PRAGMA integrity_check is ok" [ "$(q "pragma integrity_check")" = ok ]

# ---- 4: the table ----
"$KAB" report 1 --db "$db" >"$tmp/report.txt" 2>&1
"$KAB" report 1 --db "$db" --format json >"$tmp/report.json" 2>"$tmp/report.err"
"$KAB" report 1 --db "$db" --format cover-letter >"$tmp/cover.txt" 2>&1
cp "$tmp/report.txt" tests/out/patch-report.txt
cp "$tmp/cover.txt" tests/out/patch-cover.txt
echo "  the guest's report (kab report 1):"
sed 's/^/    | /' "$tmp/report.txt"
# METRIC FIELD...: the fields of METRIC's comparison of B against A, and
# each variant's n, from the JSON report
jfield() {
	/usr/bin/python3 - "$tmp/report.json" "$@" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
m = [m for w in r["workloads"] for m in w["metrics"] if m["name"] == sys.argv[2]][0]
out = []
for f in sys.argv[3:]:
    if f == "n":
        out.append("/".join(str(v["n"]) for v in m["variants"]))
    else:
        v = m[f]
        out.append("%.6g" % v if isinstance(v, float) else str(v))
print(" ".join(out))
EOF
}
read -r d_n d_verdict d_pct d_lo d_hi d_p <<<"$(jfield fcount.lru_add_drain n verdict delta_pct ci_low_pct ci_high_pct p_value 2>"$tmp/jfield.err")"
echo "    fcount.lru_add_drain: n $d_n, delta $d_pct%, 95% CI [$d_lo, $d_hi]%, p $d_p, $d_verdict"
check "fcount.lru_add_drain: n = $BOOTS boots on each side" [ "${d_n:-}" = "$BOOTS/$BOOTS" ]
check "fcount.lru_add_drain: the verdict is better" [ "${d_verdict:-}" = better ]
check "fcount.lru_add_drain: fewer calls on the patched kernel, the whole CI below 0" \
	eval '[ -n "${d_hi:-}" ] && awk -v lo="$d_lo" -v hi="$d_hi" -v d="$d_pct" "BEGIN { exit !(d < 0 && lo < 0 && hi < 0) }"'
check "the text table shows it: fcount.lru_add_drain ... better" grep -qE '^fcount\.lru_add_drain .*better$' "$tmp/report.txt"
check "the report names both builds (base sha, the patch subjects, kernelreleases)" \
	eval 'grep -q "$(bq "select substr(base_sha, 1, 12) from builds where id = $A")" "$tmp/report.txt" &&
		grep -q "mm: entirely remove lru_add_drain in do_swap_page" "$tmp/report.txt" &&
		grep -q "$(bq "select kernelrelease from builds where id = $B")" "$tmp/report.txt"'
check "the report shows $BOOTS boots of each variant" \
	[ "$(grep -cE "^  (base|drop-drain): build ($A|$B) \(.*\): $BOOTS boots, 0 failed" "$tmp/report.txt")" = 2 ]
echo "  kab report 1 --format cover-letter:"
sed 's/^/    | /' "$tmp/cover.txt"
check "the cover letter carries the lru_add_drain() row" grep -q 'lru_add_drain' "$tmp/cover.txt"

# ---- 5: a series that does not apply, a build that fails: the job fails, with the reason ----
bad_job() { # NAME SERIES
	{
		printf '[job]\nname = %s\nswitch = reboot\n\n' "$1"
		build_variant base
		build_variant patched "$2" B
		swap_and_workload
	} >"$tmp/$1.job"
}
bad_job noapply "$PWD/tests/data/kernels/004-upstream-patch1.mbox"
bad_job broken "$PWD/tests/data/kernels/broken-build-6.1.mbox"
KAB_SWITCH_DRY_RUN=1 KAB_KBUILD_WORK=$KT_WORK KAB_KERNELS_DIR=$tmp/kernels kabd_up --db "$tmp/host.db"
if [ -n "$PORT" ]; then
	for n in noapply broken; do
		code=$(curl -s -o "$tmp/body" -w '%{http_code}' -H "$AUTH" -H "$JOB_CT" -X POST --data-binary @"$tmp/$n.job" "$URL/api/v1/jobs")
		id=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$tmp/body" 2>/dev/null)
		check "$n: kabd takes the job (HTTP $code)" [ "$code" = 201 -a -n "$id" ]
		ended() { local s; s=$(sql "$tmp/host.db" "select status from jobs where id = ${id:-0}"); echo "job ${id:-?}: ${s:-?}"; [ "$s" = failed ] || [ "$s" = done ]; }
		wait_for -s "tail -n 15 '$IT_TMP/kabd.log'" "the $n job to end" 900 ended
		reason=$(sql "$tmp/host.db" "select status || ': ' || coalesce(reason, '') from jobs where id = ${id:-0}")
		echo "    $n: $reason" | cut -c1-400
		case $n in
		noapply) check "noapply: the job failed, naming the patch, the file and the hunk" \
			eval '[[ "$reason" =~ ^failed:.*patch\ 1\ of\ 1\ \"\[PATCH\]\ mm:\ avoid\ unnecessary\ lru\ drain.*does\ not\ apply:\ mm/memory.c,\ hunk\ @@\ -4193 ]]' ;;
		broken) check "broken: the job failed with the compiler's error from the build log" \
			eval '[[ "$reason" =~ ^failed:.*make\ failed.*kab-test-broken-build ]]'
			check "broken: the failed build is recorded with its log tail" \
				[ "$(sql "$tmp/host.db" "select count(*) from builds where status = 'failed' and log_tail like '%kab-test-broken-build%'")" = 1 ] ;;
		esac
		check "$n: no run was made" [ "$(sql "$tmp/host.db" "select count(*) from runs r join steps s on s.id = r.step_id where s.job_id = ${id:-0}")" = 0 ]
	done
	kabd_stop
else
	fail "kabd starts on the host's test database"
fi
it_end
