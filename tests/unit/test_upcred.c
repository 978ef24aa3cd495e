/* Unit tests: the upstream credentials of callers — a token endpoint's answers
 * (tokenep_parse, a person's grants' refresh token and scope included, and the wiping
 * of what held them), the token requests' forms (tokenep_form) and what goes on the
 * wire for a confidential and a public client, the host's cache of issued tokens
 * (credcache: claims, waits, expiry, eviction, a region written over, a copy read as
 * explain reads it), and the markers upcred leaves there for explain, with tokens from
 * a loopback token endpoint (the [upstream] credentials contract is test_config's). */
#include "autoconf.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "credcache.h"
#include "fixture.h"
#include "secret.h"
#include "session.h"
#include "state.h"
#include "tokenep.h"
#include "upcred.h"
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

/* An answer to a person's grant (authorization_code or refresh_token). */
static int
parse_as(enum tokenep_grant grant, long status, const char *body, struct tokenep_answer *a)
{
	struct gw_error err = { GW_OK, 0, "" };
	int rc = tokenep_parse(grant, status, body, strlen(body), a, &err);

	if (rc < 0 && (err.code != GW_EAUTHSERVER || err.detail[0] == '\0' || a->token || a->refresh_token || a->scope))
		return -99;	/* a failure says what it was, and holds nothing */
	return rc;
}

/* A body of an answer to a person's grant whose member name is a string of n bytes c. */
static char *
long_member(const char *name, char c, size_t n)
{
	size_t size = n + 200;
	char *body = malloc(size);
	int at = snprintf(body, size, "{\"access_token\":\"t\",\"token_type\":\"Bearer\",\"%s\":\"", name);

	memset(body + at, c, n);
	snprintf(body + at + n, size - at - n, "\"}");
	return body;
}

/* A person's grants' answers: the refresh token and scope kept when said, each refused
 * when unusable, and the answer with it; an exchange's answer reads neither. */
static void
test_parse_person(void)
{
	static const enum tokenep_grant person[] = { TOKENEP_AUTH_CODE, TOKENEP_REFRESH };
	static const char *const bad_refresh[] = { "\"a b\"", "\"a\\u0001b\"", "\"a\\nb\"", "\"a\\u00e9\"", "\"\"",
		"7", "null", "[\"r\"]" };
	static const char *const bad_scope[] = { "\"a  b\"", "\" a\"", "\"a \"", "\"a\\\"b\"", "\"a\\\\b\"",
		"\"a\\tb\"", "\"a\\u00e9\"", "\"a\\u0000b\"", "[\"a\"]", "7", "null" };
	struct tokenep_answer a;
	char body[256];
	size_t g, i;

	for (g = 0; g < 2; g++) {
		is_int(parse_as(person[g], 200, "{\"access_token\":\"at-1\",\"token_type\":\"bearer\",\"expires_in\":300,"
		    "\"refresh_token\":\"rt.1~x/y+z=\",\"scope\":\"mcp:tools offline_access a!#[]^~\"}", &a), 0,
		    "grant %zu: an access token, a refresh token, a scope", g);
		ok(a.token && !strcmp(a.token, "at-1") && a.expires_in == 300 && a.refresh_token &&
		    !strcmp(a.refresh_token, "rt.1~x/y+z=") && a.refresh_len == 11 && a.scope &&
		    !strcmp(a.scope, "mcp:tools offline_access a!#[]^~"), "… each as said");
		tokenep_answer_clear(&a);
		ok(!a.token && !a.refresh_token && !a.refresh_len && !a.scope && !a.token_len, "… cleared");
		is_int(parse_as(person[g], 200, "{\"access_token\":\"at\",\"token_type\":\"Bearer\"}", &a), 0,
		    "grant %zu: no refresh token, no scope, no issued_token_type", g);
		ok(a.refresh_token == NULL && a.refresh_len == 0 && a.scope == NULL, "… none kept");
		tokenep_answer_clear(&a);
		is_int(parse_as(person[g], 200, "{\"access_token\":\"at\",\"token_type\":\"DPoP\",\"refresh_token\":\"r\"}",
		    &a), -1, "grant %zu: not a Bearer token", g);
		is_int(parse_as(person[g], 200, "{\"access_token\":\"at\",\"token_type\":\"N_A\",\"issued_token_type\":"
		    "\"urn:ietf:params:oauth:token-type:id-jag\"}", &a), -1, "grant %zu: an ID-JAG", g);
		is_int(parse_as(person[g], 200, "{\"refresh_token\":\"r\",\"token_type\":\"Bearer\"}", &a), -1,
		    "grant %zu: a refresh token without an access token", g);
		is_int(parse_as(person[g], 400, "{\"error\":\"invalid_grant\"}", &a), 1, "grant %zu: a refusal", g);
		ok(!a.token && !a.refresh_token && !a.scope && !strcmp(a.error, "invalid_grant"), "… holds nothing else");
		tokenep_answer_clear(&a);
	}
	for (i = 0; i < sizeof(bad_refresh) / sizeof(bad_refresh[0]); i++) {
		snprintf(body, sizeof(body), "{\"access_token\":\"at\",\"token_type\":\"Bearer\",\"refresh_token\":%s,"
		    "\"scope\":\"s\"}", bad_refresh[i]);
		is_int(parse_as(TOKENEP_REFRESH, 200, body, &a), -1, "refresh_token %s: unusable", bad_refresh[i]);
	}
	for (i = 0; i < sizeof(bad_scope) / sizeof(bad_scope[0]); i++) {
		snprintf(body, sizeof(body), "{\"access_token\":\"at\",\"token_type\":\"Bearer\",\"refresh_token\":\"r\","
		    "\"scope\":%s}", bad_scope[i]);
		is_int(parse_as(TOKENEP_AUTH_CODE, 200, body, &a), -1, "scope %s: unusable", bad_scope[i]);
	}
	is_int(parse_as(TOKENEP_EXCHANGE, 200, "{\"access_token\":\"at\",\"token_type\":\"Bearer\",\"refresh_token\":"
	    "\"a b\",\"scope\":\"x  y\"}", &a), 0, "an exchange's answer: its refresh token and scope not read");
	ok(a.token && a.refresh_token == NULL && a.scope == NULL, "… nor kept");
	tokenep_answer_clear(&a);
	is_int(parse_as(TOKENEP_AUTH_CODE, 200, "{\"access_token\":\"at\",\"token_type\":\"Bearer\",\"scope\":\"\"}",
	    &a), 0, "scope \"\" (no scope granted): usable");
	ok(a.token && a.scope == NULL, "… as no scope said");
	tokenep_answer_clear(&a);
	is_int(parse_as((enum tokenep_grant)99, 200, "{\"access_token\":\"at\",\"token_type\":\"Bearer\"}", &a), -1,
	    "a grant tokenep does not know");
}

