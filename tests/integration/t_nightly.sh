#!/usr/bin/env bash
# Nightly tracking, the whole loop on the running kernel: NIGHTS nightly
# jobs of one name submitted back to back to a real kabd, where the knob
# the tracked variant sets changes from night K on (64K mTHP folios for
# MADV_PAGEOUT, then 4K ones). That knob stands in for a commit, which this
# machine cannot boot outside QEMU. Then: the history shows every night,
# its change point lands on night K, kabd queues a confirmation job (night
# K-1's variant against night K's, ABBA, adaptive pairs) behind the
# nights, the confirmation says worse, /api/v1/regressions, kab
# regressions, the Atom feed and /metrics show an open regression,
# acknowledging it needs the token and closes it, and the history and
# regressions pages render the plot in headless Chromium without console
# errors. 2.4 to 4.8 minutes here (NIGHTS=8 K=5: 1.7).
#
# The job's primary metric is what the knob sets, not what the machine
# makes of it: pageout.folio_kB_mean, the page-weighted folio size of
# kab-pageout's own range after the fill (its page walk of pagemap and
# kpageflags, exact and per process), 64 in every 64K run and 4 in every
# 4K run. So each night's estimate is 0% up to night K-1 and -93.75% from
# night K on, a step with no noise, which the detector finds on its first
# night (a constant segment on each side: Yuen's test gives p = 0). The
# MADV_PAGEOUT time, pageout.ns_mean, is recorded and printed, never
# checked: the 4K folios made it +150% to +300% slower here, but only about
# +40% on a fresh machine of this kind, where nights of 3 pairs estimated
# it from -32.7% to +30.5% before the change (the baseline's median moving
# from 135 ms to 70 ms between nights), so no change point was found.
#
# NIGHTS (default 12) and K (default 6): the nights, and the first bad one.
# The detector wants at least 4 nights on each side (stats/changepoint.c);
# with the folio size 4 against 4 is enough (NIGHTS=8 K=5).
. "$(dirname "$0")/lib.sh"
it_begin
[ -x "$KABD" ] || skip_all "$KABD is not built"
command -v curl >/dev/null || skip_all "curl is not installed"
PY=/usr/bin/python3
[ -x $PY ] || skip_all "$PY is not installed (for JSON checks)"
MTHP=/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled
[ -w $MTHP ] || skip_all "no 64K mTHP size to switch ($MTHP)"
[ -e /sys/class/zram-control/hot_add ] || skip_all "no zram"
NIGHTS=${NIGHTS:-12}
K=${K:-6}
NAME=nightly-knob

trap 'kabd_stop; it_cleanup' EXIT
DB=$IT_TMP/nightly.db
kabd_up --db "$DB" --web-root web
if [ -z "$PORT" ]; then
	cat "$IT_TMP/kabd.log"
	fail "kabd starts"
	it_end
	exit
fi
ok "kabd starts on 127.0.0.1:$PORT"

# night N's job: the release keeps 64K folios; the tracked variant has
# them until night K-1 and 4K folios from night K on. A smaller folio is
# the regression: the primary metric's direction is higher. The time and
# the mTHP swap-out share ride along in the report and the history.
night_job() {
	local head=always
	[ "$1" -ge "$K" ] && head=never
	cat <<EOF
[job]
name = $NAME
pairs = 3
order = abba
interval = 0.5s
primary = pageout.folio_kB_mean
metrics = pageout.ns_mean pageout.mthp_swpout_pct vmstat.pswpout
[swap]
device = zram
size = 1G
zswap = off
[variant A]
name = release
sysfs $MTHP = always
[variant B]
name = head
sysfs $MTHP = $head
[workload pageout]
type = pageout
size = 64M
reps = 5
fill = pattern
memory.max = 128M
timeout = 120s
expect = vmstat.pswpout > 0
[metric pageout.folio_kB_mean]
direction = higher
EOF
}

ids=()
for n in $(seq 1 "$NIGHTS"); do
	night_job "$n" >"$IT_TMP/night$n.job"
	code=$(curl -s -o "$IT_TMP/sub.json" -w '%{http_code}' -H "$AUTH" -H "$JOB_CT" --data-binary @"$IT_TMP/night$n.job" "$URL/api/v1/jobs")
	id=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$IT_TMP/sub.json" 2>/dev/null)
	[ "$code" = 201 ] && [ -n "$id" ] || { fail "night $n is taken (HTTP $code: $(cat "$IT_TMP/sub.json"))"; it_end; exit; }
	ids+=("$id")
