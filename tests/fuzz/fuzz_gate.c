/* libFuzzer target: kabd's door checks (gate.c) on arbitrary header
 * values, for a TCP listener with and without TLS and for the unix
 * socket. Besides not crashing, what one check accepts must agree with
 * another: a Host accepted over http makes "http://HOST" an accepted
 * Origin, and nothing is accepted over the socket but "localhost". */
#include "harness/daemon/gate.h"
#include "harness/daemon/listen.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 512 || memchr(data, 0, size))
		return 0;
	char s[520], origin[540];
	memcpy(s, data, size);
	s[size] = 0;
	static const char *const listens[] = { "127.0.0.1:8469", "10.0.0.5:443", "[fd00::5]:8469", "[::1]:80" };
	for (size_t i = 0; i < sizeof(listens) / sizeof(listens[0]); i++) {
		struct sockaddr_storage a;
		bool lo;
		if (listen_parse(listens[i], &a, &lo) < 0)
			abort();
		for (int tls = 0; tls < 2; tls++) {
			struct gate g;
			gate_init_tcp(&g, &a, tls);
			g.names[g.n_names++] = "kab.example";
			bool host = gate_host_ok(&g, s);
			snprintf(origin, sizeof(origin), "%s://%s", tls ? "https" : "http", s);
			if (host && !strpbrk(s, "/?#@") && !gate_origin_ok(&g, origin))
				abort();
			gate_origin_ok(&g, s);
		}
	}
	struct gate u = { .unix_socket = true };
	if (gate_host_ok(&u, s) && strcasecmp(s, "localhost") != 0)
		abort();
	if (gate_origin_ok(&u, s))
		abort();
	gate_content_type_ok(s);
	gate_token_ok("fuzz-token-1234", s);
	return 0;
}
