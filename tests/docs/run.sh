#!/usr/bin/env bash
# The documentation against the code.
# 1. The job-file key reference in doc/jobs.md and doc/kab.1 is what
#    `kab check --keys` prints from the key tables (harness/job/job_keytab.c,
#    the workload types' tables): each block between the markers
#    "kab check --keys: NAME" and "end of kab check --keys" must be the
#    generator's, and every block it prints must be there.
#    KEYS_UPDATE=1 rewrites the blocks from the current output (then review
#    the diff before committing). KAB=path overrides build/kab.
# 2. tests/docs/check.py: kabd's routes, the configuration settings, the
#    layers, the statistics' constants, kab's verbs and options (doc/kab.1's
#    SYNOPSIS) and a history point's states against the code, and every
#    relative link of README.md and doc/*.md.
# 3. README.md's minimal job passes kab check.
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
python3 - "$tmp/md" "$tmp/man" "${KEYS_UPDATE:-0}" >"$tmp/keys" <<'PY'
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
for path, generated in (("doc/jobs.md", md_out), ("doc/kab.1", man_out)):
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
print(f"docs-keys: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
keys=$?
cat "$tmp/keys"
python3 tests/docs/check.py | tee "$tmp/check"
check=${PIPESTATUS[0]}
# 3. README.md's minimal job (the ini block under "## A minimal job") is a
#    job kab check accepts on this machine.
sed -n '/^## A minimal job/,/^## /p' README.md | sed -n '/^```ini$/,/^```$/p' | sed '1d;$d' >"$tmp/minimal.job"
if [ -s "$tmp/minimal.job" ] && "$kab" check "$tmp/minimal.job" >"$tmp/minimal.out" 2>&1; then
	echo "docs-minimal: 1 passed, 0 failed"
else
	echo "FAIL README.md: the job under \"## A minimal job\" is not accepted by kab check:"
	sed 's/^/    /' "$tmp/minimal.out" 2>/dev/null
	echo "docs-minimal: 0 passed, 1 failed"
	check=1
fi >"$tmp/minimal"
cat "$tmp/minimal"
# one total for tests/run.sh, which reads the last "N passed, N failed"
p=0 f=0
for n in $(grep -hoE '^docs-(keys|check|minimal): [0-9]+ passed, [0-9]+ failed' "$tmp/keys" "$tmp/check" "$tmp/minimal" | grep -oE '[0-9]+'); do
	if [ -z "${half:-}" ]; then p=$((p + n)) half=1; else f=$((f + n)) half=; fi
done
[ "$keys" -ne 0 ] || [ "$check" -ne 0 ] && [ "$f" -eq 0 ] && f=1
echo "docs: $p passed, $f failed"
[ "$f" -eq 0 ]
