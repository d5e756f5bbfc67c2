#!/usr/bin/env bash
# kexec between kernels, in QEMU: a guest boots Debian's kernel from an
# initramfs holding kab, kabd and stress-ng; its database lives on a
# virtio disk. A job whose variants are two different kernels (Debian's
# generic and cloud flavours, registered as image builds) runs 2 boots a
# variant in ABBA order, 2 runs inside each boot, with kabd switching
# kernels by kexec_file_load after every boot's runs, in one QEMU process.
# Then the same with QEMU killed in the middle of a run and started again
# on the same disk (a power cut), and a variant whose kernel panics at
# boot (panic= resets the machine to QEMU's -kernel, the firmware
# default), once with on_boot_failure = finish and once with abort; and
# kabd without kexec_file_load (a seccomp filter), loading with kexec-tools.
# The host reads the disk's database afterwards.
# KAB_KEXEC_ONLY="abba powercut broken abort tools": the parts to run (all
# by default).
. "$(dirname "$0")/lib.sh"
it_begin QEMU
command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
[ -x /bin/busybox ] || skip_all "busybox-static is not installed"
command -v cpio >/dev/null || skip_all "cpio is not installed"
command -v mkfs.ext4 >/dev/null && command -v debugfs >/dev/null || skip_all "e2fsprogs is not installed"
[ -x build/kabd ] || skip_all "build/kabd is not built"
skip() { skip_all "$@"; }
. tests/qemu/lib.sh

qemu_kernel linux-image-amd64
ka_ver=$kver ka_dir=$kdir
qemu_kernel linux-image-cloud-amd64
kb_ver=$kver kb_dir=$kdir
echo "  kernels: A $ka_ver, B $kb_ver"

want() { case " ${KAB_KEXEC_ONLY:-abba powercut broken abort tools} " in *" $1 "*) return 0 ;; esac; return 1; }

tmp=$IT_TMP
qemu_root_init "$tmp/root" tests/qemu/guest-kexec.sh
for p in build/kab build/kabd; do
	qemu_copy_bin "$PWD/$p"
	cp "$p" "$qemu_root/usr/bin/"
done
for p in stress-ng sqlite3; do qemu_copy_bin "$(command -v $p)"; done
# for the "tools" part: kexec-tools, and a wrapper that takes kexec_file_load away
# (what keeps them from the guest skips that part, not the whole test)
tools_skip=""
if want tools; then
	skip() { tools_skip=$*; }
	if ! qemu_deb_bin kexec-tools /sbin/kexec; then
		tools_skip=${tools_skip:-"kexec-tools could not be fetched"}
	elif ! gcc -O2 -Wall -o "$tmp/kab-no-kexec-file-load" tests/qemu/no-kexec-file-load.c; then
		tools_skip="cannot compile tests/qemu/no-kexec-file-load.c"
	else
		qemu_copy_bin "$tmp/kab-no-kexec-file-load"
		cp "$tmp/kab-no-kexec-file-load" "$qemu_root/usr/bin/"
	fi
	skip() { skip_all "$@"; }
fi
mods="crypto/crc32c_generic crypto/lzo-rle crypto/lzo drivers/virtio/virtio_pci drivers/block/virtio_blk fs/ext4/ext4 drivers/block/zram/zram"
qemu_modules "$ka_dir" "$ka_ver" $mods
qemu_modules "$kb_dir" "$kb_ver" $mods
qemu_cpio "$tmp/initrd.gz"
echo "  initramfs: $(du -h "$tmp/initrd.gz" | cut -f1)"

# disk DIR JOBFILE [MARKER]: an ext4 image holding both kernels, the
# initramfs, the job and MARKER (an empty file the guest's init looks for)
disk() {
	local d=$tmp/$1.stage
	mkdir -p "$d/img"
	[ -n "${3:-}" ] && : >"$d/$3"
	cp "$ka_dir/boot/vmlinuz-$ka_ver" "$d/img/vmlinuz-a"
	cp "$kb_dir/boot/vmlinuz-$kb_ver" "$d/img/vmlinuz-b"
	cp "$tmp/initrd.gz" "$d/img/initrd.gz"
	cp "$2" "$d/job.kab"
	mkfs.ext4 -q -F -d "$d" "$tmp/$1.img" 640M || return 1
	rm -rf "$d"
}

