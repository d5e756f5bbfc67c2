/* The before/after table, from the store alone. */
#include "report.h"
#include "job.h"
#include "store.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The mm counters every report shows after the workload's own metrics. */
static const char *const curated[] = {
	"time.wall_s", "rusage.user_s", "rusage.sys_s",
	"vmstat.pgscan_anon", "vmstat.pgscan_file", "vmstat.pgsteal_anon", "vmstat.pgsteal_file",
	"vmstat.pgscan_direct", "vmstat.pgsteal_direct", "vmstat.pswpin", "vmstat.pswpout",
	"vmstat.pgrotated", "vmstat.zswpout", "vmstat.zswpin", "vmstat.zswpwb",
	"vmstat.nr_tlb_*", "interrupts.TLB", "interrupts.CAL", "memcg.oom_kills",
};

struct series {
	char name[96];
	char unit[16];
	int workload;
	size_t nv;
	double **vals;  /* per variant, indexed by pair */
	bool **has;
};

struct agg {
	size_t n_variants, pairs;
	struct series *s;
	size_t n, cap;
	int err;
};

static struct series *find_series(struct agg *a, int workload, const char *name, const char *unit)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->s[i].workload == workload && strcmp(a->s[i].name, name) == 0)
			return &a->s[i];
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 256;
		struct series *ns = realloc(a->s, cap * sizeof(*ns));
		if (!ns)
			return NULL;
		a->s = ns;
		a->cap = cap;
	}
	struct series *s = &a->s[a->n];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->unit, sizeof(s->unit), "%s", unit);
	s->workload = workload;
	s->nv = a->n_variants;
	s->vals = calloc(a->n_variants, sizeof(double *));
	s->has = calloc(a->n_variants, sizeof(bool *));
	if (!s->vals || !s->has)
		return NULL;
	for (size_t v = 0; v < a->n_variants; v++) {
		s->vals[v] = calloc(a->pairs, sizeof(double));
		s->has[v] = calloc(a->pairs, sizeof(bool));
		if (!s->vals[v] || !s->has[v])
			return NULL;
	}
	a->n++;
	return s;
}

static void collect(void *ctx, const struct store_run *r, const char *metric, const char *unit, double value)
{
	struct agg *a = ctx;
	if (strcmp(r->status, "ok") != 0 || (size_t)r->variant >= a->n_variants || (size_t)r->pair >= a->pairs)
		return;
	struct series *s = find_series(a, r->workload, metric, unit);
	if (!s) {
		a->err = -ENOMEM;
		return;
	}
	s->vals[r->variant][r->pair] = value;
	s->has[r->variant][r->pair] = true;
}

struct moments {
	size_t n;
	double mean, sd;
};

static struct moments moments_of(const struct series *s, size_t v, size_t pairs)
{
	struct moments m = { 0 };
	double sum = 0;
	for (size_t p = 0; p < pairs; p++)
		if (s->has[v][p]) {
			sum += s->vals[v][p];
			m.n++;
		}
	if (!m.n)
		return m;
	m.mean = sum / (double)m.n;
	double ss = 0;
	for (size_t p = 0; p < pairs; p++)
		if (s->has[v][p])
			ss += (s->vals[v][p] - m.mean) * (s->vals[v][p] - m.mean);
	m.sd = m.n > 1 ? sqrt(ss / (double)(m.n - 1)) : 0;
	return m;
}

static bool wanted(const char *name, const char *pattern)
{
	size_t pl = strlen(pattern);
	if (pl && pattern[pl - 1] == '*')
		return strncmp(name, pattern, pl - 1) == 0;
	return strcmp(name, pattern) == 0;
}

static void fmt_num(double v, char *buf, size_t len)
{
	if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else if (fabs(v) >= 100)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.4g", v);
}

