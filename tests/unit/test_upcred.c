/* Unit tests: the upstream credentials of callers — a token endpoint's answers
 * (tokenep_parse), the host's cache of issued tokens (credcache: claims, waits, expiry,
 * eviction, a region written over) (the [upstream] credentials contract is test_config's). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "credcache.h"
#include "secret.h"
#include "state.h"
#include "tokenep.h"
#include "tap.h"

static const int64_t now = 1700000000000LL;	/* ms */

static int
parse(long status, const char *body, struct tokenep_answer *a)
{
	struct gw_error err = { GW_OK, 0, "" };
	int rc = tokenep_parse(TOKENEP_EXCHANGE, status, body, strlen(body), a, &err);

	if (rc < 0 && (err.code != GW_EAUTHSERVER || err.detail[0] == '\0'))
		return -99;	/* a failure says what it was */
	return rc;
}

static void
test_parse_issued(void)
{
	struct tokenep_answer a;

	is_int(parse(200, "{\"access_token\":\"abc.def\",\"token_type\":\"Bearer\",\"expires_in\":300,"
	    "\"issued_token_type\":\"urn:ietf:params:oauth:token-type:access_token\",\"scope\":\"mcp:tools\"}", &a),
	    0, "an issued token");
	ok(a.token && strcmp(a.token, "abc.def") == 0 && a.token_len == 7 && a.expires_in == 300,
	    "… its token and its life");
	tokenep_answer_clear(&a);
	ok(a.token == NULL, "… cleared");
	is_int(parse(200, "{\"access_token\":\"t\",\"token_type\":\"bearer\"}", &a), 0,
	    "token_type in any case, no expires_in");
	ok(a.expires_in == 0, "… its life not said: 0");
	tokenep_answer_clear(&a);
	is_int(parse(200, "{\"access_token\":\"t\",\"token_type\":\"Bearer\",\"expires_in\":99999999999}", &a), 0,
	    "a very long life");
	ok(a.expires_in == TOKENEP_EXPIRES_MAX, "… taken as the longest");
	tokenep_answer_clear(&a);
	is_int(parse(200, "{\"access_token\":\"t\",\"token_type\":\"N_A\"}", &a), -1, "not a Bearer token: refused");
	is_int(parse(200, "{\"access_token\":\"t\",\"token_type\":\"DPoP\"}", &a), -1, "a DPoP-bound token: refused");
	is_int(parse(200, "{\"token_type\":\"Bearer\"}", &a), -1, "no access_token");
	is_int(parse(200, "{\"access_token\":\"\",\"token_type\":\"Bearer\"}", &a), -1, "an empty access_token");
	is_int(parse(200, "{\"access_token\":\"a b\",\"token_type\":\"Bearer\"}", &a), -1, "a blank in the token");
	is_int(parse(200, "{\"access_token\":\"a\\r\\nX-Evil: 1\",\"token_type\":\"Bearer\"}", &a), -1,
	    "a header injected through the token: refused");
	is_int(parse(200, "{\"access_token\":\"a\\u00e9\",\"token_type\":\"Bearer\"}", &a), -1, "a byte past ASCII");
	is_int(parse(200, "{\"access_token\":7,\"token_type\":\"Bearer\"}", &a), -1, "a number for a token");
	is_int(parse(200, "{\"access_token\":\"t\",\"token_type\":\"Bearer\",\"expires_in\":0}", &a), -1,
	    "expires_in 0");
	is_int(parse(200, "{\"access_token\":\"t\",\"token_type\":\"Bearer\",\"expires_in\":\"300\"}", &a), -1,
	    "expires_in as a string");
	is_int(parse(200, "{\"access_token\":\"t\",\"token_type\":\"Bearer\","
	    "\"issued_token_type\":\"urn:ietf:params:oauth:token-type:refresh_token\"}", &a), -1,
	    "a refresh token issued: refused");
	is_int(parse(200, "{\"access_token\":\"t\",\"access_token\":\"u\",\"token_type\":\"Bearer\"}", &a), -1,
	    "a duplicate member");
	is_int(parse(200, "[1]", &a), -1, "not an object");
	is_int(parse(200, "", &a), -1, "an empty body");
	{
		char *big = malloc(TOKENEP_TOKEN_MAX + 100), *body = malloc(TOKENEP_TOKEN_MAX + 200);

		memset(big, 'a', TOKENEP_TOKEN_MAX + 1);
		big[TOKENEP_TOKEN_MAX + 1] = '\0';
		snprintf(body, TOKENEP_TOKEN_MAX + 200, "{\"access_token\":\"%s\",\"token_type\":\"Bearer\"}", big);
		is_int(parse(200, body, &a), -1, "a token over %d bytes", TOKENEP_TOKEN_MAX);
		big[TOKENEP_TOKEN_MAX] = '\0';
		snprintf(body, TOKENEP_TOKEN_MAX + 200, "{\"access_token\":\"%s\",\"token_type\":\"Bearer\"}", big);
		is_int(parse(200, body, &a), 0, "a token of exactly %d bytes", TOKENEP_TOKEN_MAX);
		tokenep_answer_clear(&a);
		free(big);
		free(body);
	}
}

