/* h_connect — GET [gateway] connect-path: the page where a person connects their own
 * account at a user-oauth upstream (connected.h), in two legs of authorization code +
 * PKCE (S256), each answered at this same URL:
 *  1. ?ticket=T (the link a call's elicitation gave): the ticket opened and used once;
 *     a cookie binds this browser; to the organisation's issuer, to sign the person in.
 *  2. ?code&state (the issuer's answer): the code redeemed as the gateway's client
 *     there, the access token checked as any caller's, and its subject must be the one
 *     the ticket names: a link forwarded to someone else does not attach their account
 *     to the sender's identity. Then to the upstream's authorization server (RFC 8707
 *     resource: the upstream's URL).
 *  3. ?code&state (the upstream's answer, its iss checked: RFC 9207): the code redeemed,
 *     the tokens sealed into the vault: "Connected".
 * A state is sealed (connect_seal.h), bound to the browser's cookie and used once; it
 * never redirects anywhere but to the two authorization servers' endpoints. Every answer
 * is a small HTML page of our own (no script, nothing from elsewhere), never cached,
 * never framed. Codes, tokens, tickets and states are never logged. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "asdisc.h"
#include "buf.h"
#include "clock.h"
#include "connect_seal.h"
#include "connected.h"
#include "connect_page.h"
#include "handlers.h"
#include "log.h"
#include "router.h"
#include "secret.h"
#include "tokenep.h"
#include "url.h"


/* Leg 1: the link opened. */
static void
start(struct page *pg, const char *ticket)
{
	struct connect_claim t, c;
	int once;

	if (connect_open(&pg->keys, ticket, CONNECT_TICKET, pg->now_ms, &t) < 0 ||
	    page_upstream(pg->cfg, t.upstream) == NULL) {
		page_say(pg, 400, "This link does not work", "It has expired, or was changed. Retry the request in "
		    "your MCP client for a new link.");
		return;
	}
	if ((once = page_use_once(pg, t.id, t.until_ms)) <= 0) {
		page_say(pg, once == 0 ? 400 : 503, "This link does not work", once == 0 ? "It was already used. "
		    "Retry the request in your MCP client for a new link." : "It cannot be checked now; try again "
		    "shortly.");
		return;
	}
	memset(&c, 0, sizeof(c));
	c.kind = CONNECT_AT_ISSUER;
	c.until_ms = pg->now_ms + CONNECT_STATE_MS;
	secret_random_bytes(c.id, sizeof(c.id));
	memcpy(c.person, t.person, sizeof(c.person));
	memcpy(c.upstream, t.upstream, sizeof(c.upstream));
	(void)page_sign_in(pg, &c);
	secret_wipe(&c, sizeof(c));
}

/* Leg 2: the person signed in at the issuer: theirs must be the ticket's subject. */
static void
at_issuer(struct page *pg, struct connect_claim *c, const char *code)
{
	const struct config *cfg = pg->cfg;
	const struct cfg_upstream *up = page_upstream(cfg, c->upstream);
	struct gw_error err;
	struct up_as as;
	struct up_client client;
	struct connect_claim n;
	unsigned char person[CONNECT_PERSON_BYTES];
	char scope[1024] = "", subject[CLAIMS_SUBJECT_MAX];
	size_t i;

	memset(&n, 0, sizeof(n));
	if (up == NULL) {
		page_say(pg, 400, "This link does not work", "That upstream is no longer configured.");
		return;
	}
	if (page_signed_in(pg, c, code, subject, sizeof(subject)) < 0)
		return;
	connect_person(&pg->keys, cfg->issuer, subject, person);
	if (!secret_equal(person, c->person, sizeof(person))) {
		log_warn(pg->rc->req->id, "connect: upstream %s: a link made for one person was opened by another: "
		    "refused", up->s.name);
		page_say(pg, 403, "This link is not yours", "It was made for another person. Links to connect an "
		    "account work only for the person whose request made them; ask your MCP client for your own.");
		goto out;
	}
	err.code = GW_OK;
	if (connected_server(&pg->u, up, pg->now_ms, &as, &client, &err) < 0 || !as.authorization_endpoint[0]) {
		if (err.code == GW_ECONFIG)	/* no client there: not to be retried (the log says why) */
			page_say(pg, 500, "Cannot connect this service", "This gateway has no client at the service's "
			    "authorization server, so accounts there cannot be connected. Tell the gateway's "
			    "administrator.");
		else
			page_say(pg, 503, "Cannot reach the service", "The service's authorization server cannot be "
			    "found now; try again shortly.");
		goto out;
	}
	n.kind = CONNECT_AT_UPSTREAM;
	n.until_ms = pg->now_ms + CONNECT_STATE_MS;
	secret_random_bytes(n.id, sizeof(n.id));
	memcpy(n.browser, c->browser, sizeof(n.browser));
	memcpy(n.upstream, c->upstream, sizeof(n.upstream));
	snprintf(n.subject, sizeof(n.subject), "%s", subject);
	for (i = 0; i < up->user_scopes.n; i++)
		snprintf(scope + strlen(scope), sizeof(scope) - strlen(scope), "%s%s", i ? " " : "",
		    up->user_scopes.v[i]);
	if (page_authorize(pg, as.authorization_endpoint, client.id, &n, up->url, scope) < 0)
		page_say(pg, 500, "Something went wrong", "The request to the service could not be made.");
out:
	secret_wipe(subject, sizeof(subject));
	secret_wipe(&n, sizeof(n));
}

