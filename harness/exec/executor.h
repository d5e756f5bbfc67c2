/* The executor: the only module that acts on the machine. It plans the
 * schedule, sets up swap, and runs each step in its own memcg with the
 * sampler, recording every state in the store before the next action. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/exec/bisect.h"
#include "harness/exec/joblife.h"

struct job;
struct store;
struct store_step;

/* Balanced schedule: pairs x workloads x variants in the job's order,
 * with warmup = 1 each workload's warm-up step (pair STORE_PAIR_WARMUP)
 * just before its first step, in that step's variant and boot. */
int exec_plan(const struct job *j, struct store_step **ret, size_t *ret_n);

/* Takes the machine-wide executor lock (one executor at a time). */
int exec_lock(int *ret_fd);
/* Restores what a killed kab left: knobs, swap, cgroups from the journal;
 * marks runs left 'started' aborted and their steps pending again. A row
 * naming what kab does not journal (recover_scope.h) is refused: logged
 * with the database, its id, kind, target and why, kept in the journal,
 * not acted on; then -EPERM, after everything else was done. */
int exec_recover(struct store *st);
/* The same within sc instead of this machine's scope (tests). */
struct rscope;
int exec_recover_in(struct store *st, const struct rscope *sc);

/* What exec_job leaves to the job's owner (joblife.c) beyond its return. */
struct exec_end {
	bool rebooting; /* -EINTR: it stopped to leave for the next boot's kernel */
	char note[200]; /* to add to the job's reason, whatever it ends in ("": none) */
};
/* Runs the pending steps of a stored job: the executor itself, called by
 * jl_run (joblife.h), which writes how the job ended. Returns 0 when the
 * job finished (failed runs included; it is done or failed), -EINTR when
 * stopped (SIGINT/SIGTERM/SIGHUP, the stop check, a reboot) with its
 * status left for jl_run, or another -errno when it could not run at all
 * (its status failed when the executor knew why). */
int exec_job(struct store *st, const struct job *j, int64_t job_id, struct exec_end *end);
/* A check asked whenever the executor waits (at least once a second):
 * true stops the job as SIGTERM does, with why (at most len bytes) in the
 * aborted run's and the cancelled job's reasons. kab run checks that its
 * output is still there; kabd sets none, so its job goes on. */
void exec_set_stop_check(bool (*check)(char *why, size_t len));
/* kab run refuses a job whose variants boot kernels: it goes on across
 * reboots, which kabd resumes. */
struct diags;
void exec_refuse_boots(const struct job *j, struct diags *d);
/* The version of the cgroup hierarchy that holds the memory controller
 * (1 or 2), as the executor will use it; -errno when none is mounted. */
int exec_memcg_version(int *ret);
