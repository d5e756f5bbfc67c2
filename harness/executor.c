/* The executor: schedule, swap, and one run per step in its own memcg.
 * Every state is in the store before the next action on the machine. */
#include "executor.h"
#include "adaptive.h"
#include "expect.h"
#include "cgroup.h"
#include "condition.h"
#include "job.h"
#include "knobs.h"
#include "fcount.h"
#include "build.h"
#include "kbuild_job.h"
#include "run.h"
#include "kexec.h"
#include "reboot.h"
#include "store_boots.h"
#include "store_builds.h"
#include "provenance.h"
#include "sampler.h"
#include "jobdir.h"
#include "store.h"
#include "swap.h"
#include "util.h"
#include "wl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <linux/magic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KILL_GRACE_S 5.0

/* ---- planning ---- */

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

int exec_plan(const struct job *j, struct store_step **ret, size_t *ret_n)
{
	/* a job that boots kernels: a pair is one boot of each variant, with
	 * runs_per_boot runs of each workload inside it */
	bool boots = job_boots_kernels(j);
	size_t reps = boots ? j->runs_per_boot : 1;
	size_t nv = j->n_variants, n = (size_t)j->pairs * j->n_workloads * nv * reps;
	struct store_step *v = calloc(n ? n : 1, sizeof(*v));
	int *perm = calloc(nv, sizeof(int));
	if (!v || !perm) {
		free(v);
		free(perm);
		return -ENOMEM;
	}
	uint64_t rng = j->seed ? j->seed : 1;
	bool block_reversed = false;
	size_t k = 0;
	for (unsigned p = 0; p < j->pairs; p++) {
		bool reversed;
		switch (j->order) {
		case JOB_ORDER_ALTERNATE:
			reversed = false;
			break;
		case JOB_ORDER_RANDOM:
			/* balanced: each block of two pairs has one of each order,
			 * the block's first order drawn from the seed */
			if (p % 2 == 0)
				block_reversed = xorshift(&rng) & 1;
			reversed = (p % 2 == 0) ? block_reversed : !block_reversed;
			break;
		default:
			reversed = p % 2 == 1; /* ABBA */
		}
		for (size_t i = 0; i < nv; i++)
			perm[i] = reversed ? (int)(nv - 1 - i) : (int)i;
		/* runtime variants alternate inside each workload; kernels
		 * alternate between boots, every workload inside each */
		for (size_t outer = 0; outer < (boots ? nv : j->n_workloads); outer++)
			for (size_t inner = 0; inner < (boots ? j->n_workloads : nv); inner++)
				for (size_t r = 0; r < reps; r++) {
					size_t vi = boots ? outer : inner, w = boots ? inner : outer;
					v[k] = (struct store_step){ .seq = (int)k, .pair = (int)p, .variant = perm[vi], .workload = (int)w,
								    .boot = boots ? (int)(p * nv + vi) : -1, .rep = (int)r };
					snprintf(v[k].status, sizeof(v[k].status), "pending");
					k++;
				}
	}
	free(perm);
	*ret = v;
	*ret_n = k;
	return 0;
}

/* ---- signals: blocked, and taken synchronously with sigtimedwait ---- */

static sigset_t run_signals;
static bool interrupted;
/* kab run's check that its output is still there, asked at every wait;
 * why the job stops when it is not a signal ("" for a signal) */
static bool (*stop_check)(char *why, size_t len);
static char stop_why[160];

void exec_set_stop_check(bool (*check)(char *why, size_t len))
{
	stop_check = check;
}

static void signals_block(sigset_t *old)
{
	sigemptyset(&run_signals);
	sigaddset(&run_signals, SIGINT);
	sigaddset(&run_signals, SIGTERM);
	sigaddset(&run_signals, SIGHUP);
	sigaddset(&run_signals, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &run_signals, old);
}

