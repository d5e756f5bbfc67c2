/* A job's own directory under the state directory: made fresh once, its
 * name kept in the database, found again when the job resumes. */
#pragma once
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;
struct strbuf;

/* STATE/jobs/job<ID>-XXXXXX: everything a job writes (its workloads'
 * prepared data in w<N>, each run's directory, a swap file) goes there,
 * never to a path another user could have made first. */
struct jobdir {
	int fd;
	char path[PATH_MAX];
	bool over; /* the job ended for good: the directory goes at close */
};

#define JOBDIR_INIT { .fd = -1 }

/* Opens the directory the database names for the job when it is still
 * there and private (and removes what a crashed run left in it), else
 * makes a new one and records its name. Opens the state directory first
 * if needed; -errno with the reason in err. */
int jobdir_open(struct store *st, int64_t job_id, struct jobdir *jd, struct strbuf *err);
/* Closes it; removes it and forgets its name once jd->over. */
void jobdir_close(struct store *st, int64_t job_id, struct jobdir *jd);
/* Makes workload N's directory w<N> (there already: this job's own). */
int jobdir_wl_make(const struct jobdir *jd, size_t wl_idx);
/* The path of workload N's directory. */
void jobdir_wl_path(const struct jobdir *jd, size_t wl_idx, char *buf, size_t len);
/* A fresh run-XXXXXX directory for one run; its path in buf. */
int jobdir_run_make(const struct jobdir *jd, char *buf, size_t len);
/* A new swap-XXXXXX name in the directory (the file is not made). */
int jobdir_swap_path(const struct jobdir *jd, char *buf, size_t len);
