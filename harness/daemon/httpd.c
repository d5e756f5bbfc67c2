/* libmicrohttpd glue for kabd. Untrusted input is checked at the door,
 * on the headers, before a body is read: a Host that is not kabd's (421),
 * an Origin that is not kabd's own (403), a missing token over TCP (401),
 * a POST from a local user who is neither root nor in kabd's group (403,
 * from the kernel's SO_PEERCRED), a POST of another content type (415),
 * paths with "..", ids that are not positive numbers and bodies over
 * HTTPD_MAX_BODY (dropped as they arrive, never buffered) never reach a
 * handler. Two pool threads per listener, a connection limit, over TCP a
 * limit per client address, a deadline for a request's headers
 * (reaper.h) and an idle timeout keep slow or half-open clients from
 * piling up. Every response says nosniff and carries a Content Security
 * Policy. */
#include "harness/daemon/httpd.h"
#include "harness/daemon/api.h"
#include "harness/daemon/reaper.h"
#include "harness/base/json.h"
#include "harness/base/kab_api.h"
#include "harness/base/peer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define POOL_THREADS 2u
#define MAX_CONNECTIONS 64u
/* idle: after the headers (a body, a response), and between requests */
#define CONNECTION_TIMEOUT_S 15u
/* a message of libmicrohttpd's said again within this long is counted */
#define MHD_LOG_REPEAT_S 60.0
#define STATIC_MAX_SIZE (4 * 1024 * 1024)
/* A body that turns out too large as it arrives (chunked, no
 * Content-Length) is dropped as it comes, so that the client still sees its 413;
 * past this much the connection is closed instead. */
#define DRAIN_MAX (8 * HTTPD_MAX_BODY)
#define TOO_BIG_MSG "the body is over %d bytes: a job file is at most %d KiB (doc/jobs.md, \"Budgets\")"
#define TOO_BIG_ARGS HTTPD_MAX_BODY, HTTPD_MAX_BODY / 1024
/* What a page of kabd's may load: the scripts, styles and API of kabd
 * itself, nothing inline, no plugin, no form sent anywhere, and no other
 * site may frame it (clickjacking). The pages (web/) are files of the web
 * root that fetch() /api/v1; their only image is the empty data: icon. */
#define CONTENT_SECURITY_POLICY \
	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " \
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

struct httpd {
	struct MHD_Daemon *d;
	struct httpd_conf conf;
	struct api *api;
	struct reaper *reaper;
	pthread_mutex_t log_mu;
	char log_last[256]; /* libmicrohttpd's last message */
	double log_until;   /* CLOCK_MONOTONIC s: its repeats are counted until then */
	unsigned log_repeats;
};

typedef void (*handler_fn)(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);

/* '#' is a job or run id segment. GET reads; POST mutates and needs the token. */
static const struct route {
	const char *pattern;
	handler_fn get, post;
} routes[] = {
	{ "/jobs", api_jobs_list, api_job_create },
	{ "/jobs/#", api_job_get, NULL },
	{ "/jobs/#/runs", api_job_runs, NULL },
	{ "/jobs/#/report", api_job_report, NULL },
	{ "/jobs/#/cancel", NULL, api_job_cancel },
	{ "/runs/#/samples", api_run_samples, NULL },
	{ "/regressions", api_regressions_list, NULL },
	{ "/regressions.atom", api_regressions_atom, NULL },
	{ "/regressions/#", api_regression_get, NULL },
	{ "/regressions/#/ack", NULL, api_regression_ack },
	{ "/regressions/#/bisect", NULL, api_regression_bisect },
	{ "/bisections", api_bisections_list, api_bisections_create },
	{ "/bisections/#", api_bisection_get, NULL },
	{ "/bisections/#/cancel", NULL, api_bisection_cancel },
	{ "/health", api_health, NULL },
	{ "/metrics", api_metrics, NULL },
	{ "/history", api_history, NULL },
	{ "/lab/machines", api_lab_machines, NULL },
	{ "/lab/jobs", api_lab_jobs, api_lab_submit },
	{ "/lab/jobs/#", api_lab_job_get, NULL },
	{ "/lab/jobs/#/report", api_lab_job_report, NULL },
	{ "/lab/history", api_lab_history, NULL },
	{ "/lab/regressions", api_lab_regressions, NULL },
};

