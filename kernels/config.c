/* The kernel config of a build: a source, fragments on top, olddefconfig,
 * then the options kab cannot work without. */
#include "kernels/build.h"
#include "kernels/builduser.h"
#include "kernels/kbuild_priv.h"
#include "kernels/run.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

/* What kab needs, and what each needs on first so olddefconfig keeps it. */
static const struct {
	const char *opt;
	unsigned need;  /* 0: always */
	const char *deps[4];
} required[] = {
	{ "PROC_FS", 0, { NULL } },
	{ "MEMCG", 0, { "CGROUPS", NULL } },
	{ "SWAP", 0, { "BLOCK", NULL } },
	{ "KEXEC_FILE", 0, { "CRYPTO", "CRYPTO_SHA256", NULL } },
	{ "ZSWAP", KBUILD_NEED_ZSWAP, { "BLOCK", "SWAP", "CRYPTO", NULL } },
	{ "ZRAM", KBUILD_NEED_ZRAM, { "BLOCK", "SYSFS", "CRYPTO", "CRYPTO_LZO" } },
};

int kbuild_running_config(char *path, size_t len)
{
	struct utsname u;
	if (access("/proc/config.gz", R_OK) == 0) {
		snprintf(path, len, "/proc/config.gz");
		return 0;
	}
	if (uname(&u) == 0) {
		snprintf(path, len, "/boot/config-%s", u.release);
		if (access(path, R_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

bool kconfig_is_set(const char *text, const char *opt, bool module_ok)
{
	char want[128];
	snprintf(want, sizeof(want), "CONFIG_%s=", opt);
	size_t n = strlen(want);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, want, n) == 0)
			return p[n] == 'y' || (module_ok && p[n] == 'm');
	return false;
}

void kconfig_missing(const char *text, unsigned need, struct strbuf *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(required); i++)
		if ((required[i].need & need) == required[i].need && !kconfig_is_set(text, required[i].opt, false))
			sb_printf(ret, "%sCONFIG_%s", ret->len ? ", " : "", required[i].opt);
}

size_t kconfig_count_set(const char *text)
{
	size_t k = 0;
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, "CONFIG_", 7) == 0) {
			const char *eq = strchr(p, '=');
			const char *nl = strchr(p, '\n');
			if (eq && (!nl || eq < nl) && (eq[1] == 'y' || eq[1] == 'm'))
				k++;
		}
	return k;
}

/* The option a config line is about ("CONFIG_X=..." or "# CONFIG_X is
 * not set"); its length in *n, NULL for other lines. */
static const char *line_option(const char *line, size_t *n)
{
	const char *p = line;
	if (strncmp(p, "# CONFIG_", 9) == 0)
		p += 2;
	else if (strncmp(p, "CONFIG_", 7) != 0)
		return NULL;
	size_t k = strcspn(p, "= \n");
	if (line[0] == '#' && strncmp(p + k, " is not set", 11) != 0)
		return NULL;
	*n = k;
	return p;
}

/* Sets each option line of frag in the config text cfg (replacing the
 * option's line, or appending). */
static int merge_text(struct strbuf *cfg, const char *frag)
{
	struct strbuf out = { 0 };
	/* every line of cfg not overridden by frag, then frag's option lines */
	for (const char *p = cfg->buf ? cfg->buf : ""; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
		size_t on;
		const char *o = line_option(p, &on);
		bool overridden = false;
		for (const char *q = frag; o && *q && !overridden;) {
			const char *qn = strchr(q, '\n');
			size_t fn;
			const char *f = line_option(q, &fn);
			overridden = f && fn == on && strncmp(f, o, on) == 0;
			q = qn ? qn + 1 : q + strlen(q);
		}
		if (!overridden)
			sb_append(&out, p, len);
		p += len;
	}
	if (out.len && out.buf[out.len - 1] != '\n')
		sb_puts(&out, "\n");
	for (const char *q = frag; *q;) {
		const char *qn = strchr(q, '\n');
		size_t len = qn ? (size_t)(qn - q) : strlen(q);
		size_t fn;
		if (line_option(q, &fn)) {
			sb_append(&out, q, len);
			sb_puts(&out, "\n");
		}
		q += len + (qn ? 1 : 0);
	}
	if (!out.buf)
		return -ENOMEM;
	sb_free(cfg);
	*cfg = out;
	return 0;
}

static int make_config(const struct kbuild_as *as, const char *src, const char *kc_dir, const char *target, int log_fd,
		       struct strbuf *err)
{
	char o[4200];
	snprintf(o, sizeof(o), "O=%s", kc_dir);
	char *argv[] = { "make", "-s", "-C", (char *)src, o, (char *)target, NULL };
	struct krun ro = { .stdout_fd = -1, .log_fd = log_fd, .user = as->user, .env = as->env };
	int status, r = krun(argv, &ro, &status);
	if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char st[64] = "could not start";
		if (r >= 0)
			util_wait_status_text(status, st, sizeof(st));
		sb_printf(err, "config: make %s %s: see the build log", target, st);
		return -EIO;
	}
	return 0;
}

/* kc_dir/.config, which make (as the build user) wrote. */
static int read_config(const struct kbuild_as *as, const char *kc_dir, struct strbuf *cfg, struct strbuf *err)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/.config", kc_dir);
	char *text = NULL;
	size_t len;
	int r = kbuser_read_file(as->user, path, &text, &len);
	if (r < 0) {
		sb_printf(err, "config: %s: %s", path, kbuser_strerror(r));
		return r;
	}
	sb_free(cfg);
	*cfg = (struct strbuf){ .buf = text, .len = len, .cap = len + 1 };
	return 0;
}

