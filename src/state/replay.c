/* replay — seen DPoP proofs: set-associative, a floor per set, robust mutexes. */
#include "autoconf.h"

#include <pthread.h>
#include <string.h>

#include "log.h"
#include "replay.h"
#include "secret.h"
#include "state.h"

#define RP_SETS		8192
#define RP_WAYS		16
#define RP_MAGIC	0x44504f31u	/* "DPO1" */

struct rp_set {
	pthread_mutex_t lock;
	int64_t floor;		/* every proof of the set expiring by then counts as seen */
	struct {
		unsigned char key[REPLAY_KEY_BYTES];
		int64_t until;	/* ms; 0 = free */
	} e[RP_WAYS];
};

struct replay {
	uint32_t magic;
	int64_t warned;		/* when a floor was last logged (a flood logs once a minute) */
	struct rp_set sets[RP_SETS];
};

static void
replay_region_init(void *region, size_t size, int shared)
{
	struct replay *r = region;
	size_t i;

	(void)size;
	for (i = 0; i < RP_SETS; i++)
		state_mutex_init(&r->sets[i].lock, shared);
}

const struct state_region replay_region_def = {
	"replay", sizeof(struct replay), RP_MAGIC, offsetof(struct replay, magic), STATE_NO_LOCK, 0,
	replay_region_init, NULL, NULL, 0,
};

int
replay_once(struct replay *r, const unsigned char key[REPLAY_KEY_BYTES], int64_t until_ms, int64_t now_ms)
{
	struct rp_set *s;
	int i, victim = 0, rc = 1;

	if (r == NULL || !state_owned(&r->magic, RP_MAGIC))
		return -1;
	s = &r->sets[(key[0] | key[1] << 8) % RP_SETS];
	/* A dead owner may have left an entry half-written: a key nobody makes, no harm. */
	if (state_lock(&s->lock) < 0)
		return -1;
	if (until_ms <= s->floor) {
		rc = 0;
		goto out;
	}
	for (i = 0; i < RP_WAYS; i++) {
		if (s->e[i].until > now_ms && secret_equal(s->e[i].key, key, REPLAY_KEY_BYTES)) {
			rc = 0;
			goto out;
		}
		if (s->e[i].until < s->e[victim].until)
			victim = i;	/* a free or dead one, else the soonest to expire */
	}
	if (s->e[victim].until > now_ms && s->e[victim].until > s->floor) {
		s->floor = s->e[victim].until;
		if (now_ms - __atomic_load_n(&r->warned, __ATOMIC_RELAXED) > 60000) {
			__atomic_store_n(&r->warned, now_ms, __ATOMIC_RELAXED);
			log_warn(NULL, "dpop: a set of seen proofs is full; its older proofs count as seen "
			    "(their clients make new ones)");
		}
	}
	memcpy(s->e[victim].key, key, REPLAY_KEY_BYTES);
	s->e[victim].until = until_ms;
out:
	state_unlock(&s->lock);
	return rc;
}
