#!/usr/bin/env bash
# A bisection's life in a real kabd on the running kernel (doc/bisect.md,
# "In kabd"). This machine cannot boot the kernels a bisection compares
# (no kexec; QEMU is where that is tested), and its trees here are not
# kernels: so a step job's build fails, and what is checked is the life
# around it, not an answer. A small git repository is the tree, cloned as
# kab's clone (KAB_KBUILD_WORK), and a job of two kernel = build variants
# and confirmed regressions are put in kabd's database with sqlite3. Then:
# the bad requests over HTTP, each with its code and the field it names,
# and nothing recorded; a regression bisected, asked twice (the same
# bisection), its one step job queued, failing at its build, and the
# bisection ending failed with the reason; a second one whose step job
# waits behind a running job, kabd killed with SIGKILL and started again
# (the step job neither lost nor queued twice), then cancelled with its
# step job; kab bisect show and cancel. The budget of boots: a bad
# boots= refused, a bisection asked with boots=10 ending failed before its
# first step job (6 pairs, 12 boots) naming the budget. bisect = auto: a
# confirmed regression of a bisect = auto job seeded while kabd runs is
# bisected by kabd itself at its next start (the pass a confirmation's end
# runs too; a confirmation of kernels this machine cannot build cannot end
# confirmed here), once, noted on the regression. A revision kab's clone
# lacks: a tracked job's regression whose BAD only the tree's remote (a
# local bare repository) has is accepted after kabd fetches the branch;
# with the remote moved away or unreadable, 502 naming the tree, remote,
# branch and git's message and nothing recorded; with the tree's lock
# held, 409 at once. KAB_SWITCH_DRY_RUN keeps any switch a dry run.
# About 1 minute.
. "$(dirname "$0")/lib.sh"
it_begin
[ -x "$KABD" ] || skip_all "$KABD is not built"
command -v curl >/dev/null || skip_all "curl is not installed"
command -v git >/dev/null || skip_all "git is not installed"
command -v sqlite3 >/dev/null || skip_all "sqlite3 is not installed (to seed kabd's database)"
# kernel = build jobs are refused without the build user: made here as
# make install makes it when this machine has none, removed again after
. "$(dirname "$0")/kernel_tree.sh"
kt_build_user
PY=/usr/bin/python3
[ -x $PY ] || skip_all "$PY is not installed (for JSON checks)"
export KAB_SWITCH_DRY_RUN=1

trap 'kabd_stop; it_cleanup; kt_cleanup' EXIT
# the build user reaches the tree and kab's clone through IT_TMP
chmod 0711 "$IT_TMP"
TREE=$IT_TMP/tree
git init -q "$TREE"
for i in 0 1 2 3 4 5 6 7 8; do
	echo "$i" >"$TREE/f$i"
	git -C "$TREE" add "f$i"
	GIT_COMMITTER_DATE="$((1700000000 + i)) +0000" git -C "$TREE" -c user.name=t -c user.email=t@kab commit -q -m "change $i"
done
mapfile -t C < <(git -C "$TREE" rev-list --reverse HEAD)
chmod -R a+rX "$TREE"
export KAB_KBUILD_WORK=$IT_TMP/kbuild
KEY=$(printf '%s' "$(realpath "$TREE")" | sha256sum | cut -c1-16)
CLONE=$KAB_KBUILD_WORK/$KEY/src

DB=$IT_TMP/bisect.db
kabd_up --db "$DB"
if [ -z "$PORT" ]; then
	fail "kabd starts"
	it_end
	exit
fi
ok "kabd starts on 127.0.0.1:$PORT"

# the source job (a night of two kernel builds) and three regressions of it
{
	printf '[job]\nname = bis-it\npairs = 2\nswitch = reboot\n[swap]\ndevice = none\n'
	for v in "A base ${C[0]}" "B head ${C[8]}"; do
		set -- $v
		printf '[variant %s]\nname = %s\nkernel = build\ntree = %s\nbase = %s\nconfig = defconfig\n' "$1" "$2" "$TREE" "$3"
	done
	printf '[workload w]\ntype = command\ncommand = true\n'
} >"$IT_TMP/src.job"
sql "$DB" "insert into jobs (id, name, file, text, status, created, kab_version, schema_version)
	values (900, 'bis-it', '$IT_TMP/src.job', readfile('$IT_TMP/src.job'), 'done', strftime('%s','now'), 'it', 13);"
