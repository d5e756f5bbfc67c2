/* The kbuild workload's tree walk, exposed for unit tests. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* Regular files under dir whose names end in suffix; symlinks not followed. */
int wl_kbuild_count_files(const char *dir, const char *suffix, uint64_t *ret);
