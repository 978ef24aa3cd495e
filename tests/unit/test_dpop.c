/* Unit tests: DPoP (RFC 9449) at the resource — the proof's checks (dpop.c: typ, alg,
 * the embedded public key, htm, htu, iat, jti, ath), the replay of proofs (replay.c: a
 * proof seen once, a set's floor under a flood), the Authorization schemes, the same
 * resource (htu), and cnf.jkt read from a token's claims. Proofs are signed here with
 * cjose. */
#include "autoconf.h"

#include <cjose/cjose.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "authreq.h"
#include "claims.h"
#include "clock.h"
#include "dpop.h"
#include "fixture.h"
#include "replay.h"
#include "secret.h"
#include "tap.h"
#include "url.h"

#define NOW	1760000000	/* seconds */
#define RES	"https://gw.example.com/mcp"
#define TOKEN	"an-access-token.of-the-client"

static cjose_jwk_t *ec, *rsa;
static unsigned char dkey[32];
static struct jws_keycache *keycache;	/* a worker's: proofs of one key take it from there */

/* A proof signed with k (alg), its header's jwk the public part of k (with extra
 * members when not NULL), typ, and the payload text. */
static char *
proof_of(cjose_jwk_t *k, const char *alg, const char *typ, const char *jwk_extra, const char *payload)
{
	cjose_err err;
	char *text = cjose_jwk_to_json(k, jwk_extra && strstr(jwk_extra, "private"), &err), *out;
	json_t *jwk = json_loads(text, 0, NULL), *h = json_object();
	cjose_jws_t *jws;
	const char *ser;

	free(text);
	json_object_set_new(h, "alg", json_string(alg));
	if (typ)
		json_object_set_new(h, "typ", json_string(typ));
	if (jwk_extra && strcmp(jwk_extra, "use-enc") == 0)	/* the same key, for encryption */
		json_object_set_new(jwk, "use", json_string("enc"));
	if (jwk_extra && strcmp(jwk_extra, "alg-rs256") == 0)	/* the same key, said to be for RS256 */
		json_object_set_new(jwk, "alg", json_string("RS256"));
	if (!jwk_extra || strcmp(jwk_extra, "none") != 0)
		json_object_set_new(h, "jwk", jwk);
	else
		json_decref(jwk);
	jws = cjose_jws_sign(k, (cjose_header_t *)h, (const uint8_t *)payload, strlen(payload), &err);
	json_decref(h);
	if (jws == NULL || !cjose_jws_export(jws, &ser, &err))
		return strdup("signing.failed.here");
	out = strdup(ser);
	cjose_jws_release(jws);
	return out;
}

/* The payload of a proof for POST RES with TOKEN at NOW, members overridden by over (a
 * JSON object text) */
static char *
payload_with(const char *over)
{
	char ath[JWS_B64_SHA256], text[1024];
	json_t *p, *o = json_loads(over ? over : "{}", 0, NULL);

	jws_sha256_b64(TOKEN, strlen(TOKEN), ath);
	snprintf(text, sizeof(text), "{\"htm\":\"POST\",\"htu\":\"" RES "\",\"iat\":%d,\"jti\":\"j-%d\",\"ath\":\"%s\"}",
	    NOW, rand(), ath);
	p = json_loads(text, 0, NULL);
	json_object_update(p, o);
	json_decref(o);
	{
		char *s = json_dumps(p, JSON_COMPACT);

		json_decref(p);
		return s;
	}
}

/* dpop_check of a proof: "ok" or the reason. */
static const char *
check(const struct config *cfg, const char *proof, const char *method, struct dpop_proof *p)
{
	const struct dpop_req r = { proof, method, TOKEN, strlen(TOKEN), (int64_t)NOW * 1000 + 500 };
	static struct gw_error err;	/* its detail is returned */

	if (dpop_check(cfg, dkey, keycache, &r, p, &err) == 0)
		return "ok";
	return err.code == GW_EDPOP ? err.detail : "(not GW_EDPOP)";
}

