/* A DPoP proof (the DPoP header: dpop_check, src/access/dpop.c) for POST of a fixed
 * token, under a fixed configuration and time (the corpus holds proofs made for them).
 * Properties: an accepted proof names a key by a 43-character thumbprint, is remembered
 * until a time within the window, and checking it twice gives the same name. */
#include "autoconf.h"

#include "dpop.h"
#include "fuzz.h"

#define NOW_MS	1760000000000LL
#define TOKEN	"fuzz-token"

static struct config *cfg;
static unsigned char key[32];
static struct jws_keycache *keys;	/* a worker's: the second check of a proof takes its key from it */

void
fuzz_setup(void)
{
	cfg = fuzz_config("[gateway]\nresource = https://gw.example.com/mcp\n"
	    "[auth]\nissuer = https://idp.example.com\ndpop-window = 60\n");
	memset(key, 7, sizeof(key));
	keys = jws_keycache_new();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	struct dpop_proof p, q;
	const struct dpop_req post = { s, "POST", TOKEN, strlen(TOKEN), NOW_MS }, get = { s, "GET", TOKEN, strlen(TOKEN),
	    NOW_MS };
	struct gw_error err = { GW_OK, 0, "" };

	if (dpop_check(cfg, key, keys, &post, &p, &err) == 0) {
		FUZZ_CHECK(strlen(p.jkt) == JWS_B64_SHA256 - 1);
		FUZZ_CHECK(p.until_ms > NOW_MS && p.until_ms <= NOW_MS + 2 * 60 * 1000 + 1000);
		FUZZ_CHECK(dpop_check(cfg, key, keys, &post, &q, &err) == 0);
		FUZZ_CHECK(memcmp(&p, &q, sizeof(p)) == 0);
		FUZZ_CHECK(dpop_check(cfg, key, keys, &get, &q, &err) < 0);
	} else
		FUZZ_CHECK(err.code == GW_EDPOP && *err.detail);
	free(s);
	return 0;
}
