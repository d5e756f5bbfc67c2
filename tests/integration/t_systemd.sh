#!/usr/bin/env bash
# systemd-analyze verify passes on every unit in systemd/, with ExecStart
# pointed at the binaries this build made.
set -u
cd "$(dirname "$0")/../.."
name=t_systemd
command -v systemd-analyze >/dev/null || { echo "  skip $name: systemd-analyze is not installed"; echo "$name: 0 passed, 0 failed, 1 skipped"; exit 0; }
tmp=$(mktemp -d /tmp/kab-units.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
for u in systemd/*.service systemd/*.timer; do
	sed -e "s|/usr/local/bin/kabd|$PWD/build/kabd|; s|/usr/local/bin/kab |$PWD/build/kab |" "$u" >"$tmp/$(basename "$u")"
done
for u in "$tmp"/*; do
	if out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$u" 2>&1); [ -z "$out" ]; then
		pass=$((pass + 1)); echo "  ok   systemd-analyze verify $(basename "$u")"
	else
		fail=$((fail + 1)); echo "  FAIL systemd-analyze verify $(basename "$u")"; echo "$out" | sed 's/^/    /'
	fi
done
# make install into a DESTDIR with another PREFIX: binaries, helper
# programs, pages, units, man pages and the nightly job, all in place
chk() { # description, command...
	local d=$1; shift
	if "$@"; then pass=$((pass + 1)); echo "  ok   $d"; else fail=$((fail + 1)); echo "  FAIL $d"; fi
}
dest=$tmp/dest
if make -s install DESTDIR="$dest" PREFIX=/opt/kab >"$tmp/install.log" 2>&1; then
	chk "make install DESTDIR PREFIX=/opt/kab" true
	for f in opt/kab/bin/kab opt/kab/bin/kabd opt/kab/share/kab/web/job.html opt/kab/share/kab/web/kab.js \
		opt/kab/share/man/man1/kab.1 opt/kab/share/man/man8/kabd.8 opt/kab/share/kab/examples/nightly.job \
		etc/kab/nightly.job etc/kab/machine.conf opt/kab/share/kab/examples/machine.conf etc/systemd/system/kabd.service etc/systemd/system/kab-nightly.timer; do
		chk "installed /$f" [ -s "$dest/$f" ]
	done
	chk "the installed units run /opt/kab/bin" grep -q '^ExecStart=/opt/kab/bin/kabd' "$dest/etc/systemd/system/kabd.service"
	# the nightly job follows a branch of the operator's kernel tree
	# (/src/linux until they point it at theirs): the installed kab reads
	# it and names what is missing at its line
	chk "the installed kab runs: kab check of the installed nightly job names the tree to set" bash -c \
		"'$dest/opt/kab/bin/kab' check '$dest/etc/kab/nightly.job' 2>&1 >/dev/null | grep -qE '^$dest/etc/kab/nightly.job:[0-9]+: (tree /src/linux does not exist|kernel = build: the build user kab-build does not exist)'"
	for m in man1/kab.1 man8/kabd.8; do
		chk "man page $m renders without warnings" bash -c \
			"out=\$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l '$dest/opt/kab/share/man/$m' 2>&1 >/dev/null); [ -z \"\$out\" ]"
	done
	chk "make install made a token /etc/kab/token, 0600, of 64 hex digits" \
		bash -c "[ \"\$(stat -c %a '$dest/etc/kab/token')\" = 600 ] && grep -qxE '[0-9a-f]{64}' '$dest/etc/kab/token'"
	chk "the nightly service submits over the socket, with no token and no URL" \
		bash -c "grep -q '^ExecStart=/opt/kab/bin/kab submit /etc/kab/nightly.job$' '$dest/etc/systemd/system/kab-nightly.service'"
	chk "kabd's unit is Type=notify and serves only its socket" \
		bash -c "grep -qx 'Type=notify' '$dest/etc/systemd/system/kabd.service' && grep -qx 'ExecStart=/opt/kab/bin/kabd --db /var/lib/kab/kab.db' '$dest/etc/systemd/system/kabd.service'"
	chk "make install made /etc/kab 0755 and /etc/kab/machine.conf 0644 (kab reads it only so)" \
		bash -c "[ \"\$(stat -c %a '$dest/etc/kab')\" = 755 ] && [ \"\$(stat -c %a '$dest/etc/kab/machine.conf')\" = 644 ]"
	chk "the installed kab reads the installed machine.conf: kab config exits 0" bash -c \
		"KAB_MACHINE_CONF='$dest/etc/kab/machine.conf' '$dest/opt/kab/bin/kab' config >/dev/null"
	token=$(cat "$dest/etc/kab/token")
	echo '# mine' >"$dest/etc/kab/nightly.job"
	make -s install DESTDIR="$dest" PREFIX=/opt/kab >/dev/null 2>&1
	chk "a second make install keeps the operator's /etc/kab/nightly.job" grep -qx '# mine' "$dest/etc/kab/nightly.job"
	chk "and the token" [ "$(cat "$dest/etc/kab/token")" = "$token" ]
else
	chk "make install DESTDIR PREFIX=/opt/kab" false
	sed 's/^/    /' "$tmp/install.log" | tail -5
fi
echo "$name: $pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
