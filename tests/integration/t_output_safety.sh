#!/usr/bin/env bash
# Output safety (issue 24, item 4): what kab did not write itself reaches
# no terminal raw, its Atom feed stays XML whatever the database holds, and
# the programs kab starts hold none of its descriptors. Covered:
#   a type = command workload run by kab run and by kabd, both as root and
#   started holding a root-only file on fd 9 (kab run also this test's lock
#   on fd 8): each run's ls of /proc/self/fd saw 0, 1, 2 and its own
#   listing, nothing else; the metric names and units it printed (escape
#   sequences, a C1 CSI, a byte of no UTF-8) are stored escaped;
#   kab run's output and kab report in every format, locally and from
#   kabd, hold no control character and nothing that is not UTF-8;
#   a nightly history and regressions seeded as kabd caches them
#   (tests/web/seed_nightly.sh), then given commit subjects with escape
#   sequences and a C1 CSI, a branch "origin caf\xe9", a metric name and a
#   unit with escapes, a machine with one: kab history and kab regressions
#   from the database and over kabd's socket, kabd's ?format=text, JSON,
#   Atom and /metrics are the same safe text, valid JSON, an Atom feed that
#   python3's xml.etree (and xmllint, when installed) parses, with the
#   branch's byte as U+FFFD;
#   kab check refuses a job tracking "origin caf\xe9" at its line, naming
#   the key, and shows the byte as \xe9.
# Not covered here: the build user's make (a kernel build takes minutes;
# tests/unit/test_kernels.c checks krun's children as a dropped user, and
# t_kernels builds for real).
. "$(dirname "$0")/lib.sh"
it_begin
[ -x "$KABD" ] || skip_all "$KABD is not built"
PY=/usr/bin/python3
[ -x $PY ] || skip_all "$PY is not installed (it parses the feed and checks the bytes)"
for t in curl sqlite3; do
	command -v $t >/dev/null || skip_all "$t is not installed"
done

trap 'kabd_stop; it_cleanup' EXIT
SECRET=$IT_TMP/root-only
(umask 077 && echo "root's secret" >"$SECRET")
FDS=$IT_TMP/fds
mkdir -p "$FDS/run" "$FDS/kabd"

# safe FILE [empty-ok]: no C0 control but newline and tab, no DEL, no C1,
# all UTF-8, and something there unless empty-ok; otherwise says what it
# found first
cat >"$IT_TMP/safe.py" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit("%s: not UTF-8: %s" % (sys.argv[1], e))
bad = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f]
if bad:
    sys.exit("%s: %d control characters (%d ESC), the first %r" % (sys.argv[1], len(bad), text.count("\x1b"), bad[0]))
if not data and len(sys.argv) < 3:
    sys.exit("%s: empty" % sys.argv[1])
EOF
safe() { $PY "$IT_TMP/safe.py" "$@"; }

# The command's metric lines: an escape sequence in a name (ED, clear the
# screen) and a unit (SGR red), a Latin-1 byte, a C1 CSI; its listing of
# the descriptors ls has. The job's own text is ASCII: printf makes them.
mkjob() { # NAME DIR
	cat <<EOF
[job]
name = $1
pairs = 1

[swap]
device = none

[variant A]
name = base

[variant B]
name = other

[workload list]
type = command
command = /bin/sh -c 'ls /proc/self/fd >$2/fds.\$\$;
  printf "kab-metric esc\\033[2Jname 1 \\033[31mms\\nkab-metric caf\\351 2 x\\n";
  printf "kab-metric c1\\302\\23331m 3\\nkab-metric plain 4 ops\\n"'
EOF
}
mkjob output-safety "$FDS/run" >"$IT_TMP/run.job"
mkjob output-safety-kabd "$FDS/kabd" >"$IT_TMP/kabd.job"
"$KAB" check "$IT_TMP/run.job" >"$IT_TMP/check.out" 2>&1
check "kab check takes the job (its text is ASCII; printf makes the bytes)" [ $? -eq 0 ]