static void print_row(FILE *out, const struct series *s, size_t base, size_t v, size_t pairs)
{
	struct moments a = moments_of(s, base, pairs), b = moments_of(s, v, pairs);
	char ma[32], sa[32], mb[32], sb[32], d[64], n[16];
	fmt_num(a.mean, ma, sizeof(ma));
	fmt_num(a.sd, sa, sizeof(sa));
	fmt_num(b.mean, mb, sizeof(mb));
	fmt_num(b.sd, sb, sizeof(sb));
	double delta = b.mean - a.mean;
	char dabs[32];
	fmt_num(fabs(delta), dabs, sizeof(dabs));
	if (a.mean != 0)
		snprintf(d, sizeof(d), "%s%s (%+.1f%%)", delta < 0 ? "-" : "+", dabs, 100.0 * delta / fabs(a.mean));
	else
		snprintf(d, sizeof(d), "%s%s (n/a)", delta < 0 ? "-" : "+", dabs);
	snprintf(n, sizeof(n), "%zu/%zu", a.n, b.n);
	fprintf(out, "%-34s %-7s %14s %10s %14s %10s  %s\n", s->name, n, ma, sa, mb, sb, d);
}

static void fmt_size(uint64_t b, char *buf, size_t len)
{
	if (b >= (1ull << 30))
		snprintf(buf, len, "%.1f GiB", (double)b / (double)(1ull << 30));
	else
		snprintf(buf, len, "%.0f MiB", (double)b / (double)(1ull << 20));
}

static void print_header(FILE *out, const struct job *j, size_t w, const struct store_run *runs, size_t nr)
{
	const struct job_workload *wl = &j->workloads[w];
	const struct store_run *first = NULL;
	double dur = 0;
	size_t ok = 0;
	for (size_t i = 0; i < nr; i++) {
		if ((size_t)runs[i].workload != w)
			continue;
		if (!first)
			first = &runs[i];
		if (strcmp(runs[i].status, "ok") == 0) {
			dur += runs[i].finished - runs[i].started;
			ok++;
		}
	}
	fprintf(out, "== workload %s (%s", wl->name, wl->type);
	for (size_t i = 0; i < wl->n_params; i++)
		fprintf(out, "; %s: %s", wl->params[i].key, wl->params[i].value);
	fprintf(out, ")\n");
	if (first) {
		char mem[32], swap[32], lim[32];
		fmt_size(first->mem_total, mem, sizeof(mem));
		fmt_size(first->swap_total, swap, sizeof(swap));
		if (wl->memory_max == JOB_MEM_UNSET || wl->memory_max == JOB_MEM_MAX)
			snprintf(lim, sizeof(lim), "none");
		else
			util_format_size(wl->memory_max, lim, sizeof(lim));
		fprintf(out, "Kernel: %s   CPUs: %d   Memory: %s   cgroup v%d\n", first->kernel_release,
			first->cpus, mem, first->cgroup_version);
		fprintf(out, "Swap: %s (%s: %s)   memcg memory.max: %s", swap, job_swap_kind_name(j->swap.kind),
			first->swap_devices[0] ? first->swap_devices : "none", lim);
		if (wl->memory_high != JOB_MEM_UNSET && wl->memory_high != JOB_MEM_MAX) {
			char mh[32];
			util_format_size(wl->memory_high, mh, sizeof(mh));
			fprintf(out, "   memory.high: %s", mh);
		}
		if (wl->memory_swap_max != JOB_MEM_UNSET) {
			char sm[32];
			if (wl->memory_swap_max == JOB_MEM_MAX)
				snprintf(sm, sizeof(sm), "max");
			else if (wl->memory_swap_max == JOB_MEM_ZERO)
				snprintf(sm, sizeof(sm), "0");
			else
				util_format_size(wl->memory_swap_max, sm, sizeof(sm));
			fprintf(out, "   memory.swap.max: %s", sm);
		}
		fprintf(out, "   duration: %.1f s per run\n", ok ? dur / (double)ok : 0);
	}
	fprintf(out, "Runs:");
	for (size_t v = 0; v < j->n_variants; v++) {
		size_t cnt[8] = { 0 };
		static const char *const st[] = { "ok", "failed", "oom-killed", "timed-out", "aborted", "skipped", "started" };
		for (size_t i = 0; i < nr; i++)
			if ((size_t)runs[i].workload == w && (size_t)runs[i].variant == v)
				for (size_t k = 0; k < ARRAY_SIZE(st); k++)
					if (strcmp(runs[i].status, st[k]) == 0)
						cnt[k]++;
		fprintf(out, "%s %s", v ? ";" : "", j->variants[v].name);
		bool any = false;
		for (size_t k = 0; k < ARRAY_SIZE(st); k++)
			if (cnt[k]) {
				fprintf(out, " %zu %s", cnt[k], st[k]);
				any = true;
			}
		if (!any)
			fprintf(out, " none");
	}
	fprintf(out, "\n");
}

