/* A stored job as a report: its job file (re-parsed, for variant and
 * workload names, primary metrics and [metric] settings), its runs (for
 * the header block and the runs not counted) and the metrics of its ok
 * runs, paired by pair index. A job that boots kernels adds its kernels
 * and boots (report_boots.c). */
#include "harness/report/report.h"
#include "harness/report/report_priv.h"
#include "harness/job/job.h"
#include "db/store.h"
#include "kernels/kexec.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

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

/* Where a metric goes in the table: primary metrics first, then the
 * workload's own, the curated list, the job's metrics = list and its
 * [report] rows; -1: not in the report. */
static long metric_rank(const struct job *j, const struct job_workload *wl, const char *name)
{
	long base = 0;
	for (size_t i = 0; i < j->n_primary; i++)
		if (job_metric_matches(j->primary[i], name))
			return base + (long)i;
	base += (long)j->n_primary;
	/* the workload's own metrics (its type's and its other sources', a
	 * server's counters), and the function calls it asked to count */
	const struct wl_ops *ops = wl_find(wl->type);
	if ((ops && wl_metric_owner(name, NULL) == ops) || strncmp(name, "fcount.", 7) == 0)
		return base;
	base++;
	for (size_t i = 0; i < ARRAY_SIZE(curated); i++)
		if (job_metric_matches(curated[i], name))
			return base + (long)i;
	base += (long)ARRAY_SIZE(curated);
	for (size_t i = 0; i < j->n_metrics; i++)
		if (job_metric_matches(j->metrics[i], name))
			return base + (long)i;
	base += (long)j->n_metrics;
	for (size_t i = 0; i < j->n_report_rows; i++)
		if (job_metric_matches(j->report_rows[i], name))
			return base + (long)i;
	return -1;
}

/* A value of a run inside a boot that has several: kept until all are
 * read, then each (metric, variant, pair) takes the median of its runs. */
struct rep_value {
	size_t w, m, cell;
	double v;
};

struct loader {
	struct report *r;
	const struct job *j;
	int err;
	bool reps;  /* runs_per_boot > 1 */
	struct rep_value *rv;
	size_t n_rv, cap_rv;
};

static void collect(void *ctx, const struct store_run *run, const char *metric, const char *unit, double value)
{
	struct loader *l = ctx;
	struct report *r = l->r;
	if (l->err < 0 || run->status != RUN_OK || run->workload < 0 || (size_t)run->workload >= r->n_workloads ||
	    run->variant < 0 || (size_t)run->variant >= r->n_variants || run->pair < 0)
		return;
	struct report_workload *w = &r->w[run->workload];
	if (strcmp(metric, "memcg.oom_kills") == 0 && value > 0)
		w->oom_counted++; /* a counted run with kills: oom = tolerate */
	if ((size_t)run->pair >= w->pairs || metric_rank(l->j, &l->j->workloads[run->workload], metric) < 0)
		return;
	struct report_metric *m = report_find_metric(w, metric);
	if (!m) {
		int e = report_add_metric(r, w, metric, unit, &m);
		if (e < 0) {
			l->err = e;
			return;
		}
	}
	size_t cell = (size_t)run->variant * w->pairs + (size_t)run->pair;
	if (!l->reps) {
		m->values[cell] = value;
		return;
	}
	if (util_grow(l->rv, l->cap_rv, l->n_rv + 1, 256) < 0) {
		l->err = -ENOMEM;
		return;
	}
	l->rv[l->n_rv++] = (struct rep_value){ .w = (size_t)run->workload, .m = (size_t)(m - w->m), .cell = cell, .v = value };
}

static int rep_value_cmp(const void *a, const void *b)
{
	const struct rep_value *x = a, *y = b;
	if (x->w != y->w)
		return x->w < y->w ? -1 : 1;
	if (x->m != y->m)
		return x->m < y->m ? -1 : 1;
	if (x->cell != y->cell)
		return x->cell < y->cell ? -1 : 1;
	return x->v < y->v ? -1 : x->v > y->v;
}

/* Several runs inside one boot count as one value, their median
 * (doc/statistics.md rule 1: the boot is the unit of replication). */
