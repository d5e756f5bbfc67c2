/* sysbench-oltp: sysbench OLTP on a private MariaDB server.
 *
 * prepare (once per job, outside the memcg): build/kab-sysbench-oltp
 * prepare initializes JOBDIR/pristine, loads the tables and shuts the
 * server down slowly; a stamp records the scale so a resume reuses it.
 * before (each run): a fresh copy JOBDIR/run of the pristine datadir,
 * synced and dropped from the page cache so that the run reads its data
 * from disk under its own memcg. The run: kab-sysbench-oltp run starts
 * the server on the copy inside the memcg, runs sysbench with its output
 * on stdout and writes status counter deltas to WORKDIR/mariadb-status. */
#include "workloads/wl.h"
#include "workloads/wl_sysbench.h"
#include "workloads/progs/mariadb_counters.h"
#include "harness/job/job.h"
#include "harness/base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define HELPER "kab-sysbench-oltp"
#define STATUS_FILE "mariadb-status"

enum { K_TABLES, K_TABLE_SIZE, K_DURATION, K_THREADS, K_BUFFER_POOL, K_TEST, K_REPORT_INTERVAL, K_END };
static const char *const tests[] = { "oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_point_select", NULL };

/* The keys, parsed once (wl_opts_make). */
struct sb_cfg {
	uint64_t tables, table_size, threads, buffer_pool;
	uint64_t duration_s, report_interval_s;
	const char *test;
};
#define OPT(f) WL_OPT(struct sb_cfg, f)

static const struct wl_key keys[] = {
	[K_TABLES] = { OPT(tables), .name = "tables", .type = WL_KEY_COUNT, .required = true, .min = 1, .max = 100000,
		       .help = "number of sysbench tables, e.g. 10" },
	[K_TABLE_SIZE] = { OPT(table_size), .name = "table_size", .type = WL_KEY_COUNT, .required = true, .min = 1, .max = INT32_MAX,
			   .why = " (sysbench 1.0 reads it as a 32-bit int)", .help = "rows per table, e.g. 1000000" },
	[K_DURATION] = { OPT(duration_s), .name = "duration", .type = WL_KEY_DURATION, .required = true, .min = 1,
			 .max = 7 * 86400, .why = " (sysbench counts in seconds)", .example = "300s or 5m",
			 .help = "length of the sysbench run in whole seconds, e.g. 300s or 5m" },
	[K_THREADS] = { OPT(threads), .name = "threads", .type = WL_KEY_COUNT, .min = 1, .max = 10000, .def = "1",
			.help = "sysbench client threads" },
	[K_BUFFER_POOL] = { OPT(buffer_pool), .name = "buffer_pool", .type = WL_KEY_SIZE, .min = 8ull << 20,
			    .def = "128M", .example = "512M", .help = "InnoDB buffer pool size, e.g. 512M" },
	[K_TEST] = { OPT(test), .name = "test", .type = WL_KEY_ENUM, .choices = tests, .def = "oltp_read_write",
		     .help = "the sysbench OLTP test" },
	[K_REPORT_INTERVAL] = { OPT(report_interval_s), .name = "report_interval", .type = WL_KEY_DURATION, .min = 0,
				.max = 7 * 86400, .why = " (sysbench counts in seconds)", .example = "300s or 5m",
				.def = "10s", .help = "sysbench's interim reports every N seconds on stdout, 0 for none" },
	[K_END] = { .name = NULL },
};

static int line_of(const struct job_workload *wl, const char *key)
{
	const struct job_param *p = job_param_entry(wl, key);
	return p ? p->line : wl->line;
}

/* The workload's keys, or their defaults; -EINVAL when one is missing or
 * bad (check reports which). */
static int cfg_parse(const struct job_workload *wl, struct sb_cfg *ret)
{
	if (!wl->opts)
		return -EINVAL;
	*ret = *(const struct sb_cfg *)wl->opts;
	return 0;
}

/* mariadbd lives in /usr/sbin, which a user's PATH may lack. */
static bool find_sbin(const char *name, char *ret, size_t len)
{
	if (util_find_program(name, ret, len))
		return true;
	snprintf(ret, len, "/usr/sbin/%s", name);
	return access(ret, X_OK) == 0;
}

