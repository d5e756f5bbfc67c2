/* The counter-file parsers against fixtures from real machines
 * (tests/data) and against malformed input; gauge/event classification. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness/sampler/sampler.h"
#include "db/counter.h"
#include "t.h"

#define MAX_ROWS 64
#define MAX_CPUS 64

/* What a parser reported: keys in order, per-CPU values by row. */
struct seen {
	size_t n;
	char key[512][64];
	uint64_t val[512];
	size_t n_cpu_calls;
	unsigned cpu_of[MAX_ROWS][MAX_CPUS];
	uint64_t cpu_val[MAX_ROWS][MAX_CPUS];
	size_t cpu_n[MAX_ROWS];
	size_t row;  /* per-CPU calls go to the row that fn has not closed yet */
};

static void on_kv(void *ctx, const char *key, size_t key_len, uint64_t value) {
	struct seen *s = ctx;

	if (s->n < 512 && key_len < 64) {
		memcpy(s->key[s->n], key, key_len);
		s->key[s->n][key_len] = '\0';
		s->val[s->n] = value;
		s->n++;
	}
	s->row++;
}

static void on_cpu(void *ctx, const char *key, size_t key_len, unsigned cpu, uint64_t value) {
	struct seen *s = ctx;

	(void)key;
	(void)key_len;
	s->n_cpu_calls++;
	if (s->row < MAX_ROWS && s->cpu_n[s->row] < MAX_CPUS) {
		s->cpu_of[s->row][s->cpu_n[s->row]] = cpu;
		s->cpu_val[s->row][s->cpu_n[s->row]] = value;
		s->cpu_n[s->row]++;
	}
}

static int lookup(const struct seen *s, const char *key, uint64_t *ret) {
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->key[i], key) == 0) {
			*ret = s->val[i];
			return (int)i;
		}
	return -1;
}

static uint64_t value_of(const struct seen *s, const char *key) {
	uint64_t v = UINT64_MAX;

	if (lookup(s, key, &v) < 0)
		fprintf(stderr, "key %s not reported\n", key);
	return v;
}

static char *fixture(const char *name, size_t *ret_len) {
	const char *dir = getenv("KAB_TEST_DATA");
	char path[512];
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/data", name);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "cannot open fixture %s\n", path);
		exit(2);
	}
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 4096;
			buf = realloc(buf, cap + 1);
			if (!buf)
				exit(2);
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0)
			exit(2);
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*ret_len = len;
	return buf;
}

static size_t count_lines(const char *buf, size_t len) {
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\n';
	return n;
}

static int parse_kv_file(const char *name, struct seen *s) {
	size_t len;
	char *buf = fixture(name, &len);
	int r;

	memset(s, 0, sizeof(*s));
	r = procparse_kv(buf, len, on_kv, s);
	free(buf);
	return r;
}

static int parse_kv_str(const char *str) {
	struct seen s = { 0 };

	return procparse_kv(str, strlen(str), on_kv, &s);
}

static void test_vmstat(void) {
	static struct seen s;
	size_t len;
	char *buf = fixture("vmstat.vm", &len);
	int r;

	r = parse_kv_file("vmstat.vm", &s);
	T_EQ_INT(r, (long long)count_lines(buf, len));
	T_EQ_INT(r, 192);
	T_EQ_INT(s.n, 192);
	T_EQ_STR(s.key[0], "nr_free_pages");
	T_EQ_INT(s.val[0], 1076876);
	T_EQ_INT(value_of(&s, "pgfault"), 1088152);
	T_EQ_INT(value_of(&s, "nr_dirty_threshold"), 1222019);
	T_EQ_INT(value_of(&s, "oom_kill"), 0);
	T_EQ_STR(s.key[191], "nr_unstable");  /* listed last on 6.18 */
	/* whole keys: "pgscan_anon" is reported as itself, not as "pgscan" */
	uint64_t v;
	T_CHECK(lookup(&s, "pgscan", &v) < 0);
	T_CHECK(lookup(&s, "pgscan_anon", &v) >= 0);
	/* fn may be NULL: validation and counting only */
	T_EQ_INT(procparse_kv(buf, len, NULL, NULL), 192);
	free(buf);
}