static int write_config(const struct kbuild_as *as, const char *kc_dir, const struct strbuf *cfg, struct strbuf *err)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/.config", kc_dir);
	return kbuild_put(as, cfg->buf ? cfg->buf : "", cfg->len, path, err);
}

/* The config source's text, which kab reads (it is the job's file). */
static int read_source(const char *from, int log_fd, struct strbuf *out)
{
	size_t n = strlen(from);
	if (n <= 3 || strcmp(from + n - 3, ".gz") != 0) {
		char *text = NULL;
		size_t len;
		int r = util_read_file(from, &text, &len);
		if (r == 0)
			*out = (struct strbuf){ .buf = text, .len = len, .cap = len + 1 };
		return r;
	}
	char *argv[] = { "gzip", "-dc", (char *)from, NULL };
	struct krun ro = { .stdout_fd = -1, .log_fd = -1, .capture = out };
	int status, r = krun(argv, &ro, &status);
	if (r == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
		if (log_fd >= 0 && out->len)
			dprintf(log_fd, "gzip -dc %s: %s\n", from, out->buf);
		r = -EIO;
	}
	return r;
}

/* The starting .config in kc_dir from source. */
static int start_config(const struct kbuild_as *as, const char *src, const char *kc_dir, const char *source, int log_fd,
			struct strbuf *err)
{
	char dst[4200], from[4096];
	snprintf(dst, sizeof(dst), "%s/.config", kc_dir);
	unlink(dst); /* the name only: never what a link there points to */
	if (strcmp(source, "defconfig") == 0 || strcmp(source, "tinyconfig") == 0 || strcmp(source, "allnoconfig") == 0)
		return make_config(as, src, kc_dir, source, log_fd, err);
	if (strcmp(source, "running") == 0) {
		if (kbuild_running_config(from, sizeof(from)) < 0) {
			sb_printf(err, "config = running: neither /proc/config.gz nor /boot/config-$(uname -r) exists: give a config PATH");
			return -EINVAL;
		}
	} else {
		snprintf(from, sizeof(from), "%s", source);
	}
	struct strbuf text = { 0 };
	int r = read_source(from, log_fd, &text);
	if (r < 0) {
		sb_printf(err, "config %s: cannot read: %s", from, strerror(-r));
		sb_free(&text);
		return r == -ENOENT ? -EINVAL : r;
	}
	r = kbuild_put(as, text.buf ? text.buf : "", text.len, dst, err);
	sb_free(&text);
	return r < 0 ? r : make_config(as, src, kc_dir, "olddefconfig", log_fd, err);
}

int kconfig_produce(const struct kbuild_as *as, const char *src, const char *kc_dir, const char *source,
		    char *const *fragments, size_t n_fragments, unsigned need, int log_fd, struct strbuf *warn,
		    struct strbuf *err)
{
	struct strbuf cfg = { 0 }, frag = { 0 };
	int r = start_config(as, src, kc_dir, source, log_fd, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n_fragments; i++) {
		char *text = NULL;
		size_t len;
		if ((r = util_read_file(fragments[i], &text, &len)) < 0) {
			sb_printf(err, "config.fragment %s: cannot read: %s", fragments[i], strerror(-r));
			r = -EINVAL;
			goto out;
		}
		sb_append(&frag, text, len);
		if (len && text[len - 1] != '\n')
			sb_puts(&frag, "\n");
		free(text);
	}
	/* each build has its own kernelrelease from LOCALVERSION alone */
	sb_puts(&frag, "# CONFIG_LOCALVERSION_AUTO is not set\nCONFIG_LOCALVERSION=\"\"\n");
	if ((r = read_config(as, kc_dir, &cfg, err)) < 0 || (r = merge_text(&cfg, frag.buf)) < 0 ||
	    (r = write_config(as, kc_dir, &cfg, err)) < 0 || (r = make_config(as, src, kc_dir, "olddefconfig", log_fd, err)) < 0 ||
	    (r = read_config(as, kc_dir, &cfg, err)) < 0)
		goto out;

	/* what kab needs: enable it (with what it depends on) and say so */
	struct strbuf add = { 0 }, names = { 0 };
	for (size_t i = 0; i < ARRAY_SIZE(required); i++) {
		if ((required[i].need & need) != required[i].need || kconfig_is_set(cfg.buf, required[i].opt, false))
			continue;
		for (size_t d = 0; d < ARRAY_SIZE(required[i].deps) && required[i].deps[d]; d++)
			if (!kconfig_is_set(cfg.buf, required[i].deps[d], false))
				sb_printf(&add, "CONFIG_%s=y\n", required[i].deps[d]);
		sb_printf(&add, "CONFIG_%s=y\n", required[i].opt);
		sb_printf(&names, "%sCONFIG_%s", names.len ? ", " : "", required[i].opt);
	}
	if (add.len) {
		sb_printf(warn, "config: enabled %s, which kab needs (add them to a config.fragment to say so)", names.buf);
		if ((r = merge_text(&cfg, add.buf)) < 0 || (r = write_config(as, kc_dir, &cfg, err)) < 0 ||
		    (r = make_config(as, src, kc_dir, "olddefconfig", log_fd, err)) < 0 || (r = read_config(as, kc_dir, &cfg, err)) < 0) {
			sb_free(&add);
			sb_free(&names);
			goto out;
		}
		struct strbuf missing = { 0 };
		kconfig_missing(cfg.buf, need, &missing);
		if (missing.len) {
			sb_printf(err, "config: %s cannot be set in this config (a dependency is off): kab needs them; fix the config source or fragments",
				  missing.buf);
			r = -EINVAL;
		}
		sb_free(&missing);
	}
	sb_free(&add);
	sb_free(&names);
out:
	sb_free(&cfg);
	sb_free(&frag);
	return r;
}
