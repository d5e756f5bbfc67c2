/* kbuild: a Linux kernel build in the memcg. The source is unpacked once
 * into a cache shared by all jobs (or is a tree the user names) and never
 * written to: each run builds into a fresh object directory with O=. */
#include "workloads/wl.h"
#include "workloads/wl_kbuild.h"
#include "harness/job/job.h"
#include "harness/base/config.h"
#include "harness/base/statedir.h"
#include "harness/base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEBIAN_TARBALL "/usr/src/linux-source-6.1.tar.xz"
#define DEBIAN_TOPDIR "linux-source-6.1"
#define DEFAULT_CACHE CONFIG_KBUILD_CACHE_DEFAULT

/* The builds get this environment, not kab's: a MAKEFLAGS, CC or ARCH
 * inherited from whoever started kab must not change what is built. */
#define BUILD_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
static char *const build_env[] = { BUILD_PATH, "LC_ALL=C", NULL };

enum { K_SOURCE, K_CONFIG, K_JOBS, K_TARGET, K_DROP_CACHES, K_END };
/* the configurations make makes by name; config may also be a file's path */
static const char *const config_names[] = { "defconfig", "tinyconfig", "allnoconfig", NULL };

static const struct wl_key keys[] = {
	[K_SOURCE] = { .name = "source", .type = WL_KEY_TEXT, .def = "debian",
		       .help = "debian (Debian's linux-source-6.1, unpacked once into " DEFAULT_CACHE ") or the absolute path of a clean kernel tree" },
	[K_CONFIG] = { .name = "config", .type = WL_KEY_TEXT, .choices = config_names, .def = "defconfig",
		       .help = "a configuration make makes by name (defconfig, tinyconfig, allnoconfig) or the absolute path of a .config" },
	[K_JOBS] = { .name = "jobs", .type = WL_KEY_COUNT, .min = 1, .max = 1024, .def_doc = "number of CPUs",
		     .help = "make -j: parallel compile jobs" },
	[K_TARGET] = { .name = "target", .type = WL_KEY_TEXT, .def = "vmlinux",
		       .help = "make targets, space-separated; e.g. mm/ or kernel/sched/" },
	[K_DROP_CACHES] = { .name = "drop_caches", .type = WL_KEY_BOOL, .bool_words = true, .def = "no",
			    .help = "yes: sync and drop the page cache before each run (outside the memcg)" },
	[K_END] = { .name = NULL },
};

static int param_line(const struct job_workload *wl, const char *key)
{
	for (size_t i = 0; i < wl->n_params; i++)
		if (strcmp(wl->params[i].key, key) == 0)
			return wl->params[i].line;
	return wl->line;
}

/* The directory the shared source cache lives in; KAB_KBUILD_CACHE moves it. */
static const char *cache_root(void)
{
	return config_str(CONFIG_KBUILD_CACHE);
}

static void source_dir(const struct job_workload *wl, char *buf, size_t len)
{
	const char *s = wl_key_value(wl, &keys[K_SOURCE]);
	if (strcmp(s, "debian") == 0)
		snprintf(buf, len, "%s/%s", cache_root(), DEBIAN_TOPDIR);
	else
		snprintf(buf, len, "%s", s);
}

static bool is_config_name(const char *s)
{
	return wl_key_choice(&keys[K_CONFIG], s) != NULL;
}

