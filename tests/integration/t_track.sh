#!/usr/bin/env bash
# A job that follows a tree (issue 17, item 1): a kernel = build variant
# with track = origin main beside a fixed base. A local bare "origin" made
# from the test tree of Debian's linux-source-6.1 gets commits night by
# night; each night is a job kabd builds and takes up to its first switch
# (KAB_SWITCH_DRY_RUN, switch = reboot: this machine must not reboot; the
# boots themselves are t_kexec's and t_patch's). Covered:
#   kab check: an unknown remote and an unknown branch at the track line,
#     a good track printed with the head it found;
#   night 1: origin main is the base's commit: the tracked variant reuses
#     the base's build; its commit (sha, subject, committer date) and track
#     on its variant row, no event;
#   night 2: a commit pushed: a new build, incremental in the same object
#     directory (a handful of objects), its commit recorded, no event;
#   night 3: main force-pushed back to night 1's commit: recorded as
#     "force-pushed: <night 2> is not an ancestor of <night 1>", night 1's
#     build reused;
#   night 4: the branch deleted: refused at kabd's door (kab check), at
#     its track line;
#   night 5: the remote gone (a warning at the door: a lab's network may
#     be down when the timer submits): the job failed at its fetch with the
#     reason naming remote, branch and git's message, no commit recorded,
#     no history row;
#   kab report: the tracked variant's commit in the Kernels block.
# Not covered here: runs in a booted tracked kernel (nothing here boots:
# that part is the same as any build's), a remote over the network.
# Cost: the first run builds a tinyconfig kernel of the tree (about 5 min
# on 2 CPUs); its object directory is cached with the tree's path
# (KAB_TEST_TRACK_TREE), so later runs recompile little.
. "$(dirname "$0")/lib.sh"
it_begin
for p in git gcc make flex bison bc timeout /usr/bin/python3 curl; do
	command -v "$p" >/dev/null || skip_all "$p is not installed"
done
[ -x "$KABD" ] || skip_all "$KABD is not built"
. tests/integration/kernel_tree.sh
WORK=$KT_WORK BASE=$KT_BASE
kt_build_user
t_cleanup() { it_cleanup; kt_cleanup; }
trap t_cleanup EXIT
kt_git_tree
KDIR=$IT_TMP/kernels
DB=$IT_TMP/k.db
# the tracking tree: a clone of the test tree whose origin is the bare
# repository below; a fixed path, so its worktree and objects are cached
TREE=${KAB_TEST_TRACK_TREE:-/var/cache/kab/test-track-tree}
ORIGIN=$IT_TMP/origin.git
W=$IT_TMP/w
g() { git -C "$W" -c user.name="Kab Test" -c user.email=kab@localhost "$@"; }
git clone -q --bare --shared "$KT_TREE" "$ORIGIN" && git -C "$ORIGIN" branch -q -f main "$BASE" ||
	skip_all "cannot make the origin $ORIGIN"
rm -rf "$TREE"
git clone -q --shared --no-checkout "$KT_TREE" "$TREE" && git -C "$TREE" remote set-url origin "$ORIGIN" ||
	skip_all "cannot make the tracking tree $TREE"
git clone -q --shared "$ORIGIN" "$W" || skip_all "cannot clone $ORIGIN"
chmod -R a+rX "$ORIGIN" "$TREE" && chmod a+x "$IT_TMP"
base_sha=$(git -C "$KT_TREE" rev-parse "$BASE^{commit}")

cat >"$IT_TMP/boot.config" <<'EOF'
CONFIG_64BIT=y
CONFIG_PRINTK=y
CONFIG_TTY=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_BINFMT_ELF=y
CONFIG_PROC_FS=y
CONFIG_KEXEC_FILE=y
CONFIG_MEMCG=y
CONFIG_CGROUPS=y
CONFIG_SWAP=y
CONFIG_BLOCK=y
EOF
# mkjob NAME TRACK-LINE: the nightly job, base fixed at $BASE, head tracking
mkjob() {
	cat >"$IT_TMP/$1.job" <<EOF
[job]
name = track-nightly
switch = reboot

[variant A]
name = base
kernel = build
tree = $TREE
base = $BASE
config = tinyconfig
config.fragment = $IT_TMP/boot.config

[variant B]
name = head
kernel = build
tree = $TREE
$2
config = tinyconfig
config.fragment = $IT_TMP/boot.config

[workload w]
type = command
command = /bin/true
EOF
}
TRACK_LINE=17

