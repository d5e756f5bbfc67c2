/* kab export --kcidb: stored jobs, ended, as KCIDB v5 submissions, parsed
 * back with jansson and held to the schema's rules as written below (the
 * required fields and the properties each object may have, the id,
 * origin, path, status and hash patterns, no null anywhere, a unit on
 * every number), each parent id an object of the submission; a job on the
 * running kernel, one that boots kab's builds, one that boots images and
 * one of three variants whose third alone has a metric (MISS and SKIP);
 * the ids and statuses of the first against a golden list; the same job
 * exported twice the same; and what is refused, with nothing written. */
#include "t_job.h"
#include "harness/exec/executor.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
#include "harness/report/kcidb.h"
#include "db/store.h"
#include "db/store_boots.h"
#include "db/store_builds.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

#include <errno.h>
#include <jansson.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#define SHA "71864f7f0e85c2a3d5e6f7a8b9c0d1e2f3a4b5c6"
#define TREE "https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git"
#define SERIES "lore:20260611105124.98668-1-baohua@kernel.org v2"
#define SUBJECT1 "[PATCH v2 1/2] mm: avoid unnecessary lru drain"
#define SUBJECT2 "[PATCH v2 2/2] mm: remove lru_add_drain in do_swap_page"
#define MSGID1 "<20260611105124.98668-2-baohua@kernel.org>"
#define MSGID2 "<20260611105124.98668-3-baohua@kernel.org>"

/* ---- the schema's rules (KCIDB I/O schema v5.0 to v5.3, kcidb_io/schema/v05_0*.py) ---- */

#define RE_ORIGIN "^[a-z0-9_]+$"
#define RE_ID "^[a-z0-9_]+:"
#define RE_PATH "^([a-zA-Z0-9_-]+(\\.[a-zA-Z0-9_-]+)*)?$"
#define RE_SHA1 "^[0-9a-f]{40}$"
#define RE_TIME "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$"
#define RE_ARCH "^[a-z0-9_]*$"

static const char *const statuses[] = { "FAIL", "ERROR", "MISS", "PASS", "DONE", "SKIP", NULL };

/* The properties of each object the schema (v5.0) has; it allows no other. */
static const char *const checkout_props[] = { "_timestamp",
					      "id",
					      "origin",
					      "tree_name",
					      "git_repository_url",
					      "git_commit_hash",
					      "git_commit_name",
					      "git_commit_tags",
					      "git_commit_message",
					      "git_repository_branch",
					      "git_repository_branch_tip",
					      "patchset_files",
					      "patchset_hash",
					      "message_id",
					      "comment",
					      "start_time",
					      "log_url",
					      "log_excerpt",
					      "valid",
					      "misc",
					      NULL };
static const char *const build_props[] = { "_timestamp",  "checkout_id",  "id",           "origin",     "comment",
					   "start_time",  "duration",     "architecture", "command",    "compiler",
					   "input_files", "output_files", "config_name",  "config_url", "log_url",
					   "log_excerpt", "status",       "misc",         NULL };
static const char *const test_props[] = { "_timestamp",  "build_id",     "id",      "origin",
					  "environment", "path",         "comment", "log_url",
					  "log_excerpt", "status",       "number",  "start_time",
					  "duration",    "output_files", "misc",    NULL };
static const char *const env_props[] = { "compatible", "comment", "misc", NULL };
static const char *const number_props[] = { "value", "unit", "prefix", NULL };
static const char *const top_props[] = { "version", "checkouts", "builds", "tests", "issues", "incidents", NULL };

static bool in(const char *const *set, const char *s)
{
	for (; *set; set++)
		if (strcmp(*set, s) == 0)
			return true;
	return false;
}

static bool matches(const char *re, const char *s)
{
	regex_t rx;
	if (regcomp(&rx, re, REG_EXTENDED | REG_NOSUB) != 0)
		return false;
	bool ok = regexec(&rx, s, 0, NULL, 0) == 0;
	regfree(&rx);
	return ok;
}

/* Says which object broke which rule. */
static void rule(bool ok, const char *id, const char *what)
{
	if (ok) {
		t_passed++;
		return;
	}
	t_failed++;
	fprintf(stderr, "%s: %s\n", id ? id : "(no id)", what);
}

