/* The machine formats. JSON is the contract of STATS.md ("The JSON
 * report", schema 1): field names are fixed, more may be added; numbers
 * that cannot be computed are null, never NaN; per-run values are in
 * execution order, paired by index across variants, null for a missing
 * run. A job that boots kernels adds "kernels" (each variant's build),
 * "runs_by_boot" (each boot, its build and its runs) and
 * "kernel_warnings"; other reports do not have them. CSV carries the
 * metric fields, one row per workload x metric x compared variant. */
#include "harness/report/report.h"
#include "harness/report/report_priv.h"
#include "harness/job/job.h"
#include "harness/base/json.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define REPORT_SCHEMA 1

static void num(FILE *out, double v)
{
	char buf[64];
	json_num(v, buf, sizeof(buf));
	fputs(buf, out);
}

static void key(FILE *out, const char *k)
{
	json_str_file(out, k);
	fputs(": ", out);
}

static void knum(FILE *out, const char *k, double v, bool comma)
{
	key(out, k);
	num(out, v);
	if (comma)
		fputs(", ", out);
}

static void kstr(FILE *out, const char *k, const char *v, bool comma)
{
	key(out, k);
	json_str_file(out, v);
	if (comma)
		fputs(", ", out);
}

static double mem_or_null(uint64_t v)
{
	return v == JOB_MEM_UNSET || v == JOB_MEM_MAX ? NAN : v == JOB_MEM_ZERO ? 0 : (double)v;
}

static void header(FILE *out, const struct report_workload *w)
{
	const struct report_header *h = &w->h;
	fputs(",\n      \"header\": {", out);
	kstr(out, "type", h->type, true);
	kstr(out, "params", h->params, true);
	kstr(out, "kernel", h->kernel, true);
	knum(out, "cpus", h->cpus, true);
	knum(out, "cgroup_version", h->cgroup_version, true);
	knum(out, "mem_total_bytes", (double)h->mem_total, true);
	knum(out, "swap_total_bytes", (double)h->swap_total, true);
	kstr(out, "swap", h->swap_kind, true);
	kstr(out, "swap_devices", h->swap_devices, true);
	knum(out, "memory_max_bytes", mem_or_null(h->memory_max), true);
	knum(out, "memory_high_bytes", mem_or_null(h->memory_high), true);
	knum(out, "memory_swap_max_bytes", mem_or_null(h->memory_swap_max), true);
	knum(out, "duration_s", h->duration_s, true);
	knum(out, "workers", h->workers ? (double)h->workers : NAN, true);
	if (h->differs[0]) /* only then: reports of jobs without them read as before */
		kstr(out, "settings_differ", h->differs, true);
	if (h->conditioned)
		knum(out, "runs_not_idle", (double)h->not_idle, true);
	kstr(out, "alloc", h->alloc[0] ? h->alloc : NULL, false);
	fputs("}", out);
}

/* Run counts by state, per variant (stored jobs). */
static void run_counts(FILE *out, const struct report *r, const struct report_workload *w)
{
	fputs(",\n      \"runs\": {", out);
	for (size_t v = 0; v < r->n_variants; v++) {
		fputs(v ? ", " : "", out);
		key(out, r->variants[v]);
		fputs("{", out);
		for (size_t s = 0; s < RUN_STATUS_N; s++)
			knum(out, run_status_name((enum run_status)s), (double)w->runs[v * RUN_STATUS_N + s], s + 1 < RUN_STATUS_N);
		fputs("}", out);
	}
	fputs("}", out);
	/* oom = tolerate: the counted runs include runs with memcg OOM kills */
	fputs(",\n      \"oom\": {", out);
	kstr(out, "policy", w->oom_tolerate ? "tolerate" : "refuse", true);
	knum(out, "counted_runs_with_kills", (double)w->oom_counted, false);
	fputs("}", out);
}

/* kstr with "" as null. */
static void kstr_or_null(FILE *out, const char *k, const char *v, bool comma)
{
	kstr(out, k, v && v[0] ? v : NULL, comma);
}

