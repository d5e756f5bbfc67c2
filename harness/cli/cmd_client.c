/* kab submit / status / cancel: the CLI as a client of kabd. */
#include "harness/cli/client.h"
#include "harness/cli/cmd.h"
#include "db/store.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct client_opts {
	struct client_conf conf;
	bool wait, lab;
	const char *on; /* --on SELECTOR, with --lab */
};

const struct option cmd_submit_options[] = { CMD_CLIENT_OPTIONS,
					     { "wait", no_argument, NULL, 'w' },
					     { "lab", no_argument, NULL, 'L' },
					     { "on", required_argument, NULL, 'O' },
					     { "help", no_argument, NULL, 'h' },
					     { 0 } };
/* kab status and kab cancel */
const struct option cmd_client_options[] = { CMD_CLIENT_OPTIONS, { "help", no_argument, NULL, 'h' }, { 0 } };

/* Parses the shared options; returns the index of the first operand, or
 * -1 after printing usage. */
static int parse_client_opts(int argc, char **argv, const char *usage, bool allow_wait, struct client_opts *o)
{
	int c;
	optind = 1;
	const struct option *opts = allow_wait ? cmd_submit_options : cmd_client_options;
	while ((c = getopt_long(argc, argv, "s:t:wh", opts, NULL)) != -1) {
		switch (c) {
		case 's': o->conf.url = optarg; break;
		case 'S': o->conf.socket = optarg; break;
		case 't': o->conf.token_file = optarg; break;
		case 'C': o->conf.cacert = optarg; break;
		case 'w':
		case 'L':
		case 'O':
			if (!allow_wait)
				goto bad;
			if (c == 'w')
				o->wait = true;
			else if (c == 'L')
				o->lab = true;
			else
				o->on = optarg;
			break;
		case 'h':
			printf("usage: %s\n", usage);
			return -2;
		default:
			goto bad;
		}
	}
	if (o->conf.url && o->conf.socket) {
		fprintf(stderr, "kab: give --url (TCP) or --socket (the unix socket), not both\n");
		return -1;
	}
	if (o->on && !o->lab) {
		fprintf(stderr, "kab: --on SELECTOR says where a lab job may run: give --lab too\n");
		return -1;
	}
	if (o->lab && o->wait) {
		fprintf(stderr, "kab: --wait follows a job on this kabd; a lab job runs on any machine (kab lab job ID shows it)\n");
		return -1;
	}
	return optind;
bad:
	fprintf(stderr, "usage: %s\n", usage);
	return -1;
}

/* A reply's body on out, as kab shows any text it did not write: a
 * server's (an older kabd's, or anyone's at --url) escape sequences are
 * shown, not run (esc.h); JSON stays JSON. */
static void print_body(const struct client_reply *r, FILE *out)
{
	esc_text_file(out, r->body, r->len, ESC_LINES);
	if (r->len && r->body[r->len - 1] != '\n')
		fputc('\n', out);
}

void client_print_error(const struct client_reply *r)
{
	char msg[512], shown[1024];
	json_t *doc = NULL;
	if (client_json_parse(r, &doc) == 0 && client_json_str(doc, "error", msg, sizeof(msg)) == 0)
		fprintf(stderr, "kab: server: %s (HTTP %ld)\n", esc_text_buf(msg, shown, sizeof(shown), 0), r->status);
	else
		fprintf(stderr, "kab: server answered HTTP %ld\n", r->status);
	if (doc && client_json_at(doc, "errors"))
		print_body(r, stderr);
	json_decref(doc);
}

/* A 2xx reply that should be kabd's JSON and is not. */
static void bad_reply(const struct client_reply *r, const char *what)
{
	char shown[256];
	log_error("%s: the server's reply is not %s JSON%s (HTTP %ld): %s", what,
		  r->len > CLIENT_JSON_MAX ? "bounded" : "kabd's", r->len > CLIENT_JSON_MAX ? ", too long" : "",
		  r->status, esc_text_buf(r->body ? r->body : "", shown, sizeof(shown), 0));
}

/* Polls the job until it finishes; one progress line (run i of n, the
 * variant and workload running, the server's ETA),
 * rewritten in place on a terminal. Exit code: 0 done, 1 otherwise. */
