/* kernels/reboot: boot loader detection on fake roots, the printed plans
 * of systemd-boot and GRUB line by line, the files a plan run without its
 * commands leaves (the entry, custom.cfg with the operator's text and
 * earlier builds kept), what is refused, and the errors of failing steps. */
#include "kernels/reboot.h"
#include "t.h"
#include "harness/base/util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char tmp[] = "/tmp/kab-reboot-XXXXXX";
static char img[PATH_MAX], initrd[PATH_MAX];

static int write_new(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	int r = fputs(text, f) < 0 ? -EIO : 0;
	return fclose(f) != 0 || r < 0 ? -EIO : 0;
}

/* Creates root/rel (and its directories) holding text. */
static void put(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX], dir[PATH_MAX];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = 0;
	if (util_mkdir_p(dir, 0755) < 0 || write_new(path, text) < 0)
		fprintf(stderr, "cannot create %s\n", path);
}

static char *slurp(const char *path)
{
	char *s = NULL;
	return util_read_file(path, &s, NULL) == 0 ? s : NULL;
}

static char *printed(const struct kreboot_plan *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	kreboot_plan_print(p, f);
	fclose(f);
	return buf;
}

/* got against want, line by line: one check per wanted line and one for
 * the number of lines. */
static void check_lines(const char *got, const char *want)
{
	size_t ng = 0, nw = 0;
	const char *g = got ? got : "", *w = want;
	while (*w) {
		const char *we = strchr(w, '\n'), *ge = strchr(g, '\n');
		size_t wl = we ? (size_t)(we - w) : strlen(w), gl = ge ? (size_t)(ge - g) : strlen(g);
		char wb[512], gb[512];
		snprintf(wb, sizeof(wb), "%.*s", (int)wl, w);
		snprintf(gb, sizeof(gb), "%.*s", (int)gl, g);
		T_EQ_STR(gb, wb);
		nw++;
		if (*g)
			ng++;
		w += wl + (we != NULL);
		g += gl + (ge != NULL);
	}
	while (*g) {
		const char *ge = strchr(g, '\n');
		ng++;
		g = ge ? ge + 1 : g + strlen(g);
	}
	T_EQ_INT(ng, nw);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *s = hay ? strstr(hay, needle) : NULL; s; s = strstr(s + 1, needle))
		n++;
	return n;
}

static void test_detect(void)
{
	char root[PATH_MAX], esp[PATH_MAX], want[PATH_MAX + 16];
	struct strbuf err = { 0 };
	enum kreboot_loader l = (enum kreboot_loader)77;

	/* systemd-boot on /boot/efi; a stale grub.cfg does not matter */
	snprintf(root, sizeof(root), "%s/sd", tmp);
	put(root, "/boot/efi/loader/loader.conf", "timeout 3\n");
	put(root, "/boot/grub/grub.cfg", "# old\n");
	T_EQ_INT(kreboot_detect(root, &l, esp, sizeof(esp), &err), 0);
	T_EQ_INT(l, KREBOOT_SYSTEMD_BOOT);
	snprintf(want, sizeof(want), "%s/boot/efi", root);
	T_EQ_STR(esp, want);
	/* /efi comes first, as with bootctl */
	put(root, "/efi/loader/loader.conf", "");
	T_EQ_INT(kreboot_detect(root, &l, esp, sizeof(esp), &err), 0);
	snprintf(want, sizeof(want), "%s/efi", root);
	T_EQ_STR(esp, want);
	/* an ESP path that does not fit */
	char small[8] = "x";
	T_EQ_INT(kreboot_detect(root, &l, small, sizeof(small), &err), -ENAMETOOLONG);
	T_EQ_STR(small, "x");
	sb_free(&err);

	/* GRUB */
	snprintf(root, sizeof(root), "%s/grubonly", tmp);
	put(root, "/boot/grub/grub.cfg", "# grub\n");
	l = (enum kreboot_loader)77;
	T_EQ_INT(kreboot_detect(root, &l, esp, sizeof(esp), &err), 0);
	T_EQ_INT(l, KREBOOT_GRUB);
	T_EQ_STR(esp, "");

	/* neither: a /boot/grub without grub.cfg, a loader/ without loader.conf */
	snprintf(root, sizeof(root), "%s/none", tmp);
	put(root, "/boot/grub/grubenv", "");
	put(root, "/boot/loader/entries/x.conf", "");
	l = (enum kreboot_loader)77;
	T_EQ_INT(kreboot_detect(root, &l, esp, sizeof(esp), &err), -ENOENT);
	T_EQ_INT(l, 77);
	snprintf(want, sizeof(want), "%s/boot/efi/loader/loader.conf", root);
	T_CHECK(err.buf && strstr(err.buf, want));
	snprintf(want, sizeof(want), "%s/efi/loader/loader.conf", root);
	T_CHECK(err.buf && strstr(err.buf, want));
	snprintf(want, sizeof(want), "%s/boot/grub/grub.cfg", root);
	T_CHECK(err.buf && strstr(err.buf, want));
	T_CHECK(err.buf && strstr(err.buf, "no boot loader"));
	sb_free(&err);
}

