/* upreg — the gateway's client at a user-oauth upstream's authorization server
 * (upreg.h). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "credcache.h"
#include "log.h"
#include "rstore.h"
#include "secret.h"
#include "upreg.h"

json_t *
upreg_document(const struct config *cfg)
{
	json_t *doc = json_pack("{s:s, s:s, s:[s], s:[s, s], s:[s], s:s}", "client_id", cfg->client_document_url,
	    "client_name", cfg->title ? cfg->title : cfg->name, "redirect_uris", cfg->connect_url,
	    "grant_types", "authorization_code", "refresh_token", "response_types", "code",
	    "token_endpoint_auth_method", "none");

	if (doc && cfg->website_url)
		json_object_set_new(doc, "client_uri", json_string(cfg->website_url));
	return doc;
}

const char *
upreg_how_words(const struct cfg_upstream *up)
{
	if (up->client_id)
		return up->client_secret ? "the pre-registered confidential client" : "the pre-registered public (PKCE) "
		    "client";
	return "the gateway's Client ID Metadata Document where that server takes one, else a client it "
	    "registers there (RFC 7591)";
}

/* What names up's registered client: in the host's cache, and in Redis. */
static void
kept_name(const struct upcred *u, const struct cfg_upstream *up, unsigned char key[CREDCACHE_KEY_BYTES])
{
	const struct secret_part parts[3] = { { "registration", 13 }, { up->url, strlen(up->url) + 1 },
	    { u->cfg->connect_url, strlen(u->cfg->connect_url) } };

	secret_keyed_digest_parts(u->name_key, parts, 3, key);
}

/* RFC 7591 §3.2.1: the client_id of a registration's answer (a 201 with JSON), into id:
 * 0, or -1. A secret issued anyway is not kept: the client is used as a public one. */
static int
registered_id(long status, const struct buf *body, char id[UPREG_ID_MAX])
{
	json_t *doc;
	const char *v;
	size_t i, n;
	int rc = -1;

	if ((status != 201 && status != 200) || (doc = json_loadb(body->data, body->len, 0, NULL)) == NULL)
		return -1;
	v = json_string_value(json_object_get(doc, "client_id"));
	n = json_string_length(json_object_get(doc, "client_id"));
	if (v && n > 0 && n < UPREG_ID_MAX) {
		for (i = 0; i < n && v[i] > 0x20 && v[i] < 0x7f; i++)
			;
		if (i == n) {
			memcpy(id, v, n + 1);
			rc = 0;
		}
	}
	json_decref(doc);
	return rc;
}

/* A new registration at as for up (the connect page's redirect URI, public, PKCE): 0
 * with id, or -1 with err. */
static int
register_now(const struct upcred *u, const struct cfg_upstream *up, const struct up_as *as, char id[UPREG_ID_MAX],
    struct gw_error *err)
{
	json_t *doc = json_pack("{s:[s], s:[s, s], s:[s], s:s, s:s}", "redirect_uris", u->cfg->connect_url,
	    "grant_types", "authorization_code", "refresh_token", "response_types", "code",
	    "token_endpoint_auth_method", "none", "client_name", u->cfg->title ? u->cfg->title : u->cfg->name);
	char *json = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	struct gw_error why;
	long st = -1;

	json_decref(doc);
	if (json && u->ix)
		st = introspect_post_json(u->ix, u->cfg, as->registration_endpoint, json,
		    "the upstream's registration endpoint", &why);
	free(json);
	if (st >= 0 && registered_id(st, introspect_body(u->ix), id) == 0) {
		log_info(u->request_id, "connect: upstream %s: the gateway registered as a client at %s (RFC 7591)",
		    up->s.name, as->issuer);
		return 0;
	}
	log_warn(u->request_id, "connect: upstream %s: registration at %s failed (%s)", up->s.name,
	    as->registration_endpoint, st < 0 ? why.detail : "its answer has no usable client_id");
	gw_error_set(err, GW_EAUTHSERVER, "upstream %s: the gateway could not register as a client at its "
	    "authorization server", up->s.name);
	return -1;
}

/* A registered client: kept (the host's cache, or Redis), else registered now and kept.
 * 0 with id, or -1 with err. */
static int
registered(const struct upcred *u, const struct cfg_upstream *up, const struct up_as *as, int64_t now_ms,
    char id[UPREG_ID_MAX], struct gw_error *err)
{
	unsigned char key[CREDCACHE_KEY_BYTES];
	char sealed[CREDCACHE_VALUE_MAX], ad[2 * CREDCACHE_KEY_BYTES + 1];
	const struct rs_key rk = { RS_VAULT, key };	/* (its digest is of another label than a vault entry's) */
	enum cc_status st = CC_UNAVAILABLE;
	int got = 0;

	kept_name(u, up, key);
	upcred_seal_ad(key, ad);
	if (u->vault_rs)
		got = rstore_get(u->vault_rs, u->cfg, &rk, sealed, sizeof(sealed), clock_mono_us() / 1000) == 1;
	else
		got = (st = credcache_get(u->cache, key, now_ms, u->cfg->auth_timeout_ms * 2 + 1000, sealed,
		    sizeof(sealed))) == CC_HIT;
	if (got && secret_open(u->seal_key, sealed, ad, id, UPREG_ID_MAX) > 0)
		return 0;
	if (register_now(u, up, as, id, err) < 0) {
		if (CC_CLAIMED(st))
			credcache_drop(u->cache, key);
		return -1;
	}
	if (secret_seal(u->seal_key, id, strlen(id), ad, sealed, sizeof(sealed)) == 0) {
		if (u->vault_rs)
			(void)rstore_put(u->vault_rs, u->cfg, &rk, sealed, UPREG_KEEP_MS, clock_mono_us() / 1000);
		else if (CC_CLAIMED(st) || st == CC_UNAVAILABLE || st == CC_HIT)
			(void)credcache_put(u->cache, key, now_ms, now_ms + UPREG_KEEP_MS, sealed);
	}
	return 0;
}

int
upreg_client(const struct upcred *u, const struct cfg_upstream *up, const struct up_as *as, int64_t now_ms,
    struct up_client *c, struct gw_error *err)
{
	memset(c, 0, sizeof(*c));
	if (up->client_id) {
		c->how = UPREG_CONFIGURED;
		snprintf(c->id, sizeof(c->id), "%s", up->client_id);
		c->as = (struct as_client){ c->id, up->client_secret, u->cfg->client_auth };
		return 0;
	}
	if (as->cimd_supported && u->cfg->client_document_url) {
		c->how = UPREG_DOCUMENT;
		snprintf(c->id, sizeof(c->id), "%s", u->cfg->client_document_url);
	} else if (as->registration_endpoint[0]) {
		c->how = UPREG_REGISTERED;
		if (registered(u, up, as, now_ms, c->id, err) < 0)
			return -1;
	} else {
		log_warn(u->request_id, "connect: upstream %s: its authorization server takes neither Client ID Metadata "
		    "Documents nor registrations: set client-id", up->s.name);
		gw_error_set(err, GW_ECONFIG, "upstream %s: the gateway has no client at its authorization server "
		    "(set client-id)", up->s.name);
		return -1;
	}
	c->as = (struct as_client){ c->id, NULL, u->cfg->client_auth };
	return 0;
}
