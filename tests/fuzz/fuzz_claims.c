/* An introspection response (RFC 7662) as JSON: auth_check_claims and auth_claims_read
 * (src/access/auth.c) under a fixed configuration. Properties: an accepted token is active,
 * unexpired, for this resource and issuer; its claims are the ones auth_claims_read
 * reads; every field is a terminated string within its size. */
#include "autoconf.h"

#include <jansson.h>

#include "auth.h"
#include "fuzz.h"
#include "url.h"

#define NOW	1760000000	/* seconds */

static struct config *cfg;

void
fuzz_setup(void)
{
	cfg = fuzz_config("[gateway]\nresource = https://gw.example.com/mcp\n"
	    "[auth]\nissuer = https://idp.example.com\nrequired-scopes = mcp:tools\n"
	    "groups-claim = roles\ntenant-claim = org\ncache-ttl = 300\n");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct claims c, r;
	struct gw_error err = { GW_OK, 0, "" }, err2 = { GW_OK, 0, "" };
	const char *iss;
	json_t *ir = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);	/* as introspect.c */
	int read_rc;

	if (ir == NULL)
		return 0;
	read_rc = auth_claims_read(cfg, ir, &r, &err2);
	if (read_rc == 0)
		fuzz_claims_ok(&r);
	else
		FUZZ_CHECK(err2.code == GW_EBADTOKEN && *err2.detail);
	if (auth_check_claims(cfg, ir, NOW, &c, &err) == 0) {
		fuzz_claims_ok(&c);
		FUZZ_CHECK(json_is_true(json_object_get(ir, "active")));
		FUZZ_CHECK(c.exp > NOW);
		iss = json_string_value(json_object_get(ir, "iss"));
		FUZZ_CHECK(json_object_get(ir, "iss") == NULL || (iss && url_same(iss, cfg->issuer)));
		FUZZ_CHECK(read_rc == 0);
		r.exp = c.exp;
		FUZZ_CHECK(memcmp(&r, &c, sizeof(c)) == 0);
	} else
		FUZZ_CHECK(err.code == GW_EBADTOKEN && *err.detail);
	json_decref(ir);
	return 0;
}
