/* kab's configuration: the settings' table, their resolution from the
 * environment and flags, the process's installed copy; see config.h. */
#include "harness/base/config.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum config_type {
	TYPE_FILE,      /* a path, relative ones too (read as given) */
	TYPE_ABS,       /* an absolute path: kab writes there */
	TYPE_STATE_DIR, /* systemd's colon-separated list: its first entry */
	TYPE_BOOL,      /* yes or no */
	TYPE_TEXT,      /* checked where it is used (a URL, a socket path) */
	TYPE_LOCALE,    /* the first of the variables set decides: yes or no */
	TYPE_SECONDS,   /* a duration in seconds, 1 to CONFIG_SECONDS_MAX */
};

/* One row per setting: the only place its name, variables, default and
 * meaning are written. */
static const struct setting {
	const char *name;
	const char *env[3]; /* the first one set and not empty is taken */
	enum config_type type;
	const char *def;     /* NULL: unset */
	const char *unset;   /* what an unset value means, for config_print */
	const char *example; /* for a message about a bad value */
	bool client;         /* read only by kab's clients of kabd */
} settings[CONFIG_N] = {
	[CONFIG_STATE_DIR] = { "state-dir", { "STATE_DIRECTORY" }, TYPE_STATE_DIR, CONFIG_STATE_DIR_DEFAULT, NULL, "/var/lib/kab" },
	[CONFIG_MACHINE_CONF] = { "machine-conf", { "KAB_MACHINE_CONF" }, TYPE_FILE, CONFIG_MACHINE_CONF_DEFAULT, NULL, "/etc/kab/machine.conf" },
	[CONFIG_KERNELS_DIR] = { "kernels-dir", { "KAB_KERNELS_DIR" }, TYPE_ABS, NULL, "kernels/ in the state directory", "/srv/kab/kernels" },
	[CONFIG_KBUILD_WORK] = { "kbuild-work", { "KAB_KBUILD_WORK" }, TYPE_ABS, CONFIG_KBUILD_WORK_DEFAULT, NULL, "/srv/kab/kbuild" },
	[CONFIG_KBUILD_CACHE] = { "kbuild-cache", { "KAB_KBUILD_CACHE" }, TYPE_ABS, CONFIG_KBUILD_CACHE_DEFAULT, NULL, "/srv/kab/src" },
	[CONFIG_CA_BUNDLE] = { "ca-bundle", { "KAB_CA_BUNDLE" }, TYPE_FILE, NULL, "the system's certificate authorities", "/etc/ssl/certs/lab-ca.pem" },
	[CONFIG_SWITCH_DRY_RUN] = { "switch-dry-run", { "KAB_SWITCH_DRY_RUN" }, TYPE_BOOL, "no", NULL, "1" },
	[CONFIG_URL] = { "url", { "KAB_URL", "KAB_SERVER" }, TYPE_TEXT, NULL, "none: kabd's unix socket", "https://lab1:8469", true },
	[CONFIG_SOCKET] = { "socket", { "KAB_SOCKET" }, TYPE_TEXT, CONFIG_SOCKET_DEFAULT, NULL, CONFIG_SOCKET_DEFAULT, true },
	[CONFIG_PATH] = { "path", { "PATH" }, TYPE_TEXT, CONFIG_PATH_DEFAULT, NULL, CONFIG_PATH_DEFAULT },
	[CONFIG_UTF8] = { "utf8", { "LC_ALL", "LC_CTYPE", "LANG" }, TYPE_LOCALE, "no", NULL, "C.UTF-8" },
	/* machine.conf's [lab] section only (machine.c) */
	[CONFIG_LAB_URL] = { "lab-url", { NULL }, TYPE_TEXT, NULL, "none: this machine is in no lab", "postgresql://kab@db1.lab/kablab?sslmode=verify-full" },
	[CONFIG_LAB_CREDENTIALS] = { "lab-credentials", { NULL }, TYPE_ABS, NULL, "none: no password file", "/etc/kab/lab.pgpass" },
	[CONFIG_LAB_TAGS] = { "lab-tags", { NULL }, TYPE_TEXT, NULL, "none", "numa fast-disk" },
	[CONFIG_LAB_HEARTBEAT] = { "lab-heartbeat", { NULL }, TYPE_SECONDS, CONFIG_LAB_HEARTBEAT_DEFAULT, NULL, "10" },
	[CONFIG_LAB_LEASE] = { "lab-lease", { NULL }, TYPE_SECONDS, CONFIG_LAB_LEASE_DEFAULT, NULL, "120" },
	[CONFIG_LAB_MACHINE_ID] = { "lab-machine-id", { NULL }, TYPE_ABS, CONFIG_LAB_MACHINE_ID_DEFAULT, NULL, "/etc/machine-id" },
};

