/* Unit tests: JWS and JWK sets (jws.c), JWT access tokens' acceptance (jwt.c) and the
 * JWK set's mirror (jwks.c): the algorithms refused, the keys a set keeps, a signature
 * checked with the key its kid names, the RFC 7638 thumbprint, typ and the claims with
 * clock skew, and the keys fetched again for an unknown kid at most once per
 * jwks-min-interval, served stale while their source fails. Tokens are signed here with
 * cjose (the test's own keys), or written by hand for what no signer makes. */
#include "autoconf.h"

#include <cjose/cjose.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "jwks.h"
#include "jws.h"
#include "jwt.h"
#include "secret.h"
#include "tap.h"

#define NOW	1760000000	/* seconds */
#define ISS	"https://idp.example.com"
#define AUD	"https://gw.example.com/mcp"

static cjose_jwk_t *rsa, *rsa2, *ec;

/* The public JWK of k with kid, for use (alg when not NULL), as JSON text (freed by caller). */
static char *
pub_use(cjose_jwk_t *k, const char *kid, const char *alg, const char *use)
{
	cjose_err err;
	char *text = cjose_jwk_to_json(k, false, &err), *out;
	json_t *j = json_loads(text, 0, NULL);

	free(text);
	json_object_set_new(j, "kid", json_string(kid));
	json_object_set_new(j, "use", json_string(use));
	if (alg)
		json_object_set_new(j, "alg", json_string(alg));
	out = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return out;
}

static char *
pub(cjose_jwk_t *k, const char *kid, const char *alg)
{
	return pub_use(k, kid, alg, "sig");
}

/* {"keys":[a, b]} (b may be NULL). */
static char *
set_of(char *a, char *b)
{
	static char doc[16384];

	snprintf(doc, sizeof(doc), "{\"keys\":[%s%s%s]}", a, b ? "," : "", b ? b : "");
	free(a);
	free(b);
	return doc;
}

/* A JWS of header and payload (JSON texts) signed with k by cjose. */
static char *
sign(cjose_jwk_t *k, const char *header, const char *payload)
{
	cjose_err err;
	json_t *h = json_loads(header, 0, NULL);
	cjose_jws_t *jws = cjose_jws_sign(k, (cjose_header_t *)h, (const uint8_t *)payload, strlen(payload), &err);
	const char *ser = NULL;
	char *out;

	if (jws == NULL || !cjose_jws_export(jws, &ser, &err)) {
		json_decref(h);
		return strdup("signing.failed.here");
	}
	out = strdup(ser);
	cjose_jws_release(jws);
	json_decref(h);
	return out;
}

/* A JWS written by hand: header and payload texts, and the signature part as given. */
static char *
craft(const char *header, const char *payload, const char *sig)
{
	char h[2048], p[2048], *out = malloc(4200);

	secret_b64url(header, strlen(header), h, sizeof(h));
	secret_b64url(payload, strlen(payload), p, sizeof(p));
	snprintf(out, 4200, "%s.%s.%s", h, p, sig);
	return out;
}

/* A payload accepted at NOW, with changes: extra members appended (they come last and
 * must not repeat one of these). */
static const char *
claims_with(const char *extra)
{
	static char text[2048];

	snprintf(text, sizeof(text), "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"sub\":\"alice\","
	    "\"client_id\":\"cli\",\"scope\":\"mcp:tools\",\"iat\":%d%s%s}", NOW - 10,
	    extra && *extra ? "," : "", extra ? extra : "");
	return text;
}

static const char *
exp_ok(void)
{
	static char text[64];

	snprintf(text, sizeof(text), "\"exp\":%d", NOW + 86400);
	return text;
}

static void
test_algs(void)
{
	struct gw_error err = { GW_OK, 0, "" };
	unsigned bit = 0;
	char names[128];

	static const struct {
		const char *name, *why;
	} refused[] = {
		{ "none", "unsigned" }, { "HS256", "HMAC" }, { "EdDSA", "not supported" }, { "RS1", "unknown" },
	};
	size_t i;
	int rc;

	ok(jws_alg_parse("PS256", &bit, &err) == 0 && bit == JWS_PS256, "PS256 is an algorithm");
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		err.detail[0] = '\0';
		rc = jws_alg_parse(refused[i].name, &bit, &err);
		ok(rc < 0 && strstr(err.detail, refused[i].why), "%s refused: %s", refused[i].name, err.detail);
	}
	jws_alg_names(JWS_RS256 | JWS_ES256, names, sizeof(names));
	is_str(names, "RS256 ES256", "names of an allow-list");
}

