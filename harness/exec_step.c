/* One run: a step's workload in its own memcg, with the sampler, recorded
 * in the store. */
#include "cgroup.h"
#include "condition.h"
#include "exec_priv.h"
#include "expect.h"
#include "fcount.h"
#include "job.h"
#include "jobdir.h"
#include "knobs.h"
#include "provenance.h"
#include "sampler.h"
#include "store.h"
#include "util.h"
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define KILL_GRACE_S 5.0

struct metric_sink {
	struct wl_metrics *m;
};

static void add_delta(void *ctx, const char *metric, const char *unit, double delta)
{
	struct metric_sink *s = ctx;
	wl_metrics_add(s->m, metric, unit, delta);
}

struct series_sink {
	struct store_series *v;
	size_t n, cap;
};

static bool metric_lookup(void *ctx, const char *name, double *ret)
{
	const struct wl_metric *v = wl_metrics_find(ctx, 0, name);
	if (v)
		*ret = v->value;
	return v != NULL;
}

static void add_fcount(void *ctx, const char *function, uint64_t calls)
{
	struct metric_sink *s = ctx;
	char name[160];
	snprintf(name, sizeof(name), "fcount.%s", function);
	wl_metrics_add(s->m, name, "calls", (double)calls);
}

static void add_series(void *ctx, const char *metric, const uint8_t *blob, size_t len, size_t n)
{
	struct series_sink *s = ctx;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct store_series *nv = realloc(s->v, cap * sizeof(*nv));
		if (!nv)
			return;
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = (struct store_series){ metric, blob, len, n };
}

static void read_tail(const char *dir, const char *name, char *buf, size_t len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	buf[0] = 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	off_t size = lseek(fd, 0, SEEK_END);
	off_t from = size > (off_t)(len - 1) ? size - (off_t)(len - 1) : 0;
	ssize_t n = pread(fd, buf, len - 1, from);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
}

/* Forks the workload stopped on a pipe so that it can be put in its cgroup
 * before it execs. Only async-signal-safe calls in the child. */
