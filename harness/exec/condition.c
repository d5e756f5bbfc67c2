/* Conditioning: a quiet machine for each run, on request; see condition.h. */
#include "harness/exec/condition.h"
#include "harness/job/job.h"
#include "harness/exec/knobs.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <errno.h>
#include <glob.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define INTEL_NO_TURBO "/sys/devices/system/cpu/intel_pstate/no_turbo"
#define CPUFREQ_BOOST "/sys/devices/system/cpu/cpufreq/boost"
/* every CPU's governor: GOVERNOR_DIR "<N>" GOVERNOR_FILE */
#define GOVERNOR_DIR "/sys/devices/system/cpu/cpu"
#define GOVERNOR_FILE "/cpufreq/scaling_governor"

int cond_parse_stat(const char *text, struct cond_cpu_ticks *ret)
{
	if (strncmp(text, "cpu ", 4) != 0)
		return -EINVAL;
	const char *p = text + 4;
	uint64_t v[8] = { 0 };
	size_t n = 0;
	while (*p && *p != '\n') {
		while (*p == ' ')
			p++;
		if (*p == '\n' || !*p)
			break;
		size_t w = strspn(p, "0123456789");
		if (w == 0 || w > 20 || (p[w] != ' ' && p[w] != '\n' && p[w]))
			return -EINVAL;
		char num[24];
		memcpy(num, p, w);
		num[w] = 0;
		uint64_t x;
		if (util_parse_u64(num, &x) < 0)
			return -EINVAL;
		if (n < ARRAY_SIZE(v))
			v[n] = x;
		n++;
		p += w;
	}
	if (n < 4) /* user nice system idle: every kernel since 2.6 has them */
		return -EINVAL;
	/* user nice system idle iowait irq softirq steal; guest is in user */
	uint64_t idle = v[3] + v[4];
	uint64_t busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	ret->busy = busy;
	ret->total = busy + idle;
	return 0;
}

int cond_read_stat(const char *path, struct cond_cpu_ticks *ret)
{
	_cleanup_free_ char *text = NULL;
	size_t n;
	int r = util_read_file(path, &text, &n);
	if (r < 0)
		return r;
	return cond_parse_stat(text, ret);
}

double cond_busy_pct(const struct cond_cpu_ticks *a, const struct cond_cpu_ticks *b)
{
	if (b->total <= a->total || b->busy < a->busy)
		return -1;
	uint64_t dt = b->total - a->total, db = b->busy - a->busy;
	if (db > dt)
		return -1;
	return 100.0 * (double)db / (double)dt;
}

/* Sleeps s seconds in short slices, asking stopped() between them. */
static bool nap(double s, bool (*stopped)(void))
{
	double end = util_mono_now() + s;
	for (double now; (now = util_mono_now()) < end;) {
		if (stopped && stopped())
			return false;
		double left = fmin(end - now, 0.1);
		struct timespec ts = { 0, (long)(left * 1e9) };
		nanosleep(&ts, NULL);
	}
	return !(stopped && stopped());
}

int cond_wait_idle(const char *stat_path, double threshold_pct, double max_s, double window_s, bool (*stopped)(void),
		   double *ret_busy, double *ret_waited)
{
	double t0 = util_mono_now(), busy = -1;
	struct cond_cpu_ticks a, b;
	int r = cond_read_stat(stat_path, &a);
	if (r < 0)
		return r;
	int idle = 0;
	for (;;) {
		if (!nap(window_s, stopped))
			return -EINTR;
		if ((r = cond_read_stat(stat_path, &b)) < 0)
			return r;
		double pct = cond_busy_pct(&a, &b);
		if (pct >= 0)
			busy = pct;
		a = b;
		if (pct >= 0 && pct < threshold_pct) {
			idle = 1;
			break;
		}
		if (util_mono_now() - t0 + window_s > max_s)
			break;
	}
	*ret_busy = busy;
	*ret_waited = util_mono_now() - t0;
	return idle;
}

static int write_or_say(const char *path, const char *value, const char *key, struct strbuf *err)
{
	int r = util_write_file(path, value);
	if (r == -EACCES || r == -EPERM)
		sb_printf(err, "%s: cannot write %s to %s: %s: run kab as root (or through kabd)", key, value, path, strerror(-r));
	else if (r < 0)
		sb_printf(err, "%s: cannot write %s to %s: %s", key, value, path, strerror(-r));
	return r;
}

int cond_drop_caches(const char *key, struct strbuf *err)
{
	sync();
	return write_or_say("/proc/sys/vm/drop_caches", "3", key, err);
}

