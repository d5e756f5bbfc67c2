/* Locking and crash recovery: whatever a killed kab changed on the machine
 * is in the journal, and is put back at the next start. */
#include "harness/exec/cgroup.h"
#include "harness/exec/executor.h"
#include "harness/exec/fcount.h"
#include "harness/exec/knobs.h"
#include "harness/exec/provenance.h"
#include "db/store.h"
#include "harness/exec/swap.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOCK_DIR "/run/kab"
#define LOCK_FILE LOCK_DIR "/executor.lock"

int exec_lock(int *ret_fd)
{
	if (mkdir(LOCK_DIR, 0755) < 0 && errno != EEXIST) {
		log_error("cannot create %s: %s", LOCK_DIR, strerror(errno));
		return -errno;
	}
	int fd = open(LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		log_error("cannot open %s: %s", LOCK_FILE, strerror(errno));
		return -errno;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		char pid[32] = "";
		ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
		if (n > 0)
			pid[n] = 0;
		pid[strcspn(pid, "\n")] = 0;
		log_error("another kab executor is running (pid %s, lock %s): wait for it or stop it", n > 0 ? pid : "?", LOCK_FILE);
		close(fd);
		return -EBUSY;
	}
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)len, 0) != len)
		log_warn("cannot record pid in %s", LOCK_FILE);
	*ret_fd = fd;
	return 0;
}

static int undo(const struct store_journal *e, bool same_boot)
{
	if (strcmp(e->kind, "swapfile") == 0) {
		if (same_boot)
			swap_disable(e->target);
		if (unlink(e->target) < 0 && errno != ENOENT)
			return -errno;
		return 0;
	}
	if (!same_boot)
		return 0; /* knobs, zram and cgroups did not survive the reboot */
	if (strcmp(e->kind, "knob") == 0) {
		int r = knob_write(e->target, e->original);
		if (r < 0)
			log_error("cannot restore %s to \"%s\": %s", e->target, e->original, strerror(-r));
		else
			log_info("restored %s = %s", e->target, e->original);
		return r;
	}
	if (strcmp(e->kind, "cgroup") == 0) {
		int r = cg_remove_path(e->target);
		if (r >= 0)
			log_info("removed cgroup %s", e->target);
		return r;
	}
	if (strcmp(e->kind, "fcount") == 0) { /* tracing instances and kprobes of a run */
		fcount_cleanup("/sys/kernel/tracing", e->target);
		fcount_cleanup("/sys/kernel/debug/tracing", e->target);
		return 0;
	}
	if (strcmp(e->kind, "zram") == 0) {
		uint64_t id;
		if (util_parse_u64(e->original, &id) < 0)
			return -EINVAL;
		int r = swap_zram_remove((int)id);
		if (r >= 0)
			log_info("removed %s", e->target);
		return r;
	}
	log_warn("journal entry %lld has unknown kind \"%s\"; dropped", (long long)e->id, e->kind);
	return 0;
}

int exec_recover(struct store *st)
{
	char boot_id[64];
	prov_boot_id(boot_id, sizeof(boot_id));
	struct store_journal *v;
	size_t n;
	int r = store_journal_list(st, &v, &n);
	if (r < 0)
		return r;
	int ret = 0;
	if (n)
		log_info("restoring what an interrupted kab left behind (%zu journal entries)", n);
	for (size_t i = 0; i < n; i++) { /* newest first: undo in reverse */
		bool same_boot = strcmp(v[i].boot_id, boot_id) == 0;
		r = undo(&v[i], same_boot);
		if (r < 0)
			ret = r;
		else
			store_journal_del(st, v[i].id);
	}
	free(v);
	if (n)
		cg_remove_parent();

	struct store_run *runs;
	size_t nr;
	r = store_runs_started(st, &runs, &nr);
	if (r < 0)
		return r;
	for (size_t i = 0; i < nr; i++) {
		struct store_run *x = &runs[i];
		x->status = RUN_ABORTED;
		snprintf(x->reason, sizeof(x->reason), "%s",
			 strcmp(x->boot_id, boot_id) == 0 ? "kab was killed during this run; not counted"
							   : "the machine rebooted during this run; not counted");
		x->finished = util_real_now();
		x->exit_code = -1;
		if (store_run_finish(st, x, STEP_PENDING, NULL, 0, NULL, 0) < 0)
			ret = -EIO;
		else
			log_info("run %lld of job %lld marked aborted: %s", (long long)x->id, (long long)x->job_id, x->reason);
	}
	free(runs);
	int64_t *ids;
	size_t nj;
	if (store_jobs_with_status(st, JOB_RUNNING, &ids, &nj) == 0) {
		for (size_t i = 0; i < nj; i++)
			store_job_set_status(st, ids[i], JOB_INTERRUPTED, "kab stopped before the job finished; resume with kab run --resume ID");
		free(ids);
	}
	return ret;
}
