#!/usr/bin/env bash
# kab's benchmarks. Each benchmark is a section: a function named
# bench_<name> below, listed in SECTIONS. Run them all with `make bench` or
# bench/run.sh; pick some with `bench/run.sh sampler ...`. Targets are
# reported (PASS/MISS), not asserted: the exit code is non-zero only when a
# benchmark could not run at all.
set -u
cd "$(dirname "$0")/.."
B=${B:-build}
SECTIONS=(sampler parse kabd history kernels kexec condition changepoint verdict lab)
status=0

section() { printf '\n==== %s ====\n' "$1"; }
verdict() { if [ "$2" = 1 ]; then echo "  PASS  $1"; else echo "  MISS  $1"; fi; }

need() { # binary
	if [ ! -x "$1" ]; then
		echo "missing $1: build it with make $1" >&2
		return 1
	fi
}

# --- sampler: kab's sampler vs a bare pread loop vs the shell loop ---
# BENCH_SECONDS (default 30) sets how long each of the three runs.
bench_sampler() {
	section "sampler (10 Hz, ${BENCH_SECONDS:-30} s each)"
	need "$B/bench/bench_sampler" || return 1
	"$B/bench/bench_sampler"
}

# --- parse: a job at kabd's door, within its budgets (doc/jobs.md, "Budgets") ---
# The issue's 1 MiB jobs and their shapes cut to 256 KiB, the largest job
# the budgets let through with its machine checks, and storing the largest
# schedule (50,000 runs) in one transaction. BENCH_REPEAT tries each.
bench_parse() {
	section "parse (job budgets: refusal and the largest accepted job)"
	need "$B/bench/bench_parse" || return 1
	"$B/bench/bench_parse"
}