done
ok "$NIGHTS nights queued back to back (jobs ${ids[*]})"
bad=${ids[$((K - 1))]} good=${ids[$((K - 2))]}

# the nights, then the confirmation queued behind them
regs() { curl -s -H "$AUTH" "$URL/api/v1/regressions"; }
settled() {
	regs | $PY -c '
import json, sys
r = json.load(sys.stdin)["regressions"]
sys.exit(0 if r and all(x["state"] != "pending" for x in r) else 1)'
}
last=${ids[$((NIGHTS - 1))]}
wait_for -s "tail -n 30 '$IT_TMP/kabd.log'" "the $NIGHTS nights to end" $((NIGHTS * 120)) \
	"[ \"\$(sql '$DB' \"select count(*) from jobs where name = '$NAME' and status in ('done','failed','cancelled')\")\" = $NIGHTS ]"
check "every night ended done" [ "$(sql "$DB" "select count(*) from jobs where name = '$NAME' and status = 'done'")" = "$NIGHTS" ]
wait_for -s "tail -n 30 '$IT_TMP/kabd.log'" "a change point's confirmation to settle" 600 settled
regs >"$IT_TMP/regs.json"
sed 's/^/    /' "$IT_TMP/regs.json" | head -c 3000
echo

# each run's folios, from its own page walk: what the knob set, night by
# night; the MADV_PAGEOUT time beside them is printed, not checked
check "every run had the folios its night's knob set: 64K for the release and for the head up to night $((K - 1)), 4K for the head from night $K" \
	[ "$(sql "$DB" "select count(*) from runs r join jobs j on j.id = r.job_id join metrics f on f.run_id = r.id and f.name = 'pageout.folio_kB_mean'
		where j.name = '$NAME' and r.status = 'ok' and case when r.variant_idx = 1 and j.id >= $bad then f.value = 4 else f.value >= 60 end")" = $((NIGHTS * 6)) ]
echo "  per night, release | head: folio kB, MADV_PAGEOUT ms (measured, not checked), mTHP swap-out %"
sql "$DB" "select 'job ' || id || ': ' || group_concat(x, ' | ') from (select r.job_id id, r.variant_idx,
	group_concat(printf('%d kB %.0f ms %.0f%%', f.value, n.value / 1e6, m.value), ', ') x
	from runs r join jobs j on j.id = r.job_id
	join metrics f on f.run_id = r.id and f.name = 'pageout.folio_kB_mean'
	join metrics n on n.run_id = r.id and n.name = 'pageout.ns_mean'
	join metrics m on m.run_id = r.id and m.name = 'pageout.mthp_swpout_pct'
	where j.name = '$NAME' and r.status = 'ok' group by r.job_id, r.variant_idx order by r.job_id, r.variant_idx)
	group by id order by id" | sed 's/^/    /'

# the history: every night measured, the change point on night K
curl -s -H "$AUTH" "$URL/api/v1/history?job=$NAME&metric=pageout.folio_kB_mean" >"$IT_TMP/history.json"
check "the history has $NIGHTS nights, each measured, 0% before night $K and -93.75% from it, and one change point on night $K (job $bad), last good night $((K - 1)) (job $good)" \
	$PY - "$IT_TMP/history.json" "$NIGHTS" "$bad" "$good" "$K" <<'EOF'
import json, sys
h = json.load(open(sys.argv[1]))
nights, bad, good, k = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
s = [x for x in h["series"] if x["metric"] == "pageout.folio_kB_mean"]
assert len(s) == 1, [x["metric"] for x in h["series"]]
s = s[0]
measured = [p for p in s["points"] if p["state"] == "measured"]
assert len(measured) == nights, [p["state"] for p in s["points"]]
est = [p["estimate_pct"] for p in measured]
print("nightly estimates of the folio size:", [round(e, 2) for e in est])
# 64 against 64, then 4 against 64; the margins only allow for a folio
# that fell back to 4K
assert all(abs(e) < 10 for e in est[:k - 1]) and all(e < -80 for e in est[k - 1:]), est
cps = s["change_points"]
assert len(cps) == 1, cps
assert cps[0]["first_bad"]["job"] == bad and cps[0]["last_good"]["job"] == good, cps[0]
assert cps[0]["mean_after_pct"] < cps[0]["mean_before_pct"] - 50, cps[0]
EOF
check "kab history names the night the change landed" bash -c \
	"build/kab history $NAME --socket '$KABD_SOCK' --metric pageout.folio_kB_mean | grep -q 'job $bad'"