static void build_obj(FILE *out, const struct report_kernel *k)
{
	if (!k->build_id) {
		fputs("null", out);
		return;
	}
	fputs("{", out);
	knum(out, "id", (double)k->build_id, true);
	key(out, "found");
	fputs(k->found ? "true, " : "false, ", out);
	kstr_or_null(out, "kind", k->kind, true);
	kstr_or_null(out, "status", k->found ? build_status_name(k->status) : NULL, true);
	kstr_or_null(out, "kernelrelease", k->kernelrelease, true);
	kstr_or_null(out, "tree", k->tree, true);
	kstr_or_null(out, "base_ref", k->base_ref, true);
	kstr_or_null(out, "base_sha", k->base_sha, true);
	kstr_or_null(out, "series", k->series, true);
	kstr_or_null(out, "image", k->image, true);
	key(out, "track");
	if (k->track.track[0]) {
		fputs("{", out);
		kstr(out, "track", k->track.track, true);
		kstr(out, "sha", k->track.sha, true);
		kstr(out, "subject", k->track.subject, true);
		knum(out, "commit_date", k->track.date, true);
		kstr_or_null(out, "event", k->track.event, false);
		fputs("}, ", out);
	} else {
		fputs("null, ", out);
	}
	key(out, "patches");
	fputs("[", out);
	for (size_t i = 0; i < k->n_patches; i++) {
		fputs(i ? ", {" : "{", out);
		kstr(out, "subject", k->patches[i].subject, true);
		kstr(out, "message_id", k->patches[i].message_id, false);
		fputs("}", out);
	}
	fputs("]}", out);
}

/* Jobs that boot kernels: each variant's build and boots. */
static void kernels(FILE *out, const struct report *r)
{
	fputs(",\n  \"kernels\": [", out);
	for (size_t v = 0; v < r->n_variants; v++) {
		const struct report_kernel *k = &r->kernels[v];
		fputs(v ? ",\n    {" : "\n    {", out);
		kstr(out, "variant", r->variants[v], true);
		key(out, "build");
		build_obj(out, k);
		fputs(", ", out);
		knum(out, "boots", (double)k->boots, true);
		knum(out, "failed_boots", (double)k->failed_boots, false);
		fputs("}", out);
	}
	fputs(r->n_variants ? "\n  ]" : "]", out);
}

static void boot_run_obj(FILE *out, const struct report *r, const struct report_boot_run *x)
{
	fputs("{", out);
	knum(out, "id", (double)x->id, true);
	kstr(out, "workload", x->workload < r->n_workloads ? r->w[x->workload].name : NULL, true);
	knum(out, "pair", x->pair + 1, true);
	kstr(out, "status", run_status_name(x->status), true);
	kstr(out, "kernel_release", x->kernel_release, true);
	key(out, "wrong_kernel");
	fputs(x->wrong ? "true}" : "false}", out);
}

/* Jobs that boot kernels: each boot, the build it booted and its runs;
 * then every run or boot that is not on its variant's kernel. */
static void run_boots(FILE *out, const struct report *r)
{
	fputs(",\n  \"runs_by_boot\": [", out);
	for (size_t i = 0; i < r->n_run_boots; i++) {
		const struct report_boot *b = &r->run_boots[i];
		fputs(i ? ",\n    {" : "\n    {", out);
		kstr(out, "variant", r->variants[b->variant], true);
		knum(out, "slot", b->slot >= 0 ? b->slot + 1 : NAN, true);
		kstr_or_null(out, "boot_id", b->boot_id, true);
		knum(out, "build_id", b->slot >= 0 ? (double)b->build_id : NAN, true);
		kstr_or_null(out, "kernel_release", b->kernel_release, true);
		key(out, "runs");
		fputs("[", out);
		for (size_t k = 0; k < b->n_runs; k++) {
			fputs(k ? ", " : "", out);
			boot_run_obj(out, r, &b->runs[k]);
		}
		fputs("]}", out);
	}
	fputs(r->n_run_boots ? "\n  ],\n  \"kernel_warnings\": [" : "],\n  \"kernel_warnings\": [", out);
	for (size_t i = 0; i < r->n_kernel_warnings; i++) {
		fputs(i ? ", " : "", out);
		json_str_file(out, r->kernel_warnings[i]);
	}
	fputs("]", out);
}

static void variant_obj(FILE *out, const struct report *r, const struct report_workload *w,
			const struct report_metric *m, size_t v)
{
	const struct stats_desc *d = &m->desc[v];
	fputs("            {", out);
	kstr(out, "name", r->variants[v], true);
	knum(out, "n", (double)d->n, true);
	knum(out, "mean", d->mean, true);
	knum(out, "median", d->median, true);
	knum(out, "stddev", d->stddev, true);
	knum(out, "cov_pct", d->cov_pct, true);
	knum(out, "min", d->min, true);
	knum(out, "max", d->max, true);
	key(out, "values");
	fputs("[", out);
	for (size_t p = 0; p < w->pairs; p++) {
		fputs(p ? ", " : "", out);
		num(out, m->values[v * w->pairs + p]);
	}
	fputs("]}", out);
}