static void collapse_reps(struct loader *l)
{
	qsort(l->rv, l->n_rv, sizeof(*l->rv), rep_value_cmp);
	for (size_t i = 0; i < l->n_rv;) {
		size_t k = i;
		while (k < l->n_rv && l->rv[k].w == l->rv[i].w && l->rv[k].m == l->rv[i].m && l->rv[k].cell == l->rv[i].cell)
			k++;
		size_t n = k - i;
		double med = n % 2 ? l->rv[i + n / 2].v : (l->rv[i + n / 2 - 1].v + l->rv[i + n / 2].v) / 2;
		l->r->w[l->rv[i].w].m[l->rv[i].m].values[l->rv[i].cell] = med;
		i = k;
	}
}

/* Stable insertion sort by rank: the table's row order. */
static void sort_metrics(const struct job *j, const struct job_workload *wl, struct report_workload *w)
{
	for (size_t i = 1; i < w->n_metrics; i++) {
		struct report_metric x = w->m[i];
		long rx = metric_rank(j, wl, x.name);
		size_t k = i;
		while (k > 0 && metric_rank(j, wl, w->m[k - 1].name) > rx) {
			w->m[k] = w->m[k - 1];
			k--;
		}
		w->m[k] = x;
	}
}

static bool is_count(const char *s)
{
	uint64_t u;
	return util_parse_u64(s, &u) == 0;
}

/* stress-ng: workers (--vm 16: 16; 0 means one per CPU), the memory each
 * allocates (--vm-bytes) and its timeout, for the cover letter. */
static void stress_ng_params(const char *args, int cpus, struct report_header *h)
{
	static const char *const not_stressors[] = { "timeout", "backoff", "seed", "random", "sequential", "all",
						     "parallel", "permute", "verbose", "metrics", "yaml", "log-file" };
	static const char *const short_stressors[] = { "-c", "-m", "-d", "-i" };
	char **argv = NULL;
	size_t n = 0;
	if (!args || wl_split_args(args, &argv, &n) < 0)
		return;
	for (size_t i = 0; i + 1 < n; i++) {
		const char *o = argv[i], *v = argv[i + 1];
		if (strcmp(o, "--timeout") == 0 || strcmp(o, "-t") == 0) {
			snprintf(h->timeout, sizeof(h->timeout), "%s%s", v, is_count(v) ? "s" : "");
			continue;
		}
		if (strcmp(o, "--vm-bytes") == 0 && !h->alloc[0]) {
			snprintf(h->alloc, sizeof(h->alloc), "%s", v);
			continue;
		}
		bool stressor = false;
		for (size_t k = 0; k < ARRAY_SIZE(short_stressors); k++)
			stressor = stressor || strcmp(o, short_stressors[k]) == 0;
		if (strncmp(o, "--", 2) == 0 && o[2] && !strchr(o + 2, '-')) {
			stressor = true;
			for (size_t k = 0; k < ARRAY_SIZE(not_stressors); k++)
				stressor = stressor && strcmp(o + 2, not_stressors[k]) != 0;
		}
		uint64_t count;
		if (stressor && util_parse_u64(v, &count) == 0 && count < 1000000) {
			h->workers += count ? (unsigned)count : (unsigned)(cpus > 0 ? cpus : 0);
			i++;
		}
	}
	wl_argv_free(argv);
}

static void add_unavailable(void *ctx, const char *metric, const char *reason, size_t runs)
{
	struct report *rep = ctx;
	char **nu = realloc(rep->unavailable, (rep->n_unavailable + 1) * sizeof(*nu));
	if (!nu)
		return;
	rep->unavailable = nu;
	if (asprintf(&nu[rep->n_unavailable], "%s: %s (%zu run%s)", metric, reason, runs, runs == 1 ? "" : "s") >= 0)
		rep->n_unavailable++;
}

/* The value of key in "key=value\n" lines, into buf; false if absent. */
static bool setting_of(const char *lines, const char *key, size_t klen, char *buf, size_t len)
{
	for (const char *p = lines; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (n > klen && p[klen] == '=' && memcmp(p, key, klen) == 0) {
			snprintf(buf, len, "%.*s", (int)(n - klen - 1), p + klen + 1);
			return true;
		}
		p += n + (nl != NULL);
	}
	return false;
}

