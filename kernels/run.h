/* Child processes of a kernel build (git, make, gzip, tar): output to a
 * log, captured, or handed line by line to a callback; as kab, or as an
 * unprivileged user it drops to for good before exec. */
#pragma once
#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

struct strbuf;

/* Who a child runs as. The child, after fork and before exec, calls
 * setgroups(0), setresgid and setresuid (each checked, then checked again
 * with getresuid, getresgid and getgroups, and a setuid(0) that must
 * fail) and sets PR_SET_NO_NEW_PRIVS; its environment is made anew:
 * PATH (KRUN_USER_PATH), HOME, USER, LOGNAME, LC_ALL=C and krun.env. */
struct krun_user {
	uid_t uid;
	gid_t gid;
	char name[64];
	char home[PATH_MAX];
};
#define KRUN_USER_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct krun {
	const char *cwd;         /* NULL: kab's */
	int stdout_fd;           /* >= 0: the child's stdout goes there, only stderr is read */
	int log_fd;              /* >= 0: a copy of the output */
	struct strbuf *capture;  /* output collected here */
	void (*line)(void *ctx, const char *line);  /* called per output line */
	void *ctx;
	/* optional: runs in the child just before exec (a namespace, mounts).
	 * It may only make system calls (the parent may have threads); on
	 * failure it writes why to err_fd and returns < 0, the child exits
	 * and krun puts the message in setup_err. */
	int (*child_setup)(void *setup_ctx, int err_fd);
	void *setup_ctx;
	struct strbuf *setup_err;
	/* NULL: the child runs as kab. Else as this user; a child that cannot
	 * drop to it exits before exec and krun returns -EPERM (why goes to
	 * setup_err when set, else to kab's log). */
	const struct krun_user *user;
	char *const *env;        /* NAME=VALUE entries added to the child's environment; may be NULL */
};

/* A check krun makes about every half second while a child runs (kabd's
 * executor: has a stop or a cancel come?). While one is set, the child runs
 * in a process group of its own; when the check says yes, the group gets
 * SIGTERM (SIGKILL 10 s later) and krun returns -ECANCELED once the child
 * is reaped. NULL (the default): no check. */
void krun_set_cancel(bool (*cancelled)(void));
/* The check itself, for waits of kab's own (a lock): false when none is set. */
bool krun_cancel_requested(void);

/* Runs argv (argv[0] found in PATH) with LC_ALL=C and stdin /dev/null and
 * waits for it. 0 with *ret_status the wait status, -ECANCELED when the
 * cancel check stopped it, or -errno when it could not be started. The
 * child starts with no signal blocked, whatever its parent blocks. */
int krun(char *const argv[], const struct krun *o, int *ret_status);
/* Like krun without a log: true when it exited 0; out (may be NULL) gets
 * the output, its trailing newlines removed. */
bool krun_ok(char *const argv[], const char *cwd, struct strbuf *out);
/* krun_ok with o's cwd, user and env (o's output fields are not used). */
bool krun_ok_as(char *const argv[], const struct krun *o, struct strbuf *out);
