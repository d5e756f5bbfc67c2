/* The counter sampler. The files stay open and are re-read with pread into
 * one reusable buffer; one thread wakes on absolute CLOCK_MONOTONIC
 * deadlines (start + k * interval). The set of counters is fixed by the
 * first sample, taken by the caller before the thread starts; the last one
 * is taken by the caller after the thread is joined. Nothing is allocated
 * in the steady state except amortized growth of the series buffers. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "harness/sampler/sampler.h"
#include "db/counter.h"
#include "db/series.h"
#include "harness/base/util.h"

#define NSEC_PER_SEC 1000000000ULL
#define CPU_NONE UINT32_MAX   /* a counter that is not one CPU's column */
#define READ_BUF_INITIAL (64 * 1024)

struct counter {
	char *name;          /* full metric name, "vmstat.pgfault" */
	const char *key;     /* the raw key inside name, not NUL-terminated for per-CPU */
	size_t key_len;
	unsigned cpu;        /* CPU_NONE, or the CPU of a per-CPU interrupt column */
	bool gauge;
	bool series_only;    /* per-CPU columns: no delta reported */
	uint64_t first, last, cur;
	uint64_t events;     /* sum of increases, resets counted from zero */
	struct series_buf series;
};

enum source_kind { SOURCE_KV, SOURCE_INTERRUPTS, SOURCE_PRESSURE };

struct source {
	char *path;
	int fd;
	enum source_kind kind;
	const char *prefix;  /* "vmstat." */
	bool oom_control;    /* v1 memory.oom_control: only oom_kill, under_oom */
	size_t begin, n;     /* its counters in sampler.ctr */
	size_t next;         /* fast path: where the next key should be */
	bool optional;       /* PSI: may be missing or disabled */
	bool disabled;       /* optional and unreadable at the first sample */
	bool failing;        /* last read or parse failed; values kept */
};

struct sampler {
	struct sampler_opts opts;
	uint64_t interval_ns;
	struct source src[6];
	size_t n_src;
	struct counter *ctr;
	size_t n_ctr, cap_ctr;
	bool collecting;     /* first sample: keys become counters */
	int collect_err;
	char *buf;
	size_t buf_cap;
	bool series;         /* still recording series (off after ENOMEM) */
	struct series_buf times;
	uint64_t t0_ns, last_t_ns;
	uint64_t *late_ns;
	size_t n_late, cap_late;
	size_t samples, missed, read_errors;
	uint64_t sync_cpu_ns, thread_cpu_ns;
	double late_p99_s, late_max_s;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	bool sync_init;
	bool stop_requested;
	bool thread_started, stopped;
	pthread_t thread;
};

struct parse_ctx {
	struct sampler *s;
	struct source *src;
};