# --- kabd: report latency under load, and the sampler beside it ---
# A year of nightly history (build/bench/seed_history, cached in
# build/bench-cache/), kabd on a free loopback port, wrk on
# GET /api/v1/jobs/{id}/report?format=json for KABD_BENCH_SECONDS (default
# 10) idle (1 connection: the service time; 4 connections) and again with 4 while a stress-ng job runs through kabd; that job's
# sampler lateness is compared with the same job run without HTTP load.
KB_TMP="" KB_PID=""
kabd_bench_cleanup() {
	if [ -n "$KB_PID" ]; then
		kill -TERM "$KB_PID" 2>/dev/null
		local i
		for i in $(seq 1 100); do kill -0 "$KB_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$KB_PID" 2>/dev/null
		wait "$KB_PID" 2>/dev/null
		KB_PID=""
	fi
	[ -n "$KB_TMP" ] && rm -rf "$KB_TMP"
	KB_TMP=""
}
# wrk's latency ("850.12us", "1.02ms", "1.10s") in ms
kb_ms() {
	awk -v x="$1" 'BEGIN { v = x + 0; u = x; sub(/^[0-9.]+/, "", u)
		if (u == "us") v /= 1000; else if (u == "s") v *= 1000; else if (u == "m") v *= 60000
		printf "%.2f", v }'
}
# kb_wrk SECONDS OUTFILE CONNECTIONS: wrk on the report URL (a thread per
# connection, at most 2); prints "rps p50 p99 failed"
kb_wrk() {
	timeout $(($1 + 20)) wrk -t$(($3 < 2 ? $3 : 2)) -c"$3" -d"$1"s --latency --timeout 5s -H "$KB_AUTH" "$KB_URL${KB_PATH:-/api/v1/jobs/$KB_MID/report?format=json}" \
		>"$2" 2>&1
	local rps p50 p99 non2xx errs
	rps=$(awk '/^Requests\/sec:/ {print $2}' "$2")
	p50=$(awk '$1 == "50%" {print $2}' "$2")
	p99=$(awk '$1 == "99%" {print $2}' "$2")
	non2xx=$(awk '/Non-2xx or 3xx responses:/ {print $NF}' "$2")
	errs=$(awk '/Socket errors:/ {gsub(/,/, ""); print $4 + $6 + $8 + $10}' "$2")
	echo "${rps:-NA} $(kb_ms "${p50:-NaN}") $(kb_ms "${p99:-NaN}") $(( ${non2xx:-0} + ${errs:-0} ))"
}
# kb_job NAME: posts the stress-ng job, prints its id
kb_job() {
	cat >"$KB_TMP/$1.job" <<JOB
[job]
name = $1
pairs = 1
interval = 0.1s
metrics = sampler.lateness_p99_ms
[variant A]
name = a
[variant B]
name = b
[workload vm]
type = stress-ng
args = --vm 1 --vm-bytes 32M --timeout ${KB_STRESS_S}s
memory.max = 64M
JOB
	curl -s -H "$KB_AUTH" -H "Content-Type: application/x-kab-job" --data-binary @"$KB_TMP/$1.job" \
		"$KB_URL/api/v1/jobs" | tr -dc '0-9'
}
# kb_wait ID SECONDS: until the job is no longer queued/running; 1 if not done
kb_wait() {
	local i s=""
	for i in $(seq 1 $(($2 * 5))); do
		s=$(curl -s -H "$KB_AUTH" "$KB_URL/api/v1/jobs/$1" | tr -d ' \n' | sed -n 's/.*"status":"\([a-z]*\)".*/\1/p')
		case $s in queued | running | "") sleep 0.2 ;; *) break ;; esac
	done
	[ "$s" = done ] || { echo "job $1 ended \"$s\"" >&2; return 1; }
}
# kb_lateness ID: the largest sampler.lateness_p99_ms of the job's runs,
# then each run's (variant a's, then b's)
kb_lateness() {
	curl -s -H "$KB_AUTH" "$KB_URL/api/v1/jobs/$1/report?format=csv" |
		awk -F, '$2 == "sampler.lateness_p99_ms" { n = split($(NF-1) " " $NF, v, " ")
			for (i = 1; i <= n; i++) if (v[i] != "NA" && (m == "" || v[i] + 0 > m)) m = v[i] + 0 }
			END { if (m == "") print "NA"; else printf "%.3f", m
				for (i = 1; i <= n; i++) if (v[i] == "NA") printf " NA"; else printf " %.3f", v[i]
				print "" }'
}
bench_kabd() {
	local secs=${KABD_BENCH_SECONDS:-10}
	KB_STRESS_S=$(( (secs + 1) / 2 ))
	section "kabd (report?format=json, then history of one metric, under wrk, ${secs} s; sampler beside them)"
	need "$B/kabd" && need "$B/bench/seed_history" || return 1
	local t
	for t in wrk curl stress-ng; do
		command -v $t >/dev/null || { echo "missing $t: make deps installs it" >&2; return 1; }
	done
	[ "$(id -u)" = 0 ] || { echo "kabd's executor needs root (memory cgroups)" >&2; return 1; }
	local cache=$B/bench-cache/history-365.db
	mkdir -p "$B/bench-cache"
	if [ ! -s "$cache" ] || [ "$B/bench/seed_history" -nt "$cache" ]; then
		rm -f "$cache" "$cache".tmp*
		"$B/bench/seed_history" "$cache.tmp" || { rm -f "$cache".tmp*; return 1; }
		mv "$cache.tmp" "$cache"
	else
		echo "history: cached $cache"
	fi
	trap kabd_bench_cleanup EXIT
	trap 'kabd_bench_cleanup; exit 130' INT TERM
	KB_TMP=$(mktemp -d /tmp/kab-bench-kabd.XXXXXX)
	cp "$cache" "$KB_TMP/kab.db"
	(umask 077; echo "bench-$RANDOM$RANDOM$RANDOM" >"$KB_TMP/token")
	KB_AUTH="Authorization: Bearer $(cat "$KB_TMP/token")"
	# a free port below the ephemeral range, retried if kabd cannot bind it
	local eph_lo p i attempt port=""
	read -r eph_lo _ </proc/sys/net/ipv4/ip_local_port_range
	for attempt in $(seq 1 10); do
		p=$((10000 + RANDOM % (eph_lo > 12000 ? eph_lo - 10000 : 20000)))
		"$B/kabd" --db "$KB_TMP/kab.db" --socket "$KB_TMP/run/kabd.sock" --listen "127.0.0.1:$p" \
			--token-file "$KB_TMP/token" >>"$KB_TMP/kabd.log" 2>&1 &
		KB_PID=$!
		for i in $(seq 1 50); do
			curl -sf -H "$KB_AUTH" -o /dev/null "http://127.0.0.1:$p/health" 2>/dev/null && { port=$p; break; }
			kill -0 "$KB_PID" 2>/dev/null || break
			sleep 0.1
		done
		[ -n "$port" ] && break
		kill -TERM "$KB_PID" 2>/dev/null; wait "$KB_PID" 2>/dev/null; KB_PID=""
		grep -q "another kab executor" "$KB_TMP/kabd.log" && break
	done
	if [ -z "$port" ]; then
		cat "$KB_TMP/kabd.log" >&2
		kabd_bench_cleanup; trap - EXIT INT TERM
		return 1
	fi
	KB_URL="http://127.0.0.1:$port"
	KB_MID=183
	local code bytes
	code=$(curl -s -H "$KB_AUTH" -o "$KB_TMP/report.json" -w '%{http_code}' "$KB_URL/api/v1/jobs/$KB_MID/report?format=json")
	bytes=$(wc -c <"$KB_TMP/report.json")
	echo "kabd on $KB_URL; job $KB_MID's report: HTTP $code, $bytes bytes"
	local rc=0 idle1 idle load base_id load_id base_late load_late
	if [ "$code" != 200 ]; then rc=1; fi
	# (a) idle
	if [ $rc = 0 ]; then
		idle1=$(kb_wrk "$secs" "$KB_TMP/wrk-idle1.txt" 1)
		idle=$(kb_wrk "$secs" "$KB_TMP/wrk-idle.txt" 4)
	fi
	# the stress-ng job without HTTP load
	if [ $rc = 0 ]; then
		base_id=$(kb_job sampler-quiet)
		if [ -n "$base_id" ] && kb_wait "$base_id" $((secs * 4 + 60)); then base_late=$(kb_lateness "$base_id"); else rc=1; fi
	fi
	# (b) the same job with wrk running beside it, from its start to its end
	if [ $rc = 0 ]; then
		load_id=$(kb_job sampler-loaded)
		if [ -n "$load_id" ]; then
			load=$(kb_wrk $((2 * KB_STRESS_S + 2)) "$KB_TMP/wrk-load.txt" 4)
			if kb_wait "$load_id" $((secs * 4 + 60)); then load_late=$(kb_lateness "$load_id"); else rc=1; fi
		else rc=1; fi
	fi
	# (c) the same job with GET /api/v1/history of one metric over the
	# seeded year (nightly tracking's reads) beside it
	local hist hist_id hist_late hist_runs
	if [ $rc = 0 ]; then
		KB_HIST="/api/v1/history?job=nightly&metric=stress-ng.bogo_ops_per_s"
		# the year's nights computed once, before the timing
		curl -s -o /dev/null -H "$KB_AUTH" "$KB_URL$KB_HIST"
		hist_id=$(kb_job sampler-history)
		if [ -n "$hist_id" ]; then
			hist=$(KB_PATH=$KB_HIST kb_wrk $((2 * KB_STRESS_S + 2)) "$KB_TMP/wrk-history.txt" 4)
			if kb_wait "$hist_id" $((secs * 4 + 60)); then hist_late=$(kb_lateness "$hist_id"); else rc=1; fi
		else rc=1; fi
	fi
	if [ $rc != 0 ]; then
		echo "kabd benchmark could not run; kabd's log:" >&2
		tail -n 30 "$KB_TMP/kabd.log" >&2
		kabd_bench_cleanup; trap - EXIT INT TERM
		return 1
	fi
	local r50 r99 rf base_runs load_runs
	read -r base_late base_runs <<<"$base_late"
	read -r load_late load_runs <<<"$load_late"
	printf '\n%-24s %10s %9s %9s %7s %18s\n' "" "req/s" "p50 ms" "p99 ms" "failed" "sampler p99 late"
	read -r rps r50 r99 rf <<<"$idle1"
	printf '%-24s %10s %9s %9s %7s %18s\n' "idle, 1 connection" "$rps" "$r50" "$r99" "$rf" "-"
	read -r rps r50 r99 rf <<<"$idle"
	printf '%-24s %10s %9s %9s %7s %18s\n' "idle, 4 connections" "$rps" "$r50" "$r99" "$rf" "-"
	printf '%-24s %10s %9s %9s %7s %15s ms\n' "stress job, no HTTP" "-" "-" "-" "-" "$base_late"
	read -r rps r50 r99 rf <<<"$load"
	printf '%-24s %10s %9s %9s %7s %15s ms\n' "stress job + 4 conns" "$rps" "$r50" "$r99" "$rf" "$load_late"
	read -r hist_late hist_runs <<<"$hist_late"
	read -r rps r50 r99 rf <<<"$hist"
	printf '%-24s %10s %9s %9s %7s %15s ms\n' "stress job + history" "$rps" "$r50" "$r99" "$rf" "$hist_late"
	echo "(sampler: the larger of the job's two runs; each run's p99 in ms: quiet $base_runs, loaded $load_runs, history $hist_runs)"
	echo
	local s99 sf l99 lf
	read -r _ _ s99 sf <<<"$idle1"
	read -r _ _ r99 rf <<<"$idle"
	read -r _ _ l99 lf <<<"$load"
	local lt20='BEGIN { print (x != "NaN" && x + 0 < 20) }'
	verdict "report p99 < 20 ms, idle, 1 connection ($s99)" "$(awk -v x="$s99" "$lt20")"
	verdict "report p99 < 20 ms, idle, 4 connections ($r99)" "$(awk -v x="$r99" "$lt20")"
	verdict "report p99 < 20 ms, stress job, 4 connections ($l99)" "$(awk -v x="$l99" "$lt20")"
	local h99 hf
	read -r _ _ h99 hf <<<"$hist"
	verdict "history (one metric, a year) p99 < 20 ms, stress job, 4 connections ($h99)" "$(awk -v x="$h99" "$lt20")"
	verdict "no failed requests ($sf, $rf, $lf, $hf)" "$([ "$sf" = 0 ] && [ "$rf" = 0 ] && [ "$lf" = 0 ] && [ "$hf" = 0 ] && echo 1)"
	verdict "sampler p99 lateness < 2 ms (quiet $base_late, loaded $load_late)" \
		"$(awk -v a="$base_late" -v b="$load_late" 'BEGIN { print (a != "NA" && b != "NA" && a + 0 < 2 && b + 0 < 2) }')"
	# "not worse": within 0.5 ms or 50 % of the quiet figure, whichever is larger
	verdict "sampler lateness not worse under load" \
		"$(awk -v a="$base_late" -v b="$load_late" 'BEGIN { t = a * 0.5; if (t < 0.5) t = 0.5
			print (a != "NA" && b != "NA" && b + 0 <= a + t) }')"
	verdict "sampler lateness not worse under history reads (quiet $base_late, history $hist_late)" \
		"$(awk -v a="$base_late" -v b="$hist_late" 'BEGIN { t = a * 0.5; if (t < 0.5) t = 0.5
			print (a != "NA" && b != "NA" && b + 0 <= a + t) }')"
	kabd_bench_cleanup; trap - EXIT INT TERM
}

