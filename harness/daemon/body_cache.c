/* The LRU of rendered bodies (body_cache.h). Readers get copies, so a body
 * can be replaced while another thread sends the one it had. */
#include "harness/daemon/body_cache.h"

#include <stdlib.h>
#include <string.h>

static bool key_fits(const char *key)
{
	return strnlen(key, BODY_CACHE_KEY) < BODY_CACHE_KEY;
}

bool body_cache_get(struct body_cache *c, const char *key, int64_t version, double stamp, char **ret, size_t *ret_len)
{
	if (!key_fits(key))
		return false;
	bool hit = false;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < BODY_CACHE_SLOTS; i++) {
		struct body_cache_slot *s = &c->slot[i];
		if (!s->buf || strcmp(s->key, key) != 0)
			continue;
		if (s->version != version || s->stamp != stamp)
			break; /* made before the latest change: stale */
		char *copy = malloc(s->len + 1);
		if (copy) {
			memcpy(copy, s->buf, s->len + 1);
			*ret = copy;
			*ret_len = s->len;
			s->used = ++c->clock;
			hit = true;
		}
		break;
	}
	pthread_mutex_unlock(&c->lock);
	return hit;
}

void body_cache_put(struct body_cache *c, const char *key, int64_t version, double stamp, const char *buf, size_t len)
{
	if (!key_fits(key))
		return;
	char *copy = malloc(len + 1);
	if (!copy)
		return; /* only a cache */
	memcpy(copy, buf, len);
	copy[len] = 0;
	pthread_mutex_lock(&c->lock);
	struct body_cache_slot *victim = &c->slot[0];
	for (size_t i = 0; i < BODY_CACHE_SLOTS; i++) {
		struct body_cache_slot *s = &c->slot[i];
		if (s->buf && strcmp(s->key, key) == 0) {
			victim = s; /* an older version, or another thread made it too */
			break;
		}
		if (!s->buf || s->used < victim->used)
			victim = s;
		if (!s->buf)
			break;
	}
	free(victim->buf);
	victim->version = version;
	victim->stamp = stamp;
	victim->buf = copy;
	victim->len = len;
	victim->used = ++c->clock;
	memcpy(victim->key, key, strlen(key) + 1);
	pthread_mutex_unlock(&c->lock);
}
