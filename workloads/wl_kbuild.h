/* The kbuild workload's parsers and tree walk, exposed for unit tests. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* jobs = N: 1 to 1024. */
int wl_kbuild_parse_jobs(const char *s, unsigned *ret);
/* yes/no (true/false, on/off, 1/0). */
int wl_kbuild_parse_bool(const char *s, bool *ret);
/* Regular files under dir whose names end in suffix; symlinks not followed. */
int wl_kbuild_count_files(const char *dir, const char *suffix, uint64_t *ret);
