/* h_connect_list — the connect page with nothing asked: a person's connections, once
 * they signed in at the organisation's issuer here (a session of CONNECT_SESSION_MS in a
 * sealed cookie, bound to the browser's), each with a form that disconnects it (POST:
 * the session's CSRF token, the Origin when the browser sends one, SameSite cookies). A
 * disconnect revokes the tokens at the upstream's authorization server where it offers
 * that (RFC 7009) and drops the vault entry (connected.h). */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "clock.h"
#include "connect_page.h"
#include "connected.h"
#include "log.h"
#include "secret.h"
#include "url.h"

#define CSRF_BYTES	16
#define FORM_MAX	4096	/* a disconnect's form */

/* The CSRF token of session s: a keyed digest of its id, as hex. */
static void
csrf_of(const struct page *pg, const struct connect_claim *s, char out[2 * CSRF_BYTES + 1])
{
	const struct secret_part parts[2] = { { "connect csrf", 12 }, { s->id, CONNECT_ID_BYTES } };
	unsigned char d[32];

	secret_keyed_digest_parts(pg->keys.person, parts, 2, d);
	secret_hex(d, CSRF_BYTES, out);
}

int
connect_session(struct page *pg, struct connect_claim *s)
{
	char sealed[CONNECT_SEALED_MAX];

	memset(s, 0, sizeof(*s));
	if (page_cookie(pg->rc->req, COOKIE_SESSION, COOKIE_B64URL, sealed, sizeof(sealed)) < 0 ||
	    connect_open(&pg->keys, sealed, CONNECT_SESSION, pg->now_ms, s) < 0)
		return -1;
	if (!page_bound(pg, s)) {
		secret_wipe(s, sizeof(*s));
		return -1;
	}
	return 0;
}

void
connect_signed_in(struct page *pg, const struct connect_claim *c, const char *code)
{
	struct connect_claim s;
	char sealed[CONNECT_SEALED_MAX];

	memset(&s, 0, sizeof(s));
	if (page_signed_in(pg, c, code, s.subject, sizeof(s.subject)) < 0)
		goto out;
	s.kind = CONNECT_SESSION;
	s.until_ms = pg->now_ms + CONNECT_SESSION_MS;
	secret_random_bytes(s.id, sizeof(s.id));
	memcpy(s.browser, c->browser, sizeof(s.browser));
	if (connect_seal(&pg->keys, &s, sealed, sizeof(sealed)) < 0) {
		page_say(pg, 500, "Something went wrong", "The sign-in could not be kept.");
		goto out;
	}
	response_set_header(pg->rc->resp, "Set-Cookie", COOKIE_SESSION "=%s; Path=%s; Max-Age=%d; HttpOnly; "
	    "SameSite=Lax%s", sealed, pg->cfg->connect_path, CONNECT_SESSION_MS / 1000,
	    strncmp(pg->cfg->connect_url, "https:", 6) == 0 ? "; Secure" : "");
	page_redirect(pg, 303, pg->cfg->connect_url);
out:
	secret_wipe(&s, sizeof(s));
}

/* One row of the list: up, and whether s's person is connected there. 0, or -1. */
static int
row(struct page *pg, const struct connect_claim *s, const struct cfg_upstream *up, const char *csrf, struct buf *b)
{
	struct vault_tokens t;
	char when[32] = "";
	int rc, bad;

	rc = connected_peek(&pg->u, s->subject, up, &t);
	if (rc == 1 && t.obtained_ms > 0)
		clock_rfc3339((time_t)(t.obtained_ms / 1000), when, sizeof(when));
	bad = buf_puts(b, "<tr><td>") || page_escaped(b, up->s.name) || buf_puts(b, "</td><td>");
	if (!bad && rc == 1)
		bad = buf_puts(b, "connected") || (when[0] && (buf_puts(b, " (since ") || page_escaped(b, when) ||
		    buf_puts(b, ")"))) || (t.scope && (buf_puts(b, "; scopes: ") || page_escaped(b, t.scope))) ||
		    buf_puts(b, "</td><td><form method=\"post\" action=\"") || page_escaped(b, pg->cfg->connect_path) ||
		    buf_puts(b, "\"><input type=\"hidden\" name=\"upstream\" value=\"") || page_escaped(b, up->s.name) ||
		    buf_puts(b, "\"><input type=\"hidden\" name=\"csrf\" value=\"") || buf_puts(b, csrf) ||
		    buf_puts(b, "\"><button type=\"submit\">Disconnect</button></form>");
	else if (!bad)
		bad = buf_puts(b, rc < 0 ? "cannot be told now" : "not connected") || buf_puts(b, "</td><td>");
	vault_tokens_free(&t);
	return bad || buf_puts(b, "</td></tr>") ? -1 : 0;
}

