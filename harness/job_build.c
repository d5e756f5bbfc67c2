/* Job files: from collected sections to a validated struct job.
 *
 * The common keys of each section are described once in keydefs[] (name,
 * type, where the value goes, range); that table drives parsing, the
 * "did you mean" hints and the key lists in messages. Knob keys
 * ("sysctl NAME", "sysfs PATH") and a workload type's own keys (from its
 * wl_ops) are handled beside it. Every problem is reported and parsing
 * goes on, so one run of `kab check` shows them all.
 */
#include "job.h"
#include "job_priv.h"
#include "util.h"
#include "wl.h"
#include "series.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum ktype {
	KT_NAME,     /* identifier-like: letters, digits, . _ - */
	KT_UINT,     /* unsigned, in [min, max] */
	KT_U64,
	KT_ID,       /* a record's id in kab's database: 1 to INT64_MAX, as int64_t */
	KT_INT,      /* int, in [min, max] */
	KT_ENUM,
	KT_SIZE,     /* bytes, at least min */
	KT_MEM,      /* bytes or "max", at least min (0 allowed when min is 0) */
	KT_DURATION, /* seconds, in [min, max] */
	KT_METRICS,  /* space-separated metric names */
	KT_FUNCTIONS, /* space-separated kernel function names */
	KT_WORD,     /* letters, digits, _ - */
	KT_PATH,     /* absolute, normalized */
	KT_KERNEL,
	KT_TYPE,     /* a workload type from wl.h */
	KT_PAIRS,    /* N, or adaptive MIN..MAX [step STEP] (job_metric.c) */
	KT_UNIT,     /* a unit: printable, no whitespace */
	KT_TEXT,     /* one line of free text */
	KT_PERCENT,  /* "2%" or "2", in (0, max] */
	KT_SOURCE,   /* one word: a path (relative to the job file) or a keyword */
	KT_SOURCES,  /* space-separated KT_SOURCE words */
	KT_EXPECT,   /* METRIC OP NUMBER [, ...] (expect.h) */
};

struct keydef {
	enum job_sec_kind sec;
	const char *name;
	enum ktype type;
	size_t off;
	size_t off_n;   /* KT_METRICS: where the count goes */
	double min, max;
	const char *const *choices;
	bool required;
	bool multiline; /* accepts indented continuation lines */
};

/* Indexed by the enums' values. */
static const char *const order_choices[] = { "abba", "alternate", "random", NULL };
static const char *const swap_choices[] = { "none", "zram", "file", "existing", NULL };
static const char *const direction_choices[] = { "higher", "lower", "neutral", NULL };
static const char *const tristate_choices[] = { "keep", "off", "on", NULL };
static const char *const switch_choices[] = { "kexec", "reboot", NULL };
static const char *const bootfail_choices[] = { "finish", "abort", NULL };
static const char *const yesno_choices[] = { "no", "yes", NULL };
static const char *const cpufreq_choices[] = { "keep", "performance", NULL };
static const char *const oom_choices[] = { "refuse", "tolerate", NULL };
#define JOB_LABEL_MAX 64

/* [job] keys of jobs that boot kernels, refused in a job that boots none. */
static const char *const boot_keys[] = { "boots", "runs_per_boot", "switch", "boot_attempts", "on_boot_failure", "panic" };
enum { BOOT_KEY_SWITCH = 2 };

#define KEY(s, n, t, o) .sec = (s), .name = (n), .type = (t), .off = (o)
static const struct keydef keydefs[] = {
	{ KEY(JOB_SEC_JOB, "name", KT_NAME, offsetof(struct job, name)), .required = true },
	{ KEY(JOB_SEC_JOB, "pairs", KT_PAIRS, 0) },
	{ KEY(JOB_SEC_JOB, "order", KT_ENUM, offsetof(struct job, order)), .choices = order_choices },
	{ KEY(JOB_SEC_JOB, "seed", KT_U64, offsetof(struct job, seed)) },
	{ KEY(JOB_SEC_JOB, "interval", KT_DURATION, offsetof(struct job, interval_s)),
	  .min = JOB_INTERVAL_MIN, .max = JOB_INTERVAL_MAX },
	{ KEY(JOB_SEC_JOB, "metrics", KT_METRICS, offsetof(struct job, metrics)), .off_n = offsetof(struct job, n_metrics),
	  .multiline = true },
	{ KEY(JOB_SEC_JOB, "primary", KT_METRICS, offsetof(struct job, primary)), .off_n = offsetof(struct job, n_primary),
	  .multiline = true },
	{ KEY(JOB_SEC_SWAP, "device", KT_ENUM, offsetof(struct job_swap, kind)), .choices = swap_choices, .required = true },
	{ KEY(JOB_SEC_SWAP, "size", KT_SIZE, offsetof(struct job_swap, size)), .min = JOB_SWAP_MIN },
	{ KEY(JOB_SEC_SWAP, "path", KT_PATH, offsetof(struct job_swap, path)) },
	{ KEY(JOB_SEC_SWAP, "algorithm", KT_WORD, offsetof(struct job_swap, algorithm)) },
	{ KEY(JOB_SEC_SWAP, "priority", KT_INT, offsetof(struct job_swap, priority)), .min = 0, .max = JOB_PRIORITY_MAX },
	{ KEY(JOB_SEC_SWAP, "zswap", KT_ENUM, offsetof(struct job_swap, zswap)), .choices = tristate_choices },
	{ KEY(JOB_SEC_SWAP, "zswap.shrinker", KT_ENUM, offsetof(struct job_swap, zswap_shrinker)), .choices = tristate_choices },
	{ KEY(JOB_SEC_SWAP, "zswap.compressor", KT_WORD, offsetof(struct job_swap, zswap_compressor)) },
	{ KEY(JOB_SEC_SWAP, "zswap.max_pool_percent", KT_INT, offsetof(struct job_swap, zswap_max_pool)), .min = 1, .max = 100 },
	{ KEY(JOB_SEC_VARIANT, "name", KT_NAME, offsetof(struct job_variant, name)) },
	{ KEY(JOB_SEC_VARIANT, "kernel", KT_KERNEL, offsetof(struct job_variant, kernel)) },
	{ KEY(JOB_SEC_VARIANT, "tree", KT_SOURCE, offsetof(struct job_variant, tree)) },
	{ KEY(JOB_SEC_VARIANT, "base", KT_SOURCE, offsetof(struct job_variant, base)) },
	{ KEY(JOB_SEC_VARIANT, "series", KT_SOURCE, offsetof(struct job_variant, series)) },
	{ KEY(JOB_SEC_VARIANT, "config", KT_SOURCE, offsetof(struct job_variant, config)) },
	{ KEY(JOB_SEC_VARIANT, "config.fragment", KT_SOURCES, offsetof(struct job_variant, fragments)),
	  .off_n = offsetof(struct job_variant, n_fragments), .multiline = true },
	{ KEY(JOB_SEC_VARIANT, "build", KT_ID, offsetof(struct job_variant, build_id)) },
	{ KEY(JOB_SEC_VARIANT, "image", KT_SOURCE, offsetof(struct job_variant, image)) },
	{ KEY(JOB_SEC_VARIANT, "initrd", KT_SOURCE, offsetof(struct job_variant, initrd)) },
	{ KEY(JOB_SEC_VARIANT, "cmdline", KT_TEXT, offsetof(struct job_variant, cmdline)), .max = 1024 },
	{ KEY(JOB_SEC_JOB, "archive", KT_TEXT, offsetof(struct job, archive)), .max = 180 },
	{ KEY(JOB_SEC_JOB, "boots", KT_UINT, offsetof(struct job, pairs)), .min = 1, .max = JOB_PAIRS_MAX },
	{ KEY(JOB_SEC_JOB, "runs_per_boot", KT_UINT, offsetof(struct job, runs_per_boot)), .min = 1, .max = 100 },
	{ KEY(JOB_SEC_JOB, "switch", KT_ENUM, offsetof(struct job, switch_mode)), .choices = switch_choices },
	{ KEY(JOB_SEC_JOB, "boot_attempts", KT_UINT, offsetof(struct job, boot_attempts)), .min = 1, .max = 10 },
	{ KEY(JOB_SEC_JOB, "on_boot_failure", KT_ENUM, offsetof(struct job, on_boot_failure)), .choices = bootfail_choices },
	{ KEY(JOB_SEC_JOB, "panic", KT_UINT, offsetof(struct job, panic_s)), .min = 1, .max = 3600 },
#define COND(f) offsetof(struct job, cond) + offsetof(struct job_condition, f)
	{ KEY(JOB_SEC_JOB, "drop_caches", KT_ENUM, COND(drop_caches)), .choices = yesno_choices },
	{ KEY(JOB_SEC_JOB, "compact", KT_ENUM, COND(compact)), .choices = yesno_choices },
	{ KEY(JOB_SEC_JOB, "wait_idle", KT_PERCENT, COND(wait_idle_pct)) },
	{ KEY(JOB_SEC_JOB, "wait_idle_max", KT_DURATION, COND(wait_idle_max_s)), .min = 1, .max = 3600 },
	{ KEY(JOB_SEC_JOB, "cpufreq", KT_ENUM, COND(cpufreq)), .choices = cpufreq_choices },
	{ KEY(JOB_SEC_JOB, "turbo", KT_ENUM, COND(turbo)), .choices = tristate_choices },
	{ KEY(JOB_SEC_JOB, "cpus", KT_TEXT, COND(cpus)), .max = 180 },
	{ KEY(JOB_SEC_JOB, "sampler_cpu", KT_INT, COND(sampler_cpu)), .min = 0, .max = JOB_CPUS_MAX - 1 },
#undef COND
	{ KEY(JOB_SEC_WORKLOAD, "type", KT_TYPE, offsetof(struct job_workload, type)), .required = true },
	{ KEY(JOB_SEC_WORKLOAD, "memory.max", KT_MEM, offsetof(struct job_workload, memory_max)), .min = (double)JOB_MEM_FLOOR },
	{ KEY(JOB_SEC_WORKLOAD, "memory.high", KT_MEM, offsetof(struct job_workload, memory_high)), .min = (double)JOB_MEM_FLOOR },
	{ KEY(JOB_SEC_WORKLOAD, "memory.swap.max", KT_MEM, offsetof(struct job_workload, memory_swap_max)), .min = 0 },
	{ KEY(JOB_SEC_WORKLOAD, "timeout", KT_DURATION, offsetof(struct job_workload, timeout_s)),
	  .min = JOB_TIMEOUT_MIN, .max = JOB_TIMEOUT_MAX },
	{ KEY(JOB_SEC_WORKLOAD, "fcount", KT_FUNCTIONS, offsetof(struct job_workload, fcount)),
	  .off_n = offsetof(struct job_workload, n_fcount), .multiline = true },
	{ KEY(JOB_SEC_WORKLOAD, "oom", KT_ENUM, offsetof(struct job_workload, oom)), .choices = oom_choices },
	{ KEY(JOB_SEC_WORKLOAD, "expect", KT_EXPECT, offsetof(struct job_workload, expect)),
	  .off_n = offsetof(struct job_workload, n_expect), .multiline = true },
	{ KEY(JOB_SEC_METRIC, "direction", KT_ENUM, offsetof(struct job_metric, direction)), .choices = direction_choices },
	{ KEY(JOB_SEC_METRIC, "unit", KT_UNIT, offsetof(struct job_metric, unit)) },
	{ KEY(JOB_SEC_METRIC, "epsilon", KT_PERCENT, offsetof(struct job_metric, epsilon_pct)) },
	{ KEY(JOB_SEC_METRIC, "label", KT_TEXT, offsetof(struct job_metric, label)), .max = JOB_LABEL_MAX },
	{ KEY(JOB_SEC_REPORT, "rows", KT_METRICS, offsetof(struct job, report_rows)),
	  .off_n = offsetof(struct job, n_report_rows), .multiline = true },
};
#define N_KEYS ARRAY_SIZE(keydefs)

