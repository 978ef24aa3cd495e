/* leases — what a caller holds at once across the processes of a host, each for a
 * bounded time: its subscriptions/listen streams, each of which holds a worker thread
 * of the host. A region of the state file of LEASES_BUCKETS x LEASES_WAYS slots behind
 * one robust mutex, each a key (a digest of the holder, made by the owner) and the
 * lease's end; a lease is given back when its holder is done, and one a crashed process
 * held ends by itself. A caller holds at most a given number at once; a bucket full of
 * others' live leases refuses one more too. A lease lasts LEASES_LONGEST_MS at most:
 * one found ending later than that from now (the clock set back, a file of another
 * boot) is free. `now` is passed in (milliseconds, wall clock). */
#ifndef GW_LEASES_H
#define GW_LEASES_H

#include <stdint.h>

#include "state.h"

#define LEASES_KEY_BYTES	16
#define LEASES_BUCKETS		64
#define LEASES_WAYS		16
#define LEASES_LONGEST_MS	600000

struct leases;	/* the region (opaque; its init is a state_layout's) */

extern const struct state_region leases_region_def;

/* A lease of key until until_ms, unless key holds max live ones already: 1 with
 * *ticket (for leases_give), 0 when refused (max reached, or the bucket is full), -1
 * when the region cannot be used (or until_ms is past, or further than
 * LEASES_LONGEST_MS). */
int leases_take(struct leases *l, const unsigned char key[LEASES_KEY_BYTES], unsigned max, int64_t until_ms,
    int64_t now_ms, unsigned *ticket);
/* The lease ticket of key, given back (nothing when it is not key's any more). */
void leases_give(struct leases *l, const unsigned char key[LEASES_KEY_BYTES], unsigned ticket);

#endif
