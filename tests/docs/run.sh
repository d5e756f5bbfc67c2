#!/usr/bin/env bash
# The job-file key reference in README.md and doc/kab.1 is what
# `kab check --keys` prints from the key tables (harness/job/job_keytab.c,
# the workload types' tables): each block between the markers
# "kab check --keys: NAME" and "end of kab check --keys" must be the
# generator's, and every block it prints must be there.
# KEYS_UPDATE=1 rewrites the blocks from the current output (then review
# the diff before committing). KAB=path overrides build/kab.
set -u
cd "$(dirname "$0")/../.."
kab=${KAB:-build/kab}
if [ ! -x "$kab" ]; then
	echo "docs: $kab is not built (make build/kab)"
	echo "docs: 0 passed, 1 failed"
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$kab" check --keys --format md >"$tmp/md" && "$kab" check --keys --format man >"$tmp/man" || {
	echo "docs: kab check --keys failed"
	echo "docs: 0 passed, 1 failed"
	exit 1
}
exec python3 - "$tmp/md" "$tmp/man" "${KEYS_UPDATE:-0}" <<'PY'
import re, sys

md_out, man_out, update = open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3] == "1"
BEGIN = re.compile(r"^(?:<!-- |\.\\\" )kab check --keys: (.*?)(?: -->)?$")
END = "end of kab check --keys"

def blocks(text):
    """{name: (first line, last line + 1)} of each marked block."""
    found, lines, start, name = {}, text.split("\n"), None, None
    for i, line in enumerate(lines):
        m = BEGIN.match(line)
        if m:
            start, name = i, m.group(1)
        elif END in line and start is not None:
            found[name] = (start, i + 1)
            start = None
    return found, lines

passed = failed = 0
for path, generated in (("README.md", md_out), ("doc/kab.1", man_out)):
    gen, gen_lines = blocks(generated)
    have, lines = blocks(open(path).read())
    changed = False
    for name, (gs, ge) in sorted(gen.items(), key=lambda kv: -have.get(kv[0], (0, 0))[0]):
        want = gen_lines[gs:ge]
        if name not in have:
            failed += 1
            print(f"FAIL {path}: no block \"{name}\": paste `kab check --keys` output's block there")
            continue
        s, e = have[name]
        if lines[s:e] == want:
            passed += 1
            continue
        if update:
            lines[s:e] = want
            changed = True
            passed += 1
            print(f"updated {path}: {name}")
            continue
        failed += 1
        print(f"FAIL {path}: block \"{name}\" differs from kab check --keys; KEYS_UPDATE=1 tests/docs/run.sh rewrites it")
        import difflib
        for d in difflib.unified_diff(lines[s:e], want, "file", "kab check --keys", lineterm="", n=0):
            print("    " + d[:200])
    for name in have:
        if name not in gen:
            failed += 1
            print(f"FAIL {path}: block \"{name}\" is not printed by kab check --keys: remove it")
    if changed:
        open(path, "w").write("\n".join(lines))
print(f"docs: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