static void test_systemd_boot(void)
{
	char root[PATH_MAX], want[8192], path[PATH_MAX + 64];
	struct strbuf err = { 0 };
	snprintf(root, sizeof(root), "%s/sd", tmp);  /* ESP at /efi (test_detect) */
	struct kreboot_target t = { .build_id = 3, .image = img, .initrd = initrd, .kernelrelease = "6.1.0-kab3",
				    .cmdline = "root=/dev/vda1 ro console=ttyS0,115200 kab.build=3" };
	struct kreboot_plan p;
	int r = kreboot_plan_make(&t, KREBOOT_AUTO, root, &p, &err);
	T_EQ_INT(r, 0);
	if (r < 0) {
		fprintf(stderr, "%s\n", err.buf);
		return;
	}
	T_EQ_INT(p.loader, KREBOOT_SYSTEMD_BOOT);
	T_EQ_INT(p.n, 5);
	static const char entry[] = "title kab build 3 (6.1.0-kab3)\n"
				    "version 6.1.0-kab3\n"
				    "linux /kab/3/linux\n"
				    "initrd /kab/3/initrd\n"
				    "options root=/dev/vda1 ro console=ttyS0,115200 kab.build=3\n";
	snprintf(want, sizeof(want),
		 "install -D -m 0644 %s %s/efi/kab/3/linux\n"
		 "install -D -m 0644 %s %s/efi/kab/3/initrd\n"
		 "write %s/efi/loader/entries/kab-3.conf <<'EOF'\n"
		 "%s"
		 "EOF\n"
		 "bootctl set-oneshot kab-3.conf\n"
		 "systemctl reboot\n",
		 img, root, initrd, root, root, entry);
	char *out = printed(&p);
	check_lines(out, want);
	free(out);

	/* dry: the files, not the commands */
	T_EQ_INT(kreboot_plan_run(&p, true, &err), 0);
	snprintf(path, sizeof(path), "%s/efi/loader/entries/kab-3.conf", root);
	char *s = slurp(path);
	T_EQ_STR(s, entry);
	free(s);
	snprintf(path, sizeof(path), "%s/efi/kab/3/linux", root);
	s = slurp(path);
	T_EQ_STR(s, "bzImage of build 3\n");
	free(s);
	snprintf(path, sizeof(path), "%s/efi/kab/3/initrd", root);
	s = slurp(path);
	T_EQ_STR(s, "initrd of build 3\n");
	free(s);
	snprintf(path, sizeof(path), "%s/efi/loader/entries/kab-3.conf.kab-tmp", root);
	T_CHECK(access(path, F_OK) < 0);
	kreboot_plan_free(&p);

	/* without an initrd: no copy, no initrd line */
	t.initrd = NULL;
	T_EQ_INT(kreboot_plan_make(&t, KREBOOT_SYSTEMD_BOOT, root, &p, &err), 0);
	T_EQ_INT(p.n, 4);
	if (p.n == 4) {
		T_EQ_INT(p.steps[1].kind, KREBOOT_WRITE);
		T_CHECK(p.steps[1].content && !strstr(p.steps[1].content, "initrd"));
		T_CHECK(p.steps[1].content && strstr(p.steps[1].content, "linux /kab/3/linux\noptions "));
		kreboot_plan_free(&p);
	}

	/* systemd-boot asked for where there is no ESP */
	snprintf(path, sizeof(path), "%s/grubonly", tmp);
	T_EQ_INT(kreboot_plan_make(&t, KREBOOT_SYSTEMD_BOOT, path, &p, &err), -ENOENT);
	T_CHECK(err.buf && strstr(err.buf, "no ESP") && strstr(err.buf, "loader/loader.conf"));
	sb_free(&err);

	/* a line break would end the options line; quotes are fine here */
	t.cmdline = "ro\ninit=/bin/sh";
	T_EQ_INT(kreboot_plan_make(&t, KREBOOT_SYSTEMD_BOOT, root, &p, &err), -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, "line break at byte 2"));
	sb_free(&err);
	t.cmdline = "ro dyndbg=\"file mm/vmscan.c +p\" x='y'";
	T_EQ_INT(kreboot_plan_make(&t, KREBOOT_SYSTEMD_BOOT, root, &p, &err), 0);
	if (p.n == 4) {
		T_CHECK(strstr(p.steps[1].content, "\noptions ro dyndbg=\"file mm/vmscan.c +p\" x='y'\n") != NULL);
		kreboot_plan_free(&p);
	}
	sb_free(&err);
}

