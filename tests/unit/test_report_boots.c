/* Reports of jobs that boot kernels, from a temporary store: each
 * variant's build in the header (base ref, 12 hex digits of its commit,
 * the series and its patches in order, or a registered image), each run
 * joined to the boot and build it ran on, and a warning for every run
 * planted on the wrong kernel or boot; in text, Markdown, JSON and the
 * cover letter. */
#include "t_job.h"
#include "t_report.h"
#include "harness/exec/executor.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
#include "harness/report/report.h"
#include "harness/report/report_priv.h"
#include "db/store.h"
#include "db/store_boots.h"
#include "db/store_track.h"
#include "db/store_builds.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define SHA "71864f7f0e85c2a3d5e6f7a8b9c0d1e2f3a4b5c6"
#define SERIES "lore:20260611105124.98668-1-baohua@kernel.org v2"
#define SUBJECT1 "[PATCH v2 1/2] mm: avoid unnecessary lru drain for wp_can_reuse_anon_folio()"
#define SUBJECT2 "[PATCH v2 2/2] mm: entirely remove lru_add_drain in do_swap_page"
#define MSGID1 "<20260611105124.98668-2-baohua@kernel.org>"
#define MSGID2 "<20260611105124.98668-3-baohua@kernel.org>"
#define IMAGE "/boot/vmlinuz-6.1.0-57-amd64"

#define BUILD_VARIANTS \
	"archive = https://lore.kernel.org/all\n" \
	"[swap]\ndevice = none\n" \
	"[variant A]\nname = base\nkernel = build\ntree = /src/linux\nbase = v6.1-debian\nconfig = defconfig\n" \
	"[variant B]\nname = patched\nkernel = build\ntree = /src/linux\nbase = v6.1-debian\nconfig = defconfig\n" \
	"series = " SERIES "\n" \
	"[workload w]\ntype = command\ncommand = true\n"

/* These jobs plant their runs by the index of their steps: no warm-up
 * (warm_job, made last, has one). */
static const char build_job[] = "[job]\nname = unit-kernels\nboots = 3\nruns_per_boot = 2\nswitch = kexec\nwarmup = 0\n" BUILD_VARIANTS;
static const char many_job[] = "[job]\nname = unit-many\nboots = 30\nswitch = kexec\nwarmup = 0\n" BUILD_VARIANTS;
static const char warm_job[] = "[job]\nname = unit-warm\nboots = 3\nruns_per_boot = 2\nswitch = kexec\n" BUILD_VARIANTS;
static const char image_job[] = "[job]\nname = unit-images\nboots = 1\nswitch = kexec\nwarmup = 0\n"
				"[swap]\ndevice = none\n"
				"[variant A]\nname = distro\nkernel = image\nimage = " IMAGE "\n"
				"[variant B]\nname = other\nkernel = image\nimage = /boot/vmlinuz-6.1.0-58-amd64\n"
				"[workload w]\ntype = command\ncommand = true\n";

/* An ok build of v6.1-debian (kind build, or image of the file series). */
static int64_t add_build(struct store *st, const char *kind, const char *release, const char *series, const char *patches)
{
	bool image = strcmp(kind, "image") == 0;
	struct store_build b = { .tree = image ? "" : "/src/linux", .base_ref = image ? "" : "v6.1-debian",
				 .series = (char *)series, .patches = (char *)patches,
				 .config_source = image ? "image" : "defconfig" };
	snprintf(b.kind, sizeof(b.kind), "%s", kind);
	snprintf(b.base_sha, sizeof(b.base_sha), "%s", image ? "" : SHA);
	snprintf(b.config_hash, sizeof(b.config_hash), "c0ffee");
	snprintf(b.inputs_key, sizeof(b.inputs_key), "key-%s", release);
	int64_t id = 0;
	if (store_build_begin(st, &b, &id) < 0)
		return 0;
	b.id = id;
	b.status = BUILD_OK;
	snprintf(b.kernelrelease, sizeof(b.kernelrelease), "%s", release);
	b.objects = 1234;
	return store_build_finish(st, &b) < 0 ? 0 : id;
}

