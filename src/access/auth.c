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
#include "dpop.h"
#include "jwt.h"
#include "log.h"
#include "secret.h"
#include "session.h"
#include "str.h"
#include "url.h"

#define AUTH_RETRY_AFTER	"5"	/* seconds, on authorization-server failures */
#define AUTH_WAIT_STEP_MS	5	/* polling a concurrent introspection of the same token */

/* One token under check (auth_authenticate): where, for which request and answer, the
 * token and its cache key, the caller it makes and, when it fails, why. */
struct check {
	const struct auth_env *env;
	const struct config *cfg;
	const struct request *req;
	struct response *resp;
	const char *tok;
	size_t len;
	unsigned char key[TC_KEY_BYTES];
	struct caller *caller;
	struct gw_error err;	/* GW_EBADTOKEN: refused; else answered */
	struct dpop_proof proof;	/* under DPoP: the proof checked */
};

static int dpop_proof(struct check *k);
static int bind_bearer(const struct check *k);
static int bind_dpop(const struct check *k);

/* The schemes of the Authorization header, one row each: its name, the proof a request
 * under it carries beside the token (checked before the token costs anything: 0, or -1
 * answered), and what an accepted token must be bound to under it (0, or -1 answered). */
static const struct scheme {
	const char *name;
	enum auth_scheme id;
	int (*proof)(struct check *k);		/* NULL: none */
	int (*bind)(const struct check *k);
} schemes[] = {
	{ "Bearer", AUTH_BEARER, NULL, bind_bearer },	/* RFC 6750 */
	{ "DPoP", AUTH_DPOP, dpop_proof, bind_dpop },	/* RFC 9449 */
};

static int
b64token_char(int c)
{
	return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
}

/* auth_parse_credentials, with the scheme's row: 0, or -1 with err (GW_EBADTOKEN, saying
 * what is wrong). */
static int
parse_credentials(const char *h, const struct scheme **sc, const char **tok, size_t *len, struct gw_error *err)
{
	const char *p = NULL, *t;
	size_t i, n;

	if (h == NULL)
		goto malformed;
	for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]) && p == NULL; i++) {
		n = strlen(schemes[i].name);
		if (strncasecmp(h, schemes[i].name, n) == 0 && h[n] == ' ') {
			*sc = &schemes[i];
			p = h + n + 1;
		}
	}
	if (p == NULL)
		goto malformed;
	for (; *p == ' '; p++)
		;
	for (t = p; b64token_char((unsigned char)*p); p++)
		;
	if (p == t)	/* empty, or padding alone ("Bearer ====") */
		goto malformed;
	while (*p == '=')
		p++;
	if (*p != '\0')	/* anything after the token (a second header: ", ") */
		goto malformed;
	if ((size_t)(p - t) > AUTH_TOKEN_MAX)
		return gw_error_set(err, GW_EBADTOKEN, "token too long"), -1;
	*tok = t;
	*len = (size_t)(p - t);
	return 0;
malformed:
	gw_error_set(err, GW_EBADTOKEN, "malformed Authorization header");
	return -1;
}

int
auth_parse_credentials(const char *h, int *scheme, const char **tok, size_t *len)
{
	const struct scheme *sc;
	struct gw_error err;
	int rc = parse_credentials(h, &sc, tok, len, &err);

	if (rc == 0)
		*scheme = sc->id;
	return rc;
}

int
auth_parse_bearer(const char *h, const char **tok, size_t *len)
{
	int scheme, rc = auth_parse_credentials(h, &scheme, tok, len);

	return rc == 0 && scheme != AUTH_BEARER ? -1 : rc;
}

/* The granted scopes (if any) followed by the required ones not among them: 0 or -1. */
static int
put_scopes(struct buf *b, const struct strlist *l, const char *granted)
{
	size_t i;
	int first = 1, rc = 0;

	if (granted && *granted) {
		rc |= buf_puts(b, granted);
		first = 0;
	}
	for (i = 0; i < l->n; i++) {
		if (granted && str_has_word(granted, l->v[i]))
			continue;
		rc |= buf_printf(b, "%s%s", first ? "" : " ", l->v[i]);
		first = 0;
	}
	return rc;
}

