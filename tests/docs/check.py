#!/usr/bin/env python3
"""The documentation's reference tables against the code, and its links.

Run from the project root by tests/docs/run.sh. Each check prints FAIL
lines naming the file and what differs; the last line is
"docs-check: P passed, F failed" and the exit status is 1 when F > 0.

- routes: kabd's route table (routes[] in harness/daemon/httpd.c), one
  row per path and method, against doc/daemon.md's table between
  "<!-- kabd routes -->" and "<!-- end of kabd routes -->" and against
  the ".B METHOD /api/v1/PATH" entries of doc/kabd.8's API section;
- options: kabd's long options (its getopt_long table in
  harness/daemon/kabd_main.c, but --help) against the entries of
  doc/kabd.8's OPTIONS section;
- config: the settings (settings[] in harness/base/config.c) against
  doc/config.md's table (a row "| `VAR` ... | NAME: ...") and the
  ENVIRONMENT sections of doc/kab.1 and doc/kabd.8 (every variable named
  in one of them);
- layers: LEVELS in tests/lint/layers.py against the level table of
  doc/HACKING.md between "<!-- layers -->" and "<!-- end of layers -->";
- constants: every row of a "<!-- checked: constants -->" block names one
  `CONSTANT` whose #define under harness/ or db/ is a number of the row's
  value (or default) column (256 KiB (262144 bytes) holds 256u * 1024);
- cli: kab's verbs (verbs[] in harness/cli/main.c) and the long options
  of the getopt_long table verbs[] names for each against doc/kab.1: a
  SYNOPSIS line and a VERBS entry per verb, and every option a verb takes
  (but --help and an older name) in its SYNOPSIS lines, none it does not;
- states: a nightly history point's states (HISTORY_POINT_STATE_LIST in
  harness/report/history.h) against doc/nightly.md's sentence that lists
  them and the gaps web/nightly.js names;
- links: every relative link of README.md and doc/*.md names a file or
  directory that exists, and its #anchor a heading of that file.
"""
import glob
import os
import re
import sys
import importlib.util

passed = failed = 0


def ok(cond, msg):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL " + msg)
    return cond


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def block(text, begin, end):
    """The lines strictly between the marker lines, or None."""
    lines = text.split("\n")
    try:
        s = next(i for i, l in enumerate(lines) if l.strip() == begin)
        e = next(i for i in range(s + 1, len(lines)) if lines[i].strip() == end)
    except StopIteration:
        return None
    return lines[s + 1:e]


def cells(row):
    """A Markdown table row's cells; an escaped \\| stays in its cell."""
    row = row.strip()
    if not row.startswith("|"):
        return None
    parts = re.split(r"(?<!\\)\|", row.strip("|"))
    return [c.strip() for c in parts]


def table_rows(lines):
    """The body rows of the first table in lines: (header, rows)."""
    rows = [cells(l) for l in lines if l.strip().startswith("|")]
    if len(rows) < 2:
        return [], []
    return rows[0], [r for r in rows[2:]]


def man_section(path, name):
    """The text of a man page's .SH NAME section, or None (a FAIL)."""
    m = re.search(r"^\.SH " + name + r"\n(.*?)(?=^\.SH |\Z)", read(path), re.S | re.M)
    ok(m is not None, f"{path}: no .SH {name} section")
    return m.group(1) if m else None


def same_sets(code, doc, missing, extra):
    """One check per element: in doc when in code, in code when in doc;
    missing(k) and extra(k) say what is wrong."""
    for k in sorted(code):
        ok(k in doc, missing(k))
    for k in sorted(doc):
        ok(k in code, extra(k))


# ---- routes ----------------------------------------------------------