/* What a section's keys turned out to be: line 0 when absent. */
struct seen {
	int line;
	bool ok;
};

struct builder {
	struct job *j;
	const char *file;
	struct diags *d;
	struct job_notes *notes; /* NULL: no machine checks follow */
	bool oom;
	/* The section being built: keys valid beside keydefs (a workload
	 * type's), and the keys "did you mean" pointed to, which are then not
	 * reported missing as well. */
	const char *extra[32];
	size_t n_extra;
	const char *hinted[16];
	size_t n_hinted;
	int boot_key_line[ARRAY_SIZE(boot_keys)]; /* [job]'s boot_keys, by index: where they were (0: absent) */
	int pairs_line;     /* [job]'s pairs (or boots), for the steps budget */
	/* the variant being built: knobs over JOB_KNOBS_MAX, and the first's line */
	size_t knobs_over;
	int knobs_over_line;
	const char *dir;    /* the job file's directory, absolute: for source_path */
};

#define ERR(b, line, ...) diags_add((b)->d, (b)->file, (line), __VA_ARGS__)

static int key_index(enum job_sec_kind sec, const char *name)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (keydefs[i].sec == sec && strcmp(keydefs[i].name, name) == 0)
			return (int)i;
	return -1;
}

static const struct seen *seen_of(const struct seen *seen, enum job_sec_kind sec, const char *name)
{
	int i = key_index(sec, name);
	return &seen[i < 0 ? 0 : i];
}

bool job_is_known_key(const char *key)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (strcmp(keydefs[i].name, key) == 0)
			return true;
	for (const struct wl_ops *const *o = wl_all(); *o; o++)
		for (const struct wl_key *k = (*o)->keys; k && k->name; k++)
			if (strcmp(k->name, key) == 0)
				return true;
	return false;
}

bool job_line_looks_like_key(const char *text)
{
	if (*text == ';' || *text == '#' || *text == '[')
		return true;
	size_t n = strcspn(text, " \t=:");
	if ((n == 6 && strncmp(text, "sysctl", 6) == 0) || (n == 5 && strncmp(text, "sysfs", 5) == 0))
		return true;
	const char *p = text + n;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '=' && *p != ':')
		return false;
	char word[64];
	if (n == 0 || n >= sizeof(word))
		return false;
	memcpy(word, text, n);
	word[n] = 0;
	return job_is_known_key(word);
}

/* "[variant A]" for messages. */
static const char *sec_title(const struct job_section *s, char *buf, size_t len)
{
	snprintf(buf, len, "[%s%s%s]", job_section_name(s->kind), s->label ? " " : "", s->label ? s->label : "");
	return buf;
}

static void join_list(const char *const *v, size_t n, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", v[i]);
}

static void list_types(char *buf, size_t len)
{
	const char *names[32];
	size_t n = 0;
	for (const struct wl_ops *const *o = wl_all(); *o && n < ARRAY_SIZE(names); o++)
		names[n++] = (*o)->type;
	join_list(names, n, buf, len);
}

