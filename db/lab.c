/* The lab's database: the door checks on its URL and credentials file,
 * connecting within a deadline, the statement helpers, the schema and its
 * numbered migrations, the machine's id. See lab.h. */
#include "db/lab.h"
#include "db/lab_priv.h"
#include "harness/base/secret.h"
#include "harness/base/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const machine_state_words[] = { LAB_MACHINE_STATE_LIST(LAB_WORD_ITEM) };
static const char *const job_state_words[] = { LAB_JOB_STATE_LIST(LAB_WORD_ITEM) };
static const char *const attempt_outcome_words[] = { LAB_ATTEMPT_OUTCOME_LIST(LAB_WORD_ITEM) };
UTIL_WORD_FUNCS(lab_machine_state, machine_state_words, LAB_MACHINE_STATE_N)
UTIL_WORD_FUNCS(lab_job_state, job_state_words, LAB_JOB_STATE_N)
UTIL_WORD_FUNCS(lab_attempt_outcome, attempt_outcome_words, LAB_ATTEMPT_OUTCOME_N)

/* ---- statements ---- */

/* the server's message on one line */
static void put_message(struct strbuf *err, const char *msg)
{
	size_t n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		n--;
	for (size_t i = 0; i < n; i++)
		sb_append(err, msg[i] == '\n' ? "; " : msg + i, msg[i] == '\n' ? 2 : 1);
}

PGresult *lab_exec(struct lab *l, const char *what, const char *sql, int n, const char *const *params, struct strbuf *err)
{
	PGresult *r = PQexecParams(l->conn, sql, n, NULL, params, NULL, NULL, 0);
	ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return r;
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	snprintf(l->sqlstate, sizeof(l->sqlstate), "%s", state && PQstatus(l->conn) == CONNECTION_OK ? state : "");
	if (err) {
		sb_printf(err, "lab: %s: ", what);
		put_message(err, r ? PQresultErrorMessage(r) : PQerrorMessage(l->conn));
		if (PQstatus(l->conn) == CONNECTION_BAD)
			sb_puts(err, " (the connection to the lab's server is lost)");
	}
	PQclear(r);
	return NULL;
}

int lab_errno(const struct lab *l)
{
	if (!*l->sqlstate || strncmp(l->sqlstate, "08", 2) == 0)
		return -ECONNRESET;
	return strcmp(l->sqlstate, "23505") == 0 ? -EEXIST : -EIO;
}

void lab_clearp(PGresult **r)
{
	PQclear(*r);
}

int lab_run(struct lab *l, const char *what, const char *sql, int n, const char *const *params, struct strbuf *err)
{
	PGresult *r = lab_exec(l, what, sql, n, params, err);
	if (!r)
		return lab_errno(l);
	PQclear(r);
	return 0;
}

int lab_exec_row(struct lab *l, const char *what, const char *sql, int n_params, const char *const *params,
		 int64_t *ret, int n, struct strbuf *err)
{
	_cleanup_pgres_ PGresult *r = lab_exec(l, what, sql, n_params, params, err);
	if (!r)
		return lab_errno(l);
	if (PQntuples(r) != 1 || PQnfields(r) < n) {
		sb_printf(err, "lab: %s: %d rows of %d columns, not one of %d", what, PQntuples(r), PQnfields(r), n);
		return -EPROTO;
	}
	for (int i = 0; i < n; i++)
		ret[i] = lab_col_i64(r, 0, i);
	return 0;
}

