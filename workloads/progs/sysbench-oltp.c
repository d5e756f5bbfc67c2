/* kab-sysbench-oltp: sysbench OLTP against a private MariaDB server.
 *
 *   kab-sysbench-oltp prepare --datadir D --socket S --errlog F --tables T --table-size R ...
 *   kab-sysbench-oltp run     --datadir D --socket S --errlog F --test oltp_read_write ...
 *
 * "prepare" initializes D, loads the sysbench tables and shuts the server
 * down slowly (a clean, fully purged copy). "run" starts mariadbd on D (a
 * copy the adapter made), waits for its systemd READY=1 notification on a
 * datagram socket of ours (no polling with sleeps), confirms with a client
 * connection, runs sysbench with its stdout on ours, writes SHOW GLOBAL
 * STATUS counter deltas to --status-out and shuts the server down. Any
 * failure ends with the server's error log tail on stderr and exit status 1.
 * It runs inside the run's memcg; the server and sysbench inherit it. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mysql.h>

#include "mariadb_counters.h"

#define PROG "kab-sysbench-oltp"
#define ERRLOG_TAIL 800

struct opts {
	bool prepare;
	const char *datadir, *socket, *errlog, *status_out;
	const char *test;
	long long tables, table_size, threads, time_s, report_interval;
	long long buffer_pool;   /* bytes */
	long long start_timeout; /* seconds */
};

struct server {
	pid_t pid;
	int pidfd;
	bool exited;
	int status;
	MYSQL *db;
};

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig) { stop_requested = sig; }

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs(PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* The first failure, repeated as the last line of stderr, where kab's log
 * and the run's stored stderr tail show it. */
static char verdict[512];

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	say("%s", msg);
	if (!verdict[0])
		snprintf(verdict, sizeof(verdict), "%s", msg);
}

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The server's error log for a failure message: its [ERROR] lines (the
 * cause is often far above the end) and its last lines. */
static void errlog_report(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		say("no server error log at %s: %s", path, strerror(errno));
		return;
	}
	char line[1024];
	int errors = 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[ERROR]") && errors++ < 8)
			fprintf(stderr, PROG ": mariadbd: %s%s", line, line[strlen(line) - 1] == '\n' ? "" : "\n");
	char buf[ERRLOG_TAIL + 1];
	long size = ftell(f);
	long from = size > ERRLOG_TAIL ? size - ERRLOG_TAIL : 0;
	size_t n = 0;
	if (fseek(f, from, SEEK_SET) == 0)
		n = fread(buf, 1, ERRLOG_TAIL, f);
	fclose(f);
	buf[n] = 0;
	const char *p = buf;
	if (from > 0 && strchr(p, '\n'))
		p = strchr(p, '\n') + 1; /* skip the partial first line */
	fprintf(stderr, PROG ": mariadbd error log %s (tail):\n%s%s", path, p,
		*p && p[strlen(p) - 1] != '\n' ? "\n" : "");
}

static void describe_status(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
}

