/* kab's state directory: every file kab writes as root while it runs jobs
 * (job and run work directories, swap files, kernel builds) lives under
 * one directory that only root can change, so no other user can prepare a
 * path kab will write through. */
#pragma once
#include "harness/base/config.h"

#include <stdbool.h>
#include <stddef.h>

struct strbuf;

#define STATE_DIR_DEFAULT CONFIG_STATE_DIR_DEFAULT
/* set by systemd's StateDirectory= (kabd.service) */
#define STATE_DIR_ENV "STATE_DIRECTORY"
/* kabd's database, and every kab verb's without --db, in the state directory */
#define STATE_DB_NAME "kab.db"

/* Opens the state directory for this process: dir when not NULL, else
 * the configuration's (config.h: $STATE_DIRECTORY's first entry, else
 * STATE_DIR_DEFAULT); creates it
 * (mode 0700) when missing. Refuses, with the reason in err, a symbolic
 * link, a directory not owned by root, one writable
 * by its group or others, or one under a directory another user could
 * change. Idempotent: once open, a NULL dir returns 0 at once. */
int state_init(const char *dir, struct strbuf *err);
/* STATE_DB_NAME in the state directory state_init(dir) opens (dir, else
 * the configuration's), named without opening or making
 * anything; -EINVAL when that is not a path state_init takes. */
int state_db_path(const char *dir, char *buf, size_t len);
/* The open state directory's path and fd; NULL and -1 before state_init. */
const char *state_path(void);
int state_fd(void);
/* Forgets the open state directory (tests). */
void state_reset(void);

/* Opens directory name under dirfd (path is dirfd's path, for messages),
 * creating it 0700 when missing; the same refusals as state_init. */
int state_subdir(int dirfd, const char *path, const char *name, int *ret_fd, struct strbuf *err);
/* A fresh directory under dirfd named prefix + 6 random characters, mode
 * 0700, never an existing one (mkdtemp under a directory fd). */
int state_mkdtemp(int dirfd, const char *prefix, char *ret_name, size_t len);
/* A name prefix + 6 random characters + suffix for a file not made yet. */
int state_tempname(const char *prefix, const char *suffix, char *ret_name, size_t len);
/* Whether path and every directory above it can be changed only by root:
 * each owned by root and not writable by its
 * group or others unless sticky; -EPERM with the reason in err (what to
 * do is the caller's to add). */
int state_path_trusted(const char *path, struct strbuf *err);