static void test_memcg_files(void) {
	static struct seen s;

	T_EQ_INT(parse_kv_file("memory.stat.v1", &s), 42);
	T_EQ_INT(value_of(&s, "cache"), 5603328);
	T_EQ_INT(value_of(&s, "hierarchical_memory_limit"), 268435456);
	T_CHECK(value_of(&s, "hierarchical_memsw_limit") == 9223372036854771712ULL);
	T_EQ_INT(value_of(&s, "total_pgfault"), 30377);
	T_EQ_INT(value_of(&s, "workingset_refault_file"), 1345);

	T_EQ_INT(parse_kv_file("memory.oom_control.v1", &s), 3);
	T_EQ_STR(s.key[0], "oom_kill_disable");
	T_EQ_STR(s.key[1], "under_oom");
	T_EQ_STR(s.key[2], "oom_kill");

	T_EQ_INT(parse_kv_file("memory.stat.v2", &s), 57);
	T_EQ_INT(value_of(&s, "anon"), 1048576000);
	T_EQ_INT(value_of(&s, "slab"), value_of(&s, "slab_reclaimable") + value_of(&s, "slab_unreclaimable"));
	T_EQ_INT(value_of(&s, "pgscan"), 183264);
	T_EQ_INT(value_of(&s, "thp_fault_alloc"), 300);

	T_EQ_INT(parse_kv_file("memory.events.v2", &s), 6);
	T_EQ_INT(value_of(&s, "max"), 1873);
	T_EQ_INT(value_of(&s, "oom_kill"), 2);
}

static void test_kv_malformed(void) {
	static struct seen s;

	T_EQ_INT(parse_kv_file("vmstat.bad-trailing", &s), -EINVAL);
	T_EQ_INT(s.n, 2);  /* the lines before the bad one were reported */
	T_EQ_INT(parse_kv_file("vmstat.bad-nonnumeric", &s), -EINVAL);
	T_EQ_INT(parse_kv_file("vmstat.bad-overflow", &s), -ERANGE);

	T_EQ_INT(parse_kv_str(""), 0);
	T_EQ_INT(parse_kv_str("a 1"), 1);                    /* no final newline */
	T_EQ_INT(parse_kv_str("a  1\nb\t2\n"), 2);           /* blank runs */
	T_EQ_INT(parse_kv_str("a 18446744073709551615\n"), 1);
	T_EQ_INT(parse_kv_str("a 18446744073709551616\n"), -ERANGE);
	T_EQ_INT(parse_kv_str("a\n"), -EINVAL);              /* no value */
	T_EQ_INT(parse_kv_str("a \n"), -EINVAL);
	T_EQ_INT(parse_kv_str(" a 1\n"), -EINVAL);           /* leading blank */
	T_EQ_INT(parse_kv_str("a -1\n"), -EINVAL);
	T_EQ_INT(parse_kv_str("a +1\n"), -EINVAL);
	T_EQ_INT(parse_kv_str("a 1 2\n"), -EINVAL);
	T_EQ_INT(parse_kv_str("a 1 \n"), -EINVAL);           /* trailing blank */
	T_EQ_INT(parse_kv_str("a 0x10\n"), -EINVAL);
	T_EQ_INT(parse_kv_str("a 1.5\n"), -EINVAL);
	T_EQ_INT(parse_kv_str("a 1\n\n"), -EINVAL);          /* empty line */
	T_EQ_INT(parse_kv_str("a 1\r\n"), -EINVAL);
	T_EQ_INT(parse_kv_str("a\0b 1\n"), -EINVAL);
	T_EQ_INT(procparse_kv("a 1\0", 4, NULL, NULL), -EINVAL);  /* NUL inside */
}

