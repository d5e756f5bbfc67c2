#!/usr/bin/python3
"""Writes tests/stats/exact.tsv: small data sets with ties and zeros, and the
exact conditional p-values of the Wilcoxon signed-rank and Mann-Whitney
tests on them found by brute-force enumeration, for
tests/unit/test_stats_exact.c (which needs no Python at test time).

Why an enumeration: with ties kab's exact tests are dynamic programs over
sums of doubled midranks (harness/stats/stats_rank.c), and there is no
second implementation to ask: scipy's wilcoxon(method="exact") and
mannwhitneyu(method="exact") use the untied tables whatever the data.
Listing every sign vector or every split shares nothing with a dynamic
program but the definition, and in integers and fractions it rounds
nowhere. It is slow, so the sets are small: at most 16 non-zero
differences (65536 sign vectors) and 18 pooled values (48620 splits).
Needs nothing but Python's standard library.

Definitions (doc/statistics.md rule 5), x = variant A, y = variant B:
  signed-rank, on paired sets: d = y - x in doubles (as kab computes it);
    zeros dropped; midranks of |d|; W+ = the sum of the midranks of the
    positive d. With no shift each of the 2^k sign vectors over those
    midranks is equally likely, whatever the ties:
    p = min(1, 2 min(P(W+ <= w), P(W+ >= w))). min_p: the smallest p over
    every sign vector. All d zero: p = 1 (kab's choice: no evidence of a
    shift), min_p "nan" (no test at all).
  Mann-Whitney, when nx + ny <= 18: midranks of the pooled x and y;
    U = R_x - nx(nx+1)/2 (scipy's statistic). With no shift each of the
    C(nx+ny, ny) ways to give ny of the pooled midranks to y is equally
    likely: p = min(1, 2 min(P(R_y <= r), P(R_y >= r))). min_p: the
    smallest p over every split.
Each p is written as a double (repr, so strtod reads the same double
back) and as the exact fraction it is.

Two ways to run it, as gen_cases.py:
  exact_ref.py                  builds the data sets below (typed in, or
                                drawn with Python's random.Random, whose
                                integers are specified to the bit) and
                                enumerates (to add a case: then review and
                                commit the file)
  exact_ref.py --inputs FILE    takes the data sets (name, x, y, note) from
                                FILE, the committed exact.tsv, and
                                enumerates again; this is what
                                check_exact.sh runs. The inputs are never
                                regenerated: the committed sets are what the
                                C test reads, and a change to this script
                                must show up as different answers, never
                                as different questions.
"""
import itertools
import math
import random
import sys
from fractions import Fraction

MAX_SIGNS = 16  # non-zero differences: 2^16 sign vectors
MAX_POOLED = 18  # values in both samples: C(18, 9) = 48620 splits
NA = "-"


