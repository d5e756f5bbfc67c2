/* kab lab's tables (lab_text.h): kabd's lab replies read field by field,
 * each field checked for the type this kab shows, each string escaped
 * into a cell, then the tables laid out with the report's padding. */
#include "harness/cli/lab_text.h"
#include "harness/report/report_priv.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define COLS_MAX 12

struct row {
	char *c[COLS_MAX]; /* escaped, malloc'd; NULL: out of memory */
};

struct table {
	const char *const *head;
	size_t n_cols, n, cap;
	struct row *rows;
};

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		for (size_t c = 0; c < t->n_cols; c++)
			free(t->rows[i].c[c]);
	free(t->rows);
}

/* A new row of NULL cells, or NULL. */
static struct row *table_add(struct table *t)
{
	if (util_grow(t->rows, t->cap, t->n + 1, 16) < 0)
		return NULL;
	struct row *r = &t->rows[t->n++];
	memset(r, 0, sizeof(*r));
	return r;
}

/* Headings, then a row a line, each column as wide as its widest cell
 * (report_width) and two spaces; a line ends at its last cell. */
static int table_print(const struct table *t, FILE *out)
{
	size_t width[COLS_MAX];
	for (size_t c = 0; c < t->n_cols; c++) {
		width[c] = report_width(t->head[c]);
		for (size_t i = 0; i < t->n; i++) {
			if (!t->rows[i].c[c])
				return -ENOMEM;
			if (report_width(t->rows[i].c[c]) > width[c])
				width[c] = report_width(t->rows[i].c[c]);
		}
	}
	for (size_t i = 0; i <= t->n; i++) {
		const char *const *cells = i == 0 ? (const char *const *)t->head : (const char *const *)t->rows[i - 1].c;
		size_t last = t->n_cols - 1; /* no spaces after the last cell that has text */
		while (last > 0 && !*cells[last])
			last--;
		for (size_t c = 0; c <= last; c++) {
			if (c == last)
				fputs(cells[c], out);
			else
				report_pad(out, cells[c], width[c] + 2);
		}
		fputc('\n', out);
	}
	return 0;
}

/* ---- reading a reply ---- */

/* Where fields are read ("machines[2]"), and the first error. */
struct rd {
	char where[64];
	struct strbuf *err;
	int r;
};

static const char *type_words(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

static bool of_type(json_t *v, json_type t)
{
	return t == JSON_REAL ? json_is_number(v) : t == JSON_TRUE ? json_is_boolean(v) : json_typeof(v) == t;
}

static const char *want_words(json_type t)
{
	switch (t) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	default: return "a boolean";
	}
}

/* key of o (key NULL: d->where itself is o) when it is of type t; NULL
 * when it is null and null_ok, or when it is not there or of another
 * type: then the first such error goes to d. */
static json_t *need(struct rd *d, json_t *o, const char *key, json_type t, bool null_ok)
{
	json_t *v = key ? json_object_get(o, key) : o;
	if (v && of_type(v, t))
		return v;
	if (null_ok && json_is_null(v))
		return NULL;
	if (d->r < 0)
		return NULL;
	d->r = -EBADMSG;
	sb_printf(d->err, "%s%s%s", d->where, *d->where && key ? "." : "", key ? key : "");
	if (!v)
		sb_printf(d->err, " is missing (%s%s expected)", want_words(t), null_ok ? " or null" : "");
	else
		sb_printf(d->err, " is %s, not %s%s", type_words(v), want_words(t), null_ok ? " or null" : "");
	return NULL;
}

/* The items of key, an array, each an object: NULL on error. */
static json_t *need_list(struct rd *d, json_t *doc, const char *key)
{
	json_t *a = need(d, doc, key, JSON_ARRAY, false), *v;
	size_t i;
	json_array_foreach(a, i, v)
	{
		struct rd item = { .err = d->err };
		snprintf(item.where, sizeof(item.where), "%s[%zu]", key, i);
		if (!need(&item, v, NULL, JSON_OBJECT, false)) {
			d->r = item.r;
			return NULL;
		}
	}
	return a;
}

/* ---- cells ---- */

static char *cell_text(const char *s, size_t len)
{
	struct strbuf sb = { 0 };
	if (esc_text_sb(&sb, s, len, 0) < 0 || sb_puts(&sb, "") < 0) {
		sb_free(&sb);
		return NULL;
	}
	return sb.buf;
}

static char *cell_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *cell_printf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* A string of the server's on one line, escaped; none for null. */
static char *cell_str(json_t *v, const char *none)
{
	if (!json_is_string(v))
		return strdup(none);
	return cell_text(json_string_value(v), json_string_length(v));
}

