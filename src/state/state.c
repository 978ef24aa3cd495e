/* state — create, validate, rebuild and map the shared state file, and guard its
 * mappings (SIGBUS on a shrunk file, failed locks). Longer than most files here: the
 * mapping list, the fault handler that swaps zero pages over a mapping and the locks
 * that count failures share one invariant (a mapping is trusted until it faults or its
 * header changes), which splitting would spread over files. */
#include "autoconf.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "secret.h"
#include "state.h"

#define STATE_MAGIC	"MCPGATE\x01"
#define STATE_VERSION	4
#define STATE_ALIGN	4096
#define STATE_MAX_SIZE	((size_t)1 << 30)
#define STATE_MAPS	64	/* shared mappings of one process at once (old ones drain) */
#define OPENER_WAIT_MS	10000	/* another opener holding <state>.lock longer: give up */

/* The header in process memory. In the file, it is written with nregions entries in
 * each array (header_encode): up to the last region the layout gives bytes, so that a
 * region added at the end and left empty (the vault until it is configured) changes
 * nothing in the file, and a file of an older build with fewer regions is read as it
 * is (its missing regions empty), neither side rebuilding the other's. */
struct state_header {
	char magic[8];
	uint32_t version;
	uint32_t nregions;	/* in the file: 1..STATE_NREGIONS; those past it are empty */
	uint64_t file_size;
	uint64_t offset[STATE_NREGIONS];
	uint64_t size[STATE_NREGIONS];
	unsigned char digest_key[STATE_KEY_BYTES];
	unsigned char session_key[STATE_KEY_BYTES];
	uint64_t check;		/* digest of everything before it in the file: catches torn or foreign headers */
};
/* The most a header takes in the file: magic, version, nregions, file_size, the two
 * arrays, the keys, the check. */
#define HDR_MAX		(8 + 4 + 4 + 8 + 2 * 8 * STATE_NREGIONS + 2 * STATE_KEY_BYTES + 8)

struct state {
	char *path;		/* NULL: private mapping */
	void *map;
	size_t map_size;
	dev_t dev;
	ino_t ino;
	int slot;		/* in maps[]; -1 for a private mapping */
	unsigned adopted;	/* a bit per region whose size came from the file */
	struct state_header hdr;	/* the validated header: offsets, sizes, keys */
};

/* The shared mappings of this process, for the SIGBUS handler: it may only use atomics
 * on them. With the handler's predecessor, the only file-scope state of the module. */
static struct map_slot {
	uintptr_t start;	/* __atomic; 0 = free, 1 = being filled in */
	size_t len;
	int fault;		/* __atomic: 0, 1 = zero pages going in, 2 = zero pages in */
	unsigned failures;	/* __atomic: failed state_lock calls on its mutexes */
} maps[STATE_MAPS];
static struct sigaction prev_bus;
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;

/* --- faults ---------------------------------------------------------------- */

/* A fault inside one of our mappings (its file shrank: truncated, or a sparse file on
 * a full file system) becomes zero pages: the access is retried on them and the
 * mapping is broken (state_broken). Any other SIGBUS keeps its previous meaning. */
static void
on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr, s;
	int i, expect, saved = errno;

	if (si->si_code > 0) {	/* raised by a fault, not sent with kill(2) */
		for (i = 0; i < STATE_MAPS; i++) {
			s = __atomic_load_n(&maps[i].start, __ATOMIC_ACQUIRE);
			if (s <= 1 || a < s || a - s >= maps[i].len)
				continue;
			expect = 0;
			if (__atomic_compare_exchange_n(&maps[i].fault, &expect, 1, 0, __ATOMIC_ACQ_REL,
			    __ATOMIC_ACQUIRE)) {
				if (mmap((void *)s, maps[i].len, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
					break;	/* cannot recover: the default action */
				__atomic_store_n(&maps[i].fault, 2, __ATOMIC_RELEASE);
			}
			/* Retried: on zeros, or it faults again until another thread's are in. */
			errno = saved;
			return;
		}
	}
	if ((prev_bus.sa_flags & SA_SIGINFO) && prev_bus.sa_sigaction != NULL) {
		prev_bus.sa_sigaction(sig, si, uc);
	} else if (!(prev_bus.sa_flags & SA_SIGINFO) && prev_bus.sa_handler != SIG_DFL &&
	    prev_bus.sa_handler != SIG_IGN) {
		prev_bus.sa_handler(sig);
	} else {
		signal(SIGBUS, SIG_DFL);
		raise(SIGBUS);	/* pending until we return; a fault would repeat anyway */
	}
	errno = saved;
}

static void
install_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGBUS, &sa, &prev_bus);
	/* A file past RLIMIT_FSIZE: EFBIG from the call (then a private mapping), rather
	 * than death by SIGXFSZ. */
	if (sigaction(SIGXFSZ, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) {
		sa.sa_handler = SIG_IGN;
		sigaction(SIGXFSZ, &sa, NULL);
	}
}

