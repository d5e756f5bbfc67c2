/* A workload's expect = METRIC OP NUMBER ...: the evidence a run must show
 * to be counted (the swap counter moved, the folios were the variant's
 * size). Parsing for the job parser, and the check of one run's metrics. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"

struct strbuf;

enum expect_op { EXPECT_GT, EXPECT_GE, EXPECT_LT, EXPECT_LE, EXPECT_EQ, EXPECT_NE };
#define EXPECT_OPS "> >= < <= == !="

struct job_expect {
	char *metric;   /* "vmstat.pswpout": one metric, no pattern */
	enum expect_op op;
	double value;
	char *number;   /* the number as written, printed back unchanged */
	char *variant;  /* expect.VARIANT = ...: only that variant's runs; NULL: every run */
	int line;
};

const char *expect_op_name(enum expect_op op);

/* Reads one comparison from *cursor (leading blanks and one ',' after it
 * are consumed) into *ret. 0 and *cursor advanced; 1 at the end of the
 * text; -EINVAL with err saying what is wrong (*cursor then at the next
 * comparison's likely start); -ENOMEM. */
int expect_parse_next(const char **cursor, struct job_expect *ret, char *err, size_t errlen);
void expect_clear(struct job_expect *e);

/* Whether value satisfies e. */
bool expect_holds(const struct job_expect *e, double value);

/* Looks a run's metric up: true with *ret set, false when the run has none. */
typedef bool (*expect_lookup_fn)(void *ctx, const char *metric, double *ret);

/* Whether e applies to a run of the variant named variant. */
bool expect_applies(const struct job_expect *e, const char *variant);

/* Checks every comparison that applies to variant (NULL: all) against a
 * run's metrics; returns how many
 * failed, appending to reason (when not NULL) a text naming each, "; "
 * between them: "expect vmstat.pswpout > 0: it was 0", "expect X > 0: the
 * run recorded no X". */
size_t expect_check(const struct job_expect *v, size_t n, const char *variant, expect_lookup_fn lookup, void *ctx,
		    struct strbuf *reason);

/* The status of a run that exited 0, from its evidence: RUN_OK, or with
 * reason set RUN_OOM_CONTAMINATED (the memcg OOM killer fired during it)
 * or RUN_EXPECT_FAILED (its metrics missed the workload's expect). OOM kills decide first (unless tolerated):
 * a run whose workers were killed and restarted says nothing about its
 * variant, whatever else it shows. */
enum run_status expect_judge(bool tolerate_oom, uint64_t oom_kills, const struct job_expect *v, size_t n,
			 const char *variant, expect_lookup_fn lookup, void *ctx, char *reason, size_t len);
