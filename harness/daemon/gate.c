/* kabd's door checks: Host, Origin, token and content type. A web page on
 * any site can make a browser send requests to 127.0.0.1; its Host is the
 * page's own name after a DNS rebinding, its Origin the page's site, and
 * a form or a no-cors fetch can only send a few content types. Each of
 * the three is refused here. */
#include "harness/daemon/gate.h"
#include "harness/base/util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void gate_init_tcp(struct gate *g, const struct sockaddr_storage *addr, bool tls)
{
	memset(g, 0, sizeof(*g));
	g->tls = tls;
	g->addr = *addr;
	if (addr->ss_family == AF_INET6)
		g->port = ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
	else
		g->port = ntohs(((const struct sockaddr_in *)addr)->sin_port);
}

/* Splits "host[:port]" or "[v6][:port]" (n bytes of s) into host, without
 * brackets, and port (-1: none). False when malformed. */
static bool split_hostport(const char *s, size_t n, char *host, size_t hlen, bool *ret_v6, long *ret_port)
{
	const char *end = s + n, *h = s, *he, *colon;
	bool v6 = n > 0 && s[0] == '[';
	if (v6) {
		h = s + 1;
		he = memchr(h, ']', n - 1);
		if (!he)
			return false;
		colon = he + 1 < end ? he + 1 : NULL;
		if (colon && *colon != ':')
			return false;
	} else {
		colon = memchr(s, ':', n);
		he = colon ? colon : end;
		if (colon && memchr(colon + 1, ':', (size_t)(end - colon - 1)))
			return false;  /* an IPv6 address needs brackets */
	}
	size_t hl = (size_t)(he - h);
	if (hl == 0 || hl >= hlen)
		return false;
	memcpy(host, h, hl);
	host[hl] = 0;
	long port = -1;
	if (colon) {
		char buf[8];
		size_t pl = (size_t)(end - colon - 1);
		uint64_t p;
		if (pl == 0 || pl >= sizeof(buf))
			return false;
		memcpy(buf, colon + 1, pl);
		buf[pl] = 0;
		if (util_parse_u64(buf, &p) < 0 || p == 0 || p > 65535)
			return false;
		port = (long)p;
	}
	*ret_v6 = v6;
	*ret_port = port;
	return true;
}

/* Whether host (without brackets) names this listener's address. */
static bool host_is_mine(const struct gate *g, const char *host, bool v6)
{
	if (v6) {
		struct in6_addr a;
		if (inet_pton(AF_INET6, host, &a) != 1)
			return false;
		const struct sockaddr_in6 *mine = (const struct sockaddr_in6 *)&g->addr;
		return IN6_IS_ADDR_LOOPBACK(&a) ||
		       (g->addr.ss_family == AF_INET6 && memcmp(&a, &mine->sin6_addr, sizeof(a)) == 0);
	}
	struct in_addr a;
	if (inet_pton(AF_INET, host, &a) == 1) {
		const struct sockaddr_in *mine = (const struct sockaddr_in *)&g->addr;
		return ntohl(a.s_addr) == INADDR_LOOPBACK ||
		       (g->addr.ss_family == AF_INET && a.s_addr == mine->sin_addr.s_addr);
	}
	if (strcasecmp(host, "localhost") == 0)
		return true;
	for (size_t i = 0; i < g->n_names; i++)
		if (strcasecmp(host, g->names[i]) == 0)
			return true;
	return false;
}

static bool hostport_ok(const struct gate *g, const char *s, size_t n)
{
	char host[256];
	bool v6;
	long port;
	if (!split_hostport(s, n, host, sizeof(host), &v6, &port))
		return false;
	long want = g->port, dflt = g->tls ? 443 : 80;
	return host_is_mine(g, host, v6) && (port == want || (port < 0 && want == dflt));
}

bool gate_host_ok(const struct gate *g, const char *host)
{
	if (g->unix_socket)
		return !host || strcasecmp(host, "localhost") == 0;
	return host && hostport_ok(g, host, strlen(host));
}

bool gate_origin_ok(const struct gate *g, const char *origin)
{
	if (!origin)
		return true;
	if (g->unix_socket)
		return false;  /* no browser talks to a unix socket */
	const char *scheme = g->tls ? "https://" : "http://";
	size_t sl = strlen(scheme);
	if (strncasecmp(origin, scheme, sl) != 0)
		return false;
	const char *hp = origin + sl;
	return !strpbrk(hp, "/?#@") && hostport_ok(g, hp, strlen(hp));
}

bool gate_content_type_ok(const char *ct)
{
	if (!ct)
		return false;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	size_t n = strcspn(ct, ";");
	while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
		n--;
	return n == strlen(KAB_API_JOB_TYPE) && strncasecmp(ct, KAB_API_JOB_TYPE, n) == 0;
}

bool gate_token_ok(const char *token, const char *authorization)
{
	if (!token || !authorization || strncmp(authorization, "Bearer ", 7) != 0)
		return false;
	const char *given = authorization + 7;
	size_t gl = strlen(given), tl = strlen(token);
	unsigned char diff = gl != tl;
	for (size_t i = 0; i < tl; i++)
		diff |= (unsigned char)(token[i] ^ (i < gl ? given[i] : 0));
	return diff == 0;
}

void gate_describe(const struct gate *g, char *buf, size_t len)
{
	if (g->unix_socket) {
		snprintf(buf, len, "localhost, or no Host");
		return;
	}
	char addr[INET6_ADDRSTRLEN] = "";
	bool v6 = g->addr.ss_family == AF_INET6;
	if (v6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&g->addr)->sin6_addr, addr, sizeof(addr));
	else
		inet_ntop(AF_INET, &((const struct sockaddr_in *)&g->addr)->sin_addr, addr, sizeof(addr));
	struct strbuf sb = { 0 };
	sb_printf(&sb, "127.0.0.1:%u, localhost:%u, [::1]:%u", g->port, g->port, g->port);
	if (strcmp(addr, "127.0.0.1") != 0 && strcmp(addr, "::1") != 0)
		sb_printf(&sb, v6 ? ", [%s]:%u" : ", %s:%u", addr, g->port);
	for (size_t i = 0; i < g->n_names; i++)
		sb_printf(&sb, ", %s:%u", g->names[i], g->port);
	snprintf(buf, len, "%s", sb.buf ? sb.buf : "");
	sb_free(&sb);
}
