/* build = ID: a kernel built earlier (on this machine, or on a build
 * machine whose database and kernels directory came along) booted as it
 * was recorded. Nothing is built, so the machine needs no tree and no
 * compiler; what is checked is that the record and its files are still
 * what a fresh build would have left: an ok build of kab's, its bzImage
 * of its kernelrelease, its initramfs and, for options a job needs, its
 * config. Builds record absolute paths, so the kernels directory must be
 * at the same path on both machines. */
#include "kernels/build.h"
#include "kernels/kbuild_priv.h"
#include "db/store.h"
#include "db/store_builds.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* An artifact path of build id: a regular file kab can read. */
static int artifact_ok(int64_t id, const char *what, const char *path, struct strbuf *err)
{
	struct stat st;
	if (stat(path, &st) < 0 && errno == ENOENT)
		sb_printf(err, "build %lld's %s %s is missing (builds record absolute paths: the kernels directory must be at the same path as on the machine that built it)",
			  (long long)id, what, path);
	else if (stat(path, &st) < 0 || access(path, R_OK) < 0)
		sb_printf(err, "build %lld's %s %s cannot be read (%s)", (long long)id, what, path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		sb_printf(err, "build %lld's %s %s is not a regular file", (long long)id, what, path);
	else
		return 0;
	return -EINVAL;
}

/* The record itself: there, kab's own build, finished ok. */
static int record_ok(struct store *st, const struct store_build *b, struct strbuf *err)
{
	long long id = (long long)b->id;
	if (strcmp(b->kind, "build") != 0) {
		/* kbuild_image keeps the file it was given as the series */
		sb_printf(err, "build %lld is a kernel image a kernel = image variant registered, not a kernel kab built: boot it with kernel = image, image = %s",
			  id, b->series ? b->series : b->image ? b->image : "PATH");
		return -EINVAL;
	}
	if (b->status == BUILD_FAILED) {
		const char *why = b->reason ? b->reason : "no reason recorded";
		sb_printf(err, "build %lld failed: %.*s (kab builds --db %s lists the builds)", id, (int)strcspn(why, "\n"), why,
			  store_path(st));
		return -EINVAL;
	}
	if (b->status != BUILD_OK) {
		sb_printf(err, "build %lld is %s, not ok: it has not finished (or its kab stopped during it); give an ok build (kab builds --db %s lists them)",
			  id, build_status_name(b->status), store_path(st));
		return -EINVAL;
	}
	if (!b->image) {
		sb_printf(err, "build %lld has no image recorded", id);
		return -EINVAL;
	}
	return 0;
}

/* Its files: the image a bzImage of its release, the initrd, the config. */
static int files_ok(const struct store_build *b, bool own_initrd, unsigned need, struct strbuf *err)
{
	long long id = (long long)b->id;
	int r = artifact_ok(b->id, "image", b->image, err);
	if (r < 0)
		return r;
	char version[256];
	if (kbuild_image_version(b->image, version, sizeof(version)) < 0) {
		sb_printf(err, "build %lld's image %s is not an x86 bzImage (no \"HdrS\" setup header with a version string)", id, b->image);
		return -EINVAL;
	}
	if (b->kernelrelease[0] && !strstr(version, b->kernelrelease)) {
		sb_printf(err, "build %lld's image %s is not the kernel it recorded: its version string \"%.100s\" does not name %s",
			  id, b->image, version, b->kernelrelease);
		return -EINVAL;
	}
	if (b->initrd && !own_initrd && (r = artifact_ok(b->id, "initrd", b->initrd, err)) < 0)
		return r;
	if (!need)
		return 0;
	if (!b->config_path) {
		sb_printf(err, "build %lld has no config recorded, to check the options this job needs", id);
		return -EINVAL;
	}
	if ((r = artifact_ok(b->id, "config", b->config_path, err)) < 0)
		return r;
	_cleanup_free_ char *text = NULL;
	size_t len;
	if ((r = util_read_file(b->config_path, &text, &len)) < 0) {
		sb_printf(err, "build %lld's config %s cannot be read (%s)", id, b->config_path, strerror(-r));
		return -EINVAL;
	}
	struct strbuf missing = { 0 };
	kconfig_missing(text, need, &missing);
	if (missing.len)
		sb_printf(err, "build %lld was built without %s, which this job's [swap] settings need: give a build made with them, or build anew (tree, base)",
			  id, missing.buf);
	r = missing.len ? -EINVAL : 0;
	sb_free(&missing);
	return r;
}

int kbuild_recorded(struct store *st, int64_t id, bool own_initrd, unsigned need, struct kbuild_result *ret,
		    struct strbuf *err)
{
	struct store_build b = { 0 };
	int r = store_build_get(st, id, &b);
	if (r == -ENOENT) {
		sb_printf(err, "build %lld is not in this database (kab builds --db %s lists the builds)", (long long)id, store_path(st));
		return -EINVAL;
	}
	if (r < 0) {
		sb_printf(err, "cannot read build %lld from the database %s: %s", (long long)id, store_path(st), store_errmsg(st));
		return r;
	}
	if ((r = record_ok(st, &b, err)) == 0 && (r = files_ok(&b, own_initrd, need, err)) == 0) {
		*ret = (struct kbuild_result){ .id = b.id, .recorded = true, .duration_s = b.duration_s };
		snprintf(ret->kernelrelease, sizeof(ret->kernelrelease), "%s", b.kernelrelease);
		snprintf(ret->image, sizeof(ret->image), "%s", b.image);
		snprintf(ret->base_sha, sizeof(ret->base_sha), "%s", b.base_sha);
		for (const char *p = b.patches; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
			ret->patches++;
	}
	store_build_clear(&b);
	return r;
}

void kbuild_recorded_describe(const struct kbuild_result *res, char *buf, size_t len)
{
	char patches[32];
	if (res->patches)
		snprintf(patches, sizeof(patches), "%u patch%s", res->patches, res->patches == 1 ? "" : "es");
	else
		snprintf(patches, sizeof(patches), "no patches");
	snprintf(buf, len, "build %lld recorded (%s, base %.12s, %s), not rebuilt", (long long)res->id, res->kernelrelease,
		 res->base_sha[0] ? res->base_sha : "?", patches);
}
