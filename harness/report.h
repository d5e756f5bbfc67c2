/* Reports: the before/after table of a stored job. */
#pragma once
#include <stdint.h>
#include <stdio.h>

struct store;

/* Prints, per workload, the header block (kernel, CPUs, memory, swap,
 * memcg limit, duration) and the Metric / n / Before / After / Delta
 * table comparing every variant with the first. */
int report_print(struct store *st, int64_t job_id, FILE *out);
