/* The workload key tables: the generic parsers and the one message each
 * key type has, on a table of every type; every workload's table against
 * itself (its defaults pass its own checks) and against its hand-written
 * reference (doc/wl-TYPE.md, else doc/jobs.md): each key is there with
 * its default, so the two cannot drift apart. */
#include "t_job.h"
#include "workloads/wl.h"
#include "harness/job/job.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static const char *const colours[] = { "red", "green", "blue", NULL };

static const struct wl_key keys[] = {
	{ .name = "size", .type = WL_KEY_SIZE, .min = 4096, .max = 1ull << 40, .page = 4096, .example = "256M", .def = "1M" },
	{ .name = "at_least", .type = WL_KEY_SIZE, .min = 8ull << 20, .example = "512M" },
	{ .name = "align", .type = WL_KEY_SIZE, .min = 4096, .max = 1ull << 30, .pow2 = true, .example = "2M", .def = "2M" },
	{ .name = "reps", .type = WL_KEY_COUNT, .min = 1, .max = 10000, .def = "10" },
	{ .name = "small", .type = WL_KEY_COUNT, .min = 1, .max = 100, .why = " (a reason)" },
	{ .name = "time", .type = WL_KEY_DURATION, .min = 1, .max = 7 * 86400, .why = " (counted in seconds)", .example = "300s or 5m" },
	{ .name = "colour", .type = WL_KEY_ENUM, .choices = colours, .def = "red" },
	{ .name = "flag", .type = WL_KEY_BOOL, .def = "no" },
	{ .name = "loose", .type = WL_KEY_BOOL, .bool_words = true },
	{ .name = "text", .type = WL_KEY_TEXT },
	{ .name = NULL },
};

/* The message of key = value, or "" when the check takes it. */
static const char *message(const char *key, const char *value)
{
	static char buf[512];
	const char *const kv[] = { key, value, NULL };
	struct job_workload *w = t_workload("test", kv);
	struct diags d = { 0 };
	int r = wl_key_check(w, wl_key_find(keys, key), "x.job", &d);
	T_EQ_INT(r, d.n ? -EINVAL : 0);
	snprintf(buf, sizeof(buf), "%s", d.n ? d.v[0].msg : "");
	if (d.n)
		T_EQ_INT(d.v[0].line, 11);
	diags_free(&d);
	t_workload_free(w);
	return buf;
}

static void test_messages(void)
{
	T_EQ_STR(message("size", "256M"), "");
	T_EQ_STR(message("size", "5000"), "workload \"w\": size \"5000\" must be a size from 4K to 1T in whole 4K pages, e.g. 256M");
	T_EQ_STR(message("size", "2T"), "workload \"w\": size \"2T\" must be a size from 4K to 1T in whole 4K pages, e.g. 256M");
	T_EQ_STR(message("at_least", "4M"), "workload \"w\": at_least \"4M\" must be a size of at least 8M, e.g. 512M");
	T_EQ_STR(message("at_least", "1P"), "workload \"w\": at_least \"1P\" must be a size of at least 8M, e.g. 512M");
	T_EQ_STR(message("align", "64K"), "");
	T_EQ_STR(message("align", "3M"), "workload \"w\": align \"3M\" must be a power of two from 4K to 1G, e.g. 2M");
	T_EQ_STR(message("reps", "10000"), "");
	T_EQ_STR(message("reps", "0"), "workload \"w\": reps \"0\" must be a whole number from 1 to 10000");
	T_EQ_STR(message("reps", "2.5"), "workload \"w\": reps \"2.5\" must be a whole number from 1 to 10000");
	T_EQ_STR(message("small", "-1"), "workload \"w\": small \"-1\" must be a whole number from 1 to 100 (a reason)");
	T_EQ_STR(message("time", "5m"), "");
	T_EQ_STR(message("time", "2.5s"), "workload \"w\": time \"2.5s\" must be whole seconds from 1 s to 7 days (counted in seconds), e.g. 300s or 5m");
	T_EQ_STR(message("time", "8d"), "workload \"w\": time \"8d\" must be whole seconds from 1 s to 7 days (counted in seconds), e.g. 300s or 5m");
	T_EQ_STR(message("colour", "blue"), "");
	T_EQ_STR(message("colour", "gren"), "workload \"w\": colour \"gren\" is not one of red, green, blue (did you mean \"green\"?)");
	T_EQ_STR(message("colour", "purple"), "workload \"w\": colour \"purple\" is not one of red, green, blue");
	T_EQ_STR(message("flag", "yes"), "");
	T_EQ_STR(message("flag", "on"), "workload \"w\": flag \"on\" is not yes or no");
	T_EQ_STR(message("loose", "on"), "");
	T_EQ_STR(message("loose", "maybe"), "workload \"w\": loose \"maybe\" is not yes or no");
	T_EQ_STR(message("text", "anything at all"), "");
}

