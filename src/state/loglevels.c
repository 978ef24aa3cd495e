/* loglevels — sessions' log levels: see loglevels.h. */
#include "autoconf.h"

#include <pthread.h>
#include <string.h>

#include "log.h"
#include "loglevels.h"
#include "secret.h"

#define LL_MAGIC	0x4c564c31u	/* "LVL1" */

struct loglevels {
	uint32_t magic;
	pthread_mutex_t lock;
	int64_t warned;		/* when an eviction was last logged (once a minute) */
	struct {
		unsigned char key[LOGLEVELS_KEY_BYTES];
		int64_t until;	/* seconds; at or before now = free */
		uint8_t level;
	} slot[LOGLEVELS_BUCKETS][LOGLEVELS_WAYS];
};

const struct state_region loglevels_region_def = {
	"loglevels", sizeof(struct loglevels), LL_MAGIC, offsetof(struct loglevels, magic),
	offsetof(struct loglevels, lock), 0, NULL, NULL, NULL, 0,
};

/* The bucket of key: its first bytes (a keyed digest: evenly spread already). */
static unsigned
bucket(const unsigned char key[LOGLEVELS_KEY_BYTES])
{
	return ((unsigned)key[0] | (unsigned)key[1] << 8) % LOGLEVELS_BUCKETS;
}

int
loglevels_put(struct loglevels *l, const unsigned char key[LOGLEVELS_KEY_BYTES], unsigned level,
    int64_t until_s, int64_t now_s)
{
	unsigned b = bucket(key);
	int i, v = -1;

	if (l == NULL || level == 0 || level > 255 || until_s <= now_s ||
	    state_region_lock(&l->lock, &l->magic, LL_MAGIC) < 0)
		return -1;
	/* key's own slot, else a free one, else the one expiring soonest */
	for (i = 0; i < LOGLEVELS_WAYS; i++) {
		if (l->slot[b][i].until > now_s && secret_equal(l->slot[b][i].key, key, LOGLEVELS_KEY_BYTES)) {
			v = i;
			break;
		}
		if (v < 0 || (l->slot[b][v].until > now_s && l->slot[b][i].until < l->slot[b][v].until))
			v = i;
	}
	if (i == LOGLEVELS_WAYS && l->slot[b][v].until > now_s && (l->warned == 0 || now_s - l->warned >= 60 ||
	    now_s < l->warned)) {
		l->warned = now_s;
		log_warn(NULL, "session: a bucket of log levels is full; a session's level gives way (it gets "
		    "the upstreams' default until it sets one again)");
	}
	memcpy(l->slot[b][v].key, key, LOGLEVELS_KEY_BYTES);
	l->slot[b][v].until = until_s;
	l->slot[b][v].level = (uint8_t)level;
	state_unlock(&l->lock);
	return 0;
}

int
loglevels_get(struct loglevels *l, const unsigned char key[LOGLEVELS_KEY_BYTES], int64_t now_s)
{
	unsigned b = bucket(key);
	int i, level = 0;

	if (l == NULL || state_region_lock(&l->lock, &l->magic, LL_MAGIC) < 0)
		return -1;
	for (i = 0; i < LOGLEVELS_WAYS; i++)
		if (l->slot[b][i].until > now_s && secret_equal(l->slot[b][i].key, key, LOGLEVELS_KEY_BYTES)) {
			level = l->slot[b][i].level;
			break;
		}
	state_unlock(&l->lock);
	return level;
}