/* The longest refresh token and scope kept, one byte more refused. */
static void
test_parse_person_sizes(void)
{
	struct tokenep_answer a;
	char *big;

	big = long_member("refresh_token", 'r', TOKENEP_TOKEN_MAX + 1);
	is_int(parse_as(TOKENEP_REFRESH, 200, big, &a), -1, "a refresh token over %d bytes", TOKENEP_TOKEN_MAX);
	free(big);
	big = long_member("refresh_token", 'r', TOKENEP_TOKEN_MAX);
	is_int(parse_as(TOKENEP_REFRESH, 200, big, &a), 0, "one of exactly %d bytes", TOKENEP_TOKEN_MAX);
	ok(a.refresh_len == TOKENEP_TOKEN_MAX && strlen(a.refresh_token) == TOKENEP_TOKEN_MAX, "… kept whole");
	tokenep_answer_clear(&a);
	free(big);
	big = long_member("scope", 's', TOKENEP_SCOPE_MAX + 1);
	is_int(parse_as(TOKENEP_AUTH_CODE, 200, big, &a), -1, "a scope over %d bytes", TOKENEP_SCOPE_MAX);
	free(big);
	big = long_member("scope", 's', TOKENEP_SCOPE_MAX);
	is_int(parse_as(TOKENEP_AUTH_CODE, 200, big, &a), 0, "one of exactly %d bytes", TOKENEP_SCOPE_MAX);
	ok(a.scope && strlen(a.scope) == TOKENEP_SCOPE_MAX, "… kept whole");
	tokenep_answer_clear(&a);
	free(big);
}

/* jansson's allocations, watched (each block's size before it): a block freed that
 * still begins with spy.secret and its NUL, jansson's copy of a string member, counts. */
static struct {
	const char *secret;
	int seen;
} spy;

static void *
spy_malloc(size_t n)
{
	char *p = malloc(n + 16);

	if (p == NULL)
		return NULL;
	memcpy(p, &n, sizeof(n));
	return p + 16;
}

