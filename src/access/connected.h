/* connected — people's connected accounts at user-oauth upstreams: the vault entry of a
 * person (their subject at the organisation's issuer) and an upstream, as calls use it
 * and the connect page fills it.
 *  - A call takes the entry's access token; one that ends within UPCRED_EARLY_MS, or
 *    that the upstream just refused, is refreshed first (the refresh_token grant at the
 *    upstream's token endpoint), by one process of the host while the others wait
 *    (vault_claim_refresh). A refused refresh (invalid_grant and the like), an entry
 *    that does not open, or a freshly refreshed token the upstream refuses again, drops
 *    the entry: the person is asked to connect again (GW_ECONNECT).
 *  - The page stores what the upstream's token endpoint issued (connected_keep); a
 *    connection evicted to make room is logged with whose it was (never a token).
 * Every change is an audit line (upstream, the person's digest, what happened). */
#ifndef GW_CONNECTED_H
#define GW_CONNECTED_H

#include <stdint.h>

#include "asdisc.h"
#include "tokenep.h"
#include "upreg.h"
#include "upcred.h"
#include "vault.h"
#include "vault_seal.h"

/* A connected token that was refreshed this recently and is refused by the upstream
 * is not refreshed again: the connection is dropped. */
#define CONNECTED_FRESH_MS	(60 * 1000)

/* up's authorization server (its endpoints as configured, else discovered) and the
 * gateway's client there (upreg.h): 0, or -1 with err (GW_EAUTHSERVER). */
int connected_server(const struct upcred *u, const struct cfg_upstream *up, int64_t now_ms, struct up_as *as,
    struct up_client *client, struct gw_error *err);

/* The vault entry of u's caller at up. */
void connected_name(const struct upcred *u, const char *subject, const struct cfg_upstream *up,
    unsigned char name[VAULT_NAME_BYTES]);

/* upcred_bearer for a user-oauth upstream: the person's access token there (malloc'd;
 * the caller wipes it). 0, or -1 with err: GW_ECONNECT (detail: up's name alone) when
 * the person has no usable connection, GW_EAUTHSERVER when a needed refresh cannot be
 * had now, GW_EINTERNAL when the vault cannot be used. */
int connected_bearer(const struct upcred *u, const struct cfg_upstream *up, int again, char **token,
    struct gw_error *err);

/* Keeps what up's token endpoint issued (a) for subject, who (the audit digest), as a
 * new connection: 0, or -1 with err (not storable, or the vault unusable). */
int connected_keep(const struct upcred *u, const struct cfg_upstream *up, const char *subject, const char *who,
    const struct tokenep_answer *a, struct gw_error *err);

/* Whether subject is connected at up: 1 with what the vault holds in t (free it with
 * vault_tokens_free), 0 not (or an entry that does not open), -1 the vault unusable. */
int connected_peek(const struct upcred *u, const char *subject, const struct cfg_upstream *up,
    struct vault_tokens *t);
/* subject disconnects from up: its tokens revoked at up's authorization server (RFC
 * 7009, when it names a revocation endpoint; best effort), the entry dropped, an audit
 * line. 1 dropped, 0 there was none, -1 the vault unusable. */
int connected_drop(const struct upcred *u, const char *subject, const struct cfg_upstream *up);

#endif
