#!/usr/bin/env bash
# The lab's database layer against a real PostgreSQL server: a cluster of
# this test's own (tests/lab/pg.sh: initdb and pg_ctl in a temporary
# directory as an unprivileged user, a unix socket there and 127.0.0.1 at
# a free port, stopped and removed at exit), then build/tests/test_lab's
# cases with it, then build/tests/test_lab_member's (kabd's member of a
# lab: claim, local job, upload, finish; the outbox across a server
# restart; a lost lease). Skipped, with the reason, when the server's programs are
# not installed (make deps installs postgresql-15). Ends with the two
# binaries' "N passed, N failed, N skipped" lines summed.
set -u
cd "$(dirname "$0")/../.."
. tests/lab/pg.sh
bin=build/tests/test_lab
if [ ! -x "$bin" ]; then
	echo "lab: $bin is not built (make $bin)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
why=$(pg_missing)
if [ -n "$why" ]; then
	echo "lab: skipped: $why"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
t0=$SECONDS
if ! pg_start; then
	echo "lab: the test's PostgreSQL cluster did not start (above)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
echo "lab: a cluster of the test's own in $PG_DIR, port $PG_PORT ($((SECONDS - t0)) s to start)"
export KAB_TEST_PG_DIR=$PG_DIR KAB_TEST_PG_PORT=$PG_PORT KAB_TEST_PG_USER=$PG_USER KAB_TEST_PG_PASSWORD=$PG_PASSWORD
# how test_lab_member stops and starts the server under a member's feet
KAB_TEST_PG_CTL="$( [ "$(id -u)" = 0 ] && echo "runuser -u nobody -- ")$PG_BIN/pg_ctl -D $PG_DIR/data -l $PG_DIR/server.log -w -t 30"
export KAB_TEST_PG_CTL
# each binary's "N passed, N failed, N skipped" line, summed into the last
out=$(mktemp)
sum_p=0 sum_f=0 sum_s=0 rc=0
for b in "$bin" build/tests/test_lab_member; do
	if [ ! -x "$b" ]; then
		echo "lab: $b is not built (make $b)"
		sum_f=$((sum_f + 1)) rc=1
		continue
	fi
	"$b" 2>&1 | tee "$out"
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
	[ -n "$line" ] || { sum_f=$((sum_f + 1)) rc=1; continue; }
	sum_p=$((sum_p + $(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+')))
	sum_f=$((sum_f + $(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+')))
	sum_s=$((sum_s + $(grep -oE '[0-9]+ skipped' <<<"$line" | grep -oE '[0-9]+' || echo 0)))
done
rm -f "$out"
echo "lab: $((SECONDS - t0)) s in all"
echo "lab: $sum_p passed, $sum_f failed, $sum_s skipped"
exit $rc