static void
spy_free(void *q)
{
	char *p = (char *)q - 16;
	size_t n, k = strlen(spy.secret) + 1;

	if (q == NULL)
		return;
	memcpy(&n, p, sizeof(n));
	spy.seen += n >= k && memcmp(q, spy.secret, k) == 0;
	free(p);
}

/* What jansson held of the tokens is wiped before it is freed: the access token, the
 * refresh token (kept or not: an exchange's is not), whatever the outcome. */
static void
test_parse_wipes(void)
{
	static const struct {
		enum tokenep_grant grant;
		long status;
		const char *secret, *body;
	} cases[] = {
		{ TOKENEP_REFRESH, 200, "AT-wipe-me-1", "{\"access_token\":\"AT-wipe-me-1\",\"token_type\":\"Bearer\","
		    "\"refresh_token\":\"RT-wipe-me-2\"}" },
		{ TOKENEP_REFRESH, 200, "RT-wipe-me-2", "{\"access_token\":\"AT-wipe-me-1\",\"token_type\":\"Bearer\","
		    "\"refresh_token\":\"RT-wipe-me-2\"}" },
		{ TOKENEP_AUTH_CODE, 200, "RT-wipe-me-3", "{\"access_token\":\"a\",\"token_type\":\"Bearer\","
		    "\"refresh_token\":\"RT-wipe-me-3\",\"scope\":\"bad  scope\"}" },
		{ TOKENEP_EXCHANGE, 200, "RT-wipe-me-4", "{\"access_token\":\"a\",\"token_type\":\"Bearer\","
		    "\"refresh_token\":\"RT-wipe-me-4\"}" },
		{ TOKENEP_REFRESH, 400, "RT-wipe-me-5", "{\"error\":\"invalid_grant\",\"refresh_token\":\"RT-wipe-me-5\"}" },
	};
	struct gw_error err = { GW_OK, 0, "" };
	struct tokenep_answer a;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		spy.secret = cases[i].secret;
		spy.seen = 0;
		json_set_alloc_funcs(spy_malloc, spy_free);
		rc = tokenep_parse(cases[i].grant, cases[i].status, cases[i].body, strlen(cases[i].body), &a, &err);
		json_set_alloc_funcs(malloc, free);
		is_int(spy.seen, 0, "case %zu (%d): %s wiped before jansson freed it", i, rc, cases[i].secret);
		tokenep_answer_clear(&a);
	}
	/* The check can fail: a string not wiped is seen. */
	spy.secret = "plain";
	spy.seen = 0;
	json_set_alloc_funcs(spy_malloc, spy_free);
	json_decref(json_string("plain"));
	json_set_alloc_funcs(malloc, free);
	is_int(spy.seen, 1, "the watch sees a string freed unwiped");
}

/* The form of ask, into a buffer of max bytes: its text, or NULL when none was made. */
static char *
form_of(const struct tokenep_ask *ask, size_t max)
{
	struct buf b;
	char *s = NULL;

	buf_init(&b, max);
	if (tokenep_form(ask, &b) == 0)
		s = strdup(buf_str(&b));
	buf_free(&b);
	return s;
}

/* A person's grants' forms: each field, escaped, sent only when given; none at all
 * without what the grant needs. */
