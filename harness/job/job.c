/* Job files: reading the INI text into sections.
 *
 * A job file is INI, read by libinih, one section per thing: [job],
 * [swap], [variant LABEL], [workload NAME], [metric NAME], [report]. Their
 * keys are in one table (job_keytab.c), which doc/jobs.md's and kab(1)'s key
 * references are printed from (kab check --keys; tests/docs checks them).
 *
 * At least two [variant] sections (the first is the baseline) and one
 * [workload] are needed; [swap] may be left out (device = existing).
 *
 * Syntax, as libinih reads it: "key = value" or "key: value"; whitespace
 * around keys and values is dropped; lines starting with ';' or '#' are
 * comments, and " ;" (whitespace, then ';') starts a comment inside a line;
 * an indented line continues the value above it (joined with one space),
 * which only free-text keys (a workload's own keys, metrics) accept. Keys
 * and values are UTF-8 with no control character but a tab (text_ok):
 * kab shows them on terminals and in its feeds.
 *
 * How the work is split: inih calls back only for key lines and does not
 * give their line numbers, so our reader hands inih one line at a time,
 * counts lines, and itself reads section headers (inih truncates long
 * ones) and reports malformed lines (inih reports only the first). The
 * handler collects raw entries per section; job_build.c interprets them
 * (with job_keys.c's key table), job_check.c looks at the machine
 * (job_load.c runs it after this parser), job_print.c prints the normal
 * form.
 *
 * Budgets (job.h, doc/jobs.md "Budgets"): the text's size is checked before
 * anything reads it, lines and sections are counted as they come, and
 * every step is linear in the text (continuation lines are appended, not
 * re-joined; duplicates are found with a hash set; diagnostics stop being
 * kept at DIAGS_MAX), so any text is refused or accepted in milliseconds.
 * For a fuzzer: job_parse_text() takes any NUL-terminated text, reads no
 * file, checks nothing on the machine and is bounded by the budgets
 * (tests/fuzz/fuzz_job.c).
 */
#include "harness/job/job.h"
#include "harness/job/job_priv.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>

struct reader {
	const char *file;
	const char *p, *end; /* text not yet handed to inih */
	int line;            /* line last handed to inih */
	bool bom_checked;
	bool have_key;       /* mirrors inih's prev_name: continuation possible */
	bool cont;           /* the line last handed out is a continuation */
	bool long_line;      /* and it was cut to fit inih's buffer */
	char delim;          /* and, for a key line, its delimiter */
	bool last_ok;        /* the last key line went into the current section */
	struct diags *d;
	struct job_section *secs;
	size_t n_secs, cap_secs;
	bool in_section;     /* a header was seen; secs[n_secs - 1] is current */
	bool oom;
	bool stopped;        /* at JOB_LINES_MAX, with more text after it */
	unsigned n_kind[JOB_SEC_IGNORED];  /* section headers of each kind */
	int over_line[JOB_SEC_IGNORED];    /* the first over its budget; 0: none */
};

static const char *const section_names[] = {
	[JOB_SEC_JOB] = "job",
	[JOB_SEC_SWAP] = "swap",
	[JOB_SEC_VARIANT] = "variant",
	[JOB_SEC_WORKLOAD] = "workload",
	[JOB_SEC_METRIC] = "metric",
	[JOB_SEC_REPORT] = "report",
};
#define SECTION_LIST "[job], [swap], [variant LABEL], [workload NAME], [metric NAME], [report]"

/* How many sections of a kind a job may have, and what to do instead of
 * more. [job] and [swap] have no entry: a second one is a duplicate. */
static const struct {
	unsigned max;
	const char *instead;
} section_budget[] = {
	[JOB_SEC_VARIANT] = { JOB_VARIANTS_MAX, "compare a few variants per job and split a sweep over several jobs" },
	[JOB_SEC_WORKLOAD] = { JOB_WORKLOADS_MAX, "split the workloads over several jobs" },
	[JOB_SEC_METRIC] = { JOB_METRIC_SECTIONS_MAX, "give a family of metrics one [metric PREFIX*] section" },
};


const char *job_section_name(enum job_sec_kind k)
{
	return k < JOB_SEC_IGNORED ? section_names[k] : "?";
}

const char *job_order_name(enum job_order o)
{
	switch (o) {
	case JOB_ORDER_ABBA: return "abba";
	case JOB_ORDER_ALTERNATE: return "alternate";
	case JOB_ORDER_RANDOM: return "random";
	}
	return "?";
}

