/* A stored job as a KCIDB submission (KernelCI's common report database,
 * I/O schema v5): its kernels as checkouts and builds, each variant's
 * numbers and each comparison with kab's verdict as tests. The mapping,
 * and what kab leaves out because it does not know it, is doc/export.md. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct store;
struct strbuf;

/* The schema version a submission declares: every field kab writes is in
 * v5.0, so any v5.x reader takes it. */
#define KCIDB_MAJOR 5
#define KCIDB_MINOR 0

#define KCIDB_ORIGIN_DEFAULT "kab"
#define KCIDB_ORIGIN_MAX 64

/* An origin the schema allows ([a-z0-9_]+), at most KCIDB_ORIGIN_MAX
 * characters. */
bool kcidb_origin_ok(const char *origin);

/* The submission of an ended job (done, failed or cancelled), in out: 0.
 * Else out untouched and why in err: -ENOENT no such job, -EBUSY a job
 * that has not ended (it has no report yet), -EINVAL a bad origin, or
 * the store's or the report's error. The ids are ORIGIN:JOB/KIND/...,
 * made from the store alone, so an export made again is the same. */
int kcidb_export(struct store *st, int64_t job_id, const char *origin, struct strbuf *out, struct strbuf *err);
