/* The executor: schedule, swap, and one run per step in its own memcg.
 * Every state is in the store before the next action on the machine. */
#include "cgroup.h"
#include "condition.h"
#include "exec_priv.h"
#include "executor.h"
#include "jobdir.h"
#include "job.h"
#include "knobs.h"
#include "provenance.h"
#include "store.h"
#include "store_boots.h"
#include "util.h"
#include "wl.h"

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
		char dir[PATH_MAX + 32], err[768] = "";
		jobdir_wl_path(jd, i, dir, sizeof(dir));
		int r = jobdir_wl_make(jd, i);
		if (r < 0) {
			log_error("workload \"%s\": cannot create %s: %s", j->workloads[i].name, dir, strerror(-r));
			return r;
		}
		struct wl_ctx c = { .wl = &j->workloads[i], .jobdir = dir, .job_id = job_id };
		log_info("preparing workload \"%s\" (%s)", j->workloads[i].name, j->workloads[i].type);
		r = ops->prepare(&c, err, sizeof(err));
		if (r < 0) {
			log_error("workload \"%s\": %s", j->workloads[i].name, err[0] ? err : strerror(-r));
			return r;
		}
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
		char err[256];
		if (cg_limits_supported(&l, v, err, sizeof(err)) < 0)
			diags_add(d, j->file, w->line, "workload \"%s\": %s", w->name, err);
	}
}

