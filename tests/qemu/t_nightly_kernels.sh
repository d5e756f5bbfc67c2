#!/usr/bin/env bash
# Nightly tracking, the whole loop with kernels, in QEMU (issue 17, "The
# whole loop with kernels"): a local bare origin of the test tree of
# Debian's linux-source-6.1 (tests/integration/kernel_tree.sh) gets one
# commit a night, pushed to its main. Nights 1 to NIGHTS but K append a
# comment to mm/vmscan.c; night K's commit is a real regression
# (tests/data/kernels/nightly-regression-6.1.patch: do_swap_page drains
# the LRU caches three times where it drained once, on the path every
# write refault of a swapped page takes with zswap in front of a swap
# file and vm.page-cluster = 0: see t_patch.sh), and the commits after it
# keep it. Each night, on the host, kab build builds the night's job:
# variant A (release) at the fixed base, built once and reused, and
# variant B (head) with track = origin main, fetched and built
# incrementally in the same object directory; its output names the head
# (sha) and the build. A lab builds and runs each night in turn; here the
# nights are built first, so that one QEMU process (software emulation)
# runs them all: the guest boots the release kab built, and its kabd gets
# the nights back to back, one job name, each with both builds by id
# (tests/qemu/guest-nightly.sh submits them): boots kexec'd by kabd,
# t_patch's pageout loop with fcount =
# lru_add_drain counted by the guest kernel's function tracer, primary
# fcount.lru_add_drain. After each night kabd updates the history; from
# night K + 3 on, the detector (4 nights a side) has the change point and
# kabd queues its confirmation: night K-1's head build against night K's,
# ABBA, adaptive 6 to 16 pairs. The host reads the guest's database: every
# night done, NIGHTS measured nights and one change point, first bad night
# K, last good K-1; the change confirmed worse with its CI above 0, its
# job on builds of nights K-1 and K; and the host's night -> sha map says
# night K's build is the regression commit.
#
# Why its own target (make check-nightly-kernels), not make check (which
# runs every tests/integration/t_*.sh): under TCG every boot is a kexec, a
# kernel coming up in software emulation and a pageout run under the
# function tracer; NIGHTS nights of 2 x BOOTS boots and a confirmation of
# 12 to 32 boots are about 20 to 30 minutes, beyond make check's budget
# (t_patch's 12 boots are its longest test). Measured here on 2026-12-01
# (`make check-nightly-kernels`, 2 CPUs, the test tree's objects cached,
# its nightly tree and builds not): 18 min 20 s in all; the host's builds
# 578 s (the first, a whole tinyconfig kernel, 323 s; each night's head
# after it 22 to 31 s, 10 or 11 objects), the guest 515 s (20 boots for
# the nights, 12 for the confirmation, by kexec); 28 passed, 0 failed.
# A warm run reuses every build (the commits' dates are fixed, so their
# shas are the same every run).
#
# Boots: one pair a night (KAB_NIGHTLY_BOOTS, default 1). One pair is the
# fewest that gives a night's estimate (stats.c, run_paired: one pair is
# an estimate with no interval), and the detector reads only the nights'
# estimates; fcount counts are nearly the same run after run, so a night's
# one pair is its value. The confirmation has its own pairs (6 to 16).
#
# The commits have fixed dates, so each night's sha is the same on every
# run on a machine: a warm run (the cache below) reuses every build and
# compiles nothing; remove the cache directory (database and kernels
# together) to build the nights again, incrementally: the objects stay in
# the kernel tests' work directory.
#
# Knobs: NIGHTS (default 10) and K (default 6), the nights and the first
# bad one (K - 1 >= 4 and NIGHTS - K + 1 >= 4: the detector's segments);
# KAB_NIGHTLY_BOOTS (1); KAB_TEST_NIGHTLY_CACHE (default
# /var/cache/kab/test-nightly-kernels: the builds' database and kernels);
# KAB_TEST_NIGHTLY_TREE (default /var/cache/kab/test-nightly-tree: the
# tree the builds read, made again each run; its path keys the object
# directory); kernel_tree.sh's KAB_TEST_LINUX_GIT and KAB_TEST_KBUILD_WORK.
. "$(dirname "$0")/../integration/lib.sh"
it_begin
for p in git gcc make flex bison bc cpio sqlite3 qemu-system-x86_64 mkfs.ext4 debugfs dumpe2fs /usr/bin/python3; do
	command -v "$p" >/dev/null || skip_all "$p is not installed"
