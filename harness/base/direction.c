/* The words of a metric's direction of goodness (direction.h). */
#include "harness/base/direction.h"
#include "harness/base/util.h"

/* Each word at its value's place: a value outside [0, DIRECTION_N) does
 * not compile, two rows with one value are an overridden initializer
 * (-Wextra), and a value no row has is a NULL that test_enums finds. */
#define DIRECTION_AT(name, value, word) [DIRECTION_##name] = word,
static const char *const words[DIRECTION_N] = { DIRECTION_LIST(DIRECTION_AT) };

UTIL_WORD_FUNCS(direction, words, DIRECTION_N)