# --- kernels: a baseline build from scratch, then the patched build ---
# Uses the git tree tests/integration/t_kernels.sh caches (run it once) and
# a fresh object directory under BENCH_KBUILD_WORK; the patched build's
# series adds a counter to mm/vmscan.c and a pr_info to mm/swap.c.
bench_kernels() {
	section "kernels (tinyconfig + boot/kexec options: baseline build, then a two-patch series)"
	need "$B/kab" || return 1
	local tree=${KAB_TEST_LINUX_GIT:-/var/cache/kab/test-linux-git} work=${BENCH_KBUILD_WORK:-/var/cache/kab/bench-kbuild}
	if [ ! -d "$tree/.git" ]; then
		echo "no git tree at $tree: run tests/integration/t_kernels.sh once to make it" >&2
		return 1
	fi
	local tmp; tmp=$(mktemp -d /tmp/kab-bench-kernels.XXXXXX)
	git -C "$tree" worktree add -q --detach "$tmp/wt" v6.1-debian || { rm -rf "$tmp"; return 1; }
	local g=(git -C "$tmp/wt" -c user.name=kab -c user.email=kab@localhost)
	echo 'static unsigned long kab_bench_counter __maybe_unused;' >>"$tmp/wt/mm/vmscan.c"
	"${g[@]}" commit -q -am "mm/vmscan: a counter"
	printf 'static int __init kab_bench_init(void)\n{\n\tpr_info("kab bench\\n");\n\treturn 0;\n}\nlate_initcall(kab_bench_init);\n' >>"$tmp/wt/mm/swap.c"
	"${g[@]}" commit -q -am "mm/swap: a pr_info"
	"${g[@]}" format-patch -q --stdout -2 >"$tmp/series.mbox"
	git -C "$tree" worktree remove --force "$tmp/wt"
	printf 'CONFIG_64BIT=y\nCONFIG_PRINTK=y\nCONFIG_TTY=y\nCONFIG_SERIAL_8250=y\nCONFIG_SERIAL_8250_CONSOLE=y\nCONFIG_BLK_DEV_INITRD=y\nCONFIG_BINFMT_ELF=y\n' >"$tmp/boot.config"
	local v="kernel = build
tree = $tree
base = v6.1-debian
config = tinyconfig
config.fragment = $tmp/boot.config"
	printf '[job]\nname = bench-kernels\n\n[variant A]\nname = base\n%s\n\n[variant B]\nname = patched\n%s\nseries = %s\n\n[workload w]\ntype = command\ncommand = /bin/true\n' \
		"$v" "$v" "$tmp/series.mbox" >"$tmp/bench.job"
	rm -rf "$work"/*/obj-*  # the baseline compiles everything
	"$B/kab" build --db "$tmp/b.db" --kernels-dir "$tmp/kernels" --work-dir "$work" "$tmp/bench.job" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	cat "$tmp/out"
	if [ $rc -ne 0 ]; then tail -5 "$tmp/err"; rm -rf "$tmp"; return 1; fi
	local row
	row=$(sqlite3 -batch -noheader -separator ' ' "$tmp/b.db" "select b.duration_s, b.objects, p.duration_s, p.objects from builds b, builds p where b.id = 1 and p.id = 2")
	read -r bs bo ps po <<<"$row"
	printf '  baseline: %.1f s, %d objects;  patched: %.1f s, %d objects;  ratio %.1f %%\n' "$bs" "$bo" "$ps" "$po" \
		"$(awk -v a="$ps" -v b="$bs" 'BEGIN { print 100 * a / b }')"
	verdict "patched build at most 15 % of the baseline build" "$(awk -v a="$ps" -v b="$bs" 'BEGIN { print (a <= 0.15 * b) }')"
	rm -rf "$tmp"
}

# --- kexec: what a kernel switch costs beyond the kernel's own boot ---
# Runs the ABBA part of tests/integration/t_kexec.sh (QEMU, software
# emulation: 1 plain boot, then 4 kexecs) and reads its console
# (tests/out/kexec-abba.console). Per switch: the kernel's own boot (its
# uptime when /init starts), the guest's init script up to kabd, kabd from
# its start to the executor ready, and before the jump the kernel loading
# the image (kexec_file_load) and kab's own work (recording, swap
# teardown, sync). kab's part is the last and the kabd-to-ready time.
bench_kexec() {
	section "kexec switch vs the kernel's own boot (QEMU, software emulation)"
	need "$B/kab" && need "$B/kabd" || return 1
	KAB_KEXEC_ONLY=abba bash tests/integration/t_kexec.sh >"/tmp/kab-bench-kexec.$$" 2>&1
	local rc=$? con=tests/out/kexec-abba.console
	if [ $rc -ne 0 ] || [ ! -r "$con" ]; then
		tail -20 "/tmp/kab-bench-kexec.$$"
		rm -f "/tmp/kab-bench-kexec.$$"
		return 1
	fi
	rm -f "/tmp/kab-bench-kexec.$$"
	awk '
		BEGIN { nb = nk = nl = nr = 0 }
		/KABT boot / { for (i = 1; i <= NF; i++) if ($i == "uptime") u[nb++] = $(i + 1) }
		/KABT kabd starts, uptime / { k[nk++] = $NF }
		/kexec: .* loaded in / { for (i = 1; i <= NF; i++) { if ($i == "in" && $(i + 2) == "s,") l[nl] = $(i + 1)
			if ($i == "(" || $i ~ /^\(/) { x = $i; sub(/^\(/, "", x); p[nl] = x } } nl++ }
		/ is up, .* from the switch decision/ { for (i = 1; i <= NF; i++) { if ($i == "up,") t[nr] = $(i + 1)
			if ($i == "preparing,") pp[nr] = $(i - 2); if ($i == "since") r[nr] = $(i - 2) } nr++ }
		END {
			printf "  plain boot (QEMU -kernel): kernel to /init %.2f s, /init to kabd %.2f s\n", u[0], k[0] - u[0]
			printf "  %-7s %9s %9s %9s %9s %9s %9s %9s\n", "switch", "decision", "load", "kab pre", "kernel", "init", "kabd", "kab adds"
			n = 0
			for (s = 0; s < nr; s++) {
				own = p[s] - l[s]; kabd = r[s] - k[s + 1]; add = own + kabd
				printf "  %-7d %8.2fs %8.2fs %8.2fs %8.2fs %8.2fs %8.2fs %8.2fs\n", s + 1, t[s], l[s], own, u[s + 1], k[s + 1] - u[s + 1], kabd, add
				a[n] = add; b[n++] = add + l[s]; kern += u[s + 1]
			}
			asort(a)
			asort(b)
			med = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
			medl = n % 2 ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2
			printf "  kab adds %.2f s per switch (median of %d; %.2f s counting the kernel loading image and initramfs);\n  the kernel boots to /init in %.2f s on average, the plain boot in %.2f s\n", med, n, medl, kern / n, u[0]
			printf "  (decision: from the switch decision to the executor ready in the new kernel; load: kexec_file_load of image and initramfs;\n   kab pre: recording, swap teardown, sync; kernel: its uptime at /init; init: the guest init script up to kabd; kabd: its start to ready)\n"
			print (med < 1.0) > "/tmp/kab-bench-kexec.verdict"
		}' "$con"
	verdict "kab adds under 1 s per switch beyond the kernel's own boot" "$(cat /tmp/kab-bench-kexec.verdict)"
	rm -f /tmp/kab-bench-kexec.verdict
}

# --- condition: the demo job's primary metric, conditioning off and on ---
# examples/demo.job twice in one invocation: as shipped, then with
# drop_caches = yes, compact = yes and wait_idle = COND_IDLE (default 10%)
# bounded by COND_IDLE_MAX (default 30s) in its [job]. COND_PAIRS (default
# the demo's 3) sets the pairs of both. Prints each variant's CoV of the
# primary metric (the job's first primary, else stress-ng.bogo_ops_per_s)
# in both, their ratio (on / off), and how many conditioned runs started
# on a machine that was not idle. Needs root; takes about 2 x 70 s plus
# the idle waits. The target: conditioning does not raise the CoV.
cond_csv() { # DB ID: "metric cov_before cov_after" of the primary metric
	"$B/kab" report "$2" --db "$1" --format csv | awk -F, '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["primary"] == "true" && !p { p = $c["metric"] " " $c["cov_pct_before"] " " $c["cov_pct_after"] }
		$c["metric"] == "stress-ng.bogo_ops_per_s" { s = $c["metric"] " " $c["cov_pct_before"] " " $c["cov_pct_after"] }
		END { print (p != "" ? p : s) }'
}
bench_condition() {
	local pairs=${COND_PAIRS:-3} idle=${COND_IDLE:-10%} idle_max=${COND_IDLE_MAX:-30s}
	section "condition (demo job, $pairs pairs, conditioning off then on: drop_caches, compact, wait_idle = $idle within $idle_max)"
	need "$B/kab" || return 1
	[ "$(id -u)" = 0 ] || { echo "kab run needs root (memory cgroups, knobs)" >&2; return 1; }
	local tmp off on
	tmp=$(mktemp -d /tmp/kab-bench-condition.XXXXXX)
	sed "s/^pairs *=.*/pairs = $pairs/" examples/demo.job >"$tmp/off.job"
	awk -v idle="$idle" -v max="$idle_max" '{ print } /^\[job\]/ {
		print "drop_caches = yes"; print "compact = yes"; print "wait_idle = " idle; print "wait_idle_max = " max }' \
		"$tmp/off.job" | sed '0,/^name *=.*/s//name = demo-conditioned/' >"$tmp/on.job"
	local c
	for c in off on; do
		echo "running the demo with conditioning $c ..."
		if ! "$B/kab" run "$tmp/$c.job" --db "$tmp/kab.db" >"$tmp/$c.log" 2>&1; then
			echo "kab run ($c) failed:" >&2
			tail -n 20 "$tmp/$c.log" >&2
			rm -rf "$tmp"
			return 1
		fi
	done
	off=$(cond_csv "$tmp/kab.db" 1)
	on=$(cond_csv "$tmp/kab.db" 2)
	local not_idle
	not_idle=$(sqlite3 "$tmp/kab.db" "SELECT count(*) || ' of ' || (SELECT count(*) FROM runs WHERE job_id = 2) FROM runs WHERE job_id = 2 AND conditioning LIKE '%idle=no%'" 2>/dev/null)
	echo "$off|$on|$not_idle" | awk -F'|' '{
		split($1, a, " "); split($2, b, " ")
		printf "\n  %-28s %12s %12s %8s\n", a[1] " CoV", "off", "on", "on/off"
		for (v = 2; v <= 3; v++) {
			name = v == 2 ? "variant A (zswap-off)" : "variant B (zswap-on)"
			r = a[v] > 0 ? sprintf("%.2f", b[v] / a[v]) : "n/a"
			printf "  %-28s %11.2f%% %11.2f%% %8s\n", name, a[v], b[v], r
			so += a[v]; sn += b[v]
		}
		r = so > 0 ? sprintf("%.2f", sn / so) : "n/a"
		printf "  %-28s %11.2f%% %11.2f%% %8s\n", "mean of the two", so / 2, sn / 2, r
		printf "  conditioned runs that started on a machine that was not idle: %s\n", $3
		print (so > 0 && sn <= so) > "/tmp/kab-bench-condition.verdict" }'
	verdict "conditioning does not raise the primary metric's CoV (mean over variants)" "$(cat /tmp/kab-bench-condition.verdict 2>/dev/null)"
	rm -f /tmp/kab-bench-condition.verdict
	rm -rf "$tmp"
}

