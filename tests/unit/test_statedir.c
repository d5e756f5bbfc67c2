/* The state directory: made 0700 when missing; refused with the reason
 * when it is a symbolic link, another user's, writable by group or others,
 * or under a directory others can change; fresh names by directory fd.
 * Real directories under /tmp. The directories made and refused need root
 * (the owner checks are root's); the paths and names need no one. */
#include "t.h"
#include "t_config.h"
#include "kernels/build.h"
#include "kernels/kbuild_priv.h"
#include "harness/base/statedir.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char base[] = "/tmp/kab-unit-state-XXXXXX";

static unsigned mode_of(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 01000;
}

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", base, name);
}

/* state_init(dir) refused with r and a message containing want */
static void refused(const char *dir, int r, const char *want)
{
	struct strbuf err = { 0 };
	state_reset();
	T_EQ_INT(state_init(dir, &err), r);
	T_CHECK(err.buf && strstr(err.buf, want));
	if (!err.buf || !strstr(err.buf, want))
		fprintf(stderr, "  message: %s\n  wanted: %s\n", err.buf ? err.buf : "(none)", want);
	T_CHECK(err.buf && strstr(err.buf, dir));
	T_CHECK(state_path() == NULL);
	sb_free(&err);
}

static void test_create(void)
{
	char dir[128];
	path_in(dir, sizeof(dir), "state");
	struct strbuf err = { 0 };
	state_reset();
	T_EQ_INT(state_init(dir, &err), 0);
	T_EQ_STR(state_path(), dir);
	T_EQ_INT(mode_of(dir), 0700);
	T_CHECK(state_fd() >= 0);
	/* once open, NULL keeps it */
	T_EQ_INT(state_init(NULL, &err), 0);
	T_EQ_STR(state_path(), dir);
	/* a trailing slash names the same directory */
	char slash[140];
	snprintf(slash, sizeof(slash), "%s/", dir);
	T_EQ_INT(state_init(slash, &err), 0);
	T_EQ_STR(state_path(), dir);
	/* an existing one readable by others is used as it is: what kab
	 * puts in it is 0700 */
	T_EQ_INT(chmod(dir, 0755), 0);
	state_reset();
	T_EQ_INT(state_init(dir, &err), 0);
	T_EQ_INT(mode_of(dir), 0755);
	T_CHECK(err.buf == NULL);
	sb_free(&err);
}

static void test_env(void)
{
	char dir[128], env[300];
	path_in(dir, sizeof(dir), "from-env");
	snprintf(env, sizeof(env), "%s:/elsewhere", dir);
	setenv(STATE_DIR_ENV, env, 1);
	t_config_from_env();
	struct strbuf err = { 0 };
	state_reset();
	T_EQ_INT(state_init(NULL, &err), 0);
	T_EQ_STR(state_path(), dir);
	unsetenv(STATE_DIR_ENV);
	t_config_from_env();
	sb_free(&err);
}

