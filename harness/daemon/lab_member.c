/* kabd as a member of a lab: the machine described, the member's thread
 * (connect with backoff, heartbeat, claim, sync, wait on notifications),
 * and the pool of connections HTTP threads borrow. See lab_member.h. */
#include "harness/daemon/lab_member.h"
#include "harness/exec/executor.h"
#include "harness/job/job.h"
#include "kernels/kexec.h"
#include "db/store.h"
#include "db/store_lab.h"
#include "harness/base/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define POOL_MAX 4

struct lab_member {
	struct lab_member_conf conf;
	char *url, *credentials, *db_path; /* conf's strings, ours */
	struct lab_member_hooks hooks;
	struct lab_machine self;
	struct lab *lab; /* the member's own connection: its thread's only */

	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stopping, woken, connected;
	char why[512];               /* the last connection error, "" none */
	struct lab_outbox_sent sent; /* the change points sent: the member's thread's only */
	struct lab *pool[POOL_MAX];  /* idle connections for HTTP threads */
	size_t n_pool;
};

/* ---- the machine ---- */

static int describe(struct lab_member *m, struct strbuf *err)
{
	struct lab_machine *s = &m->self;
	int r = lab_machine_id(m->conf.machine_id_path, m->conf.own_id_path, s->id, err);
	if (r < 0)
		return r;
	if (m->conf.tags && (r = lab_tags_parse(m->conf.tags, s, err)) < 0)
		return r;
	if (gethostname(s->hostname, sizeof(s->hostname) - 1) < 0)
		snprintf(s->hostname, sizeof(s->hostname), "%s", "localhost");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	s->cpus = cpus > 0 ? (int)cpus : 1;
	struct sysinfo si;
	if (sysinfo(&si) == 0)
		s->memory = (uint64_t)si.totalram * si.mem_unit;
	struct utsname u;
	if (uname(&u) == 0) {
		snprintf(s->arch, sizeof(s->arch), "%s", u.machine);
		snprintf(s->kernel, sizeof(s->kernel), "%s", u.release);
	}
	struct strbuf why = { 0 };
	s->can_kexec = kexec_supported(&why) == 0;
	sb_free(&why);
	if (exec_memcg_version(&s->cgroup_version) < 0)
		s->cgroup_version = 2;
	return 0;
}

int lab_member_new(const struct lab_member_conf *c, const struct lab_member_hooks *h, struct lab_member **ret, struct strbuf *err)
{
	if (!c->url || !c->db_path) {
		sb_puts(err, "lab: no [lab] url in machine.conf");
		return -EINVAL;
	}
	if (!(c->heartbeat_s > 0) || !(c->lease_s >= 2 * c->heartbeat_s)) {
		sb_printf(err,
			  "lab: [lab] lease (%g s) must be at least twice [lab] heartbeat (%g s): a lease renewed by "
			  "the heartbeat must outlive a late one",
			  c->lease_s, c->heartbeat_s);
		return -EINVAL;
	}
	int r = lab_check_url(c->url, err);
	if (r < 0)
		return r;
	struct lab_member *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->conf = *c;
	m->hooks = *h;
	m->url = strdup(c->url);
	m->credentials = c->credentials ? strdup(c->credentials) : NULL;
	m->db_path = strdup(c->db_path);
	m->conf.url = m->url;
	m->conf.credentials = m->credentials;
	m->conf.db_path = m->db_path;
	m->conf.tags = NULL; /* parsed into self */
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->cv, NULL);
	if (!m->url || !m->db_path || (c->credentials && !m->credentials)) {
		lab_member_free(m);
		return -ENOMEM;
	}
	m->conf.tags = c->tags;
	if ((r = describe(m, err)) < 0) {
		lab_member_free(m);
		return r;
	}
	m->conf.tags = NULL;
	*ret = m;
	return 0;
}

const struct lab_machine *lab_member_machine(const struct lab_member *m)
{
	return &m->self;
}

const char *lab_member_url(const struct lab_member *m)
{
	return m->url;
}

bool lab_member_connected(struct lab_member *m, char *why, size_t len)
{
	pthread_mutex_lock(&m->mu);
	bool up = m->connected;
	if (why)
		snprintf(why, len, "%s", m->why);
	pthread_mutex_unlock(&m->mu);
	return up;
}

