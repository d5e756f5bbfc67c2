/* A stored job as a KCIDB v5 submission (kcidb.h). The job's report gives
 * the numbers and verdicts, its runs the kernel each variant ran on and
 * the times, the builds table what kab built. Every object is made from
 * the store alone, in the report's order, so the same job exports to the
 * same text. doc/export.md is the mapping. */
#include "harness/report/kcidb.h"
#include "harness/report/report.h"
#include "harness/report/report_priv.h"
#include "harness/job/job.h"
#include "db/store.h"
#include "db/store_builds.h"
#include "harness/base/json.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The schema's limit on a log excerpt, in characters (kab cuts bytes). */
#define KCIDB_EXCERPT_MAX 16384

enum kx_kind { KX_BUILD, KX_IMAGE, KX_RUNNING };
static const char *const kx_kind_names[] = { "build", "image", "running" };

/* What a variant's runs say: the kernel and machine of its first counted
 * run (of any run with a release, when none was counted). */
struct kx_variant {
	int kernel; /* index in kx.k; -1: no kernel known, no objects */
	bool counted;
	char release[128];
	int cpus, cgroup_version;
	uint64_t mem_total;
};

/* A variant's counted runs of a workload: when the first started and the
 * seconds they took together. */
struct kx_span {
	double started, busy;
};

/* A KCIDB build: a kernel kab built, an image it registered, or the
 * kernel the machine was running. */
struct kx_kernel {
	enum kx_kind kind;
	size_t variant;       /* the first variant on it: its id's name */
	size_t checkout;      /* index in kx.c */
	int64_t build_id;     /* kab's; 0 for the running kernel */
	struct store_build b; /* build_id's record */
	char release[128];
};

/* A KCIDB checkout: the source one or more kernels came from. */
struct kx_checkout {
	size_t variant; /* the first variant on it: its id's name */
	size_t kernel;  /* the first kernel of it: what it says */
	char *key;      /* what makes two kernels' sources the same */
};

struct kx {
	struct store *st;
	const char *origin;
	struct store_job sj;
	struct report *r;
	struct kx_variant *v; /* [variant] */
	struct kx_span *span; /* [variant * n_workloads + workload] */
	struct kx_kernel *k;
	size_t n_k, cap_k;
	struct kx_checkout *c;
	size_t n_c, cap_c;
};