static void test_refusals(void)
{
	char dir[128], target[128], parent[128], sub[160];
	path_in(dir, sizeof(dir), "groupw");
	T_EQ_INT(mkdir(dir, 0700), 0);
	T_EQ_INT(chmod(dir, 0770), 0);
	refused(dir, -EPERM, "is writable by its group or others (owner uid 0, mode 0770)");
	T_EQ_INT(chmod(dir, 0703), 0);
	refused(dir, -EPERM, "is writable by its group or others");

	path_in(dir, sizeof(dir), "theirs");
	T_EQ_INT(mkdir(dir, 0700), 0);
	T_EQ_INT(chown(dir, 65534, 65534), 0);
	refused(dir, -EPERM, "is not owned by root (owner uid 65534");

	path_in(target, sizeof(target), "state");
	path_in(dir, sizeof(dir), "link");
	T_EQ_INT(symlink(target, dir), 0);
	refused(dir, -ELOOP, "is a symbolic link");

	path_in(dir, sizeof(dir), "file");
	int fd = open(dir, O_WRONLY | O_CREAT | O_EXCL, 0600);
	T_CHECK(fd >= 0);
	close(fd);
	refused(dir, -EPERM, "is not a directory");

	/* a parent others can write, not sticky: they could rename the state away */
	path_in(parent, sizeof(parent), "open");
	T_EQ_INT(mkdir(parent, 0700), 0);
	T_EQ_INT(chmod(parent, 0777), 0);
	snprintf(sub, sizeof(sub), "%s/state", parent);
	refused(sub, -EPERM, "can be changed by a user other than root");
	T_CHECK(mode_of(sub) == 01000); /* and nothing was made there */
	snprintf(sub, sizeof(sub), "%s/missing/state", parent);
	refused(sub, -EPERM, "can be changed by a user other than root");
	snprintf(sub, sizeof(sub), "%s/missing", parent);
	T_CHECK(mode_of(sub) == 01000); /* not even the missing parent */
	snprintf(sub, sizeof(sub), "%s/state", parent);
	/* sticky (like /tmp): others cannot rename what is root's */
	T_EQ_INT(chmod(parent, 01777), 0);
	struct strbuf err = { 0 };
	state_reset();
	T_EQ_INT(state_init(sub, &err), 0);
	T_EQ_INT(mode_of(sub), 0700);
	sb_free(&err);
}

/* refused as a path, before anything is looked at: any user */
static void test_not_absolute(void)
{
	refused("var/lib/kab", -EINVAL, "not an absolute path");
	refused("/var/lib/../kab", -EINVAL, "not an absolute path");
	refused("/var//kab", -EINVAL, "not an absolute path");
}

static void test_names(void)
{
	char dir[128];
	path_in(dir, sizeof(dir), "names");
	struct strbuf err = { 0 };
	state_reset();
	T_EQ_INT(state_init(dir, &err), 0);
	int jobs;
	T_EQ_INT(state_subdir(state_fd(), state_path(), "jobs", &jobs, &err), 1);
	T_EQ_INT(state_subdir(state_fd(), state_path(), "jobs", &jobs, &err), 0); /* there: 0, opened */
	char a[64], b[64], p[256];
	T_EQ_INT(state_mkdtemp(jobs, "job1-", a, sizeof(a)), 0);
	T_EQ_INT(state_mkdtemp(jobs, "job1-", b, sizeof(b)), 0);
	T_CHECK(strncmp(a, "job1-", 5) == 0 && strlen(a) == 11);
	T_CHECK(strcmp(a, b) != 0);
	snprintf(p, sizeof(p), "%s/jobs/%s", dir, a);
	T_EQ_INT(mode_of(p), 0700);
	T_EQ_INT(state_tempname("swap-", ".x", a, sizeof(a)), 0);
	T_CHECK(strncmp(a, "swap-", 5) == 0 && strlen(a) == 13 && strcmp(a + 11, ".x") == 0);
	T_EQ_INT(state_mkdtemp(jobs, "a-much-longer-prefix-", a, 8), -ENAMETOOLONG);
	/* a link planted where a subdirectory goes is refused, not followed */
	T_EQ_INT(symlinkat("/etc", state_fd(), "kbuild"), 0);
	int fd = -1;
	T_EQ_INT(state_subdir(state_fd(), state_path(), "kbuild", &fd, &err), -ELOOP);
	T_CHECK(fd == -1 && err.buf && strstr(err.buf, "kbuild is a symbolic link"));
	close(jobs);
	sb_free(&err);
}

