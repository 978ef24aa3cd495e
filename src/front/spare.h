/* spare — the workers of extra FastCGI threads that stopped, kept for the next extra
 * thread to take over (docs/ARCHITECTURE.md §1, "Threads and processes").
 *
 * Extra threads come and go with the load, often one request each. A worker is what a
 * thread keeps between requests: its connections (to the upstreams, the authorization
 * server, Redis), its upstream sessions (the gateway's own and those of callers without
 * a session of their own, each keyed by its caller, never shared), its copy of the
 * catalog. Made afresh for each extra thread and ended when it stops, every one of those
 * was opened and ended again: an initialize, notifications/initialized and a DELETE at
 * each upstream per caller without a session, a new connection to each. Kept here
 * instead, a stopped thread's worker is the next extra thread's, as it was: nothing in a
 * worker belongs to a thread, and a worker is only ever used by one thread at a time.
 *
 * Pure bookkeeping: the caller holds the crew's lock around each call, and ends and
 * frees (outside that lock) the workers handed back to it. */
#ifndef GW_SPARE_H
#define GW_SPARE_H

#include <stdint.h>

#include "gateway.h"

#define SPARE_MAX	4		/* workers kept at once; one more is the caller's to end */
#define SPARE_KEEP_MS	60000		/* kept longer than this: handed back at the next spare_put */

struct spares {
	struct worker w[SPARE_MAX];	/* the oldest first */
	int64_t since_us[SPARE_MAX];	/* kept since */
	long n;
};

/* Keeps *w (moved: *w zeroed) as the newest spare, kept since now_us: 1, or 0 when
 * SPARE_MAX are kept (*w untouched: the caller's to end). The spares kept longer than
 * SPARE_KEEP_MS before now_us are moved out first, into old (room for SPARE_MAX), *n_old
 * of them: the caller ends and frees them. */
int spare_put(struct spares *s, struct worker *w, int64_t now_us, struct worker *old, long *n_old);
/* The newest spare moved into *w: 1, or 0 when none is kept (*w untouched). */
int spare_take(struct spares *s, struct worker *w);

#endif
