#!/bin/busybox sh
# /init of the kexec tests' guests, in every boot: mounts the virtio disk
# that holds kab's database at kab's state directory (/var/lib/kab, or the
# path in the initramfs's /etc/kabt-state: t_patch's guest mounts it where
# the host built its kernels, so that the builds' recorded paths hold in
# both), starts kabd the way its
# systemd unit would (its unix socket /run/kab/kabd.sock, no TCP), submits
# the disk's job.kab over that socket on the first boot, and
# powers off once the job has ended. kabd itself switches kernels with
# kexec; a kernel that panics resets the machine to QEMU's -kernel, whose
# boot comes back here. Lines starting with "KABT" are for the host.
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

echo "KABT kabd starts, uptime $(cut -d" " -f1 /proc/uptime)"
# the disk says "nofile": kexec_file_load fails with ENOSYS for kabd and
# what it runs, as on a kernel without it, so kab loads with kexec-tools
wrap=
[ -e "$state/nofile" ] && wrap=kab-no-kexec-file-load
$wrap kabd --db "$db" --state-dir "$state" >>/dev/console 2>&1 &
kabd_pid=$!
# the job is submitted once, on the first boot: only a database without it
# (no file yet, or no job row) submits; a query that fails is asked again,
# never taken for "no job" (that submitted a second job once)
jobs=
if [ ! -e "$db" ]; then
	jobs=0
else
	i=0
	until jobs=$(q 'select count(*) from jobs') || [ $i -ge 5 ]; do sleep 1; i=$((i + 1)); done
fi
echo "KABT jobs in the database at start: ${jobs:-(no answer)}"
if [ "$jobs" = 0 ]; then
	i=0
	until kab status >/dev/null 2>&1 || [ $i -ge 300 ]; do sleep 0.1; i=$((i + 1)); done
	kab submit "$state/job.kab" || echo "KABT FAIL kab submit"
elif [ -z "$jobs" ]; then
	echo "KABT FAIL the database did not answer: $(sqlite3 -batch -cmd '.timeout 10000' "$db" 'select count(*) from jobs' 2>&1)"
fi
while :; do
	s=$(q 'select status from jobs where id = 1')
	case "$s" in done|failed|cancelled) break ;; esac
	if ! kill -0 $kabd_pid 2>/dev/null; then
		echo "KABT FAIL kabd exited"
		break
	fi
	sleep 1
done
echo "KABT job $s: $(q 'select reason from jobs where id = 1')"
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