#define GRUB_CFG_TEXT \
	"### BEGIN /etc/grub.d/41_custom ###\n" \
	"if [ -f  ${config_directory}/custom.cfg ]; then\n" \
	"  source ${config_directory}/custom.cfg\n" \
	"fi\n" \
	"### END /etc/grub.d/41_custom ###\n"
#define OPERATOR_HEAD \
	"# the operator's rescue entry\n" \
	"menuentry 'rescue' {\n" \
	"\tlinux /vmlinuz-rescue single\n" \
	"}\n"
#define OPERATOR_TAIL "set timeout=5\n"
#define BEGIN_LINE "### kab begin: boot entries of kab builds; kab rewrites this block, write yours outside it\n"
#define ENTRY2 \
	"menuentry 'kab-build-2' --id kab-build-2 {\n" \
	"\tlinux /boot/kab/2/vmlinuz ro kab.build=2\n" \
	"}\n"

static void test_grub(void)
{
	char root[PATH_MAX], want[8192], path[PATH_MAX + 64];
	struct strbuf err = { 0 };
	snprintf(root, sizeof(root), "%s/grub", tmp);
	put(root, "/boot/grub/grub.cfg", GRUB_CFG_TEXT);
	put(root, "/boot/grub/custom.cfg",
	    OPERATOR_HEAD BEGIN_LINE ENTRY2
	    "menuentry 'kab-build-3' --id kab-build-3 {\n"
	    "\tlinux /boot/kab/3/vmlinuz an older command line\n"
	    "}\n"
	    "### kab end\n" OPERATOR_TAIL);
	/* spaces collapse; a word GRUB would expand is quoted */
	struct kreboot_target t = { .build_id = 3, .image = img, .initrd = initrd, .kernelrelease = "6.1.0-kab3",
				    .cmdline = "root=UUID=0b1e ro  quiet kab.build=3 x=$y" };
	static const char entry3[] = "menuentry 'kab-build-3' --id kab-build-3 {\n"
				     "\tlinux /boot/kab/3/vmlinuz root=UUID=0b1e ro quiet kab.build=3 'x=$y'\n"
				     "\tinitrd /boot/kab/3/initrd.img\n"
				     "}\n";
	static const char custom3[] = OPERATOR_HEAD BEGIN_LINE ENTRY2 "%s"
				      "### kab end\n" OPERATOR_TAIL;
	struct kreboot_plan p;
	int r = kreboot_plan_make(&t, KREBOOT_AUTO, root, &p, &err);
	T_EQ_INT(r, 0);
	if (r < 0) {
		fprintf(stderr, "%s\n", err.buf);
		return;
	}
	T_EQ_INT(p.loader, KREBOOT_GRUB);
	T_EQ_INT(p.n, 5);
	char custom[4096];
	snprintf(custom, sizeof(custom), custom3, entry3);
	snprintf(want, sizeof(want),
		 "install -D -m 0644 %s %s/boot/kab/3/vmlinuz\n"
		 "install -D -m 0644 %s %s/boot/kab/3/initrd.img\n"
		 "write %s/boot/grub/custom.cfg <<'EOF'\n"
		 "%s"
		 "EOF\n"
		 "grub-reboot --boot-directory=%s/boot kab-build-3\n"
		 "systemctl reboot\n",
		 img, root, initrd, root, root, custom, root);
	char *out = printed(&p);
	check_lines(out, want);
	free(out);

	T_EQ_INT(kreboot_plan_run(&p, true, &err), 0);
	kreboot_plan_free(&p);
	snprintf(path, sizeof(path), "%s/boot/grub/custom.cfg", root);
	char *s = slurp(path);
	check_lines(s, custom);
	free(s);
	snprintf(path, sizeof(path), "%s/boot/kab/3/vmlinuz", root);
	s = slurp(path);
	T_EQ_STR(s, "bzImage of build 3\n");
	free(s);
	snprintf(path, sizeof(path), "%s/boot/kab/3/initrd.img", root);
	s = slurp(path);
	T_EQ_STR(s, "initrd of build 3\n");
	free(s);

	/* build 4 next: 2 and 3 stay, 4 comes last in the block */
	t.build_id = 4;
	t.initrd = NULL;
	t.cmdline = "ro kab.build=4";
	T_EQ_INT(kreboot_plan_make(&t, KREBOOT_GRUB, root, &p, &err), 0);
	T_EQ_INT(kreboot_plan_run(&p, true, &err), 0);
	T_EQ_INT(p.n, 4);
	kreboot_plan_free(&p);
	snprintf(path, sizeof(path), "%s/boot/grub/custom.cfg", root);
	s = slurp(path);
	snprintf(custom, sizeof(custom), custom3,
		 "menuentry 'kab-build-3' --id kab-build-3 {\n"
		 "\tlinux /boot/kab/3/vmlinuz root=UUID=0b1e ro quiet kab.build=3 'x=$y'\n"
		 "\tinitrd /boot/kab/3/initrd.img\n"
		 "}\n"
		 "menuentry 'kab-build-4' --id kab-build-4 {\n"
		 "\tlinux /boot/kab/4/vmlinuz ro kab.build=4\n"
		 "}\n");
	check_lines(s, custom);
	T_EQ_INT(count(s, "menuentry 'kab-build-3'"), 1);
	free(s);

	/* no custom.cfg yet: the block alone */
	snprintf(root, sizeof(root), "%s/grubnew", tmp);
	put(root, "/boot/grub/grub.cfg", GRUB_CFG_TEXT);
	T_EQ_INT(kreboot_plan_make(&t, KREBOOT_AUTO, root, &p, &err), 0);
	T_EQ_INT(kreboot_plan_run(&p, true, &err), 0);
	kreboot_plan_free(&p);
	snprintf(path, sizeof(path), "%s/boot/grub/custom.cfg", root);
	s = slurp(path);
	check_lines(s, BEGIN_LINE
		    "menuentry 'kab-build-4' --id kab-build-4 {\n"
		    "\tlinux /boot/kab/4/vmlinuz ro kab.build=4\n"
		    "}\n"
		    "### kab end\n");
	free(s);

	/* a grub.cfg that would never read custom.cfg */
	snprintf(root, sizeof(root), "%s/grubonly", tmp);
	T_EQ_INT(kreboot_plan_make(&t, KREBOOT_GRUB, root, &p, &err), -ENOENT);
	T_CHECK(err.buf && strstr(err.buf, "does not read custom.cfg") && strstr(err.buf, "41_custom"));
	sb_free(&err);

	/* what GRUB cannot carry to the kernel unchanged */
	snprintf(root, sizeof(root), "%s/grub", tmp);
	t.cmdline = "ro init='/bin/sh'";
	T_EQ_INT(kreboot_plan_make(&t, KREBOOT_GRUB, root, &p, &err), -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, "single quote at byte 8"));
	sb_free(&err);
	t.cmdline = "ro dyndbg=\"file x +p\"";
	T_EQ_INT(kreboot_plan_make(&t, KREBOOT_GRUB, root, &p, &err), -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, "double quote"));
	sb_free(&err);
	t.cmdline = "ro\nquiet";
	T_EQ_INT(kreboot_plan_make(&t, KREBOOT_GRUB, root, &p, &err), -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, "line break"));
	sb_free(&err);
	/* refused before anything was written */
	snprintf(path, sizeof(path), "%s/boot/grub/custom.cfg", root);
	s = slurp(path);
	T_EQ_INT(count(s, "init="), 0);
	free(s);
}

