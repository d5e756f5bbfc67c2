#!/usr/bin/env bash
# Every seed posting (../shared/seeds/) has two job files in examples/seeds/:
#
# - NNN-name.job, the running-kernel form: valid here, names its posting,
#   says the posting's scale and how it was scaled, points to its
#   built-kernel form; an A/A job (a name with -aa-) has identical variants.
#   Running them end to end takes ~25 minutes (make seeds); this only
#   checks them.
# - NNN-name.built.job, the built-kernel form (base against base + series,
#   kernel = build): kab check passes once its tree, base and archive are
#   replaced by stand-ins (a small git tree made here, its commit, a local
#   archive holding a gzip'd mbox under the file's own message-id with a
#   patch for the stand-in tree, and a decoy version that does not apply),
#   and kab build gets as far as applying the series (git am), which
#   fetches the thread, picks the file's version and checks its author,
#   before it stops at the stand-in's missing kernel config; a placeholder
#   series is refused with its message. Its message-id, base and every
#   commit or blob id it quotes are in the posting's text, so a typo fails.
#
# Fast (about a second): nothing here touches memcgs, swap or knobs. As
# root, the build user kab-build is made when missing (and removed at the
# end), as t_kernels does; kab build runs only as root (its state directory
# must be root's).
set -u
cd "$(dirname "$0")/../.."
name=t_seeds
pass=0 fail=0 skip=0
chk() { local d=$1; shift; if "$@"; then pass=$((pass + 1)); echo "  ok   $d"; else fail=$((fail + 1)); echo "  FAIL $d"; fi; }
skp() { skip=$((skip + 1)); echo "  skip $1"; }
KAB=$PWD/build/kab
# the postings sit beside the project (../shared/seeds); a checkout made
# elsewhere (a CI clone in /tmp) names them with KAB_SEEDS_DIR
POSTINGS=${KAB_SEEDS_DIR:-../shared/seeds}
T=$(mktemp -d /tmp/kab-seeds.XXXXXX)
chmod 755 "$T" # kab-build reads the stand-in tree and works under it

KB_MADE=0
cleanup() {
	rm -rf "$T"
	[ $KB_MADE = 1 ] || return 0
	userdel kab-build 2>/dev/null || echo "  (could not remove the build user kab-build: $(userdel kab-build 2>&1))"
}
trap cleanup EXIT

# posting NNN: the file under $POSTINGS, or empty
posting_of() { ls "$POSTINGS/$1"_*.txt 2>/dev/null | head -1; }

# ---- running-kernel forms ----
n=0
for j in examples/seeds/[0-9][0-9][0-9]-*.job; do
	case $j in *.built.job) continue ;; esac
	n=$((n + 1))
	b=$(basename "$j")
	out=$("$KAB" check "$j" 2>&1 >/dev/null)
	chk "$b: kab check passes${out:+ ($out)}" [ -z "$out" ]
	post=$(grep -oE '\.\./shared/seeds/[0-9]{3}_[0-9a-f]+\.txt' "$j" | head -1)
	chk "$b: names its posting ${post:-(none)}" [ -n "$post" -a "${b:0:3}" = "$(basename "${post:-xxx}" | cut -c1-3)" ]
	chk "$b: quotes the posting's method and scale" grep -q "^; The posting's method" "$j"
	chk "$b: says how it was scaled for this machine" grep -qi "^; Scaled\|^; Here:" "$j"
	built=${b%.job}.built.job
	chk "$b: points to its built-kernel form $built, which exists" \
		bash -c "grep -q '^; Built-kernel form: .*$built' '$j' && [ -f 'examples/seeds/$built' ]"
	jname=$(sed -n 's/^name *= *//p' "$j" | head -1)
	if [[ $jname == *-aa-* ]]; then
		# the variants as kab check normalizes them, less their names
		va=$("$KAB" check "$j" 2>/dev/null | awk '/^\[/ { sec = $0 } sec == "[variant A]" && !/^\[/ && !/^name *=/')
		vb=$("$KAB" check "$j" 2>/dev/null | awk '/^\[/ { sec = $0 } sec == "[variant B]" && !/^\[/ && !/^name *=/')
		chk "$b: an A/A job ($jname): its two variants are identical" [ -n "$va" -a "$va" = "$vb" ]
		chk "$b: an A/A job: its header says so" grep -q "^; A/A" "$j"
	fi
done
chk "one running-kernel job per posting (5): $n" [ "$n" = 5 ]

# ---- built-kernel forms ----
ROOT=0
[ "$(id -u)" = 0 ] && ROOT=1
if [ $ROOT = 1 ] && ! getent passwd kab-build >/dev/null; then
	# t_kernels makes and removes it too: not while it runs
	exec 8>/run/kab-it.lock && flock -w 3600 8
	if ! getent passwd kab-build >/dev/null; then
		useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin kab-build && KB_MADE=1
	fi
	exec 8>&-
