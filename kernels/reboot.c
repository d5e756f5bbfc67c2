/* switch = reboot: plans that boot a build once through systemd-boot or
 * GRUB, printing them, and performing them. */
#include "kernels/reboot.h"
#include "kernels/run.h"
#include "harness/base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Where bootctl looks for the ESP, in its order. */
static const char *const esp_dirs[] = { "/efi", "/boot", "/boot/efi" };

#define GRUB_CFG "/boot/grub/grub.cfg"
#define GRUB_CUSTOM "/boot/grub/custom.cfg"
#define GRUB_BEGIN "### kab begin"
#define GRUB_END "### kab end"
#define GRUB_BEGIN_LINE GRUB_BEGIN ": boot entries of kab builds; kab rewrites this block, write yours outside it\n"
#define GRUB_END_LINE GRUB_END "\n"

/* Words the shell and GRUB both take as they are; anything else is quoted. */
#define PLAIN_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.,/:=+@%"

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	char *s;
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* rel (absolute) under root; a root of "/" leaves it as it is. */
static char *under(const char *root, const char *rel)
{
	size_t n = strlen(root);
	while (n > 0 && root[n - 1] == '/')
		n--;
	return fmt("%.*s%s", (int)n, root, rel);
}

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_plain(const char *w)
{
	return *w && strspn(w, PLAIN_CHARS) == strlen(w);
}

/* The first ESP (under root) that holds loader/loader.conf. */
static int find_esp(const char *root, char **ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(esp_dirs); i++) {
		char *dir = under(root, esp_dirs[i]);
		_cleanup_free_ char *conf = dir ? fmt("%s/loader/loader.conf", dir) : NULL;
		if (!conf) {
			free(dir);
			return -ENOMEM;
		}
		if (is_file(conf)) {
			*ret = dir;
			return 0;
		}
		free(dir);
	}
	return -ENOENT;
}

static void looked_for(const char *root, struct strbuf *err)
{
	for (size_t i = 0; i < ARRAY_SIZE(esp_dirs); i++) {
		_cleanup_free_ char *dir = under(root, esp_dirs[i]);
		sb_printf(err, "%s%s/loader/loader.conf", i ? ", " : "", dir ? dir : esp_dirs[i]);
	}
}

int kreboot_detect(const char *root, enum kreboot_loader *ret, char *esp, size_t esp_len, struct strbuf *err)
{
	if (!root || !*root)
		root = "/";
	_cleanup_free_ char *dir = NULL;
	int r = find_esp(root, &dir);
	if (r == 0) {
		if (esp && strlen(dir) >= esp_len) {
			sb_printf(err, "ESP path %s is too long", dir);
			return -ENAMETOOLONG;
		}
		if (esp)
			memcpy(esp, dir, strlen(dir) + 1);
		*ret = KREBOOT_SYSTEMD_BOOT;
		return 0;
	}
	if (r != -ENOENT)
		return r;
	_cleanup_free_ char *cfg = under(root, GRUB_CFG);
	if (!cfg)
		return -ENOMEM;
	if (is_file(cfg)) {
		if (esp && esp_len)
			esp[0] = 0;
		*ret = KREBOOT_GRUB;
		return 0;
	}
	sb_puts(err, "no boot loader kab can use: looked for systemd-boot's ");
	looked_for(root, err);
	sb_printf(err, " and for GRUB's %s; none exists (switch = reboot needs one of them)", cfg);
	return -ENOENT;
}

/* The kernel image or initrd: a readable, non-empty regular file. */
static int check_file(const char *what, const char *path, struct strbuf *err)
{
	if (!path || !*path) {
		sb_printf(err, "no %s given", what);
		return -EINVAL;
	}
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		sb_printf(err, "%s %s: cannot read: %s", what, path, strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		sb_printf(err, "%s %s: %s", what, path, S_ISREG(st.st_mode) ? "empty file" : "not a regular file");
		return -EINVAL;
	}
	return 0;
}

/* A boot entry holds text on single lines: no newline, no control character. */
static int check_line(const char *what, const char *s, struct strbuf *err)
{
	if (!s) {
		sb_printf(err, "no %s given", what);
		return -EINVAL;
	}
	for (size_t i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\n' || c == '\r') {
			sb_printf(err, "the %s holds a line break at byte %zu: it must be one line", what, i);
			return -EINVAL;
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			sb_printf(err, "the %s holds control character 0x%02x at byte %zu", what, c, i);
			return -EINVAL;
		}
	}
	return 0;
}

