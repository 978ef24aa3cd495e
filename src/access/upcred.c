/* upcred — the tokens obtained for upstreams: RFC 8693 token exchange and
 * client_credentials, cached (upcred.h). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "asdisc.h"
#include "connected.h"
#include "clock.h"
#include "log.h"
#include "str.h"
#include "tokenep.h"
#include "upcred.h"

/* What is asked for an upstream: its token as its credentials say, or (its catalog,
 * catalog-credentials = client-credentials) the gateway's own for it. */
struct want {
	const struct cfg_upstream *up;
	int mode;	/* enum up_credentials */
};
#define WANT_AS_CALLER(w)	((w)->mode == UP_CRED_EXCHANGE || (w)->mode == UP_CRED_ID_JAG)

static void
derive(const unsigned char *key, const char *label, unsigned char out[32])
{
	secret_keyed_digest(key, label, strlen(label), out);
}

void
upcred_bind(struct upcred *u)
{
	derive(u->key, "mcpgate upstream credential seal v1", u->seal_key);
	derive(u->key, "mcpgate upstream credential name v1", u->name_key);
	vault_keys_derive(&u->vault_keys, u->key);
	u->cred.bearer = upcred_bearer;
	u->cred.ctx = u;
	u->own.bearer = upcred_bearer_own;
	u->own.ctx = u;
}

void
upcred_clear(struct upcred *u)
{
	secret_wipe(u->seal_key, sizeof(u->seal_key));
	secret_wipe(u->name_key, sizeof(u->name_key));
	vault_keys_clear(&u->vault_keys);
}

/* What names an entry for w: everything the token endpoint's request holds (the mode,
 * the endpoint, the client, what is asked for), after first (domain separation). The
 * number of parts (at most 16: room is left for one more). */
static size_t
entry_parts(const struct upcred *u, const struct want *w, const char *first, struct secret_part parts[18])
{
	const struct cfg_upstream *up = w->up;
	const size_t most = first ? 16 : 15;	/* an entry's name as it always was */
	size_t n = 0, i;

#define PART(s)	(parts[n++] = (struct secret_part){ (s) ? (s) : "", (s) ? strlen(s) + 1 : 1 })
	if (first)
		PART(first);
	PART(w->mode == UP_CRED_EXCHANGE ? "exchange" : w->mode == UP_CRED_ID_JAG ? "id-jag" : "client-credentials");
	PART(u->cfg->issuer);
	PART(up->s.name);
	PART(up->url);
	PART(up->token_endpoint);
	PART(up->exchange_resource);
	PART(up->exchange_audience);
	PART(up->client_id ? up->client_id : u->cfg->client_id);
	for (i = 0; i < up->exchange_scopes.n && n < most; i++)
		PART(up->exchange_scopes.v[i]);
#undef PART
	return n;
}

/* The cache's name of what the token endpoint would issue for up: entry_parts, then,
 * for an exchange, the caller's token. */
static void
entry_key(const struct upcred *u, const struct want *w, unsigned char key[CREDCACHE_KEY_BYTES])
{
	struct secret_part parts[18];
	size_t n = entry_parts(u, w, NULL, parts);

	if (WANT_AS_CALLER(w))
		parts[n++] = u->subject;
	secret_keyed_digest_parts(u->name_key, parts, n, key);
}

/* The name of the marker saying a token for w is cached for a caller (explain reads
 * it, having the caller's claims but not the token): the same parts, after "caller",
 * then the caller's digest (caller_who) for the modes as the caller, nothing for the
 * gateway's own token (one per host, whoever the caller). */
static void
marker_key(const struct upcred *u, const struct want *w, unsigned char key[CREDCACHE_KEY_BYTES])
{
	struct secret_part parts[18];
	size_t n = entry_parts(u, w, "caller", parts);
	const char *who = WANT_AS_CALLER(w) && u->caller_who ? u->caller_who : "";

	parts[n++] = (struct secret_part){ who, strlen(who) + 1 };
	secret_keyed_digest_parts(u->name_key, parts, n, key);
}

/* What a value is sealed with: the entry's name (a value moved under another name does
 * not open). */
void
upcred_seal_ad(const unsigned char key[CREDCACHE_KEY_BYTES], char ad[2 * CREDCACHE_KEY_BYTES + 1])
{
	secret_hex(key, CREDCACHE_KEY_BYTES, ad);
}

