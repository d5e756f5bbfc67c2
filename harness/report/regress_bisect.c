/* A regression's bisection as its title, JSON, text and Atom entry show
 * it (regress_priv.h): the bisection's row, and once it ended the report
 * harness/daemon/bisect_life.c wrote (doc/bisect.md). The report is read
 * as data: a member that is missing or of another type reads as unknown. */
#include "harness/report/regress_priv.h"

#include <math.h>
#include <string.h>

static void text_of(json_t *o, const char *key, char *buf, size_t len)
{
	const char *s = json_string_value(json_object_get(o, key));
	snprintf(buf, len, "%s", s ? s : "");
}

static double num_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static long long whole_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

static void effect_of(json_t *o, struct rb_effect *ret)
{
	ret->est = num_of(o, "estimate_pct");
	ret->lo = num_of(o, "ci_lo_pct");
	ret->hi = num_of(o, "ci_hi_pct");
	ret->pairs = whole_of(o, "pairs");
	text_of(o, "decision", ret->decision, sizeof(ret->decision));
	text_of(o, "reason", ret->reason, sizeof(ret->reason));
}

static void control_of(json_t *o, struct rb_control *ret)
{
	*ret = (struct rb_control){ .asked = json_is_object(o) };
	if (!ret->asked)
		return;
	effect_of(o, &ret->e);
	text_of(o, "base", ret->base, sizeof(ret->base));
	text_of(o, "note", ret->note, sizeof(ret->note));
}

void rb_read(const struct store_bisect *b, struct rb *ret)
{
	*ret = (struct rb){ .b = b };
	json_t *rep = b && b->report ? json_loads(b->report, 0, NULL) : NULL;
	if (!json_is_object(rep)) {
		json_decref(rep);
		return;
	}
	ret->report = true;
	ret->steps = (long long)json_array_size(json_object_get(rep, "steps"));
	ret->builds = whole_of(rep, "builds");
	ret->boots = whole_of(rep, "boots");
	json_t *culprits = json_object_get(rep, "culprits");
	ret->n_total = json_array_size(culprits);
	for (size_t i = 0; i < ret->n_total && ret->n < RB_CULPRITS; i++) {
		json_t *c = json_array_get(culprits, i);
		struct rb_culprit *k = &ret->c[ret->n++];
		text_of(c, "answer", k->answer, sizeof(k->answer));
		k->part = whole_of(c, "part");
		text_of(c, "sha", k->sha, sizeof(k->sha));
		text_of(c, "parent", k->parent, sizeof(k->parent));
		text_of(c, "subject", k->subject, sizeof(k->subject));
		text_of(c, "author", k->author, sizeof(k->author));
		text_of(c, "date", k->date, sizeof(k->date));
		effect_of(json_object_get(c, "confirmation"), &k->confirm);
		json_t *ctl = json_object_get(c, "controls");
		control_of(json_object_get(ctl, "revert"), &k->revert);
		control_of(json_object_get(ctl, "align"), &k->align);
		k->n_candidates = whole_of(c, "n_candidates");
		text_of(c, "reason", k->reason, sizeof(k->reason));
	}
	json_decref(rep);
}

static bool is(const struct rb_culprit *k, const char *answer)
{
	return strcmp(k->answer, answer) == 0;
}

/* The culprit a title names: the first confirmed one, else the first
 * range; NULL when neither. */
static const struct rb_culprit *named(const struct rb *v)
{
	if (!v->b || v->b->state != BISECT_DONE || !v->report)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (is(&v->c[i], "culprit"))
			return &v->c[i];
	for (size_t i = 0; i < v->n; i++)
		if (is(&v->c[i], "layout-sensitive"))
			return &v->c[i];
	for (size_t i = 0; i < v->n; i++)
		if (is(&v->c[i], "range"))
			return &v->c[i];
	return NULL;
}

void rb_title(const struct rb *v, char *buf, size_t len)
{
	if (len)
		buf[0] = 0;
	const struct rb_culprit *k = named(v);
	if (!k)
		return;
	char more[32] = "";
	if (v->n_total > 1)
		snprintf(more, sizeof(more), " +%zu more", v->n_total - 1);
	if (is(k, "range"))
		snprintf(buf, len, ": first bad commit: one of %lld commits%s", k->n_candidates, more);
	else if (is(k, "layout-sensitive"))
		snprintf(buf, len, ": layout-sensitive, not a regression of commit %.12s \"%s\"%s", k->sha, k->subject, more);
	else
		snprintf(buf, len, ": first bad commit %.12s \"%s\"%s", k->sha, k->subject, more);
}

static json_t *effect_json(const struct rb_effect *e)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:I}", "decision", jw_str_opt(e->decision), "reason",
			 jw_str_opt(e->reason), "estimate_pct", jw_num(e->est), "ci_lo_pct", jw_num(e->lo), "ci_hi_pct",
			 jw_num(e->hi), "pairs", (json_int_t)e->pairs);
}

static json_t *control_json(const struct rb_control *c)
{
	if (!c->asked)
		return json_null();
	json_t *v = effect_json(&c->e);
	if (v) {
		json_object_set_new(v, "base", jw_str_opt(c->base));
		json_object_set_new(v, "note", jw_str_opt(c->note));
	}
	return v;
}

