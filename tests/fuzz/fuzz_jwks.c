/* A JWK set document (jws_keys_parse, src/base/jws.c) and each of its keys' RFC 7638
 * thumbprint (jws_thumbprint). Properties: a parsed set holds at most JWS_KEYS_MAX keys,
 * and one without a usable key says why (an issuer's empty set is still a set); a
 * document refused is one without a "keys" array; a thumbprint is 43 base64url
 * characters, the same for a key whatever the order or the extra members of its JSON. */
#include "autoconf.h"

#include <jansson.h>

#include "fuzz.h"
#include "jws.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char a[JWS_B64_SHA256], b[JWS_B64_SHA256];
	struct gw_error err = { GW_OK, 0, "" };
	struct jws_keys *ks = jws_keys_parse((const char *)data, size, &err);
	json_t *doc, *k, *copy;
	size_t i;

	doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (ks) {
		FUZZ_CHECK(jws_keys_count(ks) <= JWS_KEYS_MAX && json_is_array(json_object_get(doc, "keys")));
		FUZZ_CHECK(jws_keys_count(ks) > 0 || (err.code == GW_EAUTHSERVER && err.detail[0] != '\0'));
		jws_keys_free(ks);
	} else
		FUZZ_CHECK(err.detail[0] != '\0' && !json_is_array(json_object_get(doc, "keys")));
	json_array_foreach(json_object_get(doc, "keys"), i, k) {
		if (jws_thumbprint(k, a) < 0)
			continue;
		FUZZ_CHECK(strlen(a) == JWS_B64_SHA256 - 1 && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == strlen(a));
		copy = json_deep_copy(k);
		json_object_set_new(copy, "zz-extra", json_true());
		json_object_del(copy, "kid");
		FUZZ_CHECK(jws_thumbprint(copy, b) == 0 && strcmp(a, b) == 0);
		json_decref(copy);
	}
	json_decref(doc);
	return 0;
}
