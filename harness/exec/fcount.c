/* Counts calls of kernel functions during a run, machine-wide.
 *
 * With the function tracer: one tracefs instance per function, filtered to
 * it; a function tracer event is written per call and nothing reads the
 * buffer, so the calls are the entries plus the overruns of every CPU's
 * buffer, however small it is. Without it (a kernel built without
 * CONFIG_FUNCTION_TRACER, or filtering refused), kprobe events: one probe
 * per function, its hits from kprobe_profile. Where neither works the
 * reason is kept and the run goes on without the counts. */
#include "harness/exec/fcount.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

enum method { M_NONE, M_FUNCTION, M_KPROBE };

struct fcount {
	enum method method;
	char tracefs[128];
	bool mounted;      /* kab mounted tracefs; unmounted when done */
	char tag[64];      /* instance prefix / kprobe group */
	char **fns;
	size_t n;
};

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int find_tracefs(char *buf, size_t len, bool *mounted, struct strbuf *why)
{
	static const char *const places[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char p[256];
	for (size_t i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/available_tracers", places[i]);
		if (access(p, F_OK) == 0) {
			snprintf(buf, len, "%s", places[i]);
			return 0;
		}
	}
	if (!is_dir(places[0])) {
		sb_printf(why, "this kernel has no tracefs (%s is missing)", places[0]);
		return -ENOENT;
	}
	if (mount("nodev", places[0], "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		sb_printf(why, "cannot mount tracefs on %s: %s", places[0], strerror(errno));
		return -errno;
	}
	*mounted = true;
	snprintf(buf, len, "%s", places[0]);
	return 0;
}

/* Writes value to DIR/NAME; a refusal's errno comes back. */
static int tfs_write(const char *dir, const char *name, const char *value, bool append)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		return -errno;
	size_t n = strlen(value);
	ssize_t w = write(fd, value, n);
	int r = w == (ssize_t)n ? 0 : w < 0 ? -errno : -EIO;
	close(fd);
	return r;
}

static bool fn_name_ok(const char *s)
{
	if (!*s || strlen(s) > 100)
		return false;
	for (; *s; s++)
		if (!(*s == '_' || *s == '.' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

/* Whether DIR/set_ftrace_filter lists fn (and so is not empty). */
static bool filter_has(const char *dir, const char *fn)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/set_ftrace_filter", dir);
	_cleanup_free_ char *text = NULL;
	if (util_read_file(p, &text, NULL) < 0)
		return false;
	size_t fl = strlen(fn);
	for (const char *line = text; line && *line;) {
		if (strncmp(line, fn, fl) == 0 && (line[fl] == '\n' || line[fl] == 0 || line[fl] == ' '))
			return true;
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	return false;
}

static void instance_dir(const struct fcount *f, size_t i, char *buf, size_t len)
{
	snprintf(buf, len, "%s/instances/%s-%zu", f->tracefs, f->tag, i);
}

static int start_function(struct fcount *f, struct strbuf *why)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/available_tracers", f->tracefs);
	_cleanup_free_ char *avail = NULL;
	if (util_read_file(p, &avail, NULL) < 0 || !strstr(avail, "function")) {
		sb_puts(why, "no function tracer in this kernel (CONFIG_FUNCTION_TRACER)");
		return -EOPNOTSUPP;
	}
	for (size_t i = 0; i < f->n; i++) {
		char dir[512];
		instance_dir(f, i, dir, sizeof(dir));
		if (mkdir(dir, 0700) < 0) {
			sb_printf(why, "cannot make a tracing instance %s: %s", dir, strerror(errno));
			return -errno;
		}
		int r = tfs_write(dir, "buffer_size_kb", "8", false);
		if (r == 0)
			r = tfs_write(dir, "set_ftrace_filter", f->fns[i], false);
		/* a name that matches nothing may be taken silently, leaving an
		 * empty filter, which traces every function: read it back */
		if (r == 0 && !filter_has(dir, f->fns[i]))
			r = -EINVAL;
		if (r == -EINVAL) {
			sb_printf(why, "%s is not a traceable function on this kernel (not in available_filter_functions)",
				  f->fns[i]);
			return r;
		}
		if (r < 0) {
			sb_printf(why, "function tracing is locked down on this kernel (set_ftrace_filter: %s)", strerror(-r));
			return r;
		}
		if ((r = tfs_write(dir, "current_tracer", "function", false)) < 0) {
			sb_printf(why, "cannot start the function tracer: %s", strerror(-r));
			return r;
		}
	}
	for (size_t i = 0; i < f->n; i++) {
		char dir[512];
		instance_dir(f, i, dir, sizeof(dir));
		int r = tfs_write(dir, "tracing_on", "1", false);
		if (r < 0) {
			sb_printf(why, "cannot turn tracing on: %s", strerror(-r));
			return r;
		}
	}
	return 0;
}

static int start_kprobe(struct fcount *f, struct strbuf *why)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/kprobe_events", f->tracefs);
	if (access(p, W_OK) != 0) {
		sb_puts(why, "no kprobe events in this kernel (CONFIG_KPROBE_EVENTS)");
		return -EOPNOTSUPP;
	}
	for (size_t i = 0; i < f->n; i++) {
		char def[256];
		snprintf(def, sizeof(def), "p:%s/f%zu %s\n", f->tag, i, f->fns[i]);
		int r = tfs_write(f->tracefs, "kprobe_events", def, true);
		if (r < 0) {
			sb_printf(why, "cannot probe %s: %s", f->fns[i], strerror(-r));
			return r;
		}
		char en[256];
		snprintf(en, sizeof(en), "events/%s/f%zu/enable", f->tag, i);
		if ((r = tfs_write(f->tracefs, en, "1", false)) < 0) {
			sb_printf(why, "cannot enable the probe on %s: %s", f->fns[i], strerror(-r));
			return r;
		}
	}
	return 0;
}

void fcount_cleanup(const char *tracefs, const char *tag)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/instances", tracefs);
	DIR *d = opendir(p);
	size_t tl = strlen(tag);
	for (struct dirent *e; d && (e = readdir(d));) {
		if (strncmp(e->d_name, tag, tl) != 0 || e->d_name[tl] != '-')
			continue;
		char dir[1024];
		snprintf(dir, sizeof(dir), "%s/%s", p, e->d_name);
		tfs_write(dir, "tracing_on", "0", false);
		tfs_write(dir, "current_tracer", "nop", false);
		if (rmdir(dir) < 0)
			log_warn("cannot remove tracing instance %s: %s", dir, strerror(errno));
	}
	if (d)
		closedir(d);
	/* kprobes of the group: disable, then remove each */
	snprintf(p, sizeof(p), "%s/events/%s", tracefs, tag);
	if (!is_dir(p))
		return;
	d = opendir(p);
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_name[0] != 'f')
			continue;
		char en[512], def[256];
		snprintf(en, sizeof(en), "events/%s/%s/enable", tag, e->d_name);
		tfs_write(tracefs, en, "0", false);
		snprintf(def, sizeof(def), "-:%s/%s\n", tag, e->d_name);
		tfs_write(tracefs, "kprobe_events", def, true);
	}
	if (d)
		closedir(d);
}