# qemu_start NAME DISK: boots QEMU's default kernel (A) in the background;
# a reset boots it again, poweroff ends it. Console in $tmp/NAME.console.
qemu_start() {
	timeout 1200 qemu-system-x86_64 -accel tcg -m 1536 -smp 2 -nographic \
		-kernel "$ka_dir/boot/vmlinuz-$ka_ver" -initrd "$tmp/initrd.gz" \
		-append "console=ttyS0 quiet" \
		-drive "file=$2,format=raw,if=virtio" </dev/null >>"$tmp/$1.console" 2>&1 &
	QEMU_PID=$!
	IT_PIDS+=("$QEMU_PID")
}

# qemu_kill: SIGKILL to QEMU itself (a child of timeout), a power cut
qemu_kill() {
	pkill -KILL -P "$QEMU_PID" 2>/dev/null
	kill -KILL "$QEMU_PID" 2>/dev/null
	wait "$QEMU_PID" 2>/dev/null
}

# fetch NAME: the guest's database, out of the disk image
fetch() {
	rm -f "$tmp/$1.db" "$tmp/$1.db-wal"
	debugfs -R "dump /kab.db $tmp/$1.db" "$tmp/$1.img" >/dev/null 2>&1
	debugfs -R "dump /kab.db-wal $tmp/$1.db-wal" "$tmp/$1.img" >/dev/null 2>&1
	[ -s "$tmp/$1.db-wal" ] || rm -f "$tmp/$1.db-wal"
	[ -s "$tmp/$1.db" ] || return 1
	# debugfs reads the image as it is, without replaying ext4's journal:
	# only a cleanly unmounted disk shows the guest's last writes
	check "$1: the guest unmounted its disk cleanly" \
		[ "$(dumpe2fs -h "$tmp/$1.img" 2>/dev/null | awk -F: '/^Filesystem state/ {gsub(/ /, "", $2); print $2}')" = clean ]
	check "$1: the guest submitted its job once (one job in the database)" [ "$(sql "$tmp/$1.db" "select count(*) from jobs")" = 1 ]
}

# dump_state NAME: what the guest's database and console say, for a part
# whose checks failed (steps, boots and runs as the host read them)
dump_state() {
	local db=$tmp/$1.db
	echo "  state of $1 as read from its disk:"
	if [ -s "$db" ]; then
		sql "$db" "select 'job   ' || id || ': ' || status || ' | ' || coalesce(reason, '') from jobs order by id" | sed 's/^/    /'
		sql "$db" "select 'step  ' || seq || ' job ' || job_id || ' boot ' || boot || ' variant ' || variant_idx || ' pair ' || pair || ': ' || status from steps where job_id <> 1 order by job_id, seq" | sed 's/^/    /'
		sql "$db" "select 'step  ' || seq || ' boot ' || boot || ' variant ' || variant_idx || ' pair ' || pair || ': ' || status from steps where job_id = 1 order by seq" | sed 's/^/    /'
		sql "$db" "select 'boot  ' || id || ' slot ' || slot || ' variant ' || variant_idx || ' ' || status || ' from ' || substr(from_boot_id, 1, 8) || ' to ' || coalesce(substr(boot_id, 1, 8), '-') || ': ' || coalesce(reason, '') from boots order by id" | sed 's/^/    /'
		sql "$db" "select 'run   ' || id || ' step ' || step_id || ' variant ' || variant_idx || ' ' || status || ' boot ' || substr(boot_id, 1, 8) || ': ' || coalesce(reason, '') from runs order by id" | sed 's/^/    /'
	fi
	echo "    console (KABT lines and kab's own):"
	tr -d '\r' <"$tmp/$1.console" | grep -E '^KABT|kab(d)?:|boot [0-9]+ of the plan|switching to|variant' | tail -n 60 | sed 's/^/      /'
}

# part_begin / part_end NAME: dumps the state when a check of the part failed
part_begin() { PART_FAIL0=$IT_FAIL; }
part_end() { if [ "$IT_FAIL" -gt "$PART_FAIL0" ] || [ -n "${KAB_KEXEC_DUMP:-}" ]; then dump_state "$1"; fi; return 0; }

show_console() {
	echo "  last console lines of $1:"
	tr -d '\r' <"$tmp/$1.console" | grep -v '^\s*$' | tail -n 40 | sed 's/^/    /'
}

# keep every console for a look after the test (tests/out/kexec-NAME.console)
keep_console() { mkdir -p tests/out && tr -d '\r' <"$tmp/$1.console" >"tests/out/kexec-$1.console"; }

