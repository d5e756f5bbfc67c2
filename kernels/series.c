/* Patch series: mbox splitting, subject tags, the newest version, and
 * fetching a thread from a public-inbox archive. */
#include "series.h"
#include "run.h"
#include "sha256.h"
#include "util.h"

#include <ctype.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SERIES_MAX_BYTES (64u << 20)

void kseries_free(struct kseries *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].subject);
		free(s->v[i].title);
		free(s->v[i].message_id);
		free(s->v[i].text);
	}
	free(s->v);
	*s = (struct kseries){ 0 };
}

static bool parse_uint(const char *p, size_t n, unsigned *ret)
{
	if (n == 0 || n > 6)
		return false;
	unsigned v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)p[i]))
			return false;
		v = v * 10 + (unsigned)(p[i] - '0');
	}
	*ret = v;
	return true;
}

/* One word of a bracket tag: PATCH, vN, N/M; anything else (RFC, net-next) is ignored. */
static void tag_word(const char *w, size_t n, bool *patch, unsigned *version, unsigned *index, unsigned *total)
{
	const char *slash = memchr(w, '/', n);
	if (n == 5 && strncasecmp(w, "PATCH", 5) == 0)
		*patch = true;
	else if (n >= 2 && (w[0] == 'v' || w[0] == 'V'))
		parse_uint(w + 1, n - 1, version);
	else if (slash)
		if (parse_uint(w, (size_t)(slash - w), index))
			parse_uint(slash + 1, n - (size_t)(slash - w) - 1, total);
}

bool kseries_parse_subject(const char *subject, unsigned *ret_version, unsigned *ret_index, unsigned *ret_total,
			   const char **ret_title)
{
	bool patch = false;
	unsigned version = 1, index = 0, total = 0;
	const char *p = subject;
	while (*p == ' ' || *p == '\t')
		p++;
	while (*p == '[') {
		const char *end = strchr(p, ']');
		if (!end)
			break;
		for (const char *w = p + 1; w < end;) {
			while (w < end && (*w == ' ' || *w == ','))
				w++;
			const char *we = w;
			while (we < end && *we != ' ' && *we != ',')
				we++;
			if (we > w)
				tag_word(w, (size_t)(we - w), &patch, &version, &index, &total);
			w = we;
		}
		p = end + 1;
		while (*p == ' ' || *p == '\t')
			p++;
	}
	*ret_version = version ? version : 1;
	*ret_index = index;
	*ret_total = total;
	*ret_title = p;
	return patch;
}

/* A header's value, unfolded; NULL when absent. */
static char *header(const char *msg, size_t hlen, const char *name)
{
	size_t nl = strlen(name);
	const char *p = msg, *end = msg + hlen;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			struct strbuf sb = { 0 };
			const char *v = p + nl + 1;
			for (;;) {
				while (v < eol && (*v == ' ' || *v == '\t'))
					v++;
				const char *ve = eol;
				while (ve > v && (ve[-1] == '\r' || ve[-1] == ' '))
					ve--;
				if (sb.len && ve > v)
					sb_puts(&sb, " ");
				sb_append(&sb, v, (size_t)(ve - v));
				if (eol >= end || (eol[1] != ' ' && eol[1] != '\t'))
					break;
				v = eol + 1;
				eol = memchr(v, '\n', (size_t)(end - v));
				if (!eol)
					eol = end;
			}
			return sb.buf ? sb.buf : strdup("");
		}
		p = eol + 1;
	}
	return NULL;
}

enum msg_kind { MSG_PATCH, MSG_COVER, MSG_OTHER };

static bool is_reply(const char *subject)
{
	while (*subject == ' ')
		subject++;
	return strncasecmp(subject, "re:", 3) == 0 || strncasecmp(subject, "aw:", 3) == 0;
}

static bool has_diff(const char *body)
{
	return strstr(body, "\ndiff --git ") || (strstr(body, "\n--- ") && strstr(body, "\n+++ "));
}

