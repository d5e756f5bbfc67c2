/* The cover-letter format: the seed postings' table, to paste into a
 * patch series' cover letter as is. ASCII only, 74 columns:
 *
 *   ==========================================================================
 *                    NAME Benchmark Results
 *   ==========================================================================
 *     Kernel: 7.0.0-rc1+   CPUs: 16
 *     MemTotal: 31834M   SwapTotal: 8191M
 *     memcg limit: 512M   alloc: 2G   workers: 16   duration: 60s
 *   --------------------------------------------------------------------------
 *   Metric                 Before        After             Delta (abs / %)
 *   --------------------------------------------------------------------------
 *   bogo ops/s             28238.63      35833.97          +7595.34 (+26.9%)
 *   --------------------------------------------------------------------------
 *
 * and, when there was more than one run a side, the confidence intervals
 * and verdicts below it. A job that boots kernels says what each side
 * was above the table:
 *
 *     Kernel: 6.1.192-kab1 / 6.1.192-kab2   CPUs: 16
 *     ...
 *     Base: v6.1 (71864f7f0e85), 6.1.192-kab1
 *     patched: + 2 patches (lore:ID v2), 6.1.192-kab2
 *       1. [PATCH v2 1/2] mm: ...
 *       2. [PATCH v2 2/2] mm: ...
 *     6 boots of each kernel, ABBA
 *
 * A job that names primary metrics or a metrics = list shows those rows
 * (the numbers its posting is about), or the ones [report] rows names,
 * and a line saying where the others are; kab compare keeps every row of
 * the table it was given. Rows zero in every run of both sides are named
 * in one line instead. Times and sizes read in human units ("206 ms"). */
#include "harness/report/report.h"
#include "harness/report/report_priv.h"
#include "harness/job/job.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define COVER_WIDTH 74
/* The seed's columns: Metric 22, Before 13, After 17, one space between. */
#define COL_METRIC 22
#define COL_BEFORE 13
#define COL_AFTER 17

static void rule(FILE *out, char c)
{
	for (int i = 0; i < COVER_WIDTH; i++)
		fputc(c, out);
	fputc('\n', out);
}

static void centered(FILE *out, const char *s)
{
	size_t n = report_width(s);
	for (size_t i = 0; n < COVER_WIDTH && i < (COVER_WIDTH - n) / 2; i++)
		fputc(' ', out);
	fprintf(out, "%s\n", s);
}

static const char *release_of(const struct report_kernel *k)
{
	return k->kernelrelease[0] ? k->kernelrelease : "?";
}

/* One side's kernel as a cover letter says it: "v6.1 (71864f7f0e85),
 * 6.1.192-kab1"; for the After side on the Before side's base only what
 * it adds, "+ 2 patches (SERIES), 6.1.192-kab2". */
static void kernel_prose(const struct report_kernel *k, const struct report_kernel *before, char *buf, size_t len)
{
	if (!k->build_id) {
		snprintf(buf, len, "no build recorded");
		return;
	}
	if (!k->found) {
		snprintf(buf, len, "build %lld, not in the database", (long long)k->build_id);
		return;
	}
	if (strcmp(k->kind, "image") == 0) {
		snprintf(buf, len, "the image %s, %s", k->image ? k->image : "?", release_of(k));
		return;
	}
	char patches[512] = "";
	if (k->series)
		snprintf(patches, sizeof(patches), "+ %zu patch%s (%s)", k->n_patches, k->n_patches == 1 ? "" : "es", k->series);
	bool same_base = before && before->found && strcmp(before->kind, "build") == 0 && k->base_sha[0] &&
			 strcmp(before->base_sha, k->base_sha) == 0;
	if (k->track.track[0])
		snprintf(buf, len, "%s at %.12s (\"%.200s\")%s%s, %s", k->track.track, k->track.sha, k->track.subject,
			 k->series ? " " : "", patches, release_of(k));
	else if (same_base && k->series)
		snprintf(buf, len, "%s, %s", patches, release_of(k));
	else if (same_base)
		snprintf(buf, len, "the same base, no patches, %s", release_of(k));
	else
		snprintf(buf, len, "%s (%.12s)%s%s, %s", k->base_ref ? k->base_ref : "?", k->base_sha[0] ? k->base_sha : "?",
			 k->series ? " " : "", patches, release_of(k));
	if (k->track.event[0])
		snprintf(buf + strlen(buf), len - strlen(buf), "; %s", k->track.event);
}