static bool path_is(const char *dir, const char *name, mode_t type)
{
	char p[4096];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

static void check_source(const struct job_workload *wl, const char *file, struct diags *d, int *r)
{
	const char *s = wl_key_value(wl, &keys[K_SOURCE]);
	int line = param_line(wl, "source");
	if (strcmp(s, "debian") == 0) {
		char dir[4096];
		source_dir(wl, dir, sizeof(dir));
		if (access(DEBIAN_TARBALL, R_OK) < 0 && !path_is(dir, "Makefile", S_IFREG)) {
			diags_add(d, file, line, "workload \"%s\": source = debian needs %s (apt-get install linux-source-6.1)", wl->name, DEBIAN_TARBALL);
			*r = -ENOENT;
		}
		return;
	}
	if (s[0] != '/') {
		diags_add(d, file, line, "workload \"%s\": source \"%s\" must be \"debian\" or an absolute path to a kernel tree", wl->name, s);
		*r = -EINVAL;
		return;
	}
	struct stat st;
	if (stat(s, &st) < 0 || !S_ISDIR(st.st_mode)) {
		diags_add(d, file, line, "workload \"%s\": source %s is not a directory", wl->name, s);
		*r = -ENOENT;
		return;
	}
	if (!path_is(s, "Makefile", S_IFREG) || !path_is(s, "Kconfig", S_IFREG) || !path_is(s, "kernel", S_IFDIR)) {
		diags_add(d, file, line, "workload \"%s\": source %s does not look like a kernel tree (no Makefile, Kconfig and kernel/)", wl->name, s);
		*r = -EINVAL;
		return;
	}
	/* kbuild refuses O= builds from a configured tree; say so now, not mid-job */
	if (path_is(s, ".config", S_IFREG) || path_is(s, "include/config", S_IFDIR)) {
		diags_add(d, file, line, "workload \"%s\": source %s has been configured or built in place; out-of-tree builds need a clean tree: run make mrproper there (kab never writes to it)", wl->name, s);
		*r = -EINVAL;
	}
}

static void check_config(const struct job_workload *wl, const char *file, struct diags *d, int *r)
{
	const char *s = wl_key_value(wl, &keys[K_CONFIG]);
	int line = param_line(wl, "config");
	if (is_config_name(s))
		return;
	if (s[0] == '/') {
		struct stat st;
		if (stat(s, &st) < 0 || !S_ISREG(st.st_mode) || access(s, R_OK) < 0) {
			diags_add(d, file, line, "workload \"%s\": config %s is not a readable file", wl->name, s);
			*r = -ENOENT;
		}
		return;
	}
	const char *hint = util_did_you_mean(s, config_names, ARRAY_SIZE(config_names) - 1);
	char h[64] = "";
	if (hint)
		snprintf(h, sizeof(h), " (did you mean \"%s\"?)", hint);
	struct strbuf names = { 0 };
	for (size_t i = 0; config_names[i]; i++)
		sb_printf(&names, "%s%s", i ? ", " : "", config_names[i]);
	diags_add(d, file, line, "workload \"%s\": unknown config \"%s\"%s: use %s or the absolute path of a .config", wl->name, s, h,
		  names.buf ? names.buf : "");
	sb_free(&names);
	*r = -EINVAL;
}

/* kbuild makes a directory target that does not exist into a build of
 * nothing that succeeds: a typo would measure nothing. A target naming a
 * path must name one inside src that is there. */
static int check_target_path(const char *src, const char *target, struct strbuf *err)
{
	const char *slash = strrchr(target, '/');
	if (!slash)
		return 0;
	if (target[0] == '/' || strstr(target, "..")) {
		sb_printf(err, "target \"%s\" must be a path inside the kernel tree, without .. or a leading /", target);
		return -EINVAL;
	}
	char dir[4096];
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - target), target);
	if (!path_is(src, dir, S_IFDIR)) {
		sb_printf(err, "target \"%s\": there is no directory %s in %s", target, dir, src);
		return -ENOENT;
	}
	return 0;
}

static int check_targets_in(const struct job_workload *wl, const char *src, struct strbuf *err)
{
	char **argv;
	size_t n;
	if (wl_split_args(wl_key_value(wl, &keys[K_TARGET]), &argv, &n) < 0)
		return -EINVAL;
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++)
		r = check_target_path(src, argv[i], err);
	wl_argv_free(argv);
	return r;
}