guest_done() { grep -q '^KABT done' "$tmp/$1.console" 2>/dev/null; }

wait_qemu() { # NAME: waits for QEMU to exit; fails when the guest did not finish
	wait "$QEMU_PID" 2>/dev/null
	local rc=$?
	keep_console "$1"
	if ! guest_done "$1"; then
		echo "  the guest of $1 did not finish (qemu exit $rc)"
		show_console "$1"
		return 1
	fi
}

job_common() { # NAME BOOTS
	cat <<JOB
[job]
name = $1
boots = $2
runs_per_boot = 2
interval = 0.5s
panic = 3
[swap]
device = zram
size = 256M
[variant A]
name = generic
kernel = image
image = /var/lib/kab/img/vmlinuz-a
initrd = /var/lib/kab/img/initrd.gz
[variant B]
name = cloud
kernel = image
image = /var/lib/kab/img/vmlinuz-b
initrd = /var/lib/kab/img/initrd.gz
JOB
}
workload() { # [stress-ng --timeout, default 3]
	cat <<JOB
[workload vm]
type = stress-ng
args = --vm 1 --vm-bytes 96M --vm-keep --vm-method flip --timeout ${1:-3}
memory.max = 64M
; this test is about switching kernels: a memcg OOM kill of stress-ng's
; worker (t_oom's subject) must not make a run uncounted here
oom = tolerate
JOB
}


# ---- 1: four kexecs in one QEMU process, ABBA, 2 runs a boot ----
if want abba; then
part_begin
{ job_common abba 2; workload; } >"$tmp/abba.job"
disk abba "$tmp/abba.job" || skip_all "mkfs.ext4 -d failed"
echo "  abba: booting QEMU (software emulation); 5 boots, 8 runs and the warm-up"
qemu_start abba "$tmp/abba.img"
wait_qemu abba
check "abba: the guest ran the job to its end and powered off" guest_done abba
db=$tmp/abba.db
if fetch abba; then
	b_a=$(sql "$db" "select build_id from boots where variant_idx = 0 limit 1")
	b_b=$(sql "$db" "select build_id from boots where variant_idx = 1 limit 1")
	check "abba: job done" [ "$(sql "$db" "select status from jobs where id = 1")" = done ]
	check "abba: 4 boots, all ok, by kexec" [ "$(sql "$db" "select count(*) from boots where status = 'ok' and method = 'kexec'")" = 4 ]
	check "abba: no boot failed or abandoned" [ "$(sql "$db" "select count(*) from boots where status <> 'ok'")" = 0 ]
	check "abba: the boots went A B B A" [ "$(sql "$db" "select group_concat(variant_idx, '') from (select variant_idx from boots order by id)")" = 0110 ]
	check "abba: A and B are two builds with different kernelreleases" \
		[ "$(sql "$db" "select count(distinct kernelrelease) from builds where id in ($b_a, $b_b)")" = 2 ]
	# 9 runs: the 8 of 4 boots and, first, the workload's uncounted
	# warm-up, inside A's first boot: it costs no switch (still 4 boots)
	check "abba: 8 runs, all ok, and the warm-up" \
		[ "$(sql "$db" "select count(*) || '/' || sum(status = 'ok') || '/' || sum(status = 'warmup') from runs")" = 9/8/1 ]
	check "abba: the warm-up ran first, in A's first boot, before its runs" \
		[ "$(sql "$db" "select r.id = (select min(id) from runs) and r.variant_idx = 0 and r.boot_id = (select boot_id from boots order by id limit 1) from runs r where r.pair = -1")" = 1 ]
	check "abba: each run on the kernel its variant asked for (kab.build marker and kernelrelease)" \
		[ "$(sql "$db" "select count(*) from runs r join boots b on b.boot_id = r.boot_id join builds k on k.id = b.build_id
			where b.variant_idx = r.variant_idx and r.kernel_release = k.kernelrelease
			and r.cmdline like '%kab.build=' || b.build_id || '%'")" = 9 ]
	check "abba: 2 counted runs in each of 4 distinct boots" \
		[ "$(sql "$db" "select group_concat(c, ' ') from (select count(*) c from runs where pair >= 0 group by boot_id)")" = "2 2 2 2" ]
	check "abba: the runs are on cgroup v2" [ "$(sql "$db" "select count(*) from runs where cgroup_version = 2")" = 9 ]
	check "abba: zram swap took pages in every run (the warm-up too)" \
		[ "$(sql "$db" "select count(*) from metrics m join runs r on r.id = m.run_id where m.name = 'vmstat.pswpout' and m.value > 0")" = 9 ]
	check "abba: every boot has its switch-to-ready time" \
		[ "$(sql "$db" "select count(*) from boots where kexec_s > 0 and kexec_s >= uptime_s and prep_s >= 0")" = 4 ]
	check "abba: the machine was left clean in every boot (journal empty)" [ "$(sql "$db" "select count(*) from journal")" = 0 ]
	check "abba: PRAGMA integrity_check is ok" [ "$(sql "$db" "pragma integrity_check")" = ok ]
	"$KAB" report 1 --db "$db" >"$tmp/abba.report" 2>&1
	check "abba: the report renders" grep -q 'stress-ng.bogo_ops_per_s' "$tmp/abba.report"
	check "abba: the report shows 2 boots of each variant" \
		[ "$(grep -cE '^  (generic|cloud): build [0-9]+ \(.*\): 2 boots, 0 failed, switch to ready' "$tmp/abba.report")" = 2 ]
	"$KAB" report 1 --db "$db" --format json >"$tmp/abba.json" 2>/dev/null
	check "abba: 2 runs inside a boot count once (n = 2 boots a variant)" \
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); m=[m for w in r["workloads"] for m in w["metrics"] if m["name"]=="stress-ng.bogo_ops_per_s"][0]; sys.exit(0 if all(v["n"]==2 for v in m["variants"]) else 1)' "$tmp/abba.json"
	grep -A3 '^Boots:' "$tmp/abba.report" | sed 's/^/    /'
	# the boots over kabd's API, from a copy of the guest's database
	cp "$db" "$tmp/api.db"
	if kabd_up --db "$tmp/api.db" --web-root web; then
		curl -sf -H "$AUTH" "$URL/api/v1/jobs/1" >"$tmp/job.json"
		check "abba: GET /api/v1/jobs/1 lists the 4 boots with their variant, build and switch time" \
			python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["boots"]; sys.exit(0 if len(b)==4 and [x["variant"] for x in b]==["generic","cloud","cloud","generic"] and all(x["status"]=="ok" and x["method"]=="kexec" and x["kexec_s"]>0 and x["kernel_release"] for x in b) else 1)' "$tmp/job.json"
		# the job page in a real browser: each variant's kernel and boots
		if command -v chromium >/dev/null && [ -f tests/web/node_modules/playwright-core/package.json ]; then
			CHROMIUM=$(command -v chromium) KAB_TOKEN="${AUTH#Authorization: Bearer }" node tests/web/boots_line.mjs "$URL" 1 >"$tmp/page.json" 2>"$tmp/page.err"
			check "abba: the job page (Chromium) shows each variant's image, 2 boots, 0 failed and its last switch time, without errors" \
				python3 -c 'import json,re,sys; p=json.load(open(sys.argv[1])); v=p["variants"]; print("    page: " + v); sys.exit(0 if not p["console_errors"] and re.fullmatch(r"generic \(kernel: image; 2 boots, 0 failed, switch to ready [0-9.]+ s\), cloud \(kernel: image; 2 boots, 0 failed, switch to ready [0-9.]+ s\)", v) else 1)' "$tmp/page.json"
		else
			IT_SKIP=$((IT_SKIP + 1)); echo "  skip the job page's boots line: no chromium or playwright-core (make deps web-deps)"
		fi
		kabd_stop
	else
		fail "abba: kabd did not start on the guest's database"
	fi
	check "abba: the guest left no cgroup, swap or journal entry" grep -q 'KABT cleanup: kab cgroups 0, swaps 0, journal 0' "$tmp/abba.console"
	# the switch times (bench/run.sh kexec breaks them down)
	sw=$(sql "$db" "select group_concat(printf('%.2f', kexec_s), ' ') from boots")
	prep=$(sql "$db" "select group_concat(printf('%.2f', prep_s), ' ') from boots")
	up=$(sql "$db" "select group_concat(printf('%.2f', uptime_s), ' ') from boots")
	init_up=$(grep -o 'KABT boot [^ ]* uptime [0-9.]*' "$tmp/abba.console" | awk '{print $5}' | tr '\n' ' ')
	echo "    switches, decision to ready: $sw s (preparing: $prep; the new kernel's uptime at ready: $up); uptime at /init, the plain boot first: $init_up"
