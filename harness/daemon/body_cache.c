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

static void slot_drop(struct body_cache *c, struct body_cache_slot *s)
{
	c->bytes -= s->len;
	free(s->buf);
	s->buf = NULL;
	s->len = 0;
}

/* The least recently used kept body other than keep; NULL: none. */
static struct body_cache_slot *lru_other(struct body_cache *c, const struct body_cache_slot *keep)
{
	struct body_cache_slot *v = NULL;
	for (size_t i = 0; i < BODY_CACHE_SLOTS; i++) {
		struct body_cache_slot *s = &c->slot[i];
		if (s != keep && s->buf && (!v || s->used < v->used))
			v = s;
	}
	return v;
}

void body_cache_put(struct body_cache *c, const char *key, int64_t version, double stamp, const char *buf, size_t len)
{
	if (!key_fits(key) || len > BODY_CACHE_BYTES / 4)
		return;
	char *copy = malloc(len + 1);
	if (!copy)
		return; /* only a cache */
	memcpy(copy, buf, len);
	copy[len] = 0;
	pthread_mutex_lock(&c->lock);
	/* key's slot (an older version, or another thread made it too), else
	 * an empty one (bodies dropped for their bytes leave holes), else the
	 * least recently used */
	struct body_cache_slot *victim = NULL;
	for (size_t i = 0; i < BODY_CACHE_SLOTS && !victim; i++)
		if (c->slot[i].buf && strcmp(c->slot[i].key, key) == 0)
			victim = &c->slot[i];
	for (size_t i = 0; i < BODY_CACHE_SLOTS && !victim; i++)
		if (!c->slot[i].buf)
			victim = &c->slot[i];
	if (!victim)
		victim = lru_other(c, NULL);
	if (victim->buf)
		slot_drop(c, victim);
	victim->version = version;
	victim->stamp = stamp;
	victim->buf = copy;
	victim->len = len;
	victim->used = ++c->clock;
	memcpy(victim->key, key, strlen(key) + 1);
	c->bytes += len;
	for (struct body_cache_slot *s; c->bytes > BODY_CACHE_BYTES && (s = lru_other(c, victim));)
		slot_drop(c, s);
	pthread_mutex_unlock(&c->lock);
}
