/* The workload ops table: one adapter per workload type. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "db/store.h"
#include "harness/job/job.h"

struct diags;
struct job_workload;
struct wl_ops;
struct strbuf;

/* What a key's value is: how it is parsed, checked and described. */
enum wl_key_type {
	WL_KEY_TEXT,     /* free text; the workload's check looks at it */
	WL_KEY_SIZE,     /* bytes with K, M, G or T, from min to max */
	WL_KEY_COUNT,    /* a whole number from min to max */
	WL_KEY_DURATION, /* whole seconds (300, 300s, 5m), from min to max */
	WL_KEY_ENUM,     /* one of choices */
	WL_KEY_BOOL,     /* yes or no */
};

/* A type-specific key a workload section may carry, described once: the
 * job parser reads its name and whether it is required, wl_key_check its
 * type and range, the accessors its default, and the docs its help. */
struct wl_key {
	const char *name;
	const char *help;
	bool required;
	enum wl_key_type type;
	uint64_t min, max;  /* SIZE (bytes), COUNT, DURATION (s); max 0: no limit */
	uint64_t page;      /* SIZE: in whole pages of this many bytes (0: any) */
	bool pow2;          /* SIZE: a power of two */
	bool bool_words;    /* BOOL: true/false, on/off and 1/0 too */
	const char *const *choices; /* ENUM: the values; TEXT: named values beside free ones; NULL-terminated */
	const char *def;    /* the default as a job would write it; NULL: none */
	const char *def_doc; /* a default the workload works out, in the docs' words */
	const char *example; /* for the message: "e.g. 256M" */
	const char *why;    /* appended to the range in the message */
	/* where the parsed value goes in the type's options (wl_ops.opts_size):
	 * uint64_t for SIZE, COUNT and DURATION, bool for BOOL, const char *
	 * for ENUM (the table's string) and TEXT (the section's); set with
	 * WL_OPT. has_off false: the adapter reads the key itself. */
	bool has_off;
	size_t off;
};
#define WL_OPT(type, field) .has_off = true, .off = offsetof(type, field)

/* The entry called name in a NULL-name terminated table; NULL if none. */
const struct wl_key *wl_key_find(const struct wl_key *keys, const char *name);
/* Parses s as k's type within k's range: 0, -EINVAL when s is not of the
 * type, -ERANGE when it is outside the range (*ret untouched then). SIZE
 * in bytes, COUNT, DURATION in seconds. */
int wl_key_parse_u64(const struct wl_key *k, const char *s, uint64_t *ret);
int wl_key_parse_bool(const struct wl_key *k, const char *s, bool *ret);
/* The choice of k that s names (the table's own string); NULL if none. */
const char *wl_key_choice(const struct wl_key *k, const char *s);
/* The value a section gives k, else k's default; NULL when neither. */
const char *wl_key_value(const struct job_workload *wl, const struct wl_key *k);
/* That value parsed: -ENODATA when there is none, else as the parsers. */
int wl_key_u64(const struct job_workload *wl, const struct wl_key *k, uint64_t *ret);
int wl_key_bool(const struct job_workload *wl, const struct wl_key *k, bool *ret);
/* Reports the value a section gives k at its line when it is not of k's
 * type and range (reps "0" must be a whole number from 1 to 10000);
 * -EINVAL then, else 0. TEXT keys are the workload's to check. */
int wl_key_check(const struct job_workload *wl, const struct wl_key *k, const char *file, struct diags *d);
/* A type's options from a section, parsed once (the job parser does, into
 * job_workload.opts): every key with WL_OPT, from its value or default.
 * 0 with *ret set (NULL when the type has none), -EINVAL when a value is
 * bad or a required one missing (wl_key_check and the parser report
 * them; *ret NULL), -ENOMEM. */
int wl_opts_make(const struct wl_ops *ops, const struct job_workload *wl, void **ret);
/* wl_key_check for every key of a table: -EINVAL when any is bad. */
int wl_keys_check(const struct job_workload *wl, const struct wl_key *keys, const char *file, struct diags *d);

/* The metrics a workload reports, with their units: the store's form of
 * a run's metric (db/store.h), which the executor adds its own to. */
struct wl_metrics {
	struct store_metric *v;
	size_t n, cap;
};
/* name and unit are stored escaped (esc.h): a command prints what it likes. */
int wl_metrics_add(struct wl_metrics *m, const char *name, const char *unit, double value);
void wl_metrics_free(struct wl_metrics *m);
/* The first metric called name at index from or later; NULL when none. */
const struct store_metric *wl_metrics_find(const struct wl_metrics *m, size_t from, const char *name);

/* A metric a workload type reports, declared beside the code that
 * reports it: the unit its runs store, which way is better and the row
 * label reports show (harness/report/metrics.c reads them under a job's
 * [metric] sections; the kernel's counters are its own table). pattern is
 * a name, or a glob whose '*' matches any run of characters
 * ("stress-ng.*.bogo_ops"); the first row that matches wins, so a name
 * goes before the pattern it is an exception to. */
