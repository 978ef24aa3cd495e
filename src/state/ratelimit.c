/* ratelimit — GCRA buckets in set-associative stripes behind robust mutexes. */
#include "autoconf.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ratelimit.h"
#include "state.h"

#define RL_WAYS		8
#define RL_STRIPES	(RL_BUCKETS / RL_WAYS)
#define RL_MAGIC	0x524c4231u	/* "RLB1" */
#define NS		1000000000LL
#define TAT_MAX		(INT64_MAX / 4)	/* a tolerance past this saturates (73 years) */

struct rl_bucket {
	unsigned char key[RL_KEY_BYTES];
	int64_t tat;		/* theoretical arrival time, ns; <= now: idle */
};

struct rl_stripe {
	pthread_mutex_t lock;
	struct rl_bucket b[RL_WAYS];
};

struct rl_region {
	uint32_t magic;
	uint32_t nstripes;
	struct rl_stripe s[];
};

struct ratelimit {
	struct rl_region *r;
	uint32_t nstripes;	/* from the checked size, never re-read */
};

static int64_t
ceil_s(int64_t ns)
{
	return ns <= 0 ? 0 : (ns + NS - 1) / NS;
}

/* T = per / n, at least one unit (n <= 1e9, per >= 1 s: never less in ns); tau =
 * (n + burst - 1) * T, saturated at max. */
void
ratelimit_params(const struct rate *r, int64_t unit, int64_t max, struct rl_params *p)
{
	int64_t k = (int64_t)r->n + r->burst - 1;

	p->t = (int64_t)r->per * unit / r->n;
	if (p->t < 1)
		p->t = 1;
	if (p->t > max)
		p->t = max;
	p->tau = k <= 0 ? 0 : p->t > max / k ? max : k * p->t;
}

void
ratelimit_verdict(int64_t ahead, const struct rl_params *p, int64_t unit, int limited,
    struct rl_verdict *v)
{
	int64_t left;

	if (ahead < 0)
		ahead = 0;
	v->limited = limited;
	if (limited) {
		v->retry_s = ceil_s((ahead - p->tau) * (NS / unit));
		if (v->retry_s < 1)
			v->retry_s = 1;
		v->remaining = 0;
		v->reset_s = ceil_s(ahead * (NS / unit));
		return;
	}
	ahead += p->t;
	left = p->tau - ahead;
	v->retry_s = 0;
	v->remaining = left < 0 ? 0 : left / p->t + 1;
	v->reset_s = ceil_s(ahead * (NS / unit));
}

int64_t
ratelimit_gcra(int64_t tat, const struct rate *r, int64_t now_ns, struct rl_verdict *v)
{
	struct rl_params p;
	int limited;

	ratelimit_params(r, NS, TAT_MAX, &p);
	if (now_ns < 0)
		now_ns = 0;
	if (now_ns > TAT_MAX)
		now_ns = TAT_MAX;
	/* Never further ahead than a full bucket's worth: a clock that went back, a file
	 * from before a reboot, garbage. */
	if (tat > now_ns + p.tau + p.t || tat < 0)
		tat = tat < 0 ? now_ns : now_ns + p.tau + p.t;
	if (tat < now_ns)
		tat = now_ns;
	limited = tat - now_ns > p.tau;
	ratelimit_verdict(tat - now_ns, &p, NS, limited, v);
	return limited ? tat : tat + p.t;
}

/* --- the shared region --------------------------------------------------------------- */

static void
ratelimit_region_init(void *region, size_t size, int shared)
{
	struct rl_region *r = region;
	uint32_t i;

	r->nstripes = (uint32_t)((size - sizeof(*r)) / sizeof(struct rl_stripe));
	for (i = 0; i < r->nstripes; i++)
		state_mutex_init(&r->s[i].lock, shared);
}

const struct state_region ratelimit_region_def = {
	"limits", sizeof(struct rl_region) + (size_t)RL_STRIPES * sizeof(struct rl_stripe), RL_MAGIC,
	offsetof(struct rl_region, magic), STATE_NO_LOCK, 0, ratelimit_region_init, NULL, NULL, 0,
};

struct ratelimit *
ratelimit_attach(void *region, size_t size)
{
	struct ratelimit *rl;

	if (region == NULL || size != ratelimit_region_def.size)
		return NULL;
	if ((rl = malloc(sizeof(*rl))) != NULL) {
		rl->r = region;
		rl->nstripes = RL_STRIPES;
	}
	return rl;
}

void
ratelimit_detach(struct ratelimit *rl)
{
	free(rl);
}

/* Locks key's stripe: it, or NULL when it cannot be had or the region is no longer
 * ours (not locked then). A stripe a dead process held is cleared. */
static struct rl_stripe *
lock_stripe(struct ratelimit *rl, const unsigned char *key)
{
	struct rl_stripe *s;
	uint32_t h;
	int rc;

	if (!state_owned(&rl->r->magic, RL_MAGIC))
		return NULL;
	memcpy(&h, key, sizeof(h));	/* the key is a keyed digest: uniform */
	s = &rl->r->s[h % rl->nstripes];
	if ((rc = state_lock(&s->lock)) < 0)
		return NULL;
	if (rc == 1)
		memset(s->b, 0, sizeof(s->b));
	return s;
}

/* key's bucket in s, or the one that gives way to it: an idle one, else the one
 * nearest to idle. (Keys are keyed digests nobody outside can choose: memcmp.) */
static struct rl_bucket *
bucket_of(struct rl_stripe *s, const unsigned char *key)
{
	struct rl_bucket *victim = &s->b[0];
	int i;

	for (i = 0; i < RL_WAYS; i++) {
		if (memcmp(s->b[i].key, key, RL_KEY_BYTES) == 0)
			return &s->b[i];
		if (s->b[i].tat < victim->tat)
			victim = &s->b[i];
	}
	memcpy(victim->key, key, RL_KEY_BYTES);
	victim->tat = 0;
	return victim;
}

int
ratelimit_take(struct ratelimit *rl, const unsigned char key[RL_KEY_BYTES], const struct rate *r,
    int64_t now_ns, struct rl_verdict *v)
{
	struct rl_stripe *s;
	struct rl_bucket *b;

	if ((s = lock_stripe(rl, key)) == NULL)
		return -1;
	b = bucket_of(s, key);
	b->tat = ratelimit_gcra(b->tat, r, now_ns, v);
	state_unlock(&s->lock);
	return 0;
}

int
ratelimit_take_all(struct ratelimit *rl, struct rl_take *t, size_t n, int64_t now_ns)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (ratelimit_take(rl, t[i].key, &t[i].r, now_ns, &t[i].v) < 0)
			return -1;
		if (t[i].v.limited)
			return (int)i;
	}
	return (int)n;
}

size_t
ratelimit_count(struct ratelimit *rl, int64_t now_ns)
{
	size_t n = 0;
	uint32_t i;
	int w;

	if (__atomic_load_n(&rl->r->magic, __ATOMIC_RELAXED) != RL_MAGIC)
		return 0;
	for (i = 0; i < rl->nstripes; i++) {
		if (state_lock(&rl->r->s[i].lock) < 0)
			continue;
		for (w = 0; w < RL_WAYS; w++)
			n += rl->r->s[i].b[w].tat > now_ns;
		state_unlock(&rl->r->s[i].lock);
	}
	return n;
}
