/* Job files: the normalized form, a walk over the key table (job_keytab.c).
 * Canonical key order, defaults spelled out, sizes and durations in one
 * notation, comments dropped. What this prints parses back to the same
 * job (tests/golden checks it). */
#include "harness/job/job.h"
#include "harness/job/job_priv.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

/* Printed width at which a free-text value wraps, well below
 * JOB_LINE_MAX. */
#define WRAP 100

double job_round_duration(double s)
{
	return round(s * 1e6) / 1e6;
}

void job_format_duration(double s, char *buf, size_t len)
{
	s = job_round_duration(s);
	if (s == floor(s) && s >= 3600 && fmod(s, 3600) == 0) {
		snprintf(buf, len, "%.0fh", s / 3600);
	} else if (s == floor(s) && s >= 60 && fmod(s, 60) == 0) {
		snprintf(buf, len, "%.0fm", s / 60);
	} else if (s == floor(s)) {
		snprintf(buf, len, "%.0fs", s);
	} else {
		char num[64];
		snprintf(num, sizeof(num), "%.6f", s);
		size_t n = strlen(num);
		while (n > 0 && num[n - 1] == '0')
			num[--n] = 0;
		snprintf(buf, len, "%ss", num);
	}
}

void job_format_mem(uint64_t v, char *buf, size_t len)
{
	if (v == JOB_MEM_MAX)
		snprintf(buf, len, "max");
	else if (v == JOB_MEM_ZERO)
		snprintf(buf, len, "0");
	else
		util_format_size(v, buf, len);
}

static bool can_cut(const char *q)
{
	return q[0] == ' ' && !isspace((unsigned char)q[-1]) && q[1] && !isspace((unsigned char)q[1]) &&
	       !job_line_looks_like_key(q + 1);
}

size_t job_print_key(FILE *out, const char *key, const char *value, bool multiline)
{
	/* "key = ;x" would read back empty (" ;" starts a comment); "key =;x"
	 * reads back ";x", as the text it came from did */
	const char *eq = value[0] == ';' ? " =" : " = ";
	size_t col = strlen(key) + strlen(eq), widest = 0;
	if (out)
		fprintf(out, "%s%s", key, eq);
	const char *p = value;
	while (multiline && strlen(p) + col > WRAP) {
		/* The last cut that keeps the line within WRAP, else the first. */
		const char *cut = NULL;
		for (const char *q = p + 1; *q; q++) {
			if (!can_cut(q))
				continue;
			bool within = (size_t)(q - p) + col <= WRAP;
			if (within || !cut)
				cut = q;
			if (!within)
				break;
		}
		if (!cut)
			break;
		if (out)
			fprintf(out, "%.*s\n    ", (int)(cut - p), p);
		if (col + (size_t)(cut - p) > widest)
			widest = col + (size_t)(cut - p);
		col = 4;
		p = cut + 1;
	}
	if (out)
		fprintf(out, "%s\n", p);
	return col + strlen(p) > widest ? col + strlen(p) : widest;
}

size_t job_print_knob(FILE *out, const struct job_knob *k)
{
	char key[4096];
	snprintf(key, sizeof(key), "%s %s", k->kind == JOB_KNOB_SYSCTL ? "sysctl" : "sysfs", k->name);
	return job_print_key(out, key, k->value, false);
}

static bool same_variant(const struct job_expect *a, const struct job_expect *b)
{
	return a->variant == b->variant || (a->variant && b->variant && strcmp(a->variant, b->variant) == 0);
}

/* expect = ... (every variant), then one expect.VARIANT = ... per variant
 * named, in the order first written. */
void job_print_expect(const struct job_keydef *k, const struct job *j, const void *obj, FILE *out)
{
	const struct job_workload *w = obj;
	(void)j;
	for (size_t i = 0; i < w->n_expect; i++) {
		bool first = true;
		for (size_t e = 0; e < i && first; e++)
			first = !same_variant(&w->expect[e], &w->expect[i]);
		if (!first)
			continue;
		struct strbuf sb = { 0 };
		bool any = false;
		for (size_t e = i; e < w->n_expect; e++) {
			if (!same_variant(&w->expect[e], &w->expect[i]))
				continue;
			sb_printf(&sb, "%s%s %s %s", any ? ", " : "", w->expect[e].metric,
				  expect_op_name(w->expect[e].op), w->expect[e].number);
			any = true;
		}
		char key[96];
		snprintf(key, sizeof(key), "%s", k->name);
		if (w->expect[i].variant)
			snprintf(key, sizeof(key), "%s.%s", k->name, w->expect[i].variant);
		job_print_key(out, key, sb.buf ? sb.buf : "", true);
		sb_free(&sb);
	}
}

/* switch, with the machine's settings file it came from as a comment */
void job_print_switch(const struct job_keydef *k, const struct job *j, const void *obj, FILE *out)
{
	(void)obj;
	if (j->switch_source)
		fprintf(out, "; %s: this machine's, from %s\n", k->name, j->switch_source);
	job_print_key(out, k->name, k->choices[j->switch_mode], false);
}

/* track = REMOTE BRANCH, and what kab check found as a comment */
void job_print_track(const struct job_keydef *k, const struct job *j, const void *obj, FILE *out)
{
	const struct job_variant *v = obj;
	(void)j;
	if (!v->track_remote || !v->track_branch)
		return;
	char text[600];
	snprintf(text, sizeof(text), "%s %s", v->track_remote, v->track_branch);
	job_print_key(out, k->name, text, false);
	if (v->track_note)
		fprintf(out, "; %s: %s\n", k->name, v->track_note);
}

