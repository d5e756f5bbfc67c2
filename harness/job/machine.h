/* /etc/kab/machine.conf: what a machine needs of every job that runs on
 * it, so that its operator says it once instead of in every job file.
 *
 *   # this board's firmware loses devices under kexec
 *   switch = reboot
 *   # knobs beyond the memory-management ones (knob_allow.h)
 *   knobs.allow = kernel.sched_autogroup_enabled /sys/devices/system/cpu/cpufreq/policy0/scaling_governor
 *
 *   # the lab this machine is in (doc/lab.md)
 *   [lab]
 *   url = postgresql://kab@db1.lab/kablab?sslmode=verify-full&sslrootcert=/etc/kab/lab-ca.pem
 *   credentials = /etc/kab/lab.pgpass
 *   tags = numa fast-disk
 *
 * One "key = value" a line; # starts a comment line. A job's own key wins
 * over the machine's; knobs.allow may repeat and adds to the list. The
 * keys after [lab] are the lab's, settings of the configuration table
 * (config.h: lab-url, lab-credentials, lab-tags) once main applies them
 * (machine_conf_apply).
 * $KAB_MACHINE_CONF names another file (config.h). main loads it once
 * (machine_conf_load) and installs it with the configuration (struct
 * kab_config's machine); the library reads machine_conf_current(). */
#pragma once
#include "harness/job/job.h"
#include "harness/job/knob_allow.h"
#include "harness/base/config.h"
#include "harness/base/util.h"

#include <stdbool.h>

/* [lab]'s keys, in the order of machine.c's table */
enum {
	MACHINE_LAB_URL,
	MACHINE_LAB_CREDENTIALS,
	MACHINE_LAB_TAGS,
	MACHINE_LAB_HEARTBEAT,
	MACHINE_LAB_LEASE,
	MACHINE_LAB_MACHINE_ID,
	MACHINE_LAB_N
};

struct machine_conf {
	char path[256];
	struct {
		char *value; /* NULL: not in the file */
		int line;
	} lab[MACHINE_LAB_N];
	bool has_switch;
	enum job_switch switch_mode;
	int switch_line;
	struct knob_pattern *knob_allow; /* knobs.allow, every pattern of every line */
	size_t n_knob_allow;
};

/* The file's path as configured: $KAB_MACHINE_CONF, else /etc/kab/machine.conf. */
const char *machine_conf_path(void);
/* The settings main loaded and installed (config_get()->machine), else
 * none: no switch, no knobs.allow. */
const struct machine_conf *machine_conf_current(void);

/* Reads the file at path into mc. A missing file sets nothing and returns
 * 0; an unreadable one or a bad line adds a diagnostic naming the file and
 * line and returns -EINVAL (or -errno). Free mc with machine_conf_free
 * after every load, failed ones included. */
int machine_conf_load(struct machine_conf *mc, const char *path, struct diags *d);
void machine_conf_free(struct machine_conf *mc);
/* [lab]'s values into cfg's settings (config_set_machine), with the file
 * and line; the environment and flags keep theirs. */
int machine_conf_apply(const struct machine_conf *mc, struct kab_config *cfg, struct diags *d);
/* Prints machine.conf's settings as config_print does the others: its
 * switch and each knobs.allow pattern, with the file and line. */
void machine_conf_print(const struct machine_conf *mc, FILE *out);