# fds_only DIR: every listing in DIR is 0 1 2 3 (3: the directory ls reads)
fds_only() {
	local f n=0 bad=0
	for f in "$1"/fds.*; do
		[ -e "$f" ] || continue
		n=$((n + 1))
		if [ "$(tr '\n' ' ' <"$f")" != "0 1 2 3 " ]; then
			echo "$f: $(tr '\n' ' ' <"$f")"
			bad=1
		fi
	done
	[ $n -ge 3 ] || { echo "$n listings in $1 (3 runs: the warm-up and one pair)"; return 1; }
	[ $bad = 0 ]
}

# ---- kab run, as root, holding fd 8 (the test lock) and fd 9 (a root-only file) ----
"$KAB" run --db "$IT_TMP/run.db" "$IT_TMP/run.job" 9<"$SECRET" >"$IT_TMP/run.out" 2>"$IT_TMP/run.err"
rc=$?
check "kab run of the command job exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || tail -n 20 "$IT_TMP/run.err" | sed 's/^/    /'
check "each run's programs had descriptors 0, 1, 2 and ls's own only (not kab's fd 8 or 9)" fds_only "$FDS/run"
check "kab run's output (the report) is safe text" safe "$IT_TMP/run.out"
check "kab run's log is safe text" safe "$IT_TMP/run.err" empty-ok
sql "$IT_TMP/run.db" "SELECT name || ' ' || coalesce(unit, '') FROM metrics WHERE name LIKE 'command.%' GROUP BY name" \
	>"$IT_TMP/metrics.txt"
check "the metric names and units are stored escaped: no control character, all UTF-8" safe "$IT_TMP/metrics.txt"
check "  the escape sequence shown: command.esc\\x1b[2Jname, unit \\x1b[31mms" \
	grep -qxF 'command.esc\x1b[2Jname \x1b[31mms' "$IT_TMP/metrics.txt"
check "  the Latin-1 byte shown: command.caf\\xe9" grep -qxF 'command.caf\xe9 x' "$IT_TMP/metrics.txt"
check "  the C1 CSI shown: command.c1\\u009b31m" grep -qxF 'command.c1\u009b31m ' "$IT_TMP/metrics.txt"
for f in text markdown cover-letter csv json; do
	"$KAB" report 1 --db "$IT_TMP/run.db" --format $f >"$IT_TMP/report.$f" 2>"$IT_TMP/report.$f.err"
	check "kab report --format $f: safe text" safe "$IT_TMP/report.$f"
done
check "  the text report names the metric as stored" grep -qF 'command.esc\x1b[2Jname' "$IT_TMP/report.text"
check "  the JSON report is JSON" $PY -c 'import json,sys; json.load(open(sys.argv[1]))' "$IT_TMP/report.json"

# ---- kabd, as root, started holding fd 9 ----
DB=$IT_TMP/kabd.db
kabd_up --db "$DB" 9<"$SECRET"
if [ -z "$PORT" ]; then
	fail "kabd starts"
	it_end
	exit
fi
ok "kabd starts"
timeout 120 "$KAB" submit --socket "$KABD_SOCK" --wait "$IT_TMP/kabd.job" >"$IT_TMP/submit.out" 2>"$IT_TMP/submit.err"
rc=$?
check "kabd runs the command job (kab submit --wait exits 0)" [ $rc -eq 0 ]
[ $rc -eq 0 ] || tail -n 20 "$IT_TMP/kabd.log" | sed 's/^/    /'
check "each run's programs under kabd had descriptors 0, 1, 2 and ls's own only" fds_only "$FDS/kabd"
KJOB=$(head -n 1 "$IT_TMP/submit.out")
curl -s --unix-socket "$KABD_SOCK" "http://localhost/api/v1/jobs/${KJOB:-0}/report?format=text" >"$IT_TMP/kreport.text"
check "kabd's text report is safe text" safe "$IT_TMP/kreport.text"
check "  naming the metric as stored" grep -qF 'command.esc\x1b[2Jname' "$IT_TMP/kreport.text"
"$KAB" report "${KJOB:-0}" --socket "$KABD_SOCK" >"$IT_TMP/kreport.cli" 2>&1
check "kab report from kabd: safe text" safe "$IT_TMP/kreport.cli"