# kab check: unknown remote, unknown branch, each at the track line
mkjob bad-remote "track = upstream main"
$KAB check "$IT_TMP/bad-remote.job" >"$IT_TMP/out" 2>&1; rc=$?
check "kab check: an unknown remote exits 2" [ $rc -eq 2 ]
check "  at the track line, naming the tree's remotes" \
	grep -q "bad-remote.job:$TRACK_LINE: track = upstream main: the tree $TREE has no remote \"upstream\" (its remotes: origin)" "$IT_TMP/out"
mkjob bad-branch "track = origin mian"
$KAB check "$IT_TMP/bad-branch.job" >"$IT_TMP/out" 2>&1; rc=$?
check "kab check: an unknown branch exits 2" [ $rc -eq 2 ]
check "  at the track line, with the close name" \
	grep -q "bad-branch.job:$TRACK_LINE: track = origin mian: remote origin ($ORIGIN) has no branch \"mian\" (did you mean \"main\"?)" "$IT_TMP/out"
mkjob good "track = origin main"
$KAB check "$IT_TMP/good.job" >"$IT_TMP/out" 2>"$IT_TMP/err"; rc=$?
check "kab check: track = origin main is good" [ $rc -eq 0 ]
[ $rc -eq 0 ] || sed 's/^/    /' "$IT_TMP/err"
check "  printed normalized with the head it found" \
	grep -q "^; track: origin main is at ${base_sha:0:12} (when kab check ran" "$IT_TMP/out"

log_tail="echo 'kabd.log ends:'; tail -n 15 '$IT_TMP/kabd.log'"
submit() { # JOB-FILE: POST it to kabd; the HTTP status in $code, the job's id in $jid
	code=$(curl -s -o "$IT_TMP/body" -w '%{http_code}' -H "$AUTH" -H "$JOB_CT" -X POST --data-binary @"$1" "$URL/api/v1/jobs")
	jid=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$IT_TMP/body" 2>/dev/null)
}
ended() { # the job $jid failed or done (its status and reason printed)
	local st; st=$(sql "$DB" "select status || ': ' || coalesce(reason, '') from jobs where id = ${jid:-0}")
	echo "job ${jid:-?}: ${st:-not there}"
	case $st in failed:* | done:*) return 0 ;; esac
	return 1
}
# night: submit the good job to kabd, wait for it to reach the switch (or fail)
night() {
	submit "$IT_TMP/good.job"
	check "night $1: kabd takes the job (HTTP $code)" [ "$code" = 201 -a -n "$jid" ]
	wait_for -s "$log_tail" "night $1 (job $jid) to end" 1200 ended
}
row() { sql "$DB" "select $1 from variants where job_id = ${2:-$jid} and idx = 1"; }
reason() { sql "$DB" "select reason from jobs where id = $jid"; }
at_switch() { reason | grep -q '^cannot switch to variant base: \(KAB_SWITCH_DRY_RUN is set\|no boot loader\)'; }

KAB_SWITCH_DRY_RUN=1 KAB_KBUILD_WORK=$WORK KAB_KERNELS_DIR=$KDIR kabd_up --db "$DB" || { fail "kabd starts"; it_end; exit; }

# night 1: main is the base's commit
night 1; n1=$jid
check "night 1: built (or reused) both kernels and stopped at the first switch" at_switch
reason | sed 's/^/    /'
check "night 1: the head's commit, subject, committer date and track recorded" \
	[ "$(row "commit_sha || '|' || commit_subject || '|' || cast(commit_date as integer) || '|' || track")" = \
	  "$base_sha|$(git -C "$KT_TREE" log -1 --format='%s|%ct' "$base_sha")|origin main" ]