static void check_target(const struct job_workload *wl, const char *file, struct diags *d, int *r)
{
	const char *s = job_param(wl, "target");
	if (!s)
		return;
	int line = param_line(wl, "target");
	char **argv;
	size_t n;
	if (wl_split_args(s, &argv, &n) < 0) {
		diags_add(d, file, line, "workload \"%s\": target has an unterminated quote", wl->name);
		*r = -EINVAL;
		return;
	}
	bool bad = false;
	if (n == 0) {
		diags_add(d, file, line, "workload \"%s\": target is empty: name a make target such as vmlinux or mm/", wl->name);
		bad = true;
	}
	for (size_t i = 0; i < n; i++)
		if (argv[i][0] == '-' || strchr(argv[i], '=')) {
			diags_add(d, file, line, "workload \"%s\": target \"%s\" is a make option or variable; target takes make targets only (kab sets -C, O= and -j itself)", wl->name, argv[i]);
			bad = true;
		}
	wl_argv_free(argv);
	if (bad) {
		*r = -EINVAL;
		return;
	}
	/* the Debian source may not be unpacked yet: then prepare checks */
	char src[4096];
	struct strbuf err = { 0 };
	source_dir(wl, src, sizeof(src));
	int tr;
	if (path_is(src, "Makefile", S_IFREG) && (tr = check_targets_in(wl, src, &err)) < 0) {
		diags_add(d, file, line, "workload \"%s\": %s", wl->name, err.len ? err.buf : strerror(-tr));
		*r = -EINVAL;
	}
	sb_free(&err);
}

static int check(const struct job_workload *wl, const char *file, struct diags *d)
{
	int r = 0;
	char path[4096];
	static const char *const progs[] = { "make", "gcc", "ld", "bc", "flex", "bison", "perl", "tar", "xz", "env" };
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++)
		if (!util_find_program(progs[i], path, sizeof(path))) {
			diags_add(d, file, wl->line, "workload \"%s\": program \"%s\", which a kernel build needs, is not installed (apt-get install build-essential bc bison flex xz-utils)", wl->name, progs[i]);
			r = -ENOENT;
		}
	if (access("/usr/include/libelf.h", R_OK) < 0 || access("/usr/include/openssl/ssl.h", R_OK) < 0) {
		diags_add(d, file, wl->line, "workload \"%s\": the kernel build needs the libelf and OpenSSL headers (apt-get install libelf-dev libssl-dev)", wl->name);
		r = -ENOENT;
	}
	check_source(wl, file, d, &r);
	check_config(wl, file, d, &r);
	check_target(wl, file, d, &r);
	if (wl_keys_check(wl, keys, file, d) < 0)
		r = -EINVAL;
	return r;
}

/* ---- directory trees ---- */

static int tree_walk_fd(int dfd, const char *suffix, uint64_t *count, int depth)
{
	if (depth > 64) {
		close(dfd);
		return -ELOOP;
	}
	DIR *d = fdopendir(dfd);
	if (!d) {
		int e = -errno;
		close(dfd);
		return e;
	}
	size_t sl = suffix ? strlen(suffix) : 0;
	int r = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		unsigned char t = e->d_type;
		if (t == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			t = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		}
		if (t == DT_DIR) {
			int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			int sr = sub < 0 ? -errno : tree_walk_fd(sub, suffix, count, depth + 1);
			if (sr < 0 && r == 0)
				r = sr;
			continue;
		}
		if (count && t == DT_REG) {
			size_t nl = strlen(e->d_name);
			if (nl > sl && strcmp(e->d_name + nl - sl, suffix) == 0)
				(*count)++;
		}
	}
	closedir(d);
	return r;
}

int wl_kbuild_count_files(const char *dir, const char *suffix, uint64_t *ret)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	uint64_t n = 0;
	int r = tree_walk_fd(fd, suffix, &n, 0);
	if (r < 0)
		return r;
	*ret = n;
	return 0;
}

/* ---- child processes of prepare ---- */

/* Runs argv with stdin from in_fd (or /dev/null) and stdout+stderr into
 * log (or kab's stderr), waiting for it; progress, if set, is called about
 * every 10 s while it runs. */