static int spawn_stopped(const char *prog, char **argv, const char *workdir, pid_t *ret_pid,
			 int *ret_go_fd, int *ret_err_fd)
{
	int go[2], errp[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(errp, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	char out[512], errf[512];
	snprintf(out, sizeof(out), "%s/stdout", workdir);
	snprintf(errf, sizeof(errf), "%s/stderr", workdir);
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(go[0]);
		close(go[1]);
		close(errp[0]);
		close(errp[1]);
		return e;
	}
	if (pid == 0) {
		util_child_signals();
		setpgid(0, 0);
		close(go[1]);
		close(errp[0]);
		int in = open("/dev/null", O_RDONLY);
		/* the run's directory is new: nothing is there to follow */
		int o = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		int e = open(errf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 ||
		    chdir(workdir) < 0)
			goto fail;
		char c;
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* parent gave up before releasing us */
		execv(prog, argv);
fail:;
		int err = errno;
		if (write(errp[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(errp[1]);
	*ret_pid = pid;
	*ret_go_fd = go[1];
	*ret_err_fd = errp[0];
	return 0;
}

struct run_outcome {
	int status;        /* wait status */
	bool exited;
	bool timed_out;
	bool aborted;
	int exec_errno;
	struct rusage ru;
	double wall_s;
};

static void kill_group(pid_t pid, const char *cg_path)
{
	kill(-pid, SIGTERM);
	double deadline = util_mono_now() + KILL_GRACE_S;
	while (util_mono_now() < deadline) {
		siginfo_t si = { 0 };
		/* WNOWAIT: the caller reaps it, with its rusage */
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
			break;
		exec_signal_wait(0.05);
	}
	cg_kill_all(cg_path);
}

static void wait_workload(pid_t pid, const char *cg_path, double timeout_s, double t0, struct run_outcome *o)
{
	double deadline = timeout_s > 0 ? t0 + timeout_s : 0;
	for (;;) {
		int status;
		pid_t w = wait4(pid, &status, WNOHANG, &o->ru);
		if (w < 0 && errno != EINTR) {
			log_error("waiting for pid %d: %s", (int)pid, strerror(errno));
			o->exited = false;
			o->wall_s = util_mono_now() - t0;
			return;
		}
		if (w == pid) {
			o->status = status;
			o->exited = true;
			o->wall_s = util_mono_now() - t0;
			return;
		}
		double now = util_mono_now();
		if (exec_interrupted() && !o->aborted) {
			o->aborted = true;
			kill_group(pid, cg_path);
			continue;
		}
		if (deadline > 0 && now >= deadline && !o->timed_out) {
			o->timed_out = true;
			kill_group(pid, cg_path);
			continue;
		}
		double slice = 1.0;
		if (deadline > 0 && deadline - now < slice)
			slice = deadline - now;
		exec_signal_wait(slice);
	}
}

static const char *decide_status(const struct run_outcome *o, uint64_t oom_kills, char *reason, size_t len)
{
	if (o->aborted) {
		snprintf(reason, len, "%s; not counted", exec_stop_why()[0] ? exec_stop_why() : "interrupted by a signal");
		return "aborted";
	}
	if (o->exec_errno) {
		snprintf(reason, len, "cannot execute the workload: %s", strerror(o->exec_errno));
		return "failed";
	}
	if (o->timed_out) {
		snprintf(reason, len, "killed after the workload's timeout");
		return "timed-out";
	}
	bool ok = WIFEXITED(o->status) && WEXITSTATUS(o->status) == 0;
	if (oom_kills > 0 && !ok) {
		snprintf(reason, len, "memcg OOM killer killed %llu process(es)", (unsigned long long)oom_kills);
		return "oom-killed";
	}
	if (ok)
		return "ok";
	if (WIFSIGNALED(o->status))
		snprintf(reason, len, "killed by signal %d (%s)", WTERMSIG(o->status), strsignal(WTERMSIG(o->status)));
	else
		snprintf(reason, len, "exited with status %d", WEXITSTATUS(o->status));
	return "failed";
}

/* "exited with status 2" says little: add the last line the workload
 * printed on stderr ("make: *** No rule to make target …"). */
static void reason_add_stderr(char *reason, size_t len, const char *tail)
{
	size_t n = strlen(tail), start;
	for (;;) {
		while (n > 0 && (tail[n - 1] == '\n' || tail[n - 1] == ' ' || tail[n - 1] == '\r'))
			n--;
		if (n == 0)
			return;
		start = n;
		while (start > 0 && tail[start - 1] != '\n')
			start--;
		/* make's "make[1]: *** [Makefile:234: sub-make] Error 2" trailers
		 * say nothing: the cause is the line before them */
		const char *t = memmem(tail + start, n - start, "*** [", 5);
		if (!t || start == 0)
			break;
		n = start;
	}
	size_t used = strlen(reason);
	int w = (int)(n - start);
	if (w > 200)
		w = 200;
	snprintf(reason + used, len - used, ": %.*s", w, tail + start);
}

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6; }

int exec_run_step(struct store *st, const struct job *j, int64_t job_id, const struct jobdir *jd,
		  const struct store_step *step, const char *boot_id)
{
	const struct job_variant *var = &j->variants[step->variant];
	const struct job_workload *wl = &j->workloads[step->workload];
	const struct wl_ops *ops = wl_find(wl->type);
	struct store_run run = { .job_id = job_id, .step_id = step->id, .pair = step->pair,
				 .variant = step->variant, .workload = step->workload, .exit_code = -1 };
	struct knob_applied *knobs = NULL;
	size_t n_knobs = 0;
	struct cg *cg = NULL;
	struct sampler *smp = NULL;
	char **argv = NULL;
	char workdir[PATH_MAX + 32] = "";
	bool have_workdir = false;
	int64_t cg_journal = 0;
	struct wl_metrics m = { 0 };
	struct series_sink ss = { 0 };
	struct run_outcome o = { 0 };
	char err[768] = "";
	struct fcount *fc = NULL;
	int64_t fc_journal = 0;
	char fc_why[512] = "";
	int64_t run_id = 0;
	struct cond_pin pin = { 0 };
	int r;

	prov_fill(&run);
	run.pid = (int)getpid();
	run.memory_max = wl->memory_max == JOB_MEM_MAX ? 0 : wl->memory_max;

	/* Machine changes first (journaled), then the 'started' record, then
	 * the workload: a crash at any point leaves enough to undo. */
	r = knob_apply(st, job_id, boot_id, var, &knobs, &n_knobs, run.knobs, sizeof(run.knobs), err, sizeof(err));
	if (r < 0)
		goto setup_failed;
	/* and the job's [swap] zswap settings in force, unless the variant set them */
	for (size_t i = 0; i < j->swap.n_knobs; i++) {
		const char *p = j->swap.knobs[i].path;
		char now[256];
		size_t used = strlen(run.knobs);
		if (strstr(run.knobs, p) || knob_read(p, now, sizeof(now)) < 0)
			continue;
		snprintf(run.knobs + used, sizeof(run.knobs) - used, "%s=%s\n", p, now);
	}
	char root[256];
	int cgv;
	if ((r = cg_memory_version(&cgv, root, sizeof(root))) < 0) {
		snprintf(err, sizeof(err), "no memory cgroup controller is mounted");
		goto setup_failed;
	}
	char cgname[128];
	snprintf(cgname, sizeof(cgname), "kab/job%lld-step%d", (long long)job_id, step->seq);
	struct store_journal je = { .job_id = job_id };
	snprintf(je.kind, sizeof(je.kind), "cgroup");
	snprintf(je.target, sizeof(je.target), "%s/%s", root, cgname);
	snprintf(je.boot_id, sizeof(je.boot_id), "%s", boot_id);
	if ((r = store_journal_add(st, &je, &cg_journal)) < 0)
		goto setup_failed;
	struct cg_limits lim = { wl->memory_max, wl->memory_high, wl->memory_swap_max };
	if ((r = cg_create(cgname, &lim, &cg, err, sizeof(err))) < 0)
		goto setup_failed;
	snprintf(run.cgroup_path, sizeof(run.cgroup_path), "%s", cg->path);
	run.cgroup_version = cg->version;
	if ((r = jobdir_run_make(jd, workdir, sizeof(workdir))) < 0) {
		snprintf(err, sizeof(err), "cannot create the run's directory in %s: %s", jd->path, strerror(-r));
		goto setup_failed;
	}
	have_workdir = true;
	char jobdir[PATH_MAX + 32];
	jobdir_wl_path(jd, (size_t)step->workload, jobdir, sizeof(jobdir));
	struct wl_ctx ctx = { .wl = wl, .workdir = workdir, .jobdir = jobdir, .job_id = job_id };
	char prog[1024];
	if ((r = ops->argv(&ctx, &argv)) < 0 || !argv[0]) {
		snprintf(err, sizeof(err), "cannot build the workload's command line");
		goto setup_failed;
	}
	if (!util_find_program(argv[0], prog, sizeof(prog))) {
		r = -ENOENT;
		snprintf(err, sizeof(err), "program \"%s\" is not installed", argv[0]);
		goto setup_failed;
	}

	/* the settings as the run sees them (its knobs in force); then the
	 * job's conditioning, last before the start */
	prov_settings("", run.settings, sizeof(run.settings));
	r = cond_before_run(&j->cond, exec_check_interrupted, run.conditioning, sizeof(run.conditioning), err, sizeof(err));
	if (r == -EINTR)
		goto out;
	if (r < 0)
		goto setup_failed;

	run.started = util_real_now();
	if ((r = store_run_begin(st, &run, &run_id)) < 0)
		goto out;
	if (ops->before && (r = ops->before(&ctx, err, sizeof(err))) < 0) {
		if (!err[0])
			snprintf(err, sizeof(err), "preparing the run failed: %s", strerror(-r));
		o.exec_errno = EIO;
		r = 0;
		goto finish;
	}

	pid_t pid = -1;
	int go_fd = -1, err_fd = -1;
	if ((r = cond_pin_workload(&j->cond, &pin, err, sizeof(err))) < 0 ||
	    (r = spawn_stopped(prog, argv, workdir, &pid, &go_fd, &err_fd)) < 0) {
		if (!err[0])
			snprintf(err, sizeof(err), "fork: %s", strerror(-r));
		o.exec_errno = -r;
		goto finish;
	}
	if ((r = cg_attach(cg, pid)) < 0) {
		close(go_fd);
		close(err_fd);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		snprintf(err, sizeof(err), "cannot put the workload into %s", cg->path);
		o.exec_errno = EIO;
		goto finish;
	}
	struct sampler_opts so = { .interval_s = j->interval_s, .memcg_dir = cg->path,
				   .cgroup_version = cg->version, .series = true, .per_cpu = true };
	char pin_err[256] = "";
	if (cond_pin_sampler(&j->cond, &pin, pin_err, sizeof(pin_err)) < 0)
		log_warn("%s; the sampler shares the workload's CPUs", pin_err);
	if ((r = sampler_start(&so, &smp)) < 0)
		log_warn("sampler could not start (%s); the run goes on without counters", strerror(-r));
	cond_unpin(&pin);
	if (wl->n_fcount > 0) {
		char tag[64];
		snprintf(tag, sizeof(tag), "kab-j%lld-s%d", (long long)job_id, step->seq);
		struct store_journal fj = { .job_id = job_id };
		snprintf(fj.kind, sizeof(fj.kind), "fcount");
		snprintf(fj.target, sizeof(fj.target), "%s", tag);
		snprintf(fj.boot_id, sizeof(fj.boot_id), "%s", boot_id);
		if (store_journal_add(st, &fj, &fc_journal) < 0)
			snprintf(fc_why, sizeof(fc_why), "cannot journal the tracing setup");
		else if (fcount_start(wl->fcount, wl->n_fcount, tag, &fc, fc_why, sizeof(fc_why)) < 0)
			log_warn("function counts unavailable: %s; the run goes on without them", fc_why);
		else
			log_info("  counting calls of %zu function(s) with %s", wl->n_fcount, fcount_method(fc));
	}
	double t0 = util_mono_now();
	if (write(go_fd, "g", 1) != 1)
		log_warn("cannot release the workload: %s", strerror(errno));
	close(go_fd);
	wait_workload(pid, cg->path, wl->timeout_s, t0, &o);
	int exec_err;
	if (read(err_fd, &exec_err, sizeof(exec_err)) == (ssize_t)sizeof(exec_err))
		o.exec_errno = exec_err;
	close(err_fd);
	if (smp)
		sampler_stop(smp);
	if (fc) {
		struct metric_sink fs = { &m };
		if (fcount_stop(fc, add_fcount, &fs) < 0)
			snprintf(fc_why, sizeof(fc_why), "the counters could not be read back");
		fc = NULL;
	}
	if (fc_journal > 0) {
		store_journal_del(st, fc_journal);
		fc_journal = 0;
	}
	cg_kill_all(cg->path);

finish:;
	cond_unpin(&pin);
	uint64_t oom = 0, peak = 0;
	if (cg) {
		cg_oom_kills(cg, &oom);
		cg_peak(cg, &peak);
	}
	const char *status = decide_status(&o, oom, run.reason, sizeof(run.reason));
	if (err[0] && !o.exited)
		snprintf(run.reason, sizeof(run.reason), "%s", err);
	snprintf(run.status, sizeof(run.status), "%s", status);
	if (o.exited && WIFEXITED(o.status))
		run.exit_code = WEXITSTATUS(o.status);
	if (o.exited && WIFSIGNALED(o.status))
		run.term_signal = WTERMSIG(o.status);
	if (o.exited && !o.exec_errno) {
		int cr = ops->collect(&ctx, o.status, &m);
		if (cr < 0 && strcmp(status, "ok") == 0) {
			snprintf(run.status, sizeof(run.status), "failed");
			snprintf(run.reason, sizeof(run.reason), "workload finished but its results could not be read: %s", strerror(-cr));
		}
		wl_metrics_add(&m, "time.wall_s", "s", o.wall_s);
		wl_metrics_add(&m, "rusage.user_s", "s", tv_s(o.ru.ru_utime));
		wl_metrics_add(&m, "rusage.sys_s", "s", tv_s(o.ru.ru_stime));
		wl_metrics_add(&m, "rusage.maxrss_kb", "KiB", (double)o.ru.ru_maxrss);
	}
	wl_metrics_add(&m, "memcg.peak_bytes", "bytes", (double)peak);
	wl_metrics_add(&m, "memcg.oom_kills", "kills", (double)oom);
	if (smp) {
		struct metric_sink ms = { &m };
		sampler_foreach_delta(smp, add_delta, &ms);
		sampler_foreach_series(smp, add_series, &ss);
		const uint8_t *tb;
		size_t tl;
		struct sampler_stats stats;
		sampler_get_stats(smp, &stats);
		if (sampler_times(smp, &tb, &tl) == 0)
			add_series(&ss, "t_ns", tb, tl, stats.samples);
		wl_metrics_add(&m, "sampler.samples", "samples", (double)stats.samples);
		wl_metrics_add(&m, "sampler.lateness_p99_ms", "ms", stats.lateness_p99_s * 1000);
	}
	/* a run that exited 0 counts only if its evidence agrees: no OOM
	 * kills (unless tolerated), and the workload's expect met */
	if (strcmp(run.status, "ok") == 0) {
		const char *judged = expect_judge(wl->oom == JOB_OOM_TOLERATE, oom, wl->expect, wl->n_expect, var->name,
						  metric_lookup, &m,
						  run.reason, sizeof(run.reason));
		snprintf(run.status, sizeof(run.status), "%s", judged);
	}
	read_tail(workdir, "stdout", run.stdout_tail, sizeof(run.stdout_tail));
	read_tail(workdir, "stderr", run.stderr_tail, sizeof(run.stderr_tail));
	if (strcmp(run.status, "failed") == 0 && strncmp(run.reason, "exited with status", 18) == 0)
		reason_add_stderr(run.reason, sizeof(run.reason), run.stderr_tail);
	run.finished = util_real_now();
	r = store_run_finish(st, &run, o.aborted ? "aborted" : "finished", &m, ss.v, ss.n);
	if (r >= 0 && fc_why[0])
		for (size_t i = 0; i < wl->n_fcount; i++) {
			char name[160];
			snprintf(name, sizeof(name), "fcount.%s", wl->fcount[i]);
			store_run_unavailable(st, run_id, name, fc_why);
		}
	if (r >= 0) {
		log_info("  %s %s: %s%s%s (%.1f s)", var->name, wl->name, run.status,
			 run.reason[0] ? ": " : "", run.reason, o.wall_s);
		if (strcmp(run.status, "ok") != 0 && strcmp(run.status, "aborted") != 0 && run.stderr_tail[0]) {
			const char *tail = run.stderr_tail;
			size_t tl = strlen(tail);
			if (tl > 400)
				tail += tl - 400;
			log_info("  stderr tail: %s", tail);
		}
	}
	goto out;

setup_failed:
	log_error("variant \"%s\", workload \"%s\": %s", var->name, wl->name, err);
	if (r >= 0)
		r = -EIO;
out:
	if (smp)
		sampler_free(smp);
	free(ss.v);
	wl_metrics_free(&m);
	wl_argv_free(argv);
	if (cg) {
		if (cg_destroy(cg) >= 0 && cg_journal > 0) {
			store_journal_del(st, cg_journal);
			cg_journal = 0;
		}
	}
	if (cg_journal > 0 && cg_remove_path(je.target) >= 0)
		store_journal_del(st, cg_journal);
	if (knob_restore(st, knobs, n_knobs) < 0 && r >= 0)
		r = -EIO;
	free(knobs);
	if (have_workdir)
		util_remove_tree(workdir);
	if (o.aborted)
		return -EINTR;
	return r < 0 ? r : 0;
}