static void set_connected(struct lab_member *m, bool up, const char *why)
{
	pthread_mutex_lock(&m->mu);
	m->connected = up;
	snprintf(m->why, sizeof(m->why), "%s", why ? why : "");
	pthread_mutex_unlock(&m->mu);
}

static struct lab_opts opts_of(const struct lab_member *m)
{
	return (struct lab_opts){ .url = m->url, .credentials = m->credentials };
}

/* ---- the loop's steps ---- */

/* Leases the lab says are this machine's that no local claim knows of:
 * claimed just before a crash, before the local job was written. */
static int give_back_unknown(struct lab_member *m, struct store *st, struct strbuf *err)
{
	_cleanup_free_ int64_t *held = NULL;
	size_t n = 0;
	int r = lab_held(m->lab, m->self.id, &held, &n, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		bool known = false;
		for (int s = STORE_LAB_HELD; s <= STORE_LAB_ENDED && !known; s++) {
			_cleanup_free_ struct store_lab_claim *v = NULL;
			size_t k = 0;
			if (store_lab_claims(st, (enum store_lab_state)s, &v, &k) < 0)
				return -EIO;
			for (size_t j = 0; j < k && !known; j++)
				known = v[j].lab_job == held[2 * i] && v[j].attempt == (int)held[2 * i + 1];
		}
		if (known)
			continue;
		log_warn("lab: job %lld attempt %d is this machine's in the lab, but kabd has no local job for it (claimed "
			 "just before a crash?): giving it back to the queue",
			 (long long)held[2 * i], (int)held[2 * i + 1]);
		if ((r = lab_release(m->lab, m->self.id, held[2 * i], (int)held[2 * i + 1], err)) < 0)
			return r;
	}
	return 0;
}

int lab_member_connect(struct lab_member *m, struct store *st, struct strbuf *err)
{
	if (m->lab)
		return 0;
	struct lab_opts o = opts_of(m);
	int r = lab_open(&o, &m->lab, err);
	if (r < 0)
		return r;
	lab_outbox_sent_clear(&m->sent); /* a new database, perhaps: each change point goes up again */
	if ((r = lab_register(m->lab, &m->self, err)) < 0 || (r = lab_listen(m->lab, err)) < 0 ||
	    (r = give_back_unknown(m, st, err)) < 0) {
		lab_close(m->lab);
		m->lab = NULL;
		return r;
	}
	return 0;
}

/* A lost claim's local job, stopped if it has not ended (again at each
 * heartbeat until it has: kabd may have been resuming it just then). */
static void stop_lost(struct lab_member *m, struct store *st, const struct store_lab_claim *c)
{
	struct store_job sj;
	if (c->state != STORE_LAB_HELD || store_job_info(st, c->job_id, &sj) < 0)
		return;
	bool running = !job_status_finished(sj.status);
	store_job_clear(&sj);
	if (running && m->hooks.cancel && m->hooks.cancel(m->hooks.ctx, st, c->job_id) < 0)
		log_warn("lab: local job %lld could not be cancelled yet; kabd tries again at the next heartbeat",
			 (long long)c->job_id);
}

/* The lab took a claim's attempt back: marked lost, its local job stopped. */
static void claim_lost(struct lab_member *m, struct store *st, const struct store_lab_claim *c, const char *why)
{
	char reason[512];
	snprintf(reason, sizeof(reason), "lost: %s", why);
	if (store_lab_lost(st, c->job_id, reason) < 0)
		return;
	log_warn("%s (local job %lld); its runs are kept as a lost attempt, counted in no other", why, (long long)c->job_id);
	stop_lost(m, st, c);
}

