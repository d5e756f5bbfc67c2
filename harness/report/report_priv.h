/* Internal to the report (report*.c) and its tests: number formatting
 * shared by every format, and the renderers. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "harness/report/report.h"

#define REPORT_DECIMALS_MAX 6
#define REPORT_NOISY_COV_PCT 3.5

/* A value with the metric's decimals: "28238.63", "55428953"; "-" for NAN. */
void report_fmt_num(double v, int decimals, char *buf, size_t len);
/* "+26.9%", "-68.2%", "0.0%"; "n/a" for NAN. */
void report_fmt_pct(double pct, char *buf, size_t len);
/* How a row's numbers are shown (report_unit.c): v / div with decimals
 * and a unit suffix (" ms", " GiB"), or, with suffix "", the raw number
 * with the metric's decimals. */
struct report_scale {
	double div;
	const char *suffix;
	int decimals;
};
/* The scale for a row of unit whose Before and After are a and b: time
 * below the second in ns, us, ms or s; sizes in B, KiB, MiB, GiB, TiB;
 * other units raw. decimals: the raw number's, kept while the unit is. */
void report_scale_pick(const char *unit, double a, double b, int decimals, bool utf8, struct report_scale *ret);
/* The scale of a row's Delta: its unit, and two significant digits when
 * the row's decimals would round it away (121 ms, 120 ms, -0.42 ms). */
void report_scale_delta(const struct report_scale *s, double abs, struct report_scale *ret);
/* The same for variant v of a metric against variant 0. */
void report_row_scale(const struct report_metric *m, size_t v, bool utf8, struct report_scale *ret);
/* "206 ms", "1.50 µs" ("us" in ASCII), "0"; "-" for NAN. */
void report_fmt_scaled(double v, const struct report_scale *s, char *buf, size_t len);
/* The metric's label without a " (UNIT)" its cells now carry:
 * "avg latency (ms)" -> "avg latency" when the row shows " ms". */
void report_scaled_label(const struct report_metric *m, const struct report_scale *s, char *buf, size_t len);
/* Delta (abs / %) as the seeds print it: "+7595.34 (+26.9%)",
 * "-37807256 (-68.2%)". An increase carries its '+' unless it is a
 * regression of a lower-is-better metric ("7396670 (+14.0%)"). */
void report_fmt_delta(double abs, double pct, int decimals, enum direction dir, char *buf, size_t len);
/* report_fmt_delta in a row's scale: "-26.4 ms (-12.8%)". */
void report_fmt_delta_scaled(double abs, double pct, const struct report_scale *s, enum direction dir, char *buf, size_t len);
/* "[+25.1, +28.6]"; "-" when either end is NAN. */
void report_fmt_ci(double lo, double hi, char *buf, size_t len);
/* "0.002", "<0.001", "1.000"; "-" for NAN. */
void report_fmt_p(double p, char *buf, size_t len);

/* Fraction digits a number was written with ("28238.63": 2, "1.5e3": 0). */
int report_decimals_text(const char *num);
/* For stored values: 0 when all are whole, else 2, more for small values
 * so that three significant digits show; at most REPORT_DECIMALS_MAX. */
int report_decimals_auto(const double *v, size_t n);

/* CSV: quoted when it holds a comma, quote or line break. */
void report_csv_field(FILE *out, const char *s);

/* Whether LC_ALL, else LC_CTYPE, else LANG names UTF-8. */
bool report_utf8_locale(void);
/* Direction arrows: ↑ ↓ · (ASCII ^ v .). */
const char *report_dir_arrow(enum direction d, bool utf8);
/* Display columns of a UTF-8 string (every code point one column). */
size_t report_width(const char *s);
/* s, then spaces up to width columns. */
void report_pad(FILE *out, const char *s, size_t width);

/* The "n" of a row: "10", or "9/10" when the sides differ. */
void report_fmt_n(const struct report_metric *m, size_t v, char *buf, size_t len);

/* Renderers (report_text.c, report_cover.c, report_json.c). */
int report_render_text(const struct report *r, bool utf8, FILE *out);
int report_render_markdown(const struct report *r, bool utf8, FILE *out);
int report_render_cover_letter(const struct report *r, FILE *out);
int report_render_json(const struct report *r, FILE *out);
int report_render_csv(const struct report *r, FILE *out);

/* Shared by the renderers: header lines of a stored workload. */
void report_fmt_mib(uint64_t bytes, char *buf, size_t len);
/* "Warm-up: 1 uncounted run of A before the first pair, ..." or "Warm-up:
 * off (warmup = 0)" for a stored workload, from its runs (report_text.c). */
const char *report_warmup_words(const struct report *r, const struct report_workload *w, char *buf, size_t len);

/* A job that boots kernels (report_boots.c): the Boots lines, each
 * variant's kernel, and the boot each run ran in, with a warning for
 * every run that is not on its variant's kernel or boot. */
struct store;
/* What the report keeps of a run: a job at the run budget has 50,000, and
 * a struct store_run each (15.7 KB) would be 785 MB; report_store.c reads
 * the runs a row at a time into these. */
struct report_run {
	int64_t id, step_id;
	int pair, variant, workload;
	enum run_status status;
	double started, finished;
	char boot_id[64];
	char kernel_release[128];
	int64_t marker; /* kexec_marker() of its command line; -1: none, or the line was cut */
	char *reason;   /* a run that is not ok: why ("" for no reason); NULL for an ok one */
};
int report_load_boots(struct store *st, struct report *r, const struct report_run *runs, size_t nr);
void report_boots_free(struct report *r);
/* The order kernels were booted in, as a cover letter says it: "ABBA". */
const char *report_order_words(const char *order);
