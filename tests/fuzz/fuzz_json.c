/* libFuzzer target: JSON both ways. The bytes as a reply the client
 * reads (client_json_parse and the paths kab submit --wait reads), and
 * the bytes as a string kab writes (jw_str_n, jw_dump_sb): what is
 * written must be UTF-8 with no control character or DEL left raw, and
 * read back as the string made, which is the input itself when the input
 * was UTF-8. */
#include "harness/base/esc.h"
#include "harness/base/json.h"
#include "harness/cli/client.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_reply(const uint8_t *data, size_t size)
{
	struct client_reply r = { .status = 200, .body = (char *)data, .len = size };
	json_t *doc;
	if (client_json_parse(&r, &doc) < 0)
		return;
	char buf[64];
	long long n;
	double d;
	client_json_str(doc, "status", buf, sizeof(buf));
	client_json_str(doc, "progress/current/variant", buf, sizeof(buf));
	client_json_int(doc, "progress/runs_done", &n);
	client_json_num(doc, "progress/eta_s", &d);
	client_json_at(doc, "errors");
	json_decref(doc);
}

static void write_string(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	json_t *v = jw_str_n(s, size);
	if (!v)
		abort();
	json_t *made = json_incref(v);
	struct strbuf sb = { 0 };
	if (jw_dump_sb(&sb, v, 0) < 0 || !sb.buf)
		abort();
	if (!esc_utf8_valid(sb.buf, sb.len, NULL))
		abort();
	for (size_t i = 0; i < sb.len; i++)
		if ((unsigned char)sb.buf[i] < 0x20 || sb.buf[i] == 0x7f)
			abort();
	json_error_t e;
	json_t *back = json_loadb(sb.buf, sb.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
	if (!back || !json_equal(back, made))
		abort();
	if (esc_utf8_valid(s, size, NULL) && (json_string_length(back) != size || memcmp(json_string_value(back), s, size) != 0))
		abort();
	json_decref(back);
	json_decref(made);
	sb_free(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	read_reply(data, size);
	write_string(data, size);
	return 0;
}
