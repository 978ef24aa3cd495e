/* connect_page — what the connect page's steps share (connect_page.h). */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "connect_page.h"
#include "introspect.h"
#include "log.h"
#include "router.h"
#include "secret.h"


/* text into b, HTML-escaped. */
int
page_escaped(struct buf *b, const char *text)
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

void
page_html(struct page *pg, int status, const char *title, const struct buf *html)
{
	struct response *resp = pg->rc->resp;
	struct buf b;

	buf_init(&b, 65536);
	if (buf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	    "<meta name=\"viewport\" content=\"width=device-width\"><title>") || page_escaped(&b, title) ||
	    buf_puts(&b, "</title><style>" PAGE_STYLE "</style></head><body><h1>") || page_escaped(&b, title) ||
	    buf_puts(&b, "</h1>") || buf_append(&b, html->data, html->len) || buf_puts(&b, "</body></html>\n") ||
	    response_take_body(resp, status, "text/html; charset=utf-8", &b) < 0) {
		buf_free(&b);
		response_set_error(resp, GW_EINTERNAL, NULL);
	}
}

void
page_say(struct page *pg, int status, const char *title, const char *text)
{
	struct buf p;

	buf_init(&p, 8192);
	if (buf_puts(&p, "<p>") || page_escaped(&p, text) || buf_puts(&p, "</p>")) {
		buf_free(&p);
		response_set_error(pg->rc->resp, GW_EINTERNAL, NULL);
		return;
	}
	page_html(pg, status, title, &p);
	buf_free(&p);
}

/* Headers every answer of the page carries. */
void
page_headers(struct response *resp, int forms)
{
	unsigned char h[32];
	char b64[48];

	secret_sha256(PAGE_STYLE, sizeof(PAGE_STYLE) - 1, h);
	if (secret_base64(h, sizeof(h), b64, sizeof(b64)) < 0)
		b64[0] = '\0';
	response_set_header(resp, "Cache-Control", "no-store");
	response_set_header(resp, "Content-Security-Policy", "default-src 'none'; style-src 'sha256-%s'; "
	    "img-src 'none'; form-action %s; frame-ancestors 'none'; base-uri 'none'", b64, forms ? "'self'" : "'none'");
	response_set_header(resp, "X-Frame-Options", "DENY");
	/* A page with forms: same-origin, for a browser sends Origin: null on a form's POST
	 * from a no-referrer page, and the POST's Origin is checked. */
	response_set_header(resp, "Referrer-Policy", forms ? "same-origin" : "no-referrer");
	response_set_header(resp, "X-Content-Type-Options", "nosniff");
}

void
page_redirect(struct page *pg, int status, const char *url)
{
	response_set_empty(pg->rc->resp, status);
	response_set_header(pg->rc->resp, "Location", "%s", url);
}

/* Records id as used until until_ms: 1 first use, 0 used before, -1 not known now. */
int
page_use_once(struct page *pg, const unsigned char id[CONNECT_ID_BYTES], int64_t until_ms)
{
	unsigned char key[REPLAY_KEY_BYTES], d[32];
	const struct secret_part parts[2] = { { "connect once", 12 }, { id, CONNECT_ID_BYTES } };

	secret_keyed_digest_parts(pg->keys.person, parts, 2, d);
	memcpy(key, d, sizeof(key));
	if (pg->u.vault_rs)	/* every host: a link or answer used on one is used on all */
		return rstore_once(pg->u.vault_rs, pg->cfg, &(struct rs_key){ RS_ONCE, key }, until_ms - pg->now_ms,
		    clock_mono_us() / 1000);
	return pg->rc->sh->replay ? replay_once(pg->rc->sh->replay, key, until_ms, pg->now_ms) : -1;
}

/* The digest of a browser's cookie value (what a state is bound to). */
void
page_browser(const struct page *pg, const char *cookie, unsigned char out[CONNECT_BROWSER_BYTES])
{
	const struct secret_part parts[2] = { { "connect browser", 15 }, { cookie, strlen(cookie) } };
	unsigned char d[32];

	secret_keyed_digest_parts(pg->keys.person, parts, 2, d);
	memcpy(out, d, CONNECT_BROWSER_BYTES);
}

/* The value of the cookie name (from the Cookie header) into out (n bytes): 0, or -1
 * when there is none, it is not of the page's alphabet (alphabet's characters, 1 to
 * n - 1 of them), or there are two (one planted beside ours: which the page set is not
 * for us to guess). */
