/* Change points to confirmations to regressions (nightly.h). */
#include "harness/daemon/nightly.h"
#include "harness/daemon/queue.h"
#include "harness/job/job.h"
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

/* A stored night's job, parsed again as it was submitted. */
static int load_night(struct store *st, int64_t id, struct job **ret, struct strbuf *err)
{
	struct store_job sj;
	int r = store_job_get(st, id, &sj);
	if (r < 0) {
		sb_printf(err, "job %lld is not in the database", (long long)id);
		return r;
	}
	struct diags d = { 0 };
	r = job_parse_string_nocheck(sj.file, sj.text, ret, &d);
	if (r < 0)
		sb_printf(err, "job %lld's text no longer parses", (long long)id);
	diags_free(&d);
	store_job_clear(&sj);
	return r;
}

/* The confirmation's text: the two nights' variant c->variant. */
static int confirmation_text(struct store *st, const struct nightly_change *c, int64_t rid, char **ret, struct strbuf *err)
{
	struct job *good = NULL, *bad = NULL;
	int r = load_night(st, c->good_job, &good, err);
	if (r == 0)
		r = load_night(st, c->bad_job, &bad, err);
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
		};
		if ((r = job_confirmation(good, bad, (size_t)c->variant, &jc, ret)) < 0)
			sb_printf(err, "the nights' variant %d cannot be paired: %s", c->variant, strerror(-r));
	}
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

int nightly_confirm(struct queue *q, struct store *st, const struct nightly_change *c)
{
	bool known;
	int r = store_regress_known(st, c->name, c->workload, c->metric, c->variant, c->bad_job, NIGHTLY_SAME_CHANGE_NIGHTS, &known);
	if (r < 0 || known)
		return r < 0 ? r : 0;
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
	int64_t rid;
	if ((r = store_regress_add(st, &g, &rid)) < 0)
		return r;

	struct strbuf err = { 0 };
	char *text = NULL;
	struct job *cj = NULL;
	struct diags d = { 0 };
	int64_t id = 0;
	if ((r = confirmation_text(st, c, rid, &text, &err)) < 0)
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
	r = store_regress_set_confirm(st, rid, id);
	log_info("kabd: %s: change point %lld on %s/%s (%+.1f%% from job %lld) queued confirmation job %lld", c->name,
		 (long long)rid, c->workload, c->metric, c->pct, (long long)c->bad_job, (long long)id);
	r = r < 0 ? r : 1;
	goto out;
fail:
	fail_row(st, rid, err.buf ? err.buf : strerror(-r));
out:
	sb_free(&err);
	free(text);
	job_free(cj);
	diags_free(&d);
	return r;
}

int nightly_settle(struct store *st, int64_t job_id)
{
	struct store_regress g;
	int r = store_regress_by_confirm(st, job_id, &g);
	if (r < 0)
		return r;
	struct store_job sj;
	if ((r = store_job_info(st, job_id, &sj)) < 0)
		return r;
	char why[512];
	if (sj.status != JOB_DONE) {
		snprintf(why, sizeof(why), "confirmation job %lld ended %s%s%s", (long long)job_id,
			 job_status_name(sj.status), sj.reason[0] ? ": " : "", sj.reason);
		store_job_clear(&sj);
		fail_row(st, g.id, why);
		return 0;
	}
	store_job_clear(&sj);
	struct report *rep = NULL;
	if ((r = report_load(st, job_id, &rep)) < 0 || (r = report_analyze(rep)) < 0) {
		report_free(rep);
		snprintf(why, sizeof(why), "confirmation job %lld cannot be analyzed: %s", (long long)job_id, strerror(-r));
		fail_row(st, g.id, why);
		return 0;
	}
	const struct report_metric *m = NULL;
	for (size_t i = 0; i < rep->n_workloads && !m; i++)
		if (strcmp(rep->w[i].name, g.workload) == 0)
			m = report_find_metric(&rep->w[i], g.metric);
	if (!m || rep->n_variants < 2) {
		report_free(rep);
		snprintf(why, sizeof(why), "confirmation job %lld has no %s in workload %s", (long long)job_id, g.metric, g.workload);
		fail_row(st, g.id, why);
		return 0;
	}
	const struct stats_result *res = &m->cmp[1];
	g.estimate_pct = res->hl_pct;
	g.ci_lo_pct = res->ci_low_pct;
	g.ci_hi_pct = res->ci_high_pct;
	g.p = res->p_value;
	cpy(g.verdict, sizeof(g.verdict), stats_verdict_name(res->verdict));
	bool decided = res->verdict == STATS_VERDICT_WORSE || res->verdict == STATS_VERDICT_BETTER || res->verdict == STATS_VERDICT_CHANGED;
	/* the paired test must move the way the history moved */
	bool same_way = isfinite(res->hl_pct) && isfinite(g.detected_pct) && (res->hl_pct > 0) == (g.detected_pct > 0);
	g.state = decided && same_way ? REGRESS_CONFIRMED : REGRESS_NOT_CONFIRMED;
	if (g.state == REGRESS_CONFIRMED)
		snprintf(g.reason, sizeof(g.reason), "the paired comparison says %s", g.verdict);
	else if (decided)
		snprintf(g.reason, sizeof(g.reason), "the paired comparison says %s, against the history's %+.1f%%",
			 g.verdict, g.detected_pct);
	else
		snprintf(g.reason, sizeof(g.reason), "the paired comparison says %s", g.verdict);
	report_free(rep);
	r = store_regress_settle(st, &g);
	log_info("kabd: change point %lld (%s/%s): %s, %+.1f%% [%+.1f, %+.1f]", (long long)g.id, g.workload, g.metric,
		 regress_state_name(g.state), g.estimate_pct, g.ci_lo_pct, g.ci_hi_pct);
	return r;
}

/* Every change point of the name's primary series goes to
 * nightly_confirm, which skips those it has seen. */
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
	for (size_t i = 0; i < h->n_series; i++) {
		const struct history_series *s = &h->series[i];
		if (!s->key->primary)
			continue;
		for (size_t k = 0; k < s->n_changes; k++) {
			const struct history_change *c = &s->changes[k];
			const struct history_point *pg = &s->points[c->last_good], *pb = &s->points[c->first_bad];
			const struct store_history_night *ng = &h->nights[pg->night], *nb = &h->nights[pb->night];
			struct nightly_change nc = {
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
			if ((r = nightly_confirm(q, st, &nc)) < 0)
				log_warn("kabd: %s: the change point on %s/%s at job %lld was not queued for confirmation: %s",
					 name, nc.workload, nc.metric, (long long)nc.bad_job, strerror(-r));
		}
	}
	history_free(h);
}

void nightly_after_job(struct queue *q, struct store *st, int64_t job_id)
{
	int r = nightly_settle(st, job_id);
	if (r != -ENOENT) {
		/* a confirmation: it settles its change and starts no history of its own */
		if (r < 0)
			log_warn("kabd: job %lld's change point could not be settled: %s", (long long)job_id, strerror(-r));
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