/* The 401 or 403 for err (its code; its detail, "" for none, the error_description),
 * with its WWW-Authenticate: the scheme the request used (DPoP, or any with dpop =
 * required) names resource_metadata, scope, the error and algs (RFC 9449 §7.1); Bearer
 * otherwise, then a DPoP challenge too when dpop_too (a bound token sent as bearer). A
 * challenge longer than its buffer (scopes without end) names the metadata alone, where
 * the rest can be read. */
static void
challenge_as(const struct config *cfg, struct response *resp, const struct gw_error *err, const char *granted,
    int scheme, int dpop_too)
{
	enum gw_err e = err->code;
	const char *description = err->detail[0] ? err->detail : NULL;
	int dpop = scheme == AUTH_DPOP || cfg->dpop == DPOP_REQUIRED, rc;
	char algs[128];
	struct buf ch;

	buf_init(&ch, 4096);
	dpop_algs(cfg, algs, sizeof(algs));
	rc = buf_printf(&ch, "%s resource_metadata=\"%s\"", dpop ? "DPoP" : "Bearer", cfg->prm_url);
	if (cfg->required_scopes.n || (granted && *granted)) {
		rc |= buf_puts(&ch, ", scope=\"");
		rc |= put_scopes(&ch, &cfg->required_scopes, e == GW_ESCOPE ? granted : NULL);
		rc |= buf_putc(&ch, '"');
	}
	if (e == GW_EBADTOKEN || e == GW_ESCOPE || e == GW_EDPOP) {
		/* No inner quotes and no name= text: the SDK's challenge parser is naive. */
		rc |= buf_printf(&ch, ", error=\"%s\"", err_info(e)->error);
		if (description) {
			rc |= buf_puts(&ch, ", error_description=\"");
			for (; *description; description++)
				rc |= buf_putc(&ch, *description == '"' || *description == '=' ? '\'' : *description);
			rc |= buf_putc(&ch, '"');
		}
	}
	if (dpop)
		rc |= buf_printf(&ch, ", algs=\"%s\"", algs);
	else if (dpop_too)
		rc |= buf_printf(&ch, ", DPoP algs=\"%s\"", algs);
	response_set_error(resp, e, description);
	if (rc < 0)
		response_set_header(resp, "WWW-Authenticate", "%s resource_metadata=\"%s\"",
		    dpop ? "DPoP" : "Bearer", cfg->prm_url);
	else
		response_set_header(resp, "WWW-Authenticate", "%s", buf_str(&ch));
	buf_free(&ch);
}

/* The challenge for e and description (NULL: none), under scheme; granted as above. */
static void
challenge_of(const struct config *cfg, struct response *resp, enum gw_err e, const char *description,
    const char *granted, int scheme)
{
	struct gw_error err = { e, 0, "" };

	if (description)
		snprintf(err.detail, sizeof(err.detail), "%s", description);
	challenge_as(cfg, resp, &err, granted, scheme, 0);
}

static void
challenge(const struct config *cfg, struct response *resp, enum gw_err e,
    const char *description, const char *granted)
{
	challenge_of(cfg, resp, e, description, granted, AUTH_BEARER);
}

void
auth_challenge(const struct config *cfg, struct response *resp, enum gw_err e,
    const char *description)
{
	challenge(cfg, resp, e, description, NULL);
}

void
auth_scope_challenge(const struct config *cfg, const struct request *req, struct response *resp,
    const char *scopes)
{
	const char *tok;
	size_t len;
	int scheme = AUTH_BEARER;

	if (req == NULL || auth_parse_credentials(req->authorization, &scheme, &tok, &len) < 0)
		scheme = AUTH_BEARER;
	challenge_of(cfg, resp, GW_ESCOPE, "this tool needs more scopes", scopes, scheme);
}

int
auth_claims_read(const struct config *cfg, json_t *ir, struct claims *c, struct gw_error *err)
{
	const struct claims_names names = { cfg->scope_claim, cfg->groups_claim, cfg->tenant_claim };

	return claims_read(ir, &names, c, err);
}