reg() { # id metric state
	sql "$DB" "insert into regressions (id, created, name, workload, metric, variant_idx, direction, good_job, bad_job,
		good_sha, bad_sha, state, reason, verdict) values ($1, strftime('%s','now'), 'bis-it', 'w', '$2', 1, 'lower',
		900, 900, '${C[0]}', '${C[8]}', '$3', 'seeded', 'worse');"
}
reg 1 time.wall_s confirmed
reg 2 rusage.sys_s confirmed
reg 3 rusage.user_s pending
check "the job and regressions are seeded" [ "$(sql "$DB" "select count(*) from regressions")" = 3 ]

post() { # path: prints the HTTP code, the body in $IT_TMP/post.json
	curl -s -o "$IT_TMP/post.json" -w '%{http_code}' -H "$AUTH" -H "$JOB_CT" -X POST --data-binary '' "$URL/api/v1$1"
}
field() { $PY -c 'import json,sys; v=json.load(open(sys.argv[1])).get(sys.argv[2]); print("" if v is None else v)' "$IT_TMP/post.json" "$1" 2>/dev/null; }
says() { # code path field-prefix
	local code
	code=$(post "$2")
	if [ "$code" = "$1" ] && field error | grep -q "^$3"; then
		ok "POST $2: $1, \"$(field error | cut -c1-90)\""
	else
		fail "POST $2: HTTP $code, expected $1 naming \"$3\": $(cat "$IT_TMP/post.json")"
	fi
}
nbis() { sql "$DB" "select count(*) from bisections"; }
has() { grep -q -- "$2" <<<"$1"; } # text pattern

# no clone of the tree yet: nothing to bisect in
says 409 "/regressions/1/bisect" "tree:"
mkdir -p "$KAB_KBUILD_WORK/$KEY"
git clone -q --shared --no-checkout "$TREE" "$CLONE"
# the work directories root's (a build refuses another's), the clone in them the build user's
chown -R kab-build: "$CLONE"
says 409 "/regressions/3/bisect" "regression:"
says 404 "/regressions/77/bisect" "regression:"
says 404 "/bisections?job=77&good=${C[0]}&bad=${C[8]}&metric=time.wall_s" "job:"
says 400 "/bisections?good=${C[0]}&bad=${C[8]}&metric=time.wall_s" "job:"
says 400 "/bisections?job=900&good=${C[0]}&bad=${C[8]}" "metric:"
# the source job has no runs: it records no metric
says 400 "/bisections?job=900&good=${C[0]}&bad=${C[8]}&metric=time.wall_s" "metric:"
says 400 "/bisections?job=900&good=${C[0]}&bad=${C[8]}&metric=time.wall_s&color=red" "color:"
says 400 "/regressions/1/bisect?boots=0" "boots:"
says 400 "/regressions/1/bisect?boots=many" "boots:"
says 400 "/regressions/1/bisect?color=red" "color:"
check "the bad requests recorded nothing" [ "$(nbis)" = 0 ]
out=$($KAB bisect --regression 1 --boots 0 --socket "$KABD_SOCK" 2>&1)
rc=$?
check "kab bisect --boots 0 exits 2 ($rc: $out)" [ $rc = 2 ]
check "  and says what to give" has "$out" "give a whole number from 1 to 100000"
# revisions are checked before the metric only for a regression's range:
# a range git refuses, by hand, through kab bisect and the socket
out=$($KAB bisect 900 --good no-such-rev --bad "${C[8]}" --metric time.wall_s --socket "$KABD_SOCK" 2>&1)
rc=$?
check "kab bisect of a job that records no metric exits 2 naming the field ($rc: $out)" [ $rc = 2 ]
check "  and says which" has "$out" "metric:"

