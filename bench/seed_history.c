/* A year of nightly history for kabd's load benchmark: N jobs (365 by
 * default), each 3 workloads x 2 variants x 5 pairs = 30 runs with about
 * 200 metrics each, all written through the store API (db/store.h) the way
 * the executor writes them: job, schedule, then each run begun and finished
 * (one transaction each), then the job marked done. Values come from a
 * seeded RNG, variant B shifted slightly from A on some metrics.
 *
 * Usage: seed_history DB [--jobs N]   (DB must not exist yet) */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness/exec/executor.h"
#include "harness/exec/joblife.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
#include "db/store.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

#define DAY_S 86400.0

static const char *const JOB_TEXT =
	"[job]\n"
	"name = nightly\n"
	"pairs = 5\n"
	"order = abba\n"
	"metrics = vmstat.pgmajfault vmstat.pswpin vmstat.pswpout interrupts.RES\n"
	"\n"
	"[variant A]\n"
	"name = zswap-off\n"
	"\n"
	"[variant B]\n"
	"name = zswap-on\n"
	"\n"
	"[workload stress-vm]\n"
	"type = stress-ng\n"
	"args = --vm 2 --vm-bytes 512M --vm-keep --timeout 10s\n"
	"memory.max = 256M\n"
	"\n"
	"[workload stress-page]\n"
	"type = stress-ng\n"
	"args = --pagemove 2 --timeout 10s\n"
	"memory.max = 256M\n"
	"\n"
	"[workload stress-mmap]\n"
	"type = stress-ng\n"
	"args = --mmap 2 --mmap-bytes 256M --timeout 10s\n"
	"memory.max = 384M\n";