/* The fields of one comparison (variant v against the baseline). */
static void comparison(FILE *out, const struct report_metric *m, size_t v)
{
	const struct stats_result *c = &m->cmp[v];
	knum(out, "delta_abs", c->delta_abs, true);
	knum(out, "delta_pct", c->delta_pct, true);
	knum(out, "hl_pct", c->hl_pct, true);
	knum(out, "ci_low_pct", c->ci_low_pct, true);
	knum(out, "ci_high_pct", c->ci_high_pct, true);
	knum(out, "ci_level", c->test == STATS_TEST_NONE ? NAN : c->ci_level, true);
	knum(out, "ci90_low_pct", c->ci90_low_pct, true);
	knum(out, "ci90_high_pct", c->ci90_high_pct, true);
	knum(out, "pairs_used", (double)c->pairs, true);
	key(out, "log_scale");
	fputs(c->log_scale ? "true, " : "false, ", out);
	kstr(out, "test", stats_test_name(c->test), true);
	knum(out, "p_value", c->p_value, true);
	knum(out, "q_value", c->q_value, true);
	knum(out, "welch_p_value", c->welch_p, true);
	knum(out, "min_p_value", c->min_p, true);
	knum(out, "min_change_pct", c->min_change_pct, true);
	knum(out, "equivalence_pct", c->equivalence_pct, true);
	kstr(out, "verdict", stats_verdict_name(c->verdict), false);
}

static void metric_obj(FILE *out, const struct report *r, const struct report_workload *w, const struct report_metric *m)
{
	fputs("        {", out);
	kstr(out, "name", m->name, true);
	kstr(out, "label", m->info.label, true);
	kstr(out, "unit", m->info.unit, true);
	kstr(out, "direction", stats_direction_name(m->info.dir), true);
	key(out, "primary");
	fputs(m->primary ? "true" : "false", out);
	fputs(",\n          \"variants\": [\n", out);
	for (size_t v = 0; v < r->n_variants; v++) {
		variant_obj(out, r, w, m, v);
		fputs(v + 1 < r->n_variants ? ",\n" : "\n", out);
	}
	fputs("          ],\n          ", out);
	if (r->n_variants > 1) {
		comparison(out, m, 1);
		fputs(",\n          ", out);
	}
	fputs("\"comparisons\": [", out);
	for (size_t v = 1; v < r->n_variants; v++) {
		fputs(v > 1 ? ",\n            {" : "\n            {", out);
		kstr(out, "baseline", r->variants[0], true);
		kstr(out, "variant", r->variants[v], true);
		comparison(out, m, v);
		fputs("}", out);
	}
	fputs("]}", out);
}

int report_render_json(const struct report *r, FILE *out)
{
	fprintf(out, "{\n  \"schema\": %d,\n  ", REPORT_SCHEMA);
	kstr(out, "kab_version", KAB_VERSION, false);
	fputs(",\n  \"job\": {", out);
	knum(out, "id", r->job_id ? (double)r->job_id : NAN, true);
	kstr(out, "name", r->title, true);
	kstr(out, "status", r->job_id ? job_status_name(r->job_status) : NULL, true);
	kstr(out, "order", r->order[0] ? r->order : NULL, true);
	kstr(out, "source", r->source, false);
	fputs("},\n  \"variants\": [", out);
	for (size_t v = 0; v < r->n_variants; v++) {
		fputs(v ? ", " : "", out);
		json_str_file(out, r->variants[v]);
	}
	fputs("]", out);
	if (r->kernels)
		kernels(out, r);
	if (r->job_id) {
		/* what makes the comparison doubtful, as the text report's first lines */
		fputs(",\n  \"warnings\": [", out);
		for (size_t i = 0; i < r->n_warnings; i++) {
			fputs(i ? ", " : "", out);
			json_str_file(out, r->warnings[i]);
		}
		fputs("]", out);
	}
	fputs(",\n  \"workloads\": [", out);
	for (size_t wi = 0; wi < r->n_workloads; wi++) {
		const struct report_workload *w = &r->w[wi];
		fputs(wi ? ",\n    {" : "\n    {", out);
		kstr(out, "name", w->name, true);
		knum(out, "pairs", (double)w->pairs, true);
		knum(out, "looks", w->looks, true);
		kstr(out, "stop_reason", w->stop_reason, true);
		kstr(out, "budget", w->budget, true);
		/* rule 6: how many secondary metrics BH adjusted over (those
		 * that could reach p < alpha), and how many primaries Holm
		 * adjusted among themselves (0: none, each at alpha) */
		knum(out, "bh_family", r->n_variants > 1 ? (double)w->family[1] : NAN, true);
		knum(out, "holm_primaries", r->n_variants > 1 ? (double)w->holm[1] : NAN, false);
		if (w->have_header)
			header(out, w);
		if (r->job_id)
			run_counts(out, r, w);
		fputs(",\n      \"metrics\": [", out);
		for (size_t i = 0; i < w->n_metrics; i++) {
			fputs(i ? ",\n" : "\n", out);
			metric_obj(out, r, w, &w->m[i]);
		}
		fputs(w->n_metrics ? "\n      ]}" : "]}", out);
	}
	fputs(r->n_workloads ? "\n  ],\n  \"runs_not_counted\": [" : "],\n  \"runs_not_counted\": [", out);
	for (size_t i = 0; i < r->n_notes; i++) {
		fputs(i ? ", " : "", out);
		json_str_file(out, r->notes[i]);
	}
	fputs("],\n  \"unavailable\": [", out);
	for (size_t i = 0; i < r->n_unavailable; i++) {
		fputs(i ? ", " : "", out);
		json_str_file(out, r->unavailable[i]);
	}
	fputs("],\n  \"boots\": [", out);
	for (size_t i = 0; i < r->n_boots; i++) {
		fputs(i ? ", " : "", out);
		json_str_file(out, r->boots[i]);
	}
	fputs("]", out);
	if (r->kernels)
		run_boots(out, r);
	fputs("\n}\n", out);
	return ferror(out) ? -EIO : 0;
}

