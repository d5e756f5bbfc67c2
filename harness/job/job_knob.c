/* Job files: knob keys of a [variant] section, "sysctl NAME = VALUE" and
 * "sysfs PATH = VALUE", turned into the file they write. */
#include "harness/job/job.h"
#include "harness/job/job_priv.h"
#include "harness/base/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool job_path_ok(const char *rel)
{
	if (!*rel)
		return false;
	for (const char *p = rel;;) {
		size_t n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		for (size_t i = 0; i < n; i++)
			if (isspace((unsigned char)p[i]) || iscntrl((unsigned char)p[i]))
				return false;
		if (!p[n])
			return true;
		p += n + 1;
	}
}

static void swap_dots_and_slashes(char *s)
{
	for (; *s; s++)
		*s = *s == '.' ? '/' : *s == '/' ? '.' : *s;
}

/* sysctl NAME: "vm.swappiness" (dots separate, '/' stands for a dot in a
 * component, as sysctl(8) reads it), "vm/swappiness" or the full path. */
int job_sysctl_target(const char *target, char **ret_path, char **ret_name)
{
	_cleanup_free_ char *rel = NULL;
	if (target[0] == '/') {
		if (strncmp(target, "/proc/sys/", 10) != 0)
			return -EXDEV;
		rel = strdup(target + 10);
	} else {
		rel = strdup(target);
		if (rel && target[strcspn(target, "./")] == '.')
			swap_dots_and_slashes(rel);
	}
	if (!rel)
		return -ENOMEM;
	if (!job_path_ok(rel))
		return -EINVAL;
	char *path, *name;
	if (asprintf(&path, "/proc/sys/%s", rel) < 0)
		return -ENOMEM;
	if (memchr(rel, '.', strcspn(rel, "/"))) {
		name = strdup(path); /* a dotted name could not say this */
	} else {
		name = strdup(rel);
		if (name)
			swap_dots_and_slashes(name);
	}
	if (!name) {
		free(path);
		return -ENOMEM;
	}
	*ret_path = path;
	*ret_name = name;
	return 0;
}

static int sysfs_target(const char *target, char **ret_path, char **ret_name)
{
	if (strncmp(target, "/sys/", 5) != 0)
		return -EXDEV;
	if (!job_path_ok(target + 5))
		return -EINVAL;
	char *path = strdup(target), *name = strdup(target);
	if (!path || !name) {
		free(path);
		free(name);
		return -ENOMEM;
	}
	*ret_path = path;
	*ret_name = name;
	return 0;
}

static bool knob_key(const char *key, enum job_knob_kind *ret_kind, const char **ret_target)
{
	size_t n = strcspn(key, " \t");
	if (n == 6 && strncmp(key, "sysctl", 6) == 0)
		*ret_kind = JOB_KNOB_SYSCTL;
	else if (n == 5 && strncmp(key, "sysfs", 5) == 0)
		*ret_kind = JOB_KNOB_SYSFS;
	else
		return false;
	const char *t = key + n;
	while (*t == ' ' || *t == '\t')
		t++;
	*ret_target = t;
	return true;
}

void job_knob_clear(struct job_knob *k)
{
	free(k->name);
	free(k->path);
	free(k->value);
	*k = (struct job_knob){ 0 };
}

int job_knob_parse(const char *file, const struct job_entry *e, struct job_knob *ret, struct diags *d)
{
	enum job_knob_kind kind;
	const char *target;
	if (!knob_key(e->key, &kind, &target))
		return 1;
	if (e->broken)
		return -EINVAL;
	bool sysctl = kind == JOB_KNOB_SYSCTL;
	const char *kw = sysctl ? "sysctl" : "sysfs";

	/* inih splits at the first ':' too: "sysfs /sys/devices/pci0000:00/x = 1"
	 * arrives as "sysfs /sys/devices/pci0000" and "00/x = 1". Rejoin it and
	 * split at the '='. */
	_cleanup_free_ char *joined = NULL;
	const char *value = e->value;
	if (e->delim == ':' && strchr(e->value, '=')) {
		if (asprintf(&joined, "%s:%s", e->key, e->value) < 0)
			return -ENOMEM;
		char *eq = strchr(joined, '=');
		*eq = 0;
		for (char *end = eq; end > joined && isspace((unsigned char)end[-1]);)
			*--end = 0;
		for (value = eq + 1; isspace((unsigned char)*value);)
			value++;
		knob_key(joined, &kind, &target);
	}
	if (!*target) {
		diags_add(d, file, e->line, "\"%s\" needs a %s: write %s", kw, sysctl ? "name" : "path",
			  sysctl ? "sysctl vm.swappiness = 100" : "sysfs /sys/module/zswap/parameters/enabled = Y");
		return -EINVAL;
	}
	if (e->cont_line) {
		diags_add(d, file, e->cont_line, "indented line continues \"%s\" (line %d), which takes one line: remove the leading whitespace",
			  e->key, e->line);
		return -EINVAL;
	}
	if (!*value) {
		diags_add(d, file, e->line, "empty value for \"%s %s\"", kw, target);
		return -EINVAL;
	}
	char *path = NULL, *name = NULL;
	int r = sysctl ? job_sysctl_target(target, &path, &name) : sysfs_target(target, &path, &name);
	if (r == -EXDEV) {
		diags_add(d, file, e->line, "%s path \"%s\" is outside %s", kw, target, sysctl ? "/proc/sys" : "/sys");
		return -EINVAL;
	}
	if (r == -EINVAL) {
		diags_add(d, file, e->line, "bad %s %s \"%s\": no spaces, empty, \".\" or \"..\" components", kw,
			  sysctl ? "name" : "path", target);
		return -EINVAL;
	}
	if (r < 0)
		return r;
	char *val = strdup(value);
	if (!val) {
		free(path);
		free(name);
		return -ENOMEM;
	}
	*ret = (struct job_knob){ .kind = kind, .name = name, .path = path, .value = val, .line = e->line };
	return 0;
}
