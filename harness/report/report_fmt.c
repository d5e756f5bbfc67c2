/* Number formatting shared by every report format. The seeds print counts
 * as integers and rates with two decimals: a value keeps the decimals its
 * input had (report_decimals_text for CSV files, report_decimals_auto for
 * stored values), and a percentage has one. The bottom of the report's
 * formatting: it calls no other report file, and report_unit.c (units,
 * and the Delta that uses them) builds on it. */
#include "harness/report/report_priv.h"
#include "harness/base/config.h"
#include "harness/base/util.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* "-0" and "-0.00" read as a sign where there is none. */
static void drop_negative_zero(char *buf)
{
	if (buf[0] != '-')
		return;
	for (const char *p = buf + 1; *p; p++)
		if (*p != '0' && *p != '.')
			return;
	memmove(buf, buf + 1, strlen(buf));
}

void report_fmt_num(double v, int decimals, char *buf, size_t len)
{
	if (!isfinite(v)) {
		snprintf(buf, len, "-");
		return;
	}
	if (decimals < 0)
		decimals = 0;
	if (decimals > REPORT_DECIMALS_MAX)
		decimals = REPORT_DECIMALS_MAX;
	snprintf(buf, len, "%.*f", decimals, v);
	drop_negative_zero(buf);
}

void report_fmt_pct(double pct, char *buf, size_t len)
{
	if (!isfinite(pct)) {
		snprintf(buf, len, "n/a");
		return;
	}
	char num[64];
	snprintf(num, sizeof(num), "%+.1f", pct);
	if (strcmp(num, "+0.0") == 0 || strcmp(num, "-0.0") == 0)
		snprintf(buf, len, "0.0%%");
	else
		snprintf(buf, len, "%s%%", num);
}

void report_fmt_ci(double lo, double hi, char *buf, size_t len)
{
	if (!isfinite(lo) || !isfinite(hi)) {
		snprintf(buf, len, "-");
		return;
	}
	char a[32], b[32];
	snprintf(a, sizeof(a), "%+.1f", lo);
	snprintf(b, sizeof(b), "%+.1f", hi);
	if (strcmp(a, "-0.0") == 0)
		snprintf(a, sizeof(a), "+0.0");
	if (strcmp(b, "-0.0") == 0)
		snprintf(b, sizeof(b), "+0.0");
	snprintf(buf, len, "[%s, %s]", a, b);
}

void report_fmt_p(double p, char *buf, size_t len)
{
	if (!isfinite(p))
		snprintf(buf, len, "-");
	else if (p < 0.001)
		snprintf(buf, len, "<0.001");
	else
		snprintf(buf, len, "%.3f", p);
}

int report_decimals_text(const char *num)
{
	const char *p = num;
	int frac = 0;
	long exp = 0;
	while (*p && *p != '.' && *p != 'e' && *p != 'E')
		p++;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			frac++;
	if (*p == 'e' || *p == 'E') {
		char *end;
		exp = strtol(p + 1, &end, 10);
		if (exp > 100 || exp < -100)
			exp = exp > 0 ? 100 : -100;
	}
	long d = frac - exp;
	if (d < 0)
		d = 0;
	return d > REPORT_DECIMALS_MAX ? REPORT_DECIMALS_MAX : (int)d;
}

int report_decimals_auto(const double *v, size_t n)
{
	bool whole = true;
	double smallest = INFINITY;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(v[i]))
			continue;
		if (v[i] != floor(v[i]) || fabs(v[i]) >= 1e15)
			whole = false;
		if (v[i] != 0 && fabs(v[i]) < smallest)
			smallest = fabs(v[i]);
	}
	if (whole)
		return 0;
	int d = 2;
	if (smallest < 1) {
		/* three significant digits: 0.0123 needs 4 */
		int lead = (int)-floor(log10(smallest));
		d = lead + 2;
	}
	return d > REPORT_DECIMALS_MAX ? REPORT_DECIMALS_MAX : d;
}

void report_csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

bool report_utf8_locale(void)
{
	return config_bool(CONFIG_UTF8);
}

const char *report_dir_arrow(enum direction d, bool utf8)
{
	switch (d) {
	case DIRECTION_HIGHER: return utf8 ? "\xe2\x86\x91" : "^";
	case DIRECTION_LOWER: return utf8 ? "\xe2\x86\x93" : "v";
	case DIRECTION_NEUTRAL:
	case DIRECTION_UNSET: break;
	}
	return utf8 ? "\xc2\xb7" : ".";
}

size_t report_width(const char *s)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += (*p & 0xc0) != 0x80;
	return n;
}

void report_pad(FILE *out, const char *s, size_t width)
{
	fputs(s, out);
	for (size_t w = report_width(s); w < width; w++)
		fputc(' ', out);
}

void report_fmt_mib(uint64_t bytes, char *buf, size_t len)
{
	snprintf(buf, len, "%lluM", (unsigned long long)(bytes >> 20));
}
