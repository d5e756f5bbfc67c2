/* Patch series: mbox splitting, subject tags, which version is taken and
 * whether it is its author's. Fetching a thread is series_fetch.c's. */
#include "kernels/series.h"
#include "kernels/sha256.h"
#include "harness/base/util.h"

#include <ctype.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* How many versions, senders of each, and problems a refusal lists. */
#define LIST_VERSIONS 12
#define LIST_SENDERS 4
#define LIST_PROBLEMS 8

void kseries_free(struct kseries *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].subject);
		free(s->v[i].title);
		free(s->v[i].message_id);
		free(s->v[i].from);
		free(s->v[i].sender);
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

/* "A Developer <Dev@Example.org>" -> "dev@example.org"; no <>: the value. */
static char *sender_of(const char *from)
{
	const char *lt = strrchr(from, '<'), *gt = lt ? strchr(lt, '>') : NULL;
	const char *s = lt && gt ? lt + 1 : from, *e = lt && gt ? gt : from + strlen(from);
	while (s < e && isspace((unsigned char)*s))
		s++;
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	char *a = strndup(s, (size_t)(e - s));
	for (char *p = a; p && *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return a;
}

static char *message_id_of(const char *text, size_t hlen)
{
	char *mid = header(text, hlen, "Message-ID");
	if (!mid)
		return strdup("");
	char *s = mid, *e;
	while (*s == '<' || *s == ' ')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == '>' || e[-1] == ' '))
		e--;
	char *id = strndup(s, (size_t)(e - s));
	free(mid);
	return id;
}

/* Reads one message (NUL-terminated copy) into p; returns its kind. */
static enum msg_kind read_message(char *text, size_t len, struct kseries_patch *p)
{
	char *body = strstr(text, "\n\n");
	size_t hlen = body ? (size_t)(body - text) + 1 : len;
	*p = (struct kseries_patch){ .text = text, .len = len };
	p->subject = header(text, hlen, "Subject");
	p->message_id = message_id_of(text, hlen);
	p->from = header(text, hlen, "From");
	if (!p->subject)
		p->subject = strdup("");
	if (!p->from)
		p->from = strdup("");
	p->sender = p->from ? sender_of(p->from) : NULL;
	const char *title = p->subject ? p->subject : "";
	bool tagged = kseries_parse_subject(title, &p->version, &p->index, &p->total, &title);
	p->title = strdup(title);
	bool diff = body && has_diff(body);
	if (!p->subject || is_reply(p->subject))
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
	free(p->from);
	free(p->sender);
	free(p->text);
	*p = (struct kseries_patch){ 0 };
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

/* The thread's patches and cover letters, in file order. */
struct thread {
	struct kseries_patch *v;
	bool *cover;
	size_t n, cap;
	size_t n_msgs, n_cover;
	char cover_subject[256];
	const char *name;
};

static void thread_free(struct thread *t)
{
	for (size_t i = 0; i < t->n; i++)
		clear_patch(&t->v[i]);
	free(t->v);
	free(t->cover);
	*t = (struct thread){ 0 };
}

static int thread_add(struct thread *t, struct kseries_patch *p, bool cover)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;
		struct kseries_patch *nv = realloc(t->v, cap * sizeof(*nv));
		if (nv)
			t->v = nv;
		bool *nc = nv ? realloc(t->cover, cap * sizeof(*nc)) : NULL;
		if (!nc)
			return -ENOMEM;
		t->cover = nc;
		t->cap = cap;
	}
	t->cover[t->n] = cover;
	t->v[t->n++] = *p;
	return 0;
}

/* The message (a NUL-terminated copy of len bytes) has a NUL byte at nul:
 * refused, naming it. git am cannot apply such a message, and a message
 * cut at the NUL would not be the one sent. */
static int refuse_nul(const struct thread *t, const char *msg, size_t len, const char *nul, struct strbuf *err)
{
	const char *body = memmem(msg, len, "\n\n", 2);
	size_t hlen = body ? (size_t)(body - msg) + 1 : len;
	_cleanup_free_ char *subject = header(msg, hlen, "Subject");
	_cleanup_free_ char *mid = message_id_of(msg, hlen);
	sb_printf(err,
		  "%s: message %zu of the mbox (\"%.200s\" <%.200s>) has a NUL byte, at byte %zu of the message: "
		  "git am cannot apply a message with NUL bytes, and kab takes no part of a message: refused; "
		  "put the messages you trust in an mbox and give that",
		  t->name, t->n_msgs, subject ? subject : "(no Subject)", mid && *mid ? mid : "no Message-ID",
		  (size_t)(nul - msg));
	return -EINVAL;
}