int cond_before_run(const struct job_condition *c, bool (*stopped)(void), char *note, size_t note_len, struct strbuf *err)
{
	struct strbuf sb = { 0 };
	int r = 0;
	if (c->drop_caches) {
		if ((r = cond_drop_caches("drop_caches = yes", err)) < 0)
			goto out;
		sb_printf(&sb, "drop_caches=done\n");
	}
	if (c->compact) {
		if ((r = write_or_say("/proc/sys/vm/compact_memory", "1", "compact = yes", err)) < 0)
			goto out;
		sb_printf(&sb, "compact=done\n");
	}
	if (c->wait_idle_pct > 0) {
		double busy = -1, waited = 0;
		r = cond_wait_idle("/proc/stat", c->wait_idle_pct, c->wait_idle_max_s, 1.0, stopped, &busy, &waited);
		if (r == -EINTR)
			goto out;
		if (r < 0) {
			sb_printf(err, "wait_idle: cannot read /proc/stat: %s", strerror(-r));
			goto out;
		}
		char thr[32];
		snprintf(thr, sizeof(thr), "%g%%", c->wait_idle_pct);
		if (r == 1) {
			sb_printf(&sb, "idle=yes busy=%.1f%% below=%s waited=%.1fs\n", busy, thr, waited);
		} else {
			sb_printf(&sb, "idle=no busy=%.1f%% below=%s waited=%.1fs\n", busy, thr, waited);
			log_warn("  the machine was not idle within wait_idle_max (last 1 s %.1f%% busy, wanted below %s); the run goes on, recorded as not idle",
				 busy, thr);
		}
		r = 0;
	}
	if (c->cpus)
		sb_printf(&sb, "cpus=%s\n", c->cpus);
	if (c->sampler_cpu >= 0)
		sb_printf(&sb, "sampler_cpu=%d\n", c->sampler_cpu);
out:
	if (r >= 0)
		snprintf(note, note_len, "%s", sb.buf ? sb.buf : "");
	sb_free(&sb);
	return r;
}

static int add_knob(struct job_variant *v, const char *name, const char *path, const char *value, int line)
{
	struct job_knob *nk = realloc(v->knobs, (v->n_knobs + 1) * sizeof(*nk));
	if (!nk)
		return -ENOMEM;
	v->knobs = nk;
	struct job_knob *k = &nk[v->n_knobs];
	*k = (struct job_knob){ .kind = JOB_KNOB_SYSFS, .name = strdup(name), .path = strdup(path), .value = strdup(value),
				.line = line };
	v->n_knobs++;
	return k->name && k->path && k->value ? 0 : -ENOMEM;
}

void cond_knobs_free(struct job_variant *v)
{
	for (size_t i = 0; i < v->n_knobs; i++) {
		free(v->knobs[i].name);
		free(v->knobs[i].path);
		free(v->knobs[i].value);
	}
	free(v->knobs);
	v->knobs = NULL;
	v->n_knobs = 0;
}

int cond_knobs(const struct job_condition *c, struct job_variant *ret, struct strbuf *err)
{
	struct job_variant v = { .name = (char *)"[job] cpufreq", .label = (char *)"[job]" };
	int r = 0;
	if (c->cpufreq == JOB_CPUFREQ_PERFORMANCE) {
		glob_t g;
		if (glob(GOVERNOR_DIR "[0-9]*" GOVERNOR_FILE, 0, NULL, &g) != 0) {
			sb_puts(err, "cpufreq = performance: this machine has no cpufreq (no /sys/devices/system/cpu/cpu0/cpufreq): remove the key, or run on bare metal");
			return -ENOENT;
		}
		for (size_t i = 0; i < g.gl_pathc && r >= 0; i++)
			r = add_knob(&v, "cpufreq", g.gl_pathv[i], "performance", c->cpufreq_line);
		globfree(&g);
	}
	if (r >= 0 && c->turbo != JOB_KEEP) {
		bool intel = access(INTEL_NO_TURBO, F_OK) == 0;
		if (!intel && access(CPUFREQ_BOOST, F_OK) != 0) {
			cond_knobs_free(&v);
			sb_printf(err, "turbo = %s: this machine has no turbo switch (no %s or %s): remove the key, or run on bare metal",
				  c->turbo == JOB_OFF ? "off" : "on", INTEL_NO_TURBO, CPUFREQ_BOOST);
			return -ENOENT;
		}
		/* no_turbo says the opposite of boost */
		const char *value = (c->turbo == JOB_OFF) == intel ? "1" : "0";
		r = add_knob(&v, "turbo", intel ? INTEL_NO_TURBO : CPUFREQ_BOOST, value, c->turbo_line);
	}
	if (r < 0) {
		cond_knobs_free(&v);
		sb_puts(err, "out of memory");
		return r;
	}
	*ret = v;
	return 0;
}

bool cond_knob_file(const char *path)
{
	if (strcmp(path, INTEL_NO_TURBO) == 0 || strcmp(path, CPUFREQ_BOOST) == 0)
		return true;
	if (strncmp(path, GOVERNOR_DIR, strlen(GOVERNOR_DIR)) != 0)
		return false;
	const char *n = path + strlen(GOVERNOR_DIR);
	size_t digits = strspn(n, "0123456789");
	return digits > 0 && digits <= 10 && strcmp(n + digits, GOVERNOR_FILE) == 0;
}