/* A request between MHD's calls: what admit() decided, then its body. */
struct req_ctx {
	struct strbuf body;
	bool too_big;
	size_t dropped;           /* bytes of a too big body thrown away */
	bool refused;             /* answered from the headers */
	bool static_page;         /* a page from the web root, not the API */
	handler_fn fn;
	size_t path_off;          /* where the path under /api/v1 starts in the URL */
	int64_t id;
	char submitter[80];
};

void httpd_body_take(struct httpd_resp *rs, char *buf, size_t len, const char *content_type)
{
	sb_free(&rs->body);
	rs->body = (struct strbuf){ .buf = buf, .len = len, .cap = len + 1 };
	rs->status = 200;
	rs->content_type = content_type;
}

void httpd_error(struct httpd_resp *rs, int status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sb_free(&rs->body);
	rs->status = status;
	rs->content_type = "application/json";
	/* out of memory: an empty body, the status still says it */
	if (jw_dump_sb(&rs->body, json_pack("{s:o}", "error", jw_str(msg)), 0) == 0)
		sb_puts(&rs->body, "\n");
	else
		sb_free(&rs->body);
}

const char *httpd_query(const struct httpd_req *rq, const char *key)
{
	if (!rq->conn) {
		for (const char *const *a = rq->args; a && a[0]; a += 2)
			if (strcmp(a[0], key) == 0)
				return a[1];
		return NULL;
	}
	return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, key);
}

struct query_check {
	const char *const *allowed;
	size_t n;
	unsigned seen; /* a bit per allowed key */
	int err;
	char *bad;
	size_t len;
};

static enum MHD_Result check_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct query_check *qc = cls;
	size_t i = 0;
	while (i < qc->n && strcmp(qc->allowed[i], key) != 0)
		i++;
	if (i == qc->n || (qc->seen & (1u << i))) {
		qc->err = i == qc->n ? -EINVAL : -EEXIST;
		snprintf(qc->bad, qc->len, "%.64s", key);
		return MHD_NO;
	}
	qc->seen |= 1u << i;
	return MHD_YES;
}

int httpd_query_check(const struct httpd_req *rq, const char *const *allowed, size_t n, char *bad, size_t len)
{
	struct query_check qc = { .allowed = allowed, .n = n < 32 ? n : 32, .bad = bad, .len = len };
	if (!rq->conn) {
		for (const char *const *a = rq->args; a && a[0] && !qc.err; a += 2)
			check_arg(&qc, MHD_GET_ARGUMENT_KIND, a[0], a[1]);
		return qc.err;
	}
	MHD_get_connection_values(rq->conn, MHD_GET_ARGUMENT_KIND, check_arg, &qc);
	return qc.err;
}

/* Matches path against pattern; the '#' segment goes to ret_idseg. */
static bool route_match(const char *pattern, const char *path, const char **ret_idseg, size_t *ret_idlen)
{
	const char *p = pattern, *s = path;
	while (*p && *s) {
		if (*p == '#') {
			const char *e = strchr(s, '/');
			size_t n = e ? (size_t)(e - s) : strlen(s);
			if (n == 0)
				return false;
			*ret_idseg = s;
			*ret_idlen = n;
			s += n;
			p++;
			continue;
		}
		if (*p != *s)
			return false;
		p++;
		s++;
	}
	return !*p && !*s;
}

/* The file a page URL names in the web root: "/" is the job list, /jobs/ID
 * the job page, anything else one plain name directly in the root. NULL
 * for every other path, so nothing outside the root can be named. */
