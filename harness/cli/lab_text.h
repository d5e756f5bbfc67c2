/* kab lab's text: kabd's replies to GET /lab/machines, /lab/jobs and
 * /lab/jobs/ID (doc/lab.md) as tables for a terminal. Every string in a
 * reply is the server's: each is shown through esc.h, a cell on one line.
 * A reply that lacks a field this kab shows, or holds it as another type,
 * is refused naming the field; nothing is written then. No socket here:
 * the replies come in parsed (client_json_parse), so tests feed them. */
#pragma once
#include <jansson.h>
#include <stdio.h>

#include "harness/base/util.h"

/* A machine a row: host name, short id, state, CPUs, memory, arch,
 * kernel, kexec, cgroup version, tags, heartbeat age and the lab job it
 * holds ("-": none). 0, or -EBADMSG with err naming the field
 * ("machines[1].cpus is a string, not an integer"), or -ENOMEM / -EIO. */
int lab_text_machines(json_t *machines, FILE *out, struct strbuf *err);
/* A job a row: id, state, selector, machine, attempt, submitted (UTC), by. */
int lab_text_jobs(json_t *jobs, FILE *out, struct strbuf *err);
/* One job: its fields, its attempts as a table (which one counted, which
 * were lost), and, while it waits, why. */
int lab_text_job(json_t *job, FILE *out, struct strbuf *err);
