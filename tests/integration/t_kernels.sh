#!/usr/bin/env bash
# kernels/: a baseline and a patched kernel from a git tree of Debian's
# linux-source-6.1 (tinyconfig plus what booting and kexec need), the
# patched build recompiling only what its two-patch series touches, the
# same inputs reusing the build, a lore: series from a local HTTPS server
# (a CA made here, trusted through KAB_CA_BUNDLE), and every bad input of
# issue 6; git, make and the compiler running as the build user kab-build
# (checked in /proc while kabd's make runs); and the series one can trust
# (issue 13): a plain http archive, a redirect to http, a download over
# its cap, a gzip bomb, a thread with an injected version. The git tree
# and the object directories are cached between runs
# (KAB_TEST_LINUX_GIT, KAB_TEST_KBUILD_WORK).
. "$(dirname "$0")/lib.sh"
it_begin
for p in git gcc make flex bison bc gzip openssl /usr/bin/python3; do
	command -v "$p" >/dev/null || skip_all "$p is not installed"
done
. tests/integration/kernel_tree.sh
GITTREE=$KT_TREE WORK=$KT_WORK BASE=$KT_BASE
kt_build_user
t_cleanup() { it_cleanup; kt_cleanup; }
trap t_cleanup EXIT
KDIR=$IT_TMP/kernels
DB=$IT_TMP/k.db
kt_git_tree

# the series, made with git format-patch in a throwaway worktree
wt=$IT_TMP/wt
git -C "$GITTREE" worktree add -q --detach "$wt" "$BASE"
g() { git -C "$wt" -c user.name="Kab Test" -c user.email=kab@localhost "$@"; }
echo 'static unsigned long kab_test_reclaim_counter __maybe_unused;' >>"$wt/mm/vmscan.c"
g commit -q -am "mm/vmscan: a counter for the kab test"
printf 'static int __init kab_test_init(void)\n{\n\tpr_info("kab: patched kernel\\n");\n\treturn 0;\n}\nlate_initcall(kab_test_init);\n' >>"$wt/mm/swap.c"
g commit -q -am "mm/swap: say hello from the patched kernel"
g format-patch -q --stdout -2 >"$IT_TMP/series.mbox"
g format-patch -q --cover-letter -2 -o "$IT_TMP/series.d"
mkdir -p "$IT_TMP/lore/kab-series@test"
cat "$IT_TMP"/series.d/*.patch | gzip >"$IT_TMP/lore/kab-series@test/t.mbox.gz"
cp "$IT_TMP/series.d/0000-cover-letter.patch" "$IT_TMP/cover.mbox"
: >"$IT_TMP/empty.mbox"
# a patch whose context is not in the base
echo '/* kab test A */' >>"$wt/mm/page_alloc.c"
g commit -q -am "A: a line the base lacks"
sed -i 's|/\* kab test A \*/|/* kab test B */|' "$wt/mm/page_alloc.c"
g commit -q -am "mm/page_alloc: change a line the base lacks"
g format-patch -q --stdout -1 >"$IT_TMP/noapply.mbox"
g reset -q --hard "$BASE"
echo '#error kab-test-broken' >>"$wt/mm/swap.c"
g commit -q -am "mm/swap: break the build"
g format-patch -q --stdout -1 >"$IT_TMP/broken.mbox"
git -C "$GITTREE" worktree remove --force "$wt"

cat >"$IT_TMP/boot.config" <<'EOF'
CONFIG_64BIT=y
CONFIG_PRINTK=y
CONFIG_TTY=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_BINFMT_ELF=y
CONFIG_PROC_FS=y
CONFIG_KEXEC_FILE=y
CONFIG_MEMCG=y
CONFIG_CGROUPS=y
CONFIG_SWAP=y
CONFIG_BLOCK=y
EOF

