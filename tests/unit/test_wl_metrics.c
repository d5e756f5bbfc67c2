/* The metrics each workload type declares beside its code (wl_ops.metrics):
 * every row has a unit and a direction and lies under its own type's
 * sources; a name is declared once (no pattern twice, none under two
 * owners, none dead behind an earlier row, no kernel counter under a
 * workload's source); what the helper programs print and the workload
 * pages (doc/wl-TYPE.md) say agrees with the declarations; collect
 * stores the declared unit and reports show it. */
#include "t.h"
#include "workloads/wl.h"
#include "harness/report/metrics.h"
#include "harness/base/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t n_rows(const struct wl_ops *o)
{
	size_t n = 0;
	while (o->metrics && o->metrics[n].pattern)
		n++;
	return n;
}

/* A row on its own: a pattern under its owner's sources (the helper
 * programs' rows: under none), a unit, a direction. */
static bool row_complete(const struct wl_metric *d, const struct wl_ops *owner)
{
	bool ok = d->pattern[0] && wl_metric_owner(d->pattern, NULL) == owner && d->unit &&
		  strlen(d->unit) < METRIC_UNIT_MAX && strlen(d->unit) < sizeof(((struct store_metric *)0)->unit) &&
		  (d->dir == DIRECTION_HIGHER || d->dir == DIRECTION_LOWER || d->dir == DIRECTION_NEUTRAL) &&
		  (!d->label || (d->label[0] && strlen(d->label) < METRIC_LABEL_MAX));
	if (!ok)
		fprintf(stderr, "  %s: row %s\n", owner ? owner->type : "wl_prog_metrics", d->pattern);
	return ok;
}

static void test_rows_complete(void)
{
	size_t declared = 0;
	for (const struct wl_ops *const *o = wl_all(); *o; o++)
		for (size_t i = 0; i < n_rows(*o); i++, declared++)
			T_CHECK(row_complete(&(*o)->metrics[i], *o));
	for (const struct wl_metric *d = wl_prog_metrics; d->pattern; d++, declared++)
		T_CHECK(row_complete(d, NULL));
	/* every type that runs a fixed program declares what it reports */
	static const char *const declaring[] = { "stress-ng", "pageout", "shmem-truncate", "kbuild", "sysbench-oltp" };
	for (size_t i = 0; i < ARRAY_SIZE(declaring); i++) {
		const struct wl_ops *o = wl_find(declaring[i]);
		T_CHECK(o && n_rows(o) > 0);
	}
	T_CHECK(declared >= 45);
}

/* A name is declared once: no pattern twice (workloads and the kernel
 * table together), no source owned by two types, no row that an earlier
 * row of its table always wins over, no kernel pattern under a workload. */
