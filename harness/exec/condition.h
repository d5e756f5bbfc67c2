/* A quiet machine for each run, on request ([job]'s conditioning keys):
 * caches dropped and memory compacted before each run, an idle machine
 * waited for (with a bound, recorded either way), the cpufreq governor
 * and turbo set for the job through the knob journal, the workload
 * pinned to its CPUs and the sampler off them. */
#pragma once
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/job/job.h"
#include "harness/exec/knobs.h"

struct store;
struct diags;
struct strbuf;

/* The aggregate "cpu" line of /proc/stat, in ticks. */
struct cond_cpu_ticks {
	uint64_t busy, total;
};
/* Parses /proc/stat's text: its first line, "cpu  user nice system idle
 * iowait irq softirq steal ..." (guest time is inside user). -EINVAL if
 * it is not there or not numbers. */
int cond_parse_stat(const char *text, struct cond_cpu_ticks *ret);
int cond_read_stat(const char *path, struct cond_cpu_ticks *ret);
/* The busy percentage of every CPU between two samples; -1 when no
 * tick passed or a counter went down. */
double cond_busy_pct(const struct cond_cpu_ticks *a, const struct cond_cpu_ticks *b);

/* Waits until one window_s window of /proc/stat (stat_path) is below
 * threshold_pct busy, or max_s passes, or stopped() says stop.
 * Returns 1 idle, 0 not idle within the bound, -EINTR stopped, -errno.
 * *ret_busy: the last window's busy percentage; *ret_waited: seconds. */
int cond_wait_idle(const char *stat_path, double threshold_pct, double max_s, double window_s, bool (*stopped)(void),
		   double *ret_busy, double *ret_waited);

/* Before each run: sync and drop caches, compact, wait for idle, as the
 * job asks. note gets one "key=value" line per step for the run's
 * provenance ("idle=no busy=34.0% waited=60.0s" when the bound passed).
 * -errno with err set when a write fails (not root, no such file). */
/* Syncs and drops the page cache (drop_caches = yes, of the job or of a
 * workload); key names the setting in the message. */
int cond_drop_caches(const char *key, struct strbuf *err);
int cond_before_run(const struct job_condition *c, bool (*stopped)(void), char *note, size_t note_len, struct strbuf *err);

/* The job's governor and turbo as sysfs knobs of a variant named
 * "[job] cpufreq" (every CPU's scaling_governor, then intel_pstate's
 * no_turbo or cpufreq's boost), for knob_preflight and knob_apply: the
 * knob journal restores them after a crash. -ENOENT with err when the
 * machine has no cpufreq or no turbo switch. Free with cond_knobs_free. */
int cond_knobs(const struct job_condition *c, struct job_variant *ret, struct strbuf *err);
void cond_knobs_free(struct job_variant *v);
/* Whether path is one of the files cond_knobs names, as it names them
 * (/sys/devices/system/cpu/cpuN/cpufreq/scaling_governor, no_turbo,
 * boost): what a journal row of the conditioning may restore. */
bool cond_knob_file(const char *path);

/* The job-wide part, applied before the first run and restored after
 * the last: the governor and turbo knobs. */
struct cond_job {
	struct job_variant v;
	struct knob_applied *applied;
	size_t n_applied;
};
/* Checks (preflight) and applies; problems go to d at the key's line. */
int cond_job_begin(struct store *st, const struct job *j, int64_t job_id, const char *boot_id, struct cond_job *cj,
		   struct diags *d);
/* Restores; a governor that cannot be put back is logged, its journal
 * entry stays for recovery at the next start, and the return is -errno
 * (exec_job names it in the job's reason, through its owner, joblife.c). */
int cond_job_end(struct store *st, struct cond_job *cj);

/* Pinning around the workload's fork: cond_pin_workload gives the calling
 * thread the job's cpus (the child inherits them); cond_pin_sampler then
 * moves it to sampler_cpu, or without one to its CPUs other than cpus, for
 * the sampler thread it starts (threads inherit the mask too); cond_unpin
 * puts back the mask cond_pin_workload saved. Each is a no-op when the
 * keys are unset. */
struct cond_pin {
	bool saved;
	cpu_set_t mask; /* the thread's mask before */
};
int cond_pin_workload(const struct job_condition *c, struct cond_pin *p, struct strbuf *err);
int cond_pin_sampler(const struct job_condition *c, const struct cond_pin *p, struct strbuf *err);
void cond_unpin(struct cond_pin *p);
