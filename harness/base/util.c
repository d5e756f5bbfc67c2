/* Shared helpers: strict parsing, checked writes, strings, diagnostics. */
#include "harness/base/util.h"
#include "harness/base/config.h"
#include "harness/base/esc.h"
#include "harness/base/output.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

bool log_quiet;

void util_freep(void *p) { free(*(void **)p); }
void util_closep(int *fd) { if (*fd >= 0) close(*fd); }
void util_fclosep(FILE **f) { if (*f) fclose(*f); }

int util_parse_u64(const char *s, uint64_t *ret)
{
	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	uint64_t v = 0;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

int util_parse_i64(const char *s, int64_t *ret)
{
	bool neg = false;
	uint64_t v;
	if (s && *s == '-') {
		neg = true;
		s++;
	}
	int r = util_parse_u64(s, &v);
	if (r < 0)
		return r;
	if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
		return -ERANGE;
	*ret = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

int util_parse_double(const char *s, double *ret)
{
	if (!s || !*s || isspace((unsigned char)*s))
		return -EINVAL;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end)
		return -EINVAL;
	if (errno == ERANGE || !isfinite(v))
		return -ERANGE;
	*ret = v;
	return 0;
}

/* Splits "1.5G" into 1.5 and "G"; the number part must be a plain decimal. */
static int split_number(const char *s, double *ret_num, const char **ret_suffix)
{
	const char *p = s;
	bool digits = false;
	while (isdigit((unsigned char)*p)) { p++; digits = true; }
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) { p++; digits = true; }
	}
	if (!digits)
		return -EINVAL;
	char num[64];
	size_t n = (size_t)(p - s);
	if (n >= sizeof(num))
		return -ERANGE;
	memcpy(num, s, n);
	num[n] = 0;
	int r = util_parse_double(num, ret_num);
	if (r < 0)
		return r;
	*ret_suffix = p;
	return 0;
}

int util_parse_size(const char *s, uint64_t *ret)
{
	double num;
	const char *suf;
	if (!s || split_number(s, &num, &suf) < 0)
		return -EINVAL;
	double mult;
	switch (toupper((unsigned char)*suf)) {
	case 0: mult = 1; break;
	case 'B': mult = 1; break;
	case 'K': mult = 1024.0; break;
	case 'M': mult = 1024.0 * 1024; break;
	case 'G': mult = 1024.0 * 1024 * 1024; break;
	case 'T': mult = 1024.0 * 1024 * 1024 * 1024; break;
	default: return -EINVAL;
	}
	if (*suf && toupper((unsigned char)*suf) != 'B') {
		suf++;
		if (strcmp(suf, "iB") == 0 || strcmp(suf, "B") == 0 || strcmp(suf, "b") == 0)
			suf += strlen(suf);
		if (*suf)
			return -EINVAL;
	} else if (*suf) {
		if (suf[1])
			return -EINVAL;
	}
	double v = num * mult;
	if (v >= 18446744073709551615.0)
		return -ERANGE;
	if (v != floor(v))
		return -EINVAL; /* fractional bytes */
	*ret = (uint64_t)v;
	return 0;
}

int util_parse_duration(const char *s, double *ret_seconds)
{
	double num;
	const char *suf;
	if (!s || split_number(s, &num, &suf) < 0)
		return -EINVAL;
	double mult;
	if (!*suf || strcmp(suf, "s") == 0)
		mult = 1;
	else if (strcmp(suf, "ms") == 0)
		mult = 0.001;
	else if (strcmp(suf, "us") == 0)
		mult = 1e-6;
	else if (strcmp(suf, "m") == 0 || strcmp(suf, "min") == 0)
		mult = 60;
	else if (strcmp(suf, "h") == 0)
		mult = 3600;
	else
		return -EINVAL;
	*ret_seconds = num * mult;
	return 0;
}

