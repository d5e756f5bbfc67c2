/* Job files: parsing, validation and the normalized form. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "harness/base/direction.h"
#include "harness/job/expect.h"

struct diags;

enum job_order { JOB_ORDER_ABBA, JOB_ORDER_ALTERNATE, JOB_ORDER_RANDOM };
enum job_swap_kind { JOB_SWAP_NONE, JOB_SWAP_ZRAM, JOB_SWAP_FILE, JOB_SWAP_EXISTING };
enum job_knob_kind { JOB_KNOB_SYSCTL, JOB_KNOB_SYSFS };
enum job_tristate { JOB_KEEP, JOB_OFF, JOB_ON };
enum job_switch { JOB_SWITCH_KEXEC, JOB_SWITCH_REBOOT };
enum job_boot_failure { JOB_BOOTFAIL_FINISH, JOB_BOOTFAIL_ABORT };
/* oom = refuse: a run during which the memcg OOM killer fired is not
 * counted (oom-contaminated); tolerate: it is, and the report says so. */
enum job_oom { JOB_OOM_REFUSE, JOB_OOM_TOLERATE };
/* bisect = auto: kabd bisects each regression its nightly confirmation
 * confirms (doc/bisect.md); off: only when someone asks. */
enum job_bisect { JOB_BISECT_OFF, JOB_BISECT_AUTO };
/* bisect.boots: the boots a bisection of the job may spend on its step
 * jobs, by default. 300 covers a clear effect's bisection (100 to 200
 * boots measured at N 64..1024, doc/bisect.md) with room for a split. */
#define JOB_BISECT_BOOTS_DEFAULT 300u
#define JOB_BISECT_BOOTS_MAX 100000u

/* Budgets: the most one job may ask for, checked as it is read (doc/jobs.md,
 * "Budgets", gives the reasons). Each is far above any real job (the
 * examples: at most 2 KiB, 73 lines, 2 variants, 4 workloads, 4 metrics)
 * and low enough that reading, checking, storing and scheduling a job
 * stay small beside a run. A job over one is refused with its line. */
#define JOB_TEXT_MAX (256u * 1024)   /* bytes of job text; kabd's body limit too */
#define JOB_LINES_MAX 10000u
#define JOB_CONT_MAX 256u            /* continuation lines of one key */
#define JOB_VARIANTS_MAX 64u         /* [variant] sections */
#define JOB_WORKLOADS_MAX 64u        /* [workload] sections */
#define JOB_KNOBS_MAX 128u           /* knobs of one variant */
#define JOB_LIST_MAX 256u            /* names in one list: metrics, primary, fcount, config.fragment */
#define JOB_METRIC_SECTIONS_MAX 256u /* [metric] sections */
#define JOB_STEPS_MAX 50000u         /* runs: pairs x variants x workloads x runs_per_boot */

#define JOB_MEM_UNSET 0
#define JOB_MEM_MAX UINT64_MAX /* "max": no limit */
#define JOB_MEM_FLOOR (16ull << 20)
/* memory.swap.max = 0 (no swap for this cgroup) is stored as 1 byte, because
 * 0 means unset: the kernel rounds 1 byte down to zero pages on v2, and on
 * v1 memsw = memory.max + 1 rounds down to memory.max. The printer shows "0". */
#define JOB_MEM_ZERO 1ull

struct job_knob {
	enum job_knob_kind kind;
	char *name;  /* canonical: "vm.swappiness" (sysctl, dotted) or "/sys/module/zswap/parameters/enabled" */
	char *path;  /* the file: "/proc/sys/vm/swappiness" */
	char *value;
	int line;
};

struct job_variant {
	char *label;  /* section label: "A" in [variant A] */
	char *name;   /* name = ...; defaults to the label */
	/* "running"; "build": a kernel kab builds (kernels/build.h); "image":
	 * a kernel image file (image = PATH, initrd = PATH) */
	char *kernel;
	struct job_knob *knobs;
	size_t n_knobs;
	int line;
	/* kernel = build: a git tree at a base ref, a patch series (NULL:
	 * none; a path or lore:<message-id>), a config (running | defconfig |
	 * tinyconfig | PATH, default running) and fragments merged on top.
	 * Relative paths are made absolute from the job file's directory. */
	char *tree, *base, *series, *config;
	unsigned series_version;  /* series = SOURCE vN: the version to take; 0: the thread's only one */
	char **fragments;
	size_t n_fragments;
	int tree_line, base_line, series_line, config_line;
	/* kernel = build with track = REMOTE BRANCH, instead of base: the
	 * head of BRANCH on the tree's remote REMOTE, fetched and resolved
	 * each time the job runs (kernels/track.h); NULL: none. track_note:
	 * what kab check found (the head then, or that the remote could not
	 * be reached), printed as a comment; NULL: not looked up. */
	char *track_remote, *track_branch, *track_note;
	int track_line;
	/* kernel = build with build = ID: a build recorded earlier in the
	 * database the job runs with (kab builds lists them), booted as it is;
	 * then tree, base, series and config are NULL. 0: none. */
	int64_t build_id;
	int build_line;
	/* kernel = image: the image and initrd files; initrd also goes with
	 * kernel = build. cmdline: parameters added to this variant's boots. */
	char *image, *initrd, *cmdline;
	int image_line, initrd_line, cmdline_line;
};