/* series = SOURCE [vN] */
void job_print_series(const struct job_keydef *k, const struct job *j, const void *obj, FILE *out)
{
	const struct job_variant *v = obj;
	(void)j;
	if (!v->series)
		return;
	char text[4200];
	snprintf(text, sizeof(text), "%s", v->series);
	if (v->series_version)
		snprintf(text, sizeof(text), "%s v%u", v->series, v->series_version);
	job_print_key(out, k->name, text, false);
}

bool job_shown_random(const struct job *j, const void *obj)
{
	(void)obj;
	return j->order == JOB_ORDER_RANDOM;
}

bool job_shown_sized(const struct job *j, const void *obj)
{
	(void)obj;
	return j->swap.kind == JOB_SWAP_ZRAM || j->swap.kind == JOB_SWAP_FILE;
}

bool job_shown_file(const struct job *j, const void *obj)
{
	(void)obj;
	return j->swap.kind == JOB_SWAP_FILE;
}

bool job_shown_zram(const struct job *j, const void *obj)
{
	(void)obj;
	return j->swap.kind == JOB_SWAP_ZRAM;
}

bool job_shown_waiting(const struct job *j, const void *obj)
{
	(void)obj;
	return j->cond.wait_idle_pct > 0;
}

/* bisect.boots: with bisect = auto, or when not the default */
bool job_shown_bisect_boots(const struct job *j, const void *obj)
{
	(void)obj;
	return j->bisect == JOB_BISECT_AUTO || j->bisect_boots != JOB_BISECT_BOOTS_DEFAULT;
}

/* bisect.revert, bisect.align: when asked for */
bool job_shown_bisect_controls(const struct job *j, const void *obj)
{
	(void)obj;
	return j->bisect_revert || j->bisect_align;
}

static void print_one(const struct job_keydef *k, const struct job *j, const void *obj, FILE *out)
{
	if (k->type == KT_DOC || (k->flags & KF_ALIAS) || ((k->flags & KF_BOOT) && !job_boots_kernels(j)) ||
	    (k->shown && !k->shown(j, obj)))
		return;
	if (k->print) {
		k->print(k, j, obj, out);
		return;
	}
	struct strbuf sb = { 0 };
	if (job_key_format(k, obj, &sb) || (k->flags & KF_ALWAYS))
		job_print_key(out, k->name, sb.buf ? sb.buf : "", k->flags & KF_MULTILINE);
	sb_free(&sb);
}

/* A workload type's own keys, as written, in its table's order. */
static void print_params(const struct job_workload *w, FILE *out)
{
	const struct wl_ops *ops = wl_find(w->type);
	for (const struct wl_key *k = ops ? ops->keys : NULL; k && k->name; k++) {
		const char *v = job_param(w, k->name);
		if (v)
			job_print_key(out, k->name, v, true);
	}
}

/* The keys of one section, by rank and then in the table's order; a
 * workload's own keys follow its first rank. */
static void print_section(enum job_sec_kind sec, const struct job *j, const void *obj, FILE *out)
{
	int rank = 0, next;
	do {
		next = -1;
		for (size_t i = 0; i < job_n_keys; i++) {
			const struct job_keydef *k = &job_keydefs[i];
			if (k->sec != sec)
				continue;
			if (k->rank == rank)
				print_one(k, j, obj, out);
			else if (k->rank > rank && (next < 0 || k->rank < next))
				next = k->rank;
		}
		if (sec == JOB_SEC_WORKLOAD && rank == 0)
			print_params(obj, out);
		rank = next;
	} while (rank >= 0);
}

void job_print(const struct job *j, FILE *out)
{
	fprintf(out, "[%s]\n", job_section_name(JOB_SEC_JOB));
	print_section(JOB_SEC_JOB, j, j, out);
	fprintf(out, "\n[%s]\n", job_section_name(JOB_SEC_SWAP));
	print_section(JOB_SEC_SWAP, j, &j->swap, out);
	for (size_t i = 0; i < j->n_variants; i++) {
		const struct job_variant *v = &j->variants[i];
		fprintf(out, "\n[%s %s]\n", job_section_name(JOB_SEC_VARIANT), v->label);
		print_section(JOB_SEC_VARIANT, j, v, out);
		for (size_t k = 0; k < v->n_knobs; k++)
			job_print_knob(out, &v->knobs[k]);
	}
	for (size_t i = 0; i < j->n_workloads; i++) {
		fprintf(out, "\n[%s %s]\n", job_section_name(JOB_SEC_WORKLOAD), j->workloads[i].name);
		print_section(JOB_SEC_WORKLOAD, j, &j->workloads[i], out);
	}
	for (size_t i = 0; i < j->n_metric_settings; i++) {
		fprintf(out, "\n[%s %s]\n", job_section_name(JOB_SEC_METRIC), j->metric_settings[i].name);
		print_section(JOB_SEC_METRIC, j, &j->metric_settings[i], out);
	}
	if (j->n_report_rows > 0) {
		fprintf(out, "\n[%s]\n", job_section_name(JOB_SEC_REPORT));
		print_section(JOB_SEC_REPORT, j, j, out);
	}
}

/* [metric ratio.NAME]: ratio = A / B as parsed (the two sides trimmed) */
void job_print_ratio(const struct job_keydef *k, const struct job *j, const void *obj, FILE *out)
{
	const struct job_metric *m = obj;
	(void)j;
	if (m->ratio_of && m->ratio_per)
		fprintf(out, "%s = %s / %s\n", k->name, m->ratio_of, m->ratio_per);
}
