/* Change points to confirmations to regressions (nightly.h). */
#include "harness/daemon/nightly.h"
#include "harness/daemon/bisect_auto.h"
#include "harness/daemon/queue.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
#include "harness/report/history.h"
#include "harness/report/report.h"
#include "db/store.h"
#include "db/store_regress.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void cpy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

static void machine_name(char *buf, size_t len)
{
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(buf, len, "%s (%s)", u.nodename, u.release);
	else
		cpy(buf, len, "");
}

/* The distinct workloads of c[0..n), in order, into names[]. */
static size_t group_workloads(const struct nightly_change *c, size_t n, const char **names)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		size_t m = 0;
		while (m < k && strcmp(names[m], c[i].workload) != 0)
			m++;
		if (m == k)
			names[k++] = c[i].workload;
	}
	return k;
}

/* The confirmation's text: the two nights' variant c->variant, with the
 * workloads of the group's changes only. */
static int confirmation_text(struct store *st, const struct nightly_change *c, size_t n, int64_t rid, char **ret, struct strbuf *err)
{
	struct job *good = NULL, *bad = NULL;
	const char **names = calloc(n, sizeof(*names));
	if (!names)
		return -ENOMEM;
	int r = job_store_load(st, c->good_job, &good, err);
	if (r == 0)
		r = job_store_load(st, c->bad_job, &bad, err);
	if (r == 0) {
		char name[128], gname[64], bname[64];
		snprintf(name, sizeof(name), "%.100s.confirm-%lld", c->name, (long long)rid);
		if (c->good_sha && c->good_sha[0] && c->bad_sha && c->bad_sha[0] && strcmp(c->good_sha, c->bad_sha)) {
			snprintf(gname, sizeof(gname), "good-%.12s", c->good_sha);
			snprintf(bname, sizeof(bname), "bad-%.12s", c->bad_sha);
		} else {
			snprintf(gname, sizeof(gname), "good-job%lld", (long long)c->good_job);
			snprintf(bname, sizeof(bname), "bad-job%lld", (long long)c->bad_job);
		}
		struct job_confirm jc = {
			.name = name,
			.good_name = gname,
			.bad_name = bname,
			.good_base = c->good_sha && c->good_sha[0] ? c->good_sha : NULL,
			.bad_base = c->bad_sha && c->bad_sha[0] ? c->bad_sha : NULL,
			.min_pairs = NIGHTLY_CONFIRM_MIN_PAIRS,
			.max_pairs = NIGHTLY_CONFIRM_MAX_PAIRS,
			.step = NIGHTLY_CONFIRM_STEP,
			.workloads = names,
			.n_workloads = group_workloads(c, n, names),
		};
		r = job_confirmation(good, bad, (size_t)c->variant, &jc, ret);
		if (r == -ENOENT)
			sb_printf(err, "job %lld has none of the workloads that changed (%s%s)", (long long)c->bad_job,
				  names[0], jc.n_workloads > 1 ? ", ..." : "");
		else if (r < 0)
			sb_printf(err, "the nights' variant %d cannot be paired: %s", c->variant, strerror(-r));
	}
	free(names);
	job_free(good);
	job_free(bad);
	return r;
}

static void fail_row(struct store *st, int64_t rid, const char *why)
{
	struct store_regress g = { .id = rid, .state = REGRESS_FAILED, .estimate_pct = NAN, .ci_lo_pct = NAN, .ci_hi_pct = NAN, .p = NAN };
	cpy(g.reason, sizeof(g.reason), why);
	store_regress_settle(st, &g);
	log_warn("kabd: change point %lld: %s", (long long)rid, why);
}

/* The row of one change, pending. */
static int add_row(struct store *st, const struct nightly_change *c, int64_t *ret_id)
{
	struct store_regress g = {
		.created = now_s(),
		.variant = c->variant,
		.good_job = c->good_job,
		.bad_job = c->bad_job,
		.good_night = c->good_night,
		.bad_night = c->bad_night,
		.mean_before = c->mean_before,
		.mean_after = c->mean_after,
		.detected_pct = c->pct,
		.detected_p = c->p,
		.state = REGRESS_PENDING,
	};
	cpy(g.name, sizeof(g.name), c->name);
	cpy(g.workload, sizeof(g.workload), c->workload);
	cpy(g.metric, sizeof(g.metric), c->metric);
	cpy(g.direction, sizeof(g.direction), c->direction);
	cpy(g.track, sizeof(g.track), c->track);
	cpy(g.good_sha, sizeof(g.good_sha), c->good_sha);
	cpy(g.bad_sha, sizeof(g.bad_sha), c->bad_sha);
	cpy(g.good_subject, sizeof(g.good_subject), c->good_subject);
	cpy(g.bad_subject, sizeof(g.bad_subject), c->bad_subject);
	machine_name(g.machine, sizeof(g.machine));
	return store_regress_add(st, &g, ret_id);
}

