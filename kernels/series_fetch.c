/* A lore thread's mbox: ARCHIVE/<message-id>/t.mbox.gz from a
 * public-inbox archive over https (libcurl: no other protocol, redirects
 * followed by hand and only to https), or read from a local directory
 * laid out the same way. What is downloaded and what it decompresses to
 * (zlib, in kab: no gzip process) are both bounded. */
#include "kernels/series.h"
#include "harness/base/config.h"
#include "harness/base/util.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_REDIRECTS 5
#define MSGID_MAX 512

bool kseries_archive_ok(const char *archive, char *why, size_t len)
{
	if ((strncasecmp(archive, "https://", 8) == 0 && archive[8]) || archive[0] == '/')
		return true;
	if (strncasecmp(archive, "http://", 7) == 0)
		snprintf(why, len, "archive %s is plain http, which anyone on the way can answer with a series of their own: "
			 "give its https:// URL (e.g. https://lore.kernel.org/all) or a local directory of MESSAGE-ID/t.mbox.gz",
			 archive);
	else if (strstr(archive, "://"))
		snprintf(why, len, "archive %s: kab fetches threads only over https: give an https:// URL or a local directory", archive);
	else
		snprintf(why, len, "archive %s is neither an https:// URL nor an absolute path: give one of those", archive);
	return false;
}

/* A message id as it may go into a path or a URL: printable, no spaces. */
static bool msgid_ok(const char *id, bool local, struct strbuf *err)
{
	size_t n = strlen(id);
	bool ok = n > 0 && n <= MSGID_MAX && (!local || (strchr(id, '/') == NULL && strcmp(id, ".") && strcmp(id, "..")));
	for (const char *p = id; ok && *p; p++)
		ok = (unsigned char)*p > ' ' && *p != 0x7f;
	if (!ok)
		sb_printf(err, "lore:%.*s is not a message id kab fetches (1 to %d printable characters, no spaces%s)",
			  MSGID_MAX, id, MSGID_MAX, local ? ", no '/' for a local archive" : "");
	return ok;
}

/* The id as a URL path segment: what is not unreserved, a sub-delim, ':'
 * or '@' is %-escaped ('/' too). */
static void escape_segment(struct strbuf *sb, const char *id)
{
	for (const unsigned char *p = (const unsigned char *)id; *p; p++) {
		if (isalnum(*p) || strchr("-._~!$&'()*+,;=:@", *p))
			sb_append(sb, (const char *)p, 1);
		else
			sb_printf(sb, "%%%02X", *p);
	}
}

struct sink {
	struct strbuf *body;
	bool over;  /* the cap was reached */
};

static size_t sink_write(char *data, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t k = size * n;
	if (s->body->len + k > KSERIES_DOWNLOAD_MAX) {
		s->over = true;
		return 0;
	}
	return sb_append(s->body, data, k) < 0 ? 0 : k;
}

static int set_options(CURL *c, const char *url, struct sink *sink, char *cerr, struct strbuf *err)
{
	const char *ca = config_str(CONFIG_CA_BUNDLE);
	if (ca && *ca && access(ca, R_OK) < 0) {
		char buf[512];
		sb_printf(err, "%s=%s: cannot read it: %s", config_origin(CONFIG_CA_BUNDLE, buf, sizeof(buf)), ca, strerror(errno));
		return -EINVAL;
	}
	if (ca && *ca) {
		curl_easy_setopt(c, CURLOPT_CAINFO, ca);
		curl_easy_setopt(c, CURLOPT_CAPATH, NULL);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)CURLPROTO_HTTPS);
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS, (long)CURLPROTO_HTTPS);
#endif
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)KSERIES_DOWNLOAD_MAX);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, sink);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "kab/" KAB_VERSION);
	return 0;
}

/* One GET of url; a redirect's target in ret_location (empty: none). */
static int get_once(const char *url, struct strbuf *body, char *ret_location, size_t loclen, struct strbuf *err)
{
	CURL *c = curl_easy_init();
	if (!c)
		return -ENOMEM;
	char cerr[CURL_ERROR_SIZE] = "";
	struct sink sink = { .body = body };
	int r = set_options(c, url, &sink, cerr, err);
	CURLcode rc = r < 0 ? CURLE_OK : curl_easy_perform(c);
	long code = 0;
	char *loc = NULL;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &loc);
	ret_location[0] = 0;
	if (r == 0 && rc == CURLE_OK && code >= 300 && code < 400 && loc)
		snprintf(ret_location, loclen, "%s", loc);
	if (r < 0) {
		/* err is set */
	} else if (sink.over || rc == CURLE_FILESIZE_EXCEEDED) {
		sb_printf(err, "%s: the answer is larger than %u MiB, the cap on a thread's download: refused", url,
			  KSERIES_DOWNLOAD_MAX >> 20);
		r = -EFBIG;
	} else if (rc != CURLE_OK) {
		sb_printf(err, "cannot fetch %s: %s", url, cerr[0] ? cerr : curl_easy_strerror(rc));
		r = -EHOSTUNREACH;
	}
	curl_easy_cleanup(c);
	return r;
}