/* The switch to a boot and the boot that followed it, ok. */
static int add_boot(struct store *st, int64_t job, const struct store_step *s, int64_t build, const char *release,
		    const char *boot_id)
{
	struct store_boot b = { .job_id = job, .slot = s->boot, .variant = s->variant, .build_id = build,
				.switch_at = 1000 + s->boot };
	snprintf(b.method, sizeof(b.method), "kexec");
	snprintf(b.from_boot_id, sizeof(b.from_boot_id), "previous");
	snprintf(b.cmdline, sizeof(b.cmdline), "root=/dev/vda panic=10 oops=panic kab.build=%lld", (long long)build);
	int r = store_boot_begin(st, &b, &b.id);
	if (r < 0)
		return r;
	b.status = BOOT_OK;
	snprintf(b.boot_id, sizeof(b.boot_id), "%s", boot_id);
	snprintf(b.kernel_release, sizeof(b.kernel_release), "%s", release);
	snprintf(b.booted_cmdline, sizeof(b.booted_cmdline), "%s", b.cmdline);
	b.ready_at = 2000 + s->boot;
	b.uptime_s = 1.5;
	b.kexec_s = 2.0 + 0.1 * s->boot;
	return store_boot_finish(st, &b);
}

static void boot_id_of(char tag, int slot, char *buf, size_t len)
{
	snprintf(buf, len, "%c%07d-1111-2222-3333-444444444444", tag, slot + 1);
}

/* What make_job plants: (WRONG) one run with the patched kernel's
 * release in a boot of base, one run of patched inside a boot of base,
 * one run in a boot the job never recorded, one run whose command line
 * names base's build; (SWAPPED) every run with the other's release. */
enum { PLANT_NONE, PLANT_WRONG, PLANT_SWAPPED };

static int add_run(struct store *st, int64_t job, const struct store_step *s, const char *boot_id, const char *release,
		   int64_t build)
{
	struct store_run run = { .job_id = job, .step_id = s->id, .pair = s->pair, .variant = s->variant,
				 .workload = s->workload, .exit_code = 0, .cpus = 8, .cgroup_version = 2,
				 .mem_total = 16ull << 30 };
	snprintf(run.boot_id, sizeof(run.boot_id), "%s", boot_id);
	snprintf(run.kernel_release, sizeof(run.kernel_release), "%s", release);
	snprintf(run.cmdline, sizeof(run.cmdline), "root=/dev/vda panic=10 oops=panic kab.build=%lld", (long long)build);
	int64_t rid;
	int r = store_run_begin(st, &run, &rid);
	if (r < 0)
		return r;
	run.id = rid;
	run.started = 3000 + s->seq;
	run.finished = run.started + 5;
	/* a warm-up as the executor records it, cold: far off the others */
	bool warm = s->pair == STORE_PAIR_WARMUP;
	run.status = warm ? RUN_WARMUP : RUN_OK;
	if (warm)
		snprintf(run.reason, sizeof(run.reason), "warm-up before the first pair, not counted (ok)");
	struct wl_metrics m = { 0 };
	wl_metrics_add(&m, "command.m", "ops/s", warm ? 1e6 : 100 + 10 * s->variant + s->pair + 0.1 * s->rep);
	r = store_run_finish(st, &run, STEP_FINISHED, m.v, m.n, NULL, 0);
	wl_metrics_free(&m);
	return r;
}

/* A job of text on builds[2] (releases[2]): its plan, a boot per slot
 * and a run per step; plant: the wrong runs above. */
