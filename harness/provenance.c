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

static uint64_t meminfo_bytes(const char *key)
{
	char *buf;
	if (util_read_file("/proc/meminfo", &buf, NULL) < 0)
		return 0;
	uint64_t v = 0;
	size_t kl = strlen(key);
	for (char *line = buf; line && *line;) {
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			const char *p = line + kl + 1;
			while (*p == ' ')
				p++;
			while (*p >= '0' && *p <= '9')
				v = v * 10 + (uint64_t)(*p++ - '0');
			v *= 1024;
			break;
		}
		char *nl = strchr(line, '\n');
		line = nl ? nl + 1 : NULL;
	}
	free(buf);
	return v;
}

int prov_fill(struct store_run *r)
{
	read_into("/proc/sys/kernel/osrelease", r->kernel_release, sizeof(r->kernel_release));
	prov_boot_id(r->boot_id, sizeof(r->boot_id));
	read_into("/proc/cmdline", r->cmdline, sizeof(r->cmdline));
	snprintf(r->kab_version, sizeof(r->kab_version), "%s", KAB_VERSION);
	r->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	r->mem_total = meminfo_bytes("MemTotal");
	swap_describe(&r->swap_total, r->swap_devices, sizeof(r->swap_devices));
	int v;
	if (cg_memory_version(&v, NULL, 0) == 0)
		r->cgroup_version = v;
	return 0;
}