/* Reads one message (NUL-terminated copy) into p; returns its kind. */
static enum msg_kind read_message(char *text, size_t len, struct kseries_patch *p)
{
	char *body = strstr(text, "\n\n");
	size_t hlen = body ? (size_t)(body - text) + 1 : len;
	*p = (struct kseries_patch){ .text = text, .len = len };
	p->subject = header(text, hlen, "Subject");
	char *mid = header(text, hlen, "Message-ID");
	if (mid) {
		char *s = mid, *e;
		while (*s == '<' || *s == ' ')
			s++;
		e = s + strlen(s);
		while (e > s && (e[-1] == '>' || e[-1] == ' '))
			e--;
		p->message_id = strndup(s, (size_t)(e - s));
		free(mid);
	} else {
		p->message_id = strdup("");
	}
	if (!p->subject)
		p->subject = strdup("");
	const char *title = p->subject;
	bool tagged = kseries_parse_subject(p->subject, &p->version, &p->index, &p->total, &title);
	p->title = strdup(title);
	bool diff = body && has_diff(body);
	if (is_reply(p->subject))
		return MSG_OTHER;
	if (tagged && (p->index == 0 && p->total > 0))
		return MSG_COVER;
	if (diff)
		return MSG_PATCH;
	return tagged ? MSG_COVER : MSG_OTHER;
}

static void clear_patch(struct kseries_patch *p)
{
	free(p->subject);
	free(p->title);
	free(p->message_id);
	free(p->text);
}

/* Where each message starts: a "From " line at the top or after a blank line. */
static size_t next_message(const char *text, size_t len, size_t from)
{
	for (size_t i = from; i + 5 <= len; i++) {
		if (strncmp(text + i, "From ", 5) != 0)
			continue;
		if (i == 0 || (i >= 2 && text[i - 1] == '\n' && text[i - 2] == '\n'))
			return i;
	}
	return len;
}

static int cmp_index(const void *a, const void *b)
{
	const struct kseries_patch *x = a, *y = b;
	return (x->index > y->index) - (x->index < y->index);
}

int kseries_parse(const char *text, size_t len, const char *name, struct kseries *ret, char *err, size_t errlen)
{
	struct kseries s = { 0 };
	size_t n_msgs = 0, n_cover = 0, cap = 0;
	char cover[256] = "";
	int r = 0;
	/* text before the first "From " line reads as a message without
	 * headers: it is no patch unless it has a diff */
	size_t at = 0;
	while (at < len) {
		size_t end = next_message(text, len, at + 1);
		bool blank = true;
		for (size_t i = at; i < end && blank; i++)
			blank = isspace((unsigned char)text[i]);
		if (blank) {
			at = end;
			continue;
		}
		n_msgs++;
		char *copy = strndup(text + at, end - at);
		if (!copy) {
			r = -ENOMEM;
			goto out;
		}
		struct kseries_patch p;
		enum msg_kind k = read_message(copy, end - at, &p);
		if (!p.subject || !p.title || !p.message_id) {
			clear_patch(&p);
			r = -ENOMEM;
			goto out;
		}
		if (k == MSG_COVER) {
			n_cover++;
			snprintf(cover, sizeof(cover), "%s", p.subject);
		}
		if (k != MSG_PATCH) {
			clear_patch(&p);
			at = end;
			continue;
		}
		if (s.n == cap) {
			cap = cap ? 2 * cap : 8;
			struct kseries_patch *nv = realloc(s.v, cap * sizeof(*nv));
			if (!nv) {
				clear_patch(&p);
				r = -ENOMEM;
				goto out;
			}
			s.v = nv;
		}
		s.v[s.n++] = p;
		at = end;
	}
	if (s.n == 0) {
		if (n_msgs == 0)
			snprintf(err, errlen, "%s: empty mbox: no messages, so no patches to apply", name);
		else if (n_cover)
			snprintf(err, errlen, "%s: only a cover letter (\"%s\"), no patches: give the mbox of the whole series", name, cover);
		else
			snprintf(err, errlen, "%s: none of its %zu messages is a patch (no diff found)", name, n_msgs);
		r = -EINVAL;
		goto out;
	}
	/* the newest version only, in series order */
	for (size_t i = 0; i < s.n; i++)
		if (s.v[i].version > s.version)
			s.version = s.v[i].version;
	size_t k = 0;
	for (size_t i = 0; i < s.n; i++) {
		if (s.v[i].version != s.version) {
			clear_patch(&s.v[i]);
			continue;
		}
		/* a resend of the same patch replaces the earlier copy */
		bool dup = false;
		for (size_t j = 0; j < k && s.v[i].index; j++)
			if (s.v[j].index == s.v[i].index) {
				clear_patch(&s.v[j]);
				s.v[j] = s.v[i];
				dup = true;
				break;
			}
		if (!dup)
			s.v[k++] = s.v[i];
	}
	s.n = k;
	bool numbered = true;
	for (size_t i = 0; i < s.n; i++)
		numbered = numbered && s.v[i].index > 0;
	if (numbered) {
		qsort(s.v, s.n, sizeof(*s.v), cmp_index);
		unsigned total = s.v[s.n - 1].total;
		for (size_t i = 0; i < s.n; i++)
			if (s.v[i].index != i + 1 || (total && s.n != total)) {
				unsigned missing = 1;
				while (missing <= s.n && s.v[missing - 1].index == missing)
					missing++;
				snprintf(err, errlen, "%s: v%u of the series has %zu of its %u patches: patch %u/%u is missing", name,
					 s.version, s.n, total ? total : (unsigned)s.n, missing, total);
				r = -EINVAL;
				goto out;
			}
	}
	struct sha256 c;
	sha256_init(&c);
	for (size_t i = 0; i < s.n; i++) {
		/* the blank lines between messages are not part of the series */
		size_t n = s.v[i].len;
		while (n > 0 && isspace((unsigned char)s.v[i].text[n - 1]))
			n--;
		sha256_update(&c, s.v[i].text, n);
		sha256_update(&c, "\n", 1);
	}
	sha256_hex(&c, s.hash);
	*ret = s;
	return 0;
out:
	kseries_free(&s);
	return r;
}

