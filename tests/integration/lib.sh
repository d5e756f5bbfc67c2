# Shared helpers for integration tests: real memcg, real swap, real
# workloads. Each test sources this, calls it_begin, and ends with it_end.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
KAB=${KAB:-build/kab}
IT_PASS=0 IT_FAIL=0 IT_SKIP=0
IT_NAME=$(basename "$0" .sh)
IT_TMP=$(mktemp -d /tmp/kab-it.XXXXXX)
# kab's state directory (work directories, swap files, kernel builds) for
# this test: root's and 0700 like /var/lib/kab, and removed with IT_TMP
export STATE_DIRECTORY=$IT_TMP/state
IT_PIDS=()

ok() { IT_PASS=$((IT_PASS + 1)); echo "  ok   $*"; }
fail() { IT_FAIL=$((IT_FAIL + 1)); echo "  FAIL $*"; }
check() { # description, command...
	local d=$1; shift
	if "$@"; then ok "$d"; else fail "$d"; fi
}
skip_all() {
	echo "  skip $IT_NAME: $*"
	echo "$IT_NAME: 0 passed, 0 failed, 1 skipped"
	rm -rf "$IT_TMP"
	exit 0
}
sql() { sqlite3 -batch -noheader "$1" "$2"; }

memcg_root() {
	local m
	m=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ {print $2; exit}' /proc/mounts)
	if [ -z "$m" ]; then
		m=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
		[ -n "$m" ] && grep -qw memory "$m/cgroup.controllers" 2>/dev/null || m=""
	fi
	echo "$m"
}

knob_files=(/proc/sys/vm/swappiness /sys/module/zswap/parameters/enabled
	/proc/sys/vm/page-cluster /sys/kernel/mm/transparent_hugepage/enabled)
machine_state() {
	local f
	for f in "${knob_files[@]}"; do [ -r "$f" ] && echo "$f=$(cat "$f")"; done
	echo "swaps=$(tail -n +2 /proc/swaps | awk '{print $1}' | sort | tr '\n' ' ')"
	echo "zram=$(ls /sys/block | grep '^zram' | sort | tr '\n' ' ')"
	echo "kabcg=$(ls -d "$(memcg_root)"/kab 2>/dev/null)"
}

it_begin() {
	[ "$(id -u)" = 0 ] || skip_all "needs root (memory cgroups, swap, knobs)"
	[ -n "$(memcg_root)" ] || skip_all "no memory cgroup controller mounted"
	[ -x "$KAB" ] || skip_all "$KAB is not built"
	# one integration test at a time on this machine (another checkout's
	# tests, a CI run): they share memcgs, swap and knobs
	exec 8>/run/kab-it.lock
	if ! flock -n 8; then
		echo "  (waiting for another integration test on this machine: /run/kab-it.lock)"
		flock 8
	fi
	machine_state >"$IT_TMP/state.before"
	trap it_cleanup EXIT
}

# Leaves the machine as it was even when a test fails half-way: kills what
# the test started, puts knobs back, removes zram devices and cgroups it made.
it_cleanup() {
	local p line f v z
	for p in "${IT_PIDS[@]}"; do pkill -9 -P "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
	while IFS= read -r line; do
		case $line in
		/*=*) f=${line%%=*} v=${line#*=}
			v=$(sed -E 's/.*\[([^]]*)\].*/\1/' <<<"$v")
			[ "$(sed -E 's/.*\[([^]]*)\].*/\1/' "$f" 2>/dev/null)" = "$v" ] || echo "$v" >"$f" 2>/dev/null ;;
		zram=*) for z in /sys/block/zram*; do
				z=${z##*/}
				grep -qw "$z" <<<"$line" && continue
				swapoff "/dev/$z" 2>/dev/null
				echo 1 >"/sys/block/$z/reset" 2>/dev/null
				echo "${z#zram}" >/sys/class/zram-control/hot_remove 2>/dev/null
			done ;;
		esac
	done <"$IT_TMP/state.before"
	local root; root=$(memcg_root)
	if [ -d "$root/kab" ]; then
		for d in "$root"/kab/*/; do
			[ -d "$d" ] || continue
			for pid in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
			sleep 0.2; rmdir "$d" 2>/dev/null
		done
		rmdir "$root/kab" 2>/dev/null
	fi
	rm -rf "$IT_TMP"
}

no_residue() { # compares the machine with how it was at it_begin
	machine_state >"$IT_TMP/state.after"
	if ! diff -u "$IT_TMP/state.before" "$IT_TMP/state.after"; then return 1; fi
}

it_end() {
	check "no kab cgroup, zram device, swap or changed knob remains" no_residue
	local skipped=$IT_SKIP
	echo "$IT_NAME: $IT_PASS passed, $IT_FAIL failed, $skipped skipped"
	[ "$IT_FAIL" -eq 0 ]
}

# ---- kabd for the tests that talk to it over HTTP ----
KABD=${KABD:-build/kabd}
KABD_PID=""

# kabd_stop: SIGTERM, then SIGKILL after 15 s; returns kabd's exit status.
kabd_stop() {
	[ -n "$KABD_PID" ] || return 0
	kill -TERM "$KABD_PID" 2>/dev/null
	local i
	for i in $(seq 1 150); do kill -0 "$KABD_PID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$KABD_PID" 2>/dev/null
	wait "$KABD_PID" 2>/dev/null
	local rc=$?
	KABD_PID=""
	return $rc
}

# kabd_start PORT ARGS...: starts kabd on 127.0.0.1:PORT with ARGS (--db,
# --token-file, ...) and waits for /health; 1 if it did not come up (its
# output is in $IT_TMP/kabd.log).
kabd_start() {
	local p=$1 i
	shift
	"$KABD" --listen "127.0.0.1:$p" "$@" >>"$IT_TMP/kabd.log" 2>&1 &
	KABD_PID=$!
	IT_PIDS+=("$KABD_PID")
	for i in $(seq 1 50); do
		curl -sf -o /dev/null "http://127.0.0.1:$p/health" 2>/dev/null && return 0
		kill -0 "$KABD_PID" 2>/dev/null || break
		sleep 0.1
	done
	kabd_stop
	return 1
}

# kabd_up ARGS...: kabd_start on a free port below the ephemeral range,
# retried when the port is taken; waits up to 5 minutes while another kab
# executor holds the machine. Sets PORT and URL; 1 if it never came up.
kabd_up() {
	local eph_lo attempt=0 waited=0 p
	read -r eph_lo _ </proc/sys/net/ipv4/ip_local_port_range
	PORT="" URL=""
	while [ $attempt -lt 10 ]; do
		p=$((10000 + RANDOM % (eph_lo > 12000 ? eph_lo - 10000 : 20000)))
		if kabd_start $p "$@"; then
			PORT=$p URL="http://127.0.0.1:$p"
			return 0
		fi
		if grep -q "another kab executor" "$IT_TMP/kabd.log" && [ $waited -lt 300 ]; then
			: >"$IT_TMP/kabd.log"
			sleep 5
			waited=$((waited + 5))
			continue
		fi
		attempt=$((attempt + 1))
	done
	return 1
}