bool job_valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > JOB_NAME_MAX || !isalnum((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
			return false;
	return true;
}

/* The normalized form must parse again, so what it prints must fit a line. */
static bool fits(struct builder *b, int line, const char *key, const char *value, bool multiline)
{
	size_t width = job_print_key(NULL, key, value, multiline);
	if (width <= JOB_LINE_MAX)
		return true;
	ERR(b, line, "\"%s\" would print as a line of %zu characters, over the limit of %d: shorten %s", key, width,
	    JOB_LINE_MAX, multiline ? "its longest word" : "it");
	return false;
}

static void bad_name(struct builder *b, int line, const char *what, const char *v)
{
	ERR(b, line, "bad %s \"%s\": use letters, digits, '.', '_' and '-', starting with a letter or digit, at most %d characters",
	    what, v, JOB_NAME_MAX);
}

static bool parse_duration_key(struct builder *b, const struct keydef *k, const struct job_entry *e, double *ret)
{
	double s;
	char lo[32], hi[32];
	job_format_duration(k->min, lo, sizeof(lo));
	job_format_duration(k->max, hi, sizeof(hi));
	if (util_parse_duration(e->value, &s) < 0) {
		ERR(b, e->line, "bad %s \"%s\": expected a duration such as 10s, 500ms, 2m or 1h", k->name, e->value);
		return false;
	}
	s = job_round_duration(s);
	if (s < k->min || s > k->max) {
		ERR(b, e->line, "%s %s is out of range: expected %s to %s", k->name, e->value, lo, hi);
		return false;
	}
	*ret = s;
	return true;
}

static bool parse_mem_key(struct builder *b, const struct keydef *k, const struct job_entry *e, uint64_t *ret)
{
	uint64_t v;
	if (strcmp(e->value, "max") == 0) {
		*ret = JOB_MEM_MAX;
		return true;
	}
	if (util_parse_size(e->value, &v) < 0) {
		ERR(b, e->line, "bad %s \"%s\": expected a size such as 256M or 2G, or \"max\"", k->name, e->value);
		return false;
	}
	if ((double)v < k->min) {
		char floor[32];
		util_format_size((uint64_t)k->min, floor, sizeof(floor));
		ERR(b, e->line, "%s %s is below the floor of %s: a smaller memcg cannot run a workload", k->name, e->value, floor);
		return false;
	}
	*ret = v == 0 ? JOB_MEM_ZERO : v;
	return true;
}

/* A path as given, made absolute from the job file's directory. */
static char *source_path(struct builder *b, const char *v)
{
	if (v[0] == '/' || strncmp(v, "lore:", 5) == 0)
		return strdup(v);
	char *p = NULL;
	if (asprintf(&p, "%s/%s", b->dir, v) < 0)
		return NULL;
	return p;
}

bool job_config_keyword(const char *v)
{
	return strcmp(v, "running") == 0 || strcmp(v, "defconfig") == 0 || strcmp(v, "tinyconfig") == 0;
}

/* series = SOURCE [vN]: the version into *ret_version (0: none), the
 * source's length returned; 0 (with the error) when the rest is not vN. */
static size_t series_words(struct builder *b, const struct job_entry *e, unsigned *ret_version)
{
	const char *v = e->value;
	size_t n = strcspn(v, " \t");
	const char *rest = v + n + strspn(v + n, " \t");
	uint64_t version = 0;
	*ret_version = 0;
	if (!*rest)
		return n;
	if ((rest[0] != 'v' && rest[0] != 'V') || !isdigit((unsigned char)rest[1]) || util_parse_u64(rest + 1, &version) < 0 ||
	    version < 1 || version > 999999) {
		ERR(b, e->line, "bad series \"%s\": expected SOURCE [vN]: an mbox, a directory of .patch files or lore:<message-id>, "
		    "then the version to take if there are several (series = lore:<message-id> v3)", v);
		return 0;
	}
	*ret_version = (unsigned)version;
	return n;
}

/* tree, base, series, config (one word each) and config.fragment (a list). */
static bool set_source(struct builder *b, const struct keydef *k, const struct job_entry *e, void *obj)
{
	struct job_variant *var = obj;
	const char *v = e->value;
	char word[4096];
	if (strcmp(k->name, "series") == 0) {
		size_t n = series_words(b, e, &var->series_version);
		if (!n)
			return false;
		snprintf(word, sizeof(word), "%.*s", (int)n, v);
		v = word;
	}
	for (const char *p = v; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || (k->type == KT_SOURCE && isspace((unsigned char)*p))) {
			ERR(b, e->line, "bad %s \"%s\": expected one word (a path or a ref), no spaces or control characters", k->name, v);
			return false;
		}
	int *line = strcmp(k->name, "tree") == 0 ? &var->tree_line : strcmp(k->name, "base") == 0 ? &var->base_line
		  : strcmp(k->name, "series") == 0 ? &var->series_line : strcmp(k->name, "image") == 0 ? &var->image_line
		  : strcmp(k->name, "initrd") == 0 ? &var->initrd_line : &var->config_line;
	if (k->type == KT_SOURCE) {
		char **at = (char **)((char *)obj + k->off);
		bool literal = strcmp(k->name, "base") == 0 || (strcmp(k->name, "config") == 0 && job_config_keyword(v));
		free(*at);
		if (!(*at = literal ? strdup(v) : source_path(b, v)))
			b->oom = true;
		*line = e->line;
		char shown[4200];
		snprintf(shown, sizeof(shown), "%s", *at ? *at : v);
		if (strcmp(k->name, "series") == 0 && var->series_version)
			snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown), " v%u", var->series_version);
		return fits(b, e->line, k->name, shown, false);
	}
	struct strbuf all = { 0 };
	size_t words = 0;
	for (const char *p = v; *p;) {
		size_t n = strcspn(p, " \t\n");
		if (n && ++words <= JOB_LIST_MAX) {
			char one[4096];
			snprintf(one, sizeof(one), "%.*s", (int)n, p);
			char *path = source_path(b, one);
			char **nf = realloc(var->fragments, (var->n_fragments + 1) * sizeof(*nf));
			if (!path || !nf) {
				free(path);
				b->oom = true;
				break;
			}
			var->fragments = nf;
			var->fragments[var->n_fragments++] = path;
			sb_printf(&all, "%s%s", all.len ? " " : "", path);
		}
		p += n;
		p += strspn(p, " \t\n");
	}
	if (!var->config_line)
		var->config_line = e->line;
	if (words > JOB_LIST_MAX) {
		ERR(b, e->line, "too many config.fragment files (%zu, at most %u): merge them into fewer fragments (README.md, \"Budgets\")",
		    words, JOB_LIST_MAX);
		sb_free(&all);
		return false;
	}
	bool ok = fits(b, e->line, k->name, all.buf ? all.buf : "", true);
	sb_free(&all);
	return ok;
}

/* Parses e's value as k says and stores it in obj; false on a problem. */
/* expect = METRIC OP NUMBER [, ...] (expect.VARIANT = ...: for that
 * variant's runs only): every bad comparison reported */
static bool parse_expect(struct builder *b, const struct job_entry *e, const char *variant, struct job_expect **list,
			 size_t *n)
{
	const char *cur = e->value;
	bool ok = true;
	for (;;) {
		struct job_expect x;
		char err[256];
		int r = expect_parse_next(&cur, &x, err, sizeof(err));
		if (r == 1)
			break;
		if (r == -ENOMEM) {
			b->oom = true;
			return false;
		}
		if (r < 0) {
			ERR(b, e->line, "%s", err);
			ok = false;
			continue;
		}
		x.line = e->line;
		if (variant && !(x.variant = strdup(variant))) {
			expect_clear(&x);
			b->oom = true;
			return false;
		}
		if (*n >= JOB_LIST_MAX) {
			expect_clear(&x);
			ERR(b, e->line, "more than %u comparisons in expect", JOB_LIST_MAX);
			return false;
		}
		struct job_expect *nv = realloc(*list, (*n + 1) * sizeof(*nv));
		if (!nv) {
			expect_clear(&x);
			b->oom = true;
			return false;
		}
		*list = nv;
		nv[(*n)++] = x;
	}
	if (ok && *n == 0) {
		ERR(b, e->line, "empty expect: give METRIC OP NUMBER, e.g. vmstat.pswpout > 0");
		return false;
	}
	return ok;
}

static bool set_expect(struct builder *b, const struct keydef *k, const struct job_entry *e, void *obj)
{
	return parse_expect(b, e, NULL, (struct job_expect **)((char *)obj + k->off), (size_t *)((char *)obj + k->off_n));
}

/* expect.VARIANT = ...: the variant is checked once all are read */
static bool workload_expect_variant(struct builder *b, const struct job_section *s, const struct job_entry *e,
				    struct job_workload *w)
{
	const char *variant = e->key + strlen("expect.");
	char title[128];
	sec_title(s, title, sizeof(title));
	if (!job_valid_name(variant)) {
		ERR(b, e->line, "bad key \"%s\" in %s: expect.VARIANT names a variant, e.g. expect.zswap-on", e->key, title);
		return true;
	}
	if (!e->broken && !*e->value) {
		ERR(b, e->line, "empty value for \"%s\" in %s", e->key, title);
		return true;
	}
	if (!e->broken)
		parse_expect(b, e, variant, &w->expect, &w->n_expect);
	return true;
}

