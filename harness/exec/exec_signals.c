/* The executor's signals: blocked, and taken synchronously with
 * sigtimedwait; the stop they ask for, and the job's reason when it stops. */
#include "harness/exec/exec_priv.h"
#include "harness/exec/executor.h"
#include "harness/exec/joblife.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static sigset_t run_signals;
static bool interrupted;
/* kab run's check that its output is still there, asked at every wait;
 * why the job stops when it is not a signal ("" for a signal) */
static bool (*stop_check)(char *why, size_t len);
static char stop_why[160];

void exec_set_stop_check(bool (*check)(char *why, size_t len))
{
	stop_check = check;
}

void exec_signals_begin(sigset_t *old)
{
	sigemptyset(&run_signals);
	sigaddset(&run_signals, SIGINT);
	sigaddset(&run_signals, SIGTERM);
	sigaddset(&run_signals, SIGHUP);
	sigaddset(&run_signals, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &run_signals, old);
	interrupted = false;
	stop_why[0] = 0;
}

bool exec_interrupted(void)
{
	return interrupted;
}

const char *exec_stop_why(void)
{
	return stop_why;
}

/* Waits up to timeout_s for a signal; returns it, or 0 on timeout. */
int exec_signal_wait(double timeout_s)
{
	if (timeout_s < 0)
		timeout_s = 0;
	struct timespec ts = { (time_t)timeout_s, (long)((timeout_s - (double)(time_t)timeout_s) * 1e9) };
	int sig = sigtimedwait(&run_signals, NULL, &ts);
	if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
		interrupted = true;
	if (!interrupted && stop_check && stop_check(stop_why, sizeof(stop_why)))
		interrupted = true;
	return sig < 0 ? 0 : sig;
}

bool exec_check_interrupted(void)
{
	while (exec_signal_wait(0) != 0)
		;
	return interrupted;
}

/* A run-time failure ends the job: err (or r's text) logged once and, after
 * prefix, the job's reason. */
void exec_job_failed_with(struct store *st, int64_t job_id, const char *prefix, const struct strbuf *err, int r)
{
	const char *why = err->buf ? err->buf : strerror(-r);
	log_error("%s", why);
	char reason[768];
	snprintf(reason, sizeof(reason), "%s%.700s", prefix, why);
	jl_transition(st, job_id, JL_FAILABLE, JOB_FAILED, reason);
}

/* A set-up step failed: a stop that came meanwhile (a workload's prepare
 * or mkswap killed by the same Ctrl-C) stops the job, else it failed. */
int exec_failed_or_stopped(struct store *st, int64_t job_id, int r, const char *reason)
{
	if (exec_check_interrupted())
		return -EINTR;
	jl_transition(st, job_id, JL_FAILABLE, JOB_FAILED, reason);
	return r;
}
