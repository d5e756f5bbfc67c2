/* Job files: the key reference, from the key table (job_keytab.c) and the
 * workload types' own tables (workloads/wl.h): kab check --keys. doc/jobs.md
 * and kab(1) carry its output between markers, and tests/docs/run.sh
 * fails when they differ from it. */
#include "harness/job/job.h"
#include "harness/job/job_priv.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

#include <errno.h>
#include <string.h>

#define MARK_BEGIN "kab check --keys:"
#define MARK_END "end of kab check --keys"

/* Section titles as the reference names them. */
static const char *sec_title(enum job_sec_kind sec)
{
	switch (sec) {
	case JOB_SEC_VARIANT: return "[variant LABEL]";
	case JOB_SEC_WORKLOAD: return "[workload NAME]";
	case JOB_SEC_METRIC: return "[metric NAME]";
	case JOB_SEC_JOB: return "[job]";
	case JOB_SEC_SWAP: return "[swap]";
	case JOB_SEC_REPORT: return "[report]";
	case JOB_SEC_IGNORED: break;
	}
	return "?";
}

static bool documented(const struct job_keydef *k)
{
	return k->help != NULL;
}

/* A workload key's type and range, as the reference says them. */
static void wl_doc_type(const struct wl_key *k, struct strbuf *sb)
{
	if (k->type == WL_KEY_BOOL) {
		sb_printf(sb, "`yes`, `no`");
		return;
	}
	if (k->type == WL_KEY_ENUM || k->type == WL_KEY_TEXT) {
		sb_printf(sb, "%s", k->type == WL_KEY_ENUM ? "" : k->choices ? "text or " : "text");
		for (size_t i = 0; k->choices && k->choices[i]; i++)
			sb_printf(sb, "%s`%s`", i ? ", " : "", k->choices[i]);
		return;
	}
	char lo[32], hi[32];
	bool size = k->type == WL_KEY_SIZE;
	const char *what = !size     ? (k->type == WL_KEY_DURATION ? "whole seconds, " : "")
			   : k->pow2 ? "power of two, "
				     : "size, ";
	if (size) {
		util_format_size(k->min, lo, sizeof(lo));
		util_format_size(k->max, hi, sizeof(hi));
	} else {
		snprintf(lo, sizeof(lo), "%llu", (unsigned long long)k->min);
		snprintf(hi, sizeof(hi), "%llu", (unsigned long long)k->max);
	}
	sb_printf(sb, "%s%s%s", what, k->max ? "" : "at least ", lo);
	if (k->max)
		sb_printf(sb, " to %s", hi);
}

static void wl_doc_default(const struct wl_key *k, struct strbuf *sb)
{
	if (k->required)
		sb_printf(sb, "required");
	else if (k->def)
		sb_printf(sb, "`%s`", k->def);
	else
		sb_printf(sb, "%s", k->def_doc ? k->def_doc : "none");
}

static void md_section(enum job_sec_kind sec, FILE *out)
{
	fprintf(out, "<!-- " MARK_BEGIN " %s -->\n", sec_title(sec));
	fprintf(out, "| key | type | default | meaning |\n|---|---|---|---|\n");
	for (size_t i = 0; i < job_n_keys; i++) {
		const struct job_keydef *k = &job_keydefs[i];
		if (k->sec == sec && documented(k))
			fprintf(out, "| `%s` | %s | %s | %s |\n", k->name, k->doc_type, k->doc_default, k->help);
	}
	fprintf(out, "<!-- " MARK_END " -->\n");
}

static void md_types(FILE *out)
{
	fprintf(out, "<!-- " MARK_BEGIN " workload types -->\n");
	fprintf(out, "| type | key | type of value | default | meaning |\n|---|---|---|---|---|\n");
	for (const struct wl_ops *const *o = wl_all(); *o; o++)
		for (const struct wl_key *k = (*o)->keys; k && k->name; k++) {
			struct strbuf type = { 0 }, def = { 0 };
			wl_doc_type(k, &type);
			wl_doc_default(k, &def);
			fprintf(out, "| `%s` | `%s` | %s | %s | %s |\n", (*o)->type, k->name, type.buf ? type.buf : "",
				def.buf ? def.buf : "", k->help ? k->help : "");
			sb_free(&type);
			sb_free(&def);
		}
	fprintf(out, "<!-- " MARK_END " -->\n");
}