static void
test_proofs(void)
{
	static const struct {
		int key;		/* 0 ec, 1 rsa */
		const char *alg, *typ, *jwk, *over, *method, *want, *what;
	} rows[] = {
		{ 0, "ES256", "dpop+jwt", NULL, NULL, "POST", "ok", "a valid ES256 proof" },
		{ 1, "PS256", "dpop+jwt", NULL, NULL, "POST", "ok", "a valid PS256 proof" },
		{ 0, "ES256", "dpop+jwt", NULL, "{\"htu\":\"https://GW.example.com:443/mcp/?q=1#f\"}", "POST", "ok",
		    "htu with another case of host, the default port, a slash, a query and a fragment" },
		{ 0, "ES256", "dpop+jwt", NULL, NULL, "GET", "DPoP proof for another method (htm)", "htm POST on a GET" },
		{ 0, "ES256", "dpop+jwt", NULL, "{\"htu\":\"https://gw.example.com/other\"}", "POST",
		    "DPoP proof for another URL (htu)", "htu of another path" },
		{ 0, "ES256", "dpop+jwt", NULL, "{\"htu\":\"http://gw.example.com/mcp\"}", "POST",
		    "DPoP proof for another URL (htu)", "htu of another scheme" },
		{ 0, "ES256", "dpop+jwt", NULL, "{\"iat\":1759999900}", "POST", "DPoP proof iat out of the accepted window",
		    "iat 100 s ago (window 60 s)" },
		{ 0, "ES256", "dpop+jwt", NULL, "{\"iat\":1760000100}", "POST", "DPoP proof iat out of the accepted window",
		    "iat 100 s ahead" },
		{ 0, "ES256", "dpop+jwt", NULL, "{\"iat\":\"now\"}", "POST", "DPoP proof without an iat", "iat not a number" },
		{ 0, "ES256", "dpop+jwt", NULL, "{\"jti\":\"\"}", "POST", "DPoP proof without a usable jti", "an empty jti" },
		{ 0, "ES256", "dpop+jwt", NULL, "{\"ath\":\"x\"}", "POST", "DPoP proof for another access token (ath)",
		    "ath of another token" },
		{ 0, "ES256", "dpop+jwt", NULL, "{\"ath\":null}", "POST", "DPoP proof for another access token (ath)",
		    "no ath" },
		{ 0, "ES256", "JWT", NULL, NULL, "POST", "DPoP proof typ is not dpop+jwt", "typ JWT" },
		{ 0, "ES256", NULL, NULL, NULL, "POST", "DPoP proof typ is not dpop+jwt", "no typ" },
		{ 0, "ES256", "dpop+jwt", "none", NULL, "POST", "DPoP proof carries no usable public key", "no jwk" },
		{ 0, "ES256", "dpop+jwt", "private", NULL, "POST", "DPoP proof carries no usable public key",
		    "a jwk with its private key" },
		{ 1, "RS256", "dpop+jwt", NULL, NULL, "POST", "JWS algorithm not accepted", "RS256, not in dpop-algs" },
		/* The key is in the worker's cache by now: the header's own members still count. */
		{ 0, "ES256", "dpop+jwt", "use-enc", NULL, "POST", "DPoP proof carries no usable public key",
		    "a known key whose jwk says use enc" },
		{ 0, "ES256", "dpop+jwt", "alg-rs256", NULL, "POST", "DPoP proof carries no usable public key",
		    "a known key whose jwk says alg RS256" },
		{ 0, "ES256", "dpop+jwt", NULL, NULL, "POST", "ok", "the known key again, as it is: accepted" },
	};
	struct config *cfg = fixture_config("[gateway]\nresource = " RES "\n[auth]\nissuer = https://idp.example.com\n"
	    "dpop-algs = ES256 PS256\ndpop-window = 60\n");
	struct dpop_proof p, q;
	char *t, *pl;
	size_t i;

	if (cfg == NULL) {
		ok(0, "configuration loads");
		return;
	}
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		pl = payload_with(rows[i].over);
		t = proof_of(rows[i].key ? rsa : ec, rows[i].alg, rows[i].typ, rows[i].jwk, pl);
		is_str(check(cfg, t, rows[i].method, &p), rows[i].want, "%s", rows[i].what);
		free(t);
		free(pl);
	}
	is_str(check(cfg, NULL, "POST", &p), "DPoP proof missing", "no DPoP header");
	/* Two DPoP headers joined by the front: no JWS. */
	pl = payload_with(NULL);
	t = proof_of(ec, "ES256", "dpop+jwt", NULL, pl);
	{
		size_t n = 2 * strlen(t) + 3;
		char *two = malloc(n);

		snprintf(two, n, "%s, %s", t, t);
		is_str(check(cfg, two, "POST", &p), "not a compact JWS", "two DPoP headers");
		free(two);
	}
	/* The same proof twice gives the same name; the key is the proof key's thumbprint. */
	is_str(check(cfg, t, "POST", &p), "ok", "a proof");
	is_str(check(cfg, t, "POST", &q), "ok", "the same proof again (its replay is replay.c's)");
	ok(memcmp(p.seen, q.seen, sizeof(p.seen)) == 0 && strcmp(p.jkt, q.jkt) == 0 && strlen(p.jkt) == 43,
	    "the same name and thumbprint (%s)", p.jkt);
	ok(p.until_ms == ((int64_t)NOW + 60) * 1000 + 999, "remembered until iat + dpop-window");
	{
		cjose_err err;
		char *text = cjose_jwk_to_json(ec, false, &err), thumb[JWS_B64_SHA256];
		json_t *jwk = json_loads(text, 0, NULL);

		ok(jws_thumbprint(jwk, thumb) == 0 && strcmp(thumb, p.jkt) == 0, "jkt: the RFC 7638 thumbprint of the key");
		free(text);
		json_decref(jwk);
	}
	free(t);
	free(pl);
	config_unref(cfg);
}

