# kab: kernel A/B benchmark harness. Plain make; output in build/.
# `make demo` and `make check` install what they need first (as root; as
# another user they say what is missing and run what can run).

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -std=c11 -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes \
           -Wstrict-prototypes -Wno-unused-parameter -Wno-format-truncation
ifdef CI
WARN    += -Werror
endif
ifdef SANITIZE
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif
# includes are written from the project root: "harness/job/job.h"
CPPFLAGS += -D_GNU_SOURCE -I.
# libpq's headers (db/lab*.c): Debian's libpq-dev puts them here
PQ_INCLUDE := $(shell pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)
CPPFLAGS += -I$(PQ_INCLUDE)
# each object's header dependencies, written by the compiler (build/**/*.d)
DEPFLAGS := -MMD -MP
LDLIBS  := -lcgroup -linih -lsqlite3 -lgsl -lgslcblas -lcurl -ljansson -lnettle -lz -lpq -lpthread -lm

B := build
LIB_SRC  := $(filter-out harness/cli/main.c harness/daemon/kabd_main.c,$(wildcard harness/*/*.c db/*.c workloads/*.c kernels/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/obj/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
# Helper programs the workloads run inside their memcg: workloads/progs/X.c
# becomes build/kab-X (found next to the kab binary, see wl_helper_path).
PROG_SRC := $(wildcard workloads/progs/*.c)
PROG_BIN := $(PROG_SRC:workloads/progs/%.c=$(B)/kab-%)
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(B)/bench/%)

# Debian packages kab needs to build, run and test; BUILD_PKGS, those
# without which nothing builds (the libraries kab, kabd and the helper
# programs link, and the compiler).
BUILD_PKGS := build-essential libcgroup-dev libinih-dev libsqlite3-dev libgsl-dev \
              libmicrohttpd-dev libcurl4-openssl-dev zlib1g-dev libjansson-dev nettle-dev libmariadb-dev \
              libpq-dev
DEB_PKGS := build-essential pkg-config libcgroup-dev libinih-dev libsqlite3-dev libgsl-dev \
            sqlite3 stress-ng util-linux procps
# and for the tests: a QEMU guest with cgroup v2 (Debian's kernel, busybox)
DEB_PKGS += qemu-system-x86 busybox-static cpio kmod
DEB_PKGS += python3-scipy  # for the statistics oracle, tests/stats/check_oracle.sh
DEB_PKGS += libmicrohttpd-dev curl  # kabd's HTTP server; curl for its test
DEB_PKGS += libcurl4-openssl-dev  # the CLI as a client of kabd; lore archives over https
DEB_PKGS += zlib1g-dev  # a lore thread's t.mbox.gz, decompressed with a cap
DEB_PKGS += libjansson-dev  # every JSON kab writes, and the JSON the client reads
DEB_PKGS += libpq-dev  # the lab's PostgreSQL database (db/lab*.c, doc/lab.md)
# the server, for tests/lab's own temporary clusters (initdb, pg_ctl); kab
# needs no running cluster of Debian's, and tests/lab never touches one
DEB_PKGS += postgresql-15
DEB_PKGS += nettle-dev  # SHA-256 of build inputs (GnuTLS's crypto layer, which kabd's TLS already loads)
DEB_PKGS += chromium  # the headless browser of tests/integration/t_web.sh
DEB_PKGS += wrk  # load generator for bench/run.sh kabd
# the seed workloads: sysbench OLTP on a private MariaDB server; a kernel
# build of Debian's linux-source-6.1 and what building it needs; and
# linux-source-6.12, the tree the seeds' backports apply to
DEB_PKGS += mariadb-server sysbench libmariadb-dev
DEB_PKGS += linux-source-6.1 linux-source-6.12 bc bison flex libelf-dev libssl-dev xz-utils
# mkinitramfs, for the initramfs of a built kernel with modules (the -core
# package: initramfs-tools itself would replace a machine's dracut)
DEB_PKGS += initramfs-tools-core

.PHONY: all deps web-deps demo demo-build seeds executor-free check check-kernels check-nightly-kernels check-bisect-kernels check-seeds lint lint-format bench clean install fuzz fuzz-smoke fuzz-deps
# Shell code: sets missing to the Debian packages of $(1) not installed
# (" a b", or empty).
find_missing = missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done
# Installs the Debian packages in $(1) that are missing, as root. Any other
# user installs nothing: it is told what is missing and the target that
# installs it as root ($(3)), and make stops when some of it is in $(2),
# what the build cannot do without; else it goes on, and the suites that
# need the rest say so and skip.
define install_missing
	@$(call find_missing,$(1)); \
	if [ -n "$$missing" ] && [ "$$(id -u)" != 0 ]; then \
	  echo "kab: not installed:$$missing (as root: make $(3))" >&2; \
	  needed=""; for p in $$missing; do case " $(2) " in *" $$p "*) needed="$$needed $$p";; esac; done; \
	  if [ -n "$$needed" ]; then echo "kab: cannot build without$$needed: install it as root (make $(3)), then run this again" >&2; exit 1; fi; \
	  echo "kab: not root, so not installing them: going on; what needs them says so and skips" >&2; \
	elif [ -n "$$missing" ]; then \
	  echo "kab: installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
endef

all: $(B)/kab $(B)/kabd $(PROG_BIN) $(BENCH_BIN)

# Debian's postgresql-15 makes and starts a cluster, 15/main, when it is
# installed. kab does not use it (tests/lab starts clusters of its own; a
# lab's database host sets up its own, doc/lab.md): when this make deps is
# what installed the package, the cluster it started is stopped and left to
# start by hand (start.conf manual), and make deps says so.
PG_MAIN := /etc/postgresql/15/main
deps:
	@mkdir -p $(B); dpkg-query -W -f='$${Status}' postgresql-15 >$(B)/.deps-postgresql 2>/dev/null || true
	$(call install_missing,$(DEB_PKGS),$(BUILD_PKGS),deps)
	@if [ "$$(id -u)" = 0 ] && ! grep -q 'install ok installed' $(B)/.deps-postgresql 2>/dev/null && \
	    [ -f $(PG_MAIN)/start.conf ] && command -v pg_ctlcluster >/dev/null; then \
	  echo "kab: postgresql-15 started its cluster 15/main, which kab does not use: stopping it, and $(PG_MAIN)/start.conf says manual (a lab's database host: doc/lab.md)"; \
	  pg_ctlcluster 15 main stop 2>/dev/null; echo manual >$(PG_MAIN)/start.conf; \
	fi; rm -f $(B)/.deps-postgresql

# Playwright (npm playwright-core, the version in tests/web/package-lock.json)
# drives Debian's chromium in tests/integration/t_web.sh, which needs root:
# another user installs nothing here (neither apt nor npm) and is told
# what is missing.
WEB_READY := command -v node >/dev/null && command -v npm >/dev/null && \
	  [ -f tests/web/node_modules/.package-lock.json ] && cmp -s tests/web/package-lock.json tests/web/node_modules/.kab-lock
web-deps: deps
	@if [ "$$(id -u)" != 0 ]; then \
	  $(WEB_READY) || echo "kab: not installed: node, npm or tests/web's playwright-core, for t_web, which needs root anyway (as root: make web-deps)" >&2; \
	  exit 0; \
	fi; \
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
	  $(MAKE) --no-print-directory DEB_PKGS="nodejs npm" deps || exit 1; fi; \
	if [ ! -f tests/web/node_modules/.package-lock.json ] || \
	    ! cmp -s tests/web/package-lock.json tests/web/node_modules/.kab-lock; then \
	  echo "kab: npm ci in tests/web"; \
	  (cd tests/web && npm ci --no-audit --no-fund --loglevel=error) && \
	  cp tests/web/package-lock.json tests/web/node_modules/.kab-lock; \
	fi

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(DEPFLAGS) $(CFLAGS) $(WARN) -c -o $@ $<

$(B)/libkab.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/kab: $(B)/obj/harness/cli/main.o $(B)/libkab.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/kabd: $(B)/obj/harness/daemon/kabd_main.o $(B)/libkab.a
	$(CC) $(LDFLAGS) -o $@ $^ -lmicrohttpd $(LDLIBS)

# a helper program may add libraries with a target-specific PROG_LIBS
$(B)/kab-pageout $(B)/kab-shmem-truncate: PROG_LIBS := -lm
$(PROG_BIN): $(wildcard workloads/progs/*.h)
$(B)/kab-sysbench-oltp: PROG_LIBS = $(shell mariadb_config --libs)
$(B)/kab-sysbench-oltp: CPPFLAGS += $(shell mariadb_config --include)
$(B)/kab-%: workloads/progs/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(PROG_LIBS)

# test_recorded drives kabd's submit handler (api.c), which links httpd.c
$(B)/tests/test_recorded: LDLIBS := -lmicrohttpd $(LDLIBS)
# test_history drives GET /api/v1/history (api_history.c, httpd.c) too
$(B)/tests/test_history: LDLIBS := -lmicrohttpd $(LDLIBS)
# test_regress drives the regressions handlers (api_regress.c)
$(B)/tests/test_regress: LDLIBS := -lmicrohttpd $(LDLIBS)
# test_api_page drives the paged lists' handlers (api.c, api_page.c)
$(B)/tests/test_api_page: LDLIBS := -lmicrohttpd $(LDLIBS)
# test_bisect_life drives the bisections' handlers (api_bisect.c)
$(B)/tests/test_bisect_life: LDLIBS := -lmicrohttpd $(LDLIBS)
# test_bisect_fetch too
$(B)/tests/test_bisect_fetch: LDLIBS := -lmicrohttpd $(LDLIBS)
# test_lab_member drives kabd's member of a lab (lab_member.c, lab_outbox.c)
$(B)/tests/test_lab_member: LDLIBS := -lmicrohttpd $(LDLIBS)
$(B)/tests/%: tests/unit/%.c tests/unit/t.h $(B)/libkab.a
	@mkdir -p $(dir $@)
	@mkdir -p $(B)/dep/tests
	$(CC) $(CPPFLAGS) $(DEPFLAGS) -MF $(B)/dep/tests/$*.d -Itests/unit $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(B)/libkab.a $(LDLIBS)

# the change-point detector on history files, for tests/stats/check_changepoint.sh;
# the bisection's accuracy simulation, for tests/stats/check_bisect.sh
STATS_BIN := $(B)/tests/cp_driver $(B)/tests/bisect_sim
$(STATS_BIN): $(B)/tests/%: tests/stats/%.c $(B)/libkab.a
	@mkdir -p $(dir $@)
	@mkdir -p $(B)/dep/tests
	$(CC) $(CPPFLAGS) $(DEPFLAGS) -MF $(B)/dep/tests/$*.d $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(B)/libkab.a $(LDLIBS)

# bench_history times kabd's GET /api/v1/history handler (api_history.c, httpd.c)
$(B)/bench/bench_history: LDLIBS := -lmicrohttpd $(LDLIBS)
$(B)/bench/%: bench/%.c $(B)/libkab.a
	@mkdir -p $(dir $@)
	@mkdir -p $(B)/dep/bench
	$(CC) $(CPPFLAGS) $(DEPFLAGS) -MF $(B)/dep/bench/$*.d $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(B)/libkab.a $(LDLIBS)

# what the demo runs: kab, and the helper programs workloads exec
# (examples/demo.job's pageout loop is build/kab-pageout); on its own for
# tests/build/check_demo.sh, which builds it from an empty B
demo-build: $(B)/kab $(PROG_BIN)

# the database is kab's default, kab.db in the state directory (/var/lib/kab):
# one under build/ is refused when the checkout is another user's (SECURITY.md)
demo: deps
	$(MAKE) demo-build
	$(B)/kab run examples/demo.job

# every seed posting's job end to end on the running kernel (~50 minutes):
# one database and one text report per job under build/seeds/. The
# built-kernel forms (*.built.job) boot kernels: they go to kabd (kab submit)
seeds: deps all
	@mkdir -p $(B)/seeds
	@for j in examples/seeds/*.job; do case $$j in *.built.job) continue;; esac; n=$$(basename $$j .job); \
	  echo "== $$n"; rm -f $(B)/seeds/$$n.db; \
	  $(B)/kab run --db $(B)/seeds/$$n.db $$j && \
	  $(B)/kab report 1 --db $(B)/seeds/$$n.db >$(B)/seeds/$$n.txt && echo "   report: $(B)/seeds/$$n.txt" || exit 1; \
	done

# first, before anything is installed or built: with kabd (or another kab
# executor) running, the integration suites that run jobs could only fail;
# tests/executor_free.sh says so once, with what to do, and stops make check
executor-free:
	@tests/executor_free.sh

# As root it installs what is missing and runs every suite. Any other user
# gets what runs without root: lint, fuzz-smoke (skipped, and counted so,
# when clang is not installed) and tests/run.sh, whose suites that need
# root, QEMU or a browser say so and are counted as skipped.
check: executor-free deps web-deps lint
	$(MAKE) all $(UNIT_BIN) $(STATS_BIN)
	@$(call find_missing,$(FUZZ_PKGS)); \
	if [ -n "$$missing" ] && [ "$$(id -u)" != 0 ]; then \
	  skipped="fuzz-smoke: needs$$missing (as root: make fuzz-deps)"; \
	else \
	  skipped=""; echo "$(MAKE) fuzz-smoke"; $(MAKE) fuzz-smoke || exit 1; \
	fi; \
	echo tests/run.sh; CHECK_SKIPPED="$$skipped" tests/run.sh

# The integration suites that build kernels and boot them in QEMU (t_kernels,
# t_kexec, t_patch; tests/run.sh --kernels): 20 minutes warm, 45 cold, over
# make check's budget, so their own target, run before a change to kernels/,
# exec/boots or the QEMU guests is called done.
check-kernels: executor-free deps web-deps
	$(MAKE) all
	tests/run.sh --kernels

# Nightly tracking with kernels, the whole loop (tests/qemu/t_nightly_kernels.sh):
# the host builds NIGHTS nights of a tracked tree (one a real regression), a
# QEMU guest under TCG runs them by kexec and confirms the change point.
# 20 to 30 minutes of emulated boots: its own target, not part of check.
check-nightly-kernels: deps
	$(MAKE) all
	bash tests/qemu/t_nightly_kernels.sh

# A nightly regression followed to its commit (tests/qemu/t_bisect_kernels.sh):
# the host builds 8 nights and every commit of the night that brings 8, one
# of which does not build and one the regression; a QEMU guest under TCG
# runs the nights, confirms the change, bisects it by itself (bisect =
# auto), through a kill -9 of kabd and a power cut, and names the commit.
# About 80 emulated boots: its own target, not part of check.
check-bisect-kernels: deps
	$(MAKE) all
	bash tests/qemu/t_bisect_kernels.sh

# The seed postings measured base against patched (tests/seeds/): their
# series backported to linux-source-6.12, both kernels built by kab, a
# QEMU guest under TCG booting them ABBA by kexec; then doc/seeds.md made
# from the reports. Hours of emulated boots: its own target, not part of
# check. SEEDS="003 004" runs some of them.
check-seeds: deps
	$(MAKE) all
	bash tests/seeds/run.sh

# Functions kab does not use: unbounded copies and unchecked number parsing
# (STYLE.md); parsers use the bounded cursors in util.c and procparse.c.
BANNED := sscanf|atoi|atol|atoll|atof|strtok|strtok_r|sprintf|vsprintf|strcpy|strcat|gets
lint:
	@if grep -nwE '($(BANNED))' $(LIB_SRC) harness/cli/main.c harness/daemon/kabd_main.c bench/*.c | grep -vE '(snprintf|vsnprintf|asprintf|vasprintf)\('; then \
	  echo "lint: banned function (see Makefile BANNED)"; exit 1; fi
	@echo "lint: no banned functions"
	@python3 tests/lint/layers.py .
	@python3 tests/lint/test_layers.py
	@$(MAKE) --no-print-directory lint-format

# The C lines a branch changes, laid out as .clang-format says: git clang-format
# against origin/main's merge base, else HEAD~1 (uncommitted changes count too).
# Lines nobody touched are left as they are; the fix is git clang-format BASE.
CLANG_FORMAT     ?= $(firstword $(shell command -v clang-format clang-format-14 2>/dev/null))
GIT_CLANG_FORMAT ?= $(firstword $(shell command -v git-clang-format git-clang-format-14 2>/dev/null))
lint-format:
	@if [ -z "$(CLANG_FORMAT)" ] || [ -z "$(GIT_CLANG_FORMAT)" ]; then \
	  echo "lint: layout NOT checked: no clang-format or git-clang-format (Debian package clang-format)"; exit 0; fi; \
	if base=$$(git merge-base origin/main HEAD 2>/dev/null); then what="origin/main's merge base"; \
	elif base=$$(git rev-parse -q --verify HEAD~1); then what="HEAD~1"; \
	else echo "lint: layout NOT checked: neither origin/main nor HEAD~1 to compare with"; exit 0; fi; \
	short=$$(git rev-parse --short $$base); \
	out=$$(GIT_PAGER=cat $(GIT_CLANG_FORMAT) --binary $(CLANG_FORMAT) --diff --extensions c,h $$base -- 2>&1); rc=$$?; \
	if printf '%s\n' "$$out" | grep -q '^diff --git'; then printf '%s\n' "$$out"; \
	  echo "lint: lines changed since $$what ($$short) are not laid out as .clang-format says; the diff above is the fix (git clang-format $$short)"; exit 1; fi; \
	if [ $$rc -ne 0 ]; then printf '%s\n' "$$out"; echo "lint: git clang-format failed (exit $$rc)"; exit 1; fi; \
	echo "lint: lines changed since $$what ($$short) laid out as .clang-format says"

bench: deps
	$(MAKE) all
	bench/run.sh

# libFuzzer targets for kab compare's CSV reader, kabd's door checks, the job parser, the
# patch series parser, JSON both ways and the lab's selectors and tags (tests/fuzz): clang with -fsanitize=fuzzer,address,
# corpora seeded from tests/compare, the job files and tests/data/kernels' mboxes. `make fuzz` runs each
# FUZZ_TIME seconds; `make fuzz-smoke` 10 s, for make check.
FUZZ_PKGS   := clang libclang-rt-14-dev
FUZZ_CC     ?= clang
FUZZ_TIME   ?= 30
FUZZ_CFLAGS := -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address
# the daemon (kabd's HTTP side needs libmicrohttpd, which the fuzz target
# does not link; its handlers and executor thread need that side) is left out
FUZZ_OBJ    := $(patsubst %.c,$(B)/fuzz/obj/%.o,$(filter-out $(wildcard harness/daemon/*.c),$(LIB_SRC)))

fuzz-deps:
	$(call install_missing,$(FUZZ_PKGS),$(FUZZ_PKGS),fuzz-deps)

$(B)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(DEPFLAGS) $(FUZZ_CFLAGS) -c -o $@ $<

$(B)/fuzz/fuzz_compare_csv: tests/fuzz/fuzz_compare_csv.c $(FUZZ_OBJ)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

# kabd's Host, Origin, token and content-type checks on arbitrary headers
$(B)/fuzz/fuzz_gate: tests/fuzz/fuzz_gate.c $(B)/fuzz/obj/harness/daemon/gate.o $(B)/fuzz/obj/harness/daemon/listen.o \
		$(B)/fuzz/obj/harness/base/peer.o $(B)/fuzz/obj/harness/base/util.o $(B)/fuzz/obj/harness/base/output.o \
		$(B)/fuzz/obj/harness/base/esc.o $(B)/fuzz/obj/harness/base/config.o
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

# The job parser kabd's submit runs on a body (job_parse_text), linked with what it needs
# only: the reader, key table and builder, the workload types' key tables, the lab selector
# (lab.on), util; not the machine checks (job_check.c), kexec, git or machine.conf.
FUZZ_JOB_OBJ := $(patsubst %,$(B)/fuzz/obj/%.o,harness/job/job harness/job/job_build harness/job/job_keys harness/job/job_keytab harness/job/job_track \
		harness/job/job_knob harness/job/job_metric harness/job/job_print harness/job/expect db/lab_select harness/base/util \
		harness/base/output harness/base/statedir harness/base/esc harness/base/config \
		kernels/series_fetch kernels/track_name workloads/wl workloads/wl_keys workloads/wl_command workloads/wl_kbuild workloads/wl_pageout \
		workloads/wl_shmem_truncate workloads/wl_stress_ng workloads/wl_sysbench)
$(B)/fuzz/fuzz_job: tests/fuzz/fuzz_job.c $(FUZZ_JOB_OBJ)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

# The patch series parser (kseries_parse) on a thread's mbox, as anyone posting to it writes:
# the parser, the series sources it reaches (series_fetch: curl, zlib) and sha256, util.
FUZZ_SERIES_OBJ := $(patsubst %,$(B)/fuzz/obj/%.o,kernels/series kernels/series_fetch kernels/sha256 \
		harness/base/util harness/base/output harness/base/esc harness/base/config)
$(B)/fuzz/fuzz_series: tests/fuzz/fuzz_series.c $(FUZZ_SERIES_OBJ)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

# JSON both ways: a reply the client reads, a string kab writes (json.c, client.c; curl, jansson;
# secret.c for the client's --token-file)
FUZZ_JSON_OBJ := $(patsubst %,$(B)/fuzz/obj/%.o,harness/cli/client harness/base/json harness/base/util \
		harness/base/output harness/base/esc harness/base/config harness/base/secret)
$(B)/fuzz/fuzz_json: tests/fuzz/fuzz_json.c $(FUZZ_JSON_OBJ)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

# The lab's selector and tag parsers (db/lab_select.c) on any text: util for the number and size parsers
FUZZ_SELECTOR_OBJ := $(patsubst %,$(B)/fuzz/obj/%.o,db/lab_select harness/base/util harness/base/output harness/base/esc \
		harness/base/config)
$(B)/fuzz/fuzz_selector: tests/fuzz/fuzz_selector.c $(FUZZ_SELECTOR_OBJ)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

fuzz fuzz-smoke: fuzz-deps
	$(MAKE) $(B)/fuzz/fuzz_compare_csv
	@mkdir -p $(B)/fuzz/corpus
	cp tests/compare/*.csv tests/compare/bad/*.csv $(B)/fuzz/corpus/
	$(B)/fuzz/fuzz_compare_csv -max_total_time=$(if $(filter fuzz-smoke,$@),10,$(FUZZ_TIME)) -max_len=4096 \
	  -dict=tests/fuzz/csv.dict -artifact_prefix=$(B)/fuzz/ -print_final_stats=1 $(B)/fuzz/corpus
	$(MAKE) $(B)/fuzz/fuzz_gate
	@mkdir -p $(B)/fuzz/corpus-gate
	$(B)/fuzz/fuzz_gate -max_total_time=$(if $(filter fuzz-smoke,$@),10,$(FUZZ_TIME)) -max_len=512 \
	  -dict=tests/fuzz/gate.dict -artifact_prefix=$(B)/fuzz/gate- -print_final_stats=1 $(B)/fuzz/corpus-gate
	$(MAKE) $(B)/fuzz/fuzz_job
	@mkdir -p $(B)/fuzz/corpus-job
	cp examples/*.job examples/seeds/*.job tests/golden/good/*.job tests/golden/bad/*.job $(B)/fuzz/corpus-job/
	$(B)/fuzz/fuzz_job -max_total_time=$(if $(filter fuzz-smoke,$@),10,$(FUZZ_TIME)) -max_len=8192 \
	  -dict=tests/fuzz/job.dict -artifact_prefix=$(B)/fuzz/job- -print_final_stats=1 $(B)/fuzz/corpus-job
	$(MAKE) $(B)/fuzz/fuzz_series
	@mkdir -p $(B)/fuzz/corpus-series
	cp tests/data/kernels/*.mbox tests/data/kernels/*.patch $(B)/fuzz/corpus-series/
	$(B)/fuzz/fuzz_series -max_total_time=$(if $(filter fuzz-smoke,$@),10,$(FUZZ_TIME)) -max_len=16384 \
	  -dict=tests/fuzz/series.dict -artifact_prefix=$(B)/fuzz/series- -print_final_stats=1 $(B)/fuzz/corpus-series
	$(MAKE) $(B)/fuzz/fuzz_json
	@mkdir -p $(B)/fuzz/corpus-json
	cp tests/compare/expected/*.json.out $(B)/fuzz/corpus-json/
	$(B)/fuzz/fuzz_json -max_total_time=$(if $(filter fuzz-smoke,$@),10,$(FUZZ_TIME)) -max_len=4096 \
	  -dict=tests/fuzz/json.dict -artifact_prefix=$(B)/fuzz/json- -print_final_stats=1 $(B)/fuzz/corpus-json
	$(MAKE) $(B)/fuzz/fuzz_selector
	@mkdir -p $(B)/fuzz/corpus-selector
	printf 'cpus>=64 arch=x86_64 kexec' >$(B)/fuzz/corpus-selector/a; printf 'host=lab3, memory<1G tag=numa cgroup=v2' >$(B)/fuzz/corpus-selector/b; printf 'host=3,memory<00000060000001713514555' >$(B)/fuzz/corpus-selector/c
	$(B)/fuzz/fuzz_selector -max_total_time=$(if $(filter fuzz-smoke,$@),10,$(FUZZ_TIME)) -max_len=2048 \
	  -dict=tests/fuzz/selector.dict -artifact_prefix=$(B)/fuzz/selector- -print_final_stats=1 $(B)/fuzz/corpus-selector

# Installs the binaries, the web pages and the systemd units (lab machines),
# a token for kabd --listen (/etc/kab/token, 0600) and the group kab:
# make install [PREFIX=/usr/local] [DESTDIR=...]
PREFIX ?= /usr/local
install: all
	install -D -m 755 $(B)/kab $(DESTDIR)$(PREFIX)/bin/kab
	install -D -m 755 $(B)/kabd $(DESTDIR)$(PREFIX)/bin/kabd
	for p in $(PROG_BIN); do install -m 755 $$p $(DESTDIR)$(PREFIX)/bin/; done
	install -d $(DESTDIR)$(PREFIX)/share/kab/web $(DESTDIR)/etc/systemd/system
	install -m 644 web/*.html web/*.js web/*.css $(DESTDIR)$(PREFIX)/share/kab/web/
	sed -e 's|/usr/local/bin/|$(PREFIX)/bin/|g' systemd/kabd.service >$(DESTDIR)/etc/systemd/system/kabd.service
	sed -e 's|/usr/local/bin/|$(PREFIX)/bin/|g' systemd/kab-nightly.service >$(DESTDIR)/etc/systemd/system/kab-nightly.service
	install -m 644 systemd/kab-nightly.timer $(DESTDIR)/etc/systemd/system/
	install -D -m 644 doc/kab.1 $(DESTDIR)$(PREFIX)/share/man/man1/kab.1
	install -D -m 644 doc/kabd.8 $(DESTDIR)$(PREFIX)/share/man/man8/kabd.8
	install -D -m 644 examples/nightly.job $(DESTDIR)$(PREFIX)/share/kab/examples/nightly.job
	@# the nightly job is the operator's once installed: never overwritten
	[ -e $(DESTDIR)/etc/kab/nightly.job ] || install -D -m 644 examples/nightly.job $(DESTDIR)/etc/kab/nightly.job
	install -D -m 644 examples/machine.conf $(DESTDIR)$(PREFIX)/share/kab/examples/machine.conf
	@# machine.conf decides what kab trusts: kab reads it only when it and
	@# /etc/kab are root's and no group or other may write them (SECURITY.md)
	[ -d $(DESTDIR)/etc/kab ] || install -d -m 755 $(DESTDIR)/etc/kab
	[ -e $(DESTDIR)/etc/kab/machine.conf ] || install -m 644 examples/machine.conf $(DESTDIR)/etc/kab/machine.conf
	@# kabd --listen's token: made once, root's, 0600 (kabd refuses any other)
	[ -e $(DESTDIR)/etc/kab/token ] || (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' \
	  >$(DESTDIR)/etc/kab/token && echo >>$(DESTDIR)/etc/kab/token)
	@# the group whose members may submit jobs over kabd's socket (that is
	@# root on this machine: SECURITY.md); not made for a DESTDIR staging
	@if [ -z "$(DESTDIR)" ] && ! getent group kab >/dev/null; then \
	  echo "groupadd --system kab"; groupadd --system kab; fi
	@# the unprivileged user git, make and the compiler of kernel builds run as
	@# (SECURITY.md, "Kernel builds"); a package's maintainer script makes it
	@# instead when DESTDIR is set
	if [ -z "$(DESTDIR)" ] && ! getent passwd kab-build >/dev/null; then \
	  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin kab-build; fi

clean:
	rm -rf $(B)

# header dependencies the compiler wrote (DEPFLAGS)
-include $(shell find $(B) -name '*.d' 2>/dev/null)
