/* kab sample: runs the counter sampler alone for a while and writes every
 * sample as a TSV row (raw values), then a summary on stderr. For looking
 * at a machine's counters, and for checking the sampler's own cost. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness/cli/cmd.h"
#include "harness/sampler/sampler.h"
#include "db/series.h"
#include "harness/base/util.h"

#define TOP_N 10
#define MAX_INTERVAL_S 3600.0
#define MAX_DURATION_S (7 * 86400.0)

static volatile sig_atomic_t sample_interrupted;

static void on_signal(int sig) {
	(void)sig;
	sample_interrupted = 1;
}

static void usage(FILE *f) {
	fprintf(f,
		"usage: kab sample [--interval S] [--duration S] [--out FILE] [--memcg DIR] [--per-cpu]\n"
		"\n"
		"Samples /proc/vmstat, /proc/interrupts, /proc/pressure/memory and, with\n"
		"--memcg, a memory cgroup's stat files, every S seconds for a while; writes\n"
		"one TSV row per sample (t_s, then the raw value of every counter) to FILE\n"
		"(default: standard output) and a summary to standard error.\n"
		"\n"
		"  --interval S   time between samples: 0.1, 100ms (default 0.1; up to 3600 s)\n"
		"  --duration S   how long to sample: 30, 2m (default 10)\n"
		"  --out FILE     where the TSV goes; written only when sampling succeeds\n"
		"  --memcg DIR    also sample this memory cgroup (v1 or v2, detected)\n"
		"  --per-cpu      add a column per CPU for every /proc/interrupts row\n"
		"Ctrl-C stops early; what was sampled is still written.\n");
}

struct column {
	const char *metric;
	struct series_cursor cur;
};

struct columns {
	struct column *v;
	size_t n, cap;
	int err;
};

static void add_column(void *ctx, const char *metric, const uint8_t *blob, size_t len, size_t n_samples) {
	struct columns *c = ctx;

	(void)n_samples;
	if (c->err)
		return;
	if (util_grow(c->v, c->cap, c->n + 1, 256) < 0) {
		c->err = -ENOMEM;
		return;
	}
	c->v[c->n].metric = metric;
	series_cursor_init(&c->v[c->n].cur, blob, len);
	c->n++;
}

struct delta {
	const char *metric, *unit;
	double delta;
};

struct deltas {
	struct delta *v;
	size_t n, cap;
};

static void add_delta(void *ctx, const char *metric, const char *unit, double delta) {
	struct deltas *d = ctx;

	if (util_grow(d->v, d->cap, d->n + 1, 256) < 0)
		return; /* the summary is shorter; the TSV is unaffected */
	d->v[d->n++] = (struct delta){ metric, unit, delta };
}

static int cmp_abs_delta(const void *a, const void *b) {
	double x = fabs(((const struct delta *)a)->delta), y = fabs(((const struct delta *)b)->delta);

	return x < y ? 1 : x > y ? -1 : strcmp(((const struct delta *)a)->metric, ((const struct delta *)b)->metric);
}

/* The TSV: a header, then one row per sample. */
static int write_tsv(const struct sampler *s, FILE *f) {
	struct columns cols = { 0 };
	struct series_cursor times;
	const uint8_t *tb;
	size_t tl;
	int r;

	r = sampler_times(s, &tb, &tl);
	if (r < 0)
		return r;
	sampler_foreach_series(s, add_column, &cols);
	if (cols.err) {
		free(cols.v);
		return cols.err;
	}
	fputs("t_s", f);
	for (size_t i = 0; i < cols.n; i++)
		fprintf(f, "\t%s", cols.v[i].metric);
	fputc('\n', f);

	series_cursor_init(&times, tb, tl);
	for (;;) {
		int64_t t;

		r = series_cursor_next(&times, &t);
		if (r <= 0)
			break;
		fprintf(f, "%.6f", (double)t / 1e9);
		for (size_t i = 0; i < cols.n; i++) {
			int64_t v;
			r = series_cursor_next(&cols.v[i].cur, &v);
			if (r <= 0) {
				r = -EINVAL;  /* a series shorter than the times */
				goto out;
			}
			fprintf(f, "\t%" PRIu64, (uint64_t)v);
		}
		fputc('\n', f);
	}
out:
	free(cols.v);
	return r < 0 ? r : 0;
}

static void print_summary(const struct sampler *s, double interval, double elapsed) {
	struct sampler_stats st;
	struct deltas d = { 0 };

	sampler_get_stats(s, &st);
	fprintf(stderr, "kab sample: %zu samples in %.1f s (%.0f deadlines), %zu missed, lateness p99 %.3f ms, max %.3f ms\n",
		st.samples, elapsed, floor(elapsed / interval), st.missed, st.lateness_p99_s * 1e3, st.lateness_max_s * 1e3);
	fprintf(stderr, "kab sample: sampler CPU %.4f s (%.1f us per sample)%s\n", st.cpu_s,
		st.samples ? st.cpu_s / (double)st.samples * 1e6 : 0.0, st.read_errors ? "" : ", no read errors");
	if (st.read_errors)
		fprintf(stderr, "kab sample: %zu reads failed; those counters kept their last values\n", st.read_errors);

	sampler_foreach_delta(s, add_delta, &d);
	if (d.n) {
		qsort(d.v, d.n, sizeof(*d.v), cmp_abs_delta);
		fprintf(stderr, "top counters by change:\n");
		for (size_t i = 0; i < d.n && i < TOP_N && d.v[i].delta != 0; i++)
			fprintf(stderr, "  %-40s %16.0f %s\n", d.v[i].metric, d.v[i].delta, d.v[i].unit);
	}
	free(d.v);
}

