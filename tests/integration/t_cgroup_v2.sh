#!/usr/bin/env bash
# cgroup v2: boots Debian's kernel under QEMU with an initramfs holding kab,
# stress-ng and zram, mounts cgroup2 with the memory controller, runs a job
# there and reads the guest's verdicts from its console.
set -u
cd "$(dirname "$0")/../.."
name=t_cgroup_v2
skip() { echo "  skip $name: $*"; echo "$name: 0 passed, 0 failed, 1 skipped"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root and QEMU (apt-get download, KVM)"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
[ -x /bin/busybox ] || skip "busybox-static is not installed"
command -v cpio >/dev/null || skip "cpio is not installed"
[ -x build/kab ] || skip "build/kab is not built"

. tests/qemu/lib.sh
qemu_kernel linux-image-amd64
pkg=linux-image-$kver

tmp=$(mktemp -d /tmp/kab-v2.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
qemu_root_init "$tmp/root" tests/qemu/guest-v2.sh
qemu_copy_bin "$PWD/build/kab"
mkdir -p "$qemu_root/usr/bin"
cp build/kab "$qemu_root/usr/bin/kab" # the guest mounts a tmpfs over /tmp, where a clone may live
for p in stress-ng sqlite3 mkswap; do qemu_copy_bin "$(command -v $p)"; done
qemu_modules "$kdir" "$kver" drivers/block/zram/zram
qemu_cpio "$tmp/initrd.gz"

boot() { # accelerator options...
	timeout 900 qemu-system-x86_64 "$@" -m 2048 -smp 2 -nographic -no-reboot \
		-kernel "$kdir/boot/vmlinuz-$kver" -initrd "$tmp/initrd.gz" \
		-append "console=ttyS0 panic=-1 quiet" </dev/null >"$tmp/console" 2>&1
}
# Software emulation: nested KVM on these VMs hangs in the firmware, and TCG
# boots this kernel in about 4 s.
echo "  booting $pkg under QEMU (software emulation)"
boot -accel tcg
rc=$?
tr -d '\r' <"$tmp/console" >"$tmp/console.txt"
pass=$(grep -c '^KABT ok ' "$tmp/console.txt")
fail=$(grep -c '^KABT FAIL ' "$tmp/console.txt")
grep '^KABT ' "$tmp/console.txt" | sed 's/^KABT /  /'
if ! grep -q '^KABT done' "$tmp/console.txt"; then
	[ $rc = 124 ] && echo "  timed out after 900 s waiting for the guest to finish (its KABT done line)"
	echo "  FAIL the guest did not finish (qemu exit $rc); last console lines:"
	tail -n 30 "$tmp/console.txt" | sed 's/^/    /'
	fail=$((fail + 1))
fi
[ "$pass" -gt 0 ] || fail=$((fail + 1))
echo "$name: $pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
