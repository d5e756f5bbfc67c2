/* The set-up and run kab run and kab plan's calibration share (foreground.h). */
#include "harness/cli/foreground.h"
#include "harness/exec/executor.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
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
	struct store_step *steps;
	size_t n;
	int r = exec_plan(j, &steps, &n);
	if (r < 0)
		return r;
	r = job_store_submit(fg->st, j, NULL, steps, n, ret_id);
	free(steps);
	if (r < 0) {
		log_error("cannot store %s in %s", what, db);
		return r;
	}
	*ret_n = n;
	return 0;
}

int fg_exec(struct fg *fg, struct job *j, int64_t id)
{
	exec_set_stop_check(out_stop_check);
	int r = exec_job(fg->st, j, id);
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