static void
test_replay(void)
{
	size_t size = replay_region_def.size, i;
	void *region = calloc(1, size);
	struct replay *r = region;
	unsigned char k[REPLAY_KEY_BYTES] = { 0 }, other[REPLAY_KEY_BYTES];
	int64_t now = (int64_t)NOW * 1000;
	int refused = 0, fresh_refused = 0;

	state_region_make(&replay_region_def, region, size, 0);
	memcpy(k, "proof-one-------", REPLAY_KEY_BYTES);
	is_int(replay_once(r, k, now + 60000, now), 1, "a proof not seen: 1");
	is_int(replay_once(r, k, now + 60000, now + 1000), 0, "the same proof again: 0 (a replay)");
	is_int(replay_once(r, k, now + 60000, now + 61000), 1, "after it went stale: forgotten (it is refused as stale anyway)");
	/* A flood into one set (the same two first bytes): 40 proofs, 16 ways. */
	for (i = 0; i < 40; i++) {
		memcpy(other, k, sizeof(other));
		other[2] = (unsigned char)i;
		other[3] = 0x55;
		refused += replay_once(r, other, now + 1000 * (int64_t)i + 60000, now) != 1;
	}
	is_int(refused, 0, "40 proofs into a set of 16, each newer than the last: all recorded");
	memcpy(other, k, sizeof(other));
	other[2] = 0;
	other[3] = 0x55;
	is_int(replay_once(r, other, now + 60000, now), 0, "the first of them again, evicted since: refused by the floor");
	for (i = 0; i < 5; i++) {
		other[4] = (unsigned char)(i + 1);
		fresh_refused += replay_once(r, other, now + 100000, now) != 1;
	}
	is_int(fresh_refused, 0, "newer proofs of that set: recorded");
	is_int(replay_once(NULL, k, now, now), -1, "no region: -1 (nobody can tell)");
	memset(region, 0xff, 64);
	is_int(replay_once(r, k, now + 60000, now), -1, "a region written over: -1");
	free(region);
}

