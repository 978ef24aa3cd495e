/* session — seal/open Mcp-Session-Id; tombstones of ended sessions. */
#include "autoconf.h"

#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "secret.h"
#include "session.h"
#include "state.h"
#include "str.h"

#define SESSION_AD	"mcpgate session v2"
#define TOMB_WAYS	8
#define TOMB_BUCKETS	512
#define TOMB_MAGIC	0x544f4d32u	/* "TOM2" */

struct tomb {
	unsigned char id[16];	/* digest of the session id */
	int64_t until;		/* the session's own expiry: after it, the blob is dead anyway */
};

/* A bucket holds TOMB_WAYS tombstones. When it is full of live ones, the one expiring
 * soonest gives way and raises the bucket's floor to its expiry: every session of
 * that bucket expiring at or before the floor counts as ended (the evicted one, and
 * with it older sessions that were never ended: they must initialize again). So no
 * flood of DELETEs brings an ended session back. */
struct tombstones {
	pthread_mutex_t lock;
	uint32_t magic;
	int64_t warned;			/* when a floor was last logged (a flood logs once a minute) */
	int64_t floor[TOMB_BUCKETS];
	struct tomb t[TOMB_BUCKETS][TOMB_WAYS];
};

void
session_who(const unsigned char *bind, const char *subject, const char *client_id, const char *tenant,
    char out[33])
{
	const char *const part[3] = { subject, client_id, tenant };
	char buf[1024];
	size_t n = 0;

	/* One BLAKE2b block (128 bytes) holds the binding and most callers' three parts: it
	 * costs nothing more to hash it in than to leave it out. */
	if (bind) {
		memcpy(buf, bind, SESSION_BIND_BYTES);
		n = SESSION_BIND_BYTES;
	}
	n += str_join0(buf + n, sizeof(buf) - n, part, 3);
	secret_digest_hex(buf, n, out, 16);
}

/* The sealed plaintext, a fixed layout (JSON only for the upstream map):
 *   [0]     layout version (3; 2, of sessions issued before, has no flags byte)
 *   [1]     flags (SESSION_F_*)
 *   [2]     n = length of the protocol version
 *   [3..]   the version, n bytes
 *   then    32 hex bytes of the caller digest, 8 bytes of expiry (big-endian),
 *           and the upstream session ids as a JSON object when there are any. */
#define LAYOUT		3
#define LAYOUT_V2	2	/* still opened: no flags */
#define WHO_LEN		32

int
session_seal(const unsigned char *key, const struct session *s, char *id)
{
	unsigned char plain[4096];
	size_t vlen = strlen(s->version), n = 0;
	char *u = NULL;
	int i, rc;

	if (vlen >= sizeof(s->version) || strlen(s->who) != WHO_LEN)
		return -1;
	plain[n++] = LAYOUT;
	plain[n++] = (unsigned char)s->flags;
	plain[n++] = (unsigned char)vlen;
	memcpy(plain + n, s->version, vlen);
	n += vlen;
	memcpy(plain + n, s->who, WHO_LEN);
	n += WHO_LEN;
	for (i = 7; i >= 0; i--)
		plain[n++] = (unsigned char)((uint64_t)s->exp >> (8 * i));
	if (json_object_size(s->upstreams) > 0) {
		if ((u = json_dumps(s->upstreams, JSON_COMPACT)) == NULL || strlen(u) > sizeof(plain) - n) {
			free(u);
			return -1;
		}
		memcpy(plain + n, u, strlen(u));
		n += strlen(u);
		free(u);
	}
	rc = secret_seal(key, plain, n, SESSION_AD, id, SESSION_ID_MAX);
	secret_wipe(plain, n);
	return rc;
}

void
session_tomb_key(const unsigned char *key, const char *id, unsigned char out[16])
{
	struct secret_part p[2] = { { "ts", 3 }, { id, strlen(id) } };
	unsigned char d[32];

	secret_keyed_digest_parts(key, p, 2, d);
	memcpy(out, d, 16);
}

static void
tomb_digest(const char *id, unsigned char out[16])
{
	secret_digest(id, strlen(id), out, 16);
}

static unsigned
tomb_bucket(const unsigned char d[16])
{
	return (unsigned)(d[0] | d[1] << 8) % TOMB_BUCKETS;
}

