/* Jobs that boot kernels: their builds, the judgement of each boot, and
 * the switch (kexec or a one-shot boot entry) to the next boot's kernel. */
#include "kernels/build.h"
#include "harness/job/kbuild_job.h"
#include "harness/exec/cgroup.h"
#include "harness/exec/exec_priv.h"
#include "harness/exec/executor.h"
#include "harness/exec/joblife.h"
#include "harness/job/job.h"
#include "kernels/kexec.h"
#include "kernels/reboot.h"
#include "kernels/run.h"
#include "db/store.h"
#include "db/store_boots.h"
#include "db/store_builds.h"
#include "harness/base/config.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <linux/magic.h>
#include <time.h>
#include <unistd.h>

struct build_progress {
	struct store *st;
	int64_t job_id;
	double last;
};

/* A kernel build's stage as the job's reason, at most once a second. */
static void on_build_stage(void *ctx, const char *name, const char *stage)
{
	struct build_progress *p = ctx;
	double now = util_mono_now();
	if (p->last > 0 && now - p->last < 1.0)
		return;
	p->last = now;
	char msg[512];
	snprintf(msg, sizeof(msg), "building the kernel of variant %s: %s", name, stage);
	jl_note(p->st, p->job_id, msg);
}

void exec_boots_free(struct exec_boots *bc, size_t n)
{
	if (!bc->b)
		return;
	for (size_t i = 0; i < n; i++)
		store_build_clear(&bc->b[i]);
	free(bc->b);
	bc->b = NULL;
}

static double uptime_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void running_kernel(char *cmdline, size_t clen, char *release, size_t rlen)
{
	char *c = NULL;
	snprintf(cmdline, clen, "%s", util_read_line("/proc/cmdline", &c) == 0 ? c : "");
	free(c);
	struct utsname u;
	snprintf(release, rlen, "%s", uname(&u) == 0 ? u.release : "");
}

/* The database must outlive a reboot: on a disk, not in memory, tmpfs or ramfs. */
static int db_survives_reboot(const struct store *st, struct strbuf *why)
{
	const char *path = store_path(st);
	if (!path || !path[0]) {
		sb_puts(why, "an in-memory database does not survive a reboot");
		return -EINVAL;
	}
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = 0; /* "/x.db" keeps "/" */
	struct statfs sf;
	if (statfs(dir, &sf) == 0 && (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC)) {
		sb_printf(why, "the database %s is on %s, which a reboot empties: a job that boots kernels keeps its state across boots; use a database on a disk (kabd --db /var/lib/kab/kab.db)",
			  path, sf.f_type == TMPFS_MAGIC ? "tmpfs" : "ramfs");
		return -EINVAL;
	}
	return 0;
}

/* After a boot: judges the switch the last boot recorded, and finds which
 * of the plan's boots this one is. */
static int boots_arrive(struct store *st, const struct job *j, int64_t job_id, const char *boot_id, struct exec_boots *bc)
{
	struct store_boot *v = NULL;
	size_t n = 0;
	int r = store_boots_load(st, job_id, &v, &n);
	if (r < 0)
		return r;
	bc->current = -1;
	struct store_boot *last = n ? &v[n - 1] : NULL;
	if (last && last->status == BOOT_SWITCHING) {
		if (strcmp(last->from_boot_id, boot_id) == 0) {
			/* kab stopped between recording the switch and making it */
			last->status = BOOT_ABANDONED;
			snprintf(last->reason, sizeof(last->reason), "the switch was not made: kab stopped before the kexec");
		} else {
			char release[128];
			running_kernel(last->booted_cmdline, sizeof(last->booted_cmdline), release, sizeof(release));
			snprintf(last->kernel_release, sizeof(last->kernel_release), "%s", release);
			snprintf(last->boot_id, sizeof(last->boot_id), "%s", boot_id);
			const struct store_build *b = &bc->b[last->variant];
			bool ok = kexec_judge(last->build_id, b->kernelrelease, last->booted_cmdline, release, last->reason,
					      sizeof(last->reason));
			last->status = ok ? BOOT_OK : BOOT_FAILED;
			last->ready_at = util_real_now();
			last->uptime_s = uptime_s();
			last->kexec_s = last->prep_s + last->uptime_s;
			if (ok)
				log_info("boot %d of the plan: build %lld (%s, variant %s) is up, %.2f s from the switch decision (%.2f s preparing, %.2f s since the kernel started)",
					 last->slot + 1, (long long)last->build_id, release, j->variants[last->variant].name,
					 last->kexec_s, last->prep_s, last->uptime_s);
			else
				log_warn("boot %d of the plan failed: %s", last->slot + 1, last->reason);
		}
		if ((r = store_boot_finish(st, last)) < 0)
			goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].status == BOOT_OK && strcmp(v[i].boot_id, boot_id) == 0)
			bc->current = v[i].slot;
out:
	free(v);
	return r;
}

