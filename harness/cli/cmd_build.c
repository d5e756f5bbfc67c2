/* kab build JOB: builds the kernels of a job's kernel = build variants
 * (a variant with build = ID takes that recorded build, checked, and
 * builds nothing); kab builds: lists the recorded builds. */
#include "kernels/build.h"
#include "harness/job/kbuild_job.h"
#include "harness/cli/cmd.h"
#include "harness/base/config.h"
#include "harness/job/job.h"
#include "harness/base/statedir.h"
#include "db/store.h"
#include "db/store_builds.h"
#include "db/store_track.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void print_build(void *ctx, const char *variant, const struct kbuild_result *res)
{
	char line[512];
	if (res->recorded) {
		kbuild_recorded_describe(res, line, sizeof(line));
		esc_printf(stdout, "variant %s: %s\n", variant, line);
	} else if (res->reused)
		esc_printf(stdout, "variant %s: build %lld reused (same inputs), kernelrelease %s, %s\n", variant,
			   (long long)res->id, res->kernelrelease, res->image);
	else
		esc_printf(stdout, "variant %s: build %lld ok, kernelrelease %s, %lld objects compiled in %.0f s, %s\n", variant,
			   (long long)res->id, res->kernelrelease, (long long)res->objects, res->duration_s, res->image);
	fflush(stdout);
}

/* kab build records no night: it says what the branch's head is and how
 * it moved since the job's newest recorded night. */
static void print_tracked(void *ctx, const char *variant, const struct store_track *t)
{
	esc_printf(stdout, "variant %s: track %s at %s \"%s\"%s%s\n", variant, t->track, t->sha, t->subject,
		   t->event[0] ? "; " : "", t->event);
	fflush(stdout);
}

const struct option cmd_build_options[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "kernels-dir", required_argument, NULL, 'k' },
	{ "work-dir", required_argument, NULL, 'w' },
	{ "state-dir", required_argument, NULL, 's' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int cmd_build(int argc, char **argv)
{
	const char *db = NULL, *kernels = NULL, *work = NULL, *state_dir = NULL;
	uint64_t jobs = 0;
	int c;
	while ((c = getopt_long(argc, argv, "d:k:w:s:j:h", cmd_build_options, NULL)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 's': state_dir = optarg; break;
		case 'k': kernels = optarg; break;
		case 'w': work = optarg; break;
		case 'j':
			if (util_parse_u64(optarg, &jobs) < 0 || jobs == 0 || jobs > 1024) {
				fprintf(stderr, "kab build: --jobs \"%s\": expected a number from 1 to 1024\n", optarg);
				return 2;
			}
			break;
		case 'h':
			printf("usage: kab build JOB [--db PATH] [--kernels-dir DIR] [--work-dir DIR] [--state-dir DIR] [--jobs N]\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: kab build JOB [--db PATH] [--kernels-dir DIR] [--work-dir DIR] [--state-dir DIR] [--jobs N]\n");
		return 2;
	}
	/* the job's checks read kab's clone where the build will (a base
	 * fetched for a tracked branch is only there) */
	if (work) {
		struct diags wd = { 0 };
		int wr = config_use_flag(CONFIG_KBUILD_WORK, "--work-dir", work, &wd);
		if (wr < 0)
			diags_print(&wd, stderr);
		diags_free(&wd);
		if (wr < 0)
			return 2;
	}
	char db_buf[4096];
	if (!(db = cmd_db(db, state_dir, db_buf, sizeof(db_buf))))
		return 2;
	struct diags d = { 0 };
	struct job *j = NULL;
	if (job_parse_file_build(argv[optind], &j, &d) < 0) {
		diags_print(&d, stderr);
		diags_free(&d);
		return 2;
	}
	if (!job_has_builds(j)) {
		fprintf(stderr, "%s: no variant has kernel = build: nothing to build\n", j->file);
		job_free(j);
		return 2;
	}
	struct strbuf err = { 0 };
	/* without --state-dir the build opens the default when it needs it */
	if (state_dir && state_init(state_dir, &err) < 0) {
		esc_printf(stderr, "kab: %s\n", err.buf ? err.buf : "the state directory cannot be used");
		sb_free(&err);
		job_free(j);
		return 1;
	}
	struct store *st = NULL;
	if (store_open(db, &st) < 0) {
		job_free(j);
		return 1;
	}
	struct kbuild_opts o = { .work_dir = work, .kernels_dir = kernels, .jobs = (unsigned)jobs, .done = print_build, .tracked = print_tracked };
	int ret = 0, r = kbuild_job(st, j, &o, &err);
	if (r < 0) {
		esc_printf(stderr, "kab: %s\n", err.buf ? err.buf : strerror(-r));
		ret = r == -EINVAL || r == -ENOSPC ? 2 : 1;
	}
	sb_free(&err);
	store_close(st);
	job_free(j);
	return ret;
}

const struct option cmd_builds_options[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int cmd_builds(int argc, char **argv)
{
	const char *db = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "d:h", cmd_builds_options, NULL)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 'h': printf("usage: kab builds [--db PATH]\n"); return 0;
		default: return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "usage: kab builds [--db PATH]\n");
		return 2;
	}
	char db_buf[4096];
	if (!(db = cmd_db(db, NULL, db_buf, sizeof(db_buf))))
		return 2;
	struct store *st = NULL;
	if (store_open(db, &st) < 0)
		return 1;
	struct store_build *v = NULL;
	size_t n = 0;
	if (store_builds_list(st, &v, &n) < 0) {
		store_close(st);
		return 1;
	}
	printf("%-5s %-8s %-28s %8s %8s %-12s %s\n", "id", "status", "kernelrelease", "objects", "seconds", "base", "series");
	for (size_t i = 0; i < n; i++)
		esc_printf(stdout, "%-5lld %-8s %-28s %8lld %8.0f %-12.12s %s\n", (long long)v[i].id,
			   build_status_name(v[i].status), v[i].kernelrelease[0] ? v[i].kernelrelease : "-",
			   (long long)v[i].objects, v[i].duration_s, v[i].base_sha, v[i].series ? v[i].series : "-");
	store_builds_free(v, n);
	store_close(st);
	return 0;
}
