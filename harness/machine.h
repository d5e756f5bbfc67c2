/* /etc/kab/machine.conf: what a machine needs of every job that runs on
 * it, so that its operator says it once instead of in every job file.
 *
 *   # this board's firmware loses devices under kexec
 *   switch = reboot
 *
 * One "key = value" a line; # starts a comment line. A job's own key wins
 * over the machine's. $KAB_MACHINE_CONF names another file. */
#pragma once
#include "job.h"
#include "util.h"

#include <stdbool.h>

struct machine_conf {
	char path[256];
	bool has_switch;
	enum job_switch switch_mode;
	int switch_line;
};

/* The file's path: $KAB_MACHINE_CONF, else /etc/kab/machine.conf. */
const char *machine_conf_path(void);

/* Reads the file into mc. A missing file sets nothing and returns 0; an
 * unreadable one or a bad line adds a diagnostic naming the file and line
 * and returns -EINVAL (or -errno). */
int machine_conf_load(struct machine_conf *mc, struct diags *d);
