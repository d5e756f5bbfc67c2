/* SO_PEERCRED and the group database. The group is looked up on every
 * submit rather than once at start, so usermod and gpasswd take effect
 * while kabd runs. */
#include "harness/base/peer.h"
#include "harness/base/util.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PW_BUF 16384
#define MAX_GROUPS 65536

int peer_get(int fd, struct peer *ret)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0)
		return -errno;
	if (len != sizeof(uc))
		return -EIO;
	*ret = (struct peer){ .uid = uc.uid, .gid = uc.gid, .pid = uc.pid };
	return 0;
}

/* The user's name and primary group; -ENOENT when uid has no user. */
static int user_of(uid_t uid, char *name, size_t len, gid_t *ret_gid)
{
	_cleanup_free_ char *buf = malloc(PW_BUF);
	struct passwd pw, *res = NULL;
	if (!buf)
		return -ENOMEM;
	int r = getpwuid_r(uid, &pw, buf, PW_BUF, &res);
	if (r != 0)
		return -r;
	if (!res)
		return -ENOENT;
	snprintf(name, len, "%s", pw.pw_name);
	*ret_gid = pw.pw_gid;
	return 0;
}

bool peer_may_submit(uid_t uid, gid_t group)
{
	if (uid == 0)
		return true;
	char name[256];
	gid_t primary;
	if (group == PEER_NO_GROUP || user_of(uid, name, sizeof(name), &primary) < 0)
		return false;
	if (primary == group)
		return true;
	int n = 64;
	for (;;) {
		_cleanup_free_ gid_t *groups = calloc((size_t)n, sizeof(gid_t));
		if (!groups)
			return false;
		int got = n;
		if (getgrouplist(name, primary, groups, &got) >= 0) {
			for (int i = 0; i < got; i++)
				if (groups[i] == group)
					return true;
			return false;
		}
		if (got <= n || got > MAX_GROUPS)
			return false;
		n = got;
	}
}

void peer_describe(uid_t uid, char *buf, size_t len)
{
	char name[256];
	gid_t gid;
	if (user_of(uid, name, sizeof(name), &gid) == 0)
		snprintf(buf, len, "uid %u (%s)", (unsigned)uid, name);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
}

int peer_group_gid(const char *name, gid_t *ret)
{
	_cleanup_free_ char *buf = malloc(PW_BUF);
	struct group gr, *res = NULL;
	if (!buf)
		return -ENOMEM;
	int r = getgrnam_r(name, &gr, buf, PW_BUF, &res);
	if (r != 0)
		return -r;
	if (!res)
		return -ENOENT;
	*ret = gr.gr_gid;
	return 0;
}