static void test_trusted(void)
{
	struct strbuf err = { 0 };
	T_EQ_INT(state_path_trusted("/var/tmp", &err), 0); /* sticky */
	T_EQ_INT(state_path_trusted("/usr/lib", &err), 0);
	char parent[128], sub[160];
	path_in(parent, sizeof(parent), "untrusted");
	T_EQ_INT(mkdir(parent, 0755), 0);
	T_EQ_INT(chown(parent, 65534, 65534), 0);
	snprintf(sub, sizeof(sub), "%s/deeper", parent);
	T_EQ_INT(mkdir(sub, 0755), 0);
	T_EQ_INT(state_path_trusted(sub, &err), -EPERM);
	T_CHECK(err.buf && strstr(err.buf, parent) && strstr(err.buf, "owner uid 65534"));
	sb_free(&err);
}

/* Kernel builds: the artifacts in STATE/kernels unless named; the work
 * directory, which the build user must pass through, not under the 0700
 * state directory. */
static void test_build_dirs(void)
{
	char dir[128], want[160], buf[4096];
	path_in(dir, sizeof(dir), "builds");
	struct strbuf err = { 0 };
	state_reset();
	T_EQ_INT(state_init(dir, &err), 0);
	unsetenv("KAB_KERNELS_DIR");
	t_config_from_env();
	snprintf(want, sizeof(want), "%s/kernels", dir);
	T_EQ_INT(kbuild_kernels_dir(NULL, buf, sizeof(buf), &err), 0);
	T_EQ_STR(buf, want);
	setenv("KAB_KERNELS_DIR", "/srv/kernels", 1);
	t_config_from_env();
	T_EQ_INT(kbuild_kernels_dir(NULL, buf, sizeof(buf), &err), 0);
	T_EQ_STR(buf, "/srv/kernels");
	T_EQ_INT(kbuild_kernels_dir("/given", buf, sizeof(buf), &err), 0);
	T_EQ_STR(buf, "/given");
	unsetenv("KAB_KERNELS_DIR");
	t_config_from_env();
	T_CHECK(strncmp(KBUILD_WORK_DEFAULT, STATE_DIR_DEFAULT "/", strlen(STATE_DIR_DEFAULT) + 1) != 0);
	T_CHECK(err.buf == NULL);
	sb_free(&err);
}

/* The database every verb uses without --db: kab.db in the state
 * directory state_init would open, named without making anything. */
static void test_db_path(void)
{
	char db[256], *saved = getenv(STATE_DIR_ENV) ? strdup(getenv(STATE_DIR_ENV)) : NULL;
	unsetenv(STATE_DIR_ENV);
	t_config_from_env();
	T_EQ_INT(state_db_path(NULL, db, sizeof(db)), 0);
	T_EQ_STR(db, "/var/lib/kab/kab.db");
	setenv(STATE_DIR_ENV, "/srv/kab:/other", 1);
	t_config_from_env();
	T_EQ_INT(state_db_path(NULL, db, sizeof(db)), 0);
	T_EQ_STR(db, "/srv/kab/kab.db");
	T_EQ_INT(state_db_path("/x/state/", db, sizeof(db)), 0);
	T_EQ_STR(db, "/x/state/kab.db");
	T_EQ_INT(state_db_path("relative", db, sizeof(db)), -EINVAL);
	T_EQ_INT(state_db_path("/x/../y", db, sizeof(db)), -EINVAL);
	T_EQ_INT(state_db_path("/x/state", db, 10), -ENAMETOOLONG);
	char made[160];
	path_in(made, sizeof(made), "never-made");
	T_EQ_INT(state_db_path(made, db, sizeof(db)), 0);
	T_CHECK(access(made, F_OK) != 0);
	if (saved)
		setenv(STATE_DIR_ENV, saved, 1);
	else
		unsetenv(STATE_DIR_ENV);
	t_config_from_env();
	free(saved);
}

int main(void)
{
	log_quiet = true;
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	if (geteuid() == 0) {
		test_create();
		test_env();
		test_refusals();
		test_names();
		test_trusted();
		test_build_dirs();
	} else {
		t_skip("state directories made, named and refused", "needs root (the checks are about root-owned directories)");
	}
	test_not_absolute();
	test_db_path();
	state_reset();
	util_remove_tree(base);
	return t_done("statedir");
}