static void only_props(json_t *o, const char *const *allowed, const char *id, const char *kind)
{
	const char *key;
	json_t *v;
	json_object_foreach(o, key, v)
	{
		char what[160];
		snprintf(what, sizeof(what), "%s has property \"%s\", which the schema does not allow", kind, key);
		rule(in(allowed, key), id, what);
	}
}

/* No null and no NUL inside a string, anywhere (misc too). */
static void no_null(json_t *v, const char *id)
{
	rule(!json_is_null(v), id, "a null value");
	if (json_is_string(v))
		rule(json_string_length(v) == strlen(json_string_value(v)), id, "a string holding NUL");
	const char *key;
	json_t *x;
	size_t i;
	if (json_is_object(v))
		json_object_foreach(v, key, x) no_null(x, id);
	if (json_is_array(v))
		json_array_foreach(v, i, x) no_null(x, id);
}

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* id and origin: present, strings, the patterns, the id's origin the object's. */
static const char *id_origin(json_t *o, const char *kind, const char *want_origin)
{
	const char *id = str(o, "id"), *origin = str(o, "origin");
	char what[96];
	snprintf(what, sizeof(what), "%s without a string id and origin", kind);
	rule(id && origin, id, what);
	if (!id || !origin)
		return id;
	rule(matches(RE_ID, id), id, "id does not match ^ORIGIN:");
	rule(matches(RE_ORIGIN, origin), id, "origin does not match ^[a-z0-9_]+$");
	rule(strncmp(id, origin, strlen(origin)) == 0 && id[strlen(origin)] == ':', id, "id does not start with its origin");
	rule(strcmp(origin, want_origin) == 0, id, "origin is not the one asked for");
	return id;
}

static void opt_time(json_t *o, const char *key, const char *id)
{
	json_t *t = json_object_get(o, key);
	if (t)
		rule(json_is_string(t) && matches(RE_TIME, json_string_value(t)), id, "a time that is not RFC 3339");
}

static void opt_status(json_t *o, const char *id)
{
	json_t *s = json_object_get(o, "status");
	if (s)
		rule(json_is_string(s) && in(statuses, json_string_value(s)), id, "a status the schema does not have");
}

static void opt_number(json_t *o, const char *key, const char *id)
{
	json_t *n = json_object_get(o, key);
	if (n)
		rule(json_is_number(n), id, "a duration that is no number");
}

static void opt_misc(json_t *o, const char *id)
{
	json_t *m = json_object_get(o, "misc");
	if (m)
		rule(json_is_object(m), id, "misc is no object");
}

/* Whether some object of arr has that id. */
static bool has_id(json_t *arr, const char *id)
{
	size_t i;
	json_t *x;
	json_array_foreach(arr, i, x) if (id && str(x, "id") && strcmp(str(x, "id"), id) == 0) return true;
	return false;
}

static void unique_ids(json_t *arr, const char *kind)
{
	size_t i, k;
	json_t *x, *y;
	json_array_foreach(arr, i, x) json_array_foreach(arr, k, y) if (k > i && str(x, "id") && str(y, "id"))
		rule(strcmp(str(x, "id"), str(y, "id")) != 0, str(x, "id"), kind);
}

