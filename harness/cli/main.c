/* kab: the command line. Its configuration (harness/base/config.h) is
 * resolved here, once, from the environment and machine.conf; a verb's
 * flags come on top. */
#include "harness/cli/cmd.h"
#include "harness/base/config.h"
#include "harness/job/machine.h"
#include "harness/base/util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The verbs: machine, the verb checks or runs jobs, so it reads
 * machine.conf; options, its getopt_long table, which doc/kab.1's
 * SYNOPSIS must name in full (tests/docs/check.py). */
static const struct {
	const char *verb;
	int (*fn)(int, char **);
	const struct option *options;
	bool machine;
	const char *help;
} verbs[] = {
	{ "check", cmd_check, cmd_check_options, true, "check JOB            validate a job file, print it normalized" },
	{ "run", cmd_run, cmd_run_options, true, "run JOB [--db PATH]  run a job in the foreground (--resume ID continues one)" },
	{ "report", cmd_report, cmd_report_options, false,
	  "report ID [--db PATH | --socket PATH | --url URL] [--format F]  print the before/after table of a stored job" },
	{ "history", cmd_history, cmd_history_options, false,
	  "history NAME [--metric M] [--db PATH | --socket PATH | --url URL] [--format text|json]  the nightly history of a job name: a row a night, change points" },
	{ "regressions", cmd_regressions, cmd_regressions_options, false,
	  "regressions [--db PATH | --socket PATH | --url URL] [--format text|json|atom] [--ack ID]  nightly change points and their confirmation" },
	{ "export", cmd_export, cmd_export_options, false,
	  "export --kcidb ID [--db PATH] [--origin NAME]  a stored job as a KCIDB v5 submission (JSON)" },
	{ "bisect", cmd_bisect, cmd_bisect_options, false,
	  "bisect --regression ID | JOB --good REV --bad REV --metric M | show ID | cancel ID  find the commit that moved a metric, on a kabd" },
	{ "plan", cmd_plan, cmd_plan_options, true,
	  "plan JOB [--pairs N] [--effect PCT] [--db PATH] [--format text|json]  an A/A calibration, then the pairs a change needs" },
	{ "compare", cmd_compare, cmd_compare_options, false,
	  "compare FILE.csv [--format F]  the same statistics and formats for numbers from a CSV file" },
	{ "submit", cmd_submit, cmd_submit_options, false,
	  "submit JOB [--socket PATH | --url URL --token-file F] [--wait | --lab [--on SELECTOR]]  queue a job on a kabd, or in its lab" },
	{ "status", cmd_status, cmd_client_options, false,
	  "status [ID] [--socket PATH | --url URL]  jobs on a kabd, or one job with its progress" },
	{ "lab", cmd_lab, cmd_lab_options, false,
	  "lab machines | jobs [--machine HOST] | job ID [--socket PATH | --url URL]  the lab of a kabd: its machines and jobs" },
	{ "cancel", cmd_cancel, cmd_client_options, false, "cancel ID [--socket PATH | --url URL --token-file F]  cancel a job on a kabd" },
	{ "build", cmd_build, cmd_build_options, true,
	  "build JOB [--db PATH] [--kernels-dir DIR] [--work-dir DIR]  build the kernels of a job's kernel = build variants" },
	{ "builds", cmd_builds, cmd_builds_options, false, "builds [--db PATH]   list the recorded kernel builds" },
	{ "sample", cmd_sample, cmd_sample_options, false, "sample [--interval S] [--duration S] [--out FILE]  run the counter sampler alone" },
	{ "config", cmd_config, cmd_config_options, true,
	  "config [--state-dir DIR] [--kernels-dir DIR] ...  the configuration in force and where each value came from" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: kab VERB [ARGS]\n\n");
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		fprintf(out, "  kab %s\n", verbs[i].help);
	fprintf(out, "\nkab %s: kernel A/B benchmark harness\n", KAB_VERSION);
}

static const char *env(const char *name)
{
	return getenv(name);
}

/* The environment's settings, and machine.conf's when mc is not NULL
 * (the verb checks or runs jobs), installed for the library: 0, else
 * every problem said and 2. */
static int setup(struct machine_conf *mc)
{
	struct kab_config cfg;
	struct diags d = { 0 };
	config_resolve(&cfg, env, &d);
	if (mc) {
		machine_conf_load(mc, cfg.v[CONFIG_MACHINE_CONF].value, &d);
		machine_conf_apply(mc, &cfg, &d);
		cfg.machine = mc;
	}
	int r = 0;
	if (d.n || d.dropped) {
		diags_print(&d, stderr);
		r = 2;
	}
	diags_free(&d);
	config_use(&cfg);
	return r;
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
		if (strcmp(argv[1], verbs[i].verb) == 0) {
			struct machine_conf mc;
			int r = setup(verbs[i].machine ? &mc : NULL);
			if (r == 0)
				r = verbs[i].fn(argc - 1, argv + 1);
			if (verbs[i].machine)
				machine_conf_free(&mc);
			return r;
		}
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
