/* input_seal — the requestState a caller gets when the gateway relays an upstream's
 * input_required (2026-07-28): "SEAL.STATE", STATE the upstream's own as it wrote it
 * (none: "SEAL" alone) and SEAL what binds it (XChaCha20-Poly1305 under a key derived
 * from the session key): the caller it was given to, the upstream that wrote it, an
 * end, and a digest of STATE. So the caller's retry goes back to that upstream with
 * its state unaltered, and no other caller, upstream or later retry can use it; a
 * state without our seal, or with one that does not open, is refused.
 *
 * STATE is not hidden from the caller (it never was: an upstream hands it to its
 * client), only bound, which leaves its size to the request's caps. Pure: nothing is
 * remembered. */
#ifndef GW_INPUT_SEAL_H
#define GW_INPUT_SEAL_H

#include <stddef.h>
#include <stdint.h>

#define INPUT_STATE_MS		(10 * 60 * 1000)	/* a relayed input_required is answered within */
#define INPUT_WHO_MAX		48	/* the caller's digest, with its NUL (upstream.h's who) */
#define INPUT_UPSTREAM_MAX	128	/* the upstream's section name, with its NUL */

/* The key the seals are made under, from the session key. */
void input_key_derive(unsigned char key[32], const unsigned char session_key[32]);

/* "SEAL.STATE" (or "SEAL" when state is NULL) for who, upstream, until until_ms (wall
 * clock): malloc'd, or NULL (who or upstream empty or too long, out of memory). */
char *input_wrap(const unsigned char key[32], const char *who, const char *upstream, const char *state,
    int64_t until_ms);
/* The sealed plaintext (n bytes) as input_unwrap reads it, for who, state (NULL: none)
 * and now_ms: 0 with the upstream's name, or -1 (upstream then empty). */
int input_parse(const unsigned char *p, size_t n, const char *who, const char *state, int64_t now_ms,
    char upstream[INPUT_UPSTREAM_MAX]);
/* Opens wrapped for who at now_ms: 0 with the upstream's name in upstream and *state
 * pointing into wrapped (NULL when there was none); -1 when it is not one of ours for
 * who, altered (SEAL or STATE), or past its end. */
int input_unwrap(const unsigned char key[32], const char *wrapped, const char *who, int64_t now_ms,
    char upstream[INPUT_UPSTREAM_MAX], const char **state);

#endif
