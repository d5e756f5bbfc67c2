/* The text report (the default) and its Markdown twin: for a job that
 * boots kernels each variant's kernel first, then per workload the header
 * block, then per compared variant the table of doc/report.md — Metric, dir,
 * n, Before, After, Delta (abs / %), 95% CI of Delta%, p, q, verdict — and
 * footnotes on the tests used, noisy variants and metrics compared on
 * differences; at the end the boots and the runs each one held. */
#include "harness/report/report.h"
#include "harness/report/report_priv.h"
#include "harness/job/job.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { C_METRIC, C_DIR, C_N, C_BEFORE, C_AFTER, C_DELTA, C_CI, C_P, C_Q, C_VERDICT, N_COLS };
#define CELL 160

struct row {
	char c[N_COLS][CELL];
};

static const char *const headings_utf8[N_COLS] = {
	"Metric", "dir", "n", "Before", "After", "Delta (abs / %)", "95% CI of \xce\x94%", "p", "q", "verdict",
};
static const char *const headings_ascii[N_COLS] = {
	"Metric", "dir", "n", "Before", "After", "Delta (abs / %)", "95% CI of Delta%", "p", "q", "verdict",
};

static void fill_row(const struct report_metric *m, size_t v, bool utf8, bool label, struct row *row)
{
	const struct stats_result *c = &m->cmp[v];
	struct report_scale sc;
	report_row_scale(m, v, utf8, &sc);
	if (label)
		report_scaled_label(m, &sc, row->c[C_METRIC], CELL);
	else
		snprintf(row->c[C_METRIC], CELL, "%s", m->name);
	snprintf(row->c[C_DIR], CELL, "%s", report_dir_arrow(m->info.dir, utf8));
	report_fmt_n(m, v, row->c[C_N], CELL);
	report_fmt_scaled(m->desc[0].mean, &sc, row->c[C_BEFORE], CELL);
	report_fmt_scaled(m->desc[v].mean, &sc, row->c[C_AFTER], CELL);
	report_fmt_delta_scaled(c->delta_abs, c->delta_pct, &sc, m->info.dir, row->c[C_DELTA], CELL);
	report_fmt_ci(c->ci_low_pct, c->ci_high_pct, row->c[C_CI], CELL);
	report_fmt_p(c->p_value, row->c[C_P], CELL);
	report_fmt_p(c->q_value, row->c[C_Q], CELL);
	if (c->verdict == STATS_VERDICT_NONE)
		snprintf(row->c[C_VERDICT], CELL, "-");
	else
		snprintf(row->c[C_VERDICT], CELL, "%s %s", stats_verdict_marker(c->verdict, utf8),
			 stats_verdict_name(c->verdict));
}

/* The header's kernel: the run's, or in a job that boots kernels each
 * variant's build ("base 6.1.192-kab1, patched 6.1.192-kab2"). */
static void kernel_field(const struct report *r, const struct report_header *h, char *buf, size_t len)
{
	snprintf(buf, len, "%s", h->kernel);
	size_t used = 0;
	for (size_t v = 0; r->kernels && v < r->n_variants && used < len; v++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s %s", v ? ", " : "", r->variants[v],
					 r->kernels[v].kernelrelease[0] ? r->kernels[v].kernelrelease : "?");
}

/* "v6.1-debian (71864f7f0e85)": a base ref and its commit's first 12 hex digits. */
static void base_words(const struct report_kernel *k, char *buf, size_t len)
{
	snprintf(buf, len, "%s (%.12s)", k->base_ref ? k->base_ref : "?", k->base_sha[0] ? k->base_sha : "?");
}

/* "; the build failed" for a build that is not ok; "" for one that is. */
static void build_state(const struct report_kernel *k, char *buf, size_t len)
{
	if (k->found && k->status == BUILD_OK)
		buf[0] = 0;
	else if (k->found && k->status == BUILD_FAILED)
		snprintf(buf, len, "; the build failed");
	else
		snprintf(buf, len, "; the build is %s", k->found ? build_status_name(k->status) : "in no known state");
}

/* The lines of a list: text indents them, Markdown makes them items
 * after a blank line. */