/* Each expect.VARIANT names one of the job's variants. */
static void check_expect_variants(struct builder *b)
{
	struct job *j = b->j;
	for (size_t wi = 0; wi < j->n_workloads; wi++)
		for (size_t i = 0; i < j->workloads[wi].n_expect; i++) {
			const struct job_expect *x = &j->workloads[wi].expect[i];
			if (!x->variant || (i > 0 && j->workloads[wi].expect[i - 1].variant &&
					    strcmp(j->workloads[wi].expect[i - 1].variant, x->variant) == 0))
				continue;
			bool found = false;
			struct strbuf names = { 0 };
			const char *vnames[JOB_VARIANTS_MAX];
			size_t nv = 0;
			for (size_t v = 0; v < j->n_variants; v++) {
				found = found || (j->variants[v].name && strcmp(j->variants[v].name, x->variant) == 0);
				sb_printf(&names, "%s%s", v ? ", " : "", j->variants[v].name ? j->variants[v].name : "?");
				if (j->variants[v].name && nv < JOB_VARIANTS_MAX)
					vnames[nv++] = j->variants[v].name;
			}
			const char *hint = found ? NULL : util_did_you_mean(x->variant, vnames, nv);
			if (!found && hint)
				ERR(b, x->line, "expect.%s: the job has no variant named \"%s\" (did you mean \"%s\"? variants: %s)",
				    x->variant, x->variant, hint, names.buf ? names.buf : "none");
			else if (!found)
				ERR(b, x->line, "expect.%s: the job has no variant named \"%s\" (variants: %s)", x->variant, x->variant,
				    names.buf ? names.buf : "none");
			sb_free(&names);
		}
}

static bool set_value(struct builder *b, const struct keydef *k, const struct job_entry *e, void *obj)
{
	void *at = (char *)obj + k->off;
	const char *v = e->value;
	uint64_t u;
	int64_t i;
	char buf[256];

	switch (k->type) {
	case KT_NAME:
	case KT_WORD:
	case KT_PATH:
	case KT_KERNEL:
	case KT_TYPE:
	case KT_UNIT:
	case KT_TEXT:
		if (k->type == KT_UNIT && !job_valid_unit(v)) {
			ERR(b, e->line, "bad %s \"%s\": use at most 31 printable characters, no spaces, commas, quotes, ';' or '#' (e.g. ops/s, ms, pages)",
			    k->name, v);
			return false;
		}
		if (k->type == KT_TEXT) {
			bool printable = true;
			for (const char *p = v; *p; p++)
				printable = printable && ((unsigned char)*p >= 0x20 && *p != 0x7f);
			if (!printable || strlen(v) > (size_t)k->max) {
				ERR(b, e->line, "bad %s \"%s\": use one line of at most %.0f characters", k->name, v, k->max);
				return false;
			}
		}
		if (k->type == KT_NAME && !job_valid_name(v)) {
			bad_name(b, e->line, k->name, v);
			return false;
		}
		if (k->type == KT_WORD) {
			for (const char *p = v; *p; p++)
				if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_') {
					ERR(b, e->line, "bad %s \"%s\": use letters, digits, '-' and '_'", k->name, v);
					return false;
				}
		}
		if (k->type == KT_PATH && (v[0] != '/' || !job_path_ok(v + 1))) {
			ERR(b, e->line, "bad %s \"%s\": expected an absolute path without \".\", \"..\" or empty components", k->name, v);
			return false;
		}
		if (k->type == KT_KERNEL && strcmp(v, "running") != 0 && strcmp(v, "build") != 0 && strcmp(v, "image") != 0) {
			ERR(b, e->line, "unknown kernel \"%s\" (choices: running, build, image)", v);
			return false;
		}
		if (k->type == KT_TYPE && !wl_find(v)) {
			const char *names[32];
			size_t n = 0;
			for (const struct wl_ops *const *o = wl_all(); *o && n < ARRAY_SIZE(names); o++)
				names[n++] = (*o)->type;
			const char *hint = util_did_you_mean(v, names, n);
			list_types(buf, sizeof(buf));
			if (hint)
				ERR(b, e->line, "unknown workload type \"%s\" (did you mean \"%s\"? types: %s)", v, hint, buf);
			else
				ERR(b, e->line, "unknown workload type \"%s\" (types: %s)", v, buf);
			return false;
		}
		if (!fits(b, e->line, k->name, v, false))
			return false;
		free(*(char **)at);
		if (!(*(char **)at = strdup(v)))
			b->oom = true;
		return true;

	case KT_UINT:
	case KT_U64:
		if (util_parse_u64(v, &u) < 0) {
			if (k->type == KT_UINT)
				ERR(b, e->line, "bad %s \"%s\": expected a whole number from %.0f to %.0f", k->name, v, k->min, k->max);
			else
				ERR(b, e->line, "bad %s \"%s\": expected a whole number from 0 to %llu", k->name, v,
				    (unsigned long long)UINT64_MAX);
			return false;
		}
		if (k->type == KT_U64) {
			*(uint64_t *)at = u;
			return true;
		}
		if ((double)u < k->min || (double)u > k->max) {
			ERR(b, e->line, "%s %s is out of range: expected %.0f to %.0f", k->name, v, k->min, k->max);
			return false;
		}
		*(unsigned *)at = (unsigned)u;
		return true;

	case KT_ID: {
		/* the id kab builds shows; it is only looked up, in kab's own database */
		int pr = util_parse_u64(v, &u);
		if (pr == -EINVAL) {
			ERR(b, e->line, "bad %s \"%s\": expected a build id, a positive whole number (kab builds lists them)", k->name, v);
			return false;
		}
		if (pr < 0 || u < 1 || u > (uint64_t)INT64_MAX) {
			ERR(b, e->line, "%s %s is out of range: a build id is from 1 to %lld (kab builds lists them)", k->name, v,
			    (long long)INT64_MAX);
			return false;
		}
		*(int64_t *)at = (int64_t)u;
		return true;
	}

	case KT_INT:
		if (util_parse_i64(v, &i) < 0) {
			ERR(b, e->line, "bad %s \"%s\": expected a whole number from %.0f to %.0f", k->name, v, k->min, k->max);
			return false;
		}
		if ((double)i < k->min || (double)i > k->max) {
			ERR(b, e->line, "%s %s is out of range: expected %.0f to %.0f", k->name, v, k->min, k->max);
			return false;
		}
		*(int *)at = (int)i;
		return true;

	case KT_ENUM: {
		size_t n = 0;
		while (k->choices[n])
			n++;
		for (size_t c = 0; c < n; c++)
			if (strcmp(v, k->choices[c]) == 0) {
				*(int *)at = (int)c;
				return true;
			}
		const char *hint = util_did_you_mean(v, k->choices, n);
		join_list(k->choices, n, buf, sizeof(buf));
		if (hint)
			ERR(b, e->line, "unknown %s \"%s\" (did you mean \"%s\"? choices: %s)", k->name, v, hint, buf);
		else
			ERR(b, e->line, "unknown %s \"%s\" (choices: %s)", k->name, v, buf);
		return false;
	}

	case KT_SIZE:
		if (util_parse_size(v, &u) < 0) {
			ERR(b, e->line, "bad %s \"%s\": expected a size such as 512M or 2G (K, M, G, T: powers of 1024)", k->name, v);
			return false;
		}
		if ((double)u < k->min) {
			util_format_size((uint64_t)k->min, buf, sizeof(buf));
			ERR(b, e->line, "%s %s is below the minimum of %s", k->name, v, buf);
			return false;
		}
		*(uint64_t *)at = u;
		return true;

	case KT_MEM:
		return parse_mem_key(b, k, e, (uint64_t *)at);

	case KT_DURATION:
		return parse_duration_key(b, k, e, (double *)at);

	case KT_METRICS:
	case KT_FUNCTIONS: {
		char ***list = (char ***)at;
		size_t *n = (size_t *)((char *)obj + k->off_n);
		int r = k->type == KT_FUNCTIONS ? job_parse_function_list(b->file, e->line, v, list, n, b->d)
						 : job_parse_metric_list(b->file, e->line, v, list, n, b->d);
		if (r == -ENOMEM)
			b->oom = true;
		struct strbuf sb = { 0 };
		for (size_t m = 0; m < *n; m++)
			sb_printf(&sb, "%s%s", m ? " " : "", (*list)[m]);
		bool ok = r == 0 && fits(b, e->line, k->name, sb.buf ? sb.buf : "", true);
		sb_free(&sb);
		return ok;
	}

	case KT_PAIRS:
		return job_parse_pairs(b->file, e->line, v, obj, b->d);

	case KT_PERCENT:
		return job_parse_percent(b->file, e->line, k->name, v, (double *)at, b->d);

	case KT_SOURCE:
	case KT_SOURCES:
		return set_source(b, k, e, obj);

	case KT_EXPECT:
		return set_expect(b, k, e, obj);
	}
	return false;
}