int
auth_check_claims(const struct config *cfg, json_t *ir, int64_t now_s, struct claims *c,
    struct gw_error *err)
{
	json_t *v;
	const char *s;
	int64_t exp;

	memset(c, 0, sizeof(*c));
	if (!json_is_true(json_object_get(ir, "active")))
		return gw_error_set(err, GW_EBADTOKEN, "token is not active"), -1;
	s = json_string_value(json_object_get(ir, "token_type"));
	if (s && (strcasecmp(s, "refresh_token") == 0 || strcasecmp(s, "urn:ietf:params:oauth:token-type:refresh_token") == 0))
		return gw_error_set(err, GW_EBADTOKEN, "a refresh token is not an access token"), -1;
	v = json_object_get(ir, "exp");
	if (v && !json_is_integer(v))
		return gw_error_set(err, GW_EBADTOKEN, "token exp is not a number"), -1;
	exp = v ? (int64_t)json_integer_value(v) : now_s + cfg->cache_ttl;
	if (exp <= now_s)
		return gw_error_set(err, GW_EBADTOKEN, "token expired"), -1;
	v = json_object_get(ir, "nbf");
	if (json_is_integer(v) && json_integer_value(v) > now_s)
		return gw_error_set(err, GW_EBADTOKEN, "token not yet valid"), -1;
	s = json_string_value(json_object_get(ir, "iss"));
	if (json_object_get(ir, "iss") && (s == NULL || !url_same(s, cfg->issuer)))
		return gw_error_set(err, GW_EBADTOKEN, "token issued by another issuer"), -1;
	if (!claims_audience(json_object_get(ir, "aud"), cfg->resource, cfg->audiences.v, cfg->audiences.n))
		return gw_error_set(err, GW_EBADTOKEN, "token not issued for this resource"), -1;
	if (auth_claims_read(cfg, ir, c, err) < 0)
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
#define SHARED_AHEAD_MS		60000	/* an entry made further ahead of this clock is not believed */
#define SHARED_SEALED_MAX	(SHARED_PLAIN_MAX * 4 / 3 + 128)

/* What binds a sealed entry to its name: an entry copied under another token's name
 * does not open. */
static void
shared_ad(const unsigned char *key, char ad[64])
{
	size_t i;

	memcpy(ad, "mcpgate claims v3 ", 18);	/* v3: with its own end */
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

/* The claims another host accepted the token (key) with: 1 with c and *until_ms, how
 * long they may be kept here; 0 when there are none that can be used (absent, forged,
 * altered, expired, Redis not answering). An entry ends when its sealed end says, at
 * the latest cache-ttl (this host's) after the token was verified, whatever Redis does
 * with the key (PERSIST, a longer TTL, a restored dump): only Redis's clock kept its
 * expiry, and anyone who may write to Redis may change that. */
static int
shared_lookup(const struct auth_env *env, const struct config *cfg, const unsigned char *key,
    int64_t now_ms, struct claims *c, int64_t *until_ms)
{
	char sealed[SHARED_SEALED_MAX], plain[SHARED_PLAIN_MAX], ad[64];
	json_t *j = NULL;
	json_int_t exp, at, until;
	int rc = 0, machine;

	if (rstore_get(env->rs, cfg, &(struct rs_key){ RS_TOKEN, key }, sealed, sizeof(sealed), clock_mono_us() / 1000) != 1)
		return 0;
	shared_ad(key, ad);
	if (secret_open(cfg->shared_key, sealed, ad, plain, sizeof(plain)) < 0 ||
	    (j = json_loads(plain, 0, NULL)) == NULL)
		goto out;
	memset(c, 0, sizeof(*c));
	if (json_unpack(j, "{s:I, s:b, s:I, s:I}", "exp", &exp, "machine", &machine, "at", &at, "until", &until) < 0 ||
	    exp <= now_ms / 1000 || until <= now_ms || at > now_ms + SHARED_AHEAD_MS ||
	    at <= now_ms - cfg->cache_ttl * 1000 ||	/* (compared so: no sum overflows) */
	    claims_set(c->subject, sizeof(c->subject), member(j, "sub")) < 0 ||
	    claims_set(c->client_id, sizeof(c->client_id), member(j, "client_id")) < 0 ||
	    claims_set(c->scope, sizeof(c->scope), member(j, "scope")) < 0 ||
	    claims_set(c->groups, sizeof(c->groups), member(j, "groups")) < 0 ||
	    claims_set(c->tenant, sizeof(c->tenant), member(j, "tenant")) < 0 ||
	    claims_set(c->jkt, sizeof(c->jkt), member(j, "jkt")) < 0)
		goto out;
	c->exp = exp;
	c->machine = machine;
	/* Kept here no longer than the entry lives, nor than this host's cache-ttl allows
	 * from when the token was verified, nor past exp. */
	*until_ms = entry_until(cfg, c, now_ms);
	if (until < *until_ms)
		*until_ms = until;
	if (at + cfg->cache_ttl * 1000 < *until_ms)
		*until_ms = at + cfg->cache_ttl * 1000;
	rc = *until_ms > now_ms;
out:
	json_decref(j);
	secret_wipe(plain, sizeof(plain));
	if (rc == 0)
		memset(c, 0, sizeof(*c));
	return rc;
}

/* Shares the claims of a token just accepted (verified at now_ms) until until_ms, the
 * two sealed with them (best effort: a host that cannot share them leaves the other
 * hosts to introspect, nothing more). */
static void
shared_store(const struct auth_env *env, const struct config *cfg, const unsigned char *key,
    const struct claims *c, int64_t now_ms, int64_t until_ms)
{
	char sealed[SHARED_SEALED_MAX], ad[64], *plain;
	json_t *j;

	j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:b, s:I, s:I}", "sub", c->subject, "client_id",
	    c->client_id, "scope", c->scope, "groups", c->groups, "tenant", c->tenant, "jkt", c->jkt, "exp",
	    (json_int_t)c->exp, "machine", c->machine, "at", (json_int_t)now_ms, "until", (json_int_t)until_ms);
	plain = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (plain == NULL)
		return;
	shared_ad(key, ad);
	if (until_ms > now_ms && secret_seal(cfg->shared_key, plain, strlen(plain), ad, sealed, sizeof(sealed)) == 0)
		(void)rstore_put(env->rs, cfg, &(struct rs_key){ RS_TOKEN, key }, sealed, until_ms - now_ms, clock_mono_us() / 1000);
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


/* Introspects the token: 0 accepted with its claims, or -1 with k->err: GW_EBADTOKEN
 * refused, GW_EAUTHSERVER answered (the authorization server failed). */
static int
introspect_check(struct check *k)
{
	const struct auth_env *env = k->env;
	const struct config *cfg = k->cfg;
	int64_t now_ms = clock_wall_ms(), t0 = clock_mono_us();
	json_t *ir = introspect_token(env->ix, env->asmeta, cfg, &(struct secret_part){ k->tok, k->len }, now_ms,
	    &k->err);
	int rc = ir ? 0 : -1;

	if (cfg->metrics_on)
		metrics_introspection(env->metrics, clock_mono_us() - t0, rc == 0);
	/* What health says of the authorization server: the introspection answered or not. */
	metrics_observe(env->metrics, METRICS_DEP_INTROSPECTION, rc == 0, now_ms / 1000,
	    rc == 0 ? NULL : "the introspection failed (unreachable, slow, or a broken answer)");
	if (rc < 0) {
		fail_upstream(k->req, k->resp, &k->err);
		k->err.code = GW_EAUTHSERVER;
		return -1;
	}
	rc = auth_check_claims(cfg, ir, clock_wall_ms() / 1000, &k->caller->claims, &k->err);
	json_decref(ir);
	return rc;
}

/* Verifies the token on a cache miss — locally when it is a JWT to verify here (then
 * introspected too with introspect-jwt), else by introspection — and records the outcome:
 * 0 accepted, or -1 with k->err (GW_EBADTOKEN refused; else answered). */
static int
verify(struct check *k, int cached)
{
	const struct auth_env *env = k->env;
	const struct config *cfg = k->cfg;
	struct claims *c = &k->caller->claims;
	const struct jwks_env jenv = { env->ix, env->asmeta, env->jwks_region, env->metrics };
	struct jwks_view scratch = { 0 };
	int64_t now_ms, until;
	int rc = 0, local = jwt_local(cfg, k->tok, k->len);

	if (local) {
		const struct jwt_token t = { k->tok, k->len, k->req->id, clock_wall_ms() };

		rc = jwt_verify(env->jwks ? env->jwks : &scratch, &jenv, cfg, &t, c, &k->err);
		jwks_view_free(&scratch);
		if (cfg->metrics_on)
			metrics_jwt(env->metrics, rc == 0 ? METRICS_JWT_ACCEPTED : k->err.code == GW_EBADTOKEN ?
			    METRICS_JWT_REFUSED : METRICS_JWT_ERROR);
		if (rc < 0 && k->err.code != GW_EBADTOKEN) {
			fail_upstream(k->req, k->resp, &k->err);
			k->err.code = GW_EAUTHSERVER;
		}
	}
	if (rc == 0 && (!local || cfg->introspect_jwt))
		rc = introspect_check(k);
	if (rc < 0 && k->err.code != GW_EBADTOKEN) {
		if (cached)
			token_cache_release(env->tokens, k->key);
		return -1;
	}
	now_ms = clock_wall_ms();
	if (rc < 0) {
		/* Logged where it is decided; later hits of the negative entry are not. */
		log_info(k->req->id, "auth: token %.8s rejected: %s", k->caller->token_id, k->err.detail);
		if (cached)
			token_cache_fill_negative(env->tokens, k->key, now_ms, k->err.detail,
			    now_ms + cfg->negative_ttl * 1000);
		return -1;
	}
	if (cached) {
		until = entry_until(cfg, c, now_ms);
		token_cache_fill(env->tokens, k->key, now_ms, c, until);
		if (env->rs)
			shared_store(env, cfg, k->key, c, now_ms, until);
	}
	return 0;
}

void
auth_cache_key(const unsigned char *digest_key, const struct config *cfg, const char *tok, size_t len,
    unsigned char key[TC_KEY_BYTES])
{
	const struct secret_part parts[2] = { { cfg->accept, sizeof(cfg->accept) }, { tok, len } };

	secret_keyed_digest_parts(digest_key, parts, 2, key);
}

/* The caller's token's cache key, and the parts of it the caller carries. */
static void
caller_key(const struct auth_env *env, const struct config *cfg, const char *tok, size_t len,
    struct caller *caller, unsigned char key[TC_KEY_BYTES])
{
	auth_cache_key(env->digest_key, cfg, tok, len, key);
	secret_hex(key, 4, caller->token_id);
	memcpy(caller->token_key, key + TC_KEY_BYTES - sizeof(caller->token_key), sizeof(caller->token_key));
}

/* A caller accepted: what its sessions and cursors are bound to, made once: this
 * gateway (its resource and issuer), then who the caller is to it. */
static void
accepted(const struct config *cfg, struct caller *caller)
{
	session_who(cfg->bind, caller->claims.subject, caller->claims.client_id, caller->claims.tenant, caller->who);
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

void *
auth_thread_new(void)
{
	struct auth_thread *th = calloc(1, sizeof(*th));

	if (th && ((th->ix = introspect_new()) == NULL || (th->proof_keys = jws_keycache_new()) == NULL)) {
		auth_thread_free(th);
		th = NULL;
	}
	return th;
}

void
auth_thread_free(void *p)
{
	struct auth_thread *th = p;

	if (th == NULL)
		return;
	introspect_free(th->ix);
	jwks_view_free(&th->jwks);
	jws_keycache_free(th->proof_keys);
	free(th);
}

int
auth_cached(const struct req_ctx *rc, struct caller *caller)
{
	const struct auth_env *env = rc->slot[REQ_SLOT_AUTH];
	const struct config *cfg = rc->cfg;
	const struct request *req = rc->req;
	const struct tc_life life = { cfg->cache_ttl * 1000, cfg->negative_ttl * 1000 };
	unsigned char key[TC_KEY_BYTES];
	const char *tok;
	size_t len;

	memset(caller, 0, sizeof(*caller));
	/* A DPoP request has its proof to check (and record): not decided here. */
	if (env->tokens == NULL || req->authorization == NULL || cfg->dpop == DPOP_REQUIRED ||
	    auth_parse_bearer(req->authorization, &tok, &len) < 0)
		return 0;
	caller_key(env, cfg, tok, len, caller, key);
	if (token_cache_peek(env->tokens, key, clock_wall_ms(), &life, &caller->claims) != TC_HIT ||
	    !has_required_scopes(cfg, &caller->claims) || caller->claims.jkt[0]) {
		memset(caller, 0, sizeof(*caller));
		return 0;	/* auth_authenticate counts the miss, or the hit of a refused token */
	}
	if (cfg->metrics_on)
		metrics_token_cache(env->metrics, 1);
	accepted(cfg, caller);
	return 1;
}

/* The token's claims: from the cache, or verified (and cached). 0 accepted, or -1 with
 * k->err: GW_EBADTOKEN refused, else answered. */
static int
token_claims(struct check *k)
{
	const struct auth_env *env = k->env;
	const struct config *cfg = k->cfg;
	const struct tc_life life = { cfg->cache_ttl * 1000, cfg->negative_ttl * 1000 };
	const struct tc_lookup how = { &life, cfg->auth_timeout_ms + 500 };
	struct claims *c = &k->caller->claims;
	int64_t deadline, until, now_ms = clock_wall_ms();
	int rc = 0, decided = 0, cached = env->tokens != NULL, counted = !cfg->metrics_on;

	deadline = now_ms + cfg->auth_timeout_ms + 1000;
	while (cached && !decided) {
		enum tc_status st = token_cache_lookup(env->tokens, k->key, now_ms, &how, c, k->err.detail);

		if (!counted && st != TC_BUSY) {	/* one count a check: its first answer */
			metrics_token_cache(env->metrics, st == TC_HIT || st == TC_NEGATIVE);
			counted = 1;
		}
		switch (st) {
		case TC_HIT:
			decided = 1;
			break;
		case TC_NEGATIVE:
			k->err.code = GW_EBADTOKEN;
			rc = -1, decided = 1;
			break;
		case TC_MISS:	/* another host may have accepted it already */
			decided = 1;
			if (env->rs && shared_lookup(env, cfg, k->key, now_ms, c, &until) == 1) {
				token_cache_fill(env->tokens, k->key, now_ms, c, until);
				break;
			}
			rc = verify(k, 1);
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
	if (!decided) {
		if (!counted)
			metrics_token_cache(env->metrics, 0);
		rc = verify(k, 0);
	}
	return rc;
}

/* A bearer token accepted: one bound to a DPoP key needs its proof, and with dpop =
 * required every token does (RFC 9449 §7). */
static int
bind_bearer(const struct check *k)
{
	struct gw_error err;

	if (k->caller->claims.jkt[0]) {
		gw_error_set(&err, GW_EBADTOKEN, "a DPoP-bound token needs its DPoP proof (Authorization: DPoP)");
		challenge_as(k->cfg, k->resp, &err, NULL, AUTH_BEARER, 1);
		return -1;
	}
	if (k->cfg->dpop == DPOP_REQUIRED) {
		gw_error_set(&err, GW_EBADTOKEN, "only DPoP-bound tokens are accepted");
		challenge_as(k->cfg, k->resp, &err, NULL, AUTH_BEARER, 1);
		return -1;
	}
	return 0;
}

/* The proof before the token: a request with a bad one costs the authorization server
 * nothing. */
static int
dpop_proof(struct check *k)
{
	const struct request *req = k->req;
	const struct dpop_req r = { req->dpop, req->method_name ? req->method_name : "", k->tok, k->len,
	    clock_wall_ms() };

	if (dpop_check(k->cfg, k->env->digest_key, k->env->proof_keys, &r, &k->proof, &k->err) < 0) {
		log_info(req->id, "auth: DPoP proof refused: %s", k->err.detail);
		challenge_as(k->cfg, k->resp, &k->err, NULL, AUTH_DPOP, 0);
		return -1;
	}
	return 0;
}

/* A DPoP token accepted: bound to the key that signed its proof, and the proof new. */
static int
bind_dpop(const struct check *k)
{
	const struct config *cfg = k->cfg;
	const struct claims *c = &k->caller->claims;
	struct response *resp = k->resp;
	struct gw_error err;

	if (c->jkt[0] == '\0') {
		gw_error_set(&err, GW_EBADTOKEN, "the token is not DPoP-bound");
		challenge_as(cfg, resp, &err, NULL, AUTH_DPOP, 0);
		return -1;
	}
	if (strcmp(c->jkt, k->proof.jkt) != 0) {
		gw_error_set(&err, GW_EBADTOKEN, "the DPoP proof is signed by another key than the token's");
		challenge_as(cfg, resp, &err, NULL, AUTH_DPOP, 0);
		return -1;
	}
	/* Last: only a proof of the token's own key is remembered. */
	if (dpop_once(k->env->replay, k->env->dpop_rs, cfg, &k->proof, clock_wall_ms(), &err) == 0)
		return 0;
	if (err.code == GW_EDPOP) {
		challenge_as(cfg, resp, &err, NULL, AUTH_DPOP, 0);
		return -1;
	}
	log_err(k->req->id, "dpop: %s", err.detail);
	response_set_error(resp, GW_EREPLAY, NULL);
	response_set_header(resp, "Retry-After", "1");
	return -1;
}

int
auth_verify_token(const struct req_ctx *rc, const char *tok, size_t len, struct caller *caller, struct gw_error *err)
{
	const struct auth_env *env = rc->slot[REQ_SLOT_AUTH];
	struct check k = { .env = env, .cfg = rc->cfg, .req = rc->req, .resp = rc->resp, .tok = tok, .len = len,
	    .caller = caller };

	memset(caller, 0, sizeof(*caller));
	if (len == 0 || len > AUTH_TOKEN_MAX) {
		gw_error_set(err, GW_EBADTOKEN, "no usable token");
		return -1;
	}
	caller_key(env, rc->cfg, tok, len, caller, k.key);
	if (token_claims(&k) < 0) {
		*err = k.err;
		if (err->code != GW_EBADTOKEN)
			gw_error_set(err, GW_EAUTHSERVER, "the token could not be verified now");
		return -1;
	}
	if (caller->claims.jkt[0]) {
		gw_error_set(err, GW_EBADTOKEN, "a DPoP-bound token");
		return -1;
	}
	accepted(rc->cfg, caller);
	return 0;
}

int
auth_authenticate(const struct req_ctx *rc, struct caller *caller)
{
	const struct auth_env *env = rc->slot[REQ_SLOT_AUTH];
	const struct config *cfg = rc->cfg;
	const struct request *req = rc->req;
	struct response *resp = rc->resp;
	struct check k = { .env = env, .cfg = cfg, .req = req, .resp = resp, .caller = caller };
	const struct scheme *sc;

	memset(caller, 0, sizeof(*caller));
	if (req->authorization == NULL || *req->authorization == '\0') {
		challenge(cfg, resp, GW_ENOTOKEN, NULL, NULL);
		return -1;
	}
	if (parse_credentials(req->authorization, &sc, &k.tok, &k.len, &k.err) < 0) {
		challenge_as(cfg, resp, &k.err, NULL, AUTH_BEARER, 0);
		return -1;
	}
	if (sc->proof && sc->proof(&k) < 0)
		return -1;
	caller_key(env, cfg, k.tok, k.len, caller, k.key);
	if (token_claims(&k) < 0) {
		if (k.err.code == GW_EBADTOKEN)
			challenge_as(cfg, resp, &k.err, NULL, sc->id, 0);
		return -1;
	}
	if (sc->bind(&k) < 0)
		return -1;
	if (!has_required_scopes(cfg, &caller->claims)) {
		challenge_of(cfg, resp, GW_ESCOPE, "the token lacks a required scope", caller->claims.scope, sc->id);
		return -1;
	}
	accepted(cfg, caller);
	return 0;
}
