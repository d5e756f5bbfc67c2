#!/bin/busybox sh
# /init of t_nightly_kernels's guest, in every boot: as guest-kexec.sh
# (the virtio disk with kab's database mounted at the state directory
# named in /etc/kabt-state, kabd started on its unix socket), but the disk
# holds a sequence of nights, nights/NNN.kab, all of one job name
# (nights/name), submitted back to back in file order. kabd switches
# kernels with kexec between the boots of every night, finds the change
# point in the nights' history and queues its confirmation job itself; the
# guest powers off once every night has ended and every change point is
# settled (none pending), or 60 s after the queue went idle without one.
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
# q SQL: the answer, or status 1 when the database did not answer (kabd
# may hold it while it recovers the WAL after a boot: wait up to 10 s)
q() { sqlite3 -batch -noheader -cmd '.timeout 10000' "$db" "$1" 2>/dev/null; }
# ask SQL: q, asked again for up to 5 s when the database does not answer
# (a failed query is never taken for an answer)
ask() {
	local a i=0
	until a=$(q "$1") || [ $i -ge 5 ]; do sleep 1; i=$((i + 1)); done
	echo "$a"
}
name=$(cat "$state/nights/name")
nights=$(ls "$state"/nights/*.kab | wc -l)

echo "KABT kabd starts, uptime $(cut -d" " -f1 /proc/uptime)"
kabd --db "$db" --state-dir "$state" >>/dev/console 2>&1 &
kabd_pid=$!

# The nights not yet in the database, in order. kabd starts the first
# night as soon as it is queued, and its first switch (a kexec) may end
# this boot before the last night is submitted: every boot submits what
# is missing, counted in the database (a submission that kexec cut short
# is either there or not), so each night is submitted once and in order.
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
			# a refusal would renumber every later night: stop here
			echo "KABT FAIL kab submit of night $n ($f)"
			break
		fi
	done
fi

# until the nights have ended and kabd has settled their change points;
# the queue idle for 60 s (a change point never found, a refused night)
# ends the wait too. One query every 2 s: the runs count lru_add_drain()
# machine-wide, and every process that exits drains.
idle=0
while :; do
	set -- $(q "select (select count(*) from jobs where name = '$name' and status in ('done', 'failed', 'cancelled'))
		|| ' ' || (select count(*) from jobs where status in ('queued', 'running', 'interrupted'))
		|| ' ' || (select count(*) from regressions where state = 'pending')
		|| ' ' || (select count(*) from regressions)")
	ended=${1:-} active=${2:-} pending=${3:-} regs=${4:-}
	if [ "$active" = 0 ] && [ "$pending" = 0 ]; then
		[ "$ended" = "$nights" ] && [ "$regs" -gt 0 ] && break
		idle=$((idle + 1))
		if [ $idle -ge 30 ]; then
			echo "KABT idle for 60 s with $ended of $nights nights ended and $regs change points"
			break
		fi
	else
		idle=0
	fi
	if ! kill -0 $kabd_pid 2>/dev/null; then
		echo "KABT FAIL kabd exited"
		break
	fi
	sleep 2
done
echo "KABT nights: $(q "select group_concat(id || ':' || status, ' ') from jobs where name = '$name'")"
echo "KABT change points: $(q "select group_concat(id || ':' || state || ':' || coalesce(verdict, '-') || ':job ' || coalesce(confirm_job, '-'), ' ') from regressions")"
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
# the host reads the disk with debugfs, which does not replay ext4's
# journal: "done" only after a clean unmount
if umount "$state"; then
	echo "KABT done"
else
	echo "KABT FAIL cannot unmount the database disk; processes: $(ps -o pid,args | tr '\n' ';')"
fi
poweroff -f