static int check(const struct job_workload *wl, const char *file, struct diags *d)
{
	char path[4096];
	int r = 0;
	static const char *const progs[][2] = {
		{ "mariadbd", "mariadb-server" },
		{ "mariadb-install-db", "mariadb-server" },
		{ "sysbench", "sysbench" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++)
		if (!find_sbin(progs[i][0], path, sizeof(path))) {
			diags_add(d, file, wl->line, "workload \"%s\": program \"%s\" is not installed (apt-get install %s)",
				  wl->name, progs[i][0], progs[i][1]);
			r = -ENOENT;
		}
	if (!wl_helper_path(HELPER, path, sizeof(path))) {
		diags_add(d, file, wl->line, "workload \"%s\": helper program \"%s\" is not built (run make; it is built as build/%s)",
			  wl->name, HELPER, HELPER);
		r = -ENOENT;
	}
	struct sb_cfg c;
	if (wl_keys_check(wl, keys, file, d) < 0 || cfg_parse(wl, &c) < 0)
		return -EINVAL; /* a missing required key the job parser reports */
	if (wl->timeout_s > 0 && wl->timeout_s < (double)c.duration_s) {
		diags_add(d, file, line_of(wl, "duration"),
			  "workload \"%s\": duration %u s is longer than the workload's timeout %.0f s: every run would be killed; raise timeout or shorten duration",
			  wl->name, (unsigned)c.duration_s, wl->timeout_s);
		r = -EINVAL;
	}
	return r;
}

static int make_argv(const struct wl_ctx *c, char ***ret_argv)
{
	struct sb_cfg cfg;
	char helper[4096];
	if (cfg_parse(c->wl, &cfg) < 0 || !wl_helper_path(HELPER, helper, sizeof(helper)))
		return -EINVAL;
	char **argv = calloc(32, sizeof(char *));
	if (!argv)
		return -ENOMEM;
	size_t k = 0;
	bool oom = false;
#define ARG(...) do { if (asprintf(&argv[k++], __VA_ARGS__) < 0) { argv[--k] = NULL; oom = true; } } while (0)
	ARG("%s", helper);
	ARG("run");
	ARG("--datadir=%s/run", c->jobdir);
	ARG("--socket=%s/mysqld.sock", c->jobdir);
	ARG("--errlog=%s/mariadbd.err", c->workdir);
	ARG("--status-out=%s/" STATUS_FILE, c->workdir);
	ARG("--test=%s", cfg.test);
	ARG("--tables=%llu", (unsigned long long)cfg.tables);
	ARG("--table-size=%llu", (unsigned long long)cfg.table_size);
	ARG("--threads=%llu", (unsigned long long)cfg.threads);
	ARG("--time=%u", (unsigned)cfg.duration_s);
	ARG("--report-interval=%u", (unsigned)cfg.report_interval_s);
	ARG("--buffer-pool=%llu", (unsigned long long)cfg.buffer_pool);
#undef ARG
	if (oom) {
		wl_argv_free(argv);
		return -ENOMEM;
	}
	*ret_argv = argv;
	return 0;
}

/* ---- the report parser ---- */

static const char *skip_spaces(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* One whitespace-delimited number at *p; advances *p past it. */
static int take_number(const char **p, const char *suffix, double *ret)
{
	const char *s = skip_spaces(*p);
	size_t n = strcspn(s, " \t\n");
	size_t sl = suffix ? strlen(suffix) : 0;
	char buf[64];
	if (n <= sl || n - sl >= sizeof(buf) || (sl && strncmp(s + n - sl, suffix, sl) != 0))
		return -EINVAL;
	memcpy(buf, s, n - sl);
	buf[n - sl] = 0;
	if (util_parse_double(buf, ret) < 0)
		return -EINVAL;
	*p = s + n;
	return 0;
}

/* "N (X per sec.)" */
static int count_rate(const char *v, double *ret_n, double *ret_rate)
{
	double n, rate;
	if (take_number(&v, NULL, &n) < 0)
		return -EINVAL;
	v = skip_spaces(v);
	if (*v++ != '(' || take_number(&v, NULL, &rate) < 0 || strcmp(v, " per sec.)") != 0)
		return -EINVAL;
	*ret_n = n;
	*ret_rate = rate;
	return 0;
}

/* A bare number with an optional unit suffix and nothing after it. */
static int single(const char *v, const char *suffix, double *ret)
{
	if (take_number(&v, suffix, ret) < 0 || *skip_spaces(v))
		return -EINVAL;
	return 0;
}

enum section { SEC_NONE, SEC_SQL, SEC_GENERAL, SEC_LATENCY };

/* The report's figures: section, key, "N (X per sec.)" or a bare number
 * with a unit suffix, and where they go (-1: not kept). */
#define OFF(f) ((long)offsetof(struct wl_sysbench_report, f))
static const struct figure {
	enum section sec;
	const char *key;
	bool rate;
	const char *suffix;
	long off, rate_off;
} figures[] = {
	{ SEC_SQL, "transactions", true, NULL, OFF(transactions), OFF(tps) },
	{ SEC_SQL, "queries", true, NULL, OFF(queries), OFF(qps) },
	{ SEC_SQL, "ignored errors", true, NULL, OFF(errors), -1 },
	{ SEC_SQL, "reconnects", true, NULL, OFF(reconnects), -1 },
	{ SEC_GENERAL, "total time", false, "s", OFF(total_time_s), -1 },
	{ SEC_LATENCY, "min", false, NULL, OFF(lat_min_ms), -1 },
	{ SEC_LATENCY, "avg", false, NULL, OFF(lat_avg_ms), -1 },
	{ SEC_LATENCY, "max", false, NULL, OFF(lat_max_ms), -1 },
	{ SEC_LATENCY, "th percentile", false, NULL, OFF(lat_pct_ms), -1 }, /* "95th percentile" */
};
#undef OFF
static const char *const section_names[] = { "Threads fairness", "SQL statistics", "General statistics", "Latency (ms)" };

static double *field(struct wl_sysbench_report *r, long off) { return (double *)((char *)r + off); }

/* One "key: value" line of the report; the figure's bit is set in *seen. */
static int parse_figure(enum section sec, const char *key, size_t kl, const char *v, struct wl_sysbench_report *rep,
			unsigned *seen)
{
	for (size_t i = 0; i < ARRAY_SIZE(figures); i++) {
		const struct figure *f = &figures[i];
		size_t fl = strlen(f->key);
		if (f->sec != sec)
			continue;
		if (strcmp(f->key, "th percentile") == 0) {
			/* the percentile sysbench was given, e.g. 95 */
			char num[16];
			if (kl <= fl || kl - fl >= sizeof(num) || strncmp(key + kl - fl, f->key, fl) != 0)
				continue;
			snprintf(num, sizeof(num), "%.*s", (int)(kl - fl), key);
			if (util_parse_double(num, &rep->percentile) < 0)
				return -EINVAL;
		} else if (kl != fl || strncmp(key, f->key, fl) != 0) {
			continue;
		}
		double n, rate = 0;
		int r = f->rate ? count_rate(v, &n, &rate) : single(v, f->suffix, &n);
		if (r < 0)
			return r;
		*field(rep, f->off) = n;
		if (f->rate_off >= 0)
			*field(rep, f->rate_off) = rate;
		*seen |= 1u << i;
		return 0;
	}
	return 0; /* a line kab does not read */
}

int wl_sysbench_parse_report(const char *text, struct wl_sysbench_report *ret)
{
	struct wl_sysbench_report rep = { 0 };
	unsigned seen = 0;
	enum section sec = SEC_NONE;
	char line[512];
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), p);
		p += n + (p[n] == '\n');
		const char *key = skip_spaces(line);
		char *colon = strchr(key, ':');
		if (!colon)
			continue;
		size_t kl = (size_t)(colon - key);
		const char *v = skip_spaces(colon + 1);
		char *end = line + strlen(line);
		while (end > v && (end[-1] == ' ' || end[-1] == '\r'))
			*--end = 0;
		bool header = false;
		for (size_t i = 0; i < ARRAY_SIZE(section_names); i++)
			if (kl == strlen(section_names[i]) && strncmp(key, section_names[i], kl) == 0) {
				sec = (enum section)i;
				header = true;
				if (sec == SEC_SQL)
					seen = 0; /* a later report replaces an earlier one */
			}
		if (!header && sec != SEC_NONE && parse_figure(sec, key, kl, v, &rep, &seen) < 0)
			return -EINVAL;
	}
	if (seen != (1u << ARRAY_SIZE(figures)) - 1)
		return -ENODATA;
	*ret = rep;
	return 0;
}

