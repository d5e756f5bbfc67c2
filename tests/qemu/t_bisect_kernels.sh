#!/usr/bin/env bash
# A nightly regression followed to its commit, in QEMU (issue 27, "End to
# end in QEMU"): the nightly-kernels loop of t_nightly_kernels.sh, where
# one night (K) brings 8 commits instead of one: three harmless ones, one
# that does not build, the one that fixes the build, the real regression
# of t_patch (tests/data/kernels/nightly-regression-6.1.patch: the write
# refault of a swapped page drains the LRU caches three times), and two
# harmless ones. The nights' job says bisect = auto: the guest's kabd
# finds the change point in the history, confirms it with its paired job,
# starts the bisection by itself, skips the commit that does not build,
# names the regression commit, confirms it against its parent, and the
# regression's report shows it.
#
# Where the work is done. The host is the build machine: kab build builds
# each night (the release at the fixed base, the head tracking origin
# main) and, for night K, every commit of its range (base = the commit's
# sha, which only kab's clone of the tree has, fetched for the track); the
# one that does not build is recorded failed. The guest is the lab
# machine: the nights' variants boot those builds by id (build = ID), so
# kabd records each night's commit from its build, and the bisection's
# step jobs boot the recorded build of each commit. git runs in the guest,
# in a copy of kab's clone on the guest's disk (a shallow clone of the
# tracked branch, at the path kabd computes from the tree's). Building in
# the guest (software emulation) would take hours a commit: that the host
# builds every commit of the range ahead is the test's shortcut, and the
# one thing kabd does not do here itself.
#
# The crash: in the first step job, the guest kills kabd with SIGKILL and
# starts it again; in the next step job, it asks for a power cut and the
# host kills QEMU and boots it again on the same disk. The bisection must
# end with the same answer, every step job done once.
#
# Its own target (make check-bisect-kernels), not make check: about 80
# boots under TCG. Knobs: KAB_TEST_BISECT_CACHE (default
# /var/cache/kab/test-bisect-kernels: the builds' database and kernels;
# remove it to build again), KAB_TEST_BISECT_TREE (default
# /var/cache/kab/test-bisect-tree), kernel_tree.sh's KAB_TEST_LINUX_GIT
# and KAB_TEST_KBUILD_WORK. The commits have fixed dates, so a warm run
# reuses every build.
. "$(dirname "$0")/../integration/lib.sh"
it_begin
for p in git gcc make flex bison bc cpio sqlite3 qemu-system-x86_64 mkfs.ext4 debugfs dumpe2fs curl /usr/bin/python3; do
	command -v "$p" >/dev/null || skip_all "$p is not installed"
done
[ -x /bin/busybox ] || skip_all "busybox-static is not installed"
[ -x /usr/lib/git-core/git-bisect ] || skip_all "git's git-bisect is not in /usr/lib/git-core"
for p in build/kab build/kabd build/kab-pageout; do [ -x "$p" ] || skip_all "$p is not built"; done
. tests/integration/kernel_tree.sh
kt_build_user
QEMU_PID=""
# qemu_kill: QEMU itself (QEMU_PID is the timeout(1) that runs it)
qemu_kill() {
	[ -n "$QEMU_PID" ] || return 0
	pkill -KILL -P "$QEMU_PID" 2>/dev/null
	kill -KILL "$QEMU_PID" 2>/dev/null
	wait "$QEMU_PID" 2>/dev/null
	QEMU_PID=""
}
t_cleanup() {
	qemu_kill
	it_cleanup
	kt_cleanup
}
trap t_cleanup EXIT
kt_git_tree
skip() { skip_all "$@"; }
. tests/qemu/lib.sh

tmp=$IT_TMP
T0=$SECONDS
NAME=bisect-kernels-6.1
NIGHTS=8
K=5
CACHE=${KAB_TEST_BISECT_CACHE:-/var/cache/kab/test-bisect-kernels}
LAB=$CACHE/lab
BUILDS_DB=$CACHE/builds.db
TREE=${KAB_TEST_BISECT_TREE:-/var/cache/kab/test-bisect-tree}
ORIGIN=$tmp/origin.git
W=$tmp/w
REGRESSION=$PWD/tests/data/kernels/nightly-regression-6.1.patch
FRAGMENT=$PWD/tests/qemu/guest-6.1.config
mkdir -p "$LAB" && chmod 700 "$CACHE" "$LAB"