static const char *static_name(const char *url, char *buf, size_t size)
{
	if (strcmp(url, "/") == 0)
		return "index.html";
	if (strncmp(url, "/jobs/", 6) == 0) {
		int64_t id;
		return util_parse_i64(url + 6, &id) == 0 && id > 0 ? "job.html" : NULL;
	}
	const char *name = url + 1;
	size_t n = strlen(name);
	if (url[0] != '/' || n == 0 || n >= size || name[0] == '.')
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return NULL;
	}
	memcpy(buf, name, n + 1);
	return buf;
}

static const char *static_type(const char *name)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{ ".html", "text/html; charset=utf-8" },
		{ ".js", "text/javascript; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },
		{ ".svg", "image/svg+xml" },
	};
	const char *dot = strrchr(name, '.');
	for (size_t i = 0; dot && i < ARRAY_SIZE(types); i++)
		if (strcmp(dot, types[i].ext) == 0)
			return types[i].type;
	return NULL;
}

/* A page from the web root: a regular file, never through a symlink. */
static void static_serve(const struct httpd *h, const char *url, struct httpd_resp *rs)
{
	char buf[256], path[4096];
	const char *name = h->api->web_root ? static_name(url, buf, sizeof(buf)) : NULL;
	const char *type = name ? static_type(name) : NULL;
	if (!type || snprintf(path, sizeof(path), "%s/%s", h->api->web_root, name) >= (int)sizeof(path)) {
		httpd_error(rs, 404, "no such resource: %.200s (the API is under /api/v1/)", url);
		return;
	}
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > STATIC_MAX_SIZE) {
		httpd_error(rs, 404, "no such page: %.200s", url);
		return;
	}
	size_t want = (size_t)sb.st_size;
	char *data;
	int r = util_read_fd_exact(fd, want, &data);
	if (r < 0) {
		if (r == -ENOMEM)
			httpd_error(rs, 500, "out of memory");
		else
			httpd_error(rs, 500, "cannot read the page %s", name);
		return;
	}
	httpd_body_take(rs, data, want, type);
}

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

static bool is_read(const char *method)
{
	return strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
}

/* Host, Origin and, over TCP, the token: whether the caller is talking to
 * this kabd on purpose. False with the refusal in rs. */
static bool gate_pass(const struct httpd *h, struct MHD_Connection *c, const char *method, struct httpd_resp *rs)
{
	const struct httpd_conf *cf = &h->conf;
	const char *host = header(c, MHD_HTTP_HEADER_HOST), *origin = header(c, "Origin");
	char names[512];
	if (!gate_host_ok(&cf->gate, host)) {
		gate_describe(&cf->gate, names, sizeof(names));
		httpd_error(rs, 421, "Host \"%.100s\" is not this kabd's address (it answers to %s)", host ? host : "", names);
		return false;
	}
	if (!gate_origin_ok(&cf->gate, origin)) {
		httpd_error(rs, 403, "requests from pages of another origin (%.100s) are refused%s", origin,
			    cf->gate.unix_socket ? " on kabd's socket" : "");
		return false;
	}
	if (cf->gate.unix_socket || (cf->public_read && is_read(method)))
		return true;
	if (!cf->token) {
		httpd_error(rs, 403, "kabd takes no jobs over TCP without --token-file: submit over its unix socket");
		return false;
	}
	if (!gate_token_ok(cf->token, header(c, MHD_HTTP_HEADER_AUTHORIZATION))) {
		httpd_error(rs, 401, "this needs Authorization: Bearer TOKEN (the daemon's --token-file)");
		return false;
	}
	return true;
}

