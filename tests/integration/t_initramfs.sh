#!/usr/bin/env bash
# kernels/initramfs.c with the real mkinitramfs on Debian's kernel package
# (unpacked by tests/qemu/lib.sh, its modules outside /lib/modules, as a
# build's are): the image is a valid initramfs holding that release's
# modules, the machine's /lib/modules and /boot are untouched, the bad
# cases say what is wrong and leave no image, and QEMU boots the kernel
# with the image onto an ext4 root on a virtio disk, which needs the
# image's virtio_blk and ext4 modules. The unit test test_initramfs covers
# the same code with a stand-in for mkinitramfs.
. "$(dirname "$0")/lib.sh"
it_begin QEMU
HELPER=build/tests/test_initramfs
[ -x "$HELPER" ] || skip_all "$HELPER is not built (make $HELPER)"
skip() { skip_all "$@"; }
. tests/qemu/lib.sh
tmp=$IT_TMP

qemu_kernel linux-image-amd64
echo "  kernel: $kver ($kdir)"
config=$kdir/boot/config-$kver

# the tool missing from PATH: which package to install, no image
PATH=/nonexistent-kab "$HELPER" make "$kdir" "$kver" "$config" "$tmp/none.img" >"$tmp/missing.out" 2>&1
rc=$?
check "mkinitramfs missing from PATH fails" [ $rc -ne 0 ]
check "  and says to apt-get install initramfs-tools-core" grep -q "mkinitramfs is not in PATH (/nonexistent-kab): install Debian's initramfs-tools (apt-get install initramfs-tools-core)" "$tmp/missing.out"
check "  and leaves no image" [ ! -e "$tmp/none.img" ]
command -v mkinitramfs >/dev/null || skip_all "mkinitramfs is not installed (apt-get install initramfs-tools-core)"
command -v lsinitramfs >/dev/null && command -v unmkinitramfs >/dev/null || skip_all "lsinitramfs is not installed"
state() { ls -la --time-style=+%s /lib/modules /boot 2>&1; }
state >"$tmp/machine.before"

