/* command: any command line. It may report metrics of its own by printing
 * lines "kab-metric NAME VALUE [UNIT]" on standard output. */
#include "workloads/wl.h"
#include "harness/job/job.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_COMMAND, K_END };

/* The key, read once (wl_opts_make). */
struct command_opts {
	const char *command;
};

static const struct wl_key keys[] = {
	[K_COMMAND] = { WL_OPT(struct command_opts, command), .name = "command", .type = WL_KEY_TEXT, .required = true,
			.help = "the command line, split shell-style and exec'd directly (no shell)" },
	[K_END] = { .name = NULL },
};

static int check(const struct job_workload *wl, const char *file, struct diags *d)
{
	const struct command_opts *o = wl->opts;
	if (!o)
		return 0; /* the required key is missing: the job parser said so */
	const char *cmd = o->command;
	char **argv;
	size_t n;
	if (wl_split_args(cmd, &argv, &n) < 0) {
		diags_add(d, file, wl->line, "workload \"%s\": command has an unterminated quote", wl->name);
		return -EINVAL;
	}
	int r = 0;
	char path[4096];
	if (n == 0) {
		diags_add(d, file, wl->line, "workload \"%s\": command is empty", wl->name);
		r = -EINVAL;
	} else if (!util_find_program(argv[0], path, sizeof(path))) {
		diags_add(d, file, wl->line, "workload \"%s\": program \"%s\" is not installed or not executable (not found in PATH)", wl->name, argv[0]);
		r = -ENOENT;
	}
	wl_argv_free(argv);
	return r;
}

static int make_argv(const struct wl_ctx *c, char ***ret_argv)
{
	const struct command_opts *o = c->wl->opts;
	return o ? wl_split_args(o->command, ret_argv, NULL) : -EINVAL;
}

static int collect(const struct wl_ctx *c, int exit_status, struct wl_metrics *m)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/stdout", c->workdir);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "kab-metric ", 11) != 0)
			continue;
		char **w;
		size_t n;
		if (wl_split_args(line + 11, &w, &n) < 0)
			continue;
		double v;
		if ((n == 2 || n == 3) && util_parse_double(w[1], &v) == 0) {
			char name[128];
			snprintf(name, sizeof(name), "command.%s", w[0]);
			wl_metrics_add(m, name, n == 3 ? w[2] : "", v);
		}
		wl_argv_free(w);
	}
	return 0;
}

const struct wl_ops wl_command_ops = {
	.type = "command",
	.summary = "any command; metrics from \"kab-metric NAME VALUE [UNIT]\" lines on stdout",
	.keys = keys,
	.opts_size = sizeof(struct command_opts),
	/* no metrics of its own to declare: a job's [metric command.NAME]
	 * sections say what the command's are */
	.short_labels = true,
	.check = check,
	.argv = make_argv,
	.collect = collect,
};