/* Each claim not yet finished in the lab: its lease renewed, or lost. */
static int renew_claims(struct lab_member *m, struct store *st, bool *ret_busy, struct strbuf *err)
{
	*ret_busy = false;
	for (int s = STORE_LAB_HELD; s <= STORE_LAB_ENDED; s++) {
		_cleanup_free_ struct store_lab_claim *v = NULL;
		size_t n = 0;
		if (store_lab_claims(st, (enum store_lab_state)s, &v, &n) < 0)
			return -EIO;
		for (size_t i = 0; i < n; i++) {
			if (v[i].lost) {
				stop_lost(m, st, &v[i]);
				continue;
			}
			*ret_busy |= s == STORE_LAB_HELD;
			struct strbuf why = { 0 };
			int r = lab_renew(m->lab, m->self.id, v[i].lab_job, v[i].attempt, m->conf.lease_s, &why);
			if (r == -ESTALE)
				claim_lost(m, st, &v[i], why.buf ? why.buf : "its lease expired");
			else if (r < 0)
				sb_printf(err, "%s", why.buf ? why.buf : "lab: renewing a lease failed");
			sb_free(&why);
			if (r < 0 && r != -ESTALE)
				return r;
		}
	}
	return 0;
}

int lab_member_heartbeat(struct lab_member *m, struct store *st, struct strbuf *err)
{
	if (!m->lab)
		return -ENOTCONN;
	bool busy;
	int r = renew_claims(m, st, &busy, err);
	if (r < 0)
		return r;
	if ((r = lab_heartbeat(m->lab, m->self.id, busy ? LAB_MACHINE_BUSY : LAB_MACHINE_IDLE, m->conf.lease_s, NULL, err)) == -ENOENT) {
		/* the lab forgot the machine (a new database): register again */
		lab_outbox_sent_clear(&m->sent);
		r = lab_register(m->lab, &m->self, err);
	}
	if (r < 0)
		return r;
	int rescued = 0;
	if ((r = lab_rescue(m->lab, &rescued, err)) < 0)
		return r;
	if (rescued)
		log_info("lab: %d job%s whose lease expired went back to the queue (or failed, their attempts spent)",
			 rescued, rescued == 1 ? "" : "s");
	/* the change points this machine's nightly histories found, new or changed */
	size_t sent = 0;
	if ((r = lab_outbox_regressions(m->lab, &m->self, st, &m->sent, &sent, err)) < 0)
		return r;
	if (sent)
		log_info("lab: %zu change point%s uploaded (new, or changed since)", sent, sent == 1 ? "" : "s");
	return 0;
}

static void random_key(char ret[STORE_LAB_KEY_LEN + 1])
{
	uint8_t b[STORE_LAB_KEY_LEN / 2];
	size_t got = 0;
	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
		if (n > 0)
			got += (size_t)n;
		else if (errno != EINTR)
			break;
	}
	if (got < sizeof(b)) {
		/* no getrandom: the time and pid, unique enough for one machine's keys */
		uint64_t t = (uint64_t)(util_real_now() * 1e9) ^ ((uint64_t)getpid() << 48);
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] ^= (uint8_t)(t >> (8 * (i % 8))) + (uint8_t)i;
	}
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(ret + 2 * i, 3, "%02x", b[i]);
}

/* A claimed job that cannot run here: failed in the lab with why. */
static int refuse_claim(struct lab_member *m, const struct lab_claim *c, const char *why, struct strbuf *err)
{
	char reason[768];
	snprintf(reason, sizeof(reason), "%s cannot run it: %s", m->self.hostname, why);
	log_warn("lab: job %lld attempt %d: %s", (long long)c->job, c->attempt, reason);
	int r = lab_finish(m->lab, m->self.id, c->job, c->attempt, LAB_ATTEMPT_FAILED, reason, err);
	return r < 0 && r != -ESTALE ? r : 0;
}

/* The first diagnostic, "LINE: message", for a reason. */
static void first_diag(const struct diags *d, char *buf, size_t len)
{
	if (!d->n) {
		snprintf(buf, len, "its job file does not pass the checks");
		return;
	}
	snprintf(buf, len, "its job file, line %d: %s%s", d->v[0].line, d->v[0].msg, d->n + d->dropped > 1 ? " (and more)" : "");
}

