/* input_seal — the requestState of a relayed input_required: see input_seal.h. The
 * sealed plaintext is a fixed binary layout read strictly: the end (8 bytes, big
 * endian), whether there is a state (1), its digest (32), then the caller's digest and
 * the upstream's name, each as a length byte and its bytes. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "input_seal.h"
#include "secret.h"

#define AD		"mcpgate input state v1"
#define PLAIN_MAX	(8 + 1 + 32 + INPUT_WHO_MAX + INPUT_UPSTREAM_MAX)
#define SEALED_MAX	512	/* holds any: ((24 + PLAIN_MAX + 16) * 4 + 2) / 3 + 1 */

_Static_assert(((24 + PLAIN_MAX + 16) * 4 + 2) / 3 + 1 <= SEALED_MAX, "a seal fits");

void
input_key_derive(unsigned char key[32], const unsigned char session_key[32])
{
	static const char what[] = "mcpgate input state key v1";

	secret_keyed_digest(session_key, what, sizeof(what) - 1, key);
}

/* A digest of state (none: of nothing, told apart by the flag). */
static void
state_digest(const char *state, unsigned char d[32])
{
	secret_sha256(state ? state : "", state ? strlen(state) : 0, d);
}

char *
input_wrap(const unsigned char key[32], const char *who, const char *upstream, const char *state,
    int64_t until_ms)
{
	unsigned char p[PLAIN_MAX];
	size_t n = 0, wn = strlen(who), un = strlen(upstream), sn = state ? strlen(state) : 0;
	char sealed[SEALED_MAX], *out = NULL;
	size_t sl;
	int i;

	if (wn == 0 || wn >= INPUT_WHO_MAX || un == 0 || un >= INPUT_UPSTREAM_MAX)
		return NULL;
	for (i = 7; i >= 0; i--)
		p[n++] = (unsigned char)((uint64_t)until_ms >> (8 * i));
	p[n++] = state != NULL;
	state_digest(state, p + n), n += 32;
	p[n++] = (unsigned char)wn;
	memcpy(p + n, who, wn), n += wn;
	p[n++] = (unsigned char)un;
	memcpy(p + n, upstream, un), n += un;
	if (secret_seal(key, p, n, AD, sealed, sizeof(sealed)) == 0 &&
	    (out = malloc((sl = strlen(sealed)) + (state ? 1 + sn : 0) + 1)) != NULL) {
		memcpy(out, sealed, sl + 1);
		if (state) {
			out[sl] = '.';
			memcpy(out + sl + 1, state, sn + 1);
		}
	}
	secret_wipe(p, sizeof(p));
	return out;
}

int
input_parse(const unsigned char *p, size_t n, const char *who, const char *state, int64_t now_ms,
    char upstream[INPUT_UPSTREAM_MAX])
{
	unsigned char d[32];
	uint64_t until = 0;
	size_t at = 0, wn, un;
	int i;

	upstream[0] = '\0';
	if (n < 8 + 1 + 32 + 2)
		return -1;
	for (i = 0; i < 8; i++)
		until = until << 8 | p[at++];
	if (p[at] > 1 || (p[at] == 1) != (state != NULL))
		return -1;
	state_digest(state, d);
	if (!secret_equal(d, p + at + 1, 32))
		return -1;
	at += 33;
	wn = p[at++];
	if (wn == 0 || wn != strlen(who) || at + wn >= n || memcmp(p + at, who, wn) != 0)
		return -1;
	at += wn;
	un = p[at++];
	if (un == 0 || un >= INPUT_UPSTREAM_MAX || un != n - at || memchr(p + at, '\0', un) != NULL)
		return -1;
	if (until > (uint64_t)INT64_MAX || (int64_t)until < now_ms)
		return -1;
	memcpy(upstream, p + at, un);
	upstream[un] = '\0';
	return 0;
}

int
input_unwrap(const unsigned char key[32], const char *wrapped, const char *who, int64_t now_ms,
    char upstream[INPUT_UPSTREAM_MAX], const char **state)
{
	const char *dot = strchr(wrapped, '.');
	size_t sl = dot ? (size_t)(dot - wrapped) : strlen(wrapped);
	char sealed[SEALED_MAX], p[PLAIN_MAX + 1];
	long n;
	int rc = -1;

	*state = NULL;
	upstream[0] = '\0';
	if (sl == 0 || sl >= sizeof(sealed))
		return -1;
	memcpy(sealed, wrapped, sl);
	sealed[sl] = '\0';
	if ((n = secret_open(key, sealed, AD, p, sizeof(p))) >= 0 &&
	    input_parse((const unsigned char *)p, (size_t)n, who, dot ? dot + 1 : NULL, now_ms, upstream) == 0) {
		*state = dot ? dot + 1 : NULL;
		rc = 0;
	}
	secret_wipe(p, sizeof(p));
	return rc;
}
