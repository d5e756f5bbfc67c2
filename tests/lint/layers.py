#!/usr/bin/env python3
"""kab's layer rule, for make lint.

Each folder of the C sources has a level; a file may include a project
header only from its own level or a lower one. The order, lowest first:

  harness/base -> db -> kernels -> workloads, harness/job -> harness/stats,
  harness/sampler -> harness/exec -> harness/report -> harness/daemon,
  harness/cli

(folders on one line of the list share a level). Includes are written from
the project root ("harness/job/job.h"), so every include line names its
layer. Four design rules narrow the order further (RULES below):

  stats-over-arrays  harness/stats includes only harness/base and itself:
                     statistics are functions over arrays; the executor
                     reads the store and hands them the arrays.
  executor-header    harness/report and harness/daemon include from
                     harness/exec only its public header, executor.h.
  daemon-no-sampler  harness/daemon does not include harness/sampler: it
                     reads recorded series and counters through db/.
  cli-no-daemon      harness/cli does not include harness/daemon: what kab
                     and kabd share lives lower (harness/base/kab_api.h,
                     harness/base/config.h).

Another rule: only harness/exec and kernels act on the machine, so the
primitives that write to it (below) may be called only there. Another:
the library reads no environment variable; kab's and kabd's main resolve
the configuration (harness/base/config.h) and the library asks it. And
another: a job's life has one owner, harness/exec/joblife.c; a job's status
is written (store_job_set_status*) there and in db/, nowhere else.

Prints each offence as FILE:LINE: message and exits 1 if there is one.
"""
import os
import re
import sys

LEVELS = [
    ["harness/base"],
    ["db"],
    ["kernels"],
    ["workloads", "harness/job"],
    ["harness/stats", "harness/sampler"],
    ["harness/exec"],
    ["harness/report"],
    ["harness/daemon", "harness/cli"],
]
LEVEL = {folder: i for i, row in enumerate(LEVELS) for folder in row}

# The design rules: (name, the folders it binds, allowed(to_folder, include),
# why). An include the order allows but a rule does not is an offence.
EXECUTOR_HEADER = "harness/exec/executor.h"
RULES = [
    ("stats-over-arrays", {"harness/stats"},
     lambda to, inc: to in ("harness/stats", "harness/base"),
     "statistics are functions over arrays and include only harness/base; "
     "let the caller (harness/exec) read the store or the job and hand them arrays"),
    ("executor-header", {"harness/report", "harness/daemon"},
     lambda to, inc: to != "harness/exec" or inc == EXECUTOR_HEADER,
     f"report and daemon include from harness/exec only the executor's public header, {EXECUTOR_HEADER}; "
     "reach what you need through it, or move it down to the layer it belongs to"),
    ("daemon-no-sampler", {"harness/daemon"},
     lambda to, inc: to != "harness/sampler",
     "kabd does not include the sampler: stored series and counters are read through "
     "db/series.h and db/counter.h"),
    ("cli-no-daemon", {"harness/cli"},
     lambda to, inc: to != "harness/daemon",
     "kab does not include kabd's headers: move what both need down "
     "(harness/base/kab_api.h for the API, harness/base/config.h for the socket)"),
]

# Calls that change the machine: files and sysfs/procfs knobs, cgroups,
# swap devices, kexec and reboot, mounts. Their definitions live in
# harness/base (util_write_file) and harness/exec or kernels (the rest).
MACHINE_WRITES = [
    "util_write_file", "swapon", "swapoff", "kexec_file_load", "kexec_load",
    "reboot", "mount", "umount", "umount2",
    "cg_create", "cg_attach", "cg_kill_all", "cg_destroy", "cg_remove_path", "cg_remove_parent",
    "knob_write", "knob_apply", "knob_restore",
    "swap_zram_add", "swap_zram_remove", "swap_file_create", "swap_enable", "swap_disable",
    "cond_drop_caches", "cond_before_run", "cond_pin_workload", "cond_pin_sampler",
]
MACHINE_OK = {"harness/exec", "kernels"}
CALL = re.compile(r"\b(" + "|".join(MACHINE_WRITES) + r")\s*\(")
# The environment is read in main only: these files are the mains.
ENV_OK = {"harness/cli/main.c", "harness/daemon/kabd_main.c"}
ENV_CALL = re.compile(r"\b(getenv|secure_getenv)\s*\(")
# A job's status is written by its owner only (and defined in db/).
STATUS_OK = {"harness/exec/joblife.c"}
STATUS_CALL = re.compile(r"\b(store_job_set_status(?:_from)?)\s*\(")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of(path):
    for f in sorted(LEVEL, key=len, reverse=True):
        if path == f or path.startswith(f + "/"):
            return f
    return None