int kseries_write(const struct kseries *s, const char *path)
{
	FILE *f = fopen(path, "we");
	if (!f)
		return -errno;
	for (size_t i = 0; i < s->n; i++) {
		fwrite(s->v[i].text, 1, s->v[i].len, f);
		if (s->v[i].len && s->v[i].text[s->v[i].len - 1] != '\n')
			fputc('\n', f);
		fputc('\n', f);
	}
	bool bad = ferror(f);
	if (fclose(f) != 0 || bad)
		return -EIO;
	return 0;
}

static int patch_filter(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return n > 6 && strcmp(e->d_name + n - 6, ".patch") == 0;
}

static int read_dir(const char *dir, struct strbuf *out, char *err, size_t errlen)
{
	struct dirent **names;
	int n = scandir(dir, &names, patch_filter, alphasort);
	if (n < 0) {
		snprintf(err, errlen, "%s: cannot read the directory: %s", dir, strerror(errno));
		return -errno;
	}
	int r = 0;
	for (int i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		_cleanup_free_ char *text = NULL;
		size_t len;
		if (r == 0 && (r = util_read_file(path, &text, &len)) < 0)
			snprintf(err, errlen, "%s: %s", path, strerror(-r));
		if (r == 0) {
			if (out->len && out->buf[out->len - 1] != '\n')
				sb_puts(out, "\n");
			if (out->len)
				sb_puts(out, "\n");
			sb_append(out, text, len);
		}
		free(names[i]);
	}
	free(names);
	if (r == 0 && n == 0) {
		snprintf(err, errlen, "%s: no .patch files in the directory", dir);
		r = -EINVAL;
	}
	return r;
}

static size_t curl_sink(char *data, size_t size, size_t n, void *ctx)
{
	struct strbuf *sb = ctx;
	if (sb->len + size * n > SERIES_MAX_BYTES || sb_append(sb, data, size * n) < 0)
		return 0;
	return size * n;
}