# a regression bisected, asked twice: while a short job holds the
# executor, so that the first is still running when asked again (its step
# job fails at once when it runs)
printf '%s\n' "[job]" "name = bis-hold" "pairs = 1" "warmup = 0" "[swap]" "device = none" \
	"[variant A]" "[variant B]" "name = b" "[workload w]" "type = command" "command = sleep 2" \
	"timeout = 60s" >"$IT_TMP/hold.job"
curl -s -o /dev/null -H "$AUTH" -H "$JOB_CT" --data-binary @"$IT_TMP/hold.job" "$URL/api/v1/jobs"
code=$(post "/regressions/1/bisect")
B1=$(field id)
check "POST /regressions/1/bisect: 201 with an id ($code, $B1)" [ "$code" = 201 -a -n "$B1" ]
code=$(post "/regressions/1/bisect")
check "asked again: 200 with the same bisection ($code, $(field id), existing $(field existing))" \
	[ "$code" = 200 -a "$(field id)" = "$B1" -a "$(field existing)" = True ]
state() { sql "$DB" "select state from bisections where id = $1"; }
wait_for -s "tail -n 30 '$IT_TMP/kabd.log'" "bisection $B1 to end" 300 "[ \"\$(state $B1)\" != running ]"
check "bisection $B1 ended failed: $(sql "$DB" "select reason from bisections where id = $B1" | cut -c1-200)" \
	[ "$(state "$B1")" = failed ]
check "its one step job ran and failed" \
	[ "$(sql "$DB" "select count(*) from bisection_jobs b join jobs j on j.id = b.job_id where b.bisection_id = $B1 and j.status = 'failed'")" = 1 ]
check "and no other was queued" [ "$(sql "$DB" "select count(*) from bisection_jobs where bisection_id = $B1")" = 1 ]
curl -s -H "$AUTH" "$URL/api/v1/bisections/$B1" >"$IT_TMP/b1.json"
check "GET /bisections/$B1 shows its state and step job" \
	$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["state"]=="failed" and len(d["step_jobs"])==1 and d["step_jobs"][0]["status"]=="failed" else 1)' "$IT_TMP/b1.json"
out=$($KAB bisect show "$B1" --socket "$KABD_SOCK" 2>&1)
check "kab bisect show $B1 says failed" has "$out" "bisection $B1: failed"
check "  and its budget, the job's default" has "$out" "of a budget of 300"
# the regression shows it: its JSON, kab regressions; its title is as before
curl -s -H "$AUTH" "$URL/api/v1/regressions/1" >"$IT_TMP/r1.json"
check "GET /regressions/1 carries bisection $B1, failed, no culprit; the title names none" \
	$PY -c 'import json,sys; r=json.load(open(sys.argv[1]))["regressions"][0]; b=r["bisection"]
sys.exit(0 if b["id"]==int(sys.argv[2]) and b["state"]=="failed" and b["reason"] and b["culprits"]==[] and "first bad commit" not in r["title"] else 1)' "$IT_TMP/r1.json" "$B1"
out=$($KAB regressions --socket "$KABD_SOCK" 2>&1)
check "kab regressions says \"bisection $B1: failed, ...\"" has "$out" "bisection  $B1: failed, "

# a budget smaller than the first step job (6 pairs: 12 boots): asked
# again (the failed one does not hold the regression), it ends failed
# before it queues anything, naming the budget
code=$(post "/regressions/1/bisect?boots=10")
BB=$(field id)
check "POST /regressions/1/bisect?boots=10: 201 ($code, $BB)" [ "$code" = 201 -a -n "$BB" -a "$BB" != "$B1" ]
wait_for -s "tail -n 30 '$IT_TMP/kabd.log'" "bisection $BB to end" 60 "[ \"\$(state $BB)\" != running ]"
reason() { sql "$DB" "select reason from bisections where id = $1"; }
check "bisection $BB ended failed on its budget: $(reason "$BB" | cut -c1-160)" \
	[ "$(state "$BB")" = failed -a "$(sql "$DB" "select count(*) from bisections where id = $BB and boots = 10 and reason like 'budget of 10 boots spent (0 used): %'")" = 1 ]
