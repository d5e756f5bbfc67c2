#!/usr/bin/env bash
# The lab's database layer against a real PostgreSQL server: a cluster of
# this test's own (tests/lab/pg.sh: initdb and pg_ctl in a temporary
# directory as an unprivileged user, a unix socket there and 127.0.0.1 at
# a free port, stopped and removed at exit), then build/tests/test_lab's
# cases with it. Skipped, with the reason, when the server's programs are
# not installed (make deps installs postgresql-15). Ends with test_lab's
# "N passed, N failed, N skipped" line.
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
KAB_TEST_PG_DIR=$PG_DIR KAB_TEST_PG_PORT=$PG_PORT KAB_TEST_PG_USER=$PG_USER KAB_TEST_PG_PASSWORD=$PG_PASSWORD "$bin"
rc=$?
echo "lab: $((SECONDS - t0)) s in all"
exit $rc
