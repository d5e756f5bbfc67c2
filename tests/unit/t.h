/* A minimal unit-test harness: each test binary prints one line per check
 * that failed and a closing "N passed, N failed" line. */
#pragma once
#include <math.h>
#include <stdio.h>
#include <string.h>

static int t_passed, t_failed;

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

static inline int t_done(const char *name) {
	printf("%s: %d passed, %d failed\n", name, t_passed, t_failed);
	return t_failed ? 1 : 0;
}

/* A fresh path for a temporary database, made from tmpl (ends in XXXXXX)
 * and left unused; with the environment variable keep set, its value
 * instead, so that the database stays for a look with kab report. */
#include <stdlib.h>
#include <unistd.h>
static inline void t_db_path(char *path, size_t len, const char *tmpl, const char *keep)
{
	const char *k = keep ? getenv(keep) : NULL;
	snprintf(path, len, "%s", k ? k : tmpl);
	if (!k) {
		int fd = mkstemp(path);
		T_CHECK(fd >= 0);
		if (fd >= 0)
			close(fd);
	}
	unlink(path);
}

