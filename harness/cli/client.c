/* libcurl transfers to kabd, and the few JSON fields the CLI needs, read
 * by jansson from a reply of bounded size. The token goes only where
 * nobody on the way can read it: over https, or plain http on loopback;
 * over the unix socket the kernel vouches for us and no token is sent. */
#include "harness/cli/client.h"
#include "harness/base/kab_api.h"
#include "harness/base/config.h"
#include "harness/base/secret.h"
#include "harness/base/util.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* The host of "scheme://host[:port][/...]" into buf, brackets dropped;
 * false when malformed or it has a user@ part. */
static bool url_host(const char *url, char *buf, size_t len)
{
	const char *p = strstr(url, "://");
	if (!p)
		return false;
	p += 3;
	size_t n = strcspn(p, "/?#"), hl;
	if (memchr(p, '@', n))
		return false;
	if (*p == '[') {
		const char *e = memchr(p, ']', n);
		if (!e)
			return false;
		p++;
		hl = (size_t)(e - p);
	} else {
		hl = strcspn(p, ":/?#");
	}
	if (hl == 0 || hl >= len)
		return false;
	memcpy(buf, p, hl);
	buf[hl] = 0;
	return true;
}

bool client_url_loopback(const char *url)
{
	char host[256];
	struct in_addr a4;
	struct in6_addr a6;
	if (!url_host(url, host, sizeof(host)))
		return false;
	if (strcasecmp(host, "localhost") == 0)
		return true;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return ntohl(a4.s_addr) >> 24 == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6) || (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
	return false;
}

static bool is_https(const char *url) { return strncasecmp(url, "https://", 8) == 0; }

static int init_url(struct client *c, const char *url)
{
	char host[256];
	if ((strncasecmp(url, "http://", 7) != 0 && !is_https(url)) || !url_host(url, host, sizeof(host))) {
		log_error("--url %s: give http://HOST:PORT or https://HOST:PORT (kabd's --listen), or --socket PATH", url);
		return -EINVAL;
	}
	size_t n = strlen(url);
	while (n > 0 && url[n - 1] == '/')
		n--;
	if (n >= sizeof(c->base)) {
		log_error("--url %.64s...: too long", url);
		return -EINVAL;
	}
	snprintf(c->base, sizeof(c->base), "%.*s", (int)n, url);
	return 0;
}

static int init_socket(struct client *c, const char *path)
{
	if (strlen(path) >= sizeof(c->socket)) {
		log_error("--socket %s: a unix socket path has at most %zu bytes", path, sizeof(c->socket) - 1);
		return -EINVAL;
	}
	snprintf(c->socket, sizeof(c->socket), "%s", path);
	snprintf(c->base, sizeof(c->base), "http://localhost");
	return 0;
}

int client_init(struct client *c, const struct client_conf *conf)
{
	memset(c, 0, sizeof(*c));
	const char *url = conf->url;
	if (!url && !conf->socket)
		url = config_str(CONFIG_URL);
	const char *sock = conf->socket ? conf->socket : config_str(CONFIG_SOCKET);
	int r = url && *url ? init_url(c, url) : init_socket(c, sock);
	if (r < 0)
		return r;
	/* over the socket the kernel tells kabd who we are: no token */
	if (conf->token_file && !c->socket[0]) {
		if (!is_https(c->base) && !client_url_loopback(c->base)) {
			log_error("will not send the token to %s: over plain http to an address that is not loopback anyone "
				  "on the network could read it; use https:// (kabd --tls-cert and --tls-key)", c->base);
			return -EPERM;
		}
		/* the user's own, closed to others (secret_open said why not) */
		if ((r = secret_read_user_token(conf->token_file, geteuid(), &c->token)) < 0)
			return r;
	}
	c->cacert = conf->cacert;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		log_error("libcurl cannot initialise");
		free(c->token);
		c->token = NULL;
		return -EIO;
	}
	return 0;
}

void client_clear(struct client *c)
{
	if (c->token)
		explicit_bzero(c->token, strlen(c->token));
	free(c->token);
	c->token = NULL;
	curl_global_cleanup();
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct strbuf *sb = ctx;
	return sb_append(sb, data, size * nmemb) < 0 ? 0 : size * nmemb;
}

