#!/usr/bin/env bash
# kab writes only under its own state directory. A real unprivileged user
# plants symbolic links and directories where kab's old work directory
# names (/var/tmp/kab-HASH-jobID-wI) and swap file (/var/tmp/kab.swap)
# were; a real job (a kernel build workload on a small fake tree, a swap
# file) runs, and root never writes through them: the victim files and the
# planted paths are unchanged, the swap file and run directories were
# under the state directory. The database, its -wal and -shm are 0600
# under umask 000; a state directory that is group-writable, another
# user's or a symbolic link is refused with the reason, by kab run and by
# kabd; a resumed job finds its own directory again.
. "$(dirname "$0")/lib.sh"
it_begin
for p in make gcc ld bc flex bison perl tar xz useradd userdel runuser mkswap; do
	command -v $p >/dev/null || skip_all "$p is not installed"
done
[ -r /usr/include/libelf.h ] && [ -r /usr/include/openssl/ssl.h ] || skip_all "libelf-dev and libssl-dev are not installed (the kbuild workload checks for them)"

user=kab-it-$$
planted=()
made_default=""
statedir_cleanup() {
	local p
	kabd_stop
	for p in "${planted[@]}"; do rm -rf -- "$p"; done
	if [ -n "$made_default" ]; then
		rmdir /var/lib/kab/jobs 2>/dev/null
		rmdir /var/lib/kab 2>/dev/null
	fi
	id "$user" >/dev/null 2>&1 && userdel "$user" 2>/dev/null
	getent group "$user" >/dev/null && groupdel "$user" 2>/dev/null
	it_cleanup
}
trap statedir_cleanup EXIT
useradd --system --no-create-home --user-group --shell /usr/sbin/nologin "$user" || skip_all "useradd $user failed"
as_user() { runuser -u "$user" -- "$@"; }

