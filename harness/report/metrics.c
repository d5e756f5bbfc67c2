/* The kernel counters' metric table. Directions follow doc/statistics.md
 * rule 10: throughput is better higher; time, latency, scans, steals,
 * swap traffic, writeback from zswap, rotations, IPIs, TLB flushes and OOM
 * kills are better lower; counts with no sign of goodness are neutral. Labels are the ones the
 * seed postings print ("bogo ops/s", "TLB shootdowns", "Function call
 * IPIs", "pgscan_anon (pages)"). */
#include "harness/report/metrics.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

#include <string.h>

#define H DIRECTION_HIGHER
#define L DIRECTION_LOWER
#define N DIRECTION_NEUTRAL

/* The kernel's counters, as the sampler and the executor record them for
 * every run whatever the workload: first match wins; a NULL unit means
 * the one the data came with, a NULL label "NAME (unit)" from the part
 * after the source prefix. A workload's own metrics are declared by the
 * workload (wl_ops.metrics). time.wall_s and rusage.* are here too: the
 * executor measures them for every workload (the clock, wait4's rusage),
 * so no workload owns them. */
static const struct entry {
	const char *pattern;
	const char *unit;
	enum direction dir;
	const char *label;
} table[] = {
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

enum direction metrics_direction(enum direction d, enum direction dflt)
{
	return d == DIRECTION_UNSET ? dflt : d;
}

const char *metrics_kernel_pattern(size_t i)
{
	return i < ARRAY_SIZE(table) ? table[i].pattern : NULL;
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
static enum direction guess_direction(const char *name, const char *unit)
{
	static const char *const time_units[] = { "s",    "ms",      "us",   "ns",   "\xc2\xb5s", "sec",
						  "secs", "seconds", "msec", "usec", "nsec",      "min" };
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

/* "vmstat.pgscan_anon" -> "pgscan_anon", and the names of a workload
 * whose labels are short (stress-ng, command); other names stay whole. */
static const char *short_name(const char *name, const struct wl_ops *owner, size_t owner_len)
{
	static const char *const sources[] = { "vmstat.", "interrupts.", "memcg.",  "memcg_events.",
					       "psi.",    "memcg_psi.",  "rusage.", "time." };
	if (owner)
		return owner->short_labels ? name + owner_len : name;
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
	const char *hint = unit_hint ? unit_hint : "";
	/* the workload that owns the name declares it, else the kernel table */
	size_t owner_len = 0;
	const struct wl_ops *owner = wl_metric_owner(name, &owner_len);
	const struct wl_metric *d = owner ? wl_metric_find(name) : NULL;
	const struct entry *e = NULL;
	for (size_t i = 0; !owner && i < ARRAY_SIZE(table) && !e; i++)
		if (util_glob(table[i].pattern, name))
			e = &table[i];
	const char *label = NULL;
	if (d) {
		m.known = true;
		m.dir = d->dir;
		snprintf(m.unit, sizeof(m.unit), "%s", d->unit);
		label = d->label;
	} else if (e) {
		m.known = true;
		m.dir = e->dir;
		snprintf(m.unit, sizeof(m.unit), "%s", e->unit ? e->unit : hint);
		label = e->label;
	} else {
		snprintf(m.unit, sizeof(m.unit), "%s", hint);
		m.dir = guess_direction(name, hint);
	}
	const char *shortn = short_name(name, owner, owner_len);
	if (label)
		snprintf(m.label, sizeof(m.label), "%s", label);
	else if (strncmp(name, "interrupts.", 11) == 0)
		snprintf(m.label, sizeof(m.label), "%s interrupts", shortn);
	else if (shortn != name && unit_in_label(m.unit))
		snprintf(m.label, sizeof(m.label), "%s (%s)", shortn, m.unit);
	else
		snprintf(m.label, sizeof(m.label), "%s", shortn);
	*ret = m;
}