bool util_glob(const char *pattern, const char *name)
{
	for (; *pattern; pattern++, name++) {
		if (*pattern == '*') {
			for (const char *t = name;; t++) {
				if (util_glob(pattern + 1, t))
					return true;
				if (!*t)
					return false;
			}
		}
		if (*pattern != *name)
			return false;
	}
	return *name == 0;
}

void util_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int u = -1;
	uint64_t v = bytes;
	while (u < 3 && v >= 1024 && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)v, units[u]);
}

static int read_capped(int fd, size_t max, size_t hint, char **ret, size_t *ret_len);

int util_read_file(const char *path, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len;
	int r = read_capped(fd, SIZE_MAX - 2, 0, ret, &len);
	if (r >= 0 && ret_len)
		*ret_len = len;
	return r;
}

int util_read_fd_exact(int fd, size_t want, char **ret)
{
	size_t got = 0;
	char *buf = malloc(want + 1);
	if (!buf)
		return -ENOMEM;
	while (got < want) {
		ssize_t n = read(fd, buf + got, want - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got != want) {
		free(buf);
		return -EIO;
	}
	buf[got] = 0;
	*ret = buf;
	return 0;
}

const char *util_file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "a regular file";
	case S_IFDIR: return "a directory";
	case S_IFIFO: return "a FIFO";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFSOCK: return "a socket";
	case S_IFLNK: return "a symbolic link";
	default: return "not a regular file";
	}
}

/* Reads fd to its end, never holding more than max + 1 bytes: one more
 * than max says the file is too large (-EFBIG). hint: its expected size. */
static int read_capped(int fd, size_t max, size_t hint, char **ret, size_t *ret_len)
{
	size_t limit = max < SIZE_MAX - 1 ? max + 1 : SIZE_MAX - 1;
	size_t cap = hint < 65535 ? 65536 : hint + 1, len = 0;
	if (cap > limit)
		cap = limit;
	char *buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			size_t next = cap > limit / 2 ? limit : cap * 2;
			char *nb = realloc(buf, next + 1);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap = next;
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = -errno;
			free(buf);
			return e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max) {
			free(buf);
			return -EFBIG;
		}
	}
	buf[len] = 0;
	*ret = buf;
	*ret_len = len;
	return 0;
}

int util_read_regular(const char *path, size_t max, char **ret, size_t *ret_len, mode_t *ret_mode)
{
	/* O_PATH opens no device and waits for no FIFO writer; the file is
	 * opened for reading through it only once it is known regular, so
	 * what is read is what was checked */
	_cleanup_close_ int at = open(path, O_PATH | O_CLOEXEC);
	struct stat st;
	if (at < 0 || fstat(at, &st) < 0)
		return -errno;
	if (ret_mode)
		*ret_mode = st.st_mode;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > max)
		return -EFBIG;
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", at);
	_cleanup_close_ int fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat again;
	if (fd < 0 || fstat(fd, &again) < 0)
		return -errno;
	if (again.st_dev != st.st_dev || again.st_ino != st.st_ino || !S_ISREG(again.st_mode))
		return -EINVAL;
	char *text = NULL;
	size_t len = 0;
	int r = read_capped(fd, max, (size_t)st.st_size, &text, &len);
	if (r < 0)
		return r;
	*ret = text;
	if (ret_len)
		*ret_len = len;
	return 0;
}

int util_read_line(const char *path, char **ret)
{
	char *buf;
	size_t len;
	int r = util_read_file(path, &buf, &len);
	if (r < 0)
		return r;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = 0;
	*ret = buf;
	return 0;
}

