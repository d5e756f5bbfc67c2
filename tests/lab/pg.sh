# A PostgreSQL cluster of a test's own, sourced by tests/lab/run.sh (and
# later lab suites): pg_start makes one in a temporary directory with
# initdb and starts it with pg_ctl as an unprivileged user (nobody when
# root runs the test, else the user running it), listening on a unix
# socket in that directory and on 127.0.0.1 at a free port; pg_stop stops
# it and removes the directory, and runs from the EXIT trap pg_start sets,
# so a failing test leaves no server behind. Debian's own clusters
# (pg_lsclusters, postgresql@15-main) are never touched.
#
# After pg_start:
#   PG_DIR       the directory: data/, the socket, the log
#   PG_PORT      the TCP port on 127.0.0.1 (the socket has the same number)
#   PG_ADMIN     the superuser (trust on the socket only)
#   PG_USER PG_PASSWORD PG_DB   a login role with a password (scram-sha-256
#                over TCP, trust on the socket) and a database it owns
# PG_CONF_EXTRA, when set before pg_start, is appended to postgresql.conf
# (later lines win: bench/run.sh lab raises max_connections).
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_ADMIN=kab_admin
PG_USER=kab_lab
PG_DB=kablab
PG_DIR=
PG_PASSWORD=

# why the cluster cannot start here, or nothing
pg_missing() {
	local p
	for p in initdb pg_ctl postgres psql; do
		[ -x "$PG_BIN/$p" ] || { echo "no $PG_BIN/$p (Debian package postgresql-15: make deps)"; return; }
	done
	if [ "$(id -u)" = 0 ] && ! id nobody >/dev/null 2>&1; then echo "no user nobody to run the server as"; fi
}

# runs a server program as the cluster's user
pg_as() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u nobody -- "$@"
	else
		"$@"
	fi
}

pg_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pg_stop() {
	[ -n "$PG_DIR" ] || return 0
	if [ -f "$PG_DIR/data/postmaster.pid" ]; then
		pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1
	fi
	rm -rf "$PG_DIR"
	PG_DIR=
}

pg_psql() { # SQL..., as the superuser over the socket
	"$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_DIR" -p "$PG_PORT" -U "$PG_ADMIN" -d postgres "$@"
}

pg_start() {
	PG_DIR=$(mktemp -d /tmp/kab-pg.XXXXXX) || return 1
	trap pg_stop EXIT
	chmod 755 "$PG_DIR"
	[ "$(id -u)" = 0 ] && chown nobody "$PG_DIR"
	PG_PORT=$(pg_free_port) || return 1
	PG_PASSWORD=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
	pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -U "$PG_ADMIN" -A trust --no-sync -E UTF8 --locale=C \
		>"$PG_DIR/initdb.log" 2>&1 || { cat "$PG_DIR/initdb.log"; return 1; }
	cat >>"$PG_DIR/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$PG_DIR'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 40
shared_buffers = 16MB
${PG_CONF_EXTRA:-}
CONF
	cat >"$PG_DIR/data/pg_hba.conf" <<HBA
local all all trust
host all all 127.0.0.1/32 scram-sha-256
HBA
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 30 start >/dev/null ||
		{ cat "$PG_DIR/server.log"; return 1; }
	pg_psql -c "CREATE ROLE $PG_USER LOGIN PASSWORD '$PG_PASSWORD' CREATEDB" -c "CREATE DATABASE $PG_DB OWNER $PG_USER"
}
