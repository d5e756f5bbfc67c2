# Shared by the seed postings' base-against-patched tests (make
# check-seeds): each one measures one posting's series, backported to
# Debian's linux-source-6.12 (tests/data/kernels/*-6.12.mbox), the way a
# lab machine would and the way t_patch does seed 004 on 6.1:
#
#  1. on the host, `kab build` builds the baseline and the patched kernel
#     from the 6.12 test tree (tinyconfig + tests/qemu/guest-6.12.config),
#     the patched one incrementally in the baseline's object directory;
#     the builds are cached and shared by the four tests (the baseline is
#     built once);
#  2. a QEMU guest under TCG boots the baseline; its kabd runs the test's
#     guest job (tests/seeds/NNN-*.guest.job, the two builds by id) and
#     switches kernels by kexec, BOOTS boots of each in ABBA order;
#  3. the host reads the guest's database, checks the boots and runs, and
#     prints kab's table; the test then checks the verdicts on the metrics
#     that carry the posting's claim and the counts that show the path was
#     taken in every counted run.
#
# The reports go to tests/out/seeds/NNN.{txt,json,cover.txt} (and the
# guest's console to NNN.console): tests/seeds/mkdoc makes doc/seeds.md
# from them.
#
# Source it from a test after setting SEED (000, ...), then call
# seed_begin. KAB_SEEDS_BOOTS (default 6) sets the boots a variant;
# KAB_SEEDS_NICE (default 19) the nice value of the builds and of QEMU.
SEED_TEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$SEED_TEST_DIR/../integration/lib.sh"

BOOTS=${KAB_SEEDS_BOOTS:-6}
NICE=${KAB_SEEDS_NICE:-19}
CACHE=${KAB_TEST_SEEDS_CACHE:-/var/cache/kab/test-seeds612}
# the lab machine's state directory: where the host builds the kernels
# and where the guest mounts its disk, so the builds' recorded paths hold
# on both
LAB=$CACHE/lab
BUILDS_DB=$CACHE/builds.db
OUT=tests/out/seeds

seed_begin() {
	it_begin
	local p
	for p in git gcc make flex bison bc cpio qemu-system-x86_64 mkfs.ext4 debugfs dumpe2fs sqlite3 /usr/bin/python3; do
		command -v "$p" >/dev/null || skip_all "$p is not installed"
	done
	[ -x /bin/busybox ] || skip_all "busybox-static is not installed"
	for p in build/kabd build/kab-pageout build/kab-shmem-truncate; do [ -x "$p" ] || skip_all "$p is not built"; done
	KT_VERSION=6.12
	. tests/integration/kernel_tree.sh
	kt_build_user
	trap 'it_cleanup; kt_cleanup' EXIT
	kt_git_tree
	skip() { skip_all "$@"; }
	. tests/qemu/lib.sh
	tmp=$IT_TMP
	mkdir -p "$LAB" "$OUT" && chmod 700 "$CACHE" "$LAB"
	SEED_T0=$SECONDS
}

# build_variant LETTER NAME [SERIES]: a [variant] that kab builds for the guest
build_variant() {
	cat <<JOB
[variant $1]
name = $2
kernel = build
tree = $KT_TREE
base = $KT_BASE
config = tinyconfig
config.fragment = $PWD/tests/qemu/guest-6.12.config
${3:+series = $3}

JOB
}

