/* connect_seal — what the connect page hands to a browser and gets back: the ticket of
 * a connect link (made when a call needs a person's account at a user-oauth upstream),
 * and the OAuth `state` of each of its two legs (signing the person in at the
 * organisation's issuer, then asking their consent at the upstream's authorization
 * server). Each is sealed (XChaCha20-Poly1305) under a key derived from the session key,
 * its kind in the associated data (a state is never taken for a ticket, nor one leg's for
 * the other's), with an end and a random id that the page uses once. What a browser sees
 * is opaque: the person's digest, the PKCE verifier and, on the second leg, the subject
 * stay sealed.
 *
 * Pure: seal and open, nothing remembered (the single use is the page's). The plaintext
 * is a fixed binary layout read strictly: anything else does not open. */
#ifndef GW_CONNECT_SEAL_H
#define GW_CONNECT_SEAL_H

#include <stddef.h>
#include <stdint.h>

#include "claims.h"
#include "state.h"
#include "vault_seal.h"

#define CONNECT_TICKET_MS	(10 * 60 * 1000)	/* a connect link is good this long */
#define CONNECT_STATE_MS	(10 * 60 * 1000)	/* and each leg at an authorization server */
#define CONNECT_SESSION_MS	(10 * 60 * 1000)	/* a sign-in to see one's connections */
#define CONNECT_ID_BYTES	16
#define CONNECT_PERSON_BYTES	16
#define CONNECT_BROWSER_BYTES	16
#define CONNECT_VERIFIER_LEN	43	/* RFC 7636: 32 random bytes as base64url */
#define CONNECT_SEALED_MAX	1024	/* a sealed ticket or state, with its NUL: holds any */

enum connect_kind {
	CONNECT_TICKET = 1,	/* the link: the person it is for, the upstream */
	CONNECT_AT_ISSUER,	/* the state of the sign-in at the organisation's issuer */
	CONNECT_AT_UPSTREAM,	/* the state of the consent at the upstream's authorization server */
	CONNECT_SIGN_IN,	/* the state of a sign-in to see one's connections */
	CONNECT_SESSION,	/* the cookie of a person signed in to see them (and disconnect) */
	CONNECT_RETRY,		/* a 2026-07-28 input_required's requestState: the call to retry */
	CONNECT_KINDS
};

/* One ticket or state. Which fields a kind carries: all carry kind, until_ms and id; a
 * ticket, the issuer's leg and a retry the person's digest and the upstream; the
 * upstream's leg the upstream and the subject; every leg the browser's digest and the
 * PKCE verifier; a session the browser's digest and the subject. */
struct connect_claim {
	int kind;			/* enum connect_kind */
	int64_t until_ms;		/* wall clock */
	unsigned char id[CONNECT_ID_BYTES];		/* random: its single use */
	unsigned char person[CONNECT_PERSON_BYTES];	/* connect_person() of whom it is for */
	unsigned char browser[CONNECT_BROWSER_BYTES];	/* digest of the browser's cookie */
	char verifier[CONNECT_VERIFIER_LEN + 1];
	char upstream[VAULT_UPSTREAM_MAX];
	char subject[CLAIMS_SUBJECT_MAX];		/* at the organisation's issuer */
};

struct connect_keys {
	unsigned char seal[32];
	unsigned char person[32];
};

void connect_keys_derive(struct connect_keys *k, const unsigned char session_key[STATE_KEY_BYTES]);
void connect_keys_clear(struct connect_keys *k);

/* Whom a ticket is for: a keyed digest of the organisation's issuer and the subject. */
void connect_person(const struct connect_keys *k, const char *issuer, const char *subject,
    unsigned char out[CONNECT_PERSON_BYTES]);

/* c sealed into out (NUL-terminated; CONNECT_SEALED_MAX holds any): 0, or -1 when c is
 * not one to seal (kind, upstream empty or too long, subject or verifier wrong for the
 * kind) or out is too small. */
int connect_seal(const struct connect_keys *k, const struct connect_claim *c, char *out, size_t outlen);
/* Opens sealed as a claim of kind, good at now_ms: 0 with *c, or -1 (another kind, key
 * or layout, altered, or past its end); *c is wiped either way first. */
int connect_open(const struct connect_keys *k, const char *sealed, int kind, int64_t now_ms,
    struct connect_claim *c);
/* The opened plaintext (n bytes) as connect_open reads it, for kind: 0, or -1. */
int connect_parse(const unsigned char *p, size_t n, int kind, struct connect_claim *c);

#endif