static void test_interrupts_vm(void) {
	static struct seen s;
	size_t len;
	char *buf = fixture("interrupts.vm-2cpu", &len);
	int r;

	r = procparse_interrupts(buf, len, on_kv, on_cpu, &s);
	T_EQ_INT(r, 35);
	T_EQ_INT(s.n, 35);
	T_EQ_INT(s.n_cpu_calls, 33 * 2);  /* ERR and MIS have no columns */
	T_EQ_STR(s.key[0], "24");
	T_EQ_INT(value_of(&s, "36"), 28239);
	T_EQ_INT(value_of(&s, "LOC"), 12880 + 15571);
	T_EQ_INT(value_of(&s, "CAL"), 20736 + 23067);
	T_EQ_INT(value_of(&s, "TLB"), 930 + 806);
	T_EQ_INT(value_of(&s, "ERR"), 0);
	T_EQ_INT(value_of(&s, "MIS"), 0);

	int loc = lookup(&s, "LOC", &(uint64_t){ 0 });
	T_CHECK(loc >= 0);
	if (loc >= 0) {
		T_EQ_INT(s.cpu_n[loc], 2);
		T_EQ_INT(s.cpu_of[loc][0], 0);
		T_EQ_INT(s.cpu_of[loc][1], 1);
		T_EQ_INT(s.cpu_val[loc][0], 12880);
		T_EQ_INT(s.cpu_val[loc][1], 15571);
	}
	int err = lookup(&s, "ERR", &(uint64_t){ 0 });
	T_CHECK(err >= 0 && s.cpu_n[err] == 0);

	/* without a per-CPU callback, the same sums */
	static struct seen s2;
	T_EQ_INT(procparse_interrupts(buf, len, on_kv, NULL, &s2), 35);
	T_EQ_INT(value_of(&s2, "LOC"), 12880 + 15571);
	T_EQ_INT(s2.n_cpu_calls, 0);
	free(buf);
}

/* The generator's formula (tests/data/gen-interrupts-64cpu.py). */
static uint64_t synth_value(unsigned row, unsigned cpu, const char *key) {
	if (strcmp(key, "LOC") == 0 && cpu == 5)
		return 12345678901ULL;
	return (uint64_t)row * 100000 + (uint64_t)cpu * (row + 1);
}

static void test_interrupts_64cpu(void) {
	static const char *const keys[] = {
		"0", "8", "9", "120", "121", "1024", "1025", "2048",
		"NMI", "LOC", "SPU", "PMI", "IWI", "RTR", "RES", "CAL", "TLB", "TRM", "THR", "DFR", "MCE", "MCP",
		"ERR", "MIS", "PIN", "NPI", "PIW",
	};
	static struct seen s;
	size_t len;
	char *buf = fixture("interrupts.synthetic-64cpu", &len);
	int r = procparse_interrupts(buf, len, on_kv, on_cpu, &s);

	T_EQ_INT(r, 27);
	T_EQ_INT(s.n_cpu_calls, 25 * 64);
	unsigned formula_row = 0;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && i < s.n; i++) {
		T_EQ_STR(s.key[i], keys[i]);
		if (strcmp(keys[i], "ERR") == 0) {
			T_EQ_INT(s.val[i], 3);
			T_EQ_INT(s.cpu_n[i], 0);
			continue;
		}
		if (strcmp(keys[i], "MIS") == 0) {
			T_EQ_INT(s.val[i], 0);
			T_EQ_INT(s.cpu_n[i], 0);
			continue;
		}
		uint64_t sum = 0;
		bool cpus_ok = s.cpu_n[i] == 64;
		for (unsigned c = 0; c < 64; c++) {
			uint64_t v = synth_value(formula_row, c, keys[i]);
			sum += v;
			if (cpus_ok && (s.cpu_of[i][c] != c || s.cpu_val[i][c] != v))
				cpus_ok = false;
		}
		T_CHECK(cpus_ok);
		T_CHECK(s.val[i] == sum);
		formula_row++;
	}
	T_EQ_INT(value_of(&s, "TLB"), 102434272);
	T_CHECK(value_of(&s, "LOC") == 12402399011ULL);
	free(buf);
}

