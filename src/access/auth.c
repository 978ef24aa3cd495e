/* auth — bearer parsing, cached introspection, acceptance rules, challenges. */
#include "autoconf.h"

#include <ctype.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "auth.h"
#include "buf.h"
#include "clock.h"
#include "log.h"
#include "secret.h"
#include "str.h"
#include "url.h"

#define AUTH_RETRY_AFTER	"5"	/* seconds, on authorization-server failures */
#define AUTH_WAIT_STEP_MS	5	/* polling a concurrent introspection of the same token */

static int
b64token_char(int c)
{
	return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
}

int
auth_parse_bearer(const char *h, const char **tok, size_t *len)
{
	const char *p, *t;

	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
		return -1;
	for (p = h + 7; *p == ' '; p++)
		;
	for (t = p; b64token_char((unsigned char)*p); p++)
		;
	if (p == t)	/* empty, or padding alone ("Bearer ====") */
		return -1;
	while (*p == '=')
		p++;
	if (*p != '\0')	/* anything after the token (a second header: ", ") */
		return -1;
	if ((size_t)(p - t) > AUTH_TOKEN_MAX)
		return -2;
	*tok = t;
	*len = (size_t)(p - t);
	return 0;
}

/* The granted scopes (if any) followed by the required ones not among them. */
static void
put_scopes(struct buf *b, const struct strlist *l, const char *granted)
{
	size_t i;
	int first = 1;

	if (granted && *granted) {
		buf_puts(b, granted);
		first = 0;
	}
	for (i = 0; i < l->n; i++) {
		if (granted && str_has_word(granted, l->v[i]))
			continue;
		buf_printf(b, "%s%s", first ? "" : " ", l->v[i]);
		first = 0;
	}
}

static void
challenge(const struct config *cfg, struct response *resp, enum gw_err e,
    const char *description, const char *granted)
{
	struct buf ch;

	buf_init(&ch, 4096);
	buf_printf(&ch, "Bearer resource_metadata=\"%s\"", cfg->prm_url);
	if (cfg->required_scopes.n || (granted && *granted)) {
		buf_puts(&ch, ", scope=\"");
		put_scopes(&ch, &cfg->required_scopes, e == GW_ESCOPE ? granted : NULL);
		buf_putc(&ch, '"');
	}
	if (e == GW_EBADTOKEN || e == GW_ESCOPE) {
		/* No inner quotes and no name= text: the SDK's challenge parser is naive. */
		buf_printf(&ch, ", error=\"%s\"", e == GW_ESCOPE ? "insufficient_scope" : "invalid_token");
		if (description) {
			buf_puts(&ch, ", error_description=\"");
			for (; *description; description++)
				buf_putc(&ch, *description == '"' || *description == '=' ? '\'' : *description);
			buf_putc(&ch, '"');
		}
	}
	response_set_error(resp, e, description);
	response_set_header(resp, "WWW-Authenticate", "%s", buf_str(&ch));
	buf_free(&ch);
}

void
auth_challenge(const struct config *cfg, struct response *resp, enum gw_err e,
    const char *description)
{
	challenge(cfg, resp, e, description, NULL);
}

void
auth_scope_challenge(const struct config *cfg, struct response *resp, const char *scopes)
{
	challenge(cfg, resp, GW_ESCOPE, "this tool needs more scopes", scopes);
}

static int
audience_ok(json_t *aud, const char *resource)
{
	size_t i;
	json_t *v;

	if (json_is_string(aud))
		return url_same(json_string_value(aud), resource);
	json_array_foreach(aud, i, v)
		if (json_is_string(v) && url_same(json_string_value(v), resource))
			return 1;
	return 0;
}

/* Copies a claim into a fixed field; -1 when it does not fit. */
static int
put_field(char *dst, size_t n, const char *src)
{
	size_t len = strlen(src);

	if (len >= n)
		return -1;
	memcpy(dst, src, len + 1);
	return 0;
}