struct list_style {
	const char *head_end;  /* after a block's heading line */
	const char *item;
	const char *sub;       /* a numbered line under an item */
};
static const struct list_style text_list = { "\n", "  ", "    " };
static const struct list_style md_list = { "\n\n", "- ", "    " };

/* One variant's kernel: build, release, kind, base and series, then
 * the series' patches numbered below it. */
static void print_kernel(FILE *out, const struct report *r, size_t v, const struct list_style *ls)
{
	const struct report_kernel *k = &r->kernels[v];
	fprintf(out, "%s%s: ", ls->item, r->variants[v]);
	if (!k->build_id) {
		fprintf(out, "no build recorded\n");
		return;
	}
	if (!k->found) {
		fprintf(out, "build %lld, which is not in the builds table\n", (long long)k->build_id);
		return;
	}
	const char *rel = k->kernelrelease[0] ? k->kernelrelease : "no kernelrelease";
	char state[64], base[256];
	build_state(k, state, sizeof(state));
	if (strcmp(k->kind, "image") == 0) {
		fprintf(out, "build %lld, %s, a registered image: %s (no tree or base)%s\n", (long long)k->build_id, rel,
			k->image ? k->image : "?", state);
		return;
	}
	base_words(k, base, sizeof(base));
	fprintf(out, "build %lld, %s, built by kab from %s", (long long)k->build_id, rel, base);
	if (!k->series)
		fprintf(out, ", no series%s\n", state);
	else
		fprintf(out, " + series %s, %zu patch%s%s%s\n", k->series, k->n_patches, k->n_patches == 1 ? "" : "es", state,
			k->n_patches ? ":" : "");
	for (size_t i = 0; i < k->n_patches; i++)
		fprintf(out, "%s%zu. %s\n", ls->sub, i + 1, k->patches[i].subject);
	if (k->track.track[0]) {
		char when[64];
		util_iso_time(k->track.date, when, sizeof(when));
		fprintf(out, "%stracks %s: %.12s \"%s\" (committed %s)%s%s\n", ls->sub, k->track.track, k->track.sha,
			k->track.subject, when, k->track.event[0] ? "; " : "", k->track.event);
	}
}

/* The job's kernels and, loudly, any run that was not on its variant's. */
static void print_kernels(FILE *out, const struct report *r, const struct list_style *ls)
{
	if (!r->kernels)
		return;
	fprintf(out, "\nKernels:%s", ls->head_end);
	for (size_t v = 0; v < r->n_variants; v++)
		print_kernel(out, r, v, ls);
	if (!r->n_kernel_warnings)
		return;
	fprintf(out, "\nWARNING: runs or boots not on their variant's kernel (this must never happen; the tables below still count these runs):%s",
		ls->head_end);
	for (size_t i = 0; i < r->n_kernel_warnings; i++)
		fprintf(out, "%s%s\n", ls->item, r->kernel_warnings[i]);
}

/* "base: boot 1 (boot_id 1a2b3c4d, build 1, 6.1.192-kab1): runs 3 ok, 4 ok" */
static void print_boot_runs(FILE *out, const struct report *r, const struct report_boot *b, const char *item)
{
	fprintf(out, "%s%s: ", item, r->variants[b->variant]);
	if (b->slot >= 0)
		fprintf(out, "boot %d (boot_id %.8s, build %lld, %s): ", b->slot + 1, b->boot_id[0] ? b->boot_id : "none",
			(long long)b->build_id, b->kernel_release[0] ? b->kernel_release : "?");
	else
		fprintf(out, "a boot the job did not record (boot_id %.8s, %s): ", b->boot_id[0] ? b->boot_id : "none",
			b->kernel_release[0] ? b->kernel_release : "?");
	if (!b->n_runs)
		fprintf(out, "no runs");
	for (size_t i = 0; i < b->n_runs; i++)
		fprintf(out, "%s%lld %s%s", i ? ", " : b->n_runs == 1 ? "run " : "runs ", (long long)b->runs[i].id,
			run_status_name(b->runs[i].status), b->runs[i].wrong ? " [WRONG, see WARNING]" : "");
	fprintf(out, "\n");
}

