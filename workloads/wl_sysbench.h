/* sysbench-oltp: the parser of sysbench's final report, for the adapter
 * and its unit test. */
#pragma once
#include <stdbool.h>

struct wl_sysbench_report {
	double transactions, tps;  /* "transactions: N (X per sec.)" */
	double queries, qps;       /* "queries: N (X per sec.)" */
	double errors, reconnects; /* "ignored errors:", "reconnects:" counts */
	double total_time_s;
	double lat_min_ms, lat_avg_ms, lat_max_ms;
	double lat_pct_ms;         /* "Nth percentile:" */
	double percentile;         /* N */
};

/* Parses sysbench 1.0's final report out of its output (interim report
 * lines, FATAL messages and other text are skipped). -ENODATA when the
 * report or one of its figures is missing, -EINVAL on a malformed figure. */
int wl_sysbench_parse_report(const char *text, struct wl_sysbench_report *ret);
