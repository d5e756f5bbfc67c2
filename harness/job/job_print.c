/* Job files: the normalized form. Canonical key order, defaults spelled
 * out, sizes and durations in one notation, comments dropped. What this
 * prints parses back to the same job (tests/golden checks it). */
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
static void print_expect(const struct job_workload *w, FILE *out)
{
	for (size_t i = 0; i < w->n_expect; i++) {
		bool first = true;
		for (size_t k = 0; k < i && first; k++)
			first = !same_variant(&w->expect[k], &w->expect[i]);
		if (!first)
			continue;
		struct strbuf sb = { 0 };
		bool any = false;
		for (size_t k = i; k < w->n_expect; k++) {
			if (!same_variant(&w->expect[k], &w->expect[i]))
				continue;
			sb_printf(&sb, "%s%s %s %s", any ? ", " : "", w->expect[k].metric, expect_op_name(w->expect[k].op),
				  w->expect[k].number);
			any = true;
		}
		char key[96] = "expect";
		if (w->expect[i].variant)
			snprintf(key, sizeof(key), "expect.%s", w->expect[i].variant);
		job_print_key(out, key, sb.buf ? sb.buf : "", true);
		sb_free(&sb);
	}
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
			job_print_key(out, k->name, v, true);
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
	if (w->n_fcount > 0) {
		struct strbuf sb = { 0 };
		for (size_t i = 0; i < w->n_fcount; i++)
			sb_printf(&sb, "%s%s", i ? " " : "", w->fcount[i]);
		job_print_key(out, "fcount", sb.buf ? sb.buf : "", true);
		sb_free(&sb);
	}
	if (w->oom == JOB_OOM_TOLERATE)
		fprintf(out, "oom = tolerate\n");
	print_expect(w, out);
}

/* Only the conditioning keys a job set: an unconditioned job prints as before. */
static void print_condition(const struct job_condition *c, FILE *out)
{
	static const char *const tristate[] = { "keep", "off", "on" };
	char buf[64];
	if (c->drop_caches)
		fprintf(out, "drop_caches = yes\n");
	if (c->compact)
		fprintf(out, "compact = yes\n");
	if (c->wait_idle_pct > 0) {
		job_format_percent(c->wait_idle_pct, buf, sizeof(buf));
		fprintf(out, "wait_idle = %s\n", buf);
		job_format_duration(c->wait_idle_max_s, buf, sizeof(buf));
		fprintf(out, "wait_idle_max = %s\n", buf);
	}
	if (c->cpufreq == JOB_CPUFREQ_PERFORMANCE)
		fprintf(out, "cpufreq = performance\n");
	if (c->turbo != JOB_KEEP)
		fprintf(out, "turbo = %s\n", tristate[c->turbo]);
	if (c->cpus)
		fprintf(out, "cpus = %s\n", c->cpus);
	if (c->sampler_cpu >= 0)
		fprintf(out, "sampler_cpu = %d\n", c->sampler_cpu);
}

static void print_job_section(const struct job *j, FILE *out)
{
	char buf[64];
	fprintf(out, "[job]\n");
	fprintf(out, "name = %s\n", j->name);
	job_format_pairs(j, buf, sizeof(buf));
	fprintf(out, "pairs = %s\n", buf);
	fprintf(out, "order = %s\n", job_order_name(j->order));
	if (j->order == JOB_ORDER_RANDOM)
		fprintf(out, "seed = %llu\n", (unsigned long long)j->seed);
	job_format_duration(j->interval_s, buf, sizeof(buf));
	fprintf(out, "interval = %s\n", buf);
	fprintf(out, "warmup = %u\n", j->warmup);
	if (j->archive)
		job_print_key(out, "archive", j->archive, false);
	print_condition(&j->cond, out);
	if (job_boots_kernels(j)) {
		fprintf(out, "runs_per_boot = %u\n", j->runs_per_boot);
		if (j->switch_source)
			fprintf(out, "; switch: this machine's, from %s\n", j->switch_source);
		fprintf(out, "switch = %s\n", job_switch_name(j->switch_mode));
		fprintf(out, "boot_attempts = %u\n", j->boot_attempts);
		fprintf(out, "on_boot_failure = %s\n", j->on_boot_failure == JOB_BOOTFAIL_ABORT ? "abort" : "finish");
		fprintf(out, "panic = %u\n", j->panic_s);
	}
	if (j->n_metrics > 0) {
		struct strbuf sb = { 0 };
		for (size_t i = 0; i < j->n_metrics; i++)
			sb_printf(&sb, "%s%s", i ? " " : "", j->metrics[i]);
		job_print_key(out, "metrics", sb.buf ? sb.buf : "", true);
		sb_free(&sb);
	}
	if (j->n_primary > 0) {
		struct strbuf sb = { 0 };
		for (size_t i = 0; i < j->n_primary; i++)
			sb_printf(&sb, "%s%s", i ? " " : "", j->primary[i]);
		job_print_key(out, "primary", sb.buf ? sb.buf : "", true);
		sb_free(&sb);
	}
}