/* A machine id's first 8 characters, as lists show it. */
static char *cell_short_id(json_t *v)
{
	if (!json_is_string(v))
		return strdup("-");
	size_t n = json_string_length(v);
	return cell_text(json_string_value(v), n < 8 ? n : 8);
}

/* "2026-03-01T02:00:00Z" (jw_time) as "2026-03-01 02:00:00"; another
 * text as it is; "-" for null. */
static char *cell_time(json_t *v)
{
	const char *s = json_string_value(v);
	if (!s)
		return strdup("-");
	size_t n = json_string_length(v);
	if (n == 20 && s[10] == 'T' && s[19] == 'Z' && strspn(s, "0123456789-T:Z") == 20)
		return cell_printf("%.10s %.8s", s, s + 11);
	return cell_text(s, n);
}

static char *cell_int(json_t *v, const char *none)
{
	return json_is_integer(v) ? cell_printf("%lld", (long long)json_integer_value(v)) : strdup(none);
}

/* "12 s ago", "5 min ago", "3 h ago", "2 d ago"; "-" for null. */
static char *cell_age(json_t *v)
{
	if (!json_is_number(v))
		return strdup("-");
	double s = json_number_value(v);
	if (!isfinite(s))
		return strdup("?");
	if (s < 0)
		s = 0;
	if (s < 120)
		return cell_printf("%.0f s ago", s);
	if (s < 2 * 3600)
		return cell_printf("%.0f min ago", floor(s / 60));
	if (s < 2 * 86400)
		return cell_printf("%.0f h ago", floor(s / 3600));
	return cell_printf("%.0f d ago", floor(s / 86400));
}

/* Bytes as a selector writes them: "64G", "15.6G", "512M". */
static char *cell_memory(json_t *v)
{
	long long b = json_integer_value(v);
	if (b >= 1LL << 30)
		return b % (1LL << 30) == 0 ? cell_printf("%lldG", b >> 30) : cell_printf("%.1fG", (double)b / (1 << 30));
	return cell_printf("%lldM", b >> 20);
}

/* The tags, comma-separated; "-" for none. */
static char *cell_tags(struct rd *d, json_t *tags)
{
	json_t *t;
	size_t i;
	struct strbuf sb = { 0 };
	json_array_foreach(tags, i, t)
	{
		if (!json_is_string(t)) {
			if (d->r >= 0) {
				d->r = -EBADMSG;
				sb_printf(d->err, "%s.tags[%zu] is %s, not a string", d->where, i, type_words(t));
			}
			sb_free(&sb);
			return strdup("");
		}
		if ((i && sb_puts(&sb, ",") < 0) || esc_text_sb(&sb, json_string_value(t), json_string_length(t), 0) < 0) {
			sb_free(&sb);
			return NULL;
		}
	}
	if (!sb.buf)
		return strdup("-");
	return sb.buf;
}

/* ---- the output: written to a buffer first, so that a reply refused
 * half-way writes nothing ---- */

static int flush_to(FILE *out, char *buf, size_t len, int r)
{
	if (r >= 0 && (fwrite(buf, 1, len, out) != len || ferror(out)))
		r = -EIO;
	free(buf);
	return r;
}

static int machines_table(json_t *doc, struct table *t, struct strbuf *err)
{
	static const char *const head[] = { "host",   "id",    "state",  "cpus", "memory",    "arch",
					    "kernel", "kexec", "cgroup", "tags", "heartbeat", "job" };
	struct rd d = { .err = err };
	json_t *machines = need_list(&d, doc, "machines"), *m;
	size_t i;
	*t = (struct table){ .head = head, .n_cols = ARRAY_SIZE(head) };
	json_array_foreach(machines, i, m)
	{
		snprintf(d.where, sizeof(d.where), "machines[%zu]", i);
		json_t *id = need(&d, m, "id", JSON_STRING, false), *host = need(&d, m, "hostname", JSON_STRING, false),
		       *state = need(&d, m, "state", JSON_STRING, false), *cpus = need(&d, m, "cpus", JSON_INTEGER, false),
		       *mem = need(&d, m, "memory", JSON_INTEGER, false), *arch = need(&d, m, "arch", JSON_STRING, false),
		       *kernel = need(&d, m, "kernel", JSON_STRING, false), *kexec = need(&d, m, "kexec", JSON_TRUE, false),
		       *cg = need(&d, m, "cgroup_version", JSON_INTEGER, false), *tags = need(&d, m, "tags", JSON_ARRAY, false),
		       *age = need(&d, m, "heartbeat_age_s", JSON_REAL, true), *job = need(&d, m, "job", JSON_INTEGER, true);
		if (d.r < 0)
			break;
		struct row *r = table_add(t);
		if (!r)
			return -ENOMEM;
		r->c[0] = cell_str(host, "");
		r->c[1] = cell_short_id(id);
		r->c[2] = cell_str(state, "");
		r->c[3] = cell_int(cpus, "");
		r->c[4] = cell_memory(mem);
		r->c[5] = cell_str(arch, "");
		r->c[6] = cell_str(kernel, "");
		r->c[7] = strdup(json_is_true(kexec) ? "yes" : "no");
		r->c[8] = cell_printf("v%lld", (long long)json_integer_value(cg));
		r->c[9] = cell_tags(&d, tags);
		r->c[10] = cell_age(age);
		r->c[11] = cell_int(job, "-");
	}
	return d.r;
}

