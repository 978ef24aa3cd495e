/* state — create, validate, rebuild and map the shared state file. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "secret.h"
#include "state.h"

#define STATE_MAGIC	"MCPGATE\x01"
#define STATE_VERSION	1
#define STATE_ALIGN	4096
#define STATE_MAX_SIZE	((size_t)1 << 30)

struct state_header {
	char magic[8];
	uint32_t version;
	uint32_t nregions;
	uint64_t file_size;
	uint64_t offset[STATE_NREGIONS];
	uint64_t size[STATE_NREGIONS];
	unsigned char digest_key[STATE_KEY_BYTES];
	unsigned char session_key[STATE_KEY_BYTES];
	uint64_t check;		/* digest of everything above: catches torn or foreign headers */
};

struct state {
	char *path;		/* NULL: private mapping */
	void *map;
	size_t map_size;
	dev_t dev;
	ino_t ino;
};

static size_t
align_up(size_t n)
{
	return (n + STATE_ALIGN - 1) / STATE_ALIGN * STATE_ALIGN;
}

static uint64_t
header_check(const struct state_header *h)
{
	char hex[33];
	uint64_t v = 0;
	int i;

	secret_digest_hex(h, offsetof(struct state_header, check), hex, 16);
	for (i = 0; i < 16; i++)
		v = v << 4 | (uint64_t)(hex[i] <= '9' ? hex[i] - '0' : hex[i] - 'a' + 10);
	return v;
}

/* The header this layout wants (keys left zero). */
static int
plan(const struct state_layout *lay, struct state_header *h)
{
	size_t off = align_up(sizeof(*h));
	int i;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, STATE_MAGIC, 8);
	h->version = STATE_VERSION;
	h->nregions = STATE_NREGIONS;
	for (i = 0; i < STATE_NREGIONS; i++) {
		h->offset[i] = off;
		h->size[i] = lay->region[i].size;
		off += align_up(lay->region[i].size);
		if (off > STATE_MAX_SIZE)
			return -1;
	}
	h->file_size = off;
	return 0;
}

/* Does the mapped header match the plan (ignoring keys) and check out? */
static int
header_ok(const struct state_header *have, const struct state_header *want, size_t file_size)
{
	return memcmp(have->magic, want->magic, 8) == 0 &&
	    have->version == want->version && have->nregions == want->nregions &&
	    have->file_size == want->file_size && have->file_size == file_size &&
	    memcmp(have->offset, want->offset, sizeof(want->offset)) == 0 &&
	    memcmp(have->size, want->size, sizeof(want->size)) == 0 &&
	    have->check == header_check(have);
}

static void
init_regions(void *map, struct state_header *h, const struct state_layout *lay, int shared)
{
	int i;

	secret_random_bytes(h->digest_key, STATE_KEY_BYTES);
	secret_random_bytes(h->session_key, STATE_KEY_BYTES);
	for (i = 0; i < STATE_NREGIONS; i++)
		if (lay->region[i].init)
			lay->region[i].init((char *)map + h->offset[i], h->size[i], shared);
	h->check = header_check(h);
	memcpy(map, h, sizeof(*h));
}