static int find_program(const char *name, const char *fallback_dir, char *ret, size_t len)
{
	const char *path = getenv("PATH");
	char dirs[4096];
	snprintf(dirs, sizeof(dirs), "%s:%s", path ? path : "/usr/bin:/bin", fallback_dir);
	for (char *d = dirs, *end; d; d = end ? end + 1 : NULL) {
		end = strchr(d, ':');
		if (end)
			*end = 0;
		if (!*d)
			continue;
		snprintf(ret, len, "%s/%s", d, name);
		if (access(ret, X_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

/* Forks and execs argv with stdin from /dev/null; extra_env is put into
 * the child's environment first (NULL: none). */
static int spawn(char *const argv[], const char *extra_env, pid_t *ret_pid)
{
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGPIPE, SIG_DFL); /* ignored here; mariadbd and sysbench get the default */
		int in = open("/dev/null", O_RDONLY);
		if (in >= 0)
			dup2(in, 0);
		/* mariadbd and sysbench get 0, 1 and 2 of ours, nothing else (a
		 * client connection, a pidfd); the exec closes the rest */
		close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
		if (extra_env)
			putenv((char *)extra_env);
		execv(argv[0], argv);
		fprintf(stderr, PROG ": cannot execute %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	*ret_pid = pid;
	return 0;
}

/* Waits for pid (whose pidfd is fd) until deadline (0: none); 1 when it
 * exited (status in *ret_status), 0 on timeout or a stop request. */
static int wait_exit(pid_t pid, int fd, double deadline, int *ret_status)
{
	for (;;) {
		int status;
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid) {
			*ret_status = status;
			return 1;
		}
		if (w < 0 && errno != EINTR)
			return -errno;
		double left = deadline > 0 ? deadline - mono_now() : 1.0;
		if (left <= 0)
			return 0;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR && stop_requested)
			return 0;
	}
}

static int run_and_wait(char *const argv[], int *ret_status)
{
	pid_t pid;
	int r = spawn(argv, NULL, &pid);
	if (r < 0)
		return r;
	int fd = pidfd_open(pid, 0);
	for (;;) {
		r = wait_exit(pid, fd, 0, ret_status);
		if (r != 0 || stop_requested)
			break;
	}
	if (r == 0) { /* stop requested: the child got the signal as well */
		kill(pid, SIGTERM);
		waitpid(pid, ret_status, 0);
		r = -EINTR;
	}
	close(fd);
	return r < 0 ? r : 0;
}

static int notify_socket(char *ret_env, size_t len)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* abstract name: nothing to clean up, unique per wrapper */
	int n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "kab-sysbench-%d-%lld", (int)getpid(),
			 (long long)ts.tv_nsec);
	if (bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	snprintf(ret_env, len, "NOTIFY_SOCKET=@%s", a.sun_path + 1);
	return fd;
}

/* True when one of the datagram's lines is READY=1 (sd_notify format). */
static bool notify_ready(char *msg)
{
	for (char *line = msg, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		if (strcmp(line, "READY=1") == 0)
			return true;
	}
	return false;
}

static void server_reap(struct server *s, double deadline)
{
	if (s->pid <= 0 || s->exited)
		return;
	if (wait_exit(s->pid, s->pidfd, deadline, &s->status) == 1)
		s->exited = true;
}

/* Starts mariadbd on o->datadir and waits for READY=1 and a connection. */
static int server_start(const struct opts *o, struct server *s)
{
	char mariadbd[512], env[160];
	if (find_program("mariadbd", "/usr/sbin:/usr/libexec", mariadbd, sizeof(mariadbd)) < 0) {
		fail("mariadbd is not installed (apt-get install mariadb-server)");
		return -ENOENT;
	}
	int nfd = notify_socket(env, sizeof(env));
	if (nfd < 0) {
		fail("cannot create the notification socket: %s", strerror(-nfd));
		return nfd;
	}
	char a_datadir[1024], a_socket[1024], a_errlog[1024], a_pid[1024], a_pool[64], a_conn[64];
	snprintf(a_datadir, sizeof(a_datadir), "--datadir=%s", o->datadir);
	snprintf(a_socket, sizeof(a_socket), "--socket=%s", o->socket);
	snprintf(a_errlog, sizeof(a_errlog), "--log-error=%s", o->errlog);
	snprintf(a_pid, sizeof(a_pid), "--pid-file=%s/mariadbd.pid", o->datadir);
	snprintf(a_pool, sizeof(a_pool), "--innodb-buffer-pool-size=%lld", o->buffer_pool);
	snprintf(a_conn, sizeof(a_conn), "--max-connections=%lld", o->threads + 50);
	/* --no-defaults: the machine's my.cnf must not change the experiment;
	 * no buffer pool dump/load: every run starts cold from the same files */
	char *argv[] = { mariadbd, "--no-defaults", a_datadir, a_socket, "--skip-networking", "--user=root",
			 a_errlog, a_pid, a_pool, "--innodb-buffer-pool-load-at-startup=0",
			 "--innodb-buffer-pool-dump-at-shutdown=0", a_conn, NULL };
	unlink(o->errlog);
	double t0 = mono_now(), deadline = t0 + (double)o->start_timeout;
	int r = spawn(argv, env, &s->pid);
	if (r < 0) {
		close(nfd);
		fail("cannot start mariadbd: %s", strerror(-r));
		return r;
	}
	s->pidfd = pidfd_open(s->pid, 0);
	bool ready = false;
	while (!ready) {
		double left = deadline - mono_now();
		if (left <= 0 || stop_requested)
			break;
		struct pollfd p[2] = { { .fd = nfd, .events = POLLIN }, { .fd = s->pidfd, .events = POLLIN } };
		if (poll(p, 2, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			break;
		if (p[1].revents) {
			server_reap(s, mono_now() + 5);
			break;
		}
		char msg[4096];
		ssize_t n;
		while (!ready && (n = recv(nfd, msg, sizeof(msg) - 1, 0)) > 0) {
			msg[n] = 0;
			ready = notify_ready(msg);
		}
	}
	close(nfd);
	if (!ready) {
		char how[96] = "did not become ready";
		if (s->exited)
			describe_status(s->status, how, sizeof(how));
		else if (stop_requested)
			snprintf(how, sizeof(how), "was stopped by signal %d before it was ready", (int)stop_requested);
		else
			snprintf(how, sizeof(how), "sent no READY=1 within %lld s", o->start_timeout);
		fail("mariadbd %s while starting on %s", how, o->datadir);
		return -EIO;
	}
	s->db = mysql_init(NULL);
	unsigned int connect_timeout = 30;
	mysql_options(s->db, MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout);
	if (!mysql_real_connect(s->db, NULL, "root", NULL, NULL, 0, o->socket, 0)) {
		fail("mariadbd is ready but a connection to %s fails: %s", o->socket, mysql_error(s->db));
		mysql_close(s->db);
		s->db = NULL;
		return -EIO;
	}
	say("mariadbd %s ready in %.2f s (pid %d, buffer pool %lld MiB)", mysql_get_server_info(s->db),
	    mono_now() - t0, (int)s->pid, o->buffer_pool >> 20);
	return 0;
}

/* Shuts the server down through SQL (slow for prepare: a purged, flushed
 * datadir; immediate for a run, whose copy is thrown away), else SIGTERM,
 * and SIGKILL at the end. Returns 0 when it went down cleanly. */
static int server_stop(struct server *s, bool slow)
{
	if (s->pid <= 0)
		return 0;
	if (s->db) {
		if (!s->exited) {
			mysql_query(s->db, slow ? "SET GLOBAL innodb_fast_shutdown = 0" : "SET GLOBAL innodb_fast_shutdown = 2");
			if (mysql_query(s->db, "SHUTDOWN") != 0)
				kill(s->pid, SIGTERM);
		}
		mysql_close(s->db);
		s->db = NULL;
	} else if (!s->exited) {
		kill(s->pid, SIGTERM);
	}
	server_reap(s, mono_now() + (slow ? 1800 : 60));
	if (!s->exited) {
		say("mariadbd (pid %d) did not shut down; killing it", (int)s->pid);
		kill(s->pid, SIGKILL);
		server_reap(s, 0);
	}
	if (s->pidfd >= 0)
		close(s->pidfd);
	s->pidfd = -1;
	return s->exited && WIFEXITED(s->status) && WEXITSTATUS(s->status) == 0 ? 0 : -EIO;
}

/* Server status counters read before and after the benchmark, with their units. */
#define COUNTER(name, unit, dir, label) { #name, unit },
static const char *const counters[][2] = { MARIADB_COUNTERS(COUNTER) };
#undef COUNTER
#define IO_URING_LINE(name, unit, dir, label) #name " %d " unit "\n"
#define N_COUNTERS (sizeof(counters) / sizeof(counters[0]))

struct status_snap {
	uint64_t v[N_COUNTERS];
	bool have[N_COUNTERS];
};

static int status_read(MYSQL *db, struct status_snap *ret)
{
	if (mysql_query(db, "SHOW GLOBAL STATUS") != 0)
		return -EIO;
	MYSQL_RES *res = mysql_store_result(db);
	if (!res)
		return -EIO;
	struct status_snap s = { 0 };
	MYSQL_ROW row;
	while ((row = mysql_fetch_row(res))) {
		if (!row[0] || !row[1])
			continue;
		for (size_t i = 0; i < N_COUNTERS; i++) {
			if (strcmp(row[0], counters[i][0]) != 0)
				continue;
			char *end;
			errno = 0;
			unsigned long long v = strtoull(row[1], &end, 10);
			if (errno == 0 && end != row[1] && *end == 0) {
				s.v[i] = v;
				s.have[i] = true;
			}
		}
	}
	mysql_free_result(res);
	*ret = s;
	return 0;
}

/* Whether InnoDB got io_uring: in a small memcg io_uring_queue_init()
 * can fail with ENOMEM and InnoDB falls back to libaio, which changes the
 * I/O path between runs; recorded so that a comparison can tell. */
static int errlog_io_uring(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	char line[1024];
	int r = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "InnoDB: Using io_uring"))
			r = 1;
		if (strstr(line, "create_uring failed") || strstr(line, "io_uring_queue_init() failed"))
			r = 0;
	}
	fclose(f);
	return r;
}