static void
test_form_person(void)
{
	char *scope_v[] = { "mcp:tools", "offline_access" };
	const struct strlist scopes = { scope_v, 2 }, none = { NULL, 0 };
	const struct secret_part code = { "c/o d+e&f=", 10 }, rt = { "rt.1~x", 6 };
	const char *verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
	struct tokenep_ask ask = { .grant = TOKENEP_AUTH_CODE, .subject = &code, .code_verifier = verifier,
		.redirect_uri = "https://gw.example.com/cb?a=1&b=2", .resource = "https://mcp.example.com/mcp",
		.scopes = &scopes };
	char *f;

	f = form_of(&ask, 4096);
	is_str(f, "grant_type=authorization_code&code=c%2Fo%20d%2Be%26f%3D"
	    "&redirect_uri=https%3A%2F%2Fgw.example.com%2Fcb%3Fa%3D1%26b%3D2"
	    "&code_verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk&resource=https%3A%2F%2Fmcp.example.com%2Fmcp"
	    "&scope=mcp%3Atools%20offline_access", "authorization_code: its fields, each escaped");
	free(f);
	ask.resource = NULL;
	ask.scopes = &none;
	f = form_of(&ask, 4096);
	is_str(f, "grant_type=authorization_code&code=c%2Fo%20d%2Be%26f%3D"
	    "&redirect_uri=https%3A%2F%2Fgw.example.com%2Fcb%3Fa%3D1%26b%3D2"
	    "&code_verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "… no resource, no scopes: neither sent");
	free(f);
	ask.code_verifier = NULL;
	ok(form_of(&ask, 4096) == NULL, "… without its code_verifier: none");
	ask.code_verifier = verifier;
	ask.redirect_uri = NULL;
	ok(form_of(&ask, 4096) == NULL, "… without its redirect_uri: none");
	ask.redirect_uri = "https://gw.example.com/cb";
	ask.subject = NULL;
	ok(form_of(&ask, 4096) == NULL, "… without its code: none");
	ask.subject = &code;
	ok(form_of(&ask, 100) == NULL, "… that does not fit: none");

	ask = (struct tokenep_ask){ .grant = TOKENEP_REFRESH, .subject = &rt, .code_verifier = verifier,
		.redirect_uri = "https://gw.example.com/cb", .audience = "aud" };
	f = form_of(&ask, 4096);
	is_str(f, "grant_type=refresh_token&refresh_token=rt.1~x", "refresh_token: the token alone (no PKCE, no audience)");
	free(f);
	ask.resource = "https://mcp.example.com/mcp";
	ask.scopes = &scopes;
	f = form_of(&ask, 4096);
	is_str(f, "grant_type=refresh_token&refresh_token=rt.1~x&resource=https%3A%2F%2Fmcp.example.com%2Fmcp"
	    "&scope=mcp%3Atools%20offline_access", "… a resource and a narrower scope");
	free(f);
	ask.subject = NULL;
	ok(form_of(&ask, 4096) == NULL, "… without its refresh token: none");
}

/* The grants before them, as they were. */
static void
test_form_before(void)
{
	char *scope_v[] = { "mcp:tools", "offline_access" };
	const struct strlist scopes = { scope_v, 2 };
	const struct secret_part at = { "caller-at", 9 };
	struct tokenep_ask ask;
	char *f;

	ask = (struct tokenep_ask){ .grant = TOKENEP_EXCHANGE, .subject = &at, .resource = "https://u/mcp",
		.audience = "u", .scopes = &scopes };
	f = form_of(&ask, 4096);
	is_str(f, "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=caller-at"
	    "&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token"
	    "&requested_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token&audience=u"
	    "&resource=https%3A%2F%2Fu%2Fmcp&scope=mcp%3Atools%20offline_access", "an exchange, as before");
	free(f);
	ask = (struct tokenep_ask){ .grant = TOKENEP_CLIENT_CREDENTIALS, .resource = "https://u/mcp" };
	f = form_of(&ask, 4096);
	is_str(f, "grant_type=client_credentials&resource=https%3A%2F%2Fu%2Fmcp", "client_credentials, as before");
	free(f);
	ask = (struct tokenep_ask){ .grant = TOKENEP_JWT_BEARER, .subject = &at, .resource = "https://u/mcp" };
	f = form_of(&ask, 4096);
	is_str(f, "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=caller-at",
	    "jwt-bearer, as before (no resource: the assertion names it)");
	free(f);
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
	ok(credcache_put(cc, k2, now + 2001, now + 3000, "sealed-k2") == 0 && credcache_put(cc, k1, now + 2001, now + 60000,
	    "sealed-1") == 0, "a value for each key");
	is_int(credcache_get(cc, k1, now + 3000, 1000, out, sizeof(out)), CC_HIT, "k2's end passed: k1 still a hit");
	is_int(credcache_get(cc, k2, now + 3000, 1000, out, sizeof(out)), CC_REFRESH, "… k2 a miss to refresh, its own");
	credcache_drop(cc, k2);
	is_int(credcache_get(cc, k1, now + 60000, 1000, out, sizeof(out)), CC_REFRESH,
	    "its end passed: a miss to refresh (its entry lapsed), claimed for us");
	is_int(credcache_get(cc, k1, now + 60001, 1000, out, sizeof(out)), CC_BUSY, "… another asks meanwhile: busy");
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

/* A copy of the region, as explain reads it, is looked up without its locks. */
static void
test_peek(void)
{
	unsigned char k1[CREDCACHE_KEY_BYTES], k2[CREDCACHE_KEY_BYTES];
	char out[CREDCACHE_VALUE_MAX];
	void *mem, *copy = malloc(credcache_region_def.size);
	struct credcache *cc = cache_new(&mem);
	size_t size = credcache_region_def.size;

	key_of(1, k1);
	key_of(2, k2);
	credcache_put(cc, k1, now, now + 60000, "sealed-1");
	is_int(credcache_get(cc, k2, now, 1000, out, sizeof(out)), CC_MISS, "another key claimed");
	memcpy(copy, mem, size);
	is_int(credcache_peek(copy, size, k1, now + 1, out, sizeof(out)), CC_HIT, "peek: a value in the copy");
	is_str(out, "sealed-1", "… as stored");
	is_int(credcache_peek(copy, size, k2, now + 1, out, sizeof(out)), CC_MISS, "peek: a claim is no value");
	is_int(credcache_peek(copy, size, k1, now + 60000, out, sizeof(out)), CC_MISS, "peek: expired");
	is_int(credcache_peek(copy, size, k1, now + 1, out, 4), CC_UNAVAILABLE, "peek: out too small, not cut");
	is_int(credcache_peek(copy, size - 1, k1, now + 1, out, sizeof(out)), CC_UNAVAILABLE, "peek: another size");
	memset(copy, 0x5a, 64);
	is_int(credcache_peek(copy, size, k1, now + 1, out, sizeof(out)), CC_UNAVAILABLE, "peek: no magic");
	is_int(credcache_peek(NULL, 0, k1, now + 1, out, sizeof(out)), CC_UNAVAILABLE, "peek: no copy");
	free(copy);
	free(mem);
}

/* ---- a loopback token endpoint: each request answered with a new token (tok-N), or
 * with tep.answer when set, or refused with invalid_grant while tep.refuse is set; the
 * last request kept whole in tep.last ---- */

static struct {
	int lfd, port, refuse, nreq;
	const char *answer;
	char last[16384];
	volatile int stop;
} tep;

static void
tep_answer(int fd)
{
	char b[16384], resp[512], body[256], *end, *cl;
	size_t n = 0, blen = 0;
	ssize_t r;

	while ((r = recv(fd, b + n, sizeof(b) - 1 - n, 0)) > 0) {
		n += (size_t)r;
		b[n] = '\0';
		if ((end = strstr(b, "\r\n\r\n")) == NULL)
			continue;
		if ((cl = strcasestr(b, "content-length:")) != NULL && cl < end)
			blen = strtoul(cl + 15, NULL, 10);
		if (n >= (size_t)(end + 4 - b) + blen || n == sizeof(b) - 1)
			break;
	}
	tep.nreq++;
	memcpy(tep.last, b, n + 1);
	if (tep.refuse)
		snprintf(body, sizeof(body), "{\"error\":\"invalid_grant\"}");
	else if (tep.answer)
		snprintf(body, sizeof(body), "%s", tep.answer);
	else
		snprintf(body, sizeof(body), "{\"access_token\":\"tok-%d\",\"token_type\":\"Bearer\","
		    "\"expires_in\":600}", tep.nreq);
	n = (size_t)snprintf(resp, sizeof(resp), "HTTP/1.1 %s\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", tep.refuse ? "400 Bad Request" : "200 OK",
	    strlen(body), body);
	(void)send(fd, resp, n, MSG_NOSIGNAL);
}

static void *
tep_main(void *arg)
{
	struct pollfd pfd;
	int fd;

	(void)arg;
	while (!tep.stop) {
		pfd.fd = tep.lfd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 50) <= 0 || (fd = accept(tep.lfd, NULL, NULL)) < 0)
			continue;
		tep_answer(fd);
		close(fd);
	}
	return NULL;
}