/* GET, with redirects followed to https only. */
static int download(const char *first, struct strbuf *body, struct strbuf *err)
{
	char url[4096], next[4096];
	snprintf(url, sizeof(url), "%s", first);
	for (int hop = 0;; hop++) {
		body->len = 0;
		int r = get_once(url, body, next, sizeof(next), err);
		if (r < 0 || !next[0])
			return r;
		if (strncasecmp(next, "https://", 8) != 0) {
			sb_printf(err, "%s redirects to %s: kab follows redirects to https:// only (refused)", url, next);
			return -EHOSTUNREACH;
		}
		if (hop == MAX_REDIRECTS) {
			sb_printf(err, "%s: more than %d redirects: refused", first, MAX_REDIRECTS);
			return -EHOSTUNREACH;
		}
		snprintf(url, sizeof(url), "%s", next);
	}
}

/* gzip data (one member or several) into out, refused past cap bytes. */
static int gunzip_capped(const struct strbuf *gz, size_t cap, struct strbuf *out)
{
	z_stream z = { .next_in = (Bytef *)gz->buf, .avail_in = (uInt)gz->len };
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	unsigned char buf[65536];
	int r = 0;
	while (r == 0) {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		int zr = inflate(&z, Z_NO_FLUSH);
		size_t got = sizeof(buf) - z.avail_out;
		if (out->len + got > cap)
			r = -EFBIG;
		else if (got && sb_append(out, (const char *)buf, got) < 0)
			r = -ENOMEM;
		else if (zr == Z_STREAM_END && z.avail_in == 0)
			break;
		else if (zr == Z_STREAM_END)
			r = inflateReset(&z) == Z_OK ? 0 : -EINVAL;
		else if (zr != Z_OK)
			r = -EINVAL; /* corrupt, or cut short (Z_BUF_ERROR with no input left) */
	}
	inflateEnd(&z);
	return r;
}

static int read_local(const char *path, struct strbuf *body, struct strbuf *err)
{
	char *text = NULL;
	size_t len;
	mode_t mode = 0;
	int r = util_read_regular(path, KSERIES_DOWNLOAD_MAX, &text, &len, &mode);
	if (r == -ENOENT)
		sb_printf(err, "%s: %s: the local archive has no such thread", path, strerror(-r));
	else if (r == -EFBIG)
		sb_printf(err, "%s: larger than %u MiB, the cap on a thread's t.mbox.gz: refused", path, KSERIES_DOWNLOAD_MAX >> 20);
	else if (r == -EINVAL || r == -EISDIR)
		sb_printf(err,
			  "%s is %s: kab reads a thread only from a regular file, never a FIFO or a device, which could block it "
			  "or never end",
			  path, util_file_kind(mode));
	else if (r < 0)
		sb_printf(err, "%s: %s", path, strerror(-r));
	if (r < 0)
		return r;
	*body = (struct strbuf){ .buf = text, .len = len, .cap = len + 1 };
	return 0;
}

int kseries_fetch(const char *msgid, const char *archive, struct strbuf *out, struct strbuf *err)
{
	char why[1024];
	if (!archive || !*archive) {
		sb_printf(err, "lore:%s needs an archive: set archive = URL in [job] (e.g. https://lore.kernel.org/all)", msgid);
		return -EINVAL;
	}
	if (!kseries_archive_ok(archive, why, sizeof(why))) {
		sb_printf(err, "lore:%s: %s", msgid, why);
		return -EINVAL;
	}
	bool local = archive[0] == '/';
	if (!msgid_ok(msgid, local, err))
		return -EINVAL;
	struct strbuf where = { 0 }, body = { 0 };
	size_t alen = strlen(archive);
	while (alen > 1 && archive[alen - 1] == '/')
		alen--;
	sb_append(&where, archive, alen);
	sb_puts(&where, "/");
	if (local)
		sb_puts(&where, msgid);
	else
		escape_segment(&where, msgid);
	sb_puts(&where, "/t.mbox.gz");
	struct strbuf detail = { 0 };
	int r = -ENOMEM;
	if (where.buf)
		r = local ? read_local(where.buf, &body, &detail) : download(where.buf, &body, &detail);
	bool gz = body.len >= 2 && (unsigned char)body.buf[0] == 0x1f && (unsigned char)body.buf[1] == 0x8b;
	if (r == 0 && gz && (r = gunzip_capped(&body, KSERIES_MBOX_MAX, out)) == -EFBIG) {
		detail.len = 0;
		sb_printf(&detail,
			  "%s decompresses to more than %u MiB, the cap on a thread's mbox: refused "
			  "(a gzip bomb, or a thread far larger than a series)",
			  where.buf, KSERIES_MBOX_MAX >> 20);
	} else if (r == -EINVAL && gz) {
		detail.len = 0;
		sb_printf(&detail, "%s does not decompress: it is not whole gzip data", where.buf);
	} else if (r == 0 && !gz) {
		r = sb_append(out, body.buf ? body.buf : "", body.len);
	}
	if (r < 0)
		sb_printf(err, "lore:%s: %s", msgid, detail.len ? detail.buf : strerror(-r));
	sb_free(&detail);
	sb_free(&where);
	sb_free(&body);
	return r;
}
