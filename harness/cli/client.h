/* The HTTP client side of kab: talks to a kabd over its JSON API, on its
 * unix socket by default, or over TCP with --url. */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "harness/base/kab_api.h"

/* The most rows a page of kabd's lists holds */
#define CLIENT_PAGE_MAX KAB_API_PAGE_MAX

/* Where to find kabd and how to prove who we are, from the options. */
struct client_conf {
	const char *url;         /* http(s)://HOST[:PORT]; NULL: $KAB_URL, $KAB_SERVER, else the socket */
	const char *socket;      /* NULL: $KAB_SOCKET or CONFIG_SOCKET_DEFAULT */
	const char *token_file;  /* TCP: the bearer token; NULL: none */
	const char *cacert;      /* https: the CA that signed kabd's certificate; NULL: the system's */
};

struct client {
	char base[512];          /* the URL, no trailing /; "http://localhost" over the socket */
	char socket[108];        /* "" over TCP */
	const char *cacert;
	char *token;             /* bearer token, NULL for none */
};

struct client_reply {
	long status;             /* HTTP status, 0 when the transfer failed */
	char *body;              /* NUL-terminated, malloc'd */
	size_t len;
};

/* Refuses (-EPERM, with the reason) a token for plain http to an address
 * that is not loopback, and a URL that is not http:// or https://. */
int client_init(struct client *c, const struct client_conf *conf);
void client_clear(struct client *c);
/* Exit status of a client verb when kabd cannot be reached. */
#define CLIENT_EXIT_UNREACHABLE 3

/* method GET or POST; path under /api/v1 ("/jobs/3"); a POST carries
 * body (may be empty) as the job content type. Errors (no server, refused
 * connection, a certificate that does not verify) are printed once,
 * naming the URL or socket, and return -ENOTCONN. */
int client_request(const struct client *c, const char *method, const char *path, const char *body,
		   size_t body_len, struct client_reply *ret);
void client_reply_clear(struct client_reply *r);

/* The most bytes of a reply the client reads as JSON: a page of kabd's
 * lists is at most 1 MiB and a row (its API_PAGE_BYTES), a job's status
 * or an error far less. A longer reply is shown, never parsed. */
#define CLIENT_JSON_MAX (2u << 20)

/* A reply's body parsed as JSON (jansson), into *ret for json_decref:
 * -EFBIG over CLIENT_JSON_MAX, -EBADMSG if it is not one JSON object. */
int client_json_parse(const struct client_reply *r, json_t **ret);
/* The value at path in doc: object keys joined by '/', from the top
 * ("status" is the top-level status, not the first anywhere;
 * "progress/current/variant"); NULL when a key is missing or a step is no
 * object. Borrowed from doc. */
json_t *client_json_at(json_t *doc, const char *path);
/* The string at path copied into buf, cut to len - 1 bytes: -ENOENT when
 * absent or null, -EINVAL when not a string. */
int client_json_str(json_t *doc, const char *path, char *buf, size_t len);
/* The whole number at path: -ENOENT when absent or null, -EINVAL when
 * not an integer. */
int client_json_int(json_t *doc, const char *path, long long *ret);
/* Any number at path, the same way. */
int client_json_num(json_t *doc, const char *path, double *ret);
/* Whether a URL's host is loopback: localhost, 127.0.0.0/8, [::1]. */
bool client_url_loopback(const char *url);