static int
tep_start(pthread_t *th)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	tep.stop = tep.nreq = 0;
	tep.lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (tep.lfd < 0 || bind(tep.lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(tep.lfd, 8) < 0 ||
	    getsockname(tep.lfd, (struct sockaddr *)&sa, &len) < 0)
		return -1;
	tep.port = ntohs(sa.sin_port);
	return pthread_create(th, NULL, tep_main, NULL) == 0 ? 0 : -1;
}

/* One request's upcred, as h_mcp makes it, for the caller whose token is tok and whose
 * gateway digest is who. */
static void
caller(struct upcred *u, const struct config *cfg, struct introspect *ix, struct credcache *cc,
    const unsigned char *key, const char *tok, const char *who)
{
	*u = (struct upcred){ .cfg = cfg, .ix = ix, .cache = cc, .key = key, .subject = { tok, strlen(tok) },
		.subject_who = "subject-digest", .caller_who = who };
	upcred_bind(u);
}

/* What explain says for who: upcred_cached_until over a copy of the region, under key. */
static int
explained(const struct config *cfg, const void *mem, const unsigned char *key, const char *up, const char *who,
    int64_t *until)
{
	size_t size = credcache_region_def.size;
	void *copy = malloc(size);
	struct upcred r = { .cfg = cfg, .key = key, .caller_who = who };
	int rc;

	memcpy(copy, mem, size);
	upcred_bind(&r);
	rc = upcred_cached_until(&r, config_upstream(cfg, up), copy, size, clock_wall_ms(), until);
	upcred_clear(&r);
	free(copy);
	return rc;
}

