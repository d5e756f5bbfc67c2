/* Internal to the job parser (job.c, job_keys.c, job_build.c,
 * job_check.c, job_load.c, job_print.c): the raw sections the reader collects, the
 * key table and the builder its parsers report to, what the parse hands
 * the machine checks, and helpers shared between parsing and printing so
 * the two cannot drift apart. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "harness/job/job.h"

enum job_sec_kind {
	JOB_SEC_JOB,
	JOB_SEC_SWAP,
	JOB_SEC_VARIANT,
	JOB_SEC_WORKLOAD,
	JOB_SEC_METRIC,
	JOB_SEC_REPORT,
	JOB_SEC_IGNORED, /* unknown or malformed header: already reported */
};

/* One "key = value" line, with its indented continuation lines joined. */
struct job_entry {
	char *key;
	char *value;
	size_t len, cap; /* of value, which continuation lines extend */
	int line;
	int cont_line; /* first continuation line, 0 if none */
	unsigned n_cont; /* continuation lines seen, up to JOB_CONT_MAX + 1 */
	char delim;    /* '=' or ':' as inih split it */
	bool broken;   /* cut short (line too long): reported, not interpreted */
};

struct job_section {
	enum job_sec_kind kind;
	char *label; /* NULL: none */
	bool unlabeled; /* [variant] or [workload] without its label: reported, skipped */
	enum job_sec_kind guess; /* for JOB_SEC_IGNORED: what a typo was likely meant to be */
	int line;
	struct job_entry *v;
	size_t n, cap;
};

/* Value ranges, shared by parsing, printing and the docs. */
#define JOB_PAIRS_MAX 1000u
#define JOB_INTERVAL_MIN 0.05
#define JOB_INTERVAL_MAX 60.0
#define JOB_TIMEOUT_MIN 0.1
#define JOB_TIMEOUT_MAX (7.0 * 86400)
#define JOB_SWAP_MIN (1ull << 20)
#define JOB_PRIORITY_MAX 32767
#define JOB_NAME_MAX 64
#define JOB_LOOKS_MAX 10u      /* adaptive: at most this many looks */
#define JOB_ADAPTIVE_MIN 2u    /* adaptive: the first look needs two pairs */
#define JOB_EPSILON_MAX 100.0  /* min_change and equivalence in percent */

/* The key table (job_keytab.c): each key of each section, once. */
enum job_ktype {
	KT_NAME, /* identifier-like: letters, digits, . _ - */
	KT_UINT, /* unsigned, in [min, max] */
	KT_U64,
	KT_ID,  /* a record's id in kab's database: 1 to INT64_MAX, as int64_t */
	KT_INT, /* int, in [min, max] */
	KT_ENUM,
	KT_SIZE,      /* bytes, at least min */
	KT_MEM,       /* bytes or "max", at least min (0 allowed when min is 0) */
	KT_DURATION,  /* seconds, in [min, max] */
	KT_METRICS,   /* space-separated metric names */
	KT_FUNCTIONS, /* space-separated kernel function names */
	KT_WORD,      /* letters, digits, _ - */
	KT_PATH,      /* absolute, normalized */
	KT_KERNEL,
	KT_TYPE,    /* a workload type from wl.h */
	KT_PAIRS,   /* N, or adaptive MIN..MAX [step STEP] (job_metric.c) */
	KT_UNIT,    /* a unit: printable, no whitespace */
	KT_TEXT,    /* one line of free text */
	KT_PERCENT, /* "2%" or "2", in (0, max] */
	KT_SOURCE,  /* one word: a path (relative to the job file) or a keyword */
	KT_SOURCES, /* space-separated KT_SOURCE words */
	KT_EXPECT,  /* METRIC OP NUMBER [, ...] (expect.h) */
	KT_TRACK,   /* REMOTE BRANCH (job_track.c) */
	KT_DOC,     /* no key of its own: a row of the reference only */
};

