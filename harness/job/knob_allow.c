/* The allow list of knobs; see knob_allow.h. SECURITY.md ("Knobs")
 * explains each entry of the two tables below: keep them in step. */
#include "harness/job/knob_allow.h"
#include "harness/job/job_priv.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Memory-management tuning: it changes how the kernel manages memory,
 * never which programs run or with what privileges. */
static const char *const default_allow[] = {
	"vm.*",
	"/sys/kernel/mm/**",
	"/sys/module/zswap/parameters/*",
	"/sys/devices/virtual/block/zram*/{comp_algorithm,disksize,max_comp_streams,mem_limit,mem_used_max,compact,idle}",
	"/sys/devices/system/node/node*/hugepages/hugepages-*kB/nr_hugepages",
	"kernel.numa_balancing",
	"kernel.numa_balancing_promote_rate_limit_MBps",
};

/* Inside default_allow, but they weaken the kernel's hardening for every
 * user of the machine, grant a group a privilege, or act on (and observe)
 * other processes' memory. An operator may still name one in knobs.allow. */
static const char *const default_except[] = {
	"vm.mmap_min_addr",
	"vm.mmap_rnd_bits",
	"vm.mmap_rnd_compat_bits",
	"vm.unprivileged_userfaultfd",
	"vm.memfd_noexec",
	"vm.hugetlb_shm_group",
	"/sys/kernel/mm/damon/**",
	"/sys/kernel/mm/page_idle/**",
};

/* One component of a pattern: "**" whole, "*" anywhere, "{a,b}" with
 * plain words inside, nothing nested. */
static bool component_ok(const char *c, size_t n, const char **ret_why)
{
	bool in_brace = false;
	for (size_t i = 0; i < n; i++) {
		if (c[i] == '*' && i + 1 < n && c[i + 1] == '*' && n != 2) {
			*ret_why = "\"**\" must be a whole component (a/**/b), matching any number of components";
			return false;
		}
		if (c[i] == '{' || c[i] == '}') {
			if (in_brace == (c[i] == '{')) {
				*ret_why = "unbalanced \"{\" and \"}\"";
				return false;
			}
			in_brace = c[i] == '{';
		} else if (in_brace && c[i] == '*') {
			*ret_why = "\"{a,b}\" lists plain words: no \"*\" inside";
			return false;
		}
	}
	if (in_brace)
		*ret_why = "unbalanced \"{\" and \"}\"";
	return !in_brace;
}

int knob_allow_parse(const char *pattern, char **ret_path, const char **ret_why)
{
	const char *why = "a pattern is an absolute path under /proc/sys or /sys, or a sysctl name (vm.*)";
	_cleanup_free_ char *path = NULL, *name = NULL;
	const char *rel;
	if (strncmp(pattern, "/sys/", 5) == 0) {
		if (!(path = strdup(pattern)))
			return -ENOMEM;
		rel = path + 5;
	} else {
		int r = job_sysctl_target(pattern, &path, &name);
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			*ret_why = r == -EINVAL ? "no spaces, empty, \".\" or \"..\" components" : why;
			return -EINVAL;
		}
		rel = path + 10;
	}
	if (!job_path_ok(rel)) {
		*ret_why = "no spaces, empty, \".\" or \"..\" components";
		return -EINVAL;
	}
	for (const char *c = rel; *c;) {
		size_t n = strcspn(c, "/");
		if (!component_ok(c, n, ret_why))
			return -EINVAL;
		c += n + (c[n] == '/');
	}
	*ret_path = path;
	path = NULL;
	return 0;
}

/* One component: p..pe against s..se. */
static bool match_component(const char *p, const char *pe, const char *s, const char *se)
{
	while (p < pe) {
		if (*p == '*') {
			for (const char *t = s;; t++) {
				if (match_component(p + 1, pe, t, se))
					return true;
				if (t == se)
					return false;
			}
		}
		if (*p == '{') {
			const char *close = memchr(p, '}', (size_t)(pe - p));
			for (const char *w = p + 1; w <= close;) {
				size_t n = strcspn(w, ",}");
				if ((size_t)(se - s) >= n && memcmp(s, w, n) == 0 && match_component(close + 1, pe, s + n, se))
					return true;
				w += n + 1;
			}
			return false;
		}
		if (s == se || *s != *p)
			return false;
		p++;
		s++;
	}
	return s == se;
}

/* p and s without their leading "/": component by component. */
static bool match_rel(const char *p, const char *s)
{
	for (;;) {
		if (!*p)
			return !*s;
		size_t pn = strcspn(p, "/");
		if (pn == 2 && p[0] == '*' && p[1] == '*') {
			const char *rest = p + pn + (p[pn] == '/');
			for (const char *t = s;;) {
				if (match_rel(rest, t))
					return true;
				if (!*t)
					return false;
				t += strcspn(t, "/");
				t += *t == '/';
			}
		}
		if (!*s)
			return false;
		size_t sn = strcspn(s, "/");
		if (!match_component(p, p + pn, s, s + sn))
			return false;
		p += pn + (p[pn] == '/');
		s += sn + (s[sn] == '/');
	}
}

bool knob_allow_match(const char *pattern_path, const char *path)
{
	if (pattern_path[0] != '/' || path[0] != '/')
		return false;
	return match_rel(pattern_path + 1, path + 1);
}

int knob_allow_canonical(const char *path, char **ret)
{
	if (path[0] != '/' || !job_path_ok(path + 1))
		return -EINVAL;
	char *real = realpath(path, NULL);
	if (real) {
		*ret = real;
		return 0;
	}
	if (errno != ENOENT && errno != ENOTDIR && errno != EACCES)
		return -errno; /* EACCES: kab check as a user; kab run resolves as root */
	_cleanup_free_ char *head = strdup(path);
	if (!head)
		return -ENOMEM;
	for (char *slash; (slash = strrchr(head, '/'));) {
		*slash = '\0';
		_cleanup_free_ char *dir = realpath(*head ? head : "/", NULL);
		if (!dir && errno != ENOENT && errno != ENOTDIR && errno != EACCES)
			return -errno;
		if (!dir)
			continue;
		const char *rest = path + (slash - head) + 1;
		if (asprintf(&real, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", rest) < 0)
			return -ENOMEM;
		*ret = real;
		return 0;
	}
	return -ENOENT;
}

static bool matches(const char *pattern, const char *canonical)
{
	_cleanup_free_ char *p = NULL;
	const char *why;
	return knob_allow_parse(pattern, &p, &why) == 0 && knob_allow_match(p, canonical);
}

static bool matches_any(const char *const *patterns, size_t n, const char *canonical)
{
	for (size_t i = 0; i < n; i++)
		if (matches(patterns[i], canonical))
			return true;
	return false;
}

bool knob_allowed(const char *canonical, const struct knob_pattern *extra, size_t n_extra)
{
	for (size_t i = 0; i < n_extra; i++)
		if (matches(extra[i].text, canonical))
			return true;
	return matches_any(default_allow, ARRAY_SIZE(default_allow), canonical) &&
	       !matches_any(default_except, ARRAY_SIZE(default_except), canonical);
}

void knob_allow_describe(struct strbuf *sb)
{
	for (size_t i = 0; i < ARRAY_SIZE(default_allow); i++)
		sb_printf(sb, "%s%s", i ? ", " : "", default_allow[i]);
	for (size_t i = 0; i < ARRAY_SIZE(default_except); i++)
		sb_printf(sb, "%s%s", i ? ", " : "; not ", default_except[i]);
}
