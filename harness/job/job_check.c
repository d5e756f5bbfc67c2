/* Job files: checks against the machine. They only read (stat, realpath,
 * directory listings, $PATH lookups, git rev-parse, machine.conf): `kab
 * check` must never change the system it checks. The parser (job_build.c)
 * builds the job from its text alone; job_check_machine() then looks at
 * the machine, and job_parse_string_nocheck() skips it. */
#include "harness/job/job.h"
#include "harness/job/job_priv.h"
#include "kernels/build.h"
#include "kernels/builduser.h"
#include "kernels/kexec.h"
#include "harness/job/knob_allow.h"
#include "harness/job/machine.h"
#include "harness/base/statedir.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

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
		if (util_grow(names, cap, n + 1, 64) < 0)
			break;
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
	diags_add(d, file, k->line, "knob %s%s is not an allowed knob: kab sets only memory-management knobs (%s)%s; an operator may allow more with knobs.allow in %s",
		  k->name, shown, list.buf ? list.buf : "", also.buf ? also.buf : "", machine_conf_path());
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

/* One job's machine checks: the build user is looked up once, on first
 * use, and its problems reported once; machine.conf is main's, loaded
 * with the configuration. */
struct checker {
	struct job *j;
	const char *file;
	const struct job_notes *notes;
	struct diags *d;
	bool build_user_checked, build_user_ok;
};

#define ERR(c, line, ...) diags_add((c)->d, (c)->file, (line), __VA_ARGS__)

/* The machine file a conditioning key writes, and what to do without it. */
static void need_file(struct checker *c, int line, const char *key, const char *path, const char *what)
{
	if (access(path, F_OK) != 0)
		ERR(c, line, "%s: %s (no %s): remove the key%s", key, what, path,
		    strstr(what, "machine") ? ", or run on bare metal" : "");
}

/* cpus and sampler_cpu against this machine's CPUs; the sampler's
 * overlap with cpus only once cpus fits (job_check_sampler_overlap). */
static void check_cpus(struct checker *c, const struct job_condition *cond)
{
	long online = sysconf(_SC_NPROCESSORS_CONF);
	bool mask[JOB_CPUS_MAX] = { 0 };
	const char *why = NULL;
	bool cpus_ok = false;
	if (cond->cpus && job_parse_cpus(cond->cpus, mask, &why) >= 0) {
		cpus_ok = true;
		for (int cpu = (int)online; online > 0 && cpu < JOB_CPUS_MAX; cpu++)
			if (mask[cpu]) {
				ERR(c, cond->cpus_line, "cpus = %s: CPU %d is out of range: this machine has CPUs 0 to %ld", cond->cpus, cpu,
				    online - 1);
				cpus_ok = false;
				break;
			}
	}
	if (cond->sampler_cpu < 0)
		return;
	if (online > 0 && cond->sampler_cpu >= online)
		ERR(c, cond->sampler_cpu_line, "sampler_cpu = %d: CPU %d is out of range: this machine has CPUs 0 to %ld",
		    cond->sampler_cpu, cond->sampler_cpu, online - 1);
	else if (cpus_ok)
		job_check_sampler_overlap(c->file, cond, c->d);
}

