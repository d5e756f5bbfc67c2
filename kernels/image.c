/* kernel = image: a kernel image file a job names (a distribution's
 * vmlinuz, a kernel built elsewhere) registered as a build, so that the
 * executor boots it like one of its own. The image and initrd are copied
 * under the kernels directory, so the file the job named can change
 * without changing what a later boot of the job boots; the same contents
 * come back as the same build. */
#include "kernels/build.h"
#include "kernels/kbuild_priv.h"
#include "kernels/sha256.h"
#include "db/store.h"
#include "db/store_builds.h"
#include "harness/base/util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int kbuild_image(struct store *st, const char *image, const char *initrd, const char *kernels_dir,
		 struct kbuild_result *ret, struct strbuf *err)
{
	char version[256], hi[65], hr[65] = "", key[65];
	if (kbuild_image_version(image, version, sizeof(version)) < 0) {
		sb_printf(err, "image %s is not an x86 bzImage (no \"HdrS\" setup header with a version string)", image);
		return -EINVAL;
	}
	if (sha256_file(image, hi) < 0 || (initrd && sha256_file(initrd, hr) < 0)) {
		sb_printf(err, "cannot read %s: %s", initrd && access(image, R_OK) == 0 ? initrd : image, strerror(errno));
		return -EINVAL;
	}
	char all[256];
	snprintf(all, sizeof(all), "%s image %s initrd %s", KBUILD_RECIPE, hi, hr);
	sha256_buf(all, strlen(all), key);

	*ret = (struct kbuild_result){ 0 };
	struct store_build b = { 0 };
	if (store_build_find(st, key, &b) == 0 && b.image && access(b.image, R_OK) == 0 &&
	    (!b.initrd || access(b.initrd, R_OK) == 0)) {
		ret->id = b.id;
		ret->reused = true;
		snprintf(ret->kernelrelease, sizeof(ret->kernelrelease), "%s", b.kernelrelease);
		snprintf(ret->image, sizeof(ret->image), "%s", b.image);
		store_build_clear(&b);
		return 0;
	}
	store_build_clear(&b);

	char kdir[PATH_MAX], dir[PATH_MAX + 32], img[PATH_MAX + 48], ird[PATH_MAX + 48];
	int r = kbuild_kernels_dir(kernels_dir, kdir, sizeof(kdir), err);
	if (r < 0)
		return r;
	b = (struct store_build){ .tree = "", .base_ref = "", .config_source = "image", .series = (char *)image };
	snprintf(b.kind, sizeof(b.kind), "image");
	snprintf(b.inputs_key, sizeof(b.inputs_key), "%s", key);
	snprintf(b.config_hash, sizeof(b.config_hash), "%s", hi);
	r = store_build_begin(st, &b, &b.id);
	if (r < 0) {
		sb_printf(err, "cannot record the image in the database");
		return r;
	}
	snprintf(dir, sizeof(dir), "%s/%lld", kdir, (long long)b.id);
	snprintf(img, sizeof(img), "%s/bzImage", dir);
	snprintf(ird, sizeof(ird), "%s/initrd.img", dir);
	double t0 = util_mono_now();
	if ((r = util_mkdir_p(dir, 0755)) < 0)
		sb_printf(err, "cannot make %s: %s", dir, strerror(-r));
	else if ((r = util_copy_file(image, img)) < 0)
		sb_printf(err, "cannot copy %s to %s: %s", image, img, strerror(-r));
	else if (initrd && (r = util_copy_file(initrd, ird)) < 0)
		sb_printf(err, "cannot copy %s to %s: %s", initrd, ird, strerror(-r));
	/* the release is the version string's first word */
	size_t n = strcspn(version, " ");
	snprintf(b.kernelrelease, sizeof(b.kernelrelease), "%.*s", (int)n, version);
	b.status = r < 0 ? BUILD_FAILED : BUILD_OK;
	b.reason = r < 0 ? err->buf : NULL;
	b.duration_s = util_mono_now() - t0;
	b.dir = dir;
	b.image = r < 0 ? NULL : img;
	b.initrd = r < 0 || !initrd ? NULL : ird;
	if (r < 0)
		util_remove_tree(dir);
	int r2 = store_build_finish(st, &b);
	if (r < 0)
		return r;
	if (r2 < 0) {
		sb_printf(err, "cannot record the image in the database");
		return r2;
	}
	ret->id = b.id;
	snprintf(ret->kernelrelease, sizeof(ret->kernelrelease), "%s", b.kernelrelease);
	snprintf(ret->image, sizeof(ret->image), "%s", img);
	return 0;
}