/* A token obtained for a caller leaves a marker that names the caller and holds the
 * token's end alone; explain finds it with the caller's digest, another caller's finds
 * none; a 401's retry drops it first; client-credentials' is the host's, whoever asks.
 * Long: one scenario over one loopback endpoint and one cache, each step checked as
 * explain would see it. */
static void
test_markers(void)
{
	unsigned char key[32], other[32];
	char text[2048], alice[33], bob[33], *tok = NULL;
	struct gw_error err = { GW_OK, 0, "" };
	struct introspect *ix = introspect_new();
	struct upcred u;
	struct config *cfg;
	pthread_t th;
	void *mem;
	struct credcache *cc = cache_new(&mem);
	int64_t until = 0, t0 = clock_wall_ms();
	size_t i;
	int found;

	if (ix == NULL || tep_start(&th) < 0) {
		ok(0, "a loopback token endpoint");
		return;
	}
	snprintf(text, sizeof(text), "[gateway]\nresource = https://gw.example.com/mcp\nname = gw\nversion = 1\n"
	    "[auth]\nissuer = https://idp.example.com\nclient-id = gw\nclient-secret-file = %s\n"
	    "[upstream \"x\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = exchange\n"
	    "token-endpoint = http://127.0.0.1:%d/token\n"
	    "[upstream \"cc\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = client-credentials\nclient-id = svc\n"
	    "client-secret-file = %s\ntoken-endpoint = http://127.0.0.1:%d/token\n",
	    fixture_file("gw.secret", "s3cret\n"), tep.port, fixture_file("svc.secret", "s3cret\n"), tep.port);
	if ((cfg = fixture_config(text)) == NULL) {
		ok(0, "the configuration loads");
		return;
	}
	secret_random_bytes(key, sizeof(key));
	secret_random_bytes(other, sizeof(other));
	session_who(cfg->bind, "alice", "app", "", alice);
	session_who(cfg->bind, "bob", "app", "", bob);

	is_int(explained(cfg, mem, key, "x", alice, &until), 0, "before any call: none cached for alice");
	caller(&u, cfg, ix, cc, key, "alice-token", alice);
	is_int(upcred_bearer(&u, config_upstream(cfg, "x"), 0, &tok, &err), 0, "alice's exchange (%s)", err.detail);
	is_str(tok, "tok-1", "… the issued token");
	free(tok);
	is_int(explained(cfg, mem, key, "x", alice, &until), 1, "then cached for alice");
	ok(until > t0 + 500 * 1000 && until <= t0 + 600 * 1000 + 1000, "… until its end (expires_in less 30 s)");
	is_int(explained(cfg, mem, key, "x", bob, &until), 0, "… none for bob");
	is_int(explained(cfg, mem, other, "x", alice, &until), 0, "… none under another session key");
	is_int(explained(cfg, mem, key, "cc", alice, &until), 0, "… none for another upstream");
	for (i = 0, found = 0; i + 5 <= credcache_region_def.size; i++)
		found |= memcmp((char *)mem + i, "tok-1", 5) == 0 || memcmp((char *)mem + i, "alice", 5) == 0;
	ok(!found, "the region holds neither the token nor the caller in clear");
	is_int(upcred_bearer(&u, config_upstream(cfg, "x"), 0, &tok, &err), 0, "alice again");
	is_str(tok, "tok-1", "… from the cache");
	free(tok);
	tep.refuse = 1;	/* the upstream refused it (a 401), and the exchange is now refused */
	ok(upcred_bearer(&u, config_upstream(cfg, "x"), 1, &tok, &err) < 0 && tok == NULL, "a retry refused");
	is_int(explained(cfg, mem, key, "x", alice, &until), 0, "… the marker dropped with the token");
	tep.refuse = 0;
	is_int(upcred_bearer(&u, config_upstream(cfg, "x"), 1, &tok, &err), 0, "a retry that succeeds");
	free(tok);
	is_int(explained(cfg, mem, key, "x", alice, &until), 1, "… cached for alice again");
	upcred_clear(&u);

	caller(&u, cfg, ix, cc, key, "bob-token", bob);
	is_int(upcred_bearer(&u, config_upstream(cfg, "cc"), 0, &tok, &err), 0, "bob's call of a client-credentials upstream");
	free(tok);
	is_int(explained(cfg, mem, key, "cc", alice, &until), 1, "… the gateway's own: cached whoever asks");
	u.caller_who = NULL;
	is_int(upcred_bearer(&u, config_upstream(cfg, "x"), 0, &tok, &err), 0, "an exchange without the caller's digest");
	free(tok);
	is_int(explained(cfg, mem, key, "x", "", &until), 0, "… no marker under an empty digest");
	upcred_clear(&u);
	is_int(explained(cfg, mem, key, "x", alice, &until), 1, "alice's still there");
	{
		void *junk = calloc(1, credcache_region_def.size);
		struct upcred r = { .cfg = cfg, .key = key, .caller_who = alice };

		upcred_bind(&r);
		is_int(upcred_cached_until(&r, config_upstream(cfg, "x"), junk, credcache_region_def.size, t0, &until), -1,
		    "a copy that is no credential cache: -1");
		upcred_clear(&r);
		free(junk);
	}
	tep.stop = 1;
	pthread_join(th, NULL);
	close(tep.lfd);
	introspect_free(ix);
	config_unref(cfg);
	free(mem);
}