def strip_comments(text):
    # keep line numbers: replace comment bodies by spaces, strings by ""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text[i] == "'":
            # a character literal ('"', '\\'): kept, so that a quote in it
            # does not open a string
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append('"' + " " * max(0, j - i - 1) + ('"' if j < n else ""))
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def sources(root):
    for top in ("harness", "db", "kernels", "workloads"):
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, f), root)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad = 0
    for path in sources(root):
        folder = folder_of(path)
        if path.startswith("workloads/progs/"):
            folder = "workloads/progs"  # programs of their own, not the library
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        if folder is None:
            print(f"{path}:1: not in a layer folder: move it into one of {', '.join(LEVEL)}")
            bad += 1
            continue
        for n, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            inc = m.group(1)
            if folder == "workloads/progs":
                if "/" in inc:
                    print(f"{path}:{n}: a workload program includes only its own folder's headers, not \"{inc}\"")
                    bad += 1
                continue
            if not os.path.exists(os.path.join(root, inc)):
                print(f"{path}:{n}: \"{inc}\" is not a path from the project root (write \"harness/FOLDER/{inc}\" or the like)")
                bad += 1
                continue
            to = folder_of(inc)
            if to is None:
                print(f"{path}:{n}: \"{inc}\" is in no layer folder")
                bad += 1
                continue
            if LEVEL[to] > LEVEL[folder]:
                print(f"{path}:{n}: {folder} may not include \"{inc}\": {to} is above it in the layer order "
                      "(base -> db -> kernels -> workloads, job -> stats, sampler -> exec -> report -> daemon, cli)")
                bad += 1
                continue
            for name, folders, allowed, why in RULES:
                if folder in folders and not allowed(to, inc):
                    print(f"{path}:{n}: rule {name}: {folder} may not include \"{inc}\": {why}")
                    bad += 1
        if folder == "workloads/progs":
            continue
        code = strip_comments(text)
        if path not in ENV_OK:
            for n, line in enumerate(code.splitlines(), 1):
                for m in ENV_CALL.finditer(line):
                    print(f"{path}:{n}: {m.group(1)}() in the library: the environment is read once, in main; add a "
                          "setting to harness/base/config.h and read it with config_str()")
                    bad += 1
        if folder != "db" and path not in STATUS_OK:
            for n, line in enumerate(code.splitlines(), 1):
                for m in STATUS_CALL.finditer(line):
                    print(f"{path}:{n}: {m.group(1)}() writes a job's status: a job's life has one owner, "
                          "harness/exec/joblife.c; call jl_transition() or one of its verbs (joblife.h)")
                    bad += 1
        if folder in MACHINE_OK:
            continue
        for n, line in enumerate(code.splitlines(), 1):
            for m in CALL.finditer(line):
                name = m.group(1)
                # a definition or declaration of the primitive itself is not a call
                if re.search(r"^\s*(static\s+)?(int|void|long|bool)\s+\**" + name + r"\s*\(", line):
                    continue
                print(f"{path}:{n}: {name}() writes to the machine: only harness/exec and kernels may call it")
                bad += 1
    if bad:
        print(f"lint: {bad} layer offence(s)")
        return 1
    print("lint: layers in order, the design rules kept (" + ", ".join(r[0] for r in RULES) + "), "
          "machine writes only in harness/exec and kernels, no getenv in the library, "
          "job statuses written only by harness/exec/joblife.c")
    return 0


if __name__ == "__main__":
    sys.exit(main())
