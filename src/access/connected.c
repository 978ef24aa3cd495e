/* connected — people's connected accounts at user-oauth upstreams (connected.h). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "asdisc.h"
#include "upreg.h"
#include "buf.h"
#include "clock.h"
#include "connected.h"
#include "introspect.h"
#include "log.h"
#include "secret.h"

/* The audit line of a connection's change or trouble (event: METRICS_CRED_CONNECTED,
 * _DISCONNECTED, _DROPPED, or _FAILED: a refresh that could not be had now; never a
 * token), and its count. */
static void
audit(const struct upcred *u, const struct cfg_upstream *up, const char *who, enum metrics_cred event,
    const char *why)
{
	const char *what = event == METRICS_CRED_CONNECTED ? "connected" : event == METRICS_CRED_DISCONNECTED ?
	    "disconnected" : event == METRICS_CRED_FAILED ? "refresh failed" : "dropped";

	metrics_credential(u->metrics, up->s.name, event);
	log_json(GW_LOG_INFO, json_pack("{s:s?, s:s, s:s, s:s?, s:s, s:s?}", "request_id", u->request_id,
	    "audit", "connection", "upstream", up->s.name, "subject", who, "event", what, "reason", why));
}

static void
nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Where people's connections are kept, one row each: the host's state file, or, with
 * a Redis store, Redis alone (every host sees them, and one host refreshes an entry for
 * all; the state file's vault then holds nothing, so no host keeps a connection that
 * was dropped elsewhere). Redis keeps the same sealed value, named by a digest of the
 * entry's name under the shared key, until its refresh token ends (CONNECTED_KEEP_MS
 * when no end is said). */
#define CONNECTED_KEEP_MS	(30LL * 86400 * 1000)

static void
redis_key(const struct upcred *u, const unsigned char *name, int claim, unsigned char key[RSTORE_KEY_BYTES])
{
	const struct secret_part parts[2] = { { claim ? "vault claim" : "vault", claim ? 12 : 6 },
	    { name, VAULT_NAME_BYTES } };
	unsigned char d[32];

	secret_keyed_digest_parts(u->cfg->shared_key, parts, 2, d);
	memcpy(key, d, RSTORE_KEY_BYTES);
}

static enum vault_status
redis_get(const struct upcred *u, const unsigned char *name, int64_t now_ms, char *out, size_t n)
{
	unsigned char key[RSTORE_KEY_BYTES];
	int rc;

	(void)now_ms;
	redis_key(u, name, 0, key);
	rc = rstore_get(u->vault_rs, u->cfg, &(struct rs_key){ RS_VAULT, key }, out, n, clock_mono_us() / 1000);
	return rc == 1 ? VAULT_HIT : rc == 0 ? VAULT_NONE : VAULT_UNAVAILABLE;
}

static int
redis_put(const struct upcred *u, const unsigned char *name, int64_t now_ms, const struct vault_value *v)
{
	unsigned char key[RSTORE_KEY_BYTES];

	redis_key(u, name, 0, key);
	return rstore_put(u->vault_rs, u->cfg, &(struct rs_key){ RS_VAULT, key }, v->sealed,
	    v->until_ms ? v->until_ms - now_ms : CONNECTED_KEEP_MS, clock_mono_us() / 1000);
}

static void
redis_drop(const struct upcred *u, const unsigned char *name, int claim)
{
	unsigned char key[RSTORE_KEY_BYTES];

	redis_key(u, name, claim, key);
	(void)rstore_del(u->vault_rs, u->cfg, &(struct rs_key){ claim ? RS_VAULT_CLAIM : RS_VAULT, key },
	    clock_mono_us() / 1000);
}

static enum vault_status
redis_claim(const struct upcred *u, const unsigned char *name, int64_t claim_ms)
{
	unsigned char key[RSTORE_KEY_BYTES];
	int rc;

	redis_key(u, name, 1, key);
	rc = rstore_once(u->vault_rs, u->cfg, &(struct rs_key){ RS_VAULT_CLAIM, key }, claim_ms,
	    clock_mono_us() / 1000);
	return rc == 1 ? VAULT_CLAIMED : rc == 0 ? VAULT_BUSY : VAULT_UNAVAILABLE;
}