/* Splits text into messages, keeping patches and cover letters. Text
 * before the first "From " line reads as a message without headers: it
 * is no patch unless it has a diff. A message with a NUL byte is refused. */
static int split(const char *text, size_t len, struct thread *t, struct strbuf *err)
{
	for (size_t at = 0; at < len;) {
		size_t end = next_message(text, len, at + 1);
		bool blank = true;
		for (size_t i = at; i < end && blank; i++)
			blank = isspace((unsigned char)text[i]);
		if (blank) {
			at = end;
			continue;
		}
		t->n_msgs++;
		/* every later step reads the copy as a string, its length as the
		 * allocation's: no NUL inside it */
		_cleanup_free_ char *copy = malloc(end - at + 1);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, text + at, end - at);
		copy[end - at] = 0;
		const char *nul = memchr(copy, 0, end - at);
		if (nul)
			return refuse_nul(t, copy, end - at, nul, err);
		struct kseries_patch p;
		enum msg_kind k = read_message(copy, end - at, &p);
		copy = NULL; /* p.text */
		if (!p.subject || !p.title || !p.message_id || !p.from || !p.sender) {
			clear_patch(&p);
			return -ENOMEM;
		}
		if (k != MSG_OTHER && t->n == KSERIES_PATCHES_MAX) {
			clear_patch(&p);
			sb_printf(err,
				  "%s: more than %u patches and cover letters (all versions together), the cap on a series: "
				  "refused; give an mbox of the version you want",
				  t->name, KSERIES_PATCHES_MAX);
			return -EFBIG;
		}
		if (k == MSG_COVER) {
			t->n_cover++;
			snprintf(t->cover_subject, sizeof(t->cover_subject), "%s", p.subject);
		}
		if (k == MSG_OTHER || thread_add(t, &p, k == MSG_COVER) < 0) {
			clear_patch(&p);
			if (k != MSG_OTHER)
				return -ENOMEM;
		}
		at = end;
	}
	return 0;
}

static int no_patches(const struct thread *t, struct strbuf *err)
{
	if (t->n_msgs == 0)
		sb_printf(err, "%s: empty mbox: no messages, so no patches to apply", t->name);
	else if (t->n_cover)
		sb_printf(err, "%s: only a cover letter (\"%s\"), no patches: give the mbox of the whole series",
			  t->name, t->cover_subject);
	else
		sb_printf(err, "%s: none of its %zu messages is a patch (no diff found)", t->name, t->n_msgs);
	return -EINVAL;
}

/* A message's version and sender, and where it is, for sorting. */
struct sender_at {
	unsigned version;
	const char *sender;
	size_t at;
};