static void note_hint(struct builder *b, const char *hint)
{
	if (b->n_hinted < ARRAY_SIZE(b->hinted))
		b->hinted[b->n_hinted++] = hint;
}

static bool was_hinted(const struct builder *b, const char *key)
{
	for (size_t i = 0; i < b->n_hinted; i++)
		if (strcmp(b->hinted[i], key) == 0)
			return true;
	return false;
}

static void unknown_key(struct builder *b, const struct job_section *s, const struct job_entry *e)
{
	if (diags_full(b->d)) {
		/* only counted: no hint to compute */
		ERR(b, e->line, "unknown key");
		return;
	}
	const char *cands[64];
	size_t n = 0;
	for (size_t i = 0; i < N_KEYS && n < ARRAY_SIZE(cands); i++)
		if (keydefs[i].sec == s->kind)
			cands[n++] = keydefs[i].name;
	for (size_t i = 0; i < b->n_extra && n < ARRAY_SIZE(cands); i++)
		cands[n++] = b->extra[i];
	char title[128], list[512], fixed[512];
	sec_title(s, title, sizeof(title));

	/* "sysclt vm.x": suggest the whole corrected key. */
	const char *sp = strpbrk(e->key, " \t");
	if (s->kind == JOB_SEC_VARIANT && sp) {
		static const char *const kinds[] = { "sysctl", "sysfs" };
		char word[64];
		size_t wl = (size_t)(sp - e->key);
		if (wl < sizeof(word)) {
			memcpy(word, e->key, wl);
			word[wl] = 0;
			const char *hint = util_did_you_mean(word, kinds, ARRAY_SIZE(kinds));
			if (hint) {
				snprintf(fixed, sizeof(fixed), "%s%s", hint, sp);
				ERR(b, e->line, "unknown key \"%s\" in %s (did you mean \"%s\"?)", e->key, title, fixed);
				return;
			}
		}
	}
	const char *hint = util_did_you_mean(e->key, cands, n);
	if (hint) {
		ERR(b, e->line, "unknown key \"%s\" in %s (did you mean \"%s\"?)", e->key, title, hint);
		note_hint(b, hint);
		return;
	}
	join_list(cands, n, list, sizeof(list));
	if (s->kind == JOB_SEC_VARIANT)
		ERR(b, e->line, "unknown key \"%s\" in %s (keys: name, kernel, tree, base, series, config, config.fragment, build, image, initrd, cmdline, sysctl NAME, sysfs PATH)", e->key, title);
	else
		ERR(b, e->line, "unknown key \"%s\" in %s (keys: %s)", e->key, title, list);
}

/* Hook for keys not in keydefs: returns false if it does not know key. */
typedef bool (*extra_key_fn)(struct builder *b, const struct job_section *s, const struct job_entry *e, void *obj);

/* Applies a section's entries to obj; fills seen[] for keydefs. */
static void apply_entries(struct builder *b, const struct job_section *s, void *obj, struct seen *seen,
			  extra_key_fn extra)
{
	char title[128];
	sec_title(s, title, sizeof(title));
	for (size_t i = 0; i < s->n; i++) {
		const struct job_entry *e = &s->v[i];
		int ki = key_index(s->kind, e->key);
		if (ki < 0) {
			if (!extra || !extra(b, s, e, obj))
				unknown_key(b, s, e);
			continue;
		}
		const struct keydef *k = &keydefs[ki];
		if (seen[ki].line) {
			ERR(b, e->line, "duplicate key \"%s\" in %s (first at line %d)", e->key, title, seen[ki].line);
			continue;
		}
		seen[ki].line = e->line;
		if (e->broken)
			continue;
		if (e->cont_line && !k->multiline) {
			ERR(b, e->cont_line, "indented line continues \"%s\" (line %d), which takes one line: remove the leading whitespace",
			    e->key, e->line);
			continue;
		}
		if (!*e->value) {
			ERR(b, e->line, "empty value for \"%s\" in %s", e->key, title);
			continue;
		}
		seen[ki].ok = set_value(b, k, e, obj);
	}
	for (size_t i = 0; i < N_KEYS; i++)
		if (keydefs[i].sec == s->kind && keydefs[i].required && !seen[i].line && !was_hinted(b, keydefs[i].name)) {
			if (keydefs[i].type == KT_TYPE) {
				char types[256];
				list_types(types, sizeof(types));
				ERR(b, s->line, "missing required key \"%s\" in %s (types: %s)", keydefs[i].name, title, types);
			} else {
				ERR(b, s->line, "missing required key \"%s\" in %s", keydefs[i].name, title);
			}
		}
}

/* archive: an https:// URL, or a local directory (relative to the job
 * file); plain http and other schemes are refused. */
static void check_archive(struct builder *b)
{
	struct job *j = b->j;
	if (!j->archive)
		return;
	if (!strstr(j->archive, "://") && j->archive[0] != '/') {
		char *abs = source_path(b, j->archive);
		if (!abs) {
			b->oom = true;
			return;
		}
		free(j->archive);
		j->archive = abs;
	}
	char why[1024];
	if (!kseries_archive_ok(j->archive, why, sizeof(why)))
		ERR(b, j->archive_line, "%s", why);
}

void job_check_sampler_overlap(const char *file, const struct job_condition *c, struct diags *d)
{
	bool mask[JOB_CPUS_MAX] = { 0 };
	const char *why = NULL;
	if (c->sampler_cpu < 0 || !c->cpus || job_parse_cpus(c->cpus, mask, &why) < 0 || !mask[c->sampler_cpu])
		return;
	diags_add(d, file, c->sampler_cpu_line,
		  "sampler_cpu = %d is one of cpus = %s: the sampler goes off the workload's CPUs; pick another", c->sampler_cpu,
		  c->cpus);
}

/* [job]'s conditioning keys, each together (job_check_machine checks
 * them against the machine: kab check runs where the job runs). */
static void check_condition(struct builder *b, const struct seen *seen)
{
	struct job_condition *c = &b->j->cond;
	c->drop_caches_line = seen_of(seen, JOB_SEC_JOB, "drop_caches")->line;
	c->compact_line = seen_of(seen, JOB_SEC_JOB, "compact")->line;
	c->wait_idle_line = seen_of(seen, JOB_SEC_JOB, "wait_idle")->line;
	c->cpufreq_line = seen_of(seen, JOB_SEC_JOB, "cpufreq")->line;
	c->turbo_line = seen_of(seen, JOB_SEC_JOB, "turbo")->line;
	c->cpus_line = seen_of(seen, JOB_SEC_JOB, "cpus")->line;
	c->sampler_cpu_line = seen_of(seen, JOB_SEC_JOB, "sampler_cpu")->line;
	const struct seen *idle_max = seen_of(seen, JOB_SEC_JOB, "wait_idle_max");
	if (idle_max->line && !c->wait_idle_line)
		ERR(b, idle_max->line, "wait_idle_max bounds wait_idle: give wait_idle = PERCENT too (wait_idle = 10%%)");
	if (c->cpus) {
		bool mask[JOB_CPUS_MAX] = { 0 };
		const char *why = NULL;
		if (job_parse_cpus(c->cpus, mask, &why) < 0)
			ERR(b, c->cpus_line, "bad cpus \"%s\": %s", c->cpus, why);
	}
	/* with the machine checks, after cpus is found to fit the machine */
	if (!b->notes)
		job_check_sampler_overlap(b->file, c, b->d);
}