int lab_member_claim(struct lab_member *m, struct store *st, int64_t *ret_job, struct strbuf *err)
{
	if (!m->lab)
		return -ENOTCONN;
	if (m->hooks.idle && !m->hooks.idle(m->hooks.ctx, st))
		return 0;
	struct lab_claim c = { 0 };
	int r = lab_claim(m->lab, m->self.id, m->conf.lease_s, &c, err);
	if (r <= 0)
		return r;
	char file[64], why[512];
	snprintf(file, sizeof(file), "lab-job-%lld.job", (long long)c.job);
	struct diags d = { 0 };
	struct job *j = NULL;
	if (job_parse_string(file, c.text, &j, &d) < 0 || job_check_builds(j, st, &d) > 0) {
		first_diag(&d, why, sizeof(why));
		diags_free(&d);
		job_free(j);
		r = refuse_claim(m, &c, why, err);
		lab_claim_free(&c);
		return r;
	}
	diags_free(&d);
	struct store_lab_claim sc = { .lab_job = c.job, .attempt = c.attempt };
	random_key(sc.key);
	char submitter[80];
	snprintf(submitter, sizeof(submitter), "lab job %lld attempt %d", (long long)c.job, c.attempt);
	int64_t id = 0;
	r = jl_submit_claimed(st, j, submitter, &sc, &id, NULL);
	if (r < 0) {
		/* not recorded here: the lab must not wait for a lease nobody renews */
		log_error("lab: job %lld attempt %d could not be stored as a local job (%s): giving it back",
			  (long long)c.job, c.attempt, strerror(-r));
		r = lab_release(m->lab, m->self.id, c.job, c.attempt, err);
	} else {
		log_info("lab: claimed job %lld attempt %d: local job %lld \"%s\"", (long long)c.job, c.attempt,
			 (long long)id, j->name);
		if (m->hooks.wake)
			m->hooks.wake(m->hooks.ctx);
		if (ret_job)
			*ret_job = id;
		r = 1;
	}
	job_free(j);
	lab_claim_free(&c);
	return r;
}

static const char *outcome_of(enum job_status s)
{
	return lab_attempt_outcome_name(s == JOB_DONE        ? LAB_ATTEMPT_DONE
					: s == JOB_CANCELLED ? LAB_ATTEMPT_CANCELLED
							     : LAB_ATTEMPT_FAILED);
}

/* Whether the night of an ended job is in its name's history, as the
 * executor makes it right after the job's end. */