else
	fail "abba: no database on the guest's disk"
	show_console abba
fi

part_end abba
fi

# ---- 2: a power cut in the middle of a run ----
if want powercut; then
part_begin
# the workload says on the console that it runs, and on which kernel: the
# host cuts the power on that line of B's first run (the run is recorded
# started before its workload is spawned), whatever the guest's speed
{ job_common powercut 1; cat <<JOB
[workload vm]
type = command
command = sh -c "echo KABT in-run \$(uname -r) >/dev/console; exec stress-ng --vm 1 --vm-bytes 96M --vm-keep --vm-method flip --timeout 8"
memory.max = 64M
oom = tolerate
JOB
} >"$tmp/powercut.job"
disk powercut "$tmp/powercut.job"
echo "  powercut: booting; QEMU is killed during the first run of B's boot"
qemu_start powercut "$tmp/powercut.img"
in_b_run() { grep -q "KABT in-run $kb_ver" "$tmp/powercut.console"; }
for i in $(seq 1 6000); do
	in_b_run && break
	kill -0 "$QEMU_PID" 2>/dev/null || break
	sleep 0.1
done
in_b_run || { echo "  powercut: B's first run never started (waited $((i / 10)) s)"; show_console powercut; }
qemu_kill
check "powercut: QEMU was killed in the middle of B's first run" in_b_run
echo "--- power restored ---" >>"$tmp/powercut.console"
qemu_start powercut "$tmp/powercut.img"
wait_qemu powercut
db=$tmp/powercut.db
if fetch powercut; then
	check "powercut: the job completes" [ "$(sql "$db" "select status from jobs where id = 1")" = done ]
	check "powercut: the interrupted run is aborted" [ "$(sql "$db" "select count(*) from runs where status = 'aborted'")" = 1 ]
	check "powercut: its reason says the machine rebooted" \
		[ "$(sql "$db" "select count(*) from runs where status = 'aborted' and reason like '%boot%'")" = 1 ]
	check "powercut: 4 ok runs, the aborted one not counted" [ "$(sql "$db" "select count(*) from runs where status = 'ok'")" = 4 ]
	check "powercut: no step has two counted runs" \
		[ "$(sql "$db" "select count(*) from (select step_id from runs where status = 'ok' group by step_id having count(*) > 1)")" = 0 ]
	check "powercut: every step finished" [ "$(sql "$db" "select count(*) from steps where status <> 'finished'")" = 0 ]
	check "powercut: each ok run on its variant's kernel" \
		[ "$(sql "$db" "select count(*) from runs r join boots b on b.boot_id = r.boot_id where r.status = 'ok' and b.variant_idx = r.variant_idx")" = 4 ]
	check "powercut: B's boot was made again after the cut (3 boots ok)" [ "$(sql "$db" "select count(*) from boots where status = 'ok'")" = 3 ]
	check "powercut: PRAGMA integrity_check is ok" [ "$(sql "$db" "pragma integrity_check")" = ok ]
	"$KAB" report 1 --db "$db" >"$tmp/powercut.report" 2>&1
	check "powercut: the report renders and lists the aborted run" grep -q 'aborted' "$tmp/powercut.report"
