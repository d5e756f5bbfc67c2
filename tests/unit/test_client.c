/* The client's JSON reader (client.h): a reply parsed by jansson with a
 * bound on its size, fields read by path from the top, so a "status"
 * inside a boot is not the job's; what is missing, null or of another
 * type; bodies that are not JSON. And kab lab's text (lab_text.h) from
 * replies captured in tests/data/lab: the tables against their .txt,
 * hostile strings shown escaped, malformed replies refused naming the
 * field. */
#include "t.h"
#include "harness/cli/client.h"
#include "harness/cli/lab_text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct client_reply reply(const char *body)
{
	return (struct client_reply){ .status = 200, .body = (char *)body, .len = strlen(body) };
}

/* A job's status as kabd sends it: boots before the top-level status
 * would have fooled a reader that takes the first "status" anywhere. */
static const char job[] =
	"{\"boots\": [{\"slot\": 1, \"status\": \"failed\"}], \"id\": 7, \"name\": \"a \\\"q\\\" \\u00b5\", \"status\": \"running\", "
	"\"reason\": null, \"progress\": {\"runs_done\": 3, \"runs_skipped\": 1, \"runs_total\": 12, "
	"\"current\": {\"seq\": 5, \"pair\": 0, \"variant\": \"patched\", \"workload\": \"vm\"}, \"stage\": null, "
	"\"elapsed_s\": 12.5, \"eta_s\": 40}}\n";

static void test_paths(void)
{
	struct client_reply r = reply(job);
	json_t *doc = NULL;
	T_EQ_INT(client_json_parse(&r, &doc), 0);
	char buf[64];
	long long n;
	double d;
	T_EQ_INT(client_json_str(doc, "status", buf, sizeof(buf)), 0);
	T_EQ_STR(buf, "running");
	T_EQ_INT(client_json_str(doc, "name", buf, sizeof(buf)), 0);
	T_EQ_STR(buf, "a \"q\" \xc2\xb5"); /* every escape undone, not only \" */
	T_EQ_INT(client_json_int(doc, "id", &n), 0);
	T_EQ_INT(n, 7);
	T_EQ_INT(client_json_int(doc, "progress/runs_total", &n), 0);
	T_EQ_INT(n, 12);
	T_EQ_INT(client_json_int(doc, "progress/current/pair", &n), 0);
	T_EQ_INT(n, 0);
	T_EQ_INT(client_json_str(doc, "progress/current/variant", buf, sizeof(buf)), 0);
	T_EQ_STR(buf, "patched");
	T_EQ_INT(client_json_num(doc, "progress/eta_s", &d), 0);
	T_NEAR(d, 40, 0);
	T_EQ_INT(client_json_num(doc, "progress/elapsed_s", &d), 0);
	T_NEAR(d, 12.5, 0);
	/* missing, null, another type, a path through a non-object */
	T_EQ_INT(client_json_str(doc, "runs_done", buf, sizeof(buf)), -ENOENT); /* not at the top */
	T_EQ_INT(client_json_str(doc, "reason", buf, sizeof(buf)), -ENOENT);
	T_EQ_INT(client_json_int(doc, "progress/stage", &n), -ENOENT);
	T_EQ_INT(client_json_int(doc, "name", &n), -EINVAL);
	T_EQ_INT(client_json_int(doc, "progress/elapsed_s", &n), -EINVAL);
	T_EQ_INT(client_json_str(doc, "id", buf, sizeof(buf)), -EINVAL);
	T_EQ_INT(client_json_str(doc, "name/x", buf, sizeof(buf)), -ENOENT);
	T_EQ_INT(client_json_str(doc, "boots/status", buf, sizeof(buf)), -ENOENT);
	/* cut to the buffer */
	char small[4];
	T_EQ_INT(client_json_str(doc, "status", small, sizeof(small)), 0);
	T_EQ_STR(small, "run");
	json_decref(doc);
}