/* How long an issued token is kept: its expires_in less a margin, no longer than the
 * caller's own token (an exchange's), nor than UPCRED_MAX_MS; 0: not at all. */
static int64_t
keep_until(const struct upcred *u, const struct want *w, long expires_in, int64_t now_ms)
{
	int64_t life = expires_in > 0 ? (int64_t)expires_in * 1000 : UPCRED_DEFAULT_MS, until;

	if (life > 2 * UPCRED_EARLY_MS)
		life -= UPCRED_EARLY_MS;
	if (life > UPCRED_MAX_MS)
		life = UPCRED_MAX_MS;
	until = now_ms + life;
	if (WANT_AS_CALLER(w) && u->subject_exp_ms > 0 && until > u->subject_exp_ms)
		until = u->subject_exp_ms;
	return until > now_ms ? until : 0;
}

/* A refusal for scope at an upstream reached as the caller, whose exchange-scopes the
 * caller's token does not all have: 1 with err GW_ESCOPE, its detail the scopes it
 * lacks (what a step-up asks for); else 0. */
static int
step_up(const struct upcred *u, const struct want *w, const char *oauth_error, struct gw_error *err)
{
	const struct cfg_upstream *up = w->up;
	char missing[GW_ERROR_DETAIL] = "";
	size_t i, n = 0;

	if (!WANT_AS_CALLER(w) || (strcmp(oauth_error, "invalid_scope") != 0 && strcmp(oauth_error, "insufficient_scope") != 0))
		return 0;
	for (i = 0; i < up->exchange_scopes.n; i++)
		if (!str_has_word(u->subject_scope ? u->subject_scope : "", up->exchange_scopes.v[i]) &&
		    n + strlen(up->exchange_scopes.v[i]) + 2 < sizeof(missing))
			n += (size_t)snprintf(missing + n, sizeof(missing) - n, "%s%s", n ? " " : "", up->exchange_scopes.v[i]);
	if (n == 0)
		return 0;
	gw_error_set(err, GW_ESCOPE, "%s", missing);
	return 1;
}

/* Words of each grant, for the log and the caller. */
static const char *const grant_words[] = {
	[TOKENEP_CLIENT_CREDENTIALS] = "the client_credentials grant",
	[TOKENEP_EXCHANGE] = "the token exchange",
	[TOKENEP_EXCHANGE_ID_JAG] = "the exchange for an ID-JAG",
	[TOKENEP_JWT_BEARER] = "the jwt-bearer grant of the ID-JAG",
};

/* One request at a token endpoint for up: 0 with the answer's token, or -1 with err
 * (GW_ECALL naming the upstream and the OAuth error when refused, GW_EAUTHSERVER when
 * the endpoint failed), observed for health and metrics. */
static int
request(const struct upcred *u, const struct want *w, const struct tokenep_ask *ask,
    struct tokenep_answer *a, struct gw_error *err)
{
	const struct cfg_upstream *up = w->up;
	const char *what = grant_words[ask->grant];
	struct gw_error why;
	int rc;

	rc = tokenep_request(u->ix, u->asmeta, u->cfg, ask, a, &why);
	metrics_observe(u->metrics, METRICS_DEP_EXCHANGE, rc >= 0, ask->now_ms / 1000,
	    rc >= 0 ? NULL : "the token endpoint failed");
	if (rc == 0)
		return 0;
	metrics_credential(u->metrics, up->s.name, rc == 1 ? METRICS_CRED_REFUSED : METRICS_CRED_FAILED);
	if (rc == 1 && step_up(u, w, a->error, err)) {
		log_info(NULL, "upstream %s: %s was refused: %s: the caller's token lacks %s", up->s.name, what, a->error,
		    err->detail);
	} else if (rc == 1) {
		/* The OAuth error is the caller's to read; its description only the log's. */
		log_warn(NULL, "upstream %s: %s was refused: %s%s%s", up->s.name, what, a->error,
		    a->description[0] ? ": " : "", a->description);
		gw_error_set(err, GW_ECALL, "upstream %s: %s was refused: %s", up->s.name, what, a->error);
	} else {
		log_warn(NULL, "upstream %s: %s: %s", up->s.name, what, why.detail);
		gw_error_set(err, GW_EAUTHSERVER, "upstream %s: %s failed; retry later (%s)", up->s.name, what,
		    why.detail);
	}
	tokenep_answer_clear(a);
	return -1;
}