static const char *const VMSTAT[] = {
	"nr_free_pages", "nr_zone_inactive_anon", "nr_zone_active_anon", "nr_zone_inactive_file",
	"nr_zone_active_file", "nr_zone_unevictable", "nr_zone_write_pending", "nr_mlock", "nr_bounce",
	"nr_zspages", "nr_free_cma", "numa_hit", "numa_miss", "numa_foreign", "numa_interleave",
	"numa_local", "numa_other", "nr_inactive_anon", "nr_active_anon", "nr_inactive_file",
	"nr_active_file", "nr_unevictable", "nr_slab_reclaimable", "nr_slab_unreclaimable",
	"nr_isolated_anon", "nr_isolated_file", "workingset_nodes", "workingset_refault_anon",
	"workingset_refault_file", "workingset_activate_anon", "workingset_activate_file",
	"workingset_restore_anon", "workingset_restore_file", "workingset_nodereclaim", "nr_anon_pages",
	"nr_mapped", "nr_file_pages", "nr_dirty", "nr_writeback", "nr_writeback_temp", "nr_shmem",
	"nr_shmem_hugepages", "nr_shmem_pmdmapped", "nr_file_hugepages", "nr_file_pmdmapped",
	"nr_anon_transparent_hugepages", "nr_vmscan_write", "nr_vmscan_immediate_reclaim",
	"nr_dirtied", "nr_written", "nr_throttled_written", "nr_kernel_misc_reclaimable",
	"nr_foll_pin_acquired", "nr_foll_pin_released", "nr_kernel_stack", "nr_page_table_pages",
	"nr_sec_page_table_pages", "nr_swapcached", "pgpromote_success", "pgpromote_candidate",
	"nr_dirty_threshold", "nr_dirty_background_threshold", "pgpgin", "pgpgout", "pswpin", "pswpout",
	"pgalloc_dma", "pgalloc_dma32", "pgalloc_normal", "pgalloc_movable", "allocstall_dma",
	"allocstall_dma32", "allocstall_normal", "allocstall_movable", "pgskip_dma", "pgskip_dma32",
	"pgskip_normal", "pgfree", "pgactivate", "pgdeactivate", "pglazyfree", "pgfault", "pgmajfault",
	"pglazyfreed", "pgrefill", "pgreuse", "pgsteal_kswapd", "pgsteal_direct", "pgsteal_khugepaged",
	"pgdemote_kswapd", "pgdemote_direct", "pgscan_kswapd", "pgscan_direct", "pgscan_khugepaged",
	"pgscan_direct_throttle", "pgscan_anon", "pgscan_file", "pgsteal_anon", "pgsteal_file",
	"zone_reclaim_failed", "pginodesteal", "slabs_scanned", "kswapd_inodesteal",
	"kswapd_low_wmark_hit_quickly", "kswapd_high_wmark_hit_quickly", "pageoutrun", "pgrotated",
	"drop_pagecache", "drop_slab", "oom_kill", "numa_pte_updates", "numa_hint_faults",
	"numa_pages_migrated", "pgmigrate_success", "pgmigrate_fail", "compact_migrate_scanned",
	"compact_free_scanned", "compact_isolated", "compact_stall", "compact_fail", "compact_success",
	"thp_fault_alloc", "thp_fault_fallback", "thp_collapse_alloc", "thp_split_page",
	"thp_deferred_split_page", "thp_swpout", "thp_swpout_fallback", "swap_ra", "swap_ra_hit",
	"zswpin", "zswpout",
};
static const char *const INTERRUPTS[] = {
	"NMI", "LOC", "SPU", "PMI", "IWI", "RTR", "RES", "CAL", "TLB", "TRM", "THR", "DFR", "MCE",
	"MCP", "HYP", "ERR", "MIS", "PIN", "NPI", "PIW", "0", "1", "8", "9", "12", "16", "24", "25",
	"26", "27", "28", "29", "30", "31",
};
static const char *const MEMCG[] = {
	"anon", "file", "kernel", "kernel_stack", "pagetables", "sec_pagetables", "percpu", "sock",
	"vmalloc", "shmem", "zswap", "zswapped", "file_mapped", "file_dirty", "file_writeback",
	"swapcached", "anon_thp", "inactive_anon", "active_anon", "inactive_file", "active_file",
	"unevictable", "slab_reclaimable", "slab_unreclaimable", "workingset_refault_anon",
	"workingset_refault_file", "workingset_activate_anon", "workingset_activate_file", "pgscan",
	"pgsteal", "pgfault", "pgmajfault", "pgrefill", "pgactivate", "pgdeactivate", "thp_fault_alloc",
	"zswpin", "zswpout", "peak_bytes", "oom_kills",
};
static const struct {
	const char *name, *unit;
} OTHER[] = {
	{ "stress-ng.bogo_ops", "ops" }, { "stress-ng.bogo_ops_per_s", "ops/s" },
	{ "stress-ng.real_time_s", "s" }, { "stress-ng.usr_time_s", "s" }, { "stress-ng.sys_time_s", "s" },
	{ "time.wall_s", "s" }, { "rusage.user_s", "s" }, { "rusage.sys_s", "s" },
	{ "rusage.maxrss_kb", "KiB" }, { "sampler.samples", "samples" },
	{ "sampler.lateness_p99_ms", "ms" },
};
#define N_VMSTAT (sizeof(VMSTAT) / sizeof(VMSTAT[0]))
#define N_INTR (sizeof(INTERRUPTS) / sizeof(INTERRUPTS[0]))
#define N_MEMCG (sizeof(MEMCG) / sizeof(MEMCG[0]))
#define N_OTHER (sizeof(OTHER) / sizeof(OTHER[0]))
#define N_METRICS (N_VMSTAT + N_INTR + N_MEMCG + N_OTHER)

struct metric_def {
	char name[96];
	const char *unit;
	double base;   /* typical value */
	double shift;  /* relative shift of variant B, 0 for most */
};