static json_t *culprit_json(const struct rb_culprit *k)
{
	if (is(k, "range"))
		return json_pack("{s:o, s:I, s:I, s:o}", "answer", jw_str_opt(k->answer), "part", (json_int_t)k->part,
				 "n_candidates", (json_int_t)k->n_candidates, "reason", jw_str_opt(k->reason));
	json_t *v = json_pack("{s:o, s:I, s:o, s:o, s:o, s:o, s:o, s:o}", "answer", jw_str_opt(k->answer), "part",
			      (json_int_t)k->part, "sha", jw_str_opt(k->sha), "subject", jw_str_opt(k->subject),
			      "author", jw_str_opt(k->author), "date", jw_str_opt(k->date), "parent",
			      jw_str_opt(k->parent), "confirmation", effect_json(&k->confirm));
	/* the controls, when the bisection ran any (bisect.revert, bisect.align) */
	if (v && (k->revert.asked || k->align.asked))
		json_object_set_new(v, "controls",
				    json_pack("{s:o, s:o}", "revert", control_json(&k->revert), "align", control_json(&k->align)));
	return v;
}

static json_t *count_json(const struct rb *v, long long n)
{
	return v->report ? json_integer(n) : json_null();
}

static const char *state_word(const struct store_bisect *b)
{
	return b->state == BISECT_STATE_UNKNOWN ? "unknown" : bisect_state_name(b->state);
}

json_t *rb_json(const struct rb *v)
{
	const struct store_bisect *b = v->b;
	if (!b)
		return json_null();
	json_t *culprits = json_array();
	for (size_t i = 0; culprits && i < v->n; i++)
		json_array_append_new(culprits, culprit_json(&v->c[i]));
	return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "id", (json_int_t)b->id, "state",
			 jw_str(state_word(b)), "reason", jw_str_opt(b->reason), "started", jw_time(b->created), "ended",
			 jw_time(b->ended), "good", jw_str_opt(b->good), "bad", jw_str_opt(b->bad), "culprits", culprits, "steps",
			 count_json(v, v->steps), "builds", count_json(v, v->builds), "boots", count_json(v, v->boots));
}

/* "+9.8% [+8.1, +11.5], 12 pairs, confirmed" */
static void effect_text(const struct rb_effect *e, char *buf, size_t len)
{
	if (isfinite(e->est))
		snprintf(buf, len, "%+.1f%% [%+.1f, %+.1f], %lld pairs, %s", e->est, e->lo, e->hi, e->pairs,
			 e->decision[0] ? e->decision : "?");
	else if (strcmp(e->decision, "not applicable") == 0)
		snprintf(buf, len, "%s", e->decision);
	else
		snprintf(buf, len, "not measured, %s", e->decision[0] ? e->decision : "?");
}

static const char *culprit_words(const struct rb_culprit *k)
{
	return is(k, "culprit")            ? "first bad commit"
	       : is(k, "layout-sensitive") ? "layout-sensitive (not a regression) first bad commit"
					   : "unconfirmed first bad commit";
}

/* A control's line under its culprit. */
static void control_text(const char *what, const struct rb_control *c, FILE *out)
{
	if (!c->asked)
		return;
	char e[160];
	effect_text(&c->e, e, sizeof(e));
	fprintf(out, "    %s: %s%s%s%s%s%s\n", what, e, c->e.reason[0] ? ": " : "", c->e.reason, c->note[0] ? " [" : "",
		c->note, c->note[0] ? "]" : "");
}

void rb_text(const struct rb *v, FILE *out)
{
	const struct store_bisect *b = v->b;
	if (!b)
		return;
	fprintf(out, "  bisection  %lld: %s%s%s\n", (long long)b->id, state_word(b), b->reason[0] ? ", " : "", b->reason);
	for (size_t i = 0; v->report && i < v->n; i++) {
		const struct rb_culprit *k = &v->c[i];
		if (is(k, "range")) {
			fprintf(out, "  first bad commit: one of %lld commits%s%s\n", k->n_candidates,
				k->reason[0] ? ": " : "", k->reason);
			continue;
		}
		char e[160];
		effect_text(&k->confirm, e, sizeof(e));
		fprintf(out, "  %s %s \"%s\" (%s, %s)\n", culprit_words(k), k->sha, k->subject,
			k->author[0] ? k->author : "?", k->date[0] ? k->date : "?");
		fprintf(out, "    against its parent %.12s: %s%s%s\n", k->parent[0] ? k->parent : "?", e,
			k->confirm.reason[0] ? ": " : "", k->confirm.reason);
		control_text("reverted on BAD", &k->revert, out);
		control_text("with forced alignment", &k->align, out);
	}
}

void rb_summary(const struct rb *v, struct strbuf *out)
{
	const struct store_bisect *b = v->b;
	if (!b)
		return;
	if (b->state != BISECT_DONE || !v->report || v->n == 0) {
		sb_printf(out, "bisection %lld: %s%s%s", (long long)b->id, state_word(b), b->reason[0] ? ", " : "", b->reason);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct rb_culprit *k = &v->c[i];
		if (i)
			sb_puts(out, "; ");
		if (is(k, "range")) {
			sb_printf(out, "first bad commit: one of %lld commits", k->n_candidates);
			continue;
		}
		char e[160];
		effect_text(&k->confirm, e, sizeof(e));
		sb_printf(out, "%s %s \"%s\" by %s, %s; against its parent %.12s: %s", culprit_words(k), k->sha, k->subject,
			  k->author[0] ? k->author : "?", k->date[0] ? k->date : "?", k->parent[0] ? k->parent : "?", e);
		const struct rb_control *ctl[] = { &k->revert, &k->align };
		const char *names[] = { "reverted on BAD", "with forced alignment" };
		for (size_t m = 0; m < 2; m++)
			if (ctl[m]->asked) {
				effect_text(&ctl[m]->e, e, sizeof(e));
				sb_printf(out, "; %s: %s", names[m], e);
			}
	}
	sb_printf(out, " (bisection %lld: %lld steps, %lld builds, %lld boots)", (long long)b->id, v->steps, v->builds, v->boots);
}

double rb_changed(const struct rb *v)
{
	if (!v->b)
		return 0;
	return v->b->ended > 0 ? v->b->ended : v->b->created;
}
