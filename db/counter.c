/* The kernel counters a run records (the sampler's vmstat, interrupts,
 * memcg and PSI series and deltas), described by their full names: a
 * level or events, and the unit. Words about what the store holds, so
 * that the sampler writing them and kabd's API showing them agree. */
#include <stdbool.h>
#include <string.h>

#include "db/counter.h"

static bool starts_with(const char *s, const char *prefix, const char **ret_rest)
{
	size_t n = strlen(prefix);

	if (strncmp(s, prefix, n) != 0)
		return false;
	*ret_rest = s + n;
	return true;
}

static bool in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

/* nr_* in /proc/vmstat are levels, except these, which only ever grow. */
static const char *const vmstat_nr_events[] = { "nr_vmscan_write",      "nr_vmscan_immediate_reclaim",
						"nr_dirtied",           "nr_written",
						"nr_throttled_written", "nr_foll_pin_acquired",
						"nr_foll_pin_released" };

/* vmstat levels whose names do not start with nr_. */
static const char *const vmstat_other_gauges[] = { "workingset_nodes" };

/* memory.stat sizes, cgroup v2 and v1 (v1 repeats them as total_<key>). */
static const char *const memcg_gauges[] = {
	/* v2 */
	"anon", "file", "kernel", "kernel_stack", "pagetables", "sec_pagetables", "percpu", "sock", "vmalloc", "shmem",
	"zswap", "zswapped", "zram", "zrammed", "shmem_zram", "shmem_zrammed", "file_mapped", "file_dirty",
	"file_writeback", "swapcached", "anon_thp", "file_thp", "shmem_thp", "inactive_anon", "active_anon",
	"inactive_file", "active_file", "unevictable", "slab_reclaimable", "slab_unreclaimable", "slab", "hugetlb",
	/* v1 */
	"cache", "rss", "rss_huge", "mapped_file", "dirty", "writeback", "swap", "hierarchical_memory_limit", "hierarchical_memsw_limit"
};

static const char *const memcg_event_gauges[] = { "under_oom", "oom_kill_disable" };

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

bool counter_is_gauge(const char *metric)
{
	const char *key;

	if (!metric)
		return false;
	if (starts_with(metric, "vmstat.", &key)) {
		const char *rest;
		if (starts_with(key, "nr_", &rest))
			return !starts_with(key, "nr_tlb_", &rest) &&
			       !in_list(key, vmstat_nr_events, sizeof(vmstat_nr_events) / sizeof(vmstat_nr_events[0]));
		return in_list(key, vmstat_other_gauges, sizeof(vmstat_other_gauges) / sizeof(vmstat_other_gauges[0]));
	}
	if (starts_with(metric, "memcg.", &key)) {
		const char *rest;
		if (starts_with(key, "total_", &rest))
			key = rest;
		return in_list(key, memcg_gauges, sizeof(memcg_gauges) / sizeof(memcg_gauges[0]));
	}
	if (starts_with(metric, "memcg_events.", &key))
		return in_list(key, memcg_event_gauges, sizeof(memcg_event_gauges) / sizeof(memcg_event_gauges[0]));
	if (starts_with(metric, "psi.", &key) || starts_with(metric, "memcg_psi.", &key)) {
		if (ends_with(key, "_total"))
			return false;
		return strstr(key, "avg") != NULL;
	}
	/* interrupts.* and anything unknown count events */
	return false;
}

const char *counter_unit(const char *metric)
{
	const char *key;

	if (!metric)
		return "";
	if (starts_with(metric, "vmstat.", &key)) {
		if (!counter_is_gauge(metric))
			return "events";
		/* the kernel reports these two in kB, not pages */
		if (strcmp(key, "nr_kernel_stack") == 0 || strcmp(key, "nr_shadow_call_stack") == 0)
			return "kB";
		if (strcmp(key, "workingset_nodes") == 0)
			return "nodes";
		return "pages";
	}
	if (starts_with(metric, "interrupts.", &key))
		return "interrupts";
	if (starts_with(metric, "memcg.", &key))
		return counter_is_gauge(metric) ? "bytes" : "events";
	if (starts_with(metric, "memcg_events.", &key))
		return counter_is_gauge(metric) ? "count" : "events";
	if (starts_with(metric, "psi.", &key) || starts_with(metric, "memcg_psi.", &key))
		return ends_with(key, "_total") ? "us" : "%";
	return "";
}