/* The vault's operations, on the store u keeps connections in. */
static enum vault_status
v_get(const struct upcred *u, const unsigned char *name, int64_t now_ms, char *out, size_t n)
{
	return u->vault_rs ? redis_get(u, name, now_ms, out, n) : vault_get(u->vault, name, now_ms, out, n);
}

static int
v_put(const struct upcred *u, const unsigned char *name, int64_t now_ms, const struct vault_value *v,
    char *evicted, size_t n)
{
	return u->vault_rs ? redis_put(u, name, now_ms, v) : vault_put(u->vault, name, now_ms, v, evicted, n);
}

static void
v_drop(const struct upcred *u, const unsigned char *name)
{
	if (u->vault_rs)
		redis_drop(u, name, 0);
	else
		vault_drop(u->vault, name);
}

static enum vault_status
v_claim(const struct upcred *u, const unsigned char *name, int64_t now_ms, int64_t claim_ms)
{
	return u->vault_rs ? redis_claim(u, name, claim_ms) : vault_claim_refresh(u->vault, name, now_ms, claim_ms);
}

static void
v_release(const struct upcred *u, const unsigned char *name)
{
	if (u->vault_rs)
		redis_drop(u, name, 1);
	else
		vault_release(u->vault, name);
}

/* Whether u has a vault to keep connections in. */
static int
v_usable(const struct upcred *u)
{
	return u->vault_rs != NULL || u->vault != NULL;
}

void
connected_name(const struct upcred *u, const char *subject, const struct cfg_upstream *up,
    unsigned char name[VAULT_NAME_BYTES])
{
	vault_name(&u->vault_keys, u->cfg->issuer, subject, up->s.name, name);
}

/* A copy of the access token tok for the call: 0, or -1 with err. */
static int
give(const char *tok, char **token, struct gw_error *err)
{
	if ((*token = strdup(tok)) != NULL)
		return 0;
	gw_error_set(err, GW_EINTERNAL, "out of memory");
	return -1;
}

static int
not_connected(const struct cfg_upstream *up, struct gw_error *err)
{
	gw_error_set(err, GW_ECONNECT, "%s", up->s.name);
	return -1;
}

/* Seals t for name and stores it: 0, or -1 with err. An entry evicted for room is
 * logged (that person will be asked again); it is sealed under its own name, which
 * only its owner's calls can make, so the line cannot say whose it was. */
static int
store(const struct upcred *u, const unsigned char name[VAULT_NAME_BYTES], const struct vault_tokens *t,
    int64_t now_ms, struct gw_error *err)
{
	char *sealed = malloc(VAULT_VALUE_MAX), *evicted = malloc(VAULT_VALUE_MAX);
	struct vault_value val = { sealed, vault_tokens_until(t) };
	int rc = -1;

	if (sealed == NULL || evicted == NULL || vault_seal(&u->vault_keys, name, t, sealed, VAULT_VALUE_MAX) < 0) {
		gw_error_set(err, GW_EINTERNAL, "the upstream's tokens cannot be kept (too long, or a character a "
		    "header cannot carry)");
		goto out;
	}
	switch (v_put(u, name, now_ms, &val, evicted, VAULT_VALUE_MAX)) {
	case 1:
		log_warn(u->request_id, "vault: full: the least recently used connection was dropped to make room "
		    "(its person will be asked to connect again; raise [gateway] vault-entries)");
		rc = 0;
		break;
	case 0:
		rc = 0;
		break;
	default:
		gw_error_set(err, GW_EINTERNAL, "the vault cannot keep the connection now");
	}
out:
	if (sealed)
		secret_wipe(sealed, VAULT_VALUE_MAX);
	if (evicted)
		secret_wipe(evicted, VAULT_VALUE_MAX);
	free(sealed);
	free(evicted);
	return rc;
}

/* The tokens of an answer (a new connection's, or a refresh's over old: a refresh that
 * issues no new refresh token keeps the old one, RFC 6749 §6) into t, borrowed. */
static void
tokens_of(const struct tokenep_answer *a, const struct vault_tokens *old, int64_t now_ms, struct vault_tokens *t)
{
	memset(t, 0, sizeof(*t));
	t->access_token = a->token;
	t->refresh_token = a->refresh_token ? a->refresh_token : old ? old->refresh_token : NULL;
	t->scope = a->scope ? a->scope : old ? old->scope : NULL;
	t->access_until_ms = a->expires_in > 0 ? now_ms + (int64_t)a->expires_in * 1000 : 0;
	t->refresh_until_ms = old && !a->refresh_token ? old->refresh_until_ms : 0;
	t->obtained_ms = now_ms;
}