/* The whole submission against the schema's rules; its root, or NULL. */
static json_t *check_schema(const char *text, const char *origin)
{
	json_error_t je;
	json_t *root = json_loads(text ? text : "", 0, &je);
	rule(root && json_is_object(root), NULL, "the export is no JSON object");
	if (!root || !json_is_object(root)) {
		fprintf(stderr, "line %d: %s\n", je.line, je.text);
		json_decref(root);
		return NULL;
	}
	no_null(root, "(the submission)");
	only_props(root, top_props, "(the submission)", "the submission");
	json_t *ver = json_object_get(root, "version");
	rule(json_is_integer(json_object_get(ver, "major")) && json_integer_value(json_object_get(ver, "major")) == 5,
	     NULL, "version.major is not 5");
	json_t *minor = json_object_get(ver, "minor");
	rule(!minor || (json_is_integer(minor) && json_integer_value(minor) >= 0 && json_integer_value(minor) <= 3),
	     NULL, "version.minor is not 0 to 3");
	only_props(ver, (const char *const[]){ "major", "minor", NULL }, "(version)", "version");
	json_t *cs = json_object_get(root, "checkouts"), *bs = json_object_get(root, "builds"),
	       *ts = json_object_get(root, "tests");
	rule(json_is_array(cs) && json_is_array(bs) && json_is_array(ts), NULL, "checkouts, builds or tests is no array");
	size_t i;
	json_t *o;
	json_array_foreach(cs, i, o)
	{
		const char *id = id_origin(o, "checkout", origin);
		only_props(o, checkout_props, id, "a checkout");
		json_t *h = json_object_get(o, "git_commit_hash"), *u = json_object_get(o, "git_repository_url");
		if (h)
			rule(json_is_string(h) && matches(RE_SHA1, json_string_value(h)), id, "git_commit_hash is no SHA-1");
		if (u)
			rule(json_is_string(u) && strncmp(json_string_value(u), "https://", 8) == 0, id,
			     "git_repository_url is no https:// URL");
		json_t *m = json_object_get(o, "message_id");
		if (m)
			rule(json_is_string(m) && strchr(json_string_value(m), '@'), id, "message_id is no e-mail form");
		json_t *valid = json_object_get(o, "valid");
		if (valid)
			rule(json_is_boolean(valid), id, "valid is no boolean");
		opt_time(o, "start_time", id);
		opt_misc(o, id);
	}
	json_array_foreach(bs, i, o)
	{
		const char *id = id_origin(o, "build", origin);
		only_props(o, build_props, id, "a build");
		const char *parent = str(o, "checkout_id");
		rule(parent && matches(RE_ID, parent), id, "a build without a checkout_id of the id pattern");
		rule(has_id(cs, parent), id, "checkout_id names no checkout of the submission");
		json_t *a = json_object_get(o, "architecture");
		if (a)
			rule(json_is_string(a) && matches(RE_ARCH, json_string_value(a)), id, "a bad architecture");
		opt_status(o, id);
		opt_time(o, "start_time", id);
		opt_number(o, "duration", id);
		json_t *ex = json_object_get(o, "log_excerpt");
		if (ex)
			rule(json_is_string(ex) && json_string_length(ex) <= 16384, id, "log_excerpt past 16384");
		opt_misc(o, id);
	}
	json_array_foreach(ts, i, o)
	{
		const char *id = id_origin(o, "test", origin);
		only_props(o, test_props, id, "a test");
		const char *parent = str(o, "build_id");
		rule(parent && matches(RE_ID, parent), id, "a test without a build_id of the id pattern");
		rule(has_id(bs, parent), id, "build_id names no build of the submission");
		const char *path = str(o, "path");
		rule(path && matches(RE_PATH, path), id, "a path that does not match the schema's");
		opt_status(o, id);
		opt_time(o, "start_time", id);
		opt_number(o, "duration", id);
		json_t *n = json_object_get(o, "number");
		if (n) {
			rule(json_is_object(n) && json_is_number(json_object_get(n, "value")), id, "number without a value");
			only_props(n, number_props, id, "a number");
			/* kab's every number has a unit (the schema's is optional) */
			rule(str(n, "unit") && str(n, "unit")[0], id, "a number without its unit");
		}
		json_t *env = json_object_get(o, "environment");
		if (env) {
			rule(json_is_object(env), id, "environment is no object");
			only_props(env, env_props, id, "an environment");
			opt_misc(env, id);
		}
		opt_misc(o, id);
	}
	unique_ids(cs, "two checkouts with one id");
	unique_ids(bs, "two builds with one id");
	unique_ids(ts, "two tests with one id");
	return root;
}

/* ---- jobs in a store ---- */

static const char running_job[] = "[job]\nname = unit-kcidb\npairs = 8\norder = abba\nwarmup = 0\n"
				  "primary = time.wall_s\n"
				  "[swap]\ndevice = none\n"
				  "[variant A]\nname = base\n"
				  "[variant B]\nname = tuned\nsysctl vm.swappiness = 10\n"
				  "[workload w]\ntype = command\ncommand = true\n";

static const char three_job[] = "[job]\nname = unit-kcidb-three\npairs = 6\norder = abba\nwarmup = 0\n"
				"[swap]\ndevice = none\n"
				"[variant A]\nname = base\n[variant B]\nname = tuned\n[variant C]\nname = other\n"
				"[workload w]\ntype = command\ncommand = true\n";

