#!/usr/bin/env bash
# Who may submit to kabd, with real users, real sockets and a real
# certificate. On the unix socket: nobody cannot connect (the kernel
# refuses, the socket is root:GROUP 0660), and when the socket is opened
# to everyone kabd still refuses nobody's POST (SO_PEERCRED) but lets it
# read; a member of the group (a user made here) submits and cancels, and
# the job records who. Over TCP nobody's POST without the token gets 401.
# A job that would write a marker file never runs for any of them (and
# does when root submits it). Origin, Host and Content-Type are refused
# with 403, 421 and 415. kabd refuses to start with a token or TLS key
# file that others could read, or on an address that is not loopback
# without TLS (an address made in a network namespace); with a CA and a
# server certificate made here, kab submits over https and verifies it,
# and a wrong CA is refused. Without its group the socket is root's only.
# A database nobody made, with journal rows naming root-only files, is
# refused by root's kab run (and its rows, in a copy root owns, refused
# one by one); kab run without --db does not open it; the files stay.
. "$(dirname "$0")/lib.sh"
it_begin
[ -x "$KABD" ] || skip_all "$KABD is not built"
for t in curl openssl useradd userdel groupadd groupdel su ip nsenter; do
	command -v $t >/dev/null || skip_all "$t is not installed"
done
id nobody >/dev/null 2>&1 || skip_all "there is no user nobody"

GRP=kabit$$
MEMBER=kabit-m$$
NS=kab-it-$$
made_group="" made_user="" made_ns=""
security_cleanup() {
	kabd_stop
	# a kabd of this test that outlived its parent: the executor lock names it
	local p
	p=$(cat /run/kab/executor.lock 2>/dev/null)
	[ -n "$p" ] && [ -r "/proc/$p/cmdline" ] && tr "\\0" " " <"/proc/$p/cmdline" | grep -q "$IT_TMP" && kill -KILL "$p"
	[ -n "$made_user" ] && userdel "$MEMBER" 2>/dev/null
	[ -n "$made_group" ] && groupdel "$GRP" 2>/dev/null
	[ -n "$made_ns" ] && ip netns del "$NS" 2>/dev/null
	it_cleanup
}
trap security_cleanup EXIT
groupadd --system "$GRP" || skip_all "groupadd $GRP failed"
made_group=1
useradd --system -M -N -s /bin/sh -G "$GRP" "$MEMBER" || skip_all "useradd $MEMBER failed"
made_user=1
MUID=$(id -u "$MEMBER")
as() { local u=$1; shift; su -s /bin/sh "$u" -c "$*"; }