static void
test_parse_id_jag(void)
{
	struct gw_error err = { GW_OK, 0, "" };
	struct tokenep_answer a;
	const char *ok = "{\"access_token\":\"eyJ.a.b\",\"issued_token_type\":\"urn:ietf:params:oauth:token-type:id-jag\","
	    "\"token_type\":\"N_A\",\"expires_in\":300}";
	const char *bearer = "{\"access_token\":\"t\",\"token_type\":\"Bearer\"}";
	const char *no_type = "{\"access_token\":\"eyJ.a.b\",\"token_type\":\"N_A\"}";

	is_int(tokenep_parse(TOKENEP_EXCHANGE_ID_JAG, 200, ok, strlen(ok), &a, &err), 0, "an ID-JAG, asked for one");
	ok(a.token && strcmp(a.token, "eyJ.a.b") == 0 && a.expires_in == 300, "… its assertion and life");
	tokenep_answer_clear(&a);
	is_int(tokenep_parse(TOKENEP_EXCHANGE, 200, ok, strlen(ok), &a, &err), -1, "an ID-JAG, asked for an access token: refused");
	is_int(tokenep_parse(TOKENEP_EXCHANGE_ID_JAG, 200, bearer, strlen(bearer), &a, &err), -1,
	    "an access token, asked for an ID-JAG: refused");
	is_int(tokenep_parse(TOKENEP_EXCHANGE_ID_JAG, 200, no_type, strlen(no_type), &a, &err), -1,
	    "an ID-JAG without its issued_token_type: refused");
	is_int(tokenep_parse(TOKENEP_JWT_BEARER, 200, bearer, strlen(bearer), &a, &err), 0, "the jwt-bearer grant's access token");
	tokenep_answer_clear(&a);
}

static void
test_parse_refused(void)
{
	struct tokenep_answer a;

	is_int(parse(400, "{\"error\":\"invalid_scope\",\"error_description\":\"no \\\"x\\\" here\\n\"}", &a), 1,
	    "a refusal");
	is_str(a.error, "invalid_scope", "… its error");
	is_str(a.description, "no ?x? here?", "… its description, what RFC 6749 does not allow replaced");
	ok(a.token == NULL, "… no token");
	tokenep_answer_clear(&a);
	is_int(parse(401, "{\"error\":\"invalid_client\"}", &a), 1, "a 401 refusal");
	is_int(parse(400, "{\"error\":\"bad error\"}", &a), -1, "an error code with a blank: not an answer");
	is_int(parse(400, "{\"error\":\"\"}", &a), -1, "an empty error code");
	is_int(parse(400, "{\"error\":5}", &a), -1, "a number for an error");
	is_int(parse(400, "{}", &a), -1, "a 400 without an error");
	is_int(parse(500, "{\"error\":\"server_error\"}", &a), -1, "a 500: the endpoint failing, not a refusal");
	is_int(parse(200, "{\"error\":\"invalid_grant\"}", &a), -1, "a 200 with an error: not an answer");
	is_int(parse(302, "<html>", &a), -1, "a redirect");
	{
		char body[400];

		snprintf(body, sizeof(body), "{\"error\":\"%0*d\"}", TOKENEP_ERROR_MAX, 0);
		is_int(parse(400, body, &a), -1, "an error code too long");
	}
}

/* The cache in private memory, as a file's build makes it. */
static struct credcache *
cache_new(void **mem)
{
	*mem = calloc(1, credcache_region_def.size);
	state_region_make(&credcache_region_def, *mem, credcache_region_def.size, 0);
	return *mem;
}