static int run_wait(char *const argv[], int in_fd, const char *log, void (*progress)(void *, double), void *arg,
		    int *ret_status)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	if (in_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (log) {
		posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
		posix_spawn_file_actions_adddup2(&fa, 1, 2);
	}
	/* tar and make get none of kab's descriptors but these three */
	posix_spawnattr_t attr;
	int r = util_spawn_close_fds(&fa);
	if (r == 0)
		r = util_spawnattr_init(&attr);
	if (r < 0) {
		posix_spawn_file_actions_destroy(&fa);
		return r;
	}
	pid_t pid;
	r = posix_spawnp(&pid, argv[0], &fa, &attr, argv, build_env);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0)
		return -r;
	double t0 = util_mono_now(), next = t0 + 10;
	int status;
	for (;;) {
		pid_t w = waitpid(pid, &status, progress ? WNOHANG : 0);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (w == 0) {
			struct timespec ts = { 0, 200 * 1000 * 1000 };
			nanosleep(&ts, NULL);
			double now = util_mono_now();
			if (now >= next) {
				progress(arg, now - t0);
				next += 10;
			}
		}
	}
	*ret_status = status;
	return 0;
}

/* The last non-empty line of a log, for an error message. */
static void log_tail(const char *log, char *buf, size_t len)
{
	buf[0] = 0;
	_cleanup_free_ char *text = NULL;
	size_t n;
	if (util_read_file(log, &text, &n) < 0)
		return;
	while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' '))
		text[--n] = 0;
	char *line = strrchr(text, '\n');
	snprintf(buf, len, "%s", line ? line + 1 : text);
}

/* ---- the shared source cache ---- */

struct unpack_progress {
	int fd;
	uint64_t size;
};

/* xz reads the tarball through the file description we hand tar as stdin,
 * so its offset, seen through our copy, is how far the unpack has got. */
static void unpack_progress(void *arg, double elapsed)
{
	const struct unpack_progress *p = arg;
	off_t off = lseek(p->fd, 0, SEEK_CUR);
	if (off >= 0 && p->size > 0)
		log_info("  unpacking: %.0f%% (%llu of %llu MiB compressed) after %.0f s", 100.0 * (double)off / (double)p->size,
			 (unsigned long long)off >> 20, (unsigned long long)p->size >> 20, elapsed);
	else
		log_info("  unpacking: %.0f s", elapsed);
}

static void stamp_text(const struct stat *st, char *buf, size_t len)
{
	snprintf(buf, len, "%s size %llu mtime %lld", DEBIAN_TARBALL, (unsigned long long)st->st_size, (long long)st->st_mtime);
}

static bool cache_is_current(const char *stamp, const char *dir, const char *want)
{
	_cleanup_free_ char *have = NULL;
	return util_read_line(stamp, &have) == 0 && strcmp(have, want) == 0 && path_is(dir, "Makefile", S_IFREG);
}

static int write_stamp(const char *path, const char *text)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	size_t n = strlen(text);
	if (write(fd, text, n) != (ssize_t)n || write(fd, "\n", 1) != 1)
		return -EIO;
	int f = fd;
	fd = -1;
	return close(f) < 0 ? -errno : 0;
}

/* Removes what an unpack that died half-way left behind. */
static void remove_stale_unpacks(const char *root)
{
	DIR *d = opendir(root);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, ".unpack-", 8) != 0)
			continue;
		char p[4096];
		snprintf(p, sizeof(p), "%s/%s", root, e->d_name);
		log_info("removing %s, left by an unpack that did not finish", p);
		util_remove_tree(p);
	}
	closedir(d);
}

/* The cache is shared by every job and its tree is built as root: it and
 * every directory above it must be root's and closed to other writers
 * (none may put a Makefile there, or a link where kab unpacks). */
