/* state — the host's shared state file (docs/ARCHITECTURE.md §7): one bounded,
 * memory-mapped file that every worker, FastCGI process and CGI run of a host maps. It
 * holds the regions a layout asks for (sizes and initialisers; what they are is the
 * caller's business: gateway.h), which guard themselves with the robust
 * process-shared mutexes below, so a process killed while holding a lock blocks
 * nobody, and two keys.
 *
 * Nothing read from the file is trusted twice: the header is validated once, when the
 * file is opened, and kept in process memory (offsets, sizes, keys); the regions'
 * owners validate what they read (lengths are clamped, magics re-checked). A missing,
 * corrupt, foreign (other owner, group/other-writable, not a regular file) or
 * differently laid-out file is rebuilt; a region whose size may vary (the token cache)
 * is adopted at the size the file has, so processes configured differently share one
 * file instead of rebuilding it in turn.
 *
 * The file is fully allocated when it is built (posix_fallocate): a full file system
 * fails the build (STATE_NOSPACE) instead of faulting later. A file shrunk under a
 * running process (`: > state`) faults on the next access; the SIGBUS handler maps
 * zero pages over that mapping, so the access is retried on zeros (magics no longer
 * match: every region reads as unavailable) and the mapping is reported broken until
 * the owner re-opens the file (state_broken). */
#ifndef GW_STATE_H
#define GW_STATE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define STATE_KEY_BYTES		32
#define STATE_LOCK_TIMEOUT_MS	2000	/* a lock not had by then is a failed operation */
#define STATE_LOCK_FAILURES	3	/* failed locks after which a mapping is broken */
#define STATE_NOSPACE		(-2)	/* state_open: the file system cannot hold the file */

/* A file holds this many regions; which is which is for the layout's composer to say
 * (gateway.h's enum gw_region): the state file knows sizes, not owners. */
#define STATE_NREGIONS		14

/* A region as its owner defines it (one per module: introspect_asmeta_region_def,
 * catalog_region_def, ...; the layout's composer lists them, gateway.c). When the file
 * is (re)built, with the file locked, state_region_make makes each: its first `clear`
 * bytes zeroed (0: all of it), its robust lock made when it has one (at lock_off), init
 * (NULL: none) for what zeros and the lock are not, and its magic (at magic_off) set
 * last, so that a region half made is never taken for one. size_ok, when set, accepts
 * an existing file's region of another size (adopted as it is). carry, when set, copies
 * what must survive a rebuild from the previous mapping's region (same size) into the
 * fresh one: 0, or -1 when it could not be read (then nothing is carried, keys
 * included). */
#define STATE_NO_LOCK	((size_t)-1)
struct state_region {
	const char *name;
	size_t size;		/* 0: the layout gives it */
	uint32_t magic;
	size_t magic_off;	/* of a uint32_t */
	size_t lock_off;	/* of its pthread_mutex_t, or STATE_NO_LOCK */
	size_t clear;		/* bytes zeroed; 0: all */
	void (*init)(void *region, size_t size, int shared);
	int (*size_ok)(size_t size);
	int (*carry)(void *dst, void *src, size_t size);
	/* Of a uint64_t generation that starts at a random odd number (so never 0, and a
	 * worker's view of another, replaced file's region never takes this one's for the
	 * one it has parsed); 0: none (offset 0 never holds one). */
	size_t gen_off;
};

/* What a file holds: region i is def (NULL: an empty region) of size bytes (0: def's). */
struct state_layout {
	struct {
		const struct state_region *def;
		size_t size;
	} region[STATE_NREGIONS];
};

/* Makes region def in mem (size bytes) as a file's build does: shared = 1 for a file,
 * 0 for a private mapping. */
void state_region_make(const struct state_region *def, void *mem, size_t size, int shared);

struct state;	/* opaque */

/* Opens (creating or rebuilding as needed) path with this layout. path NULL: a
 * private anonymous mapping (nothing shared, same API). from, when not NULL, is the
 * mapping this one replaces: when the file must be built and from can still be read
 * (it did not fault, its header is as it was), its keys and carried regions go into
 * the new file (a removed file comes back as it was); when from is broken, its file
 * is rebuilt rather than mapped again.
 * 0; -1 with err when the file cannot be had (foreign lock, unusable directory:
 * callers refuse to serve rather than go private silently); STATE_NOSPACE with err
 * when the file system cannot hold it. */
