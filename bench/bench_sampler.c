/* What sampling costs: kab's sampler, a bare pread loop over the same
 * files on the same absolute deadlines (the floor), and the shell loop
 * that forks date, cat and sleep for every sample (what kab replaces),
 * each at 10 Hz for BENCH_SECONDS (default 30). Prints a table and the
 * targets met or missed; the targets are reported, not asserted. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness/sampler/sampler.h"

#define INTERVAL_S 0.1
#define SHELL_LOOP "while :; do echo time: $(date +%s); cat /proc/vmstat; sleep 0.1; done"

static volatile sig_atomic_t bench_stop;

static void on_signal(int sig) {
	(void)sig;
	bench_stop = 1;
}

static double clock_s(clockid_t id) {
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct timespec to_timespec(double t) {
	return (struct timespec){ .tv_sec = (time_t)t, .tv_nsec = (long)((t - floor(t)) * 1e9) };
}

static void sleep_until(double t) {
	struct timespec ts = to_timespec(t);

	while (!bench_stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double p99(double *v, size_t n) {
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(size_t)ceil(0.99 * (double)n) - 1];
}

struct result {
	const char *name;
	double cpu_s;
	size_t samples;      /* on deadlines */
	size_t extra;        /* samples off the deadlines (kab's last, at stop) */
	double late_p99_s, late_max_s;
	size_t missed;
	bool ran;
	char note[320];
};

/* ---- the memcg ---- */

static char memcg_dir[128];
static bool memcg_made;

static void memcg_remove(void) {
	if (memcg_made && rmdir(memcg_dir) < 0 && errno != ENOENT)
		fprintf(stderr, "bench: cannot remove %s: %s\n", memcg_dir, strerror(errno));
	memcg_made = false;
}

static void memcg_create(char *why, size_t len) {
	char probe[192];

	if (geteuid() != 0) {
		snprintf(why, len, "not root: no memcg sampled");
		return;
	}
	if (access("/sys/fs/cgroup/memory/memory.oom_control", F_OK) == 0)
		snprintf(memcg_dir, sizeof(memcg_dir), "/sys/fs/cgroup/memory/kab-bench");
	else if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
		snprintf(memcg_dir, sizeof(memcg_dir), "/sys/fs/cgroup/kab-bench");
	else {
		snprintf(why, len, "no memory cgroup controller found: no memcg sampled");
		return;
	}
	rmdir(memcg_dir);  /* a leftover of an interrupted run */
	if (mkdir(memcg_dir, 0755) < 0) {
		snprintf(why, len, "cannot create %s (%s): no memcg sampled", memcg_dir, strerror(errno));
		memcg_dir[0] = '\0';
		return;
	}
	memcg_made = true;
	snprintf(probe, sizeof(probe), "%s/memory.stat", memcg_dir);
	if (access(probe, F_OK) != 0) {
		snprintf(why, len, "%s has no memory controller (not enabled in the parent's "
			 "cgroup.subtree_control): no memcg sampled", memcg_dir);
		memcg_remove();
		memcg_dir[0] = '\0';
		return;
	}
	snprintf(why, len, "memcg %s", memcg_dir);
}

/* ---- 1: kab ---- */

static void run_kab(double seconds, struct result *res) {
	struct sampler_opts o = { .interval_s = INTERVAL_S, .memcg_dir = memcg_dir[0] ? memcg_dir : NULL,
				  .series = true };
	struct sampler *s = NULL;
	struct sampler_stats st;
	int r;

	r = sampler_start(&o, &s);
	if (r < 0) {
		snprintf(res->note, sizeof(res->note), "sampler_start: %s", strerror(-r));
		return;
	}
	/* stop half an interval after the last deadline inside the window */
	sleep_until(clock_s(CLOCK_MONOTONIC) + seconds - INTERVAL_S / 2);
	sampler_stop(s);
	sampler_get_stats(s, &st);
	res->ran = true;
	res->cpu_s = st.cpu_s;
	res->samples = st.samples ? st.samples - 1 : 0;
	res->extra = st.samples ? 1 : 0;
	res->late_p99_s = st.lateness_p99_s;
	res->late_max_s = st.lateness_max_s;
	res->missed = st.missed;
	snprintf(res->note, sizeof(res->note), "%zu read errors; parse, deltas and series included; SCHED_FIFO 1 when allowed", st.read_errors);
	sampler_free(s);
}