static int cache_trusted(const char *root, struct strbuf *err)
{
	struct strbuf why = { 0 };
	int r = state_path_trusted(root, &why);
	if (r < 0)
		sb_printf(err, "the kernel source cache %s cannot be used: %s; make it and its parents root's and not writable by others (chown root:root, chmod go-w), or move it with $KAB_KBUILD_CACHE",
			  root, why.buf ? why.buf : strerror(-r));
	sb_free(&why);
	return r;
}

/* Unpacks Debian's tarball into the cache unless it is there: under an
 * flock, into a temporary directory renamed into place, then a stamp
 * naming the tarball it came from. */
static int ensure_debian_source(struct strbuf *err)
{
	const char *root = cache_root();
	char dir[4096], stamp[4200], lock[4200], want[512];
	snprintf(dir, sizeof(dir), "%s/%s", root, DEBIAN_TOPDIR);
	snprintf(stamp, sizeof(stamp), "%s.stamp", dir);
	snprintf(lock, sizeof(lock), "%s/.lock", root);
	struct stat tst;
	int r;
	if (access(root, F_OK) == 0 && (r = cache_trusted(root, err)) < 0)
		return r;
	if (stat(DEBIAN_TARBALL, &tst) < 0) {
		/* the package went away but an unpacked tree from it is still usable */
		if (path_is(dir, "Makefile", S_IFREG) && access(stamp, R_OK) == 0)
			return 0;
		sb_printf(err, "%s: %s (apt-get install linux-source-6.1)", DEBIAN_TARBALL, strerror(errno));
		return -ENOENT;
	}
	stamp_text(&tst, want, sizeof(want));
	if (cache_is_current(stamp, dir, want))
		return 0;

	if ((r = util_mkdir_p(root, 0755)) < 0) {
		sb_printf(err, "cannot create the source cache %s: %s", root, strerror(-r));
		return r;
	}
	if ((r = cache_trusted(root, err)) < 0)
		return r;
	_cleanup_close_ int lfd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (lfd < 0) {
		r = -errno;
		sb_printf(err, "cannot open %s: %s", lock, strerror(-r));
		return r;
	}
	if (flock(lfd, LOCK_EX | LOCK_NB) < 0) {
		log_info("waiting for another kab unpacking the kernel source (%s)", lock);
		if (flock(lfd, LOCK_EX) < 0) {
			r = -errno;
			sb_printf(err, "cannot lock %s: %s", lock, strerror(-r));
			return r;
		}
	}
	if (cache_is_current(stamp, dir, want))
		return 0; /* the other one did it */

	remove_stale_unpacks(root);
	unlink(stamp);
	if ((r = util_remove_tree(dir)) < 0) {
		sb_printf(err, "cannot remove the outdated source %s: %s", dir, strerror(-r));
		return r;
	}
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s/.unpack-XXXXXX", root);
	if (!mkdtemp(tmp)) {
		r = -errno;
		sb_printf(err, "cannot create a directory in %s: %s", root, strerror(-r));
		return r;
	}
	_cleanup_close_ int in = open(DEBIAN_TARBALL, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		r = -errno;
		sb_printf(err, "cannot open %s: %s", DEBIAN_TARBALL, strerror(errno));
		goto fail;
	}
	log_info("unpacking %s into %s (once for all jobs; about a minute)", DEBIAN_TARBALL, dir);
	double t0 = util_mono_now();
	char *argv[] = { "tar", "-x", "-J", "-f", "-", "-C", tmp, "--no-same-owner", NULL };
	struct unpack_progress p = { in, (uint64_t)tst.st_size };
	int status;
	if ((r = run_wait(argv, in, NULL, unpack_progress, &p, &status)) < 0) {
		sb_printf(err, "cannot run tar: %s", strerror(-r));
		goto fail;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char st[64];
		util_wait_status_text(status, st, sizeof(st));
		sb_printf(err, "unpacking %s failed: tar %s (its messages are above)", DEBIAN_TARBALL, st);
		r = -EIO;
		goto fail;
	}
	char top[4300];
	snprintf(top, sizeof(top), "%s/%s", tmp, DEBIAN_TOPDIR);
	if (rename(top, dir) < 0) {
		r = -errno;
		sb_printf(err, "cannot move the unpacked source to %s: %s", dir, strerror(errno));
		goto fail;
	}
	rmdir(tmp);
	if ((r = write_stamp(stamp, want)) < 0) {
		sb_printf(err, "cannot write %s: %s", stamp, strerror(-r));
		return r;
	}
	log_info("unpacked the kernel source in %.0f s", util_mono_now() - t0);
	return 0;
fail:
	util_remove_tree(tmp);
	return r;
}

