/* Job files: the normalized form. Canonical key order, defaults spelled
 * out, sizes and durations in one notation, comments dropped. What this
 * prints parses back to the same job (tests/golden checks it). */
#include "job.h"
#include "job_priv.h"
#include "util.h"
#include "wl.h"

#include <math.h>
#include <string.h>

/* Longest printed line before a free-text value wraps; well below inih's
 * line limit. */
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

/* "key = value", wrapping a long free-text value onto indented
 * continuation lines at single spaces, never where the next line would
 * read as a key or a comment. */
static void print_wrapped(FILE *out, const char *key, const char *value)
{
	size_t col = strlen(key) + 3;
	fprintf(out, "%s = ", key);
	const char *p = value;
	while (strlen(p) + col > WRAP) {
		const char *cut = NULL;
		for (const char *q = p + 1; *q && (size_t)(q - p) + col <= WRAP; q++)
			if (q[0] == ' ' && q[-1] != ' ' && q[1] && q[1] != ' ' && !job_line_looks_like_key(q + 1))
				cut = q;
		if (!cut)
			break;
		fprintf(out, "%.*s\n    ", (int)(cut - p), p);
		col = 4;
		p = cut + 1;
	}
	fprintf(out, "%s\n", p);
}

static void print_workload(const struct job_workload *w, FILE *out)
{
	char buf[64];
	fprintf(out, "\n[workload %s]\n", w->name);
	fprintf(out, "type = %s\n", w->type);
	const struct wl_ops *ops = wl_find(w->type);
	for (const struct wl_key *k = ops ? ops->keys : NULL; k && k->name; k++) {
		const char *v = job_param(w, k->name);
		if (v)
			print_wrapped(out, k->name, v);
	}
	if (w->memory_max != JOB_MEM_UNSET) {
		job_format_mem(w->memory_max, buf, sizeof(buf));
		fprintf(out, "memory.max = %s\n", buf);
	}
	if (w->memory_high != JOB_MEM_UNSET) {
		job_format_mem(w->memory_high, buf, sizeof(buf));
		fprintf(out, "memory.high = %s\n", buf);
	}
	if (w->memory_swap_max != JOB_MEM_UNSET) {
		job_format_mem(w->memory_swap_max, buf, sizeof(buf));
		fprintf(out, "memory.swap.max = %s\n", buf);
	}
	if (w->timeout_s > 0) {
		job_format_duration(w->timeout_s, buf, sizeof(buf));
		fprintf(out, "timeout = %s\n", buf);
	}
}

void job_print(const struct job *j, FILE *out)
{
	char buf[64];
	fprintf(out, "[job]\n");
	fprintf(out, "name = %s\n", j->name);
	fprintf(out, "pairs = %u\n", j->pairs);
	fprintf(out, "order = %s\n", job_order_name(j->order));
	if (j->order == JOB_ORDER_RANDOM)
		fprintf(out, "seed = %llu\n", (unsigned long long)j->seed);
	job_format_duration(j->interval_s, buf, sizeof(buf));
	fprintf(out, "interval = %s\n", buf);
	if (j->n_metrics > 0) {
		struct strbuf sb = { 0 };
		for (size_t i = 0; i < j->n_metrics; i++)
			sb_printf(&sb, "%s%s", i ? " " : "", j->metrics[i]);
		print_wrapped(out, "metrics", sb.buf ? sb.buf : "");
		sb_free(&sb);
	}

	const struct job_swap *s = &j->swap;
	fprintf(out, "\n[swap]\n");
	fprintf(out, "device = %s\n", job_swap_kind_name(s->kind));
	if (s->kind == JOB_SWAP_ZRAM || s->kind == JOB_SWAP_FILE) {
		util_format_size(s->size, buf, sizeof(buf));
		fprintf(out, "size = %s\n", buf);
	}
	if (s->kind == JOB_SWAP_FILE && s->path)
		fprintf(out, "path = %s\n", s->path);
	if (s->kind == JOB_SWAP_ZRAM && s->algorithm)
		fprintf(out, "algorithm = %s\n", s->algorithm);
	if (s->priority >= 0)
		fprintf(out, "priority = %d\n", s->priority);

	for (size_t i = 0; i < j->n_variants; i++) {
		const struct job_variant *v = &j->variants[i];
		fprintf(out, "\n[variant %s]\n", v->label);
		fprintf(out, "name = %s\n", v->name);
		fprintf(out, "kernel = %s\n", v->kernel);
		for (size_t k = 0; k < v->n_knobs; k++)
			fprintf(out, "%s %s = %s\n", v->knobs[k].kind == JOB_KNOB_SYSCTL ? "sysctl" : "sysfs",
				v->knobs[k].name, v->knobs[k].value);
	}
	for (size_t i = 0; i < j->n_workloads; i++)
		print_workload(&j->workloads[i], out);
}
