/* kab lab: what a lab kabd says of its lab (doc/lab.md): the machines,
 * the jobs (of one machine with --machine), and one job with its
 * attempts and, while it waits, why. The replies as kabd sends them. */
#include "harness/cli/client.h"
#include "harness/cli/cmd.h"
#include "harness/base/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct option cmd_lab_options[] = {
	CMD_CLIENT_OPTIONS, { "machine", required_argument, NULL, 'm' }, { "help", no_argument, NULL, 'h' }, { 0 }
};

static const char usage[] = "kab lab machines | jobs [--machine HOST] | job ID  [--socket PATH | --url URL [--token-file F] "
			    "[--cacert F]]";

/* a host name or machine id for the query: its characters are plain */
static bool plain(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr("-._", *s)))
			return false;
	return true;
}

int cmd_lab(int argc, char **argv)
{
	struct client_conf conf = { 0 };
	const char *machine = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", cmd_lab_options, NULL)) != -1) {
		if (cmd_client_option(c, optarg, &conf))
			continue;
		if (c == 'm') {
			machine = optarg;
			continue;
		}
		if (c == 'h') {
			printf("usage: %s\n", usage);
			return 0;
		}
		fprintf(stderr, "usage: %s\n", usage);
		return 2;
	}
	const char *what = optind < argc ? argv[optind] : NULL;
	int left = argc - optind;
	char path[512];
	int64_t id = 0;
	if (what && strcmp(what, "machines") == 0 && left == 1 && !machine)
		snprintf(path, sizeof(path), "/lab/machines");
	else if (what && strcmp(what, "jobs") == 0 && left == 1) {
		if (machine && (!*machine || strlen(machine) > 255 || !plain(machine))) {
			fprintf(stderr, "kab: --machine \"%s\" is not a host name or a machine id\n", machine);
			return 2;
		}
		snprintf(path, sizeof(path), "/lab/jobs%s%s", machine ? "?machine=" : "", machine ? machine : "");
	} else if (what && strcmp(what, "job") == 0 && left == 2 && !machine) {
		if (util_parse_i64(argv[optind + 1], &id) < 0 || id <= 0) {
			fprintf(stderr, "kab: \"%s\" is not a lab job id (a positive number)\n", argv[optind + 1]);
			return 2;
		}
		snprintf(path, sizeof(path), "/lab/jobs/%lld", (long long)id);
	} else {
		fprintf(stderr, "usage: %s\n", usage);
		return 2;
	}
	if (conf.url && conf.socket) {
		fprintf(stderr, "kab: give --url (TCP) or --socket (the unix socket), not both\n");
		return 2;
	}
	return client_print(&conf, "GET", path);
}