/* [job]: a local archive, and the files the conditioning keys write. */
static void check_job_section(struct checker *c)
{
	const struct job *j = c->j;
	const struct job_condition *cond = &j->cond;
	struct stat st;
	/* a relative archive was made absolute; an absolute one is the only
	 * kind kseries_archive_ok takes without a scheme */
	if (j->archive && j->archive[0] == '/' && (stat(j->archive, &st) < 0 || !S_ISDIR(st.st_mode)))
		ERR(c, j->archive_line, "archive %s is not a directory: a local archive is a directory of MESSAGE-ID/t.mbox.gz", j->archive);
	if (cond->compact)
		need_file(c, cond->compact_line, "compact = yes", "/proc/sys/vm/compact_memory",
			  "this kernel has no memory compaction (CONFIG_COMPACTION)");
	if (cond->cpufreq == JOB_CPUFREQ_PERFORMANCE)
		need_file(c, cond->cpufreq_line, "cpufreq = performance", "/sys/devices/system/cpu/cpu0/cpufreq",
			  "this machine has no cpufreq");
	if (cond->turbo != JOB_KEEP && access("/sys/devices/system/cpu/intel_pstate/no_turbo", F_OK) != 0 &&
	    access("/sys/devices/system/cpu/cpufreq/boost", F_OK) != 0)
		ERR(c, cond->turbo_line, "turbo = %s: this machine has no turbo switch (no /sys/devices/system/cpu/intel_pstate/no_turbo or /sys/devices/system/cpu/cpufreq/boost): remove the key, or run on bare metal",
		    cond->turbo == JOB_OFF ? "off" : "on");
	check_cpus(c, cond);
}

/* [swap]: the device, then the zswap module parameters its keys set. */
static void check_swap_section(struct checker *c)
{
	const struct job_swap *sw = &c->j->swap;
	const struct job_notes *n = c->notes;
	if (n->swap_clean && job_check_swap(c->file, sw, n->swap_path_line, c->d) && n->swap_algorithm_line &&
	    sw->kind == JOB_SWAP_ZRAM && sw->algorithm)
		job_check_zram_algorithm(c->file, n->swap_algorithm_line, sw->algorithm, c->d);
	for (size_t i = 0; i < sw->n_knobs; i++) {
		const struct job_knob *k = &sw->knobs[i];
		const struct job_keydef *z = job_zswap_key(k->path + strlen(JOB_ZSWAP_PARAMS));
		if (!z)
			continue;
		if (access(k->path, F_OK) != 0)
			ERR(c, k->line, "%s: %s does not exist: this kernel has no zswap (CONFIG_ZSWAP) or no such parameter",
			    z->name, k->path);
		else if (strcmp(z->param, "compressor") == 0)
			job_check_zswap_compressor(c->file, k->line, k->value, c->d);
	}
}

/* kab as root builds as the build user: said once, at the first kernel =
 * build, when it is missing. */
static bool build_user_ok(struct checker *c, int line)
{
	if (c->build_user_checked)
		return c->build_user_ok;
	struct krun_user u;
	struct strbuf why = { 0 };
	c->build_user_checked = true;
	c->build_user_ok = kbuser_lookup(&u, &why) >= 0;
	if (!c->build_user_ok)
		ERR(c, line, "kernel = build: %s", why.buf ? why.buf : "no build user");
	sb_free(&why);
	return c->build_user_ok;
}

static void check_initrd(struct checker *c, const struct job_variant *v)
{
	if (v->initrd && access(v->initrd, R_OK) != 0)
		ERR(c, v->initrd_line, "initrd %s cannot be read (%s): give the path of an initramfs or leave initrd out", v->initrd,
		    strerror(errno));
}

