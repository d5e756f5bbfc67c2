/* A parsed job in the store's terms: its name, file, text and schedule
 * settings, each variant's kernel and knobs as applied, each workload's
 * limits, handed to db/ as a struct store_job_spec. */
#include "harness/job/job_store.h"
#include "harness/job/job.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>

struct spec {
	struct store_job_spec job;
	struct store_variant_spec *variants;
	struct store_workload_spec *workloads;
	struct strbuf *knobs;  /* one per variant, what its knobs field points to */
};

static void spec_free(struct spec *s)
{
	for (size_t i = 0; s->knobs && i < s->job.n_variants; i++)
		sb_free(&s->knobs[i]);
	free(s->knobs);
	free(s->variants);
	free(s->workloads);
}

/* A memory limit as the store keeps it: -1 for "max". */
static int64_t mem_limit(uint64_t v) { return v == JOB_MEM_MAX ? -1 : (int64_t)v; }

/* The store's form of j; its strings stay j's. */
static int spec_fill(const struct job *j, struct spec *ret)
{
	struct spec s = {
		.job = {
			.name = j->name, .file = j->file, .text = j->text, .pairs = j->pairs,
			.order = job_order_name(j->order), .swap = job_swap_kind_name(j->swap.kind),
			.n_variants = j->n_variants, .n_workloads = j->n_workloads,
		},
		.variants = calloc(j->n_variants ? j->n_variants : 1, sizeof(struct store_variant_spec)),
		.workloads = calloc(j->n_workloads ? j->n_workloads : 1, sizeof(struct store_workload_spec)),
		.knobs = calloc(j->n_variants ? j->n_variants : 1, sizeof(struct strbuf)),
	};
	if (!s.variants || !s.workloads || !s.knobs)
		goto nomem;
	for (size_t i = 0; i < j->n_variants; i++) {
		const struct job_variant *v = &j->variants[i];
		for (size_t k = 0; k < v->n_knobs; k++)
			if (sb_printf(&s.knobs[i], "%s=%s\n", v->knobs[k].path, v->knobs[k].value) < 0)
				goto nomem;
		s.variants[i] = (struct store_variant_spec){
			.label = v->label, .name = v->name, .kernel = v->kernel,
			.knobs = s.knobs[i].buf ? s.knobs[i].buf : "",
		};
	}
	for (size_t i = 0; i < j->n_workloads; i++) {
		const struct job_workload *w = &j->workloads[i];
		s.workloads[i] = (struct store_workload_spec){
			.name = w->name, .type = w->type, .memory_max = mem_limit(w->memory_max),
			.memory_high = mem_limit(w->memory_high), .memory_swap_max = mem_limit(w->memory_swap_max),
			.timeout_s = w->timeout_s,
		};
	}
	s.job.variants = s.variants;
	s.job.workloads = s.workloads;
	*ret = s;
	return 0;
nomem:
	spec_free(&s);
	return -ENOMEM;
}

int job_store_create(struct store *st, const struct job *j, int64_t *ret_id)
{
	struct spec s;
	int r = spec_fill(j, &s);
	if (r < 0)
		return r;
	r = store_job_create(st, &s.job, ret_id);
	spec_free(&s);
	return r;
}

int job_store_submit(struct store *st, const struct job *j, const char *submitter, const struct store_step *steps,
		     size_t n, const struct store_lab_claim *lab, int64_t *ret_id)
{
	struct spec s;
	int r = spec_fill(j, &s);
	if (r < 0)
		return r;
	s.job.lab = lab;
	r = store_job_submit(st, &s.job, submitter, steps, n, ret_id);
	spec_free(&s);
	return r;
}

int job_store_load(struct store *st, int64_t id, struct job **ret, struct strbuf *err)
{
	struct store_job sj;
	int r = store_job_get(st, id, &sj);
	if (r < 0) {
		sb_printf(err, "job %lld is not in the database", (long long)id);
		return r;
	}
	struct diags d = { 0 };
	if ((r = job_parse_string_nocheck(sj.file, sj.text, ret, &d)) < 0)
		sb_printf(err, "job %lld's text no longer parses%s%s", (long long)id, d.n ? ": " : "", d.n ? d.v[0].msg : "");
	diags_free(&d);
	store_job_clear(&sj);
	return r;
}