bool kcidb_origin_ok(const char *origin)
{
	size_t n = 0;
	for (const char *p = origin; *p; p++, n++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return n > 0 && n <= KCIDB_ORIGIN_MAX;
}

/* ---- what the store says ---- */

static int kx_run(void *ctx, const struct store_run_row *x)
{
	struct kx *kx = ctx;
	const struct report *r = kx->r;
	if (x->variant < 0 || (size_t)x->variant >= r->n_variants)
		return 0;
	struct kx_variant *v = &kx->v[x->variant];
	bool ok = x->status == RUN_OK;
	if (!v->counted && (ok || !v->release[0]) && x->kernel_release[0]) {
		snprintf(v->release, sizeof(v->release), "%s", x->kernel_release);
		v->cpus = x->cpus;
		v->cgroup_version = x->cgroup_version;
		v->mem_total = x->mem_total;
		v->counted = ok;
	}
	if (!ok || x->workload < 0 || (size_t)x->workload >= r->n_workloads)
		return 0;
	struct kx_span *s = &kx->span[(size_t)x->variant * r->n_workloads + (size_t)x->workload];
	if (x->started > 0 && (s->started <= 0 || x->started < s->started))
		s->started = x->started;
	if (x->finished > x->started && x->started > 0)
		s->busy += x->finished - x->started;
	return 0;
}

/* What makes two kernels' sources one checkout: the tree, commit and
 * series of a build, an image's file, the running kernel's release. */
static char *checkout_key(const struct kx *kx, const struct kx_kernel *k)
{
	struct strbuf sb = { 0 };
	const struct store_build *b = &k->b;
	int e;
	if (k->kind == KX_BUILD)
		e = sb_printf(&sb, "build\n%s\n%s\n%s\n%s\n%s", b->tree ? b->tree : "", b->base_sha,
			      b->series ? b->series : "", b->series_hash, b->patches ? b->patches : "");
	else if (k->kind == KX_IMAGE)
		e = sb_printf(&sb, "image\n%s", kx->r->kernels[k->variant].image ? kx->r->kernels[k->variant].image : "");
	else
		e = sb_printf(&sb, "running\n%s", k->release);
	if (e < 0) {
		sb_free(&sb);
		return NULL;
	}
	return sb.buf;
}

static int add_checkout(struct kx *kx, struct kx_kernel *k)
{
	char *key = checkout_key(kx, k);
	if (!key)
		return -ENOMEM;
	for (size_t i = 0; i < kx->n_c; i++)
		if (strcmp(kx->c[i].key, key) == 0) {
			free(key);
			k->checkout = i;
			return 0;
		}
	if (util_grow(kx->c, kx->cap_c, kx->n_c + 1, 4) < 0) {
		free(key);
		return -ENOMEM;
	}
	kx->c[kx->n_c] = (struct kx_checkout){ .variant = k->variant, .kernel = (size_t)(k - kx->k), .key = key };
	k->checkout = kx->n_c++;
	return 0;
}

/* Variant vi's kernel: its kind and kab's build id; false when kab knows
 * none (no build recorded, or no run that said its release). */
static bool variant_kernel(const struct kx *kx, size_t vi, enum kx_kind *ret_kind, int64_t *ret_build)
{
	const struct report *r = kx->r;
	const char *kernel = r->job->variants[vi].kernel;
	if (!kernel || strcmp(kernel, "running") == 0) {
		*ret_kind = KX_RUNNING;
		*ret_build = 0;
		return kx->v[vi].release[0] != '\0';
	}
	const struct report_kernel *rk = r->kernels ? &r->kernels[vi] : NULL;
	if (!rk || !rk->build_id || !rk->found)
		return false;
	*ret_kind = strcmp(rk->kind, "image") == 0 ? KX_IMAGE : KX_BUILD;
	*ret_build = rk->build_id;
	return true;
}

/* Each variant's kernel, one per kab build or running release, and each
 * kernel's checkout. */
static int find_kernels(struct kx *kx)
{
	for (size_t vi = 0; vi < kx->r->n_variants; vi++) {
		struct kx_variant *v = &kx->v[vi];
		enum kx_kind kind;
		int64_t build_id;
		v->kernel = -1;
		if (!variant_kernel(kx, vi, &kind, &build_id))
			continue;
		size_t i = 0;
		while (i < kx->n_k && !(kx->k[i].kind == kind && kx->k[i].build_id == build_id &&
					(kind != KX_RUNNING || strcmp(kx->k[i].release, v->release) == 0)))
			i++;
		if (i == kx->n_k) {
			if (util_grow(kx->k, kx->cap_k, kx->n_k + 1, 4) < 0)
				return -ENOMEM;
			struct kx_kernel *k = &kx->k[i];
			*k = (struct kx_kernel){ .kind = kind, .variant = vi };
			if (build_id) {
				int e = store_build_get(kx->st, build_id, &k->b);
				if (e < 0)
					return e;
				k->build_id = build_id;
			}
			kx->n_k++; /* its build is freed with it from here on */
			snprintf(k->release, sizeof(k->release), "%s", build_id ? k->b.kernelrelease : v->release);
			int e = add_checkout(kx, k);
			if (e < 0)
				return e;
		}
		v->kernel = (int)i;
	}
	return 0;
}

/* ---- objects ---- */

/* Members are set through these; the first failure stays in *err. A
 * string that is NULL or "" and a number that is not finite are left out:
 * the schema allows no null, and "" would claim a value. */
static void set(json_t *o, const char *key, json_t *v, int *err)
{
	if (jw_set(o, key, v) < 0)
		*err = -ENOMEM;
}

static void set_str(json_t *o, const char *key, const char *s, int *err)
{
	if (s && s[0])
		set(o, key, jw_str(s), err);
}

static void set_num(json_t *o, const char *key, double v, int *err)
{
	if (isfinite(v))
		set(o, key, jw_num(v), err);
}

static void set_time(json_t *o, const char *key, double t, int *err)
{
	if (t > 0)
		set(o, key, jw_time(t), err);
}

static json_t *done(json_t *o, int err)
{
	if (err < 0 || !o) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* ORIGIN:JOB/KIND/VARIANT[/WORKLOAD/METRIC]: variant and workload names
 * hold no '/', so the metric, last, may. */
static json_t *object_id(const struct kx *kx, const char *kind, size_t variant, const char *workload, const char *metric)
{
	struct strbuf sb = { 0 };
	int e = sb_printf(&sb, "%s:%lld/%s/%s", kx->origin, (long long)kx->sj.id, kind, kx->r->variants[variant]);
	if (e >= 0 && workload)
		e = sb_printf(&sb, "/%s/%s", workload, metric);
	json_t *s = e >= 0 ? jw_str(sb.buf) : NULL;
	sb_free(&sb);
	return s;
}

/* name's dot-separated parts as parts of a test path: a character the
 * schema's path does not take becomes '_', an empty part is dropped. */
static void path_add(struct strbuf *sb, const char *name)
{
	bool start = true;
	for (const char *p = name; *p; p++) {
		if (*p == '.') {
			start = true;
			continue;
		}
		if (start)
			sb_puts(sb, ".");
		start = false;
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
			c = '_';
		sb_append(sb, &c, 1);
	}
}

static json_t *test_path(const char *root, const char *workload, const char *metric)
{
	struct strbuf sb = { 0 };
	sb_puts(&sb, root);
	path_add(&sb, workload);
	path_add(&sb, metric);
	json_t *s = sb.buf ? jw_str(sb.buf) : NULL;
	sb_free(&sb);
	return s;
}

static bool sha1_ok(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");
	return n == 40 && s[n] == '\0';
}

/* The message id of a series taken from lore ("lore:ID vN"), when it
 * reads as one (local@domain); else "". */
static void series_message_id(const char *series, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!series || strncmp(series, "lore:", 5) != 0)
		return;
	const char *id = series + 5;
	size_t n = strcspn(id, " \t");
	const char *at = memchr(id, '@', n);
	if (!at || at == id || at == id + n - 1 || memchr(at + 1, '@', n - (size_t)(at + 1 - id)) || n >= len ||
	    strcspn(id, "<>\"") < n)
		return;
	snprintf(buf, len, "%.*s", (int)n, id);
}

static json_t *patches_array(const struct report_kernel *rk)
{
	json_t *a = json_array();
	for (size_t i = 0; a && rk && i < rk->n_patches; i++) {
		int e = 0;
		json_t *p = json_object();
		set(p, "subject", jw_str(rk->patches[i].subject), &e);
		set_str(p, "message_id", rk->patches[i].message_id, &e);
		if (json_array_append_new(a, done(p, e)) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static void checkout_of_build(const struct kx *kx, const struct kx_kernel *k, json_t *o, json_t *misc, int *e)
{
	const struct store_build *b = &k->b;
	const struct report_kernel *rk = &kx->r->kernels[k->variant];
	/* the schema takes https:// repositories only; a path or another
	 * scheme stays in misc */
	if (b->tree && strncmp(b->tree, "https://", 8) == 0 && !strpbrk(b->tree, " \t\n"))
		set_str(o, "git_repository_url", b->tree, e);
	if (sha1_ok(b->base_sha))
		set_str(o, "git_commit_hash", b->base_sha, e);
	char msgid[256];
	series_message_id(b->series, msgid, sizeof(msgid));
	set_str(o, "message_id", msgid, e);
	struct strbuf c = { 0 };
	sb_puts(&c, b->base_ref && b->base_ref[0] ? b->base_ref : "base");
	if (b->base_sha[0])
		sb_printf(&c, " (%.12s)", b->base_sha);
	if (b->series)
		sb_printf(&c, " + %zu patch%s of %s", rk->n_patches, rk->n_patches == 1 ? "" : "es", b->series);
	else
		sb_puts(&c, ", no series");
	if (!c.buf)
		*e = -ENOMEM;
	set_str(o, "comment", c.buf, e);
	sb_free(&c);
	/* kab checks the tree out and applies the series as the build's first
	 * step: a build that ended ok had its sources combined */
	set_time(o, "start_time", b->created, e);
	if (b->status == BUILD_OK)
		set(o, "valid", json_true(), e);
	set_str(misc, "tree", b->tree, e);
	set_str(misc, "base_ref", b->base_ref, e);
	set_str(misc, "series", b->series, e);
	set_str(misc, "series_hash", b->series_hash, e);
	set(misc, "patches", patches_array(rk), e);
	if (rk->track.track[0]) {
		json_t *t = json_object();
		set(t, "track", jw_str(rk->track.track), e);
		set_str(t, "sha", rk->track.sha, e);
		set_str(t, "subject", rk->track.subject, e);
		set_time(t, "commit_date", rk->track.date, e);
		set(misc, "track", t, e);
	}
}

static json_t *checkout_obj(const struct kx *kx, const struct kx_checkout *c)
{
	const struct kx_kernel *k = &kx->k[c->kernel];
	json_t *o = json_object(), *misc = json_object();
	int e = 0;
	set(o, "id", object_id(kx, "checkout", c->variant, NULL, NULL), &e);
	set(o, "origin", jw_str(kx->origin), &e);
	set(misc, "kab_job_id", json_integer(kx->sj.id), &e);
	set(misc, "kernel", jw_str(kx_kind_names[k->kind]), &e);
	struct strbuf cm = { 0 };
	switch (k->kind) {
	case KX_BUILD: checkout_of_build(kx, k, o, misc, &e); break;
	case KX_IMAGE:
		sb_printf(&cm, "kernel image %s: not built by kab, its source unknown to it",
			  kx->r->kernels[k->variant].image ? kx->r->kernels[k->variant].image : "");
		set_str(misc, "image", kx->r->kernels[k->variant].image, &e);
		break;
	case KX_RUNNING:
		sb_printf(&cm, "the kernel the machine was running, %s: not built by kab, its source unknown to it", k->release);
		set_str(misc, "kernel_release", k->release, &e);
		break;
	}
	if (k->kind != KX_BUILD && !cm.buf)
		e = -ENOMEM;
	set_str(o, "comment", cm.buf, &e);
	sb_free(&cm);
	set(o, "misc", misc, &e);
	return done(o, e);
}

/* The tail of a failed build's log, within the schema's limit. */
static void set_excerpt(json_t *o, const char *log, int *e)
{
	if (!log || !log[0])
		return;
	size_t n = strlen(log);
	const char *from = n > KCIDB_EXCERPT_MAX ? log + n - KCIDB_EXCERPT_MAX : log;
	set(o, "log_excerpt", jw_str(from), e);
}

static json_t *build_obj(const struct kx *kx, const struct kx_kernel *k)
{
	const struct store_build *b = &k->b;
	json_t *o = json_object(), *misc = json_object();
	int e = 0;
	set(o, "id", object_id(kx, "build", k->variant, NULL, NULL), &e);
	set(o, "origin", jw_str(kx->origin), &e);
	set(o, "checkout_id", object_id(kx, "checkout", kx->c[k->checkout].variant, NULL, NULL), &e);
	set(misc, "kab_job_id", json_integer(kx->sj.id), &e);
	set(misc, "kernel", jw_str(kx_kind_names[k->kind]), &e);
	set_str(misc, "kernelrelease", k->release, &e);
	struct strbuf cm = { 0 };
	if (k->build_id)
		set(misc, "kab_build_id", json_integer(k->build_id), &e);
	if (k->kind == KX_BUILD) {
		sb_printf(&cm, "kab build %lld, %s", (long long)k->build_id, k->release[0] ? k->release : "no kernelrelease");
		set_time(o, "start_time", b->created, &e);
		if (b->duration_s > 0)
			set_num(o, "duration", b->duration_s, &e);
		set_str(o, "compiler", b->compiler, &e);
		set_str(o, "config_name", b->config_source, &e);
		/* building: it never ended, so no status is claimed */
		if (b->status == BUILD_OK || b->status == BUILD_FAILED)
			set(o, "status", jw_str(b->status == BUILD_OK ? "PASS" : "FAIL"), &e);
		if (b->status == BUILD_FAILED)
			set_excerpt(o, b->log_tail && b->log_tail[0] ? b->log_tail : b->reason, &e);
		set_str(misc, "config_hash", b->config_hash, &e);
		set_str(misc, "inputs_key", b->inputs_key, &e);
		set(misc, "warnings", json_integer(b->warnings), &e);
		set(misc, "objects", json_integer(b->objects), &e);
	} else if (k->kind == KX_IMAGE) {
		sb_printf(&cm, "kernel image %s, registered as kab build %lld: not built by kab",
			  kx->r->kernels[k->variant].image ? kx->r->kernels[k->variant].image : "", (long long)k->build_id);
	} else {
		sb_printf(&cm, "the running kernel, %s: not built by kab", k->release);
	}
	if (!cm.buf)
		e = -ENOMEM;
	set_str(o, "comment", cm.buf, &e);
	sb_free(&cm);
	set(o, "misc", misc, &e);
	return done(o, e);
}

/* Where variant vi ran: its knobs (as the job sets them) and the machine
 * of its first counted run. */
static json_t *environment(const struct kx *kx, size_t vi)
{
	const struct job_variant *jv = &kx->r->job->variants[vi];
	const struct kx_variant *v = &kx->v[vi];
	json_t *o = json_object(), *misc = json_object(), *knobs = json_object();
	int e = 0;
	struct strbuf cm = { 0 };
	sb_printf(&cm, "variant %s", kx->r->variants[vi]);
	for (size_t i = 0; i < jv->n_knobs; i++) {
		sb_printf(&cm, "%s%s = %s", i ? ", " : ": ", jv->knobs[i].name, jv->knobs[i].value);
		set(knobs, jv->knobs[i].name, jw_str(jv->knobs[i].value), &e);
	}
	if (!cm.buf)
		e = -ENOMEM;
	set_str(o, "comment", cm.buf, &e);
	sb_free(&cm);
	set(misc, "variant", jw_str(kx->r->variants[vi]), &e);
	set(misc, "knobs", knobs, &e);
	set_str(misc, "kernel_release", v->release, &e);
	if (v->cpus > 0)
		set(misc, "cpus", json_integer(v->cpus), &e);
	if (v->mem_total)
		set_num(misc, "mem_total_bytes", (double)v->mem_total, &e);
	if (v->cgroup_version > 0)
		set(misc, "cgroup_version", json_integer(v->cgroup_version), &e);
	set(o, "misc", misc, &e);
	return done(o, e);
}

static json_t *number(double value, const char *unit)
{
	int e = 0;
	json_t *n = json_object();
	set(n, "value", jw_num(value), &e);
	set_str(n, "unit", unit, &e);
	return done(n, e);
}

/* The fields every test of a metric has. */
static void test_common(const struct kx *kx, const struct report_workload *w, const struct report_metric *m, json_t *misc, int *e)
{
	set(misc, "kab_job_id", json_integer(kx->sj.id), e);
	set(misc, "workload", jw_str(w->name), e);
	set(misc, "metric", jw_str(m->name), e);
	set_str(misc, "label", m->info.label, e);
	set_str(misc, "unit", m->info.unit, e);
	set(misc, "direction", jw_str(direction_name(m->info.dir)), e);
	set(misc, "primary", json_boolean(m->primary), e);
}

/* Variant vi's numbers of metric m: a performance measurement, DONE. */
static json_t *value_test(const struct kx *kx, size_t wi, const struct report_metric *m, size_t vi)
{
	const struct report_workload *w = &kx->r->w[wi];
	const struct stats_desc *d = &m->desc[vi];
	const struct kx_span *s = &kx->span[vi * kx->r->n_workloads + wi];
	json_t *o = json_object(), *misc = json_object();
	int e = 0;
	set(o, "id", object_id(kx, "test", vi, w->name, m->name), &e);
	set(o, "origin", jw_str(kx->origin), &e);
	set(o, "build_id", object_id(kx, "build", kx->k[kx->v[vi].kernel].variant, NULL, NULL), &e);
	set(o, "path", test_path("kab", w->name, m->name), &e);
	set(o, "status", jw_str("DONE"), &e);
	set(o, "number", number(d->mean, m->info.unit), &e);
	set_time(o, "start_time", s->started, &e);
	if (s->busy > 0)
		set_num(o, "duration", s->busy, &e);
	set(o, "environment", environment(kx, vi), &e);
	char mean[64];
	report_fmt_num(d->mean, m->decimals, mean, sizeof(mean));
	struct strbuf cm = { 0 };
	sb_printf(&cm, "%s, %s: %s mean %s%s%s over %zu runs", kx->r->variants[vi], w->name, m->name, mean,
		  m->info.unit[0] ? " " : "", m->info.unit, d->n);
	if (!cm.buf)
		e = -ENOMEM;
	set_str(o, "comment", cm.buf, &e);
	sb_free(&cm);
	test_common(kx, w, m, misc, &e);
	set(misc, "variant", jw_str(kx->r->variants[vi]), &e);
	set(misc, "n", json_integer((json_int_t)d->n), &e);
	set_num(misc, "mean", d->mean, &e);
	set_num(misc, "median", d->median, &e);
	set_num(misc, "stddev", d->stddev, &e);
	set_num(misc, "cov_pct", d->cov_pct, &e);
	set_num(misc, "min", d->min, &e);
	set_num(misc, "max", d->max, &e);
	set(o, "misc", misc, &e);
	return done(o, e);
}

/* kab's verdict as a test status: worse is a failure of the tested code,
 * better and same pass it; changed (a metric with no good direction) and
 * undecided measured without judging the code. none compared nothing:
 * with values on one side only, the other's runs are missing (MISS);
 * with none on either, the metric did not apply to these two (SKIP). */
static const char *verdict_status(const struct report_metric *m, size_t vi)
{
	switch (m->cmp[vi].verdict) {
	case STATS_VERDICT_WORSE: return "FAIL";
	case STATS_VERDICT_BETTER:
	case STATS_VERDICT_SAME: return "PASS";
	case STATS_VERDICT_CHANGED:
	case STATS_VERDICT_UNDECIDED: return "DONE";
	case STATS_VERDICT_NONE: break;
	}
	return m->desc[0].n || m->desc[vi].n ? "MISS" : "SKIP";
}

/* Variant vi against the baseline on metric m: kab's verdict as the
 * status, the estimate %Δ as the number, the rest under misc. */
static json_t *compare_test(const struct kx *kx, size_t wi, const struct report_metric *m, size_t vi)
{
	const struct report *r = kx->r;
	const struct report_workload *w = &r->w[wi];
	const struct stats_result *c = &m->cmp[vi];
	const struct kx_span *a = &kx->span[wi], *b = &kx->span[vi * r->n_workloads + wi];
	json_t *o = json_object(), *misc = json_object();
	int e = 0;
	set(o, "id", object_id(kx, "compare", vi, w->name, m->name), &e);
	set(o, "origin", jw_str(kx->origin), &e);
	set(o, "build_id", object_id(kx, "build", kx->k[kx->v[vi].kernel].variant, NULL, NULL), &e);
	set(o, "path", test_path("kab_ab", w->name, m->name), &e);
	set(o, "status", jw_str(verdict_status(m, vi)), &e);
	if (isfinite(c->hl_pct))
		set(o, "number", number(c->hl_pct, "%"), &e);
	double started = a->started > 0 && (b->started <= 0 || a->started < b->started) ? a->started : b->started;
	set_time(o, "start_time", started, &e);
	if (a->busy + b->busy > 0)
		set_num(o, "duration", a->busy + b->busy, &e);
	char est[32], ci[64], p[32];
	report_fmt_pct(c->hl_pct, est, sizeof(est));
	report_fmt_ci(c->ci_low_pct, c->ci_high_pct, ci, sizeof(ci));
	report_fmt_p(c->p_value, p, sizeof(p));
	struct strbuf cm = { 0 };
	sb_printf(&cm, "%s vs %s, %s: %s %s %s, p %s, %s", r->variants[vi], r->variants[0], w->name, m->name, est, ci,
		  p, stats_verdict_name(c->verdict));
	if (!cm.buf)
		e = -ENOMEM;
	set_str(o, "comment", cm.buf, &e);
	sb_free(&cm);
	test_common(kx, w, m, misc, &e);
	set(misc, "baseline", jw_str(r->variants[0]), &e);
	set(misc, "variant", jw_str(r->variants[vi]), &e);
	set(misc, "verdict", jw_str(stats_verdict_name(c->verdict)), &e);
	set_num(misc, "estimate_pct", c->hl_pct, &e);
	set_num(misc, "ci_low_pct", c->ci_low_pct, &e);
	set_num(misc, "ci_high_pct", c->ci_high_pct, &e);
	if (c->test != STATS_TEST_NONE)
		set_num(misc, "ci_level", c->ci_level, &e);
	set_num(misc, "p_value", c->p_value, &e);
	set_num(misc, "q_value", c->q_value, &e);
	set(misc, "test", jw_str(stats_test_name(c->test)), &e);
	set(misc, "pairs", json_integer((json_int_t)c->pairs), &e);
	set_num(misc, "delta_abs", c->delta_abs, &e);
	set_num(misc, "delta_pct", c->delta_pct, &e);
	set_num(misc, "min_change_pct", c->min_change_pct, &e);
	set_num(misc, "equivalence_pct", c->equivalence_pct, &e);
	set(o, "misc", misc, &e);
	return done(o, e);
}

static void tests(struct jw *j, const struct kx *kx)
{
	const struct report *r = kx->r;
	jw_open(j, "tests", '[', JW_LINES);
	for (size_t wi = 0; wi < r->n_workloads; wi++)
		for (size_t mi = 0; mi < r->w[wi].n_metrics; mi++) {
			const struct report_metric *m = &r->w[wi].m[mi];
			for (size_t vi = 0; vi < r->n_variants; vi++)
				if (kx->v[vi].kernel >= 0 && m->desc[vi].n > 0 && isfinite(m->desc[vi].mean))
					jw_put(j, NULL, value_test(kx, wi, m, vi));
			for (size_t vi = 1; vi < r->n_variants; vi++)
				if (kx->v[vi].kernel >= 0)
					jw_put(j, NULL, compare_test(kx, wi, m, vi));
		}
	jw_close(j);
}

static int render(const struct kx *kx, struct strbuf *out)
{
	struct jw j;
	jw_init_sb(&j, out, 0);
	jw_open(&j, NULL, '{', JW_LINES);
	jw_put(&j, "version", json_pack("{s:i, s:i}", "major", KCIDB_MAJOR, "minor", KCIDB_MINOR));
	jw_open(&j, "checkouts", '[', JW_LINES);
	for (size_t i = 0; i < kx->n_c; i++)
		jw_put(&j, NULL, checkout_obj(kx, &kx->c[i]));
	jw_close(&j);
	jw_open(&j, "builds", '[', JW_LINES);
	for (size_t i = 0; i < kx->n_k; i++)
		jw_put(&j, NULL, build_obj(kx, &kx->k[i]));
	jw_close(&j);
	tests(&j, kx);
	jw_close(&j);
	int e = jw_end(&j);
	return e < 0 ? e : sb_puts(out, "\n");
}

/* ---- the export ---- */

static void kx_free(struct kx *kx)
{
	for (size_t i = 0; i < kx->n_k; i++)
		if (kx->k[i].build_id)
			store_build_clear(&kx->k[i].b);
	free(kx->k);
	for (size_t i = 0; i < kx->n_c; i++)
		free(kx->c[i].key);
	free(kx->c);
	free(kx->v);
	free(kx->span);
	report_free(kx->r);
	store_job_clear(&kx->sj);
}

/* The job, ended, and its report analyzed: 0, else why in err. */
static int kx_load(struct kx *kx, int64_t job_id, struct strbuf *err)
{
	int r = store_job_info(kx->st, job_id, &kx->sj);
	if (r == -ENOENT) {
		sb_printf(err, "no job %lld in the database", (long long)job_id);
		return r;
	}
	if (r < 0) {
		sb_printf(err, "job %lld cannot be read: %s", (long long)job_id, strerror(-r));
		return r;
	}
	if (!job_status_finished(kx->sj.status)) {
		sb_printf(err, "job %lld is %s: it has not ended, so it has no report yet (export it once it is done, failed or cancelled)",
			  (long long)job_id, job_status_name(kx->sj.status));
		return -EBUSY;
	}
	if ((r = report_load(kx->st, job_id, &kx->r)) < 0 || (r = report_analyze(kx->r)) < 0) {
		sb_printf(err, "job %lld: its report cannot be made: %s", (long long)job_id, strerror(-r));
		return r;
	}
	return 0;
}

int kcidb_export(struct store *st, int64_t job_id, const char *origin, struct strbuf *out, struct strbuf *err)
{
	if (!kcidb_origin_ok(origin)) {
		sb_printf(err, "\"%s\" is no KCIDB origin (1 to %d lower-case letters, digits and '_')", origin, KCIDB_ORIGIN_MAX);
		return -EINVAL;
	}
	struct kx kx = { .st = st, .origin = origin };
	struct strbuf text = { 0 };
	int r = kx_load(&kx, job_id, err);
	if (r < 0)
		goto out;
	const struct report *rep = kx.r;
	kx.v = calloc(rep->n_variants, sizeof(*kx.v));
	kx.span = calloc(rep->n_variants * (rep->n_workloads ? rep->n_workloads : 1), sizeof(*kx.span));
	if (!kx.v || !kx.span) {
		r = -ENOMEM;
	} else if ((r = store_runs_page(st, job_id, 0, SIZE_MAX, kx_run, &kx)) < 0) {
		sb_printf(err, "job %lld: its runs cannot be read: %s", (long long)job_id, strerror(-r));
		goto out;
	} else if ((r = find_kernels(&kx)) < 0) {
		sb_printf(err, "job %lld: its builds cannot be read: %s", (long long)job_id, strerror(-r));
		goto out;
	} else {
		r = render(&kx, &text);
	}
	if (r < 0) {
		sb_printf(err, "job %lld: %s", (long long)job_id, strerror(-r));
		goto out;
	}
	r = sb_append(out, text.buf, text.len);
	if (r < 0)
		sb_printf(err, "job %lld: %s", (long long)job_id, strerror(-r));
out:
	sb_free(&text);
	kx_free(&kx);
	return r;
}
