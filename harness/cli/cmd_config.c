/* kab config: the configuration in force (config.h), every setting with
 * the place its value came from; flags that are settings show their own
 * precedence. */
#include "harness/cli/cmd.h"
#include "harness/base/config.h"
#include "harness/job/machine.h"
#include "harness/base/util.h"

#include <getopt.h>
#include <stdio.h>

static const char config_usage[] =
	"usage: kab config [--state-dir DIR] [--kernels-dir DIR] [--work-dir DIR] [--socket PATH] [--url URL]\n";

static const struct {
	const char *flag;
	enum config_key key;
} flag_keys[] = {
	{ "state-dir", CONFIG_STATE_DIR },
	{ "kernels-dir", CONFIG_KERNELS_DIR },
	{ "work-dir", CONFIG_KBUILD_WORK },
	{ "socket", CONFIG_SOCKET },
	{ "url", CONFIG_URL },
};

const struct option cmd_config_options[] = {
	{ "state-dir", required_argument, NULL, 0 },
	{ "kernels-dir", required_argument, NULL, 0 },
	{ "work-dir", required_argument, NULL, 0 },
	{ "socket", required_argument, NULL, 0 },
	{ "url", required_argument, NULL, 0 },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int cmd_config(int argc, char **argv)
{
	struct diags d = { 0 };
	int c, idx;
	while ((c = getopt_long(argc, argv, "h", cmd_config_options, &idx)) != -1) {
		if (c == 'h') {
			printf("%s", config_usage);
			return 0;
		}
		if (c != 0) {
			fprintf(stderr, "%s", config_usage);
			return 2;
		}
		char flag[64];
		snprintf(flag, sizeof(flag), "--%s", flag_keys[idx].flag);
		config_use_flag(flag_keys[idx].key, flag, optarg, &d);
	}
	if (optind != argc) {
		fprintf(stderr, "%s", config_usage);
		return 2;
	}
	if (d.n) {
		diags_print(&d, stderr);
		diags_free(&d);
		return 2;
	}
	config_print(config_get(), true, stdout);
	machine_conf_print(machine_conf_current(), stdout);
	return 0;
}
