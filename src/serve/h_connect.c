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
#include "handlers.h"
#include "log.h"
#include "router.h"
#include "secret.h"
#include "tokenep.h"
#include "url.h"

#define COOKIE_NAME	"mcpgate_connect"
#define COOKIE_BYTES	16
/* The page's one style, allowed by its hash alone (CSP level 2): nothing else runs. */
#define PAGE_STYLE	"body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em;" \
	"color:#222}h1{font-size:1.4em}"

/* One request of the page: its context and what it keeps between the steps. */
struct page {
	struct req_ctx *rc;
	const struct config *cfg;
	struct connect_keys keys;
	struct upcred u;		/* the worker's connections, the host's caches and vault */
	int64_t now_ms;
};

/* text into b, HTML-escaped. */
static int
put_escaped(struct buf *b, const char *text)
{
	int bad = 0;

	for (; *text && !bad; text++)
		switch (*text) {
		case '<': bad = buf_puts(b, "&lt;"); break;
		case '>': bad = buf_puts(b, "&gt;"); break;
		case '&': bad = buf_puts(b, "&amp;"); break;
		case '"': bad = buf_puts(b, "&quot;"); break;
		case '\'': bad = buf_puts(b, "&#39;"); break;
		default: bad = buf_putc(b, *text);
		}
	return bad;
}

/* The answer: a page saying title and text (escaped), with status. */
static void
say(struct page *pg, int status, const char *title, const char *text)
{
	struct response *resp = pg->rc->resp;
	struct buf b;

	buf_init(&b, 16384);
	if (buf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	    "<meta name=\"viewport\" content=\"width=device-width\"><title>") || put_escaped(&b, title) ||
	    buf_puts(&b, "</title><style>" PAGE_STYLE "</style></head><body><h1>") || put_escaped(&b, title) ||
	    buf_puts(&b, "</h1><p>") || put_escaped(&b, text) || buf_puts(&b, "</p></body></html>\n") ||
	    response_take_body(resp, status, "text/html; charset=utf-8", &b) < 0) {
		buf_free(&b);
		response_set_error(resp, GW_EINTERNAL, NULL);
	}
}

/* Headers every answer of the page carries. */
static void
page_headers(struct response *resp)
{
	unsigned char h[32];
	char b64[48];

	secret_sha256(PAGE_STYLE, sizeof(PAGE_STYLE) - 1, h);
	if (secret_base64(h, sizeof(h), b64, sizeof(b64)) < 0)
		b64[0] = '\0';
	response_set_header(resp, "Cache-Control", "no-store");
	response_set_header(resp, "Content-Security-Policy", "default-src 'none'; style-src 'sha256-%s'; "
	    "img-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'", b64);
	response_set_header(resp, "X-Frame-Options", "DENY");
	response_set_header(resp, "Referrer-Policy", "no-referrer");
	response_set_header(resp, "X-Content-Type-Options", "nosniff");
}

/* 302 to url. */
static void
redirect(struct page *pg, const char *url)
{
	response_set_empty(pg->rc->resp, 302);
	response_set_header(pg->rc->resp, "Location", "%s", url);
}

/* Records id as used until until_ms: 1 first use, 0 used before, -1 not known now. */
static int
use_once(struct page *pg, const unsigned char id[CONNECT_ID_BYTES], int64_t until_ms)
{
	unsigned char key[REPLAY_KEY_BYTES], d[32];
	const struct secret_part parts[2] = { { "connect once", 12 }, { id, CONNECT_ID_BYTES } };

	secret_keyed_digest_parts(pg->keys.person, parts, 2, d);
	memcpy(key, d, sizeof(key));
	return pg->rc->sh->replay ? replay_once(pg->rc->sh->replay, key, until_ms, pg->now_ms) : -1;
}

/* The digest of a browser's cookie value (what a state is bound to). */
static void
browser_of(const struct page *pg, const char *cookie, unsigned char out[CONNECT_BROWSER_BYTES])
{
	const struct secret_part parts[2] = { { "connect browser", 15 }, { cookie, strlen(cookie) } };
	unsigned char d[32];

	secret_keyed_digest_parts(pg->keys.person, parts, 2, d);
	memcpy(out, d, CONNECT_BROWSER_BYTES);
}

