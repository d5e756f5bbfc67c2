/* JSON out through jansson (json.h). Jansson makes the values and writes
 * every string, key and integer; this file writes the brackets and
 * separators around them, and reals in their shortest form, which
 * jansson 2.14 does not have (it writes 0.1 as 0.10000000000000001). */
#include "harness/base/json.h"
#include "harness/base/esc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

json_t *jw_str_n(const char *s, size_t len)
{
	if (esc_utf8_valid(s, len, NULL))
		return json_stringn_nocheck(s, len);
	struct strbuf sb = { 0 };
	for (size_t i = 0; i < len;) {
		size_t n = esc_utf8_len(s + i, len - i);
		if (n == 0) {
			sb_append(&sb, replacement, 3);
			i++;
		} else {
			sb_append(&sb, s + i, n);
			i += n;
		}
	}
	json_t *v = sb.buf ? json_stringn_nocheck(sb.buf, sb.len) : NULL;
	sb_free(&sb);
	return v;
}

json_t *jw_str(const char *s)
{
	return s ? jw_str_n(s, strlen(s)) : json_null();
}

json_t *jw_str_opt(const char *s)
{
	return s && s[0] ? jw_str(s) : json_null();
}

json_t *jw_num(double v)
{
	if (!isfinite(v))
		return json_null();
	if (v == floor(v) && fabs(v) < 1e15)
		return json_integer((json_int_t)v);
	return json_real(v);
}

json_t *jw_time(double t)
{
	if (t <= 0)
		return json_null();
	char buf[64];
	util_iso_time(t, buf, sizeof(buf));
	return jw_str(buf);
}

int jw_set(json_t *obj, const char *key, json_t *v)
{
	size_t len = strlen(key);
	if (esc_utf8_valid(key, len, NULL))
		return json_object_set_new_nocheck(obj, key, v) == 0 ? 0 : -ENOMEM;
	json_t *k = jw_str_n(key, len);
	int r = k && json_object_set_new_nocheck(obj, json_string_value(k), v) == 0 ? 0 : -ENOMEM;
	if (!k)
		json_decref(v);
	json_decref(k);
	return r;
}

void jw_num_text(double v, char *buf, size_t len)
{
	if (!isfinite(v)) {
		snprintf(buf, len, "null");
		return;
	}
	if (v == floor(v) && fabs(v) < 1e15) {
		snprintf(buf, len, "%.0f", v == 0 ? 0.0 : v);
		return;
	}
	/* the shortest form that reads back as v: a double carries at least
	 * 15 significant digits, so when some form of 15 digits or fewer
	 * round-trips, %.15g (which drops trailing zeros) prints exactly that
	 * one; otherwise 16 or 17 digits do. Three tries instead of seventeen:
	 * this runs for every number of every JSON report kabd serves. */
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* ---- the writer ---- */

static void put(struct jw *w, const char *s, size_t n)
{
	if (w->sb) {
		int r = sb_append(w->sb, s, n);
		if (r < 0 && !w->err)
			w->err = r;
	} else if (n) {
		fwrite(s, 1, n, w->out);
	}
}

static void put_str(struct jw *w, const char *s)
{
	put(w, s, strlen(s));
}

/* What jansson writes of a scalar. DEL is the one character it leaves as
 * it is that a terminal acts on: it goes out as \u007f, so the text stays
 * JSON after esc_stream (which would show it as \x7f), and it can only
 * be inside a string. */
static int dump_cb(const char *buf, size_t size, void *ctx)
{
	struct jw *w = ctx;
	size_t run = 0;
	for (size_t i = 0; i < size; i++) {
		if (buf[i] != 0x7f)
			continue;
		put(w, buf + run, i - run);
		put_str(w, "\\u007f");
		run = i + 1;
	}
	put(w, buf + run, size - run);
	return 0;
}

static void scalar(struct jw *w, const json_t *v)
{
	if (json_dump_callback(v, dump_cb, w, JSON_ENCODE_ANY) < 0 && !w->err)
		w->err = -EINVAL;
}

static void key_text(struct jw *w, const char *key)
{
	json_t *k = json_string_nocheck(key);
	if (!k) {
		if (!w->err)
			w->err = -ENOMEM;
		put_str(w, "\"\"");
	} else {
		scalar(w, k);
		json_decref(k);
	}
	put_str(w, w->flags & JW_COMPACT ? ":" : ": ");
}

static void value(struct jw *w, const json_t *v)
{
	const char *sep = w->flags & JW_COMPACT ? "," : ", ";
	size_t i = 0;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		put_str(w, "{");
		for (void *it = json_object_iter((json_t *)v); it; it = json_object_iter_next((json_t *)v, it)) {
			if (i++)
				put_str(w, sep);
			key_text(w, json_object_iter_key(it));
			value(w, json_object_iter_value(it));
		}
		put_str(w, "}");
		break;
	case JSON_ARRAY:
		put_str(w, "[");
		for (; i < json_array_size(v); i++) {
			if (i)
				put_str(w, sep);
			value(w, json_array_get(v, i));
		}
		put_str(w, "]");
		break;
	case JSON_REAL: {
		char buf[40];
		jw_num_text(json_real_value(v), buf, sizeof(buf));
		put_str(w, buf);
		break;
	}
	default: scalar(w, v);
	}
}