static const char *const yes_words[] = { "1", "yes", "true", "on" };
static const char *const no_words[] = { "0", "no", "false", "off" };

static bool in_words(const char *s, const char *const *words, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(s, words[i]) == 0)
			return true;
	return false;
}

static bool names_utf8(const char *s)
{
	return strcasestr(s, "utf-8") || strcasestr(s, "utf8");
}

/* value as the setting keeps it in *ret (malloc'd), or -EINVAL with what
 * is wrong in *ret_why; a flag's is never a list. */
static int normalize(const struct setting *s, const char *value, bool flag, char **ret, const char **ret_why)
{
	char *v = NULL;
	switch (s->type) {
	case TYPE_ABS:
		if (value[0] != '/') {
			*ret_why = "not an absolute path";
			return -EINVAL;
		}
		v = strdup(value);
		break;
	case TYPE_STATE_DIR: v = flag ? strdup(value) : strndup(value, strcspn(value, ":")); break;
	case TYPE_BOOL:
		if (in_words(value, yes_words, ARRAY_SIZE(yes_words)))
			v = strdup("yes");
		else if (in_words(value, no_words, ARRAY_SIZE(no_words)))
			v = strdup("no");
		else {
			*ret_why = "not a yes or no (1, yes, true, on; 0, no, false, off)";
			return -EINVAL;
		}
		break;
	case TYPE_LOCALE: v = strdup(names_utf8(value) ? "yes" : "no"); break;
	case TYPE_SECONDS: {
		double sec;
		if (util_parse_double(value, &sec) < 0 || !(sec >= 1 && sec <= CONFIG_SECONDS_MAX)) {
			*ret_why = "not a number of seconds from 1 to 86400";
			return -EINVAL;
		}
		v = strdup(value);
		break;
	}
	case TYPE_FILE:
	case TYPE_TEXT: v = strdup(value); break;
	}
	if (!v) {
		*ret_why = "out of memory";
		return -ENOMEM;
	}
	*ret = v;
	return 0;
}

static void set(struct config_value *cv, char *value, enum config_source source, const char *origin, int line)
{
	free(cv->value);
	*cv = (struct config_value){ .value = value, .source = source, .line = line };
	snprintf(cv->origin, sizeof(cv->origin), "%s", origin);
}

static void defaults(struct kab_config *cfg)
{
	*cfg = (struct kab_config){ 0 };
	for (size_t k = 0; k < CONFIG_N; k++)
		if (settings[k].def)
			cfg->v[k].value = strdup(settings[k].def);
}

static void bad_value(struct diags *d, const struct setting *s, const char *origin, bool is_flag, const char *value, const char *why)
{
	const char *def = s->def ? s->def : s->unset;
	if (is_flag)
		diags_add(d, NULL, 0, "%s %s: %s: give e.g. %s %s", origin, value, why, origin, s->example);
	else
		diags_add(d, NULL, 0, "%s=%s: %s: set it to e.g. %s=%s, or unset it for the default (%s)", origin,
			  value, why, origin, s->example, def ? def : "none");
}

/* The first of the setting's variables that is set and not empty. */
static int from_env(struct kab_config *cfg, enum config_key k, config_env_fn *env, struct diags *d)
{
	const struct setting *s = &settings[k];
	for (size_t i = 0; i < ARRAY_SIZE(s->env) && s->env[i]; i++) {
		const char *e = env(s->env[i]);
		if (!e || !*e)
			continue;
		char *v = NULL;
		const char *why = NULL;
		int r = normalize(s, e, false, &v, &why);
		if (r < 0) {
			bad_value(d, s, s->env[i], false, e, why);
			return r;
		}
		set(&cfg->v[k], v, CONFIG_FROM_ENV, s->env[i], 0);
		return 0;
	}
	return 0;
}

int config_resolve(struct kab_config *cfg, config_env_fn *env, struct diags *d)
{
	defaults(cfg);
	int ret = 0;
	for (size_t k = 0; k < CONFIG_N; k++) {
		int r = from_env(cfg, (enum config_key)k, env, d);
		if (r < 0 && ret != -ENOMEM)
			ret = r;
	}
	return ret;
}

