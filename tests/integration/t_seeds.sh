#!/usr/bin/env bash
# Every seed job (examples/seeds/) is valid here, names its posting, says
# the posting's scale and how it was scaled, and carries the built-kernel
# form for the kernel issues. Running them end to end takes ~25 minutes
# (make seeds); make check only checks them.
set -u
cd "$(dirname "$0")/../.."
name=t_seeds
pass=0 fail=0
chk() { local d=$1; shift; if "$@"; then pass=$((pass + 1)); echo "  ok   $d"; else fail=$((fail + 1)); echo "  FAIL $d"; fi; }
n=0
for j in examples/seeds/*.job; do
	n=$((n + 1))
	b=$(basename "$j")
	out=$(build/kab check "$j" 2>&1 >/dev/null)
	chk "$b: kab check passes${out:+ ($out)}" [ -z "$out" ]
	post=$(grep -oE '\.\./shared/seeds/[0-9]{3}_[0-9a-f]+\.txt' "$j" | head -1)
	chk "$b: names its posting ${post:-(none)}" [ -n "$post" -a "${b:0:3}" = "$(basename "${post:-xxx}" | cut -c1-3)" ]
	chk "$b: quotes the posting's method and scale" grep -q "^; The posting's method" "$j"
	chk "$b: says how it was scaled for this machine" grep -qi "^; Scaled\|^; Here:" "$j"
	chk "$b: describes its built-kernel form" grep -q "^; Built-kernel form" "$j"
done
chk "one job per posting (5): $n" [ "$n" = 5 ]
echo "$name: $pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
