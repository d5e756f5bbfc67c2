/* Locking and crash recovery: whatever a killed kab changed on the machine
 * is in the journal, and is put back at the next start. */
#include "harness/exec/cgroup.h"
#include "harness/exec/executor.h"
#include "harness/exec/fcount.h"
#include "harness/exec/joblife.h"
#include "harness/exec/knobs.h"
#include "harness/exec/provenance.h"
#include "db/store.h"
#include "harness/exec/recover_scope.h"
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

/* The original value back into a knob opened by rscope_knob (an empty
 * one as a newline: a write of nothing changes nothing); fd is closed. */
static int knob_put_back(int fd, const char *value)
{
	return util_write_fd(fd, *value ? value : "\n");
}

static int undo_swapfile(const struct rscope *sc, const struct store_journal *e, bool same_boot, struct strbuf *why)
{
	int dfd;
	const char *name;
	int r = rscope_swapfile(sc, e->target, &dfd, &name, why);
	if (r != 0)
		return r == 1 ? 0 : r; /* 1: gone already */
	if (same_boot)
		swap_disable(e->target);
	r = unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	close(dfd);
	if (r < 0)
		sb_printf(why, "cannot remove %s: %s", e->target, strerror(-r));
	else
		log_info("removed swap file %s", e->target);
	return r;
}

/* One row, within sc: 0 when undone (or nothing was left to undo), -EPERM
 * when refused, another -errno when it failed; why says why. */
static int undo(const struct rscope *sc, const struct store_journal *e, bool same_boot, struct strbuf *why)
{
	enum journal_kind kind = JOURNAL_KIND_UNKNOWN;
	if (journal_kind_parse(e->kind, &kind) < 0) {
		sb_printf(why, "\"%s\" is not a kind of row this kab journals", e->kind);
		return -EPERM;
	}
	if (kind == JOURNAL_SWAPFILE)
		return undo_swapfile(sc, e, same_boot, why);
	if (!same_boot)
		return 0; /* knobs, zram and cgroups did not survive the reboot */
	int r, fd, id;
	if (kind == JOURNAL_KNOB) {
		if ((r = rscope_knob(sc, e->target, &fd, why)) != 0)
			return r;
		if ((r = knob_put_back(fd, e->original)) < 0)
			sb_printf(why, "cannot restore %s to \"%s\": %s", e->target, e->original, strerror(-r));
		else
			log_info("restored %s = %s", e->target, e->original);
		return r;
	}
	if (kind == JOURNAL_CGROUP) {
		if ((r = rscope_cgroup(sc, e->target, why)) != 0)
			return r == 1 ? 0 : r;
		if ((r = cg_remove_path(e->target)) < 0)
			sb_printf(why, "cannot remove cgroup %s: %s", e->target, strerror(-r));
		else
			log_info("removed cgroup %s", e->target);
		return r;
	}
	if (kind == JOURNAL_FCOUNT) { /* tracing instances and kprobes of a run */
		if ((r = rscope_fcount(e->target, why)) < 0)
			return r;
		fcount_cleanup("/sys/kernel/tracing", e->target);
		fcount_cleanup("/sys/kernel/debug/tracing", e->target);
		return 0;
	}
	if ((r = rscope_zram(e->target, e->original, &id, why)) < 0)
		return r;
	if ((r = swap_zram_remove(id)) < 0)
		sb_printf(why, "cannot remove %s: %s", e->target, strerror(-r));
	else
		log_info("removed %s", e->target);
	return r;
}

/* The journal, newest first (undone in reverse): a row undone goes, one
 * refused or failed stays for the next start. */
static int undo_journal(struct store *st, const struct rscope *sc_in)
{
	struct store_journal *v;
	size_t n;
	int r = store_journal_list(st, &v, &n);
	if (r < 0 || n == 0) {
		if (r >= 0)
			free(v);
		return r;
	}
	log_info("restoring what an interrupted kab left behind (%zu journal entries)", n);
	struct rscope machine;
	const struct rscope *sc = sc_in;
	if (!sc) {
		rscope_machine(&machine);
		sc = &machine;
	}
	char boot_id[64];
	prov_boot_id(boot_id, sizeof(boot_id));
	int ret = 0;
	for (size_t i = 0; i < n; i++) {
		const struct store_journal *e = &v[i];
		struct strbuf why = { 0 };
		r = undo(sc, e, strcmp(e->boot_id, boot_id) == 0, &why);
		if (r == -EPERM)
			log_error("%s: journal row %lld (%s %s) refused: %s; not acted on, kept in the journal "
				  "(once you have undone it yourself, or know it is not kab's: sqlite3 %s \"DELETE FROM journal WHERE id = %lld\")",
				  store_path(st), (long long)e->id, e->kind, e->target, why.len ? why.buf : "",
				  store_path(st), (long long)e->id);
		else if (r < 0)
			log_error("%s: journal row %lld (%s %s): %s; kept for the next start", store_path(st),
				  (long long)e->id, e->kind, e->target, why.len ? why.buf : strerror(-r));
		sb_free(&why);
		if (r < 0 && ret != -EPERM)
			ret = r;
		else if (r >= 0)
			store_journal_del(st, e->id);
	}
	free(v);
	if (sc->cg_root[0])
		cg_remove_parent(sc->cg_root);
	if (!sc_in)
		rscope_free(&machine);
	return ret;
}

int exec_recover(struct store *st)
{
	return exec_recover_in(st, NULL);
}

int exec_recover_in(struct store *st, const struct rscope *sc)
{
	char boot_id[64];
	prov_boot_id(boot_id, sizeof(boot_id));
	int ret = undo_journal(st, sc);
	int r;

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
			jl_transition(st, ids[i], JL_FROM(JOB_RUNNING), JOB_INTERRUPTED,
				      "kab stopped before the job finished; resume with kab run --resume ID");
		free(ids);
	}
	return ret;
}
