/* The counter sampler: /proc/vmstat, /proc/interrupts and a memcg's stat
 * files, kept open and re-read with pread on absolute CLOCK_MONOTONIC
 * deadlines, in one thread, without forks. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- parsers (fixtures in tests/data feed these) ---- */

/* Called once per key in file order. */
typedef void (*procparse_fn)(void *ctx, const char *key, size_t key_len, uint64_t value);

/* "key value\n" files: /proc/vmstat, memory.stat, memory.events,
 * memory.oom_control. Keys matched whole, numbers strict; returns -EINVAL
 * naming nothing (caller names the file) on a malformed line. */
int procparse_kv(const char *buf, size_t len, procparse_fn fn, void *ctx);
/* /proc/interrupts: calls fn for "TLB" (summed over CPUs) and, when
 * per_cpu_fn is set, per_cpu_fn(ctx, "TLB", cpu, value) for each CPU. */
typedef void (*procparse_cpu_fn)(void *ctx, const char *key, size_t key_len, unsigned cpu, uint64_t value);
int procparse_interrupts(const char *buf, size_t len, procparse_fn fn, procparse_cpu_fn per_cpu_fn, void *ctx);
/* PSI "some avg10=.. avg60=.. avg300=.. total=N" lines: fn(ctx, "some_total", N) */
int procparse_pressure(const char *buf, size_t len, procparse_fn fn, void *ctx);

/* Whether each counter is a level or events, and its unit:
 * db/counter.h, shared with the store's readers. */

/* ---- the sampler ---- */

struct sampler_opts {
	double interval_s;       /* > 0; 0.1 must work */
	const char *memcg_dir;   /* NULL: no memcg files */
	int cgroup_version;      /* 1 or 2, for memcg file names; 0: detect */
	bool series;             /* keep the time series */
	bool per_cpu;            /* keep per-CPU interrupt series */
	bool normal_priority;    /* keep the caller's scheduling; by default the
	                            thread takes the lowest SCHED_FIFO priority
	                            (else nice -10) when allowed, so that it
	                            wakes on time under a CPU-bound workload */
};

struct sampler;

/* Opens the files, takes the first sample synchronously, starts the thread. */
int sampler_start(const struct sampler_opts *o, struct sampler **ret);
/* Takes the last sample synchronously and joins the thread. */
int sampler_stop(struct sampler *s);
void sampler_free(struct sampler *s);

/* After stop: one call per counter. delta is end minus start with resets
 * (a counter that goes down) counted from zero; gauges give last - first. */
typedef void (*sampler_delta_fn)(void *ctx, const char *metric, const char *unit, double delta);
void sampler_foreach_delta(const struct sampler *s, sampler_delta_fn fn, void *ctx);

/* After stop: the series, one blob per counter, plus the sample times in
 * the same encoding (ns since the first sample): the store's encoding,
 * db/series.h, which decodes them. */
typedef void (*sampler_series_fn)(void *ctx, const char *metric, const uint8_t *blob, size_t len, size_t n_samples);
void sampler_foreach_series(const struct sampler *s, sampler_series_fn fn, void *ctx);
int sampler_times(const struct sampler *s, const uint8_t **ret_blob, size_t *ret_len);

struct sampler_stats {
	size_t samples;
	size_t missed;            /* deadlines skipped because we were late */
	double lateness_p99_s;
	double lateness_max_s;
	double cpu_s;             /* CPU time of the sampler thread, plus the
	                             first and last samples taken by the caller */
	size_t read_errors;       /* reads or parses that failed (values kept) */
};
void sampler_get_stats(const struct sampler *s, struct sampler_stats *ret);