/* groups: an array of strings or one space-separated string, to a space-separated field. */
static int
put_groups(char *dst, size_t n, json_t *g)
{
	struct buf b;
	size_t i;
	json_t *v;
	int rc = 0;

	dst[0] = '\0';
	if (g == NULL || json_is_null(g))
		return 0;
	if (json_is_string(g))
		return put_field(dst, n, json_string_value(g));
	if (!json_is_array(g))
		return -1;
	buf_init(&b, n - 1);
	json_array_foreach(g, i, v) {
		const char *s = json_string_value(v);

		if (s == NULL || !*s || strpbrk(s, " \t"))
			continue;	/* not a usable group name */
		if ((b.len && buf_putc(&b, ' ') < 0) || buf_puts(&b, s) < 0) {
			rc = -1;
			break;
		}
	}
	if (rc == 0)
		memcpy(dst, buf_str(&b), b.len + 1);
	buf_free(&b);
	return rc;
}

int
auth_claims_read(const struct config *cfg, json_t *ir, struct claims *c, const char **reason)
{
	json_t *v;
	const char *s;

	memset(c, 0, sizeof(*c));
	s = json_string_value(json_object_get(ir, "client_id"));
	if (s && put_field(c->client_id, sizeof(c->client_id), s) < 0)
		return *reason = "token claims too large", -1;
	s = json_string_value(json_object_get(ir, "sub"));
	c->machine = s == NULL;
	if (put_field(c->subject, sizeof(c->subject), s ? s : c->client_id) < 0)
		return *reason = "token claims too large", -1;
	s = json_string_value(json_object_get(ir, "scope"));
	if (s && put_field(c->scope, sizeof(c->scope), s) < 0)
		return *reason = "token claims too large", -1;
	if (put_groups(c->groups, sizeof(c->groups), json_object_get(ir, cfg->groups_claim)) < 0)
		return *reason = "token groups claim unusable", -1;
	v = json_object_get(ir, cfg->tenant_claim);
	if (v && !json_is_null(v) && (!json_is_string(v) || put_field(c->tenant, sizeof(c->tenant), json_string_value(v)) < 0))
		return *reason = "token tenant claim unusable", -1;
	return 0;
}

int
auth_check_claims(const struct config *cfg, json_t *ir, int64_t now_s, struct claims *c,
    const char **reason)
{
	json_t *v;
	const char *s;
	int64_t exp;

	memset(c, 0, sizeof(*c));
	if (!json_is_true(json_object_get(ir, "active")))
		return *reason = "token is not active", -1;
	s = json_string_value(json_object_get(ir, "token_type"));
	if (s && (strcasecmp(s, "refresh_token") == 0 || strcasecmp(s, "urn:ietf:params:oauth:token-type:refresh_token") == 0))
		return *reason = "a refresh token is not an access token", -1;
	v = json_object_get(ir, "exp");
	if (v && !json_is_integer(v))
		return *reason = "token exp is not a number", -1;
	exp = v ? (int64_t)json_integer_value(v) : now_s + cfg->cache_ttl;
	if (exp <= now_s)
		return *reason = "token expired", -1;
	v = json_object_get(ir, "nbf");
	if (json_is_integer(v) && json_integer_value(v) > now_s)
		return *reason = "token not yet valid", -1;
	s = json_string_value(json_object_get(ir, "iss"));
	if (json_object_get(ir, "iss") && (s == NULL || !url_same(s, cfg->issuer)))
		return *reason = "token issued by another issuer", -1;
	if (!audience_ok(json_object_get(ir, "aud"), cfg->resource))
		return *reason = "token not issued for this resource", -1;
	if (auth_claims_read(cfg, ir, c, reason) < 0)
		return -1;
	c->exp = exp;
	return 0;
}

/* How long an accepted token's entry lives: min(cache-ttl, exp - now), in ms. */
static int64_t
entry_until(const struct config *cfg, const struct claims *c, int64_t now_ms)
{
	int64_t until = now_ms + cfg->cache_ttl * 1000;

	if (c->exp < INT64_MAX / 1000 && c->exp * 1000 < until)	/* exp may be huge */
		until = c->exp * 1000;
	return until;
}