static bool skipped(const char *key, size_t klen, const char *const *skip, size_t n_skip)
{
	for (size_t i = 0; i < n_skip; i++)
		if (strlen(skip[i]) == klen && memcmp(skip[i], key, klen) == 0)
			return true;
	return false;
}

/* Whether key already came from an earlier variant's lines. */
static bool seen_before(const char *const *settings, size_t v, const char *key, size_t klen)
{
	char tmp[8];
	for (size_t u = 0; u < v; u++)
		if (settings[u] && settings[u][0] && setting_of(settings[u], key, klen, tmp, sizeof(tmp)))
			return true;
	return false;
}

void report_settings_differ(const char *const *settings, const char *const *names, size_t n, const char *const *skip,
			    size_t n_skip, char *buf, size_t len)
{
	struct strbuf sb = { 0 };
	size_t have = 0;
	for (size_t v = 0; v < n; v++)
		have += settings[v] && settings[v][0];
	for (size_t v = 0; v < n && have >= 2; v++) {
		if (!settings[v] || !settings[v][0])
			continue;
		for (const char *p = settings[v]; *p;) {
			const char *nl = strchr(p, '\n');
			size_t ln = nl ? (size_t)(nl - p) : strlen(p);
			const char *eq = memchr(p, '=', ln);
			size_t klen = eq ? (size_t)(eq - p) : 0;
			const char *key = p;
			p += ln + (nl != NULL);
			if (!klen || skipped(key, klen, skip, n_skip) || seen_before(settings, v, key, klen))
				continue;
			char first[512] = "", val[512];
			bool differ = false, started = false;
			for (size_t u = 0; u < n; u++) {
				if (!settings[u] || !settings[u][0])
					continue;
				if (!setting_of(settings[u], key, klen, val, sizeof(val)))
					snprintf(val, sizeof(val), "(none)");
				if (!started)
					snprintf(first, sizeof(first), "%s", val);
				else if (strcmp(first, val) != 0)
					differ = true;
				started = true;
			}
			if (!differ)
				continue;
			char k[256], name[256];
			snprintf(k, sizeof(k), "%.*s", (int)klen, key);
			sb_printf(&sb, "%s%s (", sb.len ? "; " : "", store_setting_name(k, name, sizeof(name)));
			bool any = false;
			for (size_t u = 0; u < n; u++) {
				if (!settings[u] || !settings[u][0])
					continue;
				if (!setting_of(settings[u], key, klen, val, sizeof(val)))
					snprintf(val, sizeof(val), "(none)");
				sb_printf(&sb, "%s%s: %s", any ? ", " : "", names[u], val);
				any = true;
			}
			sb_printf(&sb, ")");
		}
	}
	snprintf(buf, len, "%s", sb.buf ? sb.buf : "");
	sb_free(&sb);
}

/* The first recorded settings of each variant's runs of workload wi,
 * compared, the variants' own knobs left out. */
/* What a workload's header takes from its runs besides their counts: the
 * first run's machine, each variant's first settings, the conditioning. */
struct run_header {
	bool have;
	char kernel[128], swap_devices[512];
	int cpus, cgroup_version;
	uint64_t mem_total, swap_total;
	char **settings; /* [variant]: the first of its counted runs that has them; NULL: none */
	size_t conditioned, not_idle;
};

/* The job's runs, read a row at a time (store_runs_page) into what the
 * report keeps of them (struct report_run) and each workload's header. */
struct run_loader {
	const struct job *j;
	struct report_run *runs;
	size_t n, cap;
	struct run_header *h; /* [workload] */
	int err;
};

static void run_header_first(struct run_header *h, const struct store_run_row *x)
{
	h->have = true;
	snprintf(h->kernel, sizeof(h->kernel), "%s", x->kernel_release);
	snprintf(h->swap_devices, sizeof(h->swap_devices), "%s", x->swap_devices);
	h->cpus = x->cpus;
	h->cgroup_version = x->cgroup_version;
	h->mem_total = x->mem_total;
	h->swap_total = x->swap_total;
}