static void test_bad(void)
{
	json_t *doc = NULL;
	static const char *const bad[] = {
		"",
		"not json",
		"<html>502 Bad Gateway</html>",
		"[1, 2]",
		"\"status\"",
		"{\"status\": \"ok\"",
		"{\"status\": \"ok\", \"status\": \"done\"}", /* which one? neither */
		"{\"a\": \"\\u0000\"}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct client_reply r = reply(bad[i]);
		T_EQ_INT(client_json_parse(&r, &doc), -EBADMSG);
	}
	/* a reply past the bound is not parsed at all */
	size_t len = CLIENT_JSON_MAX + 16;
	char *big = malloc(len + 1);
	if (big) {
		memset(big, ' ', len);
		memcpy(big, "{\"status\": \"ok\"}", 16);
		big[len] = 0;
		struct client_reply r = { .status = 200, .body = big, .len = len };
		T_EQ_INT(client_json_parse(&r, &doc), -EFBIG);
		r.len = CLIENT_JSON_MAX; /* at the bound: trailing spaces are fine */
		T_EQ_INT(client_json_parse(&r, &doc), 0);
		json_decref(doc);
		free(big);
	}
	/* an error reply */
	struct client_reply e = reply("{\"error\": \"the job has 2 error(s)\", \"errors\": [\"3: bad\", \"4: worse\"]}\n");
	T_EQ_INT(client_json_parse(&e, &doc), 0);
	char msg[64];
	T_EQ_INT(client_json_str(doc, "error", msg, sizeof(msg)), 0);
	T_EQ_STR(msg, "the job has 2 error(s)");
	T_CHECK(json_is_array(client_json_at(doc, "errors")));
	json_decref(doc);
}

#define LAB_DATA "tests/data/lab/"

/* A captured reply, parsed; NULL (a failed check) when it cannot be. */
static json_t *lab_reply(const char *name)
{
	char path[256], *text = NULL;
	size_t len = 0;
	json_t *doc = NULL;
	snprintf(path, sizeof(path), LAB_DATA "%s", name);
	T_EQ_INT(util_read_file(path, &text, &len), 0);
	struct client_reply r = { .status = 200, .body = text, .len = len };
	if (text)
		T_EQ_INT(client_json_parse(&r, &doc), 0);
	free(text);
	return doc;
}

enum lab_view { LAB_MACHINES, LAB_JOBS, LAB_JOB };

/* The text of doc into *ret (free); the result. */
static int lab_render(enum lab_view v, json_t *doc, char **ret, struct strbuf *err)
{
	size_t len = 0;
	*ret = NULL;
	FILE *f = open_memstream(ret, &len);
	if (!f)
		return -ENOMEM;
	int r = v == LAB_MACHINES ? lab_text_machines(doc, f, err)
		: v == LAB_JOBS   ? lab_text_jobs(doc, f, err)
				  : lab_text_job(doc, f, err);
	fclose(f);
	return r;
}

/* reply's text against the expected file's, byte for byte */
static void lab_expect(enum lab_view v, const char *reply_name, const char *want_name)
{
	json_t *doc = lab_reply(reply_name);
	char path[256], *want = NULL, *got = NULL;
	size_t len = 0;
	struct strbuf err = { 0 };
	snprintf(path, sizeof(path), LAB_DATA "%s", want_name);
	T_EQ_INT(util_read_file(path, &want, &len), 0);
	if (doc) {
		T_EQ_INT(lab_render(v, doc, &got, &err), 0);
		T_EQ_STR(got, want ? want : "");
		if (err.buf)
			fprintf(stderr, "%s: %s\n", reply_name, err.buf);
	}
	size_t controls = 0; /* nothing a terminal acts on */
	for (const char *p = got; p && *p; p++)
		controls += *p != '\n' && ((unsigned char)*p < 0x20 || *p == 0x7f);
	T_EQ_INT(controls, 0);
	free(got);
	free(want);
	sb_free(&err);
	json_decref(doc);
}

static void test_lab_text(void)
{
	/* lab2's host name sets the title, a tag clears the screen (a C1
	 * CSI), its kernel is reversed (U+202E), a tag holds a tab and a line
	 * break: all shown escaped, each cell on its line; lab2 holds job 12 */
	lab_expect(LAB_MACHINES, "machines.json", "machines.txt");
	lab_expect(LAB_JOBS, "jobs.json", "jobs.txt");
	/* queued for a selector nothing matches: why, the host in it escaped */
	lab_expect(LAB_JOB, "job-waits.json", "job-waits.txt");
	/* attempt 1 lost, attempt 2 counted */
	lab_expect(LAB_JOB, "job-counted.json", "job-counted.txt");
}