def code_routes():
    src = read("harness/daemon/httpd.c")
    m = re.search(r"routes\[\]\s*=\s*\{(.*?)\n\};", src, re.S)
    if not m:
        return None
    got = set()
    for pat, get, post in re.findall(r'\{\s*"([^"]+)"\s*,\s*(\w+)\s*,\s*(\w+)\s*\}', m.group(1)):
        path = pat.replace("#", "{id}")
        if get != "NULL":
            got.add(("GET", path))
        if post != "NULL":
            got.add(("POST", path))
    return got


ROUTE = re.compile(r"\b(GET|POST|PUT|DELETE|PATCH) +(/[^\s`?\[|\\]*)")


def norm(path):
    return path[len("/api/v1"):] if path.startswith("/api/v1/") else path


def check_routes():
    want = code_routes()
    if not ok(bool(want), "harness/daemon/httpd.c: no routes[] table found"):
        return
    lines = block(read("doc/daemon.md"), "<!-- kabd routes -->", "<!-- end of kabd routes -->")
    if not ok(lines is not None, "doc/daemon.md: no block between <!-- kabd routes --> and <!-- end of kabd routes -->"):
        return
    _, rows = table_rows(lines)
    doc = {}
    for r in rows:
        m = ROUTE.search(r[0])
        if ok(m is not None, f"doc/daemon.md: route row without METHOD /path in its first cell: {r[0][:80]}"):
            key = (m.group(1), norm(m.group(2)))
            ok(key not in doc, f"doc/daemon.md: route {key[0]} {key[1]} has two rows")
            doc[key] = r
    same_sets(want, doc, lambda k: f"doc/daemon.md: kabd serves {k[0]} {k[1]} (harness/daemon/httpd.c routes[]) but the table has no row for it",
              lambda k: f"doc/daemon.md: the table documents {k[0]} {k[1]}, which is not in kabd's routes[]")
    api = man_section("doc/kabd.8", "API")
    if api is None:
        return
    mroutes = set()
    for line in api.split("\n"):
        m = re.match(r"^\.B (GET|POST) (/\S*)", line)
        if m:
            mroutes.add((m.group(1), norm(re.split(r"[?\[]", m.group(2))[0])))
    same_sets(want, mroutes, lambda k: f"doc/kabd.8: API section has no \".B {k[0]} /api/v1{k[1]}\" entry",
              lambda k: f"doc/kabd.8: API section documents {k[0]} {k[1]}, which is not in kabd's routes[]")


def check_options():
    src = read("harness/daemon/kabd_main.c")
    m = re.search(r"struct option opts\[\]\s*=\s*\{(.*?)\n\s*\};", src, re.S)
    if not ok(m is not None, "harness/daemon/kabd_main.c: no getopt_long options table found"):
        return
    want = set(re.findall(r'\{\s*"([\w-]+)"\s*,', m.group(1))) - {"help"}
    sec = man_section("doc/kabd.8", "OPTIONS")
    if sec is None:
        return
    doc = set(o.replace("\\-", "-") for o in re.findall(r"^\.BI? \\-\\-((?:[\w]|\\-)+)", sec, re.M))
    same_sets(want, doc, lambda o: f"doc/kabd.8: kabd takes --{o} (harness/daemon/kabd_main.c) but OPTIONS has no entry for it",
              lambda o: f"doc/kabd.8: OPTIONS documents --{o}, which kabd does not take")


# ---- configuration ---------------------------------------------------

def code_settings():
    src = read("harness/base/config.c")
    return [(name, re.findall(r'"([^"]+)"', envs))
            for name, envs in re.findall(r'\[CONFIG_\w+\]\s*=\s*\{\s*"([^"]+)"\s*,\s*\{([^}]*)\}', src)]