/* The last request's body, past its head, and whether its head names header. */
static const char *
last_body(void)
{
	const char *end = strstr(tep.last, "\r\n\r\n");

	return end ? end + 4 : "";
}

static int
last_has_header(const char *header)
{
	const char *end = strstr(tep.last, "\r\n\r\n"), *h = strcasestr(tep.last, header);

	return h != NULL && end != NULL && h < end;
}

/* A public client (no secret) names itself in the form and sends no Authorization,
 * whatever its client-auth; a confidential one authenticates as its client-auth says;
 * the answer's refresh token and scope come back. */
static void
wire_refresh(struct introspect *ix, const struct config *cfg, const char *url)
{
	static const char want[] = "grant_type=refresh_token&refresh_token=rt-old&resource=https%3A%2F%2Fu%2Fmcp";
	const struct secret_part rt = { "rt-old", 6 };
	struct as_client pub = { "app 1", NULL, CLIENT_AUTH_BASIC }, pub_post = { "app 1", NULL, CLIENT_AUTH_POST };
	struct as_client basic = { "gw", "s3cret", CLIENT_AUTH_BASIC }, post = { "gw", "s3cret", CLIENT_AUTH_POST };
	struct tokenep_ask ask = { .grant = TOKENEP_REFRESH, .endpoint = url, .client = &pub, .subject = &rt,
		.resource = "https://u/mcp", .now_ms = now };
	struct gw_error err = { GW_OK, 0, "" };
	struct tokenep_answer a;

	tep.answer = "{\"access_token\":\"at-new\",\"token_type\":\"Bearer\",\"expires_in\":60,"
	    "\"refresh_token\":\"rt-new\",\"scope\":\"mcp:tools\"}";
	is_int(tokenep_request(ix, NULL, cfg, &ask, &a, &err), 0, "a public client's refresh (%s)", err.detail);
	ok(a.token && !strcmp(a.token, "at-new") && a.refresh_token && !strcmp(a.refresh_token, "rt-new") &&
	    a.refresh_len == 6 && a.scope && !strcmp(a.scope, "mcp:tools") && a.expires_in == 60,
	    "… the new access token, refresh token and scope");
	tokenep_answer_clear(&a);
	ok(!strncmp(last_body(), want, sizeof(want) - 1) && !strcmp(last_body() + sizeof(want) - 1, "&client_id=app%201"),
	    "… its form names the client");
	ok(!last_has_header("Authorization:"), "… no Authorization header");
	ok(last_has_header("Content-Type: application/x-www-form-urlencoded"), "… a form");
	ask.client = &pub_post;
	is_int(tokenep_request(ix, NULL, cfg, &ask, &a, &err), 0, "a public client whose client-auth is post");
	tokenep_answer_clear(&a);
	ok(strstr(last_body(), "client_secret") == NULL && strstr(last_body(), "&client_id=app%201") != NULL &&
	    !last_has_header("Authorization:"), "… its id alone, still");
	ask.client = &basic;
	is_int(tokenep_request(ix, NULL, cfg, &ask, &a, &err), 0, "a confidential client, client_secret_basic");
	tokenep_answer_clear(&a);
	is_str(last_body(), want, "… its form without the client");
	ok(last_has_header("Authorization: Basic Z3c6czNjcmV0"), "… the client in a Basic header");
	ask.client = &post;
	is_int(tokenep_request(ix, NULL, cfg, &ask, &a, &err), 0, "a confidential client, client_secret_post");
	tokenep_answer_clear(&a);
	ok(!strncmp(last_body(), want, sizeof(want) - 1) &&
	    !strcmp(last_body() + sizeof(want) - 1, "&client_id=gw&client_secret=s3cret"),
	    "… the client and its secret in the form");
	ok(!last_has_header("Authorization:"), "… no Authorization header");
}

