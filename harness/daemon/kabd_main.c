/* kabd: the kab daemon. One executor thread runs queued jobs; libmicrohttpd
 * serves /api/v1 at a lower priority on a unix socket (local clients: root
 * and group kab may submit) and, when asked, on TCP (every request with
 * the token, https off loopback); the main thread only waits for the
 * signal to stop. */
#include "harness/daemon/api.h"
#include "harness/exec/executor.h"
#include "harness/daemon/gate.h"
#include "harness/daemon/httpd.h"
#include "harness/daemon/lab_member.h"
#include "harness/daemon/listen.h"
#include "harness/base/output.h"
#include "harness/base/peer.h"
#include "harness/daemon/queue.h"
#include "harness/base/secret.h"
#include "harness/base/config.h"
#include "harness/job/machine.h"
#include "harness/base/statedir.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define DB_NAME STATE_DB_NAME /* in the state directory unless --db names one */
#define DEFAULT_GROUP "kab"
#define HTTP_NICE 10
#define INSTALLED_WEB_ROOT "/usr/local/share/kab/web"

static const char usage[] =
	"usage: kabd [--db PATH] [--state-dir DIR] [--socket PATH] [--socket-group NAME] [--web-root DIR]\n"
	"            [--header-timeout SECONDS]\n"
	"            [--listen ADDR:PORT --token-file PATH [--public-read] [--tls-cert FILE --tls-key FILE]\n"
	"             [--server-name NAME]...]\n"
	"  --db PATH            the database (default: " DB_NAME " in the state directory)\n"
	"  --state-dir DIR      where jobs' work directories, swap files and built kernels go\n"
	"                       (default $" STATE_DIR_ENV ", else " STATE_DIR_DEFAULT "); root's, mode 0700\n"
	"  --socket PATH        the unix socket for local clients (default " CONFIG_SOCKET_DEFAULT "); root and the\n"
	"                       socket's group may submit and cancel, whoever can connect may read\n"
	"  --socket-group NAME  the socket's group (default " DEFAULT_GROUP "; without it the socket is root's only)\n"
	"  --listen ADDR:PORT   also serve TCP: IPv4 address and port, or [IPv6]:PORT; every request needs\n"
	"                       the token, and an address that is not loopback needs --tls-cert and --tls-key\n"
	"  --token-file PATH    TCP requests need Authorization: Bearer <the file's token>; the file must be\n"
	"                       root's and closed to group and others (chmod 600)\n"
	"  --public-read        TCP: GET and HEAD without the token (the web pages, reports)\n"
	"  --tls-cert FILE      TCP over https: the server's certificate chain (PEM)\n"
	"  --tls-key FILE       and its private key (PEM; root's, chmod 600)\n"
	"  --server-name NAME   TCP: one more name clients may use in Host (e.g. the certificate's)\n"
	"  --web-root DIR       the pages served at / (default: ../web or ../share/kab/web next to the binary\n"
	"                       if it exists, else " INSTALLED_WEB_ROOT ")\n"
	"  --print-config       print the configuration in force, each value with where it came from\n"
	"                       (flag, environment, machine.conf or default), and exit\n";

static void print_usage(FILE *f)
{
	fprintf(f, "%s", usage);
	fprintf(f,
		"  --header-timeout SECONDS  close a connection that has not sent a whole request's headers this long\n"
		"                       after it was accepted or its last request ended (default %u, at most %u)\n",
		HTTPD_HEADER_TIMEOUT_S, HTTPD_HEADER_TIMEOUT_MAX_S);
}

struct kabd_opts {
	const char *db, *state_dir, *socket, *group, *listen_at, *token_file, *tls_cert, *tls_key, *web_root;
	bool public_read, print_config;
	unsigned header_timeout_s;
	const char *names[GATE_MAX_NAMES];
	size_t n_names;
};

/* What the options lead to: the TCP address and the secrets, read and checked. */
struct kabd_tcp {
	bool on, loopback;
	struct sockaddr_storage addr;
	char *token, *cert, *key;
};

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