static bool printed(const char **done, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(done[i], name) == 0)
			return true;
	return false;
}

int report_print(struct store *st, int64_t job_id, FILE *out)
{
	struct store_job sj;
	int r = store_job_get(st, job_id, &sj);
	if (r == -ENOENT) {
		log_error("no job %lld in the database", (long long)job_id);
		return r;
	}
	if (r < 0)
		return r;
	struct diags d = { 0 };
	struct job *j = NULL;
	r = job_parse_string_nocheck(sj.file[0] ? sj.file : "job", sj.text, &j, &d);
	if (r < 0) {
		log_error("job %lld: the stored job file no longer parses:", (long long)job_id);
		diags_print(&d, stderr);
		diags_free(&d);
		store_job_clear(&sj);
		return r;
	}
	diags_free(&d);
	struct store_run *runs = NULL;
	size_t nr = 0;
	struct agg a = { .n_variants = j->n_variants, .pairs = j->pairs };
	if ((r = store_runs_load(st, job_id, &runs, &nr)) < 0 ||
	    (r = store_foreach_metric(st, job_id, collect, &a)) < 0 || (r = a.err) < 0)
		goto out;

	fprintf(out, "kab report: job %lld \"%s\" (%s%s%s), %u pairs, order %s\n", (long long)job_id, sj.name,
		sj.status, sj.reason[0] ? ": " : "", sj.reason, j->pairs, job_order_name(j->order));
	for (size_t w = 0; w < j->n_workloads; w++) {
		fprintf(out, "\n");
		print_header(out, j, w, runs, nr);
		for (size_t v = 1; v < j->n_variants; v++) {
			fprintf(out, "\n%-34s %-7s %14s %10s %14s %10s  %s\n", "Metric", "n", "Before", "sd", "After", "sd", "Delta (abs / %)");
			fprintf(out, "%-34s %-7s %25.25s %25.25s\n", "", "", j->variants[0].name, j->variants[v].name);
			const char **done = calloc(a.n + 1, sizeof(char *));
			size_t nd = 0;
			if (!done) {
				r = -ENOMEM;
				goto out;
			}
			/* the workload's own metrics first */
			char prefix[64];
			snprintf(prefix, sizeof(prefix), "%s.", j->workloads[w].type);
			for (size_t i = 0; i < a.n; i++)
				if (a.s[i].workload == (int)w && strncmp(a.s[i].name, prefix, strlen(prefix)) == 0) {
					print_row(out, &a.s[i], 0, v, j->pairs);
					done[nd++] = a.s[i].name;
				}
			size_t nc = ARRAY_SIZE(curated);
			for (size_t c = 0; c < nc + j->n_metrics; c++) {
				const char *pat = c < nc ? curated[c] : j->metrics[c - nc];
				for (size_t i = 0; i < a.n; i++)
					if (a.s[i].workload == (int)w && wanted(a.s[i].name, pat) && !printed(done, nd, a.s[i].name)) {
						print_row(out, &a.s[i], 0, v, j->pairs);
						done[nd++] = a.s[i].name;
					}
			}
			free(done);
		}
	}
	bool failed = false;
	for (size_t i = 0; i < nr; i++)
		if (strcmp(runs[i].status, "ok") != 0) {
			if (!failed)
				fprintf(out, "\nRuns not counted:\n");
			failed = true;
			fprintf(out, "  run %lld (pair %d, %s, %s): %s%s%s\n", (long long)runs[i].id, runs[i].pair + 1,
				j->variants[runs[i].variant].name, j->workloads[runs[i].workload].name, runs[i].status,
				runs[i].reason[0] ? ": " : "", runs[i].reason);
		}
	fprintf(out, "\nBefore/After are means over ok runs; sd is the sample standard deviation; n is runs counted (before/after).\n");
out:
	for (size_t i = 0; i < a.n; i++) {
		for (size_t v = 0; v < a.s[i].nv; v++) {
			if (a.s[i].vals)
				free(a.s[i].vals[v]);
			if (a.s[i].has)
				free(a.s[i].has[v]);
		}
		free(a.s[i].vals);
		free(a.s[i].has);
	}
	free(a.s);
	free(runs);
	job_free(j);
	store_job_clear(&sj);
	return r;
}
