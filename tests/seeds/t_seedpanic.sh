#!/usr/bin/env bash
# A backport that builds but panics at boot is a boot failure in the
# report (issue: the seed postings on 6.12, "Bad input and failure"): the
# base and the base with tests/data/kernels/panic-at-boot-6.12.mbox, built
# by kab on the host like the seeds' kernels, booted in a QEMU guest by
# kexec (panic.guest.job). What it checks: the patched kernel builds; its
# boots fail (the kernel that came up has no kab.build marker: QEMU's
# -kernel after the panic reset), twice, and the variant is given up; the
# job ends done with the base's runs counted and none of the broken
# variant's; kab's report says the variant is BOOT-FAILED, in text and
# JSON. Its build's object count is not bounded: the four seed tests share
# one object directory, and this build follows whichever compiled last
# (run.sh runs it after 003, so a cold cache compiles mm/shmem.o and the
# objects 003's mm/internal.h touched).
SEED=panic
. "$(dirname "$0")/lib.sh"
BOOTS=1
seed_begin
seed_build panic-at-boot panic-at-boot-6.12.mbox 100000
seed_guest_boot tests/seeds/panic.guest.job 2 1024 3600 "$PWD/build/kab-shmem-truncate"

check "the job ends done, without the broken variant" [ "$(q "select status from jobs where id = 1")" = done ]
check "its reason says a variant is boot-failed" [ "$(q "select count(*) from jobs where id = 1 and reason like '%boot-failed%'")" = 1 ]
check "the base booted once by kexec, ok" [ "$(q "select count(*) from boots where variant_idx = 0 and status = 'ok' and method = 'kexec'")" = 1 ]
check "the broken variant failed to boot twice, then was given up" \
	[ "$(q "select count(*) from boots where variant_idx = 1 and status = 'failed'") $(q "select count(*) from boots where variant_idx = 1 and status = 'ok'")" = "2 0" ]
check "each failed boot names the kernel that came up instead (no kab.build marker)" \
	[ "$(q "select count(*) from boots where status = 'failed' and reason like '%without a kab.build marker%'")" = 2 ]
check "the guest's console shows the patched kernel's panic" grep -q 'Kernel panic - not syncing: kab test: a backport that builds but panics at boot' "$OUT/$SEED.console"
check "the base's run is counted and took its path" [ "$(runs_where path-count 0 ok 'm(fcount.filemap_remove_folio) >= 4096')" = 1 ]
check "the broken variant's steps are boot-failed and none ran" \
	[ "$(q "select count(*) from steps where variant_idx = 1 and status = 'boot-failed'") $(q "select count(*) from runs where variant_idx = 1")" = "1 0" ]

"$KAB" report 1 --db "$db" >"$OUT/$SEED.txt" 2>&1
"$KAB" report 1 --db "$db" --format json >"$OUT/$SEED.json" 2>"$tmp/report.err"
echo "  the guest's report (kab report 1):"
sed 's/^/    | /' "$OUT/$SEED.txt"
check "the report says the variant is BOOT-FAILED, with its build" grep -q "panic-at-boot: build $B (.*): 0 boots, 2 failed.*BOOT-FAILED" "$OUT/$SEED.txt"
check "the JSON report gives the variant no boot and 2 failed boots" /usr/bin/python3 - "$OUT/$SEED.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ks = [k for k in r.get("kernels", []) if k.get("variant") == "panic-at-boot"]
sys.exit(0 if ks and ks[0].get("boots") == 0 and ks[0].get("failed_boots") == 2 else 1)
PY
seed_end