# seed_build NAME SERIES MAX_OBJECTS: kab builds the baseline ("base") and
# the patched kernel NAME with SERIES (an mbox under tests/data/kernels);
# sets A and B, their build ids. The patched build must have compiled at
# most MAX_OBJECTS objects when it was built: what the series touches and
# the kernelrelease's few, and, since the four tests share one object
# directory (kab's, per tree and config), what the build before it in
# that directory had changed (003's mm/internal.h is included by about
# 50 objects of mm/: a bound of 80 allows for it). Its patches are the
# mbox's, in order.
seed_build() {
	local name=$1 series=$PWD/tests/data/kernels/$2 max=$3 rc t0
	{
		printf '[job]\nname = seed-%s-builds\n\n' "$SEED"
		build_variant A base
		build_variant B "$name" "$series"
		printf '[workload none]\ntype = command\ncommand = true\n'
	} >"$tmp/host.job"
	echo "  building the baseline and the patched kernel (cached in $CACHE)"
	t0=$SECONDS
	nice -n "$NICE" "$KAB" build --db "$BUILDS_DB" --kernels-dir "$LAB/kernels" --work-dir "$KT_WORK" "$tmp/host.job" >"$tmp/build.out" 2>&1
	rc=$?
	check "kab build of the baseline and the patched kernel exits 0 ($((SECONDS - t0)) s)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || tail -n 30 "$tmp/build.out" | sed 's/^/    /'
	grep -E '^variant' "$tmp/build.out" | sed 's/^/    /'
	A=$(sed -nE 's/^variant base: build ([0-9]+).*/\1/p' "$tmp/build.out")
	B=$(sed -nE "s/^variant $name: build ([0-9]+).*/\\1/p" "$tmp/build.out")
	[ -n "$A" ] && [ -n "$B" ] || skip_all "no builds to boot (kab build failed)"
	check "two builds with different kernelreleases" [ "$(bq "select count(distinct kernelrelease) from builds where id in ($A, $B) and status = 'ok'")" = 2 ]
	check "both on the same base commit" [ "$(bq "select count(distinct base_sha) from builds where id in ($A, $B)")" = 1 ]
	local want got
	want=$(grep -c '^Subject: \[PATCH' "$series")
	got=$(bq "select patches from builds where id = $B" | grep -c '^\[PATCH')
	check "the patched build applied the mbox's $want patches" [ "$got" = "$want" ]
	BUILD_OBJS=$(bq "select objects from builds where id = $B")
	BUILD_S=$(bq "select cast(duration_s as int) from builds where id = $B")
	check "the patched build compiled $BUILD_OBJS objects in $BUILD_S s (at most $max)" \
		eval '[ -n "$BUILD_OBJS" ] && [ "$BUILD_OBJS" -ge 1 ] && [ "$BUILD_OBJS" -le "$max" ]'
	echo "    the baseline compiled $(bq "select objects from builds where id = $A") objects in $(bq "select cast(duration_s as int) from builds where id = $A") s when it was built"
	local id
	for id in $A $B; do
		check "build $id's image is in the lab's kernels directory" [ -s "$LAB/kernels/$id/bzImage" ]
	done
}
bq() { sql "$BUILDS_DB" "$1"; }

# seed_guest JOB SMP MEM_MB TIMEOUT_S PROGRAM...: seed_guest_boot, then
# the checks of the boots and runs every seed test makes (seed_guest_checks)
seed_guest() {
	seed_guest_boot "$@"
	seed_guest_checks
}

