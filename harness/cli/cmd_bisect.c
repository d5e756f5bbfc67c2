/* kab bisect: asks a kabd to bisect a confirmed regression or a range of a
 * job's kernel builds, shows a bisection, or cancels one (doc/bisect.md).
 * Asking and cancelling is root or group kab on kabd's socket, the token
 * over TCP, as kab regressions --ack. */
#include "harness/cli/client.h"
#include "harness/cli/cmd.h"
#include "harness/job/job.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = "usage: kab bisect --regression ID [--boots N] [--socket PATH | --url URL --token-file F [--cacert F]]\n"
			    "       kab bisect JOB --good REV --bad REV --metric M [--workload W] [--boots N] [...]\n"
			    "       kab bisect show ID [--format text|json] [...]\n"
			    "       kab bisect cancel ID [...]\n"
			    "  a bisection runs on the kabd as step jobs (GOOD's build against each commit's,\n"
			    "  paired); show lists its steps and, once it ends, the first bad commit;\n"
			    "  --boots: the boots its step jobs may spend (default: the job's bisect.boots)\n";

/* A query value percent-encoded: a revision may hold ~ ^ / @ { }. */
static void put_value(struct strbuf *b, const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("-._~", *p))
			sb_append(b, (const char *)p, 1);
		else
			sb_printf(b, "%%%02X", *p);
	}
}

