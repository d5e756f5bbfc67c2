/* kab compare: kab's statistics and report formats for numbers measured
 * elsewhere, from a long-format CSV file:
 *
 *   metric,variant,pair,value[,unit][,direction][,workload]
 *
 * in any column order, header required; one row per run. Rows with the
 * same pair number are paired across variants; variants keep the order
 * they first appear in (the first is the baseline). */
#pragma once
#include <stddef.h>

struct diags;
struct report;

#define COMPARE_FILE_MAX (64u << 20)

struct compare_opts {
	const char *baseline;         /* NULL: the first variant in the file */
	const char *const *primary;   /* metric names or PREFIX* */
	size_t n_primary;
};

/* Reads text (len bytes, need not be NUL-terminated) into a report, not
 * yet analyzed. Every problem goes to d as "file:line: message" (line 0
 * for the whole file); then -EINVAL. -ENOMEM on no memory. */
int compare_csv_parse(const char *file, const char *text, size_t len, const struct compare_opts *o,
		      struct report **ret, struct diags *d);
/* The same from a file. */
int compare_csv_read(const char *path, const struct compare_opts *o, struct report **ret, struct diags *d);