static int status_write(const char *path, const struct status_snap *a, const struct status_snap *b, int io_uring)
{
	FILE *f = fopen(path, "we");
	if (!f)
		return -errno;
	if (io_uring >= 0)
		fprintf(f, MARIADB_IO_URING(IO_URING_LINE), io_uring);
	for (size_t i = 0; i < N_COUNTERS; i++)
		if (a->have[i] && b->have[i] && b->v[i] >= a->v[i]) /* a counter that went down was reset */
			fprintf(f, "%s %" PRIu64 " %s\n", counters[i][0], b->v[i] - a->v[i], counters[i][1]);
	return fclose(f) == 0 ? 0 : -errno;
}

static void sysbench_argv(const struct opts *o, const char *sysbench, char (*a)[256], char **argv)
{
	size_t k = 0;
	argv[k++] = (char *)sysbench;
	argv[k++] = (char *)(o->prepare ? "oltp_read_write" : o->test);
	argv[k++] = "--db-driver=mysql";
	snprintf(a[0], 256, "--mysql-socket=%s", o->socket);
	argv[k++] = a[0];
	argv[k++] = "--mysql-user=root";
	argv[k++] = "--mysql-db=sbtest";
	snprintf(a[1], 256, "--tables=%lld", o->tables);
	argv[k++] = a[1];
	snprintf(a[2], 256, "--table-size=%lld", o->table_size);
	argv[k++] = a[2];
	if (o->prepare) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		snprintf(a[3], 256, "--threads=%lld", o->tables < cpus ? o->tables : (long long)(cpus > 0 ? cpus : 1));
		argv[k++] = a[3];
		argv[k++] = "prepare";
	} else {
		snprintf(a[3], 256, "--threads=%lld", o->threads);
		argv[k++] = a[3];
		snprintf(a[4], 256, "--time=%lld", o->time_s);
		argv[k++] = a[4];
		snprintf(a[5], 256, "--report-interval=%lld", o->report_interval);
		argv[k++] = a[5];
		argv[k++] = "--percentile=95";
		argv[k++] = "run";
	}
	argv[k] = NULL;
}