/* GRUB reads the command line as words in single quotes, which cannot hold
 * a single quote; double quotes and backslashes may reach the kernel
 * backslash-escaped (some GRUB versions' linux command escapes them),
 * which the kernel does not undo. */
static int check_grub_cmdline(const char *cmdline, struct strbuf *err)
{
	int r = check_line("command line", cmdline, err);
	if (r < 0)
		return r;
	const char *bad = strpbrk(cmdline, "'\"\\");
	if (bad) {
		const char *name = *bad == '\'' ? "a single quote" : *bad == '"' ? "a double quote" : "a backslash";
		sb_printf(err, "the command line holds %s at byte %zu (\"%s\"): kab cannot pass it through GRUB's "
			       "configuration unchanged; drop it from the command line or use systemd-boot",
			  name, (size_t)(bad - cmdline), cmdline);
		return -EINVAL;
	}
	return 0;
}

static int check_target(const struct kreboot_target *t, struct strbuf *err)
{
	if (t->build_id <= 0) {
		sb_printf(err, "build id %lld: must be positive", (long long)t->build_id);
		return -EINVAL;
	}
	int r = check_line("kernelrelease", t->kernelrelease, err);
	if (r == 0 && !*t->kernelrelease) {
		sb_puts(err, "the kernelrelease is empty");
		r = -EINVAL;
	}
	if (r == 0)
		r = check_line("command line", t->cmdline, err);
	if (r == 0)
		r = check_file("kernel image", t->image, err);
	if (r == 0 && t->initrd)
		r = check_file("initrd", t->initrd, err);
	return r;
}

/* Appends a step to p; its strings (given allocated) belong to p from then
 * on, freed here when there is no memory for the step. */
static int add_step(struct kreboot_plan *p, enum kreboot_kind kind, char *path, char *src, char *content, char **argv)
{
	struct kreboot_step *nv = NULL;
	bool ok = (kind == KREBOOT_COPY ? path && src : kind == KREBOOT_WRITE ? path && content : argv != NULL);
	if (ok)
		nv = realloc(p->steps, (p->n + 1) * sizeof(*nv));
	if (!nv) {
		free(path);
		free(src);
		free(content);
		for (size_t i = 0; argv && argv[i]; i++)
			free(argv[i]);
		free(argv);
		return -ENOMEM;
	}
	p->steps = nv;
	p->steps[p->n++] = (struct kreboot_step){ .kind = kind, .path = path, .src = src, .content = content, .argv = argv };
	return 0;
}

/* A RUN step of the words given, up to a NULL. */
static int add_run(struct kreboot_plan *p, ...)
{
	va_list ap;
	size_t n = 0;
	va_start(ap, p);
	while (va_arg(ap, const char *))
		n++;
	va_end(ap);
	char **argv = calloc(n + 1, sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	va_start(ap, p);
	for (size_t i = 0; i < n; i++) {
		argv[i] = strdup(va_arg(ap, const char *));
		if (!argv[i]) {
			for (size_t k = 0; k < i; k++)
				free(argv[k]);
			free(argv);
			argv = NULL;
			break;
		}
	}
	va_end(ap);
	return add_step(p, KREBOOT_RUN, NULL, NULL, NULL, argv);
}

static int copy_step(struct kreboot_plan *p, const char *src, char *dst)
{
	char *s = strdup(src);
	return add_step(p, KREBOOT_COPY, dst, s, NULL, NULL);
}

/* A Type #1 entry without sort-key sorts after every entry with one (those
 * of kernel-install since systemd 251 have one), so it does not become the
 * default of a machine that sets none. */
static int plan_systemd_boot(const struct kreboot_target *t, const char *root, struct kreboot_plan *p,
			     struct strbuf *err)
{
	_cleanup_free_ char *esp = NULL;
	int r = find_esp(root, &esp);
	if (r == -ENOENT) {
		sb_puts(err, "systemd-boot: no ESP found: looked for ");
		looked_for(root, err);
	}
	if (r < 0)
		return r;
	long long id = (long long)t->build_id;
	struct strbuf entry = { 0 };
	sb_printf(&entry, "title kab build %lld (%s)\nversion %s\nlinux /kab/%lld/linux\n", id, t->kernelrelease,
		  t->kernelrelease, id);
	if (t->initrd)
		sb_printf(&entry, "initrd /kab/%lld/initrd\n", id);
	sb_printf(&entry, "options %s\n", t->cmdline);
	if (!entry.buf)
		return -ENOMEM;
	_cleanup_free_ char *name = fmt("kab-%lld.conf", id);
	if (!name) {
		sb_free(&entry);
		return -ENOMEM;
	}
	r = copy_step(p, t->image, fmt("%s/kab/%lld/linux", esp, id));
	if (r == 0 && t->initrd)
		r = copy_step(p, t->initrd, fmt("%s/kab/%lld/initrd", esp, id));
	if (r == 0)
		r = add_step(p, KREBOOT_WRITE, fmt("%s/loader/entries/%s", esp, name), NULL, entry.buf, NULL);
	else
		sb_free(&entry);
	if (r == 0)
		r = add_run(p, "bootctl", "set-oneshot", name, NULL);
	if (r == 0)
		r = add_run(p, "systemctl", "reboot", NULL);
	return r;
}

int kreboot_fs_uuid(const char *by_uuid_dir, dev_t dev, char *ret, size_t len)
{
	DIR *d = opendir(by_uuid_dir);
	if (!d)
		return -errno;
	int r = -ENOENT;
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st;
		if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, &st, 0) < 0)
			continue;
		if (!S_ISBLK(st.st_mode) || st.st_rdev != dev)
			continue;
		if (strlen(de->d_name) >= len) {
			r = -ENAMETOOLONG;
		} else {
			memcpy(ret, de->d_name, strlen(de->d_name) + 1);
			r = 0;
		}
		break;
	}
	closedir(d);
	return r;
}