# ---- 1: the origin, the tree that tracks it, a clone to commit in ----
[ ! -e "$TREE" ] || [ -d "$TREE/.git" ] || skip_all "$TREE is there and is not a git tree (KAB_TEST_BISECT_TREE)"
rm -rf "$TREE"
git clone -q --bare --shared "$KT_TREE" "$ORIGIN" && git -C "$ORIGIN" branch -q -f main "$KT_BASE" ||
	skip_all "cannot make the origin $ORIGIN"
git clone -q --shared --no-checkout "$KT_TREE" "$TREE" && git -C "$TREE" remote set-url origin "$ORIGIN" ||
	skip_all "cannot make the tracking tree $TREE"
git clone -q --shared --no-checkout -b main "$ORIGIN" "$W" && git -C "$W" read-tree HEAD ||
	skip_all "cannot clone $ORIGIN"
chmod -R a+rX "$ORIGIN" "$TREE" && chmod a+x "$tmp"
git -C "$W" apply --cached --check "$REGRESSION" ||
	{ fail "the regression patch applies to the base's mm/memory.c"; it_end; exit; }

g() { git -C "$W" -c user.name="Kab Test" -c user.email=kab@localhost -c commit.gpgsign=false "$@"; }
f=$tmp/vmscan.c
# commit DATE MSG: the index as it is, committed at DATE
commit() { GIT_AUTHOR_DATE="$1 +0000" GIT_COMMITTER_DATE="$1 +0000" g commit -q --no-verify -m "$2"; }
vmscan_set() { blob=$(g hash-object -w "$f") && g update-index --cacheinfo "100644,$blob,mm/vmscan.c"; }
comment() { g show HEAD:mm/vmscan.c >"$f" && echo "/* kab bisect test: $1 */" >>"$f" && vmscan_set; }
# night N's commits, pushed to origin main; night K's are eight, RANGE the
# shas of them in order; dated 02:00 UTC of day N of 2025 plus a minute a
# commit, so that every sha is the same on every run
RANGE=()
push_night() {
	local n=$1 d=$((1735696800 + ($1 - 1) * 86400)) i
	if [ "$n" != "$K" ]; then
		comment "night $n" && commit "$d" "mm/vmscan: a comment (night $n)" || return 1
	else
		for i in 1 2 3 4 5 6 7 8; do
			case $i in
			4) g show HEAD:mm/vmscan.c >"$f" && echo "kab_bisect_test_this_line_does_not_compile" >>"$f" && vmscan_set &&
				commit $((d + i * 60)) "mm/vmscan: a line that does not compile (night $n, $i of 8)" ;;
			5) g show HEAD~1:mm/vmscan.c >"$f" && echo "/* kab bisect test: night $n, $i of 8 */" >>"$f" && vmscan_set &&
				commit $((d + i * 60)) "mm/vmscan: the build fixed (night $n, $i of 8)" ;;
			6) g apply --cached "$REGRESSION" &&
				commit $((d + i * 60)) "mm/memory: drain the LRU caches three times before mapping a swapped-in page writable (night $n, $i of 8)" ;;
			*) comment "night $n, $i of 8" && commit $((d + i * 60)) "mm/vmscan: a comment (night $n, $i of 8)" ;;
			esac || return 1
			RANGE+=("$(g rev-parse HEAD)")
		done
	fi
	g push -q origin HEAD:main && chmod -R a+rX "$ORIGIN"
}