# The old name of workload I's directory of job 1 in database $1: FNV-1a of
# the database path, low 32 bits (executor.c before the state directory).
old_jobdir() {
	local s=$1 h=$((0x739d0383)) i c
	for ((i = 0; i < ${#s}; i++)); do
		printf -v c '%d' "'${s:i:1}"
		h=$(( ((h ^ c) * 435) & 0xffffffff ))
	done
	printf '/var/tmp/kab-%08x-job1-w%d' "$h" "$2"
}
# what a file or tree is: names, types, link targets, owners, modes, sizes, mtimes, contents
fingerprint() {
	local p
	for p in "$@"; do
		if [ -d "$p" ] && [ ! -L "$p" ]; then
			find "$p" -printf '%p %y %l %u %m %s %T@\n' | sort
			find "$p" -type f -exec sha256sum {} + | sort
		else
			stat -c '%n %F %N %U %a %s %Y' "$p"
			[ -f "$p" ] && [ ! -L "$p" ] && sha256sum "$p"
		fi
	done
}

# ---- the victims: root's files that the user wants written over ----
victims="$IT_TMP/victims"
mkdir -p "$victims/dir"
for v in a b c; do echo "precious $v" >"$victims/$v"; done
echo "precious d" >"$victims/dir/keep"
chmod 0644 "$victims"/a "$victims"/b "$victims"/c

# ---- a kernel tree small enough to build in a second ----
tree="$IT_TMP/linux"
mkdir -p "$tree/kernel"
: >"$tree/Kconfig"
printf 'defconfig tinyconfig allnoconfig:\n\t@echo made >>%s\n\t@echo CONFIG_KAB_IT=y >$(O)/.config\nvmlinux:\n\t@echo built >$(O)/vmlinux.o\n' \
	"$IT_TMP/configs-made" >"$tree/Makefile"

job() { # name, [swap] device, the second workload's command
	cat <<JOB
[job]
name = $1
pairs = 1

[swap]
device = $2
$([ "$2" = file ] && echo "size = 64M")

[variant A]
name = a
[variant B]
name = b

[workload build]
type = kbuild
source = $tree
config = defconfig
target = vmlinux
jobs = 1

[workload where]
type = command
command = $3
JOB
}

# ---- 1. planted paths at the old names; jobs run in the default state directory ----
[ -e /var/lib/kab ] || made_default=1
jobs_before=$(ls /var/lib/kab/jobs 2>/dev/null)
denied() { ! as_user mkdir "$1" 2>"$IT_TMP/denied.err" && grep -q "Permission denied" "$IT_TMP/denied.err"; }

# 1a. the workload directories: a kernel build's prepare writes config.log,
# cfg/ and .config.tmp in its directory
db="$IT_TMP/plant.db"
for w in 0 1; do
	d=$(old_jobdir "$db" $w)
	planted+=("$d")
	as_user mkdir "$d"
	as_user ln -s "$victims/a" "$d/config.log"
	as_user ln -s "$victims/b" "$d/.config.tmp"
	as_user ln -s "$victims/dir" "$d/cfg"
	as_user ln -s "$victims/a" "$d/prepare.log"
done
check "the user planted $(old_jobdir "$db" 0) with links to root's files" \
	[ -L "$(old_jobdir "$db" 0)/config.log" -a "$(stat -c %U "$(old_jobdir "$db" 0)")" = "$user" ]
fingerprint "$victims" "${planted[@]}" >"$IT_TMP/before.fp"
job it-statedir none "pwd" >"$IT_TMP/plant.job"
env -u STATE_DIRECTORY $KAB run --db "$db" "$IT_TMP/plant.job" >"$IT_TMP/plant.out" 2>"$IT_TMP/plant.err"
rc=$?
check "kab run of a kernel build job exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || tail -20 "$IT_TMP/plant.err"
# each workload runs its uncounted warm-up before its pair: 3 runs of each,
# 2 of them ok (counted), the warm-up recorded warmup
check "4 runs ok, the kernel build ok in all 3 of its runs (the warm-up too)" \
	[ "$(sql "$db" "select count(*) from runs where status='ok'"),$(sql "$db" "select count(*) from metrics where name='kbuild.ok' and value=1")" = 4,3 ]
fingerprint "$victims" "${planted[@]}" >"$IT_TMP/after.fp"
check "the victim files and the planted directories are unchanged (root never wrote through them)" \
	diff -u "$IT_TMP/before.fp" "$IT_TMP/after.fp"
check "each run's directory was a fresh run-* in the job's directory under /var/lib/kab" \
	[ "$(sql "$db" "select count(*) from runs where workload_idx=1 and stdout_tail glob '/var/lib/kab/jobs/job1-??????/run-??????*'")" = 3 ]
[ -n "$made_default" ] && check "the missing /var/lib/kab was made root's, mode 0700" [ "$(stat -c %U:%a /var/lib/kab)" = root:700 ]
check "the user cannot create anything in the state directory (permission denied)" denied /var/lib/kab/jobs/x
check "the job's directory is gone once it is done, and the database no longer names one" \
	[ "$(ls /var/lib/kab/jobs 2>/dev/null)" = "$jobs_before" -a "$(sql "$db" "select ifnull(jobdir, 'none') from jobs")" = none ]
check "the database kab run made is 0600" [ "$(stat -c %a "$db")" = 600 ]

# 1b. the swap file: [swap] device = file without a path
if [ -e /var/tmp/kab.swap ]; then
	echo "  (/var/tmp/kab.swap exists already: not planting one)"
else
	planted+=(/var/tmp/kab.swap)
	as_user ln -s "$victims/c" /var/tmp/kab.swap
fi
fingerprint "$victims" "${planted[@]}" >"$IT_TMP/before.fp"
db="$IT_TMP/swap.db"
job it-statedir-swap file "sh -c 'cat /proc/swaps; pwd'" >"$IT_TMP/swap.job"
env -u STATE_DIRECTORY $KAB run --db "$db" "$IT_TMP/swap.job" >"$IT_TMP/swap.out" 2>"$IT_TMP/swap.err"
rc=$?
check "kab run of a job with a swap file exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || tail -20 "$IT_TMP/swap.err"
fingerprint "$victims" "${planted[@]}" >"$IT_TMP/after.fp"
check "the victim files and the planted paths are unchanged" diff -u "$IT_TMP/before.fp" "$IT_TMP/after.fp"
check "the swap file was a fresh one in the job's directory under /var/lib/kab" \
	[ "$(sql "$db" "select count(*) from runs where workload_idx=1 and stdout_tail like '%/var/lib/kab/jobs/job1-%/swap-%' and stdout_tail not like '%/var/tmp/kab.swap%'")" = 3 ]
check "and it is gone, with the job's directory" [ "$(ls /var/lib/kab/jobs 2>/dev/null)" = "$jobs_before" ]

# ---- 2. kabd: the database, -wal and -shm 0600 whatever the umask ----
old_umask=$(umask)
umask 000
kabd_up
umask "$old_umask"
check "kabd starts with the state directory \$STATE_DIRECTORY" grep -q "state $STATE_DIRECTORY," "$IT_TMP/kabd.log"
kdb="$STATE_DIRECTORY/kab.db"
check "its default database is kab.db in the state directory, 0600 with its -wal and -shm under umask 000" \
	[ "$(stat -c %a "$kdb" "$kdb-wal" "$kdb-shm" 2>&1 | tr '\n' ' ')" = "600 600 600 " ]
check "the state directory kabd made is root's, 0700" [ "$(stat -c %U:%a "$STATE_DIRECTORY")" = root:700 ]
kabd_stop

# ---- 3. refusals, with the reason ----
gw="$IT_TMP/groupw"
mkdir -m 0770 "$gw"
STATE_DIRECTORY=$gw $KAB run --db "$IT_TMP/gw.db" "$IT_TMP/plant.job" >/dev/null 2>"$IT_TMP/gw.err"
rc=$?
check "kab run refuses a group-writable state directory (exit 1)" [ $rc -eq 1 ]
check "naming it, its mode and what to do" \
	grep -q "state directory refused: $gw is writable by its group or others (owner uid 0, mode 0770).*chmod 0700 $gw" "$IT_TMP/gw.err"
check "before touching anything: no database, nothing in it" [ ! -e "$IT_TMP/gw.db" -a -z "$(ls -A "$gw")" ]
$KABD --state-dir "$gw" --db "$IT_TMP/gw.db" --socket "$IT_TMP/gw.sock" 8>&- >"$IT_TMP/gwd.out" 2>&1
rc=$?
check "kabd refuses to start on it (exit 1)" [ $rc -eq 1 ]
check "before it binds its socket" [ ! -e "$IT_TMP/gw.sock" ]
check "with the reason" grep -q "$gw is writable by its group or others (owner uid 0, mode 0770)" "$IT_TMP/gwd.out"
theirs="$IT_TMP/theirs"
mkdir -m 0700 "$theirs"
chown "$user:$user" "$theirs"
$KAB run --state-dir "$theirs" --db "$IT_TMP/t.db" "$IT_TMP/plant.job" >/dev/null 2>"$IT_TMP/theirs.err"
check "a state directory the user owns is refused" grep -q "$theirs is not owned by root (owner uid $(id -u "$user")" "$IT_TMP/theirs.err"
ln -s "$victims/dir" "$IT_TMP/link"
$KAB run --state-dir "$IT_TMP/link" --db "$IT_TMP/l.db" "$IT_TMP/plant.job" >/dev/null 2>"$IT_TMP/link.err"
check "a symbolic link as the state directory is refused" grep -q "$IT_TMP/link is a symbolic link" "$IT_TMP/link.err"
check "and nothing was made through it" [ "$(ls -A "$victims/dir")" = keep ]
open="$IT_TMP/open"
mkdir -m 0777 "$open"
chmod 0777 "$open"
sed "s|^size = 64M$|size = 64M\npath = $open/x.swap|" "$IT_TMP/swap.job" >"$IT_TMP/open.job"
$KAB check "$IT_TMP/open.job" >/dev/null 2>"$IT_TMP/open.err"
rc=$?
check "kab check refuses a swap file in a directory anyone can change (exit 2)" [ $rc -eq 2 ]
check "with its line and the reason" grep -q "^$IT_TMP/open.job:8: swap file $open/x.swap: $open (owner uid 0, mode 0777) can be changed by a user other than root" "$IT_TMP/open.err"

# ---- 4. a job stopped mid-way and resumed finds its own directory ----
rdb="$IT_TMP/resume.db"
: >"$IT_TMP/configs-made"
job it-statedir-resume file "sh -c 'pwd; sleep 4'" >"$IT_TMP/resume.job"
$KAB run --db "$rdb" "$IT_TMP/resume.job" >"$IT_TMP/r1.out" 2>"$IT_TMP/r1.err" &
kab_pid=$!
IT_PIDS+=("$kab_pid")
for i in $(seq 1 300); do
	[ "$(sql "$rdb" "select count(*) from runs where workload_idx=1 and status='started'" 2>/dev/null)" = 1 ] && break
	sleep 0.1
done
name=$(sql "$rdb" "select jobdir from jobs where id=1")
check "the database names the job's directory while it runs ($name)" [ -n "$name" -a -d "$STATE_DIRECTORY/jobs/$name" ]
kill -TERM "$kab_pid"
wait "$kab_pid"
check "the stopped job keeps its directory with its prepared configuration" \
	[ "$(sql "$rdb" "select status || ' ' || jobdir from jobs")" = "cancelled $name" -a -f "$STATE_DIRECTORY/jobs/$name/w0/.config" ]
check "and no run directory is left in it" [ -z "$(ls -d "$STATE_DIRECTORY/jobs/$name"/run-* 2>/dev/null)" ]
$KAB run --resume 1 --db "$rdb" >"$IT_TMP/r2.out" 2>"$IT_TMP/r2.err"
rc=$?
check "kab run --resume 1 exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || tail -20 "$IT_TMP/r2.err"
check "the resumed runs ran in the same job directory" \
	[ "$(sql "$rdb" "select count(*) from runs where workload_idx=1 and status='ok' and stdout_tail like '%/jobs/$name/run-%'")" = 2 ]
check "the configuration was made once, before the stop, and found again" [ "$(wc -l <"$IT_TMP/configs-made")" = 1 ]
check "the job's directory is removed once the job is done" [ ! -e "$STATE_DIRECTORY/jobs/$name" ]
it_end