static uint64_t clock_ns(clockid_t id) {
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static struct timespec ns_to_timespec(uint64_t ns) {
	return (struct timespec){ .tv_sec = (time_t)(ns / NSEC_PER_SEC), .tv_nsec = (long)(ns % NSEC_PER_SEC) };
}

/* ---- counters ---- */

static bool counter_is(const struct counter *c, const char *key, size_t key_len, unsigned cpu) {
	return c->cpu == cpu && c->key_len == key_len && memcmp(c->key, key, key_len) == 0;
}

static int counter_add(struct sampler *s, struct source *src, const char *key, size_t key_len,
		       unsigned cpu, uint64_t value) {
	size_t plen = strlen(src->prefix);
	char suffix[24] = "";
	struct counter *c;
	char *name;

	for (size_t i = src->begin; i < s->n_ctr; i++)
		if (counter_is(&s->ctr[i], key, key_len, cpu))
			return 0;  /* a repeated key: the first one counts */
	if (util_grow(s->ctr, s->cap_ctr, s->n_ctr + 1, 256) < 0)
		return -ENOMEM;
	if (cpu != CPU_NONE)
		snprintf(suffix, sizeof(suffix), ".cpu%u", cpu);
	name = malloc(plen + key_len + strlen(suffix) + 1);
	if (!name)
		return -ENOMEM;
	memcpy(name, src->prefix, plen);
	memcpy(name + plen, key, key_len);
	memcpy(name + plen + key_len, suffix, strlen(suffix) + 1);

	c = &s->ctr[s->n_ctr++];
	*c = (struct counter){
		.name = name,
		.key = name + plen,
		.key_len = key_len,
		.cpu = cpu,
		.gauge = counter_is_gauge(name),
		.series_only = cpu != CPU_NONE,
		.cur = value,
	};
	src->n++;
	return 0;
}

static void on_value(struct parse_ctx *pc, const char *key, size_t key_len, unsigned cpu, uint64_t value) {
	struct sampler *s = pc->s;
	struct source *src = pc->src;
	struct counter *c;

	if (src->oom_control &&
	    !(key_len == 8 && memcmp(key, "oom_kill", 8) == 0) &&
	    !(key_len == 9 && memcmp(key, "under_oom", 9) == 0))
		return;
	if (s->collecting) {
		int r = counter_add(s, src, key, key_len, cpu, value);
		if (r < 0 && s->collect_err == 0)
			s->collect_err = r;
		return;
	}
	/* The files list their keys in a stable order: expect the key that
	 * followed the previous one, and search only when it is not there. */
	c = s->ctr + src->begin;
	if (src->next < src->n && counter_is(&c[src->next], key, key_len, cpu)) {
		c[src->next++].cur = value;
		return;
	}
	for (size_t i = 0; i < src->n; i++) {
		if (counter_is(&c[i], key, key_len, cpu)) {
			c[i].cur = value;
			src->next = i + 1;
			return;
		}
	}
	/* a key that appeared after the first sample: ignored */
}

static void on_kv(void *ctx, const char *key, size_t key_len, uint64_t value) {
	on_value(ctx, key, key_len, CPU_NONE, value);
}

static void on_cpu(void *ctx, const char *key, size_t key_len, unsigned cpu, uint64_t value) {
	on_value(ctx, key, key_len, cpu, value);
}

/* ---- reading ---- */

/* The whole file into s->buf. A short read that ends a line is the end of
 * a seq_file; anything else is read on until pread returns 0. */
static int source_read(struct sampler *s, struct source *src, size_t *ret_len) {
	size_t len = 0;

	for (;;) {
		ssize_t n;

		if (len == s->buf_cap) {
			char *nb = realloc(s->buf, s->buf_cap * 2);
			if (!nb)
				return -ENOMEM;
			s->buf = nb;
			s->buf_cap *= 2;
		}
		n = pread(src->fd, s->buf + len, s->buf_cap - len, (off_t)len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len < s->buf_cap && s->buf[len - 1] == '\n')
			break;
	}
	*ret_len = len;
	return 0;
}

static int source_sample(struct sampler *s, struct source *src) {
	struct parse_ctx pc = { .s = s, .src = src };
	size_t len = 0;
	int r;

	r = source_read(s, src, &len);
	if (r < 0)
		return r;
	src->next = 0;
	switch (src->kind) {
	case SOURCE_KV:
		r = procparse_kv(s->buf, len, on_kv, &pc);
		break;
	case SOURCE_INTERRUPTS:
		r = procparse_interrupts(s->buf, len, on_kv, s->opts.per_cpu && s->opts.series ? on_cpu : NULL, &pc);
		break;
	case SOURCE_PRESSURE:
		r = procparse_pressure(s->buf, len, on_kv, &pc);
		break;
	}
	return r < 0 ? r : 0;
}

static void series_disable(struct sampler *s) {
	log_error("sampler: out of memory for the time series; keeping deltas only");
	s->series = false;
	for (size_t i = 0; i < s->n_ctr; i++)
		series_buf_free(&s->ctr[i].series);
	series_buf_free(&s->times);
}

/* Folds the values just parsed into deltas and series. Counters whose file
 * failed this time still hold their last value, so they add nothing. */
static void sample_commit(struct sampler *s, uint64_t t_ns) {
	bool first = s->samples == 0;

	for (size_t i = 0; i < s->n_ctr; i++) {
		struct counter *c = &s->ctr[i];
		uint64_t prev = first ? 0 : c->last;

		if (first) {
			c->first = c->cur;
		} else if (!c->gauge) {
			/* a counter that went down was reset: count from zero */
			c->events += c->cur >= c->last ? c->cur - c->last : c->cur;
		}
		c->last = c->cur;
		if (s->series && series_append(&c->series, prev, c->cur) < 0)
			series_disable(s);
	}
	if (s->series && series_append(&s->times, first ? 0 : s->last_t_ns, t_ns) < 0)
		series_disable(s);
	s->last_t_ns = t_ns;
	s->samples++;
}

static void take_sample(struct sampler *s, uint64_t now_ns) {
	for (size_t i = 0; i < s->n_src; i++) {
		struct source *src = &s->src[i];
		int r;

		if (src->disabled)
			continue;
		r = source_sample(s, src);
		if (r < 0) {
			s->read_errors++;
			if (!src->failing)
				log_warn("sampler: %s: %s; keeping its last values", src->path,
					 r == -EINVAL ? "malformed contents" : strerror(-r));
			src->failing = true;
		} else if (src->failing) {
			log_info("sampler: %s: readable again", src->path);
			src->failing = false;
		}
	}
	sample_commit(s, now_ns - s->t0_ns);
}

/* The first sample: every key seen becomes a counter. Any failure here is
 * an error, named once. */
static int first_sample(struct sampler *s) {
	s->collecting = true;
	for (size_t i = 0; i < s->n_src; i++) {
		struct source *src = &s->src[i];
		int r;

		src->begin = s->n_ctr;
		r = source_sample(s, src);
		if (r == 0)
			r = s->collect_err;
		if (r < 0 && r != -ENOMEM && src->optional) {
			/* e.g. psi=0 on the kernel command line: EOPNOTSUPP on read */
			log_info("sampler: %s: %s; not sampled", src->path, strerror(-r));
			src->disabled = true;
			while (s->n_ctr > src->begin)
				free(s->ctr[--s->n_ctr].name);
			src->n = 0;
			continue;
		}
		if (r < 0) {
			log_error("sampler: %s: %s", src->path, r == -EINVAL ? "malformed contents" : strerror(-r));
			s->collecting = false;
			return r;
		}
	}
	s->collecting = false;
	sample_commit(s, 0);
	return 0;
}

/* ---- the thread ---- */

static void note_lateness(struct sampler *s, uint64_t late_ns) {
	if (util_grow(s->late_ns, s->cap_late, s->n_late + 1, 1024) < 0)
		return; /* the statistics lose a point, the sample is kept */
	s->late_ns[s->n_late++] = late_ns;
}

/* Wake on time even when the workload keeps every CPU busy (a 2-CPU VM
 * under two CPU hogs: p99 lateness 12 ms as a normal thread, 0.1 ms at the
 * lowest real-time priority). The thread needs well under 1% of a CPU.
 * Without the privilege, a better nice value; else it runs as it is. */
static void raise_priority(void) {
	struct sched_param sp = { .sched_priority = 1 };

	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0)
		return;
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), -10);
}

