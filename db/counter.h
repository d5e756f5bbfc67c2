/* What a recorded kernel counter is, by its full name ("vmstat.pgfault",
 * "memcg.anon", "interrupts.TLB.cpu1", "psi.memory.some_total"). */
#pragma once
#include <stdbool.h>

/* Whether a counter accumulates (events) or is a level (gauge). */
bool counter_is_gauge(const char *metric);
/* The unit of a counter from its name: "pages", "events", "bytes", "us",
 * "interrupts", "kB", "count"; "" when unknown. */
const char *counter_unit(const char *metric);