/* Per variant, each boot and the runs it held. */
static void print_run_boots(FILE *out, const struct report *r, const struct list_style *ls)
{
	if (!r->kernels)
		return;
	fprintf(out, "\nRuns by boot:%s", ls->head_end);
	for (size_t i = 0; i < r->n_run_boots; i++)
		print_boot_runs(out, r, &r->run_boots[i], ls->item);
	if (!r->n_run_boots)
		fprintf(out, "%s(no boot came up and no run was recorded)\n", ls->item);
}

const char *report_warmup_words(const struct report *r, const struct report_workload *w, char *buf, size_t len)
{
	size_t n = 0, used = 0;
	for (size_t v = 0; v < r->n_variants; v++)
		n += w->runs[v * RUN_STATUS_N + RUN_WARMUP];
	if (n == 0) {
		snprintf(buf, len, "Warm-up: %s",
			 r->job && !r->job->warmup ? "off (warmup = 0): the first pair's runs were the workload's first"
						   : "none recorded");
		return buf;
	}
	used += (size_t)snprintf(buf, len, "Warm-up: %zu uncounted run%s of", n, n == 1 ? "" : "s");
	for (size_t v = 0, k = 0; v < r->n_variants && used < len; v++)
		if (w->runs[v * RUN_STATUS_N + RUN_WARMUP])
			used += (size_t)snprintf(buf + used, len - used, "%s %s", k++ ? "," : "", r->variants[v]);
	if (used < len)
		snprintf(buf + used, len - used, " before the first pair (not in the pairs or the statistics)");
	return buf;
}

static void print_header_block(FILE *out, const struct report *r, const struct report_workload *w)
{
	const struct report_header *h = &w->h;
	char line[256];
	fprintf(out, "== workload %s", w->name);
	if (h->type[0])
		fprintf(out, " (%s%s%s)", h->type, h->params[0] ? "; " : "", h->params);
	fprintf(out, "\n");
	if (w->have_header) {
		char mem[32], swap[32], lim[32];
		snprintf(mem, sizeof(mem), "%.1f GiB", (double)h->mem_total / (double)(1ull << 30));
		snprintf(swap, sizeof(swap), "%.1f GiB", (double)h->swap_total / (double)(1ull << 30));
		if (h->memory_max == JOB_MEM_UNSET || h->memory_max == JOB_MEM_MAX)
			snprintf(lim, sizeof(lim), "none");
		else
			util_format_size(h->memory_max, lim, sizeof(lim));
		char kernel[256];
		kernel_field(r, h, kernel, sizeof(kernel));
		fprintf(out, "Kernel: %s   CPUs: %d   Memory: %s   cgroup v%d\n", kernel, h->cpus, mem, h->cgroup_version);
		fprintf(out, "Swap: %s (%s: %s)   memcg memory.max: %s", swap, h->swap_kind,
			h->swap_devices[0] ? h->swap_devices : "none", lim);
		if (h->memory_high != JOB_MEM_UNSET && h->memory_high != JOB_MEM_MAX) {
			char mh[32];
			util_format_size(h->memory_high, mh, sizeof(mh));
			fprintf(out, "   memory.high: %s", mh);
		}
		if (h->memory_swap_max != JOB_MEM_UNSET) {
			char sm[32];
			if (h->memory_swap_max == JOB_MEM_MAX)
				snprintf(sm, sizeof(sm), "max");
			else if (h->memory_swap_max == JOB_MEM_ZERO)
				snprintf(sm, sizeof(sm), "0");
			else
				util_format_size(h->memory_swap_max, sm, sizeof(sm));
			fprintf(out, "   memory.swap.max: %s", sm);
		}
		if (isfinite(h->duration_s))
			fprintf(out, "   duration: %.1f s per run\n", h->duration_s);
		else
			fprintf(out, "   duration: n/a (no ok run)\n");
		if (h->differs[0])
			fprintf(out, "Differs between variants besides their knobs: %s\n", h->differs);
		if (h->not_idle)
			fprintf(out, "Not idle at start: %zu of %zu runs (the machine stayed busier than wait_idle for wait_idle_max)\n",
				h->not_idle, h->conditioned);
	}
	if (r->job_id) {
		fprintf(out, "Runs:");
		for (size_t v = 0; v < r->n_variants; v++) {
			fprintf(out, "%s %s", v ? ";" : "", r->variants[v]);
			bool any = false;
			for (size_t s = 0; s < RUN_STATUS_N; s++)
				if (w->runs[v * RUN_STATUS_N + s]) {
					fprintf(out, " %zu %s", w->runs[v * RUN_STATUS_N + s], run_status_name((enum run_status)s));
					any = true;
				}
			if (!any)
				fprintf(out, " none");
		}
		fprintf(out, "\n%s\n", report_warmup_words(r, w, line, sizeof(line)));
	}
	if (w->oom_tolerate)
		fprintf(out, "%s\n", report_oom_tolerated(r, w, line, sizeof(line)));
	fprintf(out, "Pairs: %zu (budget %s; %u look%s; stopped: %s)\n", w->pairs, w->budget, w->looks,
		w->looks == 1 ? "" : "s", w->stop_reason);
}

