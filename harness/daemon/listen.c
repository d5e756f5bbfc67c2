/* Listening sockets. The unix socket is bound with umask 0177, so until
 * chown and chmod it is root's alone; its directory is checked to be
 * root's and not writable by others, so nobody can put their own socket
 * in its place. */
#include "harness/daemon/listen.h"
#include "harness/base/peer.h"
#include "harness/base/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Creates the socket's directory (0755) if missing and checks it. */
static int socket_dir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = 0;
	else
		*slash = 0;
	struct stat sb;
	if (lstat(dir, &sb) < 0 && errno == ENOENT) {
		int r = util_mkdir_p(dir, 0755);
		if (r < 0 || chmod(dir, 0755) < 0) {
			log_error("cannot create %s, the directory of kabd's socket: %s", dir, strerror(r < 0 ? -r : errno));
			return r < 0 ? r : -errno;
		}
	}
	if (lstat(dir, &sb) < 0) {
		log_error("%s, the directory of kabd's socket: %s", dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(sb.st_mode) || sb.st_uid != 0 || (sb.st_mode & 022)) {
		log_error("%s: the directory of kabd's socket must be a directory owned by root and not writable by group or "
			  "others (it is %s, mode %04o, owner uid %u): give --socket a path in one, e.g. /run/kab/kabd.sock",
			  dir, S_ISDIR(sb.st_mode) ? "a directory" : S_ISLNK(sb.st_mode) ? "a symlink" : "not a directory",
			  (unsigned)(sb.st_mode & 07777), (unsigned)sb.st_uid);
		return -EPERM;
	}
	return 0;
}

/* Removes a socket left by an earlier kabd; refuses anything else. */
static int clear_stale(const char *path)
{
	struct stat sb;
	if (lstat(path, &sb) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(sb.st_mode)) {
		log_error("%s exists and is not a socket: remove it, or give --socket another path", path);
		return -EEXIST;
	}
	if (unlink(path) < 0) {
		log_error("cannot remove the old socket %s: %s", path, strerror(errno));
		return -errno;
	}
	return 0;
}

static gid_t socket_group(const char *group)
{
	gid_t gid;
	int r = peer_group_gid(group, &gid);
	if (r == 0)
		return gid;
	if (r == -ENOENT)
		log_warn("there is no group %s: kabd's socket is root's only (0600); make the group with "
			 "groupadd --system %s (make install does) to let its members submit jobs", group, group);
	else
		log_warn("cannot look up the group %s (%s): kabd's socket is root's only (0600)", group, strerror(-r));
	return PEER_NO_GROUP;
}

/* Gives the bound socket to root:gid, 0660; stays 0600 without a group. */
static int socket_mode(const char *path, gid_t gid)
{
	if (gid == PEER_NO_GROUP)
		return 0;
	if (chown(path, 0, gid) < 0 || chmod(path, 0660) < 0) {
		log_error("cannot give %s to group %u with mode 0660: %s", path, (unsigned)gid, strerror(errno));
		return -errno;
	}
	return 0;
}

int listen_unix(const char *path, const char *group, int *ret_fd, gid_t *ret_gid)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (path[0] != '/' || strlen(path) >= sizeof(sa.sun_path)) {
		log_error("--socket %s: give an absolute path of at most %zu bytes", path, sizeof(sa.sun_path) - 1);
		return -EINVAL;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int r = socket_dir(path);
	if (r < 0 || (r = clear_stale(path)) < 0)
		return r;
	gid_t gid = socket_group(group);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	mode_t old = umask(0177);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
		r = -errno;
		log_error("cannot listen on %s: %s", path, strerror(-r));
		close(fd);
		return r;
	}
	if ((r = socket_mode(path, gid)) < 0) {
		close(fd);
		unlink(path);
		return r;
	}
	*ret_fd = fd;
	*ret_gid = gid;
	return 0;
}

int listen_tcp(const struct sockaddr_storage *addr, int *ret_fd)
{
	bool v6 = addr->ss_family == AF_INET6;
	int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	socklen_t len = v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	if (bind(fd, (const struct sockaddr *)addr, len) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

int listen_parse(const char *s, struct sockaddr_storage *ret, bool *ret_loopback)
{
	const char *colon = strrchr(s, ':');
	if (!colon || colon == s)
		return -EINVAL;
	const char *h = s;
	size_t hl = (size_t)(colon - s);
	bool v6 = false;
	if (*s == '[') { /* [IPv6]:PORT */
		if (hl < 3 || colon[-1] != ']')
			return -EINVAL;
		h = s + 1;
		hl -= 2;
		v6 = true;
	}
	char host[64];
	if (hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = 0;
	uint64_t port;
	if (util_parse_u64(colon + 1, &port) < 0 || port == 0 || port > 65535)
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ret;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return -EINVAL;
		*ret_loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ret;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
		*ret_loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	return 0;
}