static void patch_lines(FILE *out, const struct report_kernel *k)
{
	for (size_t i = 0; i < k->n_patches; i++)
		fprintf(out, "    %zu. %s\n", i + 1, k->patches[i].subject);
}

/* Jobs that boot kernels: what each side ran and how often it was booted. */
static void kernel_lines(FILE *out, const struct report *r, size_t v)
{
	const struct report_kernel *a = &r->kernels[0], *b = &r->kernels[v];
	char text[1024];
	kernel_prose(a, NULL, text, sizeof(text));
	fprintf(out, "  Base: %s\n", text);
	patch_lines(out, a);
	kernel_prose(b, a, text, sizeof(text));
	fprintf(out, "  %s: %s\n", r->variants[v], text);
	patch_lines(out, b);
	if (a->boots == b->boots)
		fprintf(out, "  %zu boot%s of each kernel", a->boots, a->boots == 1 ? "" : "s");
	else
		fprintf(out, "  %zu boot%s of %s's kernel, %zu of %s's", a->boots, a->boots == 1 ? "" : "s", r->variants[0],
			b->boots, r->variants[v]);
	if (r->order[0])
		fprintf(out, ", %s", report_order_words(r->order));
	if (r->runs_per_boot > 1)
		fprintf(out, ", %u runs a boot (their median counted)", r->runs_per_boot);
	if (a->failed_boots + b->failed_boots)
		fprintf(out, "; %zu failed boot%s not counted", a->failed_boots + b->failed_boots,
			a->failed_boots + b->failed_boots == 1 ? "" : "s");
	fprintf(out, "\n");
}

static void header_lines(FILE *out, const struct report *r, const struct report_workload *w, size_t v)
{
	const struct report_header *h = &w->h;
	if (w->have_header) {
		char mem[32], swap[32], lim[32];
		report_fmt_mib(h->mem_total, mem, sizeof(mem));
		report_fmt_mib(h->swap_total, swap, sizeof(swap));
		if (r->kernels)
			fprintf(out, "  Kernel: %s / %s   CPUs: %d\n", release_of(&r->kernels[0]), release_of(&r->kernels[v]),
				h->cpus);
		else
			fprintf(out, "  Kernel: %s   CPUs: %d\n", h->kernel, h->cpus);
		fprintf(out, "  MemTotal: %s   SwapTotal: %s\n", mem, swap);
		if (h->memory_max == JOB_MEM_UNSET || h->memory_max == JOB_MEM_MAX)
			snprintf(lim, sizeof(lim), "none");
		else
			util_format_size(h->memory_max, lim, sizeof(lim));
		fprintf(out, "  memcg limit: %s", lim);
		if (h->alloc[0])
			fprintf(out, "   alloc: %s", h->alloc);
		if (h->workers)
			fprintf(out, "   workers: %u", h->workers);
		if (h->timeout[0])
			fprintf(out, "   duration: %s", h->timeout);
		else if (isfinite(h->duration_s))
			fprintf(out, "   duration: %.0fs", h->duration_s);
		fprintf(out, "\n");
		if (h->differs[0])
			fprintf(out, "  Differs between variants besides their knobs: %s\n", h->differs);
	}
	fprintf(out, "  Before: %s   After: %s   pairs: %zu", r->variants[0], r->variants[v], w->pairs);
	if (r->order[0])
		fprintf(out, " (%s)", r->order);
	fprintf(out, "\n");
	char line[160];
	if (r->job_id)
		fprintf(out, "  %s\n", report_warmup_words(r, w, line, sizeof(line)));
	if (w->oom_tolerate)
		fprintf(out, "  %s\n", report_oom_tolerated(r, w, line, sizeof(line)));
	if (r->kernels)
		kernel_lines(out, r, v);
}

