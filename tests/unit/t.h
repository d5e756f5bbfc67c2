/* A minimal unit-test harness: each test binary prints one line per check
 * that failed, one per case it skipped, and a closing "N passed, N failed,
 * N skipped" line. */
#pragma once
#include <math.h>
#include <stdio.h>
#include <string.h>

static int t_passed, t_failed, t_skipped;

#define T_CHECK(cond) do { \
	if (cond) t_passed++; \
	else { t_failed++; fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); } \
} while (0)
#define T_EQ_INT(a, b) do { \
	long long _a = (long long)(a), _b = (long long)(b); \
	if (_a == _b) t_passed++; \
	else { t_failed++; fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, _a, _b); } \
} while (0)
#define T_EQ_STR(a, b) do { \
	const char *_a = (a), *_b = (b); \
	if (_a && _b && strcmp(_a, _b) == 0) t_passed++; \
	else { t_failed++; fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, _a ? _a : "(null)", _b ? _b : "(null)"); } \
} while (0)
#define T_NEAR(a, b, tol) do { \
	double _a = (a), _b = (b); \
	if (fabs(_a - _b) <= (tol)) t_passed++; \
	else { t_failed++; fprintf(stderr, "%s:%d: %s == %.9g, expected %.9g\n", __FILE__, __LINE__, #a, _a, _b); } \
} while (0)

/* A case this machine or user cannot run (not root, no such device):
 * said with its reason, "  skip WHAT: WHY", and counted as skipped. */
static inline void t_skip(const char *what, const char *why)
{
	t_skipped++;
	printf("  skip %s: %s\n", what, why);
}

static inline int t_done(const char *name) {
	printf("%s: %d passed, %d failed, %d skipped\n", name, t_passed, t_failed, t_skipped);
	return t_failed ? 1 : 0;
}

/* A fresh path for a temporary database: kab.db in a new directory of
 * its own made from tmpl (ends in XXXXXX), 0700, since kab refuses a
 * database in a directory others may write (/tmp itself); the directory
 * and the database's files in it are removed at exit. With the
 * environment variable keep set, its value instead, so that the database
 * stays for a look with kab report. */
#include <stdlib.h>
#include <unistd.h>
struct t_db_dirs {
	char dir[32][128];
	int n;
};
static inline struct t_db_dirs *t_db_dirs(void)
{
	static struct t_db_dirs d;
	return &d;
}
static inline void t_db_cleanup(void)
{
	static const char *const names[] = { "kab.db", "kab.db-wal", "kab.db-shm", "kab.db-journal" };
	struct t_db_dirs *d = t_db_dirs();
	for (int i = 0; i < d->n; i++) {
		char p[160];
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			snprintf(p, sizeof(p), "%s/%s", d->dir[i], names[k]);
			unlink(p);
		}
		rmdir(d->dir[i]);
	}
}
static inline void t_db_path(char *path, size_t len, const char *tmpl, const char *keep)
{
	const char *k = keep ? getenv(keep) : NULL;
	if (k) {
		snprintf(path, len, "%s", k);
		unlink(path);
		return;
	}
	struct t_db_dirs *d = t_db_dirs();
	char dir[128];
	snprintf(dir, sizeof(dir), "%s", tmpl);
	T_CHECK(mkdtemp(dir) != NULL);
	if (d->n == 0)
		atexit(t_db_cleanup);
	if (d->n < (int)(sizeof(d->dir) / sizeof(d->dir[0])))
		snprintf(d->dir[d->n++], sizeof(d->dir[0]), "%s", dir);
	snprintf(path, len, "%s/kab.db", dir);
}

/* A machine.conf (or another file kab trusts) holding text, made as kab
 * reads one: 0644 in a new 0700 directory of its own from tmpl (ends in
 * XXXXXX), since kab refuses one in a directory others may write (/tmp
 * itself). path gets "DIR/machine.conf"; 0, else -1. t_conf_remove
 * removes the file and its directory. */
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
static inline int t_conf_file(char *path, size_t len, const char *tmpl, const char *text)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s", tmpl);
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, len, "%s/machine.conf", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	bool ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	if (fd >= 0)
		close(fd);
	return ok && chmod(path, 0644) == 0 ? 0 : -1;
}
static inline void t_conf_remove(const char *path)
{
	char dir[160];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	unlink(path);
	if (slash) {
		*slash = '\0';
		rmdir(dir);
	}
}
