#!/usr/bin/env bash
# Seeds a kabd database (its schema made already: kabd has opened it)
# with a nightly history and its regressions, for tests/web/nightly_page.mjs:
#
#   tests/web/seed_nightly.sh DB
#
# Job name nightly-web, 17 nights at noon UTC (the same date in any time
# zone within 11 hours) from 2026-03-01, one a day but for 2026-03-13 (a
# missed day): the nights of 03-06 failed (a gap), of 03-02 has no tracked
# commit, of 03-14 was force-pushed, and the estimate steps from about 0%
# to about -6% on 03-10 (the change point: last good 03-09, first bad
# 03-10). Job nightly-short has a single night (not enough nights). Then
# three regressions with their confirmation jobs, recorded oldest first
# (the list is newest first): not confirmed, a confirmed regression (the
# change point's), an acknowledged improvement of another metric. Job ids
# follow the database's last one, so JOB N below is the Nth seeded. The
# rows are written the way kabd caches them (history, history_nights, the
# variants' track columns, regressions): no job runs, the machine is not
# touched. The 03-08 night's commit subject holds markup, which the page
# must show as text. The confirmed regression has a bisection that ended
# done (its report as kabd's bisect_life.c writes it): three steps, a
# culprit between the 03-09 and 03-10 nights' commits whose subject holds
# markup too, confirmed against its parent.
set -eu
db=$1
[ -s "$db" ] || { echo "seed_nightly.sh: $db does not exist (start kabd on it first)" >&2; exit 2; }
base=1772366400 # 2026-03-01T12:00:00Z
o=$(sqlite3 "$db" 'SELECT coalesce(max(id), 0) FROM jobs') # job N is $((o + N))
day=86400
sha() { printf 'kab-web-commit-%s' "$1" | sha1sum | cut -c1-40; }
q() { printf "'%s'" "${1//\'/\'\'}"; } # an SQL string
est() { # JOB: the night's estimate of the primary metric (%), its CI half-width
	awk -v j="$1" 'BEGIN { n = (j * 7919) % 11 / 10 - 0.5; printf "%.2f %.2f", (j >= 10 ? -6 : 0) + n * 0.6, 1.1 + (j % 3) * 0.2 }'
}
JOBTEXT='[job]
name = nightly-web
pairs = 5
[variant A]
name = base
[variant B]
name = head
[workload stress-vm]
type = command
command = true'
{
	echo "BEGIN;"
	for j in $(seq 1 17); do
		d=$((j - 1))
		[ "$j" -ge 13 ] && d=$j # 2026-03-13 has no job
		night=$((base + d * day))
		status=done reason=NULL runs=10 failed=0
		[ "$j" = 6 ] && status=failed reason=$(q "run 3 (head, pair 2): the workload exited 1") runs=3 failed=1
		echo "INSERT INTO jobs (id, name, text, status, reason, created, started, finished, pairs, kab_version, schema_version)
  VALUES ($((o + j)), 'nightly-web', $(q "$JOBTEXT"), '$status', $reason, $night, $night, $((night + 3000)), 5, '0.1.0', 11);"
		echo "INSERT INTO variants (job_id, idx, label, name, kernel) VALUES ($((o + j)), 0, 'A', 'base', 'running');"
		subject="mm: nightly commit $j"
		[ "$j" = 8 ] && subject='mm: <b>bold</b> & "quoted" <script>alert(1)</script>'
		event=NULL
		[ "$j" = 13 ] && event=$(q "force-pushed: $(sha 12 | cut -c1-12) is not an ancestor of $(sha 13 | cut -c1-12)")
		if [ "$j" = 2 ]; then
			echo "INSERT INTO variants (job_id, idx, label, name, kernel) VALUES ($((o + j)), 1, 'B', 'head', 'running');"
		else
			echo "INSERT INTO variants (job_id, idx, label, name, kernel, track, commit_sha, commit_subject, commit_date, track_event)
  VALUES ($((o + j)), 1, 'B', 'head', 'running', 'origin mm-unstable', '$(sha "$j")', $(q "$subject"), $((night - 7200)), $event);"
		fi
		echo "INSERT INTO history_nights (job_id, name, night, status, reason, runs, runs_failed, computed, kab_version, schema_version)
  VALUES ($((o + j)), 'nightly-web', $night, '$status', $reason, $runs, $failed, $((night + 3001)), '0.1.0', 11);"
		[ "$status" = done ] || continue
		read -r e w <<<"$(est "$j")"
		verdict=same
		[ "$j" -ge 10 ] && verdict=worse
		echo "INSERT INTO history (job_id, name, night, workload, metric, variant_idx, pairs, estimate_pct, ci_lo_pct, ci_hi_pct, p,
  verdict, median_base, median_variant, unit, direction, is_primary, rank, variant_name, base_name)
  VALUES ($((o + j)), 'nightly-web', $night, 'stress-vm', 'stress-ng.bogo_ops_per_s', 1, 5, $e, $e - $w, $e + $w, 0.04,
  '$verdict', 152000, 152000 * (1 + $e / 100), 'ops/s', 'higher', 1, 0, 'head', 'base');"
		echo "INSERT INTO history (job_id, name, night, workload, metric, variant_idx, pairs, estimate_pct, ci_lo_pct, ci_hi_pct, p,
  verdict, median_base, median_variant, unit, direction, is_primary, rank, variant_name, base_name)
  VALUES ($((o + j)), 'nightly-web', $night, 'stress-vm', 'vmstat.pgscan_anon', 1, 5, 2.0 + $j % 2, 0.5 + $j % 2, 3.5 + $j % 2, 0.3,
  'same', 88000, 89000, 'pages', 'lower', 0, 1, 'head', 'base');"
	done
	# a name with one night: not enough nights
	night=$((base + 20 * day))
	echo "INSERT INTO jobs (id, name, text, status, created, started, finished, pairs, kab_version, schema_version)
  VALUES ($((o + 18)), 'nightly-short', $(q "${JOBTEXT/nightly-web/nightly-short}"), 'done', $night, $night, $((night + 600)), 5, '0.1.0', 11);"
	echo "INSERT INTO variants (job_id, idx, label, name, kernel) VALUES ($((o + 18)), 0, 'A', 'base', 'running'), ($((o + 18)), 1, 'B', 'head', 'running');"
	echo "INSERT INTO history_nights (job_id, name, night, status, runs, runs_failed, computed, kab_version, schema_version)
  VALUES ($((o + 18)), 'nightly-short', $night, 'done', 10, 0, $((night + 601)), '0.1.0', 11);"
	echo "INSERT INTO history (job_id, name, night, workload, metric, variant_idx, pairs, estimate_pct, ci_lo_pct, ci_hi_pct, p,
  verdict, median_base, median_variant, unit, direction, is_primary, rank, variant_name, base_name)
  VALUES ($((o + 18)), 'nightly-short', $night, 'stress-vm', 'stress-ng.bogo_ops_per_s', 1, 5, 0.4, -0.8, 1.6, 0.5,
  'same', 150000, 150600, 'ops/s', 'higher', 1, 0, 'head', 'base');"
	# the confirmations (ended) and the regressions, oldest first
	for c in 19 20 21; do
		t=$((base + (c - 9) * day))
		echo "INSERT INTO jobs (id, name, text, status, created, started, finished, pairs, kab_version, schema_version)
  VALUES ($((o + c)), 'nightly-web.confirm-$((c - 18))', $(q "${JOBTEXT/nightly-web/nightly-web.confirm-$((c - 18))}"), 'done', $t, $t, $((t + 4000)), 6, '0.1.0', 11);"
	done
	cols="created, name, workload, metric, variant_idx, direction, good_job, bad_job, good_night, bad_night, track,
  good_sha, bad_sha, good_subject, bad_subject, mean_before, mean_after, detected_pct, detected_p, machine, confirm_job,
  state, reason, estimate_pct, ci_lo_pct, ci_hi_pct, p, verdict, acked, acked_by"
	n() { echo $((base + ($1 - 1) * day)); } # the night of job 1..12
	job() { echo $((o + $1)); }
	echo "INSERT INTO regressions ($cols) VALUES ($((base + 10 * day)), 'nightly-web', 'stress-vm', 'stress-ng.bogo_ops_per_s', 1,
  'higher', $(job 4), $(job 5), $(n 4), $(n 5), 'origin mm-unstable', '$(sha 4)', '$(sha 5)', 'mm: nightly commit 4', 'mm: nightly commit 5',
  0.1, -0.9, -1000, 0.01, 'lab-1', $(job 19), 'not-confirmed', 'the paired comparison says same, against the history''s -1.0%',
  -0.4, -1.2, 0.5, 0.41, 'same', NULL, NULL);"
	echo "INSERT INTO regressions ($cols) VALUES ($((base + 11 * day)), 'nightly-web', 'stress-vm', 'stress-ng.bogo_ops_per_s', 1,
  'higher', $(job 9), $(job 10), $(n 9), $(n 10), 'origin mm-unstable', '$(sha 9)', '$(sha 10)', 'mm: nightly commit 9', 'mm: nightly commit 10',
  0.05, -6.1, -12300, 0.00002, 'lab-1', $(job 20), 'confirmed', NULL, -5.8, -7.1, -4.4, 0.001, 'worse', NULL, NULL);"
	echo "INSERT INTO regressions ($cols) VALUES ($((base + 12 * day)), 'nightly-web', 'stress-vm', 'vmstat.pgscan_anon', 1,
  'lower', $(job 10), $(job 11), $(n 10), $(n 11), 'origin mm-unstable', '$(sha 10)', '$(sha 11)', 'mm: nightly commit 10', 'mm: nightly commit 11',
  3.0, 2.0, -33.3, 0.0001, 'lab-1', $(job 21), 'confirmed', NULL, -3.1, -4.0, -2.2, 0.002, 'better', $((base + 13 * day)), 'uid 0 (root)');"
	# the confirmed regression's bisection, ended done
	eff() { # DECISION REASON EST LO HI PAIRS
		printf '{"decision": "%s", "reason": "%s", "estimate_pct": %s, "ci_lo_pct": %s, "ci_hi_pct": %s, "pairs": %s}' "$@"
	}
	step() { # SHA MARK EST LO HI
		printf '{"decision": "%s", "reason": "shift %s%% lies on the %s side of the midpoint", "estimate_pct": %s,' "$2" "$3" "$2" "$3"
		printf ' "ci_lo_pct": %s, "ci_hi_pct": %s, "pairs": 6, "sha": "%s", "part": 0, "mark": "%s"}' "$4" "$5" "$1" "$2"
	}
	cul=$(sha culprit) par=$(sha culprit-parent)
	report=$(printf '{"good": "%s", "bad": "%s", "anchor": %s, "steps": [%s, %s, %s], "culprits": [{"answer": "culprit", "part": 0,' \
		"$(sha 9)" "$(sha 10)" "$(eff anchored "BAD is worse than GOOD" -5.8 -7.1 -4.4 6)" \
		"$(step "$(sha step-1)" good 0.1 -0.6 0.9)" "$(step "$cul" bad -5.9 -7.0 -4.8)" "$(step "$par" good -0.2 -0.9 0.5)"
		printf ' "sha": "%s", "subject": "mm: <i>culprit</i> & co", "author": "A U Thor <author@example.org>",' "$cul"
		printf ' "date": "2026-03-10T08:00:00+00:00", "parent": "%s", "confirmation": %s}],' "$par" \
		"$(eff confirmed "against its parent -5.70% [-6.90, -4.50] (worse), reaching the effect" -5.7 -6.9 -4.5 10)"
		printf ' "builds": 4, "boots": 52, "parts": 1, "log": "git bisect start\\n# good: [%s]\\n# first bad commit: [%s]\\n"}' \
		"$(sha 9)" "$cul")
	echo "INSERT INTO bisections (created, ended, regression_id, source_job, variant_idx, tree, good, bad, workload, metric,
  direction, state, reason, report, submitter, kab_version, schema_version)
  VALUES ($((base + 12 * day)), $((base + 13 * day)), (SELECT id FROM regressions WHERE bad_job = $(job 10)
  AND metric = 'stress-ng.bogo_ops_per_s'), $(job 10), 1, '/src/linux', '$(sha 9)', '$(sha 10)', 'stress-vm',
  'stress-ng.bogo_ops_per_s', 'higher', 'done', $(q "first bad commit ${cul:0:12} (3 steps, 4 builds, 52 boots)"),
  $(q "$report"), 'uid 0 (root)', '0.1.0', 13);"
	echo "COMMIT;"
} | sqlite3 -bail "$db"