static int64_t make_job(struct store *st, const char *text, const int64_t *builds, const char *const *releases, char tag,
			int plant, bool runs)
{
	struct job *j = t_parse_job(text);
	int64_t id = 0;
	struct store_step *steps = NULL;
	size_t n = 0;
	int r = j ? job_store_create(st, j, &id) : -EINVAL;
	if (r == 0)
		r = exec_plan(j, &steps, &n);
	if (r == 0)
		r = store_steps_create(st, id, steps, n);
	free(steps);
	steps = NULL;
	if (r == 0)
		r = store_steps_load(st, id, &steps, &n);
	if (r == 0)
		r = store_variant_builds_set(st, id, builds, 2);
	int last = -1;
	char boot_id[64] = "", prev[64] = "";
	for (size_t i = 0; r == 0 && runs && i < n; i++) {
		const struct store_step *s = &steps[i];
		int v = s->variant;
		if (s->boot != last) {
			snprintf(prev, sizeof(prev), "%s", boot_id);
			boot_id_of(tag, s->boot, boot_id, sizeof(boot_id));
			r = add_boot(st, id, s, builds[v], releases[v], boot_id);
			last = s->boot;
		}
		if (r < 0)
			break;
		if (plant == PLANT_WRONG && i == 1) /* base's second run, on patched's kernel */
			r = add_run(st, id, s, boot_id, releases[1], builds[v]);
		else if (plant == PLANT_WRONG && i == 2) /* patched's first run, in base's boot before */
			r = add_run(st, id, s, prev, releases[0], builds[0]);
		else if (plant == PLANT_WRONG && i == 3) /* in a boot kab never switched to */
			r = add_run(st, id, s, "deadbeef-0000-0000-0000-000000000000", releases[v], builds[v]);
		else if (plant == PLANT_WRONG && i == 4) /* patched's release, base's kab.build= marker */
			r = add_run(st, id, s, boot_id, releases[v], builds[0]);
		else if (plant == PLANT_SWAPPED) /* every run records the other variant's release */
			r = add_run(st, id, s, boot_id, releases[!v], builds[v]);
		else
			r = add_run(st, id, s, boot_id, releases[v], builds[v]);
	}
	free(steps);
	job_free(j);
	return r < 0 ? 0 : id;
}


/* Checks that text holds want, and shows both when it does not. */
static void has(const char *what, const char *text, const char *want)
{
	if (text && strstr(text, want)) {
		t_passed++;
		return;
	}
	t_failed++;
	fprintf(stderr, "%s lacks:\n%s\n--- in:\n%s\n---\n", what, want, text ? text : "(null)");
}

static void lacks(const char *what, const char *text, const char *unwanted)
{
	if (text && !strstr(text, unwanted)) {
		t_passed++;
		return;
	}
	t_failed++;
	fprintf(stderr, "%s has, but must not:\n%s\n", what, unwanted);
}

static struct report *load(struct store *st, int64_t id)
{
	struct report *r = NULL;
	T_EQ_INT(report_load(st, id, &r), 0);
	if (r)
		T_EQ_INT(report_analyze(r), 0);
	return r;
}

static const char kernels_text[] =
	"\nKernels:\n"
	"  base: build 1, 6.1.192-kab1, built by kab from v6.1-debian (71864f7f0e85), no series\n"
	"  patched: build 2, 6.1.192-kab2, built by kab from v6.1-debian (71864f7f0e85) + series " SERIES ", 2 patches:\n"
	"    1. " SUBJECT1 "\n"
	"    2. " SUBJECT2 "\n"
	"\n== workload w (command; command: true)\n"
	"Kernel: base 6.1.192-kab1, patched 6.1.192-kab2   CPUs: 8   Memory: 16.0 GiB   cgroup v2\n";

static const char runs_by_boot_text[] =
	"\nRuns by boot:\n"
	"  base: boot 1 (boot_id a0000001, build 1, 6.1.192-kab1): runs 1 ok, 2 ok\n"
	"  base: boot 4 (boot_id a0000004, build 1, 6.1.192-kab1): runs 7 ok, 8 ok\n"
	"  base: boot 5 (boot_id a0000005, build 1, 6.1.192-kab1): runs 9 ok, 10 ok\n"
	"  patched: boot 2 (boot_id a0000002, build 2, 6.1.192-kab2): runs 3 ok, 4 ok\n"
	"  patched: boot 3 (boot_id a0000003, build 2, 6.1.192-kab2): runs 5 ok, 6 ok\n"
	"  patched: boot 6 (boot_id a0000006, build 2, 6.1.192-kab2): runs 11 ok, 12 ok\n";

/* (the header's duration, between these lines, is the store's clock) */
static const char cover_top[] =
	"==========================================================================\n"
	"  Kernel: 6.1.192-kab1 / 6.1.192-kab2   CPUs: 8\n"
	"  MemTotal: 16384M   SwapTotal: 0M\n"
	"  memcg limit: none   duration: ";

static const char cover_lines[] = "s\n"
				  "  Before: base   After: patched   pairs: 3 (abba)\n"
				  "  Warm-up: off (warmup = 0): the first pair's runs were the workload's first\n"
				  "  Base: v6.1-debian (71864f7f0e85), 6.1.192-kab1\n"
				  "  patched: + 2 patches (" SERIES "), 6.1.192-kab2\n"
				  "    1. " SUBJECT1 "\n"
				  "    2. " SUBJECT2 "\n"
				  "  3 boots of each kernel, ABBA, 2 runs a boot (their median counted)\n"
				  "--------------------------------------------------------------------------\n";

