/* The sampler: series encoding, resets and gauges on a fake memcg whose
 * files the test rewrites between samples, a live run on the real /proc
 * files, a prompt stop, and (as root, cgroup v1) a memcg removed while it
 * is sampled. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness/sampler/sampler.h"
#include "db/series.h"
#include "t.h"

static double mono_now(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_until(double t) {
	struct timespec ts = { .tv_sec = (time_t)t, .tv_nsec = (long)((t - (double)(time_t)t) * 1e9) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* ---- encoding ---- */

static void check_round_trip(const int64_t *v, size_t n, size_t max_len) {
	uint8_t *blob = NULL;
	size_t len = 0;
	int64_t out[64];

	T_EQ_INT(series_encode(v, n, &blob, &len), 0);
	if (max_len)
		T_CHECK(len <= max_len);
	T_EQ_INT(series_decode(blob, len, out, 64), (long long)n);
	bool same = true;
	for (size_t i = 0; i < n; i++)
		same = same && out[i] == v[i];
	T_CHECK(same);

	/* the streaming cursor agrees, and ends with 0 */
	struct series_cursor c;
	int64_t x;
	series_cursor_init(&c, blob, len);
	same = true;
	for (size_t i = 0; i < n; i++)
		same = same && series_cursor_next(&c, &x) == 1 && x == v[i];
	T_CHECK(same);
	T_EQ_INT(series_cursor_next(&c, &x), 0);

	/* a shorter out array stops early */
	if (n > 2)
		T_EQ_INT(series_decode(blob, len, out, 2), 2);
	free(blob);
}