static void test_refused(void)
{
	char root[PATH_MAX], missing[PATH_MAX + 16];
	struct strbuf err = { 0 };
	struct kreboot_plan p = { .n = 99 };
	snprintf(root, sizeof(root), "%s/grub", tmp);
	snprintf(missing, sizeof(missing), "%s/no-such-bzImage", tmp);
	struct kreboot_target t = { .build_id = 5, .image = missing, .kernelrelease = "6.1.0-kab5",
				    .cmdline = "ro kab.build=5" };
	T_EQ_INT(kreboot_plan_make(&t, KREBOOT_AUTO, root, &p, &err), -ENOENT);
	T_CHECK(err.buf && strstr(err.buf, missing) && strstr(err.buf, "kernel image"));
	T_EQ_INT(p.n, 99);
	sb_free(&err);

	t.image = img;
	t.initrd = missing;
	T_EQ_INT(kreboot_plan_make(&t, KREBOOT_AUTO, root, &p, &err), -ENOENT);
	T_CHECK(err.buf && strstr(err.buf, missing) && strstr(err.buf, "initrd"));
	sb_free(&err);

	t.initrd = tmp;  /* a directory */
	T_EQ_INT(kreboot_plan_make(&t, KREBOOT_AUTO, root, &p, &err), -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, "not a regular file"));
	sb_free(&err);

	t.initrd = NULL;
	t.build_id = 0;
	T_EQ_INT(kreboot_plan_make(&t, KREBOOT_AUTO, root, &p, &err), -EINVAL);
	sb_free(&err);
	T_EQ_INT(p.n, 99);
}

