/* The outbox of a lab member: what one ended claim sends up to the lab
 * from the machine's SQLite, every write idempotent (lab_upload's upserts
 * keyed by UUIDs made from the claim's key, lab_night_put replacing the
 * night whole, lab_finish a no-op the second time), so that a try cut
 * short by a network or server failure is simply made again: nothing
 * lost, nothing twice. Then the attempt's finish, unless the lab took it
 * back (lost: its runs go up under their own attempt and stay there). */
#include "harness/daemon/lab_member.h"
#include "harness/base/json.h"
#include "harness/report/regress.h"
#include "harness/report/report.h"
#include "db/store.h"
#include "db/store_boots.h"
#include "db/store_builds.h"
#include "db/store_history.h"
#include "db/store_lab.h"
#include "db/store_regress.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VARIANTS_MAX 64

static int hexval(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : 0;
}

void lab_outbox_uuid(const char *key, char kind, int64_t id, char ret[LAB_UUID_LEN + 1])
{
	uint8_t b[16] = { 0 };
	for (size_t i = 0; i < 16 && key[2 * i] && key[2 * i + 1]; i++)
		b[i] = (uint8_t)(hexval(key[2 * i]) << 4 | hexval(key[2 * i + 1]));
	/* the first half is the key's own; the kind and the id (56 bits) go
	 * into the second, masked by the key's: distinct ids stay distinct */
	b[8] ^= (uint8_t)kind;
	for (int i = 0; i < 7; i++)
		b[9 + i] ^= (uint8_t)((uint64_t)id >> (8 * (6 - i)));
	char hex[33];
	for (size_t i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
	snprintf(ret, LAB_UUID_LEN + 1, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
}

/* one upload of a claim's: its data dumped (and released) */
static int send(struct lab *l, const struct lab_machine *self, const struct store_lab_claim *c,
		enum lab_upload_kind kind, char tag, int64_t id, const char *status, json_t *data, struct strbuf *err)
{
	if (!data)
		return -ENOMEM;
	char *text = json_dumps(data, JSON_COMPACT);
	json_decref(data);
	if (!text)
		return -ENOMEM;
	struct lab_upload u = { .kind = kind, .job = c->lab_job, .attempt = c->attempt, .status = status, .data = text };
	snprintf(u.machine, sizeof(u.machine), "%s", self->id);
	if (kind != LAB_UPLOAD_JOB_STATE)
		lab_outbox_uuid(c->key, tag, id, u.id);
	int r = lab_upload(l, &u, err);
	free(text);
	return r;
}

/* ---- runs ---- */

struct runs_ctx {
	json_t *metrics; /* run id -> {metric: value} */
	struct lab *l;
	const struct lab_machine *self;
	const struct store_lab_claim *c;
	struct strbuf *err;
	int r;
	size_t n;
};

static void metric_row(void *ctx, const struct store_run *run, const char *metric, const char *unit, double value)
{
	struct runs_ctx *x = ctx;
	char key[24];
	snprintf(key, sizeof(key), "%lld", (long long)run->id);
	json_t *o = json_object_get(x->metrics, key);
	if (!o) {
		o = json_object();
		if (!o || json_object_set_new(x->metrics, key, o) < 0)
			return;
	}
	jw_set(o, metric, jw_num(value));
}

static int run_row(void *ctx, const struct store_run_row *run)
{
	struct runs_ctx *x = ctx;
	char key[24];
	snprintf(key, sizeof(key), "%lld", (long long)run->id);
	json_t *metrics = json_object_get(x->metrics, key);
	json_t *d = json_pack("{s:I, s:I, s:i, s:i, s:i, s:o, s:o, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:i, s:o, s:O}",
			      "local_run", (json_int_t)run->id, "step", (json_int_t)run->step_id, "pair", run->pair,
			      "variant", run->variant, "workload", run->workload, "reason", jw_str_opt(run->reason),
			      "exit_code", run->exit_code >= 0 ? json_integer(run->exit_code) : json_null(),
			      "term_signal", run->term_signal, "started", jw_time(run->started), "finished",
			      jw_time(run->finished), "kernel_release", jw_str(run->kernel_release), "boot_id",
			      jw_str(run->boot_id), "knobs", jw_str(run->knobs), "kab_version",
			      jw_str(run->kab_version), "cpus", run->cpus, "cgroup_version", run->cgroup_version,
			      "local_job", json_integer(x->c->job_id), "metrics", metrics ? metrics : json_object());
	x->r = send(x->l, x->self, x->c, LAB_UPLOAD_RUN, 'r', run->id, run_status_name(run->status), d, x->err);
	x->n++;
	return x->r < 0;
}

static int send_runs(struct lab *l, const struct lab_machine *self, struct store *st, const struct store_lab_claim *c,
		     size_t *ret_n, struct strbuf *err)
{
	struct runs_ctx x = { .metrics = json_object(), .l = l, .self = self, .c = c, .err = err };
	if (!x.metrics)
		return -ENOMEM;
	int r = store_foreach_metric(st, c->job_id, metric_row, &x);
	if (r >= 0)
		r = store_runs_page(st, c->job_id, 0, SIZE_MAX, run_row, &x);
	json_decref(x.metrics);
	*ret_n = x.n;
	return r < 0 ? r : x.r;
}

/* ---- boots and builds ---- */

struct boots_ctx {
	struct lab *l;
	const struct lab_machine *self;
	const struct store_lab_claim *c;
	struct strbuf *err;
	int r;
};

static void boot_row(void *ctx, const struct store_boot *b)
{
	struct boots_ctx *x = ctx;
	if (x->r < 0)
		return;
	json_t *d = json_pack("{s:I, s:I, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "local_boot",
			      (json_int_t)b->id, "build", (json_int_t)b->build_id, "slot", b->slot, "variant", b->variant,
			      "method", jw_str(b->method), "reason", jw_str_opt(b->reason), "boot_id", jw_str_opt(b->boot_id),
			      "kernel_release", jw_str_opt(b->kernel_release), "switch_at", jw_time(b->switch_at),
			      "prep_s", jw_num(b->prep_s), "uptime_s", jw_num(b->uptime_s), "kexec_s", jw_num(b->kexec_s));
	x->r = send(x->l, x->self, x->c, LAB_UPLOAD_BOOT, 'b', b->id, boot_status_name(b->status), d, x->err);
}

static int send_builds(struct lab *l, const struct lab_machine *self, struct store *st, const struct store_lab_claim *c,
		       struct strbuf *err)
{
	int64_t builds[VARIANTS_MAX] = { 0 };
	/* -ENOENT: not every slot has a build (fewer variants, or running
	 * kernels); the ones that have are filled */
	int r = store_variant_builds_get(st, c->job_id, builds, VARIANTS_MAX);
	if (r < 0 && r != -ENOENT)
		return r;
	for (size_t i = 0; i < VARIANTS_MAX; i++) {
		if (builds[i] <= 0)
			continue;
		struct store_build b = { 0 };
		if (store_build_get(st, builds[i], &b) < 0)
			continue;
		json_t *d = json_pack("{s:I, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "local_build",
				      (json_int_t)b.id, "variant", (int)i, "tree", jw_str_opt(b.tree), "base_ref",
				      jw_str_opt(b.base_ref), "base_sha", jw_str(b.base_sha), "series",
				      jw_str_opt(b.series), "patches", jw_str_opt(b.patches), "compiler",
				      jw_str_opt(b.compiler), "kernelrelease", jw_str(b.kernelrelease), "duration_s",
				      jw_num(b.duration_s), "reason", jw_str_opt(b.reason), "kind", jw_str(b.kind));
		r = send(l, self, c, LAB_UPLOAD_BUILD, 'k', b.id, build_status_name(b.status), d, err);
		store_build_clear(&b);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- the job's state, its report, its night ---- */

static json_t *report_json(struct store *st, int64_t job_id)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return json_null();
	struct report_opts ro = { .format = REPORT_JSON };
	int r = report_print_format(st, job_id, &ro, f);
	if (fclose(f) != 0)
		r = -ENOMEM;
	json_t *v = r >= 0 ? json_loadb(buf, len, 0, NULL) : NULL;
	free(buf);
	return v ? v : json_null();
}

static int send_state(struct lab *l, const struct lab_machine *self, struct store *st, const struct store_lab_claim *c,
		      size_t runs, struct strbuf *err)
{
	struct store_job sj;
	int r = store_job_info(st, c->job_id, &sj);
	if (r < 0 && r != -ENOENT)
		return r;
	bool have = r == 0;
	const char *status = c->lost ? lab_attempt_outcome_name(LAB_ATTEMPT_LOST) : c->outcome;
	json_t *d = json_pack("{s:I, s:o, s:o, s:o, s:o, s:b, s:I, s:o, s:o, s:o, s:o, s:o}", "local_job",
			      (json_int_t)c->job_id, "name", jw_str_opt(have ? sj.name : NULL), "local_status",
			      jw_str_opt(have ? job_status_name(sj.status) : NULL), "reason", jw_str_opt(c->reason),
			      "hostname", jw_str(self->hostname), "lost", c->lost, "runs", (json_int_t)runs, "created",
			      jw_time(have ? sj.created : 0), "started", jw_time(have ? sj.started : 0), "finished",
			      jw_time(have ? sj.finished : 0), "claimed", jw_time(c->claimed), "report",
			      have ? report_json(st, c->job_id) : json_null());
	if (have)
		store_job_clear(&sj);
	return send(l, self, c, LAB_UPLOAD_JOB_STATE, 's', 0, status, d, err);
}

/* The job's night, as its name's history holds it (none: nothing to put). */
static int send_night(struct lab *l, const struct lab_machine *self, struct store *st, const struct store_lab_claim *c,
		      struct strbuf *err)
{
	struct store_job sj;
	if (store_job_info(st, c->job_id, &sj) < 0)
		return 0;
	_cleanup_free_ struct store_history_night *nights = NULL;
	_cleanup_free_ struct store_history_row *rows = NULL;
	size_t n_nights = 0, n_rows = 0, k = 0;
	int r = store_history_nights(st, sj.name, &nights, &n_nights);
	const struct store_history_night *night = NULL;
	for (size_t i = 0; r >= 0 && i < n_nights && !night; i++)
		if (nights[i].job_id == c->job_id)
			night = &nights[i];
	struct store_history_filter f = { .variant = -1 };
	if (r >= 0 && night)
		r = store_history_rows(st, sj.name, &f, &rows, &n_rows);
	if (r >= 0 && night) {
		/* the name's rows, of which the job's */
		for (size_t i = 0; i < n_rows; i++)
			if (rows[i].job_id == c->job_id)
				rows[k++] = rows[i];
		struct lab_night ln = {
			.job = c->lab_job, .attempt = c->attempt, .name = sj.name, .night = night, .rows = k ? rows : NULL, .n_rows = k
		};
		snprintf(ln.machine, sizeof(ln.machine), "%s", self->id);
		r = lab_night_put(l, &ln, err);
	}
	store_job_clear(&sj);
	return r < 0 ? r : 0;
}

int lab_outbox_send(struct lab *l, const struct lab_machine *self, struct store *st, const struct store_lab_claim *c,
		    struct strbuf *err)
{
	size_t runs = 0;
	struct boots_ctx bx = { .l = l, .self = self, .c = c, .err = err };
	int r = send_builds(l, self, st, c, err);
	if (r >= 0 && (r = store_boots_foreach(st, c->job_id, boot_row, &bx)) >= 0)
		r = bx.r;
	if (r >= 0)
		r = send_runs(l, self, st, c, &runs, err);
	if (r >= 0)
		r = send_state(l, self, st, c, runs, err);
	if (r >= 0)
		r = send_night(l, self, st, c, err);
	if (r < 0 || c->lost)
		return r;
	enum lab_attempt_outcome o;
	if (lab_attempt_outcome_parse(c->outcome, &o) < 0)
		o = LAB_ATTEMPT_FAILED;
	r = lab_finish(l, self->id, c->lab_job, c->attempt, o, *c->reason ? c->reason : NULL, err);
	return r < 0 ? r : 0;
}

/* ---- change points ---- */

void lab_outbox_sent_clear(struct lab_outbox_sent *s)
{
	free(s->v);
	*s = (struct lab_outbox_sent){ 0 };
}

/* FNV-1a: a row's JSON changed or not; no adversary here */
static uint64_t hash_of(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h;
}

static struct lab_outbox_sent_row *sent_row(struct lab_outbox_sent *s, int64_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].id == id)
			return &s->v[i];
	if (util_grow(s->v, s->cap, s->n + 1, 16) < 0)
		return NULL;
	s->v[s->n] = (struct lab_outbox_sent_row){ .id = id };
	return &s->v[s->n++];
}

/* the lab's job of a local one, when it was a claim's; 0 otherwise */
static int64_t lab_job_of(struct store *st, int64_t job_id)
{
	struct store_lab_claim c;
	return job_id > 0 && store_lab_get(st, job_id, &c) == 0 ? c.lab_job : 0;
}

/* one row as GET /regressions renders it, compact: malloc'd, NULL when out of memory */
static char *regress_text(const struct store_regress *g, const struct regress_bisections *bs)
{
	struct strbuf sb = { 0 };
	char *text = NULL;
	if (regress_render_json(g, 1, bs, &sb) >= 0 && sb.buf) {
		json_t *all = json_loadb(sb.buf, sb.len, 0, NULL);
		json_t *row = json_array_get(json_object_get(all, "regressions"), 0);
		if (row)
			text = json_dumps(row, JSON_COMPACT | JSON_SORT_KEYS);
		json_decref(all);
	}
	sb_free(&sb);
	return text;
}

int lab_outbox_regressions(struct lab *l, const struct lab_machine *self, struct store *st,
			   struct lab_outbox_sent *sent, size_t *ret_n, struct strbuf *err)
{
	struct store_regress *rows = NULL;
	size_t n = 0, up = 0;
	struct regress_bisections bs = { 0 };
	int r = store_regress_list(st, &rows, &n);
	if (r >= 0)
		r = regress_bisections_load(st, rows, n, &bs);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		const struct store_regress *g = &rows[i];
		char *text = regress_text(g, &bs);
		if (!text) {
			r = -ENOMEM;
			break;
		}
		uint64_t h = hash_of(text);
		struct lab_outbox_sent_row *s = sent_row(sent, g->id);
		if (!s) {
			free(text);
			r = -ENOMEM;
			break;
		}
		if (s->hash == h) {
			free(text);
			continue;
		}
		struct lab_regress lr = { .local_id = g->id,
					  .name = g->name,
					  .workload = g->workload,
					  .metric = g->metric,
					  .state = regress_state_name(g->state),
					  .variant = g->variant,
					  .created = g->created,
					  .good_job = lab_job_of(st, g->good_job),
					  .bad_job = lab_job_of(st, g->bad_job),
					  .data = text };
		snprintf(lr.machine, sizeof(lr.machine), "%s", self->id);
		r = lab_regress_put(l, &lr, err);
		free(text);
		if (r >= 0) {
			s->hash = h;
			up++;
		}
	}
	regress_bisections_free(&bs);
	free(rows);
	if (ret_n)
		*ret_n = up;
	return r < 0 ? r : 0;
}
