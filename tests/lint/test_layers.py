#!/usr/bin/env python3
"""Tests of layers.py on small trees made here: a tree that keeps the rules
passes; each design rule, and the layer order, broken once, fails with
FILE:LINE and the rule's name. Run by make lint."""
import os
import subprocess
import sys
import tempfile

LINT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers.py")

# One header in each folder a test includes.
HEADERS = [
    "harness/base/util.h", "db/store.h", "harness/job/job.h", "harness/stats/stats.h",
    "harness/sampler/sampler.h", "harness/exec/executor.h", "harness/exec/provenance.h",
    "harness/report/report.h", "harness/daemon/gate.h", "harness/base/kab_api.h",
]

# A tree that keeps every rule: what each folder may include.
CLEAN = {
    "harness/stats/stats.c": ["harness/stats/stats.h", "harness/base/util.h"],
    "harness/exec/exec_look.c": ["harness/stats/stats.h", "db/store.h", "harness/exec/provenance.h"],
    "harness/report/report.c": ["harness/exec/executor.h", "db/store.h"],
    "harness/daemon/api.c": ["harness/exec/executor.h", "harness/report/report.h", "harness/base/kab_api.h"],
    "harness/cli/client.c": ["harness/base/kab_api.h", "harness/exec/executor.h", "harness/sampler/sampler.h"],
}

# (file, the include that breaks a rule, what the message must name)
BREAKS = [
    ("harness/stats/adaptive.c", "db/store.h", "rule stats-over-arrays"),
    ("harness/stats/adaptive.c", "harness/job/job.h", "rule stats-over-arrays"),
    ("harness/report/report_store.c", "harness/exec/provenance.h", "rule executor-header"),
    ("harness/daemon/queue.c", "harness/exec/provenance.h", "rule executor-header"),
    ("harness/daemon/api.c", "harness/sampler/sampler.h", "rule daemon-no-sampler"),
    ("harness/cli/client.c", "harness/daemon/gate.h", "rule cli-no-daemon"),
    ("harness/stats/stats.c", "harness/exec/executor.h", "above it in the layer order"),
]


def make_tree(root, files):
    for h in HEADERS:
        os.makedirs(os.path.join(root, os.path.dirname(h)), exist_ok=True)
        with open(os.path.join(root, h), "w") as f:
            f.write("#pragma once\n")
    for path, incs in files.items():
        os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(root, path), "w") as f:
            f.write("/* a file */\n" + "".join(f'#include "{i}"\n' for i in incs))


def lint(root):
    p = subprocess.run([sys.executable, LINT, root], capture_output=True, text=True)
    return p.returncode, p.stdout


def main():
    failed = 0
    with tempfile.TemporaryDirectory() as root:
        make_tree(root, CLEAN)
        rc, out = lint(root)
        if rc != 0:
            print(f"test_layers: a tree that keeps the rules fails:\n{out}")
            failed += 1
    for path, inc, want in BREAKS:
        with tempfile.TemporaryDirectory() as root:
            files = dict(CLEAN)
            files[path] = ["harness/base/util.h", inc]  # the offence on line 3
            make_tree(root, files)
            rc, out = lint(root)
            line = f'{path}:3: '
            hits = [l for l in out.splitlines() if l.startswith(line) and want in l and f'"{inc}"' in l]
            if rc != 1 or len(hits) != 1:
                print(f"test_layers: {path} including {inc}: expected exit 1 and one \"{line}... {want}\" line, "
                      f"got exit {rc}:\n{out}")
                failed += 1
    if failed:
        print(f"test_layers: {failed} case(s) failed")
        return 1
    print(f"lint: layers.py's own tests pass ({len(BREAKS)} offences caught, a clean tree passes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
