/* upcred — the tokens the gateway obtains for upstreams at a token endpoint, given to
 * the upstream client (struct upstream_cred) for every request of a call:
 *  - credentials = exchange (RFC 8693): the caller's access token traded at the
 *    organisation's token endpoint for one meant for that upstream: the upstream sees
 *    the person. One exchange per caller token and upstream while the issued token
 *    lives, which is no longer than the caller's: a caller whose token is refused at
 *    the gate is never reached as again. The caller's own token goes only to the token
 *    endpoint.
 *  - credentials = client-credentials: the gateway's own token for the upstream (the
 *    client_credentials grant at the upstream's token endpoint: token-endpoint, else
 *    discovered from the upstream's RFC 9728 metadata and its authorization server's
 *    RFC 8414 metadata, kept an hour): one per host while it lives, whoever the caller.
 * The host's processes share them through the state file (credcache), sealed
 * (XChaCha20-Poly1305) under a key derived from the gateway's session key and named by
 * a keyed digest of what was asked (and the caller's token); beside each, a marker
 * named by what was asked and the caller's digest (not the token) holds the token's end
 * alone, sealed, so that `mcpgate explain`, given a caller's claims, can say whether one
 * is cached for them. Each token obtained is an
 * audit line (the upstream, the grant, the caller's subject digest, the client, and the
 * delegation chain, act, when the issued token is a JWT that carries one: its claims are
 * read for the log only, never trusted). With [auth] shared-cache,
 * the hosts share them through the Redis store too, sealed under the shared key with
 * their own end (a host takes one no longer than that end, whatever Redis keeps). An
 * issued token goes only to its upstream. */
#ifndef GW_UPCRED_H
#define GW_UPCRED_H

#include <stdint.h>

#include "config.h"
#include "credcache.h"
#include "introspect.h"
#include "metrics.h"
#include "rstore.h"
#include "secret.h"
#include "upstream.h"
#include "vault.h"
#include "vault_seal.h"

#define UPCRED_DEFAULT_MS	(300 * 1000)	/* the life of a token issued without expires_in */
#define UPCRED_MAX_MS		(3600 * 1000)	/* the longest an issued token is cached */
#define UPCRED_EARLY_MS		(30 * 1000)	/* a cached token is replaced this long before it expires */
#define UPCRED_WAIT_STEP_MS	10		/* a request waiting on another's exchange looks again */
#define UPCRED_DISCOVERY_MS	(3600 * 1000)	/* an upstream's authorization server, as discovered, is kept */
#define UPCRED_URL_MAX		1024		/* its issuer's and token endpoint's URLs, with their NUL */

/* One request's caller, as the upstreams reached as the caller see it. Fill the first
 * fields, then upcred_bind(); its cred is then what federated calls take. */
struct upcred {
	const struct config *cfg;
	struct introspect *ix;		/* the worker's connection to the authorization server */
	struct asmeta_region *asmeta;	/* the issuer's metadata mirror (its token_endpoint) */
	struct credcache *cache;	/* the host's; NULL: each call exchanges */
	const unsigned char *key;	/* 32 bytes: the gateway's session key */
	struct secret_part subject;	/* the caller's access token (borrowed; p NULL: none) */
	int64_t subject_exp_ms;		/* when it expires (wall clock); 0: not said */
	const char *subject_scope;	/* its scopes (blank-separated; borrowed); NULL: none known */
	const char *subject_who;	/* the audit log's digest of the caller's subject; NULL: none */
	const char *caller_who;		/* the gateway's digest of the caller (session_who: this
					 * gateway, subject, client, tenant) naming the markers of
					 * tokens cached for it; NULL: none marked */
	const char *request_id;		/* for the audit line; NULL: none */
	struct metrics *metrics;	/* where the token endpoint is observed; may be NULL */
	struct rstore *rs;		/* with [auth] shared-cache: the hosts' store; NULL: none */
	struct vault *vault;		/* the host's connected accounts (user-oauth); NULL: none */
	struct rstore *vault_rs;	/* with a Redis store: where they are kept instead */
	const char *subject_sub;	/* the caller's subject at the issuer (borrowed); NULL: none */
	/* made by upcred_bind: */
	unsigned char seal_key[32], name_key[32];
	struct vault_keys vault_keys;
	struct upstream_cred cred;
	struct upstream_cred own;	/* the gateway's own token for an upstream (upcred_bearer_own) */
};

void upcred_bind(struct upcred *u);
/* What a value of the host's cache named key is sealed with (its name as hex: a value
 * moved under another name does not open). */
void upcred_seal_ad(const unsigned char key[CREDCACHE_KEY_BYTES], char ad[2 * CREDCACHE_KEY_BYTES + 1]);
/* Wipes the keys upcred_bind derived. */
void upcred_clear(struct upcred *u);
/* struct upstream_cred's bearer (ctx: the struct upcred): the token obtained for up (as
 * the caller, or as the gateway: up's credentials), from the cache or the token
 * endpoint; with again, the cached one is dropped first. 0 with
 * *token, or -1 with err: GW_ECALL naming the upstream and the OAuth error when the
 * exchange is refused (this caller's, not the upstream's failure); GW_ESCOPE when it is
 * refused for scope and the caller's token lacks some of exchange-scopes: err's detail
 * is then those scopes alone, blank-separated (the caller may step up to them);
 * GW_EAUTHSERVER when the token endpoint cannot be reached or answers something else
 * (observed as the token_exchange dependency of health). */
int upcred_bearer(void *ctx, const struct cfg_upstream *up, int again, char **token, struct gw_error *err);
/* The same, for the gateway's own token for up whatever its credentials (its catalog,
 * catalog-credentials = client-credentials): the client_credentials grant at its
 * token-endpoint, else at the issuer's for an upstream reached by exchange (it trusts
 * that issuer), else at the one discovered. */
int upcred_bearer_own(void *ctx, const struct cfg_upstream *up, int again, char **token, struct gw_error *err);
/* Whether a token for up (as its credentials say) is cached for the caller
 * u->caller_who, or, for client-credentials, the gateway's own, whoever the caller: its
 * marker looked up in region, a copy of the host's credcache region (size bytes, read
 * from the state file: credcache_peek), u bound (upcred_bind) to the session key the
 * gateway seals under. 1 with *until_ms (wall clock) when it is, 0 when not (or up's
 * tokens are not obtained), -1 when region is not a credential cache. */
int upcred_cached_until(const struct upcred *u, const struct cfg_upstream *up, const void *region, size_t size,
    int64_t now_ms, int64_t *until_ms);

#endif