done
[ -x /bin/busybox ] || skip_all "busybox-static is not installed"
for p in build/kabd build/kab-pageout; do [ -x "$p" ] || skip_all "$p is not built"; done
NIGHTS=${NIGHTS:-10}
K=${K:-6}
BOOTS=${KAB_NIGHTLY_BOOTS:-1}
case "$NIGHTS:$K:$BOOTS" in
*[!0-9:]* | :* | *::* | *:) fail "NIGHTS=$NIGHTS K=$K KAB_NIGHTLY_BOOTS=$BOOTS: numbers"; it_end; exit ;;
esac
if [ "$K" -lt 5 ] || [ $((NIGHTS - K + 1)) -lt 4 ] || [ "$BOOTS" -lt 1 ]; then
	fail "NIGHTS=$NIGHTS K=$K: the detector needs 4 nights each side of the change (K >= 5, NIGHTS >= K + 3), and KAB_NIGHTLY_BOOTS at least 1"
	it_end
	exit
fi
. tests/integration/kernel_tree.sh
kt_build_user
t_cleanup() { it_cleanup; kt_cleanup; }
trap t_cleanup EXIT
kt_git_tree
skip() { skip_all "$@"; }
. tests/qemu/lib.sh

tmp=$IT_TMP
T0=$SECONDS
NAME=nightly-kernels-6.1
CACHE=${KAB_TEST_NIGHTLY_CACHE:-/var/cache/kab/test-nightly-kernels}
# the lab machine's state directory: where the host builds the kernels and
# where the guest mounts its disk, so the paths the builds recorded hold
# on both (as in t_patch)
LAB=$CACHE/lab
BUILDS_DB=$CACHE/builds.db
TREE=${KAB_TEST_NIGHTLY_TREE:-/var/cache/kab/test-nightly-tree}
ORIGIN=$tmp/origin.git
W=$tmp/w
REGRESSION=$PWD/tests/data/kernels/nightly-regression-6.1.patch
FRAGMENT=$PWD/tests/qemu/guest-6.1.config
mkdir -p "$LAB" && chmod 700 "$CACHE" "$LAB"

# ---- 1: the origin, the tree that tracks it, and a clone to commit in ----
# origin: a bare clone of the test tree, main at the base; the tree the
# builds read: a clone whose remote origin is it (a fixed path, so that
# its worktree and objects in the work directory are found again; made
# again each run, as t_track does); W: where the nights' commits are made
# (no checkout: the index alone, the tree is 1 GB of files)
[ ! -e "$TREE" ] || [ -d "$TREE/.git" ] || skip_all "$TREE is there and is not a git tree (KAB_TEST_NIGHTLY_TREE)"
rm -rf "$TREE"
git clone -q --bare --shared "$KT_TREE" "$ORIGIN" && git -C "$ORIGIN" branch -q -f main "$KT_BASE" ||
	skip_all "cannot make the origin $ORIGIN"
git clone -q --shared --no-checkout "$KT_TREE" "$TREE" && git -C "$TREE" remote set-url origin "$ORIGIN" ||
	skip_all "cannot make the tracking tree $TREE"
git clone -q --shared --no-checkout -b main "$ORIGIN" "$W" && git -C "$W" read-tree HEAD ||
	skip_all "cannot clone $ORIGIN"
chmod -R a+rX "$ORIGIN" "$TREE" && chmod a+x "$tmp"
base_sha=$(git -C "$KT_TREE" rev-parse "$KT_BASE^{commit}")
git -C "$W" apply --cached --check "$REGRESSION" ||
	{ fail "the regression patch applies to the base's mm/memory.c"; it_end; exit; }