int kreboot_grub_entry(const struct kreboot_target *t, const char *boot_prefix, const char *uuid,
		       struct strbuf *out, struct strbuf *err)
{
	int r = check_grub_cmdline(t->cmdline, err);
	if (r < 0)
		return r;
	if (uuid && !is_plain(uuid)) {
		sb_printf(err, "filesystem UUID \"%s\": unexpected characters", uuid);
		return -EINVAL;
	}
	long long id = (long long)t->build_id;
	sb_printf(out, "menuentry 'kab-build-%lld' --id kab-build-%lld {\n", id, id);
	if (uuid)
		sb_printf(out, "\tsearch --no-floppy --fs-uuid --set=root %s\n", uuid);
	sb_printf(out, "\tlinux %s/kab/%lld/vmlinuz", boot_prefix, id);
	/* one GRUB word per kernel word: GRUB wraps a word with spaces in
	 * double quotes on the kernel's command line */
	for (const char *w = t->cmdline; *w;) {
		size_t n = strcspn(w, " \t");
		if (n) {
			_cleanup_free_ char *word = strndup(w, n);
			if (!word)
				return -ENOMEM;
			sb_printf(out, is_plain(word) ? " %s" : " '%s'", word);
		}
		w += n;
		w += strspn(w, " \t");
	}
	sb_puts(out, "\n");
	if (t->initrd)
		sb_printf(out, "\tinitrd %s/kab/%lld/initrd.img\n", boot_prefix, id);
	sb_puts(out, "}\n");
	return out->buf ? 0 : -ENOMEM;
}

static bool is_marker(const char *line, size_t n, const char *marker)
{
	size_t m = strlen(marker);
	return n >= m && memcmp(line, marker, m) == 0 && (n == m || line[m] == ':' || line[m] == ' ' || line[m] == '\n');
}

/* The build id of a line "menuentry 'kab-build-ID' ...", or -1. */
static int64_t entry_id(const char *line, size_t n)
{
	static const char pre[] = "menuentry 'kab-build-";
	if (n < sizeof(pre) || memcmp(line, pre, sizeof(pre) - 1) != 0)
		return -1;
	const char *digits = line + sizeof(pre) - 1;
	size_t k = strspn(digits, "0123456789");
	if (k == 0 || k > 18 || digits[k] != '\'')
		return -1;
	char buf[20];
	memcpy(buf, digits, k);
	buf[k] = 0;
	int64_t id;
	return util_parse_i64(buf, &id) == 0 ? id : -1;
}

/* A line ending an entry: "}" alone. */
static bool is_close(const char *line, size_t n)
{
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	return n == 1 && line[0] == '}';
}