# mkjob NAME "variant A lines" "variant B lines" [job lines]
mkjob() {
	cat >"$IT_TMP/$1.job" <<EOF
[job]
name = $1
${4:-}

[variant A]
$2

[variant B]
$3

[workload w]
type = command
command = /bin/true
EOF
}
build_v="kernel = build
tree = $GITTREE
config = tinyconfig
config.fragment = $IT_TMP/boot.config"
kbuild() { # JOB [args]: kab build, output in $IT_TMP/out, exit status in $rc
	local job=$1; shift
	nice -n 10 $KAB build --db "$DB" --kernels-dir "$KDIR" --work-dir "$WORK" "$IT_TMP/$job.job" "$@" >"$IT_TMP/out" 2>&1
	rc=$?
}
field() { # VARIANT WORD-AFTER: e.g. field patched kernelrelease
	sed -nE "s/^variant $1: .*$2 ([^ ,]+).*/\1/p" "$IT_TMP/out"
}
image_version() { /usr/bin/python3 - "$1" <<'EOF'
import sys
d = open(sys.argv[1], 'rb').read(0x10000)
assert d[0x202:0x206] == b'HdrS'
off = d[0x20e] | d[0x20f] << 8
print(d[0x200 + off:].split(b'\0')[0].decode().split()[0])
EOF
}

# 1-3: baseline and patched in one job
mkjob ab "name = base
$build_v
base = $BASE" "name = patched
$build_v
base = $BASE
series = $IT_TMP/series.mbox"
kbuild ab
check "kab build of baseline and patched exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || tail -30 "$IT_TMP/out"
grep -E '^variant|objects' "$IT_TMP/out" | sed 's/^/    /'
base_id=$(sed -nE 's/^variant base: build ([0-9]+).*/\1/p' "$IT_TMP/out")
patched_id=$(sed -nE 's/^variant patched: build ([0-9]+).*/\1/p' "$IT_TMP/out")
base_rel=$(field base kernelrelease); patched_rel=$(field patched kernelrelease)
check "both images exist" [ -s "$KDIR/$base_id/bzImage" -a -s "$KDIR/$patched_id/bzImage" ]
check "System.map and config next to each image" [ -s "$KDIR/$patched_id/System.map" -a -s "$KDIR/$patched_id/config" ]
check "different kernelreleases ($base_rel, $patched_rel)" [ -n "$base_rel" -a "$base_rel" != "$patched_rel" ]
check "each bzImage header carries its kernelrelease" \
	[ "$(image_version "$KDIR/$base_id/bzImage" 2>/dev/null)" = "$base_rel" -a "$(image_version "$KDIR/$patched_id/bzImage" 2>/dev/null)" = "$patched_rel" ]
objs=$(sql "$DB" "select objects from builds where id=$patched_id")
check "the patched build compiled only a handful of objects ($objs)" eval '[ -n "$objs" ] && [ "$objs" -ge 2 -a "$objs" -le 25 ]'
check "the patched image has the series' pr_info" grep -q "kab: patched kernel" <(strings "$WORK"/*/obj-*/mm/swap.o 2>/dev/null)
check "the build record has base sha, both patch subjects, config hash, compiler" \
	[ "$(sql "$DB" "select length(base_sha)=40 and patches like '%mm/vmscan: a counter%' and patches like '%mm/swap: say hello%' and length(config_hash)=64 and compiler like 'gcc%' and status='ok' from builds where id=$patched_id")" = 1 ]
check "the config has LOCALVERSION_AUTO off and what kab needs" \
	grep -q '^CONFIG_KEXEC_FILE=y' "$KDIR/$base_id/config"

# 4: same inputs, no compile
kbuild ab
check "same inputs again: both builds reused" eval '[ $rc -eq 0 ] && [ "$(grep -c "reused (same inputs)" "$IT_TMP/out")" = 2 ]'
check "no new build record" [ "$(sql "$DB" "select count(*) from builds")" = 2 ]
$KAB builds --db "$DB" >"$IT_TMP/list"
check "kab builds lists both" [ "$(grep -c ' ok ' "$IT_TMP/list")" = 2 ]

log_tail="echo 'kabd.log ends:'; tail -n 15 '$IT_TMP/kabd.log'"
submit() { # JOB-FILE: POST it to kabd; the HTTP status in $code, the job's id in $jid
	code=$(curl -s -o "$IT_TMP/body" -w '%{http_code}' -H "$AUTH" -H "$JOB_CT" -X POST --data-binary @"$1" "$URL/api/v1/jobs")
	jid=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$IT_TMP/body" 2>/dev/null)
}