static int
map_register(void *map, size_t len)
{
	uintptr_t expect;
	int i;

	for (i = 0; i < STATE_MAPS; i++) {
		expect = 0;
		if (!__atomic_compare_exchange_n(&maps[i].start, &expect, 1, 0, __ATOMIC_ACQ_REL,
		    __ATOMIC_ACQUIRE))
			continue;
		maps[i].len = len;
		__atomic_store_n(&maps[i].fault, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&maps[i].failures, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&maps[i].start, (uintptr_t)map, __ATOMIC_RELEASE);
		return i;
	}
	return -1;
}

void
state_failed(const void *p)
{
	uintptr_t a = (uintptr_t)p, s;
	int i;

	for (i = 0; i < STATE_MAPS; i++) {
		s = __atomic_load_n(&maps[i].start, __ATOMIC_ACQUIRE);
		if (s > 1 && a >= s && a - s < maps[i].len) {
			__atomic_add_fetch(&maps[i].failures, 1, __ATOMIC_RELAXED);
			return;
		}
	}
}

int
state_owned(const uint32_t *magic, uint32_t want)
{
	if (__atomic_load_n(magic, __ATOMIC_RELAXED) == want)
		return 1;
	state_failed(magic);
	return 0;
}

int
state_region_lock(pthread_mutex_t *lock, const uint32_t *magic, uint32_t want)
{
	return state_owned(magic, want) ? state_lock(lock) : -1;
}

/* --- the header -------------------------------------------------------------- */

static size_t
align_up(size_t n)
{
	return (n + STATE_ALIGN - 1) / STATE_ALIGN * STATE_ALIGN;
}

static uint64_t
header_check(const unsigned char *p, size_t n)
{
	unsigned char d[8];
	uint64_t v = 0;
	int i;

	secret_digest(p, n, d, sizeof(d));
	for (i = 0; i < 8; i++)
		v = v << 8 | d[i];
	return v;
}

static unsigned char *
put(unsigned char *p, const void *v, size_t n)
{
	memcpy(p, v, n);
	return p + n;
}

/* h as the file holds it (h->nregions of each array; the fields in host order, as the
 * file is this host's), its check computed: its length. */
static size_t
header_encode(struct state_header *h, unsigned char out[HDR_MAX])
{
	unsigned char *p = out;
	size_t n = h->nregions;

	assert(n >= 1 && n <= STATE_NREGIONS);
	p = put(p, h->magic, 8);
	p = put(p, &h->version, 4);
	p = put(p, &h->nregions, 4);
	p = put(p, &h->file_size, 8);
	p = put(p, h->offset, 8 * n);
	p = put(p, h->size, 8 * n);
	p = put(p, h->digest_key, STATE_KEY_BYTES);
	p = put(p, h->session_key, STATE_KEY_BYTES);
	h->check = header_check(out, (size_t)(p - out));
	p = put(p, &h->check, 8);
	return (size_t)(p - out);
}

/* The header in the len bytes at in: 0, or -1 when they are not one (its magic,
 * version, count of regions or check). The regions past its count are empty, at the
 * file's end (where plan puts empty regions that end a layout). */