static const char image_job[] = "[job]\nname = unit-kcidb-images\nboots = 2\nswitch = kexec\nwarmup = 0\n"
				"[swap]\ndevice = none\n"
				"[variant A]\nname = distro\nkernel = image\nimage = /boot/vmlinuz-6.1.0-57-amd64\n"
				"[variant B]\nname = other\nkernel = image\nimage = /boot/vmlinuz-6.1.0-58-amd64\n"
				"[workload w]\ntype = command\ncommand = true\n";

static const char build_job[] = "[job]\nname = unit-kcidb-kernels\nboots = 6\nswitch = kexec\nwarmup = 0\n"
				"archive = https://lore.kernel.org/all\n"
				"[swap]\ndevice = none\n"
				"[variant A]\nname = base\nkernel = build\ntree = " TREE "\nbase = v6.1\nconfig = defconfig\n"
				"[variant B]\nname = patched\nkernel = build\ntree = " TREE "\nbase = v6.1\nconfig = defconfig\n"
				"series = " SERIES "\n"
				"[workload w]\ntype = command\ncommand = true\n";

/* A finished run of step s with two metrics: the wall time (B's 30%
 * longer: worse) and a count with no good direction (B's 10% more:
 * changed). */
static int add_run(struct store *st, int64_t job, const struct store_step *s, const char *release, const char *boot_id)
{
	struct store_run run = { .job_id = job,
				 .step_id = s->id,
				 .pair = s->pair,
				 .variant = s->variant,
				 .workload = s->workload,
				 .cpus = 2,
				 .cgroup_version = 2,
				 .mem_total = 8ull << 30 };
	snprintf(run.kernel_release, sizeof(run.kernel_release), "%s", release);
	snprintf(run.boot_id, sizeof(run.boot_id), "%s", boot_id);
	run.started = 1767225600.0 + 10.0 * s->seq; /* recorded at its start */
	int64_t rid;
	int r = store_run_begin(st, &run, &rid);
	if (r < 0)
		return r;
	run.id = rid;
	run.status = RUN_OK;
	run.finished = run.started + 2;
	double wall = 0.3 * (1 + 0.01 * (double)(s->pair % 3)) * (s->variant ? 1.3 : 1.0);
	struct wl_metrics m = { 0 };
	wl_metrics_add(&m, "time.wall_s", "s", wall);
	wl_metrics_add(&m, "command.items", "items", (100 + s->pair) * (s->variant ? 1.1 : 1.0));
	if (s->variant == 2) /* a metric only the third variant has */
		wl_metrics_add(&m, "command.only_c", "items", 5 + s->pair);
	r = store_run_finish(st, &run, STEP_FINISHED, m.v, m.n, NULL, 0);
	wl_metrics_free(&m);
	return r;
}

static int64_t add_build(struct store *st, const char *release, const char *series, const char *patches)
{
	struct store_build b = { .tree = TREE,
				 .base_ref = "v6.1",
				 .series = (char *)series,
				 .patches = (char *)patches,
				 .config_source = "defconfig",
				 .compiler = "gcc (Debian 12.2.0-14) 12.2.0" };
	snprintf(b.kind, sizeof(b.kind), "build");
	snprintf(b.base_sha, sizeof(b.base_sha), "%s", SHA);
	snprintf(b.config_hash, sizeof(b.config_hash), "c0ffee");
	snprintf(b.inputs_key, sizeof(b.inputs_key), "key-%s", release);
	if (series)
		snprintf(b.series_hash, sizeof(b.series_hash), "%064d", 7);
	int64_t id = 0;
	if (store_build_begin(st, &b, &id) < 0)
		return 0;
	b.id = id;
	b.status = BUILD_OK;
	b.duration_s = 321.5;
	snprintf(b.kernelrelease, sizeof(b.kernelrelease), "%s", release);
	return store_build_finish(st, &b) < 0 ? 0 : id;
}