/* ---- collect ---- */

/* sysbench's figures, then the server's status counter deltas and
 * whether InnoDB got io_uring (the helper program's list, which it
 * writes them from). */
#define MARIADB_ROW(name, unit, dir, label) WL_METRIC("mariadb." #name, unit, dir, label),
static const struct wl_metric metrics[] = {
	WL_METRIC("sysbench.tps", "tx/s", HIGHER, "transactions/s"),
	WL_METRIC("sysbench.qps", "queries/s", HIGHER, "queries/s"),
	WL_METRIC("sysbench.transactions", "tx", NEUTRAL, NULL),
	WL_METRIC("sysbench.lat_avg_ms", "ms", LOWER, "avg latency (ms)"),
	WL_METRIC("sysbench.lat_p95_ms", "ms", LOWER, "p95 latency (ms)"),
	WL_METRIC("sysbench.lat_p99_ms", "ms", LOWER, "p99 latency (ms)"),
	WL_METRIC("sysbench.lat_max_ms", "ms", LOWER, "max latency (ms)"),
	WL_METRIC("sysbench.errors", "errors", LOWER, NULL),
	WL_METRIC("sysbench.reconnects", "reconnects", LOWER, NULL),
	MARIADB_METRICS(MARIADB_ROW) /* mariadb.NAME, from the helper program's list */
	{ NULL },
};
#undef MARIADB_ROW