/* Waits up to timeout_s for a signal; returns it, or 0 on timeout. */
static int signal_wait(double timeout_s)
{
	if (timeout_s < 0)
		timeout_s = 0;
	struct timespec ts = { (time_t)timeout_s, (long)((timeout_s - (double)(time_t)timeout_s) * 1e9) };
	int sig = sigtimedwait(&run_signals, NULL, &ts);
	if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
		interrupted = true;
	if (!interrupted && stop_check && stop_check(stop_why, sizeof(stop_why)))
		interrupted = true;
	return sig < 0 ? 0 : sig;
}

static bool check_interrupted(void)
{
	while (signal_wait(0) != 0)
		;
	return interrupted;
}

/* The job's reason when it stops before its end. */
static void set_cancelled(struct store *st, int64_t job_id)
{
	char reason[256] = "interrupted by a signal";
	if (stop_why[0])
		snprintf(reason, sizeof(reason), "%s; its finished runs are kept and kab run --resume %lld continues the job",
			 stop_why, (long long)job_id);
	store_job_set_status(st, job_id, "cancelled", reason);
}

/* A run-time failure ends the job: err (or r's text) logged once and, after
 * prefix, the job's reason. */
static void job_failed_with(struct store *st, int64_t job_id, const char *prefix, const struct strbuf *err, int r)
{
	const char *why = err->buf ? err->buf : strerror(-r);
	log_error("%s", why);
	char reason[768];
	snprintf(reason, sizeof(reason), "%s%.700s", prefix, why);
	store_job_set_status(st, job_id, "failed", reason);
}

/* A set-up step failed: a stop that came meanwhile (a workload's prepare
 * or mkswap killed by the same Ctrl-C) cancels the job, else it failed. */
static int failed_or_cancelled(struct store *st, int64_t job_id, int r, const char *reason)
{
	if (check_interrupted()) {
		set_cancelled(st, job_id);
		return -EINTR;
	}
	store_job_set_status(st, job_id, "failed", reason);
	return r;
}

/* ---- swap for the whole job ---- */

struct job_swap_state {
	int64_t journal_id;
	char path[256];
	int zram_id;
	bool made;
	struct knob_applied *knobs; /* [swap] zswap settings, for the whole job */
	size_t n_knobs;
};

/* [swap]'s zswap settings as a variant, for knob_apply and the preflight. */
static struct job_variant swap_knobs_variant(const struct job *j)
{
	return (struct job_variant){ .label = "swap", .name = "[swap]", .kernel = "running",
				     .knobs = j->swap.knobs, .n_knobs = j->swap.n_knobs, .line = j->swap.line };
}

static int swap_knobs_apply(struct store *st, const struct job *j, int64_t job_id, const char *boot_id,
			    struct job_swap_state *s)
{
	if (j->swap.n_knobs == 0)
		return 0;
	struct job_variant v = swap_knobs_variant(j);
	char in_force[1024], err[512] = "";
	int r = knob_apply(st, job_id, boot_id, &v, &s->knobs, &s->n_knobs, in_force, sizeof(in_force), err, sizeof(err));
	if (r < 0) {
		log_error("[swap] zswap settings: %s", err);
		return r;
	}
	for (char *p = in_force, *nl; *p; p = nl + 1) {
		if (!(nl = strchr(p, '\n')))
			break;
		*nl = 0;
		log_info("swap: %s", p);
	}
	return 0;
}

