/* mcp_connect — a call that needs the person's own account at a user-oauth upstream
 * they have not connected: the error that sends them to the connect page. A client that
 * declared URL-mode elicitation (elicitation.url: at initialize, or in a 2026-07-28
 * request's _meta) gets the JSON-RPC error -32042 with one URL-mode elicitation; any
 * other the same URL in a refusal's message (and its data), for the person to open. The
 * URL carries a ticket (connect_seal.h) naming the person and the upstream: the page
 * signs the person in first and goes on only for that person. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "connect_seal.h"
#include "log.h"
#include "mcp_call.h"
#include "secret.h"

#define META_CAPS	"io.modelcontextprotocol/clientCapabilities"

/* Whether the caller takes URL-mode elicitation. */
static int
elicits_url(const struct exchange *x, json_t *params)
{
	json_t *caps;

	if (x->modern) {
		caps = json_object_get(json_object_get(params, "_meta"), META_CAPS);
		return json_is_object(json_object_get(json_object_get(caps, "elicitation"), "url"));
	}
	return x->sess && (x->sess->flags & SESSION_F_ELICIT_URL);
}

/* The connect page's URL for the caller and upstream into url: 0, or -1. id: the
 * ticket's id as hex (the elicitation's id). */
static int
connect_url(const struct exchange *x, const char *upstream, char *url, size_t n, char id[2 * CONNECT_ID_BYTES + 1])
{
	struct connect_keys k;
	struct connect_claim c;
	char sealed[CONNECT_SEALED_MAX];
	int rc = -1;

	if (x->env->session_key == NULL || x->cfg->connect_url == NULL || x->caller == NULL)
		return -1;
	memset(&c, 0, sizeof(c));
	c.kind = CONNECT_TICKET;
	c.until_ms = clock_wall_ms() + CONNECT_TICKET_MS;
	secret_random_bytes(c.id, sizeof(c.id));
	snprintf(c.upstream, sizeof(c.upstream), "%s", upstream);
	connect_keys_derive(&k, x->env->session_key);
	connect_person(&k, x->cfg->issuer, x->caller->claims.subject, c.person);
	if (connect_seal(&k, &c, sealed, sizeof(sealed)) == 0 &&
	    (size_t)snprintf(url, n, "%s?ticket=%s", x->cfg->connect_url, sealed) < n) {
		secret_hex(c.id, sizeof(c.id), id);
		rc = 0;
	}
	connect_keys_clear(&k);
	secret_wipe(&c, sizeof(c));
	return rc;
}

void
mcp_connect_required(struct element *el, json_t *params, const char *upstream, struct gw_error *err)
{
	struct exchange *x = el->x;
	char url[CONNECT_SEALED_MAX + 1024], id[2 * CONNECT_ID_BYTES + 1];
	json_t *e;

	if (strlen(x->cfg->connect_url ? x->cfg->connect_url : "") >= 1024 ||
	    connect_url(x, upstream, url, sizeof(url), id) < 0) {
		gw_error_set(err, GW_EINTERNAL, "upstream %s needs your account there connected, and no link to "
		    "connect it could be made", upstream);
		return;
	}
	json_decref(el->err_data);
	if (elicits_url(x, params)) {
		e = json_pack("{s:s, s:s, s:s, s:s+}", "mode", "url", "elicitationId", id, "url", url,
		    "message", "Connect your account at ", upstream);
		el->err_data = json_pack("{s:[o]}", "elicitations", e);
		gw_error_set(err, GW_ECONNECT, "This request needs your account at %s connected", upstream);
	} else {
		el->err_data = json_pack("{s:s, s:s}", "url", url, "upstream", upstream);
		if (strlen(url) + strlen(upstream) + 80 < GW_ERROR_DETAIL)
			gw_error_set(err, GW_EREFUSED, "Connect your account at %s: open %s, then retry", upstream, url);
		else
			gw_error_set(err, GW_EREFUSED, "Connect your account at %s: open the URL in error.data.url, "
			    "then retry", upstream);
	}
	log_info(x->req->id, "connect: upstream %s: the caller's account there is not connected: sent to the "
	    "connect page", upstream);
}