/* The rows of a cover letter: the job's (report_metric.cover) that
 * moved in some run; a row zero in every run of both sides is named
 * below the table instead. */
static bool shown(const struct report_workload *w, size_t v, size_t i)
{
	return w->m[i].cover && !report_all_zero(w, &w->m[i], v);
}

static size_t widest(const struct report_workload *w, size_t v, int which, size_t floor)
{
	size_t best = floor;
	char buf[128];
	for (size_t i = 0; i < w->n_metrics; i++) {
		const struct report_metric *m = &w->m[i];
		struct report_scale sc;
		if (!shown(w, v, i))
			continue;
		report_row_scale(m, v, false, &sc);
		if (which == 0)
			report_scaled_label(m, &sc, buf, sizeof(buf));
		else
			report_fmt_scaled(m->desc[which == 1 ? 0 : v].mean, &sc, buf, sizeof(buf));
		if (report_width(buf) > best)
			best = report_width(buf);
	}
	return best;
}

/* Below the table: what the numbers are and how sure they are. */
static void statistics(FILE *out, const struct report *r, const struct report_workload *w, size_t v, size_t cw)
{
	size_t most = 0, tested = 0, rows = 0;
	for (size_t i = 0; i < w->n_metrics; i++) {
		const struct report_metric *m = &w->m[i];
		/* q is adjusted over every metric tested, shown or not */
		tested += m->cmp[v].test != STATS_TEST_NONE;
		if (!shown(w, v, i))
			continue;
		rows++;
		most = m->desc[0].n > most ? m->desc[0].n : most;
		most = m->desc[v].n > most ? m->desc[v].n : most;
	}
	if (most <= 1)
		return;
	fprintf(out, "Means of up to %zu runs a side%s%s%s; Delta = After - Before.\n", most, r->order[0] ? ", " : "",
		r->order, r->order[0] ? " order" : "");
	if (!tested)
		return;
	fprintf(out, "95%% CI of Delta%% (Hodges-Lehmann), p (Wilcoxon signed-rank; Mann-Whitney U\n"
		     "where runs lack a partner) for primary metrics, q (p adjusted for the\n"
		     "%zu %s tested, Benjamini-Hochberg) for the others, and the verdict:\n", tested,
		tested > rows ? "metrics" : "rows");
	for (size_t i = 0; i < w->n_metrics; i++) {
		const struct report_metric *m = &w->m[i];
		const struct stats_result *c = &m->cmp[v];
		char ci[64], p[32], label[METRIC_LABEL_MAX];
		struct report_scale sc;
		if (!shown(w, v, i))
			continue;
		report_row_scale(m, v, false, &sc);
		report_scaled_label(m, &sc, label, sizeof(label));
		report_fmt_ci(c->ci_low_pct, c->ci_high_pct, ci, sizeof(ci));
		report_fmt_p(m->primary ? c->p_value : c->q_value, p, sizeof(p));
		report_pad(out, label, cw + 1);
		report_pad(out, ci, 18);
		fprintf(out, "%s=", m->primary ? "p" : "q");
		report_pad(out, p, 8);
		fprintf(out, "%s\n", stats_verdict_name(c->verdict));
	}
}

/* What the job named its cover rows with. */
static const char *cover_set_words(const struct job *j)
{
	if (!j)
		return "rows";
	if (j->n_report_rows)
		return "[report] rows";
	if (j->n_primary && j->n_metrics)
		return "primary and metrics = rows";
	return j->n_primary ? "primary metrics" : "metrics = rows";
}

/* The cover rows left out for being zero throughout, as one item wrapped
 * to the letter's width. */
