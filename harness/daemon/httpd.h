/* kabd's HTTP side: libmicrohttpd glue, routing under /api/v1/, the door
 * checks (gate.h) and who may submit, body and connection limits, TLS and
 * JSON error replies. Handlers live in api.c; they read the store or
 * enqueue, nothing else. */
#pragma once
#include "harness/daemon/gate.h"
#include "harness/base/util.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The largest request body: a job's text, JOB_TEXT_MAX (api.c checks). */
#define HTTPD_MAX_BODY (256 * 1024)
/* How long a connection has to send a whole request's headers, from its
 * accept or its last request's end (kabd --header-timeout). */
#define HTTPD_HEADER_TIMEOUT_S 10u
#define HTTPD_HEADER_TIMEOUT_MAX_S 300u
/* Over TCP, connections one client address may hold at once, of the 64:
 * a browser opens 6 to a server, wrk in bench/run.sh 4. */
#define HTTPD_MAX_PER_ADDRESS 16u

struct api;
struct httpd;

struct httpd_req {
	const char *method;
	const char *path;     /* decoded, without the /api/v1 prefix */
	int64_t id;           /* the {id} segment; 0: none */
	const char *body;     /* NUL-terminated; NULL: none */
	size_t body_len;
	void *conn;           /* the MHD connection, for httpd_query() */
	/* without conn (the unit tests): the query as "key", "value", ...,
	 * NULL, which httpd_query() and httpd_query_check() read instead */
	const char *const *args;
	const char *submitter;  /* a POST's caller: "uid 1001 (alice)" or "token" */
};

struct httpd_resp {
	int status;
	struct strbuf body;
	const char *content_type;  /* default application/json */
	const char *allow;         /* for 405 */
};

/* A query parameter, or NULL. */
const char *httpd_query(const struct httpd_req *rq, const char *key);
/* Every parameter of the query is one of allowed[0..n), none given
 * twice: 0, or -EINVAL (unknown) / -EEXIST (twice) with its key in bad. */
int httpd_query_check(const struct httpd_req *rq, const char *const *allowed, size_t n, char *bad, size_t len);
/* A 200 whose body is buf (len bytes, NUL-terminated), which the response
 * now owns; any body already there is freed. */
void httpd_body_take(struct httpd_resp *rs, char *buf, size_t len, const char *content_type);
/* {"error": "..."} with status. */
void httpd_error(struct httpd_resp *rs, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* One listener: kabd serves its unix socket and, when asked, a TCP address. */
struct httpd_conf {
	int fd;                /* listening, from listen_unix or listen_tcp; the server closes it */
	struct gate gate;      /* its Host and Origin (gate.unix_socket for the socket) */
	gid_t group;           /* unix socket: root and this group may POST (PEER_NO_GROUP: root) */
	const char *group_name;
	const char *token;     /* TCP: every request needs it; NULL: no POST over TCP */
	bool public_read;      /* TCP: GET and HEAD without the token */
	const char *tls_cert, *tls_key;  /* PEM text for https; NULL: plain http */
	const char *name;                /* for the log: the socket's path, ADDR:PORT */
	unsigned header_timeout_s;       /* 0: HTTPD_HEADER_TIMEOUT_S */
	unsigned max_per_address;        /* connections one address may hold; 0: no limit */
};

/* Starts serving conf->fd; conf's strings must outlive the server. */
int httpd_start(const struct httpd_conf *conf, struct api *api, struct httpd **ret);
void httpd_stop(struct httpd *h);