int job_parse_cpus(const char *s, bool mask[JOB_CPUS_MAX], const char **ret_why)
{
	int n = 0, last = -1;
	const char *p = s;
	if (!*p) {
		*ret_why = "expected CPU numbers such as 1 or 0-3,6";
		return -EINVAL;
	}
	while (*p) {
		uint64_t lo, hi;
		const char *end = p + strcspn(p, ",");
		const char *dash = memchr(p, '-', (size_t)(end - p));
		char a[24], z[24];
		size_t la = (size_t)((dash ? dash : end) - p);
		size_t lz = dash ? (size_t)(end - dash - 1) : 0;
		if (la == 0 || la >= sizeof(a) || (dash && (lz == 0 || lz >= sizeof(z)))) {
			*ret_why = "expected CPU numbers and ranges separated by commas, such as 1 or 0-3,6";
			return -EINVAL;
		}
		snprintf(a, sizeof(a), "%.*s", (int)la, p);
		snprintf(z, sizeof(z), "%.*s", (int)lz, dash ? dash + 1 : "");
		if (util_parse_u64(a, &lo) < 0 || (dash && util_parse_u64(z, &hi) < 0)) {
			*ret_why = "expected CPU numbers and ranges separated by commas, such as 1 or 0-3,6";
			return -EINVAL;
		}
		if (!dash)
			hi = lo;
		if (hi < lo || (int64_t)lo <= last) {
			*ret_why = "list the CPUs in ascending order, each once";
			return -EINVAL;
		}
		if (hi >= JOB_CPUS_MAX) {
			*ret_why = "a CPU number is at most 1023";
			return -ERANGE;
		}
		for (uint64_t c = lo; c <= hi; c++, n++)
			mask[c] = true;
		last = (int)hi;
		p = *end ? end + 1 : end;
		if (*end && !*p) {
			*ret_why = "a comma ends the list";
			return -EINVAL;
		}
	}
	return n;
}

bool job_conditioned(const struct job *j)
{
	const struct job_condition *c = &j->cond;
	return c->drop_caches || c->compact || c->wait_idle_pct > 0 || c->cpufreq != JOB_CPUFREQ_KEEP || c->turbo != JOB_KEEP ||
	       c->cpus || c->sampler_cpu >= 0;
}

const char *job_swap_kind_name(enum job_swap_kind k)
{
	switch (k) {
	case JOB_SWAP_NONE: return "none";
	case JOB_SWAP_ZRAM: return "zram";
	case JOB_SWAP_FILE: return "file";
	case JOB_SWAP_EXISTING: return "existing";
	}
	return "?";
}

const struct job_param *job_param_entry(const struct job_workload *w, const char *key)
{
	for (size_t i = 0; i < w->n_params; i++)
		if (strcmp(w->params[i].key, key) == 0)
			return &w->params[i];
	return NULL;
}

const char *job_param(const struct job_workload *w, const char *key)
{
	const struct job_param *p = job_param_entry(w, key);
	return p ? p->value : NULL;
}

static bool is_space(char c) { return isspace((unsigned char)c); }

/* inih's rule: the first of chars, or a ';' after whitespace (a comment). */
static const char *find_chars_or_comment(const char *s, const char *chars)
{
	bool was_space = false;
	while (*s && !(chars && strchr(chars, *s)) && !(was_space && *s == ';')) {
		was_space = is_space(*s);
		s++;
	}
	return s;
}

/* Length of s without trailing whitespace. */
static size_t trimmed_len(const char *s)
{
	size_t n = strlen(s);
	while (n > 0 && is_space(s[n - 1]))
		n--;
	return n;
}

static char *strndup_trim(const char *s, size_t n)
{
	while (n > 0 && is_space(*s)) {
		s++;
		n--;
	}
	while (n > 0 && is_space(s[n - 1]))
		n--;
	return strndup(s, n);
}

static struct job_section *current(struct reader *r)
{
	return r->in_section ? &r->secs[r->n_secs - 1] : NULL;
}

static void start_section(struct reader *r, enum job_sec_kind kind, char *label)
{
	if (util_grow(r->secs, r->cap_secs, r->n_secs + 1, 8) < 0) {
		free(label);
		r->oom = true;
		r->in_section = false;
		return;
	}
	r->secs[r->n_secs++] = (struct job_section){ .kind = kind, .label = label, .line = r->line, .guess = JOB_SEC_IGNORED };
	r->in_section = true;
}