int state_open(const char *path, const struct state_layout *lay, const struct state *from,
    struct state **out, struct gw_error *err);
/* Unmaps; a mapping that faulted or was overwritten is replaced by anonymous memory
 * and left mapped instead, since a thread's robust-mutex list may still point into it. */
void state_close(struct state *st);
/* 1 when path now names another file than the one mapped (replaced or removed). One
 * stat(2): for a periodic tick, not for requests. */
int state_stale(const struct state *st);
/* 1 when the mapping can no longer be trusted, with why in err (GW_EINTERNAL; err may be
 * NULL): it faulted (the file shrank), its header changed in place, or its locks (or
 * regions) keep failing; else 0. For a periodic tick. */
int state_broken(const struct state *st, struct gw_error *err);
int state_is_private(const struct state *st);
/* The regions whose size was adopted from the file rather than asked for. */
int state_adopted(const struct state *st, unsigned id);

/* Region id (< STATE_NREGIONS; NULL otherwise) and its size. */
void *state_region(struct state *st, unsigned id, size_t *size);
const unsigned char *state_digest_key(const struct state *st);	/* STATE_KEY_BYTES */
const unsigned char *state_session_key(const struct state *st);	/* STATE_KEY_BYTES */

/* The size of region id in the valid state file at path, read without mapping it (for
 * notes: the file may be another user's): 0, or -1 when there is no such file or it is
 * not readable and valid. */
int state_peek(const char *path, const struct state_layout *lay, unsigned id,
    size_t *size);
/* A copy of region id of the valid state file at path, read without mapping it (for
 * `mcpgate -t`: the file may be another user's); *copy is malloc'd, *size its length.
 * What it holds is as untrusted as any region's: its owner checks it. 0, or -1. */
int state_peek_region(const char *path, const struct state_layout *lay, unsigned id, void **copy,
    size_t *size);
/* The session key of the valid state file at path (what the gateway seals under when
 * no session-key-file is set), read without mapping it, for `mcpgate explain` (the
 * file is the gateway's user's: only that user, or root, reads it). 0, or -1. */
int state_peek_session_key(const char *path, const struct state_layout *lay, unsigned char key[STATE_KEY_BYTES]);

/* The default state file when the configuration names none, in a directory only this
 * user may write: $RUNTIME_DIRECTORY (systemd's RuntimeDirectory=) when set, else
 * /run/mcpgate (root, or when it exists and is ours), else $XDG_RUNTIME_DIR/mcpgate,
 * else ${TMPDIR:-/tmp}/mcpgate-<euid>. create: make the directory (0700) when it is
 * missing. 0, or -1 with err when the directory is a symlink, not ours, writable by
 * others, or cannot be made. */
int state_default_path(char *out, size_t n, int create, struct gw_error *err);
/* The state file's directory, made when missing (0700; only the last component) and
 * judged, whether the configuration names the file (named) or it is the default: a
 * real directory (a symlink only when its owner is trusted), this user's (or root's,
 * when named: root made it for us), that nobody else may write in; another user who
 * could write there could make <state>.lock first or put files in its place. 0, or -1
 * with err saying why. */
int state_file_dir(const char *file, int named, struct gw_error *err);

/* Robust mutexes living in shared memory. state_lock returns 0, or 1 when the
 * previous owner died while holding it (the lock is then held and made consistent;
 * the caller should treat what it protects as suspect), or -1 when it could not be
 * had within STATE_LOCK_TIMEOUT_MS or is not a usable mutex: then it is NOT held (do
 * not unlock it) and the operation fails. */
int state_mutex_init(pthread_mutex_t *m, int shared);
int state_lock(pthread_mutex_t *m);
void state_unlock(pthread_mutex_t *m);
/* An operation on the shared memory at p failed (a region whose magic no longer
 * matches): counted against its mapping like a failed lock, so that a region written
 * over breaks the mapping too and the file gets rebuilt. */
void state_failed(const void *p);
/* Whether a region still holds its magic (read at *magic): 1, or 0 after state_failed.
 * A broken mapping reads as zeros, one written over as anything. */
int state_owned(const uint32_t *magic, uint32_t want);
/* A region's one lock, taken when the region is still owned (state_owned): state_lock's
 * 0 or 1, or -1 (not locked). */
int state_region_lock(pthread_mutex_t *lock, const uint32_t *magic, uint32_t want);

#endif