static void
test_keys(void)
{
	struct gw_error err;
	char doc[16384], *r = pub(rsa, "r1", NULL), *e = pub(ec, "e1", "ES256");
	cjose_jwk_t *small = cjose_jwk_create_RSA_random(1024, NULL, 0, NULL);
	char *weak = pub(small, "weak", NULL), *enc = pub_use(rsa2, "enc", NULL, "enc"), *mismatch = pub(rsa2, "mis", "ES256");
	struct jws_keys *ks;

	/* A symmetric key, a weak RSA key, an encryption key, a key whose alg does not fit it,
	 * and garbage are left out; the RSA and EC signing keys stay. */
	snprintf(doc, sizeof(doc), "{\"keys\":[{\"kty\":\"oct\",\"k\":\"c2VjcmV0\",\"kid\":\"o\"},%s,%s,%s,"
	    "%s,{\"kty\":\"RSA\",\"n\":\"AQAB\"},7,%s]}", r, weak, mismatch, enc, e);
	ks = jws_keys_parse(doc, strlen(doc), &err);
	is_int(jws_keys_count(ks), 2, "a JWK set keeps its usable signing keys only");
	jws_keys_free(ks);
	/* An '=' inside a coordinate: cjose's decoder would abort the process on it. */
	snprintf(doc, sizeof(doc), "{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"JAGfxbySCVFP8nLYwuEDVsv1HNkvGwM7KNqvCjqPPIw\","
	    "\"y\":\"TSpwi2did=3CyEqO9VXmOLzwhkRB_MYDvHCeHsFB0Sc\"},%s]}", strchr(doc, '{') ? "{\"kty\":\"oct\",\"k\":\"AA\"}" : "");
	ks = jws_keys_parse(doc, strlen(doc), &err);
	ok(ks && jws_keys_count(ks) == 0, "a key with '=' inside a coordinate is left out");
	jws_keys_free(ks);
	ks = jws_keys_parse("{\"keys\":[]}", 11, &err);
	ok(ks && jws_keys_count(ks) == 0 && strstr(err.detail, "no usable"),
	    "an empty set is a set without a usable key (what an issuer that withdrew every key publishes): %s",
	    err.detail);
	jws_keys_free(ks);
	ok(jws_keys_parse("[1]", 3, &err) == NULL && strstr(err.detail, "not a JWK set"),
	    "a document that is not a set is refused: %s", err.detail);
	free(r);
	free(e);
	free(weak);
	free(enc);
	free(mismatch);
	cjose_jwk_release(small);
}

/* Parses and verifies tok against ks: "ok", "nokey", "badsig", or the parse's reason. */
static const char *
check(const char *tok, unsigned algs, const struct jws_keys *ks)
{
	struct jws *j;
	static struct gw_error err;	/* its detail is returned */
	enum jws_verdict v;

	if (jws_parse(tok, strlen(tok), algs, &j, &err) < 0)
		return err.detail;
	v = jws_verify(j, ks);
	jws_free(j);
	return v == JWS_OK ? "ok" : v == JWS_NOKEY ? "nokey" : "badsig";
}

