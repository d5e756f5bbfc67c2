/* kab run JOB / kab run --resume ID, and kab report ID. */
#include "harness/cli/client.h"
#include "harness/cli/cmd.h"
#include "harness/cli/foreground.h"
#include "harness/exec/executor.h"
#include "harness/job/job.h"
#include "harness/base/output.h"
#include "harness/report/report.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* how the reason of a job stopped because kab's output closed begins */
/* kab run's exit status then: what a shell shows for a death by SIGPIPE */
#define EXIT_OUTPUT_CLOSED 141

static int parse_id(const char *s, int64_t *ret)
{
	int64_t id;
	if (util_parse_i64(s, &id) < 0 || id <= 0) {
		fprintf(stderr, "kab: \"%s\" is not a job id (a positive number)\n", s);
		return -EINVAL;
	}
	*ret = id;
	return 0;
}

/* Jobs an earlier kab run stopped because its output closed (someone read
 * its first lines through head): said at every kab run until resumed. */
static void note_output_closed(struct store *st, const char *db, int64_t resuming)
{
	int64_t *ids = NULL;
	size_t n = 0;
	if (store_jobs_with_status(st, JOB_CANCELLED, &ids, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		struct store_job sj;
		if (ids[i] == resuming || store_job_get(st, ids[i], &sj) < 0)
			continue;
		if (strncmp(sj.reason, OUT_CLOSED_REASON, strlen(OUT_CLOSED_REASON)) == 0)
			log_warn("job %lld \"%s\" was cancelled: %s (database %s)", (long long)sj.id, sj.name, sj.reason, db);
		store_job_clear(&sj);
	}
	free(ids);
}

/* kab run's exit status once exec_job returned r; prints the report of a
 * finished job. */
static int run_result(struct store *st, int64_t job_id, const char *db, int r, bool report)
{
	char why[96] = "";
	bool closed = out_closed(why, sizeof(why));
	if (r == -EINTR && closed) {
		log_error("%s (%s): job %lld cancelled; its finished runs are kept; kab run --resume %lld --db %s continues it",
			  OUT_CLOSED_REASON, why, (long long)job_id, (long long)job_id, db);
		return EXIT_OUTPUT_CLOSED;
	}
	if (r == -EINTR) {
		log_error("interrupted: job %lld cancelled; its finished runs are kept (kab report %lld --db %s)",
			  (long long)job_id, (long long)job_id, db);
		return 130;
	}
	if (r < 0)
		return 1;
	if (report) {
		printf("\n");
		report_print(st, job_id, stdout);
		if (out_flush(stdout) < 0) {
			out_closed(why, sizeof(why));
			log_error("cannot print the report (%s); kab report %lld --db %s prints it", why, (long long)job_id, db);
			return EXIT_OUTPUT_CLOSED;
		}
	}
	return closed ? EXIT_OUTPUT_CLOSED : 0;
}

static const char run_needs_root[] = "kab run needs root: it creates memory cgroups, swap and writes sysctl/sysfs knobs";

struct run_args {
	const char *db, *resume, *state_dir; /* db NULL: kab.db in the state directory */
	bool report;
	char db_buf[4096];
};

const struct option cmd_run_options[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "resume", required_argument, NULL, 'r' },
	{ "state-dir", required_argument, NULL, 's' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "no-report", no_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* kab run's options; -1 when kab run goes on, else its exit status. */
static int run_args(int argc, char **argv, struct run_args *ra)
{
	*ra = (struct run_args){ .report = true };
	int c;
	while ((c = getopt_long(argc, argv, "d:r:s:qnh", cmd_run_options, NULL)) != -1) {
		switch (c) {
		case 'd': ra->db = optarg; break;
		case 'r': ra->resume = optarg; break;
		case 's': ra->state_dir = optarg; break;
		case 'q': log_quiet = true; break;
		case 'n': ra->report = false; break;
		case 'h':
			printf("usage: kab run JOB [--db PATH] [--state-dir DIR] [--quiet] [--no-report]\n       kab run --resume ID [--db PATH] [--state-dir DIR]\n");
			return 0;
		default:
			return 2;
		}
	}
	if ((ra->resume && optind != argc) || (!ra->resume && optind != argc - 1)) {
		fprintf(stderr, "usage: kab run JOB [--db PATH]   or   kab run --resume ID [--db PATH]\n");
		return 2;
	}
	if (!(ra->db = cmd_db(ra->db, ra->state_dir, ra->db_buf, sizeof(ra->db_buf))))
		return 2;
	return -1;
}

/* A new job from its file, with the same checks as kab check, before
 * anything is touched; the diagnostics printed. 0 or -EINVAL. */
static int new_job(const char *path, struct job **ret, struct diags *d)
{
	struct job *j;
	if (job_parse_file(path, &j, d) < 0) {
		diags_print(d, stderr);
		return -EINVAL;
	}
	exec_refuse_boots(j, d);
	if (d->n) {
		diags_print(d, stderr);
		job_free(j);
		return -EINVAL;
	}
	*ret = j;
	return 0;
}

/* The stored job kab run --resume continues, parsed again from its text;
 * 0, or kab run's exit status (the error printed). */
static int resumed_job(struct store *st, int64_t job_id, const char *db, struct job **ret, struct diags *d)
{
	struct job *j = NULL;
	char was[300];
	int r = jl_resume(st, job_id, &j, was, sizeof(was), d);
	if (r == -ENOENT) {
		log_error("no job %lld in %s", (long long)job_id, db);
		return 1;
	}
	if (r == -EINVAL)
		diags_print(d, stderr);
	else if (r == -EALREADY)
		log_error("job %lld is already done", (long long)job_id);
	else if (r < 0)
		log_error("job %lld is in a status this kab does not know (%s): a newer kab may resume it", (long long)job_id, was);
	if (r < 0)
		return 2;
	exec_refuse_boots(j, d);
	if (d->n) {
		diags_print(d, stderr);
		job_free(j);
		return 2;
	}
	log_info("resuming job %lld \"%s\" (%s)", (long long)job_id, j->name, was);
	*ret = j;
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_args ra;
	int64_t job_id = 0;
	int ret = run_args(argc, argv, &ra);
	if (ret >= 0)
		return ret;
	if (ra.resume && parse_id(ra.resume, &job_id) < 0)
		return 2;
	if (fg_output() < 0)
		return 1;

	struct diags d = { 0 };
	struct job *j = NULL;
	struct fg fg = FG_INIT;
	ret = 1;
	if (!ra.resume && new_job(argv[optind], &j, &d) < 0) {
		diags_free(&d);
		return 2;
	}
	if (fg_open(&fg, ra.db, ra.state_dir, run_needs_root) < 0)
		goto out;
	note_output_closed(fg.st, ra.db, job_id);
	if (ra.resume) {
		if ((ret = resumed_job(fg.st, job_id, ra.db, &j, &d)) != 0)
			goto out;
		ret = 1;
	} else {
		size_t n;
		if (fg_submit(&fg, j, ra.db, "the job and its schedule", &job_id, &n) < 0)
			goto out;
		log_info("job %lld \"%s\": %zu runs (%u pairs x %zu workloads x %zu variants, order %s%s), database %s",
			 (long long)job_id, j->name, n, j->pairs, j->n_workloads, j->n_variants, job_order_name(j->order),
			 j->warmup ? "; and each workload's warm-up, not counted" : "; no warm-up", ra.db);
	}
	int r = fg_exec(&fg, j, job_id, true);
	ret = run_result(fg.st, job_id, ra.db, r, ra.report);
out:
	job_free(j);
	diags_free(&d);
	fg_close(&fg);
	return ret;
}

const struct option cmd_report_options[] = {
	{ "db", required_argument, NULL, 'd' }, { "format", required_argument, NULL, 'f' },
	{ "ascii", no_argument, NULL, 'a' },    CMD_CLIENT_OPTIONS,
	{ "help", no_argument, NULL, 'h' },     { 0 },
};

int cmd_report(int argc, char **argv)
{
	static const char usage[] = "usage: kab report ID [--db PATH | --socket PATH | --url URL [--token-file F] [--cacert F]] [--format text|cover-letter|markdown|json|csv] [--ascii]\n";
	const char *db = NULL, *format = "text";
	struct client_conf cc = { 0 };
	struct report_opts ro = { .format = REPORT_TEXT };
	int c;
	while ((c = getopt_long(argc, argv, "d:f:as:t:h", cmd_report_options, NULL)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 's': cc.url = optarg; break;
		case 'S': cc.socket = optarg; break;
		case 't': cc.token_file = optarg; break;
		case 'C': cc.cacert = optarg; break;
		case 'f':
			format = optarg;
			if (report_format_parse(optarg, &ro.format) < 0) {
				fprintf(stderr, "kab report: unknown format \"%s\" (formats: %s)\n", optarg, REPORT_FORMATS);
				return 2;
			}
			break;
		case 'a': ro.ascii = true; break;
		case 'h':
			printf("%s", usage);
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "%s", usage);
		return 2;
	}
	int64_t id;
	if (parse_id(argv[optind], &id) < 0)
		return 2;
	if (cc.url || cc.socket)
		return client_report(&cc, (long long)id, format);
	char db_buf[4096];
	if (!(db = cmd_db(db, NULL, db_buf, sizeof(db_buf))))
		return 2;
	if (cmd_db_present(db, "give the one kab run used with --db PATH") != 0)
		return 2;
	struct store *st;
	if (store_open(db, &st) < 0)
		return 1;
	int r = report_print_format(st, id, &ro, stdout);
	store_close(st);
	return r == -ENOENT ? 2 : r < 0 ? 1 : 0;
}
