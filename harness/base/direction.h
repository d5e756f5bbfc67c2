/* A metric's direction of goodness: one enum from one list, X(NAME,
 * value, word). The word is how job files, CSV input, reports and the
 * database (history, regressions) spell it; the list's order is the order
 * job files' choices name them; the value puts neutral at zero, so a
 * metric nobody declared is neutral. The job's [metric] direction, the
 * workloads' declarations, the metric table and the statistics all hold
 * an enum direction. */
#pragma once

#define DIRECTION_LIST(X) X(HIGHER, 1, "higher") X(LOWER, 2, "lower") X(NEUTRAL, 0, "neutral")

#define DIRECTION_ITEM(name, value, word) DIRECTION_##name = value,
enum direction {
	DIRECTION_UNSET = -1, /* a job's [metric] that does not say */
	DIRECTION_LIST(DIRECTION_ITEM)
};
#define DIRECTION_ONE(name, value, word) +1
#define DIRECTION_N (0 DIRECTION_LIST(DIRECTION_ONE))

/* The words in the list's order, for a list of choices: "higher", "lower", "neutral", */
#define DIRECTION_WORD(name, value, word) word,
/* The values in the same order: DIRECTION_HIGHER, ... */
#define DIRECTION_VALUE(name, value, word) DIRECTION_##name,

/* "higher", "lower", "neutral"; "unknown" for another value (unset included). */
const char *direction_name(enum direction d);
/* The direction of word s: 0, or -EINVAL (*ret untouched) for another word. */
int direction_parse(const char *s, enum direction *ret);