/* The route and handler of a request into ctx; false with 404 or 405. */
static bool resolve(const char *url, const char *method, struct req_ctx *ctx, struct httpd_resp *rs)
{
	if (strstr(url, "..")) {
		httpd_error(rs, 404, "no such resource");
		return false;
	}
	const char *path = NULL;
	if (strncmp(url, KAB_API_ROOT "/", strlen(KAB_API_ROOT "/")) == 0)
		path = url + strlen(KAB_API_ROOT);
	else if (strcmp(url, "/health") == 0 || strcmp(url, "/metrics") == 0)
		path = url;
	const struct route *rt = NULL;
	const char *idseg = NULL;
	size_t idlen = 0;
	for (size_t i = 0; path && !rt && i < ARRAY_SIZE(routes); i++)
		if (route_match(routes[i].pattern, path, &idseg, &idlen))
			rt = &routes[i];
	if (!rt && !path && is_read(method)) {
		ctx->static_page = true;
		return true;
	}
	if (!rt) {
		httpd_error(rs, 404, "no such resource: %.200s (the API is under /api/v1/)", url);
		return false;
	}
	if (idseg) {
		char buf[32];
		int64_t id;
		if (idlen >= sizeof(buf)) {
			httpd_error(rs, 404, "not an id (a positive number)");
			return false;
		}
		memcpy(buf, idseg, idlen);
		buf[idlen] = 0;
		if (util_parse_i64(buf, &id) < 0 || id <= 0) {
			httpd_error(rs, 404, "\"%s\" is not an id (a positive number)", buf);
			return false;
		}
		ctx->id = id;
	}
	ctx->path_off = (size_t)(path - url);
	ctx->fn = is_read(method) ? rt->get : strcmp(method, MHD_HTTP_METHOD_POST) == 0 ? rt->post : NULL;
	if (!ctx->fn) {
		httpd_error(rs, 405, "%s is not allowed on %.200s", method, url);
		rs->allow = rt->get && rt->post ? "GET, HEAD, POST" : rt->get ? "GET, HEAD" : "POST";
		return false;
	}
	return true;
}

/* Over the unix socket: whether the kernel's word on the caller (its uid
 * when it connected) lets it submit; ctx->submitter names it. */
static bool peer_pass(const struct httpd *h, struct MHD_Connection *c, struct req_ctx *ctx, struct httpd_resp *rs)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct peer p;
	int r = ci ? peer_get(ci->connect_fd, &p) : -EBADF;
	if (r < 0) {
		httpd_error(rs, 403, "cannot tell who is calling (SO_PEERCRED: %s)", strerror(-r));
		return false;
	}
	peer_describe(p.uid, ctx->submitter, sizeof(ctx->submitter));
	if (!peer_may_submit(p.uid, h->conf.group)) {
		log_warn("refused a POST on the socket from %s (pid %d): not root, not in group %s", ctx->submitter,
			 (int)p.pid, h->conf.group_name);
		httpd_error(rs, 403, "%s may not submit or cancel jobs: only root and members of group %s may "
			    "(usermod -aG %s USER, then log in again)", ctx->submitter, h->conf.group_name, h->conf.group_name);
		return false;
	}
	return true;
}

/* Every check on a request's headers, before its body is read. False
 * with the refusal in rs. */
static bool admit(const struct httpd *h, struct MHD_Connection *c, const char *url, const char *method,
		  struct req_ctx *ctx, struct httpd_resp *rs)
{
	if (!gate_pass(h, c, method, rs) || !resolve(url, method, ctx, rs))
		return false;
	if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
		return true;
	if (h->conf.gate.unix_socket) {
		if (!peer_pass(h, c, ctx, rs))
			return false;
	} else {
		snprintf(ctx->submitter, sizeof(ctx->submitter), "token");
	}
	const char *ct = header(c, MHD_HTTP_HEADER_CONTENT_TYPE);
	if (!gate_content_type_ok(ct)) {
		httpd_error(rs, 415,
			    "a POST needs Content-Type: " KAB_API_JOB_TYPE " (the job file's text, or an empty body "
			    "for cancel), not \"%.100s\"",
			    ct ? ct : "");
		return false;
	}
	const char *cl = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
	uint64_t n;
	if (cl && util_parse_u64(cl, &n) == 0 && n > HTTPD_MAX_BODY) {
		ctx->too_big = true;
		/* A body within DRAIN_MAX is read and dropped before the 413 goes
		 * out: a client still sending when the server closes may lose
		 * the reply's text (curl over the unix socket once got a 413 with no body). */
		if (n <= DRAIN_MAX)
			return true;
		httpd_error(rs, 413, TOO_BIG_MSG, TOO_BIG_ARGS);
		return false;
	}
	return true;
}

