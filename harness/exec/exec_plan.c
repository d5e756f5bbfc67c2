/* Planning: the job's schedule of steps, balanced over variant orders. */
#include "harness/exec/executor.h"
#include "harness/job/job.h"
#include "db/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

int exec_plan(const struct job *j, struct store_step **ret, size_t *ret_n)
{
	/* a job that boots kernels: a pair is one boot of each variant, with
	 * runs_per_boot runs of each workload inside it */
	bool boots = job_boots_kernels(j);
	size_t reps = boots ? j->runs_per_boot : 1;
	size_t nv = j->n_variants, n = (size_t)j->pairs * j->n_workloads * nv * reps;
	struct store_step *v = calloc(n ? n : 1, sizeof(*v));
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
	*ret = v;
	*ret_n = k;
	return 0;
}
