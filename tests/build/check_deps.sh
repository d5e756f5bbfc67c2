#!/usr/bin/env bash
# make deps, web-deps and fuzz-deps for a user other than root install
# nothing (neither apt-get nor npm runs): they name what is missing and the
# target that installs it as root, and stop only when the build cannot do
# without it. As root they install what is missing with apt-get. Run on a
# copy of the Makefile in a directory of its own, with package names no
# Debian has and an apt-get and npm of this test's in front of PATH that
# only note that they ran. As root, the other user is nobody (setpriv).
# Ends with "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/../.."
passed=0 failed=0 skipped=0
ok() { passed=$((passed + 1)); echo "  ok   $*"; }
fail() { failed=$((failed + 1)); echo "  FAIL $*"; }
skip() { skipped=$((skipped + 1)); echo "  skip $*"; }
check() { # description, command...
	local d=$1
	shift
	if "$@"; then ok "$d"; else fail "$d"; fi
}

tmp=$(mktemp -d /tmp/kab-build-deps.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp Makefile "$tmp/Makefile"
mkdir "$tmp/bin"
for p in apt-get npm; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/ran"\n' "$p" "$tmp" >"$tmp/bin/$p"
	chmod 755 "$tmp/bin/$p"
done
A=kab-test-no-such-package-a B=kab-test-no-such-package-b

# as_user CMD...: CMD as a user other than root, in $tmp, with the
# stand-ins first in PATH; 1 (and nothing run) when there is none to be
# (a make of its own: not the jobserver or variables of a make check)
user_run=()
if [ "$(id -u)" != 0 ]; then
	user_run=(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL)
elif id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	chown -R nobody "$tmp"
	user_run=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups env -i HOME="$tmp")
fi
as_user() {
	[ ${#user_run[@]} -gt 0 ] || return 1
	"${user_run[@]}" PATH="$tmp/bin:/usr/bin:/bin" make -s -C "$tmp" "$@" >"$tmp/out" 2>&1
}
none_ran() { [ ! -s "$tmp/ran" ] || { sed 's/^/    ran: /' "$tmp/ran"; return 1; }; }
exit_was() { [ "$rc" = "$1" ] || { echo "    exit $rc, wanted $1"; sed 's/^/    said: /' "$tmp/out"; return 1; }; }
said() { grep -qF -- "$1" "$tmp/out" || { echo "    wanted: $1"; sed 's/^/    said: /' "$tmp/out"; return 1; }; }

if [ ${#user_run[@]} -eq 0 ]; then
	skip "deps as another user: no user nobody or no setpriv"
else
	as_user deps DEB_PKGS="coreutils $A" BUILD_PKGS="coreutils"
	rc=$?
	check "deps, a test package missing: goes on (exit 0)" exit_was 0
	check "... names it and how to install it as root" said "kab: not installed: $A (as root: make deps)"
	check "... says it installs nothing" said "not root, so not installing them: going on"
	check "... and runs no apt-get" none_ran

	as_user deps DEB_PKGS="coreutils $A $B" BUILD_PKGS="coreutils $B"
	rc=$?
	check "deps, a package the build needs missing: stops (exit 2)" exit_was 2
	check "... naming it" said "kab: cannot build without $B: install it as root (make deps), then run this again"
	check "... and runs no apt-get" none_ran

	as_user deps DEB_PKGS="coreutils" BUILD_PKGS="coreutils"
	rc=$?
	check "deps, nothing missing: exit 0" exit_was 0
	check "... and says nothing" [ ! -s "$tmp/out" ]

	as_user fuzz-deps FUZZ_PKGS="$A"
	rc=$?
	check "fuzz-deps, clang missing: stops (exit 2)" exit_was 2
	check "... naming it and make fuzz-deps" said "kab: not installed: $A (as root: make fuzz-deps)"
	check "... and runs no apt-get" none_ran

	as_user web-deps DEB_PKGS="coreutils" BUILD_PKGS="coreutils"
	rc=$?
	check "web-deps, playwright-core not installed: goes on (exit 0)" exit_was 0
	check "... saying what t_web would need, and make web-deps" said "(as root: make web-deps)"
	check "... and runs neither apt-get nor npm" none_ran
fi

# as root: apt-get installs what is missing (the stand-in's, which installs nothing)
if [ "$(id -u)" = 0 ]; then
	rm -f "$tmp/ran"
	PATH="$tmp/bin:$PATH" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -s -C "$tmp" deps DEB_PKGS="coreutils $A" BUILD_PKGS="coreutils $A" >"$tmp/out" 2>&1
	rc=$?
	check "deps as root: exit 0" exit_was 0
	check "... says what it installs" said "kab: installing: $A"
	check "... with apt-get" [ "$(cat "$tmp/ran" 2>/dev/null)" = "apt-get update -qq
apt-get install -y -qq $A" ]
else
	skip "deps as root: installs what is missing (not root)"
fi

echo "build-deps: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
