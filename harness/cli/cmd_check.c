/* kab check JOB: validates a job file without changing the machine and
 * prints it normalized, or prints every problem as FILE:LINE: message.
 * kab check --keys [--format md|man]: the job-file key reference. */
#include "harness/cli/cmd.h"
#include "harness/job/job.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#define USAGE "usage: kab check JOB\n       kab check --keys [--format md|man]\n"

const struct option cmd_check_options[] = {
	{ "keys", no_argument, NULL, 'k' },
	{ "format", required_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* kab check --keys [--format md|man] */
static int print_keys(const char *format)
{
	if (job_print_keys(stdout, format) < 0) {
		fprintf(stderr, "kab check --keys: unknown format \"%s\" (formats: md, man)\n", format);
		return 2;
	}
	if (fflush(stdout) != 0) {
		perror("kab: writing the keys");
		return 1;
	}
	return 0;
}

int cmd_check(int argc, char **argv)
{
	bool keys = false;
	const char *format = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "h", cmd_check_options, NULL)) != -1) {
		switch (c) {
		case 'k': keys = true; break;
		case 'f': format = optarg; break;
		case 'h':
			printf(USAGE "\nValidates JOB (reading the machine, never changing it) and prints it\nnormalized; on problems prints each as JOB:LINE: message and exits 2.\n--keys prints the job-file key reference instead (Markdown or man).\n");
			return 0;
		default: fprintf(stderr, USAGE); return 2;
		}
	}
	if (keys || format) {
		if (!keys || optind != argc) {
			fprintf(stderr, USAGE);
			return 2;
		}
		return print_keys(format ? format : "md");
	}
	if (optind != argc - 1 || argv[optind][0] == '\0') {
		fprintf(stderr, "usage: kab check JOB\n");
		return 2;
	}
	const char *path = argv[optind];
	struct diags d = { 0 };
	struct job *j = NULL;
	int r = job_parse_file(path, &j, &d);
	if (r < 0) {
		diags_print(&d, stderr);
		diags_free(&d);
		return 2;
	}
	/* the values passed the door's checks (valid UTF-8, no control
	 * character); what the machine checks noted (a tracked branch's
	 * commit subject) came from git: shown, never acted on (esc.h) */
	FILE *out = esc_stream(stdout);
	if (out)
		job_print(j, out);
	job_free(j);
	diags_free(&d);
	if (!out || fclose(out) != 0 || fflush(stdout) != 0) {
		perror("kab: writing the job");
		return 1;
	}
	return 0;
}