/* A reply without a field the text shows, or with it of another type:
 * refused, naming the field; nothing written. */
static void test_lab_malformed(void)
{
	static const struct {
		enum lab_view v;
		const char *body, *err;
	} bad[] = {
		{ LAB_MACHINES, "{\"lab\": \"x\"}", "machines is missing (an array expected)" },
		{ LAB_MACHINES, "{\"machines\": [1]}", "machines[0] is an integer, not an object" },
		{ LAB_MACHINES,
		  "{\"machines\": [{\"id\": \"a\", \"hostname\": \"h\", \"state\": \"idle\", \"cpus\": \"2\", \"memory\": 1, "
		  "\"arch\": \"x\", \"kernel\": \"k\", \"kexec\": true, \"cgroup_version\": 2, \"tags\": [], \"heartbeat_age_s\": null, "
		  "\"job\": null}]}",
		  "machines[0].cpus is a string, not an integer" },
		{ LAB_MACHINES,
		  "{\"machines\": [{\"id\": \"a\", \"hostname\": \"h\", \"state\": \"busy\", \"cpus\": 2, \"memory\": 1, "
		  "\"arch\": \"x\", \"kernel\": \"k\", \"kexec\": true, \"cgroup_version\": 2, \"tags\": [], \"heartbeat_age_s\": 1, "
		  "\"job\": \"12\"}]}",
		  "machines[0].job is a string, not an integer or null" },
		{ LAB_MACHINES,
		  "{\"machines\": [{\"id\": \"a\", \"hostname\": \"h\", \"state\": \"idle\", \"cpus\": 2, \"memory\": 1, "
		  "\"arch\": \"x\", \"kernel\": \"k\", \"kexec\": true, \"cgroup_version\": 2, \"tags\": [\"a\", 3], "
		  "\"heartbeat_age_s\": 1, \"job\": null}]}",
		  "machines[0].tags[1] is an integer, not a string" },
		{ LAB_JOBS, "{\"jobs\": {}}", "jobs is an object, not an array" },
		{ LAB_JOBS,
		  "{\"jobs\": [{\"id\": 1, \"state\": \"done\", \"attempts\": 1, \"max_attempts\": 3, \"machine\": null, "
		  "\"selector\": \"\", \"created\": null, \"submitted_by\": 5}]}",
		  "jobs[0].submitted_by is an integer, not a string" },
		{ LAB_JOB, "{\"id\": 1}", "state is missing (a string expected)" },
		{ LAB_JOB,
		  "{\"id\": 1, \"state\": \"done\", \"attempts\": 1, \"max_attempts\": 3, \"machine\": null, \"machine_id\": null, "
		  "\"selector\": \"\", \"reason\": null, \"submitted_by\": \"me\", \"created\": null, \"finished\": null, "
		  "\"counted_attempt\": null, \"why\": null, \"attempts_list\": [{\"attempt\": 1, \"machine\": \"h\", "
		  "\"machine_id\": \"a\", \"reason\": null, \"started\": null, \"ended\": null}]}",
		  "attempts_list[0].outcome is missing (a string expected)" },
		{ LAB_JOB,
		  "{\"id\": 1, \"state\": \"queued\", \"attempts\": 0, \"max_attempts\": 3, \"machine\": null, \"machine_id\": null, "
		  "\"selector\": \"\", \"reason\": null, \"submitted_by\": \"me\", \"created\": null, \"finished\": null, "
		  "\"counted_attempt\": null, \"why\": [\"x\"], \"attempts_list\": []}",
		  "why is an array, not a string or null" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct client_reply r = reply(bad[i].body);
		json_t *doc = NULL;
		T_EQ_INT(client_json_parse(&r, &doc), 0);
		char *got = NULL;
		struct strbuf err = { 0 };
		T_EQ_INT(lab_render(bad[i].v, doc, &got, &err), -EBADMSG);
		T_EQ_STR(err.buf, bad[i].err);
		T_EQ_STR(got, ""); /* nothing written */
		free(got);
		sb_free(&err);
		json_decref(doc);
	}
}

int main(void)
{
	test_paths();
	test_bad();
	test_lab_text();
	test_lab_malformed();
	return t_done("test_client");
}