/* Markdown as roff: `code` in bold, links as their text, escapes. */
static void roff_text(const char *s, FILE *out)
{
	bool code = false;
	for (const char *p = s; *p; p++) {
		if (*p == '`') {
			fputs(code ? "\\fR" : "\\fB", out);
			code = !code;
		} else if (p[0] == '*' && p[1] == '*') {
			p++;
		} else if (p[0] == '\\' && p[1] == '|') {
			fputc('|', out);
			p++;
		} else if (*p == '\\') {
			fputs("\\e", out);
		} else if (*p == '-' && code) {
			fputs("\\-", out);
		} else if (*p == '[' && strstr(p, "](")) {
			const char *close = strstr(p, "](");
			const char *end = strchr(close, ')');
			if (!end || memchr(p, '\n', (size_t)(end - p))) {
				fputc('[', out);
				continue;
			}
			fprintf(out, "%.*s", (int)(close - p - 1), p + 1);
			p = end;
		} else {
			fputc(*p, out);
		}
	}
	if (code)
		fputs("\\fR", out);
}

static void man_key(const char *name, const char *type, const char *def, const char *help, FILE *out)
{
	fprintf(out, ".TP\n.B \"%s\"\n(", name);
	roff_text(type, out);
	fprintf(out, "; default: ");
	roff_text(def, out);
	fprintf(out, ")\n");
	roff_text(help, out);
	fprintf(out, "\n");
}

static void man_all(FILE *out)
{
	static const enum job_sec_kind order[] = { JOB_SEC_JOB,      JOB_SEC_SWAP,   JOB_SEC_VARIANT,
						   JOB_SEC_WORKLOAD, JOB_SEC_METRIC, JOB_SEC_REPORT };
	fprintf(out, ".\\\" " MARK_BEGIN " made by kab check --keys --format man\n");
	for (size_t s = 0; s < ARRAY_SIZE(order); s++) {
		fprintf(out, ".SS \"%s\"\n", sec_title(order[s]));
		for (size_t i = 0; i < job_n_keys; i++) {
			const struct job_keydef *k = &job_keydefs[i];
			if (k->sec == order[s] && documented(k))
				man_key(k->name, k->doc_type, k->doc_default, k->help, out);
		}
	}
	fprintf(out, ".SS \"The workload types' own keys\"\n");
	for (const struct wl_ops *const *o = wl_all(); *o; o++)
		for (const struct wl_key *k = (*o)->keys; k && k->name; k++) {
			struct strbuf name = { 0 }, type = { 0 }, def = { 0 };
			sb_printf(&name, "%s %s", (*o)->type, k->name);
			wl_doc_type(k, &type);
			wl_doc_default(k, &def);
			man_key(name.buf ? name.buf : "", type.buf ? type.buf : "", def.buf ? def.buf : "",
				k->help ? k->help : "", out);
			sb_free(&name);
			sb_free(&type);
			sb_free(&def);
		}
	fprintf(out, ".\\\" " MARK_END "\n");
}

int job_print_keys(FILE *out, const char *format)
{
	if (strcmp(format, "md") == 0) {
		static const enum job_sec_kind order[] = { JOB_SEC_JOB,      JOB_SEC_SWAP,   JOB_SEC_VARIANT,
							   JOB_SEC_WORKLOAD, JOB_SEC_METRIC, JOB_SEC_REPORT };
		for (size_t s = 0; s < ARRAY_SIZE(order); s++) {
			md_section(order[s], out);
			fprintf(out, "\n");
		}
		md_types(out);
		return 0;
	}
	if (strcmp(format, "man") == 0) {
		man_all(out);
		return 0;
	}
	return -EINVAL;
}
