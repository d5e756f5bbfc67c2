/* Boots of jobs whose variants boot kernels (the boots table): one row
 * per switch, written before the switch, completed by the boot after it. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"

struct store;

struct store_boot {
	int64_t id, job_id, build_id;
	int slot;                /* the plan's boot */
	int variant;
	char method[8];          /* kexec | reboot */
	enum boot_status status;
	char reason[512];
	char from_boot_id[64];   /* the boot the switch left */
	double switch_at;        /* wall clock of the decision */
	double prep_s;           /* from the decision to the kexec call */
	char cmdline[2048];      /* the command line it was given */
	char boot_id[64];        /* the boot that followed ("" while switching) */
	char kernel_release[128];
	char booted_cmdline[2048];
	double ready_at;         /* wall clock when kab was ready again */
	double uptime_s;         /* the new kernel's uptime then */
	double kexec_s;          /* prep_s + uptime_s: decision to ready, less the old kernel's shutdown */
};

/* Records a switch that is about to happen (status switching). */
int store_boot_begin(struct store *s, const struct store_boot *b, int64_t *ret_id);
/* How long the switch took to prepare, written just before the kexec call. */
int store_boot_prepared(struct store *s, int64_t id, double prep_s);
/* The outcome, from the boot after it: status, reason, and what came up. */
int store_boot_finish(struct store *s, const struct store_boot *b);
/* A job's boots in order; ret_n 0 when it has none. */
int store_boots_load(struct store *s, int64_t job_id, struct store_boot **ret, size_t *ret_n);
/* The same, one call each, one boot in memory at a time (b is valid during the call). */
typedef void (*store_boot_fn)(void *ctx, const struct store_boot *b);
int store_boots_foreach(struct store *s, int64_t job_id, store_boot_fn fn, void *ctx);
/* Marks a variant's pending steps boot-failed; ret_n how many. */
int store_steps_boot_failed(struct store *s, int64_t job_id, int variant, int *ret_n);
/* Each variant's build, kept once the job's kernels are built or
 * registered, so later boots do not redo it. get: -ENOENT until set. */
int store_variant_builds_set(struct store *s, int64_t job_id, const int64_t *builds, size_t n);
int store_variant_builds_get(struct store *s, int64_t job_id, int64_t *builds, size_t n);
/* PRAGMA wal_checkpoint(TRUNCATE): everything in the main file before a switch. */
int store_checkpoint(struct store *s);
