/* kab check of a variant that follows a branch (job_track.c reads the
 * key): the remote is one of the tree's, the branch is on it (git
 * ls-remote, bounded in time, as the build user). A remote that cannot be
 * reached is a warning: see job_track.c. */
#include "harness/job/job.h"
#include "harness/job/job_priv.h"
#include "kernels/builduser.h"
#include "kernels/run.h"
#include "kernels/track.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void job_check_track(const char *file, struct job_variant *v, struct diags *d)
{
	struct krun_user u;
	struct strbuf why = { 0 };
	int r = kbuser_lookup(&u, &why);
	if (r < 0) {
		sb_free(&why); /* the variant's kernel line already says so */
		return;
	}
	struct ktrack_head head;
	r = ktrack_check(v->tree, v->track_remote, v->track_branch, r > 0 ? &u : NULL, &head, &why);
	char note[1024];
	note[0] = 0;
	if (r == 0) {
		snprintf(note, sizeof(note), "%s %s is at %.12s (when kab check ran; each run fetches it again)",
			 v->track_remote, v->track_branch, head.sha);
	} else if (r == -EHOSTUNREACH) {
		log_warn("%s:%d: track = %s %s: %s: the job is accepted; each run fetches the branch again, and fails with git's message if it still cannot",
			 file, v->track_line, v->track_remote, v->track_branch, why.buf ? why.buf : "");
		snprintf(note, sizeof(note), "%s %s could not be looked up when kab check ran: %.900s", v->track_remote,
			 v->track_branch, why.buf ? why.buf : "");
	} else {
		diags_add(d, file, v->track_line, "track = %s %s: %s", v->track_remote, v->track_branch,
			  why.buf ? why.buf : strerror(-r));
	}
	sb_free(&why);
	free(v->track_note);
	v->track_note = note[0] ? strdup(note) : NULL;
}