static int keep_run(void *ctx, const struct store_run_row *x)
{
	struct run_loader *l = ctx;
	if (util_grow(l->runs, l->cap, l->n + 1, 256) < 0) {
		l->err = -ENOMEM;
		return 1;
	}
	struct report_run *r = &l->runs[l->n];
	*r = (struct report_run){ .id = x->id,
				  .step_id = x->step_id,
				  .pair = x->pair,
				  .variant = x->variant,
				  .workload = x->workload,
				  .status = x->status,
				  .started = x->started,
				  .finished = x->finished,
				  .marker = -1 };
	snprintf(r->boot_id, sizeof(r->boot_id), "%s", x->boot_id);
	snprintf(r->kernel_release, sizeof(r->kernel_release), "%s", x->kernel_release);
	/* a command line that filled its field may have lost the marker's last digits */
	if (strlen(x->cmdline) + 1 < sizeof(((struct store_run *)NULL)->cmdline))
		r->marker = kexec_marker(x->cmdline);
	if (x->status != RUN_OK && !(r->reason = strdup(x->reason))) {
		l->err = -ENOMEM;
		return 1;
	}
	l->n++;
	if (x->workload < 0 || (size_t)x->workload >= l->j->n_workloads)
		return 0;
	struct run_header *h = &l->h[x->workload];
	if (!h->have)
		run_header_first(h, x);
	if (x->variant < 0 || (size_t)x->variant >= l->j->n_variants || x->status == RUN_WARMUP)
		return 0;
	if (!h->settings[x->variant] && x->settings[0] && !(h->settings[x->variant] = strdup(x->settings))) {
		l->err = -ENOMEM;
		return 1;
	}
	if (x->conditioning[0]) {
		h->conditioned++;
		h->not_idle += strstr(x->conditioning, "idle=no") != NULL;
	}
	return 0;
}

static void run_loader_free(struct run_loader *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->runs[i].reason);
	free(l->runs);
	for (size_t w = 0; l->h && w < l->j->n_workloads; w++) {
		for (size_t v = 0; l->h[w].settings && v < l->j->n_variants; v++)
			free(l->h[w].settings[v]);
		free(l->h[w].settings);
	}
	free(l->h);
}

static int run_loader_load(struct store *st, int64_t job_id, const struct job *j, struct run_loader *l)
{
	*l = (struct run_loader){ .j = j };
	if (!(l->h = calloc(j->n_workloads ? j->n_workloads : 1, sizeof(*l->h))))
		return -ENOMEM;
	for (size_t w = 0; w < j->n_workloads; w++)
		if (!(l->h[w].settings = calloc(j->n_variants ? j->n_variants : 1, sizeof(char *))))
			return -ENOMEM;
	int r = store_runs_page(st, job_id, 0, SIZE_MAX, keep_run, l);
	return r < 0 ? r : l->err;
}

static void fill_differs(const struct job *j, const struct run_header *rh, struct report_header *h, size_t n_variants)
{
	const char **settings = calloc(n_variants ? n_variants : 1, sizeof(*settings));
	const char **names = calloc(n_variants ? n_variants : 1, sizeof(*names));
	size_t n_skip = 0;
	for (size_t v = 0; v < j->n_variants; v++)
		n_skip += j->variants[v].n_knobs;
	const char **skip = calloc(n_skip ? n_skip : 1, sizeof(*skip));
	if (!settings || !names || !skip)
		goto out;
	n_skip = 0;
	for (size_t v = 0; v < j->n_variants; v++)
		for (size_t k = 0; k < j->variants[v].n_knobs; k++)
			skip[n_skip++] = j->variants[v].knobs[k].path;
	for (size_t v = 0; v < n_variants && v < j->n_variants; v++) {
		names[v] = j->variants[v].name;
		settings[v] = rh->settings[v];
	}
	h->conditioned = rh->conditioned;
	h->not_idle = rh->not_idle;
	report_settings_differ(settings, names, n_variants < j->n_variants ? n_variants : j->n_variants, skip, n_skip,
			       h->differs, sizeof(h->differs));
out:
	free(settings);
	free(names);
	free(skip);
}

/* More than a third of a variant's runs lost to OOM kills: what is left
 * is a selection of the runs, not the variant, and the reader must know
 * before reading the table. */