/* ---- hooks ---- */

/* Makes jobdir/.config once per job: make CONFIG (or the user's file plus
 * olddefconfig) in a scratch O= directory. */
static int make_config(const struct wl_ctx *c, const char *src, struct strbuf *err)
{
	char final[4096], cfg[4096], cfgfile[4200], log[4200], tmp[4200];
	snprintf(final, sizeof(final), "%s/.config", c->jobdir);
	if (access(final, R_OK) == 0)
		return 0; /* made before a resume */
	snprintf(cfg, sizeof(cfg), "%s/cfg", c->jobdir);
	snprintf(cfgfile, sizeof(cfgfile), "%s/.config", cfg);
	snprintf(log, sizeof(log), "%s/config.log", c->jobdir);
	snprintf(tmp, sizeof(tmp), "%s/.config.tmp", c->jobdir);
	int r = util_remove_tree(cfg);
	if (r < 0 || mkdir(cfg, 0755) < 0) {
		r = r < 0 ? r : -errno;
		sb_printf(err, "cannot create %s: %s", cfg, strerror(-r));
		return r;
	}
	const char *config = wl_key_value(c->wl, &keys[K_CONFIG]);
	const char *goal = config;
	if (!is_config_name(config)) {
		if ((r = util_copy_file(config, cfgfile)) < 0) {
			sb_printf(err, "cannot copy config %s to %s: %s", config, cfgfile, strerror(-r));
			return r;
		}
		goal = "olddefconfig";
	}
	char o[4200];
	snprintf(o, sizeof(o), "O=%s", cfg);
	char *argv[] = { "make", "-s", "-C", (char *)src, o, (char *)goal, NULL };
	log_info("making the kernel configuration: make %s (%s)", goal, src);
	int status;
	if ((r = run_wait(argv, -1, log, NULL, NULL, &status)) < 0) {
		sb_printf(err, "cannot run make: %s", strerror(-r));
		return r;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char st[64], tail[300];
		util_wait_status_text(status, st, sizeof(st));
		log_tail(log, tail, sizeof(tail));
		sb_printf(err, "make %s %s: %s (full output in %s)", goal, st, tail, log);
		return -EIO;
	}
	if ((r = util_copy_file(cfgfile, tmp)) < 0 || rename(tmp, final) < 0) {
		r = r < 0 ? r : -errno;
		sb_printf(err, "cannot keep the configuration as %s: %s", final, strerror(-r));
		return r;
	}
	util_remove_tree(cfg);
	return 0;
}

static int prepare(const struct wl_ctx *c, struct strbuf *err)
{
	char src[4096];
	source_dir(c->wl, src, sizeof(src));
	int r;
	if (strcmp(wl_key_value(c->wl, &keys[K_SOURCE]), "debian") == 0 && (r = ensure_debian_source(err)) < 0)
		return r;
	if ((r = check_targets_in(c->wl, src, err)) < 0)
		return r;
	return make_config(c, src, err);
}

static void obj_dir(const struct wl_ctx *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s/obj", c->workdir);
}

