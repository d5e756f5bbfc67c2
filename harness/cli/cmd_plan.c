/* kab plan JOB: an A/A calibration of the job's baseline, then, per
 * primary metric, its noise, its min_change, the smallest effect N pairs
 * decide with 80% power and the pairs a target effect needs (plan.h).
 * kab plan --from ID plans from a stored calibration, --csv FILE from
 * recorded runs of kab compare's format, without running anything. */
#include "harness/cli/cmd.h"
#include "harness/cli/foreground.h"
#include "harness/report/compare.h"
#include "harness/exec/executor.h"
#include "harness/job/job.h"
#include "harness/base/esc.h"
#include "harness/base/json.h"
#include "harness/base/output.h"
#include "harness/stats/plan.h"
#include "harness/report/report.h"
#include "harness/report/report_priv.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Six pairs: the noise's SD then has 5 degrees of freedom (its 80% upper
 * bound is 1.4x the estimate; 3 pairs would give 2.2x), and six is the
 * fewest pairs kab's own test can judge, so the calibration's report is
 * an A/A check of its own. */
#define DEFAULT_CAL_PAIRS 6u
#define MIN_CAL_PAIRS 3u
/* Below this many calibration pairs the plan says its noise is rough: six
 * 6-pair windows of one 40-pair A/A on a shared machine measured noises
 * from 0.8% to 4.5% (doc/plan.md). */
#define ROUGH_CAL_PAIRS 12u
#define PRIMARY_MAX 64
#define CAL_SUFFIX ".calibration"

static const unsigned table_pairs[] = { 6, 8, 10, 15, 20 };
#define N_COLS_MAX (ARRAY_SIZE(table_pairs) + 1)

#define USAGE \
	"usage: kab plan JOB [--pairs N] [--effect PCT] [--db PATH] [--format text|json] [--noise upper|estimate] [--sims N] [--seed S]\n" \
	"       kab plan --from ID [--db PATH] [--effect PCT] [--format text|json]\n" \
	"       kab plan --csv FILE.csv [--primary METRIC ...] [--baseline VARIANT] [--effect PCT] [--format text|json]\n"

struct plan_opts {
	unsigned cal_pairs;
	double effect;            /* fraction; 0: none asked */
	bool json;
	unsigned sims;
	uint64_t seed;
	unsigned job_pairs;       /* the job's own budget, a column of its own; 0: none */
	bool estimate;            /* draw with the noise as estimated, not its upper bound */
};

/* The calibration estimates the noise from a few pairs: half the time
 * below the truth. Simulating with its upper 80% confidence bound makes
 * a plan that holds for 4 in 5 calibrations, not 1 in 2. */
#define NOISE_CONF 0.80

/* One metric's plan. */
struct plan_row {
	const char *workload, *metric;
	enum direction dir;
	bool ok;
	char why[160];            /* !ok: why it cannot be planned */
	struct plan_summary s;
	double d_factor;          /* the draws' spread against the estimate */
	unsigned cols[N_COLS_MAX];
	double min_effect[N_COLS_MAX];   /* fraction; NAN: more than +100% */
	size_t n_cols;
	unsigned effect_pairs; /* 0: more than PLAN_PAIRS_MAX, or not above min_change */
	double effect_power;
	bool below_min_change;
};

/* "5%", "5", "0.5%": a percentage strictly between 0 and 100. */
static int parse_effect(const char *s, double *ret)
{
	char buf[64];
	size_t n = strlen(s);
	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n + 1);
	if (buf[n - 1] == '%')
		buf[--n] = 0;
	double v;
	if (n == 0 || util_parse_double(buf, &v) < 0 || !(v > 0 && v < 100))
		return -EINVAL;
	*ret = v / 100;
	return 0;
}

/* The job as text, so the store keeps a job that parses back (kab run
 * --resume): the original's fields, borrowed for the print. */