/* Why a workload has no rows: none of its runs finished
 * (run_status_finished), or none of them ok. */
static const char *empty_reason(const struct report *r, const struct report_workload *w)
{
	size_t total = 0, ok = 0;
	for (size_t v = 0; v < r->n_variants; v++)
		for (size_t s = 0; s < RUN_STATUS_N; s++) {
			total += run_status_finished((enum run_status)s) ? w->runs[v * RUN_STATUS_N + s] : 0;
			ok += s == RUN_OK ? w->runs[v * RUN_STATUS_N + s] : 0;
		}
	if (r->job_id && total == 0)
		return "no runs recorded for this workload";
	if (r->job_id && ok == 0)
		return "no ok runs: every run of this workload failed; the runs not counted are listed below";
	return "no metrics recorded";
}

static void print_table(FILE *out, struct row *rows, size_t n, bool utf8)
{
	size_t width[N_COLS];
	for (size_t c = 0; c < N_COLS; c++) {
		width[c] = report_width(utf8 ? headings_utf8[c] : headings_ascii[c]);
		for (size_t i = 0; i < n; i++)
			if (report_width(rows[i].c[c]) > width[c])
				width[c] = report_width(rows[i].c[c]);
	}
	for (size_t i = 0; i <= n; i++) {
		for (size_t c = 0; c < N_COLS; c++) {
			const char *s = i == 0 ? (utf8 ? headings_utf8[c] : headings_ascii[c]) : rows[i - 1].c[c];
			if (c + 1 == N_COLS)
				fputs(s, out);
			else
				report_pad(out, s, width[c] + 2);
		}
		fputc('\n', out);
	}
}

/* A footnote listing the metrics for which pick() holds, of those
 * shown; with pick NULL, the ones left out for being zero throughout. */
static void list_metrics(FILE *out, const char *intro, const struct report_workload *w, size_t v,
			 bool (*pick)(const struct report_metric *, size_t))
{
	bool any = false;
	for (size_t i = 0; i < w->n_metrics; i++)
		if (pick ? !report_all_zero(w, &w->m[i], v) && pick(&w->m[i], v) : report_all_zero(w, &w->m[i], v)) {
			fprintf(out, "%s%s", any ? ", " : intro, w->m[i].name);
			any = true;
		}
	if (any)
		fprintf(out, "\n");
}

static bool by_permutation(const struct report_metric *m, size_t v)
{
	enum stats_test t = m->cmp[v].test;
	return t == STATS_TEST_PERMUTATION_EXACT || t == STATS_TEST_PERMUTATION_NORMAL;
}

static bool unpaired(const struct report_metric *m, size_t v)
{
	enum stats_test t = m->cmp[v].test;
	return t == STATS_TEST_MANN_WHITNEY_EXACT || t == STATS_TEST_MANN_WHITNEY_NORMAL;
}

static bool by_normal(const struct report_metric *m, size_t v)
{
	enum stats_test t = m->cmp[v].test;
	return t == STATS_TEST_WILCOXON_NORMAL || t == STATS_TEST_MANN_WHITNEY_NORMAL || t == STATS_TEST_PERMUTATION_NORMAL;
}