static void check_clean(struct store *st, int64_t id)
{
	struct report *r = load(st, id);
	if (!r)
		return;
	T_CHECK(r->kernels != NULL);
	if (r->kernels) {
		const struct report_kernel *a = &r->kernels[0], *b = &r->kernels[1];
		T_EQ_INT(a->build_id, 1);
		T_EQ_STR(a->kind, "build");
		T_EQ_STR(a->base_sha, SHA);
		T_CHECK(a->series == NULL && a->n_patches == 0);
		T_EQ_INT(a->boots, 3);
		T_EQ_INT(b->build_id, 2);
		T_EQ_STR(b->series, SERIES);
		T_EQ_INT(b->n_patches, 2);
		if (b->n_patches == 2) {
			T_EQ_STR(b->patches[0].subject, SUBJECT1);
			T_EQ_STR(b->patches[0].message_id, MSGID1);
			T_EQ_STR(b->patches[1].subject, SUBJECT2);
			T_EQ_STR(b->patches[1].message_id, MSGID2);
		}
	}
	T_EQ_INT(r->n_kernel_warnings, 0);
	T_EQ_INT(r->n_run_boots, 6);
	/* two runs a boot count once: n is the boots */
	T_EQ_INT(r->w[0].n_metrics > 0 ? r->w[0].m[0].desc[0].n : 0, 3);
	char *text = t_render(r, REPORT_TEXT);
	has("text", text, "kab report: job 1 \"unit-kernels\" (queued), order abba\n\nKernels:\n");
	has("text", text, kernels_text);
	has("text", text, runs_by_boot_text);
	has("text", text, "\nBoots:\n  base: build 1 (6.1.192-kab1): 3 boots, 0 failed, switch to ready 2.3 s median (2.0-2.4)\n");
	lacks("text", text, "WARNING");
	free(text);
	char *md = t_render(r, REPORT_MARKDOWN);
	has("markdown", md, "\nKernels:\n\n- base: build 1, 6.1.192-kab1, built by kab from v6.1-debian (71864f7f0e85), no series\n"
			    "- patched: build 2, 6.1.192-kab2, built by kab from v6.1-debian (71864f7f0e85) + series " SERIES
			    ", 2 patches:\n    1. " SUBJECT1 "\n    2. " SUBJECT2 "\n");
	has("markdown", md, "\nRuns by boot:\n\n- base: boot 1 (boot_id a0000001, build 1, 6.1.192-kab1): runs 1 ok, 2 ok\n");
	free(md);
	char *cover = t_render(r, REPORT_COVER_LETTER);
	has("cover letter", cover, cover_top);
	has("cover letter", cover, cover_lines);
	lacks("cover letter", cover, "WARNING");
	free(cover);
	char *json = t_render(r, REPORT_JSON);
	has("json", json,
	    "\"variants\": [\"base\", \"patched\"],\n  \"kernels\": [\n"
	    "    {\"variant\": \"base\", \"build\": {\"id\": 1, \"found\": true, \"kind\": \"build\", \"status\": \"ok\", "
	    "\"kernelrelease\": \"6.1.192-kab1\", \"tree\": \"/src/linux\", \"base_ref\": \"v6.1-debian\", "
	    "\"base_sha\": \"" SHA
	    "\", \"series\": null, \"image\": null, \"track\": null, \"patches\": []}, \"boots\": 3, \"failed_boots\": 0},\n");
	has("json", json,
	    "\"series\": \"" SERIES "\", \"image\": null, \"track\": null, \"patches\": [{\"subject\": \"" SUBJECT1
	    "\", \"message_id\": \"" MSGID1 "\"}, {\"subject\": \"" SUBJECT2 "\", \"message_id\": \"" MSGID2 "\"}]}");
	has("json", json, "\"runs_by_boot\": [\n    {\"variant\": \"base\", \"slot\": 1, \"boot_id\": "
			  "\"a0000001-1111-2222-3333-444444444444\", \"build_id\": 1, \"kernel_release\": \"6.1.192-kab1\", \"runs\": "
			  "[{\"id\": 1, \"workload\": \"w\", \"pair\": 1, \"status\": \"ok\", \"kernel_release\": \"6.1.192-kab1\", "
			  "\"wrong_kernel\": false}, {\"id\": 2, ");
	has("json", json, "\n  ],\n  \"kernel_warnings\": []\n}\n");
	lacks("json", json, "nan");
	free(json);
	report_free(r);
}

