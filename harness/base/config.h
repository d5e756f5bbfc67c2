/* kab's configuration: every setting the library reads that is not in a
 * job file, resolved once in main (kab's and kabd's) from its flags, the
 * environment and /etc/kab/machine.conf, each value with where it came
 * from. The library reads no environment variable: main resolves a
 * struct kab_config (config_resolve, config_set_flag), installs it
 * (config_use), and the library asks config_str / config_bool.
 *
 * Precedence: a flag, else the environment, else machine.conf, else the
 * default. `kab config` and `kabd --print-config` print what is in force. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct diags;
struct machine_conf; /* harness/job/machine.h: machine.conf's own settings */

#define CONFIG_STATE_DIR_DEFAULT "/var/lib/kab"
#define CONFIG_MACHINE_CONF_DEFAULT "/etc/kab/machine.conf"
#define CONFIG_KBUILD_WORK_DEFAULT "/var/cache/kab/kbuild"
#define CONFIG_KBUILD_CACHE_DEFAULT "/var/cache/kab/src"
#define CONFIG_SOCKET_DEFAULT "/run/kab/kabd.sock"
#define CONFIG_LAB_HEARTBEAT_DEFAULT "10"
#define CONFIG_LAB_LEASE_DEFAULT "120"
#define CONFIG_LAB_MACHINE_ID_DEFAULT "/etc/machine-id"
#define CONFIG_SECONDS_MAX 86400
#define CONFIG_PATH_DEFAULT "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

enum config_key {
	CONFIG_STATE_DIR,       /* $STATE_DIRECTORY's first entry (systemd) */
	CONFIG_MACHINE_CONF,    /* $KAB_MACHINE_CONF */
	CONFIG_KERNELS_DIR,     /* $KAB_KERNELS_DIR; NULL: kernels/ in the state directory */
	CONFIG_KBUILD_WORK,     /* $KAB_KBUILD_WORK */
	CONFIG_KBUILD_CACHE,    /* $KAB_KBUILD_CACHE */
	CONFIG_CA_BUNDLE,       /* $KAB_CA_BUNDLE; NULL: the system's CAs */
	CONFIG_SWITCH_DRY_RUN,  /* $KAB_SWITCH_DRY_RUN: "yes" or "no" */
	CONFIG_URL,             /* $KAB_URL, else $KAB_SERVER; NULL: the socket */
	CONFIG_SOCKET,          /* $KAB_SOCKET */
	CONFIG_PATH,            /* $PATH: where programs are looked for */
	CONFIG_UTF8,            /* $LC_ALL, $LC_CTYPE or $LANG names UTF-8: "yes" or "no" */
	CONFIG_LAB_URL,         /* machine.conf's [lab] url; NULL: no lab (doc/lab.md) */
	CONFIG_LAB_CREDENTIALS, /* [lab] credentials: a libpq password file; NULL: none */
	CONFIG_LAB_TAGS,        /* [lab] tags: the machine's tags, for job selectors */
	CONFIG_LAB_HEARTBEAT,   /* [lab] heartbeat: seconds between heartbeats */
	CONFIG_LAB_LEASE,       /* [lab] lease: seconds a claimed job's lease lasts unrenewed */
	CONFIG_LAB_MACHINE_ID,  /* [lab] machine-id: the file with the machine's id (/etc/machine-id) */
	CONFIG_N,
};

enum config_source {
	CONFIG_FROM_DEFAULT,
	CONFIG_FROM_ENV,     /* origin: the variable's name */
	CONFIG_FROM_MACHINE, /* origin: machine.conf's path, with its line */
	CONFIG_FROM_FLAG,    /* origin: the flag, "--kernels-dir" */
};

struct config_value {
	char *value; /* NULL: unset (the setting's help says what that means) */
	enum config_source source;
	char origin[256]; /* "" for the default */
	int line;
};

struct kab_config {
	struct config_value v[CONFIG_N];
	/* machine.conf's switch and knobs.allow, loaded by main from
	 * v[CONFIG_MACHINE_CONF] (machine_conf_load); NULL: none loaded */
	const struct machine_conf *machine;
};

/* How main hands the environment over: getenv, or a test's table. */
typedef const char *config_env_fn(const char *name);

/* Fills cfg with the defaults, then what env gives. A value that cannot
 * be used adds a diagnostic naming the variable, the value and what to do,
 * and the setting keeps its default; -EINVAL then. Free with config_free. */
int config_resolve(struct kab_config *cfg, config_env_fn *env, struct diags *d);
/* A flag's value over whatever cfg holds for key; checked as the
 * environment's are (-EINVAL with a diagnostic naming the flag). */
int config_set_flag(struct kab_config *cfg, enum config_key key, const char *flag, const char *value, struct diags *d);
void config_free(struct kab_config *cfg);
/* machine.conf's value for key, at file:line, unless the environment or a
 * flag gave one; checked as the others are (-EINVAL with a diagnostic at
 * the file and line). */
int config_set_machine(struct kab_config *cfg, enum config_key key, const char *file, int line, const char *value, struct diags *d);

/* Installs cfg for this process (moved: cfg is left empty), before any
 * thread starts; the previous one is freed. */
void config_use(struct kab_config *cfg);
/* config_set_flag on the installed configuration: for a verb's flag that
 * is a setting, parsed after main installed it. */
int config_use_flag(enum config_key key, const char *flag, const char *value, struct diags *d);
/* The installed configuration; the defaults, with no environment, when
 * main installed none (tests, fuzz targets). */
const struct kab_config *config_get(void);
const char *config_str(enum config_key key);
bool config_bool(enum config_key key);
/* A TYPE_SECONDS setting's value (checked when it was set). */
double config_seconds(enum config_key key);
/* Where key's value came from, for messages: "KAB_CA_BUNDLE", "--socket",
 * "/etc/kab/machine.conf:3" or "default". */
const char *config_origin(enum config_key key, char *buf, size_t len);

/* The setting's name as `kab config` shows it ("kernels-dir"). */
const char *config_name(enum config_key key);
/* Its i-th environment variable, the first that is set winning; NULL past
 * the last. */
const char *config_var(enum config_key key, size_t i);
/* Prints every setting (without clients: not those only kab's clients of
 * kabd read), a line each: name, value, where it came from. */
void config_print(const struct kab_config *cfg, bool clients, FILE *out);
/* One line as config_print writes them, for settings kept elsewhere. */
void config_print_line(FILE *out, const char *name, const char *value, const char *from);