/* A kernel image the job names, registered as kab registers one. */
static int64_t add_image(struct store *st, const char *release, const char *file)
{
	struct store_build b = { .tree = "", .base_ref = "", .series = (char *)file, .config_source = "image" };
	snprintf(b.kind, sizeof(b.kind), "image");
	snprintf(b.inputs_key, sizeof(b.inputs_key), "key-%s", release);
	int64_t id = 0;
	if (store_build_begin(st, &b, &id) < 0)
		return 0;
	b.id = id;
	b.status = BUILD_OK;
	snprintf(b.kernelrelease, sizeof(b.kernelrelease), "%s", release);
	return store_build_finish(st, &b) < 0 ? 0 : id;
}

/* A job of text with a run per step (on builds, a boot per boot slot),
 * left with status `status`. */
static int64_t make_job(struct store *st, const char *text, const int64_t *builds, const char *const *releases, enum job_status status)
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
	if (r == 0 && builds)
		r = store_variant_builds_set(st, id, builds, 2);
	int last = -1;
	char boot_id[64] = "";
	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct store_step *s = &steps[i];
		if (builds && s->boot != last) {
			snprintf(boot_id, sizeof(boot_id), "b%07d-1111-2222-3333-444444444444", s->boot + 1);
			struct store_boot b = { .job_id = id,
						.slot = s->boot,
						.variant = s->variant,
						.build_id = builds[s->variant],
						.switch_at = 1000 + s->boot };
			snprintf(b.method, sizeof(b.method), "kexec");
			snprintf(b.cmdline, sizeof(b.cmdline), "kab.build=%lld", (long long)builds[s->variant]);
			r = store_boot_begin(st, &b, &b.id);
			b.status = BOOT_OK;
			snprintf(b.boot_id, sizeof(b.boot_id), "%s", boot_id);
			snprintf(b.kernel_release, sizeof(b.kernel_release), "%s", releases[s->variant]);
			snprintf(b.booted_cmdline, sizeof(b.booted_cmdline), "%s", b.cmdline);
			b.ready_at = 2000 + s->boot;
			if (r == 0)
				r = store_boot_finish(st, &b);
			last = s->boot;
		}
		if (r == 0)
			r = add_run(st, id, s, releases[builds ? s->variant : 0], boot_id);
	}
	free(steps);
	job_free(j);
	if (r == 0 && status != JOB_QUEUED)
		r = store_job_set_status(st, id, JOB_RUNNING, NULL);
	if (r == 0 && status != JOB_QUEUED && status != JOB_RUNNING)
		r = store_job_set_status(st, id, status, NULL);
	return r < 0 ? 0 : id;
}

static char *export(struct store *st, int64_t id, const char *origin, int *ret)
{
	struct strbuf out = { 0 }, err = { 0 };
	*ret = kcidb_export(st, id, origin, &out, &err);
	if (*ret < 0) {
		T_CHECK(out.len == 0);
		T_CHECK(err.buf && err.len > 0);
		sb_free(&out);
		return err.buf; /* the reason, for the caller to check */
	}
	sb_free(&err);
	return out.buf;
}

/* The test whose id is that. */
static json_t *test_by_id(json_t *root, const char *id)
{
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(root, "tests"), i, o) if (str(o, "id") && strcmp(str(o, "id"), id) == 0) return o;
	fprintf(stderr, "no test %s\n", id);
	return NULL;
}

/* What the running job's submission must be, id by id: every test with
 * its status and path (the numbers are the statistics', tested there). */
static const char running_golden[] = "checkout unit:1/checkout/base\n"
				     "build unit:1/build/base <- unit:1/checkout/base\n"
				     "test unit:1/test/base/w/time.wall_s DONE kab.w.time.wall_s s\n"
				     "test unit:1/test/tuned/w/time.wall_s DONE kab.w.time.wall_s s\n"
				     "test unit:1/compare/tuned/w/time.wall_s FAIL kab_ab.w.time.wall_s %\n"
				     "test unit:1/test/base/w/command.items DONE kab.w.command.items items\n"
				     "test unit:1/test/tuned/w/command.items DONE kab.w.command.items items\n"
				     "test unit:1/compare/tuned/w/command.items DONE kab_ab.w.command.items %\n";

