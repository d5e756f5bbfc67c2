/* Memory cgroups: libcgroup creates, attaches and deletes; the limits are
 * written with checked writes so an EINVAL names the file and the value. */
#include "harness/exec/cgroup.h"
#include "harness/job/job.h"
#include "harness/sampler/sampler.h"
#include "harness/base/util.h"

#include <errno.h>
#include <libcgroup.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

static bool lc_ready;

static int lc_init(void)
{
	if (lc_ready)
		return 0;
	int r = cgroup_init();
	if (r != 0) {
		log_error("libcgroup: cannot initialise: %s", cgroup_strerror(r));
		return -ENODEV;
	}
	lc_ready = true;
	return 0;
}

int cg_memory_version(int *ret_version, char *ret_root, size_t len)
{
	int r = lc_init();
	if (r < 0)
		return r;
	char *mnt = NULL;
	if (cgroup_get_subsys_mount_point("memory", &mnt) != 0 || !mnt)
		return -ENOENT;
	struct statfs sfs;
	if (statfs(mnt, &sfs) < 0) {
		r = -errno;
		free(mnt);
		return r;
	}
	*ret_version = sfs.f_type == CGROUP2_SUPER_MAGIC ? 2 : 1;
	if (ret_root)
		snprintf(ret_root, len, "%s", mnt);
	free(mnt);
	return 0;
}

int cg_limits_supported(const struct cg_limits *l, int version, struct strbuf *err)
{
	if (version == 1 && l->memory_high != JOB_MEM_UNSET) {
		sb_puts(err, "memory.high has no equivalent on cgroup v1 (this machine's memory controller); remove it or run on cgroup v2");
		return -EOPNOTSUPP;
	}
	if (version == 1 && l->memory_swap_max != JOB_MEM_UNSET && l->memory_swap_max != JOB_MEM_MAX &&
	    (l->memory_max == JOB_MEM_UNSET || l->memory_max == JOB_MEM_MAX)) {
		sb_puts(err, "memory.swap.max on cgroup v1 needs memory.max too (v1 limits memory+swap together)");
		return -EOPNOTSUPP;
	}
	return 0;
}

static int write_limit(struct cg *c, const char *file, uint64_t v, struct strbuf *err)
{
	char path[640], val[32];
	snprintf(path, sizeof(path), "%s/%s", c->path, file);
	if (v == JOB_MEM_MAX)
		snprintf(val, sizeof(val), c->version == 2 ? "max" : "-1");
	else
		snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
	int r = util_write_file(path, val);
	if (r < 0)
		sb_printf(err, "cannot write %s to %s: %s", val, path, strerror(-r));
	return r;
}

/* On cgroup v2 the memory controller must be enabled in every ancestor's
 * subtree_control for the child to get memory.* files. */
static int v2_enable_memory(const char *root, const char *name)
{
	char path[640], rel[128];
	snprintf(rel, sizeof(rel), "%s", name);
	char *slash = strrchr(rel, '/');
	if (slash)
		*slash = 0;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	int r = util_write_file(path, "+memory");
	if (r < 0 && r != -EBUSY)
		return r;
	if (slash) {
		snprintf(path, sizeof(path), "%s/%s/cgroup.subtree_control", root, rel);
		r = util_write_file(path, "+memory");
	}
	return r;
}

/* libcgroup creates missing parents on v1 but not on v2: make each
 * ancestor of name first (existing ones are fine). */