/* --- [auth] shared-cache: accepted tokens' claims in the Redis store ----------------- */

#define SHARED_PLAIN_MAX	(sizeof(struct claims) + 256)
#define SHARED_SEALED_MAX	(SHARED_PLAIN_MAX * 4 / 3 + 128)

/* What binds a sealed entry to its name: an entry copied under another token's name
 * does not open. */
static void
shared_ad(const unsigned char *key, char ad[64])
{
	size_t i;

	memcpy(ad, "mcpgate claims v1 ", 18);
	for (i = 0; i < RSTORE_KEY_BYTES; i++)
		snprintf(ad + 18 + 2 * i, 3, "%02x", key[i]);
}

/* A claim's string member, "" when absent. */
static const char *
member(json_t *j, const char *name)
{
	const char *v = json_string_value(json_object_get(j, name));

	return v ? v : "";
}

/* The claims another host accepted the token (key) with: 1 with c, 0 when there are
 * none that can be used (absent, forged, altered, expired, Redis not answering). */
static int
shared_lookup(const struct auth_env *env, const struct config *cfg, const unsigned char *key,
    int64_t now_ms, struct claims *c)
{
	char sealed[SHARED_SEALED_MAX], plain[SHARED_PLAIN_MAX], ad[64];
	json_t *j = NULL;
	json_int_t exp;
	int rc = 0, machine;

	if (rstore_get(env->rs, cfg, RS_TOKEN, key, sealed, sizeof(sealed), clock_mono_us() / 1000) != 1)
		return 0;
	shared_ad(key, ad);
	if (secret_open(cfg->shared_key, sealed, ad, plain, sizeof(plain)) < 0 ||
	    (j = json_loads(plain, 0, NULL)) == NULL)
		goto out;
	memset(c, 0, sizeof(*c));
	if (json_unpack(j, "{s:I, s:b}", "exp", &exp, "machine", &machine) < 0 || exp <= now_ms / 1000 ||
	    put_field(c->subject, sizeof(c->subject), member(j, "sub")) < 0 ||
	    put_field(c->client_id, sizeof(c->client_id), member(j, "client_id")) < 0 ||
	    put_field(c->scope, sizeof(c->scope), member(j, "scope")) < 0 ||
	    put_field(c->groups, sizeof(c->groups), member(j, "groups")) < 0 ||
	    put_field(c->tenant, sizeof(c->tenant), member(j, "tenant")) < 0)
		goto out;
	c->exp = exp;
	c->machine = machine;
	rc = 1;
out:
	json_decref(j);
	secret_wipe(plain, sizeof(plain));
	if (rc == 0)
		memset(c, 0, sizeof(*c));
	return rc;
}

/* Shares the claims of a token just accepted until until_ms (best effort: a host that
 * cannot share them leaves the other hosts to introspect, nothing more). */
static void
shared_store(const struct auth_env *env, const struct config *cfg, const unsigned char *key,
    const struct claims *c, int64_t now_ms, int64_t until_ms)
{
	char sealed[SHARED_SEALED_MAX], ad[64], *plain;
	json_t *j;

	j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:b}", "sub", c->subject, "client_id", c->client_id,
	    "scope", c->scope, "groups", c->groups, "tenant", c->tenant, "exp", (json_int_t)c->exp,
	    "machine", c->machine);
	plain = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (plain == NULL)
		return;
	shared_ad(key, ad);
	if (until_ms > now_ms && secret_seal(cfg->shared_key, plain, strlen(plain), ad, sealed, sizeof(sealed)) == 0)
		(void)rstore_put(env->rs, cfg, RS_TOKEN, key, sealed, until_ms - now_ms, clock_mono_us() / 1000);
	secret_wipe(plain, strlen(plain));
	free(plain);
}

