/* The executor's job loop: the preflight, the workloads' preparation, each
 * pending step in turn (switching kernels between boots), and the job's
 * end. Every state is in the store before the next action on the machine. */
#include "harness/exec/cgroup.h"
#include "harness/exec/condition.h"
#include "harness/exec/exec_priv.h"
#include "harness/exec/executor.h"
#include "harness/exec/jobdir.h"
#include "harness/exec/joblife.h"
#include "harness/job/job.h"
#include "harness/exec/knobs.h"
#include "harness/exec/provenance.h"
#include "db/store.h"
#include "db/store_boots.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int workloads_prepare(const struct job *j, int64_t job_id, const struct jobdir *jd)
{
	for (size_t i = 0; i < j->n_workloads; i++) {
		const struct wl_ops *ops = wl_find(j->workloads[i].type);
		if (!ops || !ops->prepare)
			continue;
		char dir[PATH_MAX + 32];
		jobdir_wl_path(jd, i, dir, sizeof(dir));
		int r = jobdir_wl_make(jd, i);
		if (r < 0) {
			log_error("workload \"%s\": cannot create %s: %s", j->workloads[i].name, dir, strerror(-r));
			return r;
		}
		struct wl_ctx c = { .wl = &j->workloads[i], .jobdir = dir, .job_id = job_id };
		log_info("preparing workload \"%s\" (%s)", j->workloads[i].name, j->workloads[i].type);
		struct strbuf err = { 0 };
		r = ops->prepare(&c, &err);
		if (r < 0)
			log_error("workload \"%s\": %s", j->workloads[i].name, err.len ? err.buf : strerror(-r));
		sb_free(&err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The job ended for good (done or failed): each workload's finish hook,
 * then its directory goes, and the job's with it once swap is off. */
static void workloads_finish(const struct job *j, int64_t job_id, struct jobdir *jd)
{
	jd->over = true;
	for (size_t i = 0; i < j->n_workloads; i++) {
		const struct wl_ops *ops = wl_find(j->workloads[i].type);
		if (!ops || (!ops->prepare && !ops->finish))
			continue;
		char dir[PATH_MAX + 32];
		jobdir_wl_path(jd, i, dir, sizeof(dir));
		struct wl_ctx c = { .wl = &j->workloads[i], .jobdir = dir, .job_id = job_id };
		if (ops->finish)
			ops->finish(&c);
		util_remove_tree(dir);
	}
}

static void preflight_limits(const struct job *j, struct diags *d)
{
	int v;
	if (cg_memory_version(&v, NULL, 0) < 0) {
		diags_add(d, j->file, 0, "no memory cgroup controller is mounted on this machine");
		return;
	}
	for (size_t i = 0; i < j->n_workloads; i++) {
		const struct job_workload *w = &j->workloads[i];
		struct cg_limits l = { w->memory_max, w->memory_high, w->memory_swap_max };
		struct strbuf err = { 0 };
		if (cg_limits_supported(&l, v, &err) < 0)
			diags_add(d, j->file, w->line, "workload \"%s\": %s", w->name, err.len ? err.buf : "");
		sb_free(&err);
	}
}
/* A job that boots kernels, before its first step: the boots' preflight,
 * its kernels built (or found recorded with the job), and this boot
 * judged. *builds is the caller's to free, whatever this returns. */
static int job_boots_begin(struct store *st, const struct job *j, int64_t job_id, const char *boot_id,
			   int64_t **builds, struct exec_boots *bc)
{
	struct diags d = { 0 };
	int r;
	exec_boots_preflight(st, j, &d);
	if (d.n) {
		diags_print(&d, stderr);
		char reason[768];
		snprintf(reason, sizeof(reason), "%.700s", d.v[0].msg);
		diags_free(&d);
		jl_transition(st, job_id, JL_FAILABLE, JOB_FAILED, reason);
		return -EINVAL;
	}
	if (!(*builds = calloc(j->n_variants, sizeof(**builds))))
		return -ENOMEM;
	/* build (or reuse) the kernels first: the first switch needs
	 * them; later boots find them recorded with the job */
	if (store_variant_builds_get(st, job_id, *builds, j->n_variants) < 0) {
		if ((r = exec_builds(st, j, job_id, *builds)) < 0)
			return r;
		store_variant_builds_set(st, job_id, *builds, j->n_variants);
	}
	if ((r = exec_boots_start(st, j, job_id, boot_id, *builds, bc)) < 0) {
		jl_transition(st, job_id, JL_FAILABLE, JOB_FAILED, "the job's builds or boots could not be read from the database");
		return r;
	}
	return 0;
}

/* Every knob and limit can be applied here, and the job's conditioning
 * begins (governor, turbo: until cond_job_end). */
static int job_preflight(struct store *st, const struct job *j, int64_t job_id, const char *boot_id,
			 struct cond_job *cj)
{
	struct diags d = { 0 };
	preflight_limits(j, &d);
	knob_preflight(st, job_id, boot_id, j->variants, j->n_variants, j->file, &d);
	struct job_variant swap_v = exec_swap_knobs_variant(j);
	if (swap_v.n_knobs)
		knob_preflight(st, job_id, boot_id, &swap_v, 1, j->file, &d);
	if (!d.n)
		cond_job_begin(st, j, job_id, boot_id, cj, &d);
	if (d.n) {
		diags_print(&d, stderr);
		diags_free(&d);
		jl_transition(st, job_id, JL_FAILABLE, JOB_FAILED, "preflight: a knob or limit cannot be applied on this machine");
		return -EINVAL;
	}
	return 0;
}

/* A step whose run was aborted (a signal, a crash) runs again: the aborted
 * run is kept as a record and never counted. So does a warm-up: one that
 * finished is not run again, one cut short is. Returns how many steps
 * are not pending. */
static size_t steps_resume(struct store_step *steps, size_t n)
{
	size_t done = 0;
	for (size_t i = 0; i < n; i++)
		if (steps[i].status == STEP_ABORTED)
			steps[i].status = STEP_PENDING;
	for (size_t i = 0; i < n; i++)
		if (steps[i].status != STEP_PENDING)
			done++;
	return done;
}

/* The job's steps in turn, and how their loop ended. */
struct job_loop {
	struct store *st;
	const struct job *j;
	int64_t job_id;
	const char *boot_id;
	struct jobdir *jd;
	struct exec_boots *bc;
	struct exec_swap_state *sw;
	struct store_step *steps;
	size_t n;
	bool boot_failed; /* a variant's kernel did not come up: its steps are boot-failed */
	bool rebooting;   /* stopped to leave for the next boot's kernel */
	bool ended;       /* the job's status is set: nothing more to record */
};

/* Step i is in another of the plan's boots: switch to it. 0: go on (the
 * variant is boot-failed and its steps marked); -EINTR: rebooting, stop;
 * another -errno: the job ended, its status set. */
static int job_switch(struct job_loop *jl, size_t i)
{
	const struct job *j = jl->j;
	struct store_step *steps = jl->steps;
	int r = exec_boots_switch(jl->st, j, jl->job_id, jl->boot_id, jl->bc, &steps[i], jl->sw);
	if (r == 1) { /* the variant is boot-failed: its steps are marked */
		jl->boot_failed = true;
		for (size_t k = i; k < jl->n; k++)
			if (steps[k].variant == steps[i].variant && steps[k].status == STEP_PENDING)
				steps[k].status = STEP_BOOT_FAILED;
		if (j->on_boot_failure == JOB_BOOTFAIL_ABORT) {
			char msg[256];
			snprintf(msg, sizeof(msg), "variant %s is boot-failed (its kernel did not come up in %u attempts); on_boot_failure = abort",
				 j->variants[steps[i].variant].name, j->boot_attempts);
			jl_transition(jl->st, jl->job_id, JL_FROM(JOB_RUNNING), JOB_FAILED, msg);
			workloads_finish(j, jl->job_id, jl->jd);
			jl->ended = true;
			return -ECANCELED;
		}
		return 0;
	}
	if (r == -EINPROGRESS) { /* rebooting: wait for the stop signal; the job resumes after the boot */
		while (!exec_check_interrupted())
			exec_signal_wait(1.0);
		jl->rebooting = true;
		return -EINTR;
	}
	jl->ended = true; /* the switch could not be made; the job is failed */
	return r;
}

/* Runs the pending steps: 0 when all ran, -EINTR when stopped (by a signal
 * or for a reboot), another -errno when the job ended (jl->ended). */
static int job_run_steps(struct job_loop *jl)
{
	struct store *st = jl->st;
	const struct job *j = jl->j;
	struct store_step *steps = jl->steps;
	size_t n = jl->n, done = steps_resume(steps, n), total = n, ran = 0;
	bool boots = job_boots_kernels(j), swap_up = false;
	double job_t0 = util_mono_now();
	int r;
	for (size_t i = 0; i < n; i++) {
		if (steps[i].status != STEP_PENDING)
			continue;
		if (exec_check_interrupted())
			return -EINTR;
		if (boots && steps[i].boot != jl->bc->current) {
			r = job_switch(jl, i);
			swap_up = false;
			if (r < 0)
				return r;
			continue;
		}
		if (!swap_up) {
			if ((r = exec_swap_setup(st, j, jl->job_id, jl->boot_id, jl->jd, jl->sw)) < 0) {
				jl->ended = true;
				return exec_failed_or_stopped(st, jl->job_id, r, "swap could not be set up");
			}
			swap_up = true;
		}
		done++;
		char eta[64] = "";
		if (ran > 0) {
			double per = (util_mono_now() - job_t0) / (double)ran;
			snprintf(eta, sizeof(eta), ", ETA %.0f s", per * (double)(total - done + 1));
		}
		char pair[32];
		if (steps[i].pair == STORE_PAIR_WARMUP)
			snprintf(pair, sizeof(pair), "warm-up, not counted");
		else
			snprintf(pair, sizeof(pair), "pair %d", steps[i].pair + 1);
		log_info("[%zu/%zu] %s: %s / %s%s", done, total, pair, j->variants[steps[i].variant].name,
			 j->workloads[steps[i].workload].name, eta);
		r = exec_run_step(st, j, jl->job_id, jl->jd, &steps[i], jl->boot_id);
		ran++;
		if (r == -EINTR || exec_interrupted())
			return -EINTR;
		if (r < 0) {
			jl_transition(st, jl->job_id, JL_FROM(JOB_RUNNING), JOB_FAILED, "a run could not be set up; see the log");
			workloads_finish(j, jl->job_id, jl->jd);
			jl->ended = true;
			return r;
		}
		if (j->adaptive.on && steps[i].pair != STORE_PAIR_WARMUP)
			exec_adaptive_after_step(st, j, jl->job_id, steps, n, i);
	}
	return 0;
}

/* The job's state once its loop stopped without ending it: done when all
 * its steps ran; a stop (-EINTR, for a reboot or not) is left to jl_run. */
static void job_end(struct job_loop *jl, int r)
{
	struct store *st = jl->st;
	if (r == -EINTR)
		return;
	exec_adaptive_finish(st, jl->j, jl->job_id);
	jl_transition(st, jl->job_id, JL_FROM(JOB_RUNNING), JOB_DONE,
		      jl->boot_failed ? "finished without a variant whose kernel did not come up (boot-failed)" : NULL);
	workloads_finish(jl->j, jl->job_id, jl->jd);
}

int exec_job(struct store *st, const struct job *j, int64_t job_id, struct exec_end *end)
{
	char boot_id[64];
	prov_boot_id(boot_id, sizeof(boot_id));
	sigset_t old;
	exec_signals_begin(&old);
	struct exec_swap_state sw = { .zram_id = -1 };
	struct store_step *steps = NULL;
	size_t n = 0;
	int r;
	struct exec_boots bc = { .current = -1 };
	int64_t *builds = NULL;
	struct jobdir jd = JOBDIR_INIT;
	struct cond_job cj = { 0 };

	if (job_boots_kernels(j) && (r = job_boots_begin(st, j, job_id, boot_id, &builds, &bc)) < 0)
		goto out;
	if ((r = job_preflight(st, j, job_id, boot_id, &cj)) < 0)
		goto out;
	if ((r = store_steps_load(st, job_id, &steps, &n)) < 0)
		goto out;
	struct strbuf derr = { 0 };
	if ((r = jobdir_open(st, job_id, &jd, &derr)) < 0) {
		exec_job_failed_with(st, job_id, "", &derr, r);
		sb_free(&derr);
		goto out;
	}
	jl_transition(st, job_id, JL_STARTABLE, JOB_RUNNING, NULL);
	if ((r = workloads_prepare(j, job_id, &jd)) < 0) {
		r = exec_failed_or_stopped(st, job_id, r, "a workload could not be prepared; see the log");
		if (r != -EINTR) /* a stopped job may resume: keep what was prepared */
			workloads_finish(j, job_id, &jd);
		goto out;
	}
	struct job_loop jl = { .st = st, .j = j, .job_id = job_id, .boot_id = boot_id, .jd = &jd, .bc = &bc,
			       .sw = &sw, .steps = steps, .n = n };
	r = job_run_steps(&jl);
	if (!jl.ended)
		job_end(&jl, r);
	end->rebooting = r == -EINTR && jl.rebooting;
out:
	if (cond_job_end(st, &cj) < 0)
		snprintf(end->note, sizeof(end->note),
			 "the cpufreq governor or turbo could not be restored (see the log); kab retries at its next start");
	exec_swap_teardown(st, &sw);
	cg_remove_parent(NULL);
	jobdir_close(st, job_id, &jd);
	free(steps);
	free(builds);
	exec_boots_free(&bc, j->n_variants);
	exec_check_interrupted();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

int exec_memcg_version(int *ret)
{
	char root[512];
	return cg_memory_version(ret, root, sizeof(root));
}