static void
test_schemes(void)
{
	const char *tok;
	size_t len;
	int scheme = 0;
	char hp[64];

	ok(auth_parse_credentials("DPoP abc.def", &scheme, &tok, &len) == 0 && scheme == AUTH_DPOP && len == 7,
	    "DPoP scheme");
	ok(auth_parse_credentials("dpop abc", &scheme, &tok, &len) == 0 && scheme == AUTH_DPOP, "DPoP in any case");
	ok(auth_parse_credentials("Bearer abc", &scheme, &tok, &len) == 0 && scheme == AUTH_BEARER, "Bearer scheme");
	ok(auth_parse_bearer("DPoP abc", &tok, &len) < 0, "auth_parse_bearer refuses DPoP");
	ok(auth_parse_credentials("DPoPabc", &scheme, &tok, &len) < 0, "no blank after the scheme");
	ok(auth_parse_credentials("DPoP abc, DPoP def", &scheme, &tok, &len) < 0, "two headers joined");
	url_host_port("https://user:pw@idp.example.com/introspect?k=secret", hp, sizeof(hp));
	is_str(hp, "idp.example.com:443", "host and port: the scheme's port, never userinfo or query");
	url_host_port("http://a@b@[::1]:8080?x", hp, sizeof(hp));
	is_str(hp, "[::1]:8080", "host and port: IPv6 in brackets, the last '@' ends userinfo");
	url_host_port("http://h.invalid", hp, sizeof(hp));
	is_str(hp, "h.invalid:80", "host and port: http's 80");
	url_host_port("ftp://h/", hp, sizeof(hp));
	is_str(hp, "an unparsable URL", "host and port: another scheme");
	ok(url_same_resource("https://gw.example.com/mcp", RES), "htu: the resource");
	ok(url_same_resource("HTTPS://gw.example.com:443/mcp/?x=1", RES), "htu: case, default port, slash, query");
	ok(!url_same_resource("https://gw.example.com:8443/mcp", RES), "htu: another port");
	ok(!url_same_resource("https://gw.example.com/MCP", RES), "htu: the path's case counts");
	ok(!url_same_resource("gw.example.com/mcp", RES), "htu: not absolute");
	ok(!url_same_resource("https://gw.example.com/mcp/x", RES), "htu: a longer path");
}

/* A valid proof for POST RES with TOKEN, made now. */
static char *
proof_now(int64_t now_ms)
{
	char over[64], *pl, *t;

	snprintf(over, sizeof(over), "{\"iat\":%lld}", (long long)(now_ms / 1000));
	pl = payload_with(over);
	t = proof_of(ec, "ES256", "dpop+jwt", NULL, pl);
	free(pl);
	return t;
}