static void
key_of(int i, unsigned char key[CREDCACHE_KEY_BYTES])
{
	char s[32];

	snprintf(s, sizeof(s), "key %d", i);
	secret_digest(s, strlen(s), key, CREDCACHE_KEY_BYTES);
}

static void
test_cache(void)
{
	unsigned char k1[CREDCACHE_KEY_BYTES], k2[CREDCACHE_KEY_BYTES];
	char out[CREDCACHE_VALUE_MAX];
	void *mem;
	struct credcache *cc = cache_new(&mem);
	int i, hits;

	key_of(1, k1);
	key_of(2, k2);
	is_int(credcache_get(cc, k1, now, 1000, out, sizeof(out)), CC_MISS, "a first get: a miss, claimed for us");
	is_int(credcache_get(cc, k1, now + 10, 1000, out, sizeof(out)), CC_BUSY, "another asks meanwhile: busy");
	is_int(credcache_get(cc, k1, now + 1001, 1000, out, sizeof(out)), CC_MISS,
	    "a claim past its deadline is taken over");
	ok(credcache_put(cc, k1, now + 1001, now + 60000, "sealed-1") == 0, "the value stored");
	is_int(credcache_get(cc, k1, now + 2000, 1000, out, sizeof(out)), CC_HIT, "then a hit");
	is_str(out, "sealed-1", "… with the value");
	is_int(credcache_get(cc, k2, now + 2000, 1000, out, sizeof(out)), CC_MISS, "another key: its own miss");
	credcache_drop(cc, k2);
	is_int(credcache_get(cc, k2, now + 2001, 1000, out, sizeof(out)), CC_MISS, "a dropped claim: a miss again");
	credcache_drop(cc, k2);
	is_int(credcache_get(cc, k1, now + 60000, 1000, out, sizeof(out)), CC_MISS, "expired: a miss");
	ok(credcache_put(cc, k1, now + 60000, now + 120000, "sealed-2") == 0, "stored again");
	credcache_drop(cc, k1);
	is_int(credcache_get(cc, k1, now + 60001, 1000, out, sizeof(out)), CC_MISS,
	    "dropped (the upstream refused it): a miss");
	ok(credcache_put(cc, k1, now, now, "x") < 0, "a value already expired is not stored");
	is_int(credcache_get(cc, k1, now + 60002, 1000, out, 4), CC_BUSY, "a small buffer does not take a claim");
	ok(credcache_put(cc, k1, now + 60002, now + 120000, "sealed-3") == 0, "stored");
	is_int(credcache_get(cc, k1, now + 60003, 1000, out, 4), CC_UNAVAILABLE,
	    "a value larger than the buffer: unavailable, not cut");
	/* A flood of keys: every value stored lives until evicted by one expiring later;
	 * the region never holds more than its entries. */
	for (i = 100; i < 100 + 4 * CREDCACHE_ENTRIES; i++) {
		unsigned char k[CREDCACHE_KEY_BYTES];

		key_of(i, k);
		credcache_put(cc, k, now, now + 1000000 + i, "v");
	}
	ok(credcache_count(cc, now) <= CREDCACHE_ENTRIES, "a flood: at most %d entries", CREDCACHE_ENTRIES);
	for (i = 100 + 4 * CREDCACHE_ENTRIES - 20, hits = 0; i < 100 + 4 * CREDCACHE_ENTRIES; i++) {
		unsigned char k[CREDCACHE_KEY_BYTES];

		key_of(i, k);
		hits += credcache_get(cc, k, now + 1, 1000, out, sizeof(out)) == CC_HIT;
	}
	is_int(hits, 20, "… the latest keys stay");
	/* A region written over: its magic gone, every call says so and changes nothing. */
	memset(mem, 0x5a, 64);
	is_int(credcache_get(cc, k1, now, 1000, out, sizeof(out)), CC_UNAVAILABLE, "a region written over: unavailable");
	ok(credcache_put(cc, k1, now, now + 1000, "v") < 0, "… nothing stored");
	is_int((long long)credcache_count(cc, now), 0, "… nothing counted");
	is_int(credcache_get(NULL, k1, now, 1000, out, sizeof(out)), CC_UNAVAILABLE, "no region: unavailable");
	free(mem);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	if (secret_init() < 0)
		return 1;
	run_case(test_parse_issued);
	run_case(test_parse_id_jag);
	run_case(test_parse_refused);
	run_case(test_cache);
	return done_testing();
}