/* The code, its redirect_uri and verifier on the wire; nothing sent without the
 * verifier; an unusable refresh token makes the answer unusable; a refusal read. */
static void
wire_code(struct introspect *ix, const struct config *cfg, const char *url)
{
	const struct secret_part code = { "the code", 8 };
	struct as_client pub = { "app 1", NULL, CLIENT_AUTH_BASIC };
	struct tokenep_ask ask = { .grant = TOKENEP_AUTH_CODE, .endpoint = url, .client = &pub, .subject = &code,
		.code_verifier = "v-123", .redirect_uri = "http://127.0.0.1/cb", .now_ms = now };
	struct gw_error err = { GW_OK, 0, "" };
	struct tokenep_answer a;

	tep.answer = "{\"access_token\":\"at-1\",\"token_type\":\"Bearer\"}";
	is_int(tokenep_request(ix, NULL, cfg, &ask, &a, &err), 0, "a public client's code (%s)", err.detail);
	ok(a.token && !strcmp(a.token, "at-1") && a.refresh_token == NULL && a.scope == NULL,
	    "… an access token alone");
	tokenep_answer_clear(&a);
	is_str(last_body(), "grant_type=authorization_code&code=the%20code&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb"
	    "&code_verifier=v-123&client_id=app%201", "… its form: code, redirect_uri, verifier, client_id");
	ask.code_verifier = NULL;
	tep.nreq = 0;
	ok(tokenep_request(ix, NULL, cfg, &ask, &a, &err) == -1 && err.code == GW_EAUTHSERVER && tep.nreq == 0,
	    "… without its verifier: not sent");
	tokenep_answer_clear(&a);
	ask.code_verifier = "v-123";
	tep.answer = "{\"access_token\":\"at-1\",\"token_type\":\"Bearer\",\"refresh_token\":\"r\\u0000x\"}";
	ok(tokenep_request(ix, NULL, cfg, &ask, &a, &err) == -1 && err.code == GW_EAUTHSERVER && a.token == NULL,
	    "… an unusable refresh token: the answer unusable, nothing kept");
	tokenep_answer_clear(&a);
	tep.refuse = 1;
	is_int(tokenep_request(ix, NULL, cfg, &ask, &a, &err), 1, "… a refusal");
	is_str(a.error, "invalid_grant", "… its error");
	tokenep_answer_clear(&a);
	tep.refuse = 0;
}

/* What goes on the wire for a person's grants, through a loopback token endpoint. */
static void
test_request_clients(void)
{
	struct introspect *ix = introspect_new();
	struct config *cfg;
	char url[64];
	pthread_t th;

	if (ix == NULL || tep_start(&th) < 0) {
		ok(0, "a loopback token endpoint");
		return;
	}
	cfg = fixture_config("[gateway]\nresource = https://gw.example.com/mcp\nname = gw\nversion = 1\n"
	    "[auth]\nissuer = https://idp.example.com\n");
	ok(cfg != NULL, "the configuration loads");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/token", tep.port);
	if (cfg) {
		wire_refresh(ix, cfg, url);
		wire_code(ix, cfg, url);
		config_unref(cfg);
	}
	tep.answer = NULL;
	tep.stop = 1;
	pthread_join(th, NULL);
	close(tep.lfd);
	introspect_free(ix);
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
	run_case(test_parse_person);
	run_case(test_parse_person_sizes);
	run_case(test_parse_wipes);
	run_case(test_form_person);
	run_case(test_form_before);
	run_case(test_cache);
	run_case(test_peek);
	run_case(test_markers);
	run_case(test_request_clients);
	return done_testing();
}