fi
# a machine that cannot kexec (this VM) says switch = reboot, as a lab
# machine whose firmware breaks under kexec would
if [ ! -e /sys/kernel/kexec_loaded ]; then
	printf '# stand-in machine: this kernel cannot kexec\nswitch = reboot\n' >"$T/machine.conf"
	export KAB_MACHINE_CONF=$T/machine.conf
fi

# the stand-in tree: one commit; a patch for it and one that cannot apply
(
	set -e
	export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
	git init -q -b master "$T/tree"
	cd "$T/tree"
	git config user.name "Stand In" && git config user.email stand-in@example.org
	mkdir mm && printf 'one\n' >mm/stand-in.c && git add -A && git commit -q -m "stand-in base"
	printf 'one\ntwo\n' >mm/stand-in.c && git commit -q -am "mm: stand-in change"
	git format-patch -q -1 --stdout --numbered >"$T/good.patch"
	printf 'nine\n' >mm/other.c && git add mm/other.c && git commit -q -m "mm: decoy" &&
		printf 'nine\nten\n' >mm/other.c && git commit -q -am "mm: decoy change"
	git format-patch -q -1 --stdout --numbered >"$T/decoy.patch"
	git reset -q --hard HEAD~3
) || { echo "  FAIL cannot make the stand-in git tree"; exit 1; }
chmod -R a+rX "$T/tree"
STAND_BASE=$(git -C "$T/tree" rev-parse HEAD)

# thread PREFIX MSGID PATCHFILE: a cover letter [PREFIX 0/1] with Message-ID
# <MSGID> and patch 1/1 in reply to it, from the stand-in author
thread() {
	printf 'From stand-in Mon Sep 17 00:00:00 2001\nFrom: Stand In <stand-in@example.org>\n'
	printf 'Date: Tue, 1 Dec 2026 13:05:56 +0000\nSubject: [%s 0/1] stand-in series\nMessage-ID: <%s>\n\ncover letter\n\n' "$1" "$2"
	sed -e "0,/^Subject: \[PATCH 1\/1\]/s//Message-ID: <1.$2>\nIn-Reply-To: <$2>\nSubject: [$1 1\/1]/" "$3"
	echo
}