static int gunzip(const char *scratch, const struct strbuf *gz, struct strbuf *out, char *err, size_t errlen)
{
	char in[4096], outp[4096];
	snprintf(in, sizeof(in), "%s/lore.mbox.gz", scratch);
	snprintf(outp, sizeof(outp), "%s/lore.mbox", scratch);
	FILE *f = fopen(in, "we");
	if (!f || fwrite(gz->buf, 1, gz->len, f) != gz->len || fclose(f) != 0) {
		snprintf(err, errlen, "%s: cannot write: %s", in, strerror(errno));
		return -EIO;
	}
	_cleanup_close_ int fd = open(outp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", outp, strerror(errno));
		return -errno;
	}
	char *argv[] = { "gzip", "-dc", in, NULL };
	struct strbuf msg = { 0 };
	struct krun o = { .stdout_fd = fd, .log_fd = -1, .capture = &msg };
	int status, r = krun(argv, &o, &status);
	if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, errlen, "the archive's t.mbox.gz does not decompress: %s", msg.buf ? msg.buf : "gzip failed");
		sb_free(&msg);
		return -EINVAL;
	}
	sb_free(&msg);
	_cleanup_free_ char *text = NULL;
	size_t len;
	if ((r = util_read_file(outp, &text, &len)) < 0)
		return r;
	return sb_append(out, text, len);
}

static int fetch_lore(const char *msgid, const char *archive, const char *scratch, struct strbuf *out, char *err,
		      size_t errlen)
{
	if (!archive || !*archive) {
		snprintf(err, errlen, "lore:%s needs an archive: set archive = URL in [job] (e.g. https://lore.kernel.org/all)", msgid);
		return -EINVAL;
	}
	while (*msgid == '<')
		msgid++;
	size_t n = strcspn(msgid, ">");
	char url[2048];
	size_t alen = strlen(archive);
	while (alen && archive[alen - 1] == '/')
		alen--;
	snprintf(url, sizeof(url), "%.*s/%.*s/t.mbox.gz", (int)alen, archive, (int)n, msgid);
	CURL *c = curl_easy_init();
	if (!c)
		return -ENOMEM;
	struct strbuf body = { 0 };
	char cerr[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, curl_sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "kab/" KAB_VERSION);
	CURLcode rc = curl_easy_perform(c);
	curl_easy_cleanup(c);
	int r = 0;
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "lore:%.*s: cannot fetch %s: %s", (int)n, msgid, url, cerr[0] ? cerr : curl_easy_strerror(rc));
		r = -EHOSTUNREACH;
	} else if (body.len >= 2 && (unsigned char)body.buf[0] == 0x1f && (unsigned char)body.buf[1] == 0x8b) {
		r = gunzip(scratch, &body, out, err, errlen);
	} else if (body.len) {
		r = sb_append(out, body.buf, body.len);
	}
	sb_free(&body);
	return r;
}

int kseries_load(const char *source, const char *archive, const char *scratch_dir, struct kseries *ret, char *err,
		 size_t errlen)
{
	struct strbuf text = { 0 };
	int r;
	if (strncmp(source, "lore:", 5) == 0) {
		r = fetch_lore(source + 5, archive, scratch_dir, &text, err, errlen);
	} else {
		struct stat st;
		if (stat(source, &st) < 0) {
			snprintf(err, errlen, "series %s: %s", source, strerror(errno));
			return -ENOENT;
		}
		if (S_ISDIR(st.st_mode)) {
			r = read_dir(source, &text, err, errlen);
		} else if (st.st_size > SERIES_MAX_BYTES) {
			snprintf(err, errlen, "series %s: larger than %u MiB", source, SERIES_MAX_BYTES >> 20);
			r = -EFBIG;
		} else {
			char *t = NULL;
			size_t len = 0;
			r = util_read_file(source, &t, &len);
			if (r < 0)
				snprintf(err, errlen, "series %s: %s", source, strerror(-r));
			else
				text = (struct strbuf){ .buf = t, .len = len, .cap = len + 1 };
		}
	}
	if (r >= 0)
		r = kseries_parse(text.buf ? text.buf : "", text.len, source, ret, err, errlen);
	sb_free(&text);
	return r;
}