static void test_grub_helpers(void)
{
	struct strbuf out = { 0 }, err = { 0 };
	struct kreboot_target t = { .build_id = 7, .image = img, .initrd = initrd, .kernelrelease = "6.1.0-kab7",
				    .cmdline = " root=/dev/vda1\tro " };
	/* /boot a filesystem of its own */
	T_EQ_INT(kreboot_grub_entry(&t, "", "1234-ABCD", &out, &err), 0);
	check_lines(out.buf, "menuentry 'kab-build-7' --id kab-build-7 {\n"
			     "\tsearch --no-floppy --fs-uuid --set=root 1234-ABCD\n"
			     "\tlinux /kab/7/vmlinuz root=/dev/vda1 ro\n"
			     "\tinitrd /kab/7/initrd.img\n"
			     "}\n");
	sb_free(&out);
	T_EQ_INT(kreboot_grub_entry(&t, "", "x; reboot", &out, &err), -EINVAL);
	sb_free(&out);
	sb_free(&err);

	char *m = NULL;
	T_EQ_INT(kreboot_grub_merge("a\n### kab begin\nmenuentry 'kab-build-1' --id kab-build-1 {\n}\nb\n", 2, "E\n",
				    &m, &err), -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, "custom.cfg:2:") && strstr(err.buf, "no \"### kab end\""));
	T_CHECK(m == NULL);
	sb_free(&err);
	T_EQ_INT(kreboot_grub_merge("### kab begin\n### kab end\nx\n### kab begin\n### kab end\n", 2, "E\n", &m, &err),
		 -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, "custom.cfg:4: a second kab block"));
	sb_free(&err);
	/* text without a final newline stays whole; an unknown entry inside the block stays */
	T_EQ_INT(kreboot_grub_merge("a\nb", 2, "E\n", &m, &err), 0);
	check_lines(m, "a\nb\n" BEGIN_LINE "E\n### kab end\n");
	free(m);
	m = NULL;
	T_EQ_INT(kreboot_grub_merge(BEGIN_LINE "menuentry 'mine' {\n}\n### kab end\n", 2, "E\n", &m, &err), 0);
	check_lines(m, BEGIN_LINE "menuentry 'mine' {\n}\nE\n### kab end\n");
	free(m);

	/* the UUID of a block device in a by-uuid directory */
	char dir[PATH_MAX + 16], link[PATH_MAX + 64], uuid[64] = "";
	snprintf(dir, sizeof(dir), "%s/by-uuid", tmp);
	util_mkdir_p(dir, 0755);
	snprintf(link, sizeof(link), "%s/0000-NULL", dir);
	T_EQ_INT(symlink("/dev/null", link), 0);
	static const char *const devs[] = { "/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/loop0", "/dev/zram0" };
	const char *dev = NULL;
	struct stat st;
	for (size_t i = 0; i < ARRAY_SIZE(devs) && !dev; i++)
		if (stat(devs[i], &st) == 0 && S_ISBLK(st.st_mode))
			dev = devs[i];
	if (!dev) {
		t_skip("kreboot_fs_uuid on a block device", "none of /dev/vda, sda, nvme0n1, loop0, zram0");
		return;
	}
	snprintf(link, sizeof(link), "%s/1234-ABCD", dir);
	T_EQ_INT(symlink(dev, link), 0);
	T_EQ_INT(kreboot_fs_uuid(dir, st.st_rdev, uuid, sizeof(uuid)), 0);
	T_EQ_STR(uuid, "1234-ABCD");
	T_EQ_INT(kreboot_fs_uuid(dir, makedev(4095, 4095), uuid, sizeof(uuid)), -ENOENT);
	T_EQ_INT(kreboot_fs_uuid(dir, st.st_rdev, uuid, 4), -ENAMETOOLONG);
}