# seed_guest_boot JOB SMP MEM_MB TIMEOUT_S PROGRAM...: boots the baseline
# in QEMU with SMP vCPUs and MEM_MB of memory, its initramfs holding kab,
# kabd, sqlite3 and the PROGRAMs (paths on the host), and its disk the
# builds and JOB (a guest job: @BASE@, @PATCHED@, @BOOTS@ and @INITRD@
# replaced). Waits for the guest to power off; leaves its database in
# $db, its console in $OUT/$SEED.console, and checks that the guest
# finished and left its disk clean.
seed_guest_boot() {
	local job=$1 smp=$2 mem=$3 tout=$4 p
	shift 4
	qemu_root_init "$tmp/root" tests/qemu/guest-kexec.sh
	echo "$LAB" >"$qemu_root/etc/kabt-state"
	for p in "$PWD/build/kab" "$PWD/build/kabd" "$@"; do
		qemu_copy_bin "$p"
		cp "$p" "$qemu_root/usr/bin/"
	done
	qemu_copy_bin "$(command -v sqlite3)"
	qemu_cpio "$tmp/initrd.gz"
	sed -e "s|@BASE@|$A|g" -e "s|@PATCHED@|$B|g" -e "s|@BOOTS@|$BOOTS|g" -e "s|@INITRD@|$LAB/img/initrd.gz|g" \
		"$job" >"$tmp/guest.job"
	local stage=$tmp/stage
	mkdir -p "$stage/img" "$stage/kernels"
	chmod 700 "$stage"
	cp "$tmp/initrd.gz" "$stage/img/initrd.gz"
	cp -a "$LAB/kernels/$A" "$LAB/kernels/$B" "$stage/kernels/"
	cp "$tmp/guest.job" "$stage/job.kab"
	sqlite3 "$BUILDS_DB" ".backup '$stage/kab.db'"
	mkfs.ext4 -q -F -d "$stage" "$tmp/lab.img" 3G || skip_all "mkfs.ext4 -d failed"

	nboots=$((2 * BOOTS))
	echo "  booting QEMU on build $A (TCG, $smp vCPUs, ${mem}M): $nboots boots by kexec"
	local t0=$SECONDS qrc
	nice -n "$NICE" timeout "$tout" qemu-system-x86_64 -accel tcg -m "$mem" -smp "$smp" -nographic \
		-kernel "$LAB/kernels/$A/bzImage" -initrd "$tmp/initrd.gz" -append "console=ttyS0 quiet" \
		-drive "file=$tmp/lab.img,format=raw,if=virtio" </dev/null >"$tmp/lab.console" 2>&1 8>&- &
	QEMU_PID=$!
	IT_PIDS+=("$QEMU_PID")
	wait "$QEMU_PID"
	qrc=$?
	tr -d '\r' <"$tmp/lab.console" >"$OUT/$SEED.console"
	GUEST_S=$((SECONDS - t0))
	check "the guest ran the job to its end and powered off ($GUEST_S s, qemu exit $qrc)" grep -q '^KABT done' "$tmp/lab.console"
	grep -q '^KABT done' "$tmp/lab.console" || tr -d '\r' <"$tmp/lab.console" | grep -v '^\s*$' | tail -n 40 | sed 's/^/    /'

	db=$tmp/lab.db
	debugfs -R "dump /kab.db $db" "$tmp/lab.img" >/dev/null 2>&1
	[ -s "$db" ] || { fail "the guest's database is on its disk"; it_end; exit; }
	chmod 600 "$db"
	check "the guest unmounted its disk cleanly" \
		[ "$(dumpe2fs -h "$tmp/lab.img" 2>/dev/null | awk -F: '/^Filesystem state/ {gsub(/ /, "", $2); print $2}')" = clean ]
	check "the guest left no cgroup, swap or journal entry" grep -q 'KABT cleanup: kab cgroups 0, swaps 0, journal 0' "$tmp/lab.console"
	check "PRAGMA integrity_check is ok" [ "$(q "pragma integrity_check")" = ok ]
}

# seed_guest_checks: the job is done; BOOTS boots of each variant, all by
# kexec, in ABBA order, each running every workload once, on its build
seed_guest_checks() {
	check "the job is done" [ "$(q "select status from jobs where id = 1")" = done ]
	check "the variants are builds $A and $B" [ "$(q "select group_concat(build_id, ' ') from (select build_id from variants where job_id = 1 order by idx)")" = "$A $B" ]
	check "$nboots boots, all ok, all by kexec" [ "$(q "select count(*) || '/' || sum(status = 'ok' and method = 'kexec') from boots")" = "$nboots/$nboots" ]
	local abba i
	abba=$(for i in $(seq 1 $((BOOTS / 2))); do printf 0110; done)
	[ $((BOOTS % 2)) = 1 ] && abba=${abba}01
	check "the boots went A B B A ..." [ "$(q "select group_concat(variant_idx, '') from (select variant_idx from boots order by id)")" = "$abba" ]
	NW=$(q "select count(*) from workloads where job_id = 1")
	check "each of the $NW workloads ran once in every boot ($((nboots * NW)) runs in $nboots boots)" \
		[ "$(q "select count(*) || '/' || count(distinct boot_id) from runs where pair >= 0")" = "$((nboots * NW))/$nboots" ]
	check "every run on the build its variant names (boot, kab.build marker, kernelrelease)" \
		[ "$(q "select count(*) from runs r join boots b on b.boot_id = r.boot_id join builds k on k.id = b.build_id
			join variants v on v.job_id = 1 and v.idx = r.variant_idx
			where r.pair >= 0 and b.variant_idx = r.variant_idx and k.id = v.build_id
			and r.kernel_release = k.kernelrelease and r.cmdline like '%kab.build=' || k.id || '%'")" = $((nboots * NW)) ]
}
q() { sql "$db" "$1"; }

