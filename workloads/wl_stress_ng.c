/* stress-ng: runs with --metrics and --yaml, reads bogo ops from the YAML. */
#include "workloads/wl.h"
#include "harness/job/job.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_ARGS, K_END };

/* The key, read once (wl_opts_make). */
struct stress_ng_opts {
	const char *args;
};

static const struct wl_key keys[] = {
	[K_ARGS] = { WL_OPT(struct stress_ng_opts, args), .name = "args", .type = WL_KEY_TEXT, .required = true,
		     .help = "stress-ng arguments, e.g. --vm 2 --vm-bytes 512M --vm-keep --timeout 10" },
	[K_END] = { .name = NULL },
};

/* The totals over all stressors, then each stressor's when there are several. */
static const struct wl_metric metrics[] = {
	WL_METRIC("stress-ng.bogo_ops_per_s", "ops/s", HIGHER, "bogo ops/s"),
	WL_METRIC("stress-ng.bogo_ops_per_s_cpu", "ops/s", HIGHER, "bogo ops/s (usr+sys time)"),
	WL_METRIC("stress-ng.bogo_ops", "ops", HIGHER, "bogo ops"),
	WL_METRIC("stress-ng.*.bogo_ops_per_s", "ops/s", HIGHER, NULL),
	WL_METRIC("stress-ng.*.bogo_ops_per_s_cpu", "ops/s", HIGHER, NULL),
	WL_METRIC("stress-ng.*.bogo_ops", "ops", HIGHER, NULL),
	{ NULL },
};

static int check(const struct job_workload *wl, const char *file, struct diags *d)
{
	char path[4096];
	int r = 0;
	if (!util_find_program("stress-ng", path, sizeof(path))) {
		diags_add(d, file, wl->line, "workload \"%s\": program \"stress-ng\" is not installed (apt-get install stress-ng)", wl->name);
		r = -ENOENT;
	}
	const struct stress_ng_opts *o = wl->opts;
	if (!o)
		return r; /* the required key is missing: the job parser said so */
	const char *args = o->args;
	char **argv;
	size_t n;
	if (wl_split_args(args, &argv, &n) < 0) {
		diags_add(d, file, wl->line, "workload \"%s\": args has an unterminated quote", wl->name);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		if (strncmp(argv[i], "--yaml", 6) == 0 || strcmp(argv[i], "-Y") == 0) {
			diags_add(d, file, wl->line, "workload \"%s\": args must not contain %s: kab adds its own --yaml to read the results", wl->name, argv[i]);
			r = -EINVAL;
		}
	if (n == 0) {
		diags_add(d, file, wl->line, "workload \"%s\": args is empty: name at least one stressor, e.g. --vm 1", wl->name);
		r = -EINVAL;
	}
	wl_argv_free(argv);
	return r;
}

static int make_argv(const struct wl_ctx *c, char ***ret_argv)
{
	char **args;
	size_t n;
	const struct stress_ng_opts *o = c->wl->opts;
	if (!o)
		return -EINVAL;
	const char *line = o->args;
	int r = wl_split_args(line, &args, &n);
	if (r < 0)
		return r;
	char **argv = calloc(n + 6, sizeof(char *));
	if (!argv) {
		wl_argv_free(args);
		return -ENOMEM;
	}
	size_t k = 0;
	argv[k++] = strdup("stress-ng");
	for (size_t i = 0; i < n; i++)
		argv[k++] = args[i];
	free(args);
	argv[k++] = strdup("--metrics");
	argv[k++] = strdup("--yaml");
	if (asprintf(&argv[k++], "%s/stress-ng.yaml", c->workdir) < 0)
		argv[k - 1] = NULL;
	argv[k] = NULL;
	for (size_t i = 0; i < k; i++)
		if (!argv[i]) {
			wl_argv_free(argv);
			return -ENOMEM;
		}
	*ret_argv = argv;
	return 0;
}

/* Reads "    key: value" from a metrics list item; value must be numeric. */
static bool yaml_number(const char *line, const char *key, double *ret)
{
	while (*line == ' ' || *line == '-')
		line++;
	size_t kl = strlen(key);
	if (strncmp(line, key, kl) != 0 || line[kl] != ':')
		return false;
	const char *v = line + kl + 1;
	while (*v == ' ')
		v++;
	char buf[64];
	size_t n = strcspn(v, " \n");
	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, v, n);
	buf[n] = 0;
	return util_parse_double(buf, ret) == 0;
}

static int collect(const struct wl_ctx *c, int exit_status, struct wl_metrics *m)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/stress-ng.yaml", c->workdir);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	/* per stressor: bogo ops, ops/s real time, ops/s usr+sys time */
	struct { char name[64]; double v[3]; } st[32];
	static const char *const yaml_keys[3] = { "bogo-ops", "bogo-ops-per-second-real-time", "bogo-ops-per-second-usr-sys-time" };
	static const char *const suffix[3] = { "bogo_ops", "bogo_ops_per_s", "bogo_ops_per_s_cpu" };
	size_t n = 0;
	char line[512];
	bool in_metrics = false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "metrics:", 8) == 0) {
			in_metrics = true;
			continue;
		}
		if (!in_metrics)
			continue;
		if (line[0] != ' ')
			break; /* end of the metrics block */
		const char *p = line;
		while (*p == ' ')
			p++;
		if (strncmp(p, "- stressor:", 11) == 0) {
			if (n == ARRAY_SIZE(st))
				break;
			const char *v = p + 11;
			while (*v == ' ')
				v++;
			memset(&st[n], 0, sizeof(st[n]));
			snprintf(st[n].name, sizeof(st[n].name), "%.*s", (int)strcspn(v, " \n"), v);
			n++;
			continue;
		}
		double x;
		for (size_t k = 0; n > 0 && k < 3; k++)
			if (yaml_number(p, yaml_keys[k], &x))
				st[n - 1].v[k] = x;
	}
	if (n == 0)
		return -ENODATA;
	char name[128];
	for (size_t k = 0; k < 3; k++) {
		double total = 0;
		for (size_t i = 0; i < n; i++)
			total += st[i].v[k];
		snprintf(name, sizeof(name), "stress-ng.%s", suffix[k]);
		wl_metrics_add_declared(m, name, NULL, total);
	}
	if (n > 1) /* several stressors: each one's numbers as well */
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < 3; k++) {
				snprintf(name, sizeof(name), "stress-ng.%s.%s", st[i].name, suffix[k]);
				wl_metrics_add_declared(m, name, NULL, st[i].v[k]);
			}
	return 0;
}

const struct wl_ops wl_stress_ng_ops = {
	.type = "stress-ng",
	.summary = "stress-ng stressors; bogo ops/s from its YAML metrics",
	.keys = keys,
	.opts_size = sizeof(struct stress_ng_opts),
	.metrics = metrics,
	.short_labels = true,
	.check = check,
	.argv = make_argv,
	.collect = collect,
};