int fcount_start(char *const *fns, size_t n, const char *tag, struct fcount **ret, struct strbuf *why)
{
	*ret = NULL;
	if (n == 0)
		return 0;
	struct fcount *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->fns = (char **)fns;
	f->n = n;
	snprintf(f->tag, sizeof(f->tag), "%s", tag);
	for (size_t i = 0; i < n; i++)
		if (!fn_name_ok(fns[i])) {
			sb_printf(why, "\"%s\" is not a kernel function name", fns[i]);
			free(f);
			return -EINVAL;
		}
	int r = find_tracefs(f->tracefs, sizeof(f->tracefs), &f->mounted, why);
	if (r < 0) {
		free(f);
		return r;
	}
	struct strbuf why_fn = { 0 }, why_kp = { 0 };
	r = start_function(f, &why_fn);
	if (r == 0) {
		f->method = M_FUNCTION;
	} else {
		fcount_cleanup(f->tracefs, f->tag);
		r = start_kprobe(f, &why_kp);
		if (r == 0)
			f->method = M_KPROBE;
		else
			fcount_cleanup(f->tracefs, f->tag);
	}
	if (r < 0)
		sb_printf(why, "%s; kprobes: %s", why_fn.len ? why_fn.buf : "", why_kp.len ? why_kp.buf : "");
	sb_free(&why_fn);
	sb_free(&why_kp);
	if (r == 0) {
		*ret = f;
		return 0;
	}
	if (f->mounted)
		umount2(f->tracefs, MNT_DETACH);
	free(f);
	return r;
}

