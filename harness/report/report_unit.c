/* Human units for the text, Markdown and cover-letter tables: a row whose
 * unit is a time below the second (ns, us, ms) or a size (bytes, KiB)
 * shows "206 ms" and "1.50 GiB", not 206388029 and 1610612736. One unit
 * a row, picked from the larger of Before and After, so the two and the
 * Delta read side by side. Seconds stay seconds; other units (pages,
 * ops/s) keep the raw number and the decimals their input had. The Delta
 * cell is formatted here too, in its row's unit. JSON and CSV print raw
 * numbers and never come here. */
#include "harness/report/report_priv.h"
#include "harness/base/util.h"

#include <math.h>
#include <string.h>

struct step {
	const char *utf8, *ascii;
	double factor;  /* in the family's smallest unit */
};

static const struct step time_steps[] = {
	{ " ns", " ns", 1 }, { " \xc2\xb5s", " us", 1e3 }, { " ms", " ms", 1e6 }, { " s", " s", 1e9 },
};
static const struct step size_steps[] = {
	{ " B", " B", 1 },
	{ " KiB", " KiB", 1024.0 },
	{ " MiB", " MiB", 1024.0 * 1024 },
	{ " GiB", " GiB", 1024.0 * 1024 * 1024 },
	{ " TiB", " TiB", 1024.0 * 1024 * 1024 * 1024 },
};

/* A unit kab scales: its family and its place in it; false for others. */
static bool family_of(const char *unit, const struct step **ret_steps, size_t *ret_n, size_t *ret_at)
{
	static const struct {
		const char *unit;
		bool time;
		size_t at;
	} known[] = {
		{ "ns", true, 0 }, { "us", true, 1 }, { "\xc2\xb5s", true, 1 }, { "ms", true, 2 },
		{ "bytes", false, 0 }, { "B", false, 0 }, { "KiB", false, 1 }, { "kB", false, 1 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (strcmp(unit, known[i].unit) == 0) {
			*ret_steps = known[i].time ? time_steps : size_steps;
			*ret_n = known[i].time ? ARRAY_SIZE(time_steps) : ARRAY_SIZE(size_steps);
			*ret_at = known[i].at;
			return true;
		}
	return false;
}

/* Three significant digits for the smaller of the row's numbers. */
static int decimals_for(double shown)
{
	if (!(shown > 0) || shown >= 100)
		return 0;
	if (shown >= 10)
		return 1;
	if (shown >= 1)
		return 2;
	int d = (int)-floor(log10(shown)) + 2;
	return d > REPORT_DECIMALS_MAX ? REPORT_DECIMALS_MAX : d;
}

void report_scale_pick(const char *unit, double a, double b, int decimals, bool utf8, struct report_scale *ret)
{
	struct report_scale s = { .div = 1, .suffix = "", .decimals = decimals };
	const struct step *steps;
	size_t n, at;
	double big = fmax(isfinite(a) ? fabs(a) : 0, isfinite(b) ? fabs(b) : 0);
	if (!unit || !family_of(unit, &steps, &n, &at) || big == 0) {
		*ret = s;
		return;
	}
	/* the largest unit in which the larger number is at least 1 */
	size_t k = 0;
	double base = big * steps[at].factor;
	while (k + 1 < n && base >= steps[k + 1].factor)
		k++;
	s.div = steps[k].factor / steps[at].factor;
	s.suffix = utf8 ? steps[k].utf8 : steps[k].ascii;
	if (k != at) {
		double small = big;
		if (isfinite(a) && a != 0 && fabs(a) < small)
			small = fabs(a);
		if (isfinite(b) && b != 0 && fabs(b) < small)
			small = fabs(b);
		s.decimals = decimals_for(small / s.div);
	}
	*ret = s;
}

void report_scale_delta(const struct report_scale *s, double abs, struct report_scale *ret)
{
	*ret = *s;
	if (!s->suffix[0] || !isfinite(abs) || abs == 0)
		return;
	/* a change smaller than the row's last digit still shows, to two
	 * significant digits */
	int d = decimals_for(fabs(abs) / s->div) - 1;
	if (d > ret->decimals)
		ret->decimals = d;
}

void report_row_scale(const struct report_metric *m, size_t v, bool utf8, struct report_scale *ret)
{
	report_scale_pick(m->info.unit, m->desc[0].mean, m->desc[v].mean, m->decimals, utf8, ret);
}

void report_fmt_scaled(double v, const struct report_scale *s, char *buf, size_t len)
{
	if (!s->suffix[0] || !isfinite(v)) {
		report_fmt_num(v, s->decimals, buf, len);
		return;
	}
	char num[64];
	report_fmt_num(v / s->div, s->decimals, num, sizeof(num));
	if (strspn(num, "0.") == strlen(num))
		snprintf(buf, len, "0");
	else
		snprintf(buf, len, "%s%s", num, s->suffix);
}

void report_fmt_delta(double abs, double pct, int decimals, enum direction dir, char *buf, size_t len)
{
	struct report_scale s = { .div = 1, .suffix = "", .decimals = decimals };
	report_fmt_delta_scaled(abs, pct, &s, dir, buf, len);
}

void report_fmt_delta_scaled(double abs, double pct, const struct report_scale *s, enum direction dir, char *buf, size_t len)
{
	if (!isfinite(abs)) {
		snprintf(buf, len, "-");
		return;
	}
	char num[64], p[32];
	struct report_scale ds;
	report_scale_delta(s, abs, &ds);
	report_fmt_scaled(abs, &ds, num, sizeof(num));
	report_fmt_pct(pct, p, sizeof(p));
	bool zero = strspn(num, "0.") == strlen(num);
	bool plus = !zero && abs > 0 && dir != DIRECTION_LOWER;
	snprintf(buf, len, "%s%s (%s)", plus ? "+" : "", num, p);
}

void report_scaled_label(const struct report_metric *m, const struct report_scale *s, char *buf, size_t len)
{
	char tail[METRIC_UNIT_MAX + 4];
	snprintf(buf, len, "%s", m->info.label);
	if (!s->suffix[0] || !m->info.unit[0])
		return;
	snprintf(tail, sizeof(tail), " (%s)", m->info.unit);
	size_t n = strlen(buf), t = strlen(tail);
	if (n > t && strcmp(buf + n - t, tail) == 0)
		buf[n - t] = 0;
}
