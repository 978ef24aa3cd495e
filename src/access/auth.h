/* auth — credentials to a caller (docs/ARCHITECTURE.md §5): RFC 6750 and RFC 9449
 * parsing (Bearer, or DPoP and its proof: dpop.c), the shared token cache, on a miss
 * RFC 7662 introspection or a JWT access token's local verification (jwt.c, as [auth]
 * verify says), the acceptance rules, a DPoP-bound token's binding, and the challenges
 * of RFC 6750 / RFC 9449 / RFC 9728. Nothing below this layer sees the token, and nothing
 * above it sees more than struct caller. */
#ifndef GW_AUTH_H
#define GW_AUTH_H

#include <jansson.h>
#include <stdint.h>

#include "config.h"
#include "introspect.h"
#include "jwks.h"
#include "metrics.h"
#include "replay.h"
#include "req_ctx.h"
#include "request.h"
#include "response.h"
#include "rstore.h"
#include "token_cache.h"

/* Identity handed to the MCP layer. */
struct caller {
	struct claims claims;	/* subject, client id, scopes, groups, tenant, exp */
	char token_id[9];		/* 8 hex digits of the token's keyed digest: for logs */
	unsigned char token_key[16];	/* another part of that digest: the token's rate-limit key */
	char who[33];			/* once accepted: the digest of this gateway and its
					 * subject, client and tenant (session_who), which binds
					 * its sessions and cursors */
};

/* What auth keeps for one thread (the worker's REQ_SLOT_AUTH slot): its connection to
 * the authorization server, the issuer's keys as it last parsed them, and the DPoP
 * proofs' keys it imported. */
struct auth_thread {
	struct introspect *ix;
	struct jwks_view jwks;
	struct jws_keycache *proof_keys;
};

/* A new one (NULL when out of memory), and its end. */
void *auth_thread_new(void);
void auth_thread_free(void *th);

/* What auth uses, owned by the gateway and the worker (a request's REQ_SLOT_AUTH slot;
 * the router's gate fills it). tokens/asmeta may be NULL. */
struct auth_env {
	struct introspect *ix;
	struct token_cache *tokens;
	struct asmeta_region *asmeta;
	const unsigned char *digest_key;	/* 32 bytes */
	struct rstore *rs;			/* with [auth] shared-cache: the Redis store */
	struct jwks_view *jwks;			/* the worker's parsed keys (verify = jwt, auto) */
	struct jwks_region *jwks_region;	/* the host's mirror of them */
	struct replay *replay;			/* the DPoP proofs the host has seen */
	struct rstore *dpop_rs;			/* with a Redis store: the proofs the hosts have seen */
	struct jws_keycache *proof_keys;	/* the worker's proof keys, imported once (may be NULL) */
	struct metrics *metrics;		/* the host's counters and dependency states; may be NULL */
};

/* The longest token accepted (a header line nginx passes is at most 8 KiB): a longer
 * one is refused before the cache or the authorization server sees it. */
#define AUTH_TOKEN_MAX	8192

/* The schemes of the Authorization header. */
enum auth_scheme { AUTH_BEARER = 1, AUTH_DPOP };
/* RFC 6750 §2.1 "Bearer" 1*SP b64token, or RFC 9449 §7.1 "DPoP" 1*SP token68 (any case):
 * *scheme, and *tok pointing into header; 0, or -1 when malformed (or another scheme, or
 * the token longer than AUTH_TOKEN_MAX). */
int auth_parse_credentials(const char *header, int *scheme, const char **tok, size_t *len);
/* The same, for the Bearer scheme alone. */
int auth_parse_bearer(const char *header, const char **tok, size_t *len);
/* The token-cache key of a token: a keyed digest of what decides whether it is accepted
 * and which claims it yields (the resource and audiences it must be issued for, the
 * issuer, where and as whom it is introspected, how it is verified and with which keys,
 * algorithms and clock skew, which claims name scopes, groups and tenant), then the
 * token. Two
 * gateways sharing a state file, or one before and after a reload that changed any of
 * these, never share an entry: a hit is exactly as strict as the introspection it saves. */
void auth_cache_key(const unsigned char *digest_key, const struct config *cfg, const char *tok,
    size_t len, unsigned char key[TC_KEY_BYTES]);
/* Who the caller of an introspection response is, whatever the token's acceptance:
 * client_id, sub (else client_id), scope, the groups claim (an array of names or one
 * blank-separated string) and the tenant claim (a string), as configured. 0 with
 * claims, or -1 with err (GW_EBADTOKEN, saying why). Used by auth_check_claims and
 * explain. */
int auth_claims_read(const struct config *cfg, json_t *ir, struct claims *c, struct gw_error *err);
/* The acceptance of an introspection response (docs/ARCHITECTURE.md §5), pure: 0 with
 * claims, or -1 with err (GW_EBADTOKEN, saying why). */
int auth_check_claims(const struct config *cfg, json_t *ir, int64_t now_s,
    struct claims *claims, struct gw_error *err);
/* Fills resp with the 401/403 answer for e (GW_ENOTOKEN, GW_EBADTOKEN, GW_ESCOPE). */
void auth_challenge(const struct config *cfg, struct response *resp, enum gw_err e,
    const char *description);
/* 403 insufficient_scope naming scopes (blank-separated: every scope the call needs)
 * besides the required ones, so that a client can step up; under the scheme req used. */
void auth_scope_challenge(const struct config *cfg, const struct request *req, struct response *resp,
    const char *scopes);
/* 1 with *caller exactly as auth_authenticate would make it when the request's bearer
 * token is already accepted in the cache (and has the required scopes, and is bound to
 * no DPoP key); else 0 with nothing answered, claimed or changed: what may be known before
 * anything reaches the network. A DPoP request is never decided here (its proof is
 * recorded as seen). */
int auth_cached(const struct req_ctx *rc, struct caller *caller);
/* A bearer token the gateway itself obtained (the connect page's sign-in at the issuer)
 * checked as a caller's is (the cache, introspection or the JWT's verification, the
 * acceptance rules; not the required scopes, nor any request header): 0 with *caller,
 * or -1 with err (GW_EBADTOKEN refused, GW_EAUTHSERVER not decided now; rc->resp may
 * hold an answer the caller replaces). rc's REQ_SLOT_AUTH slot holds auth's env. */
int auth_verify_token(const struct req_ctx *rc, const char *tok, size_t len, struct caller *caller,
    struct gw_error *err);
/* 0 with *caller when the request carries an accepted token (for a DPoP-bound one, with
 * its proof: dpop.c); else -1 with resp filled (401, 403; 500 + Retry-After when the
 * authorization server fails; 503 + Retry-After when a proof's replay cannot be told). */
int auth_authenticate(const struct req_ctx *rc, struct caller *caller);

#endif