static int oom_warnings(struct report *rep)
{
	for (size_t wi = 0; wi < rep->n_workloads; wi++) {
		const struct report_workload *w = &rep->w[wi];
		for (size_t v = 0; w->runs && v < rep->n_variants; v++) {
			size_t total = 0, hit = w->runs[v * RUN_STATUS_N + RUN_OOM_CONTAMINATED];
			for (size_t s = 0; s < RUN_STATUS_N; s++) /* of its finished runs */
				total += run_status_finished((enum run_status)s) ? w->runs[v * RUN_STATUS_N + s] : 0;
			if (hit == 0 || 3 * hit <= total)
				continue;
			int e = report_add_warning(rep, "WARNING: workload %s: %zu of %zu runs of %s had memcg OOM kills and are not "
						   "counted: lower the workload's footprint or raise memory.max",
						   w->name, hit, total, rep->variants[v]);
			if (e < 0)
				return e;
		}
	}
	return 0;
}

static void fill_header(const struct job *j, size_t wi, const struct report_run *runs, size_t nr,
			const struct run_header *rh, struct report_workload *w, size_t n_variants)
{
	const struct job_workload *wl = &j->workloads[wi];
	struct report_header *h = &w->h;
	double dur = 0;
	size_t ok = 0;
	for (size_t i = 0; i < nr; i++) {
		if ((size_t)runs[i].workload != wi)
			continue;
		if (runs[i].status == RUN_OK) {
			dur += runs[i].finished - runs[i].started;
			ok++;
		}
		/* a status this kab does not know is counted under none */
		if (runs[i].variant >= 0 && (size_t)runs[i].variant < n_variants && runs[i].status >= 0 &&
		    runs[i].status < RUN_STATUS_N)
			w->runs[(size_t)runs[i].variant * RUN_STATUS_N + (size_t)runs[i].status]++;
	}
	w->oom_tolerate = wl->oom == JOB_OOM_TOLERATE;
	snprintf(h->type, sizeof(h->type), "%s", wl->type);
	size_t used = 0;
	for (size_t i = 0; i < wl->n_params && used < sizeof(h->params); i++)
		used += (size_t)snprintf(h->params + used, sizeof(h->params) - used, "%s%s: %s", i ? "; " : "",
					 wl->params[i].key, wl->params[i].value);
	h->memory_max = wl->memory_max;
	h->memory_high = wl->memory_high;
	h->memory_swap_max = wl->memory_swap_max;
	snprintf(h->swap_kind, sizeof(h->swap_kind), "%s", job_swap_kind_name(j->swap.kind));
	h->duration_s = ok ? dur / (double)ok : NAN;
	if (!rh->have)
		return;
	w->have_header = true;
	snprintf(h->kernel, sizeof(h->kernel), "%s", rh->kernel);
	h->cpus = rh->cpus;
	h->cgroup_version = rh->cgroup_version;
	h->mem_total = rh->mem_total;
	h->swap_total = rh->swap_total;
	snprintf(h->swap_devices, sizeof(h->swap_devices), "%s", rh->swap_devices);
	if (strcmp(wl->type, "stress-ng") == 0)
		stress_ng_params(job_param(wl, "args"), h->cpus, h);
	fill_differs(j, rh, h, n_variants);
}

static void progress(struct store *st, int64_t job_id, size_t wi, const struct job *j, enum job_status job_status,
		     struct report_workload *w)
{
	int looks, done;
	char reason[32] = "";
	if (j->adaptive.on)
		snprintf(w->budget, sizeof(w->budget), "adaptive %u..%u step %u", j->adaptive.min, j->adaptive.max,
			 j->adaptive.step);
	else
		snprintf(w->budget, sizeof(w->budget), "%u", j->pairs);
	if (store_progress_get(st, job_id, (int)wi, &looks, &done, reason, sizeof(reason)) == 0) {
		w->looks = looks > 0 ? (unsigned)looks : 0;
		snprintf(w->stop_reason, sizeof(w->stop_reason), "%s", reason[0] ? reason : "running");
		return;
	}
	w->looks = 1;
	snprintf(w->stop_reason, sizeof(w->stop_reason), "%s", job_status == JOB_DONE ? "budget" : job_status_name(job_status));
}