static int cmp_sender_at(const void *a, const void *b)
{
	const struct sender_at *x = a, *y = b;
	if (x->version != y->version)
		return x->version < y->version ? -1 : 1;
	int c = strcmp(x->sender, y->sender);
	return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* first[i]: message i is the first of its version from its sender. One
 * sort, so a thread of many versions and senders costs n log n. */
static int first_senders(const struct thread *t, bool *first)
{
	struct sender_at *v = calloc(t->n ? t->n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++)
		v[i] = (struct sender_at){ t->v[i].version, t->v[i].sender, i };
	qsort(v, t->n, sizeof(*v), cmp_sender_at);
	for (size_t i = 0; i < t->n; i++)
		first[v[i].at] = i == 0 || v[i].version != v[i - 1].version || strcmp(v[i].sender, v[i - 1].sender) != 0;
	free(v);
	return 0;
}

/* "v1: 2 patches from A <a@x>; v2: 3 patches and a cover letter from A <a@x>, M <m@y>" */
static int list_versions(const struct thread *t, struct strbuf *sb)
{
	_cleanup_free_ bool *first = calloc(t->n ? t->n : 1, sizeof(*first));
	if (!first || first_senders(t, first) < 0)
		return -ENOMEM;
	unsigned last = 0;
	for (size_t shown = 0; shown < LIST_VERSIONS; shown++) {
		unsigned v = 0;
		for (size_t i = 0; i < t->n; i++)
			if (t->v[i].version > last && (!v || t->v[i].version < v))
				v = t->v[i].version;
		if (!v)
			return 0;
		size_t patches = 0, covers = 0, senders = 0;
		for (size_t i = 0; i < t->n; i++)
			if (t->v[i].version == v)
				t->cover[i] ? covers++ : patches++;
		sb_printf(sb, "%sv%u: %zu patch%s%s from ", shown ? "; " : "", v, patches, patches == 1 ? "" : "es",
			  covers ? " and a cover letter" : "");
		for (size_t i = 0; i < t->n; i++)
			if (t->v[i].version == v && first[i] && senders++ < LIST_SENDERS)
				sb_printf(sb, "%s%s", senders > 1 ? ", " : "", *t->v[i].from ? t->v[i].from : "(no From)");
		if (senders > LIST_SENDERS)
			sb_printf(sb, " and %zu more", senders - LIST_SENDERS);
		last = v;
	}
	sb_puts(sb, "; and more");
	return 0;
}

/* The version to take, as kseries_parse says; 0 with err set when none. */
static unsigned choose_version(const struct thread *t, unsigned want, const char *anchor, struct strbuf *err)
{
	bool have = false, several = false;
	for (size_t i = 0; i < t->n; i++) {
		have = have || (!t->cover[i] && t->v[i].version == want);
		several = several || t->v[i].version != t->v[0].version;
	}
	if (want && have)
		return want;
	for (size_t i = 0; !want && anchor && *anchor && i < t->n; i++)
		if (strcmp(t->v[i].message_id, anchor) == 0)
			return t->v[i].version;
	if (!want && !several)
		return t->v[0].version;
	struct strbuf sb = { 0 };
	if (list_versions(t, &sb) < 0) {
		sb_free(&sb);
		sb_printf(err, "%s: out of memory", t->name);
		return 0;
	}
	if (want)
		sb_printf(err, "%s: the thread has no patches of v%u; it has %s: take one of those (series = ... vN)",
			  t->name, want, sb.buf ? sb.buf : "");
	else
		sb_printf(err,
			  "%s: the thread has more than one version of the series (%s): say which to take, "
			  "series = ... vN (an injected [PATCH vN] from someone else would otherwise be a candidate too)",
			  t->name, sb.buf ? sb.buf : "");
	sb_free(&sb);
	return 0;
}

static void describe(struct strbuf *sb, const struct kseries_patch *p)
{
	sb_printf(sb, "\"%s\" <%s> from %s", p->subject, p->message_id, *p->from ? p->from : "(no From)");
}

/* A patch's number and where it is, for sorting. */
struct number_at {
	unsigned index;
	size_t at;
};

static int cmp_number_at(const void *a, const void *b)
{
	const struct number_at *x = a, *y = b;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

/* same[i]: for a numbered patch of version v, the first patch of v with
 * its number when that is another (a duplicate), else SIZE_MAX. One
 * sort: n log n, where comparing every pair was n^2 / 2. */
static int find_duplicates(const struct thread *t, unsigned v, size_t *same)
{
	struct number_at *v_at = calloc(t->n ? t->n : 1, sizeof(*v_at));
	if (!v_at)
		return -ENOMEM;
	size_t m = 0;
	for (size_t i = 0; i < t->n; i++) {
		same[i] = SIZE_MAX;
		if (!t->cover[i] && t->v[i].version == v && t->v[i].index)
			v_at[m++] = (struct number_at){ t->v[i].index, i };
	}
	qsort(v_at, m, sizeof(*v_at), cmp_number_at);
	for (size_t k = 1, run = 0; k < m; k++) {
		if (v_at[k].index != v_at[run].index)
			run = k;
		else
			same[v_at[k].at] = v_at[run].at;
	}
	free(v_at);
	return 0;
}

/* Starts the next problem of a refusal in sb: false once LIST_PROBLEMS
 * are there (the rest are only counted). */
static bool next_problem(struct strbuf *sb, size_t *problems)
{
	if ((*problems)++ >= LIST_PROBLEMS)
		return false;
	if (*problems > 1)
		sb_puts(sb, "; ");
	return true;
}

/* Everything that makes version v not one author's series: patches (and
 * cover letters) from someone other than the author, two patches with
 * one number (each named with the first of its number). The author: the
 * sender of the first cover letter, else of the first patch. */
static int check_author(const struct thread *t, unsigned v, struct kseries *s, struct strbuf *err)
{
	const struct kseries_patch *author = NULL;
	for (size_t i = 0; i < t->n && !author; i++)
		if (t->cover[i] && t->v[i].version == v)
			author = &t->v[i];
	for (size_t i = 0; i < t->n && !author; i++)
		if (t->v[i].version == v)
			author = &t->v[i];
	_cleanup_free_ size_t *same = calloc(t->n ? t->n : 1, sizeof(*same));
	if (!same || find_duplicates(t, v, same) < 0)
		return -ENOMEM;
	struct strbuf sb = { 0 };
	size_t problems = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct kseries_patch *p = &t->v[i];
		if (p->version != v)
			continue;
		if (strcmp(p->sender, author->sender) != 0 && next_problem(&sb, &problems)) {
			describe(&sb, p);
			sb_printf(&sb, " is not from %s, the sender of %s", author->from, t->cover[author - t->v] ? "its cover letter" : "its first patch");
		}
		if (same[i] != SIZE_MAX && next_problem(&sb, &problems)) {
			sb_printf(&sb, "two patches are numbered %u/%u: ", p->index, p->total);
			describe(&sb, &t->v[same[i]]);
			sb_puts(&sb, " and ");
			describe(&sb, p);
		}
	}
	if (problems > LIST_PROBLEMS)
		sb_printf(&sb, "; and %zu more", problems - LIST_PROBLEMS);
	if (problems)
		sb_printf(err,
			  "%s: v%u of the series is not one author's: %s. kab takes a series only whole from its author; "
			  "put the messages you trust in an mbox and give that",
			  t->name, v, sb.buf);
	else
		snprintf(s->author, sizeof(s->author), "%s", *author->from ? author->from : "(no From)");
	sb_free(&sb);
	return problems ? -EINVAL : 0;
}

/* The patches of version v, moved out of t, in series order. */
static int take_version(struct thread *t, unsigned v, struct kseries *s, struct strbuf *err)
{
	s->v = calloc(t->n, sizeof(*s->v));
	if (!s->v)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++)
		if (!t->cover[i] && t->v[i].version == v) {
			s->v[s->n++] = t->v[i];
			t->v[i] = (struct kseries_patch){ 0 };
		}
	s->version = v;
	if (s->n == 0) {
		sb_printf(err, "%s: v%u of the series is only a cover letter, no patches: give the mbox of the whole series",
			  t->name, v);
		return -EINVAL;
	}
	bool numbered = true;
	for (size_t i = 0; i < s->n; i++)
		numbered = numbered && s->v[i].index > 0;
	if (!numbered)
		return 0;
	qsort(s->v, s->n, sizeof(*s->v), cmp_index);
	unsigned total = s->v[s->n - 1].total;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].index != i + 1 || (total && s->n != total)) {
			unsigned missing = 1;
			while (missing <= s->n && s->v[missing - 1].index == missing)
				missing++;
			sb_printf(err, "%s: v%u of the series has %zu of its %u patches: patch %u/%u is missing",
				  t->name, v, s->n, total ? total : (unsigned)s->n, missing, total);
			return -EINVAL;
		}
	return 0;
}

