/* mailbox — answers on their way between two requests of a host: a client's answer to
 * a question the gateway asked it during a call, POSTed on its own (to whichever
 * process takes it), waited for by the call (in whichever process holds it). A region
 * of the state file: MAILBOX_SLOTS slots behind one robust mutex, each a key (a keyed
 * digest made by the owner), an end and a value its owner sealed: the region sees no
 * answer in clear. A value is taken once (mailbox_take removes it); one past its end
 * is gone; when every slot is live, nothing more is put (the asker's wait ends at its
 * own deadline). `now` is passed in (ms, wall clock). */
#ifndef GW_MAILBOX_H
#define GW_MAILBOX_H

#include <stddef.h>
#include <stdint.h>

#include "state.h"

#define MAILBOX_KEY_BYTES	16
#define MAILBOX_SLOTS		64
#define MAILBOX_VALUE_MAX	16384	/* a sealed value, with its NUL */

struct mailbox;	/* the region (opaque; its init is a state_layout's) */

extern const struct state_region mailbox_region_def;

/* value (NUL-terminated, shorter than MAILBOX_VALUE_MAX) under key until until_ms,
 * replacing what key held: 0, or -1 (the region unusable, the value too long or empty,
 * until_ms passed, every slot live). */
int mailbox_put(struct mailbox *m, const unsigned char key[MAILBOX_KEY_BYTES], const char *value, int64_t until_ms,
    int64_t now_ms);
/* key's value into out (NUL-terminated), removed: 1; 0 when there is none (or none
 * that fits out: it is removed all the same); -1 when the region cannot be used now. */
int mailbox_take(struct mailbox *m, const unsigned char key[MAILBOX_KEY_BYTES], char *out, size_t outlen,
    int64_t now_ms);

#endif