g() { git -C "$W" -c user.name="Kab Test" -c user.email=kab@localhost -c commit.gpgsign=false "$@"; }
# push_night N: night N's commit, pushed to origin main. Dated 02:00 UTC
# of day N of 2025, so that its sha is the same on every run.
push_night() {
	local n=$1 date msg blob f=$tmp/vmscan.c
	date="$((1735696800 + (n - 1) * 86400)) +0000"
	if [ "$n" = "$K" ]; then
		g apply --cached "$REGRESSION" || return 1
		msg="mm/memory: drain the LRU caches three times before mapping a swapped-in page writable (night $n)"
	else
		g show HEAD:mm/vmscan.c >"$f" && echo "/* kab nightly test: night $n */" >>"$f" &&
			blob=$(g hash-object -w "$f") && g update-index --cacheinfo "100644,$blob,mm/vmscan.c" || return 1
		msg="mm/vmscan: a comment (night $n)"
	fi
	GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date g commit -q --no-verify -m "$msg" && g push -q origin HEAD:main &&
		chmod -R a+rX "$ORIGIN"
}
drains() { git -C "$ORIGIN" show "$1:mm/memory.c" | grep -c 'lru_add_drain();'; } # SHA: the calls in mm/memory.c

swap_and_workload() { # as t_patch's
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
host_variant() { # LABEL NAME LINE: a variant kab builds from the tree, LINE its base or its track
	cat <<JOB
[variant $1]
name = $2
kernel = build
tree = $TREE
$3
config = tinyconfig
config.fragment = $FRAGMENT

JOB
}
# the night's job as the host builds it: the release fixed, the head tracked
{
	printf '[job]\nname = %s\n\n' "$NAME"
	host_variant A release "base = $KT_BASE"
	host_variant B head "track = origin main"
	swap_and_workload
} >"$tmp/host.job"

# ---- 2: the nights on the host: a commit pushed, kab build ----
echo "  $NIGHTS nights, the regression on night $K; builds cached in $CACHE"
SHA=() BID=() HOW=()
A="" bad_a="" bad_track=""
t0=$SECONDS
for n in $(seq 1 "$NIGHTS"); do
	push_night "$n" >"$tmp/push$n.out" 2>&1 || {
		fail "night $n: a commit pushed to origin main"
		sed 's/^/    /' "$tmp/push$n.out"
		it_end
		exit
	}
	SHA[n]=$(git -C "$ORIGIN" rev-parse main)
	tn=$SECONDS
	nice -n 5 "$KAB" build --db "$BUILDS_DB" --kernels-dir "$LAB/kernels" --work-dir "$KT_WORK" "$tmp/host.job" >"$tmp/build$n.out" 2>&1
	rc=$?
	a=$(sed -nE 's/^variant release: build ([0-9]+) .*/\1/p' "$tmp/build$n.out" | head -n 1)
	b=$(sed -nE 's/^variant head: build ([0-9]+) .*/\1/p' "$tmp/build$n.out" | head -n 1)
	tsha=$(sed -nE 's/^variant head: track origin main at ([0-9a-f]{40}) .*/\1/p' "$tmp/build$n.out" | head -n 1)
	if [ $rc -ne 0 ] || [ -z "$a" ] || [ -z "$b" ]; then
		fail "night $n: kab build exits 0 and names both builds (exit $rc, $((SECONDS - tn)) s)"
		tail -n 30 "$tmp/build$n.out" | sed 's/^/    /'
		it_end
		exit
	fi
	[ -n "$A" ] || A=$a
	[ "$a" = "$A" ] || bad_a="$bad_a $n:$a"
	[ "$tsha" = "${SHA[n]}" ] || bad_track="$bad_track $n:${tsha:-none}"
	BID[n]=$b
	if grep -q "^variant head: build $b reused" "$tmp/build$n.out"; then
		HOW[n]=reused
	else
		HOW[n]="$(sql "$BUILDS_DB" "select objects from builds where id = $b") objects"
	fi
	echo "    night $n: origin main at ${SHA[n]:0:12} \"$(git -C "$ORIGIN" log -1 --format=%s "${SHA[n]}")\": head build $b (${HOW[n]}), $((SECONDS - tn)) s" |
		tee -a "$tmp/nights.txt"
done
mkdir -p tests/out && cp "$tmp/nights.txt" tests/out/nightly-kernels-nights.txt
build_s=$((SECONDS - t0))
ok "$NIGHTS nights built on the host ($build_s s)"
bq() { sql "$BUILDS_DB" "$1"; }
if grep -q "^variant release: build $A reused" "$tmp/build1.out"; then
	echo "    warm: the release was reused (it compiled $(bq "select objects from builds where id = $A") objects when it was built)"
else
	echo "    cold: the release compiled $(bq "select objects from builds where id = $A") objects"
fi
check "the release is one build ($A), reused every night" [ -z "$bad_a" ]
check "each night's track line names the commit pushed that night" [ -z "$bad_track" ]
[ -z "$bad_track" ] || echo "    nights whose track line differs (night:sha):$bad_track"
ids=$(IFS=,; echo "${BID[*]}")
check "$NIGHTS head builds, one a night, none the release's" \
	[ "$(bq "select count(distinct id) from builds where id in ($ids) and id != $A and status = 'ok'")" = "$NIGHTS" ]
bad_base=""
for n in $(seq 1 "$NIGHTS"); do
	[ "$(bq "select base_sha || ' ' || coalesce(base_ref, '') from builds where id = ${BID[n]}")" = "${SHA[n]} origin main" ] ||
		bad_base="$bad_base $n"
done
check "each night's head build is of that night's commit (base_sha), tracking origin main (base_ref)" [ -z "$bad_base" ]
check "the release build is of the base commit" [ "$(bq "select base_sha from builds where id = $A")" = "$base_sha" ]
bad_inc=""
for n in $(seq 1 "$NIGHTS"); do
	case ${HOW[n]} in
	reused) ;;
	*) o=${HOW[n]% objects}; [ -n "$o" ] && [ "$o" -ge 1 ] && [ "$o" -le 25 ] || bad_inc="$bad_inc $n:${HOW[n]}" ;;
	esac
