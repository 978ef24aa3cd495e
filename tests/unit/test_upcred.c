/* Unit tests: the upstream credentials of callers — a token endpoint's answers
 * (tokenep_parse), the host's cache of issued tokens (credcache: claims, waits, expiry,
 * eviction, a region written over, a copy read as explain reads it), and the markers
 * upcred leaves there for explain, with tokens from a loopback token endpoint (the
 * [upstream] credentials contract is test_config's). */
#include "autoconf.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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
 * refused with invalid_grant while tep.refuse is set ---- */

static struct {
	int lfd, port, refuse, nreq;
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
	if (tep.refuse)
		snprintf(body, sizeof(body), "{\"error\":\"invalid_grant\"}");
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
	run_case(test_peek);
	run_case(test_markers);
	return done_testing();
}