# --- changepoint: change-point detection over a year of nightly history ---
# 200 metrics x 365 nights from a fixed seed through cp_detect, against a
# Welch t at every split of every series (the least a detector does) in
# the same invocation; BENCH_REPEAT tries (default 11), the median.
bench_changepoint() {
	section "changepoint (a year of nightly history, 200 metrics)"
	need "$B/bench/bench_changepoint" || return 1
	"$B/bench/bench_changepoint"
}

# --- history: GET /api/v1/history of one metric over a year of nights ---
# seed_history's year (cached as the kabd section caches it), copied, its
# nights computed once (timed), then HISTORY_REPEAT (default 300) requests
# through kabd's handler for one metric, the text form, the default view,
# and a reference GET of one job, all in one process. No root, no kabd:
# kabd takes the executor lock and its executor needs root; the transport
# and the sampler beside it are the kabd section's.
bench_history() {
	section "history (GET /api/v1/history, one metric over 365 nights, through kabd's handler)"
	need "$B/bench/bench_history" && need "$B/bench/seed_history" || return 1
	local cache=$B/bench-cache/history-365.db tmp rc
	mkdir -p "$B/bench-cache"
	if [ ! -s "$cache" ] || [ "$B/bench/seed_history" -nt "$cache" ]; then
		rm -f "$cache" "$cache".tmp*
		"$B/bench/seed_history" "$cache.tmp" || { rm -f "$cache".tmp*; return 1; }
		mv "$cache.tmp" "$cache"
	else
		echo "history: cached $cache"
	fi
	tmp=$(mktemp -d /tmp/kab-bench-history.XXXXXX)
	cp "$cache" "$tmp/kab.db"
	"$B/bench/bench_history" "$tmp/kab.db" --repeat "${HISTORY_REPEAT:-300}"
	rc=$?
	rm -rf "$tmp"
	return $rc
}