/* Runs sysbench while watching the server: a server that dies ends the
 * run at once instead of leaving sysbench to time out on its errors. */
static int sysbench_run(const struct opts *o, struct server *s)
{
	char sysbench[512];
	if (find_program("sysbench", "/usr/local/bin", sysbench, sizeof(sysbench)) < 0) {
		fail("sysbench is not installed (apt-get install sysbench)");
		return -ENOENT;
	}
	char a[6][256];
	char *argv[24];
	sysbench_argv(o, sysbench, a, argv);
	fflush(stdout);
	pid_t pid;
	int r = spawn(argv, NULL, &pid);
	if (r < 0) {
		fail("cannot start sysbench: %s", strerror(-r));
		return r;
	}
	int fd = pidfd_open(pid, 0);
	int status = 0;
	bool done = false;
	while (!done) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = s->pidfd, .events = POLLIN } };
		if (poll(p, 2, -1) < 0 && errno == EINTR && stop_requested)
			break;
		if (p[0].revents) {
			waitpid(pid, &status, 0);
			done = true;
		}
		if (p[1].revents) {
			server_reap(s, mono_now() + 5);
			if (s->exited)
				break;
		}
	}
	if (!done) {
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
	}
	close(fd);
	/* a server killed under sysbench: sysbench, losing its connections,
	 * often exits before the server's death is seen; the server's end is
	 * the cause, so give it a moment to show before blaming sysbench */
	if (done && !s->exited && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
		server_reap(s, mono_now() + 2);
	char how[96];
	if (s->exited) {
		describe_status(s->status, how, sizeof(how));
		fail("mariadbd %s during sysbench %s", how, o->prepare ? "prepare" : "run");
		return -EIO;
	}
	if (stop_requested) {
		fail("stopped by signal %d", (int)stop_requested);
		return -EINTR;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		describe_status(status, how, sizeof(how));
		fail("sysbench %s %s", o->prepare ? "prepare" : "run", how);
		return -EIO;
	}
	return 0;
}