/* This browser's cookie value (from the Cookie header) into out: 0, or -1 when there is
 * none, or it is not one the page set (32 hex digits), or there are two (one planted
 * beside ours: which the page set is not for us to guess). */
static int
cookie_of(const struct request *req, char out[2 * COOKIE_BYTES + 1])
{
	const char *p = req->cookie, *e, *v;
	size_t len, i;
	int found = 0;

	while (p && *p) {
		while (*p == ' ' || *p == '\t' || *p == ';')
			p++;
		e = strchr(p, ';');
		len = e ? (size_t)(e - p) : strlen(p);
		if (len >= sizeof(COOKIE_NAME) && strncmp(p, COOKIE_NAME "=", sizeof(COOKIE_NAME)) == 0) {
			v = p + sizeof(COOKIE_NAME);
			len -= sizeof(COOKIE_NAME);
			for (i = 0; i < len && strchr("0123456789abcdef", v[i]) && v[i]; i++)
				;
			if (found++ || len != 2 * COOKIE_BYTES || i != len)
				return -1;
			memcpy(out, v, len);
			out[len] = '\0';
		}
		p = e;
	}
	return found ? 0 : -1;
}

/* A new PKCE verifier (v) and its S256 challenge (ch). */
static void
pkce(char v[CONNECT_VERIFIER_LEN + 1], char ch[48])
{
	unsigned char r[32], h[32];

	secret_random_bytes(r, sizeof(r));
	secret_b64url(r, sizeof(r), v, CONNECT_VERIFIER_LEN + 1);
	secret_sha256(v, CONNECT_VERIFIER_LEN, h);
	secret_b64url(h, sizeof(h), ch, 48);
	secret_wipe(r, sizeof(r));
}

/* The authorization request of a leg to endpoint: client, PKCE challenge, sealed state
 * of c, resource, scopes. 0 redirected, or -1. */
static int
authorize(struct page *pg, const char *endpoint, const char *client_id, struct connect_claim *c,
    const char *resource, const char *scope)
{
	char state[CONNECT_SEALED_MAX], challenge[48];
	struct buf form, b;
	int bad;

	pkce(c->verifier, challenge);
	if (connect_seal(&pg->keys, c, state, sizeof(state)) < 0)
		return -1;
	buf_init(&form, 8192);
	buf_init(&b, 12288);
	bad = introspect_form_add(&form, "response_type", "code", 4) ||
	    introspect_form_add(&form, "client_id", client_id, strlen(client_id)) ||
	    introspect_form_add(&form, "redirect_uri", pg->cfg->connect_url, strlen(pg->cfg->connect_url)) ||
	    introspect_form_add(&form, "state", state, strlen(state)) ||
	    introspect_form_add(&form, "code_challenge", challenge, strlen(challenge)) ||
	    introspect_form_add(&form, "code_challenge_method", "S256", 4) ||
	    introspect_form_add(&form, "resource", resource, strlen(resource)) ||
	    (scope && *scope && introspect_form_add(&form, "scope", scope, strlen(scope))) ||
	    buf_printf(&b, "%s%c%.*s", endpoint, strchr(endpoint, '?') ? '&' : '?', (int)form.len, form.data);
	if (!bad)
		redirect(pg, b.data);
	buf_free(&form);
	buf_free(&b);
	return bad ? -1 : 0;
}

/* The upstream section named name, or NULL. */
static const struct cfg_upstream *
upstream_named(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->n_upstreams; i++)
		if (strcmp(cfg->upstreams[i].s.name, name) == 0 && cfg->upstreams[i].credentials == UP_CRED_USER_OAUTH)
			return &cfg->upstreams[i];
	return NULL;
}