check "  and queued no step job" [ "$(sql "$DB" "select count(*) from bisection_jobs where bisection_id = $BB")" = 0 ]

# a step job waiting behind a running job survives kill -9 of kabd, once:
# asked for while one sleeper runs, queued between it and the next
# two variants that change nothing, one run each of a 20 s sleep
printf '%s\n' "[job]" "name = bis-sleeper" "pairs = 1" "warmup = 0" "[swap]" "device = none" \
	"[variant A]" "[variant B]" "name = b" "[workload w]" "type = command" "command = sleep 20" \
	"timeout = 60s" >"$IT_TMP/sleeper.job"
submit() {
	curl -s -o "$IT_TMP/sub.json" -w '%{http_code}' -H "$AUTH" -H "$JOB_CT" --data-binary @"$IT_TMP/sleeper.job" "$URL/api/v1/jobs" >/dev/null
	$PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$IT_TMP/sub.json" 2>/dev/null
}
jstatus() { sql "$DB" "select status from jobs where id = $1"; }
S1=$(submit)
wait_for "the first sleeper (job $S1) to run" 30 "[ \"\$(jstatus $S1)\" = running ]"
S2=$(submit)
check "two sleeper jobs, one running and one queued ($S1, $S2)" [ -n "$S1" -a -n "$S2" ]
code=$(post "/regressions/2/bisect")
B2=$(field id)
check "POST /regressions/2/bisect while a job runs: 201 ($code, $B2)" [ "$code" = 201 -a -n "$B2" ]
steps() { sql "$DB" "select count(*) from bisection_jobs where bisection_id = $1"; }
# between the two sleepers the executor queues the step job, behind the second
wait_for -s "tail -n 30 '$IT_TMP/kabd.log'" "bisection $B2's step job to be queued" 60 "[ \"\$(steps $B2)\" = 1 ]"
wait_for "the second sleeper (job $S2) to run" 30 "[ \"\$(jstatus $S2)\" = running ]"
STEP=$(sql "$DB" "select job_id from bisection_jobs where bisection_id = $B2")
check "its step job $STEP waits behind it" [ "$(jstatus "$STEP")" = queued ]
# bisect = auto: a night of a job that asks for it, and its regression
# confirmed while kabd runs (as a confirmation's end would leave it, with
# kabd stopped before it asked): its next start asks, with the job's budget
sed -e 's/^name = bis-it$/name = bis-auto\nbisect = auto\nbisect.boots = 10/' "$IT_TMP/src.job" >"$IT_TMP/auto.job"
# an id far above the jobs this test queues (the step jobs and sleepers take 901 on)
sql "$DB" "insert into jobs (id, name, file, text, status, created, kab_version, schema_version)
	values (990, 'bis-auto', '$IT_TMP/auto.job', cast(readfile('$IT_TMP/auto.job') as text), 'done', strftime('%s','now'), 'it', 14);
	insert into regressions (id, created, name, workload, metric, variant_idx, direction, good_job, bad_job,
		good_sha, bad_sha, state, reason, verdict) values (4, strftime('%s','now'), 'bis-auto', 'w', 'time.wall_s', 1,
		'lower', 990, 990, '${C[0]}', '${C[8]}', 'confirmed', 'seeded', 'worse');"
check "a bisect = auto job and its confirmed regression are seeded, not bisected yet" \
	[ "$(sql "$DB" "select count(*) from bisections where regression_id = 4")" = 0 ]
kill -KILL "$KABD_PID"
wait "$KABD_PID" 2>/dev/null
KABD_PID=""
kabd_up --db "$DB"
check "kabd starts again after SIGKILL" [ -n "$PORT" ]
wait_for -s "tail -n 30 '$IT_TMP/kabd.log'" "kabd's start to ask for regression 4's bisection" 30 "[ -n \"\$(sql '$DB' 'select id from bisections where regression_id = 4')\" ]"
BA=$(sql "$DB" "select id from bisections where regression_id = 4")
check "at its start kabd asked for regression 4's bisection itself ($BA)" \
	[ -n "$BA" -a "$(sql "$DB" "select submitter || '/' || boots from bisections where regression_id = 4")" = "kabd (bisect = auto)/10" ]
