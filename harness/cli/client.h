/* The HTTP client side of kab: talks to a kabd over its JSON API, on its
 * unix socket by default, or over TCP with --url. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#define CLIENT_DEFAULT_SOCKET "/run/kab/kabd.sock"
/* The most rows a page of kabd's lists holds (its API_PAGE_MAX) */
#define CLIENT_PAGE_MAX 500

/* Where to find kabd and how to prove who we are, from the options. */
struct client_conf {
	const char *url;         /* http(s)://HOST[:PORT]; NULL: $KAB_URL, $KAB_SERVER, else the socket */
	const char *socket;      /* NULL: $KAB_SOCKET or CLIENT_DEFAULT_SOCKET */
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
/* The string or number value of the first "key" in a JSON text, copied
 * into buf (strings unescaped for \" and \\ only); -ENOENT if absent. */
int client_json_field(const char *json, const char *key, char *buf, size_t len);
/* Whether a URL's host is loopback: localhost, 127.0.0.0/8, [::1]. */
bool client_url_loopback(const char *url);