# widx NAME: the index of the guest job's workload NAME
widx() { q "select idx from workloads where job_id = 1 and name = '$1'"; }

# runs_where WORKLOAD VARIANT STATUS [COND]: the counted runs (pair >= 0)
# of WORKLOAD (a name) in VARIANT (0 or 1) with STATUS whose metrics meet
# COND, SQL over m(NAME) (the run's value of metric NAME, NULL if none)
runs_where() {
	local cond=${4:-1}
	cond=$(sed -E "s/m\(([A-Za-z0-9_.-]+)\)/(select value from metrics where run_id = r.id and name = '\1')/g" <<<"$cond")
	q "select count(*) from runs r where r.pair >= 0 and r.workload_idx = $(widx "$1") and r.variant_idx = $2 and r.status = '$3' and ($cond)"
}

# path_in_every_run WORKLOAD VARIANT DESC COND: every run of WORKLOAD in
# VARIANT was counted (ok) and meets COND (runs_where)
path_in_every_run() {
	local n
	n=$(runs_where "$1" "$2" ok "$4")
	check "$3: in all $BOOTS counted runs of $1 on $(variant_name "$2") ($n)" [ "$n" = "$BOOTS" ]
}
variant_name() { q "select name from variants where job_id = 1 and idx = $1"; }

# seed_report: kab's report of the guest's job, as text, JSON and cover
# letter, kept under tests/out/seeds and printed
seed_report() {
	"$KAB" report 1 --db "$db" >"$OUT/$SEED.txt" 2>&1
	"$KAB" report 1 --db "$db" --format json >"$OUT/$SEED.json" 2>"$tmp/report.err"
	"$KAB" report 1 --db "$db" --format cover-letter >"$OUT/$SEED.cover.txt" 2>&1
	check "kab report gives the JSON report" /usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$OUT/$SEED.json"
	echo "  the guest's report (kab report 1):"
	sed 's/^/    | /' "$OUT/$SEED.txt"
}

# jf WORKLOAD METRIC FIELD...: fields of METRIC's comparison in WORKLOAD
# from the JSON report ("n" is each variant's n, A/B); "-" when missing
jf() {
	/usr/bin/python3 - "$OUT/$SEED.json" "$@" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
ms = [m for w in r["workloads"] if w["name"] == sys.argv[2] for m in w["metrics"] if m["name"] == sys.argv[3]]
out = []
for f in sys.argv[4:]:
    if not ms:
        out.append("-")
    elif f == "n":
        out.append("/".join(str(v["n"]) for v in ms[0]["variants"]))
    else:
        v = ms[0].get(f)
        out.append("-" if v is None else ("%.6g" % v if isinstance(v, float) else str(v)))
print(" ".join(out))
EOF
}

# verdict_is WORKLOAD METRIC VERDICT...: the metric's verdict is one of
# VERDICTs, with n = BOOTS on each side; prints the row's numbers
verdict_is() {
	local w=$1 m=$2 n v pct lo hi p
	shift 2
	read -r n v pct lo hi p <<<"$(jf "$w" "$m" n verdict delta_pct ci_low_pct ci_high_pct p_value)"
	echo "    $w $m: n $n, delta $pct%, 95% CI [$lo, $hi]%, p $p, $v"
	check "$w $m: n = $BOOTS on each side" [ "$n" = "$BOOTS/$BOOTS" ]
	local want=" $* "
	check "$w $m: the verdict is $(echo "$*" | sed 's/ / or /g') (it is $v)" eval '[[ "$want" == *" $v "* ]]'
}

seed_end() {
	echo "  $SEED: $((SECONDS - SEED_T0)) s in all (guest ${GUEST_S:-?} s)"
	it_end
}