static int install_db(const struct opts *o)
{
	char prog[512];
	if (find_program("mariadb-install-db", "/usr/bin", prog, sizeof(prog)) < 0 &&
	    find_program("mysql_install_db", "/usr/bin", prog, sizeof(prog)) < 0) {
		fail("mariadb-install-db is not installed (apt-get install mariadb-server)");
		return -ENOENT;
	}
	char a_datadir[1024];
	snprintf(a_datadir, sizeof(a_datadir), "--datadir=%s", o->datadir);
	char *argv[] = { prog, "--no-defaults", a_datadir, "--user=root", "--auth-root-authentication-method=normal",
			 "--skip-test-db", NULL };
	int status;
	int r = run_and_wait(argv, &status);
	if (r < 0)
		return r;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char how[96];
		describe_status(status, how, sizeof(how));
		fail("mariadb-install-db --datadir=%s %s", o->datadir, how);
		return -EIO;
	}
	return 0;
}

static void failed(const struct opts *o)
{
	errlog_report(o->errlog);
	say("FAILED: %s", verdict[0] ? verdict : "see above");
}

static int do_prepare(const struct opts *o)
{
	struct server s = { .pid = -1, .pidfd = -1 };
	double t0 = mono_now();
	int r = install_db(o);
	if (r < 0)
		return r;
	if ((r = server_start(o, &s)) < 0)
		goto out;
	if (mysql_query(s.db, "CREATE DATABASE IF NOT EXISTS sbtest") != 0) {
		fail("CREATE DATABASE sbtest: %s", mysql_error(s.db));
		r = -EIO;
		goto out;
	}
	r = sysbench_run(o, &s);
out:;
	int sr = server_stop(&s, true);
	if (r >= 0 && sr < 0) {
		char how[96] = "was not stopped";
		if (s.exited)
			describe_status(s.status, how, sizeof(how));
		fail("mariadbd %s at the end of prepare: the prepared data may be inconsistent", how);
		r = sr;
	}
	if (r < 0)
		failed(o);
	else
		say("prepared %lld tables x %lld rows in %.1f s", o->tables, o->table_size, mono_now() - t0);
	return r;
}