/* Leg 1: the link opened. */
static void
start(struct page *pg, const char *ticket)
{
	struct connect_claim t, c;
	unsigned char nonce[COOKIE_BYTES];
	char cookie[2 * COOKIE_BYTES + 1], why[GW_ERROR_DETAIL];
	struct gw_error err;
	json_t *meta = NULL;
	const char *authz;
	int once;

	if (connect_open(&pg->keys, ticket, CONNECT_TICKET, pg->now_ms, &t) < 0 || upstream_named(pg->cfg,
	    t.upstream) == NULL) {
		say(pg, 400, "This link does not work", "It has expired, or was changed. Retry the request in your "
		    "MCP client for a new link.");
		return;
	}
	if ((once = use_once(pg, t.id, t.until_ms)) <= 0) {
		say(pg, once == 0 ? 400 : 503, "This link does not work", once == 0 ? "It was already used. Retry "
		    "the request in your MCP client for a new link." : "It cannot be checked now; try again shortly.");
		return;
	}
	if (introspect_as_metadata(pg->u.ix, pg->rc->sh->asmeta, pg->cfg, pg->now_ms, &meta, &err) < 0 ||
	    !introspect_url_usable(pg->cfg, authz = json_string_value(json_object_get(meta, "authorization_endpoint")))) {
		snprintf(why, sizeof(why), "%s", meta ? "the issuer names no usable authorization endpoint" : err.detail);
		log_warn(pg->rc->req->id, "connect: %s", why);
		say(pg, 503, "Cannot sign you in now", "The organisation's sign-in cannot be reached; try again shortly.");
		goto out;
	}
	secret_random_bytes(nonce, sizeof(nonce));
	secret_hex(nonce, sizeof(nonce), cookie);
	memset(&c, 0, sizeof(c));
	c.kind = CONNECT_AT_ISSUER;
	c.until_ms = pg->now_ms + CONNECT_STATE_MS;
	secret_random_bytes(c.id, sizeof(c.id));
	memcpy(c.person, t.person, sizeof(c.person));
	browser_of(pg, cookie, c.browser);
	memcpy(c.upstream, t.upstream, sizeof(c.upstream));
	if (authorize(pg, authz, pg->cfg->connect_client_id ? pg->cfg->connect_client_id : pg->cfg->client_id, &c,
	    pg->cfg->resource, "openid") < 0) {
		say(pg, 500, "Something went wrong", "The sign-in request could not be made.");
		goto out;
	}
	response_set_header(pg->rc->resp, "Set-Cookie", COOKIE_NAME "=%s; Path=%s; Max-Age=%d; HttpOnly; "
	    "SameSite=Lax%s", cookie, pg->cfg->connect_path, CONNECT_STATE_MS / 1000,
	    strncmp(pg->cfg->connect_url, "https:", 6) == 0 ? "; Secure" : "");
out:
	secret_wipe(&c, sizeof(c));
	json_decref(meta);
}

/* The code of a leg redeemed at endpoint (NULL: the issuer's) as client, into a:
 * 0, or -1 said. */
static int
redeem(struct page *pg, const char *endpoint, const struct as_client *client, const struct connect_claim *c,
    const char *code, const char *resource, struct tokenep_answer *a)
{
	const struct secret_part sp = { code, strlen(code) };
	const struct tokenep_ask ask = { .grant = TOKENEP_AUTH_CODE, .endpoint = endpoint, .client = client,
	    .subject = &sp, .resource = resource, .now_ms = pg->now_ms, .code_verifier = c->verifier,
	    .redirect_uri = pg->cfg->connect_url };
	struct gw_error err;
	int rc = tokenep_request(pg->u.ix, pg->rc->sh->asmeta, pg->cfg, &ask, a, &err);

	if (rc == 0)
		return 0;
	if (rc == 1)
		log_info(pg->rc->req->id, "connect: the authorization code was refused: %s", a->error);
	else
		log_warn(pg->rc->req->id, "connect: the token endpoint: %s", err.detail);
	say(pg, rc == 1 ? 400 : 503, "Cannot finish connecting", rc == 1 ? "The authorization server refused to "
	    "complete the sign-in. Retry the request in your MCP client for a new link." :
	    "The authorization server cannot be reached now; try again shortly.");
	return -1;
}

