/* confcheck — what `mcpgate -t` warns about (docs/ARCHITECTURE.md §2, §3): a
 * configuration that loads but cannot do what it seems to. Warnings never refuse a
 * configuration: a gateway serves it as it is.
 *
 * Without a catalog: keys that have no effect (the policy's keys when no [tenant] turns
 * it on, read-only-tools and trust-hints without a read-only tenant, a feature no group
 * needs, a group's feature no tenant listing it has, Redis settings without Redis,
 * client-auth and client-secret-file without client-id, the JWT keys with verify =
 * introspection and the introspection's with verify = jwt alone, trusted-proxies that
 * nothing reads, an upstream timeout-ms past request-timeout-ms), groups no tenant lists, and
 * upstreams whose prompts and resources no tenant can reach. With a catalog (the last
 * one the gateway saved, or explain's --catalog file): names two upstreams offer, tools
 * whose inputSchema cannot be checked at an upstream that validates, tools no group a
 * tenant lists holds, and patterns (tools, prompts, resources, allow, deny,
 * read-only-tools) that match nothing in it. Each warning is "FILE:LINE: key: why", the line being the key's
 * (or its section's). */
#ifndef GW_CONFCHECK_H
#define GW_CONFCHECK_H

#include <jansson.h>

#include "config.h"

#define CONFCHECK_MAX		64	/* warnings kept; more are counted */
#define CONFCHECK_TOOLS_MAX	10	/* tools named one by one per upstream */

struct confcheck {
	char msg[CONFCHECK_MAX][480];
	size_t n;
	size_t dropped;
};

/* The warnings for cfg into out; doc (catalog.h's document; may be NULL: then nothing
 * that needs one is checked). */
void confcheck_run(const struct config *cfg, json_t *doc, struct confcheck *out);
/* For -t: a line for each upstream whose token the gateway obtains, saying how (the
 * mode, the token endpoint, the client), into out (n bytes, cut at a line's end when
 * full); "" when there is none. */
void confcheck_credentials_note(const struct config *cfg, char *out, size_t n);

#endif