/* ---- 2: bare pread ---- */

/* The scheduling kab's sampler thread asks for, so lateness compares
 * like with like; returns what was set, for the table. */
static const char *raise_priority(void) {
	struct sched_param sp = { .sched_priority = 1 };

	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0)
		return "SCHED_FIFO 1";
	if (setpriority(PRIO_PROCESS, 0, -10) == 0)
		return "nice -10";
	return "normal priority";
}

static void restore_priority(void) {
	struct sched_param sp = { .sched_priority = 0 };

	pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
	setpriority(PRIO_PROCESS, 0, 0);
}

static void run_bare(double seconds, struct result *res) {
	/* the files kab's sampler reads, in the same order */
	static const char *const memcg_v1[] = { "memory.stat", "memory.oom_control", NULL };
	static const char *const memcg_v2[] = { "memory.stat", "memory.events", "memory.pressure", NULL };
	char paths[8][192];
	int fds[8];
	size_t np = 0, nfd = 0, n = (size_t)llround(seconds / INTERVAL_S);
	size_t cap = 64 * 1024;
	char *buf = malloc(cap);
	double *late = calloc(n ? n : 1, sizeof(*late));

	snprintf(paths[np++], sizeof(paths[0]), "/proc/vmstat");
	snprintf(paths[np++], sizeof(paths[0]), "/proc/interrupts");
	snprintf(paths[np++], sizeof(paths[0]), "/proc/pressure/memory");
	if (memcg_dir[0]) {
		const char *const *files = strstr(memcg_dir, "/memory/") ? memcg_v1 : memcg_v2;
		for (size_t i = 0; files[i]; i++)
			snprintf(paths[np++], sizeof(paths[0]), "%s/%s", memcg_dir, files[i]);
	}
	for (size_t i = 0; i < np; i++) {
		fds[nfd] = open(paths[i], O_RDONLY | O_CLOEXEC);
		if (fds[nfd] < 0) {
			if (strstr(paths[i], "pressure"))
				continue;  /* optional for kab too */
			snprintf(res->note, sizeof(res->note), "cannot open %.200s: %.60s", paths[i], strerror(errno));
			goto out;
		}
		nfd++;
	}
	if (!buf || !late)
		goto out;

	const char *prio = raise_priority();
	double cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	double t0 = clock_s(CLOCK_MONOTONIC);
	size_t k;
	for (k = 0; k < n && !bench_stop; k++) {
		double deadline = t0 + (double)k * INTERVAL_S;
		struct timespec ts = to_timespec(deadline);

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !bench_stop)
			;
		double now = clock_s(CLOCK_MONOTONIC);
		late[k] = now > deadline ? now - deadline : 0;
		if (late[k] > res->late_max_s)
			res->late_max_s = late[k];
		for (size_t i = 0; i < nfd; i++) {
			size_t len = 0;
			ssize_t got;
			/* the whole file, as the sampler reads it */
			while ((got = pread(fds[i], buf + len, cap - len, (off_t)len)) > 0) {
				len += (size_t)got;
				if (len < cap && buf[len - 1] == '\n')
					break;
				if (len == cap) {
					char *nb = realloc(buf, cap * 2);
					if (!nb)
						break;
					buf = nb;
					cap *= 2;
				}
			}
		}
	}
	res->cpu_s = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	restore_priority();
	res->samples = k;
	/* the first deadline is t0 itself: lateness counts from the second */
	res->late_p99_s = k > 1 ? p99(late + 1, k - 1) : 0;
	res->ran = true;
	snprintf(res->note, sizeof(res->note), "pread of %zu files, no parsing; %s", nfd, prio);
