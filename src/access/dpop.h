/* dpop — DPoP (RFC 9449) at the protected resource (docs/ARCHITECTURE.md §5): the proof
 * a request carries in its DPoP header is a JWS of typ dpop+jwt, its alg in dpop-algs,
 * signed with the public key its header carries (jwk; never a private one); its claims:
 * htm the request's method, htu the resource (query and fragment ignored), iat within
 * dpop-window of now, a jti, and ath the access token's SHA-256. Then (auth.c) the token
 * must be bound to that key — its cnf.jkt the key's RFC 7638 thumbprint — and the proof
 * must not have been seen: its key and jti are remembered until it would be stale anyway,
 * in the host's state file (replay.c) and, with a Redis store, in Redis. */
#ifndef GW_DPOP_H
#define GW_DPOP_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "err.h"
#include "jws.h"
#include "replay.h"
#include "rstore.h"

#define DPOP_PROOF_MAX	8192	/* the longest DPoP header looked at */

/* What a checked proof says. */
struct dpop_proof {
	char jkt[JWS_B64_SHA256];		/* the thumbprint of the key that signed it */
	unsigned char seen[REPLAY_KEY_BYTES];	/* the name of its key and jti, keyed */
	int64_t until_ms;			/* when it would be refused as stale */
};

/* What a proof is checked against: the request's DPoP header (NULL: none), its method,
 * the access token it came with, and when (ms since the epoch). */
struct dpop_req {
	const char *proof;
	const char *method;
	const char *tok;
	size_t len;
	int64_t now_ms;
};

/* Checks the proof r carries: 0 with p, or -1 with err (GW_EDPOP, saying why).
 * digest_key names the proof (32 bytes: the host's, or the shared key of hosts sharing
 * a Redis store); keys (the worker's, may be NULL) keeps the proof keys imported. */
int dpop_check(const struct config *cfg, const unsigned char *digest_key, struct jws_keycache *keys,
    const struct dpop_req *r, struct dpop_proof *p, struct gw_error *err);
/* Records the proof as seen, in the host's state (r) and, when rs is not NULL, in
 * Redis: 0 when neither had seen it; -1 with err GW_EDPOP when one had (a replay), or
 * GW_EREPLAY when the host's state cannot be used and Redis does not answer (or there
 * is none): nobody can tell. */
int dpop_once(struct replay *r, struct rstore *rs, const struct config *cfg, const struct dpop_proof *p,
    int64_t now_ms, struct gw_error *err);
/* The challenge's algs="…" value: the names of dpop-algs. */
void dpop_algs(const struct config *cfg, char *out, size_t n);

#endif