static void test_interrupts_odd(void) {
	static struct seen s;
	size_t len;
	char *buf = fixture("interrupts.offline-cpu", &len);

	/* CPU1 offline: the columns are CPU0, CPU2, CPU3 */
	T_EQ_INT(procparse_interrupts(buf, len, on_kv, on_cpu, &s), 3);
	T_EQ_INT(value_of(&s, "24"), 6);
	T_EQ_INT(value_of(&s, "LOC"), 600);
	T_EQ_INT(value_of(&s, "ERR"), 7);
	T_EQ_INT(s.cpu_n[1], 3);
	T_EQ_INT(s.cpu_of[1][0], 0);
	T_EQ_INT(s.cpu_of[1][1], 2);
	T_EQ_INT(s.cpu_of[1][2], 3);
	T_EQ_INT(s.cpu_val[1][2], 300);
	free(buf);

	buf = fixture("interrupts.bad-number", &len);
	memset(&s, 0, sizeof(s));
	T_EQ_INT(procparse_interrupts(buf, len, on_kv, on_cpu, &s), -EINVAL);
	free(buf);

	const char *bad[] = {
		"",                                           /* no header */
		"\n",
		"   CPU0  CPUx\n",
		"   CPU0  GPU1\n",
		"   CPU0  CPU1\nLOC 1 2 Local\n",             /* no colon */
		"   CPU0  CPU1\n: 1 2 x\n",                   /* empty key */
		"   CPU0  CPU1\nLOC:\n",                      /* no numbers */
		"   CPU0  CPU1\nLOC: 1 Local timer\n",        /* too few columns */
		"   CPU0  CPU1\nLOC: 1 2x Local\n",
		"   CPU0  CPU1\nLOC: -1 2 Local\n",
		"   CPU0  CPU1\nERR: 1x\n",
		"   CPU0  CPU1\nLOC: 1 18446744073709551615 Local\n",  /* sum overflows */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&s, 0, sizeof(s));
		int r = procparse_interrupts(bad[i], strlen(bad[i]), on_kv, on_cpu, &s);
		if (r >= 0)
			fprintf(stderr, "accepted: \"%s\"\n", bad[i]);
		T_CHECK(r < 0);
	}
	const char *good = "  CPU0\n  0: 5 IO-APIC 2-edge timer\nERR: 1";
	memset(&s, 0, sizeof(s));
	T_EQ_INT(procparse_interrupts(good, strlen(good), on_kv, on_cpu, &s), 2);
	T_EQ_INT(value_of(&s, "0"), 5);
	T_EQ_INT(s.n_cpu_calls, 1);
	T_EQ_INT(value_of(&s, "ERR"), 1);
	/* a header alone is a valid, empty file */
	T_EQ_INT(procparse_interrupts("  CPU0 CPU1\n", 12, on_kv, on_cpu, &s), 0);
}

