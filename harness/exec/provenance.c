/* Provenance: every run records the machine state it ran in. */
#include "harness/exec/provenance.h"
#include "harness/exec/cgroup.h"
#include "db/store.h"
#include "harness/exec/swap.h"
#include "harness/base/util.h"

#include "harness/exec/knobs.h"

#include <glob.h>
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

/* Appends "key=value\n" when it fits whole. */
static void add_line(struct strbuf *sb, size_t len, const char *key, const char *value)
{
	if (sb->len + strlen(key) + strlen(value) + 3 <= len)
		sb_printf(sb, "%s=%s\n", key, value);
}

static void add_file(struct strbuf *sb, size_t len, const char *root, const char *path)
{
	char full[1024], v[512];
	snprintf(full, sizeof(full), "%s%s", root, path);
	if (knob_read(full, v, sizeof(v)) == 0)
		add_line(sb, len, path, v);
}

static void add_glob(struct strbuf *sb, size_t len, const char *root, const char *pattern)
{
	char full[1024];
	snprintf(full, sizeof(full), "%s%s", root, pattern);
	glob_t g;
	if (glob(full, 0, NULL, &g) != 0)
		return;
	size_t skip = strlen(root);
	for (size_t i = 0; i < g.gl_pathc; i++)
		add_file(sb, len, root, g.gl_pathv[i] + skip);
	globfree(&g);
}

static void cpufreq_governor(const char *root, char *buf, size_t len)
{
	char full[1024];
	snprintf(full, sizeof(full), "%s/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor", root);
	glob_t g;
	snprintf(buf, len, "none");
	if (glob(full, 0, NULL, &g) != 0)
		return;
	struct strbuf all = { 0 };
	char first[64] = "";
	bool mixed = false;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char v[64];
		if (knob_read(g.gl_pathv[i], v, sizeof(v)) < 0)
			snprintf(v, sizeof(v), "?");
		if (i == 0)
			snprintf(first, sizeof(first), "%s", v);
		else if (strcmp(v, first) != 0)
			mixed = true;
		const char *cpu = strstr(g.gl_pathv[i] + strlen(root), "/cpu/cpu");
		sb_printf(&all, "%s%.*s %s", i ? ", " : "", cpu ? (int)strcspn(cpu + 5, "/") : 1, cpu ? cpu + 5 : "?", v);
	}
	globfree(&g);
	if (mixed)
		snprintf(buf, len, "mixed: %s", all.buf ? all.buf : "");
	else
		snprintf(buf, len, "%s", first);
	sb_free(&all);
}

static void cpufreq_turbo(const char *root, char *buf, size_t len)
{
	char full[1024], v[16];
	snprintf(full, sizeof(full), "%s/sys/devices/system/cpu/intel_pstate/no_turbo", root);
	if (knob_read(full, v, sizeof(v)) == 0) {
		snprintf(buf, len, "%s", strcmp(v, "1") == 0 ? "off" : "on");
		return;
	}
	snprintf(full, sizeof(full), "%s/sys/devices/system/cpu/cpufreq/boost", root);
	if (knob_read(full, v, sizeof(v)) == 0) {
		snprintf(buf, len, "%s", strcmp(v, "1") == 0 ? "on" : "off");
		return;
	}
	snprintf(buf, len, "none");
}

void prov_settings(const char *root, char *buf, size_t len)
{
	struct strbuf sb = { 0 };
	static const char *const files[] = {
		"/sys/kernel/mm/transparent_hugepage/enabled",
		"/sys/kernel/mm/transparent_hugepage/defrag",
		"/sys/kernel/mm/transparent_hugepage/shmem_enabled",
	};
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		add_file(&sb, len, root, files[i]);
	add_glob(&sb, len, root, "/sys/kernel/mm/transparent_hugepage/hugepages-*kB/enabled");
	add_glob(&sb, len, root, "/sys/kernel/mm/transparent_hugepage/hugepages-*kB/shmem_enabled");
	add_file(&sb, len, root, "/sys/kernel/mm/lru_gen/enabled");
	add_file(&sb, len, root, "/proc/sys/vm/swappiness");
	add_glob(&sb, len, root, "/sys/module/zswap/parameters/*");
	char v[512];
	cpufreq_governor(root, v, sizeof(v));
	add_line(&sb, len, "cpufreq.governor", v);
	cpufreq_turbo(root, v, sizeof(v));
	add_line(&sb, len, "cpufreq.turbo", v);
	snprintf(buf, len, "%s", sb.buf ? sb.buf : "");
	sb_free(&sb);
}
