#!/usr/bin/env bash
# cgroup v2: boots Debian's kernel under QEMU with an initramfs holding kab,
# stress-ng and zram, mounts cgroup2 with the memory controller, runs a job
# there and reads the guest's verdicts from its console.
set -u
cd "$(dirname "$0")/../.."
name=t_cgroup_v2
skip() { echo "  skip $name: $*"; echo "$name: 0 passed, 0 failed, 1 skipped"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (apt-get download, KVM)"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
[ -x /bin/busybox ] || skip "busybox-static is not installed"
command -v cpio >/dev/null || skip "cpio is not installed"
[ -x build/kab ] || skip "build/kab is not built"

cache=${KAB_TEST_CACHE:-/var/cache/kab-test}
mkdir -p "$cache"
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
[ -n "$pkg" ] || skip "apt-cache knows no linux-image-amd64 (run apt-get update)"
kver=${pkg#linux-image-}
kdir=$cache/$pkg
if [ ! -e "$kdir/boot/vmlinuz-$kver" ]; then
	(cd "$cache" && apt-get download -q "$pkg" >/dev/null 2>&1) || skip "apt-get download $pkg failed"
	deb=$(ls "$cache"/"$pkg"_*.deb | head -n 1)
	mkdir -p "$kdir" && dpkg-deb -x "$deb" "$kdir" && rm -f "$deb" || skip "cannot unpack $pkg"
fi
if [ ! -e "$kdir/lib/modules/$kver/modules.dep" ]; then
	command -v depmod >/dev/null || skip "depmod is not installed (apt-get install kmod)"
	depmod -b "$kdir" "$kver" || skip "depmod failed on $kdir"
fi

tmp=$(mktemp -d /tmp/kab-v2.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,etc,lib/modules/$kver}
cp /bin/busybox "$root/bin/busybox"
install -m 755 tests/qemu/guest-v2.sh "$root/init"
copy_bin() { # a program and the shared libraries it needs, at the same paths
	local f=$1 lib
	mkdir -p "$root$(dirname "$f")"
	cp -L "$f" "$root$f"
	for lib in $(ldd "$f" | awk '/=> \// {print $3} /^\t\/lib/ {print $1}'); do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}
copy_bin "$PWD/build/kab"
cp build/kab "$root/usr/bin/kab" # the guest mounts a tmpfs over /tmp, where a clone may live
for p in stress-ng sqlite3 mkswap; do copy_bin "$(command -v $p)"; done
# zram and the modules it depends on, with a modules.dep for modprobe
mdir=$kdir/lib/modules/$kver
need=(kernel/drivers/block/zram/zram.ko)
declare -A seen
while [ ${#need[@]} -gt 0 ]; do
	m=${need[0]}; need=("${need[@]:1}")
	[ -n "${seen[$m]:-}" ] && continue
	seen[$m]=1
	f=$(ls "$mdir/$m"* 2>/dev/null | head -n 1) || true
	[ -n "$f" ] || continue
	mkdir -p "$root/lib/modules/$kver/$(dirname "$m")"
	cp "$f" "$root/lib/modules/$kver/$(dirname "$m")/"
	deps=$(awk -F': ' -v m="$m" '$1 ~ "^"m {print $2}' "$mdir/modules.dep")
	for d in $deps; do need+=("${d%.xz}"); need+=("${d}"); done
done
cp "$mdir/modules.dep" "$mdir/modules.order" "$root/lib/modules/$kver/" 2>/dev/null
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$tmp/initrd.gz"

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
	echo "  FAIL the guest did not finish (qemu exit $rc); last console lines:"
	tail -n 30 "$tmp/console.txt" | sed 's/^/    /'
	fail=$((fail + 1))
fi
[ "$pass" -gt 0 ] || fail=$((fail + 1))
echo "$name: $pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
