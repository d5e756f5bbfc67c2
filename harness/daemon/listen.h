/* kabd's listening sockets, made before it recovers the database so no
 * one else can take the address while it does: the unix socket for local
 * clients, in a directory only root may change, the socket root:GROUP
 * 0660 (0600 when there is no such group); and TCP when asked for. */
#pragma once
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

#define LISTEN_BACKLOG 64

/* "IPV4:PORT" or "[IPV6]:PORT": fills ret; ret_loopback for 127.0.0.0/8 and ::1. */
int listen_parse(const char *s, struct sockaddr_storage *ret, bool *ret_loopback);
/* Binds and listens on path; a stale socket there is replaced (the
 * caller holds the executor lock: no other kabd serves it). ret_gid: the
 * group's gid, or PEER_NO_GROUP when the group does not exist. */
int listen_unix(const char *path, const char *group, int *ret_fd, gid_t *ret_gid);
/* Binds and listens on a TCP address (IPv6 only for an IPv6 address). */
int listen_tcp(const struct sockaddr_storage *addr, int *ret_fd);
