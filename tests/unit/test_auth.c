/* Unit tests: the acceptance of introspection responses (docs/ARCHITECTURE.md §5), and
 * the challenges. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "authreq.h"
#include "clock.h"
#include "fixture.h"
#include "secret.h"
#include "tap.h"

#define NOW 1700000000

/* A configuration whose [auth] section ends with extra (and whose authorization
 * server refuses at once: nothing listens on port 1). */
static struct config *
conf(const char *resource, const char *extra)
{
	char text[1024];

	snprintf(text, sizeof(text), "[gateway]\nresource = %s\n[auth]\nissuer = https://idp.example.com\n"
	    "introspection-endpoint = http://127.0.0.1:1/introspect\ntimeout-ms = 500\n"
	    "required-scopes = mcp:tools\n%s", resource, extra);
	return fixture_config(text);
}

/* The token cache binds an entry to the acceptance context: a gateway with another
 * resource, issuer, introspection client or claim names never hits another's entry (two
 * gateways sharing a state file; one reloaded with new values). And a token is refused
 * for its syntax or size before the cache or the authorization server sees it. */
static void
test_cache_context(void)
{
	/* Each: resource, [auth] lines, and the answer once it is not a hit: 500 when it went
	 * to the (down) authorization server, 401 when verified here as a JWT (it is none). */
	static const struct {
		const char *resource, *extra;
		int status;
	} variants[] = {
		{ "https://other.example.com/mcp", "", 500 },
		{ "https://gw.example.com/mcp", "groups-claim = roles\n", 500 },
		{ "https://gw.example.com/mcp", "tenant-claim = org\n", 500 },
		{ "https://gw.example.com/mcp", "client-id = someone-else\n", 500 },
		{ "https://gw.example.com/mcp", "scope-claim = scp\n", 500 },
		{ "https://gw.example.com/mcp", "audiences = api://gateway\n", 500 },
		{ "https://gw.example.com/mcp", "verify = auto\n", 500 },
		{ "https://gw.example.com/mcp", "verify = jwt\n", 401 },
		{ "https://gw.example.com/mcp", "verify = jwt\njwt-algs = ES256\n", 401 },
		{ "https://gw.example.com/mcp", "verify = jwt\njwt-typ = lenient\n", 401 },
		{ "https://gw.example.com/mcp", "verify = jwt\nclock-skew = 5\n", 401 },
		{ "https://gw.example.com/mcp", "verify = jwt\nintrospect-jwt = yes\n", 401 },
		{ "https://gw.example.com/mcp", "verify = jwt\njwks-uri = https://idp.example.com/keys\n", 401 },
	};
	const char *token = "tok-abc.DEF_123";
	unsigned char dkey[32], ka[TC_KEY_BYTES], kb[TC_KEY_BYTES];
	struct config *a, *again, *b;
	struct claims claims;
	struct auth_env env;
	char desc[1024], *big, header[64], padding[] = "Bearer ====";
	size_t size = token_cache_region_size(64), i;
	void *region = calloc(1, size);
	int64_t now = clock_wall_ms();

	secret_random_bytes(dkey, sizeof(dkey));
	state_region_make(&token_cache_region_def, region, size, 0);
	memset(&env, 0, sizeof(env));
	env.ix = introspect_new();
	env.tokens = token_cache_attach(region, size);
	env.digest_key = dkey;
	a = conf("https://gw.example.com/mcp", "");
	again = conf("https://gw.example.com/mcp", "");
	if (a == NULL || again == NULL || env.tokens == NULL) {
		ok(0, "context test set up");
		return;
	}
	auth_cache_key(dkey, a, token, strlen(token), ka);
	auth_cache_key(dkey, again, token, strlen(token), kb);
	ok(memcmp(ka, kb, sizeof(ka)) == 0, "the same acceptance context: the same cache key");
	memset(&claims, 0, sizeof(claims));
	snprintf(claims.subject, sizeof(claims.subject), "alice");
	snprintf(claims.scope, sizeof(claims.scope), "mcp:tools");
	claims.exp = now / 1000 + 600;
	token_cache_fill(env.tokens, ka, now, &claims, now + 60000);
	snprintf(header, sizeof(header), "Bearer %s", token);
	is_int(authreq(&env, a, header, NULL, desc, sizeof(desc)), 0,
	    "a token cached under this context is a hit (no authorization server needed)");
	for (i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		if ((b = conf(variants[i].resource, variants[i].extra)) == NULL) {
			ok(0, "variant %zu loads", i);
			continue;
		}
		auth_cache_key(dkey, b, token, strlen(token), kb);
		snprintf(desc, sizeof(desc), "%s", variants[i].extra);
		for (char *nl = desc; (nl = strchr(nl, '\n')) != NULL;)
			*nl = ';';
		ok(memcmp(ka, kb, sizeof(ka)) != 0, "variant %zu (%s %s): another cache key", i,
		    variants[i].resource, desc);
		/* Not a hit: the token goes to the authorization server, which is down, or is
		 * verified here as a JWT, which it is not. */
		is_int(authreq(&env, b, header, NULL, desc, sizeof(desc)), variants[i].status,
		    "variant %zu: the other context's entry is not a hit (%s)", i,
		    variants[i].status == 500 ? "introspected: 500 here" : "not a JWT: 401");
		config_unref(b);
	}
	/* Keys that do not decide acceptance leave the key alone (a reload that changes
	 * them keeps the cache). */
	if ((b = conf("https://gw.example.com/mcp", "cache-ttl = 10\nnegative-ttl = 5\ncache-entries = 128\n")) != NULL) {
		auth_cache_key(dkey, b, token, strlen(token), kb);
		ok(memcmp(ka, kb, sizeof(ka)) == 0, "cache-ttl, negative-ttl, cache-entries changed: the same cache key");
		config_unref(b);
	} else {
		ok(0, "a variant of cache lifetimes loads");
	}

	/* Syntax and size, decided before the cache and the (down) authorization server. */
	is_int(authreq(&env, a, padding, NULL, desc, sizeof(desc)), 401, "padding alone is no token: 401");
	big = malloc(AUTH_TOKEN_MAX + 16);
	memcpy(big, "Bearer ", 7);
	memset(big + 7, '/', AUTH_TOKEN_MAX + 1);
	big[7 + AUTH_TOKEN_MAX + 1] = '\0';
	is_int(authreq(&env, a, big, NULL, desc, sizeof(desc)), 401, "a token over AUTH_TOKEN_MAX: 401, not 500");
	ok(strstr(desc, "error=\"invalid_token\"") && strstr(desc, "token too long"),
	    "an oversize token: invalid_token, token too long");
	big[7 + AUTH_TOKEN_MAX] = '\0';
	is_int(authreq(&env, a, big, NULL, desc, sizeof(desc)), 500,
	    "a token of AUTH_TOKEN_MAX '/' is introspected (500 from the down server, not a build failure)");
	free(big);

	token_cache_detach(env.tokens);
	introspect_free(env.ix);
	free(region);
	config_unref(a);
	config_unref(again);
}

