/* kernels/kexec: the command line a kab boot gets, the kab.build marker,
 * the cmdline limit read from a bzImage header, the checks made before a
 * switch, and how a boot is judged (the marker and the kernelrelease). */
#include "kernels/kexec.h"
#include "t.h"
#include "harness/base/util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[] = "/tmp/kab-kexec-XXXXXX";

/* A file with a bzImage setup header: boot protocol version and cmdline_size. */
static void fake_image(const char *path, unsigned version, unsigned cmdline_size)
{
	unsigned char h[0x400] = { 0 };
	memcpy(h + 0x202, "HdrS", 4);
	h[0x206] = version & 0xff;
	h[0x207] = version >> 8;
	for (int i = 0; i < 4; i++)
		h[0x238 + i] = (cmdline_size >> (8 * i)) & 0xff;
	FILE *f = fopen(path, "w");
	fwrite(h, 1, sizeof(h), f);
	fclose(f);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void test_cmdline(void)
{
	char buf[512];
	/* kab's own and the loader's parameters go, panic and the marker come last, extra after them */
	T_EQ_INT(kexec_cmdline("BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro panic=1 kab.build=3 quiet initrd=/x oops=panic", 7, 10,
			       "transparent_hugepage=always", buf, sizeof(buf)), 0);
	T_EQ_STR(buf, "root=/dev/vda1 ro quiet panic=10 oops=panic kab.build=7 transparent_hugepage=always");
	/* what follows " -- " is init's and stays last */
	T_EQ_INT(kexec_cmdline("console=ttyS0 kab.build=1 -- --single  ", 2, 5, NULL, buf, sizeof(buf)), 0);
	T_EQ_STR(buf, "console=ttyS0 panic=5 oops=panic kab.build=2 -- --single");
	T_EQ_INT(kexec_cmdline("", 1, 3, "", buf, sizeof(buf)), 0);
	T_EQ_STR(buf, "panic=3 oops=panic kab.build=1");
	/* a parameter that only starts like ours stays */
	T_EQ_INT(kexec_cmdline("panicky=1 kab.buildx=2", 4, 3, NULL, buf, sizeof(buf)), 0);
	T_EQ_STR(buf, "panicky=1 kab.buildx=2 panic=3 oops=panic kab.build=4");
	char small[16];
	T_EQ_INT(kexec_cmdline("console=ttyS0", 1, 3, NULL, small, sizeof(small)), -ENAMETOOLONG);
}

static void test_marker(void)
{
	T_EQ_INT(kexec_marker("console=ttyS0 kab.build=12 quiet"), 12);
	T_EQ_INT(kexec_marker("console=ttyS0 quiet"), -1);
	T_EQ_INT(kexec_marker("kab.build=1 kab.build=2"), 2);      /* the last wins, as for the kernel */
	T_EQ_INT(kexec_marker("kab.build=x"), -1);
	T_EQ_INT(kexec_marker("kab.build="), -1);
	T_EQ_INT(kexec_marker("quiet -- kab.build=5"), -1);        /* init's arguments are not the kernel's */
	T_EQ_INT(kexec_marker(NULL), -1);
}

static void test_judge(void)
{
	char why[512];
	T_CHECK(kexec_judge(3, "6.1.0-kab3", "root=/dev/vda kab.build=3", "6.1.0-kab3", why, sizeof(why)));
	T_EQ_STR(why, "");
	/* the default kernel came back: no marker */
	T_CHECK(!kexec_judge(3, "6.1.0-kab3", "root=/dev/vda", "6.1.0-57-amd64", why, sizeof(why)));
	T_CHECK(strstr(why, "without a kab.build marker") && strstr(why, "6.1.0-57-amd64"));
	/* another build came up */
	T_CHECK(!kexec_judge(3, "6.1.0-kab3", "kab.build=2", "6.1.0-kab2", why, sizeof(why)));
	T_CHECK(strstr(why, "came up on build 2") != NULL);
	/* the marker is right but the kernelrelease is not the build's */
	T_CHECK(!kexec_judge(3, "6.1.0-kab3", "kab.build=3", "6.1.0-kab9", why, sizeof(why)));
	T_CHECK(strstr(why, "kernelrelease 6.1.0-kab9, not the 6.1.0-kab3") != NULL);
}

static void test_image_checks(void)
{
	char img[PATH_MAX], old[PATH_MAX], junk[PATH_MAX], initrd[PATH_MAX];
	snprintf(img, sizeof(img), "%s/bzImage", dir);
	snprintf(old, sizeof(old), "%s/old", dir);
	snprintf(junk, sizeof(junk), "%s/junk", dir);
	snprintf(initrd, sizeof(initrd), "%s/initrd", dir);
	fake_image(img, 0x20f, 64);
	fake_image(old, 0x205, 4096);
	write_text(junk, "not a kernel\n");
	write_text(initrd, "x");
	size_t max = 0;
	T_EQ_INT(kexec_cmdline_max(img, &max), 0);
	T_EQ_INT(max, 64);
	T_EQ_INT(kexec_cmdline_max(old, &max), 0);
	T_EQ_INT(max, 255);  /* before protocol 2.06 */
	T_EQ_INT(kexec_cmdline_max(junk, &max), -EINVAL);

	struct strbuf err = { 0 };
	T_EQ_INT(kexec_preflight(img, initrd, "console=ttyS0", &err), 0);
	char longline[100];
	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = 0;
	T_EQ_INT(kexec_preflight(img, NULL, longline, &err), -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, "99 characters, more than the 64"));
	sb_free(&err);
	T_EQ_INT(kexec_preflight(junk, NULL, "quiet", &err), -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, "not an x86 bzImage"));
	sb_free(&err);
	char missing[PATH_MAX + 16];
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	T_EQ_INT(kexec_preflight(missing, NULL, "quiet", &err), -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, missing) && strstr(err.buf, "cannot be read"));
	sb_free(&err);
	T_EQ_INT(kexec_preflight(img, missing, "quiet", &err), -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, "initrd") && strstr(err.buf, missing));
	sb_free(&err);
	unlink(img);
	unlink(old);
	unlink(junk);
	unlink(initrd);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_cmdline();
	test_marker();
	test_judge();
	test_image_checks();
	rmdir(dir);
	return t_done("test_kexec");
}
