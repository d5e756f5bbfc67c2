/* Counts of kernel function calls during a run (ftrace function tracer or
 * kprobe events), machine-wide. */
#pragma once
#include <stddef.h>
#include <stdint.h>

struct fcount;
struct strbuf;
typedef void (*fcount_fn)(void *ctx, const char *function, uint64_t calls);

/* Starts counting calls of fns (kept by reference until fcount_stop).
 * tag names what kab makes in tracefs (instances "TAG-N", kprobe group
 * TAG), so that fcount_cleanup can remove it after a crash. On failure
 * why says why counting is unavailable here, and nothing is left. */
int fcount_start(char *const *fns, size_t n, const char *tag, struct fcount **ret, struct strbuf *why);
/* Stops, calls fn once per function with its count, removes what it made. */
int fcount_stop(struct fcount *f, fcount_fn fn, void *ctx);
const char *fcount_method(const struct fcount *f);
/* Removes the instances and kprobes made under tag. */
void fcount_cleanup(const char *tracefs, const char *tag);