static int create_parents(const char *root, const char *name, struct strbuf *err)
{
	char rel[128];
	snprintf(rel, sizeof(rel), "%s", name);
	for (char *slash = strchr(rel, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = 0;
		char path[640];
		snprintf(path, sizeof(path), "%s/%s", root, rel);
		if (access(path, F_OK) != 0) {
			struct cgroup *lc = cgroup_new_cgroup(rel);
			int lr = -1;
			if (lc && cgroup_add_controller(lc, "memory"))
				lr = cgroup_create_cgroup(lc, 0);
			cgroup_free(&lc);
			if (lr != 0 && access(path, F_OK) != 0) {
				sb_printf(err, "cannot create cgroup %s: %s", path, lr > 0 ? cgroup_strerror(lr) : "out of memory");
				return -EIO;
			}
		}
		*slash = '/';
	}
	return 0;
}

int cg_create(const char *name, const struct cg_limits *l, struct cg **ret, struct strbuf *err)
{
	char root[256];
	int version;
	int r = cg_memory_version(&version, root, sizeof(root));
	if (r < 0) {
		sb_puts(err, "no memory cgroup controller is mounted");
		return r;
	}
	if ((r = cg_limits_supported(l, version, err)) < 0)
		return r;
	if ((r = create_parents(root, name, err)) < 0)
		return r;
	struct cg *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->path, sizeof(c->path), "%s/%s", root, name);
	c->version = version;
	struct cgroup *lc = cgroup_new_cgroup(name);
	if (!lc || !cgroup_add_controller(lc, "memory")) {
		free(c);
		cgroup_free(&lc);
		return -ENOMEM;
	}
	c->lc = lc;
	int lr = cgroup_create_cgroup(lc, 0);
	if (lr != 0) {
		sb_printf(err, "cannot create cgroup %s: %s", c->path, cgroup_strerror(lr));
		cgroup_free(&lc);
		free(c);
		return -EIO;
	}
	char probe[640];
	snprintf(probe, sizeof(probe), "%s/memory.max", c->path);
	if (version == 2 && access(probe, F_OK) != 0) {
		r = v2_enable_memory(root, name);
		if (r < 0 || access(probe, F_OK) != 0) {
			sb_printf(err, "cgroup %s has no memory controller: cannot enable +memory in the parents' cgroup.subtree_control",
				  c->path);
			cg_destroy(c);
			return -EIO;
		}
	}
	r = 0;
	if (version == 2) {
		if (l->memory_max != JOB_MEM_UNSET)
			r = write_limit(c, "memory.max", l->memory_max, err);
		if (r >= 0 && l->memory_high != JOB_MEM_UNSET)
			r = write_limit(c, "memory.high", l->memory_high, err);
		if (r >= 0 && l->memory_swap_max != JOB_MEM_UNSET)
			r = write_limit(c, "memory.swap.max", l->memory_swap_max, err);
	} else {
		if (l->memory_max != JOB_MEM_UNSET)
			r = write_limit(c, "memory.limit_in_bytes", l->memory_max, err);
		if (r >= 0 && l->memory_swap_max != JOB_MEM_UNSET) {
			uint64_t memsw = l->memory_swap_max == JOB_MEM_MAX ? JOB_MEM_MAX : l->memory_max + l->memory_swap_max;
			char p[640];
			snprintf(p, sizeof(p), "%s/memory.memsw.limit_in_bytes", c->path);
			if (access(p, F_OK) != 0) {
				sb_printf(err, "memory.swap.max needs swap accounting on cgroup v1 (%s is missing; boot with swapaccount=1)",
					  p);
				r = -EOPNOTSUPP;
			} else {
				r = write_limit(c, "memory.memsw.limit_in_bytes", memsw, err);
			}
		}
	}
	if (r < 0) {
		cg_destroy(c);
		return r;
	}
	*ret = c;
	return 0;
}

int cg_attach(struct cg *c, pid_t pid)
{
	int r = cgroup_attach_task_pid(c->lc, pid);
	if (r != 0) {
		log_error("cannot move pid %d into cgroup %s: %s", (int)pid, c->path, cgroup_strerror(r));
		return -EIO;
	}
	return 0;
}

static int read_procs(const char *path, pid_t *pids, size_t max, size_t *ret_n)
{
	char file[640];
	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	char *buf;
	int r = util_read_file(file, &buf, NULL);
	if (r < 0)
		return r;
	size_t n = 0;
	for (char *line = buf; *line && n < max;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		int64_t v;
		if (util_parse_i64(line, &v) == 0 && v > 0)
			pids[n++] = (pid_t)v;
		if (!nl)
			break;
		line = nl + 1;
	}
	free(buf);
	*ret_n = n;
	return 0;
}