static const char *const warnings[] = {
	"run 14 of variant base ran on build 2's kernel (6.1.192-kab2), not on build 1's (6.1.192-kab1)",
	"run 15 of variant patched ran on build 1's kernel (6.1.192-kab1): boot 1 of the plan was a boot of variant base",
	"run 15 of variant patched was planned for boot 2 of the plan but ran in boot 1",
	"run 16 of variant patched ran in boot deadbeef, which is none of the job's recorded boots",
	"run 17 of variant patched ran on a kernel command line marked kab.build=1, not build 2",
};

static void check_planted(struct store *st, int64_t id)
{
	struct report *r = load(st, id);
	if (!r)
		return;
	T_EQ_INT(r->n_kernel_warnings, ARRAY_SIZE(warnings));
	for (size_t i = 0; i < r->n_kernel_warnings && i < ARRAY_SIZE(warnings); i++)
		T_EQ_STR(r->kernel_warnings[i], warnings[i]);
	char *text = t_render(r, REPORT_TEXT);
	has("planted text", text, "\nWARNING: runs or boots not on their variant's kernel (this must never happen; the tables below still count these runs):\n"
				  "  run 14 of variant base ran on build 2's kernel (6.1.192-kab2), not on build 1's (6.1.192-kab1)\n");
	/* the warning comes before the tables */
	T_CHECK(text && strstr(text, "WARNING") && strstr(text, "Before: base") && strstr(text, "WARNING") < strstr(text, "Before: base"));
	has("planted text", text, "  base: boot 1 (boot_id c0000001, build 1, 6.1.192-kab1): runs 13 ok, "
				  "14 ok [WRONG, see WARNING], 15 ok [WRONG, see WARNING]\n");
	has("planted text", text, "  patched: boot 2 (boot_id c0000002, build 2, 6.1.192-kab2): no runs\n");
	has("planted text", text, "  patched: boot 3 (boot_id c0000003, build 2, 6.1.192-kab2): runs 17 ok [WRONG, see WARNING], 18 ok\n");
	has("planted text", text, "  patched: a boot the job did not record (boot_id deadbeef, 6.1.192-kab2): run 16 ok [WRONG, see WARNING]\n");
	free(text);
	char *cover = t_render(r, REPORT_COVER_LETTER);
	has("planted cover letter", cover, "WARNING: runs or boots not on their variant's kernel. This must never\n"
					   "happen; the tables below still count these runs:\n"
					   "  run 14 of variant base ran on build 2's kernel (6.1.192-kab2), not on build 1's (6.1.192-kab1)\n");
	free(cover);
	char *json = t_render(r, REPORT_JSON);
	has("planted json", json, "{\"id\": 14, \"workload\": \"w\", \"pair\": 1, \"status\": \"ok\", \"kernel_release\": \"6.1.192-kab2\", \"wrong_kernel\": true}");
	has("planted json", json, "{\"variant\": \"patched\", \"slot\": null, \"boot_id\": \"deadbeef-0000-0000-0000-000000000000\", \"build_id\": null,");
	has("planted json", json, "\"kernel_warnings\": [\"run 14 of variant base ran on build 2's kernel (6.1.192-kab2), not on build 1's (6.1.192-kab1)\", ");
	free(json);
	report_free(r);
}

/* 60 wrong runs: 50 warning lines and how many more */
static void check_swapped(struct store *st, int64_t id)
{
	struct report *r = load(st, id);
	if (!r)
		return;
	T_EQ_INT(r->n_kernel_warnings, 51);
	if (r->n_kernel_warnings == 51) {
		T_EQ_STR(r->kernel_warnings[49], "run 74 of variant patched ran on build 1's kernel (6.1.192-kab1), not on build 2's (6.1.192-kab2)");
		T_EQ_STR(r->kernel_warnings[50], "... and 10 more like these (the JSON's runs_by_boot marks every such run wrong_kernel)");
	}
	size_t wrong = 0;
	for (size_t i = 0; i < r->n_run_boots; i++)
		for (size_t k = 0; k < r->run_boots[i].n_runs; k++)
			wrong += r->run_boots[i].runs[k].wrong;
	T_EQ_INT(wrong, 60);
	report_free(r);
}