/* The end of leg 3: connected, and where to see one's connections. */
static void
connected_page(struct page *pg, const struct cfg_upstream *up)
{
	struct buf b;

	buf_init(&b, 8192);
	if (buf_puts(&b, "<p>Your account at ") || page_escaped(&b, up->s.name) || buf_puts(&b, " is connected. "
	    "Return to your MCP client and retry the request.</p><p><a href=\"") ||
	    page_escaped(&b, pg->cfg->connect_path) || buf_puts(&b, "\">Your connections</a></p>"))
		page_say(pg, 200, "Connected", "Your account is connected. Return to your MCP client.");
	else
		page_html(pg, 200, "Connected", &b);
	buf_free(&b);
}

/* Leg 3: the person consented at the upstream's authorization server. */
static void
at_upstream(struct page *pg, struct connect_claim *c, const char *code, const char *iss)
{
	const struct cfg_upstream *up = page_upstream(pg->cfg, c->upstream);
	struct tokenep_answer a = { 0 };
	struct up_as disc = { .issuer = "" }, as;
	struct up_client client;
	struct gw_error err;
	char who[33];
	int found;

	if (up == NULL) {
		page_say(pg, 400, "This link does not work", "That upstream is no longer configured.");
		return;
	}
	/* Its issuer, for the answer's iss; and the endpoints and client (connected_server). */
	found = asdisc_find(&pg->u, up, pg->now_ms, &disc, &err) == 0;
	if ((!found && iss[0]) || connected_server(&pg->u, up, pg->now_ms, &as, &client, &err) < 0) {
		page_say(pg, 503, "Cannot reach the service", "The service's authorization server cannot be found "
		    "now; try again shortly.");
		return;
	}
	/* RFC 9207: an iss that is not the server we sent the person to is a mix-up. */
	if ((iss[0] && !url_same(iss, disc.issuer)) || (!iss[0] && disc.iss_supported)) {
		log_warn(pg->rc->req->id, "connect: upstream %s: the answer's iss is not its authorization server's: "
		    "refused", up->s.name);
		page_say(pg, 400, "Cannot finish connecting", "The answer did not come from the service's "
		    "authorization server. Retry the request in your MCP client for a new link.");
		return;
	}
	if (page_redeem(pg, as.token_endpoint, &client.as, c, code, &a) < 0)
		goto out;
	session_who(NULL, c->subject, "", "", who);
	if (connected_keep(&pg->u, up, c->subject, who, &a, &err) < 0) {
		log_err(pg->rc->req->id, "connect: upstream %s: %s", up->s.name, err.detail);
		page_say(pg, 500, "Cannot keep the connection", "The service's answer could not be kept; try again.");
		goto out;
	}
	connected_page(pg, up);
out:
	tokenep_answer_clear(&a);
}

/* The connect page with nothing asked: the person's connections when signed in here,
 * else a sign-in at the issuer to see them. */
static void
connections(struct page *pg)
{
	struct connect_claim s, c;

	if (connect_session(pg, &s) == 0) {
		connect_list(pg, &s);
		secret_wipe(&s, sizeof(s));
		return;
	}
	memset(&c, 0, sizeof(c));
	c.kind = CONNECT_SIGN_IN;
	c.until_ms = pg->now_ms + CONNECT_STATE_MS;
	secret_random_bytes(c.id, sizeof(c.id));
	(void)page_sign_in(pg, &c);
	secret_wipe(&c, sizeof(c));
}

/* The kind of leg state is (0: none that opens now) into c. */
static int
leg_of(struct page *pg, const char *state, struct connect_claim *c)
{
	static const int legs[] = { CONNECT_AT_ISSUER, CONNECT_AT_UPSTREAM, CONNECT_SIGN_IN };
	size_t i;

	for (i = 0; i < sizeof(legs) / sizeof(legs[0]); i++)
		if (connect_open(&pg->keys, state, legs[i], pg->now_ms, c) == 0)
			return legs[i];
	return 0;
}