static void dispatch(struct httpd *h, struct MHD_Connection *c, const char *url, const char *method,
		     struct req_ctx *ctx, struct httpd_resp *rs)
{
	if (ctx->static_page) {
		static_serve(h, url, rs);
		return;
	}
	if (ctx->too_big) {
		httpd_error(rs, 413, TOO_BIG_MSG, TOO_BIG_ARGS);
		return;
	}
	struct httpd_req rq = {
		.method = method, .path = url + ctx->path_off, .id = ctx->id, .conn = c,
		.body = ctx->body.buf ? ctx->body.buf : "", .body_len = ctx->body.len,
		.submitter = ctx->submitter,
	};
	ctx->fn(h->api, &rq, rs);
	if (rs->status == 0)
		httpd_error(rs, 500, "the handler gave no answer");
}

static enum MHD_Result reply(struct MHD_Connection *c, struct httpd_resp *rs)
{
	struct MHD_Response *r;
	if (rs->body.len)
		r = MHD_create_response_from_buffer(rs->body.len, rs->body.buf, MHD_RESPMEM_MUST_FREE);
	else
		r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (!r) {
		sb_free(&rs->body);
		return MHD_NO;
	}
	if (rs->body.len)
		rs->body = (struct strbuf){ 0 };  /* the response owns it now */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, rs->content_type ? rs->content_type : "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	/* every response: a JSON error must never be sniffed into a page */
	MHD_add_response_header(r, MHD_HTTP_HEADER_X_CONTENT_TYPE_OPTIONS, "nosniff");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY);
	if (rs->allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, rs->allow);
	if (rs->status == 401)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	enum MHD_Result ret = MHD_queue_response(c, (unsigned)rs->status, r);
	MHD_destroy_response(r);
	return ret;
}

/* The connection's place in the reaper, made when it was accepted. */
static struct reaper_conn *conn_deadline(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* A connection opened or closed: its header deadline starts or goes. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context, enum MHD_ConnectionNotificationCode toe)
{
	struct httpd *h = cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		*socket_context = ci ? reaper_add(h->reaper, ci->connect_fd) : NULL;
		return;
	}
	reaper_remove(h->reaper, *socket_context);
	*socket_context = NULL;
}

