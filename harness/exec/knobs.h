/* Runtime knobs (sysctl, sysfs): saved to the journal before they are
 * changed, applied for a variant's runs, restored after. */
#pragma once
#include <stddef.h>
#include <stdint.h>

struct store;
struct job_variant;
struct diags;
struct strbuf;

/* The longest original value kab journals and restores: a sysfs
 * attribute shows at most a page. A longer one is refused, never cut. */
#define KNOB_VALUE_MAX 4096

struct knob_applied {
	int64_t journal_id;
	char path[512];
	char original[KNOB_VALUE_MAX + 1];
};

/* Reads a knob without its trailing newline; a choice list ("always
 * [madvise] never") reads as the selected word. -E2BIG when the value
 * does not fit in len (nothing written to buf then). */
int knob_read(const char *path, char *buf, size_t len);
/* Writes value to a knob; an empty value is written as "\n", since the
 * kernel ignores a write of no bytes and the old value would stay. */
int knob_write(const char *path, const char *value);
/* Applies the variant's knobs, journaling each original first. On failure
 * what was applied is restored. in_force gets "path=value\n" read back. */
int knob_apply(struct store *st, int64_t job_id, const char *boot_id, const struct job_variant *v,
	       struct knob_applied **ret, size_t *ret_n, char *in_force, size_t in_force_len, struct strbuf *err);
/* Restores in reverse order and drops the journal entries. */
int knob_restore(struct store *st, struct knob_applied *a, size_t n);
/* Before a job: every knob value of every variant written once and put
 * back, so a knob that cannot be written fails before anything runs. */
int knob_preflight(struct store *st, int64_t job_id, const char *boot_id, const struct job_variant *v,
		   size_t n_variants, const char *file, struct diags *d);
