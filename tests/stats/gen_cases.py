#!/usr/bin/python3
"""Writes tests/stats/oracle.tsv: data sets and what scipy says about them,
for tests/unit/test_stats_oracle.c (which needs no Python at test time).

Run with Debian's /usr/bin/python3 and python3-scipy (a pyenv python3 on
PATH usually has no scipy). Values are written with repr() so C's strtod
reads back the very same doubles.

Two ways to run it:
  gen_cases.py                  draws the data sets from fixed seeds (to add
                                a case: then review and commit the file)
  gen_cases.py --inputs FILE    takes the data sets (name, x, y) from FILE,
                                the committed oracle.tsv, and computes
                                scipy's answers for them again; this is what
                                tests/stats/check_oracle.sh runs. The draws go
                                through libm (exp, log), whose last digits
                                differ between CPUs, so the check never
                                regenerates its inputs.

For every data set (x = variant A, y = variant B):
  paired (x, y of equal length), d = y - x:
    scipy.stats.wilcoxon, two-sided, zero_method="wilcox" (zeros dropped).
      kab's method: exact when fewer than 50 non-zero d remain, else the
      normal approximation with tie correction and correction=True. The
      reference is scipy with that method forced, on the non-zero d for
      the exact case: scipy's "auto" itself switches to the normal
      approximation as soon as a zero is present; the note column says
      where "auto" would differ. With |d| ties below 50, kab's test is
      the exact one conditional on the midranks, which scipy does not
      have (its exact table is the untied one, wrong on tied data): the
      reference is exact_tied_p below, integer counts of sign vectors
      by doubled midrank sum. All-zero d: scipy raises, kab says p = 1
      (no evidence of a shift); the reference is that by design.
    Hodges-Lehmann: median of the Walsh averages (numpy), interval
      [W_(c+1), W_(N-c)] with c the largest value where P(W+ <= c) <= 0.025
      from scipy's exact signed-rank distribution below 50 values, and
      from the normal approximation (continuity-corrected) from 50 on.
  both kinds:
    scipy.stats.mannwhitneyu(x, y), two-sided, use_continuity=True,
      method "exact" when both sizes < 50 and there are no ties, else
      "asymptotic" (scipy's "auto" only goes exact below 9). With ties and
      both sizes < 50 kab's test is exact conditional on the midranks,
      which scipy does not have: the reference is exact_tied_p below,
      integer counts of the splits of the pooled values by y's doubled
      midrank sum.
    two-sample HL: median of y_j - x_i, interval from scipy's exact U
      distribution (sizes < 50) or the normal approximation.
    scipy.stats.ttest_ind(y, x, equal_var=False): t > 0 when y is larger.

exact_tied_p counts in Python integers (no rounding, no overflow) and
shares no code with kab's probability DPs; tests/stats/exact_ref.py checks
the same definition by enumerating every sign vector or split of smaller
data sets (tests/stats/exact.tsv).
"""
import math
import warnings
import sys
from fractions import Fraction

import numpy as np
import scipy
import scipy.stats as st
from scipy.stats._hypotests import _get_wilcoxon_distr
from scipy.stats._mannwhitneyu import _mwu_state

EXACT_LIMIT = 50
CONF = 0.95
ALPHA = 1 - CONF
NA = "-"


def num(v):
    if v is None:
        return NA
    v = float(v)
    if math.isnan(v):
        return "nan"
    return repr(v)


def vec(v):
    return ",".join(repr(float(e)) for e in v)


def cut_exact(cdf):
    """Largest c with cdf[c] <= alpha/2, else 0; and the coverage."""
    c = 0
    while c + 1 < len(cdf) and cdf[c + 1] <= ALPHA / 2:
        c += 1
    return c, 1 - 2 * cdf[c]


def cut_normal(top, sd):
    mean = top / 2
    c = math.floor(mean - 0.5 - st.norm.isf(ALPHA / 2) * sd)
    c = max(c, 0)
    return c, 1 - 2 * st.norm.cdf((c + 0.5 - mean) / sd)


def interval(terms, c, level):
    terms = np.sort(terms)
    return np.median(terms), terms[c], terms[len(terms) - 1 - c], level


