/* The lab's jobs this machine claimed, in its own SQLite (migration 16):
 * which local job each became and the lease it holds (lab job, attempt),
 * written with the local job in one transaction (store_job_spec.lab), so
 * that after a kexec, a restart or a power cut kabd knows which leases
 * are its own and renews them. Then the outbox: once the local job ends,
 * its runs, boots, builds, state and night go up to the lab and the
 * attempt is finished; until that succeeds the claim stays ended, its
 * tries and last error kept, and kabd's member loop tries again. A claim
 * the lab took back (its lease expired) is marked lost: its runs are
 * kept and uploaded under its own attempt, never mixed into another. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;

/* clang-format off */
#define STORE_LAB_STATE_LIST(X) \
	X(STORE_LAB_HELD, "held") X(STORE_LAB_ENDED, "ended") X(STORE_LAB_DONE, "done")
/* clang-format on */
#define STORE_LAB_ENUM_ITEM(e, w) e,
/* held: the local job runs or will; ended: it ended, its upload is due;
 * done: uploaded and finished in the lab (or lost and uploaded) */
enum store_lab_state { STORE_LAB_STATE_UNKNOWN = -1, STORE_LAB_STATE_LIST(STORE_LAB_ENUM_ITEM) STORE_LAB_STATE_N };
const char *store_lab_state_name(enum store_lab_state v);
int store_lab_state_parse(const char *s, enum store_lab_state *ret);

#define STORE_LAB_KEY_LEN 32 /* hex digits */

struct store_lab_claim {
	int64_t job_id; /* the local job */
	int64_t lab_job;
	int attempt;
	char key[STORE_LAB_KEY_LEN + 1]; /* random, made at the claim: its uploads' UUIDs */
	enum store_lab_state state;
	bool lost;        /* the lab took the attempt back */
	char outcome[16]; /* the lab's outcome word once ended ("done", "failed", "cancelled") */
	char reason[512];
	double claimed, ended, uploaded;
	int tries;       /* uploads tried since it ended */
	char error[512]; /* the last one's error; "" none */
};

/* Claims in that state, oldest first (*ret malloc'd, NULL when none). */
int store_lab_claims(struct store *s, enum store_lab_state state, struct store_lab_claim **ret, size_t *ret_n);
/* The claim of a local job; -ENOENT when the job is no lab job. */
int store_lab_get(struct store *s, int64_t job_id, struct store_lab_claim *ret);
/* The local job ended (held -> ended), its outcome word and reason. */
int store_lab_ended(struct store *s, int64_t job_id, const char *outcome, const char *reason);
/* The lab took the attempt back: lost, with why (any state but done). */
int store_lab_lost(struct store *s, int64_t job_id, const char *reason);
/* An upload that failed: one more try, and its error. */
int store_lab_tried(struct store *s, int64_t job_id, const char *error);
/* Uploaded and finished (ended -> done). */
int store_lab_done(struct store *s, int64_t job_id);
/* How many claims are in that state. */
int store_lab_count(struct store *s, enum store_lab_state state, int64_t *ret);