static void print_swap_section(const struct job_swap *s, FILE *out)
{
	char buf[64];
	fprintf(out, "\n[swap]\n");
	fprintf(out, "device = %s\n", job_swap_kind_name(s->kind));
	if (s->kind == JOB_SWAP_ZRAM || s->kind == JOB_SWAP_FILE) {
		util_format_size(s->size, buf, sizeof(buf));
		fprintf(out, "size = %s\n", buf);
	}
	if (s->kind == JOB_SWAP_FILE && s->path)
		job_print_key(out, "path", s->path, false);
	if (s->kind == JOB_SWAP_ZRAM && s->algorithm)
		job_print_key(out, "algorithm", s->algorithm, false);
	if (s->priority >= 0)
		fprintf(out, "priority = %d\n", s->priority);
	static const char *const tri[] = { "keep", "off", "on" };
	if (s->zswap != JOB_KEEP)
		fprintf(out, "zswap = %s\n", tri[s->zswap]);
	if (s->zswap_shrinker != JOB_KEEP)
		fprintf(out, "zswap.shrinker = %s\n", tri[s->zswap_shrinker]);
	if (s->zswap_compressor)
		job_print_key(out, "zswap.compressor", s->zswap_compressor, false);
	if (s->zswap_max_pool > 0)
		fprintf(out, "zswap.max_pool_percent = %d\n", s->zswap_max_pool);
}

static void print_variant(const struct job_variant *v, FILE *out)
{
	fprintf(out, "\n[variant %s]\n", v->label);
	fprintf(out, "name = %s\n", v->name);
	fprintf(out, "kernel = %s\n", v->kernel);
	if (v->build_id > 0)
		fprintf(out, "build = %lld\n", (long long)v->build_id);
	if (v->tree)
		job_print_key(out, "tree", v->tree, false);
	if (v->base)
		job_print_key(out, "base", v->base, false);
	if (v->track_remote && v->track_branch) {
		char text[600];
		snprintf(text, sizeof(text), "%s %s", v->track_remote, v->track_branch);
		job_print_key(out, "track", text, false);
		if (v->track_note)
			fprintf(out, "; track: %s\n", v->track_note);
	}
	if (v->series && v->series_version) {
		char text[4200];
		snprintf(text, sizeof(text), "%s v%u", v->series, v->series_version);
		job_print_key(out, "series", text, false);
	} else if (v->series) {
		job_print_key(out, "series", v->series, false);
	}
	if (v->config)
		job_print_key(out, "config", v->config, false);
	if (v->n_fragments) {
		struct strbuf sb = { 0 };
		for (size_t f = 0; f < v->n_fragments; f++)
			sb_printf(&sb, "%s%s", f ? " " : "", v->fragments[f]);
		job_print_key(out, "config.fragment", sb.buf ? sb.buf : "", true);
		sb_free(&sb);
	}
	if (v->image)
		job_print_key(out, "image", v->image, false);
	if (v->initrd)
		job_print_key(out, "initrd", v->initrd, false);
	if (v->cmdline)
		job_print_key(out, "cmdline", v->cmdline, false);
	for (size_t k = 0; k < v->n_knobs; k++)
		job_print_knob(out, &v->knobs[k]);
}

void job_print(const struct job *j, FILE *out)
{
	print_job_section(j, out);
	print_swap_section(&j->swap, out);
	for (size_t i = 0; i < j->n_variants; i++)
		print_variant(&j->variants[i], out);
	for (size_t i = 0; i < j->n_workloads; i++)
		print_workload(&j->workloads[i], out);
	job_print_metric_sections(j, out);
	if (j->n_report_rows > 0) {
		struct strbuf sb = { 0 };
		for (size_t i = 0; i < j->n_report_rows; i++)
			sb_printf(&sb, "%s%s", i ? " " : "", j->report_rows[i]);
		fprintf(out, "\n[report]\n");
		job_print_key(out, "rows", sb.buf ? sb.buf : "", true);
		sb_free(&sb);
	}
}