/* Counts a header of kind; true when it is over the kind's budget. */
static bool section_over_budget(struct reader *r, enum job_sec_kind kind)
{
	if ((size_t)kind >= ARRAY_SIZE(section_budget) || !section_budget[kind].max)
		return false;
	if (++r->n_kind[kind] <= section_budget[kind].max)
		return false;
	if (!r->over_line[kind])
		r->over_line[kind] = r->line;
	return true;
}

static void report_section_budgets(const struct reader *r)
{
	for (size_t k = 0; k < ARRAY_SIZE(section_budget); k++)
		if (r->over_line[k])
			diags_add(r->d, r->file, r->over_line[k],
				  "too many [%s] sections (%u%s, at most %u): this is the first over the budget; %s (doc/jobs.md, \"Budgets\")",
				  section_names[k], r->n_kind[k], r->stopped ? " or more" : "", section_budget[k].max,
				  section_budget[k].instead);
}

static void section_header(struct reader *r, const char *s)
{
	const char *close = find_chars_or_comment(s + 1, "]");
	if (*close != ']') {
		diags_add(r->d, r->file, r->line, "section header has no closing ']'");
		start_section(r, JOB_SEC_IGNORED, NULL);
		return;
	}
	r->have_key = false;
	const char *after = close + 1;
	while (is_space(*after))
		after++;
	if (*after && *after != ';' && *after != '#')
		diags_add(r->d, r->file, r->line, "unexpected text after ']': \"%.*s\"", (int)trimmed_len(after), after);

	_cleanup_free_ char *inner = strndup_trim(s + 1, (size_t)(close - s - 1));
	if (!inner) {
		r->oom = true;
		return;
	}
	size_t wl = 0;
	while (inner[wl] && !is_space(inner[wl]))
		wl++;
	char *label = inner[wl] ? strndup_trim(inner + wl, strlen(inner + wl)) : NULL;
	inner[wl] = 0;

	enum job_sec_kind kind = JOB_SEC_IGNORED;
	for (size_t i = 0; i < ARRAY_SIZE(section_names); i++)
		if (strcmp(inner, section_names[i]) == 0)
			kind = (enum job_sec_kind)i;

	enum job_sec_kind guess = JOB_SEC_IGNORED;
	if (kind == JOB_SEC_IGNORED) {
		const char *hint = diags_full(r->d) ? NULL : util_did_you_mean(inner, section_names, ARRAY_SIZE(section_names));
		for (size_t i = 0; hint && i < ARRAY_SIZE(section_names); i++)
			if (hint == section_names[i])
				guess = (enum job_sec_kind)i;
		if (!*inner)
			diags_add(r->d, r->file, r->line, "empty section header [] (sections: " SECTION_LIST ")");
		else if (hint)
			diags_add(r->d, r->file, r->line, "unknown section [%s%s%s] (did you mean [%s%s%s]?)",
				  inner, label ? " " : "", label ? label : "", hint, label ? " " : "", label ? label : "");
		else
			diags_add(r->d, r->file, r->line, "unknown section [%s%s%s] (sections: " SECTION_LIST ")",
				  inner, label ? " " : "", label ? label : "");
		free(label);
		start_section(r, JOB_SEC_IGNORED, NULL);
		if (current(r))
			current(r)->guess = guess;
		return;
	} else if (section_over_budget(r, kind)) {
		/* counted and skipped: reported once, at the end */
		free(label);
		start_section(r, JOB_SEC_IGNORED, NULL);
		if (current(r))
			current(r)->guess = kind;
		return;
	} else if ((kind == JOB_SEC_JOB || kind == JOB_SEC_SWAP || kind == JOB_SEC_REPORT) && label) {
		diags_add(r->d, r->file, r->line, "section [%s] takes no label: write [%s]", inner, inner);
		free(label);
		label = NULL;
	} else if ((kind == JOB_SEC_VARIANT || kind == JOB_SEC_WORKLOAD || kind == JOB_SEC_METRIC) && !label) {
		diags_add(r->d, r->file, r->line, "section [%s] needs a label, e.g. [%s]", inner,
			  kind == JOB_SEC_VARIANT ? "variant A" : kind == JOB_SEC_WORKLOAD ? "workload stress-vm" : "metric stress-ng.bogo_ops_per_s");
		start_section(r, kind, NULL);
		if (current(r))
			current(r)->unlabeled = true;
		return;
	}
	start_section(r, kind, label);
}

