/* kab regressions: the change points nightly tracking found and their
 * confirmation, from a database or a kabd; --ack ID acknowledges one on a
 * kabd (root or group kab on its socket, the token over TCP). */
#include "harness/cli/client.h"
#include "harness/cli/cmd.h"
#include "harness/report/regress.h"
#include "db/store.h"
#include "db/store_regress.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] = "usage: kab regressions [--db PATH | --socket PATH | --url URL [--token-file F] [--cacert F]] [--format text|json|atom]\n"
			    "                       [--after ID]\n"
			    "       kab regressions --ack ID [--socket PATH | --url URL --token-file F]\n"
			    "  a kabd answers with a page: the newest 500 change points (below --after ID);\n"
			    "  the text ends with after=ID and the JSON has next_after when there are older ones\n";

static int local(const char *db, const char *format)
{
	char db_buf[4096];
	if (!(db = cmd_db(db, NULL, db_buf, sizeof(db_buf))))
		return 2;
	if (cmd_db_present(db, "give kabd's with --db PATH, or ask kabd with --socket") != 0)
		return 2;
	struct store *st;
	if (store_open(db, &st) < 0)
		return 1;
	struct store_regress *rows = NULL;
	size_t n = 0;
	struct regress_bisections bs = { 0 };
	int r = store_regress_list(st, &rows, &n);
	if (r >= 0)
		r = regress_bisections_load(st, rows, n, &bs);
	store_close(st);
	if (r < 0) {
		free(rows);
		return 1;
	}
	if (strcmp(format, "text") == 0) {
		r = regress_render_text(rows, n, &bs, stdout);
	} else {
		struct strbuf b = { 0 };
		if (strcmp(format, "json") == 0)
			regress_render_json(rows, n, &bs, &b);
		else
			regress_render_atom(rows, n, &bs, "", &b);
		/* valid JSON and XML stay so: a C1 control becomes \u0085, which
		 * JSON reads as the same character and XML as text */
		if (b.buf)
			esc_text_file(stdout, b.buf, b.len, ESC_LINES);
		sb_free(&b);
	}
	free(rows);
	regress_bisections_free(&bs);
	return r < 0 || fflush(stdout) != 0 ? 1 : 0;
}

const struct option cmd_regressions_options[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "format", required_argument, NULL, 'f' },
	{ "ack", required_argument, NULL, 'a' },
	{ "after", required_argument, NULL, 'A' },
	CMD_CLIENT_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int cmd_regressions(int argc, char **argv)
{
	const char *db = NULL, *format = "text", *ack = NULL, *after = NULL;
	struct client_conf cc = { 0 };
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:f:a:s:t:h", cmd_regressions_options, NULL)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 'f': format = optarg; break;
		case 'a': ack = optarg; break;
		case 'A': after = optarg; break;
		case 's': cc.url = optarg; break;
		case 'S': cc.socket = optarg; break;
		case 't': cc.token_file = optarg; break;
		case 'C': cc.cacert = optarg; break;
		case 'h': printf("%s", usage); return 0;
		default: fprintf(stderr, "%s", usage); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s", usage);
		return 2;
	}
	if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "atom")) {
		fprintf(stderr, "kab regressions: unknown format \"%s\" (formats: text, json, atom)\n", format);
		return 2;
	}
	if (cc.url && cc.socket) {
		fprintf(stderr, "kab: give --url (TCP) or --socket (the unix socket), not both\n");
		return 2;
	}
	int64_t after_id = 0;
	if (after && (util_parse_i64(after, &after_id) < 0 || after_id <= 0)) {
		fprintf(stderr, "kab regressions: --after \"%s\" is not an id (a positive number: the after=ID a page ends with)\n",
			after);
		return 2;
	}
	if (after && !cc.url && !cc.socket) {
		fprintf(stderr, "kab regressions: --after pages a kabd's list: give --socket PATH or --url URL (--db lists every one)\n");
		return 2;
	}
	char path[128];
	if (ack) {
		int64_t id;
		if (util_parse_i64(ack, &id) < 0 || id <= 0) {
			fprintf(stderr, "kab regressions: --ack \"%s\" is not an id (a positive number; kab regressions lists them)\n",
				ack);
			return 2;
		}
		if (!cc.url && !cc.socket) {
			fprintf(stderr, "kab regressions: --ack asks a kabd: give --socket PATH or --url URL --token-file F\n");
			return 2;
		}
		snprintf(path, sizeof(path), "/regressions/%lld/ack", (long long)id);
		return client_print(&cc, "POST", path);
	}
	if (cc.url || cc.socket) {
		if (after_id)
			snprintf(path, sizeof(path), "/regressions?format=%s&limit=%d&after=%lld", format,
				 CLIENT_PAGE_MAX, (long long)after_id);
		else
			snprintf(path, sizeof(path), "/regressions?format=%s&limit=%d", format, CLIENT_PAGE_MAX);
		return client_print(&cc, "GET", path);
	}
	return local(db, format);
}