# kabd builds a queued job's kernels before its first run (reused here:
# same inputs), and goes up to the first switch, which it shows and does
# not make (KAB_SWITCH_DRY_RUN: this machine must not reboot; switch =
# reboot because it cannot kexec). The switches are t_kexec's, in QEMU.
if [ -x "$KABD" ]; then
	sed 's/^\[job\]$/[job]\nswitch = reboot/' "$IT_TMP/ab.job" >"$IT_TMP/ab-reboot.job"
	KAB_SWITCH_DRY_RUN=1 KAB_KBUILD_WORK=$WORK KAB_KERNELS_DIR=$KDIR kabd_up --db "$DB"
	if [ -n "$PORT" ]; then
		submit "$IT_TMP/ab-reboot.job"; kid=$jid
		check "kabd takes the job with build variants (HTTP $code)" [ "$code" = 201 -a -n "$kid" ]
		ended() { # GET the job into $IT_TMP/body (its status, stage and reason printed): failed or done
			curl -s -H "$AUTH" -o "$IT_TMP/body" "$URL/api/v1/jobs/$kid"
			grep -o '"\(status\|stage\|reason\)": *"[^"]*"' "$IT_TMP/body" | head -n 3
			grep -q '"status": *"\(failed\|done\)"' "$IT_TMP/body"
		}
		# reused builds still run the config step (tinyconfig and its
		# fragments, olddefconfig): 60 s ran out in a cold make check
		# beside two other compiles, and 240 s in one beside four (load
		# 7 to 8 on 2 CPUs, the patched build's 8 objects took 235 s), so
		# allow what a loaded machine needs
		wait_for -s "$log_tail" "job $kid to be failed or done" 600 ended
		check "the job's GET has a stage field" grep -q '"stage":' "$IT_TMP/body"
		check "kabd built (reused) its kernels, then stopped at the first switch (a boot loader's plan, or why there is none)" \
			grep -q '"reason": *"cannot switch to variant base: \(KAB_SWITCH_DRY_RUN is set\|no boot loader\)' "$IT_TMP/body"
		grep -o '"reason": *"[^"]*"' "$IT_TMP/body" | sed 's/^/    /'
		check "kabd reused both builds: no new record" [ "$(sql "$DB" "select count(*) from builds")" = 2 ]
		check "kabd logged each variant's build stage" grep -q "build patched: " "$IT_TMP/kabd.log"
		kabd_stop
	else
		fail "kabd starts on the test database"
	fi
fi

