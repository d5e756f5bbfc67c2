/* One run: a step's workload in its own memcg, with the sampler, recorded
 * in the store.
 *
 * The rule the executor's crash safety rests on: a run is written
 * 'started' (with its boot id and time) before its workload is spawned,
 * and 'finished' (or 'aborted') with all its metrics in one transaction.
 * A crash between the two leaves a 'started' run, which exec_recover
 * marks aborted, never counted, and its step runs again. Two functions
 * hold the rule: step_execute (writes 'started', spawns, waits) and
 * step_record (writes 'finished' with the metrics). Before them
 * step_setup journals each change to the machine before making it; after
 * them step_cleanup undoes the changes, on every path. */
#include "harness/exec/cgroup.h"
#include "harness/exec/condition.h"
#include "harness/exec/exec_priv.h"
#include "harness/job/expect.h"
#include "harness/exec/fcount.h"
#include "harness/job/job.h"
#include "harness/exec/jobdir.h"
#include "harness/exec/knobs.h"
#include "harness/exec/provenance.h"
#include "harness/sampler/sampler.h"
#include "db/store.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

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
	const struct store_metric *v = wl_metrics_find(ctx, 0, name);
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
	if (util_grow(s->v, s->cap, s->n + 1, 256) < 0)
		return;
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
		util_child_fds();   /* of kab's descriptors, the workload has 0, 1 and 2 */
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