int cond_job_begin(struct store *st, const struct job *j, int64_t job_id, const char *boot_id, struct cond_job *cj,
		   struct diags *d)
{
	memset(cj, 0, sizeof(*cj));
	const struct job_condition *c = &j->cond;
	if (c->cpufreq == JOB_CPUFREQ_KEEP && c->turbo == JOB_KEEP)
		return 0;
	struct strbuf err = { 0 };
	int r = cond_knobs(c, &cj->v, &err);
	if (r < 0)
		diags_add(d, j->file, c->cpufreq == JOB_CPUFREQ_PERFORMANCE ? c->cpufreq_line : c->turbo_line, "%s",
			  err.len ? err.buf : "");
	sb_free(&err);
	if (r < 0)
		return r;
	if ((r = knob_preflight(st, job_id, boot_id, &cj->v, 1, j->file, d)) < 0)
		return r;
	char in_force[4096];
	r = knob_apply(st, job_id, boot_id, &cj->v, &cj->applied, &cj->n_applied, in_force, sizeof(in_force), &err);
	if (r < 0)
		diags_add(d, j->file, c->cpufreq_line ? c->cpufreq_line : c->turbo_line, "[job] cpufreq: %s",
			  err.len ? err.buf : "");
	sb_free(&err);
	if (r < 0)
		return r;
	log_info("conditioning for the job: %zu cpufreq and turbo setting(s) applied, journaled for restore", cj->n_applied);
	return 0;
}

int cond_job_end(struct store *st, struct cond_job *cj)
{
	/* knob_restore logs each it could not; the journal keeps them for the next start */
	int r = cj->n_applied ? knob_restore(st, cj->applied, cj->n_applied) : 0;
	free(cj->applied);
	cj->applied = NULL;
	cj->n_applied = 0;
	cond_knobs_free(&cj->v);
	return r < 0 ? r : 0;
}

static int set_mask(const cpu_set_t *m, const char *what, struct strbuf *err)
{
	int r = -pthread_setaffinity_np(pthread_self(), sizeof(*m), m);
	if (r < 0)
		sb_printf(err, "cannot pin %s: %s", what, strerror(-r));
	return r;
}

/* cpus as a mask; false when the list does not parse (kab check said so). */
static bool cpus_mask(const char *cpus, cpu_set_t *ret)
{
	bool want[JOB_CPUS_MAX] = { 0 };
	const char *why;
	if (job_parse_cpus(cpus, want, &why) < 0)
		return false;
	CPU_ZERO(ret);
	for (int i = 0; i < JOB_CPUS_MAX; i++)
		if (want[i])
			CPU_SET(i, ret);
	return true;
}

int cond_pin_workload(const struct job_condition *c, struct cond_pin *p, struct strbuf *err)
{
	p->saved = false;
	if (!c->cpus && c->sampler_cpu < 0)
		return 0;
	if (pthread_getaffinity_np(pthread_self(), sizeof(p->mask), &p->mask) != 0) {
		sb_printf(err, "cannot read the CPU affinity: %s", strerror(errno));
		return -EIO;
	}
	p->saved = true;
	if (!c->cpus)
		return 0;
	cpu_set_t m;
	if (!cpus_mask(c->cpus, &m)) {
		sb_printf(err, "bad cpus \"%s\"", c->cpus);
		return -EINVAL;
	}
	char what[256];
	snprintf(what, sizeof(what), "the workload to cpus = %s", c->cpus);
	return set_mask(&m, what, err);
}

int cond_pin_sampler(const struct job_condition *c, const struct cond_pin *p, struct strbuf *err)
{
	cpu_set_t m;
	char what[128];
	if (c->sampler_cpu >= 0) {
		CPU_ZERO(&m);
		CPU_SET(c->sampler_cpu, &m);
		snprintf(what, sizeof(what), "the sampler to sampler_cpu = %d", c->sampler_cpu);
		return set_mask(&m, what, err);
	}
	if (!c->cpus || !p->saved)
		return 0;
	/* no sampler_cpu: the sampler goes on kab's CPUs other than the workload's */
	cpu_set_t work;
	if (!cpus_mask(c->cpus, &work))
		return 0;
	CPU_AND(&work, &work, &p->mask);
	CPU_XOR(&m, &p->mask, &work);
	if (CPU_COUNT(&m) == 0) {
		sb_printf(err, "cpus = %s leaves kab no other CPU for its sampler", c->cpus);
		return -EINVAL;
	}
	snprintf(what, sizeof(what), "the sampler off cpus = %s", c->cpus);
	return set_mask(&m, what, err);
}

void cond_unpin(struct cond_pin *p)
{
	if (p->saved && pthread_setaffinity_np(pthread_self(), sizeof(p->mask), &p->mask) != 0)
		log_warn("cannot put back kab's CPU affinity: %s", strerror(errno));
	p->saved = false;
}