/* 0 to go on; 1 after --help; 2 after printing usage or the error. */
static int parse_opts(int argc, char **argv, struct kabd_opts *o)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "socket", required_argument, NULL, 'S' },
		{ "socket-group", required_argument, NULL, 'G' },
		{ "listen", required_argument, NULL, 'l' },
		{ "token-file", required_argument, NULL, 't' },
		{ "public-read", no_argument, NULL, 'P' },
		{ "tls-cert", required_argument, NULL, 'C' },
		{ "tls-key", required_argument, NULL, 'K' },
		{ "server-name", required_argument, NULL, 'N' },
		{ "web-root", required_argument, NULL, 'w' },
		{ "header-timeout", required_argument, NULL, 'T' }, /* whole seconds */
		{ "print-config", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	*o = (struct kabd_opts){ .socket = CONFIG_SOCKET_DEFAULT, .group = DEFAULT_GROUP, .header_timeout_s = HTTPD_HEADER_TIMEOUT_S };
	uint64_t n;
	int c;
	while ((c = getopt_long(argc, argv, "d:s:l:t:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': o->db = optarg; break;
		case 's': o->state_dir = optarg; break;
		case 'S': o->socket = optarg; break;
		case 'G': o->group = optarg; break;
		case 'l': o->listen_at = optarg; break;
		case 't': o->token_file = optarg; break;
		case 'P': o->public_read = true; break;
		case 'C': o->tls_cert = optarg; break;
		case 'K': o->tls_key = optarg; break;
		case 'N':
			if (o->n_names == GATE_MAX_NAMES) {
				log_error("--server-name: at most %d names", GATE_MAX_NAMES);
				return 2;
			}
			o->names[o->n_names++] = optarg;
			break;
		case 'w': o->web_root = optarg; break;
		case 'T':
			if (util_parse_u64(optarg, &n) < 0 || n == 0 || n > HTTPD_HEADER_TIMEOUT_MAX_S) {
				log_error("--header-timeout %s: give whole seconds from 1 to %u", optarg, HTTPD_HEADER_TIMEOUT_MAX_S);
				return 2;
			}
			o->header_timeout_s = (unsigned)n;
			break;
		case 'p': o->print_config = true; break;
		case 'h': print_usage(stdout); return 1;
		default: print_usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		print_usage(stderr);
		return 2;
	}
	return 0;
}

/* The TCP options that only make sense together; 0 or 2. */
static int check_tcp_opts(const struct kabd_opts *o, struct kabd_tcp *t)
{
	bool tcp_only = o->token_file || o->public_read || o->tls_cert || o->tls_key || o->n_names;
	if (!o->listen_at) {
		if (tcp_only) {
			log_error("--token-file, --public-read, --tls-cert, --tls-key and --server-name are for TCP: give "
				  "--listen ADDR:PORT too (on the unix socket %s its mode decides who may connect)", o->socket);
			return 2;
		}
		return 0;
	}
	if (listen_parse(o->listen_at, &t->addr, &t->loopback) < 0) {
		log_error("--listen %s: give ADDR:PORT (IPv4, or [IPv6]:PORT), e.g. 127.0.0.1:8469 or [::1]:8469", o->listen_at);
		return 2;
	}
	if (!o->tls_cert != !o->tls_key) {
		log_error("give both --tls-cert FILE and --tls-key FILE, or neither");
		return 2;
	}
	if (!t->loopback && !o->tls_cert) {
		log_error("--listen %s is not a loopback address: give --tls-cert FILE and --tls-key FILE, or the token "
			  "and every job and report would cross the network in clear", o->listen_at);
		return 2;
	}
	if (!o->token_file && !o->public_read) {
		log_error("--listen %s: give --token-file PATH: every request over TCP needs the token (or --public-read "
			  "to serve only reads over TCP)", o->listen_at);
		return 2;
	}
	t->on = true;
	return 0;
}

/* Reads the token and the TLS files; 0 or 2. */
static int load_tcp_files(const struct kabd_opts *o, struct kabd_tcp *t)
{
	size_t len;
	if (o->token_file && secret_read_token(o->token_file, &t->token) < 0)
		return 2;
	if (o->tls_key && secret_read(o->tls_key, "TLS key file", &t->key, &len) < 0)
		return 2;
	if (o->tls_cert) {
		/* it says who kabd is to its clients: root's, as the key is */
		struct strbuf why = { 0 };
		int r = secret_read_trusted(o->tls_cert, "TLS certificate", 0, &t->cert, &len, &why);
		if (r < 0) {
			if (why.buf)
				log_error("%s", why.buf);
			else
				log_error("%s: cannot read the TLS certificate: %s", o->tls_cert, strerror(-r));
			sb_free(&why);
			return 2;
		}
		if (!strstr(t->cert, "-----BEGIN CERTIFICATE-----")) {
			log_error("%s: not a PEM certificate (no -----BEGIN CERTIFICATE----- line)", o->tls_cert);
			return 2;
		}
	}
	return 0;
}

static void kabd_tcp_clear(struct kabd_tcp *t)
{
	free(t->token);
	free(t->cert);
	if (t->key)
		explicit_bzero(t->key, strlen(t->key));
	free(t->key);
}

struct listeners {
	struct httpd_conf unix_conf, tcp_conf;
	struct httpd *unix_srv, *tcp_srv;
	bool socket_bound;  /* ours to remove at exit */
};

/* Binds the socket and the TCP address, before recovery: a client that
 * connects meanwhile waits in the backlog, and nobody can take either. */
static int open_listeners(const struct kabd_opts *o, const struct kabd_tcp *t, struct listeners *l)
{
	struct httpd_conf *u = &l->unix_conf, *n = &l->tcp_conf;
	*u = (struct httpd_conf){ .fd = -1, .gate = { .unix_socket = true }, .group_name = o->group, .name = o->socket };
	*n = (struct httpd_conf){ .fd = -1, .name = o->listen_at, .max_per_address = HTTPD_MAX_PER_ADDRESS };
	u->header_timeout_s = n->header_timeout_s = o->header_timeout_s;
	if (listen_unix(o->socket, o->group, &u->fd, &u->group) < 0)
		return -EADDRNOTAVAIL;
	l->socket_bound = true;
	if (!t->on)
		return 0;
	int r = listen_tcp(&t->addr, &n->fd);
	if (r < 0) {
		log_error("cannot listen on %s: %s (in use, or not an address of this machine)", o->listen_at, strerror(-r));
		return r;
	}
	gate_init_tcp(&n->gate, &t->addr, t->cert != NULL);
	for (size_t i = 0; i < o->n_names; i++)
		n->gate.names[n->gate.n_names++] = o->names[i];
	n->token = t->token;
	n->public_read = o->public_read;
	n->tls_cert = t->cert;
	n->tls_key = t->key;
	return 0;
}

static int serve(struct listeners *l, struct api *api)
{
	int r = httpd_start(&l->unix_conf, api, &l->unix_srv);
	if (r < 0) {
		log_error("cannot serve the unix socket");
		return r;
	}
	l->unix_conf.fd = -1;  /* the server's now */
	if (l->tcp_conf.fd < 0)
		return 0;
	if ((r = httpd_start(&l->tcp_conf, api, &l->tcp_srv)) < 0) {
		log_error("cannot serve TCP%s", l->tcp_conf.tls_cert ? " with TLS (is the key the certificate's?)" : "");
		return r;
	}
	l->tcp_conf.fd = -1;
	return 0;
}

static void close_listeners(struct listeners *l, const char *socket_path)
{
	httpd_stop(l->tcp_srv);
	httpd_stop(l->unix_srv);
	if (l->tcp_conf.fd >= 0)
		close(l->tcp_conf.fd);
	if (l->unix_conf.fd >= 0)
		close(l->unix_conf.fd);
	if (l->socket_bound)
		unlink(socket_path);
}

/* Tells systemd (Type=notify) that kabd serves: units ordered after it,
 * such as the nightly submit, start only once the socket answers. */
static void notify_ready(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = path ? strlen(path) : 0;
	if (n == 0 || n >= sizeof(sa.sun_path) || (path[0] != '/' && path[0] != '@'))
		return;
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = 0;  /* an abstract socket */
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	static const char msg[] = "READY=1";
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	if (sendto(fd, msg, sizeof(msg) - 1, 0, (struct sockaddr *)&sa, len) < 0)
		log_warn("cannot tell systemd that kabd is ready (%s): %s", path, strerror(errno));
	close(fd);
}

static void log_listening(const struct kabd_opts *o, const struct listeners *l)
{
	char tcp[512] = "";
	if (l->tcp_srv)
		snprintf(tcp, sizeof(tcp), " and %s://%s (%s)", l->tcp_conf.tls_cert ? "https" : "http", o->listen_at,
			 l->tcp_conf.public_read ? l->tcp_conf.token ? "reads open, POST needs the token" : "reads only"
						 : "every request needs the token");
	log_info("kabd %s: listening on %s (%s%s may submit)%s, database %s, state %s, pages from %s", KAB_VERSION, o->socket,
		 l->unix_conf.group == PEER_NO_GROUP ? "only root" : "root and group ",
		 l->unix_conf.group == PEER_NO_GROUP ? "" : o->group, tcp, o->db, state_path(), o->web_root);
}

static const char *env(const char *name)
{
	return getenv(name);
}

/* kabd's configuration: the environment's settings, the flags that are
 * settings, machine.conf (read once, here: a change needs a restart),
 * installed for the library. 0, else every problem said and 2. */
static int setup_config(const struct kabd_opts *o, struct machine_conf *mc)
{
	struct kab_config cfg;
	struct diags d = { 0 };
	config_resolve(&cfg, env, &d);
	if (o->state_dir)
		config_set_flag(&cfg, CONFIG_STATE_DIR, "--state-dir", o->state_dir, &d);
	machine_conf_load(mc, cfg.v[CONFIG_MACHINE_CONF].value, &d);
	machine_conf_apply(mc, &cfg, &d);
	cfg.machine = mc;
	int r = 0;
	if (d.n || d.dropped) {
		diags_print(&d, stderr);
		log_error("kabd does not start: fix the configuration above (kabd --print-config shows it)");
		r = 2;
	}
	diags_free(&d);
	config_use(&cfg);
	return r;
}

/* kabd --print-config: the shared settings, machine.conf's, then kabd's
 * own options. */
static void print_config(const struct kabd_opts *o)
{
	config_print(config_get(), false, stdout);
	machine_conf_print(machine_conf_current(), stdout);
	char db[4096], web[4096], timeout[32];
	const char *db_from = "flag --db";
	if (!o->db) {
		db_from = "default: in the state directory";
		if (state_db_path(o->state_dir, db, sizeof(db)) < 0)
			snprintf(db, sizeof(db), "(the state directory is not a path)");
	} else
		snprintf(db, sizeof(db), "%s", o->db);
	config_print_line(stdout, "db", db, db_from);
	config_print_line(stdout, "socket", o->socket, strcmp(o->socket, CONFIG_SOCKET_DEFAULT) ? "flag --socket" : "default");
	config_print_line(stdout, "socket-group", o->group, strcmp(o->group, DEFAULT_GROUP) ? "flag --socket-group" : "default");
	config_print_line(stdout, "listen", o->listen_at ? o->listen_at : "(none: the unix socket only)",
			  o->listen_at ? "flag --listen" : "default");
	if (o->token_file)
		config_print_line(stdout, "token-file", o->token_file, "flag --token-file");
	config_print_line(stdout, "public-read", o->public_read ? "yes" : "no", o->public_read ? "flag --public-read" : "default");
	if (o->tls_cert)
		config_print_line(stdout, "tls-cert", o->tls_cert, "flag --tls-cert");
	if (o->tls_key)
		config_print_line(stdout, "tls-key", o->tls_key, "flag --tls-key");
	for (size_t i = 0; i < o->n_names; i++)
		config_print_line(stdout, "server-name", o->names[i], "flag --server-name");
	if (o->web_root)
		snprintf(web, sizeof(web), "%s", o->web_root);
	else
		default_web_root(web, sizeof(web));
	config_print_line(stdout, "web-root", web, o->web_root ? "flag --web-root" : "default");
	snprintf(timeout, sizeof(timeout), "%u", o->header_timeout_s);
	config_print_line(stdout, "header-timeout", timeout,
			  o->header_timeout_s != HTTPD_HEADER_TIMEOUT_S ? "flag --header-timeout" : "default");
}

static bool lab_idle(void *ctx, struct store *st)
{
	return queue_idle_empty(ctx, st);
}

static int lab_cancel(void *ctx, struct store *st, int64_t job_id)
{
	char status[32];
	int r = queue_cancel(ctx, st, job_id, status, sizeof(status));
	return r == -EALREADY ? 0 : r;
}

static void lab_wake_queue(void *ctx)
{
	queue_wake(ctx);
}

static void lab_wake_member(void *ctx)
{
	lab_member_wake(ctx);
}

/* With [lab] url in machine.conf: the member, started. A configuration
 * that cannot be used is said and kabd goes on without the lab (its local
 * work never waits for the lab); NULL then, and without a lab. */
static struct lab_member *join_lab(const char *db, struct queue *q)
{
	const char *url = config_str(CONFIG_LAB_URL);
	if (!url)
		return NULL;
	char own[4096], from[300];
	snprintf(own, sizeof(own), "%s/lab-machine-id", state_path());
	struct lab_member_conf c = {
		.url = url,
		.credentials = config_str(CONFIG_LAB_CREDENTIALS),
		.tags = config_str(CONFIG_LAB_TAGS),
		.heartbeat_s = config_seconds(CONFIG_LAB_HEARTBEAT),
		.lease_s = config_seconds(CONFIG_LAB_LEASE),
		.machine_id_path = config_str(CONFIG_LAB_MACHINE_ID),
		.own_id_path = own,
		.db_path = db,
	};
	const struct lab_member_hooks h = { .idle = lab_idle, .cancel = lab_cancel, .wake = lab_wake_queue, .ctx = q };
	struct lab_member *m = NULL;
	struct strbuf err = { 0 };
	int r = lab_member_new(&c, &h, &m, &err);
	if (r == 0 && (r = lab_member_start(m)) < 0)
		sb_printf(&err, "cannot start its thread: %s", strerror(-r));
	if (r < 0) {
		log_error("kabd: not in the lab of %s (%s): %s; kabd serves local work only", url,
			  config_origin(CONFIG_LAB_URL, from, sizeof(from)), err.buf ? err.buf : strerror(-r));
		lab_member_free(m);
		m = NULL;
	} else
		queue_on_idle(q, lab_wake_member, m);
	sb_free(&err);
	return m;
}

static int kabd(const struct kabd_opts *opts)
{
	struct kabd_opts o = *opts;
	int r;
	struct kabd_tcp tcp = { 0 };
	if ((r = check_tcp_opts(&o, &tcp)) != 0 || (r = load_tcp_files(&o, &tcp)) != 0) {
		kabd_tcp_clear(&tcp);
		return r;
	}
	char web_root_buf[4096];
	if (!o.web_root) {
		default_web_root(web_root_buf, sizeof(web_root_buf));
		o.web_root = web_root_buf;
	}
	if (geteuid() != 0) {
		log_error("kabd needs root: its executor creates memory cgroups, swap and writes sysctl/sysfs knobs");
		kabd_tcp_clear(&tcp);
		return 1;
	}
	struct strbuf serr = { 0 };
	if (state_init(o.state_dir, &serr) < 0) {
		log_error("%s", serr.buf ? serr.buf : "the state directory cannot be used");
		sb_free(&serr);
		kabd_tcp_clear(&tcp);
		return 1;
	}
	char db_buf[4096];
	if (!o.db) {
		snprintf(db_buf, sizeof(db_buf), "%s/" DB_NAME, state_path());
		o.db = db_buf;
	}
	if (make_db_dir(o.db) < 0) {
		kabd_tcp_clear(&tcp);
		return 1;
	}

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
	r = out_init();
	if (r < 0) {
		log_error("cannot set up standard input, output and error: %s", strerror(-r));
		kabd_tcp_clear(&tcp);
		return 1;
	}

	int lock_fd = -1, ret = 1;
	struct queue *q = NULL;
	struct lab_member *lab = NULL;
	struct listeners l = { .unix_conf.fd = -1, .tcp_conf.fd = -1 };
	if (exec_lock(&lock_fd) < 0)
		goto out;
	if (open_listeners(&o, &tcp, &l) < 0)
		goto out;
	if (queue_start(o.db, pthread_self(), &q) < 0) {
		log_error("cannot start the executor on %s", o.db);
		goto out;
	}
	/* HTTP threads inherit this thread's nice value; the executor keeps 0 */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), HTTP_NICE) < 0)
		log_warn("cannot lower the HTTP threads' priority: %s", strerror(errno));
	lab = join_lab(o.db, q);
	struct api api = { .db_path = o.db, .queue = q, .web_root = o.web_root, .lab = lab };
	if (serve(&l, &api) < 0)
		goto out;
	log_listening(&o, &l);
	notify_ready();

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
	close_listeners(&l, o.socket);
	if (lab)
		queue_on_idle(q, NULL, NULL);
	lab_member_free(lab);
	queue_stop(q);
	if (lock_fd >= 0)
		close(lock_fd);
	kabd_tcp_clear(&tcp);
	return ret;
}

int main(int argc, char **argv)
{
	struct kabd_opts o;
	int r = parse_opts(argc, argv, &o);
	if (r)
		return r == 1 ? 0 : r;
	struct machine_conf mc;
	r = setup_config(&o, &mc);
	if (o.print_config)
		print_config(&o);
	else if (r == 0)
		r = kabd(&o);
	machine_conf_free(&mc);
	return r;
}