int report_load(struct store *st, int64_t job_id, struct report **ret)
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
	struct run_loader rl = { 0 };
	struct report *rep = NULL;
	r = job_parse_string_nocheck(sj.file[0] ? sj.file : "job", sj.text, &j, &d);
	if (r < 0) {
		log_error("job %lld: the stored job file no longer parses:", (long long)job_id);
		diags_print(&d, stderr);
		goto out;
	}
	char **names = calloc(j->n_variants + 1, sizeof(char *));
	if (!names) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t v = 0; v < j->n_variants; v++)
		names[v] = j->variants[v].name;
	r = report_new(sj.name, names, j->n_variants, &rep);
	free(names);
	if (r < 0)
		goto out;
	rep->job = j;
	j = NULL;
	rep->job_id = job_id;
	rep->job_status = sj.status;
	snprintf(rep->job_reason, sizeof(rep->job_reason), "%s", sj.reason);
	snprintf(rep->order, sizeof(rep->order), "%s", job_order_name(rep->job->order));
	if ((r = run_loader_load(st, job_id, rep->job, &rl)) < 0)
		goto out;
	const struct report_run *runs = rl.runs;
	size_t nr = rl.n;
	for (size_t wi = 0; wi < rep->job->n_workloads; wi++) {
		size_t pairs = 0;
		for (size_t i = 0; i < nr; i++)
			if ((size_t)runs[i].workload == wi && runs[i].pair >= 0 && (size_t)runs[i].pair + 1 > pairs)
				pairs = (size_t)runs[i].pair + 1;
		struct report_workload *w;
		if ((r = report_add_workload(rep, rep->job->workloads[wi].name, pairs, &w)) < 0)
			goto out;
		fill_header(rep->job, wi, runs, nr, &rl.h[wi], w, rep->n_variants);
		progress(st, job_id, wi, rep->job, sj.status, w);
	}
	bool boots = job_boots_kernels(rep->job);
	struct loader l = { .r = rep, .j = rep->job, .reps = boots && rep->job->runs_per_boot > 1 };
	r = store_foreach_metric(st, job_id, collect, &l);
	if (r == 0 && (r = l.err) == 0 && l.reps)
		collapse_reps(&l);
	free(l.rv);
	if (r < 0)
		goto out;
	if (boots) {
		rep->runs_per_boot = rep->job->runs_per_boot;
		if ((r = report_load_boots(st, rep, runs, nr)) < 0)
			goto out;
	}
	for (size_t wi = 0; wi < rep->n_workloads; wi++)
		sort_metrics(rep->job, &rep->job->workloads[wi], &rep->w[wi]);
	for (size_t i = 0; i < nr; i++) {
		const struct report_run *x = &runs[i];
		if (x->status == RUN_OK || x->variant < 0 || (size_t)x->variant >= rep->n_variants ||
		    x->workload < 0 || (size_t)x->workload >= rep->n_workloads)
			continue;
		char pair[32] = "warm-up";
		if (x->pair != STORE_PAIR_WARMUP)
			snprintf(pair, sizeof(pair), "pair %d", x->pair + 1);
		if ((r = report_add_note(rep, "run %lld (%s, %s, %s): %s%s%s", (long long)x->id, pair,
					 rep->variants[x->variant], rep->w[x->workload].name, run_status_name(x->status),
					 x->reason && x->reason[0] ? ": " : "", x->reason ? x->reason : "")) < 0)
			goto out;
	}
	if ((r = store_job_unavailable(st, job_id, add_unavailable, rep)) < 0)
		goto out;
	if ((r = oom_warnings(rep)) < 0)
		goto out;
	*ret = rep;
	rep = NULL;
	r = 0;
out:
	if (rl.j)
		run_loader_free(&rl); /* before rep: rl.j is rep's job */
	report_free(rep);
	job_free(j);
	diags_free(&d);
	store_job_clear(&sj);
	return r;
}

int report_print_format(struct store *st, int64_t job_id, const struct report_opts *o, FILE *out)
{
	struct report *rep;
	int r = report_load(st, job_id, &rep);
	if (r < 0)
		return r;
	r = report_analyze(rep);
	if (r < 0)
		log_error("job %lld: statistics failed: %s", (long long)job_id, strerror(-r));
	else
		r = report_render(rep, o, out);
	report_free(rep);
	return r;
}

int report_print(struct store *st, int64_t job_id, FILE *out)
{
	struct report_opts o = { .format = REPORT_TEXT };
	return report_print_format(st, job_id, &o, out);
}