struct job_param {   /* type-specific key of a workload section */
	char *key;
	char *value;
	int line;
};

struct job_workload {
	char *name;   /* [workload NAME] */
	char *type;   /* stress-ng | command | ... (workloads/wl.h) */
	uint64_t memory_max, memory_high, memory_swap_max; /* JOB_MEM_UNSET / JOB_MEM_MAX / bytes */
	double timeout_s;  /* 0: none */
	struct job_param *params;  /* e.g. args = ..., command = ... */
	size_t n_params;
	char **fcount;     /* kernel functions whose calls are counted (fcount = ...) */
	size_t n_fcount;
	enum job_oom oom;
	struct job_expect *expect;  /* expect = ...: what a counted run's metrics must show */
	size_t n_expect;
	/* the type's own keys parsed once, its options struct (wl_ops.opts_size);
	 * NULL: the type has none, or a value is bad (kab check says which) */
	void *opts;
	int line;
};

/* [metric NAME]: report settings for one metric, or for every metric with
 * a prefix (NAME ends in '*'). Unset fields keep the metric table's. */
struct job_metric {
	char *name;            /* "stress-ng.bogo_ops_per_s" or "vmstat.pgscan_*" */
	enum direction direction; /* DIRECTION_UNSET: the metric table's */
	char *unit;            /* NULL: unset */
	char *label;           /* for cover letters; NULL: unset */
	/* ratio = A / B: a metric of each run derived from two others, e.g.
	 * TLB shootdowns per page swapped out (only in a [metric ratio.NAME]) */
	char *ratio;                /* the key's text; NULL: not a ratio */
	char *ratio_of, *ratio_per; /* A and B, parsed from it */
	double min_change_pct; /* smallest change worth a verdict, percent; < 0: unset */
	double equivalence_pct; /* the margin of "same", percent (older name: epsilon); < 0: unset */
	int line;
};

/* pairs = adaptive MIN..MAX [step STEP]: look at MIN, MIN + STEP, ...,
 * MAX pairs and stop early once every primary metric is decided. */
struct job_adaptive {
	bool on;
	unsigned min, max, step;
};

struct job_swap {
	enum job_swap_kind kind;
	uint64_t size;     /* zram and file */
	char *path;        /* file; NULL: a fresh one in the job's directory */
	char *algorithm;   /* zram comp_algorithm, NULL: kernel default */
	int priority;      /* swapon priority, -1: default */
	/* zswap in front of the device, for the whole job (variants may still
	 * set zswap knobs of their own over these) */
	enum job_tristate zswap, zswap_shrinker;
	char *zswap_compressor;    /* NULL: keep */
	int zswap_max_pool;        /* percent, -1: keep */
	int zswap_accept_threshold; /* percent of the pool limit to fall below before storing again, -1: keep */
	struct job_knob *knobs;    /* the above as sysfs knobs, applied at job start */
	size_t n_knobs;
	int line;
};

/* [job]'s conditioning keys (doc/jobs.md, "Conditioning"): before each
 * run, caches dropped, memory compacted, an idle machine waited for;
 * for the whole job, the cpufreq governor and turbo set (journaled and
 * restored like knobs), the workload pinned to cpus and the sampler to
 * sampler_cpu. Defaults: everything off. */
