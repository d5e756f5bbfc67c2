/* The lab's machine selectors and tags: parsed with bounded cursors,
 * normalized, matched against a machine; no SQL (lab_queue.c stores a
 * selector as columns the claim compares). */
#include "db/lab.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const selector_props[] = { "host", "tag", "arch", "cgroup", "kexec", "cpus", "memory" };
#define SEL_SEPARATORS " \t,"

static bool is_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

/* a tag, an architecture or a host name: 1 to max word characters */
static bool is_word(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_word_char(s[i]))
			return false;
	return true;
}

static int tag_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* adds tag to a sorted set of at most LAB_TAGS_MAX; -E2BIG when full */
static int tag_add(char (*tags)[LAB_TAG_MAX + 1], size_t *n, const char *tag)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(tags[i], tag) == 0)
			return 0;
	if (*n >= LAB_TAGS_MAX)
		return -E2BIG;
	snprintf(tags[(*n)++], LAB_TAG_MAX + 1, "%s", tag);
	qsort(tags, *n, sizeof(tags[0]), tag_cmp);
	return 0;
}

/* The next word of text at *pos, separated by SEL_SEPARATORS, into buf:
 * 1, 0 at the end, -E2BIG when it does not fit (named in err). */
static int next_word(const char *text, size_t *pos, char *buf, size_t len, const char *what, struct strbuf *err)
{
	size_t p = *pos + strspn(text + *pos, SEL_SEPARATORS);
	size_t n = strcspn(text + p, SEL_SEPARATORS);
	if (n == 0)
		return 0;
	if (n >= len) {
		sb_printf(err, "%s \"%.40s...\": too long (at most %zu characters)", what, text + p, len - 1);
		return -E2BIG;
	}
	memcpy(buf, text + p, n);
	buf[n] = '\0';
	*pos = p + n;
	return 1;
}

int lab_tags_parse(const char *text, struct lab_machine *m, struct strbuf *err)
{
	m->n_tags = 0;
	char word[LAB_TAG_MAX + 1];
	size_t pos = 0;
	int r;
	while ((r = next_word(text, &pos, word, sizeof(word), "tag", err)) > 0) {
		if (!is_word(word, LAB_TAG_MAX)) {
			sb_printf(err, "bad tag \"%s\": letters, digits, '.', '_' and '-' only", word);
			return -EINVAL;
		}
		if (tag_add(m->tags, &m->n_tags, word) < 0) {
			sb_printf(err, "more than %d tags", LAB_TAGS_MAX);
			return -E2BIG;
		}
	}
	return r < 0 ? -EINVAL : 0;
}

enum sel_op { OP_GE, OP_LE, OP_GT, OP_LT, OP_EQ };
static const char *const op_words[] = { ">=", "<=", ">", "<", "=" };

/* Splits "cpus>=64" into name, operator and value (pointers into term). */
static int split_term(char *term, enum sel_op *ret_op, char **ret_value)
{
	size_t n = strcspn(term, "<>=");
	if (!term[n]) {
		*ret_op = OP_EQ;
		*ret_value = NULL;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(op_words); i++) {
		size_t w = strlen(op_words[i]);
		if (strncmp(term + n, op_words[i], w) == 0) {
			*ret_op = (enum sel_op)i;
			*ret_value = term + n + w;
			term[n] = '\0';
			return 0;
		}
	}
	return -EINVAL;
}

/* min and max (inclusive) narrowed by "OP v" on whole numbers */
static int narrow(int64_t *min, int64_t *max, enum sel_op op, int64_t v)
{
	switch (op) {
	case OP_GE: *min = v > *min ? v : *min; break;
	case OP_GT:
		if (v == INT64_MAX)
			return -ERANGE;
		*min = v + 1 > *min ? v + 1 : *min;
		break;
	case OP_LE: *max = v < *max ? v : *max; break;
	case OP_LT:
		if (v <= 0)
			return -ERANGE;
		*max = v - 1 < *max ? v - 1 : *max;
		break;
	case OP_EQ:
		*min = v > *min ? v : *min;
		*max = v < *max ? v : *max;
		break;
	}
	return 0;
}

static int set_word(char *dst, size_t len, const char *value, const char *term, const char *prop, struct strbuf *err)
{
	if (!value || !is_word(value, len - 1)) {
		sb_printf(err, "bad selector term \"%s\": %s=NAME, NAME of letters, digits, '.', '_' and '-'", term, prop);
		return -EINVAL;
	}
	if (*dst && strcmp(dst, value) != 0) {
		sb_printf(err, "selector terms %s=%s and %s=%s: no machine can be both", prop, dst, prop, value);
		return -EINVAL;
	}
	snprintf(dst, len, "%s", value);
	return 0;
}

/* The largest memory a selector names: 2^53 bytes, exact in a double. */
#define LAB_MEMORY_MAX (UINT64_C(1) << 53)