static void *sampler_thread(void *arg) {
	struct sampler *s = arg;
	uint64_t k = 1;

	if (!s->opts.normal_priority)
		raise_priority();

	for (;;) {
		uint64_t deadline = s->t0_ns + k * s->interval_ns;
		struct timespec ts = ns_to_timespec(deadline);
		uint64_t now, late;
		bool stop;

		pthread_mutex_lock(&s->mu);
		while (!s->stop_requested)
			if (pthread_cond_timedwait(&s->cond, &s->mu, &ts) == ETIMEDOUT)
				break;
		stop = s->stop_requested;
		pthread_mutex_unlock(&s->mu);
		if (stop)
			break;

		now = clock_ns(CLOCK_MONOTONIC);
		late = now > deadline ? now - deadline : 0;
		if (late >= s->interval_ns) {
			uint64_t skipped = late / s->interval_ns;
			s->missed += skipped;
			k += skipped;
		}
		note_lateness(s, late);
		take_sample(s, now);
		k++;
	}
	s->thread_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

/* ---- set-up ---- */

static int source_add(struct sampler *s, const char *dir, const char *file, enum source_kind kind,
		      const char *prefix, bool optional) {
	struct source *src = &s->src[s->n_src];
	char *path;
	int fd;

	if (dir) {
		if (asprintf(&path, "%s/%s", dir, file) < 0)
			return -ENOMEM;
	} else {
		path = strdup(file);
		if (!path)
			return -ENOMEM;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int r = -errno;
		if (optional && (r == -ENOENT || r == -EOPNOTSUPP)) {
			free(path);
			return 0;
		}
		log_error("sampler: cannot open %s: %s", path, strerror(-r));
		free(path);
		return r;
	}
	*src = (struct source){ .path = path, .fd = fd, .kind = kind, .prefix = prefix, .optional = optional };
	s->n_src++;
	return 0;
}

static int detect_cgroup_version(const char *dir, int *ret) {
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0) {
		int r = -errno;
		log_error("sampler: cannot open memcg %s: %s", dir, strerror(-r));
		return r;
	}
	if (faccessat(dfd, "memory.events", F_OK, 0) == 0)
		*ret = 2;
	else if (faccessat(dfd, "memory.oom_control", F_OK, 0) == 0)
		*ret = 1;
	else {
		log_error("sampler: %s is not a memory cgroup (no memory.events or memory.oom_control)", dir);
		return -ENOENT;
	}
	return 0;
}