int plan_calibration_text(struct job *j, unsigned pairs, char **ret)
{
	const struct job_variant *a = &j->variants[0];
	char name[96], again[96];
	snprintf(name, sizeof(name), "%.*s%s", 64 - (int)strlen(CAL_SUFFIX), j->name, CAL_SUFFIX);
	snprintf(again, sizeof(again), "%.58s.again", a->name);
	struct job_variant twins[2] = { *a, *a };
	twins[0].label = "A";
	twins[1].label = "B";
	twins[1].name = again;
	/* print the derived job from the original's fields, then put them back */
	char *saved_name = j->name;
	struct job_variant *saved_v = j->variants;
	size_t saved_nv = j->n_variants;
	unsigned saved_pairs = j->pairs;
	struct job_adaptive saved_ad = j->adaptive;
	j->name = name;
	j->variants = twins;
	j->n_variants = 2;
	j->pairs = pairs;
	j->adaptive = (struct job_adaptive){ 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (f) {
		fprintf(f, "; kab plan: an A/A calibration of \"%s\", variant %s against itself\n", saved_name, a->name);
		job_print(j, f);
	}
	j->name = saved_name;
	j->variants = saved_v;
	j->n_variants = saved_nv;
	j->pairs = saved_pairs;
	j->adaptive = saved_ad;
	if (!f || fclose(f) != 0) {
		free(text);
		return -ENOMEM;
	}
	*ret = text;
	return 0;
}

static const char calibration_needs_root[] =
	"kab plan runs a calibration with kab run's executor, which needs root: it creates memory cgroups, swap and writes sysctl/sysfs knobs (kab plan --from ID or --csv FILE plan from recorded runs)";

/* Runs the calibration as kab run runs a job; its id in *ret_id. */
static int run_calibration(const char *path, const char *db, const char *state_dir, unsigned pairs,
			   unsigned *ret_job_pairs, int64_t *ret_id)
{
	struct diags d = { 0 };
	struct job *j = NULL, *cal = NULL;
	struct fg fg = FG_INIT;
	char *text = NULL;
	int ret = 1, r;
	if (fg_output() < 0)
		return 1;
	ret = 2;
	if (job_parse_file(path, &j, &d) < 0)
		goto out;
	exec_refuse_boots(j, &d);
	if (d.n)
		goto out;
	*ret_job_pairs = j->pairs;
	if ((r = plan_calibration_text(j, pairs, &text)) < 0) {
		log_error("cannot write the calibration job: %s", strerror(-r));
		ret = 1;
		goto out;
	}
	if (job_parse_string(path, text, &cal, &d) < 0)
		goto out;
	ret = 1;
	if (fg_open(&fg, db, state_dir, calibration_needs_root) < 0)
		goto out;
	int64_t id;
	size_t n;
	if (fg_submit(&fg, cal, db, "the calibration job", &id, &n) < 0)
		goto out;
	log_info("calibration job %lld \"%s\": %zu runs (%u pairs of \"%s\" against itself x %zu workloads%s), database %s",
		 (long long)id, cal->name, n, pairs, cal->variants[0].name, cal->n_workloads,
		 cal->warmup ? "; and each workload's warm-up, not counted" : "", db);
	r = fg_exec(&fg, cal, id, false);
	if (r == -EINTR) {
		log_error("interrupted: calibration job %lld cancelled; its finished runs are kept (kab plan --from %lld --db %s plans from them)",
			  (long long)id, (long long)id, db);
		goto out;
	}
	if (r < 0)
		goto out;
	*ret_id = id;
	ret = 0;
out:
	if (d.n)
		diags_print(&d, stderr);
	diags_free(&d);
	free(text);
	job_free(j);
	job_free(cal);
	fg_close(&fg);
	return ret;
}

/* The metrics a plan is for: the primary ones, or else every one with a
 * direction of goodness. */
static bool wanted(const struct report_workload *w, const struct report_metric *m)
{
	for (size_t i = 0; i < w->n_metrics; i++)
		if (w->m[i].primary)
			return m->primary;
	return m->info.dir != DIRECTION_NEUTRAL;
}

/* The calibration's complete pairs of one metric as a noise model. */
static int row_noise(const struct report_workload *w, const struct report_metric *m, size_t variant,
		     double *a, double *b, struct plan_noise *nz, char *why, size_t len)
{
	size_t np = w->pairs, n = 0;
	const double *va = m->values, *vb = m->values + variant * np;
	bool zero = false;
	for (size_t p = 0; p < np; p++) {
		double x = va[p], y = vb[p];
		if ((isfinite(x) && x <= 0) || (isfinite(y) && y <= 0))
			zero = true;
		if (isfinite(x) && isfinite(y) && x > 0 && y > 0) {
			a[n] = x;
			b[n++] = y;
		}
	}
	if (zero) {
		snprintf(why, len, "zero in some calibration runs: kab compares it by differences, where a %% effect has no fixed size");
		return -EDOM;
	}
	if (n < MIN_CAL_PAIRS) {
		snprintf(why, len, "%zu complete pairs in the calibration (at least %u needed)", n, MIN_CAL_PAIRS);
		return -EDOM;
	}
	*nz = (struct plan_noise){
		.a = a,
		.b = b,
		.n = n,
		.dir = m->info.dir,
		.min_change_pct = m->min_change_pct,
		.equivalence_pct = m->equivalence_pct,
	};
	return 0;
}

static int plan_row(const struct plan_opts *o, const struct report_workload *w, const struct report_metric *m,
		    size_t variant, struct plan_row *row)
{
	*row = (struct plan_row){ .workload = w->name, .metric = m->name, .dir = m->info.dir };
	size_t np = w->pairs ? w->pairs : 1;
	double *a = malloc(np * sizeof(double)), *b = malloc(np * sizeof(double));
	int r = -ENOMEM;
	if (!a || !b)
		goto out;
	struct plan_noise nz;
	if (row_noise(w, m, variant, a, b, &nz, row->why, sizeof(row->why)) < 0) {
		r = 0;
		goto out;
	}
	nz.sims = o->sims;
	nz.seed = o->seed;
	if ((r = plan_summarize(&nz, &row->s)) < 0)
		goto out;
	row->d_factor = 1;
	if (!o->estimate) {
		nz.d_inflate = row->d_factor = plan_upper_factor(nz.n, NOISE_CONF);
		nz.base_inflate = plan_upper_factor(2 * nz.n, NOISE_CONF);
	}
	for (size_t i = 0; i < ARRAY_SIZE(table_pairs); i++)
		row->cols[row->n_cols++] = table_pairs[i];
	bool have = false;
	for (size_t i = 0; i < row->n_cols; i++)
		have |= row->cols[i] == o->job_pairs;
	if (o->job_pairs && !have)
		row->cols[row->n_cols++] = o->job_pairs;
	for (size_t i = 0; i < row->n_cols; i++) {
		row->min_effect[i] = NAN;
		if (row->cols[i] < PLAN_MIN_DECIDING_PAIRS)
			continue;
		if ((r = plan_min_effect(&nz, row->cols[i], PLAN_TARGET_POWER, &row->min_effect[i])) < 0)
			goto out;
	}
	if (o->effect > 0) {
		/* kab calls no change under min_change: not worth simulating */
		row->below_min_change = 100 * o->effect <= row->s.min_change_pct;
		if (!row->below_min_change && (r = plan_pairs_for(&nz, o->effect, PLAN_TARGET_POWER, PLAN_PAIRS_MAX,
								  &row->effect_pairs, &row->effect_power)) < 0)
			goto out;
	}
	row->ok = true;
	r = 0;
out:
	free(a);
	free(b);
	return r;
}

static void fmt_pct(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, ">100%%");
	else
		snprintf(buf, len, "%.1f%%", v);
}

