/* kab lab: what a lab kabd says of its lab (doc/lab.md): the machines,
 * the jobs (of one machine with --machine), and one job with its
 * attempts and, while it waits, why; as tables (lab_text.c), or with
 * --format json the replies as kabd sends them. */
#include "harness/cli/client.h"
#include "harness/cli/cmd.h"
#include "harness/cli/lab_text.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct option cmd_lab_options[] = {
	CMD_CLIENT_OPTIONS,
	{ "machine", required_argument, NULL, 'm' },
	{ "format", required_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static const char usage[] = "kab lab machines | jobs [--machine HOST] | job ID  [--format text|json] [--socket PATH | "
			    "--url URL [--token-file F] [--cacert F]]";

/* a host name or machine id for the query: its characters are plain */
static bool plain(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr("-._", *s)))
			return false;
	return true;
}

/* One GET of path, its reply parsed into *ret: 0; else the exit status,
 * the reason said: kabd's error (2 for 404 or 400, else 1), a reply that
 * is no JSON object (1), kabd not reached (CLIENT_EXIT_UNREACHABLE). */
static int get_json(const struct client *c, const char *path, json_t **ret)
{
	struct client_reply rep = { 0 };
	int status = 0, r = client_request(c, "GET", path, NULL, 0, &rep);
	if (r < 0) {
		status = r == -ENOTCONN ? CLIENT_EXIT_UNREACHABLE : 1;
	} else if (rep.status != 200) {
		client_print_error(&rep);
		status = rep.status == 404 || rep.status == 400 ? 2 : 1;
	} else if ((r = client_json_parse(&rep, ret)) < 0) {
		char shown[256];
		fprintf(stderr, "kab lab: kabd's reply to %s is not %s (give --format json to see it): %s\n", path,
			r == -EFBIG ? "JSON of a bounded size" : "a JSON object",
			esc_text_buf(rep.body ? rep.body : "", shown, sizeof(shown), 0));
		status = 1;
	}
	client_reply_clear(&rep);
	return status;
}

/* The reply to path as kab lab's text (lab_text.h). */
static int show_text(const struct client_conf *conf, const char *what, const char *path)
{
	struct client c;
	if (client_init(&c, conf) < 0)
		return 2;
	json_t *doc = NULL;
	struct strbuf err = { 0 };
	int status = get_json(&c, path, &doc);
	bool machines = strcmp(what, "machines") == 0;
	if (status == 0) {
		int r = machines                    ? lab_text_machines(doc, stdout, &err)
			: strcmp(what, "jobs") == 0 ? lab_text_jobs(doc, stdout, &err)
						    : lab_text_job(doc, stdout, &err);
		if (r == -EBADMSG)
			fprintf(stderr, "kab lab %s: kabd's reply is not what this kab reads: %s (--format json shows it)\n",
				what, err.buf ? err.buf : "?");
		else if (r < 0)
			fprintf(stderr, "kab lab %s: cannot write the text: %s\n", what, strerror(-r));
		status = r < 0 || fflush(stdout) != 0 ? 1 : 0;
	}
	sb_free(&err);
	json_decref(doc);
	client_clear(&c);
	return status;
}

int cmd_lab(int argc, char **argv)
{
	struct client_conf conf = { 0 };
	const char *machine = NULL, *format = "text";
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", cmd_lab_options, NULL)) != -1) {
		if (cmd_client_option(c, optarg, &conf))
			continue;
		if (c == 'm') {
			machine = optarg;
			continue;
		}
		if (c == 'f') {
			format = optarg;
			continue;
		}
		if (c == 'h') {
			printf("usage: %s\n", usage);
			return 0;
		}
		fprintf(stderr, "usage: %s\n", usage);
		return 2;
	}
	if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0) {
		char shown[256];
		fprintf(stderr, "kab lab: unknown format \"%s\" (formats: text, json)\n",
			esc_text_buf(format, shown, sizeof(shown), 0));
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
	if (strcmp(format, "json") == 0)
		return client_print(&conf, "GET", path);
	return show_text(&conf, what, path);
}
