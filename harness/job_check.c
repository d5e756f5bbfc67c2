/* Job files: checks against the machine. They only read (stat, realpath,
 * directory listings, $PATH lookups): `kab check` must never change the
 * system it checks. job_parse_string_nocheck() skips them. */
#include "job.h"
#include "job_priv.h"
#include "knob_allow.h"
#include "machine.h"
#include "statedir.h"
#include "util.h"
#include "wl.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The entry of path's directory closest to its last component, as a
 * full path; NULL if nothing is close or the directory is unreadable. */
static char *closest_sibling(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash || slash == path)
		return NULL;
	_cleanup_free_ char *dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return NULL;
	DIR *dh = opendir(dir);
	if (!dh)
		return NULL;
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(dh))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 64;
			char **nn = realloc(names, nc * sizeof(*nn));
			if (!nn)
				break;
			names = nn;
			cap = nc;
		}
		if (!(names[n] = strdup(de->d_name)))
			break;
		n++;
	}
	closedir(dh);
	const char *best = util_did_you_mean(slash + 1, (const char *const *)names, n);
	char *ret = NULL;
	if (best && asprintf(&ret, "%s/%s", dir, best) < 0)
		ret = NULL;
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

static bool under(const char *path, const char *root)
{
	return strncmp(path, root, strlen(root)) == 0;
}

/* The allow list, on the path the knob resolves to (or would, for a
 * file that does not exist): decided before anything else about the
 * file, so a refused knob reads the same on every machine. */
static bool knob_allowed_here(const char *file, const struct job_knob *k, const struct machine_conf *mc,
			      struct diags *d)
{
	_cleanup_free_ char *real = NULL;
	int r = knob_allow_canonical(k->path, &real);
	if (r < 0) {
		diags_add(d, file, k->line, "knob %s: cannot resolve %s: %s", k->name, k->path, strerror(-r));
		return false;
	}
	if (knob_allowed(real, mc->knob_allow, mc->n_knob_allow))
		return true;
	struct strbuf list = { 0 }, also = { 0 };
	knob_allow_describe(&list);
	for (size_t i = 0; i < mc->n_knob_allow; i++)
		sb_printf(&also, "%s%s", i ? ", " : ", and this machine's knobs.allow adds ", mc->knob_allow[i].text);
	char shown[PATH_MAX + 32] = "";
	if (strcmp(k->name, real) != 0)
		snprintf(shown, sizeof(shown), " (%s)", real);
	diags_add(d, file, k->line,
		  "knob %s%s is not an allowed knob: kab sets only memory-management knobs (%s)%s; an operator may allow more with knobs.allow in %s",
		  k->name, shown, list.buf ? list.buf : "", also.buf ? also.buf : "", mc->path);
	sb_free(&list);
	sb_free(&also);
	return false;
}

bool job_check_knob(const char *file, const struct job_knob *k, const struct machine_conf *mc, struct diags *d)
{
	if (!knob_allowed_here(file, k, mc, d))
		return false;
	bool sysctl = k->kind == JOB_KNOB_SYSCTL;
	char what[PATH_MAX + 16];
	if (sysctl)
		snprintf(what, sizeof(what), "sysctl %s: %s", k->name, k->path);
	else
		snprintf(what, sizeof(what), "sysfs %s", k->path);

	struct stat st;
	if (stat(k->path, &st) < 0) {
		int e = errno;
		if (e != ENOENT && e != ENOTDIR) {
			diags_add(d, file, k->line, "%s: cannot stat: %s", what, strerror(e));
			return false;
		}
		/* the hint reads a directory: not for a message that is only counted */
		_cleanup_free_ char *near = diags_full(d) ? NULL : closest_sibling(k->path);
		_cleanup_free_ char *near_path = NULL, *near_name = NULL;
		if (near && sysctl && job_sysctl_target(near, &near_path, &near_name) == 0)
			diags_add(d, file, k->line, "%s does not exist (did you mean \"%s\"?)", what, near_name);
		else if (near && !sysctl)
			diags_add(d, file, k->line, "%s does not exist (did you mean \"%s\"?)", what, near);
		else
			diags_add(d, file, k->line, "%s does not exist", what);
		return false;
	}
	_cleanup_free_ char *real = realpath(k->path, NULL);
	const char *root = sysctl ? "/proc/sys/" : "/sys/";
	if (real && !under(real, root)) {
		diags_add(d, file, k->line, "%s resolves to %s, outside %.*s", what, real, (int)strlen(root) - 1, root);
		return false;
	}
	if (S_ISDIR(st.st_mode)) {
		diags_add(d, file, k->line, "%s is a directory, not a knob file", what);
		return false;
	}
	if (!S_ISREG(st.st_mode)) {
		diags_add(d, file, k->line, "%s is not a regular file", what);
		return false;
	}
	if (!(st.st_mode & 0222)) {
		diags_add(d, file, k->line, "%s is read-only (mode %04o)", what, (unsigned)(st.st_mode & 07777));
		return false;
	}
	return true;
}

/* zram's algorithms are its own (not /proc/crypto's): every zram device
 * lists them in comp_algorithm, "[lzo-rle] lzo lz4". Without a device
 * there is nothing to ask; setting up the job's device will tell. */