enum job_key_flag {
	KF_REQUIRED = 1u << 0,
	KF_MULTILINE = 1u << 1, /* accepts indented continuation lines, printed wrapped */
	KF_BOOT = 1u << 2,      /* [job]: only in jobs that boot kernels, and printed only there */
	KF_ALWAYS = 1u << 3,    /* printed even when not given: the normalized form spells it out */
	KF_ALIAS = 1u << 4,     /* another name for the row's value: read, listed, never printed or documented */
	KF_UNSET = 1u << 5,     /* .unset is stored before the section is read: "not given" */
	KF_UNLISTED = 1u << 6,  /* a KT_DOC row that "unknown key" messages do not name */
};

struct job;
struct job_keydef;
/* A key's own way of printing (job_print.c), for values a line and a
 * type do not say alone. */
typedef void job_key_printer(const struct job_keydef *k, const struct job *j, const void *obj, FILE *out);
/* Whether a key is printed in this job (NULL: whenever it is set). */
typedef bool job_key_shown(const struct job *j, const void *obj);

struct job_keydef {
	enum job_sec_kind sec;
	const char *name;
	enum job_ktype type;
	size_t off;      /* where the value goes in the section's object */
	size_t off_n;    /* lists: where the count goes */
	size_t off_line; /* where the key's line goes; 0: nowhere */
	double min, max;
	const char *const *choices;
	const int *values; /* KT_ENUM: the value each choice stores; NULL: its index */
	unsigned flags; /* enum job_key_flag */
	/* the default as a job would write it, read into the object before
	 * the section is; NULL: none */
	const char *def;
	double unset; /* with KF_UNSET */
	int rank;     /* the printer's order in a section: by rank, then the table's */
	job_key_shown *shown;
	job_key_printer *print; /* NULL: "key = value" from the type's formatter */
	/* [swap]: the zswap module parameter (under JOB_ZSWAP_PARAMS) the key
	 * sets, and for an enum the parameter's value for each choice */
	const char *param;
	const char *const *param_values;
	/* the reference (kab check --keys): the type and default as the
	 * reader is told them, and what the key does (Markdown) */
	const char *doc_type, *doc_default, *help;
};

/* The keys the code names, by their place at the head of job_keydefs;
 * the rows after these have no id (nothing but the table's walks reads
 * them), so a key is added with a row at the table's end. */
enum job_key_id {
	JK_JOB_NAME,
	JK_JOB_PAIRS,
	JK_JOB_ORDER,
	JK_JOB_SEED,
	JK_JOB_INTERVAL,
	JK_JOB_WARMUP,
	JK_JOB_METRICS,
	JK_JOB_PRIMARY,
	JK_SWAP_DEVICE,
	JK_SWAP_SIZE,
	JK_SWAP_PATH,
	JK_SWAP_ALGORITHM,
	JK_SWAP_PRIORITY,
	JK_SWAP_ZSWAP,
	JK_SWAP_ZSWAP_SHRINKER,
	JK_SWAP_ZSWAP_COMPRESSOR,
	JK_SWAP_ZSWAP_MAX_POOL,
	JK_VARIANT_NAME,
	JK_VARIANT_KERNEL,
	JK_VARIANT_TREE,
	JK_VARIANT_BASE,
	JK_VARIANT_TRACK,
	JK_VARIANT_SERIES,
	JK_VARIANT_CONFIG,
	JK_VARIANT_FRAGMENT,
	JK_VARIANT_BUILD,
	JK_VARIANT_IMAGE,
	JK_VARIANT_INITRD,
	JK_VARIANT_CMDLINE,
	JK_VARIANT_SYSCTL,
	JK_VARIANT_SYSFS,
	JK_JOB_ARCHIVE,
	JK_JOB_BOOTS,
	JK_JOB_RUNS_PER_BOOT,
	JK_JOB_SWITCH,
	JK_JOB_BOOT_ATTEMPTS,
	JK_JOB_ON_BOOT_FAILURE,
	JK_JOB_PANIC,
	JK_JOB_DROP_CACHES,
	JK_JOB_COMPACT,
	JK_JOB_WAIT_IDLE,
	JK_JOB_WAIT_IDLE_MAX,
	JK_JOB_CPUFREQ,
	JK_JOB_TURBO,
	JK_JOB_CPUS,
	JK_JOB_SAMPLER_CPU,
	JK_WORKLOAD_TYPE,
	JK_WORKLOAD_MEMORY_MAX,
	JK_WORKLOAD_MEMORY_HIGH,
	JK_WORKLOAD_MEMORY_SWAP_MAX,
	JK_WORKLOAD_TIMEOUT,
	JK_WORKLOAD_FCOUNT,
	JK_WORKLOAD_OOM,
	JK_WORKLOAD_EXPECT,
	JK_WORKLOAD_EXPECT_VARIANT,
	JK_METRIC_DIRECTION,
	JK_METRIC_UNIT,
	JK_METRIC_MIN_CHANGE,
	JK_METRIC_EQUIVALENCE,
	JK_METRIC_EPSILON,
	JK_METRIC_LABEL,
	JK_REPORT_ROWS,
	JK_JOB_BISECT,
	JK_JOB_BISECT_BOOTS,
	JK_JOB_BISECT_REVERT,
	JK_JOB_BISECT_ALIGN,
	JK_JOB_LAB_ON,
	JK_NAMED /* the count of the above */
};
/* Room for every key (job_keytab.c asserts it), for arrays by key. */
#define JOB_N_KEYS_MAX 128
extern const struct job_keydef job_keydefs[];
extern const size_t job_n_keys;
/* Its index in job_keydefs (a key a job may write), or -1. */
int job_key_index(enum job_sec_kind sec, const char *name);
/* A zswap module parameter's key, or NULL. */
const struct job_keydef *job_zswap_key(const char *param);

