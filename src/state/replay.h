/* replay — the DPoP proofs a host has seen (RFC 9449 §11.1), in a region of the state
 * file: a keyed digest of each proof's key and jti, remembered until the proof would be
 * refused as stale anyway. 8,192 sets of 16, a robust mutex per set. When a set is full
 * of live entries, the one expiring first gives way and raises the set's floor to its
 * expiry: every proof of that set expiring by then counts as seen (refused: its client
 * makes a new one), so no flood of proofs brings a seen one back. `now` is passed in
 * (ms, wall clock). */
#ifndef GW_REPLAY_H
#define GW_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "state.h"

#define REPLAY_KEY_BYTES	16

struct replay;	/* the region (opaque; its init is a state_layout's) */

extern const struct state_region replay_region_def;
/* Records key until until_ms: 1 when it was not seen before, 0 when it was (or its
 * set's floor covers it), -1 when the region cannot be used now (a lock not had, a
 * region that is not ours any more): nothing recorded. */
int replay_once(struct replay *r, const unsigned char key[REPLAY_KEY_BYTES], int64_t until_ms, int64_t now_ms);

#endif