/* The token w asks for, obtained now: exchanged for the caller's (exchange), the
 * gateway's own (client-credentials: at the upstream's server, or, for an upstream
 * reached as the caller by exchange, at the issuer it trusts), or, for id-jag, two
 * requests: the caller's token exchanged at the organisation's issuer for an ID-JAG
 * whose audience is the upstream's authorization server, then that assertion traded
 * there (jwt-bearer) for an access token. The upstream's server, where the mode needs
 * it and the configuration does not say, is discovered. 0 with the answer's token, or
 * -1 with err.
 * Long: the modes' three sequences share the checks, the discovery and the answer's
 * hand-over, one exit for the ID-JAG's wipe. */
static int
obtain(const struct upcred *u, const struct want *w, int64_t now_ms, struct tokenep_answer *a,
    struct gw_error *err)
{
	const struct cfg_upstream *up = w->up;
	const int mode = w->mode;
	const struct config *cfg = u->cfg;
	const struct as_client client = {
		up->client_id ? up->client_id : cfg->client_id,
		up->client_id ? up->client_secret : cfg->client_secret,
		cfg->client_auth,
	};
	struct tokenep_ask ask = {
		.grant = mode == UP_CRED_EXCHANGE ? TOKENEP_EXCHANGE : mode == UP_CRED_ID_JAG ? TOKENEP_EXCHANGE_ID_JAG :
		    TOKENEP_CLIENT_CREDENTIALS,
		.endpoint = mode == UP_CRED_ID_JAG ? NULL : up->token_endpoint, .client = &client,
		.subject = WANT_AS_CALLER(w) ? &u->subject : NULL,
		.resource = up->exchange_resource ? up->exchange_resource : up->url,
		.audience = up->exchange_audience, .scopes = &up->exchange_scopes, .now_ms = now_ms,
	};
	struct tokenep_answer jag = { 0 };
	struct secret_part assertion;
	struct up_as as = { .issuer = "" };
	int rc = -1;

	if (u->ix == NULL || (WANT_AS_CALLER(w) && u->subject.p == NULL)) {
		gw_error_set(err, GW_EAUTHSERVER, "upstream %s: %s", up->s.name, u->ix == NULL ?
		    "no connection to the authorization server" : "no caller's token to exchange");
		return -1;
	}
	/* The upstream's own authorization server: its token endpoint, its issuer. */
	if ((mode == UP_CRED_CLIENT && !up->token_endpoint && up->credentials != UP_CRED_EXCHANGE) ||
	    (mode == UP_CRED_ID_JAG && (!up->token_endpoint || !up->exchange_audience))) {
		if (asdisc_find(u, up, now_ms, &as, err) < 0) {
			metrics_observe(u->metrics, METRICS_DEP_EXCHANGE, 0, now_ms / 1000,
			    "an upstream's authorization server could not be discovered");
			metrics_credential(u->metrics, up->s.name, METRICS_CRED_FAILED);
			return -1;
		}
		if (mode == UP_CRED_CLIENT)
			ask.endpoint = as.token_endpoint;
	}
	if (mode == UP_CRED_ID_JAG && ask.audience == NULL)
		ask.audience = as.issuer;
	if (request(u, w, &ask, mode == UP_CRED_ID_JAG ? &jag : a, err) < 0)
		goto out;
	if (mode == UP_CRED_ID_JAG) {
		assertion = (struct secret_part){ jag.token, jag.token_len };
		ask = (struct tokenep_ask){
			.grant = TOKENEP_JWT_BEARER, .endpoint = up->token_endpoint ? up->token_endpoint : as.token_endpoint,
			.client = &client, .subject = &assertion, .resource = ask.resource, .now_ms = now_ms,
		};
		if (request(u, w, &ask, a, err) < 0)
			goto out;
	}
	rc = 0;
out:
	tokenep_answer_clear(&jag);
	return rc;
}

/* --- [auth] shared-cache: the hosts' tokens in the Redis store ------------------------ */

#define SHARED_SEALED_MAX	(CREDCACHE_VALUE_MAX + 64)

/* The Redis record's name (a keyed digest of the entry's under the shared key) and what
 * its sealing is bound to. */