static void test_print_and_run(void)
{
	char bad[PATH_MAX + 16], file[PATH_MAX + 16];
	struct strbuf err = { 0 };
	snprintf(file, sizeof(file), "%s/a-file", tmp);
	put(file, "", "x");
	snprintf(bad, sizeof(bad), "%s/a-file/x.conf", tmp);
	char *argv_false[] = { "false", NULL };
	char *argv_sh[] = { "sh", "-c", "echo it\\'s broken >&2; exit 3", NULL };
	struct kreboot_step steps[] = {
		{ .kind = KREBOOT_RUN, .argv = argv_false },
		{ .kind = KREBOOT_RUN, .argv = argv_sh },
		{ .kind = KREBOOT_WRITE, .path = bad, .content = "EOF\nx" },
		{ .kind = KREBOOT_COPY, .path = "/tmp/b", .src = "/tmp/a b" },
	};
	struct kreboot_plan p = { .loader = KREBOOT_GRUB, .steps = steps, .n = 4 };
	char *out = printed(&p);
	char want[2048];
	snprintf(want, sizeof(want),
		 "false\n"
		 "sh -c 'echo it\\'\\''s broken >&2; exit 3'\n"
		 "write %s <<'EOF_'\n"
		 "EOF\n"
		 "x\n"
		 "EOF_\n"
		 "install -D -m 0644 '/tmp/a b' /tmp/b\n",
		 bad);
	check_lines(out, want);
	free(out);

	/* dry skips the commands; the write fails, named */
	p.n = 3;
	T_EQ_INT(kreboot_plan_run(&p, true, &err), -ENOTDIR);
	snprintf(want, sizeof(want), "step 3 of 3 (write %s): cannot write %s.kab-tmp: Not a directory", bad, bad);
	T_EQ_STR(err.buf, want);
	sb_free(&err);
	/* not dry: the first command stops the plan */
	T_EQ_INT(kreboot_plan_run(&p, false, &err), -EIO);
	T_EQ_STR(err.buf, "step 1 of 3 (false): false exited with status 1");
	sb_free(&err);
	p.steps++;
	p.n = 1;
	T_EQ_INT(kreboot_plan_run(&p, false, &err), -EIO);
	T_EQ_STR(err.buf, "step 1 of 1 (sh -c 'echo it\\'\\''s broken >&2; exit 3'): sh exited with status 3: it's broken");
	sb_free(&err);
	p.n = 0;
	T_EQ_INT(kreboot_plan_run(&p, false, &err), 0);

	/* a source gone since the plan was made */
	char src[PATH_MAX + 16], dst[PATH_MAX + 16];
	snprintf(src, sizeof(src), "%s/gone", tmp);
	snprintf(dst, sizeof(dst), "%s/copy/linux", tmp);
	struct kreboot_step copy = { .kind = KREBOOT_COPY, .path = dst, .src = src };
	p = (struct kreboot_plan){ .loader = KREBOOT_SYSTEMD_BOOT, .steps = &copy, .n = 1 };
	T_EQ_INT(kreboot_plan_run(&p, true, &err), -ENOENT);
	snprintf(want, sizeof(want), "step 1 of 1 (install -D -m 0644 %s %s): cannot copy %s to %s.kab-tmp: %s", src,
		 dst, src, dst, strerror(ENOENT));
	T_EQ_STR(err.buf, want);
	sb_free(&err);
	snprintf(want, sizeof(want), "%s.kab-tmp", dst);
	T_CHECK(access(want, F_OK) < 0 && errno == ENOENT);
}

int main(void)
{
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(img, sizeof(img), "%s/bzImage", tmp);
	snprintf(initrd, sizeof(initrd), "%s/initrd.img", tmp);
	put(img, "", "bzImage of build 3\n");
	put(initrd, "", "initrd of build 3\n");
	test_detect();
	test_systemd_boot();
	test_grub();
	test_refused();
	test_grub_helpers();
	test_print_and_run();
	if (util_remove_tree(tmp) < 0)
		fprintf(stderr, "could not remove %s\n", tmp);
	return t_done("test_reboot");
}