# the time's own history, for the record
curl -s -H "$AUTH" "$URL/api/v1/history?job=$NAME&metric=pageout.ns_mean" >"$IT_TMP/history_ns.json"
$PY - "$IT_TMP/history_ns.json" <<'EOF' | sed 's/^/    /'
import json, sys
try:
    s = [x for x in json.load(open(sys.argv[1]))["series"] if x["metric"] == "pageout.ns_mean"][0]
except Exception as e:
    sys.exit("no history of pageout.ns_mean: %s" % e)
r = lambda v: None if v is None else round(v, 1)
print("pageout.ns_mean, measured, not checked: nightly %Δ [95% CI]:",
      ", ".join("%s [%s, %s]" % (r(p["estimate_pct"]), r(p["ci_low_pct"]), r(p["ci_high_pct"])) for p in s["points"] if p["state"] == "measured"))
print("  its change points:", [(c["first_bad"]["job"], r(c["mean_before_pct"]), r(c["mean_after_pct"]), c["p_value"]) for c in s["change_points"]] or "none", s.get("note") or "")
EOF

# the confirmation and the regression it makes
check "one change point, confirmed worse by its own paired job (the folio size down), nights $((K - 1)) and $K on each side" \
	$PY - "$IT_TMP/regs.json" "$bad" "$good" "$NAME" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["regressions"]
bad, good, name = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
assert len(r) == 1, r
g = r[0]
assert g["state"] == "confirmed" and g["kind"] == "regression" and g["open"], g
assert g["first_bad"]["job"] == bad and g["last_good"]["job"] == good, g
c = g["confirmation"]
assert c["verdict"] == "worse" and c["ci_high_pct"] < 0 and c["estimate_pct"] < -80 and c["job"] > bad, c
assert g["title"].startswith("[%s] job %d: pageout.folio_kB_mean -" % (name, bad)) and g["title"].endswith(" regression"), g["title"]
print(g["title"], c)
EOF
cj=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["regressions"][0]["confirmation"]["job"])' "$IT_TMP/regs.json" 2>/dev/null)
rid=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["regressions"][0]["id"])' "$IT_TMP/regs.json" 2>/dev/null)
check "the confirmation job ran after every night, ABBA with adaptive pairs, the two nights' variants" \
	[ "$(sql "$DB" "select name||','||job_order||','||(id > $last) from jobs where id = ${cj:-0}")" = "$NAME.confirm-$rid,abba,1" ]
check "its variants carry the good night's knob (64K always) and the bad night's (never)" \
	[ "$(sql "$DB" "select group_concat(idx || ':' || (instr(knobs, '$MTHP=' || case idx when 0 then 'always' else 'never' end || char(10)) > 0), ' ')
		from (select idx, knobs from variants where job_id = ${cj:-0} order by idx)")" = "0:1 1:1" ]
sql "$DB" "select idx, name, knobs from variants where job_id = ${cj:-0}" | sed 's/^/    /'
echo "  the confirmation's folio size and time (the time measured, not checked):"
build/kab report "${cj:-0}" --socket "$KABD_SOCK" 2>&1 | grep -E '^(Pairs:|pageout\.(folio_kB_mean|ns_mean) )' | sed 's/^/    /'
check "kab regressions lists it with its title" bash -c \
	"build/kab regressions --socket '$KABD_SOCK' | grep -q '^#$rid \[$NAME\] job $bad: pageout.folio_kB_mean -.* regression'"
check "kab regressions --db on kabd's database says the same" bash -c \
	"build/kab regressions --db '$DB' | grep -q 'confirmed, open'"
check "/metrics: one open regression for the job and metric" bash -c \
	"curl -s -H '$AUTH' '$URL/metrics' | grep -qx 'kab_regressions_open{job=\"$NAME\",metric=\"pageout.folio_kB_mean\",kind=\"regression\"} 1'"
check "the Atom feed has its entry" bash -c \
	"curl -s -H '$AUTH' '$URL/api/v1/regressions.atom' | $PY -c 'import sys, xml.dom.minidom as m; d = m.parseString(sys.stdin.read()); e = d.getElementsByTagName(\"entry\"); assert len(e) == 1, len(e)'"

