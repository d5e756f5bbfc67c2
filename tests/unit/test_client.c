/* The client's JSON reader (client.h): a reply parsed by jansson with a
 * bound on its size, fields read by path from the top, so a "status"
 * inside a boot is not the job's; what is missing, null or of another
 * type; bodies that are not JSON. */
#include "t.h"
#include "harness/cli/client.h"

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

int main(void)
{
	test_paths();
	test_bad();
	return t_done("test_client");
}