static void
test_verify(void)
{
	struct gw_error err;
	char *doc = set_of(pub(rsa, "r1", NULL), pub(ec, "e1", "ES256")), *t, *u, sig[200];
	struct jws_keys *ks = jws_keys_parse(doc, strlen(doc), &err);
	const char *payload = claims_with(exp_ok());
	unsigned char raw[66];

	t = sign(rsa, "{\"alg\":\"RS256\",\"kid\":\"r1\",\"typ\":\"at+jwt\"}", payload);
	is_str(check(t, JWS_ALGS_ALL, ks), "ok", "RS256 with the key its kid names");
	ok(jws_looks_like(t, strlen(t)), "an RS256 JWT looks like a JWS");
	ok(!jws_looks_like("2YotnFZFEjr1zCsicMWpAA", 22), "an opaque token does not");
	ok(!jws_looks_like("a.b.c", 5), "three parts whose header does not begin eyJ do not");
	ok(!jws_looks_like("eyJhbGciOiJSUzI1NiJ9.e30", 24), "two parts do not");
	is_str(check(t, JWS_ES256, ks), "JWS algorithm not accepted", "RS256 outside the allow-list");
	/* Another payload under the same signature. */
	u = craft("{\"alg\":\"RS256\",\"kid\":\"r1\",\"typ\":\"at+jwt\"}", claims_with("\"exp\":9999999999"),
	    strrchr(t, '.') + 1);
	is_str(check(u, JWS_ALGS_ALL, ks), "badsig", "a payload changed under its signature");
	free(u);
	free(t);
	/* Signed here: the key, the header, the verdict. */
	struct {
		cjose_jwk_t **key;
		const char *header, *want, *what;
	} signed_rows[] = {
		{ &rsa, "{\"alg\":\"PS256\",\"kid\":\"r1\"}", "ok", "PS256 with an RSA key without alg" },
		{ &ec, "{\"alg\":\"ES256\",\"kid\":\"e1\"}", "ok", "ES256 with the P-256 key" },
		{ &rsa, "{\"alg\":\"RS256\"}", "ok", "no kid: each key that fits the algorithm is tried" },
		{ &rsa2, "{\"alg\":\"RS256\",\"kid\":\"r2\"}", "nokey", "a kid the set lacks" },
		{ &rsa2, "{\"alg\":\"RS256\",\"kid\":\"r1\"}", "badsig", "another key under a published kid" },
		{ &rsa, "{\"alg\":\"RS256\",\"kid\":\"e1\"}", "nokey", "RS256 naming the EC key: no key fits" },
	};
	/* Written by hand: the header, the payload (NULL: the accepted one), the signature part. */
	static const struct {
		const char *header, *payload, *sig, *want, *what;
	} crafted[] = {
		{ "{\"alg\":\"none\",\"kid\":\"r1\"}", NULL, "", "not a compact JWS", "alg none with an empty signature" },
		{ "{\"alg\":\"none\",\"kid\":\"r1\"}", NULL, "AAAA", "JWS algorithm not accepted", "alg none" },
		{ "{\"alg\":\"HS256\",\"kid\":\"r1\"}", NULL, "AAAA", "JWS algorithm not accepted",
		    "HS256 (a public key as an HMAC secret)" },
		{ "{\"alg\":\"RS256\",\"kid\":\"r1\",\"crit\":[\"exp\"],\"exp\":1}", NULL, "AAAA",
		    "JWS header has critical extensions", "crit" },
		{ "{\"alg\":\"HS256\",\"alg\":\"RS256\",\"kid\":\"r1\"}", NULL, "AAAA", "JWS header is not a JSON object",
		    "a header with alg twice" },
		{ "{\"alg\":\"RS256\"}", "[1]", "AAAA", "JWS payload is not a JSON object", "a payload that is not an object" },
		{ "{\"alg\":\"RS256\"}", NULL, "AAAAA", "JWS signature is not base64url", "a signature of 4n + 1 characters" },
	};
	size_t i;

	for (i = 0; i < sizeof(signed_rows) / sizeof(signed_rows[0]); i++) {
		t = sign(*signed_rows[i].key, signed_rows[i].header, payload);
		is_str(check(t, JWS_ALGS_ALL, ks), signed_rows[i].want, "%s", signed_rows[i].what);
		free(t);
	}
	for (i = 0; i < sizeof(crafted) / sizeof(crafted[0]); i++) {
		t = craft(crafted[i].header, crafted[i].payload ? crafted[i].payload : payload, crafted[i].sig);
		is_str(check(t, JWS_ALGS_ALL, ks), crafted[i].want, "%s", crafted[i].what);
		free(t);
	}
	t = sign(ec, "{\"alg\":\"ES256\",\"kid\":\"e1\"}", payload);
	/* The same signature with a leading zero byte: not the length ES256 has. */
	secret_unb64url(strrchr(t, '.') + 1, strlen(strrchr(t, '.') + 1), raw + 1, 64);
	raw[0] = 0;
	secret_b64url(raw, 65, sig, sizeof(sig));
	u = craft("{\"alg\":\"ES256\",\"kid\":\"e1\"}", payload, sig);
	is_str(check(u, JWS_ALGS_ALL, ks), "JWS signature of the wrong length", "an ES256 signature of 65 bytes");
	free(u);
	free(t);
	is_str(check("a.b", JWS_ALGS_ALL, ks), "not a compact JWS", "two parts");
	is_str(check("a.b.c.d", JWS_ALGS_ALL, ks), "not a compact JWS", "four parts");
	is_str(check("a+b.c.d", JWS_ALGS_ALL, ks), "not a compact JWS", "a character outside base64url");
	jws_keys_free(ks);
}