int
connected_keep(const struct upcred *u, const struct cfg_upstream *up, const char *subject, const char *who,
    const struct tokenep_answer *a, struct gw_error *err)
{
	unsigned char name[VAULT_NAME_BYTES];
	struct vault_tokens t;
	int64_t now_ms = clock_wall_ms();

	if (!v_usable(u)) {
		gw_error_set(err, GW_EINTERNAL, "the vault is not available");
		return -1;
	}
	connected_name(u, subject, up, name);
	tokens_of(a, NULL, now_ms, &t);
	snprintf(t.who, sizeof(t.who), "%s", who);
	snprintf(t.upstream, sizeof(t.upstream), "%s", up->s.name);
	if (store(u, name, &t, now_ms, err) < 0)
		return -1;
	audit(u, up, who, METRICS_CRED_CONNECTED, NULL);
	return 0;
}

int
connected_server(const struct upcred *u, const struct cfg_upstream *up, int64_t now_ms, struct up_as *as,
    struct up_client *client, struct gw_error *err)
{
	memset(as, 0, sizeof(*as));
	if (u->ix == NULL) {
		gw_error_set(err, GW_EAUTHSERVER, "upstream %s: no connection to its authorization server", up->s.name);
		return -1;
	}
	if ((!up->client_id || !up->token_endpoint || !up->authorization_endpoint) &&
	    asdisc_find(u, up, now_ms, as, err) < 0)
		return -1;
	if (up->token_endpoint)
		snprintf(as->token_endpoint, sizeof(as->token_endpoint), "%s", up->token_endpoint);
	if (up->authorization_endpoint)
		snprintf(as->authorization_endpoint, sizeof(as->authorization_endpoint), "%s", up->authorization_endpoint);
	return upreg_client(u, up, as, now_ms, client, err);
}

/* The refresh_token grant for t at up's token endpoint, into a: 0 issued, 1 refused, -1
 * with err (the endpoint not to be had now). */
static int
refresh(const struct upcred *u, const struct cfg_upstream *up, const struct vault_tokens *t, int64_t now_ms,
    struct tokenep_answer *a, struct gw_error *err)
{
	const struct secret_part rt = { t->refresh_token, strlen(t->refresh_token) };
	struct up_as as;
	struct up_client client;

	if (connected_server(u, up, now_ms, &as, &client, err) < 0)
		return -1;
	return tokenep_request(u->ix, u->asmeta, u->cfg, &(struct tokenep_ask){ .grant = TOKENEP_REFRESH,
	    .endpoint = as.token_endpoint, .client = &client.as, .subject = &rt, .resource = up->url,
	    .now_ms = now_ms }, a, err);
}

/* Our claim on name's refresh, t what we read before claiming it: read again first (a
 * process or host that held the claim before us may have refreshed it: its new token is
 * used, and its new refresh token is the one to use), then refreshed and stored, *token
 * the new access token. 0; -1 with err (GW_ECONNECT: refused, the entry dropped). The
 * claim ends either way. */
static int
refresh_claimed(const struct upcred *u, const struct cfg_upstream *up, const unsigned char *name,
    struct vault_tokens *t, char **token, struct gw_error *err)
{
	struct tokenep_answer a = { 0 };
	struct vault_tokens nt = { 0 };
	char *sealed = malloc(VAULT_VALUE_MAX);
	int64_t now_ms = clock_wall_ms();
	enum vault_status st;
	int rc = -1;