def exact_tied_p(counts, observed):
    """Two-sided p from counts[s] = how many equally likely outcomes have
    the sum s: min(1, 2 min(P(S <= observed), P(S >= observed)))."""
    lower, upper = sum(counts[:observed + 1]), sum(counts[observed:])
    return float(min(Fraction(1), Fraction(2 * min(lower, upper), sum(counts))))


def doubled_ranks(v):
    """Midranks times 2: integers, also within ties."""
    return [int(round(2 * r)) for r in st.rankdata(v)]


def signrank_tied_p(nz):
    """Exact p over the 2^k sign vectors of the observed midranks."""
    r2 = doubled_ranks(np.abs(nz))
    counts = [1] + [0] * sum(r2)
    for r in r2:
        counts = [c + (counts[s - r] if s >= r else 0) for s, c in enumerate(counts)]
    return exact_tied_p(counts, sum(r for r, v in zip(r2, nz) if v > 0))


def ranksum_tied_p(x, y):
    """Exact p over the C(nx+ny, ny) splits of the pooled midranks: counts
    by (how many of y's size chosen, sum)."""
    r2 = doubled_ranks(np.concatenate([x, y]))
    m, top = len(y), sum(r2)
    counts = [[1] + [0] * top] + [[0] * (top + 1) for _ in range(m)]
    for r in r2:
        for j in range(m, 0, -1):
            row, fewer = counts[j], counts[j - 1]
            for s in range(top, r - 1, -1):
                row[s] += fewer[s - r]
    return exact_tied_p(counts[m], sum(r2[len(x):]))


def wilcoxon(d):
    nz = d[d != 0]
    n = len(nz)
    notes = []
    if n == 0:
        notes.append("all d zero: scipy raises, kab p=1 by design")
        return "exact", 0.0, 0.0, 1.0, None, notes
    ranks = st.rankdata(np.abs(nz))
    w_plus = float(np.sum(ranks[nz > 0]))
    ties = len(np.unique(np.abs(nz))) < n
    if n < EXACT_LIMIT and ties:
        notes.append("ties: exact conditional p by exact_tied_p (scipy approx said %r)"
                     % float(st.wilcoxon(d, zero_method="wilcox", correction=True, method="approx").pvalue))
        top = n * (n + 1) / 2
        return "exact", w_plus, min(w_plus, top - w_plus), signrank_tied_p(nz), None, notes
    if n < EXACT_LIMIT:
        res = st.wilcoxon(nz, method="exact")
        if n < len(d):
            notes.append("zeros: scipy auto goes normal; reference is scipy exact on non-zero d")
        method, z = "exact", None
    else:
        res = st.wilcoxon(d, zero_method="wilcox", correction=True, method="approx")
        method, z = "normal", abs(res.zstatistic)
    return method, w_plus, float(res.statistic), float(res.pvalue), z, notes


def hl_paired(d):
    n = len(d)
    i, j = np.triu_indices(n)
    walsh = (d[i] + d[j]) / 2
    if n < EXACT_LIMIT:
        c, level = cut_exact(np.cumsum(_get_wilcoxon_distr(n)))
    else:
        c, level = cut_normal(n * (n + 1) / 2, math.sqrt(n * (n + 1) * (2 * n + 1) / 24))
    return interval(walsh, c, level)


def mann_whitney(x, y):
    ties = len(np.unique(np.concatenate([x, y]))) < len(x) + len(y)
    exact = len(x) < EXACT_LIMIT and len(y) < EXACT_LIMIT
    method = "exact" if exact and not ties else "asymptotic"
    res = st.mannwhitneyu(x, y, use_continuity=True, alternative="two-sided", method=method)
    notes = []
    if exact and ties:
        notes.append("mw ties: exact conditional p by exact_tied_p (scipy asymptotic said %r)" % float(res.pvalue))
        return "exact", float(res.statistic), ranksum_tied_p(x, y), notes
    if exact and len(x) > 8 and len(y) > 8:
        notes.append("mw: scipy auto would be asymptotic; reference is scipy exact")
    return ("exact" if exact else "normal"), float(res.statistic), float(res.pvalue), notes