/* Leg 2: the person signed in at the issuer: theirs must be the ticket's subject. */
static void
at_issuer(struct page *pg, struct connect_claim *c, const char *code)
{
	const struct config *cfg = pg->cfg;
	const struct as_client client = { cfg->connect_client_id ? cfg->connect_client_id : cfg->client_id,
	    cfg->connect_client_id ? cfg->connect_client_secret : cfg->client_secret, cfg->client_auth };
	const struct cfg_upstream *up = upstream_named(cfg, c->upstream);
	struct tokenep_answer a = { 0 };
	struct caller who;
	struct gw_error err;
	struct up_as as = { .issuer = "" };
	struct connect_claim n;
	unsigned char person[CONNECT_PERSON_BYTES];
	char scope[1024] = "";
	size_t i;

	memset(&n, 0, sizeof(n));
	if (up == NULL || redeem(pg, NULL, &client, c, code, cfg->resource, &a) < 0) {
		if (up == NULL)
			say(pg, 400, "This link does not work", "That upstream is no longer configured.");
		goto out;
	}
	if (router_verify_token(pg->rc, a.token, a.token_len, &who, &err) < 0) {
		log_warn(pg->rc->req->id, "connect: the sign-in's token was not accepted: %s", err.detail);
		say(pg, err.code == GW_EBADTOKEN ? 403 : 503, "Cannot sign you in", err.code == GW_EBADTOKEN ?
		    "The organisation's sign-in did not give a token this gateway accepts." :
		    "The sign-in cannot be checked now; try again shortly.");
		goto out;
	}
	connect_person(&pg->keys, cfg->issuer, who.claims.subject, person);
	if (!secret_equal(person, c->person, sizeof(person))) {
		log_warn(pg->rc->req->id, "connect: upstream %s: a link made for one person was opened by another: "
		    "refused", up->s.name);
		say(pg, 403, "This link is not yours", "It was made for another person. Links to connect an account "
		    "work only for the person whose request made them; ask your MCP client for your own.");
		goto out;
	}
	if (!up->authorization_endpoint && (asdisc_find(&pg->u, up, pg->now_ms, &as, &err) < 0 ||
	    !as.authorization_endpoint[0])) {
		say(pg, 503, "Cannot reach the service", "The service's authorization server cannot be found now; "
		    "try again shortly.");
		goto out;
	}
	n.kind = CONNECT_AT_UPSTREAM;
	n.until_ms = pg->now_ms + CONNECT_STATE_MS;
	secret_random_bytes(n.id, sizeof(n.id));
	memcpy(n.browser, c->browser, sizeof(n.browser));
	memcpy(n.upstream, c->upstream, sizeof(n.upstream));
	snprintf(n.subject, sizeof(n.subject), "%s", who.claims.subject);
	for (i = 0; i < up->user_scopes.n; i++)
		snprintf(scope + strlen(scope), sizeof(scope) - strlen(scope), "%s%s", i ? " " : "", up->user_scopes.v[i]);
	if (authorize(pg, up->authorization_endpoint ? up->authorization_endpoint : as.authorization_endpoint,
	    up->client_id, &n, up->url, scope) < 0)
		say(pg, 500, "Something went wrong", "The request to the service could not be made.");
out:
	secret_wipe(&n, sizeof(n));
	tokenep_answer_clear(&a);
}

/* Leg 3: the person consented at the upstream's authorization server. */
static void
at_upstream(struct page *pg, struct connect_claim *c, const char *code, const char *iss)
{
	const struct cfg_upstream *up = upstream_named(pg->cfg, c->upstream);
	struct tokenep_answer a = { 0 };
	struct up_as as = { .issuer = "" };
	struct gw_error err;
	struct as_client client;
	char who[33];

	if (up == NULL) {
		say(pg, 400, "This link does not work", "That upstream is no longer configured.");
		return;
	}
	if (asdisc_find(&pg->u, up, pg->now_ms, &as, &err) < 0 && (!up->token_endpoint || iss[0])) {
		say(pg, 503, "Cannot reach the service", "The service's authorization server cannot be found now; "
		    "try again shortly.");
		return;
	}
	/* RFC 9207: an iss that is not the server we sent the person to is a mix-up. */
	if ((iss[0] && (!as.issuer[0] || !url_same(iss, as.issuer))) || (!iss[0] && as.iss_supported)) {
		log_warn(pg->rc->req->id, "connect: upstream %s: the answer's iss is not its authorization server's: "
		    "refused", up->s.name);
		say(pg, 400, "Cannot finish connecting", "The answer did not come from the service's authorization "
		    "server. Retry the request in your MCP client for a new link.");
		return;
	}
	client = (struct as_client){ up->client_id, up->client_secret, pg->cfg->client_auth };
	if (redeem(pg, up->token_endpoint ? up->token_endpoint : as.token_endpoint, &client, c, code, up->url, &a) < 0)
		goto out;
	session_who(NULL, c->subject, "", "", who);
	if (connected_keep(&pg->u, up, c->subject, who, &a, &err) < 0) {
		log_err(pg->rc->req->id, "connect: upstream %s: %s", up->s.name, err.detail);
		say(pg, 500, "Cannot keep the connection", "The service's answer could not be kept; try again.");
		goto out;
	}
	say(pg, 200, "Connected", "Your account is connected. Return to your MCP client and retry the request.");
out:
	tokenep_answer_clear(&a);
}

