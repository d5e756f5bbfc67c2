/* Reports: the model behind `kab report` and `kab compare`, and its
 * formats. A report holds, per workload and metric, the per-run values of
 * every variant in execution order, paired by pair index (NAN where a run
 * is missing or not ok); report_analyze() runs the statistics (variant 0
 * against each other variant, Benjamini-Hochberg across the workload's
 * metrics) and report_render() prints one format. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "harness/report/metrics.h"
#include "harness/stats/stats.h"
#include "db/store.h"

struct store;
struct job;

enum report_format { REPORT_TEXT, REPORT_COVER_LETTER, REPORT_MARKDOWN, REPORT_JSON, REPORT_CSV };

struct report_opts {
	enum report_format format;
	bool ascii;  /* the ASCII fallback even in a UTF-8 locale */
};

struct report_metric {
	char *name;
	struct metric_info info;   /* label, unit, direction: table, then job or CSV overrides */
	bool primary;
	bool cover;                /* a cover-letter row: the job's [report] rows, else its primary
				    * and metrics = lists, else (and in kab compare) every row */
	double min_change_pct;     /* the job's [metric] min_change; < 0: the default */
	double equivalence_pct;    /* the job's [metric] equivalence; < 0: the default */
	int decimals;              /* of Before, After and Delta abs */
	double *values;            /* values[v * pairs + p]; NAN: no ok run */
	struct stats_desc *desc;   /* [variant] */
	struct stats_result *cmp;  /* [variant]: v against variant 0; [0] unused */
};

/* Where and how a stored workload ran (from its runs and the job). */
struct report_header {
	char type[32];
	char params[512];          /* "args: --vm 2 ..." */
	char kernel[128];
	int cpus, cgroup_version;
	uint64_t mem_total, swap_total;
	char swap_kind[16];
	char swap_devices[256];
	uint64_t memory_max, memory_high, memory_swap_max;  /* JOB_MEM_* conventions */
	double duration_s;         /* mean wall time of ok runs; NAN: none */
	unsigned workers;          /* stress-ng: sum of --STRESSOR N; 0: unknown */
	char alloc[32];            /* stress-ng --vm-bytes; "" */
	char timeout[32];          /* stress-ng --timeout; "" */
	/* settings that differed between the variants' runs besides their
	 * knobs: "transparent_hugepage/enabled (A: always, B: madvise)"; "" */
	char differs[1024];
	/* runs of the workload whose conditioning found the machine not idle */
	size_t not_idle, conditioned;
};

struct report_workload {
	char *name;
	size_t pairs;              /* pair slots */
	unsigned looks;
	char stop_reason[32];      /* "budget", "decided", "same", or the job's state */
	char budget[48];           /* "3", "adaptive 5..20 step 5" */
	struct report_metric *m;
	size_t n_metrics, cap_metrics;
	bool have_header;          /* stored jobs */
	struct report_header h;
	size_t *runs;              /* [v * RUN_STATUS_N + status]: run counts (stored jobs) */
	/* [variant], filled by report_analyze: the secondary metrics in the BH
	 * family (those whose test could reach p < alpha), and the primary
	 * metrics Holm adjusted among themselves (0 or 1: none adjusted) */
	size_t *family, *holm;
	bool oom_tolerate;         /* the workload's oom = tolerate: runs with memcg OOM kills count */
	size_t oom_counted;        /* ok runs (counted) during which the memcg OOM killer fired */
};

/* A patch of a build's series, as the builds table records it. */
struct report_patch {
	char *subject;             /* tags included: "[PATCH v2 1/3] mm: x" */
	char *message_id;          /* "" when none */
};

/* The kernel a variant boots (jobs that boot kernels): its build. */
struct report_kernel {
	int64_t build_id;          /* 0: none recorded for the variant */
	bool found;                /* the build is in the builds table */
	char kind[8];              /* build (kab built it) | image (a registered image file) */
	enum build_status status;  /* the build's, when found */
	char kernelrelease[128];
	char *tree, *base_ref;     /* NULL for an image */
	char base_sha[41];
	char *series;              /* as given: a path or "lore:ID vN"; NULL: no series */
	char *image;               /* kind image: the file the job named; NULL otherwise */
	struct report_patch *patches;  /* in the order applied */
	size_t n_patches;
	size_t boots, failed_boots;    /* the variant's boots that came up, and that failed */
	/* track = REMOTE BRANCH: the commit the job's run resolved it to
	 * (track "" when the variant tracks nothing or recorded no commit) */
	struct {
		char track[300], sha[41], subject[256], event[512];
		double date;
	} track;
};