static int wait_job(const struct client *c, long long id)
{
	char path[64], status[32] = "";
	snprintf(path, sizeof(path), "/jobs/%lld", id);
	bool tty = isatty(STDERR_FILENO);
	double t0 = util_mono_now();
	long long done0 = -1;
	for (;;) {
		struct client_reply r = { 0 };
		int rr = client_request(c, "GET", path, NULL, 0, &r);
		if (rr < 0)
			return rr == -ENOTCONN ? CLIENT_EXIT_UNREACHABLE : 1;
		if (r.status != 200) {
			client_print_error(&r);
			client_reply_clear(&r);
			return 1;
		}
		json_t *doc;
		if (client_json_parse(&r, &doc) < 0) {
			bad_reply(&r, path);
			client_reply_clear(&r);
			return 1;
		}
		client_reply_clear(&r);
		long long done = 0, total = 0, skipped = 0, pair = -1;
		status[0] = 0;
		client_json_str(doc, "status", status, sizeof(status));
		/* a word this kab does not know (a newer server's) is no end: poll on */
		enum job_status js;
		if (job_status_parse(status, &js) < 0)
			js = JOB_STATUS_UNKNOWN;
		client_json_int(doc, "progress/runs_done", &done);
		client_json_int(doc, "progress/runs_total", &total);
		client_json_int(doc, "progress/runs_skipped", &skipped);
		char cur[320] = "";
		char variant[64], workload[64], v_shown[128], w_shown[128];
		if (client_json_str(doc, "progress/current/variant", variant, sizeof(variant)) == 0 &&
		    client_json_str(doc, "progress/current/workload", workload, sizeof(workload)) == 0) {
			/* pair 0: the workload's uncounted warm-up */
			bool warm = client_json_int(doc, "progress/current/pair", &pair) == 0 && pair == 0;
			snprintf(cur, sizeof(cur), ", now %s / %s%s", esc_text_buf(variant, v_shown, sizeof(v_shown), 0),
				 esc_text_buf(workload, w_shown, sizeof(w_shown), 0), warm ? " (warm-up)" : "");
		}
		/* the server's ETA (from the durations of the job's runs), else
		 * one from what this client has seen */
		double server_eta = -1;
		if (client_json_num(doc, "progress/eta_s", &server_eta) < 0)
			server_eta = -1;
		json_decref(doc);
		if (done0 < 0)
			done0 = done;
		char eta[48] = "";
		long long left = total - skipped - done;
		if (server_eta >= 0 && left > 0)
			snprintf(eta, sizeof(eta), ", ETA %.0f s", server_eta);
		else if (done > done0 && left > 0)
			snprintf(eta, sizeof(eta), ", ETA %.0f s", (util_mono_now() - t0) / (double)(done - done0) * (double)left);
		char st_shown[128];
		fprintf(stderr, "%sjob %lld: %s, run %lld of %lld%s%s%s", tty ? "\r\033[K" : "", id,
			esc_text_buf(status, st_shown, sizeof(st_shown), 0), done + (left > 0 && js == JOB_RUNNING),
			total - skipped, cur, eta, tty ? "" : "\n");
		if (job_status_finished(js)) {
			if (tty)
				fputc('\n', stderr);
			return js == JOB_DONE ? 0 : 1;
		}
		struct timespec ts = { 2, 0 };
		nanosleep(&ts, NULL);
	}
}

/* "/lab/jobs?on=..." with the selector percent-encoded; -ENAMETOOLONG. */
static int lab_path(const char *on, char *buf, size_t len)
{
	struct strbuf sb = { 0 };
	sb_puts(&sb, "/lab/jobs");
	if (on) {
		sb_puts(&sb, "?on=");
		for (const unsigned char *p = (const unsigned char *)on; *p; p++)
			if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("-._~", *p))
				sb_append(&sb, (const char *)p, 1);
			else
				sb_printf(&sb, "%%%02X", *p);
	}
	int r = sb.buf && sb.len < len ? 0 : -ENAMETOOLONG;
	if (r == 0)
		memcpy(buf, sb.buf, sb.len + 1);
	sb_free(&sb);
	return r;
}

/* A lab job that no machine matches waits: say so, with why. */
static void say_waits(json_t *doc)
{
	char why[4096], shown[8192];
	if (client_json_str(doc, "why", why, sizeof(why)) == 0 && strstr(why, "no machine"))
		fprintf(stderr, "kab: the job waits: %s", esc_text_buf(why, shown, sizeof(shown), ESC_LINES));
}