static void
test_thumbprint(void)
{
	/* RFC 7638 §3.1. */
	json_t *k = json_loads("{\"kty\":\"RSA\",\"n\":\"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPF"
	    "FxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY36"
	    "8QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ"
	    "-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw\",\"e\":\"AQAB\",\"alg\":\"RS256\",\"kid\":\"2011-04-29\"}", 0, NULL);
	char out[JWS_B64_SHA256];

	ok(jws_thumbprint(k, out) == 0, "RFC 7638 example: a thumbprint");
	is_str(out, "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs", "RFC 7638 example: its value");
	json_object_del(k, "e");
	ok(jws_thumbprint(k, out) < 0, "a key without e has none");
	json_decref(k);
}

static void
test_header(void)
{
	static const struct {
		const char *typ;	/* NULL: none */
		int strict, lenient;
	} rows[] = {
		{ "at+jwt", 1, 1 }, { "application/at+jwt", 1, 1 }, { "AT+JWT", 1, 1 }, { NULL, 0, 1 },
		{ "JWT", 0, 1 }, { "dpop+jwt", 0, 0 }, { "JOSE", 0, 0 },
	};
	struct config *strict = fixture_config("[gateway]\nresource = " AUD "\n[auth]\nissuer = " ISS "\nverify = jwt\n");
	struct config *lenient = fixture_config("[gateway]\nresource = " AUD "\n[auth]\nissuer = " ISS
	    "\nverify = jwt\njwt-typ = lenient\n");
	char header[128], *t;
	struct gw_error err;
	struct jws *j;
	size_t i;

	for (i = 0; strict && lenient && i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i].typ)
			snprintf(header, sizeof(header), "{\"alg\":\"RS256\",\"typ\":\"%s\"}", rows[i].typ);
		else
			snprintf(header, sizeof(header), "{\"alg\":\"RS256\"}");
		t = craft(header, "{}", "AAAA");
		if (jws_parse(t, strlen(t), JWS_ALGS_ALL, &j, &err) < 0) {
			ok(0, "typ %s parses", rows[i].typ);
			free(t);
			continue;
		}
		is_int(jwt_check_header(strict, j, &err) == 0, rows[i].strict, "typ %s, strict", rows[i].typ ? rows[i].typ : "absent");
		is_int(jwt_check_header(lenient, j, &err) == 0, rows[i].lenient, "typ %s, lenient", rows[i].typ ? rows[i].typ : "absent");
		jws_free(j);
		free(t);
	}
	config_unref(strict);
	config_unref(lenient);
}