	if (sealed == NULL) {
		v_release(u, name);
		gw_error_set(err, GW_EINTERNAL, "out of memory");
		return -1;
	}
	if ((st = v_get(u, name, now_ms, sealed, VAULT_VALUE_MAX)) == VAULT_HIT &&
	    vault_open(&u->vault_keys, name, sealed, &nt) == 0) {
		if (strcmp(nt.access_token, t->access_token) != 0) {	/* refreshed meanwhile */
			v_release(u, name);
			rc = give(nt.access_token, token, err);
			goto out;
		}
		vault_tokens_free(t);
		*t = nt;	/* the latest refresh token */
		memset(&nt, 0, sizeof(nt));
	} else if (st != VAULT_UNAVAILABLE) {	/* dropped meanwhile */
		v_release(u, name);
		rc = not_connected(up, err);
		goto out;
	}
	rc = refresh(u, up, t, now_ms, &a, err);
	if (rc == 1) {	/* invalid_grant and the like: the person must connect again */
		v_drop(u, name);
		v_release(u, name);
		metrics_credential(u->metrics, up->s.name, METRICS_CRED_REFUSED);
		audit(u, up, t->who, METRICS_CRED_DROPPED, a.error);
		rc = not_connected(up, err);
	} else if (rc < 0) {
		v_release(u, name);
		audit(u, up, t->who, METRICS_CRED_FAILED, err->detail);
		if (t->access_until_ms > now_ms && (*token = strdup(t->access_token)) != NULL)
			rc = 0;	/* the old token still lives: used while the endpoint is away */
	} else {
		tokens_of(&a, t, now_ms, &nt);
		memcpy(nt.who, t->who, sizeof(nt.who));
		memcpy(nt.upstream, t->upstream, sizeof(nt.upstream));
		if (store(u, name, &nt, now_ms, err) < 0 || u->vault_rs)
			v_release(u, name);	/* (stored locally, the put ended the claim) */
		memset(&nt, 0, sizeof(nt));	/* borrowed from a and t */
		metrics_credential(u->metrics, up->s.name, METRICS_CRED_REFRESHED);
		rc = give(a.token, token, err);
	}
out:
	vault_tokens_free(&nt);
	tokenep_answer_clear(&a);
	secret_wipe(sealed, VAULT_VALUE_MAX);
	free(sealed);
	return rc;
}

/* Whether t's access token is to be used as it is (again: the upstream refused the one
 * we sent; a token refreshed that recently is not refreshed again). 1 use, 0 refresh,
 * -1 drop. */
static int
usable(const struct vault_tokens *t, int again, int64_t now_ms)
{
	int64_t early;

	if (again)
		return t->refresh_token == NULL || t->obtained_ms > now_ms - CONNECTED_FRESH_MS ? -1 : 0;
	/* Refreshed UPCRED_EARLY_MS before its end, or half its life for one that lives
	 * less: a token just refreshed is used, not refreshed again at the next request. */
	early = UPCRED_EARLY_MS;
	if (t->obtained_ms > 0 && t->access_until_ms > t->obtained_ms && (t->access_until_ms - t->obtained_ms) / 2 < early)
		early = (t->access_until_ms - t->obtained_ms) / 2;
	if (t->access_until_ms == 0 || t->access_until_ms > now_ms + early)
		return 1;
	if (t->refresh_token)
		return 0;
	return t->access_until_ms > now_ms ? 1 : -1;
}

/* Long: the entry read, opened and judged, then used, refreshed (ours, or waited on
 * while another process refreshes it) or dropped, in one bounded loop. */
int
connected_bearer(const struct upcred *u, const struct cfg_upstream *up, int again, char **token,
    struct gw_error *err)
{
	const int64_t claim_ms = u->cfg->auth_timeout_ms * 4 + 1000;
	int64_t now_ms = clock_wall_ms(), give_up_ms = now_ms + claim_ms;
	unsigned char name[VAULT_NAME_BYTES];
	char *sealed = malloc(VAULT_VALUE_MAX);
	struct vault_tokens t = { 0 };
	enum vault_status st;
	int rc = -1, use;