static struct config *cfg;	/* the gateway whose acceptance rules the tests below check */

/* Each introspection response of the table is accepted, or refused for its reason. */
static void
test_rows(void)
{
	static const struct {
		const char *json;
		const char *reason;	/* NULL = accepted */
	} rows[] = {
		{ "{\"active\":true,\"aud\":\"https://gw.example.com/mcp\",\"exp\":1700000100,\"client_id\":\"c\",\"sub\":\"alice\",\"scope\":\"mcp:tools\"}", NULL },
		{ "{\"active\":true,\"aud\":[\"x\",\"https://gw.example.com/mcp/\"],\"exp\":1700000100,\"client_id\":\"c\"}", NULL },
		{ "{\"active\":true,\"aud\":\"https://gw.example.com/mcp\",\"iss\":\"https://idp.example.com/\",\"exp\":1700000100}", NULL },
		{ "{\"active\":true,\"aud\":\"https://gw.example.com/mcp\",\"nbf\":1700000000,\"exp\":1700000100}", NULL },
		{ "{\"active\":false}", "token is not active" },
		{ "{\"active\":\"true\",\"aud\":\"https://gw.example.com/mcp\"}", "token is not active" },
		{ "{\"aud\":\"https://gw.example.com/mcp\"}", "token is not active" },
		{ "{\"active\":true,\"aud\":\"https://gw.example.com/mcp\",\"exp\":1700000000}", "token expired" },
		{ "{\"active\":true,\"aud\":\"https://gw.example.com/mcp\",\"exp\":\"soon\"}", "token exp is not a number" },
		{ "{\"active\":true,\"aud\":\"https://gw.example.com/mcp\",\"nbf\":1700000001,\"exp\":1700000100}", "token not yet valid" },
		{ "{\"active\":true,\"aud\":\"https://gw.example.com/mcp\",\"iss\":\"https://evil.example\",\"exp\":1700000100}", "token issued by another issuer" },
		{ "{\"active\":true,\"aud\":\"https://other.example.com/mcp\",\"exp\":1700000100}", "token not issued for this resource" },
		{ "{\"active\":true,\"aud\":[\"https://other.example.com/mcp\"],\"exp\":1700000100}", "token not issued for this resource" },
		{ "{\"active\":true,\"exp\":1700000100,\"client_id\":\"c\"}", "token not issued for this resource" },
		{ "{\"active\":true,\"aud\":\"https://gw.example.com/mcp\",\"token_type\":\"refresh_token\",\"exp\":1700000100}", "a refresh token is not an access token" },
		{ "{\"active\":true,\"aud\":\"https://gw.example.com/mcp\",\"exp\":1700000100,\"groups\":7}", "token groups claim unusable" },
		{ "{\"active\":true,\"aud\":\"https://gw.example.com/mcp\",\"exp\":1700000100,\"tenant\":[\"a\"]}", "token tenant claim unusable" },
	};
	struct claims c;
	struct gw_error err;
	json_t *j;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		j = json_loads(rows[i].json, 0, NULL);
		err.detail[0] = '\0';
		if (rows[i].reason == NULL)
			ok(auth_check_claims(cfg, j, NOW, &c, &err) == 0, "row %zu accepted (%s)", i, err.detail);
		else
			ok(auth_check_claims(cfg, j, NOW, &c, &err) < 0 && err.code == GW_EBADTOKEN &&
			    !strcmp(err.detail, rows[i].reason), "row %zu: %s (got %s)", i, rows[i].reason, err.detail);
		json_decref(j);
	}
}