/* libmicrohttpd's messages to kabd's log; one said again and again (the
 * connection limit, to a client that keeps connecting) is counted instead
 * of filling the journal. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct httpd *h = cls;
	char msg[sizeof(h->log_last)];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = 0;
	double now = util_mono_now();
	pthread_mutex_lock(&h->log_mu);
	bool repeat = strcmp(msg, h->log_last) == 0 && now < h->log_until;
	unsigned before = h->log_repeats;
	if (repeat) {
		h->log_repeats++;
	} else {
		memcpy(h->log_last, msg, sizeof(msg));
		h->log_until = now + MHD_LOG_REPEAT_S;
		h->log_repeats = 0;
	}
	pthread_mutex_unlock(&h->log_mu);
	if (repeat)
		return;
	if (before)
		log_warn("libmicrohttpd on %s: its message before came %u more times", h->conf.name, before);
	log_warn("libmicrohttpd on %s: %s", h->conf.name, msg);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct httpd *h = cls;
	struct req_ctx *ctx = *con_cls;
	if (!ctx) {
		/* the request's headers are all in */
		reaper_headers_done(h->reaper, conn_deadline(c));
		if (!(ctx = calloc(1, sizeof(*ctx))))
			return MHD_NO;
		*con_cls = ctx;
		struct httpd_resp rs = { 0 };
		if (admit(h, c, url, method, ctx, &rs))
			return MHD_YES;
		/* answer now; MHD closes the connection instead of reading a body */
		ctx->refused = true;
		return reply(c, &rs);
	}
	if (*upload_data_size) {
		if (ctx->refused) {
			*upload_data_size = 0;
			return MHD_YES;
		}
		if (!ctx->too_big && ctx->body.len + *upload_data_size <= HTTPD_MAX_BODY) {
			if (sb_append(&ctx->body, upload_data, *upload_data_size) < 0)
				return MHD_NO;
		} else {
			ctx->too_big = true;
			ctx->dropped += ctx->body.len + *upload_data_size;
			sb_free(&ctx->body);
			if (ctx->dropped > DRAIN_MAX)
				return MHD_NO; /* MHD closes the connection */
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (ctx->refused)
		return MHD_YES;
	struct httpd_resp rs = { 0 };
	dispatch(h, c, url, method, ctx, &rs);
	return reply(c, &rs);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct httpd *h = cls;
	/* kept alive: the next request's headers are due from now */
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		reaper_rearm(h->reaper, conn_deadline(c));
	struct req_ctx *ctx = *con_cls;
	if (!ctx)
		return;
	sb_free(&ctx->body);
	free(ctx);
	*con_cls = NULL;
}

int httpd_start(const struct httpd_conf *conf, struct api *api, struct httpd **ret)
{
	bool tls = conf->tls_cert && conf->tls_key;
	if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		log_error("this libmicrohttpd has no TLS (GnuTLS) support: --tls-cert cannot be served");
		return -EOPNOTSUPP;
	}
	struct httpd *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->conf = *conf;
	h->api = api;
	if (!h->conf.name)
		h->conf.name = conf->gate.unix_socket ? "the unix socket" : "TCP";
	unsigned header_s = conf->header_timeout_s ? conf->header_timeout_s : HTTPD_HEADER_TIMEOUT_S;
	int r = reaper_start(h->conf.name, header_s * 1000u, &h->reaper);
	if (r < 0) {
		free(h);
		return r;
	}
	pthread_mutex_init(&h->log_mu, NULL);
	struct MHD_OptionItem opts[] = {
		{ MHD_OPTION_LISTEN_SOCKET, conf->fd, NULL },
		{ MHD_OPTION_THREAD_POOL_SIZE, POOL_THREADS, NULL },
		{ MHD_OPTION_CONNECTION_LIMIT, MAX_CONNECTIONS, NULL },
		/* 0: none (the unix socket, whose clients have no address) */
		{ MHD_OPTION_PER_IP_CONNECTION_LIMIT, conf->max_per_address, NULL },
		{ MHD_OPTION_CONNECTION_TIMEOUT, CONNECTION_TIMEOUT_S, NULL },
		{ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, h },
		{ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, h },
		{ tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, (void *)conf->tls_key },
		{ tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, (void *)conf->tls_cert },
		{ MHD_OPTION_END, 0, NULL },
	};
	/* the logger first, or libmicrohttpd says that some of its messages went elsewhere */
	h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG | (tls ? MHD_USE_TLS : 0),
				0, NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
				MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	if (!h->d) {
		reaper_stop(h->reaper);
		pthread_mutex_destroy(&h->log_mu);
		free(h);
		return -EIO;
	}
	*ret = h;
	return 0;
}

void httpd_stop(struct httpd *h)
{
	if (!h)
		return;
	/* closes every connection, each leaving the reaper's list */
	MHD_stop_daemon(h->d);
	reaper_stop(h->reaper);
	pthread_mutex_destroy(&h->log_mu);
	free(h);
}