/* Printers of keys whose value takes more than the type's formatter
 * (job_print.c), and when keys are printed. */
job_key_printer job_print_switch, job_print_track, job_print_series, job_print_expect, job_print_ratio;
job_key_shown job_shown_random, job_shown_sized, job_shown_file, job_shown_zram, job_shown_waiting,
	job_shown_bisect_boots, job_shown_bisect_controls;

struct job_notes;
struct strbuf;

/* A job being built from its sections (job_build.c), and what the key
 * parsers (job_keys.c) report to. */
struct job_builder {
	struct job *j;
	const char *file;
	struct diags *d;
	struct job_notes *notes; /* NULL: no machine checks follow */
	bool oom;
	/* The section being built: keys valid beside job_keydefs (a workload
	 * type's), and the keys "did you mean" pointed to, which are then not
	 * reported missing as well. */
	const char *extra[32];
	size_t n_extra;
	const char *hinted[16];
	size_t n_hinted;
	int job_key_line[JOB_N_KEYS_MAX]; /* [job]'s keys, by index: where they were (0: absent) */
	int pairs_line;     /* [job]'s pairs (or boots), for the steps budget */
	/* the variant being built: knobs over JOB_KNOBS_MAX, and the first's line */
	size_t knobs_over;
	int knobs_over_line;
	const char *dir;    /* the job file's directory, absolute: for job_source_path */
};

/* track = REMOTE BRANCH into the variant obj (job_track.c); false on a
 * problem (reported to b). */
bool job_key_set_track(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj);
/* kab check of a variant's track: the remote is the tree's and has the
 * branch (job_track.c); the tree was checked first. Reports to d at the
 * track line; a remote that cannot be reached is a warning on stderr
 * and a note in v. */
void job_check_track(const char *file, struct job_variant *v, struct diags *d);
/* Parses e's value as k says and stores it in obj; false on a problem
 * (reported to b). */
bool job_key_set(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj);
/* A new object of section sec: each key's unset value, then its default. */
void job_keys_init(struct job_builder *b, enum job_sec_kind sec, void *obj);
/* The value a key holds in obj, as a job would write it; false when it
 * holds none (not given, or KF_UNSET's value). */
bool job_key_format(const struct job_keydef *k, const void *obj, struct strbuf *ret);
/* The normalized form must parse again, so what it prints must fit a
 * line: false (reported) when it would not. */
bool job_key_fits(struct job_builder *b, int line, const char *key, const char *value, bool multiline);
void job_bad_name(struct job_builder *b, int line, const char *what, const char *v);
/* A path as given, made absolute from the job file's directory; NULL:
 * out of memory. */