static int sources_open(struct sampler *s) {
	const char *dir = s->opts.memcg_dir;
	int r;

	r = source_add(s, NULL, "/proc/vmstat", SOURCE_KV, "vmstat.", false);
	if (r >= 0)
		r = source_add(s, NULL, "/proc/interrupts", SOURCE_INTERRUPTS, "interrupts.", false);
	if (r >= 0)
		r = source_add(s, NULL, "/proc/pressure/memory", SOURCE_PRESSURE, "psi.memory.", true);
	if (r < 0 || !dir)
		return r;
	r = source_add(s, dir, "memory.stat", SOURCE_KV, "memcg.", false);
	if (r < 0)
		return r;
	if (s->opts.cgroup_version == 2) {
		r = source_add(s, dir, "memory.events", SOURCE_KV, "memcg_events.", false);
		if (r >= 0)
			r = source_add(s, dir, "memory.pressure", SOURCE_PRESSURE, "memcg_psi.", true);
	} else {
		r = source_add(s, dir, "memory.oom_control", SOURCE_KV, "memcg_events.", false);
		if (r >= 0)
			s->src[s->n_src - 1].oom_control = true;
	}
	return r;
}

int sampler_start(const struct sampler_opts *o, struct sampler **ret) {
	struct sampler *s;
	pthread_condattr_t ca;
	sigset_t all, old;
	uint64_t cpu0;
	int r;

	if (!o || !ret || !isfinite(o->interval_s) || o->interval_s <= 0 || o->interval_s > 86400)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->opts = *o;
	s->opts.memcg_dir = NULL;
	s->interval_ns = (uint64_t)llround(o->interval_s * 1e9);
	if (s->interval_ns == 0)
		s->interval_ns = 1;
	s->series = o->series;

	if (o->memcg_dir) {
		s->opts.memcg_dir = strdup(o->memcg_dir);
		if (!s->opts.memcg_dir) {
			r = -ENOMEM;
			goto fail;
		}
		if (o->cgroup_version != 1 && o->cgroup_version != 2) {
			if (o->cgroup_version != 0) {
				r = -EINVAL;
				goto fail;
			}
			r = detect_cgroup_version(o->memcg_dir, &s->opts.cgroup_version);
			if (r < 0)
				goto fail;
		}
	}

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&s->mu, NULL);
	s->sync_init = true;

	r = sources_open(s);
	if (r < 0)
		goto fail;
	s->buf_cap = READ_BUF_INITIAL;
	s->buf = malloc(s->buf_cap);
	if (!s->buf) {
		r = -ENOMEM;
		goto fail;
	}

	cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	s->t0_ns = clock_ns(CLOCK_MONOTONIC);
	r = first_sample(s);
	s->sync_cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	if (r < 0)
		goto fail;

	/* signals belong to the caller's threads, not to the sampler */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&s->thread, NULL, sampler_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		log_error("sampler: cannot start thread: %s", strerror(-r));
		goto fail;
	}
	s->thread_started = true;
	*ret = s;
	return 0;