done
check "every head built this run was incremental (1 to 25 objects; reused ones: built by an earlier run)" [ -z "$bad_inc" ]
[ -z "$bad_inc" ] || echo "    nights not incremental:$bad_inc"
d0=$(drains "$base_sha")
bad_drain=""
for n in $(seq 1 "$NIGHTS"); do
	want=$d0
	[ "$n" -ge "$K" ] && want=$((d0 + 2))
	[ "$(drains "${SHA[n]}")" = "$want" ] || bad_drain="$bad_drain $n"
done
check "night $K's commit is the regression, and the nights from it keep it: lru_add_drain() calls in mm/memory.c $d0 before, $((d0 + 2)) from night $K" \
	[ -z "$bad_drain" ]
check "from night $((K - 1))'s commit to night $K's, mm/memory.c alone changed" \
	[ "$(git -C "$ORIGIN" diff --name-only "${SHA[K - 1]}" "${SHA[K]}")" = mm/memory.c ]
bad_img=""
for id in "$A" "${BID[@]}"; do [ -s "$LAB/kernels/$id/bzImage" ] || bad_img="$bad_img $id"; done
check "every build's image is in the lab's kernels directory" [ -z "$bad_img" ]
[ -z "$bad_img$bad_base$bad_a" ] || { it_end; exit; }

# ---- 3: the guest: its disk (builds, nights) and its initramfs ----
qemu_root_init "$tmp/root" tests/qemu/guest-nightly.sh
echo "$LAB" >"$qemu_root/etc/kabt-state"
for p in build/kab build/kabd build/kab-pageout; do
	qemu_copy_bin "$PWD/$p"
	cp "$p" "$qemu_root/usr/bin/"
done
qemu_copy_bin "$(command -v sqlite3)"
qemu_cpio "$tmp/initrd.gz"