int config_set_flag(struct kab_config *cfg, enum config_key key, const char *flag, const char *value, struct diags *d)
{
	const struct setting *s = &settings[key];
	char *v = NULL;
	const char *why = NULL;
	int r = normalize(s, value, true, &v, &why);
	if (r < 0) {
		bad_value(d, s, flag, true, value, why);
		return r;
	}
	set(&cfg->v[key], v, CONFIG_FROM_FLAG, flag, 0);
	return 0;
}

int config_set_machine(struct kab_config *cfg, enum config_key key, const char *file, int line, const char *value, struct diags *d)
{
	if (cfg->v[key].source == CONFIG_FROM_ENV || cfg->v[key].source == CONFIG_FROM_FLAG)
		return 0;
	const struct setting *s = &settings[key];
	char *v = NULL;
	const char *why = NULL;
	int r = normalize(s, value, true, &v, &why);
	if (r < 0) {
		diags_add(d, file, line, "%s = %s: %s, e.g. %s", s->name, value, why, s->example);
		return r;
	}
	set(&cfg->v[key], v, CONFIG_FROM_MACHINE, file, line);
	return 0;
}

void config_free(struct kab_config *cfg)
{
	for (size_t k = 0; k < CONFIG_N; k++) {
		free(cfg->v[k].value);
		cfg->v[k].value = NULL;
	}
	cfg->machine = NULL;
}

static struct {
	struct kab_config cfg;
	bool ready;
} installed;

void config_use(struct kab_config *cfg)
{
	if (installed.ready)
		config_free(&installed.cfg);
	installed.cfg = *cfg;
	installed.ready = true;
	*cfg = (struct kab_config){ 0 };
}

int config_use_flag(enum config_key key, const char *flag, const char *value, struct diags *d)
{
	config_get();
	return config_set_flag(&installed.cfg, key, flag, value, d);
}

const struct kab_config *config_get(void)
{
	if (!installed.ready) {
		defaults(&installed.cfg);
		installed.ready = true;
	}
	return &installed.cfg;
}

const char *config_str(enum config_key key)
{
	return config_get()->v[key].value;
}

bool config_bool(enum config_key key)
{
	const char *v = config_str(key);
	return v && strcmp(v, "yes") == 0;
}

double config_seconds(enum config_key key)
{
	const char *v = config_str(key);
	double sec = 0;
	if (!v || util_parse_double(v, &sec) < 0)
		util_parse_double(settings[key].def ? settings[key].def : "0", &sec);
	return sec;
}

static const char *origin_of(const struct config_value *cv, char *buf, size_t len)
{
	switch (cv->source) {
	case CONFIG_FROM_DEFAULT: return "default";
	case CONFIG_FROM_ENV:
	case CONFIG_FROM_FLAG: return cv->origin;
	case CONFIG_FROM_MACHINE: snprintf(buf, len, "%s:%d", cv->origin, cv->line); return buf;
	}
	return "default";
}

const char *config_origin(enum config_key key, char *buf, size_t len)
{
	return origin_of(&config_get()->v[key], buf, len);
}

const char *config_name(enum config_key key)
{
	return settings[key].name;
}

const char *config_var(enum config_key key, size_t i)
{
	return i < ARRAY_SIZE(settings[key].env) ? settings[key].env[i] : NULL;
}

void config_print_line(FILE *out, const char *name, const char *value, const char *from)
{
	fprintf(out, "%-15s %-40s %s\n", name, value, from);
}

void config_print(const struct kab_config *cfg, bool clients, FILE *out)
{
	for (size_t k = 0; k < CONFIG_N; k++) {
		const struct config_value *cv = &cfg->v[k];
		if (settings[k].client && !clients)
			continue;
		char buf[512], from[600];
		const char *o = origin_of(cv, buf, sizeof(buf));
		switch (cv->source) {
		case CONFIG_FROM_ENV: snprintf(from, sizeof(from), "environment %s", o); break;
		case CONFIG_FROM_FLAG: snprintf(from, sizeof(from), "flag %s", o); break;
		default: snprintf(from, sizeof(from), "%s", o); break;
		}
		char shown[4096];
		if (cv->value)
			esc_text_buf(cv->value, shown, sizeof(shown), 0);
		else
			snprintf(shown, sizeof(shown), "(%s)", settings[k].unset);
		config_print_line(out, settings[k].name, shown, from);
	}
}