static void
shared_name(const struct config *cfg, const unsigned char key[CREDCACHE_KEY_BYTES],
    unsigned char name[RSTORE_KEY_BYTES], char ad[96])
{
	unsigned char d[32];
	size_t i;

	secret_keyed_digest_parts(cfg->shared_key, (struct secret_part[]){ { "mcpgate upstream token v1", 25 },
	    { (const char *)key, CREDCACHE_KEY_BYTES } }, 2, d);
	memcpy(name, d, RSTORE_KEY_BYTES);
	memcpy(ad, "mcpgate upstream token v1 ", 26);
	for (i = 0; i < RSTORE_KEY_BYTES; i++)
		snprintf(ad + 26 + 2 * i, 3, "%02x", name[i]);
}

/* The token another host obtained for key: its length, the token in plain (NUL-ended)
 * and its end in *until_ms; 0 when there is none that can be used (absent, forged,
 * altered, ended, Redis not answering). */
static long
shared_get(const struct upcred *u, const unsigned char key[CREDCACHE_KEY_BYTES], int64_t now_ms,
    char *plain, size_t plainlen, int64_t *until_ms)
{
	unsigned char name[RSTORE_KEY_BYTES];
	char *sealed = malloc(SHARED_SEALED_MAX), ad[96], *sp;
	long n = 0, got;
	long long until;

	if (sealed == NULL)
		return 0;
	shared_name(u->cfg, key, name, ad);
	if (rstore_get(u->rs, u->cfg, &(struct rs_key){ RS_UPCRED, name }, sealed, SHARED_SEALED_MAX,
	    clock_mono_us() / 1000) == 1 && (got = secret_open(u->cfg->shared_key, sealed, ad, plain, plainlen)) > 0 &&
	    sscanf(plain, "%lld", &until) == 1 && (sp = strchr(plain, ' ')) != NULL && until > now_ms &&
	    until - now_ms <= UPCRED_MAX_MS) {
		n = got - (long)(sp + 1 - plain);
		memmove(plain, sp + 1, (size_t)n + 1);
		*until_ms = until;
	}
	if (n <= 0)
		secret_wipe(plain, plainlen);
	free(sealed);
	return n > 0 ? n : 0;
}

/* Shares a token just obtained until until_ms (best effort: a host that cannot leaves
 * the others to obtain their own). */
static void
shared_put(const struct upcred *u, const unsigned char key[CREDCACHE_KEY_BYTES], const char *token,
    int64_t now_ms, int64_t until_ms)
{
	unsigned char name[RSTORE_KEY_BYTES];
	char *sealed = malloc(SHARED_SEALED_MAX), *plain = malloc(TOKENEP_TOKEN_MAX + 32), ad[96];
	int n;

	if (sealed && plain && (n = snprintf(plain, TOKENEP_TOKEN_MAX + 32, "%lld %s", (long long)until_ms, token)) > 0 &&
	    n < TOKENEP_TOKEN_MAX + 32) {
		shared_name(u->cfg, key, name, ad);
		if (secret_seal(u->cfg->shared_key, plain, (size_t)n, ad, sealed, SHARED_SEALED_MAX) == 0)
			(void)rstore_put(u->rs, u->cfg, &(struct rs_key){ RS_UPCRED, name }, sealed, until_ms - now_ms,
			    clock_mono_us() / 1000);
		secret_wipe(plain, (size_t)n);
	}
	free(plain);
	free(sealed);
}

static void
nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The act claim (RFC 8693 §4.1) of a token that is a JWT, for the log: a new
 * reference, or NULL (not a JWT, no act, not an object). Nothing of it is trusted. */
static json_t *
act_of(const char *token)
{
	const char *p = strchr(token, '.'), *q = p ? strchr(p + 1, '.') : NULL;
	char payload[TOKENEP_TOKEN_MAX];
	json_t *claims, *act = NULL;
	long n;

	if (q == NULL || (n = secret_unb64url(p + 1, (size_t)(q - p - 1), payload, sizeof(payload))) <= 0)
		return NULL;
	if ((claims = json_loadb(payload, (size_t)n, JSON_REJECT_DUPLICATES, NULL)) != NULL &&
	    json_is_object(json_object_get(claims, "act")))
		act = json_incref(json_object_get(claims, "act"));
	json_decref(claims);
	secret_wipe(payload, sizeof(payload));
	return act;
}