static void
test_claims(void)
{
	char later[64], early[64], soon[64];
	static struct {
		const char *extra, *reason;	/* reason NULL: accepted */
	} rows[] = {
		{ NULL, NULL },
		{ NULL, "token has no exp" },
		{ NULL, "token expired" },
		{ NULL, NULL },	/* expired 30 s ago: within the 60 s skew */
		{ NULL, "token not yet valid" },
		{ NULL, "token issued in the future" },
		{ "\"exp\":\"tomorrow\"", "token time claim is not a number" },
	};
	struct config *cfg = fixture_config("[gateway]\nresource = " AUD "\n[auth]\nissuer = " ISS
	    "\nverify = jwt\nclock-skew = 60\naudiences = api://gw\nscope-claim = scp\ngroups-claim = roles\n");
	struct claims c;
	struct gw_error err;
	json_t *j;
	size_t i;
	int rc;

	if (cfg == NULL) {
		ok(0, "configuration loads");
		return;
	}
	snprintf(later, sizeof(later), "\"exp\":%d", NOW + 600);
	snprintf(early, sizeof(early), "\"exp\":%d", NOW - 61);
	snprintf(soon, sizeof(soon), "\"exp\":%d", NOW - 30);
	rows[0].extra = later;
	rows[1].extra = "\"jti\":\"x\"";
	rows[2].extra = early;
	rows[3].extra = soon;
	{
		static char nbf[96], iat[96];

		snprintf(nbf, sizeof(nbf), "\"exp\":%d,\"nbf\":%d", NOW + 600, NOW + 61);
		snprintf(iat, sizeof(iat), "\"exp\":%d,\"jti\":\"y\",\"nbf\":%d", NOW + 600, NOW);
		rows[4].extra = nbf;
		rows[5].extra = iat;
	}
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		err.detail[0] = '\0';
		j = json_loads(claims_with(rows[i].extra), 0, NULL);
		if (i == 5)	/* iat in the future beyond the skew */
			json_object_set_new(j, "iat", json_integer(NOW + 120));
		rc = jwt_check_claims(cfg, j, NOW, &c, &err);
		if (rows[i].reason == NULL)
			ok(rc == 0, "row %zu accepted (%s)", i, err.detail);
		else
			ok(rc < 0 && err.code == GW_EBADTOKEN && strcmp(err.detail, rows[i].reason) == 0,
			    "row %zu refused: %s (got %s)", i, rows[i].reason, rc < 0 ? err.detail : "accepted");
		json_decref(j);
	}
	j = json_loads(claims_with(later), 0, NULL);
	json_object_set_new(j, "iss", json_string("https://evil.example.com"));
	ok(jwt_check_claims(cfg, j, NOW, &c, &err) < 0 && !strcmp(err.detail, "token issued by another issuer"), "another issuer");
	json_object_del(j, "iss");
	ok(jwt_check_claims(cfg, j, NOW, &c, &err) < 0 && !strcmp(err.detail, "token issued by another issuer"), "no issuer");
	json_object_set_new(j, "iss", json_string(ISS "/"));
	ok(jwt_check_claims(cfg, j, NOW, &c, &err) == 0, "the issuer with a trailing slash");
	json_object_set_new(j, "aud", json_string("https://other.example.com/mcp"));
	ok(jwt_check_claims(cfg, j, NOW, &c, &err) < 0 && !strcmp(err.detail, "token not issued for this resource"), "another audience");
	json_object_set_new(j, "aud", json_pack("[s, s]", "https://other.example.com/mcp", "api://gw"));
	ok(jwt_check_claims(cfg, j, NOW, &c, &err) == 0, "an audience of [auth] audiences, in an array");
	json_object_del(j, "aud");
	ok(jwt_check_claims(cfg, j, NOW, &c, &err) < 0, "no audience");
	json_object_set_new(j, "aud", json_string(AUD));
	/* Entra-style claims: scp, roles, azp, and a subject that is not the client. */
	json_object_del(j, "client_id");
	json_object_set_new(j, "azp", json_string("app-1"));
	json_object_set_new(j, "scp", json_string("mcp:tools mcp:read"));
	json_object_set_new(j, "roles", json_pack("[s, s]", "ops", "engineering"));
	ok(jwt_check_claims(cfg, j, NOW, &c, &err) == 0 && !strcmp(c.scope, "mcp:tools mcp:read") &&
	    !strcmp(c.groups, "ops engineering") && !strcmp(c.client_id, "app-1") && !strcmp(c.subject, "alice") &&
	    !c.machine && c.exp == NOW + 600, "scopes from scp, groups from roles, the client from azp");
	json_object_set_new(j, "scp", json_pack("[s, s]", "a", "b"));
	json_object_set_new(j, "sub", json_string("app-1"));
	ok(jwt_check_claims(cfg, j, NOW, &c, &err) == 0 && !strcmp(c.scope, "a b") && c.machine,
	    "scopes as an array; the client as subject is a machine token (RFC 9068 §2.2)");
	json_decref(j);
	config_unref(cfg);
}

/* The JWK set's health record (METRICS_DEP_JWKS) at now (ms). */
static int
jwks_health(struct metrics *m, int64_t now)
{
	char detail[METRICS_DETAIL_MAX];
	int64_t since;

	return metrics_dep_state(m, METRICS_DEP_JWKS, now / 1000, &since, detail, sizeof(detail));
}

/* The JWK set mirror jwt_verify uses in test_rotation and test_withdrawn: env over region
 * (initialized here), a metrics region of its own (*mregion) for the health record and an
 * introspection client; the configuration verifies JWTs with the JWK set file path
 * (jwks-min-interval 30 s, jwks-ttl 600 s). NULL, a failed check, when it does not load. */
static struct config *
jwks_setup(struct jwks_env *env, void *region, void **mregion, const char *path)
{
	char conf[512];
	struct config *cfg;

	state_region_make(&jwks_region_def, region, jwks_region_def.size, 0);
	*mregion = calloc(1, metrics_region_def.size);
	state_region_make(&metrics_region_def, *mregion, metrics_region_def.size, 0);
	*env = (struct jwks_env){ NULL, NULL, region, metrics_attach(*mregion, metrics_region_def.size) };
	snprintf(conf, sizeof(conf), "[gateway]\nresource = " AUD "\n[auth]\nissuer = " ISS "\nverify = jwt\n"
	    "jwks-uri = %s\njwks-min-interval = 30\njwks-ttl = 600\n", path);
	if ((cfg = fixture_config(conf)) == NULL) {
		ok(0, "configuration with a JWK set file loads");
		return NULL;
	}
	env->ix = introspect_new();
	return cfg;
}

