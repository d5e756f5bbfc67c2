/* A metric's direction of goodness, in one list: X(NAME, word), the word
 * as job files, CSV input, reports and the database (history, regressions)
 * spell it. The job's enum (job_direction, harness/job/job.h) is made from
 * it, in its order; the statistics' (stats_direction, whose zero is
 * neutral) names each of its values, and both take their names and
 * parsers from it. */
#pragma once

#define DIRECTION_LIST(X) X(HIGHER, "higher") X(LOWER, "lower") X(NEUTRAL, "neutral")
/* The words, for a list of choices: "higher", "lower", "neutral", */
#define DIRECTION_WORD(name, word) word,