static bool one_side_only(const struct report_metric *m, size_t v)
{
	return (m->desc[0].n == 0) != (m->desc[v].n == 0);
}

static bool is_primary(const struct report_metric *m, size_t v)
{
	(void)v;
	return m->primary;
}

/* Pairs where one side has a value and the other none: the data are
 * then partly unpaired, which the statistics take into account. */
static void broken_pairs(FILE *out, const struct report_workload *w, size_t v)
{
	bool any = false;
	for (size_t i = 0; i < w->n_metrics; i++) {
		const struct report_metric *m = &w->m[i];
		if (one_side_only(m, v) || report_all_zero(w, m, v))
			continue;
		size_t broken = 0;
		for (size_t p = 0; p < w->pairs; p++)
			broken += isnan(m->values[p]) != isnan(m->values[v * w->pairs + p]);
		if (broken) {
			fprintf(out, "%s%s (%zu of %zu)", any ? ", " : "Pairs with one side missing: ", m->name, broken, w->pairs);
			any = true;
		}
	}
	if (any)
		fprintf(out, "\n");
}

/* One line for a variant's noisy metrics, the noisiest first, at most
 * NOISY_SHOWN of them: "Noisy in base (CoV > 3.5%): rusage.sys_s 23.9%,
 * pageout.fill_ns_max 30.4%, ... and 3 more". */
#define NOISY_SHOWN 5
static void noisy_line(FILE *out, const struct report *r, const struct report_workload *w, size_t v)
{
	size_t n = 0, *idx = calloc(w->n_metrics ? w->n_metrics : 1, sizeof(*idx));
	if (!idx)
		return;
	for (size_t i = 0; i < w->n_metrics; i++) {
		const struct stats_desc *d = &w->m[i].desc[v];
		if (d->n >= 2 && isfinite(d->cov_pct) && d->cov_pct > REPORT_NOISY_COV_PCT)
			idx[n++] = i;
	}
	/* insertion sort, noisiest first; ties keep the table's order */
	for (size_t a = 1; a < n; a++)
		for (size_t b = a; b > 0 && w->m[idx[b]].desc[v].cov_pct > w->m[idx[b - 1]].desc[v].cov_pct; b--) {
			size_t t = idx[b];
			idx[b] = idx[b - 1];
			idx[b - 1] = t;
		}
	for (size_t k = 0; k < n && k < NOISY_SHOWN; k++) {
		if (k == 0)
			fprintf(out, "Noisy in %s (CoV > %.1f%%): ", r->variants[v], REPORT_NOISY_COV_PCT);
		fprintf(out, "%s%s %.1f%%", k ? ", " : "", w->m[idx[k]].name, w->m[idx[k]].desc[v].cov_pct);
	}
	if (n > NOISY_SHOWN)
		fprintf(out, " and %zu more", n - NOISY_SHOWN);
	if (n)
		fprintf(out, "\n");
	free(idx);
}

/* The thresholds every shown metric of the comparison uses, when they
 * are the same for all: false when a [metric] section set others. */
static bool common_thresholds(const struct report_workload *w, size_t v, double *ret_min, double *ret_eq)
{
	bool have = false;
	for (size_t i = 0; i < w->n_metrics; i++) {
		const struct stats_result *c = &w->m[i].cmp[v];
		if (c->verdict == STATS_VERDICT_NONE)
			continue;
		if (have && (c->min_change_pct != *ret_min || c->equivalence_pct != *ret_eq))
			return false;
		*ret_min = c->min_change_pct;
		*ret_eq = c->equivalence_pct;
		have = true;
	}
	return have;
}

/* What the p and q columns are: the test behind each metric, and the
 * families the corrections ran over (rules 5 and 6). */
