/* asdisc — an upstream's own authorization server, as discovered (asdisc.h). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "asdisc.h"
#include "challenge.h"
#include "log.h"
#include "url.h"

/* A URL of up's authorization server that may be used: https, or http when up's own
 * URL is http (a loopback or test set-up), and short enough to keep. */
static int
as_url_ok(const struct cfg_upstream *up, const char *url)
{
	return url && strlen(url) < UPCRED_URL_MAX && strchr(url, ' ') == NULL &&
	    (strncasecmp(url, "https://", 8) == 0 ||
	    (strncasecmp(url, "http://", 7) == 0 && strncasecmp(up->url, "http://", 7) == 0));
}

/* RFC 9728 §5.1: up's protected resource metadata where its 401 says it is (the
 * resource_metadata of its Bearer challenge), when it is not at its well-known URL
 * (why: what that fetch found). up is asked once, without any token. The URL must be
 * usable as its authorization server's are (as_url_ok) and on up's own origin (scheme,
 * host and port): a hostile upstream must not make the gateway fetch from any host it
 * names, inside the network the gateway reaches. The document's "resource" must still
 * be up's URL, and the authorization server it names is checked as any other. A new
 * reference, or NULL with err. */
static json_t *
announced_metadata(const struct upcred *u, const struct cfg_upstream *up, const struct gw_error *why,
    struct gw_error *err)
{
	char hdr[CHALLENGE_HEADER_MAX], url[UPCRED_URL_MAX];
	char *origin = NULL, *own = NULL;
	const char *path;
	struct gw_error probe;
	json_t *prm = NULL;

	if (introspect_challenge(u->ix, u->cfg, up->url, hdr, sizeof(hdr), &probe) < 0) {
		gw_error_set(err, GW_EAUTHSERVER, "no protected resource metadata at its well-known URL (%.120s), "
		    "and no 401 to say where it is (%.120s)", why->detail, probe.detail);
		return NULL;
	}
	if (challenge_param(hdr, "Bearer", "resource_metadata", url, sizeof(url)) < 0) {
		gw_error_set(err, GW_EAUTHSERVER, "no protected resource metadata at its well-known URL (%.200s), "
		    "and its 401 names none", why->detail);
		return NULL;
	}
	if (url_check(url) < 0 || !as_url_ok(up, url)) {
		gw_error_set(err, GW_EAUTHSERVER, "its 401 names protected resource metadata at an unusable URL");
		return NULL;
	}
	if ((origin = url_origin(url, &path)) == NULL || (own = url_origin(up->url, &path)) == NULL) {
		gw_error_set(err, GW_EAUTHSERVER, "out of memory");
		goto out;
	}
	if (strcmp(origin, own) != 0) {
		gw_error_set(err, GW_EAUTHSERVER, "its 401 names protected resource metadata on another origin: %.200s, "
		    "not fetched", url);
		goto out;
	}
	prm = introspect_resource_metadata_at(u->ix, u->cfg, url, up->url, err);
out:
	free(origin);
	free(own);
	return prm;
}

/* An endpoint the metadata may name, kept when usable (as_url_ok, no query's '#'). */
static void
optional_url(const struct cfg_upstream *up, json_t *meta, const char *name, char out[UPCRED_URL_MAX])
{
	const char *v = json_string_value(json_object_get(meta, name));

	if (v && as_url_ok(up, v) && url_check(v) == 0)
		snprintf(out, UPCRED_URL_MAX, "%s", v);
}

/* RFC 9728 then RFC 8414: up's protected resource metadata (at its well-known URL, else
 * where its 401 says) names its authorization server, whose metadata names its token
 * endpoint. 0 with as, or -1 with err. */
static int
discover_now(const struct upcred *u, const struct cfg_upstream *up, struct up_as *as, struct gw_error *err)
{
	json_t *prm, *meta = NULL;
	const char *issuer, *te;
	struct gw_error why;
	int rc = -1;

	if ((prm = introspect_resource_metadata(u->ix, u->cfg, up->url, &why)) == NULL &&
	    (prm = announced_metadata(u, up, &why, err)) == NULL)
		return -1;
	issuer = json_string_value(json_array_get(json_object_get(prm, "authorization_servers"), 0));
	if (!as_url_ok(up, issuer)) {
		gw_error_set(err, GW_EAUTHSERVER, "its protected resource metadata names no usable authorization server");
		goto out;
	}
	if ((meta = introspect_discover(u->ix, u->cfg, issuer, err)) == NULL)
		goto out;
	te = json_string_value(json_object_get(meta, "token_endpoint"));
	if (!as_url_ok(up, te)) {
		gw_error_set(err, GW_EAUTHSERVER, "its authorization server's metadata has no usable token_endpoint");
		goto out;
	}
	memset(as, 0, sizeof(*as));
	snprintf(as->issuer, sizeof(as->issuer), "%s", issuer);
	snprintf(as->token_endpoint, sizeof(as->token_endpoint), "%s", te);
	optional_url(up, meta, "authorization_endpoint", as->authorization_endpoint);
	optional_url(up, meta, "revocation_endpoint", as->revocation_endpoint);
	optional_url(up, meta, "registration_endpoint", as->registration_endpoint);
	as->iss_supported = json_is_true(json_object_get(meta, "authorization_response_iss_parameter_supported"));
	as->cimd_supported = json_is_true(json_object_get(meta, "client_id_metadata_document_supported"));
	rc = 0;
out:
	json_decref(meta);
	json_decref(prm);
	return rc;
}

