/* The machine formats. JSON is a contract (doc/report.md, schema 1):
 * field names are fixed, more may be added; numbers
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

static double mem_or_null(uint64_t v)
{
	return v == JOB_MEM_UNSET || v == JOB_MEM_MAX ? NAN : v == JOB_MEM_ZERO ? 0 : (double)v;
}

/* The strings at v[0..n) as an array. */
static json_t *strings(char *const *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, jw_str(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *header(const struct report_workload *w)
{
	const struct report_header *h = &w->h;
	json_t *o = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "type",
			      jw_str(h->type), "params", jw_str(h->params), "kernel", jw_str(h->kernel), "cpus",
			      jw_num(h->cpus), "cgroup_version", jw_num(h->cgroup_version), "mem_total_bytes",
			      jw_num((double)h->mem_total), "swap_total_bytes", jw_num((double)h->swap_total), "swap",
			      jw_str(h->swap_kind), "swap_devices", jw_str(h->swap_devices), "memory_max_bytes",
			      jw_num(mem_or_null(h->memory_max)), "memory_high_bytes", jw_num(mem_or_null(h->memory_high)),
			      "memory_swap_max_bytes", jw_num(mem_or_null(h->memory_swap_max)), "duration_s",
			      jw_num(h->duration_s), "workers", jw_num(h->workers ? (double)h->workers : NAN));
	int r = o ? 0 : -ENOMEM;
	if (o && h->differs[0]) /* only then: reports of jobs without them read as before */
		r |= jw_set(o, "settings_differ", jw_str(h->differs));
	if (o && h->conditioned)
		r |= jw_set(o, "runs_not_idle", jw_num((double)h->not_idle));
	if (o)
		r |= jw_set(o, "alloc", jw_str_opt(h->alloc));
	if (r < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Run counts by state, per variant (stored jobs). */
static json_t *run_counts(const struct report *r, const struct report_workload *w)
{
	json_t *o = json_object();
	for (size_t v = 0; o && v < r->n_variants; v++) {
		json_t *c = json_object();
		for (size_t s = 0; c && s < RUN_STATUS_N; s++)
			if (jw_set(c, run_status_name((enum run_status)s), jw_num((double)w->runs[v * RUN_STATUS_N + s])) < 0) {
				json_decref(c);
				c = NULL;
			}
		if (jw_set(o, r->variants[v], c) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static json_t *track_obj(const struct report_kernel *k)
{
	if (!k->track.track[0])
		return json_null();
	return json_pack("{s:o, s:o, s:o, s:o, s:o}", "track", jw_str(k->track.track), "sha", jw_str(k->track.sha), "subject",
			 jw_str(k->track.subject), "commit_date", jw_num(k->track.date), "event", jw_str_opt(k->track.event));
}

static json_t *build_obj(const struct report_kernel *k)
{
	if (!k->build_id)
		return json_null();
	json_t *patches = json_array();
	for (size_t i = 0; patches && i < k->n_patches; i++)
		if (json_array_append_new(patches, json_pack("{s:o, s:o}", "subject", jw_str(k->patches[i].subject),
							     "message_id", jw_str(k->patches[i].message_id))) < 0) {
			json_decref(patches);
			patches = NULL;
		}
	return json_pack("{s:o, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "id",
			 jw_num((double)k->build_id), "found", k->found, "kind", jw_str_opt(k->kind), "status",
			 jw_str_opt(k->found ? build_status_name(k->status) : NULL), "kernelrelease",
			 jw_str_opt(k->kernelrelease), "tree", jw_str_opt(k->tree), "base_ref", jw_str_opt(k->base_ref),
			 "base_sha", jw_str_opt(k->base_sha), "series", jw_str_opt(k->series), "image",
			 jw_str_opt(k->image), "track", track_obj(k), "patches", patches);
}

/* Jobs that boot kernels: each variant's build and boots. */
static void kernels(struct jw *w, const struct report *r)
{
	jw_open(w, "kernels", '[', JW_LINES);
	for (size_t v = 0; v < r->n_variants; v++) {
		const struct report_kernel *k = &r->kernels[v];
		jw_put(w, NULL,
		       json_pack("{s:o, s:o, s:o, s:o}", "variant", jw_str(r->variants[v]), "build", build_obj(k),
				 "boots", jw_num((double)k->boots), "failed_boots", jw_num((double)k->failed_boots)));
	}
	jw_close(w);
}

static json_t *boot_run_obj(const struct report *r, const struct report_boot_run *x)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:b}", "id", jw_num((double)x->id), "workload",
			 jw_str(x->workload < r->n_workloads ? r->w[x->workload].name : NULL), "pair",
			 jw_num(x->pair + 1), "status", jw_str(run_status_name(x->status)), "kernel_release",
			 jw_str(x->kernel_release), "wrong_kernel", x->wrong);
}

/* Jobs that boot kernels: each boot, the build it booted and its runs;
 * then every run or boot that is not on its variant's kernel. */
static void run_boots(struct jw *w, const struct report *r)
{
	jw_open(w, "runs_by_boot", '[', JW_LINES);
	for (size_t i = 0; i < r->n_run_boots; i++) {
		const struct report_boot *b = &r->run_boots[i];
		json_t *runs = json_array();
		for (size_t k = 0; runs && k < b->n_runs; k++)
			if (json_array_append_new(runs, boot_run_obj(r, &b->runs[k])) < 0) {
				json_decref(runs);
				runs = NULL;
			}
		jw_put(w, NULL,
		       json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "variant", jw_str(r->variants[b->variant]), "slot",
				 jw_num(b->slot >= 0 ? b->slot + 1 : NAN), "boot_id", jw_str_opt(b->boot_id),
				 "build_id", jw_num(b->slot >= 0 ? (double)b->build_id : NAN), "kernel_release",
				 jw_str_opt(b->kernel_release), "runs", runs));
	}
	jw_close(w);
	jw_put(w, "kernel_warnings", strings(r->kernel_warnings, r->n_kernel_warnings));
}

static json_t *variant_obj(const struct report *r, const struct report_workload *w, const struct report_metric *m, size_t v)
{
	const struct stats_desc *d = &m->desc[v];
	json_t *values = json_array();
	for (size_t p = 0; values && p < w->pairs; p++)
		if (json_array_append_new(values, jw_num(m->values[v * w->pairs + p])) < 0) {
			json_decref(values);
			values = NULL;
		}
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "name", jw_str(r->variants[v]), "n",
			 jw_num((double)d->n), "mean", jw_num(d->mean), "median", jw_num(d->median), "stddev", jw_num(d->stddev),
			 "cov_pct", jw_num(d->cov_pct), "min", jw_num(d->min), "max", jw_num(d->max), "values", values);
}

/* The fields of one comparison (variant v against the baseline). */
static json_t *comparison(const struct report_metric *m, size_t v)
{
	const struct stats_result *c = &m->cmp[v];
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "delta_abs", jw_num(c->delta_abs), "delta_pct", jw_num(c->delta_pct), "hl_pct",
			 jw_num(c->hl_pct), "ci_low_pct", jw_num(c->ci_low_pct), "ci_high_pct", jw_num(c->ci_high_pct),
			 "ci_level", jw_num(c->test == STATS_TEST_NONE ? NAN : c->ci_level), "ci90_low_pct",
			 jw_num(c->ci90_low_pct), "ci90_high_pct", jw_num(c->ci90_high_pct), "pairs_used",
			 jw_num((double)c->pairs), "log_scale", c->log_scale, "test", jw_str(stats_test_name(c->test)),
			 "p_value", jw_num(c->p_value), "q_value", jw_num(c->q_value), "welch_p_value", jw_num(c->welch_p),
			 "min_p_value", jw_num(c->min_p), "min_change_pct", jw_num(c->min_change_pct), "equivalence_pct",
			 jw_num(c->equivalence_pct), "verdict", jw_str(stats_verdict_name(c->verdict)));
}