/* jwt_verify of tok at now_ms: 0 accepted, 1 refused (GW_EBADTOKEN), -1 when no keys
 * can be had. */
static int
verify_at(struct jwks_view *v, const struct jwks_env *env, const struct config *cfg, const char *tok,
    int64_t now_ms, struct claims *c, struct gw_error *err)
{
	const struct jwt_token t = { tok, strlen(tok), "t", now_ms };

	if (jwt_verify(v, env, cfg, &t, c, err) == 0)
		return 0;
	return err->code == GW_EBADTOKEN ? 1 : -1;
}

/* jwt_verify through a JWK set file and a mirror region: the keys fetched once, again
 * for an unknown kid at most once per jwks-min-interval, stale while the file is gone;
 * each fetch's outcome recorded for /mcp/health. */
static void
test_rotation(void)
{
	char *set1 = set_of(pub(rsa, "r1", NULL), NULL), *t1, *t2, *t3;
	const char *path = fixture_file("keys.json", set1);
	size_t size = jwks_region_def.size;
	void *region = calloc(1, size), *mregion;
	struct jwks_view v = { 0 };
	struct jwks_env env;
	struct gw_error err = { GW_OK, 0, "" };
	struct claims c;
	struct config *cfg;
	int64_t now = (int64_t)NOW * 1000;

	if ((cfg = jwks_setup(&env, region, &mregion, path)) == NULL)
		return;
	t1 = sign(rsa, "{\"alg\":\"RS256\",\"kid\":\"r1\",\"typ\":\"at+jwt\"}", claims_with(exp_ok()));
	t2 = sign(rsa2, "{\"alg\":\"RS256\",\"kid\":\"r2\",\"typ\":\"at+jwt\"}", claims_with(exp_ok()));
	t3 = sign(ec, "{\"alg\":\"ES256\",\"kid\":\"e3\",\"typ\":\"at+jwt\"}", claims_with(exp_ok()));
	is_int(jwks_health(env.metrics, now), METRICS_UNKNOWN, "health: the JWK set unknown before a fetch");
	is_int(verify_at(&v, &env, cfg, t1, now, &c, &err), 0, "a token of the published key");
	is_int(jwks_health(env.metrics, now), METRICS_UP, "health: up after the fetch");
	ok(!strcmp(c.subject, "alice") && !strcmp(c.scope, "mcp:tools"), "its claims");
	/* Rotation: the file now holds r2 as well. The first unknown kid fetches again. */
	fixture_file("keys.json", set_of(pub(rsa, "r1", NULL), pub(rsa2, "r2", NULL)));
	is_int(verify_at(&v, &env, cfg, t2, now + 1000, &c, &err), 0,
	    "a key added at the issuer: fetched for its unknown kid, accepted");
	/* Another rotation within jwks-min-interval: not fetched, refused. */
	fixture_file("keys.json", set_of(pub(rsa2, "r2", NULL), pub(ec, "e3", "ES256")));
	is_int(verify_at(&v, &env, cfg, t3, now + 2000, &c, &err), 1,
	    "another unknown kid within jwks-min-interval: no fetch, refused");
	is_str(err.detail, "token signed with a key the issuer does not publish", "its reason");
	is_int(verify_at(&v, &env, cfg, t1, now + 3000, &c, &err), 0,
	    "the old key is still in the keys held (not fetched since)");
	is_int(verify_at(&v, &env, cfg, t3, now + 32000, &c, &err), 0,
	    "after jwks-min-interval the unknown kid fetches again: accepted");
	is_int(verify_at(&v, &env, cfg, t1, now + 33000, &c, &err), 1,
	    "the key removed at the issuer is gone with that fetch");
	/* Another worker's view takes the mirror's keys without fetching. */
	{
		struct jwks_view w = { 0 };

		remove(path);
		is_int(verify_at(&w, &env, cfg, t3, now + 34000, &c, &err), 0,
		    "another worker: the host's mirror, no fetch (the file is gone)");
		/* Stale after jwks-ttl, the source failing: the keys held are used. */
		is_int(verify_at(&w, &env, cfg, t3, now + 700000, &c, &err), 0,
		    "after jwks-ttl with the source failing: served stale");
		is_int(jwks_health(env.metrics, now + 700000), METRICS_DOWN, "health: down, the keys served stale");
		/* The keys were last fetched at now + 32 s: jwks-max-age (by default jwks-ttl +
		 * 3600 s) later, with the source failing still, they verify nothing. */
		is_int(verify_at(&w, &env, cfg, t3, now + 32000 + 4200000 - 1000, &c, &err), 0,
		    "a second before jwks-max-age, the source failing: still verified");
		is_int(verify_at(&w, &env, cfg, t3, now + 32000 + 4200000 + 11000, &c, &err), -1,
		    "past jwks-max-age, the source failing: not verified, a failure (500), not a refusal");
		ok(strstr(err.detail, "jwks-max-age") != NULL, "its error says why: %s", err.detail);
		is_int(verify_at(&v, &env, cfg, t3, now + 32000 + 4200000 + 12000, &c, &err), -1,
		    "… for the worker that fetched them too");
		jwks_view_free(&w);
	}
	/* A fresh mirror and no source: no keys at all. */
	{
		struct jwks_view w = { 0 };

		state_region_make(&jwks_region_def, region, size, 0);
		is_int(verify_at(&w, &env, cfg, t3, now + 800000, &c, &err), -1,
		    "no keys ever had and none to be had: a failure (500), not a refusal");
		ok(strstr(err.detail, "keys.json") != NULL, "its error names the source: %s", err.detail);
		/* Without a usable region the view keeps its own keys. */
		env.region = NULL;
		fixture_file("keys.json", set_of(pub(ec, "e3", "ES256"), NULL));
		is_int(verify_at(&w, &env, cfg, t3, now + 900000, &c, &err), 0,
		    "no region: the worker fetches for itself");
		is_int(jwks_health(env.metrics, now + 900000), METRICS_UP, "health: up again, from the worker's own fetch");
		jwks_view_free(&w);
	}
	jwks_view_free(&v);
	introspect_free(env.ix);
	free(t1);
	free(t2);
	free(t3);
	free(region);
	metrics_detach(env.metrics);
	free(mregion);
	config_unref(cfg);
}

