/* A kernel = build variant that follows a branch: track = REMOTE BRANCH.
 * The parser reads the two names from the text alone and refuses any
 * that git could take for an option or that is no ref name; kab check
 * then looks at the tree (the remote is one of its remotes) and asks the
 * remote for the branch (git ls-remote, bounded in time). A remote that
 * cannot be reached at check time is a warning, not an error: a nightly
 * job is checked when its timer submits it, and a network down then
 * must not make the night vanish; the night's own fetch fails it with
 * git's message, and kab's history shows a failed night. */
#include "harness/job/job.h"
#include "harness/job/job_priv.h"
#include "kernels/track.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ERR(b, line, ...) diags_add((b)->d, (b)->file, (line), __VA_ARGS__)

bool job_key_set_track(struct job_builder *b, const struct job_keydef *k, const struct job_entry *e, void *obj)
{
	struct job_variant *v = obj;
	const char *p = e->value;
	size_t n1 = strcspn(p, " \t");
	const char *second = p + n1 + strspn(p + n1, " \t");
	size_t n2 = strcspn(second, " \t");
	const char *rest = second + n2 + strspn(second + n2, " \t");
	v->track_line = e->line;
	if (!n1 || !n2 || *rest || n1 > KTRACK_NAME_MAX || n2 > KTRACK_NAME_MAX) {
		ERR(b, e->line, "bad track \"%s\": expected REMOTE BRANCH, two words: a remote of the tree and a branch on it (track = origin mm-unstable)",
		    e->value);
		return false;
	}
	char remote[KTRACK_NAME_MAX + 1], branch[KTRACK_NAME_MAX + 1];
	snprintf(remote, sizeof(remote), "%.*s", (int)n1, p);
	snprintf(branch, sizeof(branch), "%.*s", (int)n2, second);
	const char *why = NULL;
	bool ok = true;
	if (!ktrack_remote_ok(remote, &why)) {
		ERR(b, e->line, "bad track remote \"%s\": %s; give the name of one of the tree's remotes (git remote lists them)",
		    remote, why);
		ok = false;
	}
	if (!ktrack_branch_ok(branch, &why)) {
		ERR(b, e->line, "bad track branch \"%s\": %s; give a branch name as git ls-remote --heads REMOTE shows it, without refs/heads/",
		    branch, why);
		ok = false;
	}
	if (!ok)
		return false;
	if (strncmp(branch, "refs/", 5) == 0) {
		ERR(b, e->line, "bad track branch \"%s\": give the branch's name, without refs/heads/ (track = %s %s)",
		    branch, remote, strncmp(branch, "refs/heads/", 11) == 0 ? branch + 11 : "BRANCH");
		return false;
	}
	free(v->track_remote);
	free(v->track_branch);
	v->track_remote = strdup(remote);
	v->track_branch = strdup(branch);
	if (!v->track_remote || !v->track_branch)
		b->oom = true;
	char shown[2 * KTRACK_NAME_MAX + 2];
	snprintf(shown, sizeof(shown), "%s %s", remote, branch);
	return job_key_fits(b, e->line, k->name, shown, false);
}