static void test_notes(FILE *out, const struct report *r, const struct report_workload *w, size_t v, size_t tested)
{
	size_t wilcoxon = 0, untestable = 0, secondaries = 0;
	for (size_t i = 0; i < w->n_metrics; i++) {
		const struct report_metric *m = &w->m[i];
		if (report_all_zero(w, m, v) || m->cmp[v].test == STATS_TEST_NONE)
			continue;
		wilcoxon += m->cmp[v].test == STATS_TEST_WILCOXON_EXACT;
		untestable += !stats_testable(&m->cmp[v], r->alpha);
		secondaries += !m->primary;
	}
	if (wilcoxon)
		fprintf(out, "p: exact Wilcoxon signed-rank on the paired log ratios (%zu metric%s). ", wilcoxon,
			wilcoxon == 1 ? "" : "s");
	fprintf(out, "Delta%% and its CI: Hodges-Lehmann estimate of the change per pair.\n");
	list_metrics(out, "p: exact run-level permutation test (a zero or negative value in some run; the CI on the paired differences): ", w,
		     v, by_permutation);
	list_metrics(out, "p: exact Mann-Whitney U on every run (partner runs missing): ", w, v, unpaired);
	list_metrics(out, "p: normal approximation (50 pairs or more): ", w, v, by_normal);
	fprintf(out, "q: Benjamini-Hochberg over the %zu metric%s that could reach p < %g", w->family[v],
		w->family[v] == 1 ? "" : "s", r->alpha);
	if (untestable)
		fprintf(out, " (%zu of the %zu tested could not: constant in every run, or too few runs that differ)",
			untestable, tested);
	fprintf(out, ".\n");
	if (w->holm[v])
		list_metrics(out, "Primary metrics, Holm-adjusted among themselves (q is the adjusted p): ", w, v, is_primary);
	else
		list_metrics(out, "Primary metric, judged on its own p (q = p): ", w, v, is_primary);
	/* at 6 to 9 pairs the smallest signed-rank p, 2^(1-n), times the
	 * family is above alpha: a secondary metric passes only when most of
	 * the family moved with it */
	if (secondaries && w->pairs >= STATS_MIN_PAIRS && w->pairs < 64 &&
	    ldexp(1, 1 - (int)w->pairs) * (double)w->family[v] >= r->alpha && w->family[v] > 1)
		fprintf(out,
			"At %zu pairs the smallest signed-rank p is 1/%.0f: a secondary metric passes BH over %zu only when most of them "
			"moved with it; declare it primary (primary = METRIC) or run at least %u pairs.\n",
			w->pairs, ldexp(1, (int)w->pairs - 1), w->family[v],
			(unsigned)ceil(1 - log2(r->alpha / (double)w->family[v])));
}

static void footnotes(FILE *out, const struct report *r, const struct report_workload *w, size_t v, bool utf8)
{
	size_t tested = 0, max_pairs = 0;
	for (size_t i = 0; i < w->n_metrics; i++) {
		if (report_all_zero(w, &w->m[i], v))
			continue;
		tested += w->m[i].cmp[v].test != STATS_TEST_NONE;
		if (w->m[i].cmp[v].replicates > max_pairs)
			max_pairs = w->m[i].cmp[v].replicates;
	}
	fprintf(out, "\n");
	if (tested)
		test_notes(out, r, w, v, tested);
	else if (w->pairs < 2)
		fprintf(out, "No test: with %zu pair%s there is no spread to test against; run more pairs.\n", w->pairs,
			w->pairs == 1 ? "" : "s");
	else
		fprintf(out, "No test could run: no metric has runs of both variants.\n");
	if (max_pairs >= 2 && max_pairs < STATS_MIN_PAIRS)
		fprintf(out, "With %zu pairs no verdict says better, worse or changed: the exact tests need %u pairs to reach p < 0.05; run more pairs.\n",
			max_pairs, STATS_MIN_PAIRS);
	list_metrics(out, "In one variant only: ", w, v, one_side_only);
	broken_pairs(out, w, v);
	noisy_line(out, r, w, 0);
	noisy_line(out, r, w, v);
	list_metrics(out, "All zero in every run (left out): ", w, v, NULL);
	const char *pm = utf8 ? "\xc2\xb1" : "+-";
	double mc, eq;
	if (common_thresholds(w, v, &mc, &eq))
		fprintf(out, "%s better  %s worse  %s changed: p (q) < %g, the 95%% CI clear of 0 and |Delta%%| >= %g%%;  %s same: the 90%% CI inside %s%g%%;  %s undecided: neither\n",
			stats_verdict_marker(STATS_VERDICT_BETTER, utf8), stats_verdict_marker(STATS_VERDICT_WORSE, utf8),
			stats_verdict_marker(STATS_VERDICT_CHANGED, utf8), r->alpha, mc,
			stats_verdict_marker(STATS_VERDICT_SAME, utf8), pm, eq,
			stats_verdict_marker(STATS_VERDICT_UNDECIDED, utf8));
	else
		fprintf(out, "%s better  %s worse  %s changed: p (q) < %g, the 95%% CI clear of 0 and |Delta%%| >= min_change;  %s same: the 90%% CI inside %sequivalence (per metric: the job's [metric] sections, the JSON);  %s undecided: neither\n",
			stats_verdict_marker(STATS_VERDICT_BETTER, utf8), stats_verdict_marker(STATS_VERDICT_WORSE, utf8),
			stats_verdict_marker(STATS_VERDICT_CHANGED, utf8), r->alpha,
			stats_verdict_marker(STATS_VERDICT_SAME, utf8), pm, stats_verdict_marker(STATS_VERDICT_UNDECIDED, utf8));
	fprintf(out, "%s higher is better  %s lower is better  %s neutral\n", report_dir_arrow(DIRECTION_HIGHER, utf8),
		report_dir_arrow(DIRECTION_LOWER, utf8), report_dir_arrow(DIRECTION_NEUTRAL, utf8));
}