static void print_text(const struct plan_opts *o, const char *title, const char *source,
		       const struct plan_row *rows, size_t n, FILE *out)
{
	bool utf8 = report_utf8_locale();
	fprintf(out, "kab plan: %s\n%s\n", title, source);
	const char *wl = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct plan_row *row = &rows[i];
		if (!wl || strcmp(wl, row->workload) != 0) {
			wl = row->workload;
			fprintf(out, "\nWorkload %s: smallest change decided with %.0f%% power, by pairs\n", wl, 100 * PLAN_TARGET_POWER);
			fprintf(out, "%-28s %-3s %6s %6s %8s", "Metric", "dir", "noise", o->estimate ? "" : "upper", "min_chg");
			for (size_t c = 0; c < row->n_cols; c++) {
				char h[16];
				snprintf(h, sizeof(h), "N=%u%s", row->cols[c], row->cols[c] == o->job_pairs ? "*" : "");
				fprintf(out, " %8s", h);
			}
			fputc('\n', out);
		}
		/* an arrow is one column wide, three bytes in UTF-8 */
		fprintf(out, "%-28s %s  ", row->metric, report_dir_arrow(row->dir, utf8));
		if (!row->ok) {
			fprintf(out, " not planned: %s\n", row->why);
			continue;
		}
		char a[32], u[32], b[32];
		fmt_pct(row->s.noise_pct, a, sizeof(a));
		fmt_pct(100 * expm1(row->d_factor * row->s.d_sd), u, sizeof(u));
		fmt_pct(row->s.min_change_pct, b, sizeof(b));
		fprintf(out, " %6s %6s %8s", a, o->estimate ? "" : u, b);
		for (size_t c = 0; c < row->n_cols; c++) {
			if (row->cols[c] < PLAN_MIN_DECIDING_PAIRS)
				snprintf(a, sizeof(a), "never");
			else
				fmt_pct(100 * row->min_effect[c], a, sizeof(a));
			fprintf(out, " %8s", a);
		}
		fputc('\n', out);
	}
	fputc('\n', out);
	for (size_t i = 0; i < n; i++) {
		const struct plan_row *row = &rows[i];
		if (!row->ok || !(o->effect > 0))
			continue;
		double e = 100 * o->effect;
		if (row->below_min_change)
			fprintf(out, "%s: an effect of %g%% is not above min_change = %.1f%%: kab calls no change that small better or worse, whatever the pairs (lower min_change in the job's [metric] section to look for it)\n",
				row->metric, e, row->s.min_change_pct);
		else if (row->effect_pairs)
			fprintf(out, "pairs = %u decides a %g%% change in %s with %.0f%% power (simulated: %.0f%%)\n",
				row->effect_pairs, e, row->metric, 100 * PLAN_TARGET_POWER, 100 * row->effect_power);
		else
			fprintf(out, "%s: a %g%% change needs more than %u pairs for %.0f%% power (simulated at %u: %.0f%%)\n",
				row->metric, e, PLAN_PAIRS_MAX, 100 * PLAN_TARGET_POWER, PLAN_PAIRS_MAX, 100 * row->effect_power);
	}
	for (size_t i = 0; i < n && !(o->effect > 0) && o->job_pairs >= PLAN_MIN_DECIDING_PAIRS; i++) {
		const struct plan_row *row = &rows[i];
		for (size_t c = 0; row->ok && c < row->n_cols; c++) {
			if (row->cols[c] != o->job_pairs)
				continue;
			if (isnan(row->min_effect[c]))
				fprintf(out, "the job's pairs = %u do not decide even a 100%% change in %s with %.0f%% power\n",
					o->job_pairs, row->metric, 100 * PLAN_TARGET_POWER);
			else
				fprintf(out, "the job's pairs = %u decide a change of %.1f%% or more in %s with %.0f%% power\n",
					o->job_pairs, 100 * row->min_effect[c], row->metric, 100 * PLAN_TARGET_POWER);
		}
	}
	if (o->job_pairs && o->job_pairs < PLAN_MIN_DECIDING_PAIRS)
		fprintf(out, "The job's pairs = %u cannot decide anything: the signed-rank test needs at least %u pairs to reach p < 0.05.\n",
			o->job_pairs, PLAN_MIN_DECIDING_PAIRS);
	fprintf(out,
		"noise: CoV of the calibration's paired log-ratios, 100 (e^sd - 1); min_chg: the smallest change kab calls (the job's\n"
		"[metric] min_change, default %g%%)%s. Fewer than %u pairs decide nothing (the exact signed-rank test cannot reach\n"
		"p < 0.05). Power: %u simulated jobs per pair count (seed %llu), each judged by kab's verdict (exact p < 0.05, the 95%% CI\n"
		"of the Hodges-Lehmann shift clear of 0 and the estimate at least min_change), pairs drawn from the calibration by\n"
		"a smoothed bootstrap, B raised by the effect%s.\n",
		STATS_MIN_CHANGE_PCT, o->job_pairs ? "; * the job's pairs" : "", PLAN_MIN_DECIDING_PAIRS,
		o->sims ? o->sims : PLAN_DEFAULT_SIMS, (unsigned long long)(o->seed ? o->seed : PLAN_DEFAULT_SEED),
		o->estimate ? "; the noise as the calibration estimated it (--noise estimate)"
			    : "; the noise at its upper 80% confidence bound (\"upper\"; the\n"
			      "calibration's SD is below the truth half the time: --noise estimate plans with the estimate)");
	for (size_t i = 0; i < n; i++)
		if (rows[i].ok && rows[i].s.pairs < ROUGH_CAL_PAIRS) {
			fprintf(out, "The noise comes from %zu pairs: where the machine's load or state drifts, a stretch of %zu pairs can be\n"
				"quieter or noisier than the job's; a longer calibration (--pairs %u) close to the job is safer.\n",
				rows[i].s.pairs, rows[i].s.pairs, ROUGH_CAL_PAIRS);
			break;
		}
}

