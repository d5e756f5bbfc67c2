/* Memory cgroups through libcgroup, cgroup v1 and v2 behind one vocabulary
 * (memory.max, memory.high, memory.swap.max). */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct strbuf;

struct cg_limits {
	uint64_t memory_max, memory_high, memory_swap_max; /* JOB_MEM_UNSET / JOB_MEM_MAX / bytes */
};

struct cg {
	char name[128];   /* relative: "kab/j1-r5" */
	char path[512];   /* the memory controller's directory */
	int version;      /* 1 or 2 */
	void *lc;         /* struct cgroup * */
};

/* Version of the hierarchy that holds the memory controller, and its mount. */
int cg_memory_version(int *ret_version, char *ret_root, size_t len);
/* Checks the limits can be expressed on this machine; errors name the key. */
int cg_limits_supported(const struct cg_limits *l, int version, struct strbuf *err);
/* Creates the cgroup and writes the limits (each write checked). */
int cg_create(const char *name, const struct cg_limits *l, struct cg **ret, struct strbuf *err);
int cg_attach(struct cg *c, pid_t pid);
/* SIGKILLs every process in the cgroup until it is empty (bounded wait). */
int cg_kill_all(const char *path);
int cg_destroy(struct cg *c);
/* Removes a cgroup directory left behind (recovery), killing what is in it. */
int cg_remove_path(const char *path);
int cg_oom_kills(const struct cg *c, uint64_t *ret);
int cg_peak(const struct cg *c, uint64_t *ret);
/* Removes the "kab" parent under root (NULL: cg_memory_version's mount)
 * when it is empty. */
void cg_remove_parent(const char *root);