static char *shape(json_t *root)
{
	struct strbuf sb = { 0 };
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(root, "checkouts"), i, o) sb_printf(&sb, "checkout %s\n", str(o, "id"));
	json_array_foreach(json_object_get(root, "builds"), i, o)
		sb_printf(&sb, "build %s <- %s\n", str(o, "id"), str(o, "checkout_id"));
	json_array_foreach(json_object_get(root, "tests"), i, o)
		sb_printf(&sb, "test %s %s %s %s\n", str(o, "id"), str(o, "status"), str(o, "path"),
			  str(json_object_get(o, "number"), "unit"));
	return sb.buf;
}

static void test_running(struct store *st, int64_t id)
{
	int r;
	char *text = export(st, id, "unit", &r);
	T_EQ_INT(r, 0);
	json_t *root = check_schema(text, "unit");
	if (!root) {
		free(text);
		return;
	}
	char *s = shape(root);
	T_EQ_STR(s, running_golden);
	free(s);
	/* one running kernel: one checkout, one build, with no commit claimed */
	json_t *c = json_array_get(json_object_get(root, "checkouts"), 0);
	T_CHECK(!json_object_get(c, "git_commit_hash") && !json_object_get(c, "git_repository_url"));
	T_EQ_STR(str(json_object_get(c, "misc"), "kernel"), "running");
	T_EQ_STR(str(json_object_get(c, "misc"), "kernel_release"), "6.1.0-unit");
	json_t *b = json_array_get(json_object_get(root, "builds"), 0);
	T_CHECK(!json_object_get(b, "status"));
	/* the comparison: kab's verdict, estimate, CI and p under misc */
	json_t *cmp = test_by_id(root, "unit:1/compare/tuned/w/time.wall_s");
	json_t *misc = json_object_get(cmp, "misc");
	T_EQ_STR(str(misc, "verdict"), "worse");
	T_EQ_STR(str(misc, "baseline"), "base");
	T_EQ_STR(str(misc, "direction"), "lower");
	T_CHECK(json_is_true(json_object_get(misc, "primary")));
	T_EQ_INT(json_integer_value(json_object_get(misc, "pairs")), 8);
	double est = json_number_value(json_object_get(misc, "estimate_pct"));
	T_NEAR(est, 30.0, 0.5);
	T_NEAR(json_number_value(json_object_get(json_object_get(cmp, "number"), "value")), est, 1e-9);
	T_CHECK(json_number_value(json_object_get(misc, "ci_low_pct")) > 0 &&
		json_number_value(json_object_get(misc, "ci_high_pct")) >= est);
	T_CHECK(json_number_value(json_object_get(misc, "p_value")) < 0.05);
	T_CHECK(json_is_number(json_object_get(misc, "q_value")) && json_is_string(json_object_get(misc, "test")));
	/* a value: the mean as the number, the variant's knobs as its environment */
	json_t *v = test_by_id(root, "unit:1/test/tuned/w/time.wall_s");
	T_NEAR(json_number_value(json_object_get(json_object_get(v, "number"), "value")), 0.39 * 1.01, 0.004);
	T_EQ_INT(json_integer_value(json_object_get(json_object_get(v, "misc"), "n")), 8);
	json_t *env = json_object_get(v, "environment");
	T_EQ_STR(str(json_object_get(json_object_get(env, "misc"), "knobs"), "vm.swappiness"), "10");
	T_EQ_STR(str(env, "comment"), "variant tuned: vm.swappiness = 10");
	T_EQ_STR(str(v, "start_time"), "2026-01-01T00:00:10Z");
	T_NEAR(json_number_value(json_object_get(v, "duration")), 16, 1e-9);
	/* the same job, the same text; another origin, the same objects under it */
	char *again = export(st, id, "unit", &r);
	T_EQ_STR(again, text);
	free(again);
	char *other = export(st, id, "kab_lab1", &r);
	json_t *root2 = check_schema(other, "kab_lab1");
	T_CHECK(root2 && json_array_size(json_object_get(root2, "tests")) == 6);
	T_CHECK(other && strstr(other, "\"kab_lab1:1/compare/tuned/w/time.wall_s\""));
	json_decref(root2);
	free(other);
	json_decref(root);
	free(text);
}

