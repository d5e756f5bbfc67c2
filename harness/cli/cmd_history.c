/* kab history NAME: the nightly history of a job name, from a local
 * database (refreshed first, as kabd refreshes it) or from a kabd. */
#include "harness/cli/client.h"
#include "harness/cli/cmd.h"
#include "harness/report/history.h"
#include "harness/report/report_priv.h"
#include "db/store.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char usage[] = "usage: kab history NAME [--metric M] [--workload W] [--db PATH | --socket PATH | --url URL "
			    "[--token-file F] [--cacert F]] [--format text|json]\n";

struct history_args {
	const char *name, *db, *format;
	struct history_query q;
	struct client_conf cc;
};

const struct option cmd_history_options[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "metric", required_argument, NULL, 'm' },
	{ "workload", required_argument, NULL, 'w' },
	{ "format", required_argument, NULL, 'f' },
	CMD_CLIENT_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* -1 when kab history goes on, else its exit status. */
static int history_args(int argc, char **argv, struct history_args *ha)
{
	*ha = (struct history_args){ .format = "text" };
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:m:w:f:s:t:h", cmd_history_options, NULL)) != -1) {
		switch (c) {
		case 'd': ha->db = optarg; break;
		case 'm': ha->q.metric = optarg; break;
		case 'w': ha->q.workload = optarg; break;
		case 'f': ha->format = optarg; break;
		case 's': ha->cc.url = optarg; break;
		case 'S': ha->cc.socket = optarg; break;
		case 't': ha->cc.token_file = optarg; break;
		case 'C': ha->cc.cacert = optarg; break;
		case 'h': printf("%s", usage); return 0;
		default: fprintf(stderr, "%s", usage); return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "%s", usage);
		return 2;
	}
	ha->name = argv[optind];
	if (strcmp(ha->format, "text") != 0 && strcmp(ha->format, "json") != 0) {
		fprintf(stderr, "kab history: unknown format \"%s\" (formats: text, json)\n", ha->format);
		return 2;
	}
	if (!history_name_ok(ha->name)) {
		fprintf(stderr, "kab history: \"%s\" is not a job name (1 to %d letters, digits, '.', '_' and '-')\n",
			ha->name, HISTORY_NAME_MAX);
		return 2;
	}
	if (ha->q.metric && !history_metric_ok(ha->q.metric)) {
		fprintf(stderr, "kab history: \"%s\" is not a metric name (\"stress-ng.bogo_ops_per_s\")\n", ha->q.metric);
		return 2;
	}
	if (ha->q.workload && !history_name_ok(ha->q.workload)) {
		fprintf(stderr, "kab history: \"%s\" is not a workload name\n", ha->q.workload);
		return 2;
	}
	if (ha->cc.url && ha->cc.socket) {
		fprintf(stderr, "kab history: give --url (TCP) or --socket (the unix socket), not both\n");
		return 2;
	}
	return -1;
}

/* From a kabd: the names passed history_*_ok, so they need no escaping. */
static int history_remote(const struct history_args *ha)
{
	struct strbuf path = { 0 };
	sb_printf(&path, "/history?job=%s&format=%s", ha->name, ha->format);
	if (ha->q.metric)
		sb_printf(&path, "&metric=%s", ha->q.metric);
	if (ha->q.workload)
		sb_printf(&path, "&workload=%s", ha->q.workload);
	int ret = path.buf ? client_print(&ha->cc, "GET", path.buf) : 1;
	sb_free(&path);
	return ret;
}

static int history_local(struct history_args *ha)
{
	char db_buf[4096];
	if (!(ha->db = cmd_db(ha->db, NULL, db_buf, sizeof(db_buf))))
		return 2;
	if (cmd_db_present(ha->db, "give the one kab run or kabd used with --db PATH") != 0)
		return 2;
	struct store *st;
	if (store_open(ha->db, &st) < 0)
		return 1;
	if (history_refresh(st, ha->name, NULL) < 0)
		log_warn("the history of %s was not refreshed (database busy or read-only?); showing the nights made so far",
			 ha->name);
	struct history *h = NULL;
	int r = history_load(st, ha->name, &ha->q, &h), ret = 1;
	if (r == -ENOENT) {
		fprintf(stderr, "kab history: no nightly history for job %s in %s (no job of that name has ended there)\n",
			ha->name, ha->db);
		ret = 2;
	} else if (r < 0) {
		fprintf(stderr, "kab history: the history of %s cannot be read: %s\n", ha->name, strerror(-r));
	} else if (ha->q.metric && h->n_series == 0) {
		const char *hint = util_did_you_mean(ha->q.metric, (const char *const *)h->metrics, h->n_metrics);
		char shown[256]; /* a stored metric name: what a workload printed */
		if (hint)
			hint = esc_text_buf(hint, shown, sizeof(shown), 0);
		fprintf(stderr,
			"kab history: job %s has no history of metric %s in %s (%s%s%s%zu metrics have history; "
			"kab history %s --format json lists them)\n",
			ha->name, ha->q.metric, ha->db, hint ? "did you mean " : "", hint ? hint : "", hint ? "? " : "",
			h->n_metrics, ha->name);
		ret = 2;
	} else {
		/* the JSON too: a C1 control in a subject becomes \u0085, the same
		 * character to a JSON reader, and no CSI to a terminal */
		FILE *out = esc_stream(stdout);
		if (!out)
			r = -ENOMEM;
		else if (strcmp(ha->format, "json") == 0)
			r = history_render_json(h, out);
		else
			r = history_render_text(h, report_utf8_locale(), out);
		if (out && fclose(out) != 0 && r >= 0)
			r = -EIO;
		ret = r < 0 || fflush(stdout) != 0 ? 1 : 0;
	}
	history_free(h);
	store_close(st);
	return ret;
}

int cmd_history(int argc, char **argv)
{
	struct history_args ha;
	int ret = history_args(argc, argv, &ha);
	if (ret >= 0)
		return ret;
	if (ha.cc.url || ha.cc.socket)
		return history_remote(&ha);
	return history_local(&ha);
}