static void hash_series(struct kseries *s)
{
	struct sha256_ctx c;
	sha256_init(&c);
	for (size_t i = 0; i < s->n; i++) {
		/* the blank lines between messages are not part of the series */
		size_t n = s->v[i].len;
		while (n > 0 && isspace((unsigned char)s->v[i].text[n - 1]))
			n--;
		sha256_update(&c, n, (const uint8_t *)s->v[i].text);
		sha256_update(&c, 1, (const uint8_t *)"\n");
	}
	sha256_hex(&c, s->hash);
}

int kseries_parse(const char *text, size_t len, const char *name, unsigned version, const char *anchor,
		  struct kseries *ret, struct strbuf *err)
{
	struct thread t = { .name = name };
	struct kseries s = { 0 };
	int r = split(text, len, &t, err);
	size_t patches = 0;
	for (size_t i = 0; i < t.n; i++)
		patches += !t.cover[i];
	if (r == 0 && patches == 0)
		r = no_patches(&t, err);
	unsigned v = r == 0 ? choose_version(&t, version, anchor, err) : 0;
	if (r == 0 && !v)
		r = -EINVAL;
	if (r == 0)
		r = check_author(&t, v, &s, err);
	if (r == 0)
		r = take_version(&t, v, &s, err);
	thread_free(&t);
	if (r == -ENOMEM)
		sb_printf(err, "%s: out of memory", name);
	if (r < 0) {
		kseries_free(&s);
		return r;
	}
	hash_series(&s);
	*ret = s;
	return 0;
}