static int before(const struct wl_ctx *c, struct strbuf *err)
{
	char obj[4096], from[4096], to[4200];
	obj_dir(c, obj, sizeof(obj));
	snprintf(from, sizeof(from), "%s/.config", c->jobdir);
	snprintf(to, sizeof(to), "%s/.config", obj);
	int r = util_remove_tree(obj);
	if (r < 0 || mkdir(obj, 0755) < 0) {
		r = r < 0 ? r : -errno;
		sb_printf(err, "cannot create the object directory %s: %s", obj, strerror(-r));
		return r;
	}
	if ((r = util_copy_file(from, to)) < 0) {
		sb_printf(err, "cannot copy the job's kernel configuration %s to %s: %s", from, to, strerror(-r));
		return r;
	}
	return 0;
}

/* drop_caches = yes: the executor drops the page cache after before(), so
 * that the build reads its source into the run's own memcg */
static bool wants_drop_caches(const struct job_workload *wl)
{
	bool drop = false;
	wl_key_bool(wl, &keys[K_DROP_CACHES], &drop);
	return drop;
}

static int make_argv(const struct wl_ctx *c, char ***ret_argv)
{
	char src[4096], obj[4096];
	source_dir(c->wl, src, sizeof(src));
	obj_dir(c, obj, sizeof(obj));
	uint64_t jobs;
	if (wl_key_u64(c->wl, &keys[K_JOBS], &jobs) < 0) { /* the default: one per CPU */
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		jobs = n > 0 ? (uint64_t)n : 1;
	}
	char **targets;
	size_t nt;
	int r = wl_split_args(wl_key_value(c->wl, &keys[K_TARGET]), &targets, &nt);
	if (r < 0)
		return r;
	size_t n = 0, cap = nt + 12;
	char **argv = calloc(cap, sizeof(char *));
	if (!argv) {
		wl_argv_free(targets);
		return -ENOMEM;
	}
	/* env -i: the build sees the same environment as prepare's make */
	argv[n++] = strdup("env");
	argv[n++] = strdup("-i");
	for (size_t i = 0; build_env[i]; i++)
		argv[n++] = strdup(build_env[i]);
	argv[n++] = strdup("make");
	argv[n++] = strdup("-s");
	argv[n++] = strdup("-C");
	argv[n++] = strdup(src);
	if (asprintf(&argv[n++], "O=%s", obj) < 0)
		argv[n - 1] = NULL;
	if (asprintf(&argv[n++], "-j%llu", (unsigned long long)jobs) < 0)
		argv[n - 1] = NULL;
	size_t fixed = n;
	for (size_t i = 0; i < nt; i++)
		argv[n++] = targets[i];
	free(targets);
	argv[n] = NULL;
	for (size_t i = 0; i < fixed; i++)
		if (!argv[i]) {
			wl_argv_free(argv);
			return -ENOMEM;
		}
	*ret_argv = argv;
	return 0;
}

static int collect(const struct wl_ctx *c, int exit_status, struct wl_metrics *m)
{
	char obj[4096];
	obj_dir(c, obj, sizeof(obj));
	uint64_t objects = 0;
	int r = wl_kbuild_count_files(obj, ".o", &objects);
	if (r < 0)
		return r;
	wl_metrics_add_declared(m, "kbuild.objects", NULL, (double)objects);
	bool ok = WIFEXITED(exit_status) && WEXITSTATUS(exit_status) == 0;
	wl_metrics_add_declared(m, "kbuild.ok", NULL, ok ? 1 : 0);
	return 0;
}

static const struct wl_metric metrics[] = {
	WL_METRIC("kbuild.objects", "files", NEUTRAL, "objects built"),
	WL_METRIC("kbuild.ok", "", NEUTRAL, NULL),
	{ NULL },
};

static void finish(const struct wl_ctx *c)
{
	if (c->jobdir)
		util_remove_tree(c->jobdir);
}

const struct wl_ops wl_kbuild_ops = {
	.type = "kbuild",
	.summary = "a Linux kernel build (make -jN in a fresh O= directory); build time, user/sys time, objects built",
	.keys = keys,
	.metrics = metrics,
	.check = check,
	.argv = make_argv,
	.collect = collect,
	.prepare = prepare,
	.before = before,
	.drop_caches = wants_drop_caches,
	.finish = finish,
};