int kreboot_grub_merge(const char *old, int64_t id, const char *entry, char **ret, struct strbuf *err)
{
	enum { BEFORE, IN, AFTER } where = BEFORE;
	struct strbuf before = { 0 }, block = { 0 }, after = { 0 };
	bool placed = false, skipping = false;
	int lineno = 0, begin_line = 0, r = 0;
	for (const char *line = old ? old : ""; *line;) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line + 1) : strlen(line);
		lineno++;
		bool begin = is_marker(line, n, GRUB_BEGIN);
		if (where == BEFORE && begin) {
			where = IN;
			begin_line = lineno;
		} else if (where == BEFORE) {
			sb_append(&before, line, n);
		} else if (where == IN && skipping) {
			skipping = !is_close(line, n);
		} else if (where == IN && is_marker(line, n, GRUB_END)) {
			where = AFTER;
		} else if (where == IN && begin) {
			sb_printf(err, "custom.cfg:%d: \"" GRUB_BEGIN "\" inside kab's block opened at line %d: "
				       "leave one block", lineno, begin_line);
			r = -EINVAL;
			break;
		} else if (where == IN && entry_id(line, n) == id) {
			/* the build's earlier entry: replaced where it was */
			if (!placed)
				sb_puts(&block, entry);
			placed = true;
			skipping = !is_close(line, n);
		} else if (where == IN) {
			sb_append(&block, line, n);
		} else if (begin) {
			sb_printf(err, "custom.cfg:%d: a second kab block (the first is at line %d): merge them into one",
				  lineno, begin_line);
			r = -EINVAL;
			break;
		} else {
			sb_append(&after, line, n);
		}
		line += n;
	}
	if (r == 0 && where == IN) {
		sb_printf(err, "custom.cfg:%d: kab's block has no \"" GRUB_END "\" line%s: fix the file by hand", begin_line,
			  skipping ? " (or an entry of this build has no closing \"}\")" : "");
		r = -EINVAL;
	}
	struct strbuf out = { 0 };
	if (r == 0) {
		if (before.len && before.buf[before.len - 1] != '\n')
			sb_puts(&before, "\n");
		if (!placed)
			sb_puts(&block, entry);
		sb_printf(&out, "%s" GRUB_BEGIN_LINE "%s" GRUB_END_LINE "%s", before.buf ? before.buf : "",
			  block.buf ? block.buf : "", after.buf ? after.buf : "");
		r = out.buf ? 0 : -ENOMEM;
	}
	sb_free(&before);
	sb_free(&block);
	sb_free(&after);
	if (r == 0)
		*ret = out.buf;
	return r;
}

/* GRUB finds the kernel on the filesystem of /boot: paths in the entry are
 * relative to it. When /boot is a filesystem of its own, the entry says so
 * with `search --fs-uuid` if /dev/disk/by-uuid names the device; without
 * it GRUB keeps $root, the device it read grub.cfg from, which is /boot.
 * A root on a btrfs subvolume (a path prefix GRUB needs) is not handled. */
