/* jwt — JWT access tokens (RFC 9068) verified at the gateway (docs/ARCHITECTURE.md §5):
 * the JWS (an algorithm of jwt-algs, typ at+jwt unless jwt-typ = lenient, no crit), its
 * signature with a key of the issuer's JWK set (jwks.c: one fetch again when the token
 * names a key the set lacks), then the claims: iss is the issuer, exp (required), nbf
 * and iat within clock-skew, aud names resource or one of audiences; the caller's
 * claims read as introspection's are (claims.c). Nothing here sees the network but
 * through jwks.c, and nothing is cached here: auth.c caches the outcome. */
#ifndef GW_JWT_H
#define GW_JWT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "claims.h"
#include "config.h"
#include "err.h"
#include "jwks.h"
#include "jws.h"

/* 1 when the token is to be verified here (verify = jwt; verify = auto and it is shaped
 * like a JWS), 0 when it is to be introspected. */
int jwt_local(const struct config *cfg, const char *tok, size_t len);
/* The header's acceptance, pure: 0, or -1 with err (GW_EBADTOKEN, saying why). */
int jwt_check_header(const struct config *cfg, const struct jws *j, struct gw_error *err);
/* The claims' acceptance, pure: 0 with c, or -1 with err (GW_EBADTOKEN, saying why). */
int jwt_check_claims(const struct config *cfg, json_t *payload, int64_t now_s, struct claims *c,
    struct gw_error *err);
/* A token to verify: its text, the request it came with (named in the logs of a fetch of
 * the keys) and when (ms since the epoch). */
struct jwt_token {
	const char *tok;
	size_t len;
	const char *rid;
	int64_t now_ms;
};
/* Verifies t: 0 accepted with c; -1 with err: GW_EBADTOKEN refused (the detail says
 * why), or GW_EAUTHSERVER when no keys can be had (the issuer fails and none were ever
 * fetched). */
int jwt_verify(struct jwks_view *v, const struct jwks_env *env, const struct config *cfg, const struct jwt_token *t,
    struct claims *c, struct gw_error *err);

#endif