int nightly_confirm(struct queue *q, struct store *st, const struct nightly_change *c, size_t n)
{
	int64_t *rids = calloc(n ? n : 1, sizeof(*rids));
	struct nightly_change *todo = calloc(n ? n : 1, sizeof(*todo));
	size_t k = 0;
	int r = rids && todo ? 0 : -ENOMEM;
	for (size_t i = 0; r >= 0 && i < n; i++) {
		bool known;
		r = store_regress_known(st, c[i].name, c[i].workload, c[i].metric, c[i].variant, c[i].bad_job,
					NIGHTLY_SAME_CHANGE_NIGHTS, &known);
		if (r >= 0 && !known && (r = add_row(st, &c[i], &rids[k])) >= 0)
			todo[k++] = c[i];
	}
	if (r < 0 || k == 0)
		goto out;

	struct strbuf err = { 0 }, what = { 0 };
	char *text = NULL;
	struct job *cj = NULL;
	struct diags d = { 0 };
	int64_t id = 0;
	if ((r = confirmation_text(st, todo, k, rids[0], &text, &err)) < 0)
		goto fail;
	if ((r = job_parse_string("confirmation", text, &cj, &d)) < 0) {
		sb_printf(&err, "the confirmation job does not pass its checks: %s", d.n ? d.v[0].msg : "see kabd's log");
		diags_print(&d, stderr);
		goto fail;
	}
	if ((r = queue_submit(q, st, cj, "kabd (confirmation)", &id)) < 0) {
		sb_printf(&err, "the confirmation job could not be queued: %s", strerror(-r));
		goto fail;
	}
	for (size_t i = 0; i < k; i++) {
		int e = store_regress_set_confirm(st, rids[i], id);
		r = r < 0 ? r : e;
		sb_printf(&what, "%s%lld %s/%s %+.1f%%", i ? ", " : "", (long long)rids[i], todo[i].workload,
			  todo[i].metric, todo[i].pct);
	}
	log_info("kabd: %s: change point%s %s (variant %d, job %lld to %lld) queued confirmation job %lld, %zu workload%s",
		 todo[0].name, k == 1 ? "" : "s", what.buf, todo[0].variant, (long long)todo[0].good_job,
		 (long long)todo[0].bad_job, (long long)id, cj->n_workloads, cj->n_workloads == 1 ? "" : "s");
	r = r < 0 ? r : 1;
	goto done;
fail:
	for (size_t i = 0; i < k; i++)
		fail_row(st, rids[i], err.buf ? err.buf : strerror(-r));
done:
	sb_free(&err);
	sb_free(&what);
	free(text);
	job_free(cj);
	diags_free(&d);
out:
	free(rids);
	free(todo);
	return r;
}

/* One waiting change's outcome from the confirmation's report. */
static void settle_row(struct store *st, const struct report *rep, int64_t job_id, struct store_regress *g)
{
	char why[512];
	const struct report_metric *m = NULL;
	for (size_t i = 0; i < rep->n_workloads && !m; i++)
		if (strcmp(rep->w[i].name, g->workload) == 0)
			m = report_find_metric(&rep->w[i], g->metric);
	if (!m || rep->n_variants < 2) {
		snprintf(why, sizeof(why), "confirmation job %lld has no %s in workload %s", (long long)job_id,
			 g->metric, g->workload);
		fail_row(st, g->id, why);
		return;
	}
	const struct stats_result *res = &m->cmp[1];
	g->estimate_pct = res->hl_pct;
	g->ci_lo_pct = res->ci_low_pct;
	g->ci_hi_pct = res->ci_high_pct;
	g->p = res->p_value;
	cpy(g->verdict, sizeof(g->verdict), stats_verdict_name(res->verdict));
	bool decided = res->verdict == STATS_VERDICT_WORSE || res->verdict == STATS_VERDICT_BETTER || res->verdict == STATS_VERDICT_CHANGED;
	/* the paired test must move the way the history moved */
	bool same_way = isfinite(res->hl_pct) && isfinite(g->detected_pct) && (res->hl_pct > 0) == (g->detected_pct > 0);
	g->state = decided && same_way ? REGRESS_CONFIRMED : REGRESS_NOT_CONFIRMED;
	if (g->state == REGRESS_CONFIRMED)
		snprintf(g->reason, sizeof(g->reason), "the paired comparison says %s", g->verdict);
	else if (decided)
		snprintf(g->reason, sizeof(g->reason), "the paired comparison says %s, against the history's %+.1f%%",
			 g->verdict, g->detected_pct);
	else
		snprintf(g->reason, sizeof(g->reason), "the paired comparison says %s", g->verdict);
	if (store_regress_settle(st, g) < 0)
		log_warn("kabd: change point %lld could not be settled: %s", (long long)g->id, store_errmsg(st));
	log_info("kabd: change point %lld (%s/%s): %s, %+.1f%% [%+.1f, %+.1f]", (long long)g->id, g->workload,
		 g->metric, regress_state_name(g->state), g->estimate_pct, g->ci_lo_pct, g->ci_hi_pct);
}

