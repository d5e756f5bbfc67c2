#!/usr/bin/python3
"""Generated nightly histories for tests/stats/check_changepoint.sh, and
their scoring.

  cp_histories.py gen DIR [--seed S]
      writes DIR/hNNN.txt, one history a file: '#' lines with the truth
      (kind, nights, noise, the steps and their sizes; for a drift its
      slope), then one value a line in repr, so C's strtod reads back the
      very doubles Python wrote. Drawn with numpy's PCG64 from seed S
      (default 17); the draws go through libm, whose last digits can
      differ between CPUs, which moves a value by an ulp and a decision
      only if it sits on its threshold.
  cp_histories.py score DIR C_OUT [REF_OUT] [--floors]
      C_OUT and REF_OUT are the lines of build/tests/cp_driver and of
      changepoint_ref.py on those files. Prints the agreement of the two
      (indices exactly, the other numbers within a relative 1e-6), the
      precision and recall table per step size x noise cell, the spike,
      flat and drift histories, and with --floors checks the floors the
      suite asserts. Exits 1 when the two disagree or a floor is missed.

The histories (a level between 50 and 5000, Gaussian noise of the stated
CoV of that level):
  step      one step of 2, 5, 10 or 20 % (either sign) in noise of 1, 2, 3
            or 5 % CoV, 30-200 nights, at least 10 nights each side;
  two-step  two steps of 5-20 % at least 15 nights apart, 1-3 % noise;
  step-spike one step of 5-20 % in 1-3 % noise with one or two single
            nights off by a factor (as for spike) within 8 nights of it;
  spike     flat with one to three single nights off by a factor of
            1.3, 2, 5, 50, 0.5 or 0.1, at least 4 nights apart;
  drift     a linear trend of 2-10 % over the whole history, 1-5 % noise;
  flat      noise only;
  counter   integer counts (Poisson, mean 0.2-10), half with a step of 1-3,
            some constant then constant: ties everywhere, for the agreement
            of the two implementations only (not scored).
Floors (--floors): recall >= 0.9 where the step is at least 4 x the
noise, precision >= 0.9 over all histories, no point in any spike
history, at most 1 false point per 1000 nights of flat noise (noise alone
makes one now and then at any level; the rate is what a lab pays in
confirming A/Bs).
Scoring: a point within 2 nights of a true step is a hit (each step and
each point matched at most once); every other point in a step, two-step,
step-spike, spike or flat history is a false positive. A drift has no step to find,
but it does move: a point in a drift history counts as "explained" when
the noiseless trend's means over the point's own segments ([before_start,
index) against [index, after_end)) move the way the point says, by at
least half its %; explained points are counted apart (neither hits nor
false positives), the others are false positives.
"""
import math
import os
import sys

import numpy as np

STEPS = [2, 5, 10, 20]
NOISES = [1, 2, 3, 5]
PER_CELL = 12
TWO_STEP, STEP_SPIKE, SPIKE, DRIFT, FLAT, COUNTER = 24, 24, 24, 24, 48, 40
SPIKE_FACTORS = [1.3, 2, 5, 50, 0.5, 0.1]
HIT = 2
REL = 1e-6
# the floors the suite asserts (--floors)
RECALL_FLOOR = 0.9       # in the cells where the step is >= 4 x the noise
PRECISION_FLOOR = 0.9    # over every history
FLAT_RATE_FLOOR = 1.0    # false points per 1000 nights of flat noise


def write(path, truth, values):
    with open(path, "w") as f:
        for k, v in truth.items():
            f.write(f"# {k} = {v}\n")
        for v in values:
            f.write(repr(float(v)) + "\n")


