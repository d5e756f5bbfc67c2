/* kabd: the kab daemon. One executor thread runs queued jobs; libmicrohttpd
 * serves /api/v1 at a lower priority; the main thread only waits for the
 * signal to stop. */
#include "api.h"
#include "executor.h"
#include "httpd.h"
#include "output.h"
#include "queue.h"
#include "statedir.h"
#include "store.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define DB_NAME "kab.db" /* in the state directory unless --db names one */
#define DEFAULT_LISTEN "127.0.0.1:8469"
#define HTTP_NICE 10
#define INSTALLED_WEB_ROOT "/usr/local/share/kab/web"

static const char usage[] =
	"usage: kabd [--db PATH] [--state-dir DIR] [--listen ADDR:PORT] [--token-file PATH] [--web-root DIR]\n"
	"  --db PATH            the database (default: " DB_NAME " in the state directory)\n"
	"  --state-dir DIR      where jobs' work directories, swap files and built kernels go\n"
	"                       (default $" STATE_DIR_ENV ", else " STATE_DIR_DEFAULT "); root's, mode 0700\n"
	"  --listen ADDR:PORT   IPv4 address and port, or [IPv6]:PORT (default " DEFAULT_LISTEN ")\n"
	"  --token-file PATH    POST requests need Authorization: Bearer <the file's token>;\n"
	"                       required to listen on a non-loopback address\n"
	"  --web-root DIR       the pages served at / (default: ../web or ../share/kab/web next to the binary\n"
	"                       if it exists, else " INSTALLED_WEB_ROOT ")\n";

/* mkdir -p of the database's directory. */
static int make_db_dir(const char *db)
{
	char dir[4096];
	if (snprintf(dir, sizeof(dir), "%s", db) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = 0;
	for (char *p = dir + 1; ; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;
		*p = 0;
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			log_error("cannot create %s: %s", dir, strerror(errno));
			return -errno;
		}
		*p = c;
		if (!c)
			break;
	}
	return 0;
}

static int read_token(const char *path, char **ret)
{
	char *t;
	size_t len;
	int r = util_read_file(path, &t, &len);
	if (r < 0) {
		log_error("cannot read the token file %s: %s", path, strerror(-r));
		return r;
	}
	while (len && (t[len - 1] == '\n' || t[len - 1] == '\r' || t[len - 1] == ' ' || t[len - 1] == '\t'))
		t[--len] = 0;
	if (len < 8 || strlen(t) != len || strpbrk(t, " \t\r\n")) {
		log_error("%s: the token must be one line of at least 8 characters without spaces", path);
		free(t);
		return -EINVAL;
	}
	*ret = t;
	return 0;
}

/* ../web next to the binary (a build tree), ../share/kab/web (installed
 * with any PREFIX), else the default install's pages. */
static void default_web_root(char *buf, size_t size)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		struct stat st;
		if (slash) {
			*slash = 0;
			static const char *const rel[] = { "../web", "../share/kab/web" };
			for (size_t i = 0; i < 2; i++)
				if (snprintf(buf, size, "%s/%s", exe, rel[i]) < (int)size && stat(buf, &st) == 0 &&
				    S_ISDIR(st.st_mode))
					return;
		}
	}
	snprintf(buf, size, "%s", INSTALLED_WEB_ROOT);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "listen", required_argument, NULL, 'l' },
		{ "token-file", required_argument, NULL, 't' },
		{ "web-root", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *db = NULL, *state_dir = NULL, *listen_at = DEFAULT_LISTEN, *token_file = NULL, *web_root = NULL;
	char web_root_buf[4096];
	int c;
	while ((c = getopt_long(argc, argv, "d:s:l:t:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 's': state_dir = optarg; break;
		case 'l': listen_at = optarg; break;
		case 't': token_file = optarg; break;
		case 'w': web_root = optarg; break;
		case 'h': printf("%s", usage); return 0;
		default: fprintf(stderr, "%s", usage); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s", usage);
		return 2;
	}
	struct sockaddr_storage addr;
	bool loopback;
	if (httpd_parse_listen(listen_at, &addr, &loopback) < 0) {
		log_error("--listen %s: give ADDR:PORT (IPv4, or [IPv6]:PORT), e.g. %s or [::1]:8469", listen_at, DEFAULT_LISTEN);
		return 2;
	}
	if (!loopback && !token_file) {
		log_error("--listen %s is not a loopback address: give --token-file so that only holders of the token can submit jobs",
			  listen_at);
		return 2;
	}
	if (!web_root) {
		default_web_root(web_root_buf, sizeof(web_root_buf));
		web_root = web_root_buf;
	}
	_cleanup_free_ char *token = NULL;
	if (token_file && read_token(token_file, &token) < 0)
		return 2;
	if (geteuid() != 0) {
		log_error("kabd needs root: its executor creates memory cgroups, swap and writes sysctl/sysfs knobs");
		return 1;
	}
	struct strbuf serr = { 0 };
	if (state_init(state_dir, &serr) < 0) {
		log_error("%s", serr.buf ? serr.buf : "the state directory cannot be used");
		sb_free(&serr);
		return 1;
	}
	char db_buf[4096];
	if (!db) {
		snprintf(db_buf, sizeof(db_buf), "%s/" DB_NAME, state_path());
		db = db_buf;
	}
	if (make_db_dir(db) < 0)
		return 1;

	/* before any thread exists, so every thread inherits the mask and the
	 * executor's sigtimedwait is the only taker besides sigwait below */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	/* a log line that cannot be written (journald restarted, stderr a
	 * closed pipe) leaves stderr /dev/null; the job goes on */
	int r = out_init();
	if (r < 0) {
		log_error("cannot set up standard input, output and error: %s", strerror(-r));
		return 1;
	}

	int lock_fd = -1, ret = 1;
	struct queue *q = NULL;
	struct httpd *h = NULL;
	if (exec_lock(&lock_fd) < 0)
		goto out;
	if (queue_start(db, pthread_self(), &q) < 0) {
		log_error("cannot start the executor on %s", db);
		goto out;
	}
	/* HTTP threads inherit this thread's nice value; the executor keeps 0 */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), HTTP_NICE) < 0)
		log_warn("cannot lower the HTTP threads' priority: %s", strerror(errno));
	struct api api = { .db_path = db, .queue = q, .web_root = web_root };
	if (httpd_start(&addr, token, &api, &h) < 0) {
		log_error("cannot listen on %s (in use, or not an address of this machine)", listen_at);
		goto out;
	}
	log_info("kabd %s: listening on %s, database %s, state %s, pages from %s%s", KAB_VERSION, listen_at, db, state_path(), web_root,
		 token ? ", POST needs the token" : "");

	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	int sig;
	while (sigwait(&stop, &sig) == 0 && sig == SIGHUP)
		;
	log_info("kabd: %s: stopping", strsignal(sig));
	ret = 0;
out:
	httpd_stop(h);
	queue_stop(q);
	if (lock_fd >= 0)
		close(lock_fd);
	return ret;
}