int nightly_settle(struct store *st, int64_t job_id)
{
	struct store_regress *rows = NULL;
	size_t n = 0;
	int r = store_regress_by_confirm(st, job_id, &rows, &n);
	if (r < 0)
		return r;
	struct store_job sj;
	if ((r = store_job_info(st, job_id, &sj)) < 0) {
		free(rows);
		return r;
	}
	char why[512] = "";
	struct report *rep = NULL;
	if (sj.status != JOB_DONE)
		snprintf(why, sizeof(why), "confirmation job %lld ended %s%s%s", (long long)job_id,
			 job_status_name(sj.status), sj.reason[0] ? ": " : "", sj.reason);
	else if ((r = report_load(st, job_id, &rep)) < 0 || (r = report_analyze(rep)) < 0)
		snprintf(why, sizeof(why), "confirmation job %lld cannot be analyzed: %s", (long long)job_id, strerror(-r));
	store_job_clear(&sj);
	for (size_t i = 0; i < n; i++) {
		if (why[0])
			fail_row(st, rows[i].id, why);
		else
			settle_row(st, rep, job_id, &rows[i]);
	}
	report_free(rep);
	free(rows);
	return 0;
}

static int by_group(const void *pa, const void *pb)
{
	const struct nightly_change *a = pa, *b = pb;
	if (a->good_job != b->good_job)
		return a->good_job < b->good_job ? -1 : 1;
	if (a->bad_job != b->bad_job)
		return a->bad_job < b->bad_job ? -1 : 1;
	if (a->variant != b->variant)
		return a->variant < b->variant ? -1 : 1;
	int c = strcmp(a->workload, b->workload);
	return c ? c : strcmp(a->metric, b->metric);
}

static const struct nightly_change *sort_base;