else
	fail "powercut: no database on the guest's disk"
	show_console powercut
fi

part_end powercut
fi

# ---- 3: a kernel that panics at boot ----
if want broken; then
part_begin
{ job_common broken 1; echo "cmdline = rdinit=/bin/false"; workload; } >"$tmp/broken.job"
disk broken "$tmp/broken.job"
echo "  broken: variant B's kernel panics at boot (rdinit=/bin/false); 2 attempts"
qemu_start broken "$tmp/broken.img"
wait_qemu broken
db=$tmp/broken.db
if fetch broken; then
	check "broken: the job ends done, without B" [ "$(sql "$db" "select status from jobs where id = 1")" = done ]
	check "broken: its reason says a variant is boot-failed" [ "$(sql "$db" "select count(*) from jobs where reason like '%boot-failed%'")" = 1 ]
	check "broken: B failed to boot twice, then was given up" \
		[ "$(sql "$db" "select count(*) from boots where variant_idx = 1 and status = 'failed'")" = 2 ]
	check "broken: the failed boots name the kernel that came up instead" \
		[ "$(sql "$db" "select count(*) from boots where status = 'failed' and reason like '%without a kab.build marker%'")" = 2 ]
	check "broken: A's runs ran on A's kernel" [ "$(sql "$db" "select count(*) from runs r join boots b on b.boot_id = r.boot_id where r.status = 'ok' and r.variant_idx = 0 and b.variant_idx = 0")" = 2 ]
	check "broken: B's steps are boot-failed, none ran" \
		[ "$(sql "$db" "select count(*) from steps where variant_idx = 1 and status = 'boot-failed'") $(sql "$db" "select count(*) from runs where variant_idx = 1")" = "2 0" ]
	"$KAB" report 1 --db "$db" >"$tmp/broken.report" 2>&1
	check "broken: the report says B is boot-failed" grep -q 'cloud: build [0-9]* (.*): 0 boots, 2 failed.*BOOT-FAILED' "$tmp/broken.report"
	check "broken: PRAGMA integrity_check is ok" [ "$(sql "$db" "pragma integrity_check")" = ok ]
	grep -A4 '^Boots:' "$tmp/broken.report" | sed 's/^/    /'