static bool night_made(struct store *st, const struct store_job *sj)
{
	_cleanup_free_ struct store_history_night *v = NULL;
	size_t n = 0;
	if (store_history_nights(st, sj->name, &v, &n) < 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (v[i].job_id == sj->id)
			return true;
	return false;
}

/* Held claims whose local job ended (or vanished) go to the outbox. */
static void move_ended(struct store *st)
{
	_cleanup_free_ struct store_lab_claim *v = NULL;
	size_t n = 0;
	if (store_lab_claims(st, STORE_LAB_HELD, &v, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		struct store_job sj;
		int r = store_job_info(st, v[i].job_id, &sj);
		if (r == -ENOENT) {
			store_lab_ended(st, v[i].job_id, outcome_of(JOB_FAILED), "the local job was deleted");
			continue;
		}
		if (r < 0)
			continue;
		bool ended = job_status_finished(sj.status) &&
			     (night_made(st, &sj) || util_real_now() - sj.finished > LAB_MEMBER_NIGHT_WAIT_S);
		if (ended)
			store_lab_ended(st, v[i].job_id, outcome_of(sj.status), sj.reason);
		store_job_clear(&sj);
	}
}

int lab_member_sync(struct lab_member *m, struct store *st, int *ret_n, struct strbuf *err)
{
	move_ended(st);
	if (ret_n)
		*ret_n = 0;
	if (!m->lab)
		return -ENOTCONN;
	_cleanup_free_ struct store_lab_claim *v = NULL;
	size_t n = 0;
	if (store_lab_claims(st, STORE_LAB_ENDED, &v, &n) < 0)
		return -EIO;
	for (size_t i = 0; i < n; i++) {
		struct strbuf why = { 0 };
		int r = lab_outbox_send(m->lab, &m->self, st, &v[i], &why);
		if (r == -ESTALE) {
			/* finished too late: the lab rescued it meanwhile */
			claim_lost(m, st, &v[i], why.buf ? why.buf : "its lease expired");
			struct store_lab_claim again;
			if (store_lab_get(st, v[i].job_id, &again) == 0)
				r = lab_outbox_send(m->lab, &m->self, st, &again, &why);
		}
		if (r < 0) {
			store_lab_tried(st, v[i].job_id, why.buf ? why.buf : strerror(-r));
			if (v[i].tries == 0)
				log_warn("lab: the results of job %lld attempt %d (local job %lld) are not uploaded yet, "
					 "kabd tries again at each heartbeat: %s",
					 (long long)v[i].lab_job, v[i].attempt, (long long)v[i].job_id,
					 why.buf ? why.buf : strerror(-r));
			sb_printf(err, "%s", why.buf ? why.buf : strerror(-r));
			sb_free(&why);
			if (r == -ECONNRESET)
				return r;
			continue;
		}
		sb_free(&why);
		store_lab_done(st, v[i].job_id);
		log_info("lab: job %lld attempt %d (local job %lld) uploaded%s", (long long)v[i].lab_job, v[i].attempt,
			 (long long)v[i].job_id, v[i].lost ? " as a lost attempt" : " and finished");
		if (ret_n)
			(*ret_n)++;
	}
	return 0;
}

/* ---- the thread ---- */

static bool stopping(struct lab_member *m)
{
	pthread_mutex_lock(&m->mu);
	bool s = m->stopping;
	pthread_mutex_unlock(&m->mu);
	return s;
}

/* Waits up to s seconds for a stop or a wake; true when woken. */
static bool nap(struct lab_member *m, double s)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	double end = (double)until.tv_sec + (double)until.tv_nsec / 1e9 + s;
	until.tv_sec = (time_t)end;
	until.tv_nsec = (long)((end - (double)until.tv_sec) * 1e9);
	pthread_mutex_lock(&m->mu);
	while (!m->stopping && !m->woken)
		if (pthread_cond_timedwait(&m->cv, &m->mu, &until) == ETIMEDOUT)
			break;
	bool woken = m->woken;
	m->woken = false;
	pthread_mutex_unlock(&m->mu);
	return woken;
}

/* Waits for the next heartbeat, a notification, a wake or a stop, in
 * slices of a second (a wake or a stop is a flag, not the lab's socket). */
static int wait_work(struct lab_member *m, double until, struct strbuf *err)
{
	for (;;) {
		double left = until - util_mono_now();
		if (left <= 0 || stopping(m))
			return 0;
		pthread_mutex_lock(&m->mu);
		bool woken = m->woken;
		m->woken = false;
		pthread_mutex_unlock(&m->mu);
		if (woken)
			return 1;
		int r = lab_wait(m->lab, left < 1 ? left : 1, err);
		if (r != 0)
			return r;
	}
}

void lab_member_disconnect(struct lab_member *m)
{
	lab_close(m->lab);
	m->lab = NULL;
	/* the pool's idle connections went the same way (a server restart ends
	 * them all): closed here, so that no HTTP read after the lab's return
	 * borrows a dead one and fails */
	struct lab *idle[POOL_MAX];
	pthread_mutex_lock(&m->mu);
	size_t n = m->n_pool;
	memcpy(idle, m->pool, n * sizeof(idle[0]));
	m->n_pool = 0;
	pthread_mutex_unlock(&m->mu);
	for (size_t i = 0; i < n; i++)
		lab_close(idle[i]);
}

static void disconnect(struct lab_member *m, const char *why)
{
	lab_member_disconnect(m);
	log_warn("lab: lost the connection to %s: %s; local work goes on, kabd reconnects", m->url, why);
	set_connected(m, false, why);
}

/* One connected round: heartbeat when due, sync, claim, wait. */
static int round_connected(struct lab_member *m, struct store *st, double *next_beat)
{
	struct strbuf err = { 0 };
	int r = 0;
	bool beat = util_mono_now() >= *next_beat;
	if (beat) {
		*next_beat = util_mono_now() + m->conf.heartbeat_s;
		r = lab_member_heartbeat(m, st, &err);
	}
	if (r != -ECONNRESET)
		r = lab_member_sync(m, st, NULL, &err);
	if (r != -ECONNRESET)
		r = lab_member_claim(m, st, NULL, &err);
	if (r >= 0)
		r = wait_work(m, *next_beat, &err);
	if (r == -ECONNRESET)
		disconnect(m, err.buf ? err.buf : "the connection is lost");
	else if (r < 0 && err.buf)
		log_warn("%s", err.buf);
	sb_free(&err);
	return r;
}

static void *member_main(void *arg)
{
	struct lab_member *m = arg;
	struct store *st = NULL;
	if (store_open(m->db_path, &st) < 0) {
		log_error("lab: the member cannot open the database %s: kabd stays out of the lab", m->db_path);
		return NULL;
	}
	double backoff = 1, next_beat = 0;
	bool said = false;
	while (!stopping(m)) {
		if (m->lab) {
			round_connected(m, st, &next_beat);
			continue;
		}
		struct strbuf err = { 0 };
		int r = lab_member_connect(m, st, &err);
		if (r == 0) {
			log_info("lab: joined %s as %s (%s), heartbeat every %g s, leases of %g s", m->url,
				 m->self.hostname, m->self.id, m->conf.heartbeat_s, m->conf.lease_s);
			set_connected(m, true, NULL);
			backoff = 1;
			next_beat = 0;
			said = false;
		} else {
			const char *why = err.buf ? err.buf : strerror(-r);
			char before[512];
			lab_member_connected(m, before, sizeof(before));
			/* once, and again only when the reason changes */
			if (!said || strcmp(before, why) != 0)
				log_error("lab: cannot join %s: %s. kabd serves local work meanwhile and tries again "
					  "(every %g s at most)",
					  m->url, why, LAB_MEMBER_BACKOFF_MAX_S);
			said = true;
			set_connected(m, false, why);
			/* the outbox's ended jobs still move on, for the next connection */
			lab_member_sync(m, st, NULL, NULL);
			nap(m, backoff);
			backoff = backoff * 2 < LAB_MEMBER_BACKOFF_MAX_S ? backoff * 2 : LAB_MEMBER_BACKOFF_MAX_S;
		}
		sb_free(&err);
	}
	if (m->lab) {
		/* say so, so that nobody waits for this machine's heartbeat */
		lab_heartbeat(m->lab, m->self.id, LAB_MACHINE_OFFLINE, m->conf.lease_s, NULL, NULL);
		lab_close(m->lab);
		m->lab = NULL;
	}
	store_close(st);
	return NULL;
}

int lab_member_start(struct lab_member *m)
{
	int r = pthread_create(&m->thread, NULL, member_main, m);
	if (r != 0)
		return -r;
	m->started = true;
	return 0;
}

void lab_member_wake(struct lab_member *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->mu);
	m->woken = true;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
}