check "night 1: no event (the first night)" [ "$(row "coalesce(track_event, 'NULL')")" = NULL ]
check "night 1: the head is the base's commit, so its build is the base's" \
	[ "$(sql "$DB" "select count(distinct build_id) from variants where job_id = $n1")" = 1 ]

# night 2: a commit pushed to main
echo 'static unsigned long kab_track_counter __maybe_unused;' >>"$W/mm/vmscan.c"
g commit -q -am "mm/vmscan: the commit of night 2" && g push -q origin HEAD:main
n2_sha=$(git -C "$ORIGIN" rev-parse main)
night 2; n2=$jid
check "night 2: stopped at the first switch" at_switch
check "night 2: the new head recorded" [ "$(row commit_sha)" = "$n2_sha" -a "$(row commit_subject)" = "mm/vmscan: the commit of night 2" ]
check "night 2: moved forward: no event" [ "$(row "coalesce(track_event, 'NULL')")" = NULL ]
b2=$(row build_id)
objs=$(sql "$DB" "select objects from builds where id = ${b2:-0}")
check "night 2: a new build of the new head, incremental (${objs:-?} objects)" \
	eval '[ -n "$objs" ] && [ "$objs" -ge 1 -a "$objs" -le 25 ] && [ "$(sql "$DB" "select base_sha from builds where id = $b2")" = "$n2_sha" ]'
check "night 2: the build records the track as its base ref" [ "$(sql "$DB" "select base_ref from builds where id = ${b2:-0}")" = "origin main" ]
$KAB report "$jid" --db "$DB" >"$IT_TMP/report" 2>&1
check "night 2: kab report shows the tracked commit in the Kernels block" \
	grep -q "tracks origin main: ${n2_sha:0:12} \"mm/vmscan: the commit of night 2\"" "$IT_TMP/report"

# night 3: main force-pushed back to night 1's commit
git -C "$W" push -q -f origin "$base_sha:main"
night 3
check "night 3: stopped at the first switch" at_switch
check "night 3: the head back at night 1's commit" [ "$(row commit_sha)" = "$base_sha" ]
check "night 3: recorded as force-pushed, never as a silent reordering" \
	[ "$(row track_event)" = "force-pushed: ${n2_sha:0:12} is not an ancestor of ${base_sha:0:12}" ]
check "night 3: night 1's build reused" [ "$(row build_id)" = "$(row build_id "$n1")" ]

# night 4: the branch deleted on the remote: kabd's door runs kab check,
# which refuses the job at its track line (no job row, no night); a branch
# deleted after the door is the fetch failure of night 5
git -C "$ORIGIN" branch -q -m main gone-main
submit "$IT_TMP/good.job"
check "night 4: a deleted branch is refused at the door (HTTP 400), naming the branch at the track line" \
	eval '[ "$code" = 400 ] && grep -q "\"[0-9]*: track = origin main: remote origin (.*) has no branch .*main" "$IT_TMP/body"'
sed 's/^/    /' "$IT_TMP/body" | head -c 600
echo
git -C "$ORIGIN" branch -q -m gone-main main

# night 5: the remote gone
mv "$ORIGIN" "$ORIGIN.away"
night 5
check "night 5: the job failed" [ "$(sql "$DB" "select status from jobs where id = $jid")" = failed ]
check "  with the reason naming remote, branch and git's message" \
	eval 'reason | grep -q "track = origin main: cannot fetch branch main from remote origin ($ORIGIN): .*does not appear to be a git repository"'
check "  no commit recorded" [ "$(row "coalesce(commit_sha, 'NULL')")" = NULL ]
mv "$ORIGIN.away" "$ORIGIN"
kabd_stop
check "the tree was never written: no kab refs in it" [ -z "$(git -C "$TREE" for-each-ref refs/kab)" ]
it_end