/* Legs 2 and 3, and a sign-in's: an authorization server's answer. */
static void
answered(struct page *pg, const char *state)
{
	const char *q = pg->rc->req->query;
	char code[2048], iss[UPCRED_URL_MAX], error[64];
	struct connect_claim c;
	int kind, once;

	kind = leg_of(pg, state, &c);
	if (kind == 0 || url_query_param(q, "iss", iss, sizeof(iss)) < 0 ||
	    url_query_param(q, "error", error, sizeof(error)) < 0) {
		page_say(pg, 400, "Cannot finish connecting", "This answer has expired or was changed. Retry the "
		    "request in your MCP client for a new link.");
		goto out;
	}
	if (!page_bound(pg, &c)) {
		page_say(pg, 400, "Cannot finish connecting", "This answer belongs to a sign-in started in another "
		    "browser. Open the link from your MCP client in this browser.");
		goto out;
	}
	if ((once = page_use_once(pg, c.id, c.until_ms)) <= 0) {
		page_say(pg, once == 0 ? 400 : 503, "Cannot finish connecting", once == 0 ? "This answer was already "
		    "used. Retry the request in your MCP client for a new link." : "It cannot be checked now; "
		    "try again shortly.");
		goto out;
	}
	if (error[0]) {	/* RFC 6749 §4.1.2.1: its error code, named (escaped) */
		snprintf(code, sizeof(code), "The authorization server answered %s%s", error,
		    strcmp(error, "access_denied") == 0 ? ": you declined, or the sign-in was cancelled." : ".");
		page_say(pg, 400, "Not connected", code);
		goto out;
	}
	if (url_query_param(q, "code", code, sizeof(code)) != 1 || code[0] == '\0') {
		page_say(pg, 400, "Not connected", "The authorization server's answer carries no code.");
		goto out;
	}
	if (kind != CONNECT_AT_UPSTREAM && iss[0] && !url_same(iss, pg->cfg->issuer))
		page_say(pg, 400, "Cannot finish connecting", "The sign-in's answer did not come from the "
		    "organisation's issuer.");
	else if (kind == CONNECT_AT_ISSUER)
		at_issuer(pg, &c, code);
	else if (kind == CONNECT_SIGN_IN)
		connect_signed_in(pg, &c, code);
	else
		at_upstream(pg, &c, code, iss);
	secret_wipe(code, sizeof(code));
out:
	secret_wipe(&c, sizeof(c));
}

void
h_connect(struct req_ctx *rc)
{
	struct page pg = { .rc = rc, .cfg = rc->cfg, .now_ms = clock_wall_ms() };
	const unsigned char *key = gateway_session_key(rc->sh, rc->cfg);
	char ticket[CONNECT_SEALED_MAX], state[CONNECT_SEALED_MAX];
	int has_ticket, has_state;

	page_headers(rc->resp, 0);
	if (key == NULL) {
		page_say(&pg, 500, "Something went wrong", "The gateway has no key to seal with.");
		return;
	}
	connect_keys_derive(&pg.keys, key);
	pg.u = (struct upcred){ .cfg = rc->cfg, .ix = worker_auth(rc->w)->ix, .asmeta = rc->sh->asmeta,
	    .cache = rc->sh->creds, .key = key, .request_id = rc->req->id, .metrics = rc->sh->metrics,
	    .vault = rc->sh->vault, .vault_rs = rc->cfg->redis_on ? worker_rstore(rc->w, rc->cfg) : NULL };
	upcred_bind(&pg.u);
	has_ticket = url_query_param(rc->req->query, "ticket", ticket, sizeof(ticket));
	has_state = url_query_param(rc->req->query, "state", state, sizeof(state));
	if (rc->req->method == M_POST)
		connect_disconnect(&pg);
	else if (rc->req->method != M_GET)	/* a HEAD runs no leg: tickets and states are used once */
		page_say(&pg, 200, "Connect an account", "Open the link your MCP client gave you.");
	else if (has_ticket == 1 && has_state == 0)
		start(&pg, ticket);
	else if (has_state == 1 && has_ticket == 0)
		answered(&pg, state);
	else if (has_ticket == 0 && has_state == 0)
		connections(&pg);
	else
		page_say(&pg, 400, "Connect an account", "Open the link your MCP client gave you to connect your "
		    "account at a service.");
	upcred_clear(&pg.u);
	connect_keys_clear(&pg.keys);
}
