/* /etc/kab/machine.conf; see machine.h. */
#include "harness/job/machine.h"
#include "harness/base/config.h"
#include "harness/base/secret.h"
#include "db/lab.h"

#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static const struct {
	const char *key;
	enum config_key setting;
} lab_keys[MACHINE_LAB_N] = {
	[MACHINE_LAB_URL] = { "url", CONFIG_LAB_URL },
	[MACHINE_LAB_CREDENTIALS] = { "credentials", CONFIG_LAB_CREDENTIALS },
	[MACHINE_LAB_TAGS] = { "tags", CONFIG_LAB_TAGS },
	[MACHINE_LAB_HEARTBEAT] = { "heartbeat", CONFIG_LAB_HEARTBEAT },
	[MACHINE_LAB_LEASE] = { "lease", CONFIG_LAB_LEASE },
	[MACHINE_LAB_MACHINE_ID] = { "machine-id", CONFIG_LAB_MACHINE_ID },
};

/* a [lab] value checked here, so that a mistake is named at its line */
static int check_lab_value(const struct machine_conf *mc, int k, const char *value, int lineno, struct diags *d)
{
	struct strbuf err = { 0 };
	struct lab_machine m;
	int r = 0;
	if (k == MACHINE_LAB_URL)
		r = lab_check_url(value, &err);
	else if (k == MACHINE_LAB_TAGS)
		r = lab_tags_parse(value, &m, &err);
	if (r < 0)
		diags_add(d, mc->path, lineno, "[lab] %s: %s", lab_keys[k].key, err.buf ? err.buf : strerror(-r));
	sb_free(&err);
	return r;
}

static int lab_line(struct machine_conf *mc, const char *key, const char *value, int lineno, struct diags *d)
{
	const char *names[MACHINE_LAB_N];
	for (int k = 0; k < MACHINE_LAB_N; k++) {
		names[k] = lab_keys[k].key;
		if (strcmp(key, names[k]) != 0)
			continue;
		if (mc->lab[k].value) {
			diags_add(d, mc->path, lineno, "[lab] %s is set twice (first at line %d)", key, mc->lab[k].line);
			return -EINVAL;
		}
		int r = check_lab_value(mc, k, value, lineno, d);
		if (r < 0)
			return r;
		if (!(mc->lab[k].value = strdup(value)))
			return -ENOMEM;
		mc->lab[k].line = lineno;
		return 0;
	}
	const char *hint = util_did_you_mean(key, names, ARRAY_SIZE(names));
	diags_add(d, mc->path, lineno, "unknown key \"%s\" in [lab]%s%s%s (keys: url, credentials, tags, heartbeat, lease, machine-id)",
		  key, hint ? ": did you mean \"" : "", hint ? hint : "", hint ? "\"?" : "");
	return -EINVAL;
}

/* "[lab]": 1 and *in_lab set; 0 when s is no section line */
static int section_line(const struct machine_conf *mc, const char *s, bool *in_lab, int lineno, struct diags *d)
{
	if (*s != '[')
		return 0;
	if (strcmp(s, "[lab]") != 0) {
		diags_add(d, mc->path, lineno, "unknown section %s (the only one is [lab])", s);
		return -EINVAL;
	}
	*in_lab = true;
	return 1;
}

static int load_line(struct machine_conf *mc, char *s, bool in_lab, int lineno, struct diags *d)
{
	static const char *const keys[] = { "switch", "knobs.allow" };
	char *eq = strchr(s, '=');
	if (!eq) {
		diags_add(d, mc->path, lineno, "expected key = value, got \"%s\"", s);
		return -EINVAL;
	}
	*eq = '\0';
	char *key = trim(s), *value = trim(eq + 1);
	if (in_lab)
		return lab_line(mc, key, value, lineno, d);
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
	/* it picks the lab, the knobs and how kernels are switched: read only
	 * when root or the user running kab owns it and its directories, and
	 * no one else may write them */
	_cleanup_free_ char *text = NULL;
	struct strbuf why = { 0 };
	int r = secret_read_trusted(mc->path, "machine's settings file", geteuid(), &text, NULL, &why);
	if (r == -ENOENT) {
		sb_free(&why);
		return 0;
	}
	if (r < 0) {
		if (why.buf)
			diags_add(d, NULL, 0, "%s", why.buf);
		else
			diags_add(d, mc->path, 0, "cannot read the machine's settings: %s", strerror(-r));
		sb_free(&why);
		return r;
	}
	sb_free(&why);
	int ret = 0, lineno = 0;
	bool in_lab = false;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		char *s = trim(line);
		if (!*s || *s == '#')
			continue;
		if ((r = section_line(mc, s, &in_lab, lineno, d)) == 0)
			r = load_line(mc, s, in_lab, lineno, d);
		if (r < 0 && ret != -ENOMEM)
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
	for (int k = 0; k < MACHINE_LAB_N; k++) {
		free(mc->lab[k].value);
		mc->lab[k].value = NULL;
	}
}

int machine_conf_apply(const struct machine_conf *mc, struct kab_config *cfg, struct diags *d)
{
	int ret = 0;
	for (int k = 0; k < MACHINE_LAB_N; k++) {
		if (!mc->lab[k].value)
			continue;
		int r = config_set_machine(cfg, lab_keys[k].setting, mc->path, mc->lab[k].line, mc->lab[k].value, d);
		if (r < 0)
			ret = r;
	}
	return ret;
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