static void build_job_section(struct builder *b, const struct job_section *s)
{
	struct seen seen[N_KEYS] = { 0 };
	apply_entries(b, s, b->j, seen, NULL);
	const struct seen *seed = seen_of(seen, JOB_SEC_JOB, "seed");
	const struct seen *order = seen_of(seen, JOB_SEC_JOB, "order");
	if (seed->line && order->ok && b->j->order != JOB_ORDER_RANDOM)
		ERR(b, seed->line, "seed applies only to order = random");
	if (seed->line && !order->line)
		ERR(b, seed->line, "seed applies only to order = random (the default order is abba)");
	const struct seen *pairs = seen_of(seen, JOB_SEC_JOB, "pairs");
	const struct seen *primary = seen_of(seen, JOB_SEC_JOB, "primary");
	if (pairs->ok && b->j->adaptive.on && !primary->line)
		ERR(b, pairs->line, "pairs = adaptive stops when every primary metric is decided: name them with primary = METRIC ... in [job]");
	const struct seen *boots = seen_of(seen, JOB_SEC_JOB, "boots");
	if (boots->line && pairs->line)
		ERR(b, boots->line, "give boots or pairs, not both: with kernel variants a pair is one boot of each variant");
	b->j->boots_line = boots->line;
	b->pairs_line = boots->line ? boots->line : pairs->line ? pairs->line : s->line;
	for (size_t i = 0; i < ARRAY_SIZE(boot_keys); i++)
		b->boot_key_line[i] = seen_of(seen, JOB_SEC_JOB, boot_keys[i])->line;
	b->j->archive_line = seen_of(seen, JOB_SEC_JOB, "archive")->line;
	check_archive(b);
	check_condition(b, seen);
}

/* [metric NAME]: report settings for a metric or a prefix of them. */
static void build_metric_section(struct builder *b, const struct job_section *s)
{
	struct job *j = b->j;
	struct job_metric *nm = realloc(j->metric_settings, (j->n_metric_settings + 1) * sizeof(*nm));
	if (!nm) {
		b->oom = true;
		return;
	}
	j->metric_settings = nm;
	struct job_metric *m = &j->metric_settings[j->n_metric_settings++];
	*m = (struct job_metric){ .name = strdup(s->label), .direction = JOB_DIR_UNSET, .epsilon_pct = -1, .line = s->line };
	if (!m->name)
		b->oom = true;
	if (!job_valid_metric(s->label))
		ERR(b, s->line, "bad metric \"%s\" in [metric %s]: expected SOURCE.NAME or SOURCE.PREFIX*, e.g. stress-ng.bogo_ops_per_s or vmstat.pgscan_*",
		    s->label, s->label);
	struct seen seen[N_KEYS] = { 0 };
	apply_entries(b, s, m, seen, NULL);
	if (s->n == 0)
		ERR(b, s->line, "[metric %s] sets nothing: give it direction, unit, epsilon or label, or remove it", s->label);
}

const struct job_zswap_key job_zswap_keys[4] = {
	{ "zswap", "enabled" },
	{ "zswap.shrinker", "shrinker_enabled" },
	{ "zswap.compressor", "compressor" },
	{ "zswap.max_pool_percent", "max_pool_percent" },
};

/* [swap] zswap = on, zswap.shrinker = on, …: sysfs knobs of the zswap
 * module, applied for the whole job like a variant's knobs. */
static void swap_zswap_knobs(struct builder *b, struct job_swap *sw, const struct seen *seen)
{
	static const char *const onoff[] = { NULL, "N", "Y" };
	char num[16];
	snprintf(num, sizeof(num), "%d", sw->zswap_max_pool);
	const char *value[ARRAY_SIZE(job_zswap_keys)] = {
		onoff[sw->zswap], onoff[sw->zswap_shrinker], sw->zswap_compressor, sw->zswap_max_pool > 0 ? num : NULL,
	};
	for (size_t i = 0; i < ARRAY_SIZE(job_zswap_keys); i++) {
		const struct seen *k = seen_of(seen, JOB_SEC_SWAP, job_zswap_keys[i].key);
		if (!value[i] || !k->ok)
			continue;
		char path[128];
		snprintf(path, sizeof(path), JOB_ZSWAP_PARAMS "%s", job_zswap_keys[i].param);
		struct job_knob *nk = realloc(sw->knobs, (sw->n_knobs + 1) * sizeof(*nk));
		if (!nk) {
			b->oom = true;
			return;
		}
		sw->knobs = nk;
		struct job_knob *kn = &nk[sw->n_knobs];
		*kn = (struct job_knob){ .kind = JOB_KNOB_SYSFS, .name = strdup(path), .path = strdup(path),
					 .value = strdup(value[i]), .line = k->line };
		if (!kn->name || !kn->path || !kn->value)
			b->oom = true;
		sw->n_knobs++;
	}
}

static void build_swap_section(struct builder *b, const struct job_section *s)
{
	struct job_swap *sw = &b->j->swap;
	struct seen seen[N_KEYS] = { 0 };
	size_t d0 = diags_count(b->d);
	sw->line = s->line;
	apply_entries(b, s, sw, seen, NULL);
	if (!seen_of(seen, JOB_SEC_SWAP, "device")->ok)
		return;
	const char *dev = job_swap_kind_name(sw->kind);
	bool sized = sw->kind == JOB_SWAP_ZRAM || sw->kind == JOB_SWAP_FILE;
	const struct seen *size = seen_of(seen, JOB_SEC_SWAP, "size");
	const struct seen *path = seen_of(seen, JOB_SEC_SWAP, "path");
	const struct seen *alg = seen_of(seen, JOB_SEC_SWAP, "algorithm");
	const struct seen *prio = seen_of(seen, JOB_SEC_SWAP, "priority");
	if (sized && !size->line)
		ERR(b, s->line, "missing required key \"size\" in [swap]: device = %s needs a size, e.g. size = 2G", dev);
	if (!sized && size->line)
		ERR(b, size->line, "size applies only to device = zram or file, not %s", dev);
	if (path->line && sw->kind != JOB_SWAP_FILE)
		ERR(b, path->line, "path applies only to device = file, not %s", dev);
	if (alg->line && sw->kind != JOB_SWAP_ZRAM)
		ERR(b, alg->line, "algorithm applies only to device = zram, not %s", dev);
	if (prio->line && !sized)
		ERR(b, prio->line, "priority applies only to device = zram or file, not %s", dev);
	/* no path: the executor makes a fresh file in the job's own directory */
	if (b->notes) {
		b->notes->swap_clean = diags_count(b->d) == d0;
		b->notes->swap_path_line = path->line ? path->line : s->line;
		b->notes->swap_algorithm_line = alg->line;
	}
	swap_zswap_knobs(b, sw, seen);
}

static bool variant_knob(struct builder *b, const struct job_section *s, const struct job_entry *e, void *obj)
{
	struct job_variant *v = obj;
	struct job_knob k;
	int r = job_knob_parse(b->file, e, &k, b->d);
	if (r == 1)
		return false;
	if (r == -ENOMEM)
		b->oom = true;
	if (r < 0)
		return true;
	if (v->n_knobs >= JOB_KNOBS_MAX) {
		/* counted, reported once by build_variant */
		if (!b->knobs_over++)
			b->knobs_over_line = e->line;
		job_knob_clear(&k);
		return true;
	}
	for (size_t i = 0; i < v->n_knobs; i++)
		if (strcmp(v->knobs[i].path, k.path) == 0) {
			char title[128];
			ERR(b, e->line, "%s sets %s twice (first at line %d)", sec_title(s, title, sizeof(title)), k.path,
			    v->knobs[i].line);
			job_knob_clear(&k);
			return true;
		}
	struct job_knob *nk = realloc(v->knobs, (v->n_knobs + 1) * sizeof(*nk));
	if (!nk) {
		job_knob_clear(&k);
		b->oom = true;
		return true;
	}
	v->knobs = nk;
	v->knobs[v->n_knobs++] = k;
	char key[4096];
	snprintf(key, sizeof(key), "%s %s", k.kind == JOB_KNOB_SYSCTL ? "sysctl" : "sysfs", k.name);
	fits(b, e->line, key, k.value, false);
	return true;
}

/* kernel = build needs tree and base, or the build = ID of one recorded
 * earlier, which fixed them; kernel = image an image; running takes none
 * of the keys of a kernel of its own. */
