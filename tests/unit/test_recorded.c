/* build = ID: a recorded build looked up in a temporary database
 * (kbuild_recorded), its errors at submit (job_check_builds) and the
 * build stage that takes it without compiling (kbuild_job). Rows are made
 * with the store API, the bzImage is a fake setup header. */
#include "harness/daemon/api.h"
#include "kernels/build.h"
#include "harness/job/kbuild_job.h"
#include "harness/daemon/httpd.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
#include "kernels/builduser.h"
#include "kernels/run.h"
#include "db/store.h"
#include "db/store_builds.h"
#include "db/store_track.h"
#include "t.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/kab-test-recorded.XXXXXX";
static char db[PATH_MAX];

/* A bzImage whose version string starts with release. */
static void fake_bzimage(const char *path, const char *release)
{
	unsigned char img[0x400] = { 0 };
	memcpy(img + 0x202, "HdrS", 4);
	img[0x20e] = 0x00; /* version at 0x200 + 0x100 */
	img[0x20f] = 0x01;
	snprintf((char *)img + 0x300, 0x100, "%s (root@x) #1 SMP", release);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	T_CHECK(fd >= 0 && write(fd, img, sizeof(img)) == (ssize_t)sizeof(img));
	if (fd >= 0)
		close(fd);
}

static void write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	T_CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	if (fd >= 0)
		close(fd);
}

/* A build row as kab's build leaves it: status (ok | failed | building),
 * kind (build | image), artifacts in DIR/kernels/<id>/; of tree at
 * base_ref, commit sha. */
static int64_t add_build_of(struct store *st, const char *status, const char *kind, const char *reason,
			    const char *tree, const char *base_ref, const char *sha)
{
	struct store_build b = { .tree = (char *)tree,
				 .base_ref = (char *)base_ref,
				 .config_source = "defconfig",
				 .series = "/p/batch.mbox",
				 .patches = "mm: one\t<1@x>\nmm: two\t<2@x>\n" };
	snprintf(b.base_sha, sizeof(b.base_sha), "%s", sha);
	snprintf(b.config_hash, sizeof(b.config_hash), "%064d", 0);
	snprintf(b.inputs_key, sizeof(b.inputs_key), "%064d", 1);
	snprintf(b.kind, sizeof(b.kind), "%s", kind);
	if (store_build_begin(st, &b, &b.id) < 0) {
		T_CHECK(!"store_build_begin");
		return 0;
	}
	if (strcmp(status, "building") == 0)
		return b.id;
	char kdir[PATH_MAX + 32], img[PATH_MAX + 48], ird[PATH_MAX + 48], cfg[PATH_MAX + 48];
	snprintf(kdir, sizeof(kdir), "%s/kernels/%lld", dir, (long long)b.id);
	snprintf(img, sizeof(img), "%s/bzImage", kdir);
	snprintf(ird, sizeof(ird), "%s/initrd.img", kdir);
	snprintf(cfg, sizeof(cfg), "%s/config", kdir);
	T_EQ_INT(build_status_parse(status, &b.status), 0);
	snprintf(b.kernelrelease, sizeof(b.kernelrelease), "6.1.0-kab%lld", (long long)b.id);
	b.reason = (char *)reason;
	if (strcmp(status, "ok") == 0) {
		T_EQ_INT(util_mkdir_p(kdir, 0755), 0);
		fake_bzimage(img, b.kernelrelease);
		write_text(ird, "initramfs");
		write_text(cfg, "CONFIG_PROC_FS=y\nCONFIG_MEMCG=y\nCONFIG_SWAP=y\nCONFIG_KEXEC_FILE=y\nCONFIG_ZSWAP=y\n");
		b.dir = kdir;
		b.image = img;
		b.initrd = ird;
		b.config_path = cfg;
	}
	T_EQ_INT(store_build_finish(st, &b), 0);
	return b.id;
}

static int64_t add_build(struct store *st, const char *status, const char *kind, const char *reason)
{
	return add_build_of(st, status, kind, reason, "/src/linux", "v6.1", "71864f7f0e8547b2fa0e2b6b0b4e0a2d0c6a1f33");
}

/* kbuild_recorded's message for id, or "" when it accepts it. */
static char msg[8192];
static const char *check(struct store *st, int64_t id, bool own_initrd, unsigned need, struct kbuild_result *res)
{
	struct strbuf err = { 0 };
	struct kbuild_result tmp;
	int r = kbuild_recorded(st, id, own_initrd, need, res ? res : &tmp, &err);
	snprintf(msg, sizeof(msg), "%s", r == 0 ? "" : err.buf ? err.buf : "(no message)");
	T_CHECK(r == 0 ? err.len == 0 : r == -EINVAL && err.len > 0);
	sb_free(&err);
	return msg;
}