/* Is the session with digest d and expiry exp ended? Under the lock. */
static int
tomb_find(struct tombstones *ts, const unsigned char d[16], int64_t exp, int64_t now)
{
	unsigned b = tomb_bucket(d);
	int i;

	if (exp <= ts->floor[b])
		return 1;
	for (i = 0; i < TOMB_WAYS; i++)
		if (ts->t[b][i].until > now && secret_equal(ts->t[b][i].id, d, 16))
			return 1;
	return 0;
}

/* Locks the tombstones: 0, or -1 when they cannot be read (a lock that cannot be
 * had, a region that is not ours any more): not locked then. */
static int
tomb_lock(struct tombstones *ts)
{
	return state_region_lock(&ts->lock, &ts->magic, TOMB_MAGIC) < 0 ? -1 : 0;
}

/* Whether the session with digest d and expiry exp was ended: 0 no, -1 yes, -2 the
 * tombstones cannot be read (fail closed). No tombstones: 0. */
static int
tomb_ended(struct tombstones *ts, const unsigned char d[16], int64_t exp, int64_t now)
{
	int dead;

	if (ts == NULL)
		return 0;
	if (tomb_lock(ts) < 0)
		return -2;
	dead = tomb_find(ts, d, exp, now);
	state_unlock(&ts->lock);
	return dead ? -1 : 0;
}

int
session_open(const unsigned char *key, struct tombstones *tombstones, const char *id, const char *who,
    int64_t now, struct session *s)
{
	const struct session_opener o = { key, tombstones, NULL };

	return session_open_memo(&o, id, who, now, s);
}

/* The last session a worker opened: its key and id, and what its blob held. */
struct session_memo {
	int valid;
	unsigned char key[SESSION_KEY_BYTES];
	char id[SESSION_ID_MAX];
	unsigned char d[16];	/* its tombstone digest */
	struct session s;	/* who, version, expiry, upstreams (owned) */
};

struct session_memo *
session_memo_new(void)
{
	return calloc(1, sizeof(struct session_memo));
}

static void
memo_forget(struct session_memo *m)
{
	session_clear(&m->s);
	secret_wipe(m, sizeof(*m));
}

void
session_memo_free(struct session_memo *m)
{
	if (m == NULL)
		return;
	memo_forget(m);
	free(m);
}

/* s's fields in t, its upstreams shared (a reference more): nothing changes a session's
 * upstream map once opened (federate.c reads it), so the memo and the request it serves
 * hold the same one. 0, or -1 when s has none. */
static int
session_copy(const struct session *s, struct session *t)
{
	memcpy(t->version, s->version, sizeof(t->version));
	memcpy(t->who, s->who, sizeof(t->who));
	t->exp = s->exp;
	t->flags = s->flags;
	t->upstreams = json_incref(s->upstreams);
	return t->upstreams ? 0 : -1;
}

/* Long: the sealed layout read field by field (layout, version, caller, expiry,
 * upstream sessions), then the tombstone and the worker's memo, and the plaintext
 * wiped at the one exit. */
int
session_open_memo(const struct session_opener *o, const char *id, const char *who, int64_t now,
    struct session *s)
{
	struct session_memo *m = o->memo;
	const unsigned char *key = o->key;
	struct tombstones *tombstones = o->tombstones;
	unsigned char plain[4096];
	const unsigned char *p;
	unsigned char d[16];
	long n = -1;
	size_t vlen, rest, head, idlen = strlen(id);
	int64_t exp = 0;
	int i, rc = -1;

