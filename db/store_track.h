/* The commit a tracked variant (track = REMOTE BRANCH) resolved on the
 * night its job ran, on the job's variants row (schema 10): the track,
 * the commit's sha, subject and committer date, and how the head moved
 * since the same job name's previous night. */
#pragma once
#include <stddef.h>
#include <stdint.h>

struct store;

struct store_track {
	char track[300]; /* "origin mm-unstable"; "" when the variant tracks nothing */
	char sha[41];    /* "" when no commit was recorded (the fetch failed, or not yet) */
	char subject[256];
	double date; /* committer date, epoch seconds; 0 when none */
	/* "force-pushed: <old12> is not an ancestor of <new12>", "unknown:
	 * ..."; "" (NULL in the row) for the first night, an unchanged head
	 * and a head that moved forward */
	char event[512];
};

/* Records t on variant idx of job job_id (event "" is stored as NULL). */
int store_variant_track_set(struct store *s, int64_t job_id, size_t idx, const struct store_track *t);
/* What variant idx of job job_id recorded; -ENOENT when it has no track
 * or no commit. */
int store_variant_track_get(struct store *s, int64_t job_id, size_t idx, struct store_track *ret);
/* The commit the newest earlier night recorded for the same variant: of
 * jobs named job_name with an id below before_job_id (0: any), the
 * variant named variant with the same track and a commit. 0 with sha
 * set, -ENOENT when there is none (the first night). */
int store_track_previous(struct store *s, const char *job_name, const char *variant, const char *track,
			 int64_t before_job_id, char sha[41]);