# night N's job in the guest: the release and that night's head, by id
guest_job() { # HEAD-BUILD-ID
	cat <<JOB
[job]
name = $NAME
boots = $BOOTS
runs_per_boot = 1
interval = 0.5s
panic = 3
primary = fcount.lru_add_drain

[variant A]
name = release
kernel = build
build = $A
sysctl vm.page-cluster = 0
initrd = $LAB/img/initrd.gz

[variant B]
name = head
kernel = build
build = $1
sysctl vm.page-cluster = 0
initrd = $LAB/img/initrd.gz

JOB
	swap_and_workload
}
stage=$tmp/stage
mkdir -p "$stage/img" "$stage/kernels" "$stage/nights"
chmod 700 "$stage"
cp "$tmp/initrd.gz" "$stage/img/initrd.gz"
for id in "$A" "${BID[@]}"; do cp -a "$LAB/kernels/$id" "$stage/kernels/"; done
for n in $(seq 1 "$NIGHTS"); do guest_job "${BID[n]}" >"$stage/nights/$(printf %03d "$n").kab"; done
echo "$NAME" >"$stage/nights/name"
# the guest's database starts as the host's build records
sqlite3 "$BUILDS_DB" ".backup '$stage/kab.db'"
mkfs.ext4 -q -F -d "$stage" "$tmp/lab.img" 2G || skip_all "mkfs.ext4 -d failed"

# ---- 4: boot the release kab built; kabd switches from there ----
nboots=$((2 * BOOTS * NIGHTS))
# a bound for a hung guest, not an expectation: 200 s a boot (t_patch's),
# the nights' and the longest confirmation's (16 pairs)
bound=$(((nboots + 32) * 200 + 300))
echo "  booting QEMU on build $A (software emulation): $NIGHTS nights of $((2 * BOOTS)) boots by kexec, then the confirmation (12 to 32 boots); at most $bound s"
t0=$SECONDS
timeout "$bound" qemu-system-x86_64 -accel tcg -m 1536 -smp 2 -nographic \
	-kernel "$LAB/kernels/$A/bzImage" -initrd "$tmp/initrd.gz" -append "console=ttyS0 quiet" \
	-drive "file=$tmp/lab.img,format=raw,if=virtio" </dev/null >"$tmp/lab.console" 2>&1 8>&- &
QEMU_PID=$!
IT_PIDS+=("$QEMU_PID")
told=$SECONDS
while kill -0 "$QEMU_PID" 2>/dev/null; do
	sleep 2
	if [ $((SECONDS - told)) -ge 300 ]; then
		told=$SECONDS
		echo "    ($((SECONDS - t0)) s: $(tr -d '\r' <"$tmp/lab.console" | grep -c '^KABT boot') boots so far)"
	fi
done
wait "$QEMU_PID"
qrc=$?
guest_s=$((SECONDS - t0))
mkdir -p tests/out && tr -d '\r' <"$tmp/lab.console" >tests/out/nightly-kernels.console
check "the guest ran the nights and the confirmation to their end and powered off ($guest_s s, qemu exit $qrc)" \
	grep -q '^KABT done' "$tmp/lab.console"
grep -q '^KABT done' "$tmp/lab.console" || tr -d '\r' <"$tmp/lab.console" | grep -v '^\s*$' | tail -n 40 | sed 's/^/    /'
tr -d '\r' <"$tmp/lab.console" | grep -E '^KABT (nights|change points|idle|FAIL)' | sed 's/^/    /'

db=$tmp/lab.db
debugfs -R "dump /kab.db $db" "$tmp/lab.img" >/dev/null 2>&1
[ -s "$db" ] || { fail "the guest's database is on its disk"; it_end; exit; }
chmod 600 "$db"
check "the guest unmounted its disk cleanly" \
	[ "$(dumpe2fs -h "$tmp/lab.img" 2>/dev/null | awk -F: '/^Filesystem state/ {gsub(/ /, "", $2); print $2}')" = clean ]
q() { sql "$db" "$1"; }
check "PRAGMA integrity_check is ok" [ "$(q "pragma integrity_check")" = ok ]
check "the guest built nothing: its builds are the host's (ids, inputs, kernelreleases)" \
	[ "$(q "select count(*) || ' ' || group_concat(id || ':' || inputs_key || ':' || kernelrelease, ' ') from builds")" = \
	  "$(bq "select count(*) || ' ' || group_concat(id || ':' || inputs_key || ':' || kernelrelease, ' ') from builds")" ]

