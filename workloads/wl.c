/* The workload registry and helpers shared by the adapters. */
#include "workloads/wl.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/base/esc.h"
#include "harness/base/util.h"

extern const struct wl_ops wl_stress_ng_ops;
extern const struct wl_ops wl_command_ops;
extern const struct wl_ops wl_pageout_ops;
extern const struct wl_ops wl_shmem_truncate_ops;
extern const struct wl_ops wl_kbuild_ops;
extern const struct wl_ops wl_sysbench_ops;

static const struct wl_ops *const all_ops[] = {
	&wl_stress_ng_ops,
	&wl_command_ops,
	&wl_pageout_ops,
	&wl_shmem_truncate_ops,
	&wl_kbuild_ops,
	&wl_sysbench_ops,
	NULL,
};

const struct wl_ops *wl_find(const char *type)
{
	for (size_t i = 0; all_ops[i]; i++)
		if (type && strcmp(all_ops[i]->type, type) == 0)
			return all_ops[i];
	return NULL;
}

const struct wl_ops *const *wl_all(void) { return all_ops; }

/* Whether name is prefix + "." + something. */
static bool has_source(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(name, prefix, n) == 0 && name[n] == '.' && name[n + 1];
}

const struct wl_ops *wl_metric_owner(const char *name, size_t *ret_len)
{
	for (size_t i = 0; name && all_ops[i]; i++) {
		const struct wl_ops *o = all_ops[i];
		const char *src = has_source(name, o->type) ? o->type : NULL;
		for (const char *const *p = o->metric_sources; !src && p && *p; p++)
			if (has_source(name, *p))
				src = *p;
		if (src) {
			if (ret_len)
				*ret_len = strlen(src) + 1;
			return o;
		}
	}
	return NULL;
}

const struct wl_metric wl_prog_metrics[] = {
	WL_METRIC("reps", "reps", NEUTRAL, NULL),
	WL_METRIC("resident_pct", "%", NEUTRAL, NULL),
	WL_METRIC("large_folio_pct", "%", NEUTRAL, NULL),
	WL_METRIC("folio_kB_mean", "kB", NEUTRAL, NULL),
	WL_METRIC("folios_*", "folios", NEUTRAL, NULL),
	WL_METRIC("mthp_alloc_pct", "%", NEUTRAL, NULL),
	WL_METRIC("mthp_fallbacks", "folios", NEUTRAL, NULL),
	{ NULL },
};

static const struct wl_metric *first_match(const struct wl_metric *rows, const char *name)
{
	for (const struct wl_metric *d = rows; d && d->pattern; d++)
		if (util_glob(d->pattern, name))
			return d;
	return NULL;
}

const struct wl_metric *wl_metric_find(const char *name)
{
	size_t len = 0;
	const struct wl_ops *o = wl_metric_owner(name, &len);
	const struct wl_metric *d = o ? first_match(o->metrics, name) : NULL;
	if (!d && o && o->prog_metrics)
		d = first_match(wl_prog_metrics, name + len);
	return d;
}

int wl_metrics_add_declared(struct wl_metrics *m, const char *name, const char *data_unit, double value)
{
	const struct wl_metric *d = wl_metric_find(name);
	return wl_metrics_add(m, name, d ? d->unit : data_unit, value);
}

int wl_metrics_add(struct wl_metrics *m, const char *name, const char *unit, double value)
{
	if (util_grow(m->v, m->cap, m->n + 1, 16) < 0)
		return -ENOMEM;
	struct store_metric *x = &m->v[m->n++];
	/* a command's own names and units are what it printed: stored with
	 * control characters and bytes of no UTF-8 made visible (esc.h), cut
	 * at a whole character */
	esc_text_buf(name, x->name, sizeof(x->name), 0);
	esc_text_buf(unit ? unit : "", x->unit, sizeof(x->unit), 0);
	x->value = value;
	return 0;
}

void wl_metrics_free(struct wl_metrics *m)
{
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}

