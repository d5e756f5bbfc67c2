/* The set-up and run kab run and kab plan's calibration share (foreground.h). */
#include "harness/cli/foreground.h"
#include "harness/exec/executor.h"
#include "harness/job/job.h"
#include "harness/report/history.h"
#include "harness/base/output.h"
#include "harness/base/statedir.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fg_output(void)
{
	int r = out_init();
	if (r < 0)
		log_error("cannot set up standard input, output and error: %s", strerror(-r));
	return r;
}

int fg_open(struct fg *fg, const char *db, const char *state_dir, const char *no_root)
{
	if (geteuid() != 0) {
		log_error("%s", no_root);
		return -EPERM;
	}
	struct strbuf serr = { 0 };
	int r = state_init(state_dir, &serr);
	if (r < 0)
		log_error("%s", serr.buf ? serr.buf : "the state directory cannot be used");
	sb_free(&serr);
	if (r < 0)
		return r;
	if ((r = exec_lock(&fg->lock_fd)) < 0)
		return r;
	if ((r = store_open(db, &fg->st)) < 0)
		return r;
	if (exec_recover(fg->st) < 0)
		log_warn("some of what an earlier kab left could not be restored; see above");
	return 0;
}

int fg_submit(struct fg *fg, struct job *j, const char *db, const char *what, int64_t *ret_id, size_t *ret_n)
{
	int r = jl_submit(fg->st, j, NULL, ret_id, ret_n);
	if (r < 0)
		log_error("cannot store %s in %s", what, db);
	return r;
}

/* After kab run's job, whatever its end: the night joins its name's
 * history (kab history NAME); a job that did not end (interrupted) joins
 * it when it does. */
static void fg_after(void *ctx, struct store *st, int64_t id, const char *name, enum job_status now)
{
	(void)ctx;
	(void)now;
	if (history_refresh_job(st, id) < 0)
		log_warn("job %lld: its history rows were not made; kab history %s makes them", (long long)id, name);
}

int fg_exec(struct fg *fg, struct job *j, int64_t id, bool history)
{
	const struct jl_hooks hooks = { .after = history ? fg_after : NULL };
	exec_set_stop_check(out_stop_check);
	int r = jl_run(fg->st, j, id, &hooks);
	exec_set_stop_check(NULL);
	return r;
}

void fg_close(struct fg *fg)
{
	store_close(fg->st);
	fg->st = NULL;
	if (fg->lock_fd >= 0)
		close(fg->lock_fd);
	fg->lock_fd = -1;
}