# the users reach the socket and the job files, nothing else of $IT_TMP
chmod 711 "$IT_TMP"
PUB=$IT_TMP/pub
mkdir -m 755 "$PUB"
MARK=$IT_TMP/pwned
write_job() { # NAME COMMAND
	printf '[job]\nname = %s\npairs = 1\n[variant A]\nname = a\n[variant B]\nname = b\n[workload w]\ntype = command\ncommand = %s\n' "$1" "$2"
}
write_job evil "sh -c \"id >$MARK\"" >"$PUB/evil.job"
write_job quick "true" >"$PUB/quick.job"
write_job slow "sleep 30" >"$PUB/slow.job"
chmod 644 "$PUB"/*.job

# ---- a database nobody planted (issue 24): root's kab run refuses it ----
# As nobody, in a directory nobody owns: a database made by kab itself,
# then the issue's two journal rows (this boot's id, which anyone can
# read): a swapfile row naming a root-only file to delete and a knob row
# naming one to overwrite. Root's kab run with that --db must refuse it,
# naming the file, its owner and mode, and leave both files as they were.
# Before this, the first was deleted and the second held nobody's text.
KAB_ABS=$(readlink -f "$KAB")
NOB=$IT_TMP/nobody
mkdir -m 755 "$NOB"
chown nobody: "$NOB"
VICTIMS=$IT_TMP/root-only
mkdir -m 700 "$VICTIMS"
echo "root's, to be deleted" >"$VICTIMS/delete-me"
echo "root's, to be overwritten" >"$VICTIMS/owned-by-root"
chmod 600 "$VICTIMS"/*
victims() { cat "$VICTIMS/delete-me" "$VICTIMS/owned-by-root" 2>&1; }
victims_before=$(victims)
printf '[job]\nname = tiny\npairs = 1\n[swap]\ndevice = none\n[variant A]\nname = a\n[variant B]\nname = b\n[workload w]\ntype = command\ncommand = true\n' >"$PUB/tiny.job"
chmod 644 "$PUB/tiny.job"
BOOT=$(cat /proc/sys/kernel/random/boot_id)
as nobody "cd $NOB && $KAB_ABS builds --db kab.db" >/dev/null 2>"$IT_TMP/err"
check "nobody makes a database in its directory: kab builds --db kab.db (exit 0)" [ $? = 0 ]
as nobody "sqlite3 $NOB/kab.db \"INSERT INTO journal (job_id,kind,target,original,boot_id,created) VALUES
	(NULL,'swapfile','$VICTIMS/delete-me',NULL,'$BOOT',1),
	(NULL,'knob','$VICTIMS/owned-by-root','written by uid 65534 through root','$BOOT',2)\""
check "and plants the issue's two journal rows in it" [ "$(sql "$NOB/kab.db" "select count(*) from journal")" = 2 ]
(cd "$NOB" && "$KAB_ABS" run --db kab.db "$PUB/tiny.job") >"$IT_TMP/out" 2>"$IT_TMP/err"
rc=$?
check "root: kab run --db kab.db in nobody's directory refuses the database (exit 1)" [ $rc = 1 ]
check "  naming the file, its owner and mode" \
	grep -qF "kab.db: owned by uid 65534 (nobody), mode 0600 (not root's): kab runs as root and replays this database's journal" "$IT_TMP/err"
check "  and what to do" grep -qF "leave out --db (kab.db in the state directory" "$IT_TMP/err"
sed 's/^/    /' "$IT_TMP/err"
check "  the root-only files are untouched: one not deleted, one not overwritten" [ "$(victims)" = "$victims_before" ]
check "  the planted rows are still there, nothing ran" \
	bash -c "[ \"\$(sqlite3 '$NOB/kab.db' 'select count(*) from journal')\" = 2 ] && [ \"\$(sqlite3 '$NOB/kab.db' 'select count(*) from jobs')\" = 0 ]"
"$KAB_ABS" run --resume 1 --db "$NOB/kab.db" >/dev/null 2>"$IT_TMP/err"
check "  and kab run --resume with it refuses it too (exit 1)" \
	bash -c "[ $? = 1 ] && grep -qF 'owned by uid 65534 (nobody)' '$IT_TMP/err'"

# Without --db, kab run in that directory uses kab.db in the state
# directory: nobody's file is not opened at all, the job runs.
(cd "$NOB" && "$KAB_ABS" run "$PUB/tiny.job" --no-report) >"$IT_TMP/out" 2>"$IT_TMP/err"
rc=$?
check "root: kab run in nobody's directory without --db runs the job (exit 0) in the state directory's database" \
	bash -c "[ $rc = 0 ] && [ \"\$(sqlite3 '$STATE_DIRECTORY/kab.db' \"select status from jobs where name = 'tiny'\")\" = done ]"
[ $rc = 0 ] || tail -5 "$IT_TMP/err" | sed 's/^/    /'
check "  nobody's database untouched, the root-only files too" \
	bash -c "[ \"\$(sqlite3 '$NOB/kab.db' 'select count(*) from journal')\" = 2 ] && [ \"\$(sqlite3 '$NOB/kab.db' 'select count(*) from jobs')\" = 0 ]"
check "  (the files)" [ "$(victims)" = "$victims_before" ]

# The same rows in a database root owns (root copied it): the database is
# accepted, the rows are refused one by one, reported and kept, and the
# job runs; neither file is touched.
mkdir -m 700 "$IT_TMP/copied"
sql "$NOB/kab.db" ".backup '$IT_TMP/copied/kab.db'"
"$KAB_ABS" run --db "$IT_TMP/copied/kab.db" "$PUB/tiny.job" --no-report >"$IT_TMP/out" 2>"$IT_TMP/err"
rc=$?
check "root's copy: kab run takes the database and runs the job (exit 0)" [ $rc = 0 ]
check "  the swapfile row refused and reported: outside the state directory" \
	grep -qF "journal row 1 (swapfile $VICTIMS/delete-me) refused: not a swap file kab makes" "$IT_TMP/err"
check "  the knob row refused and reported: not under /proc/sys or /sys" \
	grep -qF "journal row 2 (knob $VICTIMS/owned-by-root) refused: not a path under /proc/sys or /sys" "$IT_TMP/err"
grep -F "refused" "$IT_TMP/err" | sed 's/^/    /'
check "  both rows kept in the journal" [ "$(sql "$IT_TMP/copied/kab.db" "select group_concat(id) from journal")" = "1,2" ]
check "  the root-only files are untouched" [ "$(victims)" = "$victims_before" ]

DB=$IT_TMP/sec.db
SOCK=$IT_TMP/run/kabd.sock
kabd_up --db "$DB" --socket "$SOCK" --socket-group "$GRP" || { cat "$IT_TMP/kabd.log"; fail "kabd starts"; it_end; exit; }
ok "kabd starts on $SOCK and 127.0.0.1:$PORT"
check "kabd made the socket's directory root's, 0755" [ "$(stat -c '%U %a' "$IT_TMP/run")" = "root 755" ]
check "the socket is root:$GRP, 0660" [ "$(stat -c '%U %G %a %F' "$SOCK")" = "root $GRP 660 socket" ]
njobs() { sql "$DB" "select count(*) from jobs"; }

# ---- nobody on the socket: the kernel refuses the connection ----
as nobody "$KAB submit $PUB/evil.job --socket $SOCK" >/dev/null 2>"$IT_TMP/err"
rc=$?
check "nobody: kab submit over the socket is refused (exit 3): permission denied, says who may" \
	bash -c "[ $rc = 3 ] && grep -q 'Permission denied: only root and members' '$IT_TMP/err'"
sed 's/^/    /' "$IT_TMP/err"
as nobody "curl -s --unix-socket $SOCK -H '$JOB_CT' --data-binary @$PUB/evil.job http://localhost/api/v1/jobs" >/dev/null 2>&1
check "nobody: curl cannot connect to the socket (exit 7)" [ $? = 7 ]

# ---- the socket opened to everyone: kabd itself refuses nobody ----
chmod 666 "$SOCK"
as nobody "$KAB submit $PUB/evil.job --socket $SOCK" >/dev/null 2>"$IT_TMP/err"
rc=$?
check "nobody on an open socket: POST refused by kabd (exit 1, HTTP 403 naming uid 65534)" \
	bash -c "[ $rc = 1 ] && grep -q 'uid 65534 (nobody) may not submit.*HTTP 403' '$IT_TMP/err'"
sed 's/^/    /' "$IT_TMP/err"
code=$(as nobody "curl -s -o /dev/null -w '%{http_code}' --unix-socket $SOCK http://localhost/api/v1/jobs")
check "nobody on an open socket may read: GET /jobs 200" [ "$code" = 200 ]
check "kabd logged the refusal" grep -q 'refused a POST on the socket from uid 65534 (nobody)' "$IT_TMP/kabd.log"

# ---- nobody over TCP: 401 without the token ----
code=$(as nobody "curl -s -o /dev/null -w '%{http_code}' -H '$JOB_CT' --data-binary @$PUB/evil.job $URL/api/v1/jobs")
check "nobody over TCP without the token: POST 401" [ "$code" = 401 ]
code=$(as nobody "curl -s -o /dev/null -w '%{http_code}' $URL/api/v1/jobs")
check "nobody over TCP without the token: GET 401" [ "$code" = 401 ]
as nobody "$KAB submit $PUB/evil.job --url $URL" >/dev/null 2>"$IT_TMP/err"
check "nobody: kab submit --url without the token: exit 1, the 401 said" bash -c "[ $? = 1 ] && grep -q 'HTTP 401' '$IT_TMP/err'"
check "none of that stored a job" [ "$(njobs)" = 0 ]

# ---- a member of the group submits and cancels over the socket ----
chmod 660 "$SOCK"
mid=$(as "$MEMBER" "$KAB submit $PUB/slow.job --socket $SOCK" 2>"$IT_TMP/err")
check "member $MEMBER of $GRP: kab submit over the socket gives an id" [ -n "$mid" ]
[ -n "$mid" ] || sed 's/^/    /' "$IT_TMP/err"
check "the job records who: uid $MUID ($MEMBER)" [ "$(sql "$DB" "select submitter from jobs where id = ${mid:-0}")" = "uid $MUID ($MEMBER)" ]
as "$MEMBER" "$KAB status ${mid:-0} --socket $SOCK" >"$IT_TMP/status" 2>&1
check "kab status shows the submitter" grep -q "\"submitter\": \"uid $MUID ($MEMBER)\"" "$IT_TMP/status"
check "kabd logged it" grep -q "job ${mid:-x} (slow) queued, submitted by uid $MUID ($MEMBER)" "$IT_TMP/kabd.log"
chmod 666 "$SOCK"
as nobody "$KAB cancel ${mid:-0} --socket $SOCK" >/dev/null 2>"$IT_TMP/err"
check "nobody on an open socket cannot cancel it: exit 1, HTTP 403" bash -c "[ $? = 1 ] && grep -q 'HTTP 403' '$IT_TMP/err'"
chmod 660 "$SOCK"
as "$MEMBER" "$KAB cancel ${mid:-0} --socket $SOCK" >/dev/null 2>"$IT_TMP/err"
check "the member cancels it" [ $? = 0 ]
for i in $(seq 1 100); do [ "$(sql "$DB" "select status from jobs where id = ${mid:-0}")" = cancelled ] && break; sleep 0.2; done
check "the job ends cancelled" [ "$(sql "$DB" "select status from jobs where id = ${mid:-0}")" = cancelled ]
qid=$(as "$MEMBER" "$KAB submit $PUB/quick.job --socket $SOCK --wait" 2>/dev/null)
check "the member's second job runs to done" [ $? = 0 -a -n "$qid" ]

# ---- the door, on the socket as root ----
sreq() { curl -s -o "$IT_TMP/body" -w '%{http_code}' --unix-socket "$SOCK" "$@"; }
check "socket: POST with a foreign Origin: 403" \
	[ "$(sreq -H "$JOB_CT" -H 'Origin: http://evil.example' --data-binary @"$PUB/evil.job" http://localhost/api/v1/jobs)" = 403 ]
check "socket: a foreign Host: 421" \
	[ "$(sreq -H "$JOB_CT" --data-binary @"$PUB/evil.job" http://evil.example/api/v1/jobs)" = 421 ]
check "socket: POST as text/plain: 415" \
	[ "$(sreq -H 'Content-Type: text/plain' --data-binary @"$PUB/evil.job" http://localhost/api/v1/jobs)" = 415 ]
check "socket: 415 names the type to send" grep -q 'application/x-kab-job' "$IT_TMP/body"
check "TCP: POST with a foreign Origin: 403" [ "$(curl -s -o /dev/null -w '%{http_code}' -H "$AUTH" -H "$JOB_CT" \
	-H 'Origin: http://evil.example' --data-binary @"$PUB/evil.job" "$URL/api/v1/jobs")" = 403 ]
check "TCP: a foreign Host: 421" [ "$(curl -s -o /dev/null -w '%{http_code}' -H "$AUTH" -H "$JOB_CT" \
	-H "Host: evil.example:$PORT" --data-binary @"$PUB/evil.job" "$URL/api/v1/jobs")" = 421 ]
check "TCP: POST as text/plain with the token: 415" [ "$(curl -s -o /dev/null -w '%{http_code}' -H "$AUTH" \
	-H 'Content-Type: text/plain' --data-binary @"$PUB/evil.job" "$URL/api/v1/jobs")" = 415 ]
check "no refused request stored a job (only the member's two)" [ "$(njobs)" = 2 ]
check "and the marker job never ran: $MARK does not exist" [ ! -e "$MARK" ]
# the marker is real: root's submit of the same job writes it
rid=$("$KAB" submit "$PUB/evil.job" --socket "$SOCK" --wait 2>/dev/null)
check "root's submit of the marker job runs it: $MARK written by uid 0" \
	bash -c "[ -n '$rid' ] && grep -q '^uid=0(root)' '$MARK'"
check "and records uid 0 (root)" [ "$(sql "$DB" "select submitter from jobs where id = ${rid:-0}")" = "uid 0 (root)" ]
kabd_stop
check "kabd removes its socket when it stops" [ ! -e "$SOCK" ]

# ---- start-up refusals ----
TOK=$IT_TMP/tok
(umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TOK")
RUN_IN=()  # a command kabd runs under: nsenter --net=...
refused() { # DESCRIPTION PATTERN kabd-args...: exit 2 and PATTERN in its error
	local d=$1 pat=$2 rc; shift 2
	"${RUN_IN[@]}" "$KABD" --db "$IT_TMP/refused.db" --socket "$IT_TMP/refused/kabd.sock" "$@" >"$IT_TMP/err" 2>&1
	rc=$?
	if [ $rc = 2 ] && grep -q -- "$pat" "$IT_TMP/err"; then ok "$d"; else
		fail "$d: exit $rc: $(cat "$IT_TMP/err")"; fi
}
chmod 644 "$TOK"
refused "a token file readable by others: refused, naming the file and its mode" \
	"$TOK: the token file has mode 0644 and owner uid 0: it must be owned by root and not readable" \
	--listen "127.0.0.1:$PORT" --token-file "$TOK"
chmod 640 "$TOK"
refused "a token file readable by its group: refused (mode 0640)" "$TOK: the token file has mode 0640" \
	--listen "127.0.0.1:$PORT" --token-file "$TOK"
chmod 600 "$TOK"; chown nobody "$TOK"
refused "a token file of another owner: refused (uid 65534)" "$TOK: the token file has mode 0600 and owner uid 65534" \
	--listen "127.0.0.1:$PORT" --token-file "$TOK"
chown root "$TOK"
refused "--listen without a token file: refused" "every request over TCP needs the token" --listen "127.0.0.1:$PORT"
refused "--token-file without --listen: refused" "are for TCP: give --listen" --token-file "$TOK"
check "no database was made by a refused start" [ ! -e "$IT_TMP/refused.db" ]
mkdir -m 1777 "$IT_TMP/open"
"$KABD" --db "$IT_TMP/refused.db" --socket "$IT_TMP/open/kabd.sock" >"$IT_TMP/err" 2>&1
check "a socket in a directory others may write: refused" \
	bash -c "[ $? = 1 ] && grep -q 'directory of kabd.s socket must be a directory owned by root and not writable by group or others.*mode 1777' '$IT_TMP/err'"

# ---- no group: the socket is root's only; --public-read ----
kabd_start "$PORT" --db "$DB" --socket "$SOCK" --socket-group "nosuch$GRP" --public-read ||
	{ cat "$IT_TMP/kabd.log"; fail "kabd starts without its group"; }
check "without its group kabd says so" grep -q "there is no group nosuch$GRP: kabd's socket is root's only (0600)" "$IT_TMP/kabd.log"
check "and the socket is root:root 0600" [ "$(stat -c '%U %G %a' "$SOCK")" = "root root 600" ]
check "--public-read: GET over TCP without the token: 200" [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/jobs")" = 200 ]
check "--public-read: POST over TCP without the token: 401" [ "$(curl -s -o /dev/null -w '%{http_code}' -H "$JOB_CT" \
	--data-binary @"$PUB/evil.job" "$URL/api/v1/jobs")" = 401 ]
kabd_stop

# ---- off loopback: TLS, in a network namespace ----
ip netns add "$NS" || skip_all "cannot make a network namespace"
made_ns=1
# ip netns exec also mounts a sysfs of the namespace's own over /sys, which
# hides the cgroup mounts under it: kab runs with nsenter, the network only
nsx() { nsenter --net="/run/netns/$NS" "$@"; }
ADDR=10.254.0.1
nsx ip link set lo up
if nsx ip link add kab0 type dummy 2>/dev/null; then dev=kab0
elif nsx ip link add kab0 type veth peer name kab1 2>/dev/null; then dev=kab0; nsx ip link set kab1 up
else dev=lo; fi
nsx ip addr add "$ADDR/24" dev $dev && nsx ip link set $dev up
check "the namespace has $ADDR (on $dev)" bash -c "nsenter --net=/run/netns/$NS ip -4 -br addr show dev $dev | grep -qw '$ADDR/24'"
RUN_IN=(nsenter --net="/run/netns/$NS")
refused "--listen $ADDR (an address of the namespace) without TLS: refused at start" \
	"is not a loopback address: give --tls-cert FILE and --tls-key FILE" --listen "$ADDR:8469" --token-file "$TOK"
RUN_IN=()
# a CA, a server certificate for $ADDR signed by it, and another CA
C=$IT_TMP/tls
mkdir -m 700 "$C"
ossl() { openssl "$@" >>"$C/openssl.log" 2>&1; }
ossl req -x509 -newkey rsa:2048 -nodes -keyout "$C/ca.key" -out "$C/ca.pem" -days 2 -subj /CN=kab-it-ca \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
ossl req -newkey rsa:2048 -nodes -keyout "$C/server.key" -out "$C/server.csr" -subj "/CN=$ADDR"
printf 'subjectAltName=IP:%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' "$ADDR" >"$C/ext"
ossl x509 -req -in "$C/server.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" -CAcreateserial -out "$C/server.pem" -days 2 -extfile "$C/ext"
ossl req -x509 -newkey rsa:2048 -nodes -keyout "$C/wrong.key" -out "$C/wrong.pem" -days 2 -subj /CN=kab-it-wrong-ca
check "openssl made the CA and the server certificate" openssl verify -CAfile "$C/ca.pem" "$C/server.pem"
chmod 644 "$C/server.key"
refused "a TLS key readable by others: refused, naming the file and its mode" "$C/server.key: the TLS key file has mode 0644" \
	--listen "$ADDR:8469" --token-file "$TOK" --tls-cert "$C/server.pem" --tls-key "$C/server.key"
chmod 600 "$C/server.key" "$C/wrong.key"
refused "--tls-cert without --tls-key: refused" "give both --tls-cert FILE and --tls-key FILE" \
	--listen "$ADDR:8469" --token-file "$TOK" --tls-cert "$C/server.pem"
TLS_URL=https://$ADDR:8469
# nsenter itself, not nsx in a subshell: $! is then kabd's pid (nsenter execs it)
nsenter --net="/run/netns/$NS" "$KABD" --db "$DB" --socket "$IT_TMP/run/ns.sock" --listen "$ADDR:8469" \
	--token-file "$TOK" --tls-cert "$C/server.pem" --tls-key "$C/server.key" >>"$IT_TMP/kabd.log" 2>&1 &
KABD_PID=$!
IT_PIDS+=("$KABD_PID")
for i in $(seq 1 100); do
	curl -sf -o /dev/null --unix-socket "$IT_TMP/run/ns.sock" http://localhost/health && break
	kill -0 "$KABD_PID" 2>/dev/null || break
	sleep 0.1
done
check "kabd serves https on $ADDR:8469 in the namespace" grep -q "listening on .*https://$ADDR:8469" "$IT_TMP/kabd.log"
tid=$(nsx "$KAB" submit "$PUB/quick.job" --url "$TLS_URL" --token-file "$TOK" --cacert "$C/ca.pem" --wait 2>"$IT_TMP/err")
rc=$?
check "kab submit --url https://… --cacert CA: verified, the job runs to done" [ $rc = 0 -a -n "$tid" ]
[ $rc = 0 ] || sed 's/^/    /' "$IT_TMP/err"
check "and it records the token as its submitter" [ "$(sql "$DB" "select submitter from jobs where id = ${tid:-0}")" = token ]
nsx "$KAB" submit "$PUB/quick.job" --url "$TLS_URL" --token-file "$TOK" --cacert "$C/wrong.pem" >/dev/null 2>"$IT_TMP/err"
rc=$?
check "a wrong CA: refused (exit 3), the certificate named as the reason" \
	bash -c "[ $rc = 3 ] && grep -q 'certificate' '$IT_TMP/err' && grep -q -- '--cacert' '$IT_TMP/err'"
sed 's/^/    /' "$IT_TMP/err"
nsx "$KAB" status --url "$TLS_URL" --token-file "$TOK" >/dev/null 2>"$IT_TMP/err"
check "no --cacert: the system's CAs do not know it, refused (exit 3)" [ $? = 3 ]
nsx "$KAB" submit "$PUB/quick.job" --url "http://$ADDR:8469" --token-file "$TOK" >/dev/null 2>"$IT_TMP/err"
check "the token over plain http to $ADDR: refused by kab before connecting (exit 2)" \
	bash -c "[ $? = 2 ] && grep -q 'will not send the token' '$IT_TMP/err'"
code=$(nsx curl -s -o /dev/null -w '%{http_code}' --cacert "$C/ca.pem" "$TLS_URL/api/v1/jobs")
check "https without the token: 401" [ "$code" = 401 ]
code=$(nsx curl -s -o /dev/null -w '%{http_code}' --cacert "$C/ca.pem" -H "Authorization: Bearer $(cat "$TOK")" \
	-H "Origin: $TLS_URL" "$TLS_URL/api/v1/jobs/${tid:-0}")
check "https with the token and kabd's own Origin: 200" [ "$code" = 200 ]
code=$(nsx curl -s -o /dev/null -w '%{http_code}' --cacert "$C/ca.pem" -H "Authorization: Bearer $(cat "$TOK")" \
	-H "Origin: http://$ADDR:8469" "$TLS_URL/api/v1/jobs")
check "https with the http:// origin (another origin): 403" [ "$code" = 403 ]
kabd_stop
rc=$?
check "kabd over TLS stops with exit 0 ($rc)" [ $rc = 0 ]
[ $rc = 0 ] || tail -20 "$IT_TMP/kabd.log" | sed 's/^/    /'
check "kabd logged no crash" bash -c "! grep -qiE 'sanitizer|segmentation|assert' '$IT_TMP/kabd.log'"
it_end