swap_and_workload() { # as t_nightly_kernels's
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
host_variant() { # LABEL NAME LINE
	printf '[variant %s]\nname = %s\nkernel = build\ntree = %s\n%s\nconfig = tinyconfig\nconfig.fragment = %s\n\n' \
		"$1" "$2" "$TREE" "$3" "$FRAGMENT"
}
{
	printf '[job]\nname = %s\n\n' "$NAME"
	host_variant A release "base = $KT_BASE"
	host_variant B head "track = origin main"
	swap_and_workload
} >"$tmp/host.job"

# ---- 2: the nights on the host, and night K's commits one by one ----
echo "  $NIGHTS nights, night $K brings 8 commits (4th does not build, 6th the regression); builds cached in $CACHE"

SHA=() BID=()
A=""
t0=$SECONDS
kbuild() { # JOB OUT: kab build as the nights' builds are made
	nice -n 5 "$KAB" build --db "$BUILDS_DB" --kernels-dir "$LAB/kernels" --work-dir "$KT_WORK" "$1" >"$2" 2>&1
}
for n in $(seq 1 "$NIGHTS"); do
	push_night "$n" >"$tmp/push$n.out" 2>&1 || {
		fail "night $n: its commits pushed to origin main"
		sed 's/^/    /' "$tmp/push$n.out"
		it_end
		exit
	}
	SHA[n]=$(git -C "$ORIGIN" rev-parse main)
	tn=$SECONDS
	kbuild "$tmp/host.job" "$tmp/build$n.out"
	rc=$?
	a=$(sed -nE 's/^variant release: build ([0-9]+) .*/\1/p' "$tmp/build$n.out" | head -n 1)
	b=$(sed -nE 's/^variant head: build ([0-9]+) .*/\1/p' "$tmp/build$n.out" | head -n 1)
	if [ $rc -ne 0 ] || [ -z "$a" ] || [ -z "$b" ]; then
		fail "night $n: kab build exits 0 and names both builds (exit $rc, $((SECONDS - tn)) s)"
		tail -n 30 "$tmp/build$n.out" | sed 's/^/    /'
		it_end
		exit
	fi
	[ -n "$A" ] || A=$a
	BID[n]=$b
	echo "    night $n: origin main at ${SHA[n]:0:12} \"$(git -C "$ORIGIN" log -1 --format=%s "${SHA[n]}")\": head build $b, $((SECONDS - tn)) s"
done
check "night $K's head is the eighth commit of its range" [ "${RANGE[7]:-}" = "${SHA[K]}" ]
# night K's commits 1 to 7, each by its sha (only kab's clone has them)
declare -A CB
for i in 0 1 2 3 4 5 6; do
	s=${RANGE[i]}
	{
		printf '[job]\nname = %s-range\n\n' "$NAME"
		host_variant A release "base = $KT_BASE"
		host_variant B "commit-$((i + 1))" "base = $s"
		swap_and_workload
	} >"$tmp/commit$i.job"
	tn=$SECONDS
	kbuild "$tmp/commit$i.job" "$tmp/commit$i.out"
	rc=$?
	CB[$i]=$(sed -nE 's/^variant commit-[0-9]+: build ([0-9]+) .*/\1/p' "$tmp/commit$i.out" | head -n 1)
	echo "    night $K, commit $((i + 1)) of 8 (${s:0:12}): exit $rc, build ${CB[$i]:-none}, $((SECONDS - tn)) s"
	if [ $i = 3 ]; then
		check "commit 4 of night $K does not build, and kab build says so" [ $rc -ne 0 ]
	elif [ $rc -ne 0 ] || [ -z "${CB[$i]}" ]; then
		fail "commit $((i + 1)) of night $K builds (exit $rc)"
		tail -n 30 "$tmp/commit$i.out" | sed 's/^/    /'
		it_end
		exit
	fi
done
build_s=$((SECONDS - t0))
bq() { sql "$BUILDS_DB" "$1"; }
ok "the nights and night $K's commits built on the host ($build_s s)"
check "commit 4's build is recorded failed, with the compiler's complaint" \
	[ "$(bq "select count(*) from builds where base_sha = '${RANGE[3]}' and status = 'failed' and reason like '%kab_bisect_test_this_line_does_not_compile%'")" -ge 1 ]
cfg=$(bq "select config_hash from builds where id = ${BID[1]}")
check "night $K's 7 other commits have an ok build each, of the nights' config" \
	[ "$(bq "select count(distinct base_sha) from builds where status = 'ok' and config_hash = '$cfg' and base_sha in ('${RANGE[0]}', '${RANGE[1]}', '${RANGE[2]}', '${RANGE[4]}', '${RANGE[5]}', '${RANGE[6]}', '${RANGE[7]}')")" = 7 ]
[ "$IT_FAIL" = 0 ] || { it_end; exit; }

# ---- 3: the guest: its disk (builds, nights, kab's clone) and initramfs ----
qemu_root_init "$tmp/root" tests/qemu/guest-bisect.sh
echo "$LAB" >"$qemu_root/etc/kabt-state"
for p in build/kab build/kabd build/kab-pageout; do
	qemu_copy_bin "$PWD/$p"
	cp "$p" "$qemu_root/usr/bin/"
done
qemu_copy_bin "$(command -v sqlite3)"
# git, and what git bisect runs: the script and its shell library
qemu_copy_bin /usr/bin/git
mkdir -p "$qemu_root/usr/lib/git-core"
for s in git-bisect git-sh-setup git-sh-i18n; do cp /usr/lib/git-core/$s "$qemu_root/usr/lib/git-core/"; done
qemu_copy_bin /usr/lib/git-core/git-sh-i18n--envsubst
ln -sf /usr/bin/git "$qemu_root/usr/lib/git-core/git"
ln -sf /usr/bin/git "$qemu_root/usr/lib/git-core/git-bisect--helper"
qemu_cpio "$tmp/initrd.gz"

guest_job() { # HEAD-BUILD-ID
	cat <<JOB
[job]
name = $NAME
boots = 1
runs_per_boot = 1
interval = 0.5s
panic = 3
primary = fcount.lru_add_drain
bisect = auto
bisect.boots = 200

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
for id in $(bq "select id from builds where status = 'ok'"); do cp -a "$LAB/kernels/$id" "$stage/kernels/"; done
for n in $(seq 1 "$NIGHTS"); do guest_job "${BID[n]}" >"$stage/nights/$(printf %03d "$n").kab"; done
echo "$NAME" >"$stage/nights/name"
sqlite3 "$BUILDS_DB" ".backup '$stage/kab.db'"
# kab's clone, where the guest's kabd runs git: at the path it computes
# from the tree's (KAB_KBUILD_WORK/<key>/src), a shallow clone of the
# tracked branch from the base on (the commits, their trees and files: git
# bisect names the first bad commit with its diffstat)
real=$(realpath "$TREE")
key=$(printf '%s' "$real" | sha256sum | cut -c1-16)
depth=$(git -C "$ORIGIN" rev-list --count main)
mkdir -p "$stage/kbuild/$key"
git clone -q --bare --no-local --depth "$depth" -b main "file://$ORIGIN" "$stage/kbuild/$key/src.git" &&
	mkdir -p "$stage/kbuild/$key/src" && mv "$stage/kbuild/$key/src.git" "$stage/kbuild/$key/src/.git" &&
	git -C "$stage/kbuild/$key/src" config core.bare false &&
	git -C "$stage/kbuild/$key/src" update-ref refs/kab/track/origin/main "${SHA[NIGHTS]}" ||
	{ fail "a shallow clone of origin main for the guest"; it_end; exit; }
echo "    the guest's clone of $TREE: $(du -sm "$stage/kbuild" | cut -f1) MB ($depth commits)"
size=$(($(du -sm "$stage" | cut -f1) + 1200))
mkfs.ext4 -q -F -d "$stage" "$tmp/lab.img" "${size}M" || skip_all "mkfs.ext4 -d failed"

# ---- 4: boot the release; the power cut; boot again ----
qemu_up() {
	timeout "$bound" qemu-system-x86_64 -accel tcg -m 1536 -smp 2 -nographic \
		-kernel "$LAB/kernels/$A/bzImage" -initrd "$tmp/initrd.gz" -append "console=ttyS0 quiet" \
		-drive "file=$tmp/lab.img,format=raw,if=virtio" </dev/null >>"$tmp/lab.console" 2>&1 8>&- &
	QEMU_PID=$!
}
bound=$((160 * 200 + 300))
echo "  booting QEMU on build $A (software emulation): the nights, the confirmation and the bisection by kexec; at most $bound s"
t0=$SECONDS
: >"$tmp/lab.console"
qemu_up
cut_done=0 told=$SECONDS
while kill -0 "$QEMU_PID" 2>/dev/null; do
	sleep 2
	if [ $cut_done = 0 ] && grep -q '^KABT power-cut now' <(tr -d '\r' <"$tmp/lab.console"); then
		qemu_kill
		cut_done=1
		echo "    ($((SECONDS - t0)) s: power cut in the middle of a step; QEMU booted again on the same disk)"
		echo "KABT host: power cut" >>"$tmp/lab.console"
		qemu_up
	fi
	if [ $((SECONDS - told)) -ge 300 ]; then
		told=$SECONDS
		echo "    ($((SECONDS - t0)) s: $(tr -d '\r' <"$tmp/lab.console" | grep -c '^KABT boot') boots so far)"
	fi
done
wait "$QEMU_PID"
qrc=$?
QEMU_PID=""
guest_s=$((SECONDS - t0))
mkdir -p tests/out && tr -d '\r' <"$tmp/lab.console" >tests/out/bisect-kernels.console
check "the guest ran the nights, the confirmation and the bisection to their end and powered off ($guest_s s, qemu exit $qrc)" \
	grep -q '^KABT done' "$tmp/lab.console"
grep -q '^KABT done' "$tmp/lab.console" || tr -d '\r' <"$tmp/lab.console" | grep -v '^\s*$' | tail -n 40 | sed 's/^/    /'
tr -d '\r' <"$tmp/lab.console" | grep -E '^KABT (nights|change points|bisections|idle|FAIL|kill|power|host)' | sed 's/^/    /'
check "kabd was killed in a step job, and the power cut in another" \
	eval 'grep -q "^KABT kill -9 kabd in step job" "$tmp/lab.console" && [ $cut_done = 1 ]'

db=$tmp/lab.db
debugfs -R "dump /kab.db $db" "$tmp/lab.img" >/dev/null 2>&1
[ -s "$db" ] || { fail "the guest's database is on its disk"; it_end; exit; }
chmod 600 "$db"
check "the guest unmounted its disk cleanly" \
	[ "$(dumpe2fs -h "$tmp/lab.img" 2>/dev/null | awk -F: '/^Filesystem state/ {gsub(/ /, "", $2); print $2}')" = clean ]
q() { sql "$db" "$1"; }
check "PRAGMA integrity_check is ok" [ "$(q "pragma integrity_check")" = ok ]
check "the guest built nothing: its builds are the host's" \
	[ "$(q "select count(*) from builds")" = "$(bq "select count(*) from builds")" ]

# ---- 5: the nights, their commits, the change point and its confirmation ----
check "$NIGHTS nights, every one done" \
	[ "$(q "select count(*) || '/' || sum(status = 'done') from jobs where name = '$NAME'")" = "$NIGHTS/$NIGHTS" ]
bad_c="" bad_s=""
n=0
for j in $(q "select id from jobs where name = '$NAME' order by id"); do
	n=$((n + 1))
	[ "$(q "select coalesce(commit_sha, '') || ' ' || coalesce(track, '') from variants where job_id = $j and idx = 1")" = "${SHA[n]} origin main" ] ||
		bad_c="$bad_c $n"
	# its subject read in kab's clone as its owner (root: the guest has no kab-build)
	[ "$(q "select coalesce(commit_subject, '') from variants where job_id = $j and idx = 1")" = "$(git -C "$ORIGIN" log -1 --format=%s "${SHA[n]}")" ] ||
		bad_s="$bad_s $n"
done
check "each night's head records the commit its build was made from (origin main at night N's sha)" [ -z "$bad_c" ]
check "... and that commit's subject (nights whose subject is wrong:${bad_s:- none})" [ -z "$bad_s" ]
"$KAB" regressions --db "$db" --format json >"$tmp/regs.json" 2>"$tmp/regs.err"
"$KAB" regressions --db "$db" >"$tmp/regs.txt" 2>&1
cp "$tmp/regs.txt" tests/out/bisect-kernels-regressions.txt
echo "  kab regressions:"
sed 's/^/    | /' "$tmp/regs.txt"
check "one regression, confirmed, between night $((K - 1))'s commit and night $K's" \
	/usr/bin/python3 - "$tmp/regs.json" "${SHA[K - 1]}" "${SHA[K]}" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["regressions"]
assert len(r) == 1, r
g = r[0]
assert g["state"] == "confirmed" and g["kind"] == "regression", g
assert g["last_good"]["sha"] == sys.argv[2] and g["first_bad"]["sha"] == sys.argv[3], (g["last_good"], g["first_bad"])
EOF

# ---- 6: the bisection, read as a lab operator reads it: kabd on the database ----
bid=$(q "select id from bisections order by id limit 1")
check "one bisection, started by kabd itself (bisect = auto), of the regression" \
	[ "$(q "select count(*) || ' ' || (regression_id > 0) || ' ' || submitter from bisections")" = "1 1 kabd (bisect = auto)" ]
export KAB_SWITCH_DRY_RUN=1
kabd_up --db "$db"
[ -n "$PORT" ] || { fail "kabd starts on the guest's database"; it_end; exit; }
trap 'kabd_stop; t_cleanup' EXIT
"$KAB" bisect show "${bid:-0}" --socket "$KABD_SOCK" >"$tmp/bisect.txt" 2>&1
"$KAB" bisect show "${bid:-0}" --socket "$KABD_SOCK" --format json >"$tmp/bisect.json" 2>"$tmp/bisect.err"
cp "$tmp/bisect.txt" tests/out/bisect-kernels-bisect.txt
echo "  kab bisect show $bid:"
sed 's/^/    | /' "$tmp/bisect.txt"
check "the bisection is done: first bad commit ${RANGE[5]:0:12}, the regression, confirmed against its parent ${RANGE[4]:0:12}; commit 4, which does not build, skipped" \
	/usr/bin/python3 - "$tmp/bisect.json" "${RANGE[5]}" "${RANGE[4]}" "${RANGE[3]}" <<'EOF'
import json, sys
b = json.load(open(sys.argv[1]))
culprit, parent, broken = sys.argv[2:5]
assert b["state"] == "done", (b["state"], b.get("reason"))
rep = b["report"]
c = rep["culprits"]
assert len(c) == 1 and c[0]["answer"] == "culprit", c
c = c[0]
assert c["sha"] == culprit and c["parent"] == parent, c
assert "drain the LRU caches three times" in c["subject"], c
conf = c["confirmation"]
assert conf["ci_lo_pct"] > 0, conf
print("    first bad commit %s \"%s\", %s; against its parent %+.1f%% [%+.1f, %+.1f] at %d pairs"
      % (c["sha"][:12], c["subject"], c["author"], conf["estimate_pct"], conf["ci_lo_pct"], conf["ci_hi_pct"], conf["pairs"]))
print("    steps: " + "; ".join("%s %s (%s pairs)" % (s["sha"][:12], s["mark"] or s["decision"], s["pairs"]) for s in rep["steps"]))
print("    builds %d, boots %d" % (rep["builds"], rep["boots"]))
assert "git bisect skip " + broken in rep["log"], rep["log"]
EOF
js="select count(*) from bisection_jobs where bisection_id = ${bid:-0} and job_id > 0"
nsteps=$(q "$js")
check "$nsteps step jobs, every one done, none run twice (one job a name), after the kill and the power cut" \
	[ "$(q "select count(*) || '/' || sum(j.status = 'done') || '/' || count(distinct j.name) from bisection_jobs s join jobs j on j.id = s.job_id where s.bisection_id = ${bid:-0}")" = "$nsteps/$nsteps/$nsteps" ]
check "every step job boots the recorded builds of its two commits" \
	[ "$(q "select count(*) from bisection_jobs s join variants v on v.job_id = s.job_id join builds b on b.id = v.build_id
		where s.bisection_id = ${bid:-0} and b.base_sha = case v.idx when 0 then s.base else s.sha end")" = "$((2 * nsteps))" ]
boots=$(q "select count(*) from boots b join bisection_jobs s on s.job_id = b.job_id where s.bisection_id = ${bid:-0}")
echo "  the bisection: $nsteps step jobs, $boots boots in the guest"
code=$(curl -s -o "$tmp/api-regs.json" -w '%{http_code}' -H "$AUTH" "$URL/api/v1/regressions")
check "the regression, as kabd serves it (GET /api/v1/regressions: $code), is titled with its first bad commit" \
	grep -q "first bad commit ${RANGE[5]:0:12}" "$tmp/api-regs.json"
"$KAB" regressions --db "$db" >"$tmp/regs2.txt" 2>&1
check "kab regressions names the first bad commit" grep -q "${RANGE[5]:0:12}" "$tmp/regs2.txt"
kabd_stop

echo "  time: builds $build_s s, guest $guest_s s, in all $((SECONDS - T0)) s"
it_end
