/* Parsers for the kernel's counter files: /proc/vmstat, /proc/interrupts,
 * PSI files and memcg stat files. Bounded cursors over a caller's buffer,
 * whole keys, strict unsigned numbers, no allocation: the sampler runs
 * them ten times a second. A parser may already have called fn for the
 * lines before a malformed one when it returns -EINVAL. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "harness/sampler/sampler.h"

static bool is_blank(char c) {
	return c == ' ' || c == '\t';
}

static bool is_digit(char c) {
	return c >= '0' && c <= '9';
}

/* Printable, not blank: what a key may be made of. */
static bool is_key_char(char c) {
	return (unsigned char)c > ' ' && (unsigned char)c < 0x7f;
}

static const char *skip_blanks(const char *p, const char *end) {
	while (p < end && is_blank(*p))
		p++;
	return p;
}

static const char *line_end(const char *p, const char *end) {
	const char *eol = memchr(p, '\n', (size_t)(end - p));
	return eol ? eol : end;
}

/* Digits at *pp up to the first non-digit; at least one digit. */
static int parse_digits(const char **pp, const char *end, uint64_t *ret) {
	const char *p = *pp;
	uint64_t v = 0;

	if (p >= end || !is_digit(*p))
		return -EINVAL;
	for (; p < end && is_digit(*p); p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*pp = p;
	*ret = v;
	return 0;
}

/* A number that is a whole token: followed by a blank or the line end. */
static int parse_token_u64(const char **pp, const char *eol, uint64_t *ret) {
	const char *p = *pp;
	uint64_t v;
	int r = parse_digits(&p, eol, &v);

	if (r < 0)
		return r;
	if (p < eol && !is_blank(*p))
		return -EINVAL;
	*pp = p;
	*ret = v;
	return 0;
}

static int count_result(size_t n) {
	return n > INT_MAX ? INT_MAX : (int)n;
}

int procparse_kv(const char *buf, size_t len, procparse_fn fn, void *ctx) {
	const char *p = buf, *end = buf + len;
	size_t n = 0;

	while (p < end) {
		const char *eol = line_end(p, end);
		const char *key = p;
		uint64_t v;
		int r;

		while (p < eol && is_key_char(*p))
			p++;
		if (p == key || p == eol || !is_blank(*p))
			return -EINVAL;
		size_t key_len = (size_t)(p - key);
		p = skip_blanks(p, eol);
		r = parse_digits(&p, eol, &v);
		if (r < 0)
			return r;
		if (p != eol)
			return -EINVAL;
		if (fn)
			fn(ctx, key, key_len, v);
		n++;
		if (eol == end)
			break;
		p = eol + 1;
	}
	return count_result(n);
}

/* "CPU<n>" header tokens; *pp advanced past the token. */
static int parse_cpu_token(const char **pp, const char *eol, unsigned *ret) {
	const char *p = skip_blanks(*pp, eol);
	uint64_t v;
	int r;

	if (eol - p < 3 || memcmp(p, "CPU", 3) != 0)
		return -EINVAL;
	p += 3;
	r = parse_token_u64(&p, eol, &v);
	if (r < 0)
		return r;
	if (v > UINT_MAX)
		return -ERANGE;
	*pp = p;
	*ret = (unsigned)v;
	return 0;
}

static int parse_interrupts_header(const char *p, const char *eol, size_t *ret_ncpu) {
	size_t n = 0;

	for (;;) {
		unsigned cpu;
		int r;

		p = skip_blanks(p, eol);
		if (p == eol)
			break;
		r = parse_cpu_token(&p, eol, &cpu);
		if (r < 0)
			return r;
		n++;
	}
	if (n == 0)
		return -EINVAL;
	*ret_ncpu = n;
	return 0;
}

/* One row after the key's colon. Per-CPU rows have one column per CPU in
 * the header, then free text (chip, hwirq, name); global rows (ERR, MIS)
 * have a single number and nothing after it. */
static int parse_interrupts_row(const char *p, const char *eol, const char *hdr, const char *hdr_end,
				size_t ncpu, const char *key, size_t key_len,
				procparse_fn fn, procparse_cpu_fn per_cpu_fn, void *ctx) {
	uint64_t v, sum;
	unsigned cpu = 0;
	int r;

	p = skip_blanks(p, eol);
	r = parse_token_u64(&p, eol, &v);
	if (r < 0)
		return r;
	if (skip_blanks(p, eol) == eol) {
		if (fn)
			fn(ctx, key, key_len, v);
		return 0;
	}

	sum = v;
	for (size_t i = 0;; i++) {
		if (per_cpu_fn) {
			/* the header was validated, so this cannot fail */
			r = parse_cpu_token(&hdr, hdr_end, &cpu);
			if (r < 0)
				return r;
			per_cpu_fn(ctx, key, key_len, cpu, v);
		}
		if (i + 1 == ncpu)
			break;
		p = skip_blanks(p, eol);
		r = parse_token_u64(&p, eol, &v);
		if (r < 0)
			return r;
		if (__builtin_add_overflow(sum, v, &sum))
			return -ERANGE;
	}
	if (fn)
		fn(ctx, key, key_len, sum);
	return 0;
}

int procparse_interrupts(const char *buf, size_t len, procparse_fn fn, procparse_cpu_fn per_cpu_fn, void *ctx) {
	const char *p = buf, *end = buf + len;
	const char *hdr, *hdr_end;
	size_t ncpu, n = 0;
	int r;

	if (len == 0)
		return -EINVAL;
	hdr = p;
	hdr_end = line_end(p, end);
	r = parse_interrupts_header(hdr, hdr_end, &ncpu);
	if (r < 0)
		return r;
	if (hdr_end == end)
		return 0;
	p = hdr_end + 1;

	while (p < end) {
		const char *eol = line_end(p, end);
		const char *key;

		p = skip_blanks(p, eol);
		key = p;
		while (p < eol && is_key_char(*p) && *p != ':')
			p++;
		if (p == key || p == eol || *p != ':')
			return -EINVAL;
		r = parse_interrupts_row(p + 1, eol, hdr, hdr_end, ncpu, key, (size_t)(p - key),
					 fn, per_cpu_fn, ctx);
		if (r < 0)
			return r;
		n++;
		if (eol == end)
			break;
		p = eol + 1;
	}
	return count_result(n);
}

static bool expect(const char **pp, const char *eol, const char *word) {
	size_t n = strlen(word);

	if ((size_t)(eol - *pp) < n || memcmp(*pp, word, n) != 0)
		return false;
	*pp += n;
	return true;
}

/* "1.52": digits, a dot, digits. The averages are not reported (they are
 * not integers); they are checked so a changed format is noticed. */
static int check_decimal(const char **pp, const char *eol) {
	const char *p = *pp;
	uint64_t ignored;
	int r;

	r = parse_digits(&p, eol, &ignored);
	if (r < 0)
		return r;
	if (p >= eol || *p != '.')
		return -EINVAL;
	p++;
	r = parse_digits(&p, eol, &ignored);
	if (r < 0)
		return r;
	*pp = p;
	return 0;
}

int procparse_pressure(const char *buf, size_t len, procparse_fn fn, void *ctx) {
	static const char *const avgs[] = { " avg10=", " avg60=", " avg300=" };
	const char *p = buf, *end = buf + len;
	size_t n = 0;

	while (p < end) {
		const char *eol = line_end(p, end);
		const char *key;
		uint64_t total;
		int r;

		if (expect(&p, eol, "some"))
			key = "some_total";
		else if (expect(&p, eol, "full"))
			key = "full_total";
		else
			return -EINVAL;
		for (size_t i = 0; i < sizeof(avgs) / sizeof(avgs[0]); i++) {
			if (!expect(&p, eol, avgs[i]))
				return -EINVAL;
			r = check_decimal(&p, eol);
			if (r < 0)
				return r;
		}
		if (!expect(&p, eol, " total="))
			return -EINVAL;
		r = parse_digits(&p, eol, &total);
		if (r < 0)
			return r;
		if (p != eol)
			return -EINVAL;
		if (fn)
			fn(ctx, key, strlen(key), total);
		n++;
		if (eol == end)
			break;
		p = eol + 1;
	}
	return count_result(n);
}