def check_config():
    settings = code_settings()
    if not ok(len(settings) > 0, "harness/base/config.c: no settings[] rows found"):
        return
    text = read("doc/config.md")
    _, rows = table_rows([l for l in text.split("\n")])
    documented = {}
    for r in rows:
        m = re.match(r"([\w-]+):", r[1]) if len(r) > 1 else None
        if m:
            documented[m.group(1)] = r[0]
    for name, envs in settings:
        if ok(name in documented, f"doc/config.md: no row for the setting {name} (harness/base/config.c)"):
            for v in envs:
                ok(f"`{v}`" in documented[name], f"doc/config.md: the row of {name} does not name `{v}`")
    names = {n for n, _ in settings}
    for n in documented:
        ok(n in names, f"doc/config.md: a row for the setting {n}, which harness/base/config.c does not have")
    envtext = ""
    for page in ("doc/kab.1", "doc/kabd.8"):
        m = re.search(r"^\.SH ENVIRONMENT\n(.*?)(?=^\.SH |\Z)", read(page), re.S | re.M)
        if m:
            envtext += m.group(1)
    for name, envs in settings:
        for v in envs:
            ok(re.search(r"\b" + re.escape(v) + r"\b", envtext) is not None,
               f"doc/kab.1, doc/kabd.8: no ENVIRONMENT entry names {v} (setting {name})")


# ---- layers ----------------------------------------------------------

def check_layers():
    spec = importlib.util.spec_from_file_location("layers", "tests/lint/layers.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    want = {(i, f) for i, row in enumerate(mod.LEVELS) for f in row}
    lines = block(read("doc/HACKING.md"), "<!-- layers -->", "<!-- end of layers -->")
    if not ok(lines is not None, "doc/HACKING.md: no block between <!-- layers --> and <!-- end of layers -->"):
        return
    _, rows = table_rows(lines)
    doc = set()
    for r in rows:
        m = re.match(r"`([\w/]+?)/?`$", r[1])
        if ok(r[0].isdigit() and m is not None, f"doc/HACKING.md: layer row not \"| N | `folder/` |\": {'|'.join(r)[:80]}"):
            doc.add((int(r[0]), m.group(1)))
    for lv, f in sorted(want - doc):
        ok(False, f"doc/HACKING.md: tests/lint/layers.py puts {f} at level {lv}; the table does not")
    for lv, f in sorted(doc - want):
        ok(False, f"doc/HACKING.md: the table puts {f} at level {lv}; tests/lint/layers.py does not")
    ok(want == doc, "doc/HACKING.md: the layer table is tests/lint/layers.py's LEVELS")


# ---- constants -------------------------------------------------------

NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def defines():
    found = {}
    for path in glob.glob("harness/**/*.[ch]", recursive=True) + glob.glob("db/*.[ch]"):
        for name, value in re.findall(r"^#define\s+(\w+)[ \t]+([^\n]*?)\s*(?:/\*.*)?$", read(path), re.M):
            found.setdefault(name, (value, path))
    return found


def define_value(text):
    """A #define's number: a literal or a product of them (256u * 1024)."""
    expr = re.sub(r"(?<=[\d.])(?:[uU][lL]{0,2}|[lL]{1,2}[uU]?)\b", "", text)
    if not re.fullmatch(r"[\d.eE+\-*/() <]+", expr):
        return None
    try:
        return float(eval(expr, {"__builtins__": {}}))
    except Exception:
        return None


def check_constants():
    defs = defines()
    for path in ["README.md"] + sorted(glob.glob("doc/*.md")):
        lines = read(path).split("\n")
        i = 0
        while i < len(lines):
            if lines[i].strip() != "<!-- checked: constants -->":
                i += 1
                continue
            j = i + 1
            while j < len(lines) and lines[j].strip() != "<!-- end of checked -->":
                j += 1
            ok(j < len(lines), f"{path}:{i + 1}: a checked block without <!-- end of checked -->")
            header, rows = table_rows(lines[i + 1:j])
            col = next((k for k, h in enumerate(header or []) if h in ("value", "default")), None)
            if ok(col is not None, f"{path}:{i + 1}: a checked table needs a \"value\" or \"default\" column"):
                for r in rows:
                    names = [n for n in re.findall(r"`([A-Z][A-Z0-9_]+)`", "|".join(r)) if n in defs]
                    if not ok(len(names) == 1, f"{path}: row \"{r[0][:60]}\" must name one #define of harness/ in backquotes"):
                        continue
                    value, where = defs[names[0]]
                    code = define_value(value)
                    said = [float(x) for x in NUMBER.findall(r[col])]
                    ok(code is not None and any(abs(x - code) <= 1e-12 * max(1.0, abs(code)) for x in said),
                       f"{path}: {names[0]} is {value} in {where}, the table says {r[col]}")
            i = j + 1


# ---- links -----------------------------------------------------------

def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen, out, fence = {}, set(), False
        for line in read(path).split("\n"):
            if line.startswith("```"):
                fence = not fence
            if fence:
                continue
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                base = slug(m.group(1))
                n = seen.get(base, 0)
                seen[base] = n + 1
                out.add(base if n == 0 else f"{base}-{n}")
            for a in re.findall(r'<a (?:name|id)="([^"]+)"', line):
                out.add(a)
        _anchors[path] = out
    return _anchors[path]


LINK = re.compile(r"\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")


def check_links():
    pages = ["README.md"] + sorted(glob.glob("doc/*.md"))
    n = 0
    for page in pages:
        fence = False
        for lineno, line in enumerate(read(page).split("\n"), 1):
            if line.startswith("```"):
                fence = not fence
            if fence:
                continue
            line = re.sub(r"``.*?``|`[^`]*`", "", line)
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue
                n += 1
                file, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(page), file)) if file else page
                if not ok(os.path.exists(dest), f"{page}:{lineno}: link to {target}: {dest} does not exist"):
                    continue
                if anchor and dest.endswith(".md"):
                    ok(anchor in anchors(dest), f"{page}:{lineno}: link to {target}: {dest} has no heading #{anchor}")
    ok(n > 0, "no relative links found at all in README.md and doc/*.md")