int
page_cookie(const struct request *req, const char *name, const char *alphabet, char *out, size_t n)
{
	const char *p = req->cookie, *e, *v;
	size_t len, i, nl = strlen(name);
	int found = 0;

	while (p && *p) {
		while (*p == ' ' || *p == '\t' || *p == ';')
			p++;
		e = strchr(p, ';');
		len = e ? (size_t)(e - p) : strlen(p);
		if (len > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
			v = p + nl + 1;
			len -= nl + 1;
			for (i = 0; i < len && v[i] && strchr(alphabet, v[i]); i++)
				;
			if (found++ || len == 0 || len >= n || i != len)
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
int
page_authorize(struct page *pg, const char *endpoint, const char *client_id, struct connect_claim *c,
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
		page_redirect(pg, 302, b.data);
	buf_free(&form);
	buf_free(&b);
	return bad ? -1 : 0;
}

/* The upstream section named name, or NULL. */
const struct cfg_upstream *
page_upstream(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->n_upstreams; i++)
		if (strcmp(cfg->upstreams[i].s.name, name) == 0 && cfg->upstreams[i].credentials == UP_CRED_USER_OAUTH)
			return &cfg->upstreams[i];
	return NULL;
}

/* The code of a leg redeemed at endpoint (NULL: the issuer's) as client, into a:
 * 0, or -1 said. */
int
page_redeem(struct page *pg, const char *endpoint, const struct as_client *client, const struct connect_claim *c,
    const char *code, struct tokenep_answer *a)
{
	const struct cfg_upstream *up = c->kind == CONNECT_AT_UPSTREAM ? page_upstream(pg->cfg, c->upstream) : NULL;
	const struct secret_part sp = { code, strlen(code) };
	/* RFC 8707: the resource the leg asked for, the upstream's or the gateway's own */
	const struct tokenep_ask ask = { .grant = TOKENEP_AUTH_CODE, .endpoint = endpoint, .client = client,
	    .subject = &sp, .resource = up ? up->url : pg->cfg->resource, .now_ms = pg->now_ms,
	    .code_verifier = c->verifier, .redirect_uri = pg->cfg->connect_url };
	struct gw_error err;
	int rc = tokenep_request(pg->u.ix, pg->rc->sh->asmeta, pg->cfg, &ask, a, &err);

	if (rc == 0)
		return 0;
	if (rc == 1)
		log_info(pg->rc->req->id, "connect: the authorization code was refused: %s", a->error);
	else
		log_warn(pg->rc->req->id, "connect: the token endpoint: %s", err.detail);
	page_say(pg, rc == 1 ? 400 : 502, "Cannot finish connecting", rc == 1 ? "The authorization server refused "
	    "to complete the sign-in. Retry the request in your MCP client for a new link." :
	    "The authorization server could not be reached, or did not answer as expected; try again shortly.");
	return -1;
}


int
page_bound(const struct page *pg, const struct connect_claim *c)
{
	unsigned char browser[CONNECT_BROWSER_BYTES];
	char cookie[2 * COOKIE_BYTES + 1];

	if (page_cookie(pg->rc->req, COOKIE_NAME, COOKIE_HEX, cookie, sizeof(cookie)) < 0 ||
	    strlen(cookie) != 2 * COOKIE_BYTES)
		return 0;
	page_browser(pg, cookie, browser);
	return secret_equal(browser, c->browser, sizeof(browser));
}

int
page_sign_in(struct page *pg, struct connect_claim *c)
{
	const struct config *cfg = pg->cfg;
	unsigned char nonce[COOKIE_BYTES];
	char cookie[2 * COOKIE_BYTES + 1];
	struct gw_error err;
	json_t *meta = NULL;
	const char *authz = NULL;
	int rc = -1;

	if (introspect_as_metadata(pg->u.ix, pg->rc->sh->asmeta, cfg, pg->now_ms, &meta, &err) < 0 ||
	    !introspect_url_usable(cfg, authz = json_string_value(json_object_get(meta, "authorization_endpoint")))) {
		log_warn(pg->rc->req->id, "connect: %s", meta ? "the issuer names no usable authorization endpoint" :
		    err.detail);
		page_say(pg, 503, "Cannot sign you in now", "The organisation's sign-in cannot be reached; try again "
		    "shortly.");
		goto out;
	}
	secret_random_bytes(nonce, sizeof(nonce));
	secret_hex(nonce, sizeof(nonce), cookie);
	page_browser(pg, cookie, c->browser);
	if (page_authorize(pg, authz, cfg->connect_client_id ? cfg->connect_client_id : cfg->client_id, c,
	    cfg->resource, "openid") < 0) {
		page_say(pg, 500, "Something went wrong", "The sign-in request could not be made.");
		goto out;
	}
	response_set_header(pg->rc->resp, "Set-Cookie", COOKIE_NAME "=%s; Path=%s; Max-Age=%d; HttpOnly; "
	    "SameSite=Lax%s", cookie, cfg->connect_path, CONNECT_STATE_MS / 1000,
	    strncmp(cfg->connect_url, "https:", 6) == 0 ? "; Secure" : "");
	rc = 0;
out:
	json_decref(meta);
	return rc;
}

int
page_signed_in(struct page *pg, const struct connect_claim *c, const char *code, char *subject, size_t n)
{
	const struct config *cfg = pg->cfg;
	const struct as_client client = { cfg->connect_client_id ? cfg->connect_client_id : cfg->client_id,
	    cfg->connect_client_id ? cfg->connect_client_secret : cfg->client_secret, cfg->client_auth };
	struct tokenep_answer a = { 0 };
	struct caller who;
	struct gw_error err;
	int rc = -1;

	if (page_redeem(pg, NULL, &client, c, code, &a) < 0)
		goto out;
	if (router_verify_token(pg->rc, a.token, a.token_len, &who, &err) < 0) {
		log_warn(pg->rc->req->id, "connect: the sign-in's token was not accepted: %s", err.detail);
		page_say(pg, err.code == GW_EBADTOKEN ? 403 : 503, "Cannot sign you in", err.code == GW_EBADTOKEN ?
		    "The organisation's sign-in did not give a token this gateway accepts." :
		    "The sign-in cannot be checked now; try again shortly.");
		goto out;
	}
	snprintf(subject, n, "%s", who.claims.subject);
	rc = 0;
out:
	tokenep_answer_clear(&a);
	return rc;
}
