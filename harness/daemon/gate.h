/* kabd's door checks, made on every request before any handler sees it:
 * the Host a client named (DNS rebinding), the Origin a browser sent
 * (cross-site requests), the bearer token, and the content type of a
 * POST. Plain functions of header strings, so unit tests feed them. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "harness/base/kab_api.h"

#define GATE_MAX_NAMES 8

struct gate {
	bool unix_socket;          /* Host "localhost" or none; no Origin */
	bool tls;                  /* the scheme of kabd's own origin: https */
	uint16_t port;
	struct sockaddr_storage addr;  /* the TCP address listened on */
	const char *names[GATE_MAX_NAMES];  /* more host names (--server-name) */
	size_t n_names;
};

/* Fills g for a TCP listener on addr. */
void gate_init_tcp(struct gate *g, const struct sockaddr_storage *addr, bool tls);
/* host: the Host header, NULL when absent. True when it names this
 * listener: for TCP 127.0.0.1, localhost, [::1], the address listened on
 * or a --server-name, with the port (none: the scheme's default); for the
 * unix socket "localhost" or no Host. */
bool gate_host_ok(const struct gate *g, const char *host);
/* origin: the Origin header, NULL when absent (not a browser, or a
 * same-origin GET). True when absent, or kabd's own scheme://host[:port]. */
bool gate_origin_ok(const struct gate *g, const char *origin);
/* A Content-Type naming KAB_API_JOB_TYPE (any case, parameters allowed). */
bool gate_content_type_ok(const char *content_type);
/* authorization: the Authorization header, NULL when absent. Compares
 * every byte of "Bearer TOKEN" whatever the input, so its time says
 * nothing about where a guess differs. */
bool gate_token_ok(const char *token, const char *authorization);
/* The host names a client may use, for error messages: "127.0.0.1:8469,
 * localhost:8469, [::1]:8469, 10.0.0.5:8469". */
void gate_describe(const struct gate *g, char *buf, size_t len);