static void test_encoding(void) {
	/* a slowly rising counter: one byte per sample after the first */
	int64_t slow[50];
	for (int i = 0; i < 50; i++)
		slow[i] = 1000000 + i * 3;
	check_round_trip(slow, 50, 3 + 49);

	int64_t down[] = { 100, 90, 95, 0, 63, -64, 64, -65, 1, 0, 0, 0 };
	check_round_trip(down, sizeof(down) / sizeof(down[0]), 0);

	int64_t big[] = { INT64_MAX, INT64_MIN, 0, -1, INT64_MAX, 1, INT64_MIN, INT64_MIN + 1,
			  9223372036854771712LL, 12345678901LL, (int64_t)UINT64_MAX };
	check_round_trip(big, sizeof(big) / sizeof(big[0]), 0);

	check_round_trip(NULL, 0, 0);

	/* known bytes: 0 -> 00, -1 -> 01, 1 -> 02, 64 -> 80 01 */
	int64_t known[] = { 0, -1, 0, 64 };
	uint8_t *blob;
	size_t len;
	T_EQ_INT(series_encode(known, 4, &blob, &len), 0);
	T_EQ_INT(len, 5);
	if (len == 5) {
		static const uint8_t want[] = { 0x00, 0x01, 0x02, 0x80, 0x01 };
		T_CHECK(memcmp(blob, want, 5) == 0);
	}
	free(blob);

	/* corrupt blobs */
	int64_t out[4];
	static const uint8_t truncated[] = { 0x02, 0x80 };
	T_EQ_INT(series_decode(truncated, sizeof(truncated), out, 4), -EINVAL);
	static const uint8_t overlong[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };
	T_EQ_INT(series_decode(overlong, sizeof(overlong), out, 4), -EINVAL);
	static const uint8_t eleven[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 };
	T_EQ_INT(series_decode(eleven, sizeof(eleven), out, 4), -EINVAL);
	static const uint8_t max10[] = { 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	T_EQ_INT(series_decode(max10, sizeof(max10), out, 4), 1);
	T_CHECK(out[0] == INT64_MAX);
	T_EQ_INT(series_decode(NULL, 0, out, 4), 0);
}

/* what a series did: its range, mean and changes, unsigned as stored */
static void test_summarize(void)
{
	int64_t v[] = { 5, 5, 7, 3, 3, 5 };
	uint8_t *blob = NULL;
	size_t len = 0;
	struct series_summary sum;

	T_EQ_INT(series_encode(v, 6, &blob, &len), 0);
	T_EQ_INT(series_summarize(blob, len, 6, &sum), 0);
	T_EQ_INT(sum.n, 6);
	T_CHECK(sum.min == 3 && sum.max == 7);
	T_NEAR(sum.mean, 28.0 / 6, 1e-12);
	T_EQ_INT(sum.changes, 3);
	/* up to n values: the stored count bounds it */
	T_EQ_INT(series_summarize(blob, len, 2, &sum), 0);
	T_CHECK(sum.n == 2 && sum.min == 5 && sum.max == 5 && sum.changes == 0);
	free(blob);

	/* a counter near 2^64 is large, not negative */
	int64_t wide[] = { (int64_t)UINT64_MAX, 0 };
	T_EQ_INT(series_encode(wide, 2, &blob, &len), 0);
	T_EQ_INT(series_summarize(blob, len, 2, &sum), 0);
	T_CHECK(sum.min == 0 && sum.max == UINT64_MAX && sum.changes == 1);
	free(blob);

	T_EQ_INT(series_summarize(NULL, 0, 4, &sum), 0);
	T_EQ_INT(sum.n, 0);
	static const uint8_t truncated[] = { 0x02, 0x80 };
	sum.n = 99;
	T_EQ_INT(series_summarize(truncated, sizeof(truncated), 4, &sum), -EINVAL);
	T_EQ_INT(sum.n, 99);
}

/* ---- results collected from a stopped sampler ---- */

#define RESULT_MAX 128

struct result {
	char metric[RESULT_MAX][96];
	char unit[RESULT_MAX][16];
	double delta[RESULT_MAX];
	size_t n;
	size_t n_series, series_bad;
	size_t n_samples;
	int64_t last_of[RESULT_MAX];
	char series_name[RESULT_MAX][96];
};

static void on_delta(void *ctx, const char *metric, const char *unit, double delta) {
	struct result *r = ctx;

	if (r->n < RESULT_MAX && strncmp(metric, "memcg", 5) == 0) {
		snprintf(r->metric[r->n], sizeof(r->metric[0]), "%s", metric);
		snprintf(r->unit[r->n], sizeof(r->unit[0]), "%s", unit);
		r->delta[r->n] = delta;
		r->n++;
	}
}

static void on_series(void *ctx, const char *metric, const uint8_t *blob, size_t len, size_t n) {
	struct result *r = ctx;
	int64_t *v = calloc(n + 1, sizeof(*v));

	if (!v || series_decode(blob, len, v, n + 1) != (int)n)
		r->series_bad++;
	if (r->n_series < RESULT_MAX && strncmp(metric, "memcg", 5) == 0) {
		snprintf(r->series_name[r->n_series], sizeof(r->series_name[0]), "%s", metric);
		r->last_of[r->n_series] = n ? v[n - 1] : 0;
		r->n_series++;
	}
	r->n_samples = n;
	free(v);
}

static double delta_of(const struct result *r, const char *metric) {
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->metric[i], metric) == 0)
			return r->delta[i];
	fprintf(stderr, "no delta for %s\n", metric);
	return -12345;
}

static bool has_delta(const struct result *r, const char *metric) {
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->metric[i], metric) == 0)
			return true;
	return false;
}

/* ---- a fake v1 memcg: regular files rewritten in place ---- */

static char fake_dir[64];

static void fake_write(const char *file, const char *content) {
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", fake_dir, file);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0 || pwrite(fd, content, strlen(content), 0) != (ssize_t)strlen(content)) {
		perror(path);
		exit(2);
	}
	close(fd);
}

/* reads_after(INO, N, AFTER): waits, 5 s at most, until the sampler has read
 * the fake memory.stat N times (inotify IN_ACCESS on it: one a sample, the
 * pread that returns data) since this call; false, saying how many reads it
 * saw, when the bound passes. Called right after a write: what the queue
 * held is dropped, and the sampler reads one file at a time, so only the
 * first read counted can have begun before the write; N = 2 is a whole
 * read of what was written. */
static bool reads_after(int ino, int n, const char *after) {
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	double end = mono_now() + 5;
	int seen = 0;

	while (read(ino, buf, sizeof(buf)) > 0)
		;
	while (seen < n) {
		double left = end - mono_now();
		struct pollfd p = { .fd = ino, .events = POLLIN };
		ssize_t len;

		if (left <= 0) {
			fprintf(stderr, "timed out after 5 s waiting for the sampler to read memory.stat %d times after %s: it read it %d times\n",
				n, after, seen);
			return false;
		}
		if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		while ((len = read(ino, buf, sizeof(buf))) > 0)
			for (char *q = buf; q < buf + len; q += sizeof(struct inotify_event) + ((struct inotify_event *)q)->len)
				if (((struct inotify_event *)q)->mask & IN_ACCESS)
					seen++;
	}
	return true;
}