static void test_declared_once(void)
{
	const char *seen[256];
	size_t n = 0;
	for (const struct wl_ops *const *o = wl_all(); *o; o++)
		for (size_t i = 0; i < n_rows(*o) && n < ARRAY_SIZE(seen); i++)
			seen[n++] = (*o)->metrics[i].pattern;
	size_t n_wl = n;
	for (size_t i = 0; metrics_kernel_pattern(i) && n < ARRAY_SIZE(seen); i++)
		seen[n++] = metrics_kernel_pattern(i);
	T_CHECK(n < ARRAY_SIZE(seen));
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(seen[i], seen[j]) == 0) {
				fprintf(stderr, "  declared twice: %s\n", seen[i]);
				T_CHECK(false);
			}
	for (size_t i = n_wl; i < n; i++)
		if (wl_metric_owner(seen[i], NULL)) {
			fprintf(stderr, "  kernel table row under a workload: %s\n", seen[i]);
			T_CHECK(false);
		}
	/* each source names one owner: its own */
	for (const struct wl_ops *const *o = wl_all(); *o; o++) {
		char name[128];
		snprintf(name, sizeof(name), "%s.x", (*o)->type);
		T_CHECK(wl_metric_owner(name, NULL) == *o);
		for (const char *const *p = (*o)->metric_sources; p && *p; p++) {
			snprintf(name, sizeof(name), "%s.x", *p);
			T_CHECK(wl_metric_owner(name, NULL) == *o);
		}
	}
	/* a row after one that matches it as a name never wins */
	for (const struct wl_ops *const *o = wl_all(); *o; o++)
		for (size_t j = 0; j < n_rows(*o); j++)
			for (size_t i = 0; i < j; i++)
				if (util_glob((*o)->metrics[i].pattern, (*o)->metrics[j].pattern)) {
					fprintf(stderr, "  %s: row %s is behind %s\n", (*o)->type,
						(*o)->metrics[j].pattern, (*o)->metrics[i].pattern);
					T_CHECK(false);
				}
	/* a helper program's type declares none of wl_prog_metrics again */
	for (const struct wl_ops *const *o = wl_all(); *o; o++)
		for (const struct wl_metric *d = wl_prog_metrics; (*o)->prog_metrics && d->pattern; d++)
			for (size_t i = 0; i < n_rows(*o); i++) {
				char full[128];
				snprintf(full, sizeof(full), "%s.%s", (*o)->type, d->pattern);
				const char *own = (*o)->metrics[i].pattern;
				if (util_glob(own, full) || util_glob(full, own)) {
					fprintf(stderr, "  %s: %s is in wl_prog_metrics too\n", (*o)->type, own);
					T_CHECK(false);
				}
			}
	T_CHECK(wl_metric_owner("vmstat.pgscan_anon", NULL) == NULL);
	T_CHECK(wl_metric_owner("pageout", NULL) == NULL);
	T_CHECK(wl_metric_owner("pageout.", NULL) == NULL);
	size_t len = 0;
	T_CHECK(wl_metric_owner("mariadb.Questions", &len) == wl_find("sysbench-oltp"));
	T_EQ_INT(len, 8);
}

/* The next line of text at *p, cut off there; NULL at the end. */
static char *next_line(char **p)
{
	char *line = *p;
	if (!line || !*line)
		return NULL;
	char *nl = strchr(line, '\n');
	*p = nl ? nl + 1 : line + strlen(line);
	if (nl)
		*nl = 0;
	return line;
}

/* The "kab-metric NAME VALUE UNIT" lines a helper program printed
 * (captured in tests/data) name declared metrics, in the declared unit. */
static void check_program_output(const char *fixture)
{
	char path[256], name[128], unit[64];
	snprintf(path, sizeof(path), "tests/data/%s", fixture);
	_cleanup_free_ char *text = NULL;
	T_EQ_INT(util_read_file(path, &text, NULL), 0);
	double v;
	int lines = 0;
	for (char *p = text, *line; (line = next_line(&p));) {
		if (sscanf(line, "kab-metric %127s %lf %63s", name, &v, unit) != 3)
			continue;
		lines++;
		const struct wl_metric *d = wl_metric_find(name);
		if (!d || strcmp(d->unit, unit) != 0) {
			fprintf(stderr, "  %s: %s in %s, declared %s\n", fixture, name, unit, d ? d->unit : "nowhere");
			T_CHECK(false);
		}
	}
	T_CHECK(lines > 15);
}

/* The "| `NAME` | UNIT |" rows of the type's page name declared metrics
 * in their declared units (one name a row: a page sums several up in its
 * own words). */
static void check_page(const struct wl_ops *o)
{
	char path[256];
	snprintf(path, sizeof(path), "doc/wl-%s.md", o->type);
	_cleanup_free_ char *text = NULL;
	T_EQ_INT(util_read_file(path, &text, NULL), 0);
	int rows = 0;
	for (char *p = text, *line; (line = next_line(&p));) {
		char *end = strncmp(line, "| `", 3) == 0 ? strstr(line + 3, "` | ") : NULL;
		if (!end)
			continue;
		*end = 0;
		const char *name = line + 3, *unit = end + 4;
		if (strpbrk(name, "*`, ") || wl_metric_owner(name, NULL) != o)
			continue;
		rows++;
		const struct wl_metric *d = wl_metric_find(name);
		size_t ul = strcspn(unit, "|");
		while (ul && unit[ul - 1] == ' ')
			ul--;
		if (!d || strlen(d->unit) != ul || strncmp(d->unit, unit, ul) != 0) {
			fprintf(stderr, "  %s: %s is in %.*s there, declared %s\n", path, name, (int)ul, unit, d ? d->unit : "nowhere");
			T_CHECK(false);
		}
	}
	T_CHECK(rows > 0);
}