# --- verdict: time to a verdict with kab's own comparison, simulated ---
# +5% at 2% CoV decided at 6, 8, 10 pairs and the pairs for 80%, beside
# the exact rank rule's ceiling (every pair agreeing in sign); A/A false
# verdicts beside alpha. BENCH_JOBS simulated jobs per point.
bench_verdict() {
	section "verdict (simulated jobs through stats_compare: time to a verdict, A/A false verdicts)"
	need "$B/bench/bench_verdict" || return 1
	"$B/bench/bench_verdict"
}

# --- lab: the lab's PostgreSQL queue and Otava view under a lab's load ---
# A cluster of the section's own (tests/lab/pg.sh: initdb and pg_ctl as
# nobody, or the user running it, in a temporary directory, removed at
# the end), reached on 127.0.0.1 with a password from a credentials file
# as a member reaches it; skipped, with the reason, without the server's
# programs. build/bench/bench_lab then: 10,000 queued jobs claimed by one
# claimer, then by 50 at once (claims/s, p99 claim latency against a bare
# SELECT 1 on the same connections, every job claimed once), and 365
# nights x 20 machines written with lab_night_put, one machine's metric
# read from otava_nights against the same rows in a plain indexed table.
# The server is set as tests/lab sets it (fsync and synchronous_commit
# off: the server's CPU, not this disk) with max_connections for the
# claimers and shared_buffers = 128MB; LAB_BENCH_DURABLE=1 turns fsync and
# synchronous_commit on. Sizes: LAB_BENCH_JOBS, LAB_BENCH_CLAIMERS,
# LAB_BENCH_NIGHTS, LAB_BENCH_MACHINES, LAB_BENCH_REPEAT.
bench_lab() {
	section "lab (PostgreSQL: ${LAB_BENCH_JOBS:-10000} jobs claimed by ${LAB_BENCH_CLAIMERS:-50}; ${LAB_BENCH_NIGHTS:-365} nights x ${LAB_BENCH_MACHINES:-20} machines from otava_nights)"
	need "$B/bench/bench_lab" || return 1
	(
		. tests/lab/pg.sh
		why=$(pg_missing)
		if [ -n "$why" ]; then
			echo "  SKIP  lab: $why"
			exit 0
		fi
		PG_CONF_EXTRA="max_connections = $(( ${LAB_BENCH_CLAIMERS:-50} + 20 ))
shared_buffers = 128MB"
		if [ "${LAB_BENCH_DURABLE:-0}" = 1 ]; then
			PG_CONF_EXTRA="$PG_CONF_EXTRA
fsync = on
synchronous_commit = on
full_page_writes = on"
		fi
		t0=$SECONDS
		pg_start || { echo "the section's PostgreSQL cluster did not start (above)" >&2; exit 1; }
		cred=$(mktemp -d /tmp/kab-bench-lab.XXXXXX)
		trap 'pg_stop; rm -rf "$cred"' EXIT
		(umask 077; echo "127.0.0.1:$PG_PORT:*:$PG_USER:$PG_PASSWORD" >"$cred/lab.pgpass")
		echo "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') in $PG_DIR, 127.0.0.1:$PG_PORT ($((SECONDS - t0)) s to start);" \
			"fsync $([ "${LAB_BENCH_DURABLE:-0}" = 1 ] && echo on || echo "off (LAB_BENCH_DURABLE=1 for on)")"
		"$B/bench/bench_lab" 127.0.0.1 "$PG_PORT" "$PG_USER" "$cred/lab.pgpass"
	)
}

# --- add new sections above this line, and their names to SECTIONS ---

if [ $# -gt 0 ]; then SECTIONS=("$@"); fi
for s in "${SECTIONS[@]}"; do
	if ! declare -F "bench_$s" >/dev/null; then
		echo "bench/run.sh: no benchmark \"$s\" (have: $(declare -F | sed -n 's/^declare -f bench_//p' | tr '\n' ' '))" >&2
		status=2
		continue
	fi
	"bench_$s" || status=1
done
exit $status