static int
header_decode(const unsigned char *in, size_t len, struct state_header *h)
{
	const unsigned char *p = in + 24;
	uint64_t check;
	size_t n, i;

	memset(h, 0, sizeof(*h));
	if (len < 24)
		return -1;
	memcpy(h->magic, in, 8);
	memcpy(&h->version, in + 8, 4);
	memcpy(&h->nregions, in + 12, 4);
	memcpy(&h->file_size, in + 16, 8);
	n = h->nregions;
	if (memcmp(h->magic, STATE_MAGIC, 8) != 0 || h->version != STATE_VERSION || n < 1 || n > STATE_NREGIONS ||
	    len < 24 + 16 * n + 2 * STATE_KEY_BYTES + 8)
		return -1;
	memcpy(h->offset, p, 8 * n);
	memcpy(h->size, p + 8 * n, 8 * n);
	p += 16 * n;
	memcpy(h->digest_key, p, STATE_KEY_BYTES);
	memcpy(h->session_key, p + STATE_KEY_BYTES, STATE_KEY_BYTES);
	p += 2 * STATE_KEY_BYTES;
	memcpy(&check, p, 8);
	if (check != header_check(in, (size_t)(p - in)))
		return -1;
	h->check = check;
	for (i = n; i < STATE_NREGIONS; i++)
		h->offset[i] = h->file_size;
	return 0;
}

/* Whether the len bytes at p are h as the file holds it. */
static int
header_at(const void *p, const struct state_header *h)
{
	struct state_header c = *h;
	unsigned char want[HDR_MAX];
	size_t n = header_encode(&c, want);

	return memcmp(p, want, n) == 0;
}

/* The header for these region sizes (keys left zero). */
static int
plan(const uint64_t *sizes, struct state_header *h)
{
	size_t off = align_up(HDR_MAX);
	int i;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, STATE_MAGIC, 8);
	h->version = STATE_VERSION;
	h->nregions = 1;
	for (i = 0; i < STATE_NREGIONS; i++) {
		if (sizes[i] > STATE_MAX_SIZE)
			return -1;
		h->offset[i] = off;
		h->size[i] = sizes[i];
		off += align_up(sizes[i]);
		if (off > STATE_MAX_SIZE)
			return -1;
		if (sizes[i] > 0)
			h->nregions = (uint32_t)i + 1;	/* the empty regions that end it: not written */
	}
	h->file_size = off;
	return 0;
}

/* Region i's size in lay: its own, else its definition's. */
static size_t
region_size(const struct state_layout *lay, int i)
{
	if (lay->region[i].size)
		return lay->region[i].size;
	return lay->region[i].def ? lay->region[i].def->size : 0;
}

/* Is have (read from a file of file_size bytes) a header this layout can use? Regions
 * with size_ok are taken at the file's size, the others must be as asked. */
static int
header_valid(const struct state_header *have, const struct state_layout *lay, uint64_t file_size,
    unsigned *adopted)
{
	struct state_header want;
	uint64_t sizes[STATE_NREGIONS];
	int i;

	*adopted = 0;
	for (i = 0; i < STATE_NREGIONS; i++) {
		const struct state_region *def = lay->region[i].def;

		sizes[i] = region_size(lay, i);
		if (have->size[i] == sizes[i])
			continue;
		if (def == NULL || def->size_ok == NULL || have->size[i] > STATE_MAX_SIZE ||
		    !def->size_ok((size_t)have->size[i]))
			return 0;
		sizes[i] = have->size[i];
		*adopted |= 1u << i;
	}
	return plan(sizes, &want) == 0 && have->file_size == want.file_size &&
	    have->file_size == file_size &&
	    memcmp(have->offset, want.offset, sizeof(want.offset)) == 0;
}

/* The header of the file fd (sb its stat), read and checked for lay: 0, or -1. */
static int
read_header(int fd, const struct stat *sb, const struct state_layout *lay, struct state_header *h,
    unsigned *adopted)
{
	unsigned char raw[HDR_MAX];
	ssize_t n = pread(fd, raw, sizeof(raw), 0);
	int ok = n > 0 && header_decode(raw, (size_t)n, h) == 0 &&
	    header_valid(h, lay, (uint64_t)sb->st_size, adopted);

	secret_wipe(raw, sizeof(raw));	/* the keys */
	return ok ? 0 : -1;
}

void
state_region_make(const struct state_region *def, void *mem, size_t size, int shared)
{
	memset(mem, 0, def->clear && def->clear < size ? def->clear : size);
	if (def->lock_off != STATE_NO_LOCK)
		state_mutex_init((pthread_mutex_t *)(void *)((char *)mem + def->lock_off), shared);
	if (def->gen_off) {
		uint64_t *gen = (uint64_t *)(void *)((char *)mem + def->gen_off);

		assert(def->gen_off != def->magic_off && def->gen_off + sizeof(*gen) <= size);
		secret_random_bytes(gen, sizeof(*gen));
		*gen |= 1;
	}
	if (def->init)
		def->init(mem, size, shared);
	__atomic_store_n((uint32_t *)(void *)((char *)mem + def->magic_off), def->magic, __ATOMIC_RELEASE);
}