/* Builds a fresh file next to path and renames it into place; fd stays locked. */
static int
rebuild(struct state *st, const struct state_layout *lay, struct state_header *want,
    struct gw_error *err)
{
	char tmp[4096];
	void *map;
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.%ld.new", st->path, (long)getpid()) >= (int)sizeof(tmp)) {
		gw_error_set(err, GW_EINTERNAL, "state: path too long");
		return -1;
	}
	unlink(tmp);
	if ((fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0) {
		gw_error_set(err, GW_EINTERNAL, "state: %s: %s", tmp, strerror(errno));
		return -1;
	}
	if (ftruncate(fd, (off_t)want->file_size) < 0 ||
	    (map = mmap(NULL, want->file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		gw_error_set(err, GW_EINTERNAL, "state: %s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	init_regions(map, want, lay, 1);
	msync(map, want->file_size, MS_SYNC);
	munmap(map, want->file_size);
	if (rename(tmp, st->path) < 0) {
		gw_error_set(err, GW_EINTERNAL, "state: rename to %s: %s", st->path, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	close(fd);
	return 0;
}

/* Opens path without following links; refuses what we do not own. Returns fd or -1. */
static int
open_trusted(const char *path, struct stat *sb)
{
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, sb) < 0 || !S_ISREG(sb->st_mode) || sb->st_uid != geteuid() ||
	    (sb->st_mode & 022)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

/* <path>.lock, exclusively locked: serializes creation and validation. */
static int
open_lock(const char *path, struct gw_error *err)
{
	char lp[4096];
	struct stat sb;
	int fd;

	if (snprintf(lp, sizeof(lp), "%s.lock", path) >= (int)sizeof(lp)) {
		gw_error_set(err, GW_EINTERNAL, "state: path too long");
		return -1;
	}
	fd = open(lp, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
	    flock(fd, LOCK_EX) < 0) {
		gw_error_set(err, GW_EINTERNAL, "state: %s: %s", lp, fd < 0 ? strerror(errno) : "not ours");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int
open_private(struct state *st, const struct state_layout *lay, struct state_header *want,
    struct gw_error *err)
{
	st->map = mmap(NULL, want->file_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (st->map == MAP_FAILED) {
		st->map = NULL;
		gw_error_set(err, GW_EINTERNAL, "state: anonymous map: %s", strerror(errno));
		return -1;
	}
	st->map_size = want->file_size;
	init_regions(st->map, want, lay, 0);
	return 0;
}

int
state_open(const char *path, const struct state_layout *lay, struct state **out,
    struct gw_error *err)
{
	struct state_header want;
	struct state *st;
	struct stat sb;
	int fd = -1, lockfd = -1, tries, rc = -1;
	void *map;

	*out = NULL;
	if ((st = calloc(1, sizeof(*st))) == NULL || plan(lay, &want) < 0) {
		free(st);
		gw_error_set(err, GW_EINTERNAL, "state: layout too large");
		return -1;
	}
	if (path == NULL) {
		if (open_private(st, lay, &want, err) < 0)
			goto out;
		rc = 0;
		goto out;
	}
	if ((st->path = strdup(path)) == NULL)
		goto out;
	/* One opener at a time per host: without this, two processes starting together
	 * could each build and rename a file, and one would keep a deleted inode. */
	if ((lockfd = open_lock(path, err)) < 0)
		goto out;
	for (tries = 0; tries < 4; tries++) {
		fd = open_trusted(path, &sb);
		if (fd < 0) {
			if (errno != ENOENT && errno != EPERM && errno != ELOOP) {
				gw_error_set(err, GW_EINTERNAL, "state: %s: %s", path, strerror(errno));
				goto out;
			}
			/* Missing or foreign: build ours (rename replaces a foreign file). */
			if (rebuild(st, lay, &want, err) < 0)
				goto out;
			continue;
		}
		if (flock(fd, LOCK_EX) < 0)
			goto fail_fd;
		/* Someone may have replaced the file while we waited for the lock. */
		{
			struct stat now;

			if (stat(path, &now) < 0 || now.st_ino != sb.st_ino || now.st_dev != sb.st_dev) {
				close(fd);
				fd = -1;
				continue;
			}
		}
		map = (size_t)sb.st_size != want.file_size ? MAP_FAILED :
		    mmap(NULL, want.file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED || !header_ok(map, &want, (size_t)sb.st_size)) {
			/* Another size, layout or a corrupt header: replace it, then reopen. */
			if (map != MAP_FAILED)
				munmap(map, want.file_size);
			if (rebuild(st, lay, &want, err) < 0)
				goto fail_fd;
			flock(fd, LOCK_UN);
			close(fd);
			fd = -1;
			continue;
		}
		st->map = map;
		st->map_size = want.file_size;
		st->dev = sb.st_dev;
		st->ino = sb.st_ino;
		flock(fd, LOCK_UN);	/* explicitly: the mapping keeps the file open */
		close(fd);
		fd = -1;
		rc = 0;
		goto out;
	}
	gw_error_set(err, GW_EINTERNAL, "state: %s keeps changing under us", path);
	goto out;
fail_fd:
	if (err->code == GW_OK)
		gw_error_set(err, GW_EINTERNAL, "state: %s: %s", path, strerror(errno));
	flock(fd, LOCK_UN);
	close(fd);
out:
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
	if (st->map)
		munmap(st->map, st->map_size);
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

void *
state_region(struct state *st, enum state_region_id id, size_t *size)
{
	const struct state_header *h = st->map;

	if (size)
		*size = h->size[id];
	return (char *)st->map + h->offset[id];
}

const unsigned char *
state_digest_key(const struct state *st)
{
	return ((const struct state_header *)st->map)->digest_key;
}

const unsigned char *
state_session_key(const struct state *st)
{
	return ((const struct state_header *)st->map)->session_key;
}

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
	int rc = pthread_mutex_lock(m);

	if (rc == 0)
		return 0;
	if (rc == EOWNERDEAD) {
		pthread_mutex_consistent(m);
		return 1;
	}
	return -1;
}

void
state_unlock(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
}
