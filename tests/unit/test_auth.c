/* Unit tests: DESIGN §5 acceptance of introspection responses, and the challenges. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "tap.h"

#define NOW 1700000000

int
main(void)
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
	char dir[] = "/tmp/mcpgate-test-auth-XXXXXX", path[256];
	struct cfg_errors errs;
	struct tc_claims c;
	struct config *cfg;
	struct response r;
	const char *reason;
	json_t *j;
	size_t i;
	FILE *f;

	mkdtemp(dir);
	snprintf(path, sizeof(path), "%s/gw.conf", dir);
	f = fopen(path, "w");
	fputs("[gateway]\nresource = https://gw.example.com/mcp\n[auth]\nissuer = https://idp.example.com\n"
	    "required-scopes = mcp:tools\ngroups-claim = groups\n", f);
	fclose(f);
	if (config_load(path, &cfg, &errs) < 0)
		return printf("Bail out! %s\n", errs.msg[0]), 1;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		j = json_loads(rows[i].json, 0, NULL);
		reason = NULL;
		if (rows[i].reason == NULL)
			ok(auth_check_claims(cfg, j, NOW, &c, &reason) == 0, "row %zu accepted (%s)", i, reason ? reason : "");
		else
			ok(auth_check_claims(cfg, j, NOW, &c, &reason) < 0 && reason && !strcmp(reason, rows[i].reason),
			    "row %zu: %s (got %s)", i, rows[i].reason, reason ? reason : "accepted");
		json_decref(j);
	}

	j = json_loads("{\"active\":true,\"aud\":\"https://gw.example.com/mcp\",\"exp\":1700000100,\"client_id\":\"m1\","
	    "\"scope\":\"mcp:tools mcp:admin\",\"groups\":[\"engineering\",\"ops\",\"bad group\",3],\"tenant\":\"acme\"}", 0, NULL);
	ok(auth_check_claims(cfg, j, NOW, &c, &reason) == 0, "machine token accepted");
	is_str(c.subject, "m1", "machine token: subject is the client id");
	ok(c.machine, "machine token flagged");
	is_str(c.groups, "engineering ops", "groups joined, unusable names skipped");
	is_str(c.tenant, "acme", "tenant");
	is_int(c.exp, 1700000100, "exp");
	json_decref(j);
	j = json_loads("{\"active\":true,\"aud\":\"https://gw.example.com/mcp\",\"sub\":\"alice\",\"groups\":\"a b\"}", 0, NULL);
	ok(auth_check_claims(cfg, j, NOW, &c, &reason) == 0 && !c.machine && !strcmp(c.groups, "a b"),
	    "user token, groups as a string");
	is_int(c.exp, NOW + 300, "no exp: cache-ttl bounds it");
	json_decref(j);

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
	config_unref(cfg);
	unlink(path);
	rmdir(dir);
	return done_testing();
}