static void zero_rows(FILE *out, const struct report_workload *w, size_t v)
{
	size_t col = 0;
	for (size_t i = 0; i < w->n_metrics; i++) {
		const struct report_metric *m = &w->m[i];
		if (!m->cover || !report_all_zero(w, m, v))
			continue;
		const char *sep = col ? ", " : "All zero in every run (left out): ";
		size_t need = strlen(sep) + strlen(m->name) + 1;
		if (col && col + need > COVER_WIDTH) {
			fprintf(out, ",\n  ");
			col = 2;
			sep = "";
		}
		fprintf(out, "%s%s", sep, m->name);
		col += strlen(sep) + strlen(m->name);
	}
	if (col)
		fprintf(out, "\n");
}

static void block(FILE *out, const struct report *r, const struct report_workload *w, size_t v)
{
	char title[256];
	if (r->n_workloads > 1)
		snprintf(title, sizeof(title), "%s %s Benchmark Results", r->title, w->name);
	else
		snprintf(title, sizeof(title), "%s Benchmark Results", r->title);
	rule(out, '=');
	centered(out, title);
	rule(out, '=');
	header_lines(out, r, w, v);
	rule(out, '-');
	size_t cw = widest(w, v, 0, COL_METRIC), bw = widest(w, v, 1, COL_BEFORE), aw = widest(w, v, 2, COL_AFTER);
	report_pad(out, "Metric", cw + 1);
	report_pad(out, "Before", bw + 1);
	report_pad(out, "After", aw + 1);
	fprintf(out, "Delta (abs / %%)\n");
	rule(out, '-');
	size_t others = 0;
	for (size_t i = 0; i < w->n_metrics; i++) {
		const struct report_metric *m = &w->m[i];
		char before[64], after[64], delta[128], label[METRIC_LABEL_MAX];
		struct report_scale sc;
		if (!m->cover)
			others++;
		if (!shown(w, v, i))
			continue;
		report_row_scale(m, v, false, &sc);
		report_scaled_label(m, &sc, label, sizeof(label));
		report_fmt_scaled(m->desc[0].mean, &sc, before, sizeof(before));
		report_fmt_scaled(m->desc[v].mean, &sc, after, sizeof(after));
		report_fmt_delta_scaled(m->cmp[v].delta_abs, m->cmp[v].delta_pct, &sc, m->info.dir, delta, sizeof(delta));
		report_pad(out, label, cw + 1);
		report_pad(out, before, bw + 1);
		report_pad(out, after, aw + 1);
		fprintf(out, "%s\n", delta);
	}
	if (w->n_metrics == 0)
		fprintf(out, "(no metrics: no ok runs of this workload)\n");
	rule(out, '-');
	zero_rows(out, w, v);
	if (others)
		fprintf(out, "The job's %s; %zu other%s in kab report %lld.\n", cover_set_words(r->job), others,
			others == 1 ? " is" : "s are", (long long)r->job_id);
	statistics(out, r, w, v, cw);
}

int report_render_cover_letter(const struct report *r, FILE *out)
{
	for (size_t i = 0; i < r->n_warnings; i++)
		fprintf(out, "%s\n", r->warnings[i]);
	if (r->n_warnings)
		fprintf(out, "\n");
	if (r->n_kernel_warnings) {
		fprintf(out, "WARNING: runs or boots not on their variant's kernel. This must never\n"
			     "happen; the tables below still count these runs:\n");
		for (size_t i = 0; i < r->n_kernel_warnings; i++)
			fprintf(out, "  %s\n", r->kernel_warnings[i]);
		fprintf(out, "\n");
	}
	bool first = true;
	for (size_t wi = 0; wi < r->n_workloads; wi++)
		for (size_t v = 1; v < r->n_variants; v++) {
			if (!first)
				fprintf(out, "\n");
			first = false;
			block(out, r, &r->w[wi], v);
		}
	if (r->n_boots) {
		fprintf(out, "\nBoots:\n");
		for (size_t i = 0; i < r->n_boots; i++)
			fprintf(out, "  %s\n", r->boots[i]);
	}
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
	return ferror(out) ? -EIO : 0;
}