static void test_accessors(void)
{
	const char *const kv[] = { "size", "64K", "flag", "yes", "loose", "off", NULL };
	struct job_workload *w = t_workload("test", kv);
	uint64_t v = 7;
	bool b = false;
	T_EQ_INT(wl_key_u64(w, wl_key_find(keys, "size"), &v), 0);
	T_CHECK(v == 65536);
	T_EQ_INT(wl_key_u64(w, wl_key_find(keys, "reps"), &v), 0); /* the default */
	T_CHECK(v == 10);
	T_EQ_INT(wl_key_u64(w, wl_key_find(keys, "align"), &v), 0);
	T_CHECK(v == 2u << 20);
	T_EQ_INT(wl_key_u64(w, wl_key_find(keys, "small"), &v), -ENODATA); /* no value, no default */
	T_CHECK(v == 2u << 20);
	T_EQ_INT(wl_key_bool(w, wl_key_find(keys, "flag"), &b), 0);
	T_CHECK(b);
	T_EQ_INT(wl_key_bool(w, wl_key_find(keys, "loose"), &b), 0);
	T_CHECK(!b);
	T_EQ_STR(wl_key_value(w, wl_key_find(keys, "colour")), "red");
	T_CHECK(wl_key_value(w, wl_key_find(keys, "text")) == NULL);
	T_EQ_STR(wl_key_choice(wl_key_find(keys, "colour"), "blue"), "blue");
	T_CHECK(wl_key_choice(wl_key_find(keys, "colour"), "blu") == NULL);
	T_CHECK(wl_key_find(keys, "nope") == NULL);
	T_EQ_INT(wl_key_parse_u64(wl_key_find(keys, "reps"), "0", &v), -ERANGE);
	T_EQ_INT(wl_key_parse_u64(wl_key_find(keys, "reps"), "x", &v), -EINVAL);
	T_CHECK(v == 2u << 20);
	t_workload_free(w);
}

/* Every workload's table: named, helped, a required key without a
 * default, and each default one its own check takes. */
static void test_tables(void)
{
	for (const struct wl_ops *const *o = wl_all(); *o; o++)
		for (const struct wl_key *k = (*o)->keys; k && k->name; k++) {
			T_CHECK(k->help && k->help[0]);
			T_CHECK(!(k->required && k->def));
			if (!k->required && !k->def && !k->def_doc)
				fprintf(stderr, "%s: key %s has no default and is not required\n", (*o)->type, k->name);
			T_CHECK(k->required || k->def || k->def_doc);
			T_CHECK(k->type != WL_KEY_ENUM || (k->choices && k->choices[0]));
			if (!k->def)
				continue;
			const char *const kv[] = { k->name, k->def, NULL };
			struct job_workload *w = t_workload("test", kv);
			struct diags d = { 0 };
			if (wl_key_check(w, k, "x.job", &d) < 0)
				fprintf(stderr, "%s: the default of %s fails its check: %s\n", (*o)->type, k->name, d.v[0].msg);
			T_EQ_INT((int)d.n, 0);
			diags_free(&d);
			t_workload_free(w);
		}
}

/* The cells of a Markdown table row, trimmed, into cells; how many. */
static size_t row_cells(char *line, char **cells, size_t max)
{
	size_t n = 0;
	char *p = line + 1; /* past the leading '|' */
	while (*p && n < max) {
		char *bar = strchr(p, '|');
		if (!bar)
			break;
		*bar = 0;
		while (*p == ' ')
			p++;
		char *end = bar;
		while (end > p && end[-1] == ' ')
			*--end = 0;
		cells[n++] = p;
		p = bar + 1;
	}
	return n;
}

/* Whether a row of the reference documents key (a cell "`KEY`" or
 * "`KEY` (required)"; in doc/jobs.md also a cell "`TYPE`") with its default. */
static bool row_has_key(char *line, const char *type, const struct wl_key *k, bool readme)
{
	char *cells[16], name[96], name_sp[100], plain[96];
	size_t n = row_cells(line, cells, 16);
	snprintf(name, sizeof(name), "`%s`", k->name);
	snprintf(name_sp, sizeof(name_sp), "`%s` ", k->name);
	snprintf(plain, sizeof(plain), "`%s`", type);
	bool named = false, typed = !readme, dflt = false;
	const char *want = k->def ? k->def : k->def_doc;
	char quoted[96] = "";
	if (want)
		snprintf(quoted, sizeof(quoted), "`%s`", want);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(cells[i], name) == 0 || strncmp(cells[i], name_sp, strlen(name_sp)) == 0)
			named = true;
		if (strcmp(cells[i], plain) == 0)
			typed = true;
		if (k->required ? strstr(cells[i], "required") != NULL
				: want && (strcmp(cells[i], want) == 0 || strcmp(cells[i], quoted) == 0))
			dflt = true;
	}
	return named && typed && dflt;
}

static void test_reference(void)
{
	for (const struct wl_ops *const *o = wl_all(); *o; o++) {
		char path[256];
		snprintf(path, sizeof(path), "doc/wl-%s.md", (*o)->type);
		bool readme = access(path, R_OK) != 0;
		if (readme)
			snprintf(path, sizeof(path), "doc/jobs.md");
		char *text = NULL;
		T_EQ_INT(util_read_file(path, &text, NULL), 0);
		if (!text)
			continue;
		for (const struct wl_key *k = (*o)->keys; k && k->name; k++) {
			bool found = false;
			for (char *l = text; *l && !found;) {
				size_t len = strcspn(l, "\n");
				char line[4096];
				snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) ? len : sizeof(line) - 1), l);
				if (line[0] == '|' && row_has_key(line, (*o)->type, k, readme))
					found = true;
				l += len + (l[len] == '\n');
			}
			if (!found)
				fprintf(stderr, "%s: no row for key %s of %s with its default (%s)\n", path, k->name, (*o)->type,
					k->required ? "required" : k->def ? k->def : k->def_doc);
			T_CHECK(found);
		}
		free(text);
	}
}

int main(void)
{
	test_messages();
	test_accessors();
	test_tables();
	test_reference();
	return t_done("test_wl_keys");
}