check "  and noted it on the regression: $(sql "$DB" "select auto_bisect from regressions where id = 4")" \
	[ "$(sql "$DB" "select count(*) from regressions where id = 4 and auto_bisect like 'bisection $BA, asked by kabd (bisect = auto)'")" = 1 ]
[ -n "$BA" ] && wait_for "bisection $BA to end" 60 "[ \"\$(state $BA)\" != running ]"
check "bisection $BA ended failed on the job's budget of 10 boots: $(reason "$BA" | cut -c1-120)" \
	[ "$(sql "$DB" "select count(*) from bisections where id = '$BA' and state = 'failed' and reason like 'budget of 10 boots spent%'")" = 1 ]
curl -s -H "$AUTH" "$URL/api/v1/regressions/4" >"$IT_TMP/r4.json"
check "GET /regressions/4 shows the note" grep -q "\"auto_bisect\":\"bisection $BA" "$IT_TMP/r4.json"
sleep 3 # its start advanced the running bisections
check "the step job is still the only one, and waits" \
	[ "$(steps "$B2")" = 1 -a "$(sql "$DB" "select count(*) from jobs where name like 'bis-it.bisect-$B2-%'")" = 1 ]
out=$($KAB bisect cancel "$B2" --socket "$KABD_SOCK" 2>&1)
check "kab bisect cancel $B2 ($out)" has "$out" cancelled
check "bisection $B2 is cancelled" [ "$(state "$B2")" = cancelled ]
check "and its step job with it" [ "$(sql "$DB" "select status from jobs where id = $STEP")" = cancelled ]
out=$($KAB regressions --db "$DB" 2>&1)
check "kab regressions --db says bisection $B2 was cancelled" has "$out" "bisection  $B2: cancelled"
says 409 "/bisections/$B2/cancel" "bisection $B2 has ended"
says 404 "/bisections/777/cancel" "no bisection"
post "/jobs/$S2/cancel" >/dev/null
wait_for "the second sleeper to end" 60 "[ \"\$(jstatus $S2)\" != running ]"
check "the step job never ran" [ "$(sql "$DB" "select count(*) from runs where job_id = $STEP")" = 0 ]

# a revision kab's clone lacks (doc/bisect.md, "A revision kab's clone
# lacks"): the tree's remote "origin" is a local bare repository, commits
# ahead of the tree and the clone; a job whose variant B tracks its
# branch, and regressions of it whose BAD only origin has. kabd fetches
# the branch into its clone (as kab-build) and accepts; with origin gone
# or unreadable it answers 502 naming the tree, remote, branch and git's
# message, and records nothing; with the tree's lock held as a build
# holds it, 409 at once; a revision on no branch, 400.
ORIGIN=$IT_TMP/origin.git
BR=$(git -C "$TREE" symbolic-ref --short HEAD)
git clone -q --bare "$TREE" "$ORIGIN"
git -C "$TREE" remote add origin "$ORIGIN"
git clone -q "$ORIGIN" "$IT_TMP/w"
ahead() { # i: commit "change i" on origin only; prints its sha
	echo "$1" >"$IT_TMP/w/f$1"
	git -C "$IT_TMP/w" add "f$1"
	GIT_COMMITTER_DATE="$((1700000000 + $1)) +0000" git -C "$IT_TMP/w" -c user.name=t -c user.email=t@kab commit -q -m "change $1"
	git -C "$IT_TMP/w" push -q origin "$BR"
	chmod -R a+rX "$ORIGIN"
	git -C "$IT_TMP/w" rev-parse HEAD
}
in_clone() { git -c safe.directory='*' -C "$CLONE" cat-file -e "$1^{commit}" 2>/dev/null; }
C9=$(ahead 9)
check "commit 9 (${C9:0:12}) is on origin only" sh -c "[ -n '$C9' ] && ! git -C '$TREE' cat-file -e '$C9^{commit}' 2>/dev/null && ! git -c safe.directory='*' -C '$CLONE' cat-file -e '$C9^{commit}' 2>/dev/null"
sed -e 's/^name = bis-it$/name = bis-track/' -e "/^\[variant B\]/,\$ s/^base = .*/track = origin $BR/" "$IT_TMP/src.job" >"$IT_TMP/track.job"
check "the tracked job's variant B tracks origin $BR" grep -q "^track = origin $BR\$" "$IT_TMP/track.job"
sql "$DB" "insert into jobs (id, name, file, text, status, created, kab_version, schema_version)
	values (950, 'bis-track', '$IT_TMP/track.job', cast(readfile('$IT_TMP/track.job') as text), 'done', strftime('%s','now'), 'it', 14);"