/* Decides what inih will make of the line, as inih does, so that every
 * malformed line is reported and the handler knows continuations. */
static void classify(struct reader *r, const char *line)
{
	const char *s = line;
	if (!r->bom_checked) {
		r->bom_checked = true;
		if (strncmp(s, "\xEF\xBB\xBF", 3) == 0)
			s += 3;
	}
	const char *t = s;
	while (is_space(*t))
		t++;
	r->cont = false;
	if (!*t || *t == ';' || *t == '#')
		return;
	if (r->have_key && t > s) {
		r->cont = true;
		return;
	}
	if (*t == '[') {
		section_header(r, t);
		return;
	}
	const char *delim = find_chars_or_comment(t, "=:");
	if (*delim != '=' && *delim != ':') {
		diags_add(r->d, r->file, r->line, "expected \"key = value\", \"[section]\" or a comment, not \"%.*s\"",
			  (int)trimmed_len(t), t);
		return;
	}
	const char *k = delim;
	while (k > t && is_space(k[-1]))
		k--;
	r->have_key = k > t;
	r->delim = *delim;
	if (k == t)
		diags_add(r->d, r->file, r->line, "missing key before '%c'", *delim);
}

/* More lines than JOB_LINES_MAX: the rest is counted, not read. */
static void stop_at_line_budget(struct reader *r)
{
	size_t lines = (size_t)r->line;
	for (const char *p = r->p; p < r->end; lines++) {
		const char *nl = memchr(p, '\n', (size_t)(r->end - p));
		p = nl ? nl + 1 : r->end;
	}
	diags_add(r->d, r->file, r->line + 1,
		  "too many lines (%zu, at most %u): the rest of the job is not read; a job is a few hundred lines at most, split it over several jobs (doc/jobs.md, \"Budgets\")",
		  lines, JOB_LINES_MAX);
	r->stopped = true;
	r->p = r->end;
}

static char *reader_next(char *buf, int num, void *stream)
{
	struct reader *r = stream;
	if (r->p >= r->end || num < 3)
		return NULL;
	if (r->line >= (int)JOB_LINES_MAX) {
		stop_at_line_budget(r);
		return NULL;
	}
	const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
	size_t len = nl ? (size_t)(nl - r->p) : (size_t)(r->end - r->p);
	const char *start = r->p;
	r->p = nl ? nl + 1 : r->end;
	r->line++;

	/* The format's limit, whatever inih's build allows. */
	size_t max = (size_t)num - 2 < JOB_LINE_MAX ? (size_t)num - 2 : JOB_LINE_MAX;
	r->long_line = len > max;
	if (r->long_line) {
		/* inih would cut the line in two. Hand it the part that fits and
		 * mark what comes of it as broken, so that nothing else is
		 * reported about it. */
		diags_add(r->d, r->file, r->line, "line too long (%zu characters, at most %zu): split a long value over indented continuation lines",
			  len, max);
		len = max;
	}
	memcpy(buf, start, len);
	buf[len] = 0;
	classify(r, buf);
	buf[len] = '\n';
	buf[len + 1] = 0;
	return buf;
}

static int add_entry(struct job_section *s, const char *key, const char *value, int line, char delim)
{
	if (util_grow(s->v, s->cap, s->n + 1, 8) < 0)
		return -ENOMEM;
	char *k = strdup(key), *val = strdup(value);
	if (!k || !val) {
		free(k);
		free(val);
		return -ENOMEM;
	}
	size_t len = strlen(val);
	s->v[s->n++] = (struct job_entry){ .key = k, .value = val, .len = len, .cap = len + 1, .line = line, .delim = delim };
	return 0;
}

/* Appends " text" to e's value, growing it geometrically: joining n
 * continuation lines costs O(n), not O(n^2). */
static int append_value(struct job_entry *e, const char *text, size_t n)
{
	size_t need = e->len + 1 + n + 1;
	if (need > e->cap) {
		size_t cap = 2 * e->cap > need ? 2 * e->cap : need;
		char *v = realloc(e->value, cap);
		if (!v)
			return -ENOMEM;
		e->value = v;
		e->cap = cap;
	}
	e->value[e->len++] = ' ';
	memcpy(e->value + e->len, text, n);
	e->len += n;
	e->value[e->len] = 0;
	return 0;
}