/* One metric's plan: what the calibration measured, the smallest effect
 * each number of pairs detects, and the pairs the wanted effect needs. */
static json_t *plan_json(const struct plan_opts *o, const struct plan_row *row)
{
	json_t *m = json_pack("{s:o, s:o, s:s, s:b}", "workload", jw_str(row->workload), "name", jw_str(row->metric),
			      "direction", direction_name(row->dir), "planned", row->ok);
	if (!m || !row->ok)
		return m && jw_set(m, "reason", jw_str(row->why)) < 0 ? (json_decref(m), NULL) : m;
	json_t *effects = json_array();
	for (size_t c = 0; effects && c < row->n_cols; c++)
		if (json_array_append_new(effects, json_pack("{s:i, s:o}", "pairs", (int)row->cols[c], "effect_pct",
							     jw_num(100 * row->min_effect[c]))) < 0) {
			json_decref(effects);
			effects = NULL;
		}
	json_t *x = json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "calibration_pairs", (json_int_t)row->s.pairs,
			      "log_ratio_sd", jw_num(row->s.d_sd), "noise_pct", jw_num(row->s.noise_pct),
			      "noise_simulated_pct", jw_num(100 * expm1(row->d_factor * row->s.d_sd)), "baseline_cov_pct",
			      jw_num(row->s.base_cov_pct), "min_change_pct", jw_num(row->s.min_change_pct),
			      "equivalence_pct", jw_num(row->s.equivalence_pct), "min_effect_pct", effects);
	if (x && o->effect > 0 &&
	    jw_set(x, "effect",
		   json_pack("{s:b, s:o, s:o}", "below_min_change", row->below_min_change, "pairs",
			     row->effect_pairs ? json_integer(row->effect_pairs) : json_null(), "power",
			     jw_num(row->effect_power))) < 0) {
		json_decref(x);
		x = NULL;
	}
	if (!x || json_object_update_new(m, x) < 0) {
		json_decref(m);
		return NULL;
	}
	return m;
}