treg() { # id bad-sha: a confirmed regression of a copy of job 950 (940 + id: one
	# regression a first bad job, as regressions' unique key wants), GOOD commit 0
	local bj=$((940 + $1))
	[ $bj = 950 ] || sql "$DB" "insert into jobs (id, name, file, text, status, created, kab_version, schema_version)
		select $bj, name, file, text, status, created, kab_version, schema_version from jobs where id = 950;"
	sql "$DB" "insert into regressions (id, created, name, workload, metric, variant_idx, direction, good_job, bad_job,
		good_sha, bad_sha, state, reason, verdict) values ($1, strftime('%s','now'), 'bis-track', 'w', 'time.wall_s', 1,
		'lower', 950, $bj, '${C[0]}', '$2', 'confirmed', 'seeded', 'worse');"
}
treg 10 "$C9"
code=$(post "/regressions/10/bisect")
BT=$(field id)
check "POST /regressions/10/bisect, BAD on origin only: 201 ($code, $BT $(field error | cut -c1-200))" [ "$code" = 201 -a -n "$BT" ]
check "  the branch was fetched into kab's clone: commit 9 is there" in_clone "$C9"
check "  the bisection's BAD is commit 9" [ "$(sql "$DB" "select bad from bisections where id = '$BT'")" = "$C9" ]
check "  the tree itself was not written" sh -c "! git -C '$TREE' cat-file -e '$C9^{commit}' 2>/dev/null"
check "  kabd's log says it fetched" grep -q "fetched origin $BR into kab's clone" "$IT_TMP/kabd.log"
# cancelled, and its step job with it, before the lock is looked at below
[ -n "$BT" ] && $KAB bisect cancel "$BT" --socket "$KABD_SOCK" >/dev/null 2>&1
running() { sql "$DB" "select count(*) from jobs where status = 'running'"; }
wait_for "no job to run (bisection $BT's step job cancelled)" 60 "[ \"\$(running)\" = 0 ]"

# origin moved away: 502 naming the tree, remote, branch and git's message
C10=$(ahead 10)
treg 11 "$C10"
before=$(nbis)
listed() { curl -s -H "$AUTH" "$URL/api/v1/bisections?limit=100"; }
list0=$(listed)
mv "$ORIGIN" "$ORIGIN.gone"
code=$(post "/regressions/11/bisect")
msg=$(field error)
check "POST /regressions/11/bisect with origin gone: 502 ($code: $(cut -c1-300 <<<"$msg"))" [ "$code" = 502 ]
check "  the error starts with tree: and names the tree" has "$msg" "^tree: bad \"$C10\" is in neither $(realpath "$TREE") nor kab's clone"
check "  the remote, its branch and URL" has "$msg" "cannot fetch branch $BR from remote origin ($ORIGIN)"
check "  and git's complaint" has "$msg" "fatal: "
check "  nothing recorded" [ "$(nbis)" = "$before" ]
check "  nothing fetched" sh -c "! git -c safe.directory='*' -C '$CLONE' cat-file -e '$C10^{commit}' 2>/dev/null"
mv "$ORIGIN.gone" "$ORIGIN"
# origin unreadable to kab-build: the same through kab bisect, which exits 1
chmod 000 "$ORIGIN"
out=$($KAB bisect --regression 11 --socket "$KABD_SOCK" 2>&1)
rc=$?
check "kab bisect --regression 11 with origin unreadable exits 1 ($rc: $(cut -c1-300 <<<"$out"))" [ $rc = 1 ]
check "  naming the remote and branch" has "$out" "cannot fetch branch $BR from remote origin"
check "  nothing recorded" [ "$(nbis)" = "$before" ]
check "  GET /bisections lists what it listed before ($(nbis) bisections, none of regression 11)" \
	[ "$(listed)" = "$list0" -a "$(sql "$DB" "select count(*) from bisections where regression_id = 11")" = 0 ]