/* The issuer withdraws every key: a well-formed set without a usable one replaces the
 * keys held, so a token of a withdrawn key is refused (401), not verified with them;
 * health says the set holds no usable key; a key published again is taken by the next
 * fetch. A document that is not a JWK set leaves the keys held as they are. */
static void
test_withdrawn(void)
{
	char *t1, *t2;
	const char *path = fixture_file("keys.json", set_of(pub(rsa, "r1", NULL), NULL));
	void *region = calloc(1, jwks_region_def.size), *mregion;
	struct jwks_view v = { 0 }, w = { 0 };
	struct jwks_env env;
	struct gw_error err = { GW_OK, 0, "" };
	char detail[METRICS_DETAIL_MAX];
	struct claims c;
	struct config *cfg;
	int64_t now = (int64_t)NOW * 1000, since;

	if ((cfg = jwks_setup(&env, region, &mregion, path)) == NULL)
		return;
	t1 = sign(rsa, "{\"alg\":\"RS256\",\"kid\":\"r1\",\"typ\":\"at+jwt\"}", claims_with(exp_ok()));
	t2 = sign(rsa2, "{\"alg\":\"RS256\",\"kid\":\"r2\",\"typ\":\"at+jwt\"}", claims_with(exp_ok()));
	is_int(verify_at(&v, &env, cfg, t1, now, &c, &err), 0, "a token of the published key");
	fixture_file("keys.json", "{\"keys\":[]}");
	is_int(verify_at(&v, &env, cfg, t2, now + 31000, &c, &err), 1,
	    "every key withdrawn ({\"keys\": []}): an unknown kid fetches the empty set, refused");
	is_int(verify_at(&v, &env, cfg, t1, now + 32000, &c, &err), 1,
	    "a token of a withdrawn key: refused (401), the empty set replaced the keys held");
	is_str(err.detail, "token signed with a key the issuer does not publish", "its reason");
	is_int(verify_at(&w, &env, cfg, t1, now + 33000, &c, &err), 1,
	    "another worker: the mirror holds the empty set, refused too");
	is_int(metrics_dep_state(env.metrics, METRICS_DEP_JWKS, (now + 33000) / 1000, &since, detail, sizeof(detail)),
	    METRICS_DOWN, "health: the JWK set down");
	ok(strstr(detail, "holds no usable key") != NULL, "… saying it holds no usable key: %s", detail);
	fixture_file("keys.json", "{\"keys\":[{\"kty\":\"oct\",\"k\":\"c2VjcmV0\",\"kid\":\"shared\"}]}");
	is_int(verify_at(&v, &env, cfg, t1, now + 64000, &c, &err), 1,
	    "a set of a symmetric key alone: no usable key either, refused");
	fixture_file("keys.json", set_of(pub(rsa, "r1", NULL), NULL));
	is_int(verify_at(&v, &env, cfg, t1, now + 95000, &c, &err), 0,
	    "the key published again: taken by the next fetch (its kid unknown to the empty set)");
	is_int(metrics_dep_state(env.metrics, METRICS_DEP_JWKS, (now + 95000) / 1000, &since, detail, sizeof(detail)),
	    METRICS_UP, "health: up again");
	fixture_file("keys.json", "{\"keys\": [{\"kt");
	is_int(verify_at(&v, &env, cfg, t2, now + 126000, &c, &err), 1,
	    "a document that is not a JWK set: the unknown kid refused");
	is_int(verify_at(&v, &env, cfg, t1, now + 127000, &c, &err), 0,
	    "… and the keys held stay (only a JWK set replaces them)");
	jwks_view_free(&v);
	jwks_view_free(&w);
	introspect_free(env.ix);
	free(t1);
	free(t2);
	free(region);
	metrics_detach(env.metrics);
	free(mregion);
	config_unref(cfg);
}