int lab_text_machines(json_t *machines, FILE *out, struct strbuf *err)
{
	struct table t = { 0 };
	char *buf = NULL;
	size_t len = 0;
	int r = machines_table(machines, &t, err);
	FILE *f = r >= 0 ? open_memstream(&buf, &len) : NULL;
	if (r >= 0 && !f)
		r = -ENOMEM;
	if (r >= 0) {
		json_t *lab = json_object_get(machines, "lab");
		_cleanup_free_ char *url = json_is_string(lab) ? cell_str(lab, "") : NULL;
		fprintf(f, "%zu machine%s in the lab%s%s\n", t.n, t.n == 1 ? "" : "s", url ? " at " : "", url ? url : "");
		if (t.n)
			r = table_print(&t, f);
	}
	if (f && fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	table_free(&t);
	return flush_to(out, buf, len, r);
}

/* "2 of 3": the attempts made of the most. */
static char *cell_attempts(json_t *made, json_t *max)
{
	return cell_printf("%lld of %lld", (long long)json_integer_value(made), (long long)json_integer_value(max));
}

int lab_text_jobs(json_t *doc, FILE *out, struct strbuf *err)
{
	static const char *const head[] = { "id", "state", "selector", "machine", "attempts", "submitted (UTC)", "by" };
	struct table t = { .head = head, .n_cols = ARRAY_SIZE(head) };
	struct rd d = { .err = err };
	json_t *jobs = need_list(&d, doc, "jobs"), *j;
	size_t i;
	int r = 0;
	json_array_foreach(jobs, i, j)
	{
		snprintf(d.where, sizeof(d.where), "jobs[%zu]", i);
		json_t *id = need(&d, j, "id", JSON_INTEGER, false), *state = need(&d, j, "state", JSON_STRING, false),
		       *sel = need(&d, j, "selector", JSON_STRING, false), *host = need(&d, j, "machine", JSON_STRING, true),
		       *made = need(&d, j, "attempts", JSON_INTEGER, false),
		       *max = need(&d, j, "max_attempts", JSON_INTEGER, false),
		       *created = need(&d, j, "created", JSON_STRING, true),
		       *by = need(&d, j, "submitted_by", JSON_STRING, false);
		if (d.r < 0)
			break;
		struct row *row = table_add(&t);
		if (!row) {
			r = -ENOMEM;
			break;
		}
		row->c[0] = cell_int(id, "");
		row->c[1] = cell_str(state, "");
		row->c[2] = json_string_length(sel) ? cell_str(sel, "") : strdup("any machine");
		row->c[3] = cell_str(host, "-");
		row->c[4] = cell_attempts(made, max);
		row->c[5] = cell_time(created);
		row->c[6] = cell_str(by, "");
	}
	if (r >= 0)
		r = d.r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = r >= 0 ? open_memstream(&buf, &len) : NULL;
	if (r >= 0 && !f)
		r = -ENOMEM;
	if (r >= 0 && t.n == 0)
		fprintf(f, "no lab jobs\n");
	else if (r >= 0)
		r = table_print(&t, f);
	if (f && fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	table_free(&t);
	return flush_to(out, buf, len, r);
}

/* A job's attempts: attempt, machine, state, started, ended, and whether
 * its results count (the counted one) or were lost. */
static int attempts_table(struct rd *d, json_t *list, long long counted, struct table *t)
{
	json_t *a;
	size_t i;
	json_array_foreach(list, i, a)
	{
		snprintf(d->where, sizeof(d->where), "attempts_list[%zu]", i);
		json_t *n = need(d, a, "attempt", JSON_INTEGER, false), *host = need(d, a, "machine", JSON_STRING, true),
		       *mid = need(d, a, "machine_id", JSON_STRING, false),
		       *oc = need(d, a, "outcome", JSON_STRING, false), *why = need(d, a, "reason", JSON_STRING, true),
		       *start = need(d, a, "started", JSON_STRING, true), *end = need(d, a, "ended", JSON_STRING, true);
		if (d->r < 0)
			return d->r;
		struct row *r = table_add(t);
		if (!r)
			return -ENOMEM;
		const char *outcome = json_string_value(oc);
		r->c[0] = cell_int(n, "");
		r->c[1] = host ? cell_str(host, "") : cell_short_id(mid);
		r->c[2] = cell_str(oc, "");
		r->c[3] = cell_time(start);
		r->c[4] = cell_time(end);
		const char *counts = strcmp(outcome, "lost") == 0 ? "lost" : "-";
		r->c[5] = strdup(json_integer_value(n) == counted ? "counted" : counts);
		r->c[6] = cell_str(why, "");
	}
	return 0;
}

static void field(FILE *f, const char *name, const char *value)
{
	fprintf(f, "  %-11s%s\n", name, value ? value : "");
}

int lab_text_job(json_t *j, FILE *out, struct strbuf *err)
{
	static const char *const head[] = { "attempt",     "machine", "state", "started (UTC)",
					    "ended (UTC)", "counts",  "reason" };
	struct table t = { .head = head, .n_cols = ARRAY_SIZE(head) };
	struct rd d = { .err = err };
	json_t *id = need(&d, j, "id", JSON_INTEGER, false), *state = need(&d, j, "state", JSON_STRING, false),
	       *sel = need(&d, j, "selector", JSON_STRING, false), *host = need(&d, j, "machine", JSON_STRING, true),
	       *mid = need(&d, j, "machine_id", JSON_STRING, true), *made = need(&d, j, "attempts", JSON_INTEGER, false),
	       *max = need(&d, j, "max_attempts", JSON_INTEGER, false),
	       *reason = need(&d, j, "reason", JSON_STRING, true), *by = need(&d, j, "submitted_by", JSON_STRING, false),
	       *created = need(&d, j, "created", JSON_STRING, true), *fin = need(&d, j, "finished", JSON_STRING, true),
	       *counted = need(&d, j, "counted_attempt", JSON_INTEGER, true), *why = need(&d, j, "why", JSON_STRING, true);
	json_t *list = need_list(&d, j, "attempts_list");
	int r = d.r < 0 ? d.r : attempts_table(&d, list, counted ? json_integer_value(counted) : 0, &t);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = r >= 0 ? open_memstream(&buf, &len) : NULL;
	if (r >= 0 && !f)
		r = -ENOMEM;
	if (r >= 0) {
		_cleanup_free_ char *st = cell_str(state, ""), *s = json_string_length(sel) ? cell_str(sel, "") : NULL,
				    *h = cell_str(host, "-"), *m = cell_short_id(mid), *a = cell_attempts(made, max),
				    *c = cell_time(created), *b = cell_str(by, ""), *e = cell_time(fin),
				    *rsn = cell_str(reason, "");
		fprintf(f, "lab job %lld: %s\n", (long long)json_integer_value(id), st ? st : "");
		field(f, "selector:", s ? s : "any machine");
		if (host || mid)
			fprintf(f, "  %-11s%s (%s)\n", "machine:", h ? h : "", m ? m : "");
		field(f, "attempts:", a);
		fprintf(f, "  %-11s%s%s by %s\n", "submitted:", c ? c : "", created ? " UTC" : "", b ? b : "");
		if (fin)
			fprintf(f, "  %-11s%s UTC\n", "finished:", e ? e : "");
		if (reason && json_string_length(reason))
			field(f, "reason:", rsn);
		if (counted)
			fprintf(f, "  %-11sattempt %lld\n", "counted:", (long long)json_integer_value(counted));
		if (t.n) {
			fputc('\n', f);
			r = table_print(&t, f);
		}
		if (why) {
			/* lines of the server's: each escaped, '\n' kept */
			fprintf(f, "\nwhy it waits:\n");
			esc_text_file(f, json_string_value(why), json_string_length(why), ESC_LINES);
			if (json_string_length(why) && json_string_value(why)[json_string_length(why) - 1] != '\n')
				fputc('\n', f);
		}
	}
	if (f && fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	table_free(&t);
	return flush_to(out, buf, len, r);
}