chmod 0755 "$ORIGIN"
# the tree's lock held, as a build holds it: 409 at once, nothing recorded
t0=$(date +%s)
code=$(flock "$KAB_KBUILD_WORK/$KEY/lock" curl -s -o "$IT_TMP/post.json" -w '%{http_code}' -H "$AUTH" -H "$JOB_CT" -X POST --data-binary '' "$URL/api/v1/regressions/11/bisect")
took=$(($(date +%s) - t0))
check "POST /regressions/11/bisect while a build holds the tree's lock: 409 at once ($code in $took s: $(field error | cut -c1-200))" \
	[ "$code" = 409 -a "$took" -lt 30 ]
check "  saying why" has "$(field error)" "cannot be fetched now: a build of the tree holds its lock"
check "  nothing recorded" [ "$(nbis)" = "$before" -a "$(listed)" = "$list0" ]
# origin back: regression 11 is bisected; a revision on no branch is 400
code=$(post "/regressions/11/bisect")
B11=$(field id)
check "POST /regressions/11/bisect with origin back: 201 ($code, $B11)" [ "$code" = 201 -a -n "$B11" ]
check "  commit 10 fetched" in_clone "$C10"
[ -n "$B11" ] && $KAB bisect cancel "$B11" --socket "$KABD_SOCK" >/dev/null 2>&1
wait_for "no job to run (bisection $B11's step job cancelled)" 60 "[ \"\$(running)\" = 0 ]"
treg 12 0123456789abcdef0123456789abcdef01234567
before=$(nbis)
says 400 "/regressions/12/bisect" "bad: \"0123456789abcdef0123456789abcdef01234567\" is not a commit"
check "  naming the branch fetched" has "$(field error)" "nor on branch $BR of remote origin, fetched just now"
check "  nothing recorded" [ "$(nbis)" = "$before" ]

# the controls of a culprit (doc/bisect.md, "Controls"): this machine's
# step jobs never build, so no culprit is confirmed here and no control
# runs (tests/unit/test_bisect_life.c runs them over the replay); what is
# checked is the keys at kab check, and the column migration 15 added
cat >"$IT_TMP/ctl.job" <<EOF
[job]
name = bis-ctl
bisect.revert = yes
bisect.align = yes
switch = reboot
[swap]
device = none
[variant A]
kernel = build
tree = $TREE
base = ${C[0]}
config = defconfig
[variant B]
kernel = build
tree = $TREE
base = ${C[8]}
config = defconfig
[workload w]
type = command
command = true
EOF
out=$($KAB check "$IT_TMP/ctl.job" 2>&1)
check "kab check takes bisect.revert and bisect.align on a tree's variants" has "$out" "bisect.align = yes"
printf '[job]\nname = bis-ctl-rec\nbisect.revert = yes\nswitch = reboot\n[variant A]\nkernel = build\nbuild = 1\n[variant B]\nkernel = build\nbuild = 2\n[workload w]\ntype = command\ncommand = true\n' >"$IT_TMP/ctl-rec.job"
out=$($KAB check "$IT_TMP/ctl-rec.job" 2>&1)
check "kab check refuses bisect.revert on recorded builds, naming the key (${out:0:100})" \
	has "$out" "ctl-rec.job:3: bisect.revert = yes: .variant B., the variant a bisection measures, boots a recorded build"
check "bisection_jobs has its control column (migration 15)" \
	[ "$(sql "$DB" "select count(*) from bisection_jobs where control is not null")" = 0 ]

# once: another start asks for nothing more
kabd_stop
kabd_up --db "$DB"
check "kabd starts a third time" [ -n "$PORT" ]
check "regression 4 still has one bisection" [ "$(sql "$DB" "select count(*) from bisections where regression_id = 4")" = 1 ]

kabd_stop
it_end
