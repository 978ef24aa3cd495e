/* subs — the resources a pre-2026 session subscribed to (resources/subscribe) at the
 * upstreams that revision 2026-07-28 serves statelessly: such an upstream has no
 * resources/subscribe, and tells of a resource's updates only on a listen stream, which
 * the session's standalone stream (GET /mcp) holds open for it, in whichever process
 * it runs. A session's id is sealed and cannot change, so what it subscribes to lives
 * here: a region of the state file of SUBS_SLOTS slots behind one robust mutex, each a
 * key (a keyed digest of the session id, made by the owner), the session's own expiry
 * and its URIs, one a line. A slot is taken by a session's first subscription and freed
 * by its last unsubscription or its end; when every slot is live, or a session's URIs
 * would not fit, the subscription is refused (never someone else's dropped). `now` is
 * passed in (seconds, wall clock). */
#ifndef GW_SUBS_H
#define GW_SUBS_H

#include <stddef.h>
#include <stdint.h>

#include "state.h"

#define SUBS_KEY_BYTES	16
#define SUBS_SLOTS	256
#define SUBS_TEXT_MAX	2048	/* a session's URIs, each with its newline, and the NUL */

struct subs;	/* the region (opaque; its init is a state_layout's) */

extern const struct state_region subs_region_def;

/* uri added to key's URIs (on), or removed from them (!on), key's slot living until
 * until_s: 0 (done, or nothing to do), -1 when the region cannot be used (or uri is
 * empty or holds a control character, or no time is left), -2 when there is no room
 * (every slot live, or key's URIs full). */
int subs_edit(struct subs *s, const unsigned char key[SUBS_KEY_BYTES], const char *uri, int on, int64_t until_s,
    int64_t now_s);
/* key's URIs, one a line, into out (NUL-terminated; "" when none): 0, or -1 when the
 * region cannot be used or they do not fit out. */
int subs_get(struct subs *s, const unsigned char key[SUBS_KEY_BYTES], char *out, size_t outlen, int64_t now_s);

#endif
