#!/usr/bin/env bash
# Jobs whose variants boot kernels, on this machine (which cannot kexec):
# what kab check and kab run say, and what kabd refuses before any switch
# (a database on tmpfs, a command line longer than the image takes). No
# case here reaches a reboot: each one is refused before the switch. The
# switches themselves are tested in QEMU (t_kexec).
. "$(dirname "$0")/lib.sh"
it_begin
[ -x "$KABD" ] || skip_all "$KABD is not built"
. tests/qemu/lib.sh
skip() { skip_all "$@"; }
qemu_kernel linux-image-amd64
img=$kdir/boot/vmlinuz-$kver
t=$IT_TMP

job() { # SWITCH IMAGE_B [extra [job] line] [IMAGE_A]
	cat <<JOB
[job]
name = boots
boots = 1
switch = $1
${3:-}
[variant A]
name = base
kernel = image
image = ${4:-$img}
[variant B]
name = patched
kernel = image
image = $2
cmdline = kab.test=1
[workload w]
type = command
command = true
JOB
}

# ---- kab check ----
job kexec "$img" >"$t/kexec.job"
"$KAB" check "$t/kexec.job" >/dev/null 2>"$t/err"
rc=$?
if [ -e /sys/kernel/kexec_loaded ]; then
	echo "  (this kernel can kexec: the refusal is not tested here)"
	check "kab check accepts a kexec job on a kernel that can kexec" [ $rc = 0 ]
else
	check "kab check refuses a kexec job where the kernel cannot kexec (exit 2)" [ $rc = 2 ]
	check "  naming why and suggesting switch = reboot" grep -q 'cannot kexec.*set switch = reboot' "$t/err"
fi
job reboot "$t/no-such-vmlinuz" >"$t/missing.job"
"$KAB" check "$t/missing.job" >/dev/null 2>"$t/err"
check "kab check: a missing image is refused (exit 2)" [ $? = 2 ]
check "  naming the file, its line and the path" grep -q "missing.job:13: image $t/no-such-vmlinuz cannot be read" "$t/err"
printf '[job]\nname = x\nruns_per_boot = 2\n[variant A]\n[variant B]\n[workload w]\ntype = command\ncommand = true\n' >"$t/noboot.job"
"$KAB" check "$t/noboot.job" >/dev/null 2>"$t/err"
check "kab check: runs_per_boot in a job that boots no kernel is refused at its line" grep -q 'noboot.job:3: runs_per_boot applies only to a job whose variants boot kernels' "$t/err"
job reboot "$img" >"$t/mixed.job"
sed -i '/^\[variant A\]/,/^\[variant B\]/{s/^kernel = image/kernel = running/;/^image = /d}' "$t/mixed.job"
"$KAB" check "$t/mixed.job" >/dev/null 2>"$t/err"
check "kab check: kernel = running beside kernels of their own is refused" grep -q 'has kernel = running in a job whose other variants boot kernels' "$t/err"

# ---- the machine's switch (/etc/kab/machine.conf; KAB_MACHINE_CONF here) ----
job kexec "$img" | sed '/^switch = /d' >"$t/noswitch.job"
printf '# this machine cannot kexec\nswitch = reboot\n' >"$t/machine.conf"
KAB_MACHINE_CONF=$t/machine.conf "$KAB" check "$t/noswitch.job" >"$t/out" 2>"$t/err"
check "a job without switch takes the machine's (switch = reboot in machine.conf): kab check exit 0" [ $? = 0 ]
check "  and prints it, saying where it came from" \
	bash -c "grep -qx '; switch: this machine.s, from $t/machine.conf' '$t/out' && grep -qx 'switch = reboot' '$t/out'"
if [ ! -e /sys/kernel/kexec_loaded ]; then
	KAB_MACHINE_CONF=$t/machine.conf "$KAB" check "$t/kexec.job" >/dev/null 2>"$t/err"
	check "the job's own switch = kexec wins over the machine's (refused here, exit 2)" [ $? = 2 ]
	KAB_MACHINE_CONF=$t/no-such.conf "$KAB" check "$t/noswitch.job" >/dev/null 2>"$t/err"
	check "without a machine file the default is kexec (refused here), the error naming the file to set it in" \
		grep -q "set switch = reboot in \[job\] (or in $t/no-such.conf, for every job on this machine)" "$t/err"
fi
KAB_MACHINE_CONF=examples/machine.conf "$KAB" check "$t/noswitch.job" >/dev/null 2>"$t/err"
if [ -e /sys/kernel/kexec_loaded ]; then
	check "the installed example (all commented out) reads cleanly" bash -c "! grep -q 'machine.conf:' '$t/err'"
else
	check "the installed example (all commented out) reads cleanly and changes nothing (kexec, refused here)" \
		bash -c "! grep -q 'machine.conf:' '$t/err' && grep -q 'switched with kexec' '$t/err'"