bool job_check_zram_algorithm(const char *file, int line, const char *alg, struct diags *d)
{
	DIR *dh = opendir("/sys/block");
	if (!dh)
		return true;
	char *have = NULL;
	struct dirent *de;
	while (!have && (de = readdir(dh))) {
		if (strncmp(de->d_name, "zram", 4) != 0)
			continue;
		char path[300];
		snprintf(path, sizeof(path), "/sys/block/%s/comp_algorithm", de->d_name);
		if (util_read_line(path, &have) < 0)
			have = NULL;
	}
	closedir(dh);
	if (!have)
		return true;
	bool found = false;
	for (char *p = have; *p && !found;) {
		p += strspn(p, " []");
		size_t n = strcspn(p, " []");
		found = n == strlen(alg) && strncmp(p, alg, n) == 0;
		p += n;
	}
	if (!found)
		diags_add(d, file, line, "algorithm = %s: zram here has no such compressor; it has: %s", alg, have);
	free(have);
	return found;
}

bool job_check_swap(const char *file, const struct job_swap *s, int path_line, struct diags *d)
{
	struct stat st;
	if (s->kind == JOB_SWAP_ZRAM && stat("/sys/class/zram-control", &st) < 0) {
		diags_add(d, file, s->line, "device = zram, but zram is not available here (no /sys/class/zram-control): modprobe zram, or use device = file");
		return false;
	}
	if (s->kind != JOB_SWAP_FILE || !s->path)
		return true;
	if (lstat(s->path, &st) == 0) {
		diags_add(d, file, path_line, "swap file %s already exists: kab creates the file and removes it afterwards, so name one that does not exist",
			  s->path);
		return false;
	}
	const char *slash = strrchr(s->path, '/');
	_cleanup_free_ char *dir = strndup(s->path, slash && slash > s->path ? (size_t)(slash - s->path) : 1);
	if (dir && stat(dir, &st) < 0) {
		diags_add(d, file, path_line, "directory %s of swap file %s does not exist", dir, s->path);
		return false;
	}
	if (dir && !S_ISDIR(st.st_mode)) {
		diags_add(d, file, path_line, "%s, where the swap file %s would go, is not a directory", dir, s->path);
		return false;
	}
	/* kab makes the file as root and runs mkswap and swapon on its name:
	 * a directory another user can change could swap that name for a
	 * link to a disk */
	struct strbuf why = { 0 };
	if (dir && state_path_trusted(dir, &why) < 0) {
		diags_add(d, file, path_line, "swap file %s: %s; name a path under directories only root can change, or leave path out (kab then makes the file in the job's own directory)",
			  s->path, why.buf ? why.buf : "its directory cannot be checked");
		sb_free(&why);
		return false;
	}
	return true;
}

static bool in_list(const char *list, const char *word) /* list: "a, b, c" */
{
	size_t n = strlen(word);
	for (const char *p = list; p && *p;) {
		if (strncmp(p, word, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return true;
		p = strchr(p, ',');
		p = p ? p + 2 : NULL;
	}
	return false;
}

/* "key   : value" of a /proc/crypto line: the value, or NULL */
static const char *crypto_field(const char *line, const char *key)
{
	size_t n = strlen(key);
	if (strncmp(line, key, n) != 0)
		return NULL;
	line += n;
	while (*line == ' ' || *line == '\t')
		line++;
	if (*line != ':')
		return NULL;
	line++;
	while (*line == ' ')
		line++;
	return line;
}

/* The kernel's compressors for zswap: /proc/crypto's entries of type
 * acomp or scomp (the ones loaded or built in; the others go in names)
 * and, for those a module would bring in on first use, "alias
 * crypto-NAME" in modules.alias. */
static bool crypto_compressor_listed(const char *name, struct strbuf *names)
{
	_cleanup_free_ char *text = NULL;
	if (util_read_file("/proc/crypto", &text, NULL) < 0)
		return true; /* cannot tell: the write at run time will */
	bool found = false;
	const char *cur = "";
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		const char *v;
		if ((v = crypto_field(line, "name"))) {
			cur = v;
			continue;
		}
		if (!(v = crypto_field(line, "type")) || (strcmp(v, "acomp") != 0 && strcmp(v, "scomp") != 0))
			continue;
		if (strcmp(cur, name) == 0)
			found = true;
		else if (*cur && !in_list(names->buf, cur))
			sb_printf(names, "%s%s", names->len ? ", " : "", cur);
	}
	return found;
}

static bool crypto_module_alias(const char *name)
{
	struct utsname u;
	if (uname(&u) < 0)
		return false;
	char path[256], want[160], line[512];
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.alias", u.release);
	snprintf(want, sizeof(want), "alias crypto-%s ", name);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, want, strlen(want)) == 0)
			return true;
	return false;
}

bool job_check_zswap_compressor(const char *file, int line, const char *name, struct diags *d)
{
	struct strbuf names = { 0 };
	bool ok = crypto_compressor_listed(name, &names) || crypto_module_alias(name);
	if (!ok)
		diags_add(d, file, line, "zswap.compressor = %s: this kernel has no %s compressor (not in /proc/crypto, no crypto-%s module): use one it has (%s), or load the module that provides it",
			  name, name, name, names.len ? names.buf : "none listed");
	sb_free(&names);
	return ok;
}

bool job_check_workload(const char *file, const struct job_workload *w, struct diags *d)
{
	const struct wl_ops *ops = wl_find(w->type);
	if (!ops || !ops->check)
		return true;
	return ops->check(w, file, d) >= 0;
}