# a stop or a cancel in the middle of a build: kabd's compilers get SIGTERM
# and kabd does not wait out the build. A config nothing else uses (so
# nothing is cached) makes a build that compiles for minutes.
stop_objs() { grep -l '^CONFIG_PRINTK_TIME=y' "$WORK"/*/obj-*/.config 2>/dev/null | xargs -r -n1 dirname; }
stop_objs | xargs -r rm -rf
compiling() { pgrep -f "O=.*/obj-" >/dev/null; }
no_compilers() { ! compiling; }
compilers_left="echo 'make and compilers of kab builds:'; pgrep -af 'O=.*/obj-' | cut -c1-200 | head -n 5"
building() { # make is compiling and a build is recorded building (prints both)
	local b; b=$(sql "$DB" "select count(*) from builds where status = 'building'" 2>/dev/null)
	echo "builds recorded building: ${b:-?}; make or compiler processes: $(pgrep -f "O=.*/obj-" | wc -l)"
	compiling && [ "${b:-0}" -ge 1 ]
}
wait_compiling() { # up to 300 s for make to start compiling
	wait_for -s "$log_tail" "make to start compiling the new build" 300 building
}
job_is() { # STATUS: job $sid's status (printed) is STATUS
	local st; st=$(sql "$DB" "select status from jobs where id = ${sid:-0}")
	echo "job ${sid:-?} is ${st:-not there}"
	[ "$st" = "$1" ]
}
# The build's processes: make (O=WORK/...) and all under it, one line
# each: PID COMM UID(real,effective,saved,fs) GID(...) GROUPS NO_NEW_PRIVS
build_procs() {
	local roots p
	roots=$(pgrep -d, -f "O=$WORK/[0-9a-f]*/obj-") || return 0
	ps -e -o pid=,ppid= | awk -v roots="$roots" '
		BEGIN { n = split(roots, r, ","); for (i = 1; i <= n; i++) keep[r[i]] = 1 }
		{ parent[$1] = $2; pid[NR] = $1 }
		END {
			do { more = 0
				for (i = 1; i <= NR; i++)
					if (!(pid[i] in keep) && (parent[pid[i]] in keep)) { keep[pid[i]] = 1; more = 1 }
			} while (more)
			for (p in keep) print p
		}' |
	while read -r p; do
		awk -v pid="$p" -v comm="$(cat "/proc/$p/comm" 2>/dev/null)" '
			/^Uid:/ { u = $2 "," $3 "," $4 "," $5 } /^Gid:/ { g = $2 "," $3 "," $4 "," $5 }
			/^Groups:/ { gr = NF - 1 } /^NoNewPrivs:/ { n = $2 }
			END { if (u != "") print pid, comm, u, g, gr, n }' "/proc/$p/status" 2>/dev/null
	done
}
# While make runs: it and its compilers are kab-build's, every id of
# them, with no groups and no new privileges (sampled until a compiler
# is seen, up to 20 s).
check_build_procs() {
	local i want="$KB_UID,$KB_UID,$KB_UID,$KB_UID" wantg="$KB_GID,$KB_GID,$KB_GID,$KB_GID"
	: >"$IT_TMP/procs"
	for i in $(seq 1 80); do
		build_procs >>"$IT_TMP/procs"
		grep -qE '^[0-9]+ (cc1|gcc|cc|as) ' "$IT_TMP/procs" && break
		sleep 0.25
	done
	sort -u -o "$IT_TMP/procs" "$IT_TMP/procs"
	echo "    $(wc -l <"$IT_TMP/procs") build processes seen: $(awk '{print $2}' "$IT_TMP/procs" | sort | uniq -c | tr -s ' \n' ' ')"
	check "make runs as kab-build (uid $KB_UID)" grep -qE "^[0-9]+ make $want $wantg 0 1\$" "$IT_TMP/procs"
	check "a compiler ran under it as kab-build" grep -qE "^[0-9]+ (cc1|gcc|cc|as) $want $wantg 0 1\$" "$IT_TMP/procs"
	check "every process of the build is kab-build's: all uids and gids, no groups, no_new_privs" \
		eval '[ -s "$IT_TMP/procs" ] && ! grep -vE "^[0-9]+ [^ ]+ $want $wantg 0 1\$" "$IT_TMP/procs"'
	grep -vE "^[0-9]+ [^ ]+ $want $wantg 0 1\$" "$IT_TMP/procs" | head -5 | sed 's/^/    not kab-build: /'
	check "kabd itself runs as root" [ "$(awk '/^Uid:/ {print $3}' "/proc/$KABD_PID/status")" = 0 ]
}
if [ -x "$KABD" ]; then
	printf 'CONFIG_PRINTK_TIME=y\n' >"$IT_TMP/stop.config"
	# no switch in the job: kabd takes this machine's (it cannot kexec), so
	# the job is accepted and run only if kabd reads the machine's settings
	sed "0,/^config.fragment = .*/s||& $IT_TMP/stop.config|" "$IT_TMP/ab.job" >"$IT_TMP/stop.job"
	printf 'switch = reboot\n' >"$IT_TMP/machine.conf"
	export KAB_MACHINE_CONF=$IT_TMP/machine.conf
	KAB_SWITCH_DRY_RUN=1 KAB_KBUILD_WORK=$WORK KAB_KERNELS_DIR=$KDIR kabd_up --db "$DB"
	if [ -n "$PORT" ]; then
		submit "$IT_TMP/stop.job"; sid=$jid
		check "kabd takes a job whose first kernel is a new build, its switch from the machine's settings (HTTP $code)" [ "$code" = 201 -a -n "$sid" ]
		[ "$code" = 201 ] || sed 's/^/    /' "$IT_TMP/body"
		if [ "$code" = 201 ] && wait_compiling; then
			check_build_procs
			t0=$(date +%s.%N)
			kabd_stop
			dt=$(echo "$(date +%s.%N) - $t0" | bc)
			check "kabd stops in the middle of a build within 15 s (took $(printf %.1f "$dt") s)" [ "$(echo "$dt < 15" | bc)" = 1 ]
			wait_for -s "$compilers_left" "the build's make and compilers to exit" 10 no_compilers
			check "no make or compiler of the build is left" no_compilers
			check "the job is interrupted, to go on at kabd's next start" \
				[ "$(sql "$DB" "select status from jobs where id = $sid")" = interrupted ]
			check "the cut build is recorded as failed with why" \
				[ "$(sql "$DB" "select count(*) from builds where status = 'failed' and reason like '%stopped after % objects (kab was stopped or the job cancelled)%'")" = 1 ]
			KAB_SWITCH_DRY_RUN=1 KAB_KBUILD_WORK=$WORK KAB_KERNELS_DIR=$KDIR kabd_up --db "$DB"
			if [ -n "$PORT" ] && wait_compiling; then
				check "kabd's next start takes the job up again and builds" [ "$(sql "$DB" "select status from jobs where id = $sid")" = running ]
				t0=$(date +%s.%N)
				code=$(curl -s -o /dev/null -w '%{http_code}' -H "$AUTH" -H "$JOB_CT" -X POST "$URL/api/v1/jobs/$sid/cancel")
				wait_for -s "$log_tail" "job $sid to be cancelled" 15 job_is cancelled
				dt=$(echo "$(date +%s.%N) - $t0" | bc)
				check "a cancel over the API ends the build: job cancelled within 15 s (HTTP $code, $(printf %.1f "$dt") s)" \
					[ "$code" = 202 -a "$(sql "$DB" "select status from jobs where id = $sid")" = cancelled ]
				wait_for -s "$compilers_left" "the cancelled build's make and compilers to exit" 10 no_compilers
				check "and no make or compiler of it is left" no_compilers
				check "kabd is still up after the cancel" curl -sf -H "$AUTH" -o /dev/null "$URL/health"
				# a stop while waiting for another build of the same tree (its lock)
				lockf=$WORK/$(printf %s "$(realpath "$GITTREE")" | sha256sum | cut -c1-16)/lock
				flock -o "$lockf" sleep 300 & # -o: only flock holds it
				holder=$!
				IT_PIDS+=($holder)
				lock_held() { ! flock -n "$lockf" true; }
				wait_for "the test's flock to hold $lockf" 10 lock_held # before kabd's build can take it
				submit "$IT_TMP/stop.job"; wid=$jid
				wait_for -s "$log_tail" "kabd's build to wait for the lock held by another build of the tree" 60 \
					grep -q "waiting for another build of this tree" "$IT_TMP/kabd.log"
				check "a build waits for another build of the same tree (HTTP $code)" grep -q "waiting for another build of this tree" "$IT_TMP/kabd.log"
				t0=$(date +%s.%N)
				kabd_stop
				dt=$(echo "$(date +%s.%N) - $t0" | bc)
				check "kabd stops while the build waits for the lock, within 15 s (took $(printf %.1f "$dt") s)" [ "$(echo "$dt < 15" | bc)" = 1 ]
				check "that job is interrupted too" [ "$(sql "$DB" "select status from jobs where id = ${wid:-0}")" = interrupted ]
				pkill -P "$holder" 2>/dev/null
				kill "$holder" 2>/dev/null
				wait "$holder" 2>/dev/null
			else
				fail "kabd's next start builds the interrupted job's kernel again"
			fi
			kabd_stop
		else
			fail "kabd starts compiling the new build (see $IT_TMP/kabd.log)"
			kabd_stop
		fi
	else
		fail "kabd starts on the test database"
	fi
