/* The requestState of a relayed input_required (src/access/input_seal.c), under a fixed
 * key. The first byte picks what the rest is: its low bit 0, a plaintext read by
 * input_parse (the reader of the fixed layout behind an authentic seal) for the caller
 * "who-a", the state "st" (byte & 2) or none, at INPUT_NOW; 1, a requestState as a
 * caller could send it (input_unwrap). Properties: what parses names an upstream of 1
 * to 127 bytes with no NUL, and wrapped again for the same caller and state it unwraps
 * to that upstream and state, and not for another caller; what a caller sends without
 * our seal never unwraps; what does not parse or unwrap leaves the upstream empty and
 * no state.
 *
 * A plaintext, big-endian: until_ms (8) | has a state (1) | its SHA-256 (32)
 *   | caller length (1) | caller | upstream length (1) | upstream */
#include "autoconf.h"

#include "fuzz.h"
#include "input_seal.h"

#define INPUT_NOW	1700000000000LL

static unsigned char key[32];

void
fuzz_setup(void)
{
	static const unsigned char skey[32] = { 0x42 };

	input_key_derive(key, skey);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char up[INPUT_UPSTREAM_MAX], up2[INPUT_UPSTREAM_MAX], *s, *w;
	const char *state, *st2;
	size_t n;

	if (size == 0)
		return 0;
	if ((data[0] & 1) == 0) {
		state = data[0] & 2 ? "st" : NULL;
		if (input_parse(data + 1, size - 1, "who-a", state, INPUT_NOW, up) < 0) {
			FUZZ_CHECK(up[0] == '\0');
			return 0;
		}
		n = strlen(up);
		FUZZ_CHECK(n >= 1 && n < INPUT_UPSTREAM_MAX);
		w = input_wrap(key, "who-a", up, state, INPUT_NOW + INPUT_STATE_MS);
		FUZZ_CHECK(w != NULL);
		FUZZ_CHECK(input_unwrap(key, w, "who-a", INPUT_NOW, up2, &st2) == 0);
		FUZZ_CHECK(strcmp(up, up2) == 0);
		FUZZ_CHECK((state == NULL) == (st2 == NULL) && (state == NULL || strcmp(state, st2) == 0));
		FUZZ_CHECK(input_unwrap(key, w, "who-b", INPUT_NOW, up2, &st2) < 0);
		free(w);
		return 0;
	}
	s = fuzz_cstr(data + 1, size - 1);
	FUZZ_CHECK(input_unwrap(key, s, "who-a", INPUT_NOW, up, &state) < 0);
	FUZZ_CHECK(up[0] == '\0' && state == NULL);
	free(s);
	return 0;
}
