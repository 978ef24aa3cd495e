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

#define SESSION_AD	"mcpgate session v1"
#define TOMB_WAYS	8
#define TOMB_BUCKETS	512
#define TOMB_MAGIC	0x544f4d31u	/* "TOM1" */

struct tomb {
	unsigned char id[16];	/* digest of the session id */
	int64_t until;		/* the session's own expiry: after it, the blob is dead anyway */
};

struct tombstones {
	pthread_mutex_t lock;
	uint32_t magic;
	struct tomb t[TOMB_BUCKETS][TOMB_WAYS];
};

void
session_who(const char *subject, const char *client_id, const char *tenant, char out[33])
{
	char buf[1024];
	int n;

	n = snprintf(buf, sizeof(buf), "%s%c%s%c%s", subject, 0, client_id, 0, tenant);
	secret_digest_hex(buf, n < 0 ? 0 : (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1, out, 16);
}

int
session_seal(const unsigned char *key, const struct session *s, char *id)
{
	json_t *j, *u = s->upstreams ? json_incref(s->upstreams) : json_object();
	char *plain;
	int rc;

	j = json_pack("{s:i, s:s, s:s, s:I, s:o}", "v", 1, "pv", s->version, "w", s->who,
	    "x", (json_int_t)s->exp, "u", u);
	plain = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (plain == NULL)
		return -1;
	rc = secret_seal(key, plain, strlen(plain), SESSION_AD, id, SESSION_ID_MAX);
	free(plain);
	return rc;
}

static void
tomb_digest(const char *id, unsigned char out[16])
{
	char hex[33];
	int i;

	secret_digest_hex(id, strlen(id), hex, 16);
	for (i = 0; i < 16; i++)
		sscanf(hex + 2 * i, "%2hhx", &out[i]);
}

static int
tomb_find(struct tombstones *ts, const unsigned char d[16], int64_t now)
{
	struct tomb *b = ts->t[(d[0] | d[1] << 8) % TOMB_BUCKETS];
	int i;

	for (i = 0; i < TOMB_WAYS; i++)
		if (b[i].until > now && secret_equal(b[i].id, d, 16))
			return 1;
	return 0;
}

int
session_open(const unsigned char *key, void *tombstones, const char *id, const char *who,
    int64_t now, struct session *s)
{
	char plain[4096];
	unsigned char d[16];
	json_t *j = NULL;
	const char *pv, *w;
	int rc = -1, dead = 0;

	memset(s, 0, sizeof(*s));
	if (strlen(id) >= SESSION_ID_MAX || secret_open(key, id, SESSION_AD, plain, sizeof(plain)) < 0)
		return -1;
	j = json_loads(plain, 0, NULL);
	pv = json_string_value(json_object_get(j, "pv"));
	w = json_string_value(json_object_get(j, "w"));
	if (!pv || !w || strlen(pv) >= sizeof(s->version) || strlen(w) != 32 ||
	    !json_is_integer(json_object_get(j, "x")) || !json_is_object(json_object_get(j, "u")))
		goto out;
	s->exp = json_integer_value(json_object_get(j, "x"));
	if (s->exp <= now || !secret_equal(w, who, 32))
		goto out;
	if (tombstones) {
		struct tombstones *ts = tombstones;

		tomb_digest(id, d);
		state_lock(&ts->lock);
		dead = tomb_find(ts, d, now);
		state_unlock(&ts->lock);
		if (dead)
			goto out;
	}
	memcpy(s->version, pv, strlen(pv) + 1);
	memcpy(s->who, w, 33);
	s->upstreams = json_incref(json_object_get(j, "u"));
	rc = 0;
out:
	json_decref(j);
	secret_wipe(plain, sizeof(plain));
	return rc;
}

void
session_clear(struct session *s)
{
	json_decref(s->upstreams);
	s->upstreams = NULL;
}

size_t
session_tombstones_size(void)
{
	return sizeof(struct tombstones);
}

void
session_tombstones_init(void *region, size_t size, int shared)
{
	struct tombstones *ts = region;

	memset(ts, 0, size);
	state_mutex_init(&ts->lock, shared);
	ts->magic = TOMB_MAGIC;
}

int
session_end(void *tombstones, const char *id, int64_t exp, int64_t now)
{
	struct tombstones *ts = tombstones;
	struct tomb *b, *victim = NULL;
	unsigned char d[16];
	int i;

	tomb_digest(id, d);
	b = ts->t[(d[0] | d[1] << 8) % TOMB_BUCKETS];
	state_lock(&ts->lock);
	for (i = 0; i < TOMB_WAYS; i++) {
		if (b[i].until <= now) {	/* free, or its session is dead anyway */
			victim = &b[i];
			break;
		}
		if (victim == NULL || b[i].until < victim->until)
			victim = &b[i];
	}
	if (victim->until > now)
		log_warn(NULL, "session: tombstones full; the soonest-expiring one was dropped");
	memcpy(victim->id, d, 16);
	victim->until = exp;
	state_unlock(&ts->lock);
	return 0;
}
