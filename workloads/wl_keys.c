/* A workload's keys from its table: parsing a value by the key's type,
 * checking it against the key's range with the one message each type has,
 * and the value or the table's default for the adapter. */
#include "workloads/wl.h"
#include "harness/job/job.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct wl_key *wl_key_find(const struct wl_key *keys, const char *name)
{
	for (const struct wl_key *k = keys; k && k->name; k++)
		if (strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

static bool in_range(const struct wl_key *k, uint64_t v)
{
	return v >= k->min && (k->max == 0 || v <= k->max);
}

int wl_key_parse_u64(const struct wl_key *k, const char *s, uint64_t *ret)
{
	uint64_t v;
	double secs;
	switch (k->type) {
	case WL_KEY_SIZE:
		if (util_parse_size(s, &v) < 0)
			return -EINVAL;
		if (!in_range(k, v) || (k->page && v % k->page) || (k->pow2 && (v & (v - 1))))
			return -ERANGE;
		break;
	case WL_KEY_COUNT:
		if (util_parse_u64(s, &v) < 0)
			return -EINVAL;
		if (!in_range(k, v))
			return -ERANGE;
		break;
	case WL_KEY_DURATION:
		if (util_parse_duration(s, &secs) < 0 || secs < 0 || secs > (double)UINT32_MAX)
			return -EINVAL;
		v = (uint64_t)secs;
		if ((double)v != secs)
			return -EINVAL; /* the programs count in whole seconds */
		if (!in_range(k, v))
			return -ERANGE;
		break;
	default:
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

int wl_key_parse_bool(const struct wl_key *k, const char *s, bool *ret)
{
	static const char *const yes[] = { "yes", "true", "on", "1" }, *const no[] = { "no", "false", "off", "0" };
	size_t n = k->bool_words ? ARRAY_SIZE(yes) : 1;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

const char *wl_key_choice(const struct wl_key *k, const char *s)
{
	for (size_t i = 0; s && k->choices && k->choices[i]; i++)
		if (strcmp(s, k->choices[i]) == 0)
			return k->choices[i];
	return NULL;
}

const char *wl_key_value(const struct job_workload *wl, const struct wl_key *k)
{
	const char *v = job_param(wl, k->name);
	return v ? v : k->def;
}

int wl_key_u64(const struct job_workload *wl, const struct wl_key *k, uint64_t *ret)
{
	const char *v = wl_key_value(wl, k);
	return v ? wl_key_parse_u64(k, v, ret) : -ENODATA;
}

int wl_key_bool(const struct job_workload *wl, const struct wl_key *k, bool *ret)
{
	const char *v = wl_key_value(wl, k);
	return v ? wl_key_parse_bool(k, v, ret) : -ENODATA;
}

/* Whole seconds as the message says them: "1 s", "7 days". */
static void format_seconds(uint64_t s, char *buf, size_t len)
{
	if (s >= 86400 && s % 86400 == 0)
		snprintf(buf, len, "%llu day%s", (unsigned long long)(s / 86400), s == 86400 ? "" : "s");
	else if (s >= 3600 && s % 3600 == 0)
		snprintf(buf, len, "%llu h", (unsigned long long)(s / 3600));
	else
		snprintf(buf, len, "%llu s", (unsigned long long)s);
}

/* What a good value of k is, from its type and range: "a whole number from
 * 1 to 10000", "a size from 4K to 1T in whole 4K pages, e.g. 256M". */
static void describe_range(const struct wl_key *k, struct strbuf *sb)
{
	char lo[32], hi[32];
	switch (k->type) {
	case WL_KEY_SIZE:
		util_format_size(k->min, lo, sizeof(lo));
		util_format_size(k->max, hi, sizeof(hi));
		sb_printf(sb, "must be a %s ", k->pow2 ? "power of two" : "size");
		if (k->max)
			sb_printf(sb, "from %s to %s", lo, hi);
		else
			sb_printf(sb, "of at least %s", lo);
		if (k->page) {
			util_format_size(k->page, lo, sizeof(lo));
			sb_printf(sb, " in whole %s pages", lo);
		}
		break;
	case WL_KEY_COUNT:
		if (k->max)
			sb_printf(sb, "must be a whole number from %llu to %llu", (unsigned long long)k->min,
				  (unsigned long long)k->max);
		else
			sb_printf(sb, "must be a whole number of at least %llu", (unsigned long long)k->min);
		break;
	case WL_KEY_DURATION:
		format_seconds(k->min, lo, sizeof(lo));
		format_seconds(k->max, hi, sizeof(hi));
		if (k->max)
			sb_printf(sb, "must be whole seconds from %s to %s", lo, hi);
		else
			sb_printf(sb, "must be whole seconds, at least %s", lo);
		break;
	case WL_KEY_ENUM:
		sb_printf(sb, "is not one of ");
		for (size_t i = 0; k->choices && k->choices[i]; i++)
			sb_printf(sb, "%s%s", i ? ", " : "", k->choices[i]);
		break;
	case WL_KEY_BOOL:
		sb_printf(sb, "is not yes or no");
		break;
	case WL_KEY_TEXT:
		break;
	}
	if (k->why)
		sb_printf(sb, "%s", k->why);
	if (k->example)
		sb_printf(sb, ", e.g. %s", k->example);
}

/* A close choice of an ENUM key for a misspelt value: " (did you mean "x"?)". */
static void describe_hint(const struct wl_key *k, const char *value, struct strbuf *sb)
{
	size_t n = 0;
	while (k->choices && k->choices[n])
		n++;
	const char *hint = k->type == WL_KEY_ENUM ? util_did_you_mean(value, k->choices, n) : NULL;
	if (hint)
		sb_printf(sb, " (did you mean \"%s\"?)", hint);
}

static bool value_ok(const struct wl_key *k, const char *v)
{
	uint64_t u;
	bool b;
	switch (k->type) {
	case WL_KEY_TEXT:
		return true;
	case WL_KEY_ENUM:
		return wl_key_choice(k, v) != NULL;
	case WL_KEY_BOOL:
		return wl_key_parse_bool(k, v, &b) == 0;
	default:
		return wl_key_parse_u64(k, v, &u) == 0;
	}
}

int wl_key_check(const struct job_workload *wl, const struct wl_key *k, const char *file, struct diags *d)
{
	const struct job_param *p = job_param_entry(wl, k->name);
	if (!p || value_ok(k, p->value))
		return 0;
	struct strbuf sb = { 0 };
	describe_range(k, &sb);
	describe_hint(k, p->value, &sb);
	diags_add(d, file, p->line, "workload \"%s\": %s \"%s\" %s", wl->name, k->name, p->value, sb.buf ? sb.buf : "");
	sb_free(&sb);
	return -EINVAL;
}

/* One key's value or default into opts at k->off, by its type. */
static int opt_parse(const struct job_workload *wl, const struct wl_key *k, void *opts)
{
	char *at = (char *)opts + k->off;
	const char *v = wl_key_value(wl, k);
	if (!v)
		return k->required ? -EINVAL : 0;
	switch (k->type) {
	case WL_KEY_TEXT: *(const char **)at = v; return 0;
	case WL_KEY_ENUM: return (*(const char **)at = wl_key_choice(k, v)) ? 0 : -EINVAL;
	case WL_KEY_BOOL: return wl_key_parse_bool(k, v, (bool *)at) < 0 ? -EINVAL : 0;
	default: return wl_key_parse_u64(k, v, (uint64_t *)at) < 0 ? -EINVAL : 0;
	}
}

int wl_opts_make(const struct wl_ops *ops, const struct job_workload *wl, void **ret)
{
	*ret = NULL;
	if (!ops || !ops->opts_size)
		return 0;
	void *opts = calloc(1, ops->opts_size);
	if (!opts)
		return -ENOMEM;
	for (const struct wl_key *k = ops->keys; k && k->name; k++)
		if (k->has_off && opt_parse(wl, k, opts) < 0) {
			free(opts);
			return -EINVAL;
		}
	*ret = opts;
	return 0;
}

int wl_keys_check(const struct job_workload *wl, const struct wl_key *keys, const char *file, struct diags *d)
{
	int r = 0;
	for (const struct wl_key *k = keys; k && k->name; k++)
		if (wl_key_check(wl, k, file, d) < 0)
			r = -EINVAL;
	return r;
}