	memset(s, 0, sizeof(*s));
	if (idlen >= SESSION_ID_MAX)
		goto out;
	/* The session this worker opened last, under the same key: the blob was opened
	 * then; who, the time and the tombstones are checked anew. */
	if (m && m->valid && memcmp(m->key, key, SESSION_KEY_BYTES) == 0 && strlen(m->id) == idlen &&
	    secret_equal(m->id, id, idlen)) {
		if (!secret_equal(m->s.who, who, WHO_LEN) || m->s.exp <= now)
			goto out;
		if ((rc = tomb_ended(tombstones, m->d, m->s.exp, now)) == 0 && session_copy(&m->s, s) < 0)
			rc = -1;
		goto out;
	}
	if ((n = secret_open(key, id, SESSION_AD, (char *)plain, sizeof(plain))) < 3)
		goto out;
	head = plain[0] == LAYOUT ? 3 : 2;
	vlen = plain[head - 1];
	if ((plain[0] != LAYOUT && plain[0] != LAYOUT_V2) || vlen >= sizeof(s->version) ||
	    (size_t)n < head + vlen + WHO_LEN + 8)
		goto out;
	p = plain + head + vlen;
	if (!secret_equal(p, who, WHO_LEN))
		goto out;
	for (i = 0, p += WHO_LEN; i < 8; i++)
		exp = (int64_t)((uint64_t)exp << 8 | p[i]);
	if (exp <= now)
		goto out;
	rest = (size_t)n - (head + vlen + WHO_LEN + 8);
	if (rest > 0) {
		/* (json_is_object evaluates its argument twice: parse first) */
		s->upstreams = json_loadb((const char *)p + 8, rest, 0, NULL);
		if (!json_is_object(s->upstreams))
			goto out;
	}
	tomb_digest(id, d);
	if ((rc = tomb_ended(tombstones, d, exp, now)) < 0)
		goto out;
	memcpy(s->version, plain + head, vlen);
	s->version[vlen] = '\0';
	s->flags = head == 3 ? plain[1] : 0;
	memcpy(s->who, who, WHO_LEN);
	s->who[WHO_LEN] = '\0';
	s->exp = exp;
	if (s->upstreams == NULL)
		s->upstreams = json_object();
	rc = 0;
	if (m) {	/* remembered for the session's next request */
		memo_forget(m);
		if (s->upstreams && session_copy(s, &m->s) == 0) {
			memcpy(m->key, key, SESSION_KEY_BYTES);
			memcpy(m->id, id, idlen + 1);
			memcpy(m->d, d, sizeof(d));
			m->valid = 1;
		}
	}
out:
	if (rc < 0)
		session_clear(s);
	if (n > 0)
		secret_wipe(plain, (size_t)n);
	return rc;
}

void
session_clear(struct session *s)
{
	json_decref(s->upstreams);
	s->upstreams = NULL;
}

const struct state_region session_tombstones_def = {
	"tombstones", sizeof(struct tombstones), TOMB_MAGIC, offsetof(struct tombstones, magic),
	offsetof(struct tombstones, lock), 0, NULL, NULL, session_tombstones_carry, 0,
};

int
session_tombstones_carry(void *dst, void *src, size_t size)
{
	struct tombstones *to = dst, *from = src;

	if (size != sizeof(*to) || tomb_lock(from) < 0)
		return -1;
	memcpy(to->floor, from->floor, sizeof(to->floor));
	memcpy(to->t, from->t, sizeof(to->t));
	state_unlock(&from->lock);
	return 0;
}

int
session_end(struct tombstones *tombstones, const char *id, int64_t exp, int64_t now)
{
	struct tombstones *ts = tombstones;
	struct tomb *b, *victim = NULL;
	unsigned char d[16];
	unsigned k;
	int i;

	tomb_digest(id, d);
	k = tomb_bucket(d);
	b = ts->t[k];
	if (tomb_lock(ts) < 0)
		return -1;
	if (exp <= ts->floor[k])
		goto done;	/* ended already by the floor */
	for (i = 0; i < TOMB_WAYS; i++) {
		if (b[i].until <= now || b[i].until <= ts->floor[k]) {	/* free, or dead anyway */
			victim = &b[i];
			break;
		}
		if (victim == NULL || b[i].until < victim->until)
			victim = &b[i];
	}
	if (victim->until > now && victim->until > ts->floor[k]) {
		ts->floor[k] = victim->until;
		if (ts->warned == 0 || now - ts->warned >= 60 || now < ts->warned) {
			ts->warned = now;
			log_warn(NULL, "session: a bucket of tombstones is full; its sessions expiring by %lld "
			    "are ended too (many sessions are being ended)", (long long)victim->until);
		}
	}
	memcpy(victim->id, d, 16);
	victim->until = exp;
done:
	state_unlock(&ts->lock);
	return 0;
}
