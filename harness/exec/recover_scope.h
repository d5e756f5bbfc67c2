/* What a journal row may act on when recovery undoes it: only what kab
 * itself journals. The database is checked before it is opened
 * (store_file_prepare), and still a row naming anything else, from
 * whatever database, is refused: reported by the caller, left in the
 * journal, never acted on (SECURITY.md, "What a journal row may undo"). */
#pragma once
#include "harness/job/machine.h"

#include <stdbool.h>

struct strbuf;

struct rscope {
	const char *state_dir;  /* kab's open state directory, or NULL: then no swap file is removed */
	int state_fd;           /* its descriptor */
	char cg_root[256];      /* the memory controller's mount; "" when none is */
	const struct machine_conf *mc; /* machine.conf, for its knobs.allow; NULL: machine_conf_current() */
};

/* This machine's scope: the open state directory (state_path), the memory
 * controller's mount, machine.conf's knobs.allow (main's, loaded with the
 * configuration: machine_conf_current). Free with rscope_free. */
void rscope_machine(struct rscope *sc);
void rscope_free(struct rscope *sc);

/* Each judges one row. 0: it may act, on what was opened; 1: what it
 * names is not there, nothing to undo; -EPERM: refused, why says why;
 * another -errno: it could not be looked at (why says so too). */

/* knob: a file under /proc/sys or /sys (no ".", ".." or empty
 * component) that kab may set (the allow list with knobs.allow, or one
 * of the conditioning keys' files, cond_knob_file), resolving inside
 * /proc/sys or /sys, opened for writing (not truncated) with no symbolic
 * link on the resolved path, on sysfs or procfs: *ret_fd. */
int rscope_knob(const struct rscope *sc, const char *target, int *ret_fd, struct strbuf *why);
/* swapfile: STATE/jobs/jobN-XXXXXX/swap-XXXXXX, the only swap files kab
 * makes itself, reached from the state directory's fd without following
 * a link, a regular file of root's: its directory's fd in *ret_dirfd and
 * its name (in target) in *ret_name. */
int rscope_swapfile(const struct rscope *sc, const char *target, int *ret_dirfd, const char **ret_name, struct strbuf *why);
/* cgroup: CGROOT/kab/jobN-stepM, every step a directory on a cgroup
 * file system, no link followed. */
int rscope_cgroup(const struct rscope *sc, const char *target, struct strbuf *why);
/* fcount: the tag of a run's tracing, kab-jN-sM. */
int rscope_fcount(const char *target, struct strbuf *why);
/* zram: /dev/zramN, N the row's original: *ret_id. */
int rscope_zram(const char *target, const char *original, int *ret_id, struct strbuf *why);
