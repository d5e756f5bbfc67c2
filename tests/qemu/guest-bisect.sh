#!/bin/busybox sh
# /init of t_bisect_kernels's guest, in every boot: as guest-nightly.sh
# (the disk mounted at the state directory, the nights submitted back to
# back, kabd switching kernels by kexec), and then the bisection kabd
# starts by itself (bisect = auto in the nights' [job]) once the change
# point is confirmed. kabd finds kab's clone of the tree on the disk
# (KAB_KBUILD_WORK) and runs git there; each step is a job on builds the
# host recorded. The guest powers off once the bisection has ended and the
# queue is idle, or 60 s after the queue went idle without one.
#
# The crash of the test: in the first step job that runs, once (a marker
# on the disk), kabd is killed with SIGKILL and started again; in the
# next step job that runs after that, the guest prints "KABT power-cut
# now" and waits: the host kills QEMU (a power cut: what the guest had
# not written to its disk is lost) and boots it again.
# Lines starting with "KABT" are for the host.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t cgroup2 cgroup2 /sys/fs/cgroup
state=/var/lib/kab
[ -r /etc/kabt-state ] && state=$(cat /etc/kabt-state)
mkdir -p /tmp /var/tmp /run "$state"
mount -t tmpfs tmp /tmp
mount -t tmpfs vartmp /var/tmp
mount -t tmpfs run /run
ip link set lo up
echo "KABT boot $(uname -r) uptime $(cut -d' ' -f1 /proc/uptime) cmdline $(cat /proc/cmdline)"
for m in crc32c_generic lzo-rle lzo virtio_pci virtio_blk ext4 zram; do modprobe $m 2>/dev/null; done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if ! mount -t ext4 /dev/vda "$state"; then
	echo "KABT FAIL cannot mount the database disk"
	poweroff -f
fi
db=$state/kab.db
export KAB_KBUILD_WORK=$state/kbuild HOME=/root
mkdir -p /root
q() { sqlite3 -batch -noheader -cmd '.timeout 10000' "$db" "$1" 2>/dev/null; }
ask() {
	local a i=0
	until a=$(q "$1") || [ $i -ge 5 ]; do sleep 1; i=$((i + 1)); done
	echo "$a"
}
name=$(cat "$state/nights/name")
nights=$(ls "$state"/nights/*.kab | wc -l)

start_kabd() {
	echo "KABT kabd starts, uptime $(cut -d" " -f1 /proc/uptime)"
	kabd --db "$db" --state-dir "$state" >>/dev/console 2>&1 &
	kabd_pid=$!
}
start_kabd

have=$(ask "select count(*) from jobs where name = '$name'")
echo "KABT nights in the database at start: ${have:-(no answer)} of $nights"
if [ -z "$have" ]; then
	echo "KABT FAIL the database did not answer: $(sqlite3 -batch -cmd '.timeout 10000' "$db" 'select count(*) from jobs' 2>&1)"
elif [ "$have" -lt "$nights" ]; then
	i=0
	until kab status >/dev/null 2>&1 || [ $i -ge 300 ]; do sleep 0.1; i=$((i + 1)); done
	n=0
	for f in "$state"/nights/*.kab; do
		n=$((n + 1))
		[ $n -le "$have" ] && continue
		if ! kab submit "$f" >/dev/null; then
			echo "KABT FAIL kab submit of night $n ($f)"
			break
		fi
	done
fi

# the step job running now (the name kabd gives it: NAME.bisect-ID-SEQ), or nothing
running_step() { q "select id from jobs where status = 'running' and name like '%.bisect-%' order by id limit 1"; }

idle=0
while :; do
	set -- $(q "select (select count(*) from jobs where name = '$name' and status in ('done', 'failed', 'cancelled'))
		|| ' ' || (select count(*) from jobs where status in ('queued', 'running', 'interrupted'))
		|| ' ' || (select count(*) from regressions where state = 'pending')
		|| ' ' || (select count(*) from bisections)
		|| ' ' || (select count(*) from bisections where state = 'running')")
	ended=${1:-} active=${2:-} pending=${3:-} bis=${4:-} bis_running=${5:-}
	if [ "$active" = 0 ] && [ "$pending" = 0 ] && [ "$bis_running" = 0 ]; then
		[ "$ended" = "$nights" ] && [ "${bis:-0}" -gt 0 ] && break
		idle=$((idle + 1))
		if [ $idle -ge 30 ]; then
			echo "KABT idle for 60 s with $ended of $nights nights ended and ${bis:-0} bisections"
			break
		fi
	else
		idle=0
	fi
	step=$(running_step)
	if [ -n "$step" ] && [ ! -e "$state/kabt-killed" ]; then
		# kabd killed in the middle of a step, once
		sleep 5
		echo "$step" >"$state/kabt-killed"
		sync
		echo "KABT kill -9 kabd in step job $step, uptime $(cut -d' ' -f1 /proc/uptime)"
		kill -KILL $kabd_pid
		i=0
		while kill -0 $kabd_pid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		start_kabd
	elif [ -n "$step" ] && [ -e "$state/kabt-killed" ] && [ "$step" != "$(cat "$state/kabt-killed")" ] && [ ! -e "$state/kabt-powercut" ]; then
		# a power cut in the middle of the next step, once: the host pulls the plug
		sleep 5
		echo "$step" >"$state/kabt-powercut"
		sync
		echo "KABT power-cut now, in step job $step, uptime $(cut -d' ' -f1 /proc/uptime)"
		sleep 600
	fi
	if ! kill -0 $kabd_pid 2>/dev/null; then
		echo "KABT FAIL kabd exited"
		break
	fi
	sleep 2
done
echo "KABT nights: $(q "select group_concat(id || ':' || status, ' ') from jobs where name = '$name'")"
echo "KABT change points: $(q "select group_concat(id || ':' || state || ':' || coalesce(verdict, '-') || ':job ' || coalesce(confirm_job, '-'), ' ') from regressions")"
echo "KABT bisections: $(q "select group_concat(id || ':' || state || ':' || coalesce(reason, ''), ' | ') from bisections")"
kill -TERM $kabd_pid 2>/dev/null
i=0
while kill -0 $kabd_pid 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 $kabd_pid 2>/dev/null; then
	echo "KABT FAIL kabd did not stop within 30 s of SIGTERM"
	kill -KILL $kabd_pid
	sleep 1
fi
echo "KABT cleanup: kab cgroups $(ls -d /sys/fs/cgroup/kab* 2>/dev/null | wc -l), swaps $(tail -n +2 /proc/swaps | wc -l), journal $(q 'select count(*) from journal')"
sync
if umount "$state"; then
	echo "KABT done"
else
	echo "KABT FAIL cannot unmount the database disk; processes: $(ps -o pid,args | tr '\n' ';')"
fi
poweroff -f