void lab_member_free(struct lab_member *m)
{
	if (!m)
		return;
	if (m->started) {
		pthread_mutex_lock(&m->mu);
		m->stopping = true;
		pthread_cond_broadcast(&m->cv);
		pthread_mutex_unlock(&m->mu);
		pthread_join(m->thread, NULL);
	}
	lab_close(m->lab);
	for (size_t i = 0; i < m->n_pool; i++)
		lab_close(m->pool[i]);
	lab_outbox_sent_clear(&m->sent);
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->mu);
	free(m->url);
	free(m->credentials);
	free(m->db_path);
	free(m);
}

/* ---- the pool ---- */

int lab_member_borrow(struct lab_member *m, struct lab **ret, struct strbuf *err)
{
	pthread_mutex_lock(&m->mu);
	struct lab *l = m->n_pool ? m->pool[--m->n_pool] : NULL;
	pthread_mutex_unlock(&m->mu);
	if (l) {
		*ret = l;
		return 0;
	}
	struct lab_opts o = opts_of(m);
	int r = lab_connect(&o, &l, err);
	if (r < 0)
		return r;
	int v = 0;
	if ((r = lab_schema_version(l, &v, err)) < 0) {
		lab_close(l);
		return r;
	}
	if (v != lab_schema_latest()) {
		sb_printf(err, "lab %s: its schema is version %d, this kab's is %d (%s)", m->url, v, lab_schema_latest(),
			  v > lab_schema_latest() ? "upgrade kab on this machine" : "kabd's member brings it up to date; try again");
		lab_close(l);
		return -EPROTO;
	}
	*ret = l;
	return 0;
}

void lab_member_give_back(struct lab_member *m, struct lab *l, bool ok)
{
	if (!l)
		return;
	pthread_mutex_lock(&m->mu);
	bool kept = ok && m->n_pool < POOL_MAX;
	if (kept)
		m->pool[m->n_pool++] = l;
	pthread_mutex_unlock(&m->mu);
	if (!kept)
		lab_close(l);
}