int exec_job(struct store *st, const struct job *j, int64_t job_id)
{
	char boot_id[64];
	prov_boot_id(boot_id, sizeof(boot_id));
	sigset_t old;
	exec_signals_begin(&old);
	struct exec_swap_state sw = { .zram_id = -1 };
	struct store_step *steps = NULL;
	size_t n = 0;
	int r;
	bool boots = job_boots_kernels(j), swap_up = false;
	struct exec_boots bc = { .current = -1 };
	int64_t *builds = NULL;
	struct jobdir jd = JOBDIR_INIT;
	struct cond_job cj = { 0 };

	struct diags d = { 0 };
	if (boots) {
		exec_boots_preflight(st, j, &d);
		if (d.n) {
			diags_print(&d, stderr);
			char reason[768];
			snprintf(reason, sizeof(reason), "%.700s", d.v[0].msg);
			diags_free(&d);
			store_job_set_status(st, job_id, "failed", reason);
			r = -EINVAL;
			goto out;
		}
		if (!(builds = calloc(j->n_variants, sizeof(*builds)))) {
			r = -ENOMEM;
			goto out;
		}
		/* build (or reuse) the kernels first: the first switch needs
		 * them; later boots find them recorded with the job */
		if (store_variant_builds_get(st, job_id, builds, j->n_variants) < 0) {
			if ((r = exec_builds(st, j, job_id, builds)) < 0)
				goto out;
			store_variant_builds_set(st, job_id, builds, j->n_variants);
		}
		if ((r = exec_boots_start(st, j, job_id, boot_id, builds, &bc)) < 0) {
			store_job_set_status(st, job_id, "failed", "the job's builds or boots could not be read from the database");
			goto out;
		}
	}
	preflight_limits(j, &d);
	knob_preflight(st, job_id, boot_id, j->variants, j->n_variants, j->file, &d);
	struct job_variant swap_v = exec_swap_knobs_variant(j);
	if (swap_v.n_knobs)
		knob_preflight(st, job_id, boot_id, &swap_v, 1, j->file, &d);
	if (!d.n)
		cond_job_begin(st, j, job_id, boot_id, &cj, &d); /* governor, turbo: until out */
	if (d.n) {
		diags_print(&d, stderr);
		diags_free(&d);
		store_job_set_status(st, job_id, "failed", "preflight: a knob or limit cannot be applied on this machine");
		r = -EINVAL;
		goto out;
	}
	if ((r = store_steps_load(st, job_id, &steps, &n)) < 0)
		goto out;
	struct strbuf derr = { 0 };
	if ((r = jobdir_open(st, job_id, &jd, &derr)) < 0) {
		exec_job_failed_with(st, job_id, "", &derr, r);
		sb_free(&derr);
		goto out;
	}
	store_job_set_status(st, job_id, "running", NULL);
	if ((r = workloads_prepare(j, job_id, &jd)) < 0) {
		r = exec_failed_or_cancelled(st, job_id, r, "a workload could not be prepared; see the log");
		if (r != -EINTR) /* a cancelled job may resume: keep what was prepared */
			workloads_finish(j, job_id, &jd);
		goto out;
	}
	size_t done = 0, total = n;
	/* a step whose run was aborted (a signal, a crash) runs again: the
	 * aborted run is kept as a record and never counted */
	for (size_t i = 0; i < n; i++)
		if (strcmp(steps[i].status, "aborted") == 0)
			snprintf(steps[i].status, sizeof(steps[i].status), "pending");
	for (size_t i = 0; i < n; i++)
		if (strcmp(steps[i].status, "pending") != 0)
			done++;
	double job_t0 = util_mono_now();
	size_t ran = 0;
	bool boot_failed = false, rebooting = false;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(steps[i].status, "pending") != 0)
			continue;
		if (exec_check_interrupted()) {
			r = -EINTR;
			break;
		}
		if (boots && steps[i].boot != bc.current) {
			r = exec_boots_switch(st, j, job_id, boot_id, &bc, &steps[i], &sw);
			swap_up = false;
			if (r == 1) { /* the variant is boot-failed: its steps are marked */
				boot_failed = true;
				for (size_t k = i; k < n; k++)
					if (steps[k].variant == steps[i].variant && strcmp(steps[k].status, "pending") == 0)
						snprintf(steps[k].status, sizeof(steps[k].status), "boot-failed");
				if (j->on_boot_failure == JOB_BOOTFAIL_ABORT) {
					char msg[256];
					snprintf(msg, sizeof(msg), "variant %s is boot-failed (its kernel did not come up in %u attempts); on_boot_failure = abort",
						 j->variants[steps[i].variant].name, j->boot_attempts);
					store_job_set_status(st, job_id, "failed", msg);
					workloads_finish(j, job_id, &jd);
					r = -ECANCELED;
					goto out;
				}
				r = 0;
				continue;
			}
			if (r == -EINPROGRESS) { /* rebooting: wait for the stop signal; the job resumes after the boot */
				while (!exec_check_interrupted())
					exec_signal_wait(1.0);
				r = -EINTR;
				rebooting = true;
				break;
			}
			goto out; /* the switch could not be made; the job is failed */
		}
		if (!swap_up) {
			if ((r = exec_swap_setup(st, j, job_id, boot_id, &jd, &sw)) < 0) {
				r = exec_failed_or_cancelled(st, job_id, r, "swap could not be set up");
				goto out;
			}
			swap_up = true;
		}
		done++;
		char eta[64] = "";
		if (ran > 0) {
			double per = (util_mono_now() - job_t0) / (double)ran;
			snprintf(eta, sizeof(eta), ", ETA %.0f s", per * (double)(total - done + 1));
		}
		log_info("[%zu/%zu] pair %d: %s / %s%s", done, total, steps[i].pair + 1,
			 j->variants[steps[i].variant].name, j->workloads[steps[i].workload].name, eta);
		r = exec_run_step(st, j, job_id, &jd, &steps[i], boot_id);
		ran++;
		if (r == -EINTR || exec_interrupted()) {
			r = -EINTR;
			break;
		}
		if (r < 0) {
			store_job_set_status(st, job_id, "failed", "a run could not be set up; see the log");
			workloads_finish(j, job_id, &jd);
			goto out;
		}
		if (j->adaptive.on)
			exec_adaptive_after_step(st, j, job_id, steps, n, i);
	}
	if (r == -EINTR && rebooting) {
		store_job_set_status(st, job_id, "interrupted", "rebooting into the next boot's kernel; kabd resumes the job after the boot");
	} else if (r == -EINTR) {
		exec_set_cancelled(st, job_id);
	} else {
		exec_adaptive_finish(st, j, job_id);
		store_job_set_status(st, job_id, "done", boot_failed ? "finished without a variant whose kernel did not come up (boot-failed)" : NULL);
		workloads_finish(j, job_id, &jd);
	}
out:
	cond_job_end(st, job_id, &cj);
	exec_swap_teardown(st, &sw);
	cg_remove_parent();
	jobdir_close(st, job_id, &jd);
	free(steps);
	free(builds);
	exec_boots_free(&bc, j->n_variants);
	exec_check_interrupted();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}