char *job_source_path(struct job_builder *b, const char *v);
/* expect = METRIC OP NUMBER [, ...] into *list (for variant's runs only,
 * unless NULL); every bad comparison reported. */
bool job_parse_expect(struct job_builder *b, const struct job_entry *e, const char *variant, struct job_expect **list,
		      size_t *n);
/* "a, b, c" into buf; the workload types so listed. */
void job_join_list(const char *const *v, size_t n, char *buf, size_t len);
void job_list_types(char *buf, size_t len);

/* What the parse found that decides which machine checks apply: a
 * section read without a problem is checked against the machine, one
 * with problems is not (its errors say what to fix first). Filled by
 * job_build, read by job_check_machine. */
struct job_notes {
	int job_line;      /* [job]'s header; 0: none */
	int switch_line;   /* [job]'s switch = ...; 0: not given (the machine's or the default) */
	bool swap_clean;   /* [swap] read without a problem */
	int swap_path_line, swap_algorithm_line;
	bool workload_clean[JOB_WORKLOADS_MAX];  /* by index in j->workloads */
	struct {
		int kernel_line;  /* kernel = ...; 0: not given */
		bool tree_ok;     /* tree = ... read without a problem */
	} variant[JOB_VARIANTS_MAX];  /* by index in j->variants */
};

/* Turns collected sections into *j from their text alone: no file is
 * read, nothing run, no machine looked at. Reports every problem to d.
 * dir: the absolute directory relative paths are made absolute from.
 * notes: NULL, or filled for job_check_machine, which then follows.
 * partial: the reader stopped before the end of the text (a budget), so
 * what is missing is not reported. Returns the number of problems found
 * (0: the job is good). */
size_t job_build(struct job *j, const char *file, const char *dir, struct job_section *secs, size_t n_secs,
		 bool build_only, bool partial, struct job_notes *notes, struct diags *d);

/* The parser's entry (job.c): the reader, job_build, then check when
 * not NULL (job_check_machine, passed in by job_load.c so that the
 * parser links without it), every problem sorted by line. Returns 0
 * with *ret set, or -errno with d filled. */
typedef void job_machine_check(struct job *j, const char *file, const struct job_notes *notes, bool build_only,
			       struct diags *d);
int job_parse_checked(const char *file, const char *dir, const char *text, bool build_only, job_machine_check *check,
		      struct job **ret, struct diags *d);
/* Refuses a text over JOB_TEXT_MAX before anything reads it: -EFBIG. */
int job_check_size(const char *file, size_t len, struct diags *d);
/* The directory of file, made absolute (symbolic links resolved), for
 * the job's relative paths: a look at the filesystem, so not the
 * parser's own. NULL: out of memory. */
char *job_dir(const char *file);

/* The checks of a built job against the machine (job_check.c): paths,
 * programs, the build user and git tree, kexec, machine.conf (whose
 * switch = ... it takes into j when the job names none). They only read.
 * Each problem goes to d at its line. */
void job_check_machine(struct job *j, const char *file, const struct job_notes *notes, bool build_only,
		       struct diags *d);

/* sampler_cpu = N on one of cpus = LIST: reported to d. Machine-free,
 * but kab check skips it when cpus names CPUs the machine lacks. */
void job_check_sampler_overlap(const char *file, const struct job_condition *c, struct diags *d);

/* running, defconfig, tinyconfig: config = words that are not paths. */
bool job_config_keyword(const char *v);

/* [swap]'s zswap keys set the zswap module's parameters, under: */
#define JOB_ZSWAP_PARAMS "/sys/module/zswap/parameters/"

/* Letters, digits, . _ -, starting with a letter or digit, short: for
 * names that end up in cgroup names, file names and reports. */
bool job_valid_name(const char *s);

/* Knob keys (job_knob.c). job_knob_parse reads a "sysctl NAME = V" or
 * "sysfs PATH = V" entry into *ret: 0 done, 1 not a knob key, -EINVAL
 * reported in d, -ENOMEM. */