static void test_programs_and_pages(void)
{
	check_program_output("kab-pageout.stdout");
	check_program_output("kab-shmem-truncate.stdout");
	static const char *const paged[] = { "pageout", "shmem-truncate", "kbuild", "sysbench-oltp" };
	for (size_t i = 0; i < ARRAY_SIZE(paged); i++) {
		const struct wl_ops *o = wl_find(paged[i]);
		T_CHECK(o != NULL);
		if (o)
			check_page(o);
	}
}

static const struct store_metric *find(const struct wl_metrics *m, const char *name)
{
	return wl_metrics_find(m, 0, name);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	T_CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Collect stores the owner's unit; a unit printed for an undeclared name stays. */
static void test_collect_units(void)
{
	char dir[] = "/tmp/kab-unit-wlmetrics-XXXXXX";
	T_CHECK(mkdtemp(dir) != NULL);
	_cleanup_free_ char *report = NULL;
	T_EQ_INT(util_read_file("tests/data/sysbench-oltp_read_write.out", &report, NULL), 0);
	write_file(dir, "stdout", report ? report : "");
	write_file(dir, "mariadb-status", "Innodb_data_read 4096 bytes\ninnodb_io_uring 1 flag\nSome_new_counter 3 things\n");
	struct wl_ctx c = { .workdir = dir };
	struct wl_metrics m = { 0 };
	const struct wl_ops *o = wl_find("sysbench-oltp");
	T_EQ_INT(o ? o->collect(&c, 0, &m) : -1, 0);
	const struct store_metric *x = find(&m, "sysbench.qps");
	T_CHECK(x && strcmp(x->unit, "queries/s") == 0);
	x = find(&m, "sysbench.tps");
	T_CHECK(x && strcmp(x->unit, "tx/s") == 0);
	x = find(&m, "mariadb.Innodb_data_read");
	T_CHECK(x && x->value == 4096 && strcmp(x->unit, "bytes") == 0);
	x = find(&m, "mariadb.innodb_io_uring");
	T_CHECK(x && strcmp(x->unit, "flag") == 0);
	x = find(&m, "mariadb.Some_new_counter");
	T_CHECK(x && strcmp(x->unit, "things") == 0);
	for (size_t i = 0; i < m.n; i++)
		if (strcmp(m.v[i].name, "mariadb.Some_new_counter") != 0 && !wl_metric_find(m.v[i].name)) {
			fprintf(stderr, "  sysbench-oltp collects undeclared %s\n", m.v[i].name);
			T_CHECK(false);
		}
	wl_metrics_free(&m);

	write_file(dir, "stress-ng.yaml",
		   "metrics:\n    - stressor: vm\n      bogo-ops: 100\n      bogo-ops-per-second-real-time: 10.0\n"
		   "      bogo-ops-per-second-usr-sys-time: 12.0\n    - stressor: tlb-shootdown\n      bogo-ops: 50\n"
		   "      bogo-ops-per-second-real-time: 5.0\n      bogo-ops-per-second-usr-sys-time: 6.0\n");
	o = wl_find("stress-ng");
	T_EQ_INT(o ? o->collect(&c, 0, &m) : -1, 0);
	T_EQ_INT(m.n, 9);
	for (size_t i = 0; i < m.n; i++) {
		const struct wl_metric *d = wl_metric_find(m.v[i].name);
		T_CHECK(d && strcmp(m.v[i].unit, d->unit) == 0);
	}
	x = find(&m, "stress-ng.vm.bogo_ops");
	T_CHECK(x && x->value == 100 && strcmp(x->unit, "ops") == 0);
	x = find(&m, "stress-ng.bogo_ops_per_s");
	T_CHECK(x && x->value == 15 && strcmp(x->unit, "ops/s") == 0);
	wl_metrics_free(&m);

	/* a helper program's unit gives way to the declaration */
	write_file(dir, "stdout",
		   "kab-metric shmem-truncate.op_ms_stddev_pct 3.5 ms\nkab-metric shmem-truncate.op_ms_median 2 ms\n"
		   "kab-metric shmem-truncate.new_thing 1 widgets\n");
	T_EQ_INT(wl_prog_collect(&c, "shmem-truncate.", "shmem-truncate.op_ms_median", &m), 0);
	x = find(&m, "shmem-truncate.op_ms_stddev_pct");
	T_CHECK(x && strcmp(x->unit, "%") == 0);
	x = find(&m, "shmem-truncate.new_thing");
	T_CHECK(x && strcmp(x->unit, "widgets") == 0);
	wl_metrics_free(&m);

	T_EQ_INT(wl_metrics_add_declared(&m, "kbuild.objects", "ignored", 12), 0);
	T_EQ_INT(wl_metrics_add_declared(&m, "kbuild.nothing", NULL, 1), 0);
	T_CHECK(m.n == 2 && strcmp(m.v[0].unit, "files") == 0 && strcmp(m.v[1].unit, "") == 0);
	wl_metrics_free(&m);
	util_remove_tree(dir);
}

/* What reports show comes from the owner's row; the three units that
 * disagreed before are the owner's now. */
static void test_describe(void)
{
	static const struct {
		const char *name, *hint, *unit, *label; /* label NULL: not checked */
		enum direction dir;
		bool known;
	} cases[] = {
		{ "sysbench.qps", "q/s", "queries/s", "queries/s", DIRECTION_HIGHER, true },
		{ "kbuild.objects", "objects", "files", "objects built", DIRECTION_NEUTRAL, true },
		{ "shmem-truncate.fill_ms_stddev_pct", "ms", "%", NULL, DIRECTION_LOWER, true },
		{ "shmem-truncate.fill_ms_max", "", "ms", NULL, DIRECTION_LOWER, true },
		{ "pageout.fill_ns_stddev_pct", "", "%", NULL, DIRECTION_LOWER, true },
		{ "pageout.reps", "", "reps", "pageout.reps", DIRECTION_NEUTRAL, true },
		{ "shmem-truncate.folios_2048kB_alloc", "", "folios", NULL, DIRECTION_NEUTRAL, true },
		/* short labels are the owner's choice: stress-ng's and command's */
		{ "stress-ng.vm.bogo_ops_per_s", "", "ops/s", "vm.bogo_ops_per_s (ops/s)", DIRECTION_HIGHER, true },
		{ "command.score", "points", "points", "score (points)", DIRECTION_NEUTRAL, false },
		{ "mariadb.Innodb_buffer_pool_reads", "", "reads", "buffer pool reads from disk", DIRECTION_LOWER, true },
		/* an undeclared name of a workload's source is guessed, not the kernel's */
		{ "pageout.new_time_ms", "ms", "ms", NULL, DIRECTION_LOWER, false },
		{ "kbuild.reps", "", "", NULL, DIRECTION_NEUTRAL, false },
		{ "vmstat.pgscan_anon", "events", "pages", "pgscan_anon (pages)", DIRECTION_LOWER, true },
	};
	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		struct metric_info i;
		metrics_describe(cases[k].name, cases[k].hint, &i);
		bool ok = strcmp(i.unit, cases[k].unit) == 0 && i.dir == cases[k].dir && i.known == cases[k].known &&
			  (!cases[k].label || strcmp(i.label, cases[k].label) == 0);
		if (!ok)
			fprintf(stderr, "  %s: %s, %s, %s\n", cases[k].name, i.unit, i.label, direction_name(i.dir));
		T_CHECK(ok);
	}
	T_EQ_INT(metrics_direction(DIRECTION_UNSET, DIRECTION_HIGHER), DIRECTION_HIGHER);
	T_EQ_INT(metrics_direction(DIRECTION_LOWER, DIRECTION_HIGHER), DIRECTION_LOWER);
}

int main(void)
{
	test_rows_complete();
	test_declared_once();
	test_programs_and_pages();
	test_collect_units();
	test_describe();
	return t_done("test_wl_metrics");
}
