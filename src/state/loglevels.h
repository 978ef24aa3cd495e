/* loglevels — the log level a pre-2026 session asked for with logging/setLevel, for
 * the upstreams that revision 2026-07-28 serves statelessly (they take the level in
 * each request's _meta, and keep none). A session's id is sealed and cannot change,
 * so what it asks for later lives here: a region of the state file of
 * LOGLEVELS_BUCKETS x LOGLEVELS_WAYS slots behind one robust mutex, each a key (a
 * keyed digest of the session id, made by the owner), the session's own expiry and a
 * small number (the owner's name for a level; 0 = none). When a bucket is full of live
 * slots, the one expiring soonest gives way: that session falls back to no level
 * (logged, once a minute). `now` is passed in (seconds, wall clock). */
#ifndef GW_LOGLEVELS_H
#define GW_LOGLEVELS_H

#include <stdint.h>

#include "state.h"

#define LOGLEVELS_KEY_BYTES	16
#define LOGLEVELS_BUCKETS	256
#define LOGLEVELS_WAYS		8

struct loglevels;	/* the region (opaque; its init is a state_layout's) */

extern const struct state_region loglevels_region_def;

/* level (1..255) for key until until_s, replacing what key held: 0, or -1 (the region
 * unusable, level 0, until_s passed). */
int loglevels_put(struct loglevels *l, const unsigned char key[LOGLEVELS_KEY_BYTES], unsigned level,
    int64_t until_s, int64_t now_s);
/* key's level (1..255), 0 when none is recorded, -1 when the region cannot be used. */
int loglevels_get(struct loglevels *l, const unsigned char key[LOGLEVELS_KEY_BYTES], int64_t now_s);

#endif