def hl_shift(x, y):
    m, n = len(x), len(y)
    diff = (y[None, :] - x[:, None]).ravel()
    if m < EXACT_LIMIT and n < EXACT_LIMIT:
        c, level = cut_exact(np.asarray(_mwu_state.cdf(np.arange(m * n + 1), m, n)))
    else:
        c, level = cut_normal(m * n, math.sqrt(m * n * (m + n + 1) / 12))
    return interval(diff, c, level)


def welch(x, y):
    res = st.ttest_ind(y, x, equal_var=False)
    vx, vy = np.var(x, ddof=1) / len(x), np.var(y, ddof=1) / len(y)
    se2 = vx + vy
    df = se2 * se2 / (vx * vx / (len(x) - 1) + vy * vy / (len(y) - 1)) if se2 > 0 else float("nan")
    return float(res.statistic), df, float(res.pvalue)


def cases():
    rng = np.random.RandomState(20240601)

    def lognormal(n, scale, cov, shift=0.0):
        return scale * (1 + shift) * np.exp(rng.normal(0, cov, n))

    def pair(n, scale, cov, shift):
        return lognormal(n, scale, cov), lognormal(n, scale, cov, shift)

    out = []
    add = lambda name, x, y: out.append((name, np.asarray(x, float), np.asarray(y, float)))
    add("n3", [10.0, 12.0, 11.0], [10.5, 12.9, 11.2])
    add("n5-all-up", [1, 2, 3, 4, 5], [1.5, 2.7, 3.2, 4.9, 5.4])
    add("n6-all-up", *pair(6, 100, 0.01, 0.05))
    add("n8-mixed", [0, 0, 0, 0, 0, 0, 0, 0], [1.5, -0.5, 2.0, 3.25, 0.75, -1.0, 2.5, 4.0])
    add("n7-center", [0] * 7, [1, -2, 3, -4, 5, -6, 7])
    add("n10-noise", *pair(10, 1000, 0.03, 0.0))
    add("n12-shift", *pair(12, 50, 0.02, 0.03))
    add("n20-shift", *pair(20, 7.5, 0.05, -0.04))
    add("n30-small-shift", *pair(30, 300, 0.02, 0.005))
    add("n40-noise", *pair(40, 1, 0.1, 0.0))
    add("n49-exact-edge", *pair(49, 20, 0.02, 0.01))
    add("n50-normal-edge", *pair(50, 20, 0.02, 0.01))
    add("n60", *pair(60, 1e4, 0.03, 0.02))
    a = rng.randint(0, 20, 15).astype(float)
    add("n15-int-ties", a, a + rng.choice([-2, -1, 1, 2, 3], 15))
    a = np.round(lognormal(12, 100, 0.05), 3)
    b = a.copy()
    b[[1, 4, 7, 9]] += [0.5, -0.25, 1.75, 2.0]
    add("n12-zeros", a, b)
    a = rng.randint(0, 5, 20).astype(float)
    add("n20-zeros-ties", a, a + rng.choice([0, 0, 1, -1, 2], 20))
    same = lognormal(8, 10, 0.05)
    add("identical", same, same.copy())
    add("huge-1e12", *pair(10, 1e12, 0.02, 0.1))
    add("tiny-1e-9", *pair(10, 1e-9, 0.02, -0.1))
    a = np.array([1e12, 2e12, 3e12, 4e12, 5e12, 6e12, 7e12, 8e12, 9e12])
    add("huge-ties", a, a + np.array([1e9, 1e9, -1e9, 2e9, 2e9, 3e9, -3e9, 1e9, 0]))
    add("counter-zero-a", [0.0] * 10, [3, 0, 5, 2, 7, 1, 4, 4, 6, 2])
    add("counter-some-zeros", [0, 3, 5, 0, 4, 6, 2, 0, 9, 1], [1, 3, 6, 0, 4, 5, 2, 1, 12, 0])
    add("n4-tie", [1.0, 2.0, 3.0, 4.0], [2.0, 3.0, 4.5, 6.5])
    add("negatives", *(-v for v in pair(14, 50, 0.05, 0.05)))
    a, b = pair(25, 1, 0.05, 0.05)
    add("log-ratios", np.log(a), np.log(b))
    # two samples of different sizes: Mann-Whitney, HL shift, Welch only
    add("u3v3-separated", [1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    add("u3v5", [1.1, 2.4, 3.3], [1.9, 2.5, 3.8, 4.2, 5.0])
    add("u7v9", lognormal(7, 10, 0.05), lognormal(9, 10, 0.05, 0.06))
    add("u20v25", lognormal(20, 10, 0.05), lognormal(25, 10, 0.05, 0.02))
    add("u49v30", lognormal(49, 3, 0.1), lognormal(30, 3, 0.1, 0.05))
    add("u55v60", lognormal(55, 3, 0.1), lognormal(60, 3, 0.1, 0.05))
    add("u-ties", rng.randint(0, 6, 12).astype(float), rng.randint(1, 7, 15).astype(float))
    add("u-all-equal", [4.0] * 6, [4.0] * 5)
    add("u-huge", lognormal(8, 1e12, 0.01), lognormal(11, 1e12, 0.01, 0.02))
    add("u-tiny", lognormal(9, 1e-9, 0.01), lognormal(6, 1e-9, 0.01, -0.02))
    add("u-zeros", [0.0] * 5, [0, 0, 1, 0, 2, 0, 1])
    # ties from 50 on: the normal approximations with their tie corrections
    a = np.array([(7 * i) % 11 for i in range(60)], float)
    add("n60-int-ties", a, a + np.array([[-1, 1, 2, 3][i % 4] for i in range(60)], float))
    return out


def committed_cases(path):
    """The data sets (name, x, y) of an oracle file, in its order."""
    out = []
    with open(path) as f:
        header = None
        for lineno, line in enumerate(f, 1):
            if line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            if header is None:
                header = fields
                continue
            if len(fields) != len(header):
                sys.exit("%s:%d: %d fields, the header has %d" % (path, lineno, len(fields), len(header)))
            row = dict(zip(header, fields))
            try:
                x = np.array([float(v) for v in row["x"].split(",")])
                y = np.array([float(v) for v in row["y"].split(",")])
            except ValueError as e:
                sys.exit("%s:%d: data set %s: %s" % (path, lineno, row["name"], e))
            out.append((row["name"], x, y))
    if not out:
        sys.exit("%s: no data sets" % path)
    return out


def main():
    # scipy warns about small samples and constant data; both are cases here on purpose
    warnings.simplefilter("ignore")
    if len(sys.argv) == 3 and sys.argv[1] == "--inputs":
        data = committed_cases(sys.argv[2])
    elif len(sys.argv) == 1:
        data = cases()
    else:
        sys.exit("usage: gen_cases.py [--inputs ORACLE.tsv]")
    cols = ["name", "x", "y",
            "w_method", "w_plus", "w_stat", "w_p", "w_absz",
            "hl_est", "hl_lo", "hl_hi", "hl_level",
            "mw_method", "mw_u", "mw_p",
            "hs_est", "hs_lo", "hs_hi", "hs_level",
            "welch_t", "welch_df", "welch_p", "note"]
    out = sys.stdout
    out.write("# generated by tests/stats/gen_cases.py with scipy %s, numpy %s; do not edit\n"
              % (scipy.__version__, np.__version__))
    out.write("\t".join(cols) + "\n")
    for name, x, y in data:
        notes = []
        row = [name, vec(x), vec(y)]
        if len(x) == len(y):
            d = y - x
            method, w_plus, w_stat, w_p, z, wn = wilcoxon(d)
            notes += wn
            row += [method, num(w_plus), num(w_stat), num(w_p), num(z)]
            row += [num(v) for v in hl_paired(d)]
        else:
            row += [NA] * 9
        method, u, p, mn = mann_whitney(x, y)
        notes += mn
        row += [method, num(u), num(p)]
        row += [num(v) for v in hl_shift(x, y)]
        t, df, p = welch(x, y)
        if math.isnan(p):
            notes.append("welch: no variance, scipy nan; kab p=1 for equal constants")
        row += [num(t), num(df), num(p)]
        row.append("; ".join(notes) if notes else NA)
        out.write("\t".join(row) + "\n")


if __name__ == "__main__":
    main()