int lab_run_count(struct lab *l, const char *what, const char *sql, int n_params, const char *const *params, struct strbuf *err)
{
	_cleanup_pgres_ PGresult *r = lab_exec(l, what, sql, n_params, params, err);
	if (!r)
		return lab_errno(l);
	int64_t n = 0;
	util_parse_i64(PQcmdTuples(r), &n);
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

const char *lab_col(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? "" : PQgetvalue(r, row, col);
}

int64_t lab_col_i64(const PGresult *r, int row, int col)
{
	int64_t v = 0;
	if (!PQgetisnull(r, row, col))
		util_parse_i64(PQgetvalue(r, row, col), &v);
	return v;
}

int lab_begin(struct lab *l, struct strbuf *err)
{
	return lab_run(l, "starting a transaction", "BEGIN", 0, NULL, err);
}

int lab_end(struct lab *l, int r, struct strbuf *err)
{
	if (r < 0) {
		lab_run(l, "rolling back", "ROLLBACK", 0, NULL, NULL);
		return r;
	}
	int e = lab_run(l, "committing", "COMMIT", 0, NULL, err);
	return e < 0 ? e : r;
}

int lab_poll_ms(double left_s)
{
	return left_s <= 0 ? 0 : left_s > 3600 ? 3600 * 1000 : (int)(left_s * 1000) + 1;
}

/* ---- the door ---- */

static const char *option(const PQconninfoOption *opts, const char *key)
{
	for (const PQconninfoOption *o = opts; o && o->keyword; o++)
		if (strcmp(o->keyword, key) == 0)
			return o->val && *o->val ? o->val : NULL;
	return NULL;
}

/* a unix socket (a path, or Linux's abstract @name), localhost, 127.0.0.0/8, ::1 */
static bool host_is_local(const char *h, size_t n)
{
	char buf[256];
	if (n == 0)
		return true;
	if (n >= sizeof(buf))
		return false;
	memcpy(buf, h, n);
	buf[n] = '\0';
	if (buf[0] == '/' || buf[0] == '@' || strcasecmp(buf, "localhost") == 0)
		return true;
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, buf, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, buf, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/* The first host of a comma-separated list that is not local, into buf;
 * false when all are. */
static bool remote_host(const char *hosts, char *buf, size_t len)
{
	for (const char *h = hosts ? hosts : "";; h++) {
		size_t n = strcspn(h, ",");
		if (!host_is_local(h, n)) {
			snprintf(buf, len, "%.*s", (int)n, h);
			return true;
		}
		h += n;
		if (!*h)
			return false;
	}
}

static int check_options(const PQconninfoOption *opts, const char *shown, struct strbuf *err)
{
	if (option(opts, "password")) {
		sb_printf(err,
			  "%s holds a password: put it in the credentials file (a libpq password "
			  "file, 0600: [lab] credentials = FILE), not in machine.conf",
			  shown);
		return -EINVAL;
	}
	const char *hosts = option(opts, "hostaddr") ? option(opts, "hostaddr") : option(opts, "host");
	const char *sslmode = option(opts, "sslmode");
	char remote[256];
	if (remote_host(hosts, remote, sizeof(remote)) && (!sslmode || strcmp(sslmode, "verify-full") != 0)) {
		sb_printf(err,
			  "%s: the lab's host %s is not local, so kab connects to it only with sslmode=verify-full "
			  "(TLS, the server's certificate checked against sslrootcert and its name against the "
			  "host), not sslmode=%s: add ?sslmode=verify-full&sslrootcert=/etc/kab/lab-ca.pem",
			  shown, remote, sslmode ? sslmode : "prefer (libpq's default)");
		return -EINVAL;
	}
	return 0;
}

int lab_check_url(const char *url, struct strbuf *err)
{
	if (!url || !*url) {
		sb_puts(err, "no lab URL: set [lab] url = postgresql://... in machine.conf");
		return -EINVAL;
	}
	char *why = NULL;
	PQconninfoOption *opts = PQconninfoParse(url, &why);
	if (!opts) {
		sb_puts(err, "the lab URL does not parse: ");
		put_message(err, why ? why : "out of memory");
		PQfreemem(why);
		return why ? -EINVAL : -ENOMEM;
	}
	int r = check_options(opts, "the lab URL", err);
	PQconninfoFree(opts);
	return r;
}

#define LAB_ROOTCERT_WHAT "lab's CA certificate (sslrootcert)"

int lab_check_credentials(const char *path, struct strbuf *err)
{
	_cleanup_close_ int fd = -1;
	return secret_open(path, "lab's credentials file", geteuid(), &fd, err);
}

/* A file libpq reads by name, opened and checked (the credentials as a
 * secret, sslrootcert as a file kab trusts), and the name libpq is to read
 * it by: /proc/self/fd/N, the open file itself, so libpq reads what kab
 * checked even if the name were swapped since (libpq stats and opens its
 * passfile and sslrootcert by name; /proc's link is the open file). */
static int open_for_libpq(const char *path, const char *what, bool trusted, int *ret_fd, char *name, size_t size, struct strbuf *err)
{
	_cleanup_close_ int fd = -1;
	int r = trusted ? secret_open_trusted(path, what, geteuid(), &fd, err) : secret_open(path, what, geteuid(), &fd, err);
	if (r < 0)
		return r;
	snprintf(name, size, "/proc/self/fd/%d", fd);
	struct stat a, b;
	if (fstat(fd, &a) < 0 || stat(name, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		sb_printf(err, "%s: the %s is handed to libpq as %s, which does not name it here (is /proc mounted?)",
			  path, what, name);
		return -ENOENT;
	}
	*ret_fd = fd;
	fd = -1;
	return 0;
}

/* The sslrootcert that opts name, NULL for none or libpq's "system" (the
 * system's CA store, not a file of the lab's). */
static const char *rootcert_file(const PQconninfoOption *opts)
{
	const char *v = option(opts, "sslrootcert");
	return v && strcmp(v, "system") != 0 ? v : NULL;
}

/* libpq's message, each file handed to it by /proc/self/fd/N (from[i])
 * named by its own name (to[i]) */
static void put_named(struct strbuf *err, const char *msg, const char *const from[], const char *const to[], size_t n)
{
	while (*msg) {
		const char *first = NULL;
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			const char *at = *from[i] ? strstr(msg, from[i]) : NULL;
			if (at && (!first || at < first || (at == first && strlen(from[i]) > strlen(from[k])))) {
				first = at;
				k = i;
			}
		}
		if (!first)
			break;
		sb_append(err, msg, (size_t)(first - msg));
		sb_puts(err, to[k]);
		msg = first + strlen(from[k]);
	}
	sb_puts(err, msg);
}

/* ---- connecting ---- */

static void quiet_notice(void *arg, const char *message)
{
}

/* PQconnectPoll until connected, failed, or past the deadline. */
static int connect_poll(PGconn *c, double timeout_s, struct strbuf *err)
{
	double deadline = util_mono_now() + timeout_s;
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;
	while (st != PGRES_POLLING_OK) {
		if (st == PGRES_POLLING_FAILED) {
			sb_puts(err, "cannot connect: ");
			put_message(err, PQerrorMessage(c));
			return -ECONNREFUSED;
		}
		double left = deadline - util_mono_now();
		struct pollfd p = { .fd = PQsocket(c), .events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT };
		int n = left > 0 ? poll(&p, 1, lab_poll_ms(left)) : 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			sb_printf(err, "no answer within %.0f s%s%s", timeout_s, n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
			return n < 0 ? -errno : -ETIMEDOUT;
		}
		st = PQconnectPoll(c);
	}
	return 0;
}

static int connect_start(const struct lab_opts *o, const char *passfile, const char *rootcert, PGconn **ret, struct strbuf *err)
{
	char timeout[32];
	snprintf(timeout, sizeof(timeout), "%.0f", o->timeout_s > 0 ? o->timeout_s : LAB_CONNECT_TIMEOUT_S);
	/* the URL's own settings over the first two; the files kab checked over it */
	const char *keys[6] = { "application_name", "connect_timeout", "dbname" }, *vals[6] = { "kab", timeout, o->url };
	size_t n = 3;
	if (passfile) {
		keys[n] = "passfile";
		vals[n++] = passfile;
	}
	if (rootcert) {
		keys[n] = "sslrootcert";
		vals[n++] = rootcert;
	}
	keys[n] = vals[n] = NULL;
	PGconn *c = PQconnectStartParams(keys, vals, 1);
	if (!c)
		return -ENOMEM;
	*ret = c;
	return 0;
}

/* What a service file gave is checked as the URL is, before any password
 * or statement crosses the network (PQconnectStart has at most begun a
 * TCP connect, or failed, on a name it could not resolve say). */
static int check_effective(PGconn *c, struct strbuf *err)
{
	PQconninfoOption *opts = PQconninfo(c);
	if (!opts)
		return -ENOMEM;
	int r = check_options(opts, "the lab URL with its service file", err);
	PQconninfoFree(opts);
	return r;
}

/* The sslrootcert file opts name into ret (NULL: none); opts freed here.
 * Of the URL (PQconninfoParse), or of a connection (PQconninfo): what a
 * service file or $PGSSLROOTCERT gave it when the URL named none. */
static int rootcert_of(PQconninfoOption *opts, char **ret)
{
	if (!opts)
		return -ENOMEM;
	const char *v = rootcert_file(opts);
	char *path = v ? strdup(v) : NULL;
	PQconninfoFree(opts);
	if (v && !path)
		return -ENOMEM;
	*ret = path;
	return 0;
}

int lab_connect(const struct lab_opts *o, struct lab **ret, struct strbuf *err)
{
	int r = lab_check_url(o->url, err);
	if (r < 0)
		return r;
	/* open until connected: libpq 15 reads the passfile in
	 * PQconnectStartParams, a later one might when the server asks for the
	 * password; sslrootcert is read at the TLS handshake */
	_cleanup_close_ int pass_fd = -1, root_fd = -1;
	_cleanup_free_ char *root_path = NULL;
	char passfile[64] = "", rootcert[64] = "";
	if (o->credentials &&
	    (r = open_for_libpq(o->credentials, "lab's credentials file", false, &pass_fd, passfile, sizeof(passfile), err)) < 0)
		return r;
	if ((r = rootcert_of(PQconninfoParse(o->url, NULL), &root_path)) < 0)
		return r;
	if (root_path && (r = open_for_libpq(root_path, LAB_ROOTCERT_WHAT, true, &root_fd, rootcert, sizeof(rootcert), err)) < 0)
		return r;
	PGconn *c = NULL;
	if ((r = connect_start(o, o->credentials ? passfile : NULL, root_path ? rootcert : NULL, &c, err)) < 0)
		return r;
	/* one a service file or the environment named: started again with it
	 * checked, before any handshake could have read it */
	if (!root_path) {
		if ((r = rootcert_of(PQconninfo(c), &root_path)) < 0 ||
		    (root_path &&
		     (r = open_for_libpq(root_path, LAB_ROOTCERT_WHAT, true, &root_fd, rootcert, sizeof(rootcert), err)) < 0)) {
			PQfinish(c);
			return r;
		}
		if (root_path) {
			PQfinish(c);
			c = NULL;
			if ((r = connect_start(o, o->credentials ? passfile : NULL, rootcert, &c, err)) < 0)
				return r;
		}
	}
	char where[300];
	snprintf(where, sizeof(where), "lab %s%s%s: ", PQhost(c) ? PQhost(c) : "", PQport(c) ? ":" : "",
		 PQport(c) ? PQport(c) : "");
	struct strbuf why = { 0 };
	r = check_effective(c, &why);
	if (r == 0 && PQstatus(c) == CONNECTION_BAD) {
		sb_puts(&why, "cannot connect: ");
		put_message(&why, PQerrorMessage(c));
		r = -ECONNREFUSED;
	} else if (r == 0)
		r = connect_poll(c, o->timeout_s > 0 ? o->timeout_s : LAB_CONNECT_TIMEOUT_S, &why);
	if (r < 0) {
		sb_puts(err, where);
		const char *from[] = { passfile, rootcert },
			   *to[] = { o->credentials ? o->credentials : "", root_path ? root_path : "" };
		put_named(err, why.buf ? why.buf : "", from, to, 2);
		sb_free(&why);
		PQfinish(c);
		return r;
	}
	PQsetNoticeProcessor(c, quiet_notice, NULL);
	struct lab *l = calloc(1, sizeof(*l));
	if (!l) {
		PQfinish(c);
		return -ENOMEM;
	}
	l->conn = c;
	*ret = l;
	return 0;
}

void lab_close(struct lab *l)
{
	if (!l)
		return;
	PQfinish(l->conn);
	free(l);
}

int lab_ping(struct lab *l, struct strbuf *err)
{
	return lab_run(l, "asking the lab's server", "SELECT 1", 0, NULL, err);
}

void lab_closep(struct lab **l)
{
	lab_close(*l);
	*l = NULL;
}

int lab_open(const struct lab_opts *o, struct lab **ret, struct strbuf *err)
{
	struct lab *l = NULL;
	int r = lab_connect(o, &l, err);
	if (r < 0)
		return r;
	if ((r = lab_schema_upgrade(l, lab_schema_latest(), err)) < 0) {
		lab_close(l);
		return r;
	}
	*ret = l;
	return 0;
}

/* ---- the machine's id ---- */

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* 32 hex digits (machine-id) or a UUID's 36 characters, to the UUID */
static bool to_uuid(const char *s, char ret[LAB_UUID_LEN + 1])
{
	char hex[33];
	size_t n = strlen(s), k = 0;
	if (n != 32 && n != LAB_UUID_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool dash = n == LAB_UUID_LEN && (i == 8 || i == 13 || i == 18 || i == 23);
		if (dash != (s[i] == '-'))
			return false;
		if (!dash && k < 32)
			hex[k++] = s[i];
	}
	hex[k] = '\0';
	if (k != 32 || !is_hex(hex, 32))
		return false;
	snprintf(ret, LAB_UUID_LEN + 1, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
	return true;
}

static int read_id(const char *path, char ret[LAB_UUID_LEN + 1], struct strbuf *err)
{
	_cleanup_free_ char *line = NULL;
	int r = util_read_line(path, &line);
	if (r < 0)
		return r;
	if (!to_uuid(line, ret)) {
		sb_printf(err, "%s: not a machine id (32 hex digits) or a UUID", path);
		return -EINVAL;
	}
	return 0;
}

/* a random (version 4) UUID written to path once, 0600 */
static int make_own_id(const char *path, char ret[LAB_UUID_LEN + 1], struct strbuf *err)
{
	unsigned char b[16];
	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return -EIO;
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	char hex[33], line[LAB_UUID_LEN + 2];
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
	to_uuid(hex, ret);
	snprintf(line, sizeof(line), "%s\n", ret);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 && errno == EEXIST)
		return read_id(path, ret, err); /* another kab made it first */
	if (fd < 0 || util_write_fd(fd, line) < 0) {
		sb_printf(err, "%s: cannot write the machine's lab id: %s", path, strerror(fd < 0 ? errno : EIO));
		return fd < 0 ? -errno : -EIO;
	}
	return 0;
}

int lab_machine_id(const char *path, const char *own_path, char ret[LAB_UUID_LEN + 1], struct strbuf *err)
{
	char id[LAB_UUID_LEN + 1];
	int r = path ? read_id(path, id, err) : -ENOENT;
	if (r == -ENOENT && own_path)
		r = read_id(own_path, id, err);
	if (r == -ENOENT && own_path)
		r = make_own_id(own_path, id, err);
	if (r == -ENOENT)
		sb_printf(err, "%s: no machine id, and no file of kab's own to keep one in", path ? path : "");
	if (r < 0)
		return r;
	memcpy(ret, id, sizeof(id));
	return 0;
}
