/* dpop — RFC 9449 proofs: their checks and their replay. */
#include "autoconf.h"

#include <string.h>
#include <strings.h>

#include "dpop.h"
#include "secret.h"
#include "url.h"

/* A claim that must be a non-empty string: it, or NULL. */
static const char *
string_claim(json_t *payload, const char *name)
{
	const char *s = json_string_value(json_object_get(payload, name));

	return s && *s ? s : NULL;
}

/* Long: the checks of RFC 9449 §4.3, one after the other in the RFC's order, each with
 * the reason it gives. */
int
dpop_check(const struct config *cfg, const unsigned char *digest_key, struct jws_keycache *keys,
    const char *proof, const char *method, const char *tok, size_t len, int64_t now_ms, struct dpop_proof *p,
    const char **reason)
{
	char ath[JWS_B64_SHA256];
	const char *typ, *jti, *htm, *htu, *claim;
	enum jws_verdict vd;
	struct jws *j = NULL;
	json_t *payload, *iat;
	int64_t t, window = cfg->dpop_window;
	unsigned char d[32];
	int rc = -1;

	memset(p, 0, sizeof(*p));
	if (proof == NULL || *proof == '\0')
		return *reason = "DPoP proof missing", -1;
	if (strlen(proof) > DPOP_PROOF_MAX || jws_parse(proof, strlen(proof), cfg->dpop_algs, &j, reason) < 0) {
		if (strlen(proof) > DPOP_PROOF_MAX)
			*reason = "DPoP proof too long";
		return -1;
	}
	typ = jws_typ(j);
	if (typ == NULL || (strcasecmp(typ, "dpop+jwt") != 0 && strcasecmp(typ, "application/dpop+jwt") != 0)) {
		*reason = "DPoP proof typ is not dpop+jwt";
		goto out;
	}
	if ((vd = jws_verify_embedded(j, keys, p->jkt)) != JWS_OK) {
		*reason = vd == JWS_NOKEY ? "DPoP proof carries no usable public key" : "DPoP proof signature does not verify";
		goto out;
	}
	payload = jws_payload(j);
	jti = string_claim(payload, "jti");
	htm = string_claim(payload, "htm");
	htu = string_claim(payload, "htu");
	iat = json_object_get(payload, "iat");
	claim = json_string_value(json_object_get(payload, "ath"));
	if (jti == NULL || strlen(jti) > 512) {
		*reason = "DPoP proof without a usable jti";
		goto out;
	}
	if (htm == NULL || strcmp(htm, method) != 0) {
		*reason = "DPoP proof for another method (htm)";
		goto out;
	}
	if (htu == NULL || !url_same_resource(htu, cfg->resource)) {
		*reason = "DPoP proof for another URL (htu)";
		goto out;
	}
	if (!json_is_integer(iat)) {
		*reason = "DPoP proof without an iat";
		goto out;
	}
	t = (int64_t)json_integer_value(iat);
	/* Compared against now ± window: no sum of the claim's overflows. */
	if (t < now_ms / 1000 - window || t > now_ms / 1000 + window) {
		*reason = "DPoP proof iat out of the accepted window";
		goto out;
	}
	jws_sha256_b64(tok, len, ath);
	if (claim == NULL || strcmp(claim, ath) != 0) {
		*reason = "DPoP proof for another access token (ath)";
		goto out;
	}
	{
		struct secret_part parts[3] = { { "dpop", 5 }, { p->jkt, strlen(p->jkt) + 1 }, { jti, strlen(jti) } };

		secret_keyed_digest_parts(digest_key, parts, 3, d);
		memcpy(p->seen, d, sizeof(p->seen));
	}
	p->until_ms = (t + window) * 1000 + 999;
	rc = 0;
out:
	jws_free(j);
	return rc;
}

int
dpop_once(struct replay *r, struct rstore *rs, const struct config *cfg, const struct dpop_proof *p,
    int64_t now_ms)
{
	int here = replay_once(r, p->seen, p->until_ms, now_ms), there = -1;

	if (rs && here != 0)
		there = rstore_once(rs, cfg, &(struct rs_key){ RS_DPOP, p->seen }, p->until_ms - now_ms, now_ms);
	if (here == 0 || there == 0)
		return 0;
	return here == 1 || there == 1 ? 1 : -1;
}

void
dpop_algs(const struct config *cfg, char *out, size_t n)
{
	jws_alg_names(cfg->dpop_algs, out, n);
}