void
connect_list(struct page *pg, const struct connect_claim *s)
{
	char csrf[2 * CSRF_BYTES + 1];
	struct buf b;
	size_t i;
	int bad;

	csrf_of(pg, s, csrf);
	buf_init(&b, 32768);
	bad = buf_puts(&b, "<p>Signed in as ") || page_escaped(&b, s->subject) ||
	    buf_puts(&b, ".</p><table><tr><th>service</th><th>your account there</th><th></th></tr>");
	for (i = 0; i < pg->cfg->n_upstreams && !bad; i++)
		if (pg->cfg->upstreams[i].credentials == UP_CRED_USER_OAUTH)
			bad = row(pg, s, &pg->cfg->upstreams[i], csrf, &b) < 0;
	bad = bad || buf_puts(&b, "</table><p>An MCP client asks you to connect an account when a request "
	    "needs one.</p>");
	page_headers(pg->rc->resp, 1);
	if (bad)
		page_say(pg, 500, "Something went wrong", "The list could not be made.");
	else
		page_html(pg, 200, "Your connections", &b);
	buf_free(&b);
}

/* Long: the POST checked in turn (its Origin, the session, the form and its CSRF token,
 * the upstream), then the disconnect, each refusal its own page. */
void
connect_disconnect(struct page *pg)
{
	const struct request *req = pg->rc->req;
	const struct cfg_upstream *up;
	char csrf[2 * CSRF_BYTES + 1], given[2 * CSRF_BYTES + 1], name[VAULT_UPSTREAM_MAX];
	struct connect_claim s;
	struct gw_error err;
	struct buf form;
	int rc;

	buf_init(&form, FORM_MAX + 1);
	if (req->origin && strcasecmp(req->origin, pg->cfg->origin) != 0) {
		page_say(pg, 403, "Not disconnected", "This form was sent from another site.");
		goto out;
	}
	if (connect_session(pg, &s) < 0) {
		page_say(pg, 403, "Not disconnected", "Your sign-in here has ended; open this page again.");
		goto out;
	}
	csrf_of(pg, &s, csrf);
	if (request_read_body(pg->rc->req, FORM_MAX, &form, &err) < 0 || buf_putc(&form, '\0') ||
	    url_query_param(form.data, "csrf", given, sizeof(given)) != 1 ||
	    url_query_param(form.data, "upstream", name, sizeof(name)) != 1 ||
	    strlen(given) != 2 * CSRF_BYTES || !secret_equal(given, csrf, 2 * CSRF_BYTES) ||
	    (up = page_upstream(pg->cfg, name)) == NULL) {
		page_say(pg, 400, "Not disconnected", "This form is not one this page made; open this page again.");
		goto out_s;
	}
	if ((rc = connected_drop(&pg->u, s.subject, up)) < 0) {
		page_say(pg, 503, "Not disconnected", "Your connections cannot be changed now; try again shortly.");
		goto out_s;
	}
	log_info(req->id, "connect: upstream %s: %s", up->s.name, rc ? "disconnected" : "was not connected");
	page_redirect(pg, 303, pg->cfg->connect_url);
out_s:
	secret_wipe(&s, sizeof(s));
out:
	buf_free(&form);
}
