#!/usr/bin/env bash
# Before make check spends its time: is this machine's kab executor free?
# kab and kabd hold /run/kab/executor.lock (flock, exclusive) while they
# may run jobs, and another one refuses to start ("another kab executor is
# running"), so with a kabd running (a lab machine's kabd.service) the
# integration suites that run jobs (t_aa, t_adaptive, t_badinput, ...)
# could only fail. This tries the lock the way kab does (harness/exec/
# recover.c, exec_lock) and, when something holds it, says once what and
# what to do, and exits 1. Silent, exit 0, when the lock is free, when not
# root (the integration suites skip then), and when the holder belongs to
# an integration test (this checkout's or another's, holding
# /run/kab-it.lock): the suites wait for that lock, and so for it.
set -u
LOCK=/run/kab/executor.lock # recover.c's LOCK_FILE
IT_LOCK=/run/kab-it.lock

[ "$(id -u)" = 0 ] || exit 0
[ -e "$LOCK" ] || exit 0
# a non-blocking exclusive flock, as exec_lock takes it; released at once
flock -n -x "$LOCK" true 2>/dev/null && exit 0

# the holder: exec_lock writes its pid into the lock file
pid=$(head -c 32 "$LOCK" 2>/dev/null | tr -dc 0-9)
if [ -z "$pid" ] || [ ! -d "/proc/$pid" ]; then
	pid=""
fi

# PID or an ancestor has the integration tests' lock open
in_test() {
	local p=$1 fd
	while [ -n "$p" ] && [ "$p" -gt 1 ]; do
		for fd in /proc/"$p"/fd/*; do
			[ "$(readlink "$fd" 2>/dev/null)" = "$IT_LOCK" ] && return 0
		done
		p=$(awk '$1 == "PPid:" { print $2 }' "/proc/$p/status" 2>/dev/null)
	done
	return 1
}
[ -n "$pid" ] && in_test "$pid" && exit 0

what="" how="" unit=""
if [ -n "$pid" ]; then
	comm=$(cat "/proc/$pid/comm" 2>/dev/null)
	cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)
	cmd=${cmd% }
	[ ${#cmd} -le 120 ] || cmd="${cmd:0:117}..."
	unit=$(grep -oE '[^/]+\.service' "/proc/$pid/cgroup" 2>/dev/null | head -n 1)
	if [ "$comm" = kabd ]; then
		what="kabd is running (pid $pid: $cmd"
	else
		what="a kab executor is running (pid $pid: $cmd"
	fi
	if [ -n "$unit" ]; then
		what="$what; from systemd unit $unit)"
		how="Stop it with \`systemctl stop ${unit%.service}\` (and start it again after)"
	else
		what="$what)"
		if [ "$comm" = kabd ]; then
			how="Stop it with \`kill -TERM $pid\` (its job resumes when kabd starts again)"
		else
			how="Wait for it to end, or stop it with \`kill -TERM $pid\` (kab run --resume goes on with its job)"
		fi
	fi
else
	what="a kab executor is running (its pid is not in $LOCK)"
	how="Wait for it to end, or stop it"
fi
echo "make check: $what and holds $LOCK: the integration suites that run jobs would fail (\"another kab executor is running\"). $how, or run make check on a machine without it." >&2
exit 1