def gen(outdir, seed):
    rng = np.random.default_rng(seed)
    os.makedirs(outdir, exist_ok=True)
    k = 0

    def emit(truth, values):
        nonlocal k
        write(os.path.join(outdir, f"h{k:03d}.txt"), truth, values)
        k += 1

    def base(n, noise):
        level = float(rng.uniform(50, 5000))
        return level, level * (1 + noise / 100 * rng.standard_normal(n))

    for step in STEPS:
        for noise in NOISES:
            for _ in range(PER_CELL):
                n = int(rng.integers(30, 201))
                at = int(rng.integers(10, n - 10 + 1))
                sign = 1 if rng.random() < 0.5 else -1
                level, x = base(n, noise)
                x[at:] += sign * step / 100 * level
                emit({"kind": "step", "n": n, "noise": noise, "step": step, "steps": at, "sizes": sign * step}, x)
    for _ in range(TWO_STEP):
        n = int(rng.integers(60, 201))
        noise = int(rng.choice([1, 2, 3]))
        a = int(rng.integers(10, n - 25 + 1))
        b = int(rng.integers(a + 15, n - 10 + 1))
        level, x = base(n, noise)
        sizes = [float(rng.choice([-1, 1]) * rng.uniform(5, 20)) for _ in range(2)]
        x[a:] += sizes[0] / 100 * level
        x[b:] += sizes[1] / 100 * level
        emit({"kind": "two-step", "n": n, "noise": noise, "steps": f"{a},{b}",
              "sizes": ",".join(f"{s:.2f}" for s in sizes)}, x)
    for _ in range(STEP_SPIKE):
        n = int(rng.integers(40, 201))
        noise = int(rng.choice([1, 2, 3]))
        at = int(rng.integers(10, n - 10 + 1))
        size = float(rng.choice([-1, 1]) * rng.uniform(5, 20))
        level, x = base(n, noise)
        x[at:] += size / 100 * level
        where = sorted({int(i) for i in rng.integers(at - 8, at + 9, size=int(rng.integers(1, 3))) if i != at})
        factors = [float(rng.choice(SPIKE_FACTORS)) for _ in where]
        for i, f in zip(where, factors):
            x[i] = f * level
        emit({"kind": "step-spike", "n": n, "noise": noise, "steps": at, "sizes": f"{size:.2f}",
              "spikes": ",".join(map(str, where)), "factors": ",".join(map(str, factors))}, x)
    for _ in range(SPIKE):
        n = int(rng.integers(30, 201))
        noise = int(rng.choice(NOISES))
        level, x = base(n, noise)
        where = []
        while len(where) < int(rng.integers(1, 4)):
            i = int(rng.integers(0, n))
            if all(abs(i - j) >= 4 for j in where):
                where.append(i)
        factors = [float(rng.choice(SPIKE_FACTORS)) for _ in where]
        for i, f in zip(where, factors):
            x[i] = f * level
        emit({"kind": "spike", "n": n, "noise": noise, "spikes": ",".join(map(str, sorted(where))),
              "factors": ",".join(map(str, factors))}, x)
    for _ in range(DRIFT):
        n = int(rng.integers(30, 201))
        noise = int(rng.choice(NOISES))
        total = float(rng.choice([-1, 1]) * rng.uniform(2, 10))
        level, x = base(n, noise)
        x += level * total / 100 * np.arange(n) / (n - 1)
        emit({"kind": "drift", "n": n, "noise": noise, "level": repr(level), "total": f"{total:.4f}"}, x)
    for _ in range(FLAT):
        n = int(rng.integers(30, 201))
        noise = int(rng.choice(NOISES))
        _, x = base(n, noise)
        emit({"kind": "flat", "n": n, "noise": noise}, x)
    for i in range(COUNTER):
        n = int(rng.integers(30, 201))
        lam = float(rng.choice([0.2, 1, 3, 10]))
        x = rng.poisson(lam, n).astype(float)
        at = int(rng.integers(10, n - 10 + 1))
        if i % 2:
            x[at:] += float(rng.integers(1, 4))
        if i % 5 == 0:
            x[:] = 3.0
            x[at:] = 5.0
        emit({"kind": "counter", "n": n, "lambda": lam, "steps": at if i % 2 or i % 5 == 0 else ""}, x)
    return k


def read_truth(path):
    t = {}
    with open(path) as f:
        for line in f:
            if not line.startswith("#"):
                break
            key, _, val = line[1:].partition("=")
            t[key.strip()] = val.strip()
    return t