static void
test_config(void)
{
	struct cfg_errors errs;
	struct config *cfg;
	char path[256];
	static const struct {
		const char *line, *error;
	} rows[] = {
		{ "jwt-algs = RS256 none", "jwt-algs: none: never accepted" },
		{ "jwt-algs = HS256", "jwt-algs: HS256: never accepted: an HMAC algorithm" },
		{ "jwt-algs = EdDSA", "jwt-algs: EdDSA: not supported" },
		{ "jwks-uri = keys.json", "jwks-uri: expected an https:// URL or the absolute path" },
		{ "jwks-uri = /nonexistent/keys.json", "jwks-uri: /nonexistent/keys.json: No such file" },
		{ "verify = sometimes", "verify: unknown value" },
		{ "jwks-max-age = 120", "jwks-max-age: 120 s is less than jwks-ttl (600 s)" },
	};
	size_t i;
	int rc;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char text[512];

		snprintf(text, sizeof(text), "[gateway]\nresource = " AUD "\n[auth]\nissuer = " ISS "\n%s\n", rows[i].line);
		snprintf(path, sizeof(path), "%s", fixture_file("bad.conf", text));
		rc = config_load(path, &cfg, &errs);
		ok(rc < 0 && errs.n > 0 && strstr(errs.err[0].detail, rows[i].error) && strstr(errs.err[0].detail, ":5:"),
		    "%s: %s", rows[i].line, errs.n ? errs.err[0].detail : "(loaded)");
		config_unref(cfg);
	}
	snprintf(path, sizeof(path), "%s", fixture_file("bad.conf", "[gateway]\nresource = " AUD "\n[auth]\n"
	    "issuer = " ISS "\njwks-uri = http://idp.example.com/keys\n"));
	rc = config_load(path, &cfg, &errs);
	ok(rc < 0 && strstr(errs.err[0].detail, "http:// URL for an https:// issuer"),
	    "an http jwks-uri for an https issuer: %s", errs.n ? errs.err[0].detail : "(loaded)");
	config_unref(cfg);
	snprintf(path, sizeof(path), "%s", fixture_file("keys.json", "{\"keys\":[{\"kty\":\"oct\",\"k\":\"AA\"}]}"));
	{
		char text[512];

		snprintf(text, sizeof(text), "[gateway]\nresource = " AUD "\n[auth]\nissuer = " ISS "\njwks-uri = %s\n", path);
		snprintf(path, sizeof(path), "%s", fixture_file("bad.conf", text));
	}
	rc = config_load(path, &cfg, &errs);
	ok(rc < 0 && strstr(errs.err[0].detail, "no usable signing key"),
	    "a JWK set file without a usable key: %s", errs.n ? errs.err[0].detail : "(loaded)");
	config_unref(cfg);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	secret_init();
	rsa = cjose_jwk_create_RSA_random(2048, NULL, 0, NULL);
	rsa2 = cjose_jwk_create_RSA_random(2048, NULL, 0, NULL);
	ec = cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_256, NULL);
	if (!rsa || !rsa2 || !ec) {
		printf("Bail out! cjose made no keys\n");
		return 1;
	}
	run_case(test_algs);
	run_case(test_keys);
	run_case(test_verify);
	run_case(test_thumbprint);
	run_case(test_header);
	run_case(test_claims);
	run_case(test_rotation);
	run_case(test_withdrawn);
	run_case(test_config);
	cjose_jwk_release(rsa);
	cjose_jwk_release(rsa2);
	cjose_jwk_release(ec);
	return done_testing();
}
