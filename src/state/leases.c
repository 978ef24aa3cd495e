/* leases — what a caller holds at once across a host's processes: see leases.h. */
#include "autoconf.h"

#include <pthread.h>
#include <string.h>

#include "leases.h"
#include "secret.h"

#define LEASES_MAGIC	0x4c534531u	/* "LSE1" */

struct leases {
	uint32_t magic;
	pthread_mutex_t lock;
	struct {
		unsigned char key[LEASES_KEY_BYTES];
		int64_t until;		/* ms, wall clock; at or before now = free */
	} slot[LEASES_BUCKETS][LEASES_WAYS];
};

const struct state_region leases_region_def = {
	"leases", sizeof(struct leases), LEASES_MAGIC, offsetof(struct leases, magic), offsetof(struct leases, lock),
	0, NULL, NULL, NULL, 0,
};

static unsigned
bucket(const unsigned char key[LEASES_KEY_BYTES])
{
	return ((unsigned)key[0] | (unsigned)key[1] << 8) % LEASES_BUCKETS;
}

int
leases_take(struct leases *l, const unsigned char key[LEASES_KEY_BYTES], unsigned max, int64_t until_ms,
    int64_t now_ms, unsigned *ticket)
{
	unsigned b = bucket(key), held = 0;
	int i, free_at = -1, rc = 0;

	if (l == NULL || until_ms <= now_ms || until_ms - now_ms > LEASES_LONGEST_MS ||
	    state_region_lock(&l->lock, &l->magic, LEASES_MAGIC) < 0)
		return -1;
	for (i = 0; i < LEASES_WAYS; i++) {
		if (l->slot[b][i].until <= now_ms || l->slot[b][i].until - now_ms > LEASES_LONGEST_MS) {
			if (free_at < 0)
				free_at = i;
		} else if (secret_equal(l->slot[b][i].key, key, LEASES_KEY_BYTES))
			held++;
	}
	if (held < max && free_at >= 0) {
		memcpy(l->slot[b][free_at].key, key, LEASES_KEY_BYTES);
		l->slot[b][free_at].until = until_ms;
		*ticket = b * LEASES_WAYS + (unsigned)free_at;
		rc = 1;
	}
	state_unlock(&l->lock);
	return rc;
}

void
leases_give(struct leases *l, const unsigned char key[LEASES_KEY_BYTES], unsigned ticket)
{
	unsigned b = ticket / LEASES_WAYS, i = ticket % LEASES_WAYS;

	if (l == NULL || b >= LEASES_BUCKETS || state_region_lock(&l->lock, &l->magic, LEASES_MAGIC) < 0)
		return;
	if (secret_equal(l->slot[b][i].key, key, LEASES_KEY_BYTES))
		l->slot[b][i].until = 0;
	state_unlock(&l->lock);
}