fi
stop_objs | xargs -r rm -rf
unset KAB_MACHINE_CONF

# lore: the same series from a local archive over https (with a cover
# letter) is the same input. A CA and a certificate for 127.0.0.1 made
# here; a plain http server beside it, which kab must never ask anything.
tls=$IT_TMP/tls
mkdir -p "$tls"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tls/ca.key" -out "$tls/ca.pem" -days 2 -subj "/CN=kab test CA" 2>/dev/null &&
	openssl req -newkey rsa:2048 -nodes -keyout "$tls/srv.key" -out "$tls/srv.csr" -subj "/CN=127.0.0.1" 2>/dev/null &&
	printf 'subjectAltName=IP:127.0.0.1\n' >"$tls/ext" &&
	openssl x509 -req -in "$tls/srv.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial -out "$tls/srv.pem" \
		-days 2 -extfile "$tls/ext" 2>/dev/null || skip_all "openssl cannot make a test certificate"
cat >"$IT_TMP/lore.py" <<'PY'
# A public-inbox stand-in: DIR's files over https (or plain http when
# CERT is -), and two redirects: to the plain http server and to itself.
# Its port goes to PORTFILE; each request is logged to stdout.
import http.server, ssl, sys
root, portfile, cert, key, other = sys.argv[1:6]
class H(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k):
        super().__init__(*a, directory=root, **k)
    def do_GET(self):
        print("GET", self.path, flush=True)
        where = {"/redirect-http@test/t.mbox.gz": "http://127.0.0.1:%s/kab-series@test/t.mbox.gz" % other,
                 "/redirect-https@test/t.mbox.gz": "https://127.0.0.1:%d/kab-series@test/t.mbox.gz" % port}.get(self.path)
        if where:
            self.send_response(302)
            self.send_header("Location", where)
            self.end_headers()
            return
        super().do_GET()
    def log_message(self, *a):
        pass
httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
port = httpd.server_address[1]
if cert != "-":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
open(portfile, "w").write(str(port))
httpd.serve_forever()
PY
lore_up() { # PORTFILE LOG CERT KEY OTHER-PORT: starts a server, prints its port
	rm -f "$1"
	/usr/bin/python3 "$IT_TMP/lore.py" "$IT_TMP/lore" "$1" "$3" "$4" "$5" >"$2" 2>&1 &
	LORE_PID=$!
	disown "$LORE_PID" # it_cleanup kills it by its pid, without a "Killed" line
	wait_for -s "echo 'the server said:'; tail -n 10 '$2'" "the local archive server to write its port to $1" 10 "[ -s '$1' ]"
}
lore_up "$IT_TMP/http.port" "$IT_TMP/http.log" - - 0
IT_PIDS+=($LORE_PID)
HTTP_PORT=$(cat "$IT_TMP/http.port" 2>/dev/null)
lore_up "$IT_TMP/https.port" "$IT_TMP/https.log" "$tls/srv.pem" "$tls/srv.key" "$HTTP_PORT"
IT_PIDS+=($LORE_PID)
HTTPS_PORT=$(cat "$IT_TMP/https.port" 2>/dev/null)
[ -n "$HTTP_PORT" ] && [ -n "$HTTPS_PORT" ] || fail "the local archive servers start (see $IT_TMP/http.log, https.log)"
LORE=https://127.0.0.1:$HTTPS_PORT/
export KAB_CA_BUNDLE=$tls/ca.pem
mkjob lore "name = base
$build_v
base = $BASE" "name = patched
$build_v
base = $BASE
series = lore:kab-series@test" "archive = $LORE"
kbuild lore
check "lore over https (the test CA in KAB_CA_BUNDLE): series fetched, same inputs reused" \
	eval '[ $rc -eq 0 ] && grep -q "variant patched: build $patched_id reused" "$IT_TMP/out"'
[ $rc -eq 0 ] || tail -5 "$IT_TMP/out"
check "  the archive was asked for the thread" grep -q "^GET /kab-series@test/t.mbox.gz" "$IT_TMP/https.log"
sed "s|^series = lore:kab-series@test|series = lore:redirect-https@test|" "$IT_TMP/lore.job" >"$IT_TMP/lore-redirect.job"
kbuild lore-redirect
check "lore: a redirect to https is followed (reused)" eval '[ $rc -eq 0 ] && grep -q "variant patched: build $patched_id reused" "$IT_TMP/out"'
[ $rc -eq 0 ] || tail -5 "$IT_TMP/out"
unset KAB_CA_BUNDLE
kbuild lore
check "lore: without the test CA the archive's certificate is refused" \
	eval '[ $rc -eq 2 ] && grep -q "lore.job:20: lore:kab-series@test: cannot fetch https://127.0.0.1:$HTTPS_PORT/kab-series@test/t.mbox.gz: SSL certificate problem" "$IT_TMP/out"'
