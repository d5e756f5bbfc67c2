#!/bin/busybox sh
# Runs inside the QEMU guest as init: a real cgroup v2 memory controller,
# real zram, real stress-ng. Prints "KABT ok|FAIL|skip ..." lines that the
# host counts, then powers off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mkdir -p /tmp /var/tmp /run
mount -t tmpfs tmp /tmp
mount -t tmpfs vartmp /var/tmp
mount -t tmpfs run /run
modprobe zram num_devices=0 2>/dev/null || modprobe zram

t() { # description, command...
	d=$1; shift
	if "$@"; then echo "KABT ok $d"; else echo "KABT FAIL $d"; fi
}
# the database in a directory of its own: kab refuses one in /tmp (1777)
mkdir -m 700 /tmp/kab
q() { sqlite3 -batch -noheader /tmp/kab/v2.db "$1"; }

echo "KABT info kernel $(uname -r), controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
t "cgroup v2 offers the memory controller" grep -qw memory /sys/fs/cgroup/cgroup.controllers
t "zram control present" test -e /sys/class/zram-control/hot_add

cat >/tmp/v2.job <<'JOB'
[job]
name = v2
pairs = 1
interval = 0.5s
[swap]
device = zram
size = 256M
[variant A]
name = a
sysctl vm.swappiness = 60
[variant B]
name = b
sysctl vm.swappiness = 100
[workload vm]
type = stress-ng
args = --vm 1 --vm-bytes 96M --vm-keep --vm-method flip --timeout 4
memory.max = 64M
memory.high = 60M
fcount = lru_add_drain folio_add_lru
[workload hog]
type = command
command = dd if=/dev/zero of=/dev/null bs=96M count=1
memory.max = 32M
memory.swap.max = 0
fcount = kab_no_such_function
JOB
swappiness=$(cat /proc/sys/vm/swappiness)
t "kab check accepts memory.high" kab check /tmp/v2.job >/dev/null
kab run --db /tmp/kab/v2.db /tmp/v2.job >/tmp/out 2>/tmp/err
rc=$?
t "kab run exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || sed 's/^/KABT info /' /tmp/err | tail -20
# 6 runs: each workload's 2 and, before them, its uncounted warm-up; the
# checks of both variants below are over the pair's runs
t "runs record cgroup v2 (the warm-ups too)" [ "$(q "select count(*) from runs where cgroup_version=2")" = 6 ]
t "one warm-up a workload, uncounted" [ "$(q "select count(*) from runs where pair = -1 and status = 'warmup'")" = 2 ]
t "stress-ng runs ok under memory.max + memory.high" [ "$(q "select count(*) from runs where workload_idx=0 and status='ok'")" = 2 ]
t "pswpout > 0 in both variants" [ "$(q "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx=0 and r.pair>=0 and m.name='vmstat.pswpout' and m.value>0")" = 2 ]
t "memcg memory.stat counters recorded (memcg.pgscan > 0)" [ "$(q "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx=0 and r.pair>=0 and m.name='memcg.pgscan' and m.value>0")" = 2 ]
t "memory.events recorded (memcg_events.high > 0)" [ "$(q "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx=0 and r.pair>=0 and m.name='memcg_events.high' and m.value>0")" = 2 ]
t "memory.peak read, within memory.max" [ "$(q "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx=0 and r.pair>=0 and m.name='memcg.peak_bytes' and m.value>0 and m.value<=67108864")" = 2 ]
t "hog over memory.max with memory.swap.max = 0 is oom-killed" [ "$(q "select count(*) from runs where workload_idx=1 and status='oom-killed'")" = 2 ]
fc() { q "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx=0 and r.pair>=0 and m.name='fcount.$1' and m.value>0"; }
echo "KABT info function counts: $(q "select group_concat(m.name || '=' || cast(m.value as int), ' ') from metrics m where m.name like 'fcount.%'")"
t "fcount: lru_add_drain calls counted in both runs ($(fc lru_add_drain))" [ "$(fc lru_add_drain)" = 2 ]
t "fcount: folio_add_lru calls counted in both runs" [ "$(fc folio_add_lru)" = 2 ]
t "fcount: an unknown function is recorded unavailable with the reason" \
	[ "$(q "select count(*) from run_unavailable where metric='fcount.kab_no_such_function' and reason like '%not a traceable function%'")" = 3 ]
t "fcount: the report lists it under Not measured" sh -c "kab report 1 --db /tmp/kab/v2.db | grep -q 'fcount.kab_no_such_function: '"
t "fcount: no tracing instance or probe left, tracefs unmounted again" sh -c "! grep -q tracefs /proc/mounts"
t "no kab cgroup remains" [ ! -e /sys/fs/cgroup/kab ]
t "no swap remains" [ "$(tail -n +2 /proc/swaps | wc -l)" = 0 ]
t "swappiness restored" [ "$(cat /proc/sys/vm/swappiness)" = "$swappiness" ]
t "journal empty" [ "$(q "select count(*) from journal")" = 0 ]
kab report 1 --db /tmp/kab/v2.db | sed 's/^/KABT info /' | head -12
echo "KABT done"
poweroff -f
