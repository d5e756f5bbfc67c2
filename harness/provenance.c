/* Provenance: every run records the machine state it ran in. */
#include "provenance.h"
#include "cgroup.h"
#include "store.h"
#include "swap.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void read_into(const char *path, char *buf, size_t len)
{
	char *v;
	if (util_read_line(path, &v) == 0) {
		snprintf(buf, len, "%s", v);
		free(v);
	} else {
		buf[0] = 0;
	}
}

int prov_boot_id(char *buf, size_t len)
{
	read_into("/proc/sys/kernel/random/boot_id", buf, len);
	return buf[0] ? 0 : -1;
}

int prov_fill(struct store_run *r)
{
	read_into("/proc/sys/kernel/osrelease", r->kernel_release, sizeof(r->kernel_release));
	prov_boot_id(r->boot_id, sizeof(r->boot_id));
	read_into("/proc/cmdline", r->cmdline, sizeof(r->cmdline));
	snprintf(r->kab_version, sizeof(r->kab_version), "%s", KAB_VERSION);
	r->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	util_meminfo_bytes("MemTotal", &r->mem_total);
	swap_describe(&r->swap_total, r->swap_devices, sizeof(r->swap_devices));
	int v;
	if (cg_memory_version(&v, NULL, 0) == 0)
		r->cgroup_version = v;
	return 0;
}
