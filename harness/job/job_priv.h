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
#define JOB_PAIRS_DEFAULT 3u
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

/* The key table (job_keys.c): each common key of each section, once. */
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
};

struct job_keydef {
	enum job_sec_kind sec;
	const char *name;
	enum job_ktype type;
	size_t off;
	size_t off_n;   /* KT_METRICS: where the count goes */
	double min, max;
	const char *const *choices;
	bool required;
	bool multiline; /* accepts indented continuation lines */
};

#define JOB_N_KEYS 60
extern const struct job_keydef job_keydefs[JOB_N_KEYS];
/* Its index in job_keydefs, or -1. */
int job_key_index(enum job_sec_kind sec, const char *name);

/* [job]'s keys of jobs that boot kernels (job_build.c). */
#define JOB_BOOT_KEYS_N 6

struct job_notes;

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
	int boot_key_line[JOB_BOOT_KEYS_N]; /* [job]'s boot_keys, by index: where they were (0: absent) */
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

/* [swap]'s zswap keys and the zswap module parameter each sets (under
 * JOB_ZSWAP_PARAMS), in the order they become knobs. */
#define JOB_ZSWAP_PARAMS "/sys/module/zswap/parameters/"
struct job_zswap_key {
	const char *key, *param;
};
extern const struct job_zswap_key job_zswap_keys[4];

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
void job_print_metric_sections(const struct job *j, FILE *out);

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
