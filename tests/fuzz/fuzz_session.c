/* Mcp-Session-Id (src/state/session.c). The first byte picks a mode:
 *   0: session_open on the input as an id: never accepted (nobody can forge one);
 *   1: the input sealed as a session's plaintext under the gateway's key and associated
 *      data (what only the gateway could have made), then opened: the layout reader on
 *      any bytes; what opens seals again and opens to the same session;
 *   2: a session built from the input (version, expiry, upstream map) sealed and
 *      opened: the same session for its caller before its expiry, nothing for another
 *      caller (of the gateway, or of another gateway sharing the key), at its expiry,
 *      or once ended. */
#include "autoconf.h"

#include <jansson.h>

#include "fuzz.h"
#include "session.h"

#define SESSION_AD	"mcpgate session v2"	/* as src/state/session.c seals */

static unsigned char key[SESSION_KEY_BYTES];
static void *tombs;
/* alice and bob of one gateway; alice of another gateway sharing the key */
static const unsigned char gw[SESSION_BIND_BYTES] = "fuzz gateway 01", gw2[SESSION_BIND_BYTES] = "fuzz gateway 02";
static char alice[33], bob[33], alice2[33];

void
fuzz_setup(void)
{
	memset(key, 0x5a, sizeof(key));
	session_who(gw, "alice", "client-1", "acme", alice);
	session_who(gw, "bob", "client-1", "acme", bob);
	session_who(gw2, "alice", "client-1", "acme", alice2);
	FUZZ_CHECK((tombs = malloc(session_tombstones_def.size)) != NULL);
	state_region_make(&session_tombstones_def, tombs, session_tombstones_def.size, 0);
}

static int
same(const struct session *a, const struct session *b)
{
	return strcmp(a->version, b->version) == 0 && strcmp(a->who, b->who) == 0 && a->exp == b->exp &&
	    (json_object_size(a->upstreams) == 0 ? json_object_size(b->upstreams) == 0 :
	    json_equal(a->upstreams, b->upstreams));
}

/* An opened session seals again, and opens to itself. */
static void
reseal(const struct session *s, int64_t now)
{
	char id[SESSION_ID_MAX];
	struct session t;

	FUZZ_CHECK(strlen(s->version) < sizeof(s->version));
	FUZZ_CHECK(s->upstreams == NULL || json_is_object(s->upstreams));
	if (session_seal(key, s, id) < 0)
		return;
	FUZZ_CHECK(session_open(key, NULL, id, s->who, now, &t) == 0);
	FUZZ_CHECK(same(s, &t));
	session_clear(&t);
}

static void
forged(const uint8_t *data, size_t size)
{
	char *id = fuzz_cstr(data, size);
	struct session s;

	FUZZ_CHECK(session_open(key, tombs, id, alice, 0, &s) < 0);
	FUZZ_CHECK(s.upstreams == NULL);
	free(id);
}

static void
layout(const uint8_t *data, size_t size)
{
	char id[SESSION_ID_MAX];
	struct session s;

	if (secret_seal(key, data, size, SESSION_AD, id, sizeof(id)) < 0)
		return;
	if (session_open(key, NULL, id, alice, 0, &s) == 0) {
		FUZZ_CHECK(strcmp(s.who, alice) == 0 && s.exp > 0 && json_is_object(s.upstreams));
		reseal(&s, 0);
	}
	session_clear(&s);
}

static void
round_trip(const uint8_t *data, size_t size)
{
	struct session s = { .upstreams = NULL }, t;
	char id[SESSION_ID_MAX];
	size_t vlen, i;

	if (size < 9)
		return;
	vlen = data[0] % sizeof(s.version);
	if (size < 9 + vlen)
		return;
	memcpy(s.version, data + 1, vlen);
	s.version[vlen] = '\0';
	for (i = 0; i < 8; i++)
		s.exp = (int64_t)((uint64_t)s.exp << 8 | data[1 + vlen + i]);
	memcpy(s.who, alice, sizeof(s.who));
	s.upstreams = json_loadb((const char *)data + 9 + vlen, size - 9 - vlen, 0, NULL);
	if (s.upstreams && !json_is_object(s.upstreams)) {
		json_decref(s.upstreams);
		s.upstreams = NULL;
	}
	/* Expiries are seconds since the epoch, so positive: a bucket's floor (session.c)
	 * starts at 0 and ends every session expiring at or before it. */
	if (s.exp > 1 && session_seal(key, &s, id) == 0) {
		/* Fresh tombstones: ended sessions of earlier inputs fill buckets, and a full
		 * bucket ends every session expiring before its floor — by design. */
		state_region_make(&session_tombstones_def, tombs, session_tombstones_def.size, 0);
		FUZZ_CHECK(strlen(id) < SESSION_ID_MAX);
		FUZZ_CHECK(session_open(key, tombs, id, alice, s.exp - 1, &t) == 0);
		FUZZ_CHECK(same(&s, &t));
		session_clear(&t);
		FUZZ_CHECK(session_open(key, tombs, id, bob, s.exp - 1, &t) < 0);
		session_clear(&t);
		FUZZ_CHECK(session_open(key, tombs, id, alice2, s.exp - 1, &t) < 0);
		session_clear(&t);
		FUZZ_CHECK(session_open(key, tombs, id, alice, s.exp, &t) < 0);
		session_clear(&t);
		session_end(tombs, id, s.exp, s.exp - 2);
		FUZZ_CHECK(session_open(key, tombs, id, alice, s.exp - 1, &t) < 0);
		session_clear(&t);
	}
	session_clear(&s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	switch (data[0] % 3) {
	case 0:
		forged(data + 1, size - 1);
		break;
	case 1:
		layout(data + 1, size - 1);
		break;
	default:
		round_trip(data + 1, size - 1);
		break;
	}
	return 0;
}
