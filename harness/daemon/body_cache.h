/* Rendered response bodies kept for kabd's readers: a small LRU shared by
 * the report and the history endpoints. A body is found by its key and
 * the version it was made at; on a miss the caller renders and puts. */
#pragma once
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BODY_CACHE_SLOTS 16
#define BODY_CACHE_KEY 1024
/* The bytes all kept bodies may hold together; a body over a quarter of
 * it is not kept (made again for each reader instead). */
#define BODY_CACHE_BYTES (64 * 1024 * 1024)

struct body_cache_slot {
	char key[BODY_CACHE_KEY];
	int64_t version;
	double stamp;
	char *buf;
	size_t len;
	uint64_t used;
};

struct body_cache {
	pthread_mutex_t lock;
	uint64_t clock;
	size_t bytes; /* of the kept bodies */
	struct body_cache_slot slot[BODY_CACHE_SLOTS];
};

#define BODY_CACHE_INIT \
	{ \
		.lock = PTHREAD_MUTEX_INITIALIZER \
	}

/* A copy of key's body made at (version, stamp) into ret; false on a miss
 * (and for a key of BODY_CACHE_KEY bytes or more, which is never kept). */
bool body_cache_get(struct body_cache *c, const char *key, int64_t version, double stamp, char **ret, size_t *ret_len);
/* Keeps a copy of buf as key's body at (version, stamp), in place of an
 * older version of key or else of the least recently used body, and drops
 * the least recently used others while the kept bytes are over
 * BODY_CACHE_BYTES. */
void body_cache_put(struct body_cache *c, const char *key, int64_t version, double stamp, const char *buf, size_t len);