/* Where in s the text before its byte at bad is quoted from: at most 24
 * bytes back, on a character's first byte. */
static size_t quote_from(const char *s, size_t bad)
{
	size_t from = bad > 24 ? bad - 24 : 0;
	while (from < bad && ((unsigned char)s[from] & 0xc0) == 0x80)
		from++;
	return from;
}

#define CONTROL_HINT \
	"kab shows a job's text on terminals and in its feeds; remove it, or write it as the program's own escape (printf's \\033)"

/* A key's or value's text is UTF-8 with no control character (a tab is
 * whitespace): kab shows it on terminals, in kabd's text and JSON and in
 * its Atom feed, and stores it. what names it ("the value of \"track\"").
 * False, reported at the reader's line, when it is not. */
static bool text_ok(struct reader *r, const char *what, const char *s)
{
	size_t len = strlen(s), bad = 0;
	bool utf8 = esc_utf8_valid(s, len, &bad);
	if (utf8) {
		bad = len;
		for (size_t i = 0; i < len && bad == len; i += esc_utf8_len(s + i, len - i)) {
			const unsigned char *p = (const unsigned char *)s + i;
			if ((p[0] < 0x20 && p[0] != '\t') || p[0] == 0x7f || (p[0] == 0xc2 && p[1] <= 0x9f))
				bad = i; /* C0, DEL, C1 (U+0080-U+009F) */
		}
		if (bad == len)
			return true;
	}
	/* where: after the text before it, or at its start */
	size_t from = quote_from(s, bad);
	char where[64];
	if (bad)
		snprintf(where, sizeof(where), "after \"%.*s\"", (int)(bad - from), s + from);
	else
		snprintf(where, sizeof(where), "at its start");
	const unsigned char *p = (const unsigned char *)s + bad;
	if (!utf8)
		diags_add(r->d, r->file, r->line,
			  "%s is not valid UTF-8 (byte 0x%02x %s): save the job file as UTF-8 (iconv -f latin1 -t utf-8 converts a Latin-1 one)",
			  what, p[0], where);
	else if (p[0] == 0xc2)
		diags_add(r->d, r->file, r->line, "%s holds a control character (U+%04X %s): %s", what, p[1], where, CONTROL_HINT);
	else
		diags_add(r->d, r->file, r->line, "%s holds a control character (0x%02x %s): %s", what, p[0], where, CONTROL_HINT);
	return false;
}

static void continue_entry(struct reader *r, const char *raw)
{
	struct job_section *s = current(r);
	if (!s || !r->last_ok || s->n == 0)
		return; /* the key line was already reported */
	struct job_entry *e = &s->v[s->n - 1];
	/* Some inih versions leave an inline comment on a continuation line. */
	_cleanup_free_ char *text = strndup_trim(raw, (size_t)(find_chars_or_comment(raw, NULL) - raw));
	if (!text) {
		r->oom = true;
		return;
	}
	if (!*text || e->n_cont > JOB_CONT_MAX)
		return; /* nothing, or over the budget and reported */
	char what[JOB_LINE_MAX + 32];
	snprintf(what, sizeof(what), "the value of \"%s\" (line %d) on this continuation line", e->key, e->line);
	if (!text_ok(r, what, text)) {
		e->broken = true;
		return;
	}
	if (++e->n_cont > JOB_CONT_MAX) {
		diags_add(r->d, r->file, r->line,
			  "more than %u continuation lines for \"%s\" (line %d): the rest are not read; run a long command from a script, name a family of metrics with PREFIX* (doc/jobs.md, \"Budgets\")",
			  JOB_CONT_MAX, e->key, e->line);
		e->broken = true;
		return;
	}
	if (job_line_looks_like_key(text)) {
		diags_add(r->d, r->file, r->line, "indented line is read as a continuation of \"%s\" (line %d): remove the leading whitespace",
			  e->key, e->line);
		return;
	}
	if (append_value(e, text, strlen(text)) < 0) {
		r->oom = true;
		return;
	}
	if (!e->cont_line)
		e->cont_line = r->line;
	e->broken = e->broken || r->long_line;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct reader *r = user;
	(void)section; /* ours, from the reader: inih truncates long ones */
	if (r->cont) {
		continue_entry(r, value);
		return 1;
	}
	r->last_ok = false;
	if (!*name)
		return 1; /* reported by classify() */
	char what[JOB_LINE_MAX + 32];
	snprintf(what, sizeof(what), "the key \"%s\"", name);
	if (!text_ok(r, what, name))
		return 1;
	snprintf(what, sizeof(what), "the value of \"%s\"", name);
	bool value_ok = text_ok(r, what, value);
	struct job_section *s = current(r);
	if (!s) {
		diags_add(r->d, r->file, r->line, "key \"%s\" outside any section: put it under [job], [swap], [variant LABEL], [workload NAME], [metric NAME] or [report]", name);
		return 1;
	}
	if (s->kind == JOB_SEC_IGNORED || s->unlabeled)
		return 1;
	if (add_entry(s, name, value, r->line, r->delim) < 0) {
		r->oom = true;
	} else {
		r->last_ok = true;
		s->v[s->n - 1].broken = r->long_line || !value_ok;
	}
	return 1;
}

