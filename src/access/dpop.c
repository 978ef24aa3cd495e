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
    const struct dpop_req *r, struct dpop_proof *p, struct gw_error *err)
{
	const char *proof = r->proof;
	char ath[JWS_B64_SHA256];
	const char *typ, *jti, *htm, *htu, *claim;
	enum jws_verdict vd;
	struct jws *j = NULL;
	json_t *payload, *iat;
	int64_t t, window = cfg->dpop_window, now_ms = r->now_ms;
	unsigned char d[32];
	int rc = -1;

	memset(p, 0, sizeof(*p));
	if (proof == NULL || *proof == '\0')
		return gw_error_set(err, GW_EDPOP, "DPoP proof missing"), -1;
	if (strlen(proof) > DPOP_PROOF_MAX)
		return gw_error_set(err, GW_EDPOP, "DPoP proof too long"), -1;
	if (jws_parse(proof, strlen(proof), cfg->dpop_algs, &j, err) < 0) {
		err->code = GW_EDPOP;	/* whatever failed, the proof is refused */
		return -1;
	}
	typ = jws_typ(j);
	if (typ == NULL || (strcasecmp(typ, "dpop+jwt") != 0 && strcasecmp(typ, "application/dpop+jwt") != 0)) {
		gw_error_set(err, GW_EDPOP, "DPoP proof typ is not dpop+jwt");
		goto out;
	}
	if ((vd = jws_verify_embedded(j, keys, p->jkt)) != JWS_OK) {
		gw_error_set(err, GW_EDPOP, "%s", vd == JWS_NOKEY ? "DPoP proof carries no usable public key" :
		    "DPoP proof signature does not verify");
		goto out;
	}
	payload = jws_payload(j);
	jti = string_claim(payload, "jti");
	htm = string_claim(payload, "htm");
	htu = string_claim(payload, "htu");
	iat = json_object_get(payload, "iat");
	claim = json_string_value(json_object_get(payload, "ath"));
	if (jti == NULL || strlen(jti) > 512) {
		gw_error_set(err, GW_EDPOP, "DPoP proof without a usable jti");
		goto out;
	}
	if (htm == NULL || strcmp(htm, r->method) != 0) {
		gw_error_set(err, GW_EDPOP, "DPoP proof for another method (htm)");
		goto out;
	}
	if (htu == NULL || !url_same_resource(htu, cfg->resource)) {
		gw_error_set(err, GW_EDPOP, "DPoP proof for another URL (htu)");
		goto out;
	}
	if (!json_is_integer(iat)) {
		gw_error_set(err, GW_EDPOP, "DPoP proof without an iat");
		goto out;
	}
	t = (int64_t)json_integer_value(iat);
	/* Compared against now ± window: no sum of the claim's overflows. */
	if (t < now_ms / 1000 - window || t > now_ms / 1000 + window) {
		gw_error_set(err, GW_EDPOP, "DPoP proof iat out of the accepted window");
		goto out;
	}
	jws_sha256_b64(r->tok, r->len, ath);
	if (claim == NULL || strcmp(claim, ath) != 0) {
		gw_error_set(err, GW_EDPOP, "DPoP proof for another access token (ath)");
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
    int64_t now_ms, struct gw_error *err)
{
	int here = replay_once(r, p->seen, p->until_ms, now_ms), there = -1;

	if (rs && here != 0)
		there = rstore_once(rs, cfg, &(struct rs_key){ RS_DPOP, p->seen }, p->until_ms - now_ms, now_ms);
	if (here == 0 || there == 0)
		return gw_error_set(err, GW_EDPOP, "DPoP proof replayed (jti seen)"), -1;
	if (here < 0 && there < 0)
		return gw_error_set(err, GW_EREPLAY, "whether a proof was seen cannot be told (state file and Redis "
		    "unusable)"), -1;
	return 0;
}

void
dpop_algs(const struct config *cfg, char *out, size_t n)
{
	jws_alg_names(cfg->dpop_algs, out, n);
}