# ---- 5: the nights ----
mapfile -t JOB < <(q "select id from jobs where name = '$NAME' order by id")
check "$NIGHTS nights submitted, every one done" \
	[ "${#JOB[@]}/$(q "select count(*) from jobs where name = '$NAME' and status = 'done'")" = "$NIGHTS/$NIGHTS" ]
q "select id, status, coalesce(reason, '') from jobs where name = '$NAME' and status != 'done'" | sed 's/^/    not done: /'
bad_v=""
for n in $(seq 1 "$NIGHTS"); do
	[ "$(q "select group_concat(build_id, ' ') from (select build_id from variants where job_id = ${JOB[n - 1]:-0} order by idx)")" = "$A ${BID[n]}" ] ||
		bad_v="$bad_v $n"
done
check "the nights in order: night N's job runs the release (build $A) against night N's head build" [ -z "$bad_v" ]
nights_in=$(IFS=,; echo "${JOB[*]:-0}")
check "$nboots boots for the nights, all ok, all by kexec, each on its variant's build" \
	[ "$(q "select count(*) || '/' || sum(b.status = 'ok' and b.method = 'kexec' and b.build_id = v.build_id) from boots b
		join variants v on v.job_id = b.job_id and v.idx = b.variant_idx where b.job_id in ($nights_in)")" = "$nboots/$nboots" ]
# each night also ran its workload's uncounted warm-up, in its first boot
check "$nboots runs for the nights, all ok, one in each boot" \
	[ "$(q "select count(*) || '/' || sum(status = 'ok') || '/' || count(distinct boot_id) from runs where job_id in ($nights_in) and pair >= 0")" = "$nboots/$nboots/$nboots" ]
check "and one warm-up a night, uncounted" \
	[ "$(q "select count(*) || '/' || count(distinct job_id) || '/' || sum(status = 'warmup') from runs where job_id in ($nights_in) and pair = -1")" = "$NIGHTS/$NIGHTS/$NIGHTS" ]
check "lru_add_drain() was counted in every run of the nights, by the function tracer" \
	[ "$(q "select count(*) from metrics m join runs r on r.id = m.run_id where r.job_id in ($nights_in) and r.pair >= 0 and m.name = 'fcount.lru_add_drain'")" = "$nboots" ]
check "every run's refault went through swap (every page swapped out)" \
	[ "$(q "select count(*) from metrics m join runs r on r.id = m.run_id where r.job_id in ($nights_in) and r.pair >= 0 and m.name = 'pageout.swapped_pct' and m.value >= 99")" = "$nboots" ]
check "the guest left no cgroup, swap or journal entry" grep -q 'KABT cleanup: kab cgroups 0, swaps 0, journal 0' "$tmp/lab.console"
echo "  lru_add_drain() calls a run, night by night (release / head):"
for n in $(seq 1 "$NIGHTS"); do
	echo "    night $n (job ${JOB[n - 1]:-?}): $(q "select group_concat(cast(m.value as integer), ' / ') from (select m.value from metrics m join runs r on r.id = m.run_id
		where r.job_id = ${JOB[n - 1]:-0} and r.pair >= 0 and m.name = 'fcount.lru_add_drain' order by r.variant_idx, r.id) m")"
done

# ---- 6: the history and its change point ----
good=${JOB[K - 2]:-0} bad=${JOB[K - 1]:-0} last=${JOB[NIGHTS - 1]:-0}
"$KAB" history "$NAME" --db "$db" --metric fcount.lru_add_drain --format json >"$tmp/history.json" 2>"$tmp/history.err"
"$KAB" history "$NAME" --db "$db" --metric fcount.lru_add_drain >"$tmp/history.txt" 2>&1
cp "$tmp/history.txt" tests/out/nightly-kernels-history.txt
echo "  kab history $NAME --metric fcount.lru_add_drain:"
sed 's/^/    | /' "$tmp/history.txt"
check "the history has $NIGHTS measured nights and one change point: first bad night $K (job $bad), last good night $((K - 1)) (job $good)" \
	/usr/bin/python3 - "$tmp/history.json" "$NIGHTS" "$bad" "$good" <<'EOF'