/* splitmix64: small, seeded, good enough for made-up data */
static uint64_t rng_next(uint64_t *s) {
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
static double rng_unif(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1.0p-53; }
static double rng_normal(uint64_t *s) {
	double u = rng_unif(s), v = rng_unif(s);
	if (u < 1e-300)
		u = 1e-300;
	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

static void defs_init(struct metric_def *d, uint64_t *rng) {
	size_t k = 0;
	for (size_t i = 0; i < N_VMSTAT; i++, k++) {
		snprintf(d[k].name, sizeof(d[k].name), "vmstat.%s", VMSTAT[i]);
		d[k].unit = strncmp(VMSTAT[i], "nr_", 3) == 0 ? "pages" : "events";
	}
	for (size_t i = 0; i < N_INTR; i++, k++) {
		snprintf(d[k].name, sizeof(d[k].name), "interrupts.%s", INTERRUPTS[i]);
		d[k].unit = "irqs";
	}
	for (size_t i = 0; i < N_MEMCG; i++, k++) {
		snprintf(d[k].name, sizeof(d[k].name), "memcg.%s", MEMCG[i]);
		d[k].unit = strstr(MEMCG[i], "bytes") || !strstr(MEMCG[i], "pg") ? "bytes" : "events";
	}
	for (size_t i = 0; i < N_OTHER; i++, k++) {
		snprintf(d[k].name, sizeof(d[k].name), "%s", OTHER[i].name);
		d[k].unit = OTHER[i].unit;
	}
	for (k = 0; k < N_METRICS; k++) {
		d[k].base = pow(10.0, 1.0 + 6.0 * rng_unif(rng));
		d[k].shift = rng_unif(rng) < 0.15 ? 0.03 * rng_normal(rng) : 0.0;
	}
	/* a few with realistic scales */
	for (k = 0; k < N_METRICS; k++) {
		if (strcmp(d[k].name, "time.wall_s") == 0 || strcmp(d[k].name, "stress-ng.real_time_s") == 0)
			d[k].base = 10.05;
		else if (strcmp(d[k].name, "sampler.lateness_p99_ms") == 0)
			d[k].base = 0.35, d[k].shift = 0;
		else if (strcmp(d[k].name, "sampler.samples") == 0)
			d[k].base = 11, d[k].shift = 0;
		else if (strcmp(d[k].name, "stress-ng.bogo_ops_per_s") == 0)
			d[k].base = 152000, d[k].shift = -0.02;
	}
}

static int seed_job(struct store *st, const struct job *j, const struct metric_def *defs, uint64_t *rng,
		    double day0, struct wl_metrics *m)
{
	int64_t job_id;
	struct store_step *plan = NULL, *steps = NULL;
	size_t n_plan = 0, n = 0;
	int r;

	if ((r = job_store_create(st, j, &job_id)) < 0)
		return r;
	if ((r = exec_plan(j, &plan, &n_plan)) < 0 || (r = store_steps_create(st, job_id, plan, n_plan)) < 0 ||
	    (r = store_steps_load(st, job_id, &steps, &n)) < 0)
		goto out;
	if ((r = jl_transition(st, job_id, JL_FROM(JOB_QUEUED), JOB_RUNNING, NULL)) < 0)
		goto out;
	double t = day0;
	for (size_t i = 0; i < n; i++) {
		struct store_run run = { .job_id = job_id, .step_id = steps[i].id, .pair = steps[i].pair,
					 .variant = steps[i].variant, .workload = steps[i].workload,
					 .exit_code = -1, .pid = 4242, .cpus = 8, .cgroup_version = 2,
					 .mem_total = 16ull << 30, .swap_total = 4ull << 30,
					 .memory_max = j->workloads[steps[i].workload].memory_max };
		run.status = RUN_STARTED;
		snprintf(run.kab_version, sizeof(run.kab_version), "seed");
		snprintf(run.kernel_release, sizeof(run.kernel_release), "6.1.0-seed");
		snprintf(run.boot_id, sizeof(run.boot_id), "00000000-0000-0000-0000-%012lld", (long long)job_id);
		snprintf(run.swap_devices, sizeof(run.swap_devices), "/dev/zram0");
		snprintf(run.cgroup_path, sizeof(run.cgroup_path), "/sys/fs/cgroup/kab/job%lld-step%d",
			 (long long)job_id, steps[i].seq);
		run.started = t;
		int64_t run_id;
		if ((r = store_run_begin(st, &run, &run_id)) < 0)
			goto out;
		run.id = run_id;
		m->n = 0;
		double wl_scale = 1.0 + 0.25 * steps[i].workload;
		for (size_t k = 0; k < N_METRICS; k++) {
			double mean = defs[k].base * wl_scale * (steps[i].variant == 1 ? 1.0 + defs[k].shift : 1.0);
			double v = mean * (1.0 + 0.02 * rng_normal(rng));
			/* counters and page counts are whole numbers, times and rates not */
			if (strcmp(defs[k].unit, "ms") != 0 && strcmp(defs[k].unit, "s") != 0 &&
			    strcmp(defs[k].unit, "ops/s") != 0)
				v = floor(v);
			if ((r = wl_metrics_add(m, defs[k].name, defs[k].unit, v < 0 ? 0 : v)) < 0)
				goto out;
		}
		t += 11.0;
		run.finished = t;
		run.exit_code = 0;
		run.status = steps[i].pair == STORE_PAIR_WARMUP ? RUN_WARMUP : RUN_OK;
		snprintf(run.stdout_tail, sizeof(run.stdout_tail), "stress-ng: info:  [%d] successful run completed\n",
			 4242);
		if ((r = store_run_finish(st, &run, STEP_FINISHED, m->v, m->n, NULL, 0)) < 0)
			goto out;
	}
	r = jl_transition(st, job_id, JL_FROM(JOB_RUNNING), JOB_DONE, NULL);
out:
	free(plan);
	free(steps);
	return r;
}

int main(int argc, char **argv) {
	const char *db = NULL;
	unsigned long jobs = 365;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc) {
			char *end;
			errno = 0;
			jobs = strtoul(argv[++i], &end, 10);
			if (errno || *end || jobs == 0 || jobs > 100000) {
				fprintf(stderr, "seed_history: --jobs wants 1 to 100000\n");
				return 2;
			}
		} else if (!db && argv[i][0] != '-') {
			db = argv[i];
		} else {
			fprintf(stderr, "usage: seed_history DB [--jobs N]\n");
			return 2;
		}
	}
	if (!db) {
		fprintf(stderr, "usage: seed_history DB [--jobs N]\n");
		return 2;
	}
	if (access(db, F_OK) == 0) {
		fprintf(stderr, "seed_history: %s exists; give a new path\n", db);
		return 2;
	}

	struct diags d = { 0 };
	struct job *j = NULL;
	if (job_parse_string_nocheck("nightly.job", JOB_TEXT, &j, &d) < 0) {
		diags_print(&d, stderr);
		diags_free(&d);
		return 1;
	}
	diags_free(&d);
	struct store *st = NULL;
	if (store_open(db, &st) < 0) {
		fprintf(stderr, "seed_history: cannot open %s: %s\n", db, st ? store_errmsg(st) : "?");
		job_free(j);
		return 1;
	}

	uint64_t rng = 20260101;
	static struct metric_def defs[N_METRICS];
	defs_init(defs, &rng);
	struct wl_metrics m = { 0 };
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	double day0 = (double)time(NULL) - (double)jobs * DAY_S;
	int r = 0;
	for (unsigned long i = 0; i < jobs && r >= 0; i++)
		r = seed_job(st, j, defs, &rng, day0 + (double)i * DAY_S + 2 * 3600, &m);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (r < 0)
		fprintf(stderr, "seed_history: %s\n", store_errmsg(st));
	else
		printf("seed_history: %lu jobs, %zu runs, %zu metrics a run, in %.1f s\n", jobs,
		       jobs * j->pairs * j->n_workloads * j->n_variants, (size_t)N_METRICS, el);
	wl_metrics_free(&m);
	store_close(st);
	job_free(j);
	return r < 0 ? 1 : 0;
}