struct wl_metric {
	const char *pattern;
	const char *unit;       /* never NULL; "" for none (kbuild.ok, 0 or 1) */
	enum direction dir;     /* DIRECTION_HIGHER, _LOWER or _NEUTRAL */
	const char *label;      /* NULL: the name (see short_labels), with the unit */
};
/* A row with every fact given: WL_METRIC("sysbench.tps", "tx/s", HIGHER,
 * "transactions/s"). Write rows with it: a row that leaves a fact out
 * reads as DIRECTION_NEUTRAL, and -Wmissing-field-initializers says so. */
#define WL_METRIC(pattern, unit, dir, label) \
	{ \
		pattern, unit, DIRECTION_##dir, label \
	}

/* The evidence the helper programs print after their prefix, one
 * convention for all (repetitions, the page walk of kabprog.h, the mTHP
 * counters): a type whose wl_ops.prog_metrics is set has these too. */
extern const struct wl_metric wl_prog_metrics[];

/* The workload type that owns a metric: the one whose type or one of
 * whose metric_sources is the part of name before a dot. *ret_len (may
 * be NULL): the length of that part with its dot. NULL when none. */
const struct wl_ops *wl_metric_owner(const char *name, size_t *ret_len);
/* The first row of the owner's table that name matches, else (with
 * prog_metrics) of wl_prog_metrics that the rest of name after the owner's
 * prefix matches; NULL when none. */
const struct wl_metric *wl_metric_find(const char *name);
/* wl_metrics_add with the unit the owner declares for name; data_unit
 * (what a program printed; NULL: none) when it declares none. */
int wl_metrics_add_declared(struct wl_metrics *m, const char *name, const char *data_unit, double value);

/* What a run gives the adapter to work with. */
struct wl_ctx {
	const struct job_workload *wl;
	const char *workdir; /* private scratch directory for this run; NULL in prepare/finish */
	const char *jobdir;  /* kept for the whole job (across runs and resumes), per workload */
	int64_t job_id;
};

struct wl_ops {
	const char *type;
	const char *summary;
	const struct wl_key *keys; /* NULL-name terminated */
	size_t opts_size;          /* the options its keys are parsed into (WL_OPT); 0: none */
	/* Optional: metric sources besides TYPE.* that are this workload's own
	 * and go in its part of the table (NULL-terminated, e.g. "mariadb"). */
	const char *const *metric_sources;
	/* The metrics it reports, with their facts (WL_METRIC rows, NULL-pattern
	 * terminated); NULL for none (command: its metrics are the command's). */
	const struct wl_metric *metrics;
	/* Labels built from its metrics' names drop the "TYPE." prefix: "vm.bogo_ops (ops)". */
	bool short_labels;
	/* Its helper program prints wl_prog_metrics too. */
	bool prog_metrics;
	/* Static checks, no side effects on the machine: programs installed,
	 * argument sanity. Reports through diags with the section's file/line. */
	int (*check)(const struct job_workload *wl, const char *file, struct diags *d);
	/* argv for execvp, allocated; freed with wl_argv_free. */
	int (*argv)(const struct wl_ctx *c, char ***ret_argv);
	/* Parse what the workload left behind (files in workdir, its stdout
	 * captured in workdir/stdout) into metrics. */
	int (*collect)(const struct wl_ctx *c, int exit_status, struct wl_metrics *m);
	/* Optional. Once per job before its first run (and again on resume;
	 * must be idempotent), outside any memcg and unsampled: fetch or
	 * unpack sources, prepare datasets into c->jobdir. An error fails the
	 * job before any run, with the message appended to err (empty on
	 * entry; the caller frees it). */
	int (*prepare)(const struct wl_ctx *c, struct strbuf *err);
	/* Optional. Before each run, outside the memcg and before sampling
	 * starts: reset state (a fresh copy of a dataset, dropped caches). An
	 * error records the run as failed with the message appended to err
	 * (empty on entry; the caller frees it). */
	int (*before)(const struct wl_ctx *c, struct strbuf *err);
	/* Optional. True when the run wants the page cache dropped after
	 * before() (the executor does it: only it writes to the machine). */
	bool (*drop_caches)(const struct job_workload *wl);
	/* Optional. When the job ends for good (done or failed), before
	 * c->jobdir is removed. */
	void (*finish)(const struct wl_ctx *c);
};

/* The path of a helper program kab ships (build/kab-NAME next to the kab
 * binary, or installed next to it, else on PATH). False when not found. */
bool wl_helper_path(const char *name, char *ret_path, size_t len);

const struct wl_ops *wl_find(const char *type);
/* NULL-terminated list of all types, for hints and docs. */
const struct wl_ops *const *wl_all(void);
void wl_argv_free(char **argv);
/* Splits a command line shell-style (quotes, backslashes; no expansion). */
int wl_split_args(const char *s, char ***ret_argv, size_t *ret_n);
/* Reads "kab-metric NAME VALUE UNIT" lines of a helper program's output,
 * keeping those whose NAME starts with prefix; returns how many. A
 * declared metric (wl_metric_find) keeps its declared unit. */
int wl_prog_metrics_read(FILE *f, const char *prefix, struct wl_metrics *m);
/* A copy of n argument strings as an argv for the argv op. */
int wl_argv_dup(const char *const *args, size_t n, char ***ret_argv);
/* The collect op of a helper program: its stdout's kab-metric lines with
 * prefix; -ENODATA when the required metric (its summary) is missing. */
int wl_prog_collect(const struct wl_ctx *c, const char *prefix, const char *required, struct wl_metrics *m);