void wl_argv_free(char **argv)
{
	if (!argv)
		return;
	for (size_t i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* Shell-like word splitting: single and double quotes, backslash escapes;
 * no variables, globs or redirections (the workload is exec'd directly). */
int wl_split_args(const char *s, char ***ret_argv, size_t *ret_n)
{
	size_t n = 0, cap = 8;
	char **argv = calloc(cap, sizeof(char *));
	size_t blen = strlen(s) + 1;
	char *word = malloc(blen);
	if (!argv || !word) {
		free(argv);
		free(word);
		return -ENOMEM;
	}
	const char *p = s;
	int r = 0;
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		size_t w = 0;
		char quote = 0;
		while (*p && (quote || !isspace((unsigned char)*p))) {
			char c = *p++;
			if (quote) {
				if (c == quote)
					quote = 0;
				else if (c == '\\' && quote == '"' && (*p == '"' || *p == '\\'))
					word[w++] = *p++;
				else
					word[w++] = c;
			} else if (c == '\'' || c == '"') {
				quote = c;
			} else if (c == '\\' && *p) {
				word[w++] = *p++;
			} else {
				word[w++] = c;
			}
		}
		if (quote) {
			r = -EINVAL; /* unterminated quote */
			break;
		}
		word[w] = 0;
		if (n + 2 > cap) {
			cap *= 2;
			char **na = realloc(argv, cap * sizeof(char *));
			if (!na) {
				r = -ENOMEM;
				break;
			}
			argv = na;
		}
		argv[n] = strdup(word);
		if (!argv[n]) {
			r = -ENOMEM;
			break;
		}
		argv[++n] = NULL;
	}
	free(word);
	if (r < 0) {
		wl_argv_free(argv);
		return r;
	}
	*ret_argv = argv;
	if (ret_n)
		*ret_n = n;
	return 0;
}

bool wl_helper_path(const char *name, char *ret_path, size_t len)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			char p[4096 + 64];
			snprintf(p, sizeof(p), "%s/%s", self, name);
			if (access(p, X_OK) == 0) {
				snprintf(ret_path, len, "%s", p);
				return true;
			}
		}
	}
	return util_find_program(name, ret_path, len);
}

/* Lines "kab-metric NAME VALUE UNIT" whose NAME starts with prefix, as a
 * helper program prints them; others are skipped. The count added. */
int wl_prog_metrics_read(FILE *f, const char *prefix, struct wl_metrics *m)
{
	char line[512];
	size_t plen = strlen(prefix);
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strchr(line, '\n') && !feof(f)) { /* over-long line: skip the rest of it */
			int ch;
			while ((ch = fgetc(f)) != EOF && ch != '\n')
				;
			continue;
		}
		if (strncmp(line, "kab-metric ", 11) != 0)
			continue;
		char **w;
		size_t nw;
		if (wl_split_args(line + 11, &w, &nw) < 0)
			continue;
		double v;
		if (nw == 3 && strncmp(w[0], prefix, plen) == 0 && w[0][plen] && strlen(w[0]) < sizeof(m->v->name) &&
		    util_parse_double(w[1], &v) == 0 && strlen(w[2]) < sizeof(m->v->unit)) {
			if (wl_metrics_add_declared(m, w[0], w[2], v) < 0) {
				wl_argv_free(w);
				return -ENOMEM;
			}
			n++;
		}
		wl_argv_free(w);
	}
	return n;
}

int wl_argv_dup(const char *const *args, size_t n, char ***ret_argv)
{
	char **argv = calloc(n + 1, sizeof(char *));
	if (!argv)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!(argv[i] = strdup(args[i]))) {
			wl_argv_free(argv);
			return -ENOMEM;
		}
	*ret_argv = argv;
	return 0;
}

int wl_prog_collect(const struct wl_ctx *c, const char *prefix, const char *required, struct wl_metrics *m)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/stdout", c->workdir);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	size_t n0 = m->n;
	int r = wl_prog_metrics_read(f, prefix, m);
	if (r < 0)
		return r;
	if (wl_metrics_find(m, n0, required))
		return 0;
	return -ENODATA; /* the program stopped before its summary */
}

const struct store_metric *wl_metrics_find(const struct wl_metrics *m, size_t from, const char *name)
{
	for (size_t i = from; i < m->n; i++)
		if (strcmp(m->v[i].name, name) == 0)
			return &m->v[i];
	return NULL;
}
