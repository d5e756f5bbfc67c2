/* libcurl transfers to kabd, and the few JSON fields the CLI needs. */
#include "client.h"
#include "util.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int client_init(struct client *c, const char *server, const char *token_file)
{
	memset(c, 0, sizeof(*c));
	c->server = server ? server : getenv("KAB_SERVER") ? getenv("KAB_SERVER") : CLIENT_DEFAULT_SERVER;
	if (token_file) {
		int r = util_read_line(token_file, &c->token);
		if (r < 0) {
			log_error("cannot read token file %s: %s", token_file, strerror(-r));
			return r;
		}
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		log_error("libcurl cannot initialise");
		return -EIO;
	}
	return 0;
}

void client_clear(struct client *c)
{
	free(c->token);
	c->token = NULL;
	curl_global_cleanup();
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct strbuf *sb = ctx;
	return sb_append(sb, data, size * nmemb) < 0 ? 0 : size * nmemb;
}

int client_request(const struct client *c, const char *method, const char *path, const char *body,
		   size_t body_len, struct client_reply *ret)
{
	char url[1024];
	size_t sl = strlen(c->server);
	while (sl > 0 && c->server[sl - 1] == '/')
		sl--;
	snprintf(url, sizeof(url), "%.*s/api/v1%s", (int)sl, c->server, path);
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
		hdr = curl_slist_append(hdr, "Content-Type: text/plain");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &sb);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
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
	curl_easy_cleanup(h);
	if (rc != CURLE_OK) {
		log_error("%s %s: %s (is kabd running? --server URL or $KAB_SERVER)", method, url, curl_easy_strerror(rc));
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

int client_json_field(const char *json, const char *key, char *buf, size_t len)
{
	char pat[128];
	snprintf(pat, sizeof(pat), "\"%s\"", key);
	const char *p = strstr(json, pat);
	if (!p)
		return -ENOENT;
	p += strlen(pat);
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	if (*p++ != ':')
		return -EINVAL;
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	size_t n = 0;
	if (*p == '"') {
		for (p++; *p && *p != '"' && n + 1 < len; p++) {
			if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
				p++;
			buf[n++] = *p;
		}
	} else {
		while (*p && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' && n + 1 < len)
			buf[n++] = *p++;
	}
	buf[n] = 0;
	return 0;
}
