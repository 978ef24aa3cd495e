/* session — Mcp-Session-Id for the pre-2026 revisions (docs/ARCHITECTURE.md §6): a
 * sealed blob (XChaCha20-Poly1305 under the host's key or a shared session-key-file)
 * holding the negotiated version, a digest of the caller's identity, upstream session
 * ids and an expiry. No session table exists: any process or host with the key
 * continues any session. DELETE leaves a tombstone in the shared state until the blob
 * expires. */
#ifndef GW_SESSION_H
#define GW_SESSION_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "state.h"

#define SESSION_ID_MAX	1024
#define SESSION_KEY_BYTES 32

/* Ended sessions: a region of the state file (opaque; its init is a state_layout's). */
struct tombstones;

struct session {
	char version[16];	/* negotiated protocol revision */
	char who[33];		/* hex digest of subject, client id and tenant */
	int64_t exp;		/* seconds */
	json_t *upstreams;	/* {upstream name: its session id}; a reference held, read-only
				 * once opened (the worker's memo may hold it too) */
	unsigned flags;		/* SESSION_F_*: what the client declared at initialize */
};

/* The client's capabilities a session remembers (one byte of flags). */
#define SESSION_F_ELICIT_URL	1u	/* elicitation.url: URL-mode elicitation (2025-11-25) */
#define SESSION_F_ELICIT	2u	/* elicitation: form-mode elicitation */
#define SESSION_F_SAMPLING	4u	/* sampling */
#define SESSION_F_ROOTS		8u	/* roots */

#define SESSION_BIND_BYTES 16

/* The caller digest stored in a session (and binding its list cursors): of bind, what
 * the gateway is (config's bind: a digest of its resource and issuer; NULL: none), and
 * the caller's subject, client id and tenant. Gateways sharing a key (one state file, or
 * one session-key-file) never take each other's callers for their own: an "alice" of
 * another issuer is another caller. */
void session_who(const unsigned char *bind, const char *subject, const char *client_id, const char *tenant,
    char out[33]);
/* Seals s into id (SESSION_ID_MAX bytes). 0 or -1. */
int session_seal(const unsigned char *key, const struct session *s, char *id);
/* Opens id for this caller at now: 0 with *s (free with session_clear), -1 when
 * forged, altered, expired, another caller's, or ended; -2 when the tombstones cannot
 * be read (then whether it was ended is unknown: treat it as not found, fail closed). */
int session_open(const unsigned char *key, struct tombstones *tombstones, const char *id, const char *who,
    int64_t now, struct session *s);
void session_clear(struct session *s);
/* A worker's memory of the last session it opened (one per thread): the next request
 * of that session (the same id under the same key) skips opening the blob; whether
 * it belongs to the caller, has expired or was ended is checked as by session_open. */
struct session_memo;
struct session_memo *session_memo_new(void);
void session_memo_free(struct session_memo *m);
/* What opens a worker's sessions: the key they are sealed under, the tombstones of
 * ended ones (NULL: none) and the worker's memo (NULL: none). */
struct session_opener {
	const unsigned char *key;
	struct tombstones *tombstones;
	struct session_memo *memo;
};
/* session_open with o's key and tombstones, remembering in o->memo or answering from
 * it. */
int session_open_memo(const struct session_opener *o, const char *id, const char *who, int64_t now,
    struct session *s);

/* The name of session id's tombstone in a store several hosts share (rstore.h), a
 * keyed digest under their shared key. */
void session_tomb_key(const unsigned char *key, const char *id, unsigned char out[16]);

/* Tombstones: a bounded region of the state file. */
extern const struct state_region session_tombstones_def;
/* Copies the tombstones of src into the fresh dst (a rebuilt state file): 0, or -1
 * when src cannot be read. */
int session_tombstones_carry(void *dst, void *src, size_t size);
/* Ends the session named by id (already opened) until its expiry exp. When its bucket
 * is full of live tombstones, the soonest-expiring gives way and every session of the
 * bucket expiring by then counts as ended (logged). 0, or -1 when the tombstones
 * cannot be written (nothing ended). */
int session_end(struct tombstones *tombstones, const char *id, int64_t exp, int64_t now);

#endif