# acknowledging needs the token
code=$(curl -s -o /dev/null -w "%{http_code}" -X POST -H "$JOB_CT" "$URL/api/v1/regressions/$rid/ack")
check "acknowledging without the token: 401" [ "$code" = 401 ]
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "$JOB_CT" -H "Authorization: Bearer not-the-token" "$URL/api/v1/regressions/$rid/ack")
check "acknowledging with a wrong token: 401 or 403" bash -c "[ '$code' = 401 ] || [ '$code' = 403 ]"
check "still open after both" bash -c \
	"curl -s -H '$AUTH' '$URL/metrics' | grep -qx 'kab_regressions_open{job=\"$NAME\",metric=\"pageout.folio_kB_mean\",kind=\"regression\"} 1'"
code=$(curl -s -o "$IT_TMP/ack.json" -w '%{http_code}' -X POST -H "$JOB_CT" -H "$AUTH" "$URL/api/v1/regressions/$rid/ack")
check "acknowledging with the token: 200, by the token" bash -c "[ '$code' = 200 ] && grep -q '\"acknowledged_by\":\"token\"' '$IT_TMP/ack.json'"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "$JOB_CT" -H "$AUTH" "$URL/api/v1/regressions/$rid/ack")
check "a second acknowledgement: 409" [ "$code" = 409 ]
out=$(build/kab regressions --ack "$rid" --socket "$KABD_SOCK" 2>&1 >/dev/null)
rc=$?
check "kab regressions --ack over the socket says it was acknowledged already (exit $rc: $out)" \
	bash -c "[ $rc = 1 ] && grep -q 'acknowledged already (HTTP 409)' <<<'$out'"
check "/metrics: no open regression left" bash -c \
	"curl -s -H '$AUTH' '$URL/metrics' | grep -qx 'kab_regressions_open{job=\"$NAME\",metric=\"pageout.folio_kB_mean\",kind=\"regression\"} 0'"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "$AUTH" "$URL/api/v1/regressions/9999")
check "an unknown change point: 404" [ "$code" = 404 ]
code=$(curl -s -o /dev/null -w '%{http_code}' -H "$AUTH" "$URL/api/v1/history?job=no-such-nightly")
check "a job name with no history: 404" [ "$code" = 404 ]

# the pages, in a real browser (tests/web/nightly_page.mjs): the history
# plot of this job's nights and the regressions page; the confirmation's
# own name has one night, the "not enough nights" case
CHROMIUM=$(command -v chromium)
if [ -n "$CHROMIUM" ] && command -v node >/dev/null && [ -f tests/web/node_modules/playwright-core/package.json ]; then
	mkdir -p "$IT_TMP/pages"
	HOME="$IT_TMP" CHROMIUM="$CHROMIUM" KAB_TOKEN="${AUTH#Authorization: Bearer }" timeout 180 \
		node tests/web/nightly_page.mjs "$URL" "$NAME" "$NAME.confirm-$rid" "$IT_TMP/pages" \
		>"$IT_TMP/pages.json" 2>"$IT_TMP/pages.log"
	[ -s "$IT_TMP/pages.log" ] && sed 's/^/    /' "$IT_TMP/pages.log" | head -20
	pseen() {
		$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["series"][0] if d.get("series") else {}
print(eval(sys.argv[2], {}, dict(d, s=s, d=d)))' "$IT_TMP/pages.json" "$1" 2>/dev/null
	}
	check "Chromium drove the history and regressions pages without an error or a console error $(pseen 'd.get("error", "")' | head -c 300)" \
		[ "$(pseen '"error" not in d and not d["console_errors"]')" = True ]
	check "the plot of pageout.folio_kB_mean: a point per night ($NIGHTS)" \
		[ "$(pseen '(s["metric"], len(s["points"]))')" = "('pageout.folio_kB_mean', $NIGHTS)" ]
	check "its CI band, and one change-point marker that names the confirmed regression" \
		[ "$(pseen 'len(s["bands"]) >= 1 and len(s["changes"]) == 1 and "regression #" in s["changes"][0]["label"]')" = True ]
	check "the regressions page lists it, with its trend plot under it" \
		[ "$(pseen '([r["title"].split()[-1] for r in regressions], [p["plot"] for p in regression_plots])')" = "(['regression'], [True])" ]
else
	IT_SKIP=$((IT_SKIP + 1))
	echo "  skip the pages in Chromium: chromium, node or playwright-core (make web-deps) missing"
fi

kabd_stop
it_end