/* Why the socket refuses a connection, in words that say what to do. */
static void socket_failure(const struct client *c, const char *method, const char *url)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	memcpy(sa.sun_path, c->socket, strlen(c->socket) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int err = fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? errno : ECONNRESET;
	if (fd >= 0)
		close(fd);
	if (err == EACCES || err == EPERM)
		log_error("%s %s: kabd's socket %s: %s: only root and members of kabd's group (kab) may use it "
			  "(usermod -aG kab USER, then log in again), or use --url with a token",
			  method, url, c->socket, strerror(err));
	else
		log_error("%s %s: kabd's socket %s: %s (is kabd running? --socket PATH, or --url URL)", method, url, c->socket,
			  strerror(err));
}

static void transfer_failure(const struct client *c, const char *method, const char *url, CURLcode rc, const char *detail)
{
	const char *what = detail[0] ? detail : curl_easy_strerror(rc);
	if (c->socket[0] && rc == CURLE_COULDNT_CONNECT)
		socket_failure(c, method, url);
	else if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CONNECT_ERROR)
		log_error("%s %s: %s (kabd's certificate must verify: --cacert FILE names the CA that signed it)", method, url,
			  what);
	else
		log_error("%s %s: %s (is kabd running? --url URL, $KAB_URL, or --socket PATH)", method, url, what);
}

static void set_transport(const struct client *c, CURL *h, char *errbuf)
{
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	if (c->socket[0])
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->socket);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	if (c->cacert)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->cacert);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
}

int client_request(const struct client *c, const char *method, const char *path, const char *body,
		   size_t body_len, struct client_reply *ret)
{
	char url[1024], errbuf[CURL_ERROR_SIZE] = "";
	snprintf(url, sizeof(url), "%s" KAB_API_ROOT "%s", c->base, path);
	CURL *h = curl_easy_init();
	if (!h)
		return -ENOMEM;
	struct strbuf sb = { 0 };
	struct curl_slist *hdr = NULL;
	char auth[600];
	if (c->token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", c->token);
		hdr = curl_slist_append(hdr, auth);
	}
	if (body)
		hdr = curl_slist_append(hdr, "Content-Type: " KAB_API_JOB_TYPE);
	set_transport(c, h, errbuf);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &sb);
	if (hdr)
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)body_len);
	}
	CURLcode rc = curl_easy_perform(h);
	long status = 0;
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(hdr);
	explicit_bzero(auth, sizeof(auth));
	curl_easy_cleanup(h);
	if (rc != CURLE_OK) {
		transfer_failure(c, method, url, rc, errbuf);
		sb_free(&sb);
		return -ENOTCONN;
	}
	if (!sb.buf && sb_append(&sb, "", 0) < 0)
		return -ENOMEM;
	ret->status = status;
	ret->body = sb.buf;
	ret->len = sb.len;
	return 0;
}

void client_reply_clear(struct client_reply *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
}

int client_json_parse(const struct client_reply *r, json_t **ret)
{
	if (r->len > CLIENT_JSON_MAX)
		return -EFBIG;
	json_error_t e;
	json_t *doc = json_loadb(r->body ? r->body : "", r->len, JSON_REJECT_DUPLICATES, &e);
	if (!doc || !json_is_object(doc)) {
		json_decref(doc);
		return -EBADMSG;
	}
	*ret = doc;
	return 0;
}

json_t *client_json_at(json_t *doc, const char *path)
{
	json_t *v = doc;
	while (v && *path) {
		size_t n = strcspn(path, "/");
		if (!json_is_object(v))
			return NULL;
		v = json_object_getn(v, path, n);
		path += n;
		if (*path == '/')
			path++;
	}
	return v;
}

/* The value at path that is not null, else NULL. */
static json_t *present(json_t *doc, const char *path)
{
	json_t *v = client_json_at(doc, path);
	return v && !json_is_null(v) ? v : NULL;
}

int client_json_str(json_t *doc, const char *path, char *buf, size_t len)
{
	json_t *v = present(doc, path);
	if (!v || !json_is_string(v))
		return v ? -EINVAL : -ENOENT;
	snprintf(buf, len, "%s", json_string_value(v));
	return 0;
}

int client_json_int(json_t *doc, const char *path, long long *ret)
{
	json_t *v = present(doc, path);
	if (!v || !json_is_integer(v))
		return v ? -EINVAL : -ENOENT;
	*ret = json_integer_value(v);
	return 0;
}

int client_json_num(json_t *doc, const char *path, double *ret)
{
	json_t *v = present(doc, path);
	if (!v || !json_is_number(v))
		return v ? -EINVAL : -ENOENT;
	*ret = json_number_value(v);
	return 0;
}
