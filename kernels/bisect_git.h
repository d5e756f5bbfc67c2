/* git bisect in a clone of a kernel tree: the revisions checked and
 * resolved, the session started and marked with git's own commands (so
 * its choice of the next commit, its skip rules and `git bisect log` are
 * git's), and git's answer read back. The working copy is never touched
 * (--no-checkout: git moves BISECT_HEAD). The operations are a table, so
 * that a bisection can be driven by something that answers as git does
 * (the accuracy simulation's in-process chooser, tests/stats). */
#pragma once
#include <stddef.h>

#include "kernels/run.h"

struct strbuf;

#define KBISECT_SHA_LEN 40
/* The candidates kept when only skipped commits are left (git lists them
 * all; the rest are counted). */
#define KBISECT_MAX_CANDIDATES 64

enum kbisect_mark { KBISECT_GOOD, KBISECT_BAD, KBISECT_SKIP };
enum kbisect_state {
	KBISECT_NEXT,         /* sha: the commit to test next */
	KBISECT_FOUND,        /* sha: the first bad commit */
	KBISECT_ONLY_SKIPPED, /* cand: the first bad commit is one of these (skipped ones, then the bad) */
};

struct kbisect_step {
	enum kbisect_state state;
	char sha[KBISECT_SHA_LEN + 1];
	char cand[KBISECT_MAX_CANDIDATES][KBISECT_SHA_LEN + 1];
	size_t n_cand;       /* kept in cand */
	size_t n_cand_total; /* as many as git listed */
};

/* What a bisection asks of its tree. Each returns 0 or -errno with what
 * went wrong in err (naming the revision, the tree and git's message);
 * is_ancestor returns 1 or 0. */
struct kbisect_ops {
	/* rev to a commit's 40 hex digits; -ENOENT for an unknown revision */
	int (*resolve)(void *ctx, const char *rev, char sha[KBISECT_SHA_LEN + 1], struct strbuf *err);
	int (*is_ancestor)(void *ctx, const char *ancestor, const char *sha, struct strbuf *err);
	/* the first parent; -ENOENT for a root commit */
	int (*parent)(void *ctx, const char *sha, char parent[KBISECT_SHA_LEN + 1], struct strbuf *err);
	/* "SHA<TAB>subject<TAB>author<TAB>date", for a report */
	int (*describe)(void *ctx, const char *sha, struct strbuf *out, struct strbuf *err);
	int (*start)(void *ctx, const char *good, const char *bad, struct kbisect_step *ret, struct strbuf *err);
	int (*mark)(void *ctx, const char *sha, enum kbisect_mark m, struct kbisect_step *ret, struct strbuf *err);
	/* `git bisect log` of the session, appended to out */
	int (*log)(void *ctx, struct strbuf *out, struct strbuf *err);
	int (*reset)(void *ctx, struct strbuf *err);
};

/* A clone and who runs git in it (NULL: kab itself). */
struct kbisect_git {
	const char *tree;
	const struct krun_user *user;
};
/* git's own operations; their ctx is a struct kbisect_git. */
extern const struct kbisect_ops kbisect_git_ops;

/* onto with sha reverted, as a commit of g's clone: git revert's
 * three-way merge (without a work tree), author, committer and date
 * fixed, so the same revert is the same commit at every replay; a ref
 * refs/kab/revert/SHA-on-ONTO keeps it. 0 with its sha; 1 when the
 * revert does not apply (why names the conflicting files); -errno with
 * why for git's failure (merge-tree --write-tree needs git 2.38). */
int kbisect_git_revert(const struct kbisect_git *g, const char *sha, const char *onto, char ret[KBISECT_SHA_LEN + 1],
		       struct strbuf *why);
/* Whether file at commit sha defines the Kconfig symbol (a line "config
 * SYMBOL"): 1, 0, or -errno. */
int kbisect_git_has_config(const struct kbisect_git *g, const char *sha, const char *file, const char *symbol);

/* The Kconfig symbols that force alignment (lib/Kconfig.debug: the
 * function one since 5.9; the data one where a tree carries it), by bit. */
#define KBISECT_ALIGN_FILE "lib/Kconfig.debug"
#define KBISECT_ALIGN_N 2
extern const char *const kbisect_align_symbols[KBISECT_ALIGN_N];
/* Writes the config fragment that sets the symbols of the bits in which
 * (and EXPERT, which they depend on) under kab's state directory
 * (STATE/bisect/align-WHICH.config, root's): 0 with its path; -errno
 * with err saying why (-ENODEV: no state directory open). */
int kbisect_align_fragment(unsigned which, char *path, size_t len, struct strbuf *err);

/* Reads what `git bisect start/good/bad/skip` printed: 0 with ret filled,
 * -EIO when it is none of git's three answers. */
int kbisect_parse(const char *out, struct kbisect_step *ret);
const char *kbisect_mark_name(enum kbisect_mark m); /* "good", "bad", "skip" */