static enum run_status decide_status(const struct run_outcome *o, uint64_t oom_kills, char *reason, size_t len)
{
	if (o->aborted) {
		snprintf(reason, len, "%s; not counted", exec_stop_why()[0] ? exec_stop_why() : "interrupted by a signal");
		return RUN_ABORTED;
	}
	if (o->exec_errno) {
		snprintf(reason, len, "cannot execute the workload: %s", strerror(o->exec_errno));
		return RUN_FAILED;
	}
	if (o->timed_out) {
		snprintf(reason, len, "killed after the workload's timeout");
		return RUN_TIMED_OUT;
	}
	bool ok = WIFEXITED(o->status) && WEXITSTATUS(o->status) == 0;
	if (oom_kills > 0 && !ok) {
		snprintf(reason, len, "memcg OOM killer killed %llu process(es)", (unsigned long long)oom_kills);
		return RUN_OOM_KILLED;
	}
	if (ok)
		return RUN_OK;
	if (WIFSIGNALED(o->status))
		snprintf(reason, len, "killed by signal %d (%s)", WTERMSIG(o->status), strsignal(WTERMSIG(o->status)));
	else
		snprintf(reason, len, "exited with status %d", WEXITSTATUS(o->status));
	return RUN_FAILED;
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

/* One step's run through its four phases: what set-up made (undone by
 * step_cleanup), the workload's process and collectors, and the record. */
struct step_ctx {
	struct store *st;
	const struct job *j;
	int64_t job_id;
	const struct jobdir *jd;
	const struct store_step *step;
	const char *boot_id;
	const struct job_variant *var;
	const struct job_workload *wl;
	const struct wl_ops *ops;
	/* made by step_setup */
	struct knob_applied *knobs;
	size_t n_knobs;
	struct store_journal cg_entry; /* the cgroup's journal entry, once journaled */
	int64_t cg_journal;
	struct cg *cg;
	char workdir[PATH_MAX + 32];
	bool have_workdir;
	char jobdir[PATH_MAX + 32];
	struct wl_ctx wctx;
	char **argv;
	char prog[1024];
	/* the run and what step_execute collects for step_record */
	struct store_run run;
	int64_t run_id;
	struct run_outcome o;
	struct cond_pin pin;
	struct sampler *smp;
	struct fcount *fc;
	int64_t fc_journal;
	char fc_why[512];
	struct wl_metrics m;
	struct series_sink ss;
	char err[768];
	enum run_status outcome; /* how the run went: a warm-up's status is RUN_WARMUP whatever it is */
};

/* The step's reason is a char array, kept with the run: a failed call's
 * message goes there; err is freed whatever r is. */
static int step_take_err(struct step_ctx *c, int r, struct strbuf *err)
{
	if (r < 0 && err->len)
		snprintf(c->err, sizeof(c->err), "%s", err->buf);
	sb_free(err);
	return r;
}

/* The variant's knobs (journaled by knob_apply), and as the run's record
 * of them also the job's [swap] zswap settings in force, unless the
 * variant set them. */
static int step_knobs(struct step_ctx *c)
{
	struct store_run *run = &c->run;
	struct strbuf err = { 0 };
	int r = knob_apply(c->st, c->job_id, c->boot_id, c->var, &c->knobs, &c->n_knobs, run->knobs, sizeof(run->knobs), &err);
	r = step_take_err(c, r, &err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < c->j->swap.n_knobs; i++) {
		const char *p = c->j->swap.knobs[i].path;
		char now[256];
		size_t used = strlen(run->knobs);
		if (strstr(run->knobs, p) || knob_read(p, now, sizeof(now)) < 0)
			continue;
		snprintf(run->knobs + used, sizeof(run->knobs) - used, "%s=%s\n", p, now);
	}
	return 0;
}

/* The step's memcg, journaled before it is made. */
static int step_cgroup(struct step_ctx *c)
{
	char root[256];
	int cgv, r;
	if ((r = cg_memory_version(&cgv, root, sizeof(root))) < 0) {
		snprintf(c->err, sizeof(c->err), "no memory cgroup controller is mounted");
		return r;
	}
	char cgname[128];
	snprintf(cgname, sizeof(cgname), "kab/job%lld-step%d", (long long)c->job_id, c->step->seq);
	struct store_journal *je = &c->cg_entry;
	*je = (struct store_journal){ .job_id = c->job_id };
	snprintf(je->kind, sizeof(je->kind), "%s", journal_kind_name(JOURNAL_CGROUP));
	snprintf(je->target, sizeof(je->target), "%s/%s", root, cgname);
	snprintf(je->boot_id, sizeof(je->boot_id), "%s", c->boot_id);
	if ((r = store_journal_add(c->st, je, &c->cg_journal)) < 0)
		return r;
	struct cg_limits lim = { c->wl->memory_max, c->wl->memory_high, c->wl->memory_swap_max };
	struct strbuf err = { 0 };
	r = step_take_err(c, cg_create(cgname, &lim, &c->cg, &err), &err);
	if (r < 0)
		return r;
	snprintf(c->run.cgroup_path, sizeof(c->run.cgroup_path), "%s", c->cg->path);
	c->run.cgroup_version = c->cg->version;
	return 0;
}

/* Set up: everything the run needs before its 'started' record, each
 * change to the machine journaled first. A failure is logged here, once;
 * -EINTR (a stop during the conditioning) is not a failure. */
static int step_setup(struct step_ctx *c)
{
	struct store_run *run = &c->run;
	prov_fill(run);
	run->pid = (int)getpid();
	run->memory_max = c->wl->memory_max == JOB_MEM_MAX ? 0 : c->wl->memory_max;

	/* Machine changes first (journaled), then the 'started' record, then
	 * the workload: a crash at any point leaves enough to undo. */
	int r;
	if ((r = step_knobs(c)) < 0 || (r = step_cgroup(c)) < 0)
		goto fail;
	if ((r = jobdir_run_make(c->jd, c->workdir, sizeof(c->workdir))) < 0) {
		snprintf(c->err, sizeof(c->err), "cannot create the run's directory in %s: %s", c->jd->path, strerror(-r));
		goto fail;
	}
	c->have_workdir = true;
	jobdir_wl_path(c->jd, (size_t)c->step->workload, c->jobdir, sizeof(c->jobdir));
	c->wctx = (struct wl_ctx){ .wl = c->wl, .workdir = c->workdir, .jobdir = c->jobdir, .job_id = c->job_id };
	if ((r = c->ops->argv(&c->wctx, &c->argv)) < 0 || !c->argv[0]) {
		snprintf(c->err, sizeof(c->err), "cannot build the workload's command line");
		goto fail;
	}
	if (!util_find_program(c->argv[0], c->prog, sizeof(c->prog))) {
		r = -ENOENT;
		snprintf(c->err, sizeof(c->err), "program \"%s\" is not installed", c->argv[0]);
		goto fail;
	}

	/* the settings as the run sees them (its knobs in force); then the
	 * job's conditioning, last before the start */
	prov_settings("", run->settings, sizeof(run->settings));
	struct strbuf cond_err = { 0 };
	r = cond_before_run(&c->j->cond, exec_check_interrupted, run->conditioning, sizeof(run->conditioning), &cond_err);
	r = step_take_err(c, r, &cond_err);
	if (r >= 0 || r == -EINTR)
		return r; /* -EINTR: stopped during the conditioning, not a failure */
fail:
	log_error("variant \"%s\", workload \"%s\": %s", c->var->name, c->wl->name, c->err);
	return r >= 0 ? -EIO : r;
}

/* The function counts started; why they are not, kept with the run. */
static void step_fcount_begin(struct step_ctx *c, const char *tag)
{
	const struct job_workload *wl = c->wl;
	struct strbuf why = { 0 };
	int r = fcount_start(wl->fcount, wl->n_fcount, tag, &c->fc, &why);
	snprintf(c->fc_why, sizeof(c->fc_why), "%s", why.len ? why.buf : "");
	sb_free(&why);
	if (r < 0)
		log_warn("function counts unavailable: %s; the run goes on without them", c->fc_why);
	else
		log_info("  counting calls of %zu function(s) with %s", wl->n_fcount, fcount_method(c->fc));
}

/* The sampler on CPUs away from the workload's, and the function counts
 * (journaled first), started before the workload is released. */
static void step_collectors_start(struct step_ctx *c)
{
	const struct job_workload *wl = c->wl;
	struct sampler_opts so = { .interval_s = c->j->interval_s, .memcg_dir = c->cg->path,
				   .cgroup_version = c->cg->version, .series = true, .per_cpu = true };
	struct strbuf pin_err = { 0 };
	int r;
	if (cond_pin_sampler(&c->j->cond, &c->pin, &pin_err) < 0)
		log_warn("%s; the sampler shares the workload's CPUs", pin_err.len ? pin_err.buf : "");
	sb_free(&pin_err);
	if ((r = sampler_start(&so, &c->smp)) < 0)
		log_warn("sampler could not start (%s); the run goes on without counters", strerror(-r));
	cond_unpin(&c->pin);
	if (wl->n_fcount == 0)
		return;
	char tag[64];
	snprintf(tag, sizeof(tag), "kab-j%lld-s%d", (long long)c->job_id, c->step->seq);
	struct store_journal fj = { .job_id = c->job_id };
	snprintf(fj.kind, sizeof(fj.kind), "%s", journal_kind_name(JOURNAL_FCOUNT));
	snprintf(fj.target, sizeof(fj.target), "%s", tag);
	snprintf(fj.boot_id, sizeof(fj.boot_id), "%s", c->boot_id);
	if (store_journal_add(c->st, &fj, &c->fc_journal) < 0)
		snprintf(c->fc_why, sizeof(c->fc_why), "cannot journal the tracing setup");
	else
		step_fcount_begin(c, tag);
}

/* The workload is gone: the sampler stops, the function counts go into
 * the run's metrics and their tracing setup out of the journal. */
static void step_collectors_stop(struct step_ctx *c)
{
	if (c->smp)
		sampler_stop(c->smp);
	if (c->fc) {
		struct metric_sink fs = { &c->m };
		if (fcount_stop(c->fc, add_fcount, &fs) < 0)
			snprintf(c->fc_why, sizeof(c->fc_why), "the counters could not be read back");
		c->fc = NULL;
	}
	if (c->fc_journal > 0) {
		store_journal_del(c->st, c->fc_journal);
		c->fc_journal = 0;
	}
}

/* Execute: writes the run 'started', then spawns the workload into its
 * memcg and waits for it. Returns < 0 only when 'started' could not be
 * written (nothing ran); after that every path returns 0, and the run is
 * recorded by step_record however it went. */
static int step_execute(struct step_ctx *c)
{
	struct run_outcome *o = &c->o;
	struct strbuf cond_err = { 0 };
	int r;
	c->run.started = util_real_now();
	if ((r = store_run_begin(c->st, &c->run, &c->run_id)) < 0)
		return r;
	if (c->ops->before) {
		struct strbuf err = { 0 };
		if ((r = step_take_err(c, c->ops->before(&c->wctx, &err), &err)) < 0) {
			if (!c->err[0])
				snprintf(c->err, sizeof(c->err), "preparing the run failed: %s", strerror(-r));
			o->exec_errno = EIO;
			goto done;
		}
	}
	if (c->ops->drop_caches && c->ops->drop_caches(c->wl) &&
	    (r = step_take_err(c, cond_drop_caches("workload drop_caches = yes", &cond_err), &cond_err)) < 0) {
		o->exec_errno = EIO;
		goto done;
	}

	pid_t pid = -1;
	int go_fd = -1, err_fd = -1;
	if ((r = step_take_err(c, cond_pin_workload(&c->j->cond, &c->pin, &cond_err), &cond_err)) < 0 ||
	    (r = spawn_stopped(c->prog, c->argv, c->workdir, &pid, &go_fd, &err_fd)) < 0) {
		if (!c->err[0])
			snprintf(c->err, sizeof(c->err), "fork: %s", strerror(-r));
		o->exec_errno = -r;
		goto done;
	}
	if ((r = cg_attach(c->cg, pid)) < 0) {
		close(go_fd);
		close(err_fd);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		snprintf(c->err, sizeof(c->err), "cannot put the workload into %s", c->cg->path);
		o->exec_errno = EIO;
		goto done;
	}
	step_collectors_start(c);
	double t0 = util_mono_now();
	if (write(go_fd, "g", 1) != 1)
		log_warn("cannot release the workload: %s", strerror(errno));
	close(go_fd);
	wait_workload(pid, c->cg->path, c->wl->timeout_s, t0, o);
	int exec_err;
	if (read(err_fd, &exec_err, sizeof(exec_err)) == (ssize_t)sizeof(exec_err))
		o->exec_errno = exec_err;
	close(err_fd);
	step_collectors_stop(c);
	cg_kill_all(c->cg->path);
done:
	cond_unpin(&c->pin);
	return 0;
}

/* The run's own metrics: what the workload reports, then its time and
 * rusage. A run whose results cannot be read has failed. */
static void step_collect(struct step_ctx *c, enum run_status status)
{
	struct store_run *run = &c->run;
	const struct run_outcome *o = &c->o;
	int cr = c->ops->collect(&c->wctx, o->status, &c->m);
	if (cr < 0 && status == RUN_OK) {
		run->status = RUN_FAILED;
		snprintf(run->reason, sizeof(run->reason), "workload finished but its results could not be read: %s", strerror(-cr));
	}
	wl_metrics_add(&c->m, "time.wall_s", "s", o->wall_s);
	wl_metrics_add(&c->m, "rusage.user_s", "s", tv_s(o->ru.ru_utime));
	wl_metrics_add(&c->m, "rusage.sys_s", "s", tv_s(o->ru.ru_stime));
	wl_metrics_add(&c->m, "rusage.maxrss_kb", "KiB", (double)o->ru.ru_maxrss);
}

/* The sampler's counter deltas, time series and its own health. */
static void step_sampler_metrics(struct step_ctx *c)
{
	struct metric_sink ms = { &c->m };
	sampler_foreach_delta(c->smp, add_delta, &ms);
	sampler_foreach_series(c->smp, add_series, &c->ss);
	const uint8_t *tb;
	size_t tl;
	struct sampler_stats stats;
	sampler_get_stats(c->smp, &stats);
	if (sampler_times(c->smp, &tb, &tl) == 0)
		add_series(&c->ss, "t_ns", tb, tl, stats.samples);
	wl_metrics_add(&c->m, "sampler.samples", "samples", (double)stats.samples);
	wl_metrics_add(&c->m, "sampler.lateness_p99_ms", "ms", stats.lateness_p99_s * 1000);
}

/* The recorded run in the log, with the end of its stderr when it did not
 * go well. */
static void step_log(const struct step_ctx *c)
{
	const struct store_run *run = &c->run;
	log_info("  %s %s: %s%s%s (%.1f s)", c->var->name, c->wl->name, run_status_name(run->status), run->reason[0] ? ": " : "",
		 run->reason, c->o.wall_s);
	if (c->outcome != RUN_OK && c->outcome != RUN_ABORTED && run->stderr_tail[0]) {
		const char *tail = run->stderr_tail;
		size_t tl = strlen(tail);
		if (tl > 400)
			tail += tl - 400;
		log_info("  stderr tail: %s", tail);
	}
}

/* A warm-up run is recorded whatever its outcome, never counted: its
 * status says it was the warm-up, its reason how it went. One cut short
 * stays aborted, and its step runs again. */
static void warmup_status(struct store_run *run)
{
	if (run->status == RUN_ABORTED)
		return;
	char how[sizeof(run->reason)];
	snprintf(how, sizeof(how), "%s%s%s", run_status_name(run->status), run->reason[0] ? ": " : "", run->reason);
	snprintf(run->reason, sizeof(run->reason), "warm-up before the first pair, not counted (%s)", how);
	run->status = RUN_WARMUP;
}

/* The job's derived metrics (ratio = A / B in a [metric ratio.NAME]) from
 * the run's own, before its expect is judged, which may name one. A ratio
 * whose B is 0 or not recorded is left out: step_ratios_missing says why. */
static void step_ratios(struct step_ctx *c)
{
	for (size_t i = 0; i < c->j->n_metric_settings; i++) {
		const struct job_metric *s = &c->j->metric_settings[i];
		if (!s->ratio_of || !s->ratio_per)
			continue;
		const struct store_metric *a = wl_metrics_find(&c->m, 0, s->ratio_of);
		const struct store_metric *b = wl_metrics_find(&c->m, 0, s->ratio_per);
		if (a && b && b->value > 0) {
			double v = a->value / b->value;
			wl_metrics_add(&c->m, s->name, s->unit ? s->unit : "ratio", v);
		}
	}
}

static void step_ratios_missing(struct step_ctx *c)
{
	for (size_t i = 0; i < c->j->n_metric_settings; i++) {
		const struct job_metric *s = &c->j->metric_settings[i];
		if (!s->ratio_of || !s->ratio_per || wl_metrics_find(&c->m, 0, s->name))
			continue;
		char why[512];
		if (!wl_metrics_find(&c->m, 0, s->ratio_of))
			snprintf(why, sizeof(why), "%s / %s: this run recorded no %s", s->ratio_of, s->ratio_per, s->ratio_of);
		else if (!wl_metrics_find(&c->m, 0, s->ratio_per))
			snprintf(why, sizeof(why), "%s / %s: this run recorded no %s", s->ratio_of, s->ratio_per, s->ratio_per);
		else
			snprintf(why, sizeof(why), "%s / %s: %s was 0 in this run", s->ratio_of, s->ratio_per, s->ratio_per);
		store_run_unavailable(c->st, c->run_id, s->name, why);
	}
}

/* Record: the run's status and reason, every metric and series, and the
 * step 'finished' (or 'aborted' after a stop), in one transaction:
 * store_run_finish. After it only marks of function counts that could
 * not be had, and the log line. */
static int step_record(struct step_ctx *c)
{
	struct store_run *run = &c->run;
	const struct run_outcome *o = &c->o;
	const struct job_workload *wl = c->wl;
	uint64_t oom = 0, peak = 0;
	if (c->cg) {
		cg_oom_kills(c->cg, &oom);
		cg_peak(c->cg, &peak);
	}
	enum run_status status = decide_status(o, oom, run->reason, sizeof(run->reason));
	if (c->err[0] && !o->exited)
		snprintf(run->reason, sizeof(run->reason), "%s", c->err);
	run->status = status;
	if (o->exited && WIFEXITED(o->status))
		run->exit_code = WEXITSTATUS(o->status);
	if (o->exited && WIFSIGNALED(o->status))
		run->term_signal = WTERMSIG(o->status);
	if (o->exited && !o->exec_errno)
		step_collect(c, status);
	wl_metrics_add(&c->m, "memcg.peak_bytes", "bytes", (double)peak);
	wl_metrics_add(&c->m, "memcg.oom_kills", "kills", (double)oom);
	if (c->smp)
		step_sampler_metrics(c);
	step_ratios(c);
	/* a run that exited 0 counts only if its evidence agrees: no OOM
	 * kills (unless tolerated), and the workload's expect met */
	if (run->status == RUN_OK)
		run->status = expect_judge(wl->oom == JOB_OOM_TOLERATE, oom, wl->expect, wl->n_expect, c->var->name,
					   metric_lookup, &c->m, run->reason, sizeof(run->reason));
	read_tail(c->workdir, "stdout", run->stdout_tail, sizeof(run->stdout_tail));
	read_tail(c->workdir, "stderr", run->stderr_tail, sizeof(run->stderr_tail));
	if (run->status == RUN_FAILED && strncmp(run->reason, "exited with status", 18) == 0)
		reason_add_stderr(run->reason, sizeof(run->reason), run->stderr_tail);
	c->outcome = run->status;
	if (c->step->pair == STORE_PAIR_WARMUP)
		warmup_status(run);
	run->finished = util_real_now();
	int r = store_run_finish(c->st, run, o->aborted ? STEP_ABORTED : STEP_FINISHED, c->m.v, c->m.n, c->ss.v, c->ss.n);
	if (r >= 0 && c->fc_why[0])
		for (size_t i = 0; i < wl->n_fcount; i++) {
			char name[160];
			snprintf(name, sizeof(name), "fcount.%s", wl->fcount[i]);
			store_run_unavailable(c->st, c->run_id, name, c->fc_why);
		}
	if (r >= 0 && o->exited && !o->exec_errno)
		step_ratios_missing(c);
	if (r >= 0)
		step_log(c);
	return r;
}

/* Clean up, on every path: what set-up made is undone (its journal
 * entries go once it is), the knobs put back. Returns the step's result:
 * -EINTR after a stop, else r or a failed knob restore. */
static int step_cleanup(struct step_ctx *c, int r)
{
	if (c->smp)
		sampler_free(c->smp);
	free(c->ss.v);
	wl_metrics_free(&c->m);
	wl_argv_free(c->argv);
	if (c->cg) {
		if (cg_destroy(c->cg) >= 0 && c->cg_journal > 0) {
			store_journal_del(c->st, c->cg_journal);
			c->cg_journal = 0;
		}
	}
	if (c->cg_journal > 0 && cg_remove_path(c->cg_entry.target) >= 0)
		store_journal_del(c->st, c->cg_journal);
	if (knob_restore(c->st, c->knobs, c->n_knobs) < 0 && r >= 0)
		r = -EIO;
	free(c->knobs);
	if (c->have_workdir)
		util_remove_tree(c->workdir);
	if (c->o.aborted)
		return -EINTR;
	return r < 0 ? r : 0;
}

/* The four phases in order; step_cleanup whatever the others returned. */
int exec_run_step(struct store *st, const struct job *j, int64_t job_id, const struct jobdir *jd,
		  const struct store_step *step, const char *boot_id)
{
	const struct job_workload *wl = &j->workloads[step->workload];
	struct step_ctx c = { .st = st, .j = j, .job_id = job_id, .jd = jd, .step = step, .boot_id = boot_id,
			      .var = &j->variants[step->variant], .wl = wl, .ops = wl_find(wl->type),
			      .run = { .job_id = job_id, .step_id = step->id, .pair = step->pair,
				       .variant = step->variant, .workload = step->workload, .exit_code = -1 } };
	int r = step_setup(&c);
	if (r >= 0 && (r = step_execute(&c)) >= 0)
		r = step_record(&c);
	return step_cleanup(&c, r);
}
