/* kabd's HTTP side: libmicrohttpd glue, routing under /api/v1/, body and
 * connection limits, bearer tokens and JSON error replies. Handlers live
 * in api.c; they read the store or enqueue, nothing else. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "util.h"

/* The largest request body: a job's text, JOB_TEXT_MAX (api.c checks). */
#define HTTPD_MAX_BODY (256 * 1024)

struct api;
struct httpd;

struct httpd_req {
	const char *method;
	const char *path;     /* decoded, without the /api/v1 prefix */
	int64_t id;           /* the {id} segment; 0: none */
	const char *body;     /* NUL-terminated; NULL: none */
	size_t body_len;
	void *conn;           /* the MHD connection, for httpd_query() */
};

struct httpd_resp {
	int status;
	struct strbuf body;
	const char *content_type;  /* default application/json */
	const char *allow;         /* for 405 */
};

/* A query parameter, or NULL. */
const char *httpd_query(const struct httpd_req *rq, const char *key);
/* {"error": "..."} with status. */
void httpd_error(struct httpd_resp *rs, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Appends s as a JSON string literal, quotes included; NULL gives null. */
void httpd_json_str(struct strbuf *sb, const char *s);

/* "IPV4:PORT" or "[IPV6]:PORT": fills ret; ret_loopback for 127.0.0.0/8 and ::1. */
int httpd_parse_listen(const char *s, struct sockaddr_storage *ret, bool *ret_loopback);

/* Starts serving; token NULL: mutating requests need no Authorization. */
int httpd_start(const struct sockaddr_storage *addr, const char *token, struct api *api, struct httpd **ret);
void httpd_stop(struct httpd *h);