static int set_number(struct lab_selector *s, const char *prop, enum sel_op op, const char *value, const char *term, struct strbuf *err)
{
	bool memory = strcmp(prop, "memory") == 0;
	uint64_t v;
	int r = memory ? util_parse_size(value, &v) : util_parse_u64(value, &v);
	/* a size passes through a double: above 2^53 bytes (8 PiB) it would
	 * not format back to the value it parsed to (fuzz_selector found it) */
	if (r < 0 || v > (memory ? LAB_MEMORY_MAX : (uint64_t)INT64_MAX)) {
		sb_printf(err, "bad selector term \"%s\": %s", term,
			  memory ? "memory takes a size up to 8192T, e.g. memory>=64G" : "cpus takes a whole number, e.g. cpus>=64");
		return -EINVAL;
	}
	int64_t min = memory ? (int64_t)s->memory_min : s->cpus_min;
	int64_t max = memory ? (int64_t)s->memory_max : s->cpus_max;
	if (narrow(&min, &max, op, (int64_t)v) < 0 || min > max) {
		sb_printf(err, "selector term \"%s\": no machine can meet it with the terms before it", term);
		return -EINVAL;
	}
	if (memory) {
		s->memory_min = (uint64_t)min;
		s->memory_max = (uint64_t)max;
	} else {
		s->cpus_min = min;
		s->cpus_max = max;
	}
	return 0;
}

static int unknown_prop(const char *term, const char *prop, struct strbuf *err)
{
	const char *hint = util_did_you_mean(prop, selector_props, ARRAY_SIZE(selector_props));
	sb_printf(err,
		  "bad selector term \"%s\": unknown property \"%s\"%s%s%s (terms: host=NAME, tag=NAME, "
		  "arch=NAME, cgroup=1|2, kexec, cpus>=N, memory>=SIZE)",
		  term, prop, hint ? " (did you mean \"" : "", hint ? hint : "", hint ? "\"?)" : "");
	return -EINVAL;
}

static int set_cgroup(struct lab_selector *s, const char *value, const char *term, struct strbuf *err)
{
	int v = !strcmp(value, "1") || !strcmp(value, "v1") ? 1 : !strcmp(value, "2") || !strcmp(value, "v2") ? 2 : 0;
	if (!v) {
		sb_printf(err, "bad selector term \"%s\": cgroup=1 or cgroup=2", term);
		return -EINVAL;
	}
	if (s->cgroup && s->cgroup != v) {
		sb_printf(err, "selector term \"%s\": the terms before it want cgroup=%d", term, s->cgroup);
		return -EINVAL;
	}
	s->cgroup = v;
	return 0;
}

static int set_tag(struct lab_selector *s, const char *value, const char *term, struct strbuf *err)
{
	char tag[LAB_TAG_MAX + 1] = "";
	if (set_word(tag, sizeof(tag), value, term, "tag", err) < 0)
		return -EINVAL;
	if (tag_add(s->tags, &s->n_tags, tag) < 0) {
		sb_printf(err, "more than %d tag terms", LAB_TAGS_MAX);
		return -E2BIG;
	}
	return 0;
}

static int bad_term(const char *term, const char *why, struct strbuf *err)
{
	sb_printf(err, "bad selector term \"%s\": %s", term, why);
	return -EINVAL;
}

static int parse_term(struct lab_selector *s, char *term, struct strbuf *err)
{
	char shown[128];
	snprintf(shown, sizeof(shown), "%s", term);
	enum sel_op op;
	char *value;
	if (split_term(term, &op, &value) < 0 || (value && !*value))
		return bad_term(shown, "expected NAME, NAME=VALUE or NAME>=N", err);
	const char *prop = term;
	if (util_word_index(selector_props, ARRAY_SIZE(selector_props), prop) < 0)
		return unknown_prop(shown, prop, err);
	if (strcmp(prop, "kexec") == 0) {
		if (value)
			return bad_term(shown, "kexec takes no value", err);
		s->kexec = true;
		return 0;
	}
	if (!value)
		return bad_term(shown, "a value is missing, e.g. cpus>=64, arch=x86_64, tag=numa", err);
	if (strcmp(prop, "cpus") == 0 || strcmp(prop, "memory") == 0)
		return set_number(s, prop, op, value, shown, err);
	if (op != OP_EQ)
		return bad_term(shown, "only cpus and memory compare; the others take =, e.g. arch=x86_64", err);
	if (strcmp(prop, "host") == 0)
		return set_word(s->host, sizeof(s->host), value, shown, prop, err);
	if (strcmp(prop, "arch") == 0)
		return set_word(s->arch, sizeof(s->arch), value, shown, prop, err);
	if (strcmp(prop, "tag") == 0)
		return set_tag(s, value, shown, err);
	return set_cgroup(s, value, shown, err);
}

