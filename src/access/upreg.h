/* upreg — who the gateway is at a user-oauth upstream's authorization server, the
 * client whose authorization codes and refresh tokens a person's connection uses:
 *  - configured: the section's client-id (and client-secret-file, else public);
 *  - else, when that server takes Client ID Metadata Documents, the URL of the one the
 *    gateway serves (upreg_document: its name, the connect page as its one redirect
 *    URI, a public client with PKCE), which every host and restart shares with nothing
 *    stored;
 *  - else, when it offers dynamic registration (RFC 7591), a client registered there
 *    once (public, PKCE: no secret to keep) and kept, sealed, in the host's credential
 *    cache, or with a Redis store in Redis, for every host.
 * A server that offers none of these needs client-id (the person is told, the log says
 * why). */
#ifndef GW_UPREG_H
#define GW_UPREG_H

#include <jansson.h>
#include <stdint.h>

#include "asdisc.h"
#include "config.h"
#include "upcred.h"

#define UPREG_ID_MAX		512	/* a client_id, with its NUL */
#define UPREG_KEEP_MS		(30LL * 86400 * 1000)	/* a registered client is kept this long */

enum upreg_how { UPREG_CONFIGURED = 1, UPREG_DOCUMENT, UPREG_REGISTERED };

/* The gateway's client at up's authorization server; as points into it. */
struct up_client {
	int how;			/* enum upreg_how */
	char id[UPREG_ID_MAX];
	struct as_client as;		/* id, and the configured secret (NULL: a public client) */
};

/* up's client, its server as (discovered) at now_ms: 0, or -1 with err (GW_ECONFIG: no
 * way to be a client there without client-id; GW_EAUTHSERVER: the registration failed). */
int upreg_client(const struct upcred *u, const struct cfg_upstream *up, const struct up_as *as, int64_t now_ms,
    struct up_client *c, struct gw_error *err);
/* The Client ID Metadata Document the gateway serves at cfg->client_document_url: a new
 * object. */
json_t *upreg_document(const struct config *cfg);
/* How up's client is had, for `mcpgate -t`: "pre-registered ...", or what discovery
 * will decide. */
const char *upreg_how_words(const struct cfg_upstream *up);

#endif
