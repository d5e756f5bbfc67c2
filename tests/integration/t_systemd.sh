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
echo "$name: $pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
