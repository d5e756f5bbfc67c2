/* kab export --kcidb ID: a stored job, ended, as a KCIDB v5 submission on
 * stdout (harness/report/kcidb.c makes it; doc/export.md maps it). The
 * submission is made whole before a byte is written: a job that cannot be
 * exported writes nothing. */
#include "harness/cli/cmd.h"
#include "harness/report/kcidb.h"
#include "db/store.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char usage[] = "usage: kab export --kcidb ID [--db PATH] [--origin NAME]\n";

const struct option cmd_export_options[] = {
	{ "kcidb", required_argument, NULL, 'k' },
	{ "db", required_argument, NULL, 'd' },
	{ "origin", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

struct export_args {
	const char *kcidb, *db, *origin;
	int64_t id;
};

/* -1 when kab export goes on, else its exit status. */
static int export_args(int argc, char **argv, struct export_args *ea)
{
	*ea = (struct export_args){ .origin = KCIDB_ORIGIN_DEFAULT };
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "k:d:o:h", cmd_export_options, NULL)) != -1) {
		switch (c) {
		case 'k': ea->kcidb = optarg; break;
		case 'd': ea->db = optarg; break;
		case 'o': ea->origin = optarg; break;
		case 'h': printf("%s", usage); return 0;
		default: fprintf(stderr, "%s", usage); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "kab export: unexpected argument \"%s\"\n%s", argv[optind], usage);
		return 2;
	}
	if (!ea->kcidb) {
		fprintf(stderr, "kab export: name the format and the job: --kcidb ID (KCIDB is the only format so far)\n%s", usage);
		return 2;
	}
	if (util_parse_i64(ea->kcidb, &ea->id) < 0 || ea->id <= 0) {
		fprintf(stderr, "kab export: --kcidb \"%s\" is not a job id (a positive number)\n", ea->kcidb);
		return 2;
	}
	if (!kcidb_origin_ok(ea->origin)) {
		fprintf(stderr,
			"kab export: --origin \"%s\" is no KCIDB origin: 1 to %d lower-case letters, digits and '_' "
			"(the schema's [a-z0-9_]+), such as \"kab\" or \"kab_lab1\"\n",
			ea->origin, KCIDB_ORIGIN_MAX);
		return 2;
	}
	return -1;
}

int cmd_export(int argc, char **argv)
{
	struct export_args ea;
	int ret = export_args(argc, argv, &ea);
	if (ret >= 0)
		return ret;
	char db_buf[4096];
	if (!(ea.db = cmd_db(ea.db, NULL, db_buf, sizeof(db_buf))))
		return 2;
	if (cmd_db_present(ea.db, "give the one kab run or kabd used with --db PATH") != 0)
		return 2;
	struct store *st;
	if (store_open(ea.db, &st) < 0)
		return 1;
	struct strbuf out = { 0 }, err = { 0 };
	int r = kcidb_export(st, ea.id, ea.origin, &out, &err);
	store_close(st);
	if (r < 0) {
		/* the reason names the job; a stored name in it is shown escaped */
		esc_printf(stderr, "kab export: %s (%s)\n", err.buf ? err.buf : strerror(-r), ea.db);
		ret = r == -ENOENT || r == -EBUSY || r == -EINVAL ? 2 : 1;
	} else {
		/* a C1 control in a stored string becomes \u0085, the same
		 * character to a JSON reader, and no CSI to a terminal */
		FILE *f = esc_stream(stdout);
		if (!f || fwrite(out.buf, 1, out.len, f) != out.len)
			r = -EIO;
		if (f && fclose(f) != 0)
			r = -EIO;
		if (r < 0 || fflush(stdout) != 0) {
			fprintf(stderr, "kab export: writing the submission failed: %s\n", strerror(EIO));
			ret = 1;
		} else {
			ret = 0;
		}
	}
	sb_free(&out);
	sb_free(&err);
	return ret;
}