nb=0
for j in examples/seeds/*.built.job; do
	nb=$((nb + 1))
	b=$(basename "$j")
	num=${b:0:3}
	post=$(posting_of "$num")
	chk "$b: names its posting ../shared/seeds/${num}_*.txt" grep -qE "\.\./shared/seeds/${num}_[0-9a-f]+\.txt" "$j"
	chk "$b: names its running-kernel form ${b%.built.job}.job" grep -q "${b%.built.job}\.job" "$j"
	chk "$b: quotes the posting's method and scale" grep -q "^; The posting's method" "$j"
	chk "$b: says how it was scaled" grep -qi "^; Scaled\|^; Here:" "$j"
	chk "$b: every variant is kernel = build" \
		[ "$(grep -c '^\[variant ' "$j")" = "$(grep -cE '^kernel *= *build' "$j")" ]
	chk "$b: boots N kernels of each variant (boots = in [job])" grep -qE '^boots *= *[0-9]+' "$j"
	chk "$b: says what it found for the series, the base and the design" \
		bash -c "grep -q '^; Series' '$j' && grep -q '^; Base' '$j' && grep -q '^; Design' '$j'"

	series=$(sed -n 's/^series *= *\([^ ;]*\).*/\1/p' "$j" | head -1)
	sver=$(sed -n 's/^series *= *[^ ;]* *v\([0-9]*\).*/\1/p' "$j" | head -1)
	sver=${sver:-1}
	msgid=
	[[ $series == lore:* ]] && msgid=${series#lore:}

	# ---- the file against its posting ----
	if [ -z "$post" ]; then
		skp "$b: its posting (no $POSTINGS/${num}_*.txt here)"
	else
		pver=$(grep -oE '\[(RFC )?PATCH( RFC)?( v[0-9]+)?' "$post" | head -1 | grep -oE '[0-9]+$')
		pver=${pver:-1}
		owns=$(grep -ciE '^message-id:|message-id: <' "$post")
		bad=
		for h in $(grep -ohE '\b[0-9a-f]{12,40}\b' "$j" | sort -u); do grep -qF "$h" "$post" || bad="$bad $h"; done
		chk "$b: every commit, blob and message id it quotes is in the posting${bad:+ (not there:$bad)}" [ -z "$bad" ]
		base=$(sed -n 's/^base *= *\([^ ;]*\).*/\1/p' "$j" | head -1)
		if [[ $base =~ ^[0-9a-f]{12,40}$ ]]; then
			chk "$b: base $base is the posting's" grep -qF "$base" "$post"
		else
			# no base in the posting: the header pins one by the blob the
			# posting's patches name, which the check above found there
			chk "$b: base $base: the header says how to pin it (git log --find-object of a blob in the posting)" \
				bash -c "grep -qE -- '--find-object=[0-9a-f]{12,}' '$j' && ! grep -qE 'base-commit|[Aa]pplies on' '$post'"
		fi
		if [ -n "$msgid" ]; then
			chk "$b: series message-id $msgid is in the posting" grep -qF "$msgid" "$post"
			if [ "$owns" -gt 0 ]; then
				chk "$b: it is the posting's own Message-ID, v$pver" \
					bash -c "grep -qiF 'Message-ID: <$msgid>' '$post' && [ '$sver' = '$pver' ]"
			else
				chk "$b: the posting (v$pver) has no Message-ID of its own: the file takes v$sver and says it is NOT the posted version" \
					bash -c "[ '$sver' != '$pver' ] && grep -q 'NOT the posted version' '$j'"
			fi
		else
			chk "$b: a placeholder series, and the posting indeed names no message-id (no Message-ID:, no lore link)" \
				bash -c "grep -q '^; Series: PLACEHOLDER' '$j' && [ '$owns' = 0 ] && ! grep -q 'lore.kernel.org\|msgid.link' '$post'"
		fi
	fi

	# ---- kab check and kab build against the stand-ins ----
	d=$T/$num
	mkdir -p "$d/archive" "$d/work"
	chmod 755 "$d" "$d/work"
	sed -e "s|^\(tree *= *\)[^ ;]*|\1$T/tree|" -e "s|^\(base *= *\)[^ ;]*|\1$STAND_BASE|" \
		-e "s|^archive *=.*|archive = $d/archive|" "$j" >"$d/job.job"
	if [ -n "$msgid" ]; then
		prefix="PATCH v$sver"
		[ "$sver" = 1 ] && prefix=PATCH
		[ "$sver" = 1 ] && grep -q RFC "$j" && prefix="RFC PATCH"
		mkdir -p "$d/archive/$msgid"
		{ thread "$prefix" "$msgid" "$T/good.patch"; thread "PATCH v$((sver + 1))" "decoy.$msgid" "$T/decoy.patch"; } |
			gzip -c >"$d/archive/$msgid/t.mbox.gz"
		out=$("$KAB" check "$d/job.job" 2>&1 >/dev/null)
		chk "$b: kab check passes with the stand-in tree, base and archive${out:+ ($out)}" [ -z "$out" ]
		if [ $ROOT = 0 ]; then
			skp "$b: kab build of its series (not root)"
			continue
		fi
		# kab build builds in file order and stops at the first failure: B first
		awk '/^\[/ { if (sec == "[variant B]" && a != "") { printf "%s", a; a = "" } sec = $0 }
		     sec == "[variant A]" { a = a $0 "\n"; next } { print } END { printf "%s", a }' "$d/job.job" >"$d/bfirst.job"
		"$KAB" build "$d/bfirst.job" --db "$d/b.db" --kernels-dir "$d/kernels" --work-dir "$d/work" \
			--state-dir "$d/state" >"$d/build.out" 2>&1
		want="series: git am -3 of 1 patches (v$sver, from Stand In <stand-in@example.org>)"
		chk "$b: kab build fetches lore:$msgid from the archive, takes v$sver and applies it ($want)" \
			grep -qF "$want" "$d/build.out"
		chk "$b: ... and stops only at the stand-in's kernel config" grep -q ': config: make olddefconfig exited' "$d/build.out"
		grep -qF "$want" "$d/build.out" || sed 's/^/    /' "$d/build.out"
	else
		"$KAB" check "$d/job.job" >/dev/null 2>"$d/check.err"
		rc=$?
		line=$(grep -n '^series *=' "$d/job.job" | head -1 | cut -d: -f1)
		want="$d/job.job:$line: series $d/$series does not exist: give an mbox, a directory of .patch files or lore:<message-id>"
		chk "$b: kab check refuses the placeholder series, and only it: exit 2, \"$(basename "$series") does not exist\"" \
			bash -c "[ $rc = 2 ] && [ \"\$(cat '$d/check.err')\" = '$want' ]"
		[ "$(cat "$d/check.err")" = "$want" ] || sed 's/^/    /' "$d/check.err"
	fi
done
chk "one built-kernel job per posting (5): $nb" [ "$nb" = 5 ]
echo "$name: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