# the image
t0=$(date +%s)
"$HELPER" make "$kdir" "$kver" "$config" "$tmp/initrd.img" >"$tmp/make.out" 2>&1
rc=$?
echo "  mkinitramfs: $(($(date +%s) - t0)) s, $(du -h "$tmp/initrd.img" 2>/dev/null | cut -f1)"
check "kinitramfs_make on $kver exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || tail -20 "$tmp/make.out"
check "  the image is there" [ -s "$tmp/initrd.img" ]
lsinitramfs "$tmp/initrd.img" >"$tmp/list" 2>"$tmp/list.err"
check "  lsinitramfs lists it" [ -s "$tmp/list" ]
has() { # PATTERN...: every one is a file of the image (lib/ or usr/lib/)
	local p
	for p; do grep -qE "^(usr/)?$p\$" "$tmp/list" || return 1; done
}
check "  it has init and conf/initramfs.conf" has init conf/initramfs.conf
check "  it has lib/modules/$kver/modules.dep" has "lib/modules/$kver/modules.dep"
if grep -qsE '^MODULES=(most|netboot)$' <(grep -hE '^MODULES=' /etc/initramfs-tools/initramfs.conf /etc/initramfs-tools/conf.d/* 2>/dev/null | tail -n 1); then
	check "  it has lib/modules/$kver/kernel/drivers/block/virtio_blk.ko (MODULES=most)" has "lib/modules/$kver/kernel/drivers/block/virtio_blk.ko(\.xz|\.zst)?"
	check "  it has lib/modules/$kver/kernel/fs/ext4/ext4.ko" has "lib/modules/$kver/kernel/fs/ext4/ext4.ko(\.xz|\.zst)?"
else
	IT_SKIP=$((IT_SKIP + 1))
	echo "  skip the virtio_blk and ext4 checks: /etc/initramfs-tools sets MODULES other than most"
fi
echo "  $(grep -cE "^(usr/)?lib/modules/$kver/.*\.ko" "$tmp/list") modules of $kver, $(wc -l <"$tmp/list") files"
check "  no module of another release" [ "$(grep -E '^(usr/)?lib/modules/[^/]+/' "$tmp/list" | grep -vcE "^(usr/)?lib/modules/$kver/")" = 0 ]
unmkinitramfs "$tmp/initrd.img" "$tmp/unpacked" 2>"$tmp/unpack.err"
ko=$(find "$tmp/unpacked" -path "*/lib/modules/$kver/kernel/*" -name 'virtio_blk.ko*' | head -n 1)
check "  unmkinitramfs unpacks it, virtio_blk's vermagic is $kver" \
	[ "$(modinfo -F vermagic "${ko:-/nonexistent}" 2>/dev/null | cut -d' ' -f1)" = "$kver" ]
rm -rf "$tmp/unpacked"
state >"$tmp/machine.after"
check "the machine's /lib/modules and /boot are as they were" diff -u "$tmp/machine.before" "$tmp/machine.after"
staged() { ls -A "$tmp" | grep -c '^\.initramfs-'; }
check "nothing left next to the image" [ "$(staged)" = 0 ]

# bad cases: no image left, a message saying what
mkdir -p "$tmp/empty/lib/modules/6.1.0-other"
"$HELPER" make "$tmp/empty" "$kver" "$config" "$tmp/bad.img" >"$tmp/bad.out" 2>&1
rc=$?
check "a modroot without $kver fails" [ $rc -ne 0 ]
check "  naming the missing directory and what it has" grep -q "no modules of $kver in $tmp/empty: $tmp/empty/lib/modules/$kver is missing (make modules_install INSTALL_MOD_PATH=$tmp/empty puts them there); it has modules of 6.1.0-other" "$tmp/bad.out"
check "  and leaves no image" [ ! -e "$tmp/bad.img" ]
# a config the kernel cannot read an initramfs with: mkinitramfs itself fails
grep -vE '^CONFIG_RD_' "$config" >"$tmp/config.nord"
"$HELPER" make "$kdir" "$kver" "$tmp/config.nord" "$tmp/bad.img" >"$tmp/nord.out" 2>&1
rc=$?
check "a config without RD_GZIP or RD_ZSTD makes mkinitramfs fail" [ $rc -ne 0 ]
check "  the message names the tool, its status and its last words" grep -q "mkinitramfs (initramfs-tools-core) for $kver exited with status 1; its output ends:" "$tmp/nord.out"
check "  ... E: gzip compression (CONFIG_RD_GZIP) not supported by kernel" grep -q "E: gzip compression (CONFIG_RD_GZIP) not supported by kernel" "$tmp/nord.out"
check "  and leaves no image, nor its staging directory" [ ! -e "$tmp/bad.img" -a "$(staged)" = 0 ]
check "  the machine's /lib/modules and /boot are still as they were" diff -u "$tmp/machine.before" <(state)

# boot: an ext4 root on a virtio disk; Debian's kernel has both as modules
if ! command -v qemu-system-x86_64 >/dev/null || ! command -v mkfs.ext4 >/dev/null || [ ! -x /bin/busybox ]; then
	IT_SKIP=$((IT_SKIP + 1))
	echo "  skip the boot: needs qemu-system-x86_64, mkfs.ext4 and busybox-static"
else
	r=$tmp/root
	mkdir -p "$r/bin" "$r/sbin" "$r/proc" "$r/dev"
	cp /bin/busybox "$r/bin/busybox"
	cat >"$r/sbin/init" <<'EOF'
#!/bin/busybox sh
b=/bin/busybox
$b mount -t proc proc /proc
echo "KAB-ROOT: $($b uname -r) $($b awk '$2 == "/" {d = $1 " " $3} END {print d}' /proc/mounts)"
echo "KAB-MODULES: $($b awk '{print $1}' /proc/modules | $b sort | $b tr '\n' ' ')"
$b poweroff -f
EOF
	chmod 755 "$r/sbin/init"
	mkfs.ext4 -q -F -d "$r" "$tmp/root.img" 16M >/dev/null
	t0=$(date +%s)
	timeout 180 qemu-system-x86_64 -accel tcg -m 1024 -nographic -no-reboot \
		-kernel "$kdir/boot/vmlinuz-$kver" -initrd "$tmp/initrd.img" \
		-append "console=ttyS0 panic=-1 root=/dev/vda rw" \
		-drive "file=$tmp/root.img,format=raw,if=virtio" </dev/null >"$tmp/console" 2>&1
	rc=$?
	echo "  boot: $(($(date +%s) - t0)) s"
	if [ $rc = 124 ]; then
		echo "  timed out after 180 s waiting for the guest to power off; last console lines:"
		tail -n 30 "$tmp/console" | sed 's/^/    /'
	fi
	check "the kernel boots with the image onto /dev/vda (ext4)" grep -q "^KAB-ROOT: $kver /dev/vda ext4" "$tmp/console"
	check "  the image loaded virtio_blk and ext4" grep -qE "^KAB-MODULES: .*\bext4\b.*\bvirtio_blk\b" "$tmp/console"
	grep -qE '^KAB-' "$tmp/console" || tail -30 "$tmp/console"
	sed -n 's/^KAB-/    KAB-/p' "$tmp/console"
fi
it_end