[ $rc -eq 2 ] || tail -5 "$IT_TMP/out"
export KAB_CA_BUNDLE=$tls/ca.pem

# what lore: refuses, each before anything is built
mkdir -p "$IT_TMP/lore/bomb@test" "$IT_TMP/lore/big@test" "$IT_TMP/lore/injected@test"
head -c $((65 << 20)) /dev/zero | gzip -9 >"$IT_TMP/lore/bomb@test/t.mbox.gz"
head -c $((17 << 20)) /dev/urandom >"$IT_TMP/lore/big@test/t.mbox.gz"
# the thread with a [PATCH v99 1/2] from someone else in it
{
	cat "$IT_TMP"/series.d/*.patch
	echo
	sed -e '0,/^From: .*/s//From: Mallory <mallory@evil.example>/' -e 's|^Subject: \[PATCH 1/2\]|Subject: [PATCH v99 1/2]|' \
		"$IT_TMP"/series.d/0001-*.patch
} | gzip >"$IT_TMP/lore/injected@test/t.mbox.gz"
lorejob() { # NAME MSGID ARCHIVE
	mkjob "$1" "name = x
$build_v
base = $BASE
series = lore:$2" "name = y" "archive = $3"
}
lorebad() { # NAME EXPECTED-RC PATTERN, like bad below
	kbuild "$1"
	local ok=1
	[ $rc -eq "$2" ] || ok=0
	grep -qE -- "$3" "$IT_TMP/out" || ok=0
	check "$1: fails with \"$3\"" [ $ok = 1 ]
	[ $ok = 1 ] || sed 's/^/    | /' "$IT_TMP/out" | tail -8
}
: >"$IT_TMP/http.log"
lorejob lore-http kab-series@test "http://127.0.0.1:$HTTP_PORT/"
lorebad lore-http 2 "lore-http.job:3: archive http://127.0.0.1:$HTTP_PORT/ is plain http, which anyone on the way can answer"
lorejob lore-to-http redirect-http@test "$LORE"
lorebad lore-to-http 2 "lore-to-http.job:12: lore:redirect-http@test: https://127.0.0.1:$HTTPS_PORT/redirect-http@test/t.mbox.gz redirects to http://127.0.0.1:$HTTP_PORT/kab-series@test/t.mbox.gz: kab follows redirects to https:// only"
check "  the plain http archive was never asked anything" [ ! -s "$IT_TMP/http.log" ]
lorejob lore-bomb bomb@test "$LORE"
t0=$(date +%s.%N)
lorebad lore-bomb 2 "lore-bomb.job:12: lore:bomb@test: https://127.0.0.1:$HTTPS_PORT/bomb@test/t.mbox.gz decompresses to more than 64 MiB, the cap on a thread's mbox: refused"
dt=$(echo "$(date +%s.%N) - $t0" | bc)
check "  the bomb is refused at the cap in $(printf %.1f "$dt") s (under 10 s)" [ "$(echo "$dt < 10" | bc)" = 1 ]
lorejob lore-big big@test "$LORE"
lorebad lore-big 2 "lore-big.job:12: lore:big@test: https://127.0.0.1:$HTTPS_PORT/big@test/t.mbox.gz: the answer is larger than 16 MiB, the cap on a thread's download: refused"
lorejob lore-injected injected@test "$LORE"
lorebad lore-injected 2 "lore-injected.job:12: lore:injected@test: the thread has more than one version of the series \(v1: 2 patches and a cover letter from Kab Test <kab@localhost>; v99: 1 patch from Mallory <mallory@evil.example>\): say which to take, series = ... vN"
lorejob lore-v1 "injected@test v1" "$LORE"
kbuild lore-v1
check "lore: series = lore:ID v1 takes the author's v1 of that thread: the same patches, so build $patched_id is reused" \
	eval '[ $rc -eq 0 ] && grep -q "variant x: build $patched_id reused" "$IT_TMP/out"'
[ $rc -eq 0 ] || tail -5 "$IT_TMP/out"