# ---- kab's verbs and options -----------------------------------------

def cli_verbs():
    """[(verb, table name)] of verbs[] in harness/cli/main.c."""
    m = re.search(r"\} verbs\[\] = \{(.*?)\n\};", read("harness/cli/main.c"), re.S)
    return re.findall(r'\{\s*"([\w-]+)",\s*cmd_\w+,\s*(cmd_\w+_options),', m.group(1)) if m else []


def cli_options(table):
    """{long option: alias?} of a getopt_long table of harness/cli/, its
    macros (its file's and harness/cli/cmd.h's) expanded; an alias has the value of an option before it (0,
    an index the verb looks at, is no alias). None: not found."""
    for path in sorted(glob.glob("harness/cli/*.c")):
        src = read(path)
        m = re.search(r"struct option " + table + r"\[\] = \{(.*?)\};", src, re.S)
        if not m:
            continue
        body = m.group(1)
        for name, text in re.findall(r"#define (\w+)((?:.*\\\n)*.*)", src + read("harness/cli/cmd.h")):
            body = re.sub(r"\b" + name + r"\b", text.replace("\\\n", " "), body)
        ok(len(re.findall(r"\b" + table + r"\b", src)) > 1, f"{path}: {table} is defined but nothing parses with it")
        opts, seen = {}, set()
        for name, val in re.findall(r'\{\s*"([\w-]+)"\s*,\s*\w+\s*,\s*[^,]+,\s*([^}\s]+)\s*\}', body):
            opts[name] = val != "0" and val in seen
            seen.add(val)
        return opts
    return None