/* What asdisc_find keeps (opened): "issuer token authorization revocation registration
 * FLAGS", an endpoint not said as "-", FLAGS two digits 0 or 1 (iss, metadata
 * documents). 0 with as, or -1. */
static int
kept_read(char *plain, struct up_as *as)
{
	char *f[6], *save = NULL, *t;
	int i;

	memset(as, 0, sizeof(*as));
	for (i = 0, t = strtok_r(plain, " ", &save); t && i < 6; t = strtok_r(NULL, " ", &save))
		f[i++] = t;
	if (i != 6 || t != NULL || strlen(f[5]) != 2 || strspn(f[5], "01") != 2)
		return -1;
	for (i = 0; i < 5; i++)
		if (strlen(f[i]) >= UPCRED_URL_MAX)
			return -1;
	snprintf(as->issuer, sizeof(as->issuer), "%s", f[0]);
	snprintf(as->token_endpoint, sizeof(as->token_endpoint), "%s", f[1]);
	if (strcmp(f[2], "-") != 0)
		snprintf(as->authorization_endpoint, sizeof(as->authorization_endpoint), "%s", f[2]);
	if (strcmp(f[3], "-") != 0)
		snprintf(as->revocation_endpoint, sizeof(as->revocation_endpoint), "%s", f[3]);
	if (strcmp(f[4], "-") != 0)
		snprintf(as->registration_endpoint, sizeof(as->registration_endpoint), "%s", f[4]);
	as->iss_supported = f[5][0] == '1';
	as->cimd_supported = f[5][1] == '1';
	return 0;
}

int
asdisc_find(const struct upcred *u, const struct cfg_upstream *up, int64_t now_ms, struct up_as *as,
    struct gw_error *err)
{
	unsigned char key[CREDCACHE_KEY_BYTES];
	char sealed[CREDCACHE_VALUE_MAX], plain[5 * UPCRED_URL_MAX + 8], ad[2 * CREDCACHE_KEY_BYTES + 1];
	enum cc_status st;
	struct gw_error why;

	secret_keyed_digest_parts(u->name_key, (struct secret_part[]){ { "discovery", 10 },
	    { up->url, strlen(up->url) } }, 2, key);
	upcred_seal_ad(key, ad);
	/* Claimed for as long as a discovery can take: six requests at most (the well-known
	 * metadata, the 401 asked for and the metadata it names, three RFC 8414 URLs). */
	st = credcache_get(u->cache, key, now_ms, u->cfg->auth_timeout_ms * 6 + 1000, sealed, sizeof(sealed));
	if (st == CC_HIT && secret_open(u->seal_key, sealed, ad, plain, sizeof(plain)) > 0 &&
	    kept_read(plain, as) == 0)
		return 0;
	if (discover_now(u, up, as, &why) < 0) {
		if (CC_CLAIMED(st))
			credcache_drop(u->cache, key);
		log_warn(NULL, "upstream %s: its authorization server: %s", up->s.name, why.detail);
		gw_error_set(err, GW_EAUTHSERVER, "upstream %s: its authorization server could not be discovered; "
		    "retry later (%s)", up->s.name, why.detail);
		return -1;
	}
	/* (endpoints too long to seal in an entry together are not kept: asked again) */
	snprintf(plain, sizeof(plain), "%s %s %s %s %s %d%d", as->issuer, as->token_endpoint,
	    as->authorization_endpoint[0] ? as->authorization_endpoint : "-",
	    as->revocation_endpoint[0] ? as->revocation_endpoint : "-",
	    as->registration_endpoint[0] ? as->registration_endpoint : "-", as->iss_supported, as->cimd_supported);
	if ((CC_CLAIMED(st) || st == CC_UNAVAILABLE || st == CC_HIT) &&
	    secret_seal(u->seal_key, plain, strlen(plain), ad, sealed, sizeof(sealed)) == 0)
		credcache_put(u->cache, key, now_ms, now_ms + UPCRED_DISCOVERY_MS, sealed);
	return 0;
}