static void cnum(FILE *out, double v)
{
	if (isfinite(v)) {
		char buf[64];
		json_num(v, buf, sizeof(buf));
		fputs(buf, out);
	}
	fputc(',', out);
}

static void cstr(FILE *out, const char *s)
{
	report_csv_field(out, s);
	fputc(',', out);
}

static void cdesc(FILE *out, const struct stats_desc *d)
{
	cnum(out, (double)d->n);
	cnum(out, d->mean);
	cnum(out, d->median);
	cnum(out, d->stddev);
	cnum(out, d->cov_pct);
	cnum(out, d->min);
	cnum(out, d->max);
}

/* Per-run values as one field: "1 2 NA 4". */
static void cvalues(FILE *out, const struct report_workload *w, const struct report_metric *m, size_t v)
{
	char buf[64];
	for (size_t p = 0; p < w->pairs; p++) {
		double x = m->values[v * w->pairs + p];
		if (isfinite(x))
			json_num(x, buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "NA");
		fprintf(out, "%s%s", p ? " " : "", buf);
	}
}

int report_render_csv(const struct report *r, FILE *out)
{
	fputs("workload,metric,label,unit,direction,primary,baseline,variant,"
	      "n_before,mean_before,median_before,stddev_before,cov_pct_before,min_before,max_before,"
	      "n_after,mean_after,median_after,stddev_after,cov_pct_after,min_after,max_after,"
	      "pairs_used,delta_abs,delta_pct,hl_pct,ci_low_pct,ci_high_pct,ci_level,ci90_low_pct,ci90_high_pct,log_scale,test,"
	      "p_value,q_value,welch_p_value,min_p_value,min_change_pct,equivalence_pct,verdict,values_before,values_after\n",
	      out);
	for (size_t wi = 0; wi < r->n_workloads; wi++) {
		const struct report_workload *w = &r->w[wi];
		for (size_t i = 0; i < w->n_metrics; i++) {
			const struct report_metric *m = &w->m[i];
			for (size_t v = 1; v < r->n_variants; v++) {
				const struct stats_result *c = &m->cmp[v];
				cstr(out, w->name);
				cstr(out, m->name);
				cstr(out, m->info.label);
				cstr(out, m->info.unit);
				cstr(out, stats_direction_name(m->info.dir));
				cstr(out, m->primary ? "true" : "false");
				cstr(out, r->variants[0]);
				cstr(out, r->variants[v]);
				cdesc(out, &m->desc[0]);
				cdesc(out, &m->desc[v]);
				cnum(out, (double)c->pairs);
				cnum(out, c->delta_abs);
				cnum(out, c->delta_pct);
				cnum(out, c->hl_pct);
				cnum(out, c->ci_low_pct);
				cnum(out, c->ci_high_pct);
				cnum(out, c->test == STATS_TEST_NONE ? NAN : c->ci_level);
				cnum(out, c->ci90_low_pct);
				cnum(out, c->ci90_high_pct);
				cstr(out, c->log_scale ? "true" : "false");
				cstr(out, stats_test_name(c->test));
				cnum(out, c->p_value);
				cnum(out, c->q_value);
				cnum(out, c->welch_p);
				cnum(out, c->min_p);
				cnum(out, c->min_change_pct);
				cnum(out, c->equivalence_pct);
				cstr(out, stats_verdict_name(c->verdict));
				cvalues(out, w, m, 0);
				fputc(',', out);
				cvalues(out, w, m, v);
				fputc('\n', out);
			}
		}
	}
	return ferror(out) ? -EIO : 0;
}
