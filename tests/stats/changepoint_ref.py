#!/usr/bin/python3
"""An independent implementation of kab's change-point detector, for
tests/stats/check_changepoint.sh to hold the C one (harness/stats/
changepoint.c) against.

It is written from the method's description (Matteson & James 2014 for
the energy statistic; Fleming et al., ICPE 2023, for the windowed split
and the merge), not from the C: the energy statistic here is evaluated by
brute force from a two-dimensional prefix sum of the pairwise distance
matrix, for every split at once with numpy, and the test is scipy's Welch
t-test (scipy.stats.ttest_ind, equal_var=False). The C keeps one-
dimensional running sums and GSL's t distribution instead.

The method, as kab defines it (the C file's top comment says why):
  x[0..n), parameters alpha (significance), m (minimum segment), w (window).
  Fewer than 2m values: "not enough nights", no points.
  1. Split. Windows [s, min(s + 2w, n)) from s = 0: in each, E-divisive
     bisection: of the window's current segments (cut at the points found
     in it), every one of 2m values or more proposes the split tau and end
     kappa maximizing the energy statistic Q(seg start, tau, kappa), with
     at least m values in [start, tau) and in [tau, kappa); the proposal
     with the largest Q is tested with Welch's t-test between [start, tau)
     and [tau, seg end) and kept if p <= the weak level
     max(alpha, min(10 alpha, 0.5)),
     else the window is done. The next window starts at s + w, or at the
     window's last point if that is later. The union over windows is the
     set of weak points.
  2. Merge. Each point is judged by Welch's t-test between its neighbours:
     [max(previous point, p - w), p) against [p, min(next point, p + w)),
     p = 1 when either side has fewer than m values. While the largest p
     exceeds alpha, that point is removed and its two neighbours judged
     again.
  Ties: the first (tau, then kappa ascending; segments and points in
  order) of the candidates within a relative 1e-9 of the best; a p
  within a relative 1e-9 above a level reaches it (integer counters make
  p that equal a level exactly).

Usage: changepoint_ref.py [--alpha A] [--min-segment M] [--window W] FILE...
Each FILE holds one value a line ('#' lines are comments). Prints, for
each file, one line a point:
  FILE<TAB>index<TAB>before_start<TAB>after_end<TAB>mean_before<TAB>mean_after<TAB>pct<TAB>p<TAB>t
      <TAB>trimmed_before<TAB>trimmed_after
or FILE<TAB>none when there is none, FILE<TAB>ENODATA when there are too
few values; the numbers in repr, so nothing is lost.
"""
import math
import sys
import warnings

import numpy as np
import scipy.stats as st

# scipy warns when a segment's values are nearly equal (integer counters);
# its answer is compared with the C one all the same, and a constant
# segment is decided in yuen() before scipy sees it
warnings.filterwarnings("ignore", message="Precision loss occurred in moment calculation")

DEFAULT_ALPHA = 1e-4
DEFAULT_MIN_SEGMENT = 4
DEFAULT_WINDOW = 30
TIE = 1e-9
TRIM = 0.2


def first_of_best(values):
    """Index of the first value within TIE (relative) of the largest."""
    v = np.asarray(values, dtype=float)
    top = v.max()
    return int(np.flatnonzero(v >= top - TIE * abs(top))[0])


def yuen(before, after):
    """(t, p, trimmed mean before, trimmed mean after) of Yuen's test of after
    against before; the degenerate case (both kept parts constant) decided here."""
    a = np.sort(np.asarray(before, dtype=float))
    b = np.sort(np.asarray(after, dtype=float))
    ta, tb = st.trim_mean(a, TRIM), st.trim_mean(b, TRIM)
    kept_a = a[int(TRIM * len(a)):len(a) - int(TRIM * len(a))]
    kept_b = b[int(TRIM * len(b)):len(b) - int(TRIM * len(b))]
    if np.ptp(kept_a) == 0 and np.ptp(kept_b) == 0:
        if ta == tb:
            return 0.0, 1.0, ta, tb
        return math.copysign(math.inf, tb - ta), 0.0, ta, tb
    r = st.ttest_ind(b, a, equal_var=False, trim=TRIM)
    return float(r.statistic), float(r.pvalue), ta, tb