enum job_cpufreq { JOB_CPUFREQ_KEEP, JOB_CPUFREQ_PERFORMANCE };
#define JOB_CPUS_MAX 1024 /* CPUs a cpus = list may name: 0 to JOB_CPUS_MAX - 1 */
struct job_condition {
	int drop_caches, compact;   /* 0 no, 1 yes */
	double wait_idle_pct;       /* others' CPU busy below this, in percent; <= 0: no wait */
	double wait_idle_max_s;     /* the bound of the wait */
	int cpufreq;                /* enum job_cpufreq */
	int turbo;                  /* enum job_tristate */
	char *cpus;                 /* "1", "0-3,6": normalized; NULL: not pinned */
	int sampler_cpu;            /* -1: not pinned */
	int drop_caches_line, compact_line, wait_idle_line, cpufreq_line, turbo_line, cpus_line, sampler_cpu_line;
};

struct job {
	char *file;     /* path as given, for diagnostics */
	char *text;     /* the file's text, stored with the job */
	char *name;
	unsigned pairs;      /* pairs to run: the fixed count, or the adaptive budget (max) */
	struct job_adaptive adaptive;
	enum job_order order;
	uint64_t seed;  /* for order = random */
	double interval_s;  /* sampler interval, default 1 */
	/* uncounted warm-up runs of each workload before its first pair
	 * (doc/statistics.md, rule 1): 1, the default, or 0 */
	unsigned warmup;
	char **metrics;     /* extra report rows; NULL-terminated; may be NULL */
	size_t n_metrics;
	char **primary;     /* primary metrics (names or PREFIX*); NULL-terminated; may be NULL */
	size_t n_primary;
	/* [report] rows = ...: the cover letter's rows (names or PREFIX*),
	 * instead of primary and metrics; NULL-terminated; may be NULL */
	char **report_rows;
	size_t n_report_rows;
	struct job_metric *metric_settings;  /* [metric NAME] sections, file order */
	size_t n_metric_settings;
	struct job_swap swap;
	struct job_condition cond;
	struct job_variant *variants;
	size_t n_variants;
	struct job_workload *workloads;
	size_t n_workloads;
	/* for series = lore:ID: a public-inbox https:// base URL or a local
	 * directory (made absolute) of ID/t.mbox.gz; NULL: none */
	char *archive;
	int archive_line;
	/* Jobs whose variants boot kernels (job_boots_kernels): each pair is
	 * one boot of each variant (boots = pairs), runs_per_boot runs of each
	 * workload inside a boot (collapsed to their median), switched with
	 * kexec or a one-shot reboot; a build that fails to come up
	 * boot_attempts times is boot-failed, and the job finishes without it
	 * or aborts. Booted kernels get panic=panic_s oops=panic. */
	unsigned runs_per_boot, boot_attempts, panic_s;
	enum job_switch switch_mode;
	char *switch_source;  /* the machine's settings file it came from; NULL: the job or the default */
	enum job_boot_failure on_boot_failure;
	int boots_line;
	/* bisect = off | auto, and the budget of boots of its bisections */
	enum job_bisect bisect;
	unsigned bisect_boots;
	/* bisect.revert, bisect.align: the controls of a bisection's confirmed
	 * culprit (doc/bisect.md, "Controls"); 0 no, 1 yes */
	int bisect_revert, bisect_align;
	/* lab.on: the machines a lab may run the job on, a selector
	 * (db/lab.h); what kab submit --lab sends when it names none. NULL:
	 * none (any machine) */
	char *lab_on;
	int lab_on_line;
};

/* Whether v is kernel = build with build = ID: a build recorded earlier. */
bool job_variant_recorded(const struct job_variant *v);
/* Whether any variant's kernel is a build. */
bool job_has_builds(const struct job *j);
/* Whether any variant boots a kernel of its own (build or image): then
 * every variant does, and the executor switches kernels between boots. */
bool job_boots_kernels(const struct job *j);
const char *job_switch_name(enum job_switch s);

/* Parses and validates a job without touching the machine beyond reads
 * (knob paths exist, programs installed). Every problem goes to d as
 * "file:line: message". Returns 0 with *ret set, or -EINVAL with d filled
 * (-EFBIG: over JOB_TEXT_MAX, refused before it is read; or another
 * -errno, e.g. file not readable, also reported in d). Time and memory are
 * linear in the text, which the budgets above bound. */
int job_parse_file(const char *path, struct job **ret, struct diags *d);
/* For kab build: the same without the checks of running a job that boots
 * kernels (that the machine can kexec, every variant naming its kernel). */
int job_parse_file_build(const char *path, struct job **ret, struct diags *d);
int job_parse_string(const char *file, const char *text, struct job **ret, struct diags *d);
/* Like the above but skips machine checks (paths, programs): for reading
 * a stored job back. */