/* v to the 6 significant digits the user gave it in (--effect 5%, not
 * 5.000000000000001). */
static double g6(double v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%g", v);
	return strtod(buf, NULL);
}

static int print_json(const struct plan_opts *o, const char *title, int64_t cal_id, const struct plan_row *rows, size_t n, FILE *out)
{
	struct jw w;
	jw_init_file(&w, out, 0);
	jw_open(&w, NULL, '{', JW_INLINE);
	jw_put(&w, "schema", json_integer(1));
	jw_put(&w, "title", jw_str(title));
	jw_put(&w, "calibration_job", cal_id > 0 ? json_integer(cal_id) : json_null());
	jw_put(&w, "noise", jw_str(o->estimate ? "estimate" : "upper"));
	jw_put(&w, "sims", json_integer(o->sims ? o->sims : PLAN_DEFAULT_SIMS));
	jw_u64(&w, "seed", o->seed ? o->seed : PLAN_DEFAULT_SEED);
	jw_put(&w, "target_power", jw_num(g6(PLAN_TARGET_POWER)));
	jw_put(&w, "min_deciding_pairs", json_integer(PLAN_MIN_DECIDING_PAIRS));
	jw_put(&w, "effect_pct", o->effect > 0 ? jw_num(g6(100 * o->effect)) : json_null());
	jw_open(&w, "metrics", '[', JW_ROWS);
	for (size_t i = 0; i < n; i++)
		jw_put(&w, NULL, plan_json(o, &rows[i]));
	jw_close(&w);
	jw_close(&w);
	fputc('\n', out);
	return jw_end(&w);
}

