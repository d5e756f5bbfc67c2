/* bisect = auto (doc/bisect.md, "Started by itself, within a budget"): a
 * regression that kabd's nightly confirmation confirmed, of a nightly job
 * whose first bad night ran with bisect = auto in [job], has its
 * bisection asked for by kabd itself, as POST /regressions/ID/bisect
 * asks (bisect_create), with the job's bisect.boots as its budget. Once:
 * what came of it ("bisection 7", or why it was refused) is noted on the
 * regression, so neither a later confirmation nor a restart asks again,
 * and a refusal is a note and a log line, never a dead kabd. */
#pragma once

struct bisect_env;
struct store;

/* Asks for the bisection of every confirmed regression of a bisect =
 * auto night that has none and was not asked for yet: after a
 * confirmation job settled its changes, and at kabd's start (for a kabd
 * that stopped between the two). Returns how many were started (their
 * step jobs are queued when the running bisections are next advanced),
 * or -errno when the store could not list them. */
int bisect_auto_all(struct store *st, const struct bisect_env *env);