static int plan_grub(const struct kreboot_target *t, const char *root, struct kreboot_plan *p, struct strbuf *err)
{
	_cleanup_free_ char *cfg = under(root, GRUB_CFG), *custom = under(root, GRUB_CUSTOM);
	_cleanup_free_ char *boot = under(root, "/boot"), *by_uuid = under(root, "/dev/disk/by-uuid");
	if (!cfg || !custom || !boot || !by_uuid)
		return -ENOMEM;
	_cleanup_free_ char *text = NULL;
	int r = util_read_file(cfg, &text, NULL);
	if (r < 0) {
		sb_printf(err, "%s: cannot read: %s", cfg, strerror(-r));
		return r;
	}
	if (!strstr(text, "custom.cfg")) {
		sb_printf(err, "%s does not read custom.cfg, where kab puts its entries: restore "
			       "/etc/grub.d/41_custom (executable) and run update-grub", cfg);
		return -ENOENT;
	}
	struct stat st_root, st_boot;
	const char *unseen = stat(root, &st_root) < 0 ? root : stat(boot, &st_boot) < 0 ? boot : NULL;
	if (unseen) {
		r = -errno;
		sb_printf(err, "%s: cannot stat: %s", unseen, strerror(-r));
		return r;
	}
	bool own_fs = st_root.st_dev != st_boot.st_dev;
	char uuid[128];
	bool have_uuid = own_fs && kreboot_fs_uuid(by_uuid, st_boot.st_dev, uuid, sizeof(uuid)) == 0;

	struct strbuf entry = { 0 };
	r = kreboot_grub_entry(t, own_fs ? "" : "/boot", have_uuid ? uuid : NULL, &entry, err);
	if (r < 0) {
		sb_free(&entry);
		return r;
	}
	_cleanup_free_ char *old = NULL;
	r = util_read_file(custom, &old, NULL);
	if (r < 0 && r != -ENOENT) {
		sb_printf(err, "%s: cannot read: %s", custom, strerror(-r));
		sb_free(&entry);
		return r;
	}
	char *merged = NULL;
	r = kreboot_grub_merge(old, t->build_id, entry.buf, &merged, err);
	sb_free(&entry);
	if (r < 0)
		return r;

	long long id = (long long)t->build_id;
	_cleanup_free_ char *menu_id = fmt("kab-build-%lld", id);
	bool other_root = strcmp(boot, "/boot") != 0;
	_cleanup_free_ char *boot_dir = fmt("--boot-directory=%s", boot);
	r = menu_id && boot_dir ? copy_step(p, t->image, fmt("%s/kab/%lld/vmlinuz", boot, id)) : -ENOMEM;
	if (r == 0 && t->initrd)
		r = copy_step(p, t->initrd, fmt("%s/kab/%lld/initrd.img", boot, id));
	if (r == 0)
		r = add_step(p, KREBOOT_WRITE, strdup(custom), NULL, merged, NULL);
	else
		free(merged);
	/* grub-reboot writes next_entry into the grubenv of the boot
	 * directory: the one under root */
	if (r == 0 && other_root)
		r = add_run(p, "grub-reboot", boot_dir, menu_id, NULL);
	else if (r == 0)
		r = add_run(p, "grub-reboot", menu_id, NULL);
	if (r == 0)
		r = add_run(p, "systemctl", "reboot", NULL);
	return r;
}

int kreboot_plan_make(const struct kreboot_target *t, enum kreboot_loader l, const char *root,
		      struct kreboot_plan *ret, struct strbuf *err)
{
	if (!root || !*root)
		root = "/";
	int r = check_target(t, err);
	if (r < 0)
		return r;
	if (l == KREBOOT_AUTO) {
		r = kreboot_detect(root, &l, NULL, 0, err);
		if (r < 0)
			return r;
	}
	struct kreboot_plan p = { .loader = l };
	if (l == KREBOOT_SYSTEMD_BOOT)
		r = plan_systemd_boot(t, root, &p, err);
	else if (l == KREBOOT_GRUB)
		r = plan_grub(t, root, &p, err);
	else {
		sb_printf(err, "unknown boot loader %d", (int)l);
		r = -EINVAL;
	}
	if (r < 0) {
		kreboot_plan_free(&p);
		return r;
	}
	*ret = p;
	return 0;
}

static void put_word(struct strbuf *sb, const char *w)
{
	if (is_plain(w)) {
		sb_puts(sb, w);
		return;
	}
	sb_puts(sb, "'");
	for (const char *q; (q = strchr(w, '\'')); w = q + 1) {
		sb_append(sb, w, (size_t)(q - w));
		sb_puts(sb, "'\\''");
	}
	sb_puts(sb, w);
	sb_puts(sb, "'");
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *s = text; s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
		if (strncmp(s, line, n) == 0 && (s[n] == '\n' || s[n] == 0))
			return true;
	return false;
}

/* The step's first (for COPY and RUN, only) line, without its newline. */
static void describe(const struct kreboot_step *s, struct strbuf *sb)
{
	switch (s->kind) {
	case KREBOOT_COPY:
		sb_puts(sb, "install -D -m 0644 ");
		put_word(sb, s->src);
		sb_puts(sb, " ");
		put_word(sb, s->path);
		break;
	case KREBOOT_WRITE:
		sb_puts(sb, "write ");
		put_word(sb, s->path);
		break;
	case KREBOOT_RUN:
		for (size_t i = 0; s->argv[i]; i++) {
			if (i)
				sb_puts(sb, " ");
			put_word(sb, s->argv[i]);
		}
		break;
	}
}

void kreboot_plan_print(const struct kreboot_plan *p, FILE *out)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct kreboot_step *s = &p->steps[i];
		struct strbuf sb = { 0 };
		describe(s, &sb);
		if (s->kind == KREBOOT_WRITE) {
			char delim[64] = "EOF";
			for (size_t dn = 3; has_line(s->content, delim) && dn < sizeof(delim) - 1; dn++) {
				delim[dn] = '_';
				delim[dn + 1] = 0;
			}
			size_t n = strlen(s->content);
			sb_printf(&sb, " <<'%s'\n%s%s%s", delim, s->content, n && s->content[n - 1] == '\n' ? "" : "\n",
				  delim);
		}
		fprintf(out, "%s\n", sb.buf ? sb.buf : "");
		sb_free(&sb);
	}
}