int report_render_text(const struct report *r, bool utf8, FILE *out)
{
	if (r->job_id)
		fprintf(out, "kab report: job %lld \"%s\" (%s%s%s), order %s\n", (long long)r->job_id, r->title,
			job_status_name(r->job_status), r->job_reason[0] ? ": " : "", r->job_reason, r->order);
	else
		fprintf(out, "kab compare: %s\n", r->source ? r->source : r->title);
	for (size_t i = 0; i < r->n_warnings; i++)
		fprintf(out, "%s\n", r->warnings[i]);
	print_kernels(out, r, &text_list);
	for (size_t wi = 0; wi < r->n_workloads; wi++) {
		const struct report_workload *w = &r->w[wi];
		fprintf(out, "\n");
		print_header_block(out, r, w);
		if (w->n_metrics == 0) {
			fprintf(out, "\n(%s)\n", empty_reason(r, w));
			continue;
		}
		struct row *rows = calloc(w->n_metrics, sizeof(*rows));
		if (!rows)
			return -ENOMEM;
		for (size_t v = 1; v < r->n_variants; v++) {
			fprintf(out, "\nBefore: %s   After: %s\n", r->variants[0], r->variants[v]);
			size_t n = 0;
			for (size_t i = 0; i < w->n_metrics; i++)
				if (!report_all_zero(w, &w->m[i], v))
					fill_row(&w->m[i], v, utf8, false, &rows[n++]);
			print_table(out, rows, n, utf8);
			footnotes(out, r, w, v, utf8);
		}
		free(rows);
	}
	if (r->n_boots) {
		fprintf(out, "\nBoots:\n");
		for (size_t i = 0; i < r->n_boots; i++)
			fprintf(out, "  %s\n", r->boots[i]);
	}
	print_run_boots(out, r, &text_list);
	if (r->n_notes) {
		fprintf(out, "\nRuns not counted:\n");
		for (size_t i = 0; i < r->n_notes; i++)
			fprintf(out, "  %s\n", r->notes[i]);
	}
	if (r->n_unavailable) {
		fprintf(out, "\nNot measured on this machine:\n");
		for (size_t i = 0; i < r->n_unavailable; i++)
			fprintf(out, "  %s\n", r->unavailable[i]);
	}
	fprintf(out, "\nBefore/After are means over ok runs; n is the runs counted (before/after when they differ).\n");
	return ferror(out) ? -EIO : 0;
}

/* Markdown cells: '|' would end the cell. */
static void md_cell(FILE *out, const char *s)
{
	fputs("| ", out);
	for (const char *p = s; *p; p++) {
		if (*p == '|')
			fputc('\\', out);
		fputc(*p, out);
	}
	fputc(' ', out);
}