/* Sum of "entries" and "overrun" (and "commit overrun") over the CPUs of
 * one instance: every event written, read or not. */
static int instance_events(const char *dir, uint64_t *ret)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s/per_cpu", dir);
	DIR *d = opendir(p);
	if (!d)
		return -errno;
	uint64_t sum = 0;
	int r = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (strncmp(e->d_name, "cpu", 3) != 0)
			continue;
		char sp[1200];
		snprintf(sp, sizeof(sp), "%s/%s/stats", p, e->d_name);
		_cleanup_free_ char *text = NULL;
		if ((r = util_read_file(sp, &text, NULL)) < 0)
			break;
		for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
			nl = strchr(line, '\n');
			if (nl)
				*nl = 0;
			const char *keys[] = { "entries: ", "overrun: ", "commit overrun: " };
			for (size_t k = 0; k < 3; k++) {
				size_t kl = strlen(keys[k]);
				uint64_t v;
				if (strncmp(line, keys[k], kl) == 0 && util_parse_u64(line + kl, &v) == 0)
					sum += v;
			}
		}
	}
	closedir(d);
	*ret = sum;
	return r;
}

static int kprobe_hits(const struct fcount *f, size_t i, uint64_t *ret)
{
	char p[256], want[128];
	snprintf(p, sizeof(p), "%s/kprobe_profile", f->tracefs);
	snprintf(want, sizeof(want), "f%zu", i);
	_cleanup_free_ char *text = NULL;
	int r = util_read_file(p, &text, NULL);
	if (r < 0)
		return r;
	/* "  f0    123    0": event name, hits, misses */
	for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char **w;
		size_t n;
		if (wl_split_args(line, &w, &n) < 0)
			continue;
		bool hit = n >= 2 && strcmp(w[0], want) == 0 && util_parse_u64(w[1], ret) == 0;
		for (size_t k = 0; k < n; k++)
			free(w[k]);
		free(w);
		if (hit)
			return 0;
	}
	return -ENOENT;
}

int fcount_stop(struct fcount *f, fcount_fn fn, void *ctx)
{
	if (!f)
		return 0;
	int ret = 0;
	if (f->method == M_FUNCTION)
		for (size_t i = 0; i < f->n; i++) {
			char dir[512];
			instance_dir(f, i, dir, sizeof(dir));
			tfs_write(dir, "tracing_on", "0", false);
		}
	for (size_t i = 0; i < f->n; i++) {
		uint64_t v = 0;
		int r;
		if (f->method == M_FUNCTION) {
			char dir[512];
			instance_dir(f, i, dir, sizeof(dir));
			r = instance_events(dir, &v);
		} else {
			r = kprobe_hits(f, i, &v);
		}
		if (r < 0)
			ret = r;
		else
			fn(ctx, f->fns[i], v);
	}
	fcount_cleanup(f->tracefs, f->tag);
	if (f->mounted && umount2(f->tracefs, MNT_DETACH) < 0)
		log_warn("cannot unmount %s: %s", f->tracefs, strerror(errno));
	free(f);
	return ret;
}

const char *fcount_method(const struct fcount *f)
{
	return !f ? "none" : f->method == M_FUNCTION ? "function tracer" : "kprobe events";
}