static int swap_setup(struct store *st, const struct job *j, int64_t job_id, const char *boot_id,
		      const struct jobdir *jd, struct job_swap_state *s)
{
	memset(s, 0, sizeof(*s));
	s->zram_id = -1;
	char err[512] = "";
	struct store_journal e = { .job_id = job_id };
	snprintf(e.boot_id, sizeof(e.boot_id), "%s", boot_id);
	int r = 0;
	switch (j->swap.kind) {
	case JOB_SWAP_NONE:
	case JOB_SWAP_EXISTING:
		return swap_knobs_apply(st, j, job_id, boot_id, s);
	case JOB_SWAP_ZRAM:
		r = swap_zram_add(j->swap.size, j->swap.algorithm, &s->zram_id, err, sizeof(err));
		if (s->zram_id >= 0) {
			snprintf(s->path, sizeof(s->path), "/dev/zram%d", s->zram_id);
			snprintf(e.kind, sizeof(e.kind), "zram");
			snprintf(e.target, sizeof(e.target), "%s", s->path);
			snprintf(e.original, sizeof(e.original), "%d", s->zram_id);
			store_journal_add(st, &e, &s->journal_id);
			s->made = true;
		}
		break;
	case JOB_SWAP_FILE:
		if (j->swap.path) {
			snprintf(s->path, sizeof(s->path), "%s", j->swap.path);
			if ((r = swap_path_trusted(s->path, err, sizeof(err))) < 0)
				break;
		} else if ((r = jobdir_swap_path(jd, s->path, sizeof(s->path))) < 0) {
			snprintf(err, sizeof(err), "cannot name a swap file in %s: %s", jd->path, strerror(-r));
			break;
		}
		snprintf(e.kind, sizeof(e.kind), "swapfile");
		snprintf(e.target, sizeof(e.target), "%s", s->path);
		if ((r = store_journal_add(st, &e, &s->journal_id)) < 0)
			break;
		r = swap_file_create(s->path, j->swap.size, err, sizeof(err));
		if (r < 0)
			store_journal_del(st, s->journal_id);
		else
			s->made = true;
		break;
	}
	if (r >= 0)
		r = swap_enable(s->path, j->swap.priority, err, sizeof(err));
	if (r < 0) {
		log_error("swap: %s", err);
		return r;
	}
	char sz[32];
	util_format_size(j->swap.size, sz, sizeof(sz));
	log_info("swap: %s (%s) enabled", s->path, sz);
	/* zswap goes in front once the device is there to write back to */
	return swap_knobs_apply(st, j, job_id, boot_id, s);
}

static void swap_teardown(struct store *st, struct job_swap_state *s)
{
	if (s->n_knobs) {
		knob_restore(st, s->knobs, s->n_knobs);
		free(s->knobs);
		s->knobs = NULL;
		s->n_knobs = 0;
	}
	if (!s->made)
		return;
	int r;
	if (s->zram_id >= 0) {
		r = swap_zram_remove(s->zram_id);
	} else {
		r = swap_disable(s->path);
		if (r >= 0 && unlink(s->path) < 0 && errno != ENOENT)
			r = -errno;
	}
	if (r >= 0) {
		store_journal_del(st, s->journal_id);
		log_info("swap: %s removed", s->path);
	}
	s->made = false;
}

/* ---- one run ---- */

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
		signal_wait(0.05);
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
		if (interrupted && !o->aborted) {
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
		signal_wait(slice);
	}
}

