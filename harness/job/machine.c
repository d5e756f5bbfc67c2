/* /etc/kab/machine.conf; see machine.h. */
#include "harness/job/machine.h"
#include "harness/base/config.h"

#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>

const char *machine_conf_path(void)
{
	return config_str(CONFIG_MACHINE_CONF);
}

const struct machine_conf *machine_conf_current(void)
{
	static const struct machine_conf none = { .path = "" };
	const struct machine_conf *mc = config_get()->machine;
	return mc ? mc : &none;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

static int set_switch(struct machine_conf *mc, const char *value, int lineno, struct diags *d)
{
	if (strcmp(value, "kexec") != 0 && strcmp(value, "reboot") != 0) {
		diags_add(d, mc->path, lineno, "bad switch \"%s\" (choices: kexec, reboot)", value);
		return -EINVAL;
	}
	mc->has_switch = true;
	mc->switch_mode = strcmp(value, "reboot") == 0 ? JOB_SWITCH_REBOOT : JOB_SWITCH_KEXEC;
	mc->switch_line = lineno;
	return 0;
}

/* Knobs are matched on their resolved path: a pattern that names links
 * here (/sys/block/zram0/disksize) would never match, so it is refused
 * with what to write instead. "**" patterns are not expanded. */
static int pattern_resolves(const struct machine_conf *mc, const char *text, const char *path, int lineno,
			    struct diags *d)
{
	glob_t g;
	if (strstr(path, "**") || glob(path, GLOB_BRACE | GLOB_NOSORT, NULL, &g) != 0)
		return 0;
	int r = 0;
	for (size_t i = 0; i < g.gl_pathc && r == 0; i++) {
		_cleanup_free_ char *real = NULL;
		if (knob_allow_canonical(g.gl_pathv[i], &real) < 0 || strcmp(real, g.gl_pathv[i]) == 0)
			continue;
		diags_add(d, mc->path, lineno,
			  "knobs.allow pattern \"%s\" names %s, which resolves to %s: knobs are matched on the file they resolve to, so write the pattern for that",
			  text, g.gl_pathv[i], real);
		r = -EINVAL;
	}
	globfree(&g);
	return r;
}

static int add_pattern(struct machine_conf *mc, const char *text, int lineno, struct diags *d)
{
	_cleanup_free_ char *path = NULL;
	const char *why = NULL;
	int r = knob_allow_parse(text, &path, &why);
	if (r == -EINVAL) {
		diags_add(d, mc->path, lineno, "bad knobs.allow pattern \"%s\": %s", text, why);
		return r;
	}
	if (r < 0 || (r = pattern_resolves(mc, text, path, lineno, d)) < 0)
		return r;
	struct knob_pattern *nv = realloc(mc->knob_allow, (mc->n_knob_allow + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	mc->knob_allow = nv;
	if (!(nv[mc->n_knob_allow].text = strdup(text)))
		return -ENOMEM;
	nv[mc->n_knob_allow++].line = lineno;
	return 0;
}

/* knobs.allow = PATTERN [PATTERN ...], whitespace-separated. */
static int add_patterns(struct machine_conf *mc, char *value, int lineno, struct diags *d)
{
	int ret = 0;
	if (!*value) {
		diags_add(d, mc->path, lineno, "knobs.allow needs at least one pattern, e.g. knobs.allow = kernel.sched_*");
		return -EINVAL;
	}
	for (char *w = value; *w;) {
		size_t n = strcspn(w, " \t");
		char *next = w + n;
		next += strspn(next, " \t");
		w[n] = '\0';
		int r = add_pattern(mc, w, lineno, d);
		if (r < 0)
			ret = r;
		w = next;
	}
	return ret;
}

static int load_line(struct machine_conf *mc, char *s, int lineno, struct diags *d)
{
	static const char *const keys[] = { "switch", "knobs.allow" };
	char *eq = strchr(s, '=');
	if (!eq) {
		diags_add(d, mc->path, lineno, "expected key = value, got \"%s\"", s);
		return -EINVAL;
	}
	*eq = '\0';
	char *key = trim(s), *value = trim(eq + 1);
	if (strcmp(key, "switch") == 0)
		return set_switch(mc, value, lineno, d);
	if (strcmp(key, "knobs.allow") == 0)
		return add_patterns(mc, value, lineno, d);
	const char *hint = util_did_you_mean(key, keys, ARRAY_SIZE(keys));
	diags_add(d, mc->path, lineno, "unknown key \"%s\"%s%s%s (keys: switch, knobs.allow)", key,
		  hint ? ": did you mean \"" : "", hint ? hint : "", hint ? "\"?" : "");
	return -EINVAL;
}

int machine_conf_load(struct machine_conf *mc, const char *path, struct diags *d)
{
	*mc = (struct machine_conf){ 0 };
	if (snprintf(mc->path, sizeof(mc->path), "%s", path) >= (int)sizeof(mc->path)) {
		diags_add(d, NULL, 0, "%.64s...: the machine's settings file: path too long (at most %zu bytes)", path,
			  sizeof(mc->path) - 1);
		return -ENAMETOOLONG;
	}
	_cleanup_free_ char *text = NULL;
	int r = util_read_file(mc->path, &text, NULL);
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		diags_add(d, mc->path, 0, "cannot read the machine's settings: %s", strerror(-r));
		return r;
	}
	int ret = 0, lineno = 0;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		char *s = trim(line);
		if (!*s || *s == '#')
			continue;
		if ((r = load_line(mc, s, lineno, d)) < 0 && ret != -ENOMEM)
			ret = r;
	}
	if (ret == -ENOMEM)
		diags_add(d, mc->path, 0, "out of memory while reading the machine's settings");
	return ret;
}

void machine_conf_free(struct machine_conf *mc)
{
	for (size_t i = 0; i < mc->n_knob_allow; i++)
		free(mc->knob_allow[i].text);
	free(mc->knob_allow);
	mc->knob_allow = NULL;
	mc->n_knob_allow = 0;
}

void machine_conf_print(const struct machine_conf *mc, FILE *out)
{
	char from[300];
	if (mc->has_switch) {
		snprintf(from, sizeof(from), "%s:%d", mc->path, mc->switch_line);
		config_print_line(out, "switch", job_switch_name(mc->switch_mode), from);
	} else
		config_print_line(out, "switch", "(the job's, else kexec)", "default");
	for (size_t i = 0; i < mc->n_knob_allow; i++) {
		snprintf(from, sizeof(from), "%s:%d", mc->path, mc->knob_allow[i].line);
		config_print_line(out, "knobs.allow", mc->knob_allow[i].text, from);
	}
	if (!mc->n_knob_allow)
		config_print_line(out, "knobs.allow", "(none: the memory-management knobs only)", "default");
}