static int do_run(const struct opts *o)
{
	struct server s = { .pid = -1, .pidfd = -1 };
	struct status_snap before, after;
	int r = server_start(o, &s);
	if (r < 0)
		goto out;
	if (status_read(s.db, &before) < 0) {
		fail("SHOW GLOBAL STATUS: %s", mysql_error(s.db));
		r = -EIO;
		goto out;
	}
	if ((r = sysbench_run(o, &s)) < 0)
		goto out;
	if (status_read(s.db, &after) < 0) {
		fail("SHOW GLOBAL STATUS after the run: %s", mysql_error(s.db));
		r = -EIO;
		goto out;
	}
	if (o->status_out && (r = status_write(o->status_out, &before, &after, errlog_io_uring(o->errlog))) < 0)
		fail("cannot write %s: %s", o->status_out, strerror(-r));
out:
	if (server_stop(&s, false) < 0 && r >= 0 && s.exited && WIFSIGNALED(s.status)) {
		/* a clean benchmark but a server that crashed on the way down */
		fail("mariadbd was killed by signal %d while shutting down", WTERMSIG(s.status));
		r = -EIO;
	}
	if (r < 0)
		failed(o);
	return r;
}

static int parse_ll(const char *s, long long min, long long *ret)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min)
		return -EINVAL;
	*ret = v;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: " PROG " prepare|run --datadir DIR --socket PATH --errlog FILE\n"
			"       [--tables N] [--table-size N] [--buffer-pool BYTES] [--start-timeout S]\n"
			"       run: [--test oltp_read_write] [--threads N] [--time S] [--report-interval S]\n"
			"            [--status-out FILE]\n");
}

int main(int argc, char **argv)
{
	struct opts o = { .test = "oltp_read_write", .tables = 1, .table_size = 10000, .threads = 1, .time_s = 10,
			  .report_interval = 0, .buffer_pool = 128ll << 20, .start_timeout = 600 };
	static const struct option lo[] = {
		{ "datadir", required_argument, NULL, 'd' },   { "socket", required_argument, NULL, 's' },
		{ "errlog", required_argument, NULL, 'e' },    { "status-out", required_argument, NULL, 'o' },
		{ "test", required_argument, NULL, 'T' },      { "tables", required_argument, NULL, 't' },
		{ "table-size", required_argument, NULL, 'r' }, { "threads", required_argument, NULL, 'n' },
		{ "time", required_argument, NULL, 'x' },      { "report-interval", required_argument, NULL, 'i' },
		{ "buffer-pool", required_argument, NULL, 'b' }, { "start-timeout", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	if (argc < 2 || (strcmp(argv[1], "prepare") != 0 && strcmp(argv[1], "run") != 0)) {
		usage();
		return 2;
	}
	o.prepare = strcmp(argv[1], "prepare") == 0;
	int c, bad = 0;
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o.datadir = optarg; break;
		case 's': o.socket = optarg; break;
		case 'e': o.errlog = optarg; break;
		case 'o': o.status_out = optarg; break;
		case 'T': o.test = optarg; break;
		case 't': bad |= parse_ll(optarg, 1, &o.tables); break;
		case 'r': bad |= parse_ll(optarg, 1, &o.table_size); break;
		case 'n': bad |= parse_ll(optarg, 1, &o.threads); break;
		case 'x': bad |= parse_ll(optarg, 1, &o.time_s); break;
		case 'i': bad |= parse_ll(optarg, 0, &o.report_interval); break;
		case 'b': bad |= parse_ll(optarg, 1 << 20, &o.buffer_pool); break;
		case 'w': bad |= parse_ll(optarg, 1, &o.start_timeout); break;
		default: bad = 1;
		}
	}
	if (bad || optind != argc || !o.datadir || !o.socket || !o.errlog) {
		usage();
		return 2;
	}
	/* kab forks us with its signals blocked; we wait on our own terms */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	struct sigaction sa = { .sa_handler = on_stop };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (mysql_library_init(0, NULL, NULL) != 0) {
		fail("cannot initialize the MariaDB client library");
		return 1;
	}
	int r = o.prepare ? do_prepare(&o) : do_run(&o);
	mysql_library_end();
	return r < 0 ? 1 : 0;
}
