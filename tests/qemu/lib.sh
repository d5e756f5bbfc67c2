# Shared by the QEMU tests (t_cgroup_v2, t_kexec): Debian's kernels
# fetched with apt-get download and cached, and an initramfs root made of
# kab, busybox, the programs a test names and the modules it needs.
# Source it after setting name and defining skip().

qemu_cache=${KAB_TEST_CACHE:-/var/cache/kab-test}

# qemu_kernel META: fetches (once) the kernel package that Debian's
# metapackage META (linux-image-amd64, linux-image-cloud-amd64) depends
# on, unpacked under the cache with a modules.dep. Sets kver and kdir.
qemu_kernel() {
	local meta=$1 pkg deb
	mkdir -p "$qemu_cache"
	pkg=$(apt-cache depends "$meta" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
	[ -n "$pkg" ] || skip "apt-cache knows no $meta (run apt-get update)"
	kver=${pkg#linux-image-}
	kdir=$qemu_cache/$pkg
	if [ ! -e "$kdir/boot/vmlinuz-$kver" ]; then
		(cd "$qemu_cache" && apt-get download -q "$pkg" >/dev/null 2>&1) || skip "apt-get download $pkg failed"
		deb=$(ls "$qemu_cache"/"$pkg"_*.deb | head -n 1)
		mkdir -p "$kdir" && dpkg-deb -x "$deb" "$kdir" && rm -f "$deb" || skip "cannot unpack $pkg"
	fi
	if [ ! -e "$kdir/lib/modules/$kver/modules.dep" ]; then
		command -v depmod >/dev/null || skip "depmod is not installed (apt-get install kmod)"
		depmod -b "$kdir" "$kver" || skip "depmod failed on $kdir"
	fi
}

# qemu_deb_bin PKG PATH: the program PATH of Debian's package PKG, with the
# shared libraries it needs, at PATH in the root. PKG and those of its
# dependencies the host lacks are fetched (once) with apt-get download and
# unpacked under the cache: the host need not have any of them installed.
# When that fails it calls skip and, if skip returns, returns 1.
qemu_deb_bin() {
	local pkg=$1 path=$2 d=$qemu_cache/deb-$1 p deb lib todo seen=" "
	if [ ! -e "$d/.complete" ]; then
		rm -rf "$d" && mkdir -p "$d"
		todo=$pkg
		while [ -n "$todo" ]; do
			set -- $todo
			p=$1; shift; todo="$*"
			case "$seen" in *" $p "*) continue ;; esac
			seen="$seen$p "
			(cd "$d" && apt-get download -q "$p" >/dev/null 2>&1) || { skip "apt-get download $p failed"; return 1; }
			deb=$(ls "$d"/"$p"_*.deb | head -n 1)
			dpkg-deb -x "$deb" "$d" && rm -f "$deb" || { skip "cannot unpack $p"; return 1; }
			for dep in $(apt-cache depends "$p" 2>/dev/null | awk '$1 == "Depends:" && $2 !~ /^</ {print $2}'); do
				dpkg-query -W -f='${Status}' "$dep" 2>/dev/null | grep -q 'install ok installed' || todo="$todo $dep"
			done
		done
		[ -x "$d$path" ] || { skip "$pkg has no $path"; return 1; }
		: >"$d/.complete"
	fi
	mkdir -p "$qemu_root$(dirname "$path")"
	cp -L "$d$path" "$qemu_root$path"
	local libpath=$d/lib/x86_64-linux-gnu:$d/usr/lib/x86_64-linux-gnu
	for lib in $(LD_LIBRARY_PATH=$libpath ldd "$d$path" | awk '/not found/ {print "MISSING:" $1} /=> \// {print $3} /^\t\/lib/ {print $1}'); do
		case $lib in MISSING:*) skip "$path of $pkg needs ${lib#MISSING:}, in no package fetched"; return 1 ;; esac
		local to=${lib#"$d"}
		[ -e "$qemu_root$to" ] && continue
		mkdir -p "$qemu_root$(dirname "$to")"
		cp -L "$lib" "$qemu_root$to"
	done
}

# qemu_root_init DIR INIT: a root with busybox and INIT as /init.
qemu_root_init() {
	qemu_root=$1
	mkdir -p "$qemu_root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,etc,lib/modules}
	cp /bin/busybox "$qemu_root/bin/busybox"
	install -m 755 "$2" "$qemu_root/init"
}

# qemu_copy_bin PATH: a program and the shared libraries it needs, at the same paths.
qemu_copy_bin() {
	local f=$1 lib
	mkdir -p "$qemu_root$(dirname "$f")"
	cp -L "$f" "$qemu_root$f"
	for lib in $(ldd "$f" | awk '/=> \// {print $3} /^\t\/lib/ {print $1}'); do
		[ -e "$qemu_root$lib" ] && continue
		mkdir -p "$qemu_root$(dirname "$lib")"
		cp -L "$lib" "$qemu_root$lib"
	done
}

# qemu_modules KDIR KVER MODULE...: the modules (paths under kernel/,
# without .ko) and what they depend on, with a modules.dep for modprobe.
qemu_modules() {
	local kd=$1 kv=$2 m f d deps mdir
	shift 2
	mdir=$kd/lib/modules/$kv
	local need=() seen=" "
	for m in "$@"; do need+=("kernel/$m.ko"); done
	while [ ${#need[@]} -gt 0 ]; do
		m=${need[0]}; need=("${need[@]:1}")
		case "$seen" in *" $m "*) continue ;; esac
		seen="$seen$m "
		f=$(ls "$mdir/$m"* 2>/dev/null | head -n 1) || true
		[ -n "$f" ] || continue # built in
		mkdir -p "$qemu_root/lib/modules/$kv/$(dirname "$m")"
		cp "$f" "$qemu_root/lib/modules/$kv/$(dirname "$m")/"
		deps=$(awk -F': ' -v m="$m" '$1 ~ "^"m {print $2}' "$mdir/modules.dep")
		for d in $deps; do need+=("${d%.xz}"); done
	done
	cp "$mdir/modules.dep" "$mdir/modules.order" "$qemu_root/lib/modules/$kv/" 2>/dev/null
	cp "$mdir"/modules.builtin* "$qemu_root/lib/modules/$kv/" 2>/dev/null
	return 0
}

# qemu_cpio OUT: the root as a gzip'd newc cpio.
qemu_cpio() {
	(cd "$qemu_root" && find . | cpio -o -H newc --quiet | gzip -1) >"$1"
}