/* A run and the boot it ran in. */
struct report_boot_run {
	int64_t id;
	size_t workload;           /* SIZE_MAX: none */
	int pair;
	enum run_status status;
	char kernel_release[128];  /* as the run recorded it */
	bool wrong;                /* not on its variant's kernel or boot: r->kernel_warnings says how */
};

/* One boot of a job that boots kernels and the runs it held. */
struct report_boot {
	size_t variant;            /* the boot's (the run's for a boot the job did not record) */
	int slot;                  /* the plan's boot, from 0; -1: not one of the job's recorded boots */
	char boot_id[64];
	int64_t build_id;
	char kernel_release[128];  /* what came up */
	struct report_boot_run *runs;
	size_t n_runs;
};

struct report {
	int64_t job_id;            /* 0: from a CSV file */
	char *title;               /* the job's name, or the CSV file's stem */
	char *source;              /* the CSV file; NULL for a stored job */
	enum job_status job_status;  /* stored jobs */
	char job_reason[256];
	char order[16];            /* "abba", ...; "" when unknown */
	struct job *job;           /* stored jobs: metric settings, primary metrics */
	char **variants;
	size_t n_variants;
	struct report_workload *w;
	size_t n_workloads;
	char **warnings;           /* what makes the comparison doubtful, shown first: "WARNING: ..." */
	size_t n_warnings;
	char **notes;              /* runs not counted, one line each */
	size_t n_notes;
	char **unavailable;        /* "metric: reason (N runs)": not measured on this machine */
	size_t n_unavailable;
	char **boots;              /* jobs that boot kernels: one line per variant, then each failed boot */
	size_t n_boots;
	struct report_kernel *kernels;  /* [variant]; NULL unless the job boots kernels */
	struct report_boot *run_boots;  /* the boots that came up or held runs, by variant, in boot order */
	size_t n_run_boots;
	char **kernel_warnings;    /* runs not on their variant's kernel or boot: must never happen */
	size_t n_kernel_warnings;
	unsigned runs_per_boot;    /* jobs that boot kernels: the job's; 0 otherwise */
	double alpha;
};

int report_new(const char *title, char *const *variants, size_t n_variants, struct report **ret);
void report_free(struct report *r);
int report_add_workload(struct report *r, const char *name, size_t pairs, struct report_workload **ret);
/* A metric with every value missing; its info comes from the metric
 * table (unit_hint for unknown metrics) and r->job's [metric] sections. */
int report_add_metric(struct report *r, struct report_workload *w, const char *name, const char *unit_hint,
		      struct report_metric **ret);
struct report_metric *report_find_metric(const struct report_workload *w, const char *name);
/* Whether the metric has runs and was 0 in every run of variant 0 and of
 * variant v: a counter that did not move, left out of the text tables. */
bool report_all_zero(const struct report_workload *w, const struct report_metric *m, size_t v);
int report_add_note(struct report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int report_add_warning(struct report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "oom = tolerate: 5 of 12 counted runs had memcg OOM kills" into buf. */
const char *report_oom_tolerated(const struct report *r, const struct report_workload *w, char *buf, size_t len);

/* Descriptive statistics, comparisons, q-values and verdicts. Metrics
 * whose decimals are < 0 get them from their values. */
int report_analyze(struct report *r);
int report_render(const struct report *r, const struct report_opts *o, FILE *out);

/* settings[v]: variant v's "key=value\n" lines (prov_settings; NULL or
 * "": none recorded, left out). The keys that differ between the
 * variants that have them, skipping those in skip (the variants' knob
 * paths), go to buf as "NAME (A: x, B: y); ..."; "" when all agree. */
void report_settings_differ(const char *const *settings, const char *const *names, size_t n, const char *const *skip,
			    size_t n_skip, char *buf, size_t len);

/* A stored job (report_store.c): -ENOENT if there is no such job. */
int report_load(struct store *st, int64_t job_id, struct report **ret);
/* Loads, analyzes and renders a stored job. */
int report_print_format(struct store *st, int64_t job_id, const struct report_opts *o, FILE *out);
/* The text format: what kab run prints at the end. */
int report_print(struct store *st, int64_t job_id, FILE *out);

/* "text", "cover-letter", "markdown", "json", "csv". */
int report_format_parse(const char *s, enum report_format *ret);
#define REPORT_FORMATS "text, cover-letter, markdown, json, csv"