static void
fail_upstream(const struct request *req, struct response *resp, const struct gw_error *err)
{
	log_err(req->id, "auth: authorization server failed: %s", err->detail);
	response_set_error(resp, GW_EAUTHSERVER, NULL);
	response_set_header(resp, "Retry-After", AUTH_RETRY_AFTER);
}

/* Introspects on a cache miss and records the outcome. */
static int
verify(const struct auth_env *env, const struct config *cfg, const struct request *req,
    const char *tok, size_t len, const unsigned char *key, const char *key_hex, int cached,
    struct claims *c, const char **reason, struct response *resp)
{
	struct gw_error err = { GW_OK, 0, "" };
	int64_t now_ms = clock_wall_ms(), until, t0 = clock_mono_us();
	json_t *ir = NULL;
	int rc = introspect_token(env->ix, env->asmeta, cfg, tok, len, now_ms, &ir, &err);

	if (cfg->metrics_on)
		metrics_introspection(env->metrics, clock_mono_us() - t0, rc == 0);
	/* What health says of the authorization server: the introspection answered or not. */
	metrics_observe(env->metrics, METRICS_DEP_INTROSPECTION, rc == 0, now_ms / 1000,
	    rc == 0 ? NULL : "the introspection failed (unreachable, slow, or a broken answer)");
	if (rc < 0) {
		if (cached)
			token_cache_release(env->tokens, key);
		fail_upstream(req, resp, &err);
		return -1;
	}
	now_ms = clock_wall_ms();
	if (auth_check_claims(cfg, ir, now_ms / 1000, c, reason) < 0) {
		/* Logged where it is decided; later hits of the negative entry are not. */
		log_info(req->id, "auth: token %.8s rejected: %s", key_hex, *reason);
		json_decref(ir);
		if (cached)
			token_cache_fill_negative(env->tokens, key, now_ms, *reason,
			    now_ms + cfg->negative_ttl * 1000);
		return 1;
	}
	json_decref(ir);
	if (cached) {
		until = entry_until(cfg, c, now_ms);
		token_cache_fill(env->tokens, key, now_ms, c, until);
		if (env->rs)
			shared_store(env, cfg, key, c, now_ms, until);
	}
	return 0;
}

void
auth_cache_key(const unsigned char *digest_key, const struct config *cfg, const char *tok, size_t len,
    unsigned char key[TC_KEY_BYTES])
{
	const char *ctx[] = { cfg->resource, cfg->issuer, cfg->introspection_endpoint,
	    cfg->client_id, cfg->groups_claim, cfg->tenant_claim };
	struct secret_part parts[sizeof(ctx) / sizeof(ctx[0]) + 1];
	size_t i;

	for (i = 0; i < sizeof(ctx) / sizeof(ctx[0]); i++) {
		parts[i].p = ctx[i] ? ctx[i] : "";
		parts[i].n = strlen(parts[i].p) + 1;	/* with its NUL: fields cannot run together */
	}
	parts[i].p = tok;
	parts[i].n = len;
	secret_keyed_digest_parts(digest_key, parts, i + 1, key);
}

/* The caller's token's cache key, and the parts of it the caller carries. */
static void
caller_key(const struct auth_env *env, const struct config *cfg, const char *tok, size_t len,
    struct caller *caller, unsigned char key[TC_KEY_BYTES])
{
	size_t i;

	auth_cache_key(env->digest_key, cfg, tok, len, key);
	for (i = 0; i < 4; i++)
		snprintf(caller->token_id + 2 * i, 3, "%02x", key[i]);
	memcpy(caller->token_key, key + TC_KEY_BYTES - sizeof(caller->token_key), sizeof(caller->token_key));
}

static int
has_required_scopes(const struct config *cfg, const struct claims *c)
{
	size_t i;

	for (i = 0; i < cfg->required_scopes.n; i++)
		if (!str_has_word(c->scope, cfg->required_scopes.v[i]))
			return 0;
	return 1;
}

int
auth_cached(const struct auth_env *env, const struct config *cfg, const struct request *req,
    struct caller *caller)
{
	unsigned char key[TC_KEY_BYTES];
	const char *tok;
	size_t len;