static void sections_free(struct job_section *secs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < secs[i].n; k++) {
			free(secs[i].v[k].key);
			free(secs[i].v[k].value);
		}
		free(secs[i].v);
		free(secs[i].label);
	}
	free(secs);
}

/* Orders this parse's diagnostics by line, keeping file-wide ones
 * (line 0) last, so errors read top to bottom like the file. Insertion
 * sort: stable, and at most DIAGS_MAX are kept. */
static void sort_diags(struct diags *d, size_t from)
{
	for (size_t i = from + 1; i < d->n; i++) {
		struct diag x = d->v[i];
		unsigned kx = x.line > 0 ? (unsigned)x.line : ~0u;
		size_t k = i;
		while (k > from) {
			unsigned kp = d->v[k - 1].line > 0 ? (unsigned)d->v[k - 1].line : ~0u;
			if (kp <= kx)
				break;
			d->v[k] = d->v[k - 1];
			k--;
		}
		d->v[k] = x;
	}
}

int job_check_size(const char *file, size_t len, struct diags *d)
{
	if (len <= JOB_TEXT_MAX)
		return 0;
	diags_add(d, file, 0, "too large (%zu bytes, at most %u = %u KiB): a job file is a few KiB; split it over several jobs (doc/jobs.md, \"Budgets\")",
		  len, JOB_TEXT_MAX, JOB_TEXT_MAX / 1024);
	return -EFBIG;
}

char *job_dir(const char *file)
{
	const char *slash = strrchr(file, '/');
	char dir[4096], real[4096];
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - file) : 1, slash ? file : ".");
	if (!realpath(dir[0] ? dir : "/", real))
		snprintf(real, sizeof(real), "%s", dir);
	return strdup(real);
}

int job_parse_checked(const char *file, const char *dir, const char *text, bool build_only, job_machine_check *check,
		      struct job **ret, struct diags *d)
{
	size_t len = strlen(text);
	int rc = job_check_size(file, len, d);
	if (rc < 0)
		return rc;
	size_t kept0 = d->n, d0 = diags_count(d);
	struct reader r = {
		.file = file, .p = text, .end = text + len, .d = d,
	};
	struct job *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->file = strdup(file);
	j->text = strdup(text);
	if (!j->file || !j->text) {
		job_free(j);
		return -ENOMEM;
	}

	ini_parse_stream(reader_next, &r, on_key, &r);
	/* inih's return value only repeats the first malformed line, which
	 * classify() has reported already. */
	if (r.oom) {
		diags_add(d, file, 0, "out of memory while reading the job");
		sections_free(r.secs, r.n_secs);
		job_free(j);
		return -ENOMEM;
	}
	report_section_budgets(&r);
	struct job_notes notes = { 0 };
	job_build(j, file, dir, r.secs, r.n_secs, build_only, r.stopped, check ? &notes : NULL, d);
	sections_free(r.secs, r.n_secs);
	if (check)
		check(j, file, &notes, build_only, d);
	sort_diags(d, kept0);
	if (diags_count(d) > d0) {
		job_free(j);
		return -EINVAL;
	}
	*ret = j;
	return 0;
}

int job_parse_text(const char *file, const char *dir, const char *text, struct job **ret, struct diags *d)
{
	return job_parse_checked(file, dir, text, false, NULL, ret, d);
}