/* Fresh regions in map with header h: from's keys and carried regions when from is
 * intact and every carry works, else new keys. */
/* Can what from maps still be read (no fault, its header as validated)? Its locks may
 * fail: each carry takes them, and gives up when it cannot. */
static int
readable(const struct state *from)
{
	return from->map != NULL && header_at(from->map, &from->hdr) &&
	    (from->slot < 0 || __atomic_load_n(&maps[from->slot].fault, __ATOMIC_ACQUIRE) == 0);
}

static void
init_regions(void *map, struct state_header *h, const struct state_layout *lay, int shared,
    const struct state *from)
{
	unsigned char raw[HDR_MAX];
	int i, carried = from != NULL && readable(from);

	for (i = 0; i < STATE_NREGIONS; i++)
		if (lay->region[i].def && h->size[i] > 0)	/* an empty region: nothing to make */
			state_region_make(lay->region[i].def, (char *)map + h->offset[i], h->size[i], shared);
	for (i = 0; carried && i < STATE_NREGIONS; i++)
		if (lay->region[i].def && lay->region[i].def->carry && (from->hdr.size[i] != h->size[i] ||
		    lay->region[i].def->carry((char *)map + h->offset[i],
		    (char *)from->map + from->hdr.offset[i], h->size[i]) < 0))
			carried = 0;
	if (carried) {
		memcpy(h->digest_key, from->hdr.digest_key, STATE_KEY_BYTES);
		memcpy(h->session_key, from->hdr.session_key, STATE_KEY_BYTES);
	} else {
		secret_random_bytes(h->digest_key, STATE_KEY_BYTES);
		secret_random_bytes(h->session_key, STATE_KEY_BYTES);
		for (i = 0; from != NULL && i < STATE_NREGIONS; i++)	/* undo a partial carry */
			if (lay->region[i].def && lay->region[i].def->carry)
				state_region_make(lay->region[i].def, (char *)map + h->offset[i], h->size[i], shared);
	}
	memcpy(map, raw, header_encode(h, raw));
	secret_wipe(raw, sizeof(raw));
}

/* --- the file ------------------------------------------------------------------ */

static int
no_space(int e)
{
	return e == ENOSPC || e == EFBIG || e == EDQUOT;
}

/* Every block of the file, now: a full file system fails here, not as a SIGBUS on the
 * first write to a hole. 0, -1 or STATE_NOSPACE with err. */
static int
allocate(int fd, const char *path, size_t size, struct gw_error *err)
{
	int e = posix_fallocate(fd, 0, (off_t)size);

	if (e == 0)
		return 0;
	gw_error_set(err, GW_EINTERNAL, "state: %s: cannot allocate %zu bytes: %s", path, size, strerror(e));
	return no_space(e) ? STATE_NOSPACE : -1;
}

/* Builds a fresh file next to st->path and renames it into place. 0, -1 or
 * STATE_NOSPACE with err. */