def doubled_midranks(values):
    """2 x the midrank of each value: ranks lo+1 .. hi tied get lo+1+hi."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0] * len(values)
    lo = 0
    while lo < len(order):
        hi = lo + 1
        while hi < len(order) and values[order[hi]] == values[order[lo]]:
            hi += 1
        for i in order[lo:hi]:
            out[i] = lo + 1 + hi
        lo = hi
    return out


def two_sided(sums, observed):
    """p of the observed sum among all equally likely sums (one per sign
    vector or split), and the smallest p any of them gives."""
    total = len(sums)
    below = {}  # sum -> how many are <= it
    above = {}
    ordered = sorted(sums)
    for i, s in enumerate(ordered):
        below[s] = i + 1
    for i in range(total - 1, -1, -1):
        above[ordered[i]] = total - i
    def p(s):
        return min(Fraction(1), Fraction(2 * min(below[s], above[s]), total))
    return p(observed), min(p(s) for s in below)


def signed_rank(x, y):
    d = [b - a for a, b in zip(x, y)]
    nz = [v for v in d if v != 0]
    k = len(nz)
    if k == 0:
        return 0, Fraction(0), Fraction(1), None
    if k > MAX_SIGNS:
        sys.exit("%d non-zero differences: more than %d to enumerate" % (k, MAX_SIGNS))
    r2 = doubled_midranks([abs(v) for v in nz])
    observed = sum(r for r, v in zip(r2, nz) if v > 0)
    # every sign vector once: each rank doubles the list, positive or not
    sums = [0]
    for r in r2:
        sums = sums + [s + r for s in sums]
    assert len(sums) == 2 ** k
    p, min_p = two_sided(sums, observed)
    return k, Fraction(observed, 2), p, min_p


def mann_whitney(x, y):
    pooled = list(x) + list(y)
    n = len(pooled)
    if n > MAX_POOLED:
        return None
    r2 = doubled_midranks(pooled)
    nx, ny = len(x), len(y)
    r_x = Fraction(sum(r2[:nx]), 2)
    u = r_x - Fraction(nx * (nx + 1), 2)
    # every split once: which of the n pooled positions y holds
    sums = [sum(r2[i] for i in chosen) for chosen in itertools.combinations(range(n), ny)]
    assert len(sums) == math.comb(n, ny)
    p, min_p = two_sided(sums, sum(r2[nx:]))
    return u, p, min_p


def num(v):
    if v is None:
        return "nan"
    return repr(float(v))


def frac(v):
    return NA if v is None else "%d/%d" % (v.numerator, v.denominator)


def vec(v):
    return ",".join(repr(float(e)) for e in v)


def cases():
    out = []

    def add(name, x, y, note):
        out.append((name, [float(v) for v in x], [float(v) for v in y], note))

    add("counter-655364-to-0-6pairs", [655364] * 6, [0] * 6,
        "a counter that drops to 0 in every pair: all d tied; floor 2/2^6, MW 2/C(12,6) = 2/924")
    add("counter-655364-to-0-5pairs", [655364] * 5, [0] * 5,
        "5 pairs: the exact p cannot go below 2/2^5 = 1/16")
    add("5pairs-tied-mixed", [10, 20, 30, 40, 50], [11, 21, 32, 38, 53],
        "5 pairs, |d| ties 1,1,2,2,3 and one negative: min_p 1/16 whatever the ties")
    add("5pairs-all-up-distinct", [1, 2, 3, 4, 5], [1.5, 2.7, 3.2, 4.9, 5.4],
        "5 pairs at their best: p = min_p = 1/16")
    add("tied-d-8", [100, 101, 99, 100, 102, 98, 100, 101], [101, 102, 100, 102, 104, 97, 103, 104],
        "|d| = 1,1,1,2,2,1,3,3: ties of 4 and 2 and 2")
    add("tied-d-all-equal-3", [10, 12, 11], [13, 15, 14], "three equal d: p = 2/8")
    add("zeros-d-10", [5, 5, 6, 6, 7, 7, 8, 8, 9, 9], [5, 6, 6, 8, 7, 9, 8, 10, 9, 12],
        "4 zero d dropped, the rest tied 1,2,2,2,3 plus sign")
    add("zeros-and-ties-mixed-signs", [3, 3, 3, 3, 3, 3, 3, 3, 3], [3, 4, 2, 5, 1, 3, 6, 0, 4],
        "d = 0,1,-1,2,-2,0,3,-3,1: symmetric ties around 0")
    add("one-nonzero-d", [7, 7, 7, 7, 7], [7, 7, 9, 7, 7], "k = 1: p = min_p = 1")
    add("all-equal-paired", [4] * 6, [4] * 6, "every value equal: all d zero (p 1, no min_p); MW p = min_p = 1")
    add("all-d-equal-nonzero-12", [1] * 12, [2] * 12,
        "12 equal d: floor 2/4096; MW two constants, 12 against 12 is past the enumeration")
    add("distinct-12-all-up", list(range(1, 13)), [v + 0.5 + v / 100 for v in range(1, 13)],
        "no ties: the untied table, 2/4096")
    add("float-differences", [0.1, 0.2, 0.7, 1.1, 0.3, 0.6], [0.3, 0.4, 0.9, 1.3, 0.2, 0.9],
        "d in doubles: 0.3-0.1 and 0.4-0.2 differ in the last bit, so no tie where decimals have one")
    add("huge-ties", [1e12, 2e12, 3e12, 4e12, 5e12, 6e12, 7e12, 8e12, 9e12],
        [1.001e12, 2.001e12, 2.999e12, 4.002e12, 5.002e12, 6.003e12, 6.997e12, 8.001e12, 9e12],
        "1e12 scale; d ties in doubles decide the ranks")
    add("tied-d-16", [20] * 16, [21, 22, 19, 21, 23, 22, 18, 21, 24, 22, 21, 19, 23, 22, 21, 25],
        "16 non-zero d in 5 tie groups, 3 negative: the largest enumeration")
    add("half-integer-symmetric", [0] * 8, [-0.5, 0.5, 1.5, -1.5, 2.5, 2.5, -2.5, 0.5],
        "midrank ties with mixed signs, W+ near the centre")

    # unpaired: Mann-Whitney only
    add("mw-separated-tied-inside", [1, 1, 1, 2, 2], [5, 5, 6, 6, 6, 7],
        "complete separation: p = min_p = 2/C(11,5)")
    add("mw-tie-across-border", [1, 2, 3, 4], [4, 5, 6, 7, 8],
        "the 4s straddle the top border: y on top is p = 2 C(2,1)/C(9,5); min_p is y at the bottom, 2/C(9,5)")
    add("mw-counter-zeros", [0, 0, 0, 0, 0], [0, 0, 1, 0, 2, 0, 1],
        "a counter mostly zero: 9 tied zeros")
    add("mw-all-equal", [3] * 4, [3] * 7, "every value equal: p = min_p = 1")
    add("mw-heavy-ties", [1, 2, 2, 3, 3, 3, 4], [2, 3, 3, 4, 4, 4, 5, 5],
        "groups of 3 and 4 ties")
    add("mw-one-vs-many", [10], [1, 2, 2, 3, 10, 10, 11], "one value against seven, tied with two")
    add("mw-zeros-vs-counter", [0] * 9, [1, 3, 2, 0, 5, 4, 1, 2],
        "9 zeros against a counter: the zero tie crosses the border")

    rng = random.Random(23)
    for i in range(6):
        n = rng.choice([6, 8, 9, 12, 14, 16])
        x = [rng.randint(0, 9) for _ in range(n)]
        y = [v + rng.choice([-2, -1, 0, 1, 1, 2, 3, 4]) for v in x]
        add("drawn-paired-%d" % i, x, y, "drawn: small integer differences, ties and zeros")
    for i in range(6):
        nx, ny = rng.sample(range(1, 10), 2)  # unequal: no paired test
        x = [rng.randint(0, 5) for _ in range(nx)]
        y = [rng.randint(1, 6) for _ in range(ny)]
        add("drawn-unpaired-%d" % i, x, y, "drawn: integers 0-6, ties")
    return out


def committed_cases(path):
    """The data sets (name, x, y, note) of a reference file, in its order."""
    out = []
    header = None
    with open(path) as f:
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
                x = [float(v) for v in row["x"].split(",")]
                y = [float(v) for v in row["y"].split(",")]
            except ValueError as e:
                sys.exit("%s:%d: data set %s: %s" % (path, lineno, row["name"], e))
            out.append((row["name"], x, y, row["note"]))
    if not out:
        sys.exit("%s: no data sets" % path)
    return out


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--inputs":
        data = committed_cases(sys.argv[2])
    elif len(sys.argv) == 1:
        data = cases()
    else:
        sys.exit("usage: exact_ref.py [--inputs EXACT.tsv]")
    cols = ["name", "x", "y", "w_k", "w_plus", "w_p", "w_p_frac", "w_min_p", "w_min_p_frac",
            "mw_u", "mw_p", "mw_p_frac", "mw_min_p", "mw_min_p_frac", "note"]
    out = sys.stdout
    out.write("# generated by tests/stats/exact_ref.py (brute-force enumeration, Python %d.%d); do not edit\n"
              % sys.version_info[:2])
    out.write("\t".join(cols) + "\n")
    for name, x, y, note in data:
        row = [name, vec(x), vec(y)]
        if len(x) == len(y):
            k, w_plus, p, min_p = signed_rank(x, y)
            row += [str(k), num(w_plus), num(p), frac(p), num(min_p), frac(min_p)]
        else:
            row += [NA] * 6
        mw = mann_whitney(x, y)
        if mw:
            u, p, min_p = mw
            row += [num(u), num(p), frac(p), num(min_p), frac(min_p)]
        else:
            row += [NA] * 5
        row.append(note)
        out.write("\t".join(row) + "\n")


if __name__ == "__main__":
    main()