static bool parse_id(const char *what, const char *s, int64_t *ret)
{
	if (s && util_parse_i64(s, ret) == 0 && *ret > 0)
		return true;
	fprintf(stderr, "kab bisect: %s \"%s\" is not an id (a positive number)\n", what, s ? s : "");
	return false;
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static void effect_line(FILE *out, json_t *e)
{
	double est = json_number_value(json_object_get(e, "estimate_pct"));
	if (json_is_number(json_object_get(e, "estimate_pct")))
		fprintf(out, "%+.1f%% [%+.1f, %+.1f] %lld pairs", est, json_number_value(json_object_get(e, "ci_lo_pct")),
			json_number_value(json_object_get(e, "ci_hi_pct")),
			(long long)json_integer_value(json_object_get(e, "pairs")));
	else
		fprintf(out, "not measured");
	fprintf(out, ", %s: %s", str(e, "decision"), str(e, "reason"));
}

/* A bisection's JSON as text: what it bisects, its step jobs so far, and
 * its report once it ended. */
static void show_text(FILE *out, json_t *d)
{
	fprintf(out, "bisection %lld: %s", (long long)json_integer_value(json_object_get(d, "id")), str(d, "state"));
	if (str(d, "reason")[0])
		fprintf(out, ": %s", str(d, "reason"));
	fprintf(out, "\n  %.12s..%.12s of job %lld, workload %s, metric %s (%s is better)\n", str(d, "good"),
		str(d, "bad"), (long long)json_integer_value(json_object_get(d, "job")), str(d, "workload"),
		str(d, "metric"), str(d, "direction")[0] ? str(d, "direction") : "?");
	if (json_is_integer(json_object_get(d, "boots_budget")))
		fprintf(out, "  boots of its step jobs: %lld of a budget of %lld\n",
			(long long)json_integer_value(json_object_get(d, "boots_spent")),
			(long long)json_integer_value(json_object_get(d, "boots_budget")));
	json_t *rep = json_object_get(d, "report"), *v;
	size_t i;
	if (json_is_object(rep)) {
		fprintf(out, "  anchor, BAD against GOOD: ");
		effect_line(out, json_object_get(rep, "anchor"));
		fprintf(out, "\n");
		json_array_foreach(json_object_get(rep, "steps"), i, v)
		{
			fprintf(out, "  step %zu: %.12s ", i + 1, str(v, "sha"));
			effect_line(out, v);
			fprintf(out, "\n");
		}
		json_array_foreach(json_object_get(rep, "culprits"), i, v)
		{
			if (strcmp(str(v, "answer"), "range") == 0) {
				fprintf(out, "  first bad commit: one of %lld: %s\n",
					(long long)json_integer_value(json_object_get(v, "n_candidates")), str(v, "reason"));
				continue;
			}
			const char *answer = str(v, "answer");
			fprintf(out, "  %s %s \"%s\" (%s, %s)\n    against its parent %.12s: ",
				strcmp(answer, "culprit") == 0            ? "first bad commit:"
				: strcmp(answer, "layout-sensitive") == 0 ? "layout-sensitive (not a regression) first bad commit:"
									  : "unconfirmed first bad commit:",
				str(v, "sha"), str(v, "subject"), str(v, "author"), str(v, "date"), str(v, "parent"));
			effect_line(out, json_object_get(v, "confirmation"));
			fprintf(out, "\n");
			json_t *ctl = json_object_get(v, "controls");
			static const char *const controls[][2] = { { "revert", "reverted on BAD" },
								   { "align", "with forced alignment" } };
			for (size_t m = 0; m < ARRAY_SIZE(controls); m++) {
				json_t *k = json_object_get(ctl, controls[m][0]);
				if (!json_is_object(k))
					continue;
				fprintf(out, "    %s: ", controls[m][1]);
				effect_line(out, k);
				if (str(k, "note")[0])
					fprintf(out, " [%s]", str(k, "note"));
				fprintf(out, "\n");
			}
		}
		fprintf(out, "  %lld builds, %lld boots\n", (long long)json_integer_value(json_object_get(rep, "builds")),
			(long long)json_integer_value(json_object_get(rep, "boots")));
	}
	json_array_foreach(json_object_get(d, "step_jobs"), i, v)
	{
		fprintf(out, "  %s job %lld: %.12s against %.12s, %lld pairs, %s%s%s\n",
			str(v, "control")[0] ? str(v, "control") : "step",
			(long long)json_integer_value(json_object_get(v, "job")), str(v, "sha"), str(v, "base"),
			(long long)json_integer_value(json_object_get(v, "pairs")),
			str(v, "status")[0] ? str(v, "status") : "not queued", str(v, "reason")[0] ? ": " : "", str(v, "reason"));
	}
	if (json_is_object(rep) && str(rep, "log")[0])
		fprintf(out, "git bisect log:\n%s", str(rep, "log"));
}

static int show(const struct client_conf *cc, int64_t id, const char *format)
{
	char path[64];
	snprintf(path, sizeof(path), "/bisections/%lld", (long long)id);
	if (strcmp(format, "json") == 0)
		return client_print(cc, "GET", path);
	struct client c;
	if (client_init(&c, cc) < 0)
		return 2;
	struct client_reply rep = { 0 };
	int ret = 1, rr = client_request(&c, "GET", path, NULL, 0, &rep);
	json_t *doc = NULL;
	if (rr == -ENOTCONN)
		ret = CLIENT_EXIT_UNREACHABLE;
	else if (rr == 0 && rep.status == 200 && client_json_parse(&rep, &doc) == 0) {
		/* the server's text goes out escaped, as every text kab prints */
		FILE *out = esc_stream(stdout);
		if (out) {
			show_text(out, doc);
			ret = fclose(out) == 0 ? 0 : 1;
		}
	} else if (rr == 0 && rep.status != 200) {
		client_reply_clear(&rep);
		client_clear(&c);
		return client_print(cc, "GET", path); /* prints the server's error */
	}
	json_decref(doc);
	client_reply_clear(&rep);
	client_clear(&c);
	return ret;
}

const struct option cmd_bisect_options[] = {
	{ "regression", required_argument, NULL, 'r' },
	{ "good", required_argument, NULL, 'g' },
	{ "bad", required_argument, NULL, 'b' },
	{ "metric", required_argument, NULL, 'm' },
	{ "workload", required_argument, NULL, 'w' },
	{ "boots", required_argument, NULL, 'n' },
	{ "format", required_argument, NULL, 'f' },
	CMD_CLIENT_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int cmd_bisect(int argc, char **argv)
{
	const char *regression = NULL, *good = NULL, *bad = NULL, *metric = NULL, *workload = NULL, *format = "text";
	const char *boots = NULL;
	struct client_conf cc = { 0 };
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "r:g:b:m:w:n:f:s:t:h", cmd_bisect_options, NULL)) != -1) {
		if (cmd_client_option(c, optarg, &cc))
			continue;
		switch (c) {
		case 'r': regression = optarg; break;
		case 'g': good = optarg; break;
		case 'b': bad = optarg; break;
		case 'm': metric = optarg; break;
		case 'w': workload = optarg; break;
		case 'n': boots = optarg; break;
		case 'f': format = optarg; break;
		case 'h': printf("%s", usage); return 0;
		default: fprintf(stderr, "%s", usage); return 2;
		}
	}
	if (cc.url && cc.socket) {
		fprintf(stderr, "kab: give --url (TCP) or --socket (the unix socket), not both\n");
		return 2;
	}
	if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0) {
		fprintf(stderr, "kab bisect: unknown format \"%s\" (formats: text, json)\n", format);
		return 2;
	}
	uint64_t budget = 0;
	if (boots && (util_parse_u64(boots, &budget) < 0 || budget < 1 || budget > JOB_BISECT_BOOTS_MAX)) {
		fprintf(stderr, "kab bisect: --boots \"%s\" is not a budget of boots: give a whole number from 1 to %u\n",
			boots, JOB_BISECT_BOOTS_MAX);
		return 2;
	}
	int left = argc - optind;
	const char *verb = left ? argv[optind] : NULL;
	int64_t id;
	char path[128];
	if (verb && (strcmp(verb, "show") == 0 || strcmp(verb, "cancel") == 0)) {
		if (left != 2 || regression || good || bad || metric || workload || boots) {
			fprintf(stderr, "%s", usage);
			return 2;
		}
		if (!parse_id("bisection", argv[optind + 1], &id))
			return 2;
		if (strcmp(verb, "show") == 0)
			return show(&cc, id, format);
		snprintf(path, sizeof(path), "/bisections/%lld/cancel", (long long)id);
		return client_print(&cc, "POST", path);
	}
	if (regression) {
		if (left || good || bad || metric || workload) {
			fprintf(stderr, "kab bisect: --regression takes its range, workload and metric from the regression: "
					"give no JOB, --good, --bad, --metric or --workload with it\n");
			return 2;
		}
		if (!parse_id("--regression", regression, &id))
			return 2;
		snprintf(path, sizeof(path), "/regressions/%lld/bisect", (long long)id);
		if (budget)
			snprintf(path + strlen(path), sizeof(path) - strlen(path), "?boots=%llu", (unsigned long long)budget);
		return client_print(&cc, "POST", path);
	}
	if (left != 1) {
		fprintf(stderr, "%s", usage);
		return 2;
	}
	if (!parse_id("JOB", verb, &id))
		return 2;
	const char *missing = !good ? "--good" : !bad ? "--bad" : !metric ? "--metric" : NULL;
	if (missing) {
		fprintf(stderr, "kab bisect: %s is missing: a bisection of job %lld needs --good REV --bad REV --metric M\n",
			missing, (long long)id);
		return 2;
	}
	struct strbuf q = { 0 };
	sb_printf(&q, "/bisections?job=%lld&good=", (long long)id);
	put_value(&q, good);
	sb_puts(&q, "&bad=");
	put_value(&q, bad);
	sb_puts(&q, "&metric=");
	put_value(&q, metric);
	if (workload) {
		sb_puts(&q, "&workload=");
		put_value(&q, workload);
	}
	if (budget)
		sb_printf(&q, "&boots=%llu", (unsigned long long)budget);
	int ret = q.buf ? client_print(&cc, "POST", q.buf) : 1;
	sb_free(&q);
	return ret;
}