	memset(caller, 0, sizeof(*caller));
	if (env->tokens == NULL || req->authorization == NULL ||
	    auth_parse_bearer(req->authorization, &tok, &len) < 0)
		return 0;
	caller_key(env, cfg, tok, len, caller, key);
	if (token_cache_peek(env->tokens, key, clock_wall_ms(), &caller->claims) != TC_HIT ||
	    !has_required_scopes(cfg, &caller->claims)) {
		memset(caller, 0, sizeof(*caller));
		return 0;	/* auth_authenticate counts the miss, or the hit of a refused token */
	}
	if (cfg->metrics_on)
		metrics_token_cache(env->metrics, 1);
	return 1;
}

int
auth_authenticate(const struct auth_env *env, const struct config *cfg,
    const struct request *req, struct caller *caller, struct response *resp)
{
	unsigned char key[TC_KEY_BYTES];
	char reason_buf[TC_REASON_MAX];
	const char *tok, *reason = NULL;
	struct claims *c = &caller->claims;
	int64_t deadline, now_ms;
	size_t len;
	int rc, cached = env->tokens != NULL, counted = !cfg->metrics_on;

	memset(caller, 0, sizeof(*caller));
	if (req->authorization == NULL || *req->authorization == '\0') {
		challenge(cfg, resp, GW_ENOTOKEN, NULL, NULL);
		return -1;
	}
	if ((rc = auth_parse_bearer(req->authorization, &tok, &len)) < 0) {
		challenge(cfg, resp, GW_EBADTOKEN, rc == -2 ? "token too long" : "malformed Authorization header", NULL);
		return -1;
	}
	caller_key(env, cfg, tok, len, caller, key);

	now_ms = clock_wall_ms();
	deadline = now_ms + cfg->auth_timeout_ms + 1000;
	rc = 2;	/* 0 accepted, 1 rejected, -1 answered */
	while (cached && rc == 2) {
		enum tc_status st = token_cache_lookup(env->tokens, key, now_ms, cfg->auth_timeout_ms + 500, c,
		    reason_buf, sizeof(reason_buf));

		if (!counted && st != TC_BUSY) {	/* one count a check: its first answer */
			metrics_token_cache(env->metrics, st == TC_HIT || st == TC_NEGATIVE);
			counted = 1;
		}
		switch (st) {
		case TC_HIT:
			rc = 0;
			break;
		case TC_NEGATIVE:
			reason = reason_buf;
			rc = 1;
			break;
		case TC_MISS:	/* another host may have accepted it already */
			if (env->rs && shared_lookup(env, cfg, key, now_ms, c) == 1) {
				token_cache_fill(env->tokens, key, now_ms, c, entry_until(cfg, c, now_ms));
				rc = 0;
				break;
			}
			rc = verify(env, cfg, req, tok, len, key, caller->token_id, 1, c, &reason, resp);
			break;
		case TC_UNAVAILABLE:	/* the shared cache cannot be used now: no caching */
			cached = 0;
			break;
		case TC_BUSY:
			if (now_ms > deadline) {	/* the other request overran: do it ourselves */
				cached = 0;
				break;
			}
			{
				struct timespec ts = { 0, AUTH_WAIT_STEP_MS * 1000000L };

				nanosleep(&ts, NULL);
			}
			now_ms = clock_wall_ms();
			break;
		}
	}
	if (rc == 2) {
		if (!counted)
			metrics_token_cache(env->metrics, 0);
		rc = verify(env, cfg, req, tok, len, key, caller->token_id, 0, c, &reason, resp);
	}
	if (rc < 0)
		return -1;
	if (rc == 1) {
		challenge(cfg, resp, GW_EBADTOKEN, reason, NULL);
		return -1;
	}
	if (!has_required_scopes(cfg, c)) {
		challenge(cfg, resp, GW_ESCOPE, "the token lacks a required scope", c->scope);
		return -1;
	}
	return 0;
}