static bool has(const char *got, const char *want)
{
	if (strstr(got, want))
		return true;
	fprintf(stderr, "expected \"%s\" in \"%s\"\n", want, got);
	return false;
}

static void test_lookup(struct store *st)
{
	int64_t ok = add_build(st, "ok", "build", NULL);
	struct kbuild_result res;
	T_EQ_STR(check(st, ok, false, 0, &res), "");
	T_CHECK(res.recorded && !res.reused && res.id == ok);
	T_EQ_STR(res.kernelrelease, "6.1.0-kab1");
	T_EQ_STR(res.base_sha, "71864f7f0e8547b2fa0e2b6b0b4e0a2d0c6a1f33");
	T_EQ_INT(res.patches, 2);
	T_CHECK(strstr(res.image, "/kernels/1/bzImage") != NULL);
	char line[256];
	kbuild_recorded_describe(&res, line, sizeof(line));
	T_EQ_STR(line, "build 1 recorded (6.1.0-kab1, base 71864f7f0e85, 2 patches), not rebuilt");
	res.patches = 1;
	kbuild_recorded_describe(&res, line, sizeof(line));
	T_CHECK(strstr(line, ", 1 patch)") != NULL);
	res.patches = 0;
	kbuild_recorded_describe(&res, line, sizeof(line));
	T_CHECK(strstr(line, ", no patches)") != NULL);

	/* not there, failed, unfinished, an image registration */
	char want[PATH_MAX + 128];
	snprintf(want, sizeof(want), "build 99 is not in this database (kab builds --db %s lists the builds)", db);
	T_EQ_STR(check(st, 99, false, 0, NULL), want);
	int64_t failed = add_build(st, "failed", "build", "mm/vmscan.c:12: error: x undeclared\nmake: *** [vmscan.o] Error 1\n");
	snprintf(want, sizeof(want), "build %lld failed: mm/vmscan.c:12: error: x undeclared (kab builds --db %s lists the builds)",
		 (long long)failed, db);
	T_EQ_STR(check(st, failed, false, 0, NULL), want);
	int64_t building = add_build(st, "building", "build", NULL);
	T_CHECK(has(check(st, building, false, 0, NULL), "is building, not ok: it has not finished"));
	int64_t image = add_build(st, "ok", "image", NULL);
	T_CHECK(has(check(st, image, false, 0, NULL),
		    "is a kernel image a kernel = image variant registered, not a kernel kab built: boot it with kernel = image, image = /p/batch.mbox"));

	/* its files */
	int64_t b = add_build(st, "ok", "build", NULL);
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/kernels/%lld/initrd.img", dir, (long long)b);
	T_CHECK(unlink(path) == 0);
	snprintf(want, sizeof(want), "build %lld's initrd %s is missing (builds record absolute paths", (long long)b, path);
	T_CHECK(has(check(st, b, false, 0, NULL), want));
	T_EQ_STR(check(st, b, true, 0, NULL), ""); /* the variant gives its own */
	snprintf(path, sizeof(path), "%s/kernels/%lld/bzImage", dir, (long long)b);
	T_CHECK(unlink(path) == 0);
	snprintf(want, sizeof(want), "build %lld's image %s is missing", (long long)b, path);
	T_CHECK(has(check(st, b, true, 0, NULL), want));
	T_CHECK(mkdir(path, 0755) == 0);
	snprintf(want, sizeof(want), "build %lld's image %s is not a regular file", (long long)b, path);
	T_CHECK(has(check(st, b, true, 0, NULL), want));
	T_CHECK(rmdir(path) == 0);
	write_text(path, "not a kernel");
	T_CHECK(has(check(st, b, true, 0, NULL), "is not an x86 bzImage (no \"HdrS\" setup header"));
	fake_bzimage(path, "6.1.0-other");
	T_CHECK(has(check(st, b, true, 0, NULL), "is not the kernel it recorded: its version string \"6.1.0-other (root@x) #1 SMP\" does not name 6.1.0-kab"));

	/* the options the job's [swap] needs, from the recorded config */
	T_EQ_STR(check(st, ok, false, KBUILD_NEED_ZSWAP, NULL), "");
	snprintf(want, sizeof(want), "build %lld was built without CONFIG_ZRAM, which this job's [swap] settings need", (long long)ok);
	T_CHECK(has(check(st, ok, false, KBUILD_NEED_ZRAM | KBUILD_NEED_ZSWAP, NULL), want));
}

static struct job *parse(const char *text)
{
	struct diags d = { 0 };
	struct job *j = NULL;
	if (job_parse_string_nocheck("t.job", text, &j, &d) < 0)
		diags_print(&d, stderr);
	T_CHECK(j != NULL);
	diags_free(&d);
	return j;
}