static int parse_seconds(const char *opt, const char *arg, double max, double *ret) {
	double v;

	if (util_parse_duration(arg, &v) < 0 || !isfinite(v)) {
		fprintf(stderr, "kab sample: %s \"%s\" is not a duration (try 0.1, 100ms, 30s, 2m)\n", opt, arg);
		return -EINVAL;
	}
	if (v <= 0 || v > max) {
		fprintf(stderr, "kab sample: %s %s is out of range: it must be more than 0 and at most %.0f seconds\n",
			opt, arg, max);
		return -ERANGE;
	}
	*ret = v;
	return 0;
}

static void sleep_until(double t) {
	struct timespec ts = { .tv_sec = (time_t)t, .tv_nsec = (long)((t - floor(t)) * 1e9) };

	while (!sample_interrupted && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* A new or regular file is written as a temporary file beside it and
 * renamed over it on success; anything else (/dev/null, a FIFO, a symlink)
 * is opened and written in place, *ret_tmp left NULL. */
static int open_out(const char *path, char **ret_tmp, FILE **ret_f) {
	struct stat sb;
	char *tmp;
	FILE *f;
	int fd, r;

	if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			fprintf(stderr, "kab sample: cannot write --out %s: it is a directory\n", path);
			return -EISDIR;
		}
		f = fopen(path, "we");
		if (!f) {
			r = -errno;
			fprintf(stderr, "kab sample: cannot write --out %s: %s\n", path, strerror(-r));
			return r;
		}
		*ret_tmp = NULL;
		*ret_f = f;
		return 0;
	}
	if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		fprintf(stderr, "kab sample: cannot write --out %s: %s\n", path, strerror(-r));
		free(tmp);
		return r;
	}
	(void)fchmod(fd, 0644);
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		unlink(tmp);
		free(tmp);
		return r;
	}
	*ret_tmp = tmp;
	*ret_f = f;
	return 0;
}

const struct option cmd_sample_options[] = {
	{ "interval", required_argument, NULL, 'i' },
	{ "duration", required_argument, NULL, 'd' },
	{ "out", required_argument, NULL, 'o' },
	{ "memcg", required_argument, NULL, 'm' },
	{ "per-cpu", no_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int cmd_sample(int argc, char **argv)
{
	struct sampler_opts o = { .interval_s = 0.1, .series = true };
	double duration = 10;
	const char *out = "-";
	struct sampler *s = NULL;
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	char *tmp = NULL;
	FILE *f = stdout;
	int c, r, ret = 1;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:d:o:m:ph", cmd_sample_options, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (parse_seconds("--interval", optarg, MAX_INTERVAL_S, &o.interval_s) < 0)
				return 2;
			break;
		case 'd':
			if (parse_seconds("--duration", optarg, MAX_DURATION_S, &duration) < 0)
				return 2;
			break;
		case 'o':
			if (!optarg[0]) {
				fprintf(stderr, "kab sample: --out needs a file name (or - for standard output)\n");
				return 2;
			}
			out = optarg;
			break;
		case 'm':
			o.memcg_dir = optarg;
			break;
		case 'p':
			o.per_cpu = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "kab sample: %s needs a value\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "kab sample: unknown option \"%s\"\n", argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kab sample: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return 2;
	}

	if (strcmp(out, "-") != 0 && open_out(out, &tmp, &f) < 0)
		return 2;

	sample_interrupted = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	r = sampler_start(&o, &s);
	if (r < 0) {
		/* the sampler has named the file that failed; add only what it did not */
		if (r == -ENOMEM || r == -EINVAL)
			fprintf(stderr, "kab sample: cannot start the sampler: %s\n", strerror(-r));
		goto out;
	}
	double t0 = util_mono_now();
	sleep_until(t0 + duration);
	if (sample_interrupted)
		fprintf(stderr, "kab sample: interrupted after %.1f s; writing what was sampled\n", util_mono_now() - t0);
	r = sampler_stop(s);
	double elapsed = util_mono_now() - t0;
	if (r < 0) {
		fprintf(stderr, "kab sample: stopping the sampler: %s\n", strerror(-r));
		goto out;
	}

	r = write_tsv(s, f);
	if (r < 0) {
		fprintf(stderr, "kab sample: cannot produce the rows: %s\n", strerror(-r));
		goto out;
	}
	if (fflush(f) != 0 || ferror(f)) {
		fprintf(stderr, "kab sample: writing %s: %s\n", f == stdout ? "standard output" : out, strerror(errno));
		goto out;
	}
	if (f != stdout) {
		FILE *done = f;
		f = stdout;
		if (fclose(done) != 0) {
			fprintf(stderr, "kab sample: writing %s: %s\n", out, strerror(errno));
			goto out;
		}
	}
	if (tmp) {
		if (rename(tmp, out) < 0) {
			fprintf(stderr, "kab sample: cannot write --out %s: %s\n", out, strerror(errno));
			goto out;
		}
		free(tmp);
		tmp = NULL;
	}
	print_summary(s, o.interval_s, elapsed);
	ret = 0;
out:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sampler_free(s);
	if (f != stdout)
		fclose(f);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	return ret;
}
