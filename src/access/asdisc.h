/* asdisc — an upstream's own authorization server, as discovered, for the tokens the
 * gateway obtains there (credentials = client-credentials without token-endpoint, and
 * id-jag's second leg): RFC 9728 protected resource metadata at the upstream's
 * well-known URL, else where its 401's resource_metadata says (on its own origin only),
 * names the server, whose RFC 8414 metadata names its endpoints (token, and for a
 * person's consent authorization, revocation and registration) and whether its
 * authorization responses carry iss (RFC 9207) and it takes Client ID Metadata
 * Documents (client_id_metadata_document_supported). Kept an hour in
 * the host's credential cache, sealed like a token (upcred.h's keys). */
#ifndef GW_ASDISC_H
#define GW_ASDISC_H

#include <stdint.h>

#include "config.h"
#include "err.h"
#include "upcred.h"

struct up_as {
	char issuer[UPCRED_URL_MAX];
	char token_endpoint[UPCRED_URL_MAX];
	char authorization_endpoint[UPCRED_URL_MAX];	/* "": none said */
	char revocation_endpoint[UPCRED_URL_MAX];	/* "": none said (RFC 7009) */
	char registration_endpoint[UPCRED_URL_MAX];	/* "": none said (RFC 7591) */
	int iss_supported;	/* RFC 9207: its authorization responses carry iss */
	int cimd_supported;	/* it takes a Client ID Metadata Document's URL as a client_id */
};

/* up's authorization server, for u's request at now_ms (wall clock): from the host's
 * cache, else discovered and kept. 0 with as, or -1 with err (GW_EAUTHSERVER, logged). */
int asdisc_find(const struct upcred *u, const struct cfg_upstream *up, int64_t now_ms, struct up_as *as,
    struct gw_error *err);

#endif
