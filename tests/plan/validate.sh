#!/usr/bin/env bash
# Validates kab plan on recorded runs: the pairs it predicts for an effect
# must decide that effect, injected into real runs, at least 80% of the
# time, judged by kab compare.
#
#   tests/plan/validate.sh RUNS.csv [options]
#   tests/plan/validate.sh --db PATH --job ID [options]
#
# RUNS: A/A runs (two variants of the same settings), as kab compare reads
# them (metric,variant,pair,value[,unit][,direction][,workload]), or a
# stored job, read through kab report --format csv. Steps, per metric
# kab plan plans:
#   1. the first --calibration K pairs (default 6; from --offset O) calibrate:
#      kab plan --csv on them predicts N, the pairs for --effect E% (default 5);
#   2. the other pairs are the hold-out (all pairs, said so, when there are
#      fewer than N of them);
#   3. --subsets S times (default 200): N distinct pairs drawn from the
#      hold-out (seeded), B multiplied by 1 + E/100, kab compare on that;
#   4. the metric passes when kab compare says better (higher is better),
#      worse (lower is better) or changed in at least 80% of the subsets,
#      less the binomial error of S subsets (74.3% at S = 200: the rate is
#      an estimate of the power, which is 80% at the plan's N);
#   5. a metric whose N is over half the pool is skipped: subsets that
#      share most of their pairs give one draw, not S.
# Options: --metric M (repeatable; default: a stored job's primary metrics,
# else every metric kab plan plans), --offset O (the calibration is the
# pairs from the O-th on, 0 first),
# --effect E, --calibration K, --subsets S, --seed X, --sims N (kab plan's),
# --keep DIR (the files it made). KAB=path overrides build/kab.
# From an integration test (tests/integration/t_plan.sh does this): record
# an A/A with kab plan JOB --pairs 40 --db DB (its calibration is a stored
# job, here job 2), then
#   tests/plan/validate.sh --db DB --job 2 --metric M --effect E --calibration 40
# checks the simulation against kab compare on the machine's own runs, and
#   tests/plan/validate.sh --db DB --job 2 --metric M --effect E --offset O
# what a 6-pair calibration from pair O predicts for the other 34.
# Output: one line a metric, "validate: P passed, F failed, K skipped";
# exit 0 when none failed, 1 otherwise, 2 on bad usage.
set -u
cd "$(dirname "$0")/../.."
kab=${KAB:-build/kab}
runs= db= job= effect=5 cal=6 offset=0 subsets=200 seed=1 sims= keep=
metrics=()
usage() {
	echo "usage: tests/plan/validate.sh RUNS.csv | --db PATH --job ID  [--metric M]... [--effect E] [--calibration K] [--subsets S] [--seed X] [--sims N] [--keep DIR]" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case $1 in
	--db) db=$2; shift 2 ;;
	--job) job=$2; shift 2 ;;
	--metric) metrics+=("$2"); shift 2 ;;
	--effect) effect=${2%\%}; shift 2 ;;
	--calibration) cal=$2; shift 2 ;;
	--offset) offset=$2; shift 2 ;;
	--subsets) subsets=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--sims) sims=$2; shift 2 ;;
	--keep) keep=$2; shift 2 ;;
	-h|--help) usage ;;
	-*) echo "validate: unknown option $1" >&2; usage ;;
	*) [ -z "$runs" ] || usage; runs=$1; shift ;;
	esac
done
if [ -n "$db" ] || [ -n "$job" ]; then
	[ -n "$db" ] && [ -n "$job" ] && [ -z "$runs" ] || usage
elif [ -z "$runs" ]; then
	usage
fi
[ -x "$kab" ] || { echo "validate: $kab is not built" >&2; exit 2; }
tmp=${keep:-$(mktemp -d)}
mkdir -p "$tmp"
[ -n "$keep" ] || trap 'rm -rf "$tmp"' EXIT

if [ -n "$db" ]; then
	"$kab" report "$job" --db "$db" --format csv >"$tmp/report.csv" || exit 2
fi

KAB=$kab RUNS=$runs REPORT=${db:+$tmp/report.csv} TMP=$tmp EFFECT=$effect CAL=$cal OFFSET=$offset SUBSETS=$subsets \
SEED=$seed SIMS=$sims METRICS="$(printf '%s\n' "${metrics[@]+"${metrics[@]}"}")" python3 - <<'EOF'
import csv, json, math, os, random, subprocess, sys

kab, tmp = os.environ["KAB"], os.environ["TMP"]
effect, cal, subsets = float(os.environ["EFFECT"]), int(os.environ["CAL"]), int(os.environ["SUBSETS"])
offset = int(os.environ["OFFSET"])
want = [m for m in os.environ["METRICS"].split("\n") if m]
rng = random.Random(int(os.environ["SEED"]))

# rows: (metric, variant, pair, value, unit, direction, workload); values as text
rows = []
if os.environ["REPORT"]:
    primaries = []
    with open(os.environ["REPORT"]) as f:
        for r in csv.DictReader(f):
            if r["primary"] == "true" and r["metric"] not in primaries:
                primaries.append(r["metric"])
            for side, var in (("values_before", r["baseline"]), ("values_after", r["variant"])):
                for p, v in enumerate(r[side].split()):
                    if v != "NA":
                        rows.append((r["metric"], var, p, v, r["unit"], r["direction"], r["workload"]))
    # a stored job's primary metrics are the ones its plan is for
    want = want or primaries