/* Each content of memory.stat has the same length, so a rewrite in place
 * leaves no stale tail. The test goes by the sampler's reads, not the
 * clock: each write comes just after a read it saw (the next is an
 * interval away), and the next content only once the sampler has read
 * this one whole, however late its thread runs. */
static void test_fake_memcg(void) {
	const double iv = 0.02;
	struct sampler *s = NULL;
	struct sampler_stats st;
	static struct result res;
	int r;

	snprintf(fake_dir, sizeof(fake_dir), "/tmp/kab-test-sampler.XXXXXX");
	if (!mkdtemp(fake_dir)) {
		perror("mkdtemp");
		exit(2);
	}
	fake_write("memory.stat", "pgfault 0000000100\nanon 0000001000\n");
	fake_write("memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");

	char stat_path[160];
	snprintf(stat_path, sizeof(stat_path), "%s/memory.stat", fake_dir);
	int ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	T_CHECK(ino >= 0 && inotify_add_watch(ino, stat_path, IN_ACCESS) >= 0);

	struct sampler_opts o = { .interval_s = iv, .memcg_dir = fake_dir, .cgroup_version = 0, .series = true };
	r = sampler_start(&o, &s);
	T_EQ_INT(r, 0);
	if (r < 0) {
		close(ino);
		return;
	}
	double t0 = mono_now();
	T_CHECK(reads_after(ino, 1, "the start"));
#define STEP(content) do { fake_write("memory.stat", content); T_CHECK(reads_after(ino, 2, "writing " #content)); } while (0)
	STEP("pgfault 0000000150\nanon 0000000500\n");   /* +50, gauge down */
	STEP("anon 0000000700\npgfault 0000000170\n");   /* order changed: +20 */
	STEP("pgfault 0000000020\nanon 0000000800\n");   /* reset: +20 */
	STEP("pgfault 00000000zz\nanon 0000000900\n");   /* malformed: kept */
	STEP("pgfault 0000000030\nnewk 0000000001\n");   /* +10; anon missing: kept; newk ignored */
	T_CHECK(reads_after(ino, 2, "the last write"));
#undef STEP
	close(ino);
	/* the deadlines that passed: at most one sample each, and the first and last */
	size_t k = (size_t)((mono_now() - t0) / iv);
	T_EQ_INT(sampler_stop(s), 0);
	T_EQ_INT(sampler_stop(s), 0);  /* idempotent */

	sampler_foreach_delta(s, on_delta, &res);
	T_NEAR(delta_of(&res, "memcg.pgfault"), 50 + 20 + 20 + 10, 0);
	T_EQ_STR(res.unit[0], "events");
	/* anon: 1000 first; 900 never taken (the file was malformed); then kept */
	T_NEAR(delta_of(&res, "memcg.anon"), 800 - 1000, 0);
	T_EQ_STR(res.unit[1], "bytes");
	T_CHECK(has_delta(&res, "memcg_events.oom_kill"));
	T_CHECK(has_delta(&res, "memcg_events.under_oom"));
	T_CHECK(!has_delta(&res, "memcg_events.oom_kill_disable"));
	T_CHECK(!has_delta(&res, "memcg.newk"));
	T_EQ_INT(res.n, 4);

	sampler_get_stats(s, &st);
	T_CHECK(st.read_errors >= 1);
	T_CHECK(st.samples >= 10 && st.samples <= k + 3);
	sampler_foreach_series(s, on_series, &res);
	T_EQ_INT(res.series_bad, 0);
	T_EQ_INT(res.n_samples, st.samples);
	T_EQ_STR(res.series_name[0], "memcg.pgfault");
	T_EQ_INT(res.last_of[0], 30);
	T_EQ_INT(res.last_of[1], 800);

	sampler_free(s);
	char path[128];
	snprintf(path, sizeof(path), "%s/memory.stat", fake_dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/memory.oom_control", fake_dir);
	unlink(path);
	rmdir(fake_dir);

	/* not a memcg */
	o.memcg_dir = "/tmp";
	T_CHECK(sampler_start(&o, &s) < 0);
	o.memcg_dir = "/nonexistent/kab";
	T_CHECK(sampler_start(&o, &s) < 0);
	o.memcg_dir = NULL;
	o.interval_s = 0;
	T_EQ_INT(sampler_start(&o, &s), -EINVAL);
	o.interval_s = -1;
	T_EQ_INT(sampler_start(&o, &s), -EINVAL);
}

/* A fake v2 memcg from the fixtures: detection and the v2 file names. */
static void copy_fixture(const char *name, const char *as) {
	const char *dir = getenv("KAB_TEST_DATA");
	char path[256], buf[8192];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/data", name);
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (n < 0) {
		perror(path);
		exit(2);
	}
	close(fd);
	buf[n] = '\0';
	fake_write(as, buf);
}

static void test_fake_memcg_v2(void) {
	struct sampler_opts o = { .interval_s = 1, .series = true };
	struct sampler *s = NULL;
	static struct result res;
	char path[128];

	snprintf(fake_dir, sizeof(fake_dir), "/tmp/kab-test-sampler.XXXXXX");
	if (!mkdtemp(fake_dir)) {
		perror("mkdtemp");
		exit(2);
	}
	copy_fixture("memory.stat.v2", "memory.stat");
	copy_fixture("memory.events.v2", "memory.events");
	copy_fixture("memory.pressure.v2", "memory.pressure");
	o.memcg_dir = fake_dir;
	T_EQ_INT(sampler_start(&o, &s), 0);
	if (s) {
		T_EQ_INT(sampler_stop(s), 0);
		sampler_foreach_delta(s, on_delta, &res);
		T_EQ_INT(res.n, 57 + 6 + 2);
		T_CHECK(has_delta(&res, "memcg.anon"));
		T_CHECK(has_delta(&res, "memcg.thp_fault_alloc"));
		T_CHECK(has_delta(&res, "memcg_events.oom_group_kill"));
		T_CHECK(has_delta(&res, "memcg_psi.some_total"));
		T_CHECK(has_delta(&res, "memcg_psi.full_total"));
		T_EQ_STR(res.unit[res.n - 1], "us");
		T_NEAR(delta_of(&res, "memcg.anon"), 0, 0);
		sampler_foreach_series(s, on_series, &res);
		T_EQ_INT(res.series_bad, 0);
		T_EQ_INT(res.last_of[0], 1048576000);
		sampler_free(s);
	}
	static const char *const files[] = { "memory.stat", "memory.events", "memory.pressure" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", fake_dir, files[i]);
		unlink(path);
	}
	rmdir(fake_dir);
}

/* ---- live ---- */

struct live {
	size_t n_deltas, n_nonzero, n_series, n_percpu_series, bad;
	double loc;
	bool percpu_in_deltas;
	size_t samples;
};

static void live_delta(void *ctx, const char *metric, const char *unit, double delta) {
	struct live *l = ctx;

	l->n_deltas++;
	l->n_nonzero += delta != 0;
	if (strcmp(metric, "interrupts.LOC") == 0)
		l->loc = delta;
	if (strstr(metric, ".cpu"))
		l->percpu_in_deltas = true;
	if (!unit || !unit[0])
		l->bad++;
}

static void live_series(void *ctx, const char *metric, const uint8_t *blob, size_t len, size_t n) {
	struct live *l = ctx;
	int64_t *v = calloc(n + 1, sizeof(*v));

	l->n_series++;
	if (strncmp(metric, "interrupts.", 11) == 0 && strstr(metric, ".cpu"))
		l->n_percpu_series++;
	if (!v || n != l->samples || series_decode(blob, len, v, n + 1) != (int)n)
		l->bad++;
	free(v);
}

static void test_live(void) {
	struct sampler_opts o = { .interval_s = 0.1, .series = true, .per_cpu = true };
	struct sampler *s = NULL;
	struct sampler_stats st;
	struct live l = { 0 };
	int r;

	r = sampler_start(&o, &s);
	T_EQ_INT(r, 0);
	if (r < 0)
		return;
	double t0 = mono_now();
	sleep_until(t0 + 1.05);
	/* the deadlines that passed (ten, unless this thread woke late) */
	size_t deadlines = (size_t)((mono_now() - t0) / 0.1);
	T_EQ_INT(sampler_stop(s), 0);

	sampler_get_stats(s, &st);
	/* t=0, ten deadlines, and the final sample */
	T_CHECK(st.samples >= 10 && st.samples <= deadlines + 3);
	T_CHECK(st.lateness_p99_s >= 0 && st.lateness_p99_s < 0.05);
	T_CHECK(st.lateness_max_s >= st.lateness_p99_s);
	T_CHECK(st.cpu_s > 0 && st.cpu_s < 0.5);
	T_EQ_INT(st.read_errors, 0);
	fprintf(stderr, "live: %zu samples, %zu missed, p99 lateness %.3f ms, max %.3f ms, cpu %.6f s\n",
		st.samples, st.missed, st.lateness_p99_s * 1e3, st.lateness_max_s * 1e3, st.cpu_s);

	const uint8_t *tb;
	size_t tl;
	T_EQ_INT(sampler_times(s, &tb, &tl), 0);
	int64_t t[32];
	int n = series_decode(tb, tl, t, 32);
	T_EQ_INT(n, (long long)st.samples);
	bool monotone = n > 0 && t[0] == 0;
	for (int i = 1; i < n; i++)
		monotone = monotone && t[i] > t[i - 1];
	T_CHECK(monotone);
	/* the samples on deadlines are 100 ms apart, give or take */
	if (n > 3)
		T_NEAR((double)(t[2] - t[1]) / 1e9, 0.1, 0.03);

	l.samples = st.samples;
	sampler_foreach_delta(s, live_delta, &l);
	sampler_foreach_series(s, live_series, &l);
	T_CHECK(l.n_deltas > 150);        /* vmstat alone has ~190 keys */
	T_CHECK(l.n_nonzero > 0);
	T_CHECK(l.loc > 0);                /* the local timer ticks */
	T_CHECK(!l.percpu_in_deltas);
	T_CHECK(l.n_percpu_series > 0);
	T_EQ_INT(l.n_series, l.n_deltas + l.n_percpu_series);
	T_EQ_INT(l.bad, 0);
	sampler_free(s);
}

static void test_prompt_stop(void) {
	struct sampler_opts o = { .interval_s = 10 };
	struct sampler *s = NULL;

	T_EQ_INT(sampler_start(&o, &s), 0);
	if (!s)
		return;
	sleep_until(mono_now() + 0.05);
	double t = mono_now();
	T_EQ_INT(sampler_stop(s), 0);
	T_CHECK(mono_now() - t < 0.1);
	struct sampler_stats st;
	sampler_get_stats(s, &st);
	T_EQ_INT(st.samples, 2);
	/* no series asked for */
	const uint8_t *tb;
	size_t tl;
	T_EQ_INT(sampler_times(s, &tb, &tl), -ENODATA);
	sampler_free(s);

	/* freed without a stop: the thread is still joined */
	T_EQ_INT(sampler_start(&o, &s), 0);
	sampler_free(s);
}

/* A v1 memcg removed while sampled: reads fail, the values are kept. */
static void test_memcg_removed(void) {
	char dir[128];
	struct sampler_opts o = { .interval_s = 0.02, .series = true };
	struct sampler *s = NULL;
	struct sampler_stats st;
	static struct result res;

	if (geteuid() != 0 || access("/sys/fs/cgroup/memory/memory.oom_control", F_OK) != 0) {
		t_skip("the memcg removal test", "needs root and a cgroup v1 memory controller");
		return;
	}
	snprintf(dir, sizeof(dir), "/sys/fs/cgroup/memory/kab-test-sampler-%d", (int)getpid());
	if (mkdir(dir, 0755) < 0) {
		perror(dir);
		T_CHECK(false);
		return;
	}
	o.memcg_dir = dir;
	T_EQ_INT(sampler_start(&o, &s), 0);
	sleep_until(mono_now() + 0.1);
	T_EQ_INT(rmdir(dir), 0);
	sleep_until(mono_now() + 0.1);
	if (s) {
		T_EQ_INT(sampler_stop(s), 0);
		sampler_get_stats(s, &st);
		T_CHECK(st.read_errors > 0);
		sampler_foreach_delta(s, on_delta, &res);
		T_CHECK(has_delta(&res, "memcg.cache"));
		T_CHECK(has_delta(&res, "memcg_events.oom_kill"));
		sampler_free(s);
	}
	rmdir(dir);
}

int main(void) {
	test_encoding();
	test_summarize();
	test_fake_memcg();
	test_fake_memcg_v2();
	test_live();
	test_prompt_stop();
	test_memcg_removed();
	return t_done("sampler");
}