/* A metric: its name on the first line, its variants a line each, the
 * first comparison's fields on a line, then every comparison a line. */
static void metric(struct jw *j, const struct report *r, const struct report_workload *w, const struct report_metric *m)
{
	jw_open(j, NULL, '{', JW_INLINE);
	jw_put(j, "name", jw_str(m->name));
	jw_put(j, "label", jw_str(m->info.label));
	jw_put(j, "unit", jw_str(m->info.unit));
	jw_put(j, "direction", jw_str(direction_name(m->info.dir)));
	jw_put(j, "primary", json_boolean(m->primary));
	jw_break(j);
	jw_open(j, "variants", '[', JW_LINES);
	for (size_t v = 0; v < r->n_variants; v++)
		jw_put(j, NULL, variant_obj(r, w, m, v));
	jw_close(j);
	if (r->n_variants > 1) {
		jw_break(j);
		jw_put_members(j, comparison(m, 1));
	}
	jw_break(j);
	jw_open(j, "comparisons", '[', JW_LINES_TIGHT);
	for (size_t v = 1; v < r->n_variants; v++) {
		json_t *c = json_pack("{s:o, s:o}", "baseline", jw_str(r->variants[0]), "variant", jw_str(r->variants[v]));
		jw_put(j, NULL, c && json_object_update_new(c, comparison(m, v)) == 0 ? c : (json_decref(c), NULL));
	}
	jw_close(j);
	jw_close(j);
}