import json, sys
h = json.load(open(sys.argv[1]))
nights, bad, good = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = [x for x in h["series"] if x["metric"] == "fcount.lru_add_drain"]
assert len(s) == 1, [x["metric"] for x in h["series"]]
s = s[0]
measured = [p for p in s["points"] if p["state"] == "measured"]
assert len(measured) == nights, [p["state"] for p in s["points"]]
print("    nightly estimates (head against release, %):", [round(p["estimate_pct"], 2) for p in measured])
cps = s["change_points"]
assert len(cps) == 1, cps
c = cps[0]
print("    change point: first bad job %s, last good job %s, mean %.2f%% -> %.2f%%, p %s"
      % (c["first_bad"]["job"], c["last_good"]["job"], c["mean_before_pct"], c["mean_after_pct"], c["p_value"]))
assert c["first_bad"]["job"] == bad and c["last_good"]["job"] == good, c
assert c["mean_after_pct"] > c["mean_before_pct"] + 50, c
EOF

# ---- 7: the confirmation kabd queued ----
"$KAB" regressions --db "$db" --format json >"$tmp/regs.json" 2>"$tmp/regs.err"
"$KAB" regressions --db "$db" >"$tmp/regs.txt" 2>&1
cp "$tmp/regs.txt" tests/out/nightly-kernels-regressions.txt
echo "  kab regressions:"
sed 's/^/    | /' "$tmp/regs.txt"
check "one change point, confirmed worse by its own paired job (CI above 0), nights $((K - 1)) and $K on each side" \
	/usr/bin/python3 - "$tmp/regs.json" "$bad" "$good" "$last" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["regressions"]
bad, good, last = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
assert len(r) == 1, r
g = r[0]
c = g["confirmation"]
print("    confirmation: job %s, %s, %+.1f%% [%+.1f, %+.1f], p %s: %s"
      % (c["job"], c["verdict"], c["estimate_pct"] or 0, c["ci_low_pct"] or 0, c["ci_high_pct"] or 0, c["p"], c["reason"]))
assert g["state"] == "confirmed" and g["kind"] == "regression", g
assert g["first_bad"]["job"] == bad and g["last_good"]["job"] == good, g
assert c["verdict"] == "worse" and c["ci_low_pct"] > 0 and c["job"] > last, c
EOF
cj=$(q "select coalesce(confirm_job, 0) from regressions order by id limit 1")
check "the confirmation job ran after every night and is done, ABBA" \
	[ "$(q "select status || ',' || job_order || ',' || (id > $last) from jobs where id = ${cj:-0}")" = "done,abba,1" ]
check "its variants are the head builds of nights $((K - 1)) and $K (${BID[K - 1]} and ${BID[K]})" \
	[ "$(q "select group_concat(build_id, ' ') from (select build_id from variants where job_id = ${cj:-0} order by idx)")" = "${BID[K - 1]} ${BID[K]}" ]
read -r cboots cok <<<"$(q "select count(*), coalesce(sum(status = 'ok'), 0) from boots where job_id = ${cj:-0}" | tr '|' ' ')"
check "its boots: 6 to 16 pairs, all ok (${cok:-0} of ${cboots:-0} ok)" \
	eval '[ -n "${cboots:-}" ] && [ "$cboots" = "${cok:-}" ] && [ "$cboots" -ge 12 ] && [ "$cboots" -le 32 ] && [ $((cboots % 2)) = 0 ]'
check "night $K's head build (${BID[K]}), the first bad night's, is the regression commit ${SHA[K]:0:12}" \
	[ "$(bq "select base_sha from builds where id = ${BID[K]}")" = "${SHA[K]}" ]
"$KAB" report "${cj:-0}" --db "$db" >"$tmp/confirm.txt" 2>&1
cp "$tmp/confirm.txt" tests/out/nightly-kernels-confirm.txt
echo "  the confirmation's report (kab report $cj):"
sed 's/^/    | /' "$tmp/confirm.txt"

echo "  time: builds $build_s s, guest $guest_s s, in all $((SECONDS - T0)) s"
it_end
