/* mcp_connect — a call that needs the person's own account at a user-oauth upstream
 * they have not connected: what sends them to the connect page. A 2026-07-28 client
 * that declared URL-mode elicitation (in its request's _meta) gets an input_required
 * result with one URL-mode elicitation and a requestState of ours (sealed: the person
 * and the upstream, ten minutes); its retry, the person having connected, is relayed
 * without them. A 2025-11-25 client that declared it at initialize gets the JSON-RPC
 * error -32042 with the same elicitation; any other the same URL in a refusal's message
 * (and its data), for the person to open. The
 * URL carries a ticket (connect_seal.h) naming the person and the upstream: the page
 * signs the person in first and goes on only for that person. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "connect_seal.h"
#include "log.h"
#include "mcp_call.h"
#include "negotiate.h"
#include "secret.h"

#define INPUT_KEY	"mcpgate_connect"	/* our input request's name in inputRequests */

/* Whether the caller takes URL-mode elicitation. */
static int
elicits_url(const struct exchange *x, json_t *params)
{
	json_t *caps;

	if (x->modern) {
		caps = json_object_get(json_object_get(params, "_meta"), MCP_META_CAPS);
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

/* The requestState of an input_required for the caller and upstream into out: 0, or -1. */
static int
retry_state(const struct exchange *x, const char *upstream, char *out, size_t n)
{
	struct connect_keys k;
	struct connect_claim c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.kind = CONNECT_RETRY;
	c.until_ms = clock_wall_ms() + CONNECT_TICKET_MS;
	secret_random_bytes(c.id, sizeof(c.id));
	snprintf(c.upstream, sizeof(c.upstream), "%s", upstream);
	connect_keys_derive(&k, x->env->session_key);
	connect_person(&k, x->cfg->issuer, x->caller->claims.subject, c.person);
	rc = connect_seal(&k, &c, out, n);
	connect_keys_clear(&k);
	secret_wipe(&c, sizeof(c));
	return rc;
}

/* The URL-mode elicitation of id and url for upstream: a new object. */
static json_t *
elicitation(const char *id, const char *url, const char *upstream, int with_mode)
{
	json_t *e = json_pack("{s:s, s:s, s:s+}", "elicitationId", id, "url", url, "message", "Connect your account at ",
	    upstream);

	if (e && with_mode)
		json_object_set_new(e, "mode", json_string("url"));
	return e;
}

json_t *
mcp_connect_required(struct element *el, json_t *params, const char *upstream, struct gw_error *err)
{
	struct exchange *x = el->x;
	char url[CONNECT_SEALED_MAX + 1024], id[2 * CONNECT_ID_BYTES + 1], state[CONNECT_SEALED_MAX];
	json_t *e;

	if (strlen(x->cfg->connect_url ? x->cfg->connect_url : "") >= 1024 ||
	    connect_url(x, upstream, url, sizeof(url), id) < 0) {
		gw_error_set(err, GW_EINTERNAL, "upstream %s needs your account there connected, and no link to "
		    "connect it could be made", upstream);
		return NULL;
	}
	log_info(x->req->id, "connect: upstream %s: the caller's account there is not connected: sent to the "
	    "connect page", upstream);
	json_decref(el->err_data);
	el->err_data = NULL;
	if (elicits_url(x, params) && x->modern && retry_state(x, upstream, state, sizeof(state)) == 0)
		return json_pack("{s:s, s:{s:{s:s, s:o}}, s:s}", "resultType", "input_required", "inputRequests",
		    INPUT_KEY, "method", "elicitation/create", "params", elicitation(id, url, upstream, 1),
		    "requestState", state);
	if (elicits_url(x, params)) {
		e = elicitation(id, url, upstream, 1);
		el->err_data = json_pack("{s:[o]}", "elicitations", e);
		gw_error_set(err, GW_ECONNECT, "This request needs your account at %s connected", upstream);
		return NULL;
	}
	el->err_data = json_pack("{s:s, s:s}", "url", url, "upstream", upstream);
	if (strlen(url) + strlen(upstream) + 80 < GW_ERROR_DETAIL)
		gw_error_set(err, GW_EREFUSED, "Connect your account at %s: open %s, then retry", upstream, url);
	else
		gw_error_set(err, GW_EREFUSED, "Connect your account at %s: open the URL in error.data.url, then retry",
		    upstream);
	return NULL;
}

int
mcp_connect_retry(struct element *el, json_t *params, json_t **relay, struct gw_error *err)
{
	struct exchange *x = el->x;
	json_t *responses = json_object_get(params, "inputResponses"), *mine = json_object_get(responses, INPUT_KEY);
	const char *state = json_string_value(json_object_get(params, "requestState"));
	const char *action = json_string_value(json_object_get(mine, "action"));
	unsigned char person[CONNECT_PERSON_BYTES];
	struct connect_keys k;
	struct connect_claim c;
	int ours;

	*relay = NULL;
	if (!x->modern || state == NULL || mine == NULL || x->env->session_key == NULL || x->caller == NULL)
		return 0;
	connect_keys_derive(&k, x->env->session_key);
	ours = connect_open(&k, state, CONNECT_RETRY, clock_wall_ms(), &c) == 0;
	if (ours) {
		connect_person(&k, x->cfg->issuer, x->caller->claims.subject, person);
		ours = secret_equal(person, c.person, sizeof(person));
	}
	connect_keys_clear(&k);
	if (!ours) {	/* not ours, another caller's, altered or expired */
		secret_wipe(&c, sizeof(c));
		gw_error_set(err, GW_EPARAMS, "requestState is not one this gateway made for you, or it expired: "
		    "call again without it");
		return -1;
	}
	if (action == NULL || strcmp(action, "accept") != 0) {
		gw_error_set(err, GW_EREFUSED, "Your account at %s is not connected (the request to connect it was %s)",
		    c.upstream, action ? action : "not answered");
		secret_wipe(&c, sizeof(c));
		return -1;
	}
	secret_wipe(&c, sizeof(c));
	/* The call as it was first made: our input's answer and our state are no upstream's. */
	if ((*relay = json_copy(params)) == NULL) {
		gw_error_set(err, GW_EINTERNAL, "out of memory");
		return -1;
	}
	json_object_del(*relay, "requestState");
	if (json_object_size(responses) == 1)
		json_object_del(*relay, "inputResponses");
	else {
		json_object_set_new(*relay, "inputResponses", json_copy(responses));
		json_object_del(json_object_get(*relay, "inputResponses"), INPUT_KEY);
	}
	return 1;
}
