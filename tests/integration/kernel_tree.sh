# Shared by the tests that build kernels (t_kernels, t_patch): the build
# user and the git tree of a Debian linux-source package, both made once.
# Source it after lib.sh and it_begin.
#
# KT_VERSION, set before sourcing, picks the package: 6.1 (the default;
# linux-source-6.1, tree /var/cache/kab/test-linux-git or
# KAB_TEST_LINUX_GIT, tag v6.1-debian) or 6.12 (linux-source-6.12, the
# seeds' base-against-patched tests; tree
# /var/cache/kab/test-linux-6.12-git or KAB_TEST_LINUX_612_GIT, tag
# v6.12-debian). The builds' work directory is shared.

KT_VERSION=${KT_VERSION:-6.1}
case "$KT_VERSION" in
6.1) KT_TREE=${KAB_TEST_LINUX_GIT:-/var/cache/kab/test-linux-git} ;;
6.12) KT_TREE=${KAB_TEST_LINUX_612_GIT:-/var/cache/kab/test-linux-6.12-git} ;;
*) skip_all "kernel_tree.sh: no test tree for KT_VERSION=$KT_VERSION (6.1 or 6.12)" ;;
esac
KT_WORK=${KAB_TEST_KBUILD_WORK:-/var/cache/kab/test-kbuild}
KT_BASE=v$KT_VERSION-debian

# kt_build_user: the build user kab-build, as make install makes it;
# KT_USER_MADE=1 when made here. kt_cleanup removes it then, and gives
# back to root what it owns in the cached work directory (the next run's
# kab takes it over again, whatever uid the user gets then).
KT_USER_MADE=0
kt_build_user() {
	if ! getent passwd kab-build >/dev/null; then
		useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin kab-build ||
			skip_all "cannot make the build user kab-build (useradd)"
		KT_USER_MADE=1
	fi
	KB_UID=$(id -u kab-build) KB_GID=$(id -g kab-build)
}
kt_cleanup() {
	[ "$KT_USER_MADE" = 1 ] || return 0
	[ -d "$KT_WORK" ] && find "$KT_WORK" -xdev -uid "$KB_UID" -exec chown -h root:root {} + 2>/dev/null
	userdel kab-build 2>/dev/null || echo "  (could not remove the build user kab-build: $(userdel kab-build 2>&1))"
}

# kt_git_tree: the git tree at $KT_TREE, tag $KT_BASE, made once from the
# unpacked Debian source or its tarball, readable by kab-build.
kt_git_tree() {
	local src=/var/cache/kab/src/linux-source-$KT_VERSION tarball=/usr/src/linux-source-$KT_VERSION.tar.xz
	if [ ! -d "$KT_TREE/.git" ]; then
		echo "  (making the test kernel git tree $KT_TREE once)"
		rm -rf "$KT_TREE.tmp"
		if [ -f "$src/Makefile" ]; then
			cp -a "$src" "$KT_TREE.tmp"
		elif [ -f "$tarball" ]; then
			mkdir -p "$KT_TREE.tmp" && tar -xJf "$tarball" -C "$KT_TREE.tmp" --strip-components=1
		else
			skip_all "no kernel source: apt-get install linux-source-$KT_VERSION"
		fi
		# Debian's .gitignore ignores the whole top level: add with -f
		(cd "$KT_TREE.tmp" && git init -q -b master && git add -A -f &&
			git -c user.name=kab -c user.email=kab@localhost commit -q -m "linux-source-$KT_VERSION (Debian)" &&
			git tag "$KT_BASE") && mv "$KT_TREE.tmp" "$KT_TREE" || skip_all "cannot make the git tree $KT_TREE"
	fi
	# the build user reads the tree (an older cache may have been made with a tight umask)
	setpriv --reuid kab-build --regid kab-build --clear-groups test -r "$KT_TREE/Makefile" -a -x "$KT_TREE/.git/objects" ||
		chmod -R a+rX "$KT_TREE"
}