/* The audit line of a token obtained for w (never the token). */
static void
audit(const struct upcred *u, const struct want *w, const char *token, int64_t until_ms)
{
	static const char *const grants[] = { "", "", "", "exchange", "client-credentials", "id-jag" };
	const struct cfg_upstream *up = w->up;
	json_t *line, *act;

	line = json_pack("{s:s?, s:s, s:s, s:s, s:s?, s:s, s:I}", "request_id", u->request_id, "audit", "credential",
	    "upstream", up->s.name, "grant", grants[w->mode], "subject", WANT_AS_CALLER(w) ? u->subject_who : NULL,
	    "client_id", up->client_id ? up->client_id : u->cfg->client_id, "until_s", (json_int_t)(until_ms / 1000));
	if (line && (act = act_of(token)) != NULL)
		json_object_set_new(line, "act", act);
	log_json(GW_LOG_INFO, line);
}

/* A token's place in the host's cache: its name, what its sealing is bound to, and
 * what the lookup found there. */
struct place {
	unsigned char key[CREDCACHE_KEY_BYTES];
	char ad[2 * CREDCACHE_KEY_BYTES + 1];
	enum cc_status st;
};

/* The token cached at p, opened into plain (n bytes): its length, or 0 when there is
 * none to use (p->st says why: our claim to fill, another's we waited on until its
 * deadline, or a cache that cannot be used, a value under another key included). */
static long
lookup(const struct upcred *u, struct place *p, int64_t *now_ms, char *plain, size_t n)
{
	const int64_t pending_ms = u->cfg->auth_timeout_ms + 1000, give_up_ms = *now_ms + pending_ms;
	char *sealed = malloc(CREDCACHE_VALUE_MAX);
	long got = 0;

	if (sealed == NULL) {
		p->st = CC_UNAVAILABLE;
		return 0;
	}
	while ((p->st = credcache_get(u->cache, p->key, *now_ms, pending_ms, sealed, CREDCACHE_VALUE_MAX)) == CC_BUSY &&
	    *now_ms < give_up_ms) {
		nap_ms(UPCRED_WAIT_STEP_MS);
		*now_ms = clock_wall_ms();
	}
	if (p->st == CC_HIT && (got = secret_open(u->seal_key, sealed, p->ad, plain, n)) <= 0) {
		got = 0;	/* sealed under another key (a new session key): not ours to claim */
		p->st = CC_UNAVAILABLE;
	}
	free(sealed);
	return got;
}

/* Keeps token (n bytes) at p until until_ms, sealed, when the lookup left that to us
 * (our claim, or a cache we could not read); a claim that cannot be filled is dropped.
 * 1 when kept, else 0. */
static int
keep(const struct upcred *u, const struct place *p, const char *token, size_t n, int64_t now_ms, int64_t until_ms)
{
	char *sealed;

	if (!CC_CLAIMED(p->st) && p->st != CC_UNAVAILABLE)
		return 0;
	if (until_ms > now_ms && (sealed = malloc(CREDCACHE_VALUE_MAX)) != NULL) {
		if (secret_seal(u->seal_key, token, n, p->ad, sealed, CREDCACHE_VALUE_MAX) == 0 &&
		    credcache_put(u->cache, p->key, now_ms, until_ms, sealed) == 0) {
			free(sealed);
			return 1;
		}
		free(sealed);
	}
	if (CC_CLAIMED(p->st))
		credcache_drop(u->cache, p->key);
	return 0;
}

/* The marker of a token for w kept until until_ms (marker_key), or, until_ms not past
 * now_ms, its removal. Its value is that end, sealed: never the token, nor anything
 * from which the token's own entry could be found. Best effort: a marker not kept only
 * makes explain say that none is cached. */
static void
mark(const struct upcred *u, const struct want *w, int64_t now_ms, int64_t until_ms)
{
	unsigned char key[CREDCACHE_KEY_BYTES];
	char ad[2 * CREDCACHE_KEY_BYTES + 1], plain[24], sealed[128];
	int n;

	if (u->cache == NULL || (WANT_AS_CALLER(w) && u->caller_who == NULL))
		return;
	marker_key(u, w, key);
	if (until_ms <= now_ms) {
		credcache_drop(u->cache, key);
		return;
	}
	upcred_seal_ad(key, ad);
	n = snprintf(plain, sizeof(plain), "%lld", (long long)until_ms);
	if (secret_seal(u->seal_key, plain, (size_t)n, ad, sealed, sizeof(sealed)) == 0)
		(void)credcache_put(u->cache, key, now_ms, until_ms, sealed);
}