# ---- a nightly history and regressions with strings from outside ----
if ! tests/web/seed_nightly.sh "$DB" 2>"$IT_TMP/seed.log"; then
	sed 's/^/    /' "$IT_TMP/seed.log"
	fail "tests/web/seed_nightly.sh seeds a history and regressions"
	it_end
	exit
fi
# subjects: ED and an OSC title, SGR, a C1 CSI; the branch "origin caf\xe9";
# the vmstat metric and a unit with escape sequences; a machine with one
sqlite3 -bail "$DB" <<'EOF'
UPDATE variants SET commit_subject = 'mm: ' || char(27) || '[2J' || char(27) || ']0;owned' || char(7) || ' night 10 ' || CAST(X'c29b' AS TEXT) || '31m'
  WHERE commit_subject = 'mm: nightly commit 10';
UPDATE variants SET commit_subject = 'mm: caf' || CAST(X'e9' AS TEXT) || ' night 9' WHERE commit_subject = 'mm: nightly commit 9';
UPDATE history SET unit = char(27) || '[31mops/s' WHERE metric = 'stress-ng.bogo_ops_per_s';
UPDATE regressions SET track = 'origin caf' || CAST(X'e9' AS TEXT),
  bad_subject = 'mm: ' || char(27) || '[2J' || char(27) || ']0;owned' || char(7) || ' ' || CAST(X'c29b' AS TEXT) || '31m & <b>',
  good_subject = 'mm: caf' || CAST(X'e9' AS TEXT), machine = 'lab' || char(27) || '[8m' || CAST(X'ff' AS TEXT);
UPDATE regressions SET metric = 'vmstat.pgscan' || char(27) || '[2J' WHERE metric = 'vmstat.pgscan_anon';
EOF
check "the seeded regressions hold raw escape sequences and bytes of no UTF-8 (as an older kab stored them)" \
	[ "$(sql "$DB" "SELECT sum(length(CAST(track || bad_subject || good_subject || machine || metric AS BLOB)) - length(replace(CAST(track || bad_subject || good_subject || machine || metric AS BLOB), X'1b', X''))) FROM regressions")" -ge 12 ]

"$KAB" history nightly-web --db "$DB" >"$IT_TMP/history.text" 2>"$IT_TMP/history.err"
check "kab history (from the database): safe text" safe "$IT_TMP/history.text"
check "  the subject's escapes shown: mm: \\x1b[2J\\x1b]0;owned\\x07 night 10 \\u009b31m" \
	grep -qF 'mm: \x1b[2J\x1b]0;owned\x07 night 10 \u009b31m' "$IT_TMP/history.text"
check "  the Latin-1 byte shown: mm: caf\\xe9 night 9" grep -qF 'mm: caf\xe9 night 9' "$IT_TMP/history.text"
check "  the unit shown: \\x1b[31mops/s" grep -qF '\x1b[31mops/s' "$IT_TMP/history.text"
"$KAB" history nightly-web --db "$DB" --format json >"$IT_TMP/history.json" 2>&1
check "kab history --format json: safe text, and JSON" \
	bash -c "$PY '$IT_TMP/safe.py' '$IT_TMP/history.json' && $PY -c 'import json,sys; json.load(open(sys.argv[1]))' '$IT_TMP/history.json'"
"$KAB" history nightly-web --socket "$KABD_SOCK" >"$IT_TMP/history.kabd" 2>&1
check "kab history over kabd's socket: safe text" safe "$IT_TMP/history.kabd"
curl -s --unix-socket "$KABD_SOCK" "http://localhost/api/v1/history?job=nightly-web&format=text" >"$IT_TMP/history.api"
check "kabd's /history?format=text: safe text, the same subject shown" \
	bash -c "$PY '$IT_TMP/safe.py' '$IT_TMP/history.api' && grep -qF 'mm: \\x1b[2J' '$IT_TMP/history.api'"