int job_knob_parse(const char *file, const struct job_entry *e, struct job_knob *ret, struct diags *d);
void job_knob_clear(struct job_knob *k);
/* sysctl NAME -> /proc/sys path and canonical (dotted) name. -EXDEV: a
 * path outside /proc/sys; -EINVAL: a malformed name. */
int job_sysctl_target(const char *target, char **ret_path, char **ret_name);
/* A relative path with no empty, "." or ".." component and no spaces. */
bool job_path_ok(const char *rel);

/* Metric-related values (job_metric.c). Each reports its problems to d
 * as file:line and returns false on one. */
/* SOURCE.NAME, or SOURCE.PREFIX* for every metric with that prefix. */
bool job_valid_metric(const char *m);
/* A space-separated list of metrics into a NULL-terminated array (set
 * even when some words were bad). -ENOMEM, or the number of problems. */
/* "fcount = a b": kernel function names, each once. */
int job_parse_function_list(const char *file, int line, const char *value, char ***ret_v, size_t *ret_n,
			    struct diags *d);
int job_parse_metric_list(const char *file, int line, const char *value, char ***ret_v, size_t *ret_n,
			  struct diags *d);
/* "10" or "adaptive 5..20 [step 5]" into j->pairs and j->adaptive. */
bool job_parse_pairs(const char *file, int line, const char *value, struct job *j, struct diags *d);
/* "2%" or "2": a percentage in (0, JOB_EPSILON_MAX]. */
bool job_parse_percent(const char *file, int line, const char *key, const char *value, double *ret,
		       struct diags *d);
/* "10", or "adaptive 5..20 step 5". */
void job_format_pairs(const struct job *j, char *buf, size_t len);
/* "2%", "0.5%": read back exactly by job_parse_percent. */
void job_format_percent(double pct, char *buf, size_t len);

/* Machine checks (job_check.c): each reports to d and returns false on a
 * problem. They only read. */
struct machine_conf;
/* A knob: on the allow list (the defaults and mc's knobs.allow), an
 * existing, writable, regular file inside /proc/sys or /sys. */
bool job_check_knob(const char *file, const struct job_knob *k, const struct machine_conf *mc, struct diags *d);
bool job_check_swap(const char *file, const struct job_swap *s, int path_line, struct diags *d);
bool job_check_zswap_compressor(const char *file, int line, const char *name, struct diags *d);
bool job_check_zram_algorithm(const char *file, int line, const char *alg, struct diags *d);
bool job_check_workload(const char *file, const struct job_workload *w, struct diags *d);

/* Names of sections and keys, for "did you mean" and for telling an
 * indented key apart from a continuation line. */
bool job_is_known_key(const char *key);
const char *job_section_name(enum job_sec_kind k);

/* A continuation line whose text would read as "key = value" (or as a
 * comment) must not be produced by the printer. */
bool job_line_looks_like_key(const char *text);

/* The longest line inih reads whole (INI_MAX_LINE less "\n" and NUL). */
#define JOB_LINE_MAX 198

/* Prints "key = value" (wrapping a multiline value onto continuation
 * lines) to out, or only measures with out NULL; returns the widest line,
 * which must not exceed JOB_LINE_MAX for the output to parse again. */
size_t job_print_key(FILE *out, const char *key, const char *value, bool multiline);
size_t job_print_knob(FILE *out, const struct job_knob *k);

/* "10s", "0.1s", "2m", "1h": read back exactly by util_parse_duration. */
void job_format_duration(double s, char *buf, size_t len);
/* Rounds to the microsecond so printing and parsing agree. */
double job_round_duration(double s);
/* "max", "0" (memory.swap.max), or a size. */
void job_format_mem(uint64_t v, char *buf, size_t len);

/* Frees what a variant holds and zeroes it. */
void job_variant_clear(struct job_variant *v);
/* Frees and zeroes what a variant builds its kernel from: tree, base,
 * track, series and config with its fragments (build = ID takes none of
 * them). */
void job_variant_clear_source(struct job_variant *v);
/* The same for a workload. */
void job_workload_clear(struct job_workload *w);