static void check_images(struct store *st, int64_t id)
{
	struct report *r = load(st, id);
	if (!r)
		return;
	char *text = t_render(r, REPORT_TEXT);
	has("image text", text, "\nKernels:\n  distro: build 3, 6.1.0-57-amd64, a registered image: " IMAGE " (no tree or base)\n"
				"  other: build 4, 6.1.0-58-amd64, a registered image: /boot/vmlinuz-6.1.0-58-amd64 (no tree or base)\n");
	has("image text", text, "\nRuns by boot:\n  (no boot came up and no run was recorded)\n");
	has("image text", text, "\nBoots:\n  distro: build 3 (6.1.0-57-amd64): 0 boots, 0 failed\n");
	free(text);
	char *cover = t_render(r, REPORT_COVER_LETTER);
	has("image cover letter", cover, "  Base: the image " IMAGE ", 6.1.0-57-amd64\n"
					 "  other: the image /boot/vmlinuz-6.1.0-58-amd64, 6.1.0-58-amd64\n"
					 "  0 boots of each kernel, ABBA\n");
	free(cover);
	char *json = t_render(r, REPORT_JSON);
	has("image json", json,
	    "{\"variant\": \"distro\", \"build\": {\"id\": 3, \"found\": true, \"kind\": \"image\", \"status\": \"ok\", "
	    "\"kernelrelease\": \"6.1.0-57-amd64\", \"tree\": null, \"base_ref\": null, \"base_sha\": null, "
	    "\"series\": null, \"image\": \"" IMAGE "\", \"track\": null, \"patches\": []}");
	free(json);
	report_free(r);
}

/* A job with its warm-up: one run in the first boot, before the first
 * pair's, on base's kernel (no switch of its own), listed with that boot's
 * runs and in the run counts, and in no boot's median. */
static void check_warm(struct store *st, int64_t id)
{
	struct store_run *runs = NULL;
	size_t nr = 0;
	T_EQ_INT(store_runs_load(st, id, &runs, &nr), 0);
	T_EQ_INT(nr, 13);
	long long first = nr ? (long long)runs[0].id : 0;
	if (nr) {
		T_EQ_INT(runs[0].status, RUN_WARMUP);
		T_EQ_INT(runs[0].pair, STORE_PAIR_WARMUP);
		T_EQ_INT(runs[0].variant, 0);
		T_EQ_STR(runs[0].boot_id, runs[1].boot_id); /* the first pair's boot */
	}
	free(runs);
	struct report *r = load(st, id);
	if (!r)
		return;
	T_EQ_INT(r->n_kernel_warnings, 0);
	T_EQ_INT(r->n_run_boots, 6);
	T_EQ_INT(r->w[0].pairs, 3);
	T_EQ_INT(r->w[0].runs[0 * RUN_STATUS_N + RUN_WARMUP], 1);
	if (r->w[0].n_metrics > 0) {
		T_EQ_INT(r->w[0].m[0].desc[0].n, 3); /* the boots, not the warm-up */
		T_CHECK(r->w[0].m[0].desc[0].max < 200);
	}
	char want[512];
	char *text = t_render(r, REPORT_TEXT);
	snprintf(want, sizeof(want), "\nRuns by boot:\n  base: boot 1 (boot_id i0000001, build 1, 6.1.192-kab1): runs %lld warmup, %lld ok, %lld ok\n",
		 first, first + 1, first + 2);
	has("warm text", text, want);
	has("warm text", text,
	    "\nRuns: base 6 ok 1 warmup; patched 6 ok\n"
	    "Warm-up: 1 uncounted run of base before the first pair (not in the pairs or the statistics)\n");
	lacks("warm text", text, "WARNING");
	free(text);
	char *json = t_render(r, REPORT_JSON);
	snprintf(want, sizeof(want),
		 "\"runs\": [{\"id\": %lld, \"workload\": \"w\", \"pair\": 0, \"status\": \"warmup\", "
		 "\"kernel_release\": \"6.1.192-kab1\", \"wrong_kernel\": false}, {\"id\": %lld, \"workload\": \"w\", \"pair\": 1, ",
		 first, first + 1);
	has("warm json", json, want);
	free(json);
	report_free(r);
}

/* A tracked variant's commit of the night, recorded on its variant row,
 * in the Kernels block, the cover letter's prose and the JSON. */