"$KAB" regressions --db "$DB" >"$IT_TMP/regress.text" 2>&1
check "kab regressions (from the database): safe text" safe "$IT_TMP/regress.text"
check "  the branch shown: [origin:caf\\xe9]" grep -qF '[origin:caf\xe9]' "$IT_TMP/regress.text"
check "  the subject shown: \\x1b]0;owned\\x07" grep -qF '\x1b]0;owned\x07' "$IT_TMP/regress.text"
check "  the machine shown: lab\\x1b[8m\\xff" grep -qF 'machine lab\x1b[8m\xff' "$IT_TMP/regress.text"
"$KAB" regressions --socket "$KABD_SOCK" >"$IT_TMP/regress.kabd" 2>&1
check "kab regressions over kabd's socket: safe text" safe "$IT_TMP/regress.kabd"
curl -s --unix-socket "$KABD_SOCK" "http://localhost/api/v1/regressions?format=text" >"$IT_TMP/regress.api"
check "kabd's /regressions?format=text: safe text" safe "$IT_TMP/regress.api"
curl -s --unix-socket "$KABD_SOCK" "http://localhost/api/v1/regressions" >"$IT_TMP/regress.json"
check "kabd's /regressions JSON is JSON" $PY -c 'import json,sys; json.load(open(sys.argv[1]))' "$IT_TMP/regress.json"
curl -s --unix-socket "$KABD_SOCK" "http://localhost/metrics" >"$IT_TMP/metrics.prom"
check "kabd's /metrics: safe text (a scrape wants UTF-8)" safe "$IT_TMP/metrics.prom"

# the feed, as a reader fetches it and as kab regressions prints it
curl -s --unix-socket "$KABD_SOCK" "http://localhost/api/v1/regressions.atom" >"$IT_TMP/feed.atom"
"$KAB" regressions --db "$DB" --format atom >"$IT_TMP/feed.cli" 2>&1
cat >"$IT_TMP/feed.py" <<'EOF'
import sys
import xml.etree.ElementTree as ET
A = "{http://www.w3.org/2005/Atom}"
try:
    feed = ET.parse(sys.argv[1]).getroot()
except ET.ParseError as e:
    sys.exit("%s: not well-formed XML: %s" % (sys.argv[1], e))
titles = [e.findtext(A + "title") for e in feed.iter(A + "entry")]
if len(titles) != 2:
    sys.exit("%d entries, expected the 2 confirmed: %r" % (len(titles), titles))
if not all("[origin:caf\ufffd]" in t for t in titles):
    sys.exit("the branch's byte is not U+FFFD in %r" % titles)
EOF
check "kabd's Atom feed parses (python3 xml.etree), 2 entries, the branch's byte as U+FFFD" \
	$PY "$IT_TMP/feed.py" "$IT_TMP/feed.atom"
check "  and is safe text" safe "$IT_TMP/feed.atom"
check "kab regressions --format atom parses too" $PY "$IT_TMP/feed.py" "$IT_TMP/feed.cli"
if command -v xmllint >/dev/null; then
	check "xmllint reads kabd's feed" xmllint --noout "$IT_TMP/feed.atom"
fi

# ---- at the door: a tracked branch that is no UTF-8 ----
printf '[job]\nname = track-latin1\nswitch = reboot\n\n[variant A]\nkernel = build\ntree = /nonexistent\ntrack = origin main\n\n[variant B]\nkernel = build\ntree = /nonexistent\ntrack = origin caf\xe9\n\n[workload w]\ntype = command\ncommand = true\n' \
	>"$IT_TMP/latin1.job"
"$KAB" check "$IT_TMP/latin1.job" >"$IT_TMP/latin1.out" 2>"$IT_TMP/latin1.err"
rc=$?
check "kab check refuses a job tracking \"origin caf\\xe9\" (exit $rc)" [ $rc -eq 2 ]
check "  at the track line, naming the key and showing the byte" \
	grep -qF "latin1.job:13: the value of \"track\" is not valid UTF-8 (byte 0xe9 after \"origin caf\")" "$IT_TMP/latin1.err"
check "  its errors are safe text" safe "$IT_TMP/latin1.err"

kabd_stop
it_end