static void test_builds(struct store *st, int64_t id)
{
	int r;
	char *text = export(st, id, KCIDB_ORIGIN_DEFAULT, &r);
	T_EQ_INT(r, 0);
	json_t *root = check_schema(text, "kab");
	if (!root) {
		free(text);
		return;
	}
	json_t *cs = json_object_get(root, "checkouts"), *bs = json_object_get(root, "builds");
	/* the same commit, one with a series: two checkouts, two builds */
	T_EQ_INT(json_array_size(cs), 2);
	T_EQ_INT(json_array_size(bs), 2);
	json_t *base = json_array_get(cs, 0), *patched = json_array_get(cs, 1);
	T_EQ_STR(str(base, "id"), "kab:2/checkout/base");
	T_EQ_STR(str(base, "git_commit_hash"), SHA);
	T_EQ_STR(str(base, "git_repository_url"), TREE);
	T_CHECK(json_is_true(json_object_get(base, "valid")));
	T_CHECK(!json_object_get(base, "message_id"));
	T_EQ_STR(str(base, "comment"), "v6.1 (71864f7f0e85), no series");
	T_EQ_STR(str(patched, "message_id"), "20260611105124.98668-1-baohua@kernel.org");
	T_EQ_STR(str(patched, "comment"), "v6.1 (71864f7f0e85) + 2 patches of " SERIES);
	json_t *patches = json_object_get(json_object_get(patched, "misc"), "patches");
	T_EQ_INT(json_array_size(patches), 2);
	T_EQ_STR(str(json_array_get(patches, 1), "message_id"), MSGID2);
	json_t *b = json_array_get(bs, 1);
	T_EQ_STR(str(b, "id"), "kab:2/build/patched");
	T_EQ_STR(str(b, "checkout_id"), "kab:2/checkout/patched");
	T_EQ_STR(str(b, "status"), "PASS");
	T_EQ_STR(str(b, "compiler"), "gcc (Debian 12.2.0-14) 12.2.0");
	T_EQ_STR(str(b, "config_name"), "defconfig");
	T_NEAR(json_number_value(json_object_get(b, "duration")), 321.5, 1e-9);
	T_EQ_INT(json_integer_value(json_object_get(json_object_get(b, "misc"), "kab_build_id")), 2);
	T_EQ_STR(str(json_object_get(b, "misc"), "kernelrelease"), "6.1.192-kab2");
	/* each variant's tests hang off its own build */
	T_EQ_STR(str(test_by_id(root, "kab:2/test/base/w/time.wall_s"), "build_id"), "kab:2/build/base");
	T_EQ_STR(str(test_by_id(root, "kab:2/compare/patched/w/time.wall_s"), "build_id"), "kab:2/build/patched");
	json_decref(root);
	free(text);
}

/* A metric only the third variant has: against the baseline, nothing on
 * one side (MISS); the second against the baseline, nothing on either
 * (SKIP); its values only where there are some. */
static void test_three(struct store *st, int64_t id)
{
	int r;
	char *text = export(st, id, "kab", &r);
	T_EQ_INT(r, 0);
	json_t *root = check_schema(text, "kab");
	if (root) {
		T_EQ_INT(json_array_size(json_object_get(root, "checkouts")), 1);
		T_EQ_STR(str(test_by_id(root, "kab:4/compare/other/w/command.only_c"), "status"), "MISS");
		T_EQ_STR(str(test_by_id(root, "kab:4/compare/tuned/w/command.only_c"), "status"), "SKIP");
		T_CHECK(!json_object_get(test_by_id(root, "kab:4/compare/other/w/command.only_c"), "number"));
		T_CHECK(test_by_id(root, "kab:4/test/other/w/command.only_c") != NULL);
		T_CHECK(text && !strstr(text, "\"kab:4/test/base/w/command.only_c\""));
	}
	json_decref(root);
	free(text);
}

/* Kernel images: a checkout each that claims no source, a build each
 * with no status (kab registered them, it built nothing). */
