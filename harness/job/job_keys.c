/* Job files: one parser and one formatter per key type.
 *
 * The keys of each section are described once in job_keydefs[]
 * (job_keytab.c: name, type, where the value goes, range, default); that
 * table drives parsing, the defaults, the "did you mean" hints and the key
 * lists in messages (job_build.c) and the normalized form (job_print.c).
 * Each key type has one parser below, picked by job_key_set; it reads the
 * value from the text alone: no file, no machine.
 */
#include "harness/job/job.h"
#include "harness/job/job_priv.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define ERR(b, line, ...) diags_add((b)->d, (b)->file, (line), __VA_ARGS__)

int job_key_index(enum job_sec_kind sec, const char *name)
{
	for (size_t i = 0; i < job_n_keys; i++)
		if (job_keydefs[i].sec == sec && job_keydefs[i].type != KT_DOC && strcmp(job_keydefs[i].name, name) == 0)
			return (int)i;
	return -1;
}

const struct job_keydef *job_zswap_key(const char *param)
{
	for (size_t i = 0; i < job_n_keys; i++)
		if (job_keydefs[i].param && strcmp(job_keydefs[i].param, param) == 0)
			return &job_keydefs[i];
	return NULL;
}

bool job_is_known_key(const char *key)
{
	for (size_t i = 0; i < job_n_keys; i++)
		if (job_keydefs[i].type != KT_DOC && strcmp(job_keydefs[i].name, key) == 0)
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

void job_join_list(const char *const *v, size_t n, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", v[i]);
}

void job_list_types(char *buf, size_t len)
{
	const char *names[32];
	size_t n = 0;
	for (const struct wl_ops *const *o = wl_all(); *o && n < ARRAY_SIZE(names); o++)
		names[n++] = (*o)->type;
	job_join_list(names, n, buf, len);
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
bool job_key_fits(struct job_builder *b, int line, const char *key, const char *value, bool multiline)
{
	size_t width = job_print_key(NULL, key, value, multiline);
	if (width <= JOB_LINE_MAX)
		return true;
	ERR(b, line, "\"%s\" would print as a line of %zu characters, over the limit of %d: shorten %s", key, width,
	    JOB_LINE_MAX, multiline ? "its longest word" : "it");
	return false;
}

void job_bad_name(struct job_builder *b, int line, const char *what, const char *v)
{
	ERR(b, line, "bad %s \"%s\": use letters, digits, '.', '_' and '-', starting with a letter or digit, at most %d characters",
	    what, v, JOB_NAME_MAX);
}

/* One parser per key type: each reads e's value as k says into obj (at
 * k->off), reports a problem to b and returns false on one. */

static bool set_duration(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj)
{
	double *ret = (double *)((char *)obj + k->off);
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

static bool set_mem(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj)
{
	uint64_t *ret = (uint64_t *)((char *)obj + k->off);
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
char *job_source_path(struct job_builder *b, const char *v)
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
static size_t series_words(struct job_builder *b, const struct job_entry *e, unsigned *ret_version)
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
static bool set_source(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj)
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
		if (!(*at = literal ? strdup(v) : job_source_path(b, v)))
			b->oom = true;
		*line = e->line;
		char shown[4200];
		snprintf(shown, sizeof(shown), "%s", *at ? *at : v);
		if (strcmp(k->name, "series") == 0 && var->series_version)
			snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown), " v%u", var->series_version);
		return job_key_fits(b, e->line, k->name, shown, false);
	}
	struct strbuf all = { 0 };
	size_t words = 0;
	for (const char *p = v; *p;) {
		size_t n = strcspn(p, " \t\n");
		if (n && ++words <= JOB_LIST_MAX) {
			char one[4096];
			snprintf(one, sizeof(one), "%.*s", (int)n, p);
			char *path = job_source_path(b, one);
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
		ERR(b, e->line, "too many config.fragment files (%zu, at most %u): merge them into fewer fragments (doc/jobs.md, \"Budgets\")",
		    words, JOB_LIST_MAX);
		sb_free(&all);
		return false;
	}
	bool ok = job_key_fits(b, e->line, k->name, all.buf ? all.buf : "", true);
	sb_free(&all);
	return ok;
}

/* expect = METRIC OP NUMBER [, ...] (expect.VARIANT = ...: for that
 * variant's runs only): every bad comparison reported */
bool job_parse_expect(struct job_builder *b, const struct job_entry *e, const char *variant, struct job_expect **list,
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

static bool set_expect(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj)
{
	return job_parse_expect(b, e, NULL, (struct job_expect **)((char *)obj + k->off), (size_t *)((char *)obj + k->off_n));
}

static bool valid_string(struct job_builder *b, const struct job_keydef *k, const char *v, int line)
{
	switch (k->type) {
	case KT_UNIT:
		if (job_valid_unit(v))
			return true;
		ERR(b, line, "bad %s \"%s\": use at most 31 printable characters, no spaces, commas, quotes, ';' or '#' (e.g. ops/s, ms, pages)",
		    k->name, v);
		return false;
	case KT_TEXT: {
		bool printable = true;
		for (const char *p = v; *p; p++)
			printable = printable && ((unsigned char)*p >= 0x20 && *p != 0x7f);
		if (printable && strlen(v) <= (size_t)k->max)
			return true;
		ERR(b, line, "bad %s \"%s\": use one line of at most %.0f characters", k->name, v, k->max);
		return false;
	}
	case KT_NAME:
		if (job_valid_name(v))
			return true;
		job_bad_name(b, line, k->name, v);
		return false;
	case KT_WORD:
		for (const char *p = v; *p; p++)
			if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_') {
				ERR(b, line, "bad %s \"%s\": use letters, digits, '-' and '_'", k->name, v);
				return false;
			}
		return true;
	case KT_PATH:
		if (v[0] == '/' && job_path_ok(v + 1))
			return true;
		ERR(b, line, "bad %s \"%s\": expected an absolute path without \".\", \"..\" or empty components", k->name, v);
		return false;
	case KT_KERNEL:
		if (strcmp(v, "running") == 0 || strcmp(v, "build") == 0 || strcmp(v, "image") == 0)
			return true;
		ERR(b, line, "unknown kernel \"%s\" (choices: running, build, image)", v);
		return false;
	default:
		return true;
	}
}

static bool valid_type(struct job_builder *b, const char *v, int line)
{
	if (wl_find(v))
		return true;
	const char *names[32];
	size_t n = 0;
	char buf[256];
	for (const struct wl_ops *const *o = wl_all(); *o && n < ARRAY_SIZE(names); o++)
		names[n++] = (*o)->type;
	const char *hint = util_did_you_mean(v, names, n);
	job_list_types(buf, sizeof(buf));
	if (hint)
		ERR(b, line, "unknown workload type \"%s\" (did you mean \"%s\"? types: %s)", v, hint, buf);
	else
		ERR(b, line, "unknown workload type \"%s\" (types: %s)", v, buf);
	return false;
}

/* KT_NAME, KT_WORD, KT_PATH, KT_KERNEL, KT_TYPE, KT_UNIT, KT_TEXT */
static bool set_string(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj)
{
	char **at = (char **)((char *)obj + k->off);
	const char *v = e->value;
	if (!valid_string(b, k, v, e->line) || (k->type == KT_TYPE && !valid_type(b, v, e->line)))
		return false;
	if (!job_key_fits(b, e->line, k->name, v, false))
		return false;
	free(*at);
	if (!(*at = strdup(v)))
		b->oom = true;
	return true;
}

static bool set_uint(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj)
{
	uint64_t u;
	if (util_parse_u64(e->value, &u) < 0) {
		ERR(b, e->line, "bad %s \"%s\": expected a whole number from %.0f to %.0f", k->name, e->value, k->min, k->max);
		return false;
	}
	if ((double)u < k->min || (double)u > k->max) {
		ERR(b, e->line, "%s %s is out of range: expected %.0f to %.0f", k->name, e->value, k->min, k->max);
		return false;
	}
	*(unsigned *)((char *)obj + k->off) = (unsigned)u;
	return true;
}

static bool set_u64(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj)
{
	uint64_t u;
	if (util_parse_u64(e->value, &u) < 0) {
		ERR(b, e->line, "bad %s \"%s\": expected a whole number from 0 to %llu", k->name, e->value,
		    (unsigned long long)UINT64_MAX);
		return false;
	}
	*(uint64_t *)((char *)obj + k->off) = u;
	return true;
}

/* the id kab builds shows; it is only looked up, in kab's own database */
static bool set_id(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj)
{
	uint64_t u;
	int pr = util_parse_u64(e->value, &u);
	if (pr == -EINVAL) {
		ERR(b, e->line, "bad %s \"%s\": expected a build id, a positive whole number (kab builds lists them)", k->name,
		    e->value);
		return false;
	}
	if (pr < 0 || u < 1 || u > (uint64_t)INT64_MAX) {
		ERR(b, e->line, "%s %s is out of range: a build id is from 1 to %lld (kab builds lists them)", k->name, e->value,
		    (long long)INT64_MAX);
		return false;
	}
	*(int64_t *)((char *)obj + k->off) = (int64_t)u;
	return true;
}

static bool set_int(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj)
{
	int64_t i;
	if (util_parse_i64(e->value, &i) < 0) {
		ERR(b, e->line, "bad %s \"%s\": expected a whole number from %.0f to %.0f", k->name, e->value, k->min, k->max);
		return false;
	}
	if ((double)i < k->min || (double)i > k->max) {
		ERR(b, e->line, "%s %s is out of range: expected %.0f to %.0f", k->name, e->value, k->min, k->max);
		return false;
	}
	*(int *)((char *)obj + k->off) = (int)i;
	return true;
}

/* The choice a KT_ENUM key's stored value v is; NULL for none. */
static const char *enum_word(const struct job_keydef *k, int v)
{
	for (size_t c = 0; k->choices[c]; c++)
		if ((k->values ? k->values[c] : (int)c) == v)
			return k->choices[c];
	return NULL;
}

static bool set_enum(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj)
{
	const char *v = e->value;
	size_t n = 0;
	while (k->choices[n])
		n++;
	for (size_t c = 0; c < n; c++)
		if (strcmp(v, k->choices[c]) == 0) {
			*(int *)((char *)obj + k->off) = k->values ? k->values[c] : (int)c;
			return true;
		}
	char buf[256];
	const char *hint = util_did_you_mean(v, k->choices, n);
	job_join_list(k->choices, n, buf, sizeof(buf));
	if (hint)
		ERR(b, e->line, "unknown %s \"%s\" (did you mean \"%s\"? choices: %s)", k->name, v, hint, buf);
	else
		ERR(b, e->line, "unknown %s \"%s\" (choices: %s)", k->name, v, buf);
	return false;
}

static bool set_size(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj)
{
	uint64_t u;
	if (util_parse_size(e->value, &u) < 0) {
		ERR(b, e->line, "bad %s \"%s\": expected a size such as 512M or 2G (K, M, G, T: powers of 1024)", k->name, e->value);
		return false;
	}
	if ((double)u < k->min) {
		char buf[32];
		util_format_size((uint64_t)k->min, buf, sizeof(buf));
		ERR(b, e->line, "%s %s is below the minimum of %s", k->name, e->value, buf);
		return false;
	}
	*(uint64_t *)((char *)obj + k->off) = u;
	return true;
}

/* KT_METRICS, KT_FUNCTIONS: a list, and its count at k->off_n */
static bool set_list(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj)
{
	char ***list = (char ***)((char *)obj + k->off);
	size_t *n = (size_t *)((char *)obj + k->off_n);
	int r = k->type == KT_FUNCTIONS ? job_parse_function_list(b->file, e->line, e->value, list, n, b->d)
					 : job_parse_metric_list(b->file, e->line, e->value, list, n, b->d);
	if (r == -ENOMEM)
		b->oom = true;
	struct strbuf sb = { 0 };
	for (size_t m = 0; m < *n; m++)
		sb_printf(&sb, "%s%s", m ? " " : "", (*list)[m]);
	bool ok = r == 0 && job_key_fits(b, e->line, k->name, sb.buf ? sb.buf : "", true);
	sb_free(&sb);
	return ok;
}

static bool set_pairs(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj)
{
	return job_parse_pairs(b->file, e->line, e->value, obj, b->d);
}

static bool set_percent(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj)
{
	return job_parse_percent(b->file, e->line, k->name, e->value, (double *)((char *)obj + k->off), b->d);
}

typedef bool (*key_parser)(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj);

static const key_parser parsers[] = {
	[KT_NAME] = set_string,
	[KT_UINT] = set_uint,
	[KT_U64] = set_u64,
	[KT_ID] = set_id,
	[KT_INT] = set_int,
	[KT_ENUM] = set_enum,
	[KT_SIZE] = set_size,
	[KT_MEM] = set_mem,
	[KT_DURATION] = set_duration,
	[KT_METRICS] = set_list,
	[KT_FUNCTIONS] = set_list,
	[KT_WORD] = set_string,
	[KT_PATH] = set_string,
	[KT_KERNEL] = set_string,
	[KT_TYPE] = set_string,
	[KT_PAIRS] = set_pairs,
	[KT_UNIT] = set_string,
	[KT_TEXT] = set_string,
	[KT_PERCENT] = set_percent,
	[KT_SOURCE] = set_source,
	[KT_SOURCES] = set_source,
	[KT_EXPECT] = set_expect,
	[KT_TRACK] = job_key_set_track,
	[KT_DOC] = NULL,
};
_Static_assert(ARRAY_SIZE(parsers) == KT_DOC + 1, "a parser for every key type");

bool job_key_set(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj)
{
	return parsers[k->type] && parsers[k->type](b, k, e, obj);
}

#define AT(type, k, obj) ((type *)((char *)(obj) + (k)->off))
#define AT_CONST(type, k, obj) ((const type *)((const char *)(obj) + (k)->off))

void job_keys_init(struct job_builder *b, enum job_sec_kind sec, void *obj)
{
	for (size_t i = 0; i < job_n_keys; i++) {
		const struct job_keydef *k = &job_keydefs[i];
		if (k->sec != sec)
			continue;
		if ((k->flags & KF_UNSET) && (k->type == KT_PERCENT || k->type == KT_DURATION))
			*AT(double, k, obj) = k->unset;
		else if (k->flags & KF_UNSET)
			*AT(int, k, obj) = (int)k->unset;
		if (k->def) {
			struct job_entry e = { .key = (char *)k->name, .value = (char *)k->def };
			job_key_set(b, k, &e, obj);
		}
	}
}

static void format_list(const char *const *v, size_t n, struct strbuf *ret)
{
	for (size_t i = 0; i < n; i++)
		sb_printf(ret, "%s%s", i ? " " : "", v[i]);
}

bool job_key_format(const struct job_keydef *k, const void *obj, struct strbuf *ret)
{
	char buf[64];
	switch (k->type) {
	case KT_NAME:
	case KT_WORD:
	case KT_PATH:
	case KT_KERNEL:
	case KT_TYPE:
	case KT_UNIT:
	case KT_TEXT:
	case KT_SOURCE: {
		const char *v = *AT_CONST(char *, k, obj);
		if (v)
			sb_printf(ret, "%s", v);
		return v != NULL;
	}
	case KT_UINT: sb_printf(ret, "%u", *AT_CONST(unsigned, k, obj)); return true;
	case KT_U64: sb_printf(ret, "%llu", (unsigned long long)*AT_CONST(uint64_t, k, obj)); return true;
	case KT_ID: {
		int64_t id = *AT_CONST(int64_t, k, obj);
		if (id > 0)
			sb_printf(ret, "%lld", (long long)id);
		return id > 0;
	}
	case KT_INT: {
		int v = *AT_CONST(int, k, obj);
		if ((k->flags & KF_UNSET) && v == (int)k->unset)
			return false;
		sb_printf(ret, "%d", v);
		return true;
	}
	case KT_ENUM: {
		/* the first choice is the one a job leaves out, unless the key
		 * has an unset value of its own or is always printed */
		int v = *AT_CONST(int, k, obj);
		if ((k->flags & KF_UNSET) ? v == (int)k->unset : (!(k->flags & KF_ALWAYS) && v == 0))
			return false;
		const char *word = enum_word(k, v);
		if (word)
			sb_printf(ret, "%s", word);
		return word != NULL;
	}
	case KT_SIZE: {
		uint64_t v = *AT_CONST(uint64_t, k, obj);
		util_format_size(v, buf, sizeof(buf));
		if (v)
			sb_printf(ret, "%s", buf);
		return v != 0;
	}
	case KT_MEM: {
		uint64_t v = *AT_CONST(uint64_t, k, obj);
		job_format_mem(v, buf, sizeof(buf));
		if (v != JOB_MEM_UNSET)
			sb_printf(ret, "%s", buf);
		return v != JOB_MEM_UNSET;
	}
	case KT_DURATION: {
		double v = *AT_CONST(double, k, obj);
		job_format_duration(v, buf, sizeof(buf));
		if (v > 0)
			sb_printf(ret, "%s", buf);
		return v > 0;
	}
	case KT_PERCENT: {
		double v = *AT_CONST(double, k, obj);
		if ((k->flags & KF_UNSET) && v == k->unset)
			return false;
		job_format_percent(v, buf, sizeof(buf));
		sb_printf(ret, "%s", buf);
		return true;
	}
	case KT_METRICS:
	case KT_FUNCTIONS:
	case KT_SOURCES: {
		size_t n = *(const size_t *)((const char *)obj + k->off_n);
		format_list((const char *const *)*AT_CONST(char **, k, obj), n, ret);
		return n > 0;
	}
	case KT_PAIRS:
		job_format_pairs(obj, buf, sizeof(buf));
		sb_printf(ret, "%s", buf);
		return true;
	case KT_EXPECT:
	case KT_TRACK:
	case KT_DOC: return false;
	}
	return false;
}