# bad input: one clear error, named field and line, no artifact
artifacts_before=$(ls "$KDIR" | sort | tr '\n' ' ')
bad() { # NAME EXPECTED-RC PATTERN: kab build of $IT_TMP/NAME.job fails so
	kbuild "$1"
	local ok=1
	[ $rc -eq "$2" ] || ok=0
	grep -qE -- "$3" "$IT_TMP/out" || ok=0
	[ "$(ls "$KDIR" | sort | tr '\n' ' ')" = "$artifacts_before" ] || ok=0
	check "$1: fails with \"$3\"" [ $ok = 1 ]
	[ $ok = 1 ] || sed 's/^/    | /' "$IT_TMP/out" | tail -8
}
mkjob missing-tree "name = x
kernel = build
tree = $IT_TMP/no-such-tree
base = $BASE" "name = y"
bad missing-tree 2 "missing-tree.job:8: tree $IT_TMP/no-such-tree does not exist"
mkjob not-git "name = x
kernel = build
tree = $IT_TMP
base = $BASE" "name = y"
bad not-git 2 "not-git.job:8: tree $IT_TMP is not a git repository"
mkjob unknown-ref "name = x
$build_v
base = v9.99-nope" "name = y"
bad unknown-ref 2 'unknown-ref.job:11: base "v9.99-nope" is not a commit'
mkjob noapply "name = x
$build_v
base = $BASE
series = $IT_TMP/noapply.mbox" "name = y"
bad noapply 2 'noapply.job:12: series .*patch 1 of 1 "\[PATCH\] mm/page_alloc: change a line the base lacks" does not apply: mm/page_alloc.c, hunk @@ -[0-9]+'
mkjob empty "name = x
$build_v
base = $BASE
series = $IT_TMP/empty.mbox" "name = y"
bad empty 2 "empty.job:12: .*empty.mbox: empty mbox"
mkjob cover "name = x
$build_v
base = $BASE
series = $IT_TMP/cover.mbox" "name = y"
bad cover 2 'cover.job:12: .*cover.mbox: only a cover letter \("\[PATCH 0/2\]'
mkjob unreachable "name = x
$build_v
base = $BASE
series = lore:kab-series@test" "name = y" "archive = https://127.0.0.1:1/"
bad unreachable 2 'unreachable.job:12: lore:kab-series@test: cannot fetch https://127.0.0.1:1/kab-series@test/t.mbox.gz'
mkjob noconfig "name = x
kernel = build
tree = $GITTREE
base = $BASE
config = $IT_TMP/no-such.config" "name = y"
bad noconfig 2 "noconfig.job:10: config $IT_TMP/no-such.config does not exist"
mkjob broken "name = x
$build_v
base = $BASE
series = $IT_TMP/broken.mbox" "name = y"
bad broken 1 "make failed .*log .* ends:"
check "compiler error: the error carries the log tail" grep -q "kab-test-broken" "$IT_TMP/out"
check "compiler error: recorded as failed with the log tail" \
	[ "$(sql "$DB" "select count(*) from builds where status='failed' and log_tail like '%kab-test-broken%'")" = 1 ]
mkdir -p "$IT_TMP/small"
if mount -t tmpfs -o size=8m kab-it-small "$IT_TMP/small" 2>/dev/null; then
	kbuild ab --work-dir "$IT_TMP/small/work"
	check "disk too full: refused before building, space needed stated" \
		eval '[ $rc -eq 2 ] && grep -qE "not enough disk .*has [0-9.]+[KM]? free, the build needs about [0-9.]+[MG]" "$IT_TMP/out"'
	[ $rc -eq 2 ] || tail -3 "$IT_TMP/out"
	umount "$IT_TMP/small"
else
	IT_SKIP=$((IT_SKIP + 1)); echo "  skip disk too full: cannot mount a tmpfs"
fi
mkjob run-refused "name = base
$build_v
base = $BASE" "name = other"
$KAB run --db "$IT_TMP/run.db" "$IT_TMP/run-refused.job" >"$IT_TMP/out" 2>&1
rc=$?
check "kab run of a build variant beside a running one refuses (exit 2)" [ $rc -eq 2 ]
check "  saying every variant names the kernel it boots" grep -q "\[variant B\] has kernel = running in a job whose other variants boot kernels" "$IT_TMP/out"
it_end
