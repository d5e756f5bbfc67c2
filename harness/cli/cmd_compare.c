/* kab compare FILE.csv [--format F] [--primary M ...] [--baseline NAME]
 * [--ascii]: the statistics and formats of kab report, for numbers
 * measured elsewhere (compare_csv.c reads them). */
#include "harness/cli/cmd.h"
#include "harness/report/compare.h"
#include "harness/report/report.h"
#include "harness/base/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define USAGE "usage: kab compare FILE.csv [--format " REPORT_FORMATS_BAR "] [--primary METRIC ...] [--baseline VARIANT] [--ascii]\n"
#define REPORT_FORMATS_BAR "text|cover-letter|markdown|json|csv"
#define PRIMARY_MAX 64

static void help(void)
{
	printf(USAGE);
	printf("\nFILE.csv holds one row per run, with a header naming its columns in any order:\n"
	       "  metric,variant,pair,value   required: rows with the same pair number are paired\n"
	       "  unit, direction, workload   optional; direction is higher, lower or neutral\n"
	       "The first variant in the file is the baseline unless --baseline names another.\n"
	       "--primary METRIC (repeatable; a name, or PREFIX* for all with that prefix) marks\n"
	       "a metric judged on p, without the Benjamini-Hochberg correction of the others.\n");
}

const struct option cmd_compare_options[] = {
	{ "format", required_argument, NULL, 'f' },   { "primary", required_argument, NULL, 'p' },
	{ "baseline", required_argument, NULL, 'b' }, { "ascii", no_argument, NULL, 'a' },
	{ "help", no_argument, NULL, 'h' },           { 0 },
};

int cmd_compare(int argc, char **argv)
{
	struct report_opts ro = { .format = REPORT_TEXT };
	const char *primary[PRIMARY_MAX];
	struct compare_opts co = { .primary = primary };
	int c;
	while ((c = getopt_long(argc, argv, "f:p:b:ah", cmd_compare_options, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (report_format_parse(optarg, &ro.format) < 0) {
				fprintf(stderr, "kab compare: unknown format \"%s\" (formats: %s)\n", optarg, REPORT_FORMATS);
				return 2;
			}
			break;
		case 'p':
			if (co.n_primary == PRIMARY_MAX) {
				fprintf(stderr, "kab compare: more than %d primary metrics\n", PRIMARY_MAX);
				return 2;
			}
			primary[co.n_primary++] = optarg;
			break;
		case 'b': co.baseline = optarg; break;
		case 'a': ro.ascii = true; break;
		case 'h':
			help();
			return 0;
		default:
			fprintf(stderr, USAGE);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, USAGE);
		return 2;
	}
	struct diags d = { 0 };
	struct report *r = NULL;
	int e = compare_csv_read(argv[optind], &co, &r, &d);
	if (e < 0) {
		diags_print(&d, stderr);
		diags_free(&d);
		return e == -ENOMEM ? 1 : 2;
	}
	diags_free(&d);
	e = report_analyze(r);
	if (e < 0)
		log_error("%s: statistics failed: %s", argv[optind], strerror(-e));
	else if ((e = report_render(r, &ro, stdout)) < 0)
		log_error("cannot write the report: %s", strerror(-e));
	report_free(r);
	return e < 0 ? 1 : 0;
}