/* The binding and the replay through auth: a bound token cached with its cnf.jkt. */
static void
test_auth(void)
{
	struct config *cfg = fixture_config("[gateway]\nresource = " RES "\n[auth]\nissuer = https://idp.example.com\n"
	    "introspection-endpoint = http://127.0.0.1:1/introspect\ntimeout-ms = 500\n");
	size_t csize = token_cache_region_size(64), rsize = replay_region_def.size;
	void *cregion = calloc(1, csize), *rregion = calloc(1, rsize);
	unsigned char key[TC_KEY_BYTES];
	int64_t now = clock_wall_ms();
	char ch[1024], *t = proof_now(now), *t2 = proof_now(now);
	const struct dpop_req r = { t, "POST", TOKEN, strlen(TOKEN), now };
	struct gw_error err = { GW_OK, 0, "" };
	struct auth_env env;
	struct dpop_proof p;
	struct claims c;

	state_region_make(&token_cache_region_def, cregion, csize, 0);
	state_region_make(&replay_region_def, rregion, rsize, 0);
	memset(&env, 0, sizeof(env));
	env.ix = introspect_new();
	env.tokens = token_cache_attach(cregion, csize);
	env.digest_key = dkey;
	env.replay = rregion;
	if (cfg == NULL || dpop_check(cfg, dkey, NULL, &r, &p, &err) < 0) {
		ok(0, "the test's configuration and proof (%s)", err.detail);
		goto out;
	}
	memset(&c, 0, sizeof(c));
	snprintf(c.subject, sizeof(c.subject), "alice");
	memcpy(c.jkt, p.jkt, sizeof(c.jkt));
	c.exp = now / 1000 + 600;
	auth_cache_key(dkey, cfg, TOKEN, strlen(TOKEN), key);
	token_cache_fill(env.tokens, key, now, &c, now + 60000);
	is_int(authreq(&env, cfg, "DPoP " TOKEN, t, ch, sizeof(ch)), 0, "a bound token with its proof: accepted");
	is_int(authreq(&env, cfg, "DPoP " TOKEN, t, ch, sizeof(ch)), 401, "the same proof again: 401");
	ok(strstr(ch, "DPoP ") == ch && strstr(ch, "error=\"invalid_dpop_proof\"") && strstr(ch, "replayed"),
	    "... a DPoP challenge: invalid_dpop_proof, replayed (%s)", ch);
	is_int(authreq(&env, cfg, "Bearer " TOKEN, NULL, ch, sizeof(ch)), 401, "the bound token as Bearer: 401");
	ok(strstr(ch, "Bearer ") == ch && strstr(ch, ", DPoP algs=\"") && strstr(ch, "error=\"invalid_token\""),
	    "... Bearer invalid_token, then a DPoP challenge (%s)", ch);
	/* The replay region written over, no Redis: nobody can tell whether it was seen. */
	memset(rregion, 0xff, 64);
	is_int(authreq(&env, cfg, "DPoP " TOKEN, t2, ch, sizeof(ch)), 503,
	    "a new proof, the replay region written over and no Redis: 503 (fail closed)");
out:
	free(t);
	free(t2);
	token_cache_detach(env.tokens);
	introspect_free(env.ix);
	free(cregion);
	free(rregion);
	config_unref(cfg);
}

static void
test_claims(void)
{
	const struct claims_names names = { "scope", "groups", "tenant" };
	struct claims c;
	struct gw_error err;
	json_t *j;

	j = json_loads("{\"sub\":\"a\",\"cnf\":{\"jkt\":\"0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I\"}}", 0, NULL);
	ok(claims_read(j, &names, &c, &err) == 0 && strcmp(c.jkt, "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I") == 0,
	    "cnf.jkt read");
	json_decref(j);
	j = json_loads("{\"sub\":\"a\",\"cnf\":{\"jkt\":\"short\"}}", 0, NULL);
	ok(claims_read(j, &names, &c, &err) < 0 && strcmp(err.detail, "token cnf.jkt unusable") == 0, "a cnf.jkt too short: refused");
	json_decref(j);
	j = json_loads("{\"sub\":\"a\",\"cnf\":{\"x5t#S256\":\"abc\"}}", 0, NULL);
	ok(claims_read(j, &names, &c, &err) == 0 && c.jkt[0] == '\0', "no cnf.jkt: not bound");
	json_decref(j);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	secret_init();
	secret_random_bytes(dkey, sizeof(dkey));
	keycache = jws_keycache_new();
	srand(7);
	ec = cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_256, NULL);
	rsa = cjose_jwk_create_RSA_random(2048, NULL, 0, NULL);
	if (!ec || !rsa) {
		printf("Bail out! cjose made no keys\n");
		return 1;
	}
	run_case(test_proofs);
	run_case(test_replay);
	run_case(test_schemes);
	run_case(test_auth);
	run_case(test_claims);
	jws_keycache_free(keycache);
	cjose_jwk_release(ec);
	cjose_jwk_release(rsa);
	return done_testing();
}