def check_cli():
    """kab's verbs (verbs[] in harness/cli/main.c) and each verb's long
    options (the getopt_long table verbs[] names) against doc/kab.1: every
    verb has a SYNOPSIS line and a VERBS entry, its SYNOPSIS lines name
    every option it takes (--help and older names aside) and none it does
    not take."""
    verbs = cli_verbs()
    if not ok(len(verbs) > 1, "harness/cli/main.c: no verbs[] table found"):
        return
    syn, sec = man_section("doc/kab.1", "SYNOPSIS"), man_section("doc/kab.1", "VERBS")
    if syn is None or sec is None:
        return
    named = {}  # verb: options its SYNOPSIS lines name
    for line in re.split(r"^\.br\n", syn, flags=re.M):
        m = re.match(r"\.B kab ([\w-]+)", line)
        if ok(m is not None, f"doc/kab.1: a SYNOPSIS line that is no .B kab VERB: {line.splitlines()[0] if line else ''}"):
            named.setdefault(m.group(1), set()).update(o.replace("\\-", "-") for o in re.findall(r"\\-\\-((?:\w|\\-)+)", line))
    entries = set()
    for head in re.findall(r"^\.TP\n(.*)$", sec, re.M):
        entries.update(re.findall(r"[\w-]+", re.sub(r'"[^"]*"', " ", head.split(" ", 1)[1] if " " in head else "")))
    code = dict(verbs)
    same_sets(code, named, lambda v: f"doc/kab.1: kab {v} (verbs[] in harness/cli/main.c) has no SYNOPSIS line",
              lambda v: f"doc/kab.1: SYNOPSIS names kab {v}, which is no verb of verbs[] in harness/cli/main.c")
    for v in sorted(code):
        ok(v in entries, f"doc/kab.1: kab {v} (verbs[] in harness/cli/main.c) has no entry in VERBS")
        opts = cli_options(code[v])
        if not ok(opts is not None, f"harness/cli: no getopt_long table {code[v]}, which verbs[] names for kab {v}"):
            continue
        want = {o for o, alias in opts.items() if not alias and o != "help"}
        have = named.get(v, set())
        for o in sorted(want - have):
            ok(False, f"doc/kab.1: kab {v} takes --{o} ({code[v]}) but its SYNOPSIS does not name it")
        for o in sorted(have - set(opts)):
            ok(False, f"doc/kab.1: SYNOPSIS names --{o} for kab {v}, which takes no such option ({code[v]})")
        ok(True, "")  # the verb's options were compared


def check_states():
    """A history point's states (HISTORY_POINT_STATE_LIST) against doc/nightly.md's
    sentence that lists them and the gaps web/nightly.js names."""
    m = re.search(r"#define HISTORY_POINT_STATE_LIST\(X\)((?:.*\\\n)*.*)", read("harness/report/history.h"))
    code = re.findall(r'X\(HISTORY_\w+, "([^"]+)"\)', m.group(1)) if m else []
    if not ok(len(code) > 1, "harness/report/history.h: no HISTORY_POINT_STATE_LIST found"):
        return
    s = re.search(r"`state` of a point:(.*?)\.\s", read("doc/nightly.md"), re.S)
    doc = re.findall(r"`([^`]+)`", re.sub(r"\([^)]*\)", "", s.group(1))) if s else []
    where = "doc/nightly.md: the sentence \"`state` of a point:\""
    same_sets(code, doc, lambda k: f"{where} does not name state {k} (HISTORY_POINT_STATE_LIST)",
              lambda k: f"{where} names {k}, which is no state of HISTORY_POINT_STATE_LIST")
    g = re.search(r"const NIGHT_GAP = \{(.*?)\};", read("web/nightly.js"))
    gaps = [k.strip('"') for k in re.findall(r'("[^"]+"|\w+):', g.group(1))] if g else []
    same_sets([w for w in code if w != "measured"], gaps,
              lambda k: f"web/nightly.js: NIGHT_GAP has no entry for state {k} (HISTORY_POINT_STATE_LIST)",
              lambda k: f"web/nightly.js: NIGHT_GAP names {k}, which is no state of HISTORY_POINT_STATE_LIST")


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    only = sys.argv[1:] or ["routes", "options", "config", "layers", "constants", "links", "states", "cli"]
    for name in only:
        globals()["check_" + name]()
    print(f"docs-check: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