static void init(struct jw *w, struct strbuf *sb, FILE *out, unsigned flags)
{
	*w = (struct jw){ .sb = sb, .out = out, .flags = flags };
}

void jw_init_sb(struct jw *w, struct strbuf *sb, unsigned flags)
{
	init(w, sb, NULL, flags);
}

void jw_init_file(struct jw *w, FILE *out, unsigned flags)
{
	init(w, NULL, out, flags);
}

static void fail(struct jw *w, int err)
{
	if (!w->err)
		w->err = err;
}

/* The separator, line break and key before the next member. */
static void member(struct jw *w, const char *key)
{
	if (w->depth == 0) {
		if (key)
			fail(w, -EINVAL);
		return;
	}
	struct jw_level *l = &w->lv[w->depth - 1];
	bool line = l->layout != JW_INLINE || l->brk;
	if (l->n++)
		put_str(w, line || (w->flags & JW_COMPACT) ? "," : ", ");
	l->brk = false;
	if (line) {
		put_str(w, "\n");
		for (unsigned i = 0; i < l->pad; i++)
			put_str(w, " ");
	}
	if ((l->close == '}') != (key != NULL))
		fail(w, -EINVAL);
	if (key)
		key_text(w, key);
}

void jw_open(struct jw *w, const char *key, char kind, enum jw_layout layout)
{
	member(w, key);
	if (w->depth == JW_DEPTH) {
		fail(w, -EINVAL);
		return;
	}
	unsigned pad = w->depth ? w->lv[w->depth - 1].pad : 0;
	w->lv[w->depth++] = (struct jw_level){
		.close = kind == '{' ? '}' : ']',
		.layout = layout,
		.pad = layout == JW_INLINE ? pad : pad + 2,
	};
	put_str(w, kind == '{' ? "{" : "[");
}

void jw_put(struct jw *w, const char *key, json_t *v)
{
	member(w, key);
	if (!v) {
		fail(w, -ENOMEM);
		put_str(w, "null");
		return;
	}
	value(w, v);
	json_decref(v);
}

void jw_fixed(struct jw *w, const char *key, double v, int decimals)
{
	member(w, key);
	if (!isfinite(v)) {
		put_str(w, "null");
		return;
	}
	char buf[64];
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	put_str(w, buf);
}

void jw_put_members(struct jw *w, json_t *obj)
{
	if (!obj) {
		fail(w, -ENOMEM);
		return;
	}
	if (!json_is_object(obj))
		fail(w, -EINVAL);
	for (void *it = json_object_iter(obj); it; it = json_object_iter_next(obj, it)) {
		member(w, json_object_iter_key(it));
		value(w, json_object_iter_value(it));
	}
	json_decref(obj);
}

void jw_break(struct jw *w)
{
	if (w->depth == 0 || w->lv[w->depth - 1].layout != JW_INLINE) {
		fail(w, -EINVAL);
		return;
	}
	struct jw_level *l = &w->lv[w->depth - 1];
	if (!l->broken)
		l->pad += 2;
	l->broken = l->brk = true;
}

void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	member(w, key);
	char buf[32];
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	put_str(w, buf);
}

void jw_close(struct jw *w)
{
	if (w->depth == 0) {
		fail(w, -EINVAL);
		return;
	}
	struct jw_level *l = &w->lv[--w->depth];
	if (l->layout == JW_ROWS || (l->layout == JW_LINES && l->n)) {
		put_str(w, "\n");
		for (unsigned i = 2; i < l->pad; i++)
			put_str(w, " ");
	}
	put(w, &l->close, 1);
}

int jw_end(struct jw *w)
{
	if (w->depth)
		fail(w, -EINVAL);
	if (w->out && ferror(w->out))
		fail(w, -EIO);
	return w->err;
}

int jw_dump_sb(struct strbuf *sb, json_t *v, unsigned flags)
{
	struct jw w;
	jw_init_sb(&w, sb, flags);
	jw_put(&w, NULL, v);
	return jw_end(&w);
}

int jw_dump_file(FILE *out, json_t *v, unsigned flags)
{
	struct jw w;
	jw_init_file(&w, out, flags);
	jw_put(&w, NULL, v);
	return jw_end(&w);
}
