/* The workload ops table: one adapter per workload type. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store.h"

struct diags;
struct job_workload;

/* A type-specific key a workload section may carry. */
struct wl_key {
	const char *name;
	const char *help;
	bool required;
};

/* The metrics a workload reports, with their units: the store's form of
 * a run's metric (db/store.h), which the executor adds its own to. */
struct wl_metrics {
	struct store_metric *v;
	size_t n, cap;
};
int wl_metrics_add(struct wl_metrics *m, const char *name, const char *unit, double value);
void wl_metrics_free(struct wl_metrics *m);
/* The first metric called name at index from or later; NULL when none. */
const struct store_metric *wl_metrics_find(const struct wl_metrics *m, size_t from, const char *name);

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
	/* Optional: metric sources besides TYPE.* that are this workload's own
	 * and go in its part of the table (NULL-terminated, e.g. "mariadb"). */
	const char *const *metric_sources;
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
	 * job before any run, with the message in err. */
	int (*prepare)(const struct wl_ctx *c, char *err, size_t errlen);
	/* Optional. Before each run, outside the memcg and before sampling
	 * starts: reset state (a fresh copy of a dataset, dropped caches). An
	 * error records the run as failed with the message in err. */
	int (*before)(const struct wl_ctx *c, char *err, size_t errlen);
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
 * keeping those whose NAME starts with prefix; returns how many. */
int wl_prog_metrics_read(FILE *f, const char *prefix, struct wl_metrics *m);
/* A copy of n argument strings as an argv for the argv op. */
int wl_argv_dup(const char *const *args, size_t n, char ***ret_argv);
/* The collect op of a helper program: its stdout's kab-metric lines with
 * prefix; -ENODATA when the required metric (its summary) is missing. */
int wl_prog_collect(const struct wl_ctx *c, const char *prefix, const char *required, struct wl_metrics *m);