static int done_calls;
static char done_line[512];
static void on_done(void *ctx, const char *variant, const struct kbuild_result *res)
{
	done_calls++;
	char line[256];
	kbuild_recorded_describe(res, line, sizeof(line));
	size_t n = strlen(done_line);
	snprintf(done_line + n, sizeof(done_line) - n, "%s%s: %s", n ? "; " : "", variant, res->recorded ? line : "?");
}

#define WORKLOAD "[workload w]\ntype = command\ncommand = true\n"

/* kabd's submit (job_check_builds) and the build stage (kbuild_job) */
static void test_job(struct store *st)
{
	int64_t a = add_build(st, "ok", "build", NULL), b = add_build(st, "ok", "build", NULL);
	char text[1024];
	snprintf(text, sizeof(text), "[job]\nname = r\n[variant A]\nname = base\nkernel = build\nbuild = %lld\n"
		 "[variant B]\nname = new\nkernel = build\nbuild = %lld\ninitrd = /elsewhere/initrd.gz\n" WORKLOAD,
		 (long long)a, (long long)b);
	struct job *j = parse(text);
	if (!j)
		return;
	struct diags d = { 0 };
	T_EQ_INT(job_check_builds(j, st, &d), 0);
	T_EQ_INT(d.n, 0);
	int64_t builds[2] = { -1, -1 };
	struct kbuild_opts o = { .variant_builds = builds, .done = on_done };
	struct strbuf err = { 0 };
	T_EQ_INT(kbuild_job(st, j, &o, &err), 0);
	T_CHECK(err.len == 0);
	T_EQ_INT(builds[0], a);
	T_EQ_INT(builds[1], b);
	T_EQ_INT(done_calls, 2);
	char want[512];
	snprintf(want, sizeof(want), "base: build %lld recorded (6.1.0-kab%lld, base 71864f7f0e85, 2 patches), not rebuilt; new: build %lld recorded",
		 (long long)a, (long long)a, (long long)b);
	T_CHECK(has(done_line, want));
	job_free(j);

	/* a build gone since submit: kbuild_job says so at its line, before
	 * the variant kab would build (whose tree does not even exist) */
	char img[PATH_MAX + 64];
	snprintf(img, sizeof(img), "%s/kernels/%lld/bzImage", dir, (long long)b);
	T_CHECK(unlink(img) == 0);
	snprintf(text, sizeof(text), "[job]\nname = r\n[variant A]\nkernel = build\ntree = /nonexistent/linux\nbase = v6.1\n"
		 "[variant B]\nkernel = build\nbuild = %lld\n[variant C]\nkernel = build\nbuild = 99\n" WORKLOAD, (long long)b);
	j = parse(text);
	if (!j)
		return;
	T_EQ_INT(job_check_builds(j, st, &d), 2);
	T_EQ_INT(d.n, 2);
	snprintf(want, sizeof(want), "build %lld's image %s is missing", (long long)b, img);
	T_CHECK(d.n == 2 && d.v[0].line == 9 && has(d.v[0].msg, want));
	T_CHECK(d.n == 2 && d.v[1].line == 12 && has(d.v[1].msg, "build 99 is not in this database"));
	diags_free(&d);
	done_calls = 0;
	builds[0] = builds[1] = -1;
	T_EQ_INT(kbuild_job(st, j, &o, &err), -EINVAL);
	snprintf(want, sizeof(want), "t.job:9: build %lld's image %s is missing", (long long)b, img);
	T_CHECK(has(err.buf ? err.buf : "", want));
	T_EQ_INT(done_calls, 0);
	T_EQ_INT(builds[0], -1);
	sb_free(&err);
	job_free(j);
}

/* build = ID of a build of a tracked branch (base ref "REMOTE BRANCH"):
 * the build stage records its commit on the job's variant row, with the
 * subject read in kab's clone of the tree as the clone's owner: root's
 * clone (a lab machine given one, with no build user) as root, another
 * user's (nobody's here, as kab-build's on a build machine) as that user,
 * never as root. The stage runs until the job's builds are recorded with
 * it, once a job (executor.c); run again, after a crash before that, it
 * writes the same row. */