/* Plans every wanted metric of every workload: variant 0 against 1. */
static int plan_report(const struct plan_opts *o, const struct report *r, const char *source, int64_t cal_id)
{
	if (r->n_variants < 2) {
		log_error("%s: a calibration needs two variants (the baseline and its copy); found %zu", source, r->n_variants);
		return 2;
	}
	size_t total = 0;
	for (size_t wi = 0; wi < r->n_workloads; wi++)
		total += r->w[wi].n_metrics;
	struct plan_row *rows = calloc(total ? total : 1, sizeof(*rows));
	if (!rows)
		return 1;
	size_t n = 0;
	int ret = 1;
	for (size_t wi = 0; wi < r->n_workloads; wi++) {
		const struct report_workload *w = &r->w[wi];
		for (size_t k = 0; k < w->n_metrics; k++) {
			if (!wanted(w, &w->m[k]))
				continue;
			int e = plan_row(o, w, &w->m[k], 1, &rows[n]);
			if (e < 0) {
				log_error("%s: planning %s failed: %s", source, w->m[k].name, strerror(-e));
				goto out;
			}
			n++;
		}
	}
	if (n == 0) {
		log_error("%s: no metric to plan: the job names no primary metric and no metric measured has a direction of goodness (set primary = in [job])", source);
		ret = 2;
		goto out;
	}
	char title[300];
	snprintf(title, sizeof(title), "%s", r->title);
	/* metric names are what the calibration's workloads printed (esc.h) */
	FILE *f = esc_stream(stdout);
	if (f && o->json)
		print_json(o, title, cal_id, rows, n, f);
	else if (f)
		print_text(o, title, source, rows, n, f);
	ret = !f || fclose(f) != 0 || out_flush(stdout) < 0 ? 1 : 0;
out:
	free(rows);
	return ret;
}