int cg_kill_all(const char *path)
{
	char kill_file[640];
	snprintf(kill_file, sizeof(kill_file), "%s/cgroup.kill", path);
	/* Bounded: 10 s of retries at 20 ms. */
	for (int i = 0; i < 500; i++) {
		pid_t pids[1024];
		size_t n;
		int r = read_procs(path, pids, ARRAY_SIZE(pids), &n);
		if (r < 0)
			return r == -ENOENT ? 0 : r;
		if (n == 0)
			return 0;
		if (access(kill_file, F_OK) == 0)
			util_write_file(kill_file, "1");
		for (size_t k = 0; k < n; k++)
			kill(pids[k], SIGKILL);
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	log_error("processes in %s did not die after SIGKILL for 10 s", path);
	return -EBUSY;
}

int cg_destroy(struct cg *c)
{
	if (!c)
		return 0;
	int r = cg_kill_all(c->path);
	int lr = cgroup_delete_cgroup_ext(c->lc, CGFLAG_DELETE_IGNORE_MIGRATION);
	if (lr != 0 && access(c->path, F_OK) == 0) {
		/* libcgroup could not: try the plain rmdir, which names errno. */
		if (rmdir(c->path) < 0) {
			log_error("cannot remove cgroup %s: %s", c->path, strerror(errno));
			r = -errno;
		}
	}
	cgroup_free((struct cgroup **)&c->lc);
	free(c);
	return r;
}

int cg_remove_path(const char *path)
{
	if (access(path, F_OK) != 0)
		return 0;
	int r = cg_kill_all(path);
	for (int i = 0; i < 50 && rmdir(path) < 0; i++) {
		if (errno == ENOENT)
			return 0;
		if (errno != EBUSY) {
			log_error("cannot remove cgroup %s: %s", path, strerror(errno));
			return -errno;
		}
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return access(path, F_OK) == 0 ? -EBUSY : r;
}

struct key_lookup {
	const char *key;
	uint64_t value;
	bool found;
};

static void match_key(void *ctx, const char *key, size_t key_len, uint64_t value)
{
	struct key_lookup *k = ctx;
	if (strlen(k->key) == key_len && memcmp(k->key, key, key_len) == 0) {
		k->value = value;
		k->found = true;
	}
}

/* One field of a "key value" cgroup file, read with the sampler's parser. */
static int read_key(const char *file, const char *key, uint64_t *ret)
{
	char *buf;
	size_t len;
	int r = util_read_file(file, &buf, &len);
	if (r < 0)
		return r;
	struct key_lookup k = { .key = key };
	r = procparse_kv(buf, len, match_key, &k);
	free(buf);
	if (r < 0)
		return r;
	if (!k.found)
		return -ENOENT;
	*ret = k.value;
	return 0;
}

int cg_oom_kills(const struct cg *c, uint64_t *ret)
{
	char file[640];
	snprintf(file, sizeof(file), "%s/%s", c->path, c->version == 2 ? "memory.events" : "memory.oom_control");
	return read_key(file, "oom_kill", ret);
}

int cg_peak(const struct cg *c, uint64_t *ret)
{
	char file[640];
	snprintf(file, sizeof(file), "%s/%s", c->path, c->version == 2 ? "memory.peak" : "memory.max_usage_in_bytes");
	char *line;
	int r = util_read_line(file, &line);
	if (r < 0)
		return r;
	r = util_parse_u64(line, ret);
	free(line);
	return r;
}

void cg_remove_parent(const char *root)
{
	char mnt[256];
	int version;
	if (!root && cg_memory_version(&version, mnt, sizeof(mnt)) < 0)
		return;
	char path[512];
	snprintf(path, sizeof(path), "%s/kab", root ? root : mnt);
	if (rmdir(path) < 0 && errno != ENOENT && errno != EBUSY && errno != ENOTEMPTY)
		log_warn("cannot remove %s: %s", path, strerror(errno));
}