int util_meminfo_bytes(const char *key, uint64_t *ret)
{
	char *buf;
	int r = util_read_file("/proc/meminfo", &buf, NULL);
	if (r < 0)
		return r;
	size_t kl = strlen(key);
	r = -ENOENT;
	for (char *line = buf; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			char *v = line + kl + 1, *unit;
			while (*v == ' ')
				v++;
			unit = strchr(v, ' ');
			if (unit)
				*unit++ = 0;
			uint64_t kb;
			r = util_parse_u64(v, &kb);
			if (r == 0)
				*ret = unit && strcmp(unit, "kB") == 0 ? kb * 1024 : kb;
			break;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(buf);
	return r;
}

int util_write_fd(int fd, const char *value)
{
	size_t len = strlen(value);
	ssize_t n = write(fd, value, len);
	int e = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	if (close(fd) < 0 && e == 0)
		e = -errno;
	return e;
}

int util_write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_TRUNC);
	if (fd < 0)
		return -errno;
	return util_write_fd(fd, value);
}

size_t util_levenshtein(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 128 || lb > 128)
		return SIZE_MAX;
	size_t prev[129], cur[129];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			size_t sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
			size_t m = del < ins ? del : ins;
			cur[j] = m < sub ? m : sub;
		}
		memcpy(prev, cur, (lb + 1) * sizeof(size_t));
	}
	return prev[lb];
}

const char *util_word_name(const char *const *names, int n, int v)
{
	return v >= 0 && v < n && names[v] ? names[v] : "unknown";
}

int util_word_index(const char *const *names, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (names[i] && strcmp(s, names[i]) == 0)
			return i;
	return -EINVAL;
}

const char *util_did_you_mean(const char *word, const char *const *cands, size_t n)
{
	size_t limit = strlen(word) / 3;
	if (limit < 2)
		limit = 2;
	const char *best = NULL;
	size_t best_d = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		if (!cands[i])
			continue;
		size_t d = util_levenshtein(word, cands[i]);
		if (d < best_d) {
			best_d = d;
			best = cands[i];
		}
	}
	return best_d <= limit ? best : NULL;
}

bool util_find_program(const char *name, char *ret_path, size_t len)
{
	if (!name || !*name)
		return false;
	if (strchr(name, '/')) {
		if (access(name, X_OK) != 0)
			return false;
		snprintf(ret_path, len, "%s", name);
		return true;
	}
	const char *path = config_str(CONFIG_PATH);
	if (!path || !*path)
		path = CONFIG_PATH_DEFAULT;
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t dl = colon ? (size_t)(colon - path) : strlen(path);
		char buf[PATH_MAX];
		if (dl > 0 && dl + strlen(name) + 2 < sizeof(buf)) {
			memcpy(buf, path, dl);
			buf[dl] = '/';
			memcpy(buf + dl + 1, name, strlen(name) + 1);
			struct stat st;
			if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0) {
				snprintf(ret_path, len, "%s", buf);
				return true;
			}
		}
		if (!colon)
			break;
		path = colon + 1;
	}
	return false;
}