fi
sed 's/^#switch = reboot$/switch = reboot/' examples/machine.conf >"$t/example.conf"
KAB_MACHINE_CONF=$t/example.conf "$KAB" check "$t/noswitch.job" >/dev/null 2>&1
check "its switch = reboot line, uncommented, is taken" [ $? = 0 ]
printf 'switch = reboot\nswitch = warp\n' >"$t/bad.conf"
KAB_MACHINE_CONF=$t/bad.conf "$KAB" check "$t/noswitch.job" >/dev/null 2>"$t/err"
check "machine.conf: a bad switch value is refused with the file, line and choices" \
	bash -c "[ $? = 2 ] && grep -q '$t/bad.conf:2: bad switch \"warp\" (choices: kexec, reboot)' '$t/err'"
printf '\nswtich = reboot\n' >"$t/typo.conf"
KAB_MACHINE_CONF=$t/typo.conf "$KAB" check "$t/noswitch.job" >/dev/null 2>"$t/err"
check "machine.conf: a misspelt key is refused at its line, with a hint" \
	bash -c "[ $? = 2 ] && grep -q '$t/typo.conf:2: unknown key \"swtich\": did you mean \"switch\"' '$t/err'"

# ---- kab run ----
job reboot "$img" >"$t/reboot.job"
"$KAB" check "$t/reboot.job" >/dev/null
check "kab check accepts the switch = reboot job" [ $? = 0 ]
"$KAB" run --db "$t/run.db" "$t/reboot.job" >/dev/null 2>"$t/err"
check "kab run refuses it (exit 2): it goes on across reboots under kabd" [ $? = 2 ]
check "  and says so" grep -q 'run it under kabd' "$t/err"

# ---- kabd: refused before any switch ----
job_failed() { # DB ID: the job is failed; prints its status and reason, sets s
	s=$(sql "$1" "select status from jobs where id = ${2:-0}")
	echo "job ${2:-?}: ${s:-no such job} $(sql "$1" "select coalesce(reason, '') from jobs where id = ${2:-0}")"
	[ "$s" = failed ]
}
kabd_log_tail="echo 'kabd.log ends:'; tail -n 15 '$t/kabd.log'"
mkdir -p /dev/shm/kab-boots-$$
kabd_up --db /dev/shm/kab-boots-$$/kab.db || fail "kabd did not start"
if [ -n "$URL" ]; then
	id=$("$KAB" submit "$t/reboot.job" --socket "$KABD_SOCK" 2>"$t/err")
	"$KAB" status "$id" --socket "$KABD_SOCK" >/dev/null 2>&1
	wait_for -s "$kabd_log_tail" "job $id to be failed" 20 job_failed /dev/shm/kab-boots-$$/kab.db "$id"
	check "a database on tmpfs: the job is failed at its start" [ "$s" = failed ]
	check "  with the reason" [ "$(sql /dev/shm/kab-boots-$$/kab.db "select count(*) from jobs where reason like '%on tmpfs, which a reboot empties%'")" = 1 ]
	check "  and no switch was recorded" [ "$(sql /dev/shm/kab-boots-$$/kab.db "select count(*) from boots")" = 0 ]
	kabd_stop
fi
rm -rf /dev/shm/kab-boots-$$

# an image whose header takes a 128-character command line at most, as
# the first variant's: its switch is the first and is refused. Never run
# where a boot loader is found, so that nothing here can reboot the machine.
for f in /boot/grub/grub.cfg /efi/loader/loader.conf /boot/loader/loader.conf /boot/efi/loader/loader.conf; do
	[ -e "$f" ] && { echo "  (this machine has a boot loader, $f: the command-line case is not run here)"; it_end; exit $?; }
done
cp "$img" "$t/short-vmlinuz"
printf '\x80\x00\x00\x00' | dd of="$t/short-vmlinuz" bs=1 seek=$((0x238)) conv=notrunc status=none
job reboot "$img" "order = alternate" "$t/short-vmlinuz" >"$t/long.job"
printf '%s\n' "[workload v]" "type = command" "command = true" >>"$t/long.job"
KAB_KERNELS_DIR=$t/kernels kabd_up --db "$t/kab.db" || fail "kabd did not start"
if [ -n "$URL" ]; then
	id=$("$KAB" submit "$t/long.job" --socket "$KABD_SOCK" 2>"$t/err")
	wait_for -s "$kabd_log_tail" "job $id to be failed" 30 job_failed "$t/kab.db" "$id"
	check "a command line longer than the image takes: the job is failed" [ "$s" = failed ]
	check "  before switching, naming the lengths" \
		[ "$(sql "$t/kab.db" "select count(*) from jobs where reason like 'cannot switch to variant base%characters, more than the 128%'")" = 1 ]
	check "  no switch was recorded" [ "$(sql "$t/kab.db" "select count(*) from boots")" = 0 ]
	check "  both images were registered as builds of kind image, with their release" \
		[ "$(sql "$t/kab.db" "select count(*) from builds where kind = 'image' and status = 'ok' and kernelrelease = '$kver'")" = 2 ]
	check "  and copied under the kernels directory" [ -r "$t/kernels/1/bzImage" ]
	sql "$t/kab.db" "select reason from jobs where id = $id" | sed 's/^/    /'
	kabd_stop
fi
it_end