int kseries_write(const struct kseries *s, const char *path)
{
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	FILE *f = fchmod(fd, 0644) == 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		int r = -errno;
		close(fd);
		return r;
	}
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

/* Why a series file was not read, in err: not a regular file, over the
 * cap, or the system's reason. */
static int unreadable(struct strbuf *err, const char *path, int r, mode_t mode, const char *over)
{
	if (r == -EINVAL || r == -EISDIR)
		sb_printf(err,
			  "series %s is %s: kab reads a series only from a regular file (or a directory of them), "
			  "never a FIFO or a device, which could block it or never end: give the file itself",
			  path, util_file_kind(mode));
	else if (r == -EFBIG)
		sb_printf(err, "series %s: %s than %u MiB, the cap on a series: refused", path, over, KSERIES_MBOX_MAX >> 20);
	else
		sb_printf(err, "series %s: %s", path, strerror(-r));
	return r;
}

static int read_dir(const char *dir, struct strbuf *out, struct strbuf *err)
{
	struct dirent **names;
	int n = scandir(dir, &names, patch_filter, alphasort);
	if (n < 0) {
		sb_printf(err, "%s: cannot read the directory: %s", dir, strerror(errno));
		return -errno;
	}
	int r = 0;
	if (n > (int)KSERIES_PATCHES_MAX) {
		sb_printf(err, "%s: %d .patch files, more than %u, the cap on a series: refused", dir, n, KSERIES_PATCHES_MAX);
		r = -EFBIG;
	}
	for (int i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		_cleanup_free_ char *text = NULL;
		size_t len;
		mode_t mode = 0;
		/* each file up to what is left of the cap: together they stop there */
		size_t left = out->len < KSERIES_MBOX_MAX ? KSERIES_MBOX_MAX - out->len : 0;
		if (r == 0 && (r = util_read_regular(path, left, &text, &len, &mode)) < 0)
			unreadable(err, path, r, mode, "with the .patch files before it, larger");
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
		sb_printf(err, "%s: no .patch files in the directory", dir);
		r = -EINVAL;
	}
	return r;
}

static int read_source(const char *source, struct strbuf *text, struct strbuf *err)
{
	struct stat st;
	if (stat(source, &st) < 0) {
		sb_printf(err, "series %s: %s", source, strerror(errno));
		return -ENOENT;
	}
	if (S_ISDIR(st.st_mode))
		return read_dir(source, text, err);
	char *t = NULL;
	size_t len = 0;
	mode_t mode = 0;
	int r = util_read_regular(source, KSERIES_MBOX_MAX, &t, &len, &mode);
	if (r < 0)
		unreadable(err, source, r, mode, "larger");
	else
		*text = (struct strbuf){ .buf = t, .len = len, .cap = len + 1 };
	return r;
}

int kseries_load(const char *source, unsigned version, const char *archive, struct kseries *ret, struct strbuf *err)
{
	struct strbuf text = { 0 };
	bool lore = strncmp(source, "lore:", 5) == 0;
	char anchor[1024] = "";
	if (lore) {
		const char *id = source + 5;
		while (*id == '<')
			id++;
		snprintf(anchor, sizeof(anchor), "%.*s", (int)strcspn(id, ">"), id);
	}
	int r = lore ? kseries_fetch(anchor, archive, &text, err) : read_source(source, &text, err);
	if (r >= 0)
		r = kseries_parse(text.buf ? text.buf : "", text.len, source, version, lore ? anchor : NULL, ret, err);
	sb_free(&text);
	return r;
}