static void test_images(struct store *st, int64_t id)
{
	int r;
	char *text = export(st, id, "kab", &r);
	T_EQ_INT(r, 0);
	json_t *root = check_schema(text, "kab");
	if (root) {
		json_t *cs = json_object_get(root, "checkouts"), *bs = json_object_get(root, "builds");
		T_EQ_INT(json_array_size(cs), 2);
		T_EQ_INT(json_array_size(bs), 2);
		json_t *c = json_array_get(cs, 1), *b = json_array_get(bs, 1);
		T_CHECK(!json_object_get(c, "git_commit_hash") && !json_object_get(c, "valid"));
		T_EQ_STR(str(json_object_get(c, "misc"), "image"), "/boot/vmlinuz-6.1.0-58-amd64");
		T_EQ_STR(str(b, "checkout_id"), "kab:5/checkout/other");
		T_CHECK(!json_object_get(b, "status") && !json_object_get(b, "compiler"));
		T_EQ_STR(str(json_object_get(b, "misc"), "kernelrelease"), "6.1.0-58-amd64");
		/* 30% slower, but below 6 pairs no verdict says worse: undecided */
		json_t *cmp = test_by_id(root, "kab:5/compare/other/w/time.wall_s");
		T_EQ_STR(str(cmp, "status"), "DONE");
		T_EQ_STR(str(json_object_get(cmp, "misc"), "verdict"), "undecided");
	}
	json_decref(root);
	free(text);
}

/* What kcidb_export refuses, each with its reason and nothing written. */
static void test_refused(struct store *st, int64_t running)
{
	int r;
	char *why = export(st, 99, "kab", &r);
	T_EQ_INT(r, -ENOENT);
	T_EQ_STR(why, "no job 99 in the database");
	free(why);
	why = export(st, running, "kab", &r);
	T_EQ_INT(r, -EBUSY);
	T_CHECK(why && strstr(why, "job 3 is running: it has not ended, so it has no report yet"));
	free(why);
	static const char *const bad[] = { "", "Kab", "kab-lab", "kab:1", "kab lab", "k\xc3\xa9", NULL };
	for (size_t i = 0; bad[i]; i++) {
		T_CHECK(!kcidb_origin_ok(bad[i]));
		why = export(st, 1, bad[i], &r);
		T_EQ_INT(r, -EINVAL);
		free(why);
	}
	char long_origin[KCIDB_ORIGIN_MAX + 2];
	memset(long_origin, 'a', sizeof(long_origin) - 1);
	long_origin[KCIDB_ORIGIN_MAX + 1] = '\0';
	T_CHECK(!kcidb_origin_ok(long_origin));
	long_origin[KCIDB_ORIGIN_MAX] = '\0';
	T_CHECK(kcidb_origin_ok(long_origin));
	T_CHECK(kcidb_origin_ok("kab") && kcidb_origin_ok("lab_2"));
}

int main(void)
{
	log_quiet = true;
	/* TEST_KCIDB_DB=PATH keeps the database there, for a look with kab export */
	char path[256];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-kcidb-XXXXXX", "TEST_KCIDB_DB");
	struct store *st = NULL;
	T_EQ_INT(store_open(path, &st), 0);
	if (!st)
		return t_done("test_kcidb");
	const char *const running_release[] = { "6.1.0-unit" };
	int64_t done = make_job(st, running_job, NULL, running_release, JOB_DONE);
	int64_t b1 = add_build(st, "6.1.192-kab1", NULL, NULL);
	int64_t b2 = add_build(st, "6.1.192-kab2", SERIES, SUBJECT1 "\t" MSGID1 "\n" SUBJECT2 "\t" MSGID2 "\n");
	const int64_t builds[2] = { b1, b2 };
	const char *const releases[2] = { "6.1.192-kab1", "6.1.192-kab2" };
	int64_t kernels = make_job(st, build_job, builds, releases, JOB_DONE);
	int64_t running = make_job(st, running_job, NULL, running_release, JOB_RUNNING);
	int64_t three = make_job(st, three_job, NULL, running_release, JOB_DONE);
	const int64_t images[2] = { add_image(st, "6.1.0-57-amd64", "/boot/vmlinuz-6.1.0-57-amd64"),
				    add_image(st, "6.1.0-58-amd64", "/boot/vmlinuz-6.1.0-58-amd64") };
	const char *const image_releases[2] = { "6.1.0-57-amd64", "6.1.0-58-amd64" };
	int64_t imgs = make_job(st, image_job, images, image_releases, JOB_DONE);
	T_CHECK(done == 1 && b1 == 1 && b2 == 2 && kernels == 2 && running == 3 && three == 4 && imgs == 5);
	test_running(st, done);
	test_builds(st, kernels);
	test_three(st, three);
	test_images(st, imgs);
	test_refused(st, running);
	store_close(st);
	return t_done("test_kcidb");
}