static void collect_status(const struct wl_ctx *c, struct wl_metrics *m)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/" STATUS_FILE, c->workdir);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return;
	char line[256];
	while (fgets(line, sizeof(line), f)) {
		char **w;
		size_t n;
		if (wl_split_args(line, &w, &n) < 0)
			continue;
		uint64_t v;
		if (n == 3 && util_parse_u64(w[1], &v) == 0) {
			char name[128];
			snprintf(name, sizeof(name), "mariadb.%s", w[0]);
			wl_metrics_add_declared(m, name, w[2], (double)v);
		}
		wl_argv_free(w);
	}
}

static int collect(const struct wl_ctx *c, int exit_status, struct wl_metrics *m)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/stdout", c->workdir);
	_cleanup_free_ char *text = NULL;
	int r = util_read_file(path, &text, NULL);
	if (r < 0)
		return r;
	struct wl_sysbench_report rep;
	if ((r = wl_sysbench_parse_report(text, &rep)) < 0)
		return r;
	const struct {
		const char *name;
		double v;
	} figs[] = {
		{ "sysbench.tps", rep.tps },
		{ "sysbench.qps", rep.qps },
		{ "sysbench.transactions", rep.transactions },
		{ "sysbench.lat_avg_ms", rep.lat_avg_ms },
		{ "sysbench.lat_p95_ms", rep.lat_pct_ms },
		{ "sysbench.lat_max_ms", rep.lat_max_ms },
		{ "sysbench.errors", rep.errors },
		{ "sysbench.reconnects", rep.reconnects },
	};
	for (size_t i = 0; i < ARRAY_SIZE(figs); i++)
		wl_metrics_add_declared(m, figs[i].name, NULL, figs[i].v);
	collect_status(c, m);
	return 0;
}

/* ---- datadirs: the pristine copy and each run's copy ---- */

/* Copies one file in the kernel (a reflink where the filesystem can), then
 * writes it out and drops both from the page cache: the run must find its
 * data on disk, not in pages charged to kab's cgroup. */
static int copy_file(int sdir, int ddir, const char *name, mode_t mode)
{
	_cleanup_close_ int in = openat(sdir, name, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	_cleanup_close_ int out = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 07777);
	if (out < 0)
		return -errno;
	for (;;) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
		if (n == 0)
			break;
		if (n > 0)
			continue;
		if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP)
			return -errno;
		char buf[1 << 16]; /* no in-kernel copy here: plain read/write */
		ssize_t k;
		while ((k = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)k) != k)
				return -EIO;
		if (k < 0)
			return -errno;
		break;
	}
	if (fdatasync(out) < 0)
		return -errno;
	posix_fadvise(out, 0, 0, POSIX_FADV_DONTNEED);
	posix_fadvise(in, 0, 0, POSIX_FADV_DONTNEED);
	return 0;
}

