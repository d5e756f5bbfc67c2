/* kab: the command line. */
#include "harness/cli/cmd.h"
#include "harness/base/util.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *verb;
	int (*fn)(int, char **);
	const char *help;
} verbs[] = {
	{ "check", cmd_check, "check JOB            validate a job file, print it normalized" },
	{ "run", cmd_run, "run JOB [--db PATH]  run a job in the foreground (--resume ID continues one)" },
	{ "report", cmd_report, "report ID [--db PATH | --socket PATH | --url URL] [--format F]  print the before/after table of a stored job" },
	{ "history", cmd_history, "history NAME [--metric M] [--db PATH | --socket PATH | --url URL] [--format text|json]  the nightly history of a job name: a row a night, change points" },
	{ "regressions", cmd_regressions,
	  "regressions [--db PATH | --socket PATH | --url URL] [--format text|json|atom] [--ack ID]  nightly change points and their confirmation" },
	{ "plan", cmd_plan, "plan JOB [--pairs N] [--effect PCT] [--db PATH] [--format text|json]  an A/A calibration, then the pairs a change needs" },
	{ "compare", cmd_compare, "compare FILE.csv [--format F]  the same statistics and formats for numbers from a CSV file" },
	{ "submit", cmd_submit, "submit JOB [--socket PATH | --url URL --token-file F] [--wait]  queue a job on a kabd" },
	{ "status", cmd_status, "status [ID] [--socket PATH | --url URL]  jobs on a kabd, or one job with its progress" },
	{ "cancel", cmd_cancel, "cancel ID [--socket PATH | --url URL --token-file F]  cancel a job on a kabd" },
	{ "build", cmd_build, "build JOB [--db PATH] [--kernels-dir DIR] [--work-dir DIR]  build the kernels of a job's kernel = build variants" },
	{ "builds", cmd_builds, "builds [--db PATH]   list the recorded kernel builds" },
	{ "sample", cmd_sample, "sample [--interval S] [--duration S] [--out FILE]  run the counter sampler alone" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: kab VERB [ARGS]\n\n");
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		fprintf(out, "  kab %s\n", verbs[i].help);
	fprintf(out, "\nkab %s: kernel A/B benchmark harness\n", KAB_VERSION);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("kab %s\n", KAB_VERSION);
		return 0;
	}
	const char *names[ARRAY_SIZE(verbs)];
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++) {
		if (strcmp(argv[1], verbs[i].verb) == 0)
			return verbs[i].fn(argc - 1, argv + 1);
		names[i] = verbs[i].verb;
	}
	const char *hint = util_did_you_mean(argv[1], names, ARRAY_SIZE(names));
	if (hint)
		fprintf(stderr, "kab: unknown verb \"%s\" (did you mean \"%s\"?)\n", argv[1], hint);
	else
		fprintf(stderr, "kab: unknown verb \"%s\"\n", argv[1]);
	usage(stderr);
	return 2;
}