/* A workload: its own fields on the first line, then its header, run
 * counts and OOM policy a line each, and its metrics a line each. */
static void workload(struct jw *j, const struct report *r, const struct report_workload *w)
{
	jw_open(j, NULL, '{', JW_INLINE);
	jw_put(j, "name", jw_str(w->name));
	jw_put(j, "pairs", jw_num((double)w->pairs));
	jw_put(j, "looks", jw_num(w->looks));
	jw_put(j, "stop_reason", jw_str(w->stop_reason));
	jw_put(j, "budget", jw_str(w->budget));
	/* rule 6: how many secondary metrics BH adjusted over (those that
	 * could reach p < alpha), and how many primaries Holm adjusted among
	 * themselves (0: none, each at alpha) */
	jw_put(j, "bh_family", jw_num(r->n_variants > 1 ? (double)w->family[1] : NAN));
	jw_put(j, "holm_primaries", jw_num(r->n_variants > 1 ? (double)w->holm[1] : NAN));
	if (w->have_header) {
		jw_break(j);
		jw_put(j, "header", header(w));
	}
	if (r->job_id) {
		jw_break(j);
		jw_put(j, "runs", run_counts(r, w));
		/* oom = tolerate: the counted runs include runs with memcg OOM kills */
		jw_break(j);
		jw_put(j, "oom",
		       json_pack("{s:s, s:o}", "policy", w->oom_tolerate ? "tolerate" : "refuse",
				 "counted_runs_with_kills", jw_num((double)w->oom_counted)));
	}
	/* each metric made and written before the next */
	jw_break(j);
	jw_open(j, "metrics", '[', JW_LINES);
	for (size_t i = 0; i < w->n_metrics; i++)
		metric(j, r, w, &w->m[i]);
	jw_close(j);
	jw_close(j);
}

int report_render_json(const struct report *r, FILE *out)
{
	struct jw j;
	jw_init_file(&j, out, 0);
	jw_open(&j, NULL, '{', JW_LINES);
	jw_put(&j, "schema", json_integer(REPORT_SCHEMA));
	jw_put(&j, "kab_version", jw_str(KAB_VERSION));
	jw_put(&j, "job",
	       json_pack("{s:o, s:o, s:o, s:o, s:o}", "id", jw_num(r->job_id ? (double)r->job_id : NAN), "name",
			 jw_str(r->title), "status", jw_str(r->job_id ? job_status_name(r->job_status) : NULL), "order",
			 jw_str_opt(r->order), "source", jw_str(r->source)));
	jw_put(&j, "variants", strings(r->variants, r->n_variants));
	if (r->kernels)
		kernels(&j, r);
	if (r->job_id) /* what makes the comparison doubtful, as the text report's first lines */
		jw_put(&j, "warnings", strings(r->warnings, r->n_warnings));
	jw_open(&j, "workloads", '[', JW_LINES);
	for (size_t wi = 0; wi < r->n_workloads; wi++)
		workload(&j, r, &r->w[wi]);
	jw_close(&j);
	jw_put(&j, "runs_not_counted", strings(r->notes, r->n_notes));
	jw_put(&j, "unavailable", strings(r->unavailable, r->n_unavailable));
	jw_put(&j, "boots", strings(r->boots, r->n_boots));
	if (r->kernels)
		run_boots(&j, r);
	jw_close(&j);
	fputc('\n', out);
	int e = jw_end(&j);
	return e < 0 ? e : ferror(out) ? -EIO : 0;
}

static void cnum(FILE *out, double v)
{
	if (isfinite(v)) {
		char buf[64];
		jw_num_text(v, buf, sizeof(buf));
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
			jw_num_text(x, buf, sizeof(buf));
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
				cstr(out, direction_name(m->info.dir));
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