static void check_tracked(struct store *st, int64_t id)
{
	struct store_track t = { .track = "origin mm-unstable",
				 .sha = "1234567890abcdef1234567890abcdef12345678",
				 .subject = "mm: a commit of the night",
				 .date = 1767225600,
				 .event = "force-pushed: aaaaaaaaaaaa is not an ancestor of 1234567890ab" };
	T_EQ_INT(store_variant_track_set(st, id, 1, &t), 0);
	struct report *r = load(st, id);
	if (!r)
		return;
	T_CHECK(r->kernels && strcmp(r->kernels[1].track.sha, t.sha) == 0 && !r->kernels[0].track.track[0]);
	char *text = t_render(r, REPORT_TEXT);
	has("tracked text", text,
	    "    tracks origin mm-unstable: 1234567890ab \"mm: a commit of the night\" (committed 2026-01-01T00:00:00");
	has("tracked text", text, "; force-pushed: aaaaaaaaaaaa is not an ancestor of 1234567890ab\n");
	free(text);
	char *cover = t_render(r, REPORT_COVER_LETTER);
	has("tracked cover", cover, "origin mm-unstable at 1234567890ab (\"mm: a commit of the night\")");
	free(cover);
	char *json = t_render(r, REPORT_JSON);
	has("tracked json", json,
	    "\"track\": {\"track\": \"origin mm-unstable\", \"sha\": \"1234567890abcdef1234567890abcdef12345678\", "
	    "\"subject\": \"mm: a commit of the night\", \"commit_date\": 1767225600, "
	    "\"event\": \"force-pushed: aaaaaaaaaaaa is not an ancestor of 1234567890ab\"}, \"patches\"");
	free(json);
	report_free(r);
}

int main(void)
{
	log_quiet = true;
	/* TEST_REPORT_BOOTS_DB=PATH keeps the database there, for a look with kab report */
	char path[256];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-report-boots-XXXXXX", "TEST_REPORT_BOOTS_DB");
	struct store *st = NULL;
	T_EQ_INT(store_open(path, &st), 0);
	if (!st)
		return t_done("test_report_boots");
	int64_t b1 = add_build(st, "build", "6.1.192-kab1", NULL, NULL);
	int64_t b2 = add_build(st, "build", "6.1.192-kab2", SERIES,
			       SUBJECT1 "\t" MSGID1 "\n" SUBJECT2 "\t" MSGID2 "\n");
	int64_t i1 = add_build(st, "image", "6.1.0-57-amd64", IMAGE, NULL);
	int64_t i2 = add_build(st, "image", "6.1.0-58-amd64", "/boot/vmlinuz-6.1.0-58-amd64", NULL);
	T_CHECK(b1 == 1 && b2 == 2 && i1 == 3 && i2 == 4);
	T_EQ_INT(strlen(SHA), 40);
	const int64_t builds[2] = { b1, b2 }, images[2] = { i1, i2 };
	const char *const releases[2] = { "6.1.192-kab1", "6.1.192-kab2" };
	const char *const image_releases[2] = { "6.1.0-57-amd64", "6.1.0-58-amd64" };
	int64_t clean = make_job(st, build_job, builds, releases, 'a', PLANT_NONE, true);
	int64_t planted = make_job(st, build_job, builds, releases, 'c', PLANT_WRONG, true);
	int64_t imgs = make_job(st, image_job, images, image_releases, 'e', PLANT_NONE, false);
	int64_t swapped = make_job(st, many_job, builds, releases, 'g', PLANT_SWAPPED, true);
	int64_t warm = make_job(st, warm_job, builds, releases, 'i', PLANT_NONE, true);
	T_CHECK(clean == 1 && planted == 2 && imgs == 3 && swapped == 4 && warm == 5);
	check_clean(st, clean);
	check_planted(st, planted);
	check_images(st, imgs);
	check_swapped(st, swapped);
	check_tracked(st, clean);
	check_warm(st, warm);
	store_close(st);
	if (!getenv("TEST_REPORT_BOOTS_DB")) {
		unlink(path);
		char aux[300];
		snprintf(aux, sizeof(aux), "%s-wal", path);
		unlink(aux);
		snprintf(aux, sizeof(aux), "%s-shm", path);
		unlink(aux);
	}
	return t_done("test_report_boots");
}