static int plan_from_store(const struct plan_opts *o, const char *db, int64_t id)
{
	if (cmd_db_present(db, "give the one the calibration used with --db PATH") != 0)
		return 2;
	struct store *st;
	if (store_open(db, &st) < 0)
		return 1;
	struct report *r = NULL;
	int e = report_load(st, id, &r), ret = 1;
	if (e == -ENOENT) {
		log_error("no job %lld in %s", (long long)id, db);
		ret = 2;
	} else if (e < 0) {
		log_error("cannot read job %lld from %s: %s", (long long)id, db, strerror(-e));
	} else if ((e = report_analyze(r)) < 0) {
		log_error("statistics failed: %s", strerror(-e));
	} else {
		char source[512];
		snprintf(source, sizeof(source), "calibration job %lld in %s (kab report %lld --db %s shows it), %zu variants: %s against %s",
			 (long long)id, db, (long long)id, db, r->n_variants, r->variants[0], r->variants[1]);
		ret = plan_report(o, r, source, id);
	}
	report_free(r);
	store_close(st);
	return ret;
}

static int plan_from_csv(const struct plan_opts *o, const char *path, const struct compare_opts *co)
{
	struct diags d = { 0 };
	struct report *r = NULL;
	int e = compare_csv_read(path, co, &r, &d);
	if (e < 0) {
		diags_print(&d, stderr);
		diags_free(&d);
		return e == -ENOMEM ? 1 : 2;
	}
	diags_free(&d);
	int ret = 1;
	if ((e = report_analyze(r)) < 0) {
		log_error("%s: statistics failed: %s", path, strerror(-e));
	} else {
		char source[512];
		snprintf(source, sizeof(source), "recorded runs in %s: %s against %s", path, r->variants[0],
			 r->n_variants > 1 ? r->variants[1] : "(nothing)");
		ret = plan_report(o, r, source, 0);
	}
	report_free(r);
	return ret;
}

/* What kab plan was asked: the plan's options, where it plans from. */
struct plan_args {
	struct plan_opts o;
	const char *db, *from, *csv, *state_dir;
	const char *primary[PRIMARY_MAX];
	struct compare_opts co;
};

static void plan_help(void)
{
	printf(USAGE);
	printf("\nRuns an A/A calibration (--pairs N, default %u, of the job's first variant against itself,\n"
	       "stored as the job NAME%s), then prints for each primary metric its noise, the min_change kab\n"
	       "would use, the smallest change 6, 8, 10, 15 and 20 pairs (and the job's) decide with 80%% power,\n"
	       "and with --effect PCT the pairs that change needs. Power is simulated with kab's own verdict.\n"
	       "--from ID plans from a stored calibration, --csv FILE from A/A runs in kab compare's format.\n",
	       DEFAULT_CAL_PAIRS, CAL_SUFFIX);
}

/* One of kab plan's options, c as getopt_long returned it, with its
 * argument arg; -1 when kab plan goes on, else its exit status. */