/* A machine token: the client id as subject, flagged, its groups, tenant and exp read. */
static void
test_machine_token(void)
{
	struct claims c;
	struct gw_error err;
	json_t *j;

	j = json_loads("{\"active\":true,\"aud\":\"https://gw.example.com/mcp\",\"exp\":1700000100,\"client_id\":\"m1\","
	    "\"scope\":\"mcp:tools mcp:admin\",\"groups\":[\"engineering\",\"ops\",\"bad group\",3],\"tenant\":\"acme\"}", 0, NULL);
	ok(auth_check_claims(cfg, j, NOW, &c, &err) == 0, "machine token accepted");
	is_str(c.subject, "m1", "machine token: subject is the client id");
	ok(c.machine, "machine token flagged");
	is_str(c.groups, "engineering ops", "groups joined, unusable names skipped");
	is_str(c.tenant, "acme", "tenant");
	is_int(c.exp, 1700000100, "exp");
	json_decref(j);
}

/* A user token with its groups as a string and no exp, which cache-ttl then bounds. */
static void
test_user_token(void)
{
	struct claims c;
	struct gw_error err;
	json_t *j;

	j = json_loads("{\"active\":true,\"aud\":\"https://gw.example.com/mcp\",\"sub\":\"alice\",\"groups\":\"a b\"}", 0, NULL);
	ok(auth_check_claims(cfg, j, NOW, &c, &err) == 0 && !c.machine && !strcmp(c.groups, "a b"),
	    "user token, groups as a string");
	is_int(c.exp, NOW + 300, "no exp: cache-ttl bounds it");
	json_decref(j);
}

/* The WWW-Authenticate challenges: without a token, and for an invalid one. */
static void
test_challenges(void)
{
	struct response r;

	response_init(&r, "rid");
	auth_challenge(cfg, &r, GW_ENOTOKEN, NULL);
	is_str(response_get_header(&r, "WWW-Authenticate"),
	    "Bearer resource_metadata=\"https://gw.example.com/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:tools\"",
	    "401 without a token: no error field");
	response_free(&r);
	response_init(&r, "rid");
	auth_challenge(cfg, &r, GW_EBADTOKEN, "token \"expired\" a=b");
	is_str(response_get_header(&r, "WWW-Authenticate"),
	    "Bearer resource_metadata=\"https://gw.example.com/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:tools\", "
	    "error=\"invalid_token\", error_description=\"token 'expired' a'b\"",
	    "401 invalid_token: description without quotes or name=");
	is_int(r.status, 401, "401");
	response_free(&r);

	/* Scopes longer than the challenge's buffer: the metadata alone, never a cut list. */
	char text[16384];
	struct config *many;
	int n = snprintf(text, sizeof(text), "[gateway]\nresource = https://gw.example.com/mcp\n[auth]\n"
	    "issuer = https://idp.example.com\nrequired-scopes =");

	for (int i = 0; i < 370; i++)	/* one line under the loader's 4096 bytes */
		n += snprintf(text + n, sizeof(text) - (size_t)n, " scope:%04d", i);
	snprintf(text + n, sizeof(text) - (size_t)n, "\n");
	if (ok((many = fixture_config(text)) != NULL, "a configuration with 370 required scopes")) {
		response_init(&r, "rid");
		auth_challenge(many, &r, GW_ENOTOKEN, NULL);
		is_str(response_get_header(&r, "WWW-Authenticate"),
		    "Bearer resource_metadata=\"https://gw.example.com/.well-known/oauth-protected-resource/mcp\"",
		    "… its challenge too long: the metadata alone");
		response_free(&r);
		config_unref(many);
	}
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	cfg = fixture_config("[gateway]\nresource = https://gw.example.com/mcp\n[auth]\nissuer = https://idp.example.com\n"
	    "required-scopes = mcp:tools\ngroups-claim = groups\n");
	if (cfg == NULL)
		return printf("Bail out! the configuration does not load\n"), 1;

	run_case(test_rows);
	run_case(test_machine_token);
	run_case(test_user_token);
	run_case(test_challenges);
	config_unref(cfg);
	run_case(test_cache_context);
	return done_testing();
}
