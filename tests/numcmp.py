#!/usr/bin/python3
"""numcmp.py EXPECTED ACTUAL [--rel R] [--full] [--tsv]: compares two outputs that
hold numbers computed on two machines (a committed expectation, and this
machine's run), line by line.

The text between numbers must be the same. Numbers are compared with a
stated tolerance, because glibc's libm takes different code paths on
different CPUs (FMA, AVX-512) and a double can differ in its last digits:
  - a number printed in full (repr, %.17g: with --full, every number; else
    those with 10 or more significant digits) is equal when
    |a - b| <= R * max(|a|, |b|), R = 1e-9 by default;
  - a number printed rounded (a report's "1.1%", "0.688") is equal when it
    is the same, or one unit apart in its last printed place: two values
    within R of each other can round to neighbours, never further apart.
A line whose numbers all match but whose spacing differs is a difference
(the table's alignment is part of the output).

--full: the output prints every number in full (JSON, CSV, repr), so a
short one like 0.25 is exact, not rounded.
--tsv (implies --full): the first non-comment line is a header, and differences name the
row (its first field) and the column. Comment lines ('#') are skipped in
--tsv mode. Prints every difference found, with both values and by how
much they differ, then "numcmp: N lines compared, N differ"; exits 1 when
anything differs.
"""
import math
import re
import sys

NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|\b(?:nan|inf)\b")
FULL_DIGITS = 10


def sig_digits(tok):
    mant = re.split(r"[eE]", tok)[0].lstrip("+-").replace(".", "").lstrip("0")
    return len(mant)


def last_place(tok):
    """The value of one unit in the last printed place of tok."""
    parts = re.split(r"[eE]", tok)
    mant = parts[0]
    exp = int(parts[1]) if len(parts) > 1 else 0
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    return 10.0 ** (exp - decimals)


def same_number(a, b, rel, full):
    """None when a and b agree, else a description of how far apart."""
    if a == b:
        return None
    try:
        x, y = float(a), float(b)
    except ValueError:
        return "not numbers"
    if math.isnan(x) or math.isnan(y):
        return "nan against a number"
    if x == y:
        return None
    diff = abs(x - y)
    scale = max(abs(x), abs(y))
    if full or min(sig_digits(a), sig_digits(b)) >= FULL_DIGITS:
        if diff <= rel * scale:
            return None
        return "relative difference %.3g > %.3g" % (diff / scale, rel)
    ulp = max(last_place(a), last_place(b))
    if diff <= ulp * (1 + 1e-9):
        return None
    return "differ by %.6g, more than one unit in the last printed place (%.3g)" % (diff, ulp)


def split(line):
    nums = [m.group(0) for m in NUM.finditer(line)]
    text = NUM.split(line)
    return nums, text


def compare_line(e, a, rel, full):
    """A list of (token index, expected, actual, why) differences."""
    if e == a:
        return []
    en, et = split(e)
    an, at = split(a)
    if len(en) != len(an) or [" ".join(t.split()) for t in et] != [" ".join(t.split()) for t in at]:
        return [(None, e, a, "the text differs")]
    out = []
    for i, (x, y) in enumerate(zip(en, an)):
        why = same_number(x, y, rel, full)
        if why:
            out.append((i, x, y, why))
    if not out and en == an:
        return [(None, e, a, "the spacing differs")]
    return out


def compare_tsv(el, al, rel, where):
    def rows(lines):
        return [l for l in lines if not l.startswith("#")]
    er, ar = rows(el), rows(al)
    bad = []
    if not er or not ar or er[0] != ar[0]:
        return 1, ["%s: the headers differ" % where]
    cols = er[0].split("\t")
    if len(er) != len(ar):
        bad.append("%s: %d rows expected, %d found" % (where, len(er) - 1, len(ar) - 1))
    for e, a in zip(er[1:], ar[1:]):
        ef, af = e.split("\t"), a.split("\t")
        if len(ef) != len(af) or ef[0] != af[0]:
            bad.append("%s: row %s: expected row %s with %d fields, got %d" % (where, af[0], ef[0], len(ef), len(af)))
            continue
        for c, (x, y) in enumerate(zip(ef, af)):
            for _, xe, ya, why in compare_line(x, y, rel, True):
                bad.append("%s: row %s, column %s: expected %s, got %s (%s)"
                           % (where, ef[0], cols[c] if c < len(cols) else c, xe, ya, why))
    return len(er) - 1, bad


def compare_text(el, al, rel, where, full):
    bad = []
    if len(el) != len(al):
        bad.append("%s: %d lines expected, %d found" % (where, len(el), len(al)))
    for n, (e, a) in enumerate(zip(el, al), 1):
        for i, x, y, why in compare_line(e, a, rel, full):
            if i is None:
                bad.append("%s:%d: %s:\n    expected: %s\n    got:      %s" % (where, n, why, x, y))
            else:
                bad.append("%s:%d: number %d: expected %s, got %s (%s)" % (where, n, i + 1, x, y, why))
    return len(el), bad


def main(argv):
    rel, tsv, full, files = 1e-9, False, False, []
    i = 0
    while i < len(argv):
        if argv[i] == "--rel" and i + 1 < len(argv):
            rel = float(argv[i + 1])
            i += 2
            continue
        if argv[i] == "--tsv":
            tsv = True
        elif argv[i] == "--full":
            full = True
        else:
            files.append(argv[i])
        i += 1
    if len(files) != 2:
        sys.exit("usage: numcmp.py EXPECTED ACTUAL [--rel R] [--full] [--tsv]")
    with open(files[0]) as f:
        el = f.read().split("\n")
    with open(files[1]) as f:
        al = f.read().split("\n")
    if tsv:
        n, bad = compare_tsv(el, al, rel, files[0])
    else:
        n, bad = compare_text(el, al, rel, files[0], full)
    for b in bad[:40]:
        print(b)
    if len(bad) > 40:
        print("... and %d more differences" % (len(bad) - 40))
    print("numcmp: %d lines compared, %d differ (numbers within a relative %.3g%s)"
          % (n, len(bad), rel, "" if tsv or full else ", or one unit in the last printed place"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