static int plan_option(int c, const char *arg, struct plan_args *pa)
{
	struct plan_opts *o = &pa->o;
	uint64_t u;
	switch (c) {
	case 'n':
		if (util_parse_u64(arg, &u) < 0 || u < MIN_CAL_PAIRS || u > PLAN_PAIRS_MAX) {
			fprintf(stderr, "kab plan: --pairs %s: the calibration's pairs are a number from %u to %u (default %u)\n",
				arg, MIN_CAL_PAIRS, PLAN_PAIRS_MAX, DEFAULT_CAL_PAIRS);
			return 2;
		}
		o->cal_pairs = (unsigned)u;
		break;
	case 'e':
		if (parse_effect(arg, &o->effect) < 0) {
			fprintf(stderr, "kab plan: --effect %s: expected a percentage above 0 and below 100, e.g. --effect 5%%\n", arg);
			return 2;
		}
		break;
	case 'd': pa->db = arg; break;
	case 'f':
		if (strcmp(arg, "text") == 0) {
			o->json = false;
		} else if (strcmp(arg, "json") == 0) {
			o->json = true;
		} else {
			fprintf(stderr, "kab plan: unknown format \"%s\" (formats: text, json)\n", arg);
			return 2;
		}
		break;
	case 'F': pa->from = arg; break;
	case 'c': pa->csv = arg; break;
	case 'p':
		if (pa->co.n_primary == PRIMARY_MAX) {
			fprintf(stderr, "kab plan: more than %d primary metrics\n", PRIMARY_MAX);
			return 2;
		}
		pa->primary[pa->co.n_primary++] = arg;
		break;
	case 'b': pa->co.baseline = arg; break;
	case 'S':
		if (util_parse_u64(arg, &u) < 0 || u < 100 || u > 1000000) {
			fprintf(stderr, "kab plan: --sims %s: a number from 100 to 1000000 (default %u)\n", arg, PLAN_DEFAULT_SIMS);
			return 2;
		}
		o->sims = (unsigned)u;
		break;
	case 's':
		if (util_parse_u64(arg, &u) < 0 || u == 0) {
			fprintf(stderr, "kab plan: --seed %s: a positive number\n", arg);
			return 2;
		}
		o->seed = u;
		break;
	case 'D': pa->state_dir = arg; break;
	case 'N':
		if (strcmp(arg, "upper") == 0) {
			o->estimate = false;
		} else if (strcmp(arg, "estimate") == 0) {
			o->estimate = true;
		} else {
			fprintf(stderr, "kab plan: --noise %s: upper (the default: its 80%% upper confidence bound) or estimate\n", arg);
			return 2;
		}
		break;
	case 'q': log_quiet = true; break;
	case 'h': plan_help(); return 0;
	default: fprintf(stderr, USAGE); return 2;
	}
	return -1;
}

const struct option cmd_plan_options[] = {
	{ "pairs", required_argument, NULL, 'n' },
	{ "effect", required_argument, NULL, 'e' },
	{ "db", required_argument, NULL, 'd' },
	{ "format", required_argument, NULL, 'f' },
	{ "from", required_argument, NULL, 'F' },
	{ "csv", required_argument, NULL, 'c' },
	{ "primary", required_argument, NULL, 'p' },
	{ "baseline", required_argument, NULL, 'b' },
	{ "sims", required_argument, NULL, 'S' },
	{ "seed", required_argument, NULL, 's' },
	{ "state-dir", required_argument, NULL, 'D' },
	{ "noise", required_argument, NULL, 'N' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int cmd_plan(int argc, char **argv)
{
	struct plan_args pa = { .o = { .cal_pairs = DEFAULT_CAL_PAIRS } };
	pa.co.primary = pa.primary;
	int c, r;
	while ((c = getopt_long(argc, argv, "n:e:d:f:qh", cmd_plan_options, NULL)) != -1)
		if ((r = plan_option(c, optarg, &pa)) >= 0)
			return r;
	int sources = (pa.from != NULL) + (pa.csv != NULL);
	if (sources > 1 || (sources == 1 && optind != argc) || (sources == 0 && optind != argc - 1)) {
		fprintf(stderr, USAGE);
		return 2;
	}
	if (pa.csv)
		return plan_from_csv(&pa.o, pa.csv, &pa.co);
	char db_buf[4096];
	if (!(pa.db = cmd_db(pa.db, pa.state_dir, db_buf, sizeof(db_buf))))
		return 2;
	int64_t id;
	if (pa.from) {
		if (util_parse_i64(pa.from, &id) < 0 || id <= 0) {
			fprintf(stderr, "kab plan: --from %s: not a job id (a positive number)\n", pa.from);
			return 2;
		}
		return plan_from_store(&pa.o, pa.db, id);
	}
	r = run_calibration(argv[optind], pa.db, pa.state_dir, pa.o.cal_pairs, &pa.o.job_pairs, &id);
	if (r != 0)
		return r;
	return plan_from_store(&pa.o, pa.db, id);
}
