/* A parsed job into the store: the store records its own plain form of a
 * job (struct store_job_spec, db/store.h), filled here from struct job, so
 * that db/ knows nothing of the parser. */
#pragma once
#include <stddef.h>
#include <stdint.h>

struct job;
struct store;
struct store_step;
struct strbuf;

struct store_lab_claim;

/* store_job_create and store_job_submit of j; lab: the lab's claim it
 * runs for, recorded with it (NULL: none). */
int job_store_create(struct store *st, const struct job *j, int64_t *ret_id);
int job_store_submit(struct store *st, const struct job *j, const char *submitter, const struct store_step *steps,
		     size_t n, const struct store_lab_claim *lab, int64_t *ret_id);
/* A stored job parsed again from its text as it was submitted, without
 * the machine's checks: 0, or -errno with err saying which job and why
 * (not in the database, its text no longer parses). */
int job_store_load(struct store *st, int64_t id, struct job **ret, struct strbuf *err);