static void check_build_keys(struct builder *b, const struct job_section *s, struct job_variant *v, const struct seen *seen)
{
	/* what a build's inputs are, and so what a recorded build fixed */
	static const char *const input_keys[] = { "tree", "base", "series", "config", "config.fragment" };
	static const char *const own_keys[] = { "image", "initrd", "cmdline" };
	char title[128];
	sec_title(s, title, sizeof(title));
	const char *kernel = v->kernel ? v->kernel : "running";
	bool build = strcmp(kernel, "build") == 0, image = strcmp(kernel, "image") == 0;
	v->cmdline_line = seen_of(seen, JOB_SEC_VARIANT, "cmdline")->line;
	const struct seen *recorded = seen_of(seen, JOB_SEC_VARIANT, "build");
	v->build_line = recorded->line;
	for (size_t i = 0; i < ARRAY_SIZE(input_keys) && !build; i++) {
		const struct seen *k = seen_of(seen, JOB_SEC_VARIANT, input_keys[i]);
		if (k->line)
			ERR(b, k->line, "%s applies only to kernel = build, not kernel = %s", input_keys[i], kernel);
	}
	if (recorded->line && !build)
		ERR(b, recorded->line, "build applies only to kernel = build, not kernel = %s: it names a kernel kab built earlier (kab builds lists them)",
		    kernel);
	for (size_t i = 0; i < ARRAY_SIZE(own_keys) && !build && !image; i++) {
		const struct seen *k = seen_of(seen, JOB_SEC_VARIANT, own_keys[i]);
		if (k->line)
			ERR(b, k->line, "%s applies only to a variant that boots its own kernel (kernel = build or image), not kernel = running",
			    own_keys[i]);
	}
	if (v->cmdline && (strchr(v->cmdline, '\'') || strchr(v->cmdline, '"')))
		ERR(b, v->cmdline_line, "bad cmdline: quotes are not passed on to the kernel as written; give plain parameters");
	const struct seen *kline = seen_of(seen, JOB_SEC_VARIANT, "kernel");
	size_t vi = (size_t)(v - b->j->variants);
	if (b->notes && vi < ARRAY_SIZE(b->notes->variant)) {
		b->notes->variant[vi].kernel_line = kline->line;
		b->notes->variant[vi].tree_ok = seen_of(seen, JOB_SEC_VARIANT, "tree")->ok;
	}
	if (image) {
		if (seen_of(seen, JOB_SEC_VARIANT, "image")->line == 0)
			ERR(b, kline->line, "missing required key \"image\" in %s: kernel = image needs the kernel image to boot (image = /boot/vmlinuz-6.1.0-57-amd64)",
			    title);
		return;
	}
	if (!build)
		return;
	if (seen_of(seen, JOB_SEC_VARIANT, "image")->line)
		ERR(b, seen_of(seen, JOB_SEC_VARIANT, "image")->line, "image applies only to kernel = image: kernel = build %s",
		    recorded->line ? "boots the image of the build it names" : "makes its own");
	for (size_t i = 0; i < ARRAY_SIZE(input_keys) && recorded->line; i++) {
		const struct seen *k = seen_of(seen, JOB_SEC_VARIANT, input_keys[i]);
		if (k->line)
			ERR(b, k->line, "%s does not go with build (line %d): a recorded build's tree, base, series and config were fixed when it was built; remove %s, or remove build to build anew",
			    input_keys[i], recorded->line, input_keys[i]);
	}
	if (!recorded->line && !seen_of(seen, JOB_SEC_VARIANT, "tree")->line)
		ERR(b, kline->line, "missing required key \"tree\" in %s: kernel = build needs the git tree to build (tree = /path/to/linux), or the build = ID of one kab built earlier", title);
	if (!recorded->line && !seen_of(seen, JOB_SEC_VARIANT, "base")->line)
		ERR(b, kline->line, "missing required key \"base\" in %s: kernel = build needs the ref to build (base = v6.1)", title);
	if (!recorded->line && !v->config && !(v->config = strdup("running")))
		b->oom = true;
}

static void build_variant(struct builder *b, const struct job_section *s, struct util_strmap *names)
{
	struct job *j = b->j;
	struct job_variant *nv = realloc(j->variants, (j->n_variants + 1) * sizeof(*nv));
	if (!nv) {
		b->oom = true;
		return;
	}
	j->variants = nv;
	struct job_variant *v = &j->variants[j->n_variants++];
	*v = (struct job_variant){ .line = s->line, .label = strdup(s->label) };
	if (!v->label)
		b->oom = true;
	if (!job_valid_name(s->label))
		bad_name(b, s->line, "variant label", s->label);

	struct seen seen[N_KEYS] = { 0 };
	b->knobs_over = 0;
	apply_entries(b, s, v, seen, variant_knob);
	if (b->knobs_over)
		ERR(b, b->knobs_over_line,
		    "too many knobs in [variant %s] (%zu, at most %u): this is the first over the budget; set only the knobs the comparison is about (README.md, \"Budgets\")",
		    s->label, v->n_knobs + b->knobs_over, JOB_KNOBS_MAX);
	if (!v->name && !(v->name = strdup(s->label)))
		b->oom = true;
	if (!v->kernel && !(v->kernel = strdup("running")))
		b->oom = true;
	check_build_keys(b, s, v, seen);
	if (!v->name)
		return;
	const struct seen *name = seen_of(seen, JOB_SEC_VARIANT, "name");
	int first;
	int r = util_strmap_put(names, v->name, (int)(j->n_variants - 1), &first);
	if (r < 0)
		b->oom = true;
	else if (r == 1)
		ERR(b, name->line ? name->line : s->line, "duplicate variant name \"%s\" (also the name of [variant %s] at line %d)",
		    v->name, j->variants[first].label, j->variants[first].line);
}

static bool is_extra_key(const struct builder *b, const char *key)
{
	for (size_t i = 0; i < b->n_extra; i++)
		if (strcmp(b->extra[i], key) == 0)
			return true;
	return false;
}

/* A key of the workload's type. The type is looked up before the keys are
 * read (build_workload), so these are checked like the common ones. */
static bool workload_param(struct builder *b, const struct job_section *s, const struct job_entry *e, void *obj)
{
	struct job_workload *w = obj;
	char title[128];
	sec_title(s, title, sizeof(title));
	if (strncmp(e->key, "expect.", 7) == 0)
		return workload_expect_variant(b, s, e, w);
	if (b->n_extra && !is_extra_key(b, e->key))
		return false;
	if (!b->n_extra) {
		/* Unknown type: a key close to a common one is surely a typo. */
		const char *common[N_KEYS];
		size_t n = 0;
		for (size_t i = 0; i < N_KEYS; i++)
			if (keydefs[i].sec == JOB_SEC_WORKLOAD)
				common[n++] = keydefs[i].name;
		if (util_did_you_mean(e->key, common, n))
			return false;
	}
	for (size_t i = 0; i < w->n_params; i++)
		if (strcmp(w->params[i].key, e->key) == 0) {
			ERR(b, e->line, "duplicate key \"%s\" in %s (first at line %d)", e->key, title, w->params[i].line);
			return true;
		}
	if (!e->broken && !*e->value)
		ERR(b, e->line, "empty value for \"%s\" in %s", e->key, title);
	else if (!e->broken)
		fits(b, e->line, e->key, e->value, true);
	struct job_param *np = realloc(w->params, (w->n_params + 1) * sizeof(*np));
	if (!np) {
		b->oom = true;
		return true;
	}
	w->params = np;
	struct job_param *p = &w->params[w->n_params++];
	*p = (struct job_param){ .key = strdup(e->key), .value = strdup(e->value), .line = e->line };
	if (!p->key || !p->value)
		b->oom = true;
	return true;
}