double util_mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double util_real_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void util_iso_time(double real, char *buf, size_t len)
{
	time_t t = (time_t)real;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int sb_append(struct strbuf *sb, const char *s, size_t n)
{
	if (sb->len + n + 1 > sb->cap) {
		size_t cap = sb->cap ? sb->cap : 256;
		while (cap < sb->len + n + 1)
			cap *= 2;
		char *nb = realloc(sb->buf, cap);
		if (!nb)
			return -ENOMEM;
		sb->buf = nb;
		sb->cap = cap;
	}
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = 0;
	return 0;
}

int sb_puts(struct strbuf *sb, const char *s) { return sb_append(sb, s, strlen(s)); }

int sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if (sb_append(sb, "", 0) < 0)
		return -ENOMEM;
	if (sb->len + (size_t)n + 1 > sb->cap) {
		size_t cap = sb->cap;
		while (cap < sb->len + (size_t)n + 1)
			cap *= 2;
		char *nb = realloc(sb->buf, cap);
		if (!nb)
			return -ENOMEM;
		sb->buf = nb;
		sb->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
	return 0;
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

void *util_grow_array(void *v, size_t *cap, size_t need, size_t elem, size_t first)
{
	if (need <= *cap && v)
		return v;
	size_t nc = *cap ? *cap : (first ? first : 1);
	while (nc < need) {
		if (nc > SIZE_MAX / 2)
			return NULL;
		nc *= 2;
	}
	if (elem && nc > SIZE_MAX / elem)
		return NULL;
	void *nv = realloc(v, nc * elem);
	if (!nv)
		return NULL;
	*cap = nc;
	return nv;
}

void diags_add(struct diags *d, const char *file, int line, const char *fmt, ...)
{
	if (d->n >= DIAGS_MAX) {
		d->dropped++;
		return;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		struct diag *nv = realloc(d->v, cap * sizeof(*nv));
		if (!nv)
			return;
		d->v = nv;
		d->cap = cap;
	}
	va_list ap;
	va_start(ap, fmt);
	char *msg = NULL;
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	d->v[d->n].file = file ? strdup(file) : NULL;
	d->v[d->n].line = line;
	d->v[d->n].msg = msg;
	d->n++;
}

size_t diags_count(const struct diags *d) { return d->n + d->dropped; }

bool diags_full(const struct diags *d) { return d->n >= DIAGS_MAX; }

/* s as kab shows text it did not write (esc.h): a message quotes the
 * job's values, which may hold anything a terminal would act on. */
static void put_shown(FILE *out, const char *s)
{
	esc_text_file(out, s, strlen(s), ESC_LINES);
}

void diags_print(const struct diags *d, FILE *out)
{
	int err = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct diag *g = &d->v[i];
		if (g->file) {
			put_shown(out, g->file);
			if (g->line > 0)
				fprintf(out, ":%d", g->line);
			fputs(": ", out);
		}
		put_shown(out, g->msg ? g->msg : "out of memory");
		if (fputc('\n', out) == EOF && !err)
			err = errno;
	}
	if (d->dropped) {
		const char *file = d->n && d->v[d->n - 1].file ? d->v[d->n - 1].file : NULL;
		if (file) {
			put_shown(out, file);
			fputs(": ", out);
		}
		if (fprintf(out, "and %zu more problem%s not shown: fix these first\n", d->dropped, d->dropped == 1 ? "" : "s") < 0 && !err)
			err = errno;
	}
	if (err)
		out_failed(out, err);
}

void diags_free(struct diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].msg);
	}
	free(d->v);
	d->v = NULL;
	d->n = d->cap = d->dropped = 0;
}

/* FNV-1a */
static size_t strmap_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

static size_t strmap_slot(const struct util_strmap *m, const char *key)
{
	size_t i = strmap_hash(key) & (m->nslot - 1);
	while (m->keys[i] && strcmp(m->keys[i], key) != 0)
		i = (i + 1) & (m->nslot - 1);
	return i;
}

static int strmap_grow(struct util_strmap *m)
{
	size_t nslot = m->nslot ? 2 * m->nslot : 16;
	const char **keys = calloc(nslot, sizeof(*keys));
	int *values = calloc(nslot, sizeof(*values));
	if (!keys || !values) {
		free(keys);
		free(values);
		return -ENOMEM;
	}
	struct util_strmap g = { .keys = keys, .values = values, .n = m->n, .nslot = nslot };
	for (size_t i = 0; i < m->nslot; i++)
		if (m->keys[i]) {
			size_t k = strmap_slot(&g, m->keys[i]);
			g.keys[k] = m->keys[i];
			g.values[k] = m->values[i];
		}
	util_strmap_free(m);
	*m = g;
	return 0;
}

int util_strmap_put(struct util_strmap *m, const char *key, int value, int *ret_old)
{
	if (2 * (m->n + 1) > m->nslot && strmap_grow(m) < 0)
		return -ENOMEM;
	size_t i = strmap_slot(m, key);
	if (m->keys[i]) {
		if (ret_old)
			*ret_old = m->values[i];
		return 1;
	}
	m->keys[i] = key;
	m->values[i] = value;
	m->n++;
	return 0;
}

void util_strmap_free(struct util_strmap *m)
{
	free(m->keys);
	free(m->values);
	*m = (struct util_strmap){ 0 };
}