int cmd_submit(int argc, char **argv)
{
	const char *usage = "kab submit JOB [--socket PATH | --url URL [--token-file F] [--cacert F]] [--wait | --lab [--on SELECTOR]]";
	struct client_opts o = { 0 };
	int i = parse_client_opts(argc, argv, usage, true, &o);
	if (i == -2)
		return 0;
	if (i < 0 || i != argc - 1) {
		if (i >= 0)
			fprintf(stderr, "usage: %s\n", usage);
		return 2;
	}
	char *text;
	size_t len;
	int r = util_read_file(argv[i], &text, &len);
	if (r < 0) {
		log_error("cannot read %s: %s", argv[i], strerror(-r));
		return 2;
	}
	struct client c;
	if (client_init(&c, &o.conf) < 0) {
		free(text);
		return 2;
	}
	struct client_reply rep = { 0 };
	int ret = 1;
	char path[64 + 3 * 1024] = "/jobs";
	if (o.lab && lab_path(o.on, path, sizeof(path)) < 0) {
		fprintf(stderr, "kab: --on: the selector is too long\n");
		ret = 2;
		goto out;
	}
	int rr = client_request(&c, "POST", path, text, len, &rep);
	if (rr < 0) {
		ret = rr == -ENOTCONN ? CLIENT_EXIT_UNREACHABLE : 1;
		goto out;
	}
	if (rep.status != 201 && rep.status != 200) {
		client_print_error(&rep);
		ret = rep.status == 400 || rep.status == 413 ? 2 : 1;
		goto out;
	}
	json_t *doc;
	long long id;
	if (client_json_parse(&rep, &doc) < 0) {
		bad_reply(&rep, "kab submit");
		goto out;
	}
	r = client_json_int(doc, o.lab ? "lab_job" : "id", &id);
	if (o.lab)
		say_waits(doc);
	json_decref(doc);
	if (r < 0 || id <= 0) {
		char shown[256];
		log_error("server accepted the job but sent no id: %s", esc_text_buf(rep.body, shown, sizeof(shown), 0));
		goto out;
	}
	printf("%lld\n", id);
	fflush(stdout);
	ret = o.wait ? wait_job(&c, id) : 0;
out:
	client_reply_clear(&rep);
	client_clear(&c);
	free(text);
	return ret;
}

static int get_and_print(int argc, char **argv, const char *usage, const char *method, bool need_id)
{
	struct client_opts o = { 0 };
	int i = parse_client_opts(argc, argv, usage, false, &o);
	if (i == -2)
		return 0;
	if (i < 0 || (need_id && i != argc - 1) || (!need_id && i < argc - 1)) {
		if (i >= 0)
			fprintf(stderr, "usage: %s\n", usage);
		return 2;
	}
	int64_t id = 0;
	if (i < argc && (util_parse_i64(argv[i], &id) < 0 || id <= 0)) {
		fprintf(stderr, "kab: \"%s\" is not a job id (a positive number)\n", argv[i]);
		return 2;
	}
	char path[64];
	if (strcmp(method, "POST") == 0)
		snprintf(path, sizeof(path), "/jobs/%lld/cancel", (long long)id);
	else if (id)
		snprintf(path, sizeof(path), "/jobs/%lld", (long long)id);
	else
		snprintf(path, sizeof(path), "/jobs");
	struct client c;
	if (client_init(&c, &o.conf) < 0)
		return 2;
	struct client_reply rep = { 0 };
	int ret = 1;
	int rr = client_request(&c, method, path, strcmp(method, "POST") == 0 ? "" : NULL, 0, &rep);
	if (rr == -ENOTCONN)
		ret = CLIENT_EXIT_UNREACHABLE;
	if (rr == 0) {
		if (rep.status >= 200 && rep.status < 300) {
			print_body(&rep, stdout);
			ret = 0;
		} else {
			client_print_error(&rep);
			ret = rep.status == 404 ? 2 : 1;
		}
	}
	client_reply_clear(&rep);
	client_clear(&c);
	return ret;
}

int cmd_status(int argc, char **argv)
{
	return get_and_print(argc, argv, "kab status [ID] [--socket PATH | --url URL [--token-file F] [--cacert F]]", "GET", false);
}

int cmd_cancel(int argc, char **argv)
{
	return get_and_print(argc, argv, "kab cancel ID [--socket PATH | --url URL [--token-file F] [--cacert F]]", "POST", true);
}

bool cmd_client_option(int c, const char *arg, struct client_conf *cc)
{
	switch (c) {
	case 's': cc->url = arg; return true;
	case 'S': cc->socket = arg; return true;
	case 't': cc->token_file = arg; return true;
	case 'C': cc->cacert = arg; return true;
	default: return false;
	}
}

int client_print(const struct client_conf *conf, const char *method, const char *path)
{
	struct client c;
	if (client_init(&c, conf) < 0)
		return 2;
	struct client_reply rep = { 0 };
	int ret = 1;
	int rr = client_request(&c, method, path, strcmp(method, "POST") == 0 ? "" : NULL, 0, &rep);
	if (rr == -ENOTCONN)
		ret = CLIENT_EXIT_UNREACHABLE;
	if (rr == 0) {
		if (rep.status == 200 || rep.status == 201) {
			esc_text_file(stdout, rep.body, rep.len, ESC_LINES);
			ret = 0;
		} else {
			client_print_error(&rep);
			ret = rep.status == 404 || rep.status == 400 ? 2 : 1;
		}
	}
	client_reply_clear(&rep);
	client_clear(&c);
	return ret;
}

int client_report(const struct client_conf *conf, long long id, const char *format)
{
	char path[128];
	snprintf(path, sizeof(path), "/jobs/%lld/report?format=%s", id, format);
	return client_print(conf, "GET", path);
}
