/* The metric table. Directions follow STATS.md: throughput is better
 * higher; time, latency, scans, steals, swap traffic, writeback from
 * zswap, rotations, IPIs, TLB flushes and OOM kills are better lower;
 * counts with no sign of goodness are neutral. Labels are the ones the
 * seed postings print ("bogo ops/s", "TLB shootdowns", "Function call
 * IPIs", "pgscan_anon (pages)"). */
#include "harness/stats/metrics.h"
#include "harness/base/util.h"

#include <string.h>

#define H STATS_DIR_HIGHER
#define L STATS_DIR_LOWER
#define N STATS_DIR_NEUTRAL

/* First match wins; a NULL label means "NAME (unit)" from the part after
 * the source prefix. */
static const struct entry {
	const char *pattern;
	const char *unit;
	enum stats_direction dir;
	const char *label;
} table[] = {
	{ "stress-ng.bogo_ops_per_s", "ops/s", H, "bogo ops/s" },
	{ "stress-ng.bogo_ops_per_s_cpu", "ops/s", H, "bogo ops/s (usr+sys time)" },
	{ "stress-ng.bogo_ops", "ops", H, "bogo ops" },
	{ "stress-ng.*.bogo_ops_per_s", "ops/s", H, NULL },
	{ "stress-ng.*.bogo_ops_per_s_cpu", "ops/s", H, NULL },
	{ "stress-ng.*.bogo_ops", "ops", H, NULL },
	{ "sysbench.tps", "tx/s", H, "transactions/s" },
	{ "sysbench.qps", "q/s", H, "queries/s" },
	{ "sysbench.lat_avg_ms", "ms", L, "avg latency (ms)" },
	{ "sysbench.lat_p95_ms", "ms", L, "p95 latency (ms)" },
	{ "sysbench.lat_p99_ms", "ms", L, "p99 latency (ms)" },
	{ "sysbench.lat_max_ms", "ms", L, "max latency (ms)" },
	{ "sysbench.errors", "errors", L, NULL },
	{ "sysbench.reconnects", "reconnects", L, NULL },
	{ "mariadb.Innodb_buffer_pool_reads", "reads", L, "buffer pool reads from disk" },
	{ "mariadb.*", NULL, N, NULL },
	{ "pageout.ns_mean", "ns", L, "MADV_PAGEOUT time (mean)" },
	{ "pageout.ns_median", "ns", L, "MADV_PAGEOUT time (median)" },
	{ "pageout.ns_stddev_pct", "%", L, "MADV_PAGEOUT std dev %" },
	{ "pageout.refault_ns_mean", "ns", L, "refault time (mean)" },
	{ "pageout.*ns_stddev_pct", "%", L, NULL },
	{ "pageout.*ns_*", "ns", L, NULL },
	{ "shmem-truncate.op_ms_median", "ms", L, "ms per operation (median)" },
	{ "shmem-truncate.op_ms_*", "ms", L, NULL },
	{ "shmem-truncate.fill_ms_*", "ms", L, NULL },
	{ "kbuild.objects", "objects", N, "objects built" },
	{ "fcount.*", "calls", N, NULL },
	{ "time.wall_s", "s", L, "wall time (s)" },
	{ "rusage.user_s", "s", L, "user time (s)" },
	{ "rusage.sys_s", "s", L, "sys time (s)" },
	{ "rusage.maxrss_kb", "KiB", N, "max RSS (KiB)" },
	{ "memcg.peak_bytes", "bytes", N, "memcg peak (bytes)" },
	{ "memcg.oom_kills", "kills", L, "memcg OOM kills" },
	{ "memcg.oom_kill", "kills", L, "memcg OOM kills" },
	{ "interrupts.TLB", "interrupts", L, "TLB shootdowns" },
	{ "interrupts.CAL", "interrupts", L, "Function call IPIs" },
	{ "interrupts.RES", "interrupts", L, "Rescheduling IPIs" },
	{ "vmstat.pgscan_*", "pages", L, NULL },
	{ "vmstat.pgsteal_*", "pages", L, NULL },
	{ "vmstat.pswpin", "pages", L, NULL },
	{ "vmstat.pswpout", "pages", L, NULL },
	{ "vmstat.zswpin", "pages", L, NULL },
	{ "vmstat.zswpout", "pages", L, NULL },
	{ "vmstat.zswpwb", "pages", L, NULL },
	{ "vmstat.pgrotated", "pages", L, NULL },
	{ "vmstat.nr_tlb_*", "events", L, NULL },
	{ "vmstat.oom_kill", "kills", L, "OOM kills" },
	{ "memcg.pgscan*", "pages", L, NULL },
	{ "memcg.pgsteal*", "pages", L, NULL },
	{ "memcg.pswpin", "pages", L, NULL },
	{ "memcg.pswpout", "pages", L, NULL },
	{ "memcg.zswpin", "pages", L, NULL },
	{ "memcg.zswpout", "pages", L, NULL },
	{ "memcg.zswpwb", "pages", L, NULL },
	{ "psi.*_total", "us", L, NULL },
	{ "psi.*avg*", "%", L, NULL },
	{ "memcg_psi.*_total", "us", L, NULL },
};