static void test_recorded_track(struct store *st, const char *owner)
{
	char tree[PATH_MAX + 16], work[PATH_MAX + 16], clone[PATH_MAX + 64], sha[41] = "";
	snprintf(tree, sizeof(tree), "%s/tree", dir);
	snprintf(work, sizeof(work), "%s/work", dir);
	T_EQ_INT(kbuild_clone_dir(work, tree, clone, sizeof(clone)), 0);
	char cmd[4 * PATH_MAX];
	snprintf(cmd, sizeof(cmd),
		 "rm -rf %s %s && chmod 0711 %s && git -c init.defaultBranch=main init -q %s && cd %s && echo 1 >f && git add f && "
		 "GIT_COMMITTER_DATE='1700000000 +0000' git -c user.name=t -c user.email=t@kab commit -q -m 'mm: the night' && "
		 "chmod -R a+rX %s && mkdir -p \"$(dirname %s)\" && git clone -q --shared --no-checkout %s %s%s%s%s%s",
		 tree, clone, dir, tree, tree, tree, clone, tree, clone, owner ? " && chown -R " : "",
		 owner ? owner : "", owner ? ": " : "", owner ? clone : "");
	char *argv[] = { "sh", "-c", cmd, NULL };
	char *head[] = { "git", "-C", tree, "rev-parse", "HEAD", NULL };
	struct strbuf out = { 0 };
	if (!krun_ok(argv, NULL, NULL) || !krun_ok(head, NULL, &out) || out.len != 40) {
		t_skip("a recorded build of a track", "git failed");
		sb_free(&out);
		return;
	}
	if (owner) { /* git as nobody: were it root, it would refuse nobody's clone (safe.directory) */
		struct krun_user u;
		T_EQ_INT(kbuser_owner(clone, &u), 1);
		T_EQ_STR(u.name, owner);
	}
	snprintf(sha, sizeof(sha), "%s", out.buf);
	sb_free(&out);
	/* as kab build records a build of track = origin main */
	int64_t id = add_build_of(st, "ok", "build", NULL, tree, "origin main", sha);
	int64_t base = add_build(st, "ok", "build", NULL);
	char text[512];
	snprintf(text, sizeof(text),
		 "[job]\nname = lab\n[variant A]\nkernel = build\nbuild = %lld\n[variant B]\nname = night\nkernel = build\nbuild = %lld\n" WORKLOAD,
		 (long long)base, (long long)id);
	struct job *j = parse(text);
	int64_t job = 0;
	T_CHECK(j && job_store_create(st, j, &job) == 0);
	int64_t builds[2];
	struct kbuild_opts o = { .work_dir = work, .variant_builds = builds, .job_id = job };
	struct strbuf err = { 0 };
	struct store_track t[2];
	memset(t, 0, sizeof(t));
	for (int i = 0; i < 2 && j; i++) {
		T_EQ_INT(kbuild_job(st, j, &o, &err), 0);
		T_EQ_INT(store_variant_track_get(st, job, 1, &t[i]), 0);
		T_EQ_STR(t[i].track, "origin main");
		T_EQ_STR(t[i].sha, sha);
		T_EQ_STR(t[i].subject, "mm: the night");
		T_NEAR(t[i].date, 1700000000, 0);
	}
	T_CHECK(memcmp(&t[0], &t[1], sizeof(t[0])) == 0);
	/* a base ref that is no track records nothing */
	T_EQ_INT(store_variant_track_get(st, job, 0, &t[0]), -ENOENT);
	sb_free(&err);
	job_free(j);
}

/* kabd's POST /jobs: a job whose build = ID is unusable is refused with
 * 400 and the line-numbered errors, like any other problem of the job. */
static void test_submit(struct store *st)
{
	int64_t failed = add_build(st, "failed", "build", "config: bad\n");
	char text[1024];
	snprintf(text, sizeof(text), "[job]\nname = r\nswitch = reboot\n[variant A]\nkernel = build\nbuild = 99\n"
		 "[variant B]\nkernel = build\nbuild = %lld\n" WORKLOAD, (long long)failed);
	struct api a = { .db_path = db };
	struct httpd_req rq = { .method = "POST", .path = "/jobs", .body = text, .body_len = strlen(text), .submitter = "test" };
	struct httpd_resp rs = { 0 };
	api_job_create(&a, &rq, &rs);
	T_EQ_INT(rs.status, 400);
	char want[PATH_MAX + 256];
	snprintf(want, sizeof(want), "\"errors\": [\"6: build 99 is not in this database (kab builds --db %s lists the builds)\", "
		 "\"9: build %lld failed: config: bad (kab builds --db %s lists the builds)\"]", db, (long long)failed, db);
	T_CHECK(has(rs.body.buf ? rs.body.buf : "", want));
	sb_free(&rs.body);
	int64_t *ids = NULL;
	size_t n = 1;
	T_EQ_INT(store_jobs_page(st, 0, 10, &ids, &n), 0);
	T_EQ_INT(n, 0); /* nothing stored */
	free(ids);
}

int main(void)
{
	log_quiet = true;
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(db, sizeof(db), "%s/kab.db", dir);
	struct store *st = NULL;
	T_EQ_INT(store_open(db, &st), 0);
	if (st) {
		test_lookup(st);
		test_job(st);
		test_submit(st);
		test_recorded_track(st, NULL);
		if (geteuid() == 0)
			test_recorded_track(st, "nobody");
		store_close(st);
	}
	util_remove_tree(dir);
	return t_done("test_recorded");
}