/* Writes the bytes of file src (or text when src is NULL) to path through
 * path.kab-tmp in the same directory, fsync'd before the rename so that a
 * reboot right after finds the whole file. */
static int install_file(const char *path, const char *src, const char *text, struct strbuf *err)
{
	_cleanup_free_ char *tmp = fmt("%s.kab-tmp", path), *dir = strdup(path);
	if (!tmp || !dir)
		return -ENOMEM;
	char *slash = strrchr(dir, '/');
	if (!slash) {
		sb_printf(err, "%s: not an absolute path", path);
		return -EINVAL;
	}
	slash[slash == dir] = 0;  /* "/x" lives in "/" */
	int r = util_mkdir_p(dir, 0755);
	if (r < 0) {
		sb_printf(err, "cannot create %s: %s", dir, strerror(-r));
		return r;
	}
	struct stat st;
	mode_t mode = stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644;
	const char *failed = tmp;
	int fd = -1;
	if (src) {
		r = util_copy_file(src, tmp);
		if (r < 0) {
			sb_printf(err, "cannot copy %s to %s: %s", src, tmp, strerror(-r));
			unlink(tmp);
			return r;
		}
		fd = open(tmp, O_RDONLY | O_CLOEXEC);
	} else {
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
		for (size_t off = 0, len = strlen(text); fd >= 0 && off < len;) {
			ssize_t w = write(fd, text + off, len - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				r = -errno;
				break;
			}
			off += (size_t)w;
		}
	}
	if (r == 0 && fd < 0)
		r = -errno;
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (fd >= 0 && close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0) {
		r = -errno;
		failed = path;
	}
	if (r < 0) {
		sb_printf(err, "cannot write %s: %s", failed, strerror(-r));
		unlink(tmp);
		return r;
	}
	/* the rename itself reaches the disk with the directory */
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0 && fsync(dfd) < 0 && errno != EINVAL) {
		r = -errno;
		sb_printf(err, "cannot sync directory %s: %s", dir, strerror(-r));
	}
	return r;
}

static int run_command(char *const argv[], struct strbuf *err)
{
	struct strbuf out = { 0 };
	struct krun o = { .stdout_fd = -1, .log_fd = -1, .capture = &out };
	int status;
	int r = krun(argv, &o, &status);
	if (r < 0) {
		sb_printf(err, "cannot start %s: %s", argv[0], strerror(-r));
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char st[64];
		util_wait_status_text(status, st, sizeof(st));
		while (out.len && (out.buf[out.len - 1] == '\n' || out.buf[out.len - 1] == '\r'))
			out.buf[--out.len] = 0;
		sb_printf(err, "%s %s%s%s", argv[0], st, out.len ? ": " : "", out.len ? out.buf : "");
		r = -EIO;
	}
	sb_free(&out);
	return r;
}

int kreboot_plan_run(const struct kreboot_plan *p, bool dry, struct strbuf *err)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct kreboot_step *s = &p->steps[i];
		if (dry && s->kind == KREBOOT_RUN)
			continue;
		struct strbuf why = { 0 };
		int r = s->kind == KREBOOT_RUN ? run_command(s->argv, &why)
						: install_file(s->path, s->kind == KREBOOT_COPY ? s->src : NULL,
							       s->content, &why);
		if (r < 0) {
			struct strbuf what = { 0 };
			describe(s, &what);
			sb_printf(err, "step %zu of %zu (%s): %s", i + 1, p->n, what.buf ? what.buf : "",
				  why.buf ? why.buf : strerror(-r));
			sb_free(&what);
		}
		sb_free(&why);
		if (r < 0)
			return r;
	}
	return 0;
}

void kreboot_plan_free(struct kreboot_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct kreboot_step *s = &p->steps[i];
		free(s->path);
		free(s->src);
		free(s->content);
		for (size_t k = 0; s->argv && s->argv[k]; k++)
			free(s->argv[k]);
		free(s->argv);
	}
	free(p->steps);
	p->steps = NULL;
	p->n = 0;
}