static void test_pressure(void) {
	static struct seen s;
	size_t len;
	char *buf = fixture("pressure.memory.vm", &len);

	T_EQ_INT(procparse_pressure(buf, len, on_kv, &s), 2);
	T_EQ_STR(s.key[0], "some_total");
	T_EQ_STR(s.key[1], "full_total");
	T_EQ_INT(s.val[0], 0);
	free(buf);

	buf = fixture("memory.pressure.v2", &len);
	memset(&s, 0, sizeof(s));
	T_EQ_INT(procparse_pressure(buf, len, on_kv, &s), 2);
	T_EQ_INT(value_of(&s, "some_total"), 4827391);
	T_EQ_INT(value_of(&s, "full_total"), 2918734);
	free(buf);

	buf = fixture("pressure.bad-trailing", &len);
	T_EQ_INT(procparse_pressure(buf, len, on_kv, &s), -EINVAL);
	free(buf);
	const char *bad[] = {
		"most avg10=0.00 avg60=0.00 avg300=0.00 total=1\n",
		"some avg10=0.00 avg60=0.00 total=1\n",
		"some avg10=0 avg60=0.00 avg300=0.00 total=1\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n",
		"some  avg10=0.00 avg60=0.00 avg300=0.00 total=1\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		T_CHECK(procparse_pressure(bad[i], strlen(bad[i]), on_kv, &s) < 0);
}

static void test_gauges(void) {
	static const char *const gauges[] = {
		"vmstat.nr_free_pages", "vmstat.nr_anon_pages", "vmstat.nr_dirty_threshold",
		"vmstat.nr_zone_active_file", "vmstat.nr_unstable", "vmstat.workingset_nodes",
		"memcg.anon", "memcg.file", "memcg.kernel_stack", "memcg.slab", "memcg.slab_reclaimable",
		"memcg.zswapped", "memcg.anon_thp", "memcg.file_mapped", "memcg.inactive_file",
		"memcg.unevictable", "memcg.hugetlb", "memcg.sec_pagetables", "memcg.percpu",
		"memcg.cache", "memcg.rss", "memcg.rss_huge", "memcg.mapped_file", "memcg.dirty",
		"memcg.writeback", "memcg.swap", "memcg.hierarchical_memory_limit",
		"memcg.hierarchical_memsw_limit", "memcg.total_cache", "memcg.total_rss",
		"memcg.total_inactive_anon", "memcg.total_swapcached",
		"memcg_events.under_oom", "memcg_events.oom_kill_disable",
		"psi.memory.some_avg10", "memcg_psi.full_avg300",
	};
	static const char *const events[] = {
		"vmstat.pgfault", "vmstat.pgscan_anon", "vmstat.pgsteal_kswapd", "vmstat.workingset_refault_file",
		"vmstat.nr_tlb_remote_flush", "vmstat.nr_tlb_local_flush_all", "vmstat.nr_dirtied",
		"vmstat.nr_written", "vmstat.nr_vmscan_write", "vmstat.nr_vmscan_immediate_reclaim",
		"vmstat.nr_foll_pin_acquired", "vmstat.oom_kill", "vmstat.thp_fault_alloc",
		"vmstat.zswpout", "vmstat.pswpin",
		"memcg.pgfault", "memcg.pgmajfault", "memcg.pgscan", "memcg.pgsteal_direct", "memcg.pgpgin",
		"memcg.pgpgout", "memcg.workingset_refault_anon", "memcg.workingset_nodereclaim",
		"memcg.zswpin", "memcg.zswpout", "memcg.zswpwb", "memcg.thp_fault_alloc",
		"memcg.thp_swpout_fallback", "memcg.pgactivate", "memcg.pgdeactivate", "memcg.pglazyfree",
		"memcg.pglazyfreed", "memcg.pgrefill", "memcg.total_pgfault",
		"memcg.total_workingset_refault_file",
		"memcg_events.oom_kill", "memcg_events.max", "memcg_events.high", "memcg_events.oom",
		"psi.memory.some_total", "psi.memory.full_total", "memcg_psi.some_total",
		"interrupts.TLB", "interrupts.LOC.cpu3", "interrupts.24",
		"unknown.thing", "vmstat", "", "memcg.",
	};
	for (size_t i = 0; i < sizeof(gauges) / sizeof(gauges[0]); i++) {
		if (!counter_is_gauge(gauges[i]))
			fprintf(stderr, "not a gauge: %s\n", gauges[i]);
		T_CHECK(counter_is_gauge(gauges[i]));
	}
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		if (counter_is_gauge(events[i]))
			fprintf(stderr, "not an event: %s\n", events[i]);
		T_CHECK(!counter_is_gauge(events[i]));
	}
	T_CHECK(!counter_is_gauge(NULL));

	/* every nr_ key of the real vmstat fixture: gauge unless event-like */
	static struct seen s;
	parse_kv_file("vmstat.vm", &s);
	size_t n_gauges = 0;
	for (size_t i = 0; i < s.n; i++) {
		char metric[96];
		snprintf(metric, sizeof(metric), "vmstat.%s", s.key[i]);
		n_gauges += counter_is_gauge(metric);
	}
	/* 52 nr_ keys, 7 of them events, plus workingset_nodes */
	T_EQ_INT(n_gauges, 52 - 7 + 1);
}

static void test_units(void) {
	T_EQ_STR(counter_unit("vmstat.nr_free_pages"), "pages");
	T_EQ_STR(counter_unit("vmstat.nr_kernel_stack"), "kB");
	T_EQ_STR(counter_unit("vmstat.pgfault"), "events");
	T_EQ_STR(counter_unit("interrupts.TLB"), "interrupts");
	T_EQ_STR(counter_unit("interrupts.TLB.cpu1"), "interrupts");
	T_EQ_STR(counter_unit("memcg.anon"), "bytes");
	T_EQ_STR(counter_unit("memcg.total_rss"), "bytes");
	T_EQ_STR(counter_unit("memcg.pgfault"), "events");
	T_EQ_STR(counter_unit("memcg_events.oom_kill"), "events");
	T_EQ_STR(counter_unit("psi.memory.some_total"), "us");
	T_EQ_STR(counter_unit("memcg_psi.full_total"), "us");
	T_EQ_STR(counter_unit("nonsense"), "");
}

int main(void) {
	test_vmstat();
	test_memcg_files();
	test_kv_malformed();
	test_interrupts_vm();
	test_interrupts_64cpu();
	test_interrupts_odd();
	test_pressure();
	test_gauges();
	test_units();
	return t_done("procparse");
}