static int copy_tree(int sdir, int ddir, struct strbuf *err, const char *where)
{
	int fd = dup(sdir);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	size_t had = err->len;
	int r = 0;
	struct dirent *e;
	while (r >= 0 && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		struct stat st;
		if (fstatat(sdir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
		} else if (S_ISDIR(st.st_mode)) {
			if (mkdirat(ddir, e->d_name, st.st_mode & 07777) < 0) {
				r = -errno;
			} else {
				_cleanup_close_ int s2 = openat(sdir, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				_cleanup_close_ int d2 = openat(ddir, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				r = s2 < 0 || d2 < 0 ? -errno : copy_tree(s2, d2, err, e->d_name);
				continue;
			}
		} else if (S_ISREG(st.st_mode)) {
			r = copy_file(sdir, ddir, e->d_name, st.st_mode);
		} /* a socket or pid file left behind is not data: skipped */
		if (r < 0 && err->len == had)
			sb_printf(err, "copying %s/%s of the prepared datadir: %s", where, e->d_name, strerror(-r));
	}
	closedir(d);
	return r;
}

static int copy_datadir(const char *from, const char *to, struct strbuf *err)
{
	if (mkdir(to, 0700) < 0) {
		int r = -errno;
		sb_printf(err, "cannot create %s: %s", to, strerror(-r));
		return r;
	}
	_cleanup_close_ int s = open(from, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int d = open(to, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s < 0 || d < 0) {
		sb_printf(err, "cannot open %s: %s", s < 0 ? from : to, strerror(errno));
		return -EIO;
	}
	int r = copy_tree(s, d, err, from);
	if (r >= 0 && fsync(d) < 0)
		r = -errno;
	return r;
}

/* ---- hooks ---- */

static void jobpath(const struct wl_ctx *c, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", c->jobdir, name);
}

/* The useful lines of a failed prepare's log: the helper's verdict,
 * sysbench's first FATAL (without the query it quotes) and the server's
 * first errors. */
static void prepare_failure(const char *log, int status, struct strbuf *err)
{
	char how[64];
	if (WIFSIGNALED(status))
		snprintf(how, sizeof(how), HELPER " was killed by signal %d", WTERMSIG(status));
	else
		snprintf(how, sizeof(how), HELPER " exited with status %d", WEXITSTATUS(status));
	_cleanup_free_ char *text = NULL;
	const char *verdict = "", *fatal = "";
	const char *errors[3] = { "", "", "" };
	size_t n_errors = 0;
	static const char vp[] = HELPER ": FAILED: ", ep[] = HELPER ": mariadbd: ";
	if (util_read_file(log, &text, NULL) >= 0) {
		for (char *l = text, *nl; l && *l; l = nl ? nl + 1 : NULL) {
			nl = strchr(l, '\n');
			if (nl)
				*nl = 0;
			if (strncmp(l, vp, sizeof(vp) - 1) == 0) {
				verdict = l + sizeof(vp) - 1;
			} else if (strncmp(l, "FATAL: ", 7) == 0 && !*fatal) {
				char *q = strstr(l, " for query");
				if (q)
					*q = 0;
				fatal = l;
			} else if (strncmp(l, ep, sizeof(ep) - 1) == 0 && n_errors < ARRAY_SIZE(errors)) {
				const char *e = strstr(l, "[ERROR] ");
				errors[n_errors++] = e ? e + 8 : l + sizeof(ep) - 1;
			}
		}
	}
	sb_printf(err, "sysbench prepare failed: %s%s%s%s%s%s%s%s", *verdict ? verdict : how, *fatal ? "; sysbench: " : "", fatal,
		  n_errors ? "; server: " : "", errors[0], n_errors > 1 ? "; " : "", errors[1], n_errors > 2 ? "; ..." : "");
}

static int write_stamp(const char *path, const char *stamp)
{
	FILE *f = fopen(path, "we");
	if (!f)
		return -errno;
	bool ok = fprintf(f, "%s\n", stamp) > 0;
	if (fclose(f) != 0 || !ok)
		return -EIO;
	return 0;
}

static int prepare(const struct wl_ctx *c, struct strbuf *err)
{
	struct sb_cfg cfg;
	char helper[4096], pristine[512], stamp_path[512], log[512], sock[512], errlog[512];
	if (cfg_parse(c->wl, &cfg) < 0) {
		sb_puts(err, "bad sysbench-oltp keys (kab check explains)");
		return -EINVAL;
	}
	if (!wl_helper_path(HELPER, helper, sizeof(helper))) {
		sb_printf(err, "helper program %s is not built (run make)", HELPER);
		return -ENOENT;
	}
	/* the server's sockets live in the job's directory: a unix socket's
	 * path has 108 bytes (sun_path) */
	if (strlen(c->jobdir) + sizeof("/prepare.sock") > 108) {
		sb_printf(err, "the workload's directory %s is too long for the server's unix sockets in it (%s/prepare.sock: 107 bytes at most): use a shorter state directory (--state-dir, $STATE_DIRECTORY)",
			  c->jobdir, c->jobdir);
		return -ENAMETOOLONG;
	}
	jobpath(c, "pristine", pristine, sizeof(pristine));
	jobpath(c, "pristine.stamp", stamp_path, sizeof(stamp_path));
	jobpath(c, "prepare.log", log, sizeof(log));
	jobpath(c, "prepare.sock", sock, sizeof(sock));
	jobpath(c, "prepare.err", errlog, sizeof(errlog));
	char stamp[128];
	snprintf(stamp, sizeof(stamp), "tables=%llu table_size=%llu", (unsigned long long)cfg.tables,
		 (unsigned long long)cfg.table_size);
	_cleanup_free_ char *old = NULL;
	if (util_read_line(stamp_path, &old) >= 0 && strcmp(old, stamp) == 0) {
		log_info("workload \"%s\": reusing the prepared sysbench data in %s (%s)", c->wl->name, pristine, stamp);
		return 0;
	}
	/* a half-made copy from an interrupted prepare is started over */
	unlink(stamp_path);
	int r = util_remove_tree(pristine);
	if (r < 0) {
		sb_printf(err, "cannot remove the old %s: %s", pristine, strerror(-r));
		return r;
	}
	char a[7][128];
	snprintf(a[0], sizeof(a[0]), "--tables=%llu", (unsigned long long)cfg.tables);
	snprintf(a[1], sizeof(a[1]), "--table-size=%llu", (unsigned long long)cfg.table_size);
	snprintf(a[2], sizeof(a[2]), "--buffer-pool=%llu", (unsigned long long)cfg.buffer_pool);
	char d_arg[600], s_arg[600], e_arg[600];
	snprintf(d_arg, sizeof(d_arg), "--datadir=%s", pristine);
	snprintf(s_arg, sizeof(s_arg), "--socket=%s", sock);
	snprintf(e_arg, sizeof(e_arg), "--errlog=%s", errlog);
	char *argv[] = { helper, "prepare", d_arg, s_arg, e_arg, a[0], a[1], a[2], NULL };
	double t0 = util_mono_now();
	log_info("workload \"%s\": preparing sysbench data (%s) in %s", c->wl->name, stamp, pristine);
	pid_t pid = fork();
	if (pid < 0) {
		r = -errno;
		sb_printf(err, "fork: %s", strerror(-r));
		return r;
	}
	if (pid == 0) {
		util_child_signals();
		int in = open("/dev/null", O_RDONLY);
		int out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
			_exit(127);
		util_child_fds();
		execv(helper, argv);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			r = -errno;
			sb_printf(err, "waiting for %s: %s", HELPER, strerror(-r));
			return r;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		prepare_failure(log, status, err);
		return -EIO;
	}
	r = write_stamp(stamp_path, stamp);
	if (r < 0) {
		sb_printf(err, "cannot write %s: %s", stamp_path, strerror(-r));
		return r;
	}
	log_info("workload \"%s\": sysbench data prepared in %.1f s", c->wl->name, util_mono_now() - t0);
	return 0;
}

static int before(const struct wl_ctx *c, struct strbuf *err)
{
	char pristine[512], run[512];
	jobpath(c, "pristine", pristine, sizeof(pristine));
	jobpath(c, "run", run, sizeof(run));
	int r = util_remove_tree(run);
	if (r < 0) {
		sb_printf(err, "cannot remove the previous run's datadir %s: %s", run, strerror(-r));
		return r;
	}
	size_t had = err->len;
	r = copy_datadir(pristine, run, err);
	if (r < 0 && err->len == had)
		sb_printf(err, "copying %s to %s: %s", pristine, run, strerror(-r));
	return r;
}

static void finish(const struct wl_ctx *c)
{
	static const char *const names[] = { "run", "pristine", "pristine.stamp", "prepare.log", "prepare.err" };
	char path[512];
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		jobpath(c, names[i], path, sizeof(path));
		int r = util_remove_tree(path);
		if (r < 0)
			log_warn("workload \"%s\": cannot remove %s: %s", c->wl->name, path, strerror(-r));
	}
}

static const char *const metric_sources[] = { "sysbench", "mariadb", NULL };

const struct wl_ops wl_sysbench_ops = {
	.type = "sysbench-oltp",
	.metric_sources = metric_sources,
	.metrics = metrics,
	.summary = "sysbench OLTP on a private MariaDB server; tps, latency and InnoDB counters",
	.keys = keys,
	.opts_size = sizeof(struct sb_cfg),
	.check = check,
	.argv = make_argv,
	.collect = collect,
	.prepare = prepare,
	.before = before,
	.finish = finish,
};
