/* The HTTP client side of kab: talks to a kabd over its JSON API. */
#pragma once
#include <stddef.h>

#define CLIENT_DEFAULT_SERVER "http://127.0.0.1:8469"

struct client {
	const char *server;      /* base URL, no trailing /api/v1 */
	char *token;             /* bearer token, NULL for none */
};

struct client_reply {
	long status;             /* HTTP status, 0 when the transfer failed */
	char *body;              /* NUL-terminated, malloc'd */
	size_t len;
};

/* server: NULL for $KAB_SERVER or the default; token_file: NULL for none. */
int client_init(struct client *c, const char *server, const char *token_file);
void client_clear(struct client *c);
/* Exit status of a client verb when kabd cannot be reached. */
#define CLIENT_EXIT_UNREACHABLE 3

/* method GET or POST; path under /api/v1 ("/jobs/3"). Errors (no server,
 * refused connection) are printed once, naming the URL, and return
 * -ENOTCONN. */
int client_request(const struct client *c, const char *method, const char *path, const char *body,
		   size_t body_len, struct client_reply *ret);
void client_reply_clear(struct client_reply *r);
/* The string or number value of the first "key" in a JSON text, copied
 * into buf (strings unescaped for \" and \\ only); -ENOENT if absent. */
int client_json_field(const char *json, const char *key, char *buf, size_t len);
