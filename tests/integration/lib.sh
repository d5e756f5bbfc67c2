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

# wait_for [-s SHOW] DESC TIMEOUT_S CMD [ARGS...]: tries CMD every 0.1 s
# until it succeeds (returns 0) or TIMEOUT_S seconds have passed (returns
# 1). CMD with ARGS is run as given, in this shell (a function may set
# variables); CMD alone is shell code, evaluated anew at each try, e.g.
#   wait_for "job 3 done" 30 '[ "$(sql "$DB" "select status from jobs where id = 3")" = done ]'
# CMD's output is kept, not shown, unless the bound passes: then it prints
#   timed out after TIMEOUT_S s waiting for DESC
# and what it saw: CMD's output from its last try (so a CMD that prints the
# state it tests says what that state was), then the output of SHOW (shell
# code; $WAIT_SHOW when -s is not given), or the command polled when there
# is neither.
wait_for() {
	local show=${WAIT_SHOW:-}
	if [ "${1:-}" = -s ]; then show=$2; shift 2; fi
	local desc=$1 t=$2 out=/dev/null now deadline
	shift 2
	[ -d "$IT_TMP" ] && out=$IT_TMP/wait_for.out
	deadline=$(( ${EPOCHREALTIME//[!0-9]/} + $(awk -v t="$t" 'BEGIN { printf "%d", t * 1000000 }') ))
	while :; do
		if [ $# -eq 1 ]; then eval "$1" >"$out" 2>&1; else "$@" >"$out" 2>&1; fi && return 0
		now=${EPOCHREALTIME//[!0-9]/}
		[ "$now" -lt "$deadline" ] || break
		sleep 0.1
	done
	echo "  timed out after $t s waiting for $desc"
	if [ -s "$out" ] && [ "$out" != /dev/null ]; then
		echo "    its last try said:"
		tail -n 20 "$out" | sed 's/^/      /'
	fi
	if [ -n "$show" ]; then
		eval "$show" 2>&1 | tail -n 40 | sed 's/^/    /'
	elif [ ! -s "$out" ] || [ "$out" = /dev/null ]; then
		echo "    (polled: $*)"
	fi
	return 1
}
pid_gone() { ! kill -0 "$1" 2>/dev/null; } # PID: the process has exited (and been reaped)

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

# the processes other than this shell with the test lock open (its holder
# and the tests waiting for it): "PID CMD; ..."
lock_holders() {
	local p out=""
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = $$ ] && continue
		ls -l "$p/fd" 2>/dev/null | grep -q '/run/kab-it.lock$' || continue
		out="$out${p#/proc/} $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | cut -c1-80); "
	done
	echo "${out:-nobody}"
}

# it_begin [NEED]: NEED names what the suite needs besides root (QEMU, a
# browser), for the one line that says why it skips when not root
it_begin() {
	[ "$(id -u)" = 0 ] || skip_all "needs root (memory cgroups, swap, knobs)${1:+ and $1}"
	[ -n "$(memcg_root)" ] || skip_all "no memory cgroup controller mounted"
	[ -x "$KAB" ] || skip_all "$KAB is not built"
	# one integration test at a time on this machine (another checkout's
	# tests, a CI run): they share memcgs, swap and knobs
	# fd 8 holds the lock for this test's life; a long-lived process the
	# test starts should not inherit it (start it with 8>&-): one left
	# running would keep every later test waiting
	exec 8>/run/kab-it.lock
	if ! flock -n 8; then
		echo "  (waiting for another integration test on this machine: /run/kab-it.lock; open in: $(lock_holders))"
		if ! flock -w 3600 8; then
			echo "  gave up after an hour waiting for /run/kab-it.lock, open in: $(lock_holders)"
			echo "$IT_NAME: 0 passed, 1 failed, 0 skipped"
			exit 1
		fi
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
	done < <(cat "$IT_TMP/state.before" 2>/dev/null) # none: skip_all removed it
	local root; root=$(memcg_root)
	if [ -d "$root/kab" ]; then
		for d in "$root"/kab/*/; do
			[ -d "$d" ] || continue
			for pid in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
			wait_for -s "echo \"cgroup.procs of $d: \$(cat '$d/cgroup.procs' 2>/dev/null | tr '\n' ' ')\"" \
				"the processes left in $d to die after SIGKILL" 10 "[ -z \"\$(cat '$d/cgroup.procs' 2>/dev/null)\" ]"
			rmdir "$d" 2>/dev/null
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

# kabd_stop: SIGTERM, then SIGKILL after 15 s (saying so, with the tail of
# $IT_TMP/kabd.log); returns kabd's exit status.
kabd_stop() {
	[ -n "$KABD_PID" ] || return 0
	kill -TERM "$KABD_PID" 2>/dev/null
	if ! wait_for -s "echo 'kabd.log ends:'; tail -n 20 '$IT_TMP/kabd.log' | sed 's/^/  /'" \
		"kabd (pid $KABD_PID) to exit on SIGTERM" 15 pid_gone "$KABD_PID"; then
		echo "  kabd (pid $KABD_PID) did not exit within 15 s of SIGTERM: SIGKILL"
		kill -KILL "$KABD_PID" 2>/dev/null
	fi
	wait "$KABD_PID" 2>/dev/null
	local rc=$?
	KABD_PID=""
	return $rc
}

# kabd_poll SOCK: settles (0) when kabd answers /health on its unix socket
# SOCK (KABD_SAW=up) or has exited (KABD_SAW=exited); prints what it saw
kabd_poll() {
	local c
	c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --unix-socket "$1" http://localhost/health 2>/dev/null)
	[ "$c" = 200 ] && { KABD_SAW=up; return 0; }
	pid_gone "$KABD_PID" && { KABD_SAW=exited; echo "kabd exited"; return 0; }
	KABD_SAW="running, no answer on /health (HTTP ${c:-000})"
	echo "kabd (pid $KABD_PID) is $KABD_SAW"
	return 1
}

# kabd_start PORT ARGS...: starts kabd on its own unix socket ($KABD_SOCK,
# unless ARGS has --socket) and on 127.0.0.1:PORT with ARGS (--db, ...),
# and waits up to 15 s for /health over the socket; 1 if it did not come
# up (its output is in $IT_TMP/kabd.log), saying what it saw: that kabd
# exited, with its status, or that it did not answer, and what kabd logged
# since this start. KABD_QUIET=1: only a timeout is told (kabd_up tells
# the rest). KABD_SAW says what it saw. Every TCP request needs a token:
# ARGS' --token-file, else one made here ($IT_TMP/kabd.token, 0600); $AUTH
# is its Authorization header. POSTs carry $JOB_CT.
KABD_SOCK=$IT_TMP/run/kabd.sock
JOB_CT="Content-Type: application/x-kab-job"
AUTH=""
kabd_start() {
	local p=$1 off rc tf="" sock="" prev="" a
	shift
	for a in "$@"; do
		case $prev in --token-file) tf=$a ;; --socket) sock=$a ;; esac
		prev=$a
	done
	local extra=()
	if [ -z "$tf" ]; then
		tf=$IT_TMP/kabd.token
		[ -s "$tf" ] || (umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tf")
		extra+=(--token-file "$tf")
	fi
	if [ -z "$sock" ]; then
		sock=$KABD_SOCK
		extra+=(--socket "$sock")
	fi
	AUTH="Authorization: Bearer $(cat "$tf" 2>/dev/null)"
	off=$(stat -c %s "$IT_TMP/kabd.log" 2>/dev/null || echo 0)
	local since="tail -c +$((off + 1)) '$IT_TMP/kabd.log' | tail -n 20 | sed 's/^/  /'"
	# 8>&-: a kabd left behind must not hold the machine's test lock
	"$KABD" --listen "127.0.0.1:$p" "${extra[@]}" "$@" >>"$IT_TMP/kabd.log" 2>&1 8>&- &
	KABD_PID=$!
	IT_PIDS+=("$KABD_PID")
	KABD_SAW=""
	if wait_for -s "echo 'kabd.log since this start:'; $since" "kabd on $sock and 127.0.0.1:$p to answer /health" 15 \
		kabd_poll "$sock" && [ "$KABD_SAW" = up ]; then
		return 0
	fi
	kabd_stop
	rc=$?
	if [ "$KABD_SAW" = exited ]; then
		KABD_SAW="kabd exited with status $rc before answering /health on port $p"
		if [ -z "${KABD_QUIET:-}" ]; then
			echo "  $KABD_SAW; kabd.log since this start:"
			eval "$since" | sed 's/^/  /'
		fi
	fi
	return 1
}

# kabd_up ARGS...: kabd_start on a free port below the ephemeral range,
# retried when the port is taken; waits up to 5 minutes while another kab
# executor holds the machine. Sets PORT and URL; 1 if it never came up,
# saying why (the last start's reason and the tail of $IT_TMP/kabd.log).
kabd_up() {
	local eph_lo attempt=0 t0=$SECONDS p other told=""
	read -r eph_lo _ </proc/sys/net/ipv4/ip_local_port_range
	PORT="" URL=""
	while [ $attempt -lt 10 ]; do
		p=$((10000 + RANDOM % (eph_lo > 12000 ? eph_lo - 10000 : 20000)))
		if KABD_QUIET=1 kabd_start $p "$@"; then
			PORT=$p URL="http://127.0.0.1:$p"
			return 0
		fi
		if grep -q "another kab executor" "$IT_TMP/kabd.log" && [ $((SECONDS - t0)) -lt 300 ]; then
			other=$(sed -nE 's/.*another kab executor is running \(pid ([0-9]+),.*/\1/p' "$IT_TMP/kabd.log" | tail -n 1)
			[ -n "$told" ] || echo "  (another kab executor holds this machine, pid ${other:-?}: waiting up to 300 s for it to end)"
			told=1
			: >"$IT_TMP/kabd.log"
			if [ -n "$other" ] && ! pid_gone "$other"; then
				wait_for "the other kab executor (pid $other) to end" $((300 - (SECONDS - t0))) pid_gone "$other"
			else
				sleep 1 # between holders, or one this shell cannot see: try again
			fi
			continue
		fi
		attempt=$((attempt + 1))
		[ $attempt -lt 10 ] && echo "  (${KABD_SAW:-kabd did not come up on port $p}: trying another port)"
	done
	echo "  kabd did not come up in 10 tries${KABD_SAW:+ (the last: $KABD_SAW)}; kabd.log ends:"
	tail -n 20 "$IT_TMP/kabd.log" | sed 's/^/    /'
	return 1
}