static const char *decide_status(const struct run_outcome *o, uint64_t oom_kills, char *reason, size_t len)
{
	if (o->aborted) {
		snprintf(reason, len, "%s; not counted", stop_why[0] ? stop_why : "interrupted by a signal");
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

static int run_step(struct store *st, const struct job *j, int64_t job_id, const struct jobdir *jd,
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
	r = cond_before_run(&j->cond, check_interrupted, run.conditioning, sizeof(run.conditioning), err, sizeof(err));
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
	r = store_run_finish(st, &run, o.aborted ? "aborted" : "finished", m.v, m.n, ss.v, ss.n);
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

/* ---- adaptive budgets ---- */

/* After a step: when it completed a pair at a look point, look. */
static void adaptive_after_step(struct store *st, const struct job *j, int64_t job_id,
				struct store_step *steps, size_t n, size_t i)
{
	const struct job_adaptive *a = &j->adaptive;
	int w = steps[i].workload, p = steps[i].pair;
	for (size_t k = i + 1; k < n; k++)
		if (steps[k].workload == w && steps[k].pair == p && strcmp(steps[k].status, "pending") == 0)
			return; /* the pair is not complete yet */
	unsigned done = (unsigned)p + 1;
	if (a->step == 0 || done < a->min || (done - a->min) % a->step != 0 || done >= j->pairs)
		return;
	unsigned look = (done - a->min) / a->step + 1;
	enum stats_stop stop = STATS_CONTINUE;
	if (adaptive_look(st, j, job_id, w, done, look, job_looks(j), &stop) < 0) {
		log_warn("adaptive look %u for workload %s failed; continuing to the budget", look, j->workloads[w].name);
		return;
	}
	const char *reason = stop == STATS_STOP_DECIDED ? "decided" : stop == STATS_STOP_SAME ? "same" : NULL;
	store_progress_set(st, job_id, w, (int)look, (int)done, reason);
	if (!reason) {
		log_info("look %u after %u pairs of %s: not decided yet, continuing", look, done, j->workloads[w].name);
		return;
	}
	log_info("look %u after %u pairs of %s: every primary metric is %s; skipping its remaining pairs",
		 look, done, j->workloads[w].name, stop == STATS_STOP_DECIDED ? "decided" : "within its threshold");
	store_steps_skip(st, job_id, w, (int)done);
	for (size_t k = 0; k < n; k++)
		if (steps[k].workload == w && steps[k].pair >= (int)done && strcmp(steps[k].status, "pending") == 0)
			snprintf(steps[k].status, sizeof(steps[k].status), "skipped");
}

/* Workloads that ran all their pairs stopped on the budget. */
static void adaptive_finish(struct store *st, const struct job *j, int64_t job_id)
{
	for (size_t w = 0; w < j->n_workloads; w++) {
		int looks, done;
		char reason[32] = "";
		if (store_progress_get(st, job_id, (int)w, &looks, &done, reason, sizeof(reason)) == 0 && reason[0])
			continue;
		store_progress_set(st, job_id, (int)w, (int)job_looks(j), (int)j->pairs, "budget");
	}
}

struct build_progress {
	struct store *st;
	int64_t job_id;
	double last;
};

/* A kernel build's stage as the job's reason, at most once a second. */
static void on_build_stage(void *ctx, const char *name, const char *stage)
{
	struct build_progress *p = ctx;
	double now = util_mono_now();
	if (p->last > 0 && now - p->last < 1.0)
		return;
	p->last = now;
	char msg[512];
	snprintf(msg, sizeof(msg), "building the kernel of variant %s: %s", name, stage);
	store_job_set_status(p->st, p->job_id, "running", msg);
}

/* ---- jobs that boot kernels ---- */

struct boots {
	struct store_build *b;  /* each variant's build */
	int current;            /* the plan's boot this boot is; -1: none of them */
};

static void boots_free(struct boots *bc, size_t n)
{
	if (!bc->b)
		return;
	for (size_t i = 0; i < n; i++)
		store_build_clear(&bc->b[i]);
	free(bc->b);
	bc->b = NULL;
}

static double uptime_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void running_kernel(char *cmdline, size_t clen, char *release, size_t rlen)
{
	char *c = NULL;
	snprintf(cmdline, clen, "%s", util_read_line("/proc/cmdline", &c) == 0 ? c : "");
	free(c);
	struct utsname u;
	snprintf(release, rlen, "%s", uname(&u) == 0 ? u.release : "");
}

/* The database must outlive a reboot: on a disk, not in memory, tmpfs or ramfs. */
static int db_survives_reboot(const struct store *st, char *why, size_t len)
{
	const char *path = store_path(st);
	if (!path || !path[0]) {
		snprintf(why, len, "an in-memory database does not survive a reboot");
		return -EINVAL;
	}
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = 0; /* "/x.db" keeps "/" */
	struct statfs sf;
	if (statfs(dir, &sf) == 0 && (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC)) {
		snprintf(why, len, "the database %s is on %s, which a reboot empties: a job that boots kernels keeps its state across boots; use a database on a disk (kabd --db /var/lib/kab/kab.db)",
			 path, sf.f_type == TMPFS_MAGIC ? "tmpfs" : "ramfs");
		return -EINVAL;
	}
	return 0;
}

/* After a boot: judges the switch the last boot recorded, and finds which
 * of the plan's boots this one is. */
static int boots_arrive(struct store *st, const struct job *j, int64_t job_id, const char *boot_id, struct boots *bc)
{
	struct store_boot *v = NULL;
	size_t n = 0;
	int r = store_boots_load(st, job_id, &v, &n);
	if (r < 0)
		return r;
	bc->current = -1;
	struct store_boot *last = n ? &v[n - 1] : NULL;
	if (last && strcmp(last->status, "switching") == 0) {
		if (strcmp(last->from_boot_id, boot_id) == 0) {
			/* kab stopped between recording the switch and making it */
			snprintf(last->status, sizeof(last->status), "abandoned");
			snprintf(last->reason, sizeof(last->reason), "the switch was not made: kab stopped before the kexec");
		} else {
			char release[128];
			running_kernel(last->booted_cmdline, sizeof(last->booted_cmdline), release, sizeof(release));
			snprintf(last->kernel_release, sizeof(last->kernel_release), "%s", release);
			snprintf(last->boot_id, sizeof(last->boot_id), "%s", boot_id);
			const struct store_build *b = &bc->b[last->variant];
			bool ok = kexec_judge(last->build_id, b->kernelrelease, last->booted_cmdline, release, last->reason,
					      sizeof(last->reason));
			snprintf(last->status, sizeof(last->status), "%s", ok ? "ok" : "failed");
			last->ready_at = util_real_now();
			last->uptime_s = uptime_s();
			last->kexec_s = last->prep_s + last->uptime_s;
			if (ok)
				log_info("boot %d of the plan: build %lld (%s, variant %s) is up, %.2f s from the switch decision (%.2f s preparing, %.2f s since the kernel started)",
					 last->slot + 1, (long long)last->build_id, release, j->variants[last->variant].name,
					 last->kexec_s, last->prep_s, last->uptime_s);
			else
				log_warn("boot %d of the plan failed: %s", last->slot + 1, last->reason);
		}
		if ((r = store_boot_finish(st, last)) < 0)
			goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].status, "ok") == 0 && strcmp(v[i].boot_id, boot_id) == 0)
			bc->current = v[i].slot;
out:
	free(v);
	return r;
}

/* Loads each variant's build, and judges the boot we are in. */
static int boots_start(struct store *st, const struct job *j, int64_t job_id, const char *boot_id,
		       const int64_t *builds, struct boots *bc)
{
	if (!(bc->b = calloc(j->n_variants, sizeof(*bc->b))))
		return -ENOMEM;
	for (size_t i = 0; i < j->n_variants; i++) {
		int r = store_build_get(st, builds[i], &bc->b[i]);
		if (r < 0) {
			log_error("variant %s: build %lld is not in the database", j->variants[i].name, (long long)builds[i]);
			return r;
		}
	}
	return boots_arrive(st, j, job_id, boot_id, bc);
}

static size_t failed_boots(struct store *st, int64_t job_id, int variant)
{
	struct store_boot *v = NULL;
	size_t n = 0, k = 0;
	if (store_boots_load(st, job_id, &v, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		k += v[i].variant == variant && strcmp(v[i].status, "failed") == 0;
	free(v);
	return k;
}

/* What a variant's boot is given: its image, initrd and command line. */
static int boot_target(const struct job *j, const struct boots *bc, int variant, int64_t build_id, const char **image,
		       const char **initrd, char *cmdline, size_t len, struct strbuf *err)
{
	const struct job_variant *var = &j->variants[variant];
	const struct store_build *b = &bc->b[variant];
	*image = b->image;
	*initrd = var->initrd ? var->initrd : b->initrd;
	char cur[4096], release[128];
	running_kernel(cur, sizeof(cur), release, sizeof(release));
	if (!*image) {
		sb_printf(err, "variant %s: build %lld has no image", var->name, (long long)build_id);
		return -EINVAL;
	}
	if (kexec_cmdline(cur, build_id, j->panic_s, var->cmdline, cmdline, len) < 0) {
		sb_printf(err, "variant %s: the command line for build %lld is longer than %zu characters", var->name,
			  (long long)build_id, len - 1);
		return -EINVAL;
	}
	return kexec_preflight(*image, *initrd, cmdline, err);
}

/* switch = reboot: the one-shot boot entry's plan for t, printed. */
static int reboot_plan(const struct kreboot_target *t, struct kreboot_plan *plan, struct strbuf *err)
{
	enum kreboot_loader l;
	int r = kreboot_detect("/", &l, NULL, 0, err);
	if (r == 0 && (r = kreboot_plan_make(t, l, "/", plan, err)) == 0)
		kreboot_plan_print(plan, stderr);
	return r;
}

/* Everything on disk before leaving the boot: the switch's preparation
 * time (decision to now, returned) and the WAL in the main file. */
static double boots_commit(struct store *st, int64_t boot_row, double t0)
{
	sync();
	double prep = util_mono_now() - t0;
	store_boot_prepared(st, boot_row, prep);
	store_checkpoint(st);
	sync();
	return prep;
}

/* Leaves this boot for the plan's boot of step: records the switch, puts
 * the machine back as it was (swap, cgroups), syncs and kexecs. Returns
 * only when the switch could not be made (an error, recorded), or 1 when
 * the step's variant is boot-failed (its steps marked). */
static int boots_switch(struct store *st, const struct job *j, int64_t job_id, const char *boot_id, struct boots *bc,
			const struct store_step *step, struct job_swap_state *sw)
{
	int v = step->variant;
	const struct job_variant *var = &j->variants[v];
	size_t failed = failed_boots(st, job_id, v);
	if (failed >= j->boot_attempts) {
		int k = 0;
		store_steps_boot_failed(st, job_id, v, &k);
		log_error("variant %s is boot-failed: build %lld did not come up in %zu attempts; %d of its runs will not happen",
			  var->name, (long long)bc->b[v].id, failed, k);
		return 1;
	}
	double t0 = util_mono_now();
	const char *image, *initrd;
	char cmdline[4096];
	struct strbuf err = { 0 };
	int r = boot_target(j, bc, v, bc->b[v].id, &image, &initrd, cmdline, sizeof(cmdline), &err);
	if (r < 0)
		goto fail_early;
	struct store_boot b = { .job_id = job_id, .slot = step->boot, .variant = v, .build_id = bc->b[v].id,
				.switch_at = util_real_now() };
	snprintf(b.method, sizeof(b.method), "%s", job_switch_name(j->switch_mode));
	snprintf(b.from_boot_id, sizeof(b.from_boot_id), "%s", boot_id);
	snprintf(b.cmdline, sizeof(b.cmdline), "%s", cmdline);
	char msg[512];
	snprintf(msg, sizeof(msg), "switching to build %lld (%s, variant %s) for step %d: boot %d of %zu", (long long)b.build_id,
		 bc->b[v].kernelrelease, var->name, step->seq + 1, step->boot + 1, (size_t)j->pairs * j->n_variants);
	struct kreboot_target t = { .build_id = b.build_id, .image = image, .initrd = initrd,
				    .kernelrelease = bc->b[v].kernelrelease, .cmdline = cmdline };
	struct kreboot_plan plan = { 0 };
	if (getenv("KAB_SWITCH_DRY_RUN")) {
		/* tests and operators: everything up to the switch, which is shown, not made */
		if (j->switch_mode == JOB_SWITCH_REBOOT && (r = reboot_plan(&t, &plan, &err)) < 0)
			goto fail_early;
		kreboot_plan_free(&plan);
		if (j->switch_mode == JOB_SWITCH_KEXEC)
			log_info("kexec_file_load %s, initrd %s, command line \"%s\"", image, initrd ? initrd : "none", cmdline);
		sb_printf(&err, "KAB_SWITCH_DRY_RUN is set: the switch to build %lld (%s) is shown in the log, not made", (long long)b.build_id,
			  job_switch_name(j->switch_mode));
		r = -ECANCELED;
		goto fail_early;
	}
	if ((r = store_boot_begin(st, &b, &b.id)) < 0)
		goto fail_early;
	store_job_set_status(st, job_id, "running", msg);
	log_info("%s%s", msg, failed ? " (after a failed boot)" : "");
	/* the machine as it was before the job, in every boot */
	swap_teardown(st, sw);
	cg_remove_parent();
	if (j->switch_mode == JOB_SWITCH_REBOOT) {
		if ((r = reboot_plan(&t, &plan, &err)) == 0) {
			boots_commit(st, b.id, t0);
			r = kreboot_plan_run(&plan, false, &err);
		}
		kreboot_plan_free(&plan);
		if (r == 0) { /* under way: systemd stops kabd next */
			sb_free(&err);
			return -EINPROGRESS;
		}
	} else {
		double t1 = util_mono_now();
		if ((r = kexec_load(image, initrd, cmdline, &err)) == 0) {
			double t2 = util_mono_now();
			double prep = boots_commit(st, b.id, t0);
			log_info("kexec: %s loaded in %.2f s, state and file systems synced in %.2f s (%.2f s since the decision)", image,
				 t2 - t1, util_mono_now() - t2, prep);
			r = kexec_exec(&err);
		}
	}
	/* still here: the switch failed before leaving this boot */
	snprintf(b.status, sizeof(b.status), "abandoned");
	snprintf(b.reason, sizeof(b.reason), "%.500s", err.buf ? err.buf : strerror(-r));
	store_boot_finish(st, &b);
fail_early:
	log_error("cannot switch to variant %s: %s", var->name, err.buf ? err.buf : strerror(-r));
	snprintf(msg, sizeof(msg), "cannot switch to variant %s: %.400s", var->name, err.buf ? err.buf : strerror(-r));
	store_job_set_status(st, job_id, "failed", msg);
	sb_free(&err);
	return r < 0 ? r : -EIO;
}

/* Checks for a job that boots kernels, before any run: where the state
 * lives, and that this machine can switch. */
static void boots_preflight(const struct store *st, const struct job *j, struct diags *d)
{
	char why[512];
	if (db_survives_reboot(st, why, sizeof(why)) < 0)
		diags_add(d, j->file, 0, "%s", why);
	if (j->switch_mode == JOB_SWITCH_KEXEC && kexec_supported(why, sizeof(why)) < 0)
		diags_add(d, j->file, 0, "%s: set switch = reboot in [job] to switch with a one-shot boot entry instead", why);
}

void exec_refuse_boots(const struct job *j, struct diags *d)
{
	for (size_t i = 0; i < j->n_variants; i++)
		if (strcmp(j->variants[i].kernel, "running") != 0) {
			diags_add(d, j->file, j->variants[i].line,
				  "variant %s boots a kernel of its own, so the job goes on across reboots: run it under kabd, which resumes it after each boot (systemctl start kabd; kab submit JOB); kab build JOB builds the kernels alone",
				  j->variants[i].name);
			return;
		}
}

/* Builds (or reuses) the kernels of a job's variants; their ids go in builds. */
static int exec_builds(struct store *st, const struct job *j, int64_t job_id, int64_t *builds)
{
	struct build_progress bp = { .st = st, .job_id = job_id };
	struct kbuild_opts o = { .progress = on_build_stage, .progress_ctx = &bp, .variant_builds = builds };
	struct strbuf err = { 0 };
	if (job_has_builds(j))
		store_job_set_status(st, job_id, "running", "building kernels");
	/* a build takes many minutes: a stop or a cancel ends it (the
	 * compilers get SIGTERM) instead of waiting for it */
	krun_set_cancel(check_interrupted);
	int r = kbuild_job(st, j, &o, &err);
	krun_set_cancel(NULL);
	if (r < 0 && interrupted) {
		log_info("kernel build stopped: %s", err.buf ? err.buf : strerror(-r));
		r = -EINTR;
	} else if (r < 0) {
		job_failed_with(st, job_id, "kernel build failed: ", &err, r);
	}
	sb_free(&err);
	return r;
}

int exec_job(struct store *st, const struct job *j, int64_t job_id)
{
	char boot_id[64];
	prov_boot_id(boot_id, sizeof(boot_id));
	sigset_t old;
	signals_block(&old);
	interrupted = false;
	stop_why[0] = 0;
	struct job_swap_state sw = { .zram_id = -1 };
	struct store_step *steps = NULL;
	size_t n = 0;
	int r;
	bool boots = job_boots_kernels(j), swap_up = false;
	struct boots bc = { .current = -1 };
	int64_t *builds = NULL;
	struct jobdir jd = JOBDIR_INIT;
	struct cond_job cj = { 0 };

	struct diags d = { 0 };
	if (boots) {
		boots_preflight(st, j, &d);
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
		if ((r = boots_start(st, j, job_id, boot_id, builds, &bc)) < 0) {
			store_job_set_status(st, job_id, "failed", "the job's builds or boots could not be read from the database");
			goto out;
		}
	}
	preflight_limits(j, &d);
	knob_preflight(st, job_id, boot_id, j->variants, j->n_variants, j->file, &d);
	struct job_variant swap_v = swap_knobs_variant(j);
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
		job_failed_with(st, job_id, "", &derr, r);
		sb_free(&derr);
		goto out;
	}
	store_job_set_status(st, job_id, "running", NULL);
	if ((r = workloads_prepare(j, job_id, &jd)) < 0) {
		r = failed_or_cancelled(st, job_id, r, "a workload could not be prepared; see the log");
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
		if (check_interrupted()) {
			r = -EINTR;
			break;
		}
		if (boots && steps[i].boot != bc.current) {
			r = boots_switch(st, j, job_id, boot_id, &bc, &steps[i], &sw);
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
				while (!check_interrupted())
					signal_wait(1.0);
				r = -EINTR;
				rebooting = true;
				break;
			}
			goto out; /* the switch could not be made; the job is failed */
		}
		if (!swap_up) {
			if ((r = swap_setup(st, j, job_id, boot_id, &jd, &sw)) < 0) {
				r = failed_or_cancelled(st, job_id, r, "swap could not be set up");
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
		r = run_step(st, j, job_id, &jd, &steps[i], boot_id);
		ran++;
		if (r == -EINTR || interrupted) {
			r = -EINTR;
			break;
		}
		if (r < 0) {
			store_job_set_status(st, job_id, "failed", "a run could not be set up; see the log");
			workloads_finish(j, job_id, &jd);
			goto out;
		}
		if (j->adaptive.on)
			adaptive_after_step(st, j, job_id, steps, n, i);
	}
	if (r == -EINTR && rebooting) {
		store_job_set_status(st, job_id, "interrupted", "rebooting into the next boot's kernel; kabd resumes the job after the boot");
	} else if (r == -EINTR) {
		set_cancelled(st, job_id);
	} else {
		adaptive_finish(st, j, job_id);
		store_job_set_status(st, job_id, "done", boot_failed ? "finished without a variant whose kernel did not come up (boot-failed)" : NULL);
		workloads_finish(j, job_id, &jd);
	}
out:
	cond_job_end(st, job_id, &cj);
	swap_teardown(st, &sw);
	cg_remove_parent();
	jobdir_close(st, job_id, &jd);
	free(steps);
	free(builds);
	boots_free(&bc, j->n_variants);
	check_interrupted();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}