else
	fail "broken: no database on the guest's disk"
	show_console broken
fi
part_end broken
fi

# ---- 4: the same kernel with on_boot_failure = abort, 2 boots a variant ----
if want abort; then
part_begin
{ job_common abort 2; echo "cmdline = rdinit=/bin/false"; workload; } |
	sed 's/^\[job\]$/[job]\non_boot_failure = abort/' >"$tmp/abort.job"
disk abort "$tmp/abort.job"
echo "  abort: the same panicking B with on_boot_failure = abort, ABBA"
qemu_start abort "$tmp/abort.img"
wait_qemu abort
db=$tmp/abort.db
if fetch abort; then
	check "abort: the job is failed, its reason naming B and on_boot_failure = abort" \
		[ "$(sql "$db" "select status from jobs where id = 1 and reason like '%variant cloud is boot-failed%on_boot_failure = abort%'")" = failed ]
	check "abort: B failed to boot twice" [ "$(sql "$db" "select count(*) from boots where variant_idx = 1 and status = 'failed'")" = 2 ]
	check "abort: A's first boot ran its 2 runs, ok" [ "$(sql "$db" "select count(*) from runs where variant_idx = 0 and status = 'ok'")" = 2 ]
	# (A's first boot also ran the workload's warm-up: 3 steps finished)
	check "abort: A's second boot never came: its 2 steps are left pending, B's 4 boot-failed" \
		[ "$(sql "$db" "select group_concat(variant_idx || ':' || status || ':' || n, ' ') from (select variant_idx, status, count(*) n from steps group by 1, 2 order by 1, 2)")" = "0:finished:3 0:pending:2 1:boot-failed:4" ]
	check "abort: PRAGMA integrity_check is ok" [ "$(sql "$db" "pragma integrity_check")" = ok ]
else
	fail "abort: no database on the guest's disk"
	show_console abort
fi
part_end abort
fi

# ---- 5: no kexec_file_load: kab falls back to kexec-tools (kexec --load) ----
if want tools && [ -n "$tools_skip" ]; then
	IT_SKIP=$((IT_SKIP + 1)); echo "  skip tools: $tools_skip"
elif want tools; then
part_begin
{ job_common tools 1; workload; } >"$tmp/tools.job"
disk tools "$tmp/tools.job" nofile
echo "  tools: kabd without kexec_file_load (ENOSYS by seccomp) loads with kexec-tools; A B"
qemu_start tools "$tmp/tools.img"
wait_qemu tools
check "tools: the guest ran the job to its end and powered off" guest_done tools
db=$tmp/tools.db
if fetch tools; then
	check "tools: job done" [ "$(sql "$db" "select status from jobs where id = 1")" = done ]
	check "tools: 2 switches, both ok, by kexec" [ "$(sql "$db" "select count(*) || '/' || sum(status = 'ok' and method = 'kexec') from boots")" = 2/2 ]
	check "tools: 4 runs ok, each on the kernel its variant asked for" \
		[ "$(sql "$db" "select count(*) from runs r join boots b on b.boot_id = r.boot_id where r.status = 'ok' and r.variant_idx = b.variant_idx and r.kernel_release = b.kernel_release")" = 4 ]
	check "tools: kabd said at each switch that it loaded with kexec-tools" \
		[ "$(grep -c 'kexec_file_load is not in this kernel: loading .* with kexec-tools' "$tmp/tools.console")" = 2 ]
	check "tools: PRAGMA integrity_check is ok" [ "$(sql "$db" "pragma integrity_check")" = ok ]
else
	fail "tools: no database on the guest's disk"
	show_console tools
fi
part_end tools
fi
it_end