int job_parse_string_nocheck(const char *file, const char *text, struct job **ret, struct diags *d)
{
	_cleanup_free_ char *dir = job_dir(file);
	if (!dir) {
		diags_add(d, file, 0, "out of memory while reading the job");
		return -ENOMEM;
	}
	return job_parse_text(file, dir, text, ret, d);
}

void job_variant_clear(struct job_variant *v)
{
	free(v->label);
	free(v->name);
	free(v->kernel);
	free(v->image);
	free(v->initrd);
	free(v->cmdline);
	for (size_t k = 0; k < v->n_knobs; k++) {
		free(v->knobs[k].name);
		free(v->knobs[k].path);
		free(v->knobs[k].value);
	}
	free(v->knobs);
	job_variant_clear_source(v);
	*v = (struct job_variant){ 0 };
}

void job_variant_clear_source(struct job_variant *v)
{
	free(v->tree);
	free(v->base);
	free(v->track_remote);
	free(v->track_branch);
	free(v->track_note);
	free(v->series);
	free(v->config);
	for (size_t k = 0; k < v->n_fragments; k++)
		free(v->fragments[k]);
	free(v->fragments);
	v->tree = v->base = v->track_remote = v->track_branch = v->track_note = v->series = v->config = NULL;
	v->fragments = NULL;
	v->n_fragments = 0;
	v->series_version = 0;
}

void job_free(struct job *j)
{
	if (!j)
		return;
	free(j->file);
	free(j->text);
	free(j->name);
	for (size_t i = 0; i < j->n_metrics; i++)
		free(j->metrics[i]);
	free(j->metrics);
	for (size_t i = 0; i < j->n_primary; i++)
		free(j->primary[i]);
	free(j->primary);
	for (size_t i = 0; i < j->n_report_rows; i++)
		free(j->report_rows[i]);
	free(j->report_rows);
	for (size_t i = 0; i < j->n_metric_settings; i++) {
		free(j->metric_settings[i].name);
		free(j->metric_settings[i].unit);
		free(j->metric_settings[i].label);
		free(j->metric_settings[i].ratio);
		free(j->metric_settings[i].ratio_of);
		free(j->metric_settings[i].ratio_per);
	}
	free(j->metric_settings);
	free(j->swap.path);
	free(j->swap.algorithm);
	free(j->swap.zswap_compressor);
	for (size_t i = 0; i < j->swap.n_knobs; i++) {
		free(j->swap.knobs[i].name);
		free(j->swap.knobs[i].path);
		free(j->swap.knobs[i].value);
	}
	free(j->swap.knobs);
	for (size_t i = 0; i < j->n_variants; i++)
		job_variant_clear(&j->variants[i]);
	free(j->variants);
	free(j->archive);
	free(j->lab_on);
	free(j->cond.cpus);
	free(j->switch_source);
	for (size_t i = 0; i < j->n_workloads; i++)
		job_workload_clear(&j->workloads[i]);
	free(j->workloads);
	free(j);
}

void job_workload_clear(struct job_workload *w)
{
	free(w->name);
	free(w->type);
	for (size_t k = 0; k < w->n_params; k++) {
		free(w->params[k].key);
		free(w->params[k].value);
	}
	free(w->params);
	for (size_t k = 0; k < w->n_fcount; k++)
		free(w->fcount[k]);
	free(w->fcount);
	for (size_t k = 0; k < w->n_expect; k++)
		expect_clear(&w->expect[k]);
	free(w->expect);
	free(w->opts);
	*w = (struct job_workload){ 0 };
}

bool job_boots_kernels(const struct job *j)
{
	for (size_t i = 0; i < j->n_variants; i++)
		if (j->variants[i].kernel && strcmp(j->variants[i].kernel, "running") != 0)
			return true;
	return false;
}

const char *job_switch_name(enum job_switch s) { return s == JOB_SWITCH_REBOOT ? "reboot" : "kexec"; }

bool job_variant_recorded(const struct job_variant *v)
{
	return v->kernel && strcmp(v->kernel, "build") == 0 && v->build_id > 0;
}

bool job_has_builds(const struct job *j)
{
	for (size_t i = 0; i < j->n_variants; i++)
		if (j->variants[i].kernel && strcmp(j->variants[i].kernel, "build") == 0)
			return true;
	return false;
}