static bool glob_at(const char *p, const char *s)
{
	for (; *p; p++, s++) {
		if (*p == '*') {
			for (const char *t = s;; t++) {
				if (glob_at(p + 1, t))
					return true;
				if (!*t)
					return false;
			}
		}
		if (*p != *s)
			return false;
	}
	return *s == 0;
}

bool metrics_glob(const char *pattern, const char *name)
{
	return glob_at(pattern, name);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool contains_word(const char *s, const char *word)
{
	return strstr(s, word) != NULL;
}

/* For metrics the table does not know: the unit first, then the name. */
static enum stats_direction guess_direction(const char *name, const char *unit)
{
	static const char *const time_units[] = { "s", "ms", "us", "ns", "\xc2\xb5s", "sec", "secs", "seconds",
						   "msec", "usec", "nsec", "min" };
	static const char *const rate_units[] = { "tps", "qps", "iops", "ops/s", "tx/s" };
	for (size_t i = 0; i < ARRAY_SIZE(rate_units); i++)
		if (strcmp(unit, rate_units[i]) == 0)
			return H;
	if (ends_with(unit, "/s") || ends_with(unit, "/sec"))
		return H;
	for (size_t i = 0; i < ARRAY_SIZE(time_units); i++)
		if (strcmp(unit, time_units[i]) == 0)
			return L;
	if (contains_word(name, "latency") || contains_word(name, "Latency") || contains_word(name, "time") ||
	    contains_word(name, "duration"))
		return L;
	if (ends_with(name, "/s") || ends_with(name, "_per_s") || ends_with(name, "_per_sec") ||
	    contains_word(name, "throughput") || contains_word(name, "tps") || contains_word(name, "qps") ||
	    contains_word(name, "transactions/s") || contains_word(name, "ops/s"))
		return H;
	return N;
}

/* "vmstat.pgscan_anon" -> "pgscan_anon"; names without a known source
 * stay whole. */
static const char *short_name(const char *name)
{
	static const char *const sources[] = { "vmstat.", "interrupts.", "memcg.", "memcg_events.", "psi.",
						"memcg_psi.", "command.", "stress-ng.", "rusage.", "time." };
	for (size_t i = 0; i < ARRAY_SIZE(sources); i++)
		if (strncmp(name, sources[i], strlen(sources[i])) == 0 && name[strlen(sources[i])])
			return name + strlen(sources[i]);
	return name;
}

/* Counting units say nothing a label needs. */
static bool unit_in_label(const char *unit)
{
	return *unit && strcmp(unit, "events") != 0 && strcmp(unit, "interrupts") != 0 && strcmp(unit, "count") != 0;
}

void metrics_describe(const char *name, const char *unit_hint, struct metric_info *ret)
{
	struct metric_info m = { .dir = N };
	const struct entry *e = NULL;
	const char *hint = unit_hint ? unit_hint : "";
	for (size_t i = 0; i < ARRAY_SIZE(table) && !e; i++)
		if (metrics_glob(table[i].pattern, name))
			e = &table[i];
	if (e) {
		m.known = true;
		m.dir = e->dir;
		snprintf(m.unit, sizeof(m.unit), "%s", e->unit ? e->unit : hint);
	} else {
		snprintf(m.unit, sizeof(m.unit), "%s", hint);
		m.dir = guess_direction(name, hint);
	}
	const char *shortn = short_name(name);
	if (e && e->label)
		snprintf(m.label, sizeof(m.label), "%s", e->label);
	else if (strncmp(name, "interrupts.", 11) == 0)
		snprintf(m.label, sizeof(m.label), "%s interrupts", shortn);
	else if (shortn != name && unit_in_label(m.unit))
		snprintf(m.label, sizeof(m.label), "%s (%s)", shortn, m.unit);
	else
		snprintf(m.label, sizeof(m.label), "%s", shortn);
	*ret = m;
}
