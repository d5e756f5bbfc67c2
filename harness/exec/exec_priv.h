/* Internal to the executor (executor.c and exec_*.c): the job loop in
 * executor.c drives signals, swap, one run per step, adaptive looks and
 * the boots of kernels, each in its own file. */
#pragma once
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/job/job.h"
#include "harness/stats/stats.h"

struct diags;
struct jobdir;
struct knob_applied;
struct store;
struct store_build;
struct store_step;
struct strbuf;

/* ---- signals (exec_signals.c) ---- */

/* Blocks the job's signals (old: the mask to put back) and forgets the
 * stop of an earlier job. */
void exec_signals_begin(sigset_t *old);
/* Waits up to timeout_s for a signal; returns it, or 0 on timeout. */
int exec_signal_wait(double timeout_s);
/* Takes the signals that came meanwhile; true once the job must stop. */
bool exec_check_interrupted(void);
/* True once a signal or the stop check asked the job to stop. */
bool exec_interrupted(void);
/* Why the job stops when it is not a signal; "" for a signal. */
const char *exec_stop_why(void);
/* A run-time failure ends the job: err (or r's text) logged once and, after
 * prefix, the job's reason. */
void exec_job_failed_with(struct store *st, int64_t job_id, const char *prefix, const struct strbuf *err, int r);
/* A set-up step failed: -EINTR if a stop came meanwhile (jl_run ends the
 * job), else failed with reason (r). */
int exec_failed_or_stopped(struct store *st, int64_t job_id, int r, const char *reason);

/* ---- swap for the whole job (exec_swap.c) ---- */

struct exec_swap_state {
	int64_t journal_id;
	char path[256];
	int zram_id;
	bool made;
	struct knob_applied *knobs; /* [swap] zswap settings, for the whole job */
	size_t n_knobs;
};

/* [swap]'s zswap settings as a variant, for knob_apply and the preflight. */
struct job_variant exec_swap_knobs_variant(const struct job *j);
int exec_swap_setup(struct store *st, const struct job *j, int64_t job_id, const char *boot_id,
		    const struct jobdir *jd, struct exec_swap_state *s);
void exec_swap_teardown(struct store *st, struct exec_swap_state *s);

/* ---- one run (exec_step.c) ---- */

/* Runs step in its own memcg and records it. 0: recorded (whatever its
 * status); -EINTR: stopped by a signal; another -errno: it could not be
 * set up. */
int exec_run_step(struct store *st, const struct job *j, int64_t job_id, const struct jobdir *jd,
		  const struct store_step *step, const char *boot_id);

/* ---- adaptive budgets (exec_adaptive.c) ---- */

/* After step i: when it completed a pair at a look point, look. */
void exec_adaptive_after_step(struct store *st, const struct job *j, int64_t job_id, struct store_step *steps,
			      size_t n, size_t i);
/* Workloads that ran all their pairs stopped on the budget. */
void exec_adaptive_finish(struct store *st, const struct job *j, int64_t job_id);
/* Reads the ok runs of the workload's first `pairs` pairs from the store
 * and asks harness/stats whether every primary metric of the job (names
 * or PREFIX* patterns; thresholds from its [metric] sections) is decided
 * at look `look` of `n_looks` (exec_look.c). No primary metric recorded:
 * STATS_CONTINUE. */
int exec_adaptive_look(struct store *st, const struct job *j, int64_t job_id, int workload, unsigned pairs,
		       unsigned look, unsigned n_looks, enum stats_stop *ret);

/* ---- jobs that boot kernels (exec_boots.c) ---- */

struct exec_boots {
	struct store_build *b;  /* each variant's build */
	int current;            /* the plan's boot this boot is; -1: none of them */
};

/* Builds (or reuses) the kernels of a job's variants; their ids go in builds. */
int exec_builds(struct store *st, const struct job *j, int64_t job_id, int64_t *builds);
/* Checks for a job that boots kernels, before any run: where the state
 * lives, and that this machine can switch. */
void exec_boots_preflight(const struct store *st, const struct job *j, struct diags *d);
/* Loads each variant's build, and judges the boot we are in. */
int exec_boots_start(struct store *st, const struct job *j, int64_t job_id, const char *boot_id,
		     const int64_t *builds, struct exec_boots *bc);
/* Leaves this boot for the plan's boot of step (see exec_boots.c):
 * -EINPROGRESS while a reboot is under way, 1 when the step's variant is
 * boot-failed, another -errno (recorded) when the switch failed. */
int exec_boots_switch(struct store *st, const struct job *j, int64_t job_id, const char *boot_id,
		      struct exec_boots *bc, const struct store_step *step, struct exec_swap_state *sw);
void exec_boots_free(struct exec_boots *bc, size_t n);