def read_points(path):
    """{file: None (ENODATA) or [point tuples]} from a detector's output."""
    out = {}
    with open(path) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            name = os.path.basename(cols[0])
            if cols[1] == "ENODATA":
                out[name] = None
            elif cols[1] == "none":
                out.setdefault(name, [])
            else:
                idx = tuple(int(c) for c in cols[1:4])
                out.setdefault(name, []).append(idx + tuple(float(c) for c in cols[4:11]))
    return out


def close(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    if abs(a) < 1e-250 and abs(b) < 1e-250:
        return True
    return abs(a - b) <= REL * max(abs(a), abs(b))


FIELDS = ["mean_before", "mean_after", "pct", "p", "t", "trimmed_before", "trimmed_after"]


def rel_diff(a, b):
    if a == b or (math.isnan(a) and math.isnan(b)):
        return 0.0
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return math.inf
    return abs(a - b) / max(abs(a), abs(b))


def agree(c_pts, r_pts, names, worst):
    """Prints every disagreement; returns (files that agree, points compared,
    disagreements); worst[field] becomes the largest relative difference."""
    same, points, bad = 0, 0, 0
    fields = FIELDS
    for name in names:
        c, r = c_pts.get(name, "missing"), r_pts.get(name, "missing")
        ok = True
        if c is None or r is None or c == "missing" or r == "missing":
            ok = c == r
        elif [p[:3] for p in c] != [p[:3] for p in r]:
            ok = False
        else:
            for pc, pr in zip(c, r):
                points += 1
                for f, a, b in zip(fields, pc[3:], pr[3:]):
                    worst[f] = max(worst.get(f, 0.0), rel_diff(a, b))
                    if not close(a, b):
                        ok = False
                        print(f"  {name}: point at {pc[0]}: {f} C {a!r}, Python {b!r}")
        if not ok:
            bad += 1
            print(f"  {name}: C {c}, Python {r}")
        else:
            same += 1
    return same, points, bad


def match(steps, found):
    """Number of steps matched by a point within HIT nights (greedy, nearest first)."""
    pairs = sorted((abs(s - f), i, j) for i, s in enumerate(steps) for j, f in enumerate(found) if abs(s - f) <= HIT)
    used_s, used_f = set(), set()
    for _, i, j in pairs:
        if i not in used_s and j not in used_f:
            used_s.add(i)
            used_f.add(j)
    return len(used_s)


def drift_explained(truth, pt):
    level, total, n = float(truth["level"]), float(truth["total"]), int(truth["n"])
    trend = level * total / 100 * np.arange(n) / (n - 1) + level
    idx, lo, hi, pct = pt[0], pt[1], pt[2], pt[5]
    true_pct = 100 * (trend[idx:hi].mean() - trend[lo:idx].mean()) / trend[lo:idx].mean()
    return true_pct * pct > 0 and abs(true_pct) >= abs(pct) / 2


def score(outdir, c_out, ref_out, floors):
    names = sorted(f for f in os.listdir(outdir) if f.endswith(".txt"))
    truths = {n: read_truth(os.path.join(outdir, n)) for n in names}
    c_pts = read_points(c_out)
    failed = []
    if ref_out:
        r_pts = read_points(ref_out)
        compared = [n for n in names if n in r_pts]
        worst = {}
        same, points, bad = agree(c_pts, r_pts, compared, worst)
        print(f"C against Python: {same} of {len(compared)} histories give the same change points "
              f"({points} points, their means, %, p and t within a relative {REL:g}); {bad} differ")
        print("  largest relative difference: " + ", ".join(f"{f} {worst.get(f, 0.0):.1e}" for f in FIELDS))
        if bad or not compared:
            failed.append("C and Python disagree" if bad else "Python compared nothing")
    cells = {}
    tp = fp = nsteps = 0
    kinds = {}
    explained = 0
    for name in names:
        t = truths[name]
        found = [p[0] for p in (c_pts.get(name) or [])]
        kind = t["kind"]
        if kind == "counter":
            continue
        k = kinds.setdefault(kind, {"histories": 0, "with_points": 0, "points": 0})
        k["histories"] += 1
        k["points"] += len(found)
        k["with_points"] += bool(found)
        if kind in ("step", "two-step", "step-spike"):
            steps = [int(s) for s in t["steps"].split(",")]
            hits = match(steps, found)
            tp += hits
            fp += len(found) - hits
            nsteps += len(steps)
            if kind == "step":
                cell = cells.setdefault((int(t["step"]), int(t["noise"])), [0, 0, 0, 0])
                cell[0] += 1
                cell[1] += hits
                cell[2] += len(found) - hits
                cell[3] += len(found)
            else:
                k.setdefault("hits", 0)
                k.setdefault("steps", 0)
                k["hits"] += hits
                k["steps"] += len(steps)
        elif kind == "drift":
            e = sum(drift_explained(t, p) for p in c_pts.get(name) or [])
            explained += e
            k.setdefault("explained", 0)
            k["explained"] += e
            fp += len(found) - e
        else:
            fp += len(found)
    print()
    print("one step: recall (steps found within 2 nights / steps) and precision (hits / points), per cell")
    print("step \\ noise CoV " + "".join(f"{n:>14}%" for n in NOISES))
    for s in STEPS:
        row = []
        for n in NOISES:
            c = cells.get((s, n), [0, 0, 0, 0])
            prec = f"{c[1] / c[3]:.2f}" if c[3] else "  - "
            row.append(f"   {c[1] / c[0] if c[0] else 0:.2f} / {prec}" if c[0] else "     -       ")
        print(f"{s:>15}%  " + "".join(f"{r:>15}" for r in row))
    for kind in ("two-step", "step-spike", "spike", "flat", "drift"):
        k = kinds.get(kind)
        if not k:
            continue
        extra = ""
        if kind in ("two-step", "step-spike"):
            extra = f"; steps found {k['hits']} of {k['steps']}"
        if kind == "drift":
            extra = f"; explained by the trend {k['explained']}, false {k['points'] - k['explained']}"
        print(f"{kind:>9}: {k['histories']} histories, {k['with_points']} with points, {k['points']} points{extra}")
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / nsteps if nsteps else 1.0
    print(f"overall: recall {recall:.3f} ({tp} of {nsteps} steps), precision {precision:.3f} "
          f"({tp} hits, {fp} false points; {explained} drift points explained by the trend)")
    flat_nights = sum(int(truths[n]["n"]) for n in names if truths[n]["kind"] == "flat")
    flat_rate = 1000 * kinds.get("flat", {}).get("points", 0) / flat_nights if flat_nights else 0.0
    print(f"flat: {flat_rate:.2f} false points per 1000 nights ({flat_nights} nights)")
    for name in names:
        if truths[name]["kind"] == "spike" and c_pts.get(name):
            spikes = [int(v) for v in truths[name]["spikes"].split(",")]
            for p in c_pts[name]:
                print(f"  {name}: point at {p[0]}, {min(abs(p[0] - v) for v in spikes)} nights from a spike")
    if floors:
        strong = [c for (s, n), c in cells.items() if s >= 4 * n]
        strong_recall = sum(c[1] for c in strong) / sum(c[0] for c in strong)
        ok = [
            (strong_recall >= RECALL_FLOOR, f"recall {strong_recall:.3f} >= {RECALL_FLOOR} where the step is >= 4 x the noise"),
            (precision >= PRECISION_FLOOR, f"precision {precision:.3f} >= {PRECISION_FLOOR} over all histories"),
            (kinds.get("spike", {}).get("points", 0) == 0, "no point in any single-spike history"),
            (flat_rate <= FLAT_RATE_FLOOR, f"{flat_rate:.2f} false points per 1000 flat nights <= {FLAT_RATE_FLOOR}"),
        ]
        for good, what in ok:
            print(f"  {'ok  ' if good else 'FAIL'} {what}")
            if not good:
                failed.append(what)
    for f in failed:
        print(f"cp_histories: failed: {f}")
    return 1 if failed else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "gen":
        seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else 17
        print(gen(argv[1], seed))
        return 0
    if len(argv) >= 3 and argv[0] == "score":
        rest = [a for a in argv[1:] if a != "--floors"]
        return score(rest[0], rest[1], rest[2] if len(rest) > 2 else None, "--floors" in argv)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