int job_parse_string_nocheck(const char *file, const char *text, struct job **ret, struct diags *d);
/* The parser itself, which all of the above run: the job from its text
 * alone, reading no file, running nothing and looking at no machine (the
 * others then check the machine). Relative paths in the job are made
 * absolute from dir, an absolute directory. Bounded by the budgets above;
 * any NUL-terminated text may be given (tests/fuzz/fuzz_job.c). */
int job_parse_text(const char *file, const char *dir, const char *text, struct job **ret, struct diags *d);

struct store;
/* A variant's build = ID checked against st (the parser has no database):
 * the build is there, ok, of kind build, and its files are. Each problem
 * goes to d at the variant's build line; returns how many. */
size_t job_check_builds(const struct job *j, struct store *st, struct diags *d);

/* The confirmation of a change a nightly history showed: the night
 * before it (good) against the night after it (bad), as one paired job.
 * Its variants are variant v of each night, renamed; everything else
 * (swap, metrics, conditioning) is the bad night's, and so are its
 * workloads: those that showed the change, or all of them. A variant
 * that followed a branch is pinned to the commit its night ran (base),
 * so the confirmation compares those two commits and nothing newer. */
struct job_confirm {
	const char *name;                    /* the confirmation job's name */
	const char *good_name, *bad_name;    /* its two variants' names */
	const char *good_base, *bad_base;    /* the commits to pin; NULL: as the night had it */
	int64_t good_build, bad_build;       /* > 0: pin build = ID instead (a recorded build of the commit) */
	unsigned min_pairs, max_pairs, step; /* pairs = adaptive MIN..MAX step STEP */
	const char *const *workloads;        /* the workloads to run, by name; NULL: all */
	size_t n_workloads;
};
/* The confirmation's job text in *ret_text (malloc'd; it still goes through
 * the checks of any submitted job). Moves variant v out of good and bad,
 * which stay the caller's to free. -EINVAL: v is not a variant of both;
 * -ENOENT: no workload named is in the bad night's job. */
int job_confirmation(struct job *good, struct job *bad, size_t v, const struct job_confirm *c, char **ret_text);

/* The job-file key reference, from the key tables: format "md" (tables
 * between markers, as doc/jobs.md carries them) or "man" (kab(1)'s); -EINVAL
 * for another format. */
int job_print_keys(FILE *out, const char *format);
/* Prints the normalized job; it parses back to the same job. */
void job_print(const struct job *j, FILE *out);
void job_free(struct job *j);

const char *job_param(const struct job_workload *w, const char *key);  /* NULL if absent */
/* The key's entry, with its line; NULL if absent. */
const struct job_param *job_param_entry(const struct job_workload *w, const char *key);
/* Whether a metric name matches a pattern: exact, or PREFIX* by prefix. */
bool job_metric_matches(const char *pattern, const char *metric);
bool job_metric_is_primary(const struct job *j, const char *metric);
/* Whether a cover letter shows the metric: named by [report] rows when
 * the job has them, else by primary or metrics =; every metric when the
 * job names none. */
bool job_metric_is_cover_row(const struct job *j, const char *metric);
/* The settings for a metric, merged field by field from the [metric]
 * sections that match it (an exact name before the longest prefix). */
void job_metric_settings(const struct job *j, const char *metric, struct job_metric *ret);
/* [metric ratio.NAME]'s ratio = A / B: checks the name and splits the
 * text into ratio_of and ratio_per; errors go to d at file:line. */
int job_parse_ratio(const char *file, int line, struct job_metric *m, struct diags *d);
/* Adaptive looks: how many, and the pair count at look k (1-based). A
 * fixed job has one look, at pairs. */
unsigned job_looks(const struct job *j);
unsigned job_look_pairs(const struct job *j, unsigned look);
/* A unit as [metric] and kab compare take it: printable, no whitespace,
 * commas, quotes, ';' or '#', at most 31 characters ("ops/s", "%"). */
bool job_valid_unit(const char *s);
const char *job_order_name(enum job_order o);
const char *job_swap_kind_name(enum job_swap_kind k);
/* A CPU list ("1", "0-3,6"): each CPU below JOB_CPUS_MAX, ascending,
 * none twice. Sets mask[cpu] for each; returns the count, or -EINVAL
 * (with why) or -ERANGE (a CPU over the limit). */
int job_parse_cpus(const char *s, bool mask[JOB_CPUS_MAX], const char **ret_why);
/* Whether any conditioning key is set. */
bool job_conditioned(const struct job *j);