static int
rebuild(struct state *st, const struct state_layout *lay, struct state_header *want,
    const struct state *from, struct gw_error *err)
{
	char tmp[4096];
	void *map;
	int fd, rc;

	if (snprintf(tmp, sizeof(tmp), "%s.%ld.new", st->path, (long)getpid()) >= (int)sizeof(tmp)) {
		gw_error_set(err, GW_EINTERNAL, "state: path too long");
		return -1;
	}
	unlink(tmp);
	if ((fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0) {
		gw_error_set(err, GW_EINTERNAL, "state: cannot create %s: %s", tmp, strerror(errno));
		return no_space(errno) ? STATE_NOSPACE : -1;
	}
	if (ftruncate(fd, (off_t)want->file_size) < 0) {
		gw_error_set(err, GW_EINTERNAL, "state: %s: %s", tmp, strerror(errno));
		rc = no_space(errno) ? STATE_NOSPACE : -1;
		goto fail;
	}
	if ((rc = allocate(fd, tmp, want->file_size, err)) < 0)
		goto fail;
	map = mmap(NULL, want->file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		gw_error_set(err, GW_EINTERNAL, "state: %s: %s", tmp, strerror(errno));
		rc = -1;
		goto fail;
	}
	init_regions(map, want, lay, 1, from);
	munmap(map, want->file_size);
	if (rename(tmp, st->path) < 0) {
		gw_error_set(err, GW_EINTERNAL, "state: cannot rename %s to %s: %s", tmp, st->path,
		    strerror(errno));
		rc = -1;
		goto fail;
	}
	close(fd);
	return 0;
fail:
	close(fd);
	unlink(tmp);
	return rc;
}

/* Opens path without following links; refuses what we do not own, and what others may
 * write or read: the file holds the keys of sessions and digests, and keys another user
 * may have read are not kept (the file is built anew, with new ones). Returns fd or -1
 * (errno EPERM for a foreign or unsafe file). */
static int
open_trusted(const char *path, int flags, struct stat *sb)
{
	int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, sb) < 0 || !S_ISREG(sb->st_mode) || sb->st_uid != geteuid() ||
	    (sb->st_mode & 077)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

/* <path>.lock, exclusively locked: serializes creation and validation. The lock file
 * must be ours: another user's would let that user lock every process out. */
static int
open_lock(const char *path, struct gw_error *err)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	char lp[4096];
	struct stat sb;
	int fd, waited;

	if (snprintf(lp, sizeof(lp), "%s.lock", path) >= (int)sizeof(lp)) {
		gw_error_set(err, GW_EINTERNAL, "state: path too long");
		return -1;
	}
	if ((fd = open(lp, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0) {
		gw_error_set(err, GW_EINTERNAL, "state: cannot open %s: %s", lp, strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid()) {
		gw_error_set(err, GW_EINTERNAL, "state: %s belongs to uid %ld, not to this user (uid %ld): "
		    "remove it, or set [gateway] state in a directory only this user may write",
		    lp, (long)sb.st_uid, (long)geteuid());
		close(fd);
		return -1;
	}
	for (waited = 0; flock(fd, LOCK_EX | LOCK_NB) < 0; waited += 10) {
		if ((errno != EWOULDBLOCK && errno != EINTR) || waited >= OPENER_WAIT_MS) {
			gw_error_set(err, GW_EINTERNAL, "state: %s: %s", lp,
			    errno == EWOULDBLOCK ? "held by another process for too long" : strerror(errno));
			close(fd);
			return -1;
		}
		nanosleep(&pause, NULL);
	}
	return fd;
}

static int
open_private(struct state *st, const struct state_layout *lay, struct state_header *want,
    const struct state *from, struct gw_error *err)
{
	st->map = mmap(NULL, want->file_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (st->map == MAP_FAILED) {
		st->map = NULL;
		gw_error_set(err, GW_EINTERNAL, "state: anonymous map: %s", strerror(errno));
		return -1;
	}
	st->map_size = want->file_size;
	init_regions(st->map, want, lay, 0, from);
	st->hdr = *want;
	return 0;
}

/* Maps the valid file fd (its header h, already read): allocated, registered for the
 * SIGBUS handler, and checked once more through the mapping. 0, 1 when the mapping
 * shows another header (rebuild), -1 or STATE_NOSPACE with err. */
static int
map_file(struct state *st, int fd, const struct stat *sb, const struct state_header *h,
    struct gw_error *err)
{
	void *map;
	int rc;

	/* (A file with all its blocks, as we build them, needs no call: some file systems
	 * emulate posix_fallocate a block at a time.) */
	if ((uint64_t)sb->st_blocks * 512 < h->file_size && (rc = allocate(fd, st->path, h->file_size, err)) < 0)
		return rc;
	map = mmap(NULL, h->file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		gw_error_set(err, GW_EINTERNAL, "state: cannot map %s: %s", st->path, strerror(errno));
		return -1;
	}
	if ((st->slot = map_register(map, h->file_size)) < 0) {
		munmap(map, h->file_size);
		gw_error_set(err, GW_EINTERNAL, "state: more than %d mappings of it at once", STATE_MAPS);
		return -1;
	}
	st->map = map;
	st->map_size = h->file_size;
	st->hdr = *h;
	if (!header_at(map, h))
		return 1;	/* written to since we read it (or shrank): state_close retires it */
	st->dev = sb->st_dev;
	st->ino = sb->st_ino;
	return 0;
}

static void
unmap(struct state *st)
{
	struct map_slot *m;
	int tainted;

	if (st->map == NULL)
		return;
	if (st->slot < 0) {
		munmap(st->map, st->map_size);
	} else {
		m = &maps[st->slot];
		tainted = state_broken(st, NULL);
		if (!tainted)
			munmap(st->map, st->map_size);
		else if (__atomic_load_n(&m->fault, __ATOMIC_ACQUIRE) != 2)
			mmap(st->map, st->map_size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);	/* lets the file go */
		__atomic_store_n(&m->start, 0, __ATOMIC_RELEASE);
		st->slot = -1;
	}
	st->map = NULL;
}

/* Long: the open-or-build protocol under the host's opener lock (map a valid file,
 * else build it, rename it and map it again, a few tries), with one release of the
 * lock and the descriptors. */
int
state_open(const char *path, const struct state_layout *lay, const struct state *from,
    struct state **out, struct gw_error *err)
{
	uint64_t sizes[STATE_NREGIONS];
	struct state_header want, have;
	struct state *st;
	struct stat sb, now;
	int fd = -1, lockfd = -1, tries, i, r = 0, rc = -1;

	*out = NULL;
	for (i = 0; i < STATE_NREGIONS; i++)
		sizes[i] = region_size(lay, i);
	if ((st = calloc(1, sizeof(*st))) == NULL || plan(sizes, &want) < 0) {
		free(st);
		gw_error_set(err, GW_EINTERNAL, "state: layout too large");
		return -1;
	}
	st->slot = -1;
	if (path == NULL) {
		rc = open_private(st, lay, &want, from, err);
		goto out;
	}
	pthread_once(&handler_once, install_handler);
	if ((st->path = strdup(path)) == NULL)
		goto out;
	/* One opener at a time per host: without this, two processes starting together
	 * could each build and rename a file, and one would keep a deleted inode. */
	if ((lockfd = open_lock(path, err)) < 0)
		goto out;
	for (tries = 0; tries < 4; tries++) {
		fd = open_trusted(path, O_RDWR, &sb);
		if (fd < 0) {
			if (errno != ENOENT && errno != EPERM && errno != ELOOP) {
				gw_error_set(err, GW_EINTERNAL, "state: cannot open %s: %s", path, strerror(errno));
				goto out;
			}
			/* Missing or foreign: build ours (rename replaces a foreign file). */
			if ((r = rebuild(st, lay, &want, from, err)) < 0) {
				rc = r;
				goto out;
			}
			continue;
		}
		/* Someone may have replaced the file since we opened it. */
		if (stat(path, &now) < 0 || now.st_ino != sb.st_ino || now.st_dev != sb.st_dev) {
			close(fd);
			fd = -1;
			continue;
		}
		/* The file from maps and found broken (its locks keep failing, it was written
		 * over) is not taken again, however valid its header looks now. */
		if ((from != NULL && from->path != NULL && from->ino == sb.st_ino && from->dev == sb.st_dev &&
		    state_broken(from, NULL)) ||
		    read_header(fd, &sb, lay, &have, &st->adopted) < 0 ||
		    (r = map_file(st, fd, &sb, &have, err)) == 1) {
			/* Another layout, a corrupt header, or written to under us: replace it. */
			unmap(st);
			close(fd);
			fd = -1;
			if ((r = rebuild(st, lay, &want, from, err)) < 0) {
				rc = r;
				goto out;
			}
			continue;
		}
		close(fd);	/* the mapping keeps the file */
		fd = -1;
		rc = r;		/* 0, -1 or STATE_NOSPACE */
		goto out;
	}
	gw_error_set(err, GW_EINTERNAL, "state: %s keeps changing under us", path);
out:
	if (fd >= 0)
		close(fd);
	if (lockfd >= 0)
		close(lockfd);	/* releases the opener lock */
	if (rc == 0)
		*out = st;
	else
		state_close(st);
	return rc;
}

void
state_close(struct state *st)
{
	if (st == NULL)
		return;
	unmap(st);
	free(st->path);
	free(st);
}

int
state_stale(const struct state *st)
{
	struct stat sb;

	if (st->path == NULL)
		return 0;
	return stat(st->path, &sb) < 0 || sb.st_ino != st->ino || sb.st_dev != st->dev;
}

/* Broken, with why (err may be NULL): 1. */
static int
broken(struct gw_error *err, const char *why)
{
	if (err)
		gw_error_set(err, GW_EINTERNAL, "%s", why);
	return 1;
}

int
state_broken(const struct state *st, struct gw_error *err)
{
	int changed;

	if (st->map == NULL)
		return broken(err, "not mapped");
	changed = !header_at(st->map, &st->hdr);	/* may fault: then zeros */
	if (st->slot >= 0 && __atomic_load_n(&maps[st->slot].fault, __ATOMIC_ACQUIRE))
		return broken(err, "the file shrank under the mapping (SIGBUS)");
	if (changed)
		return broken(err, "its header was overwritten in place");
	if (st->slot >= 0 && __atomic_load_n(&maps[st->slot].failures, __ATOMIC_RELAXED) >= STATE_LOCK_FAILURES)
		return broken(err, "its locks keep failing");
	return 0;
}

int
state_is_private(const struct state *st)
{
	return st->path == NULL;
}

int
state_adopted(const struct state *st, unsigned id)
{
	return id < STATE_NREGIONS && ((st->adopted >> id) & 1);
}

void *
state_region(struct state *st, unsigned id, size_t *size)
{
	if (id >= STATE_NREGIONS)
		return NULL;
	if (size)
		*size = st->hdr.size[id];
	return (char *)st->map + st->hdr.offset[id];
}

const unsigned char *
state_digest_key(const struct state *st)
{
	return st->hdr.digest_key;
}

const unsigned char *
state_session_key(const struct state *st)
{
	return st->hdr.session_key;
}

int
state_peek(const char *path, const struct state_layout *lay, unsigned id, size_t *size)
{
	struct state_header h;
	struct stat sb;
	unsigned adopted;
	int fd, ok;

	/* Only read (e.g. by `mcpgate -t` as root, the file being mcpgate's): any owner. */
	if (id >= STATE_NREGIONS || (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && read_header(fd, &sb, lay, &h, &adopted) == 0;
	close(fd);
	if (!ok)
		return -1;
	*size = (size_t)h.size[id];
	return 0;
}

int
state_peek_region(const char *path, const struct state_layout *lay, unsigned id, void **copy, size_t *size)
{
	struct state_header h;
	struct stat sb;
	unsigned adopted;
	void *p = NULL;
	int fd, rc = -1;

	*copy = NULL;
	if (id >= STATE_NREGIONS || (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && read_header(fd, &sb, lay, &h, &adopted) == 0 && (p = malloc(h.size[id] ? h.size[id] : 1)) != NULL &&
	    pread(fd, p, h.size[id], (off_t)h.offset[id]) == (ssize_t)h.size[id]) {
		*copy = p;
		*size = (size_t)h.size[id];
		p = NULL;
		rc = 0;
	}
	free(p);
	close(fd);
	return rc;
}

int
state_peek_session_key(const char *path, const struct state_layout *lay, unsigned char key[STATE_KEY_BYTES])
{
	struct state_header h;
	struct stat sb;
	unsigned adopted;
	int fd, ok;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && read_header(fd, &sb, lay, &h, &adopted) == 0;
	close(fd);
	if (ok)
		memcpy(key, h.session_key, STATE_KEY_BYTES);
	secret_wipe(&h, sizeof(h));
	return ok ? 0 : -1;
}

/* --- locks ---------------------------------------------------------------------- */

int
state_mutex_init(pthread_mutex_t *m, int shared)
{
	pthread_mutexattr_t a;
	int rc;

	pthread_mutexattr_init(&a);
	if (shared)
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	rc = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return rc == 0 ? 0 : -1;
}

int
state_lock(pthread_mutex_t *m)
{
	struct timespec deadline;
	int64_t us;
	int rc = pthread_mutex_trylock(m);

	if (rc == EBUSY) {	/* contended (the rare case): wait, but not for ever */
		us = clock_mono_us() + (int64_t)STATE_LOCK_TIMEOUT_MS * 1000;
		deadline.tv_sec = (time_t)(us / 1000000);
		deadline.tv_nsec = (long)(us % 1000000) * 1000;
		rc = pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &deadline);
	}
	if (rc == 0)
		return 0;
	if (rc == EOWNERDEAD) {
		if (pthread_mutex_consistent(m) == 0)
			return 1;
		pthread_mutex_unlock(m);
	}
	/* Timed out, or not a mutex any more (overwritten): not held. */
	state_failed(m);
	return -1;
}

void
state_unlock(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
}