fail:
	sampler_free(s);
	return r;
}

static int cmp_u64(const void *a, const void *b) {
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void thread_join(struct sampler *s) {
	if (!s->thread_started)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop_requested = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thread, NULL);
	s->thread_started = false;
}

int sampler_stop(struct sampler *s) {
	uint64_t cpu0;

	if (!s)
		return -EINVAL;
	if (s->stopped)
		return 0;
	thread_join(s);

	cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	take_sample(s, clock_ns(CLOCK_MONOTONIC));
	s->sync_cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;

	if (s->n_late > 0) {
		/* nearest rank */
		size_t rank = (size_t)ceil(0.99 * (double)s->n_late);
		qsort(s->late_ns, s->n_late, sizeof(*s->late_ns), cmp_u64);
		s->late_p99_s = (double)s->late_ns[rank - 1] / 1e9;
		s->late_max_s = (double)s->late_ns[s->n_late - 1] / 1e9;
	}
	s->stopped = true;
	return 0;
}

void sampler_free(struct sampler *s) {
	if (!s)
		return;
	thread_join(s);
	for (size_t i = 0; i < s->n_src; i++) {
		if (s->src[i].fd >= 0)
			close(s->src[i].fd);
		free(s->src[i].path);
	}
	for (size_t i = 0; i < s->n_ctr; i++) {
		free(s->ctr[i].name);
		series_buf_free(&s->ctr[i].series);
	}
	free(s->ctr);
	series_buf_free(&s->times);
	free(s->late_ns);
	free(s->buf);
	free((char *)s->opts.memcg_dir);
	if (s->sync_init) {
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->mu);
	}
	free(s);
}

/* ---- results ---- */

void sampler_foreach_delta(const struct sampler *s, sampler_delta_fn fn, void *ctx) {
	if (!s || !s->stopped)
		return;
	for (size_t i = 0; i < s->n_ctr; i++) {
		const struct counter *c = &s->ctr[i];
		double delta;

		if (c->series_only)
			continue;
		delta = c->gauge ? (double)(int64_t)(c->last - c->first) : (double)c->events;
		fn(ctx, c->name, counter_unit(c->name), delta);
	}
}

void sampler_foreach_series(const struct sampler *s, sampler_series_fn fn, void *ctx) {
	if (!s || !s->stopped || !s->series)
		return;
	for (size_t i = 0; i < s->n_ctr; i++)
		fn(ctx, s->ctr[i].name, s->ctr[i].series.buf, s->ctr[i].series.len, s->samples);
}

int sampler_times(const struct sampler *s, const uint8_t **ret_blob, size_t *ret_len) {
	if (!s || !s->stopped)
		return -EINVAL;
	if (!s->series)
		return -ENODATA;
	*ret_blob = s->times.buf;
	*ret_len = s->times.len;
	return 0;
}

void sampler_get_stats(const struct sampler *s, struct sampler_stats *ret) {
	*ret = (struct sampler_stats){
		.samples = s->samples,
		.missed = s->missed,
		.lateness_p99_s = s->late_p99_s,
		.lateness_max_s = s->late_max_s,
		.cpu_s = (double)(s->thread_cpu_ns + s->sync_cpu_ns) / 1e9,
		.read_errors = s->read_errors,
	};
}