/* The text footnotes as a list. */
static int md_footnotes(FILE *out, const struct report *r, const struct report_workload *w, size_t v, bool utf8)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	footnotes(f, r, w, v, utf8);
	if (fclose(f) != 0) {
		free(text);
		return -ENOMEM;
	}
	fputc('\n', out);
	for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		if (*line)
			fprintf(out, "- %s\n", line);
	}
	free(text);
	return 0;
}

int report_render_markdown(const struct report *r, bool utf8, FILE *out)
{
	if (r->job_id)
		fprintf(out, "## kab report: job %lld, %s\n", (long long)r->job_id, r->title);
	else
		fprintf(out, "## kab compare: %s\n", r->source ? r->source : r->title);
	if (r->n_warnings)
		fprintf(out, "\n");
	for (size_t i = 0; i < r->n_warnings; i++)
		fprintf(out, "- **%s**\n", r->warnings[i]);
	print_kernels(out, r, &md_list);
	struct row row;
	for (size_t wi = 0; wi < r->n_workloads; wi++) {
		const struct report_workload *w = &r->w[wi];
		const struct report_header *h = &w->h;
		fprintf(out, "\n### %s\n\n", w->name);
		if (w->have_header) {
			char mem[32], swap[32];
			report_fmt_mib(h->mem_total, mem, sizeof(mem));
			report_fmt_mib(h->swap_total, swap, sizeof(swap));
			char kernel[256];
			kernel_field(r, h, kernel, sizeof(kernel));
			fprintf(out, "- Kernel %s, %d CPUs, MemTotal %s, SwapTotal %s (%s)\n", kernel, h->cpus, mem, swap,
				h->swap_kind);
			if (h->memory_max != JOB_MEM_UNSET && h->memory_max != JOB_MEM_MAX) {
				char lim[32];
				util_format_size(h->memory_max, lim, sizeof(lim));
				fprintf(out, "- memcg limit %s\n", lim);
			}
		}
		fprintf(out, "- %zu pairs (budget %s; %u look%s; stopped: %s)\n", w->pairs, w->budget, w->looks,
			w->looks == 1 ? "" : "s", w->stop_reason);
		char line[160];
		if (w->oom_tolerate)
			fprintf(out, "- %s\n", report_oom_tolerated(r, w, line, sizeof(line)));
		if (w->n_metrics == 0) {
			fprintf(out, "\n*%s*\n", empty_reason(r, w));
			continue;
		}
		for (size_t v = 1; v < r->n_variants; v++) {
			fprintf(out, "\nBefore: **%s**, after: **%s**\n\n", r->variants[0], r->variants[v]);
			for (size_t c = 0; c < N_COLS; c++)
				md_cell(out, utf8 ? headings_utf8[c] : headings_ascii[c]);
			fprintf(out, "|\n|---|:-:|--:|--:|--:|--:|--:|--:|--:|---|\n");
			for (size_t i = 0; i < w->n_metrics; i++) {
				if (report_all_zero(w, &w->m[i], v))
					continue;
				fill_row(&w->m[i], v, utf8, true, &row);
				for (size_t c = 0; c < N_COLS; c++)
					md_cell(out, row.c[c]);
				fprintf(out, "|\n");
			}
			if (md_footnotes(out, r, w, v, utf8) < 0)
				return -ENOMEM;
		}
	}
	if (r->n_boots) {
		fprintf(out, "\nBoots:\n\n");
		for (size_t i = 0; i < r->n_boots; i++)
			fprintf(out, "- %s\n", r->boots[i]);
	}
	print_run_boots(out, r, &md_list);
	if (r->n_notes) {
		fprintf(out, "\nRuns not counted:\n\n");
		for (size_t i = 0; i < r->n_notes; i++)
			fprintf(out, "- %s\n", r->notes[i]);
	}
	if (r->n_unavailable) {
		fprintf(out, "\nNot measured on this machine:\n\n");
		for (size_t i = 0; i < r->n_unavailable; i++)
			fprintf(out, "- %s\n", r->unavailable[i]);
	}
	return ferror(out) ? -EIO : 0;
}
