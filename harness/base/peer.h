/* Who is on the other end of kabd's unix socket, as the kernel says
 * (SO_PEERCRED, fixed when the client connected), and whether they may
 * submit and cancel jobs: root, or a member of the socket's group in the
 * group database. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PEER_NO_GROUP ((gid_t)-1)

struct peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
};

/* The credentials of a connected unix socket's peer. */
int peer_get(int fd, struct peer *ret);
/* Root, or uid's user is in group (its primary group or a supplementary
 * one, from the passwd and group databases now: a user taken out of the
 * group loses the right at once, not at their next login). */
bool peer_may_submit(uid_t uid, gid_t group);
/* "uid 1001 (alice)", or "uid 1001" when the user has no name. */
void peer_describe(uid_t uid, char *buf, size_t len);
/* The gid of a group name; -ENOENT when there is none. */
int peer_group_gid(const char *name, gid_t *ret);