class Energy:
    """The energy statistic of every split of one window's values."""

    def __init__(self, z):
        d = np.abs(z[:, None] - z[None, :])
        self.cum = np.zeros((len(z) + 1, len(z) + 1))
        self.cum[1:, 1:] = d.cumsum(axis=0).cumsum(axis=1)

    def block(self, r0, r1, c0, c1):
        c = self.cum
        return c[r1, c1] - c[r0, c1] - c[r1, c0] + c[r0, c0]

    def best(self, a, b, m):
        """(Q, tau) of the best split of [a, b), positions in the window."""
        taus, kappas = [], []
        for tau in range(a + m, b - m + 1):
            for kappa in range(tau + m, b + 1):
                taus.append(tau)
                kappas.append(kappa)
        tau = np.array(taus)
        kappa = np.array(kappas)
        n1 = (tau - a).astype(float)
        n2 = (kappa - tau).astype(float)
        cross = self.block(a, tau, tau, kappa)
        within_x = self.block(a, tau, a, tau) / 2
        within_y = self.block(tau, kappa, tau, kappa) / 2
        q = (2 / (n1 + n2) * cross - 2 * n2 / ((n1 + n2) * (n1 - 1)) * within_x
             - 2 * n1 / ((n1 + n2) * (n2 - 1)) * within_y)
        i = first_of_best(q)
        return float(q[i]), int(tau[i])


def edivisive(x, lo, hi, level, m):
    """The points E-divisive keeps in x[lo:hi) at the given level."""
    z = np.asarray(x[lo:hi], dtype=float)
    energy = Energy(z)
    points = []
    while True:
        cuts = [0] + points + [len(z)]
        segs = [(cuts[i], cuts[i + 1]) for i in range(len(cuts) - 1) if cuts[i + 1] - cuts[i] >= 2 * m]
        if not segs:
            break
        proposals = [energy.best(a, b, m) + (a, b) for a, b in segs]
        q, tau, a, b = proposals[first_of_best([p[0] for p in proposals])]
        p = yuen(z[a:tau], z[tau:b])[1]
        if p > level * (1 + TIE):
            break
        points = sorted(points + [tau])
    return [lo + p for p in points]


def judge(x, points, k, m, w):
    """The point points[k] against its neighbours: a dict of its fields."""
    p = points[k]
    lo = max(points[k - 1] if k > 0 else 0, p - w)
    hi = min(points[k + 1] if k + 1 < len(points) else len(x), p + w)
    before, after = x[lo:p], x[p:hi]
    r = {"index": p, "before_start": lo, "after_end": hi,
         "mean_before": float(np.mean(before)), "mean_after": float(np.mean(after))}
    mb = r["mean_before"]
    r["pct"] = 100 * (r["mean_after"] - mb) / abs(mb) if mb != 0 else math.nan
    if len(before) < 2 or len(after) < 2:
        test = (math.nan, 1.0, r["mean_before"], r["mean_after"])
    else:
        test = yuen(before, after)
    r["trimmed_before"], r["trimmed_after"] = test[2:]
    r["t"], r["p"] = test[:2] if len(before) >= m and len(after) >= m else (math.nan, 1.0)
    return r


def detect(x, alpha=DEFAULT_ALPHA, m=DEFAULT_MIN_SEGMENT, w=DEFAULT_WINDOW):
    """The change points of x, a list of dicts; None when x is too short."""
    x = np.asarray(x, dtype=float)
    n = len(x)
    if n < 2 * m:
        return None
    level = max(alpha, min(10 * alpha, 0.5))
    weak = set()
    s = 0
    while True:
        e = min(s + 2 * w, n)
        found = edivisive(x, s, e, level, m)
        weak.update(found)
        if e == n:
            break
        s = max([s + w] + found)
    points = sorted(weak)
    judged = [judge(x, points, k, m, w) for k in range(len(points))]
    while judged:
        k = first_of_best([j["p"] for j in judged])
        if judged[k]["p"] <= alpha * (1 + TIE):
            break
        del points[k]
        del judged[k]
        for j in (k - 1, k):
            if 0 <= j < len(points):
                judged[j] = judge(x, points, j, m, w)
    return judged


def read_values(path):
    with open(path) as f:
        return [float(line) for line in f if line.strip() and not line.startswith("#")]


def main(argv):
    opts = {"--alpha": DEFAULT_ALPHA, "--min-segment": DEFAULT_MIN_SEGMENT, "--window": DEFAULT_WINDOW}
    files = []
    i = 0
    while i < len(argv):
        if argv[i] in opts:
            kind = type(opts[argv[i]])
            opts[argv[i]] = kind(argv[i + 1])
            i += 2
        else:
            files.append(argv[i])
            i += 1
    for path in files:
        res = detect(read_values(path), opts["--alpha"], opts["--min-segment"], opts["--window"])
        if res is None:
            print(f"{path}\tENODATA")
        elif not res:
            print(f"{path}\tnone")
        for r in res or []:
            print("\t".join([path] + [repr(r[k]) for k in
                                      ("index", "before_start", "after_end", "mean_before", "mean_after", "pct", "p", "t",
                                       "trimmed_before", "trimmed_after")]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