static int by_size(const void *pa, const void *pb)
{
	const struct nightly_group *a = pa, *b = pb;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	int64_t ja = sort_base[a->first].bad_job, jb = sort_base[b->first].bad_job;
	if (ja != jb)
		return ja > jb ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

static double magnitude(double pct)
{
	return isfinite(pct) ? fabs(pct) : 0;
}

int nightly_group_changes(struct nightly_change *changes, size_t n, struct nightly_group **ret, size_t *ret_n)
{
	struct nightly_group *g = calloc(n ? n : 1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	if (n) /* changes may be NULL then */
		qsort(changes, n, sizeof(*changes), by_group);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct nightly_change *c = &changes[i], *prev = i ? &changes[i - 1] : NULL;
		if (!prev || prev->good_job != c->good_job || prev->bad_job != c->bad_job || prev->variant != c->variant)
			g[k++] = (struct nightly_group){ .first = i };
		struct nightly_group *cur = &g[k - 1];
		cur->n++;
		if (magnitude(c->pct) > cur->size)
			cur->size = magnitude(c->pct);
	}
	/* only the executor's thread groups changes: a static for qsort is safe */
	sort_base = changes;
	qsort(g, k, sizeof(*g), by_size);
	sort_base = NULL;
	*ret = g;
	*ret_n = k;
	return 0;
}

/* The change points of the name's primary series not recorded yet. */
static int new_changes(struct store *st, const struct history *h, const char *name, struct nightly_change **ret, size_t *ret_n)
{
	struct nightly_change *v = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < h->n_series; i++) {
		const struct history_series *s = &h->series[i];
		if (!s->key->primary)
			continue;
		for (size_t k = 0; k < s->n_changes; k++) {
			const struct history_change *c = &s->changes[k];
			const struct history_point *pg = &s->points[c->last_good], *pb = &s->points[c->first_bad];
			const struct store_history_night *ng = &h->nights[pg->night], *nb = &h->nights[pb->night];
			bool known;
			int r = store_regress_known(st, name, s->key->workload, s->key->metric, s->key->variant,
						    nb->job_id, NIGHTLY_SAME_CHANGE_NIGHTS, &known);
			if (r < 0) {
				free(v);
				return r;
			}
			if (known)
				continue;
			if (util_grow(v, cap, n + 1, 8) < 0) {
				free(v);
				return -ENOMEM;
			}
			v[n++] = (struct nightly_change){
				.name = name,
				.workload = s->key->workload,
				.metric = s->key->metric,
				.direction = s->key->direction,
				.variant = s->key->variant,
				.good_job = ng->job_id,
				.bad_job = nb->job_id,
				.good_night = ng->night,
				.bad_night = nb->night,
				.track = pb->commit ? pb->commit->track : NULL,
				.good_sha = pg->commit ? pg->commit->sha : NULL,
				.bad_sha = pb->commit ? pb->commit->sha : NULL,
				.good_subject = pg->commit ? pg->commit->subject : NULL,
				.bad_subject = pb->commit ? pb->commit->subject : NULL,
				.mean_before = c->mean_before,
				.mean_after = c->mean_after,
				.pct = c->delta_pts,
				.p = c->p,
			};
		}
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Says which groups wait for a later night: the cap's log line. */
static void log_over_cap(const char *name, const struct nightly_change *c, const struct nightly_group *g, size_t n_groups, size_t n_changes)
{
	struct strbuf b = { 0 };
	size_t over = n_groups - NIGHTLY_CONFIRM_MAX_PER_NIGHT, waiting = 0;
	for (size_t i = NIGHTLY_CONFIRM_MAX_PER_NIGHT; i < n_groups; i++) {
		waiting += g[i].n;
		if (i < NIGHTLY_CONFIRM_MAX_PER_NIGHT + 4)
			sb_printf(&b, "%sjob %lld to %lld variant %d (%zu change%s, %s/%s %+.1f%%)", b.len ? "; " : "",
				  (long long)c[g[i].first].good_job, (long long)c[g[i].first].bad_job,
				  c[g[i].first].variant, g[i].n, g[i].n == 1 ? "" : "s", c[g[i].first].workload,
				  c[g[i].first].metric, c[g[i].first].pct);
	}
	if (over > 4)
		sb_printf(&b, "; and %zu more", over - 4);
	log_warn("kabd: %s: %zu new change points need %zu confirmation jobs; %u are queued (NIGHTLY_CONFIRM_MAX_PER_NIGHT), "
		 "the largest changes first; %zu change%s of %zu night pair%s wait for a later night: %s",
		 name, n_changes, n_groups, NIGHTLY_CONFIRM_MAX_PER_NIGHT, waiting, waiting == 1 ? "" : "s", over,
		 over == 1 ? "" : "s", b.buf ? b.buf : "");
	sb_free(&b);
}

/* The name's new change points, grouped by night pair and compared
 * variant, the largest first, at most NIGHTLY_CONFIRM_MAX_PER_NIGHT
 * confirmation jobs. */
static void confirm_changes(struct queue *q, struct store *st, const char *name)
{
	struct history *h = NULL;
	struct history_query hq = { 0 };
	int r = history_load(st, name, &hq, &h);
	if (r < 0) {
		if (r != -ENOENT)
			log_warn("kabd: the history of \"%s\" could not be read for change points: %s", name, strerror(-r));
		return;
	}
	struct nightly_change *c = NULL;
	struct nightly_group *g = NULL;
	size_t n = 0, n_groups = 0;
	if ((r = new_changes(st, h, name, &c, &n)) < 0 || (r = nightly_group_changes(c, n, &g, &n_groups)) < 0) {
		log_warn("kabd: %s: the change points could not be gathered: %s", name, strerror(-r));
		goto out;
	}
	if (n_groups > NIGHTLY_CONFIRM_MAX_PER_NIGHT)
		log_over_cap(name, c, g, n_groups, n);
	for (size_t i = 0; i < n_groups && i < NIGHTLY_CONFIRM_MAX_PER_NIGHT; i++) {
		const struct nightly_change *first = &c[g[i].first];
		if ((r = nightly_confirm(q, st, first, g[i].n)) < 0)
			log_warn("kabd: %s: the change points of job %lld to %lld (variant %d) were not queued for confirmation: %s",
				 name, (long long)first->good_job, (long long)first->bad_job, first->variant, strerror(-r));
	}
out:
	free(g);
	free(c);
	history_free(h);
}

void nightly_after_job(struct queue *q, struct store *st, int64_t job_id)
{
	int r = nightly_settle(st, job_id);
	if (r != -ENOENT) {
		/* a confirmation: it settles its change and starts no history of
		 * its own; a confirmed change of a bisect = auto night is bisected */
		if (r < 0)
			log_warn("kabd: job %lld's change point could not be settled: %s", (long long)job_id, strerror(-r));
		else if ((r = bisect_auto_all(st, queue_bisect_env(q))) > 0)
			queue_bisect_due(q);
		else if (r < 0)
			log_warn("kabd: the regressions bisect = auto asks for could not be listed: %s", strerror(-r));
		return;
	}
	struct store_job sj;
	if (store_job_info(st, job_id, &sj) < 0)
		return;
	char name[sizeof(sj.name)];
	snprintf(name, sizeof(name), "%s", sj.name);
	store_job_clear(&sj);
	confirm_changes(q, st, name);
}