out:
	for (size_t i = 0; i < nfd; i++)
		close(fds[i]);
	free(buf);
	free(late);
}

/* ---- 3: the shell loop ---- */

/* Counts "time:" at the start of lines across reads of any size. */
struct line_scan {
	bool at_start;
	size_t matched;  /* bytes of "time:" matched so far at a line start */
};

static size_t scan(struct line_scan *ls, const char *p, size_t n) {
	static const char word[] = "time:";
	size_t found = 0;

	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (c == '\n') {
			ls->at_start = true;
			ls->matched = 0;
			continue;
		}
		if (ls->at_start) {
			if (c == word[ls->matched]) {
				if (++ls->matched == sizeof(word) - 1) {
					found++;
					ls->at_start = false;
				}
				continue;
			}
			ls->at_start = false;
		}
	}
	return found;
}

static void run_shell(double seconds, struct result *res) {
	struct line_scan ls = { .at_start = true };
	size_t n_times = 0, cap_times = 1024;
	double *times = malloc(cap_times * sizeof(*times));
	char buf[65536];
	int pfd[2];
	pid_t pid;

	if (!times || pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(res->note, sizeof(res->note), "pipe: %s", strerror(errno));
		free(times);
		return;
	}
	double t0 = clock_s(CLOCK_MONOTONIC);
	pid = fork();
	if (pid < 0) {
		snprintf(res->note, sizeof(res->note), "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		free(times);
		return;
	}
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (dup2(pfd[1], STDOUT_FILENO) < 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", SHELL_LOOP, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	close(pfd[1]);

	double end = t0 + seconds;
	for (;;) {
		double now = clock_s(CLOCK_MONOTONIC);
		if (now >= end || bench_stop)
			break;
		struct timespec left = to_timespec(end - now);
		fd_set rd;
		FD_ZERO(&rd);
		FD_SET(pfd[0], &rd);
		int r = pselect(pfd[0] + 1, &rd, NULL, NULL, &left, NULL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		ssize_t got = read(pfd[0], buf, sizeof(buf));
		if (got <= 0)
			break;
		now = clock_s(CLOCK_MONOTONIC);
		size_t found = scan(&ls, buf, (size_t)got);
		for (size_t i = 0; i < found; i++) {
			if (n_times == cap_times) {
				double *nt = realloc(times, cap_times * 2 * sizeof(*nt));
				if (!nt)
					break;
				times = nt;
				cap_times *= 2;
			}
			times[n_times++] = now;
		}
	}
	kill(-pid, SIGKILL);
	close(pfd[0]);

	struct rusage ru;
	int status;
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	res->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	res->samples = n_times;
	res->ran = true;

	/* sleep 0.1 is relative, so the loop drifts: report its period */
	if (n_times > 2) {
		size_t np = n_times - 1;
		double *excess = malloc(np * sizeof(*excess));
		double mean = (times[n_times - 1] - times[0]) / (double)np;
		if (excess) {
			for (size_t i = 0; i < np; i++)
				excess[i] = times[i + 1] - times[i] - INTERVAL_S;
			double ex99 = p99(excess, np);
			res->late_p99_s = ex99;
			snprintf(res->note, sizeof(res->note),
				 "relative sleep: mean period %.1f ms, p99 period excess %.1f ms, %.2f s behind at the end",
				 mean * 1e3, ex99 * 1e3, times[n_times - 1] - (times[0] + (double)np * INTERVAL_S));
			free(excess);
		}
	}
	free(times);
}

/* ---- report ---- */

static const char *verdict(bool ok) {
	return ok ? "PASS" : "MISS";
}

int main(void) {
	const char *env = getenv("BENCH_SECONDS");
	double seconds = 30;
	char why[256] = "";
	struct result kab = { .name = "kab sampler", .note = "skipped: interrupted" };
	struct result bare = { .name = "bare pread", .note = "skipped: interrupted" };
	struct result shell = { .name = "shell loop", .note = "skipped: interrupted" };
	struct sigaction sa = { .sa_handler = on_signal };

	if (env && *env) {
		char *end;
		seconds = strtod(env, &end);
		if (*end || !(seconds >= 1 && seconds <= 3600)) {
			fprintf(stderr, "bench_sampler: BENCH_SECONDS=\"%s\": want seconds between 1 and 3600\n", env);
			return 2;
		}
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	size_t expected = (size_t)llround(seconds / INTERVAL_S);
	memcg_create(why, sizeof(why));
	printf("bench_sampler: 10 Hz for %.0f s each (BENCH_SECONDS), %zu samples expected; %s\n", seconds, expected, why);
	fflush(stdout);

	run_kab(seconds, &kab);
	if (!bench_stop)
		run_bare(seconds, &bare);
	if (!bench_stop)
		run_shell(seconds, &shell);
	memcg_remove();
	if (bench_stop)
		printf("bench_sampler: interrupted; figures are partial\n");

	printf("\n%-12s %14s %14s %12s %12s %7s\n", "sampler", "CPU/sample", "samples", "p99 late", "max late", "missed");
	const struct result *all[] = { &kab, &bare, &shell };
	for (size_t i = 0; i < 3; i++) {
		const struct result *r = all[i];
		size_t taken = r->samples + r->extra;
		char samples[32], late[16], max[16], missed[16];
		if (!r->ran) {
			printf("%-12s did not run: %s\n", r->name, r->note);
			continue;
		}
		snprintf(samples, sizeof(samples), "%zu/%zu%s", r->samples, expected, r->extra ? "+1" : "");
		snprintf(late, sizeof(late), r == &shell ? "(%.1f ms)" : "%.3f ms", r->late_p99_s * 1e3);
		snprintf(max, sizeof(max), r == &shell ? "-" : "%.3f ms", r->late_max_s * 1e3);
		if (r == &shell)
			snprintf(missed, sizeof(missed), "-");
		else
			snprintf(missed, sizeof(missed), "%zu", r->missed);
		printf("%-12s %11.1f us %14s %12s %12s %7s\n", r->name,
		       taken ? r->cpu_s / (double)taken * 1e6 : 0.0, samples, late, max, missed);
		printf("%-12s   %.4f s CPU in all; %s\n", "", r->cpu_s, r->note);
	}
	if (kab.extra)
		printf("(kab's +1 is the sample taken at stop, off the deadlines; its CPU is included)\n");

	if (!kab.ran || !bare.ran || !shell.ran)
		return 0;
	double kab_ps = kab.cpu_s / (double)(kab.samples + kab.extra);
	double bare_ps = bare.cpu_s / (double)bare.samples;
	double shell_ps = shell.samples ? shell.cpu_s / (double)shell.samples : INFINITY;
	double kab_bare = kab_ps / bare_ps, shell_kab = shell_ps / kab_ps;
	printf("\nratios: kab/bare %.2fx, shell/kab %.0fx\n", kab_bare, shell_kab);
	printf("targets:\n");
	printf("  kab CPU/sample <= 1.5x bare      %6.2fx   %s\n", kab_bare, verdict(kab_bare <= 1.5));
	printf("  shell CPU/sample >= 50x kab      %6.0fx   %s\n", shell_kab, verdict(shell_kab >= 50));
	printf("  kab samples %zu/%zu                          %s\n", kab.samples, expected,
	       verdict(kab.samples >= expected && kab.missed == 0));
	printf("  kab p99 lateness < 2 ms          %6.3f ms %s\n", kab.late_p99_s * 1e3, verdict(kab.late_p99_s < 0.002));
	return 0;
}