/* Loads each variant's build, and judges the boot we are in. */
int exec_boots_start(struct store *st, const struct job *j, int64_t job_id, const char *boot_id,
		     const int64_t *builds, struct exec_boots *bc)
{
	if (!(bc->b = calloc(j->n_variants, sizeof(*bc->b))))
		return -ENOMEM;
	for (size_t i = 0; i < j->n_variants; i++) {
		int r = store_build_get(st, builds[i], &bc->b[i]);
		if (r < 0) {
			log_error("variant %s: build %lld is not in the database", j->variants[i].name, (long long)builds[i]);
			return r;
		}
	}
	return boots_arrive(st, j, job_id, boot_id, bc);
}

static size_t failed_boots(struct store *st, int64_t job_id, int variant)
{
	struct store_boot *v = NULL;
	size_t n = 0, k = 0;
	if (store_boots_load(st, job_id, &v, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		k += v[i].variant == variant && v[i].status == BOOT_FAILED;
	free(v);
	return k;
}

/* What a variant's boot is given: its image, initrd and command line. */
static int boot_target(const struct job *j, const struct exec_boots *bc, int variant, int64_t build_id, const char **image,
		       const char **initrd, char *cmdline, size_t len, struct strbuf *err)
{
	const struct job_variant *var = &j->variants[variant];
	const struct store_build *b = &bc->b[variant];
	*image = b->image;
	*initrd = var->initrd ? var->initrd : b->initrd;
	char cur[4096], release[128];
	running_kernel(cur, sizeof(cur), release, sizeof(release));
	if (!*image) {
		sb_printf(err, "variant %s: build %lld has no image", var->name, (long long)build_id);
		return -EINVAL;
	}
	if (kexec_cmdline(cur, build_id, j->panic_s, var->cmdline, cmdline, len) < 0) {
		sb_printf(err, "variant %s: the command line for build %lld is longer than %zu characters", var->name,
			  (long long)build_id, len - 1);
		return -EINVAL;
	}
	return kexec_preflight(*image, *initrd, cmdline, err);
}

/* switch = reboot: the one-shot boot entry's plan for t, printed. */
static int reboot_plan(const struct kreboot_target *t, struct kreboot_plan *plan, struct strbuf *err)
{
	enum kreboot_loader l;
	int r = kreboot_detect("/", &l, NULL, 0, err);
	if (r == 0 && (r = kreboot_plan_make(t, l, "/", plan, err)) == 0)
		kreboot_plan_print(plan, stderr);
	return r;
}

/* Everything on disk before leaving the boot: the switch's preparation
 * time (decision to now, returned) and the WAL in the main file. */
static double boots_commit(struct store *st, int64_t boot_row, double t0)
{
	sync();
	double prep = util_mono_now() - t0;
	store_boot_prepared(st, boot_row, prep);
	store_checkpoint(st);
	sync();
	return prep;
}

/* Leaves this boot for the plan's boot of step: records the switch, puts
 * the machine back as it was (swap, cgroups), syncs and kexecs. Returns
 * only when the switch could not be made (an error, recorded), or 1 when
 * the step's variant is boot-failed (its steps marked). */
int exec_boots_switch(struct store *st, const struct job *j, int64_t job_id, const char *boot_id,
		      struct exec_boots *bc, const struct store_step *step, struct exec_swap_state *sw)
{
	int v = step->variant;
	const struct job_variant *var = &j->variants[v];
	size_t failed = failed_boots(st, job_id, v);
	if (failed >= j->boot_attempts) {
		int k = 0;
		store_steps_boot_failed(st, job_id, v, &k);
		log_error("variant %s is boot-failed: build %lld did not come up in %zu attempts; %d of its runs will not happen",
			  var->name, (long long)bc->b[v].id, failed, k);
		return 1;
	}
	double t0 = util_mono_now();
	const char *image, *initrd;
	char cmdline[4096];
	struct strbuf err = { 0 };
	int r = boot_target(j, bc, v, bc->b[v].id, &image, &initrd, cmdline, sizeof(cmdline), &err);
	if (r < 0)
		goto fail_early;
	struct store_boot b = { .job_id = job_id, .slot = step->boot, .variant = v, .build_id = bc->b[v].id,
				.switch_at = util_real_now() };
	snprintf(b.method, sizeof(b.method), "%s", job_switch_name(j->switch_mode));
	snprintf(b.from_boot_id, sizeof(b.from_boot_id), "%s", boot_id);
	snprintf(b.cmdline, sizeof(b.cmdline), "%s", cmdline);
	char msg[512];
	snprintf(msg, sizeof(msg), "switching to build %lld (%s, variant %s) for step %d: boot %d of %zu", (long long)b.build_id,
		 bc->b[v].kernelrelease, var->name, step->seq + 1, step->boot + 1, (size_t)j->pairs * j->n_variants);
	struct kreboot_target t = { .build_id = b.build_id, .image = image, .initrd = initrd,
				    .kernelrelease = bc->b[v].kernelrelease, .cmdline = cmdline };
	struct kreboot_plan plan = { 0 };
	if (config_bool(CONFIG_SWITCH_DRY_RUN)) {
		/* tests and operators: everything up to the switch, which is shown, not made */
		if (j->switch_mode == JOB_SWITCH_REBOOT && (r = reboot_plan(&t, &plan, &err)) < 0)
			goto fail_early;
		kreboot_plan_free(&plan);
		if (j->switch_mode == JOB_SWITCH_KEXEC)
			log_info("kexec_file_load %s, initrd %s, command line \"%s\"", image, initrd ? initrd : "none", cmdline);
		sb_printf(&err, "KAB_SWITCH_DRY_RUN is set: the switch to build %lld (%s) is shown in the log, not made", (long long)b.build_id,
			  job_switch_name(j->switch_mode));
		r = -ECANCELED;
		goto fail_early;
	}
	if ((r = store_boot_begin(st, &b, &b.id)) < 0)
		goto fail_early;
	jl_note(st, job_id, msg);
	log_info("%s%s", msg, failed ? " (after a failed boot)" : "");
	/* the machine as it was before the job, in every boot */
	exec_swap_teardown(st, sw);
	cg_remove_parent(NULL);
	if (j->switch_mode == JOB_SWITCH_REBOOT) {
		if ((r = reboot_plan(&t, &plan, &err)) == 0) {
			boots_commit(st, b.id, t0);
			r = kreboot_plan_run(&plan, false, &err);
		}
		kreboot_plan_free(&plan);
		if (r == 0) { /* under way: systemd stops kabd next */
			sb_free(&err);
			return -EINPROGRESS;
		}
	} else {
		double t1 = util_mono_now();
		if ((r = kexec_load(image, initrd, cmdline, &err)) == 0) {
			double t2 = util_mono_now();
			double prep = boots_commit(st, b.id, t0);
			log_info("kexec: %s loaded in %.2f s, state and file systems synced in %.2f s (%.2f s since the decision)", image,
				 t2 - t1, util_mono_now() - t2, prep);
			r = kexec_exec(&err);
		}
	}
	/* still here: the switch failed before leaving this boot */
	b.status = BOOT_ABANDONED;
	snprintf(b.reason, sizeof(b.reason), "%.500s", err.buf ? err.buf : strerror(-r));
	store_boot_finish(st, &b);
fail_early:
	log_error("cannot switch to variant %s: %s", var->name, err.buf ? err.buf : strerror(-r));
	snprintf(msg, sizeof(msg), "cannot switch to variant %s: %.400s", var->name, err.buf ? err.buf : strerror(-r));
	jl_transition(st, job_id, JL_FROM(JOB_RUNNING), JOB_FAILED, msg);
	sb_free(&err);
	return r < 0 ? r : -EIO;
}

/* Checks for a job that boots kernels, before any run: where the state
 * lives, and that this machine can switch. */
void exec_boots_preflight(const struct store *st, const struct job *j, struct diags *d)
{
	struct strbuf why = { 0 };
	if (db_survives_reboot(st, &why) < 0)
		diags_add(d, j->file, 0, "%s", why.len ? why.buf : "");
	sb_free(&why);
	if (j->switch_mode == JOB_SWITCH_KEXEC && kexec_supported(&why) < 0)
		diags_add(d, j->file, 0, "%s: set switch = reboot in [job] to switch with a one-shot boot entry instead",
			  why.len ? why.buf : "");
	sb_free(&why);
}

void exec_refuse_boots(const struct job *j, struct diags *d)
{
	for (size_t i = 0; i < j->n_variants; i++)
		if (strcmp(j->variants[i].kernel, "running") != 0) {
			diags_add(d, j->file, j->variants[i].line,
				  "variant %s boots a kernel of its own, so the job goes on across reboots: run it under kabd, which resumes it after each boot (systemctl start kabd; kab submit JOB); kab build JOB builds the kernels alone",
				  j->variants[i].name);
			return;
		}
}

/* Builds (or reuses) the kernels of a job's variants; their ids go in builds. */
int exec_builds(struct store *st, const struct job *j, int64_t job_id, int64_t *builds)
{
	struct build_progress bp = { .st = st, .job_id = job_id };
	struct kbuild_opts o = { .progress = on_build_stage, .progress_ctx = &bp, .variant_builds = builds, .job_id = job_id };
	struct strbuf err = { 0 };
	if (job_has_builds(j))
		jl_transition(st, job_id, JL_STARTABLE, JOB_RUNNING, "building kernels");
	/* a build takes many minutes: a stop or a cancel ends it (the
	 * compilers get SIGTERM) instead of waiting for it */
	krun_set_cancel(exec_check_interrupted);
	int r = kbuild_job(st, j, &o, &err);
	krun_set_cancel(NULL);
	if (r < 0 && exec_interrupted()) {
		log_info("kernel build stopped: %s", err.buf ? err.buf : strerror(-r));
		r = -EINTR;
	} else if (r < 0) {
		exec_job_failed_with(st, job_id, "kernel build failed: ", &err, r);
	}
	sb_free(&err);
	return r;
}
