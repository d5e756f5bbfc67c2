/* kabd as a member of a lab (doc/lab.md): a thread of its own, with its
 * own connection to the lab's PostgreSQL database (libpq connections are
 * not shared across threads), that registers the machine, heartbeats,
 * renews the leases of the lab jobs this machine runs, claims the oldest
 * job it matches when the executor has nothing to do (a local job, in the
 * machine's own SQLite, which stays authoritative while it runs), and
 * uploads each one's results once it ends (lab_outbox.c). It wakes on the
 * lab's notifications, polling as the fallback. A lab that does not
 * answer stops none of the local work: the member says so once and tries
 * again, backing off. HTTP threads borrow connections of their own from
 * a small pool here (lab_member_borrow). */
#pragma once
#include "db/lab.h"

#include <stdbool.h>
#include <stdint.h>

struct lab_member;
struct store;
struct store_lab_claim;

#define LAB_MEMBER_MAX_ATTEMPTS 3 /* a job submitted through kabd: the lab runs it at most this often */
#define LAB_MEMBER_BACKOFF_MAX_S 30.0
/* a local job that ended this long ago is uploaded even without its
 * night in the history (whose refresh failed, or comes later) */
#define LAB_MEMBER_NIGHT_WAIT_S 30.0

struct lab_member_conf {
	const char *url, *credentials, *tags;
	double heartbeat_s, lease_s;
	const char *machine_id_path; /* /etc/machine-id, or [lab] machine-id */
	const char *own_id_path;     /* kab's own id when that file has none (in the state directory) */
	const char *db_path;         /* the machine's SQLite */
};

/* What the member asks of kabd's executor (queue.c), or of a test. */
struct lab_member_hooks {
	/* the executor is idle and no local job waits, runs or is interrupted */
	bool (*idle)(void *ctx, struct store *st);
	/* stops or cancels a local job: the lab took its attempt back */
	int (*cancel)(void *ctx, struct store *st, int64_t job_id);
	/* a local job was queued: look now */
	void (*wake)(void *ctx);
	void *ctx;
};

/* Checks the configuration and describes the machine (its id, host name,
 * CPUs, memory, architecture, kernel, kexec, cgroup version, tags); no
 * network yet. -EINVAL with the reason in err. */
int lab_member_new(const struct lab_member_conf *c, const struct lab_member_hooks *h, struct lab_member **ret, struct strbuf *err);
/* The member's thread: connects (retrying), then its loop. */
int lab_member_start(struct lab_member *m);
/* Stops and joins the thread, closes every connection, frees. */
void lab_member_free(struct lab_member *m);
/* A local job ended, or the executor went idle: look now. */
void lab_member_wake(struct lab_member *m);

/* What the machine registers as. */
const struct lab_machine *lab_member_machine(const struct lab_member *m);
/* The lab's URL as machine.conf gives it (it holds no password). */
const char *lab_member_url(const struct lab_member *m);
/* Whether the member's own connection is up, and the last error (copied). */
bool lab_member_connected(struct lab_member *m, char *why, size_t len);

/* ---- the loop's steps, each on the caller's store connection (the
 * member's thread, or a test calling them in turn) ---- */

/* Opens the lab (the checks, the schema), registers the machine, listens,
 * and gives back leases the lab says are this machine's but it has no
 * local job for (a crash right after a claim). */
int lab_member_connect(struct lab_member *m, struct store *st, struct strbuf *err);
/* Drops the member's connection (the thread does on a lost one; tests),
 * and the pool's idle connections with it. */
void lab_member_disconnect(struct lab_member *m);
/* The heartbeat: the machine's state, every lease renewed; each claim's
 * lease renewed on its own, and one the lab took back marked lost and its
 * local job cancelled (hooks.cancel); expired leases rescued. */
int lab_member_heartbeat(struct lab_member *m, struct store *st, struct strbuf *err);
/* When hooks.idle: the oldest lab job the machine matches, claimed and
 * queued as a local job with its claim. 1 and *ret_job (the local job,
 * may be NULL) when one was, 0 when none; a job that does not pass this
 * machine's checks is failed in the lab with the reason (0). */
int lab_member_claim(struct lab_member *m, struct store *st, int64_t *ret_job, struct strbuf *err);
/* Claims whose local job ended move to the outbox; the outbox is
 * uploaded and each attempt finished (lab_outbox.c). How many were
 * uploaded in *ret_n (may be NULL). */
int lab_member_sync(struct lab_member *m, struct store *st, int *ret_n, struct strbuf *err);

/* lab_outbox.c: one ended claim's runs, boots, builds, state (with its
 * report) and night uploaded, idempotently (UUIDs from the claim's key,
 * upserts), then its attempt finished unless it was lost. */
int lab_outbox_send(struct lab *l, const struct lab_machine *self, struct store *st, const struct store_lab_claim *c,
		    struct strbuf *err);
/* What lab_outbox_regressions sent: each change point's local id and a
 * hash of the JSON that went up, so that only a row that changed since
 * (its confirmation settled, acknowledged, bisected) goes again. Emptied
 * at each connection: the first heartbeat sends every row (a repeat
 * changes nothing). */
struct lab_outbox_sent {
	struct lab_outbox_sent_row {
		int64_t id;
		uint64_t hash;
	} * v;
	size_t n, cap;
};
void lab_outbox_sent_clear(struct lab_outbox_sent *s);
/* The machine's change points (db/store_regress.h) that are new or changed
 * since they were sent, each uploaded whole (lab_regress_put: keyed by the
 * machine and the local id); how many in *ret_n (may be NULL). */
int lab_outbox_regressions(struct lab *l, const struct lab_machine *self, struct store *st,
			   struct lab_outbox_sent *sent, size_t *ret_n, struct strbuf *err);
/* The UUID of a claim's upload: the claim's key with the kind and the
 * local row's id folded in (distinct for each, the same on every try). */
void lab_outbox_uuid(const char *key, char kind, int64_t id, char ret[LAB_UUID_LEN + 1]);

/* ---- for HTTP threads ---- */

/* A connection of the caller's own (from the pool, else a new one, its
 * schema checked): 0, or -errno with the reason in err. */
int lab_member_borrow(struct lab_member *m, struct lab **ret, struct strbuf *err);
/* Back to the pool; a connection that failed (ok false) is closed. */
void lab_member_give_back(struct lab_member *m, struct lab *l, bool ok);
