/* Planning: the job's schedule of steps, balanced over variant orders,
 * and each workload's warm-up before its first pair. */
#include "harness/exec/executor.h"
#include "harness/job/job.h"
#include "db/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* doc/statistics.md, rule 1: a cold first run must not become data. Each workload
 * runs once, uncounted (STORE_PAIR_WARMUP), just before its first step:
 * in that step's variant and boot, so a warm-up never costs a switch of
 * kernel. v has room for n + the job's workloads steps; the count of the
 * schedule with its warm-ups goes to *ret_n. */
static int add_warmups(const struct job *j, struct store_step *v, size_t n, size_t *ret_n)
{
	bool *warmed = calloc(j->n_workloads ? j->n_workloads : 1, sizeof(bool));
	struct store_step *plan = malloc((n ? n : 1) * sizeof(*plan));
	if (!warmed || !plan) {
		free(warmed);
		free(plan);
		return -ENOMEM;
	}
	memcpy(plan, v, n * sizeof(*plan));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		size_t w = (size_t)plan[i].workload;
		if (!warmed[w]) {
			warmed[w] = true;
			v[k++] = (struct store_step){ .pair = STORE_PAIR_WARMUP,
						      .variant = plan[i].variant,
						      .workload = (int)w,
						      .boot = plan[i].boot,
						      .status = STEP_PENDING };
		}
		v[k++] = plan[i];
	}
	for (size_t i = 0; i < k; i++)
		v[i].seq = (int)i;
	free(warmed);
	free(plan);
	*ret_n = k;
	return 0;
}

int exec_plan(const struct job *j, struct store_step **ret, size_t *ret_n)
{
	/* a job that boots kernels: a pair is one boot of each variant, with
	 * runs_per_boot runs of each workload inside it */
	bool boots = job_boots_kernels(j);
	size_t reps = boots ? j->runs_per_boot : 1;
	size_t nv = j->n_variants, n = (size_t)j->pairs * j->n_workloads * nv * reps;
	size_t warmups = j->warmup ? j->n_workloads : 0, cap = n + warmups;
	struct store_step *v = calloc(cap ? cap : 1, sizeof(*v));
	int *perm = calloc(nv, sizeof(int));
	if (!v || !perm) {
		free(v);
		free(perm);
		return -ENOMEM;
	}
	uint64_t rng = j->seed ? j->seed : 1;
	bool block_reversed = false;
	size_t k = 0;
	for (unsigned p = 0; p < j->pairs; p++) {
		bool reversed;
		switch (j->order) {
		case JOB_ORDER_ALTERNATE:
			reversed = false;
			break;
		case JOB_ORDER_RANDOM:
			/* balanced: each block of two pairs has one of each order,
			 * the block's first order drawn from the seed */
			if (p % 2 == 0)
				block_reversed = xorshift(&rng) & 1;
			reversed = (p % 2 == 0) ? block_reversed : !block_reversed;
			break;
		default:
			reversed = p % 2 == 1; /* ABBA */
		}
		for (size_t i = 0; i < nv; i++)
			perm[i] = reversed ? (int)(nv - 1 - i) : (int)i;
		/* runtime variants alternate inside each workload; kernels
		 * alternate between boots, every workload inside each */
		for (size_t outer = 0; outer < (boots ? nv : j->n_workloads); outer++)
			for (size_t inner = 0; inner < (boots ? j->n_workloads : nv); inner++)
				for (size_t r = 0; r < reps; r++) {
					size_t vi = boots ? outer : inner, w = boots ? inner : outer;
					v[k] = (struct store_step){ .seq = (int)k, .pair = (int)p, .variant = perm[vi], .workload = (int)w,
								    .boot = boots ? (int)(p * nv + vi) : -1, .rep = (int)r,
								    .status = STEP_PENDING };
					k++;
				}
	}
	free(perm);
	if (warmups) {
		int r = add_warmups(j, v, k, &k);
		if (r < 0) {
			free(v);
			return r;
		}
	}
	*ret = v;
	*ret_n = k;
	return 0;
}