int
upcred_cached_until(const struct upcred *u, const struct cfg_upstream *up, const void *region, size_t size,
    int64_t now_ms, int64_t *until_ms)
{
	const struct want w = { up, up->credentials };
	unsigned char key[CREDCACHE_KEY_BYTES];
	char ad[2 * CREDCACHE_KEY_BYTES + 1], sealed[128], plain[24], *end;
	long long until;
	enum cc_status st;

	*until_ms = 0;
	if (w.mode != UP_CRED_EXCHANGE && w.mode != UP_CRED_ID_JAG && w.mode != UP_CRED_CLIENT)
		return 0;
	marker_key(u, &w, key);
	upcred_seal_ad(key, ad);
	if ((st = credcache_peek(region, size, key, now_ms, sealed, sizeof(sealed))) == CC_UNAVAILABLE)
		return -1;
	/* A marker that does not open (another key's, or written over) is no marker. */
	if (st != CC_HIT || secret_open(u->seal_key, sealed, ad, plain, sizeof(plain)) <= 0)
		return 0;
	until = strtoll(plain, &end, 10);
	if (*end != '\0' || until <= now_ms)
		return 0;
	*until_ms = until;
	return 1;
}

/* The host's cache (a value opened, a claim of another's waited on up to its deadline),
 * else another host's token from Redis (unless the upstream just refused the one we
 * had: it may be that one), else a new one from the token endpoint, kept in both; the
 * plaintext wiped at the one exit. */
static int
bearer_as(const struct upcred *u, const struct want *w, int again, char **token, struct gw_error *err)
{
	const struct cfg_upstream *up = w->up;
	char *plain = malloc(TOKENEP_TOKEN_MAX + 1);
	int64_t now_ms = clock_wall_ms(), until = 0;
	struct tokenep_answer a = { 0 };
	struct place p;
	long n = 0;
	int rc = -1;

	*token = NULL;
	if (plain == NULL) {
		gw_error_set(err, GW_EINTERNAL, "out of memory");
		return -1;
	}
	entry_key(u, w, p.key);
	upcred_seal_ad(p.key, p.ad);
	if (again) {
		credcache_drop(u->cache, p.key);
		mark(u, w, now_ms, 0);
	}
	if ((n = lookup(u, &p, &now_ms, plain, TOKENEP_TOKEN_MAX + 1)) == 0 && u->rs && !again &&
	    (n = shared_get(u, p.key, now_ms, plain, TOKENEP_TOKEN_MAX + 1, &until)) > 0 &&
	    keep(u, &p, plain, (size_t)n, now_ms, until))
		mark(u, w, now_ms, until);
	if (n > 0) {
		metrics_credential(u->metrics, up->s.name, METRICS_CRED_CACHED);
		if ((*token = strdup(plain)) == NULL)
			gw_error_set(err, GW_EINTERNAL, "out of memory");
		rc = *token ? 0 : -1;
	} else if (obtain(u, w, now_ms, &a, err) < 0) {
		if (CC_CLAIMED(p.st))
			credcache_drop(u->cache, p.key);
	} else {
		/* A token that lapsed in the cache (replaced UPCRED_EARLY_MS before its end) is
		 * refreshed; any other is obtained. */
		metrics_credential(u->metrics, up->s.name, p.st == CC_REFRESH ? METRICS_CRED_REFRESHED :
		    METRICS_CRED_OBTAINED);
		until = keep_until(u, w, a.expires_in, now_ms);
		audit(u, w, a.token, until);
		if (keep(u, &p, a.token, a.token_len, now_ms, until))
			mark(u, w, now_ms, until);
		if (u->rs && until > now_ms)
			shared_put(u, p.key, a.token, now_ms, until);
		*token = a.token;	/* handed over: the caller wipes it */
		a.token = NULL;
		rc = 0;
	}
	tokenep_answer_clear(&a);
	secret_wipe(plain, TOKENEP_TOKEN_MAX + 1);
	free(plain);
	return rc;
}

int
upcred_bearer(void *ctx, const struct cfg_upstream *up, int again, char **token, struct gw_error *err)
{
	if (up->credentials == UP_CRED_USER_OAUTH)
		return connected_bearer(ctx, up, again, token, err);
	return bearer_as(ctx, &(struct want){ up, up->credentials }, again, token, err);
}

int
upcred_bearer_own(void *ctx, const struct cfg_upstream *up, int again, char **token, struct gw_error *err)
{
	return bearer_as(ctx, &(struct want){ up, UP_CRED_CLIENT }, again, token, err);
}