/* Legs 2 and 3: an authorization server's answer. */
static void
answered(struct page *pg, const char *state)
{
	const char *q = pg->rc->req->query;
	char code[2048], iss[UPCRED_URL_MAX], error[64], cookie[2 * COOKIE_BYTES + 1];
	unsigned char browser[CONNECT_BROWSER_BYTES];
	struct connect_claim c;
	int kind, once, bound;

	kind = connect_open(&pg->keys, state, CONNECT_AT_ISSUER, pg->now_ms, &c) == 0 ? CONNECT_AT_ISSUER :
	    connect_open(&pg->keys, state, CONNECT_AT_UPSTREAM, pg->now_ms, &c) == 0 ? CONNECT_AT_UPSTREAM : 0;
	if (kind == 0 || url_query_param(q, "iss", iss, sizeof(iss)) < 0 ||
	    url_query_param(q, "error", error, sizeof(error)) < 0) {
		say(pg, 400, "Cannot finish connecting", "This answer has expired or was changed. Retry the request "
		    "in your MCP client for a new link.");
		goto out;
	}
	bound = cookie_of(pg->rc->req, cookie) == 0;
	if (bound)
		browser_of(pg, cookie, browser);
	if (!bound || !secret_equal(browser, c.browser, sizeof(browser))) {
		say(pg, 400, "Cannot finish connecting", "This answer belongs to a sign-in started in another "
		    "browser. Open the link from your MCP client in this browser.");
		goto out;
	}
	if ((once = use_once(pg, c.id, c.until_ms)) <= 0) {
		say(pg, once == 0 ? 400 : 503, "Cannot finish connecting", once == 0 ? "This answer was already "
		    "used. Retry the request in your MCP client for a new link." : "It cannot be checked now; "
		    "try again shortly.");
		goto out;
	}
	if (error[0] || url_query_param(q, "code", code, sizeof(code)) != 1 || code[0] == '\0') {
		say(pg, 400, "Not connected", error[0] ? (strcmp(error, "access_denied") == 0 ?
		    "You declined, or the sign-in was cancelled." : "The authorization server refused.") :
		    "The authorization server's answer carries no code.");
		goto out;
	}
	if (kind == CONNECT_AT_ISSUER) {
		if (iss[0] && !url_same(iss, pg->cfg->issuer))
			say(pg, 400, "Cannot finish connecting", "The sign-in's answer did not come from the "
			    "organisation's issuer.");
		else
			at_issuer(pg, &c, code);
	} else
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

	page_headers(rc->resp);
	if (key == NULL) {
		say(&pg, 500, "Something went wrong", "The gateway has no key to seal with.");
		return;
	}
	connect_keys_derive(&pg.keys, key);
	pg.u = (struct upcred){ .cfg = rc->cfg, .ix = worker_auth(rc->w)->ix, .asmeta = rc->sh->asmeta,
	    .cache = rc->sh->creds, .key = key, .request_id = rc->req->id, .metrics = rc->sh->metrics,
	    .vault = rc->sh->vault };
	upcred_bind(&pg.u);
	has_ticket = url_query_param(rc->req->query, "ticket", ticket, sizeof(ticket));
	has_state = url_query_param(rc->req->query, "state", state, sizeof(state));
	if (rc->req->method != M_GET)	/* a HEAD runs no leg: tickets and states are used once */
		say(&pg, 200, "Connect an account", "Open the link your MCP client gave you.");
	else if (has_ticket == 1 && has_state == 0)
		start(&pg, ticket);
	else if (has_state == 1 && has_ticket == 0)
		answered(&pg, state);
	else
		say(&pg, 400, "Connect an account", "Open the link your MCP client gave you to connect your account "
		    "at a service.");
	upcred_clear(&pg.u);
	connect_keys_clear(&pg.keys);
}