/* kernel = build: what it is built from can be read, as the build user. */
static void check_build_inputs(struct checker *c, struct job_variant *v, size_t vi)
{
	const struct job_notes *n = c->notes;
	int kernel_line = vi < ARRAY_SIZE(n->variant) ? n->variant[vi].kernel_line : v->line;
	bool tree_seen_ok = vi < ARRAY_SIZE(n->variant) && n->variant[vi].tree_ok;
	/* git reads the tree as the build user: without one, nothing to check it with */
	bool tree_ok = false;
	if (v->tree && tree_seen_ok && build_user_ok(c, kernel_line)) {
		struct strbuf why = { 0 };
		tree_ok = kbuild_check_tree(v->tree, &why) == 0;
		if (!tree_ok)
			ERR(c, v->tree_line, "%s", why.buf ? why.buf : "tree cannot be read");
		sb_free(&why);
	}
	char sha[41];
	if (tree_ok && v->track_remote && v->track_branch)
		job_check_track(c->file, v, c->d);
	if (tree_ok && v->base && kbuild_resolve_sha(NULL, v->tree, v->base, sha) < 0)
		ERR(c, v->base_line, "base \"%s\" is not a commit in %s or kab's clone of it (git rev-parse --verify %s^{commit} fails): give a branch, tag or sha",
		    v->base, v->tree, v->base);
	if (v->series && strncmp(v->series, "lore:", 5) != 0 && access(v->series, R_OK) != 0)
		ERR(c, v->series_line, "series %s does not exist: give an mbox, a directory of .patch files or lore:<message-id>", v->series);
	char running[4096];
	if (v->config && strcmp(v->config, "running") == 0 && kbuild_running_config(running, sizeof(running)) < 0)
		ERR(c, v->config_line ? v->config_line : v->line,
		    "config = running: this kernel has no /proc/config.gz or /boot/config-$(uname -r): give a config PATH");
	else if (v->config && !job_config_keyword(v->config) && access(v->config, R_OK) != 0)
		ERR(c, v->config_line, "config %s does not exist: give running, defconfig, tinyconfig or the path of a .config", v->config);
	for (size_t i = 0; i < v->n_fragments; i++)
		if (access(v->fragments[i], R_OK) != 0)
			ERR(c, v->config_line, "config.fragment %s does not exist", v->fragments[i]);
}

/* A variant: its knobs, then the kernel it boots. */
static void check_variant(struct checker *c, struct job_variant *v, size_t vi)
{
	for (size_t i = 0; i < v->n_knobs; i++)
		job_check_knob(c->file, &v->knobs[i], machine_conf_current(), c->d);
	const char *kernel = v->kernel ? v->kernel : "running";
	if (strcmp(kernel, "image") == 0) {
		if (v->image && access(v->image, R_OK) != 0)
			ERR(c, v->image_line, "image %s cannot be read (%s): give the path of a kernel image (bzImage)", v->image,
			    strerror(errno));
		check_initrd(c, v);
		return;
	}
	if (strcmp(kernel, "build") != 0)
		return;
	check_initrd(c, v);
	/* nothing is built: no tree to read, no build user needed. The
	 * parser has no database: kabd's submit and the run check the id. */
	if (!v->build_line)
		check_build_inputs(c, v, vi);
}

/* A job that boots kernels switches them with kexec unless the job or
 * machine.conf says reboot; the job's own switch wins over the machine's. */
static void check_switch(struct checker *c)
{
	struct job *j = c->j;
	const struct job_notes *n = c->notes;
	const struct machine_conf *mc = !n->switch_line ? machine_conf_current() : NULL;
	if (mc && mc->has_switch) {
		j->switch_mode = mc->switch_mode;
		if (!(j->switch_source = strdup(mc->path)))
			ERR(c, 0, "out of memory while reading the job");
	}
	struct strbuf why = { 0 };
	if (j->switch_mode == JOB_SWITCH_KEXEC && kexec_supported(&why) < 0)
		ERR(c, n->switch_line ? n->switch_line : n->job_line,
		    "the variants boot kernels of their own, switched with kexec, but %s: set switch = reboot in [job] (or in %s, for every job on this machine) to switch with a one-shot boot entry and a reboot instead",
		    why.len ? why.buf : "", machine_conf_path());
	sb_free(&why);
}

void job_check_machine(struct job *j, const char *file, const struct job_notes *notes, bool build_only,
		       struct diags *d)
{
	struct checker c = { .j = j, .file = file, .notes = notes, .d = d };
	check_job_section(&c);
	check_swap_section(&c);
	for (size_t i = 0; i < j->n_variants; i++)
		check_variant(&c, &j->variants[i], i);
	for (size_t i = 0; i < j->n_workloads && i < ARRAY_SIZE(notes->workload_clean); i++)
		if (notes->workload_clean[i])
			job_check_workload(file, &j->workloads[i], d);
	if (job_boots_kernels(j) && !build_only)
		check_switch(&c);
}