static void build_workload(struct builder *b, const struct job_section *s)
{
	struct job *j = b->j;
	struct job_workload *nw = realloc(j->workloads, (j->n_workloads + 1) * sizeof(*nw));
	if (!nw) {
		b->oom = true;
		return;
	}
	j->workloads = nw;
	struct job_workload *w = &j->workloads[j->n_workloads++];
	*w = (struct job_workload){ .line = s->line, .name = strdup(s->label) };
	if (!w->name)
		b->oom = true;
	size_t d0 = diags_count(b->d);
	if (!job_valid_name(s->label))
		bad_name(b, s->line, "workload name", s->label);

	const struct wl_ops *ops = NULL;
	for (size_t i = 0; i < s->n && !ops; i++)
		if (strcmp(s->v[i].key, "type") == 0)
			ops = wl_find(s->v[i].value);
	for (const struct wl_key *k = ops ? ops->keys : NULL; k && k->name && b->n_extra < ARRAY_SIZE(b->extra); k++)
		b->extra[b->n_extra++] = k->name;

	struct seen seen[N_KEYS] = { 0 };
	apply_entries(b, s, w, seen, workload_param);
	char title[128];
	sec_title(s, title, sizeof(title));
	for (const struct wl_key *k = ops ? ops->keys : NULL; k && k->name; k++)
		if (k->required && !job_param(w, k->name) && !was_hinted(b, k->name))
			ERR(b, s->line, "missing required key \"%s\" in %s: %s", k->name, title, k->help ? k->help : ops->summary);

	const struct seen *high = seen_of(seen, JOB_SEC_WORKLOAD, "memory.high");
	if (high->ok && seen_of(seen, JOB_SEC_WORKLOAD, "memory.max")->ok && w->memory_high != JOB_MEM_MAX &&
	    w->memory_max != JOB_MEM_MAX && w->memory_high > w->memory_max) {
		char hi[32], mx[32];
		util_format_size(w->memory_high, hi, sizeof(hi));
		util_format_size(w->memory_max, mx, sizeof(mx));
		ERR(b, high->line, "memory.high %s is above memory.max %s: it would never throttle", hi, mx);
	}
	size_t wi = j->n_workloads - 1;
	if (b->notes && wi < ARRAY_SIZE(b->notes->workload_clean))
		b->notes->workload_clean[wi] = ops && diags_count(b->d) == d0;
}

/* [report]: how the report shows the job (rows = the cover letter's). */
static void build_report_section(struct builder *b, const struct job_section *s)
{
	struct seen seen[N_KEYS] = { 0 };
	apply_entries(b, s, b->j, seen, NULL);
}

/* [variant], [workload] and [metric] labels already seen, each with the
 * line of its section: duplicates found in linear time. */
struct labels {
	struct util_strmap of[JOB_SEC_IGNORED];
};

/* The line of an earlier section of s's kind with s's label (0: none),
 * after recording s. */
static int first_with_label(struct builder *b, struct labels *seen, const struct job_section *s)
{
	int first = 0;
	if (s->kind != JOB_SEC_VARIANT && s->kind != JOB_SEC_WORKLOAD && s->kind != JOB_SEC_METRIC)
		return 0;
	if (util_strmap_put(&seen->of[s->kind], s->label, s->line, &first) < 0)
		b->oom = true;
	return first;
}

/* pairs x variants x workloads x runs_per_boot, the rows of the schedule. */
static void check_steps_budget(struct builder *b)
{
	const struct job *j = b->j;
	uint64_t reps = job_boots_kernels(j) ? j->runs_per_boot : 1;
	uint64_t steps = (uint64_t)j->pairs * j->n_variants * j->n_workloads * reps;
	if (steps <= JOB_STEPS_MAX)
		return;
	ERR(b, b->pairs_line,
	    "the job has %llu runs (%u pairs x %zu variants x %zu workloads x %llu per boot), at most %u: lower pairs, or split the job (README.md, \"Budgets\")",
	    (unsigned long long)steps, j->pairs, j->n_variants, j->n_workloads, (unsigned long long)reps, JOB_STEPS_MAX);
}

size_t job_build(struct job *j, const char *file, const char *dir, struct job_section *secs, size_t n_secs,
		 bool build_only, bool partial, struct job_notes *notes, struct diags *d)
{
	struct builder b = { .j = j, .file = file, .d = d, .notes = notes, .dir = dir };
	struct labels labels = { 0 };
	struct util_strmap variant_names = { 0 };
	size_t d0 = diags_count(d);
	int job_line = 0, swap_line = 0, report_line = 0;
	size_t bad_variants = 0, bad_workloads = 0;
	bool job_guessed = false;

	j->pairs = JOB_PAIRS_DEFAULT;
	j->order = JOB_ORDER_ABBA;
	j->seed = 1;
	j->interval_s = 1.0;
	j->runs_per_boot = 1;
	j->boot_attempts = 2;
	j->panic_s = 10;
	j->cond = (struct job_condition){ .wait_idle_pct = -1, .wait_idle_max_s = 60, .sampler_cpu = -1 };
	j->swap = (struct job_swap){ .kind = JOB_SWAP_EXISTING, .priority = -1, .zswap_max_pool = -1 };

	for (size_t i = 0; i < n_secs; i++) {
		const struct job_section *s = &secs[i];
		int first = 0;
		if (s->kind == JOB_SEC_IGNORED) {
			/* [varaint B]: reported; count it so no "needs two variants" follows. */
			bad_variants += s->guess == JOB_SEC_VARIANT;
			bad_workloads += s->guess == JOB_SEC_WORKLOAD;
			job_guessed = job_guessed || s->guess == JOB_SEC_JOB;
			continue;
		}
		if (s->unlabeled) {
			bad_variants += s->kind == JOB_SEC_VARIANT;
			bad_workloads += s->kind == JOB_SEC_WORKLOAD;
			continue;
		}
		if (s->kind == JOB_SEC_JOB || s->kind == JOB_SEC_SWAP || s->kind == JOB_SEC_REPORT) {
			int *line = s->kind == JOB_SEC_JOB ? &job_line : s->kind == JOB_SEC_SWAP ? &swap_line : &report_line;
			first = *line;
			if (!first)
				*line = s->line;
		} else {
			first = first_with_label(&b, &labels, s);
		}
		if (first) {
			char title[128];
			ERR(&b, s->line, "duplicate section %s (first at line %d)", sec_title(s, title, sizeof(title)), first);
			bad_variants += s->kind == JOB_SEC_VARIANT;
			bad_workloads += s->kind == JOB_SEC_WORKLOAD;
			continue;
		}
		b.n_extra = b.n_hinted = 0;
		switch (s->kind) {
		case JOB_SEC_JOB: build_job_section(&b, s); break;
		case JOB_SEC_SWAP: build_swap_section(&b, s); break;
		case JOB_SEC_VARIANT: build_variant(&b, s, &variant_names); break;
		case JOB_SEC_WORKLOAD: build_workload(&b, s); break;
		case JOB_SEC_METRIC: build_metric_section(&b, s); break;
		case JOB_SEC_REPORT: build_report_section(&b, s); break;
		case JOB_SEC_IGNORED: break;
		}
	}

	if (notes) {
		notes->job_line = job_line;
		notes->switch_line = b.boot_key_line[BOOT_KEY_SWITCH];
	}
	if (job_boots_kernels(j) && !build_only) {
		for (size_t i = 0; i < j->n_variants; i++)
			if (strcmp(j->variants[i].kernel, "running") == 0)
				ERR(&b, j->variants[i].line,
				    "[variant %s] has kernel = running in a job whose other variants boot kernels: every variant names the kernel it boots (for the running one: kernel = image, image = /boot/vmlinuz-$(uname -r))",
				    j->variants[i].label);
	} else if (!job_boots_kernels(j)) {
		for (size_t i = 0; i < ARRAY_SIZE(boot_keys); i++)
			if (b.boot_key_line[i])
				ERR(&b, b.boot_key_line[i], "%s applies only to a job whose variants boot kernels (kernel = build or image)",
				    boot_keys[i]);
	}
	for (size_t i = 0; i < j->n_variants; i++)
		if (j->variants[i].series && strncmp(j->variants[i].series, "lore:", 5) == 0 && !j->archive)
			ERR(&b, j->variants[i].series_line,
			    "series = %s needs an archive to fetch it from: set archive = URL in [job] (e.g. https://lore.kernel.org/all)",
			    j->variants[i].series);

	if (!job_line && !job_guessed && !partial)
		ERR(&b, 0, "missing [job] section (it needs at least: name = ...)");
	if (j->n_variants + bad_variants < 2 && !partial)
		ERR(&b, 0, "a job needs at least two variants ([variant A], [variant B]); found %zu", j->n_variants);
	if (j->n_workloads + bad_workloads == 0 && !partial)
		ERR(&b, 0, "a job needs at least one [workload NAME] section");
	if (!bad_variants && !partial)
		check_expect_variants(&b);
	check_steps_budget(&b);
	if (b.oom)
		ERR(&b, 0, "out of memory while reading the job");
	for (size_t k = 0; k < ARRAY_SIZE(labels.of); k++)
		util_strmap_free(&labels.of[k]);
	util_strmap_free(&variant_names);
	return diags_count(d) - d0;
}
