/* sysctl and sysfs knobs with a crash-safe journal of original values. */
#include "harness/exec/knobs.h"
#include "harness/job/job.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(KNOB_VALUE_MAX < sizeof(((struct store_journal *)0)->original), "the journal holds a whole knob value");

/* "always [madvise] never", "[lzo-rle] lzo lz4 " (zram ends the list
 * with a space): words separated by single spaces, exactly one of them
 * in brackets. Anything else (a core pattern with "[") is a plain value,
 * kept whole. */
static bool choice_selected(const char *v, size_t n, const char **ret_word, size_t *ret_len)
{
	while (n > 0 && v[n - 1] == ' ')
		n--;
	const char *word = NULL, *end = v + n;
	size_t len = 0, n_selected = 0;
	for (const char *p = v; p < end;) {
		const char *sp = memchr(p, ' ', (size_t)(end - p));
		size_t w = sp ? (size_t)(sp - p) : (size_t)(end - p);
		if (w == 0)
			return false;
		bool has_open = memchr(p, '[', w), has_close = memchr(p, ']', w);
		if (has_open || has_close) {
			if (w < 3 || p[0] != '[' || p[w - 1] != ']' || memchr(p + 1, '[', w - 2) || memchr(p + 1, ']', w - 2))
				return false;
			word = p + 1;
			len = w - 2;
			n_selected++;
		}
		p += w + (sp != NULL);
	}
	if (n_selected != 1)
		return false;
	*ret_word = word;
	*ret_len = len;
	return true;
}

int knob_read(const char *path, char *buf, size_t len)
{
	_cleanup_free_ char *v = NULL;
	size_t n;
	int r = util_read_file(path, &v, &n);
	if (r < 0)
		return r;
	while (n > 0 && v[n - 1] == '\n')
		v[--n] = '\0';
	const char *word = v;
	size_t wlen = n;
	if (!choice_selected(v, n, &word, &wlen)) {
		word = v;
		wlen = n;
	}
	if (wlen >= len)
		return -E2BIG;
	memcpy(buf, word, wlen);
	buf[wlen] = '\0';
	return 0;
}

int knob_write(const char *path, const char *value)
{
	return util_write_file(path, *value ? value : "\n");
}

int knob_restore(struct store *st, struct knob_applied *a, size_t n)
{
	int ret = 0;
	for (size_t i = n; i-- > 0;) {
		int r = knob_write(a[i].path, a[i].original);
		if (r < 0) {
			log_error("cannot restore %s to \"%s\": %s", a[i].path, a[i].original, strerror(-r));
			ret = r;
			continue; /* keep the journal entry: the next start retries */
		}
		if (st && a[i].journal_id > 0)
			store_journal_del(st, a[i].journal_id);
	}
	return ret;
}

static int apply_one(struct store *st, int64_t job_id, const char *boot_id, const struct job_knob *k,
		     struct knob_applied *a, struct strbuf *err)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->path, sizeof(a->path), "%s", k->path);
	int r = knob_read(k->path, a->original, sizeof(a->original));
	if (r == -E2BIG) {
		sb_printf(err, "%s (%s) holds more than %d bytes, more than kab can journal and restore, so kab does not change it",
			  k->path, k->name, KNOB_VALUE_MAX);
		return r;
	}
	if (r < 0) {
		sb_printf(err, "cannot read %s (%s): %s", k->path, k->name, strerror(-r));
		return r;
	}
	struct store_journal e = { .job_id = job_id };
	snprintf(e.kind, sizeof(e.kind), "%s", journal_kind_name(JOURNAL_KNOB));
	snprintf(e.target, sizeof(e.target), "%s", k->path);
	snprintf(e.original, sizeof(e.original), "%s", a->original);
	snprintf(e.boot_id, sizeof(e.boot_id), "%s", boot_id);
	if (st && (r = store_journal_add(st, &e, &a->journal_id)) < 0) {
		sb_printf(err, "cannot journal %s before changing it", k->path);
		return r;
	}
	r = util_write_file(k->path, k->value);
	if (r < 0) {
		if (strcmp(k->name, k->path) == 0) /* a sysfs knob is named by its path */
			sb_printf(err, "cannot write \"%s\" to %s: %s", k->value, k->path, strerror(-r));
		else
			sb_printf(err, "cannot write \"%s\" to %s (%s): %s", k->value, k->path, k->name, strerror(-r));
		if (st && a->journal_id > 0)
			store_journal_del(st, a->journal_id);
		return r;
	}
	return 0;
}

int knob_apply(struct store *st, int64_t job_id, const char *boot_id, const struct job_variant *v,
	       struct knob_applied **ret, size_t *ret_n, char *in_force, size_t in_force_len, struct strbuf *err)
{
	struct knob_applied *a = calloc(v->n_knobs ? v->n_knobs : 1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	struct strbuf sb = { 0 };
	for (size_t i = 0; i < v->n_knobs; i++) {
		int r = apply_one(st, job_id, boot_id, &v->knobs[i], &a[i], err);
		if (r < 0) {
			knob_restore(st, a, i);
			free(a);
			sb_free(&sb);
			return r;
		}
		char now[KNOB_VALUE_MAX + 1];
		if (knob_read(v->knobs[i].path, now, sizeof(now)) < 0)
			snprintf(now, sizeof(now), "?");
		sb_printf(&sb, "%s=%s\n", v->knobs[i].path, now);
	}
	snprintf(in_force, in_force_len, "%s", sb.buf ? sb.buf : "");
	sb_free(&sb);
	*ret = a;
	*ret_n = v->n_knobs;
	return 0;
}

int knob_preflight(struct store *st, int64_t job_id, const char *boot_id, const struct job_variant *v,
		   size_t n_variants, const char *file, struct diags *d)
{
	int ret = 0;
	for (size_t i = 0; i < n_variants; i++)
		for (size_t k = 0; k < v[i].n_knobs; k++) {
			struct knob_applied a;
			struct strbuf err = { 0 };
			int r = apply_one(st, job_id, boot_id, &v[i].knobs[k], &a, &err);
			const char *msg = err.len ? err.buf : "";
			if (r < 0 && v[i].name[0] == '[') /* the job-wide knobs, e.g. [swap]'s zswap */
				diags_add(d, file, v[i].knobs[k].line, "%s: %s", v[i].name, msg);
			else if (r < 0)
				diags_add(d, file, v[i].knobs[k].line, "variant \"%s\": %s", v[i].name, msg);
			sb_free(&err);
			if (r < 0) {
				ret = r;
				continue;
			}
			knob_restore(st, &a, 1);
		}
	return ret;
}