	*token = NULL;
	if (sealed == NULL || !v_usable(u) || u->subject_sub == NULL) {
		gw_error_set(err, GW_EINTERNAL, "upstream %s: the vault is not available", up->s.name);
		goto out;
	}
	connected_name(u, u->subject_sub, up, name);
	for (;;) {
		vault_tokens_free(&t);
		if ((st = v_get(u, name, now_ms, sealed, VAULT_VALUE_MAX)) == VAULT_NONE) {
			rc = not_connected(up, err);
			break;
		}
		if (st != VAULT_HIT) {
			gw_error_set(err, GW_EINTERNAL, "upstream %s: the vault cannot be read now", up->s.name);
			break;
		}
		if (vault_open(&u->vault_keys, name, sealed, &t) < 0) {	/* another key's, or altered */
			v_drop(u, name);
			audit(u, up, u->subject_who, METRICS_CRED_DROPPED, "its entry did not open");
			rc = not_connected(up, err);
			break;
		}
		if ((use = usable(&t, again, now_ms)) == 1) {
			metrics_credential(u->metrics, up->s.name, METRICS_CRED_CACHED);
			rc = give(t.access_token, token, err);
			break;
		}
		if (use < 0) {
			v_drop(u, name);
			audit(u, up, t.who, METRICS_CRED_DROPPED, again ? "the upstream refused a fresh token" : "expired");
			rc = not_connected(up, err);
			break;
		}
		st = v_claim(u, name, now_ms, claim_ms);
		if (st == VAULT_CLAIMED) {
			rc = refresh_claimed(u, up, name, &t, token, err);
			break;
		}
		if (st != VAULT_BUSY || now_ms > give_up_ms) {
			rc = st == VAULT_NONE ? not_connected(up, err) : -1;
			if (rc < 0 && st != VAULT_NONE)
				gw_error_set(err, GW_EAUTHSERVER, "upstream %s: the connection's refresh did not end in time",
				    up->s.name);
			break;
		}
		nap_ms(UPCRED_WAIT_STEP_MS);	/* another process refreshes it: read it again */
		now_ms = clock_wall_ms();
		again = 0;	/* what it stores is new */
	}
out:
	vault_tokens_free(&t);
	if (sealed)
		secret_wipe(sealed, VAULT_VALUE_MAX);
	free(sealed);
	return rc;
}

int
connected_peek(const struct upcred *u, const char *subject, const struct cfg_upstream *up,
    struct vault_tokens *t)
{
	unsigned char name[VAULT_NAME_BYTES];
	char *sealed = malloc(VAULT_VALUE_MAX);
	enum vault_status st;
	int rc = -1;

	memset(t, 0, sizeof(*t));
	if (sealed == NULL || !v_usable(u))
		goto out;
	connected_name(u, subject, up, name);
	if ((st = v_get(u, name, clock_wall_ms(), sealed, VAULT_VALUE_MAX)) == VAULT_NONE)
		rc = 0;
	else if (st == VAULT_HIT)
		rc = vault_open(&u->vault_keys, name, sealed, t) == 0 ? 1 : 0;
out:
	if (sealed)
		secret_wipe(sealed, VAULT_VALUE_MAX);
	free(sealed);
	return rc;
}

/* RFC 7009: t's refresh token (else its access token) revoked at up's authorization
 * server, when it names a revocation endpoint. Best effort: the entry goes either way,
 * and a token not revoked there ends when it would have. 1 revoked, 0 not. */
static int
revoke(const struct upcred *u, const struct cfg_upstream *up, const struct vault_tokens *t)
{
	const char *tok = t->refresh_token ? t->refresh_token : t->access_token;
	const char *hint = t->refresh_token ? "refresh_token" : "access_token";
	struct up_as as;
	struct up_client client;
	struct gw_error err;
	struct buf form;
	long status = -1;

	if (u->ix == NULL || connected_server(u, up, clock_wall_ms(), &as, &client, &err) < 0 ||
	    !as.revocation_endpoint[0])
		return 0;
	buf_init(&form, 2 * VAULT_TOKEN_MAX + 256);
	if (introspect_form_add(&form, "token", tok, strlen(tok)) == 0 &&
	    introspect_form_add(&form, "token_type_hint", hint, strlen(hint)) == 0)
		status = introspect_post_form(u->ix, u->cfg, &(struct as_post){ as.revocation_endpoint, &form,
		    &client.as, "the upstream's authorization server" }, &err);
	if (form.data)
		secret_wipe(form.data, form.len);
	buf_free(&form);
	if (status != 200)
		log_warn(u->request_id, "connect: upstream %s: the token was not revoked there (%s)", up->s.name,
		    status < 0 ? err.detail : "its revocation endpoint did not answer 200");
	return status == 200;
}

int
connected_drop(const struct upcred *u, const char *subject, const struct cfg_upstream *up)
{
	unsigned char name[VAULT_NAME_BYTES];
	struct vault_tokens t;
	int rc = connected_peek(u, subject, up, &t);

	if (rc == 1) {
		connected_name(u, subject, up, name);
		v_drop(u, name);
		audit(u, up, t.who, METRICS_CRED_DISCONNECTED, revoke(u, up, &t) ? "revoked" : "not revoked at the upstream");
	}
	vault_tokens_free(&t);
	return rc;
}