int lab_selector_parse(const char *text, struct lab_selector *ret, struct strbuf *err)
{
	struct lab_selector s = { .cpus_max = INT64_MAX, .memory_max = INT64_MAX };
	if (strlen(text) >= LAB_SELECTOR_MAX) {
		sb_printf(err, "selector too long (at most %d characters)", LAB_SELECTOR_MAX - 1);
		return -E2BIG;
	}
	char term[300];
	size_t pos = 0;
	int r;
	while ((r = next_word(text, &pos, term, sizeof(term), "selector term", err)) > 0)
		if ((r = parse_term(&s, term, err)) < 0)
			return r;
	if (r < 0)
		return -EINVAL;
	char normal[LAB_SELECTOR_MAX + 1];
	lab_selector_format(&s, normal, sizeof(normal));
	if (strlen(normal) >= LAB_SELECTOR_MAX) {
		sb_printf(err, "selector too long once normalized (at most %d characters)", LAB_SELECTOR_MAX - 1);
		return -E2BIG;
	}
	*ret = s;
	return 0;
}

/* " cpus>=64", " memory<=8G", " cpus=2": nothing when the range is whole */
static void format_range(struct strbuf *sb, const char *prop, int64_t min, int64_t max, bool size)
{
	char a[32], b[32];
	if (size) {
		util_format_size((uint64_t)min, a, sizeof(a));
		util_format_size((uint64_t)max, b, sizeof(b));
	} else {
		snprintf(a, sizeof(a), "%lld", (long long)min);
		snprintf(b, sizeof(b), "%lld", (long long)max);
	}
	if (min == max)
		sb_printf(sb, " %s=%s", prop, a);
	else {
		if (min > 0)
			sb_printf(sb, " %s>=%s", prop, a);
		if (max < INT64_MAX)
			sb_printf(sb, " %s<=%s", prop, b);
	}
}

void lab_selector_format(const struct lab_selector *s, char *buf, size_t len)
{
	struct strbuf sb = { 0 };
	if (*s->host)
		sb_printf(&sb, " host=%s", s->host);
	if (*s->arch)
		sb_printf(&sb, " arch=%s", s->arch);
	format_range(&sb, "cpus", s->cpus_min, s->cpus_max, false);
	format_range(&sb, "memory", (int64_t)s->memory_min, (int64_t)s->memory_max, true);
	if (s->cgroup)
		sb_printf(&sb, " cgroup=%d", s->cgroup);
	if (s->kexec)
		sb_puts(&sb, " kexec");
	for (size_t i = 0; i < s->n_tags; i++)
		sb_printf(&sb, " tag=%s", s->tags[i]);
	snprintf(buf, len, "%s", sb.buf ? sb.buf + 1 : "");
	sb_free(&sb);
}

static bool has_tag(const struct lab_machine *m, const char *tag)
{
	for (size_t i = 0; i < m->n_tags; i++)
		if (strcmp(m->tags[i], tag) == 0)
			return true;
	return false;
}

static bool in_range(uint64_t v, int64_t min, int64_t max)
{
	return v <= INT64_MAX && (int64_t)v >= min && (int64_t)v <= max;
}

/* format_range's terms without the leading space */
static void range_terms(struct strbuf *sb, const char *prop, int64_t min, int64_t max, bool size)
{
	struct strbuf t = { 0 };
	format_range(&t, prop, min, max, size);
	sb_puts(sb, t.buf ? t.buf + 1 : "");
	sb_free(&t);
}

/* The first term m fails, said into why (true); false when it meets them all. */
static bool explain_miss(const struct lab_selector *s, const struct lab_machine *m, struct strbuf *why)
{
	char have[32];
	uint64_t cpus = m->cpus < 0 ? 0 : (uint64_t)m->cpus;
	if (*s->host && strcmp(s->host, m->hostname) != 0)
		sb_printf(why, "host=%s: it is %s", s->host, m->hostname);
	else if (*s->arch && strcmp(s->arch, m->arch) != 0)
		sb_printf(why, "arch=%s: it is %s", s->arch, m->arch);
	else if (!in_range(cpus, s->cpus_min, s->cpus_max)) {
		range_terms(why, "cpus", s->cpus_min, s->cpus_max, false);
		sb_printf(why, ": it has %d", m->cpus);
	} else if (!in_range(m->memory, (int64_t)s->memory_min, (int64_t)s->memory_max)) {
		util_format_size(m->memory, have, sizeof(have));
		range_terms(why, "memory", (int64_t)s->memory_min, (int64_t)s->memory_max, true);
		sb_printf(why, ": it has %s", have);
	} else if (s->cgroup && s->cgroup != m->cgroup_version)
		sb_printf(why, "cgroup=%d: it runs cgroup v%d", s->cgroup, m->cgroup_version);
	else if (s->kexec && !m->can_kexec)
		sb_puts(why, "kexec: it cannot kexec");
	else {
		for (size_t i = 0; i < s->n_tags; i++)
			if (!has_tag(m, s->tags[i])) {
				sb_printf(why, "tag=%s: it has no such tag", s->tags[i]);
				return true;
			}
		return false;
	}
	return true;
}

bool lab_selector_match(const struct lab_selector *s, const struct lab_machine *m, struct strbuf *why)
{
	struct strbuf scratch = { 0 };
	bool missed = explain_miss(s, m, why ? why : &scratch);
	sb_free(&scratch);
	return !missed;
}
