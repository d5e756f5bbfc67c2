/* kab check JOB: validates a job file without changing the machine and
 * prints it normalized, or prints every problem as FILE:LINE: message. */
#include "harness/cli/cmd.h"
#include "harness/job/job.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"

#include <stdio.h>
#include <string.h>

int cmd_check(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: kab check JOB\n\nValidates JOB (reading the machine, never changing it) and prints it\nnormalized; on problems prints each as JOB:LINE: message and exits 2.\n");
		return 0;
	}
	if (argc != 2 || argv[1][0] == '\0') {
		fprintf(stderr, "usage: kab check JOB\n");
		return 2;
	}
	struct diags d = { 0 };
	struct job *j = NULL;
	int r = job_parse_file(argv[1], &j, &d);
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
