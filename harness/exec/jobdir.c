/* A job's own directory: made under the state directory's jobs/ by
 * mkdtemp, its name in the database, reopened (O_NOFOLLOW, checked) when
 * the job resumes, removed when the job is over. */
#include "harness/exec/jobdir.h"
#include "harness/base/statedir.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a crashed run left in a directory being reused: its run-* work
 * directory and a swap-* file the journal did not know of yet. */
static void jobdir_clean(const struct jobdir *jd)
{
	int fd = dup(jd->fd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "run-", 4) != 0 && strncmp(e->d_name, "swap-", 5) != 0)
			continue;
		char p[PATH_MAX + 256];
		snprintf(p, sizeof(p), "%s/%s", jd->path, e->d_name);
		if (util_remove_tree(p) < 0)
			log_warn("cannot remove %s, left by an interrupted run", p);
	}
	closedir(d);
}

/* The directory the database names for the job, when it is still there,
 * a directory and private to us; -1 otherwise. */
static int jobdir_reopen(int jobs_fd, const char *name)
{
	if (!name[0] || strchr(name, '/') || strncmp(name, "job", 3) != 0)
		return -1;
	int fd = openat(jobs_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat s;
	if (fd >= 0 && fstat(fd, &s) == 0 && s.st_uid == geteuid() && (s.st_mode & 077) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

int jobdir_open(struct store *st, int64_t job_id, struct jobdir *jd, struct strbuf *err)
{
	int r = state_init(NULL, err);
	_cleanup_close_ int jobs = -1;
	if (r < 0 || (r = state_subdir(state_fd(), state_path(), "jobs", &jobs, err)) < 0)
		return r;
	char jobs_path[PATH_MAX], name[NAME_MAX + 1] = "";
	snprintf(jobs_path, sizeof(jobs_path), "%s/jobs", state_path());
	store_job_dir_get(st, job_id, name, sizeof(name));
	int fd = jobdir_reopen(jobs, name);
	if (fd < 0 && name[0])
		log_warn("job %lld's directory %s/%s is gone (or not kab's): making a new one, its workloads prepare again",
			 (long long)job_id, jobs_path, name);
	if (fd < 0) {
		char prefix[48];
		snprintf(prefix, sizeof(prefix), "job%lld-", (long long)job_id);
		if ((r = state_mkdtemp(jobs, prefix, name, sizeof(name))) < 0) {
			sb_printf(err, "cannot create the job's directory in %s: %s", jobs_path, strerror(-r));
			return r;
		}
		if ((r = store_job_dir_set(st, job_id, name)) < 0 ||
		    (fd = openat(jobs, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			r = r < 0 ? r : -errno;
			unlinkat(jobs, name, AT_REMOVEDIR);
			sb_printf(err, "cannot record or open the job's directory %s/%s: %s", jobs_path, name, strerror(-r));
			return r;
		}
	}
	jd->fd = fd;
	snprintf(jd->path, sizeof(jd->path), "%s/%s", jobs_path, name);
	jobdir_clean(jd);
	return 0;
}

/* Closes the job's directory; removes it once the job is over. */
void jobdir_close(struct store *st, int64_t job_id, struct jobdir *jd)
{
	if (jd->fd < 0)
		return;
	close(jd->fd);
	jd->fd = -1;
	if (!jd->over)
		return;
	if (util_remove_tree(jd->path) < 0)
		log_warn("cannot remove the job's directory %s", jd->path);
	else
		store_job_dir_set(st, job_id, NULL);
}

void jobdir_wl_path(const struct jobdir *jd, size_t wl_idx, char *buf, size_t len)
{
	snprintf(buf, len, "%s/w%zu", jd->path, wl_idx);
}

int jobdir_wl_make(const struct jobdir *jd, size_t wl_idx)
{
	char name[32];
	struct stat st;
	snprintf(name, sizeof(name), "w%zu", wl_idx);
	if (mkdirat(jd->fd, name, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (fstatat(jd->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int jobdir_run_make(const struct jobdir *jd, char *buf, size_t len)
{
	char name[32];
	int r = state_mkdtemp(jd->fd, "run-", name, sizeof(name));
	if (r < 0)
		return r;
	return snprintf(buf, len, "%s/%s", jd->path, name) >= (int)len ? -ENAMETOOLONG : 0;
}

/* [swap] device = file without a path: a fresh file in the job's directory. */
int jobdir_swap_path(const struct jobdir *jd, char *buf, size_t len)
{
	char name[32];
	int r = state_tempname("swap-", "", name, sizeof(name));
	if (r < 0)
		return r;
	return snprintf(buf, len, "%s/%s", jd->path, name) >= (int)len ? -ENAMETOOLONG : 0;
}
