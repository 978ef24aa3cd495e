/* A vault value opened and read (src/access/vault_seal.c), under a fixed key and name.
 * The first byte's low bit picks what the rest is: 0, a plaintext (sealed here as it
 * is, then vault_open: the reader of the fixed shape behind an authentic seal); 1, a
 * sealed value as the state file could hold it (vault_open on it: forged, torn or
 * altered, it must not open). Properties: what opens holds an access token of 1 to
 * VAULT_TOKEN_MAX allowed characters, a person's digest, an upstream, times that are
 * not negative; sealed again it opens to the same; and the shape is the one
 * vault_seal writes, byte for byte (a value has one way to be written). */
#include "autoconf.h"

#include "fuzz.h"
#include "vault_seal.h"

static struct vault_keys keys;
static unsigned char name[VAULT_NAME_BYTES];
static char ad[2 * VAULT_NAME_BYTES + 1];

void
fuzz_setup(void)
{
	static const unsigned char skey[STATE_KEY_BYTES] = { 0x42 };
	static const char hex[] = "0123456789abcdef";
	size_t i;

	vault_keys_derive(&keys, skey);
	vault_name(&keys, "https://idp.example", "alice", "github", name);
	for (i = 0; i < VAULT_NAME_BYTES; i++) {
		ad[2 * i] = hex[name[i] >> 4];
		ad[2 * i + 1] = hex[name[i] & 15];
	}
}

static int
allowed(const char *s, int blank_ok)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e || *s == '"' || *s == '\\' ||
		    (*s == ' ' && !blank_ok))
			return 0;
	return 1;
}

/* What opened, checked; then sealed again, opened again, and compared; its plaintext
 * compared with plain (n bytes) when there is one. */
static void
check(const struct vault_tokens *t, const char *plain, size_t n)
{
	static char sealed[VAULT_VALUE_MAX], again[VAULT_PLAIN_MAX];
	struct vault_tokens u;
	long m;

	FUZZ_CHECK(t->access_token != NULL && strlen(t->access_token) >= 1 &&
	    strlen(t->access_token) <= VAULT_TOKEN_MAX && allowed(t->access_token, 0));
	FUZZ_CHECK(t->refresh_token == NULL || (strlen(t->refresh_token) >= 1 &&
	    strlen(t->refresh_token) <= VAULT_TOKEN_MAX && allowed(t->refresh_token, 0)));
	FUZZ_CHECK(t->scope == NULL || (strlen(t->scope) >= 1 && strlen(t->scope) <= VAULT_SCOPE_MAX &&
	    allowed(t->scope, 1)));
	FUZZ_CHECK(strlen(t->who) == VAULT_WHO_LEN && strspn(t->who, "0123456789abcdef") == VAULT_WHO_LEN);
	FUZZ_CHECK(memchr(t->upstream, '\0', sizeof(t->upstream)) != NULL && t->upstream[0] != '\0' &&
	    allowed(t->upstream, 0));
	FUZZ_CHECK(t->access_until_ms >= 0 && t->refresh_until_ms >= 0 && t->obtained_ms >= 0);
	FUZZ_CHECK(vault_seal(&keys, name, t, sealed, sizeof(sealed)) == 0);
	FUZZ_CHECK(vault_open(&keys, name, sealed, &u) == 0);
	FUZZ_CHECK(strcmp(u.access_token, t->access_token) == 0 && strcmp(u.who, t->who) == 0 &&
	    strcmp(u.upstream, t->upstream) == 0 && u.access_until_ms == t->access_until_ms &&
	    u.refresh_until_ms == t->refresh_until_ms && u.obtained_ms == t->obtained_ms);
	FUZZ_CHECK((u.refresh_token == NULL) == (t->refresh_token == NULL) &&
	    (u.refresh_token == NULL || strcmp(u.refresh_token, t->refresh_token) == 0));
	FUZZ_CHECK((u.scope == NULL) == (t->scope == NULL) && (u.scope == NULL || strcmp(u.scope, t->scope) == 0));
	vault_tokens_free(&u);
	if (plain != NULL) {
		m = secret_open(keys.seal, sealed, ad, again, sizeof(again));
		FUZZ_CHECK(m >= 0 && (size_t)m == n && memcmp(again, plain, n) == 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char sealed[VAULT_VALUE_MAX + 64];
	struct vault_tokens t;
	char *s;

	if (size < 1)
		return 0;
	if ((data[0] & 1) == 0) {
		if (size - 1 >= VAULT_PLAIN_MAX ||
		    secret_seal(keys.seal, data + 1, size - 1, ad, sealed, sizeof(sealed)) < 0)
			return 0;
		if (vault_open(&keys, name, sealed, &t) == 0) {
			check(&t, (const char *)data + 1, size - 1);
			vault_tokens_free(&t);
		} else
			FUZZ_CHECK(t.access_token == NULL && t.refresh_token == NULL && t.scope == NULL);
		return 0;
	}
	s = fuzz_cstr(data + 1, size - 1);
	if (vault_open(&keys, name, s, &t) == 0) {
		check(&t, NULL, 0);
		vault_tokens_free(&t);
	} else
		FUZZ_CHECK(t.access_token == NULL && t.refresh_token == NULL && t.scope == NULL);
	free(s);
	return 0;
}