else:
    with open(os.environ["RUNS"]) as f:
        for r in csv.DictReader(f):
            rows.append((r["metric"], r["variant"], int(r["pair"]), r["value"], r.get("unit") or "",
                         r.get("direction") or "", r.get("workload") or "runs"))

variants = []
for r in rows:
    if r[1] not in variants:
        variants.append(r[1])
if len(variants) != 2:
    sys.exit("validate: the runs have %d variants; an A/A recording has two" % len(variants))
pairs = sorted({r[2] for r in rows})
if len(pairs) < offset + cal:
    sys.exit("validate: %d pairs recorded; the calibration takes %d from pair %d" % (len(pairs), cal, offset))
cal_pairs = set(pairs[offset:offset + cal])

def write(path, subset):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["metric", "variant", "pair", "value", "unit", "direction", "workload"])
        for r in subset:
            w.writerow(r)

write(tmp + "/calibration.csv", [r for r in rows if r[2] in cal_pairs])
cmd = [kab, "plan", "--csv", tmp + "/calibration.csv", "--effect", "%g%%" % effect, "--format", "json"]
if os.environ["SIMS"]:
    cmd += ["--sims", os.environ["SIMS"]]
for m in want:
    cmd += ["--primary", m]
plan = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)

passed = failed = skipped = 0
for m in plan["metrics"]:
    key = (m["workload"], m["name"])
    if want and m["name"] not in want:
        continue
    if not m["planned"]:
        print("skip %s: not planned: %s" % (m["name"], m["reason"])); skipped += 1; continue
    e = m["effect"]
    if e["below_min_change"] or e["pairs"] is None:
        print("skip %s: no pair count decides +%g%% (min_change %.1f%%)" % (m["name"], effect, m["min_change_pct"])); skipped += 1; continue
    n = e["pairs"]
    # a pair counts when both runs of the metric are there
    by = {}
    for r in rows:
        if r[6] == m["workload"] and r[0] == m["name"]:
            by.setdefault(r[2], {})[r[1]] = r
    complete = [p for p in pairs if len(by.get(p, {})) == 2]
    pool = [p for p in complete if p not in cal_pairs]
    where = "hold-out"
    if len(pool) < n:
        pool, where = complete, "all recorded pairs, calibration included (the hold-out has too few)"
    if len(pool) < n:
        print("skip %s: the plan says %d pairs, %d recorded" % (m["name"], n, len(pool))); skipped += 1; continue
    # subsets that share most of their pairs are one draw, not S: the
    # rate of N = 36 from 40 is 0% or 100% whatever the power. Up to half
    # the pool, two subsets share half their pairs or fewer (N^2 / pool).
    if 2 * n > len(pool):
        print("skip %s: the plan says %d pairs; subsets of %d from %d recorded pairs share most of their pairs, "
              "so their rate is one draw: record %d or more pairs" % (m["name"], n, n, len(pool), 2 * n))
        skipped += 1
        continue
    if math.comb(len(pool), n) < 20:
        print("skip %s: %d recorded pairs give %d subsets of %d: record more pairs" % (m["name"], len(pool), math.comb(len(pool), n), n))
        skipped += 1
        continue
    want_verdict = {"higher": "better", "lower": "worse", "neutral": "changed"}[m["direction"]]
    hits = 0
    distinct = set()
    for s in range(subsets):
        pick = sorted(rng.sample(pool, n))
        distinct.add(tuple(pick))
        sub = []
        for i, p in enumerate(pick):
            a, b = by[p][variants[0]], by[p][variants[1]]
            b = b[:3] + (repr(float(b[3]) * (1 + effect / 100)),) + b[4:]
            sub += [a[:2] + (i,) + a[3:], b[:2] + (i,) + b[3:]]
        path = "%s/subset-%s-%d.csv" % (tmp, m["name"].replace("/", "_"), s)
        write(path, sub)
        out = subprocess.run([kab, "compare", path, "--format", "json", "--primary", m["name"]],
                             check=True, capture_output=True, text=True).stdout
        rep = json.loads(out)
        verdict = [x for w in rep["workloads"] for x in w["metrics"] if x["name"] == m["name"]][0]["verdict"]
        hits += verdict == want_verdict
        if not os.environ.get("KEEP_SUBSETS"):
            os.unlink(path)
    rate = hits / subsets
    # the rate of S subsets estimates the power with a binomial error: a
    # plan whose power is 80% comes out below 80% half the time. It fails
    # when the rate is below 80% by more than that error (one-sided 95%,
    # 74.3% at S = 200); a plan that is wrong, 6 pairs where 20 are
    # needed, decides far fewer
    floor = 0.8 - 1.645 * math.sqrt(0.8 * 0.2 / subsets)
    ok = rate >= floor
    print("%s %s: kab plan predicts %d pairs for +%g%% (simulated power %.0f%%, noise %.2f%%, min_change %.2f%%); "
          "kab compare decided %d of %d subsets of %d pairs (%d distinct) from the %s with B +%g%%: %.0f%%"
          % ("ok  " if ok else "FAIL", m["name"], n, effect, 100 * e["power"], m["noise_pct"], m["min_change_pct"],
             hits, subsets, n, len(distinct), where, effect, 100 * rate)
          + ("" if rate >= 0.8 else " (below 80%% by less than %d subsets' error, %.1f%%)" % (subsets, 100 * (0.8 - floor)) if ok else ""))
    passed += ok
    failed += not ok
print("validate: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
sys.exit(1 if failed else 0)
EOF