/* One write per line, so that lines of two threads (the executor, the
 * sampler) never interleave; a closed stderr is noticed, never fatal. */
static void vlog(const char *level, const char *fmt, va_list ap)
{
	char line[2048], *big = NULL;
	va_list again;
	va_copy(again, ap);
	int head = snprintf(line, sizeof(line), "kab: %s", level);
	int body = vsnprintf(line + head, sizeof(line) - (size_t)head, fmt, ap);
	char *p = line;
	if (body >= 0 && (size_t)head + (size_t)body + 1 >= sizeof(line) &&
	    (big = malloc((size_t)head + (size_t)body + 2))) {
		memcpy(big, line, (size_t)head);
		vsnprintf(big + head, (size_t)body + 1, fmt, again);
		p = big;
	}
	va_end(again);
	size_t len = body < 0 ? (size_t)head : strlen(p);
	/* what a message quotes (a job's value, a run's reason, a commit's
	 * subject) is shown, never acted on by a terminal (esc.h) */
	struct strbuf shown = { 0 };
	if (esc_text_sb(&shown, p, len, ESC_LINES) == 0 && sb_append(&shown, "\n", 1) == 0) {
		out_write(STDERR_FILENO, shown.buf, shown.len);
	} else {
		char cut[sizeof(line)];
		esc_text_buf(p, cut, sizeof(cut) - 1, ESC_LINES);
		len = strlen(cut);
		cut[len] = '\n';
		out_write(STDERR_FILENO, cut, len + 1);
	}
	sb_free(&shown);
	free(big);
}

void log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("error: ", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	if (log_quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

int util_copy_fd(int in, int out, size_t max)
{
	char buf[65536];
	size_t total = 0;
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (max && (total += (size_t)n) > max)
			return -EFBIG;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0)
				return -errno;
			off += w;
		}
	}
	return n < 0 ? -errno : 0;
}

/* Copies a regular file's bytes to `to` (created or truncated, 0644;
 * never a symbolic link's target). */
int util_copy_file(const char *from, const char *to)
{
	_cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	_cleanup_close_ int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0)
		return -errno;
	int r = util_copy_fd(in, out, 0);
	if (r < 0)
		return r;
	int fd = out;
	out = -1;
	return close(fd) < 0 ? -errno : 0;
}

int util_mkdir_p(const char *path, mode_t mode)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return mkdir(p, mode) < 0 && errno != EEXIST ? -errno : 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int util_remove_tree(const char *path)
{
	if (!path[0] || strcmp(path, "/") == 0)
		return -EINVAL;
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	/* depth first, never through a symlink (an O= directory links to
	 * its source tree) */
	if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
		return errno ? -errno : -EIO;
	return 0;
}

void util_child_signals(void)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGPIPE, &dfl, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

void util_child_fds(void)
{
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return;
	/* before Linux 5.11: each descriptor up to the limit */
	struct rlimit rl;
	int max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (1u << 20) ? (int)rl.rlim_cur : 1 << 20;
	for (int fd = 3; fd < max; fd++) {
		int fl = fcntl(fd, F_GETFD);
		if (fl >= 0 && !(fl & FD_CLOEXEC))
			fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
	}
}

int util_spawn_close_fds(posix_spawn_file_actions_t *fa)
{
	int r = posix_spawn_file_actions_addclosefrom_np(fa, 3);
	return r ? -r : 0;
}

int util_spawnattr_init(posix_spawnattr_t *attr)
{
	sigset_t none, dfl;
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	int r = posix_spawnattr_init(attr);
	if (r != 0)
		return -r;
	if ((r = posix_spawnattr_setsigmask(attr, &none)) != 0 || (r = posix_spawnattr_setsigdefault(attr, &dfl)) != 0 ||
	    (r = posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) != 0) {
		posix_spawnattr_destroy(attr);
		return -r;
	}
	return 0;
}

void util_wait_status_text(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "was killed by signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "ended with wait status %d", status);
}
