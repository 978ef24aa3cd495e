/* connect_page — what the connect page's steps share (h_connect.c connects an account,
 * h_connect_list.c shows a person's connections and ends one): the request as the page
 * sees it, its answers (small HTML pages of our own, never cached, never framed, no
 * script), the browser's binding cookie, single use, and the legs of authorization
 * code + PKCE at an authorization server. */
#ifndef GW_CONNECT_PAGE_H
#define GW_CONNECT_PAGE_H

#include <stdint.h>

#include "buf.h"
#include "config.h"
#include "connect_seal.h"
#include "gateway.h"
#include "req_ctx.h"
#include "tokenep.h"
#include "upcred.h"

#define COOKIE_NAME	"mcpgate_connect"		/* binds a browser to its legs */
#define COOKIE_SESSION	"mcpgate_connect_session"	/* a person signed in to see their connections */
#define COOKIE_BYTES	16
#define COOKIE_HEX	"0123456789abcdef"
#define COOKIE_B64URL	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
/* The page's one style, allowed by its hash alone (CSP level 2): nothing else runs. */
#define PAGE_STYLE	"body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em;" \
	"color:#222}h1{font-size:1.4em}td,th{padding:.2em .8em .2em 0;text-align:left}"

/* One request of the page: its context and what it keeps between the steps. */
struct page {
	struct req_ctx *rc;
	const struct config *cfg;
	struct connect_keys keys;
	struct upcred u;		/* the worker's connections, the host's caches and vault */
	int64_t now_ms;
};

/* The headers of every answer (no-store, a CSP whose forms may go only to this page
 * when forms, X-Frame-Options, Referrer-Policy, nosniff). */
void page_headers(struct response *resp, int forms);
/* The answer: a page saying title and text (escaped), with status. */
void page_say(struct page *pg, int status, const char *title, const char *text);
/* The answer: status, a page whose body (inside <body>, after the title) is html. */
void page_html(struct page *pg, int status, const char *title, const struct buf *html);
int page_escaped(struct buf *b, const char *text);
/* 302 (status 303 after a POST) to url. */
void page_redirect(struct page *pg, int status, const char *url);
/* Records id as used until until_ms: 1 first use, 0 used before, -1 not known now. */
int page_use_once(struct page *pg, const unsigned char id[CONNECT_ID_BYTES], int64_t until_ms);
/* The digest of a cookie value (what a leg or a session is bound to). */
void page_browser(const struct page *pg, const char *cookie, unsigned char out[CONNECT_BROWSER_BYTES]);
/* The value of the cookie name into out (n bytes): 0, or -1 (none, not of alphabet, or
 * two of that name). */
int page_cookie(const struct request *req, const char *name, const char *alphabet, char *out, size_t n);
/* Whether the request's browser cookie is the one c was bound to. */
int page_bound(const struct page *pg, const struct connect_claim *c);
/* The upstream section named name (a user-oauth one), or NULL. */
const struct cfg_upstream *page_upstream(const struct config *cfg, const char *name);
/* The authorization request of a leg to endpoint: client, PKCE (c's verifier made
 * here), c sealed as the state, resource, scope. 0 redirected, or -1. */
int page_authorize(struct page *pg, const char *endpoint, const char *client_id, struct connect_claim *c,
    const char *resource, const char *scope);
/* A leg at the organisation's issuer for c (its browser binding made here, the
 * cookie set): 0 redirected, or -1 said. */
int page_sign_in(struct page *pg, struct connect_claim *c);
/* The code of a leg c redeemed at endpoint (NULL: the issuer's) as client, for the
 * resource the leg asked for, into a: 0, or -1 said. */
int page_redeem(struct page *pg, const char *endpoint, const struct as_client *client,
    const struct connect_claim *c, const char *code, struct tokenep_answer *a);
/* The issuer's leg ended: its code redeemed as the gateway's client there and the
 * token checked as any caller's: 0 with the person's subject in subject (n bytes), or
 * -1 said. */
int page_signed_in(struct page *pg, const struct connect_claim *c, const char *code, char *subject, size_t n);

/* h_connect_list.c: the connections page of the person of session (GET), and its
 * disconnect form (POST); a sign-in's leg ended (c: CONNECT_SIGN_IN). */
void connect_list(struct page *pg, const struct connect_claim *session);
void connect_disconnect(struct page *pg);
void connect_signed_in(struct page *pg, const struct connect_claim *c, const char *code);
/* The session of the request's cookie, bound to its browser: 0 with *s, or -1. */
int connect_session(struct page *pg, struct connect_claim *s);

#endif
