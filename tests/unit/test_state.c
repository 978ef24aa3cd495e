/* Unit tests: the state file under faults — a file fully allocated when built, no room
 * for it, the file shrunk or overwritten under a running process, a lock that cannot be
 * had, processes killed (or stopped) while holding one, the token-cache size adopted
 * from an existing file, a removed file rebuilt with the keys and tombstones of an
 * intact mapping, the default path. Whatever may kill a process runs in a child whose
 * checks come back over a pipe: a test that dies fails, it does not end the run. */
#include "autoconf.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "clock.h"
#include "gateway.h"
#include "introspect.h"
#include "secret.h"
#include "session.h"
#include "state.h"
#include "token_cache.h"
#include "tcache.h"
#include "tap.h"

/* pthread_mutex_unlock, interposed for the tests of processes that die (or stop)
 * holding a lock: with hold set, the next unlock in this process kills (SIGKILL) or
 * stops (SIGSTOP) it instead, with the lock held and what it wrote under it. */
static int (*real_unlock)(pthread_mutex_t *);
static volatile int hold;

int
pthread_mutex_unlock(pthread_mutex_t *m)
{
	if (hold)
		raise(hold);
	return real_unlock(m);
}

/* --- checks made in a child -------------------------------------------------------- */

static int report_fd = -1;

static void
check(int cond, const char *desc)
{
	dprintf(report_fd, "%d %s\n", cond ? 1 : 0, desc);
}

/* Runs fn in a child: each of its checks becomes one of ours, and it must end by
 * itself (exit 0), not by a signal. */
static void
in_child(const char *what, void (*fn)(void))
{
	char line[512];
	FILE *f;
	pid_t pid;
	int p[2], ws, n = 0;

	fflush(stdout);
	if (pipe(p) < 0 || (pid = fork()) < 0) {
		ok(0, "%s: fork", what);
		return;
	}
	if (pid == 0) {
		close(p[0]);
		report_fd = p[1];
		fn();
		_exit(0);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		ok(line[0] == '1', "%s: %s", what, line + 2);
		n++;
	}
	if (f)
		fclose(f);
	waitpid(pid, &ws, 0);
	ok(WIFEXITED(ws) && WEXITSTATUS(ws) == 0 && n > 0, "%s: the process lived through it (%s after %d checks)",
	    what, WIFSIGNALED(ws) ? strsignal(WTERMSIG(ws)) : "exited", n);
}

/* --- fixtures ------------------------------------------------------------------- */

static char dir[] = "/tmp/mcpgate-test-state-XXXXXX", path[256];
static const int64_t now = 1700000000000LL;	/* ms */

static void
layout(struct state_layout *lay, uint32_t entries)
{
	cache_layout(lay, entries);	/* the cache's definition adopts a file's other size */
	lay->region[GW_REGION_TOMBS].def = &session_tombstones_def;
	lay->region[GW_REGION_CATALOG].def = &catalog_region_def;
	lay->region[GW_REGION_CATALOG].size = catalog_region_def.size;
}

static struct state *
open_state(const struct state *from)
{
	struct gw_error err = { GW_OK, 0, "" };
	struct state_layout lay;
	struct state *st = NULL;

	layout(&lay, 64);
	if (state_open(path, &lay, from, &st, &err) < 0)
		printf("# state_open: %s\n", err.detail);
	return st;
}

static enum tc_status
lookup(struct token_cache *tc, const char *token)
{
	struct claims got;
	char reason[TC_REASON_MAX];
	unsigned char key[TC_KEY_BYTES];

	cache_key(token, key);
	return token_cache_lookup(tc, key, now, &unbounded, &got, reason);
}

static void
fill(struct token_cache *tc, const char *token)
{
	struct claims c, got;
	char reason[TC_REASON_MAX];
	unsigned char key[TC_KEY_BYTES];

	memset(&c, 0, sizeof(c));
	snprintf(c.subject, sizeof(c.subject), "%s", token);
	c.exp = now / 1000 + 1000;
	cache_key(token, key);
	token_cache_lookup(tc, key, now, &unbounded, &got, reason);
	token_cache_fill(tc, key, now, &c, now + 600000);
}

/* A sealed session for alice, expiring at exp (seconds). */
static void
seal(const unsigned char *key, int64_t exp, char id[SESSION_ID_MAX])
{
	struct session s;

	memset(&s, 0, sizeof(s));
	snprintf(s.version, sizeof(s.version), "2025-06-18");
	session_who(NULL, "alice", "cli", "", s.who);
	s.exp = exp;
	session_seal(key, &s, id);
}

static int
opens(const unsigned char *key, void *tombs, const char *id)
{
	struct session s;
	char who[33];
	int rc;

	session_who(NULL, "alice", "cli", "", who);
	rc = session_open(key, tombs, id, who, now / 1000, &s);
	session_clear(&s);
	return rc;
}

static void
overwrite(size_t off, int byte, size_t n)
{
	unsigned char *junk = malloc(n);
	int fd = open(path, O_WRONLY);

	if (byte < 0)
		secret_random_bytes(junk, n);
	else
		memset(junk, byte, n);
	(void)!pwrite(fd, junk, n, (off_t)off);
	close(fd);
	free(junk);
}

static off_t
file_size(void)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? sb.st_size : -1;
}

/* --- the faults ------------------------------------------------------------------- */

/* The end of a fault: tc (of st, now broken) detached; the cache of st2, the file
 * re-opened, works; both closed. */
static void
rebuilt_works(struct state *st, struct state *st2, struct token_cache *tc)
{
	token_cache_detach(tc);
	check(st2 && (tc = cache_of(st2)) != NULL && lookup(tc, "token-a") == TC_MISS, "the new cache works");
	token_cache_detach(tc);
	state_close(st);
	state_close(st2);
}

/* `: > state` under a running process: the next access faults. */
static void
shrunk(void)
{
	struct state *st = open_state(NULL), *st2;
	struct token_cache *tc;
	unsigned char key[32];
	char id[SESSION_ID_MAX];
	struct gw_error berr;

	check(st != NULL && (tc = cache_of(st)) != NULL, "a state file with a cache");
	fill(tc, "token-a");
	check(lookup(tc, "token-a") == TC_HIT, "a token cached");
	memcpy(key, state_session_key(st), 32);
	seal(key, now / 1000 + 100, id);
	check(truncate(path, 0) == 0, "the file truncated under the mapping");
	check(lookup(tc, "token-a") == TC_UNAVAILABLE, "the next lookup: no SIGBUS, the cache unavailable");
	check(lookup(tc, "token-b") == TC_UNAVAILABLE, "and stays so (no caching on zero pages)");
	check(opens(key, state_region(st, GW_REGION_TOMBS, NULL), id) == -2,
	    "a session's tombstones cannot be read: fail closed (-2)");
	check(session_end(state_region(st, GW_REGION_TOMBS, NULL), id, now / 1000 + 100, now / 1000) == -1,
	    "ending a session fails (nothing recorded)");
	check(!catalog_region_degraded(state_region(st, GW_REGION_CATALOG, NULL)), "the catalog region reads as none");
	check(state_broken(st, &berr) && strstr(berr.detail, "SIGBUS"), "the mapping is reported broken (SIGBUS)");
	check(memcmp(state_session_key(st), key, 32) == 0, "the keys in process memory are intact");
	st2 = open_state(st);
	check(st2 != NULL && !state_broken(st2, NULL) && file_size() > 0, "re-opened: the file rebuilt");
	check(st2 && memcmp(state_session_key(st2), key, 32) != 0,
	    "with fresh keys (the tombstones were lost: old sessions must not come back)");
	rebuilt_works(st, st2, tc);
}

/* The file overwritten in place: with 0xff, then with random bytes. */
static void
overwritten_with(int byte)
{
	struct state *st = open_state(NULL), *st2;
	struct token_cache *tc;
	unsigned char key[32];
	char id[SESSION_ID_MAX];
	off_t size = file_size();
	struct stat before, after;

	check(st != NULL && (tc = cache_of(st)) != NULL, "a state file with a cache");
	fill(tc, "token-a");
	memcpy(key, state_session_key(st), 32);
	seal(key, now / 1000 + 100, id);
	stat(path, &before);
	overwrite(0, byte, (size_t)size);
	check(lookup(tc, "token-a") == TC_UNAVAILABLE, "a lookup: the cache unavailable, no crash");
	check(opens(key, state_region(st, GW_REGION_TOMBS, NULL), id) == -2, "a session: fail closed");
	check(state_broken(st, NULL), "the mapping is reported broken");
	st2 = open_state(st);
	stat(path, &after);
	check(st2 != NULL && !state_broken(st2, NULL) && after.st_ino != before.st_ino, "re-opened: the file rebuilt");
	rebuilt_works(st, st2, tc);
}

static void
overwritten_ff(void)
{
	overwritten_with(0xff);
}

static void
overwritten_random(void)
{
	overwritten_with(-1);
}

/* The token cache's stripe count overwritten: the process keeps its own. */
static void
nstripes_overwritten(void)
{
	struct state *st = open_state(NULL);
	struct token_cache *tc;
	int i, fine = 1;

	check(st != NULL && (tc = cache_of(st)) != NULL, "a state file with a cache");
	fill(tc, "token-a");
	/* The regions start a page after the header (the asmeta region first);
	 * struct tc_region is uint32_t magic, uint32_t nstripes, then the stripes. */
	overwrite((size_t)((char *)state_region(st, GW_REGION_CACHE, NULL) - (char *)state_region(st, GW_REGION_ASMETA, NULL)) +
	    4096 + 4, 0xff, 4);
	for (i = 0; i < 50; i++) {
		char t[32];

		snprintf(t, sizeof(t), "token-%d", i);
		fine &= lookup(tc, t) == TC_MISS;
	}
	check(fine, "50 lookups of new tokens: misses, within the mapping");
	check(lookup(tc, "token-a") == TC_HIT, "lookups use the stripe count read when the file was opened");
	token_cache_detach(tc);
	state_close(st);
}

static void
unlink_quietly(void)
{
	unlink(path);
}

/* --- the tests -------------------------------------------------------------------- */

/* The state file under test and its cache: the tests of held locks open it (rebuilding
 * it on the way), the tests of sizes after them close it. */
static struct state *st;
static struct token_cache *tc;

/* Built fully allocated: no hole for a full file system to fault on later. */
static void
test_allocated(void)
{
	struct state_layout lay;
	struct stat sb;
	size_t size;

	st = open_state(NULL);
	ok(st != NULL && stat(path, &sb) == 0, "state file built");
	ok((off_t)sb.st_blocks * 512 >= sb.st_size, "every block allocated (%lld of %lld bytes)",
	    (long long)sb.st_blocks * 512, (long long)sb.st_size);
	ok(state_peek(path, (layout(&lay, 64), &lay), GW_REGION_CACHE, &size) == 0 &&
	    size == token_cache_region_size(64), "peek: the cache region's size, read without mapping");
	state_close(st);
}

/* A valid file with holes (made by another build, or copied sparse): allocated when adopted. */
static void
test_sparse(void)
{
	char sparse[300], block[4096];
	int in = open(path, O_RDONLY), out;
	ssize_t n;
	off_t off = 0;
	struct stat sb, sb2;

	snprintf(sparse, sizeof(sparse), "%s/sparse", dir);
	out = open(sparse, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	while ((n = read(in, block, sizeof(block))) > 0) {
		size_t i = 0;

		while (i < (size_t)n && block[i] == 0)
			i++;
		if (i < (size_t)n)
			(void)!pwrite(out, block, (size_t)n, off);
		off += n;
	}
	(void)!ftruncate(out, off);
	close(in);
	close(out);
	rename(sparse, path);
	stat(path, &sb);
	ok((off_t)sb.st_blocks * 512 < sb.st_size, "a sparse copy of the file (%lld of %lld bytes)",
	    (long long)sb.st_blocks * 512, (long long)sb.st_size);
	st = open_state(NULL);
	stat(path, &sb2);
	ok(st && sb2.st_ino == sb.st_ino && (off_t)sb2.st_blocks * 512 >= sb2.st_size,
	    "adopted, and allocated in full");
	state_close(st);
}

/* No room (a file past RLIMIT_FSIZE: EFBIG, as ENOSPC on a full file system). */
static void
test_no_room(void)
{
	pid_t pid = fork();
	int ws;

	if (pid == 0) {
		struct gw_error err = { GW_OK, 0, "" };
		struct state_layout lay;
		struct rlimit rl = { 64 * 1024, 64 * 1024 };
		char p2[300];

		snprintf(p2, sizeof(p2), "%s/small", dir);
		setrlimit(RLIMIT_FSIZE, &rl);
		layout(&lay, 64);
		_exit(state_open(p2, &lay, NULL, &st, &err) == STATE_NOSPACE &&
		    strstr(err.detail, "large") ? 0 : 1);
	}
	waitpid(pid, &ws, 0);
	ok(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "no room for the file: STATE_NOSPACE, said (%s)",
	    WIFSIGNALED(ws) ? strsignal(WTERMSIG(ws)) : "exited");
}

/* The file shrunk or overwritten under a running process, each fault in a child. */
static void
test_faults(void)
{
	in_child("file shrunk", shrunk);
	in_child("overwritten with 0xff", overwritten_ff);
	in_child("overwritten with random bytes", overwritten_random);
	in_child("stripe count overwritten", nstripes_overwritten);
}

/* A process killed holding a stripe lock and a pending claim blocks nobody. */
static void
test_killed_stripe_lock(void)
{
	pid_t pid;
	int ws;
	int64_t t0;

	st = open_state(NULL);
	tc = cache_of(st);
	pid = fork();
	if (pid == 0) {
		hold = SIGKILL;
		lookup(tc, "token-k");	/* claims, then dies unlocking */
		_exit(0);
	}
	waitpid(pid, &ws, 0);
	ok(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL,
	    "a process killed holding a stripe lock and a claim");
	t0 = clock_mono_us();
	is_int(lookup(tc, "token-k"), TC_MISS, "the next lookup of that token claims it");
	ok(clock_mono_us() - t0 < 1000000, "at once (%lld µs)", (long long)(clock_mono_us() - t0));
	fill(tc, "token-k");
	is_int(lookup(tc, "token-k"), TC_HIT, "and the stripe works as before");
}

/* A process killed holding the tombstones' lock. */
static void
test_killed_tombs_lock(void)
{
	unsigned char key[32];
	char id[SESSION_ID_MAX];
	pid_t pid;
	int ws;

	memcpy(key, state_session_key(st), 32);
	seal(key, now / 1000 + 100, id);
	pid = fork();
	if (pid == 0) {
		hold = SIGKILL;
		session_end(state_region(st, GW_REGION_TOMBS, NULL), "another", now / 1000 + 50,
		    now / 1000);
		_exit(0);
	}
	waitpid(pid, &ws, 0);
	ok(WIFSIGNALED(ws), "a process killed holding the tombstones' lock");
	is_int(opens(key, state_region(st, GW_REGION_TOMBS, NULL), id), 0,
	    "a session opens after it");
	is_int(session_end(state_region(st, GW_REGION_TOMBS, NULL), id, now / 1000 + 100,
	    now / 1000), 0, "and can be ended");
	is_int(opens(key, state_region(st, GW_REGION_TOMBS, NULL), id), -1, "and stays ended");
}

/* A process stopped holding a stripe lock: lookups time out, then the file is rebuilt. */
static void
test_stopped_stripe_lock(void)
{
	struct state *st2;
	struct gw_error berr;
	struct stat sb, sb2;
	pid_t pid;
	int ws, i;
	int64_t t0;

	/* A lookup waits STATE_LOCK_TIMEOUT_MS at most, then fails (no caching); repeated
	 * failures break the mapping; re-opening rebuilds the file rather than mapping the
	 * same one again. */
	pid = fork();
	if (pid == 0) {
		hold = SIGSTOP;
		lookup(tc, "token-s");
		_exit(0);
	}
	waitpid(pid, &ws, WUNTRACED);
	ok(WIFSTOPPED(ws), "a process stopped holding a stripe lock");
	for (i = 0; i < STATE_LOCK_FAILURES; i++) {
		t0 = clock_mono_us();
		is_int(lookup(tc, "token-s"), TC_UNAVAILABLE,
		    "lookup %d: unavailable (not a hang)", i + 1);
		ok(clock_mono_us() - t0 < (STATE_LOCK_TIMEOUT_MS + 1000) * 1000LL, "after %lld ms",
		    (long long)(clock_mono_us() - t0) / 1000);
	}
	berr.detail[0] = '\0';
	ok(state_broken(st, &berr) && strstr(berr.detail, "locks"), "the mapping is broken: %s",
	    berr.detail[0] ? berr.detail : "(not)");
	stat(path, &sb);
	st2 = open_state(st);
	stat(path, &sb2);
	ok(st2 && sb2.st_ino != sb.st_ino, "re-opened: the file rebuilt, not mapped again");
	ok(st2 && memcmp(state_session_key(st2), state_session_key(st), 32) == 0,
	    "with the keys (only a lock was stuck: the tombstones could be carried)");
	token_cache_detach(tc);
	tc = st2 ? cache_of(st2) : NULL;
	ok(tc && lookup(tc, "token-s") == TC_MISS, "the new file's cache works");
	kill(pid, SIGKILL);
	waitpid(pid, &ws, 0);
	state_close(st);
	st = st2;
	token_cache_detach(tc);
}

/* Another cache-entries: the existing file's cache is adopted, nothing rebuilt. */
static void
test_cache_adopted(void)
{
	struct gw_error err = { GW_OK, 0, "" };
	struct state_layout lay;
	struct state *st2;
	struct stat sb, sb2;
	size_t size;

	stat(path, &sb);
	layout(&lay, 1024);
	ok(state_open(path, &lay, NULL, &st2, &err) == 0, "opened asking for 1024 entries");
	stat(path, &sb2);
	ok(sb2.st_ino == sb.st_ino && !state_stale(st) && state_adopted(st2, GW_REGION_CACHE),
	    "the file kept, its cache size adopted");
	state_region(st2, GW_REGION_CACHE, &size);
	is_int(token_cache_region_entries(size), 64, "64 entries, as built");
	ok(memcmp(state_session_key(st), state_session_key(st2), 32) == 0, "one session key for both");
	state_close(st2);
}

/* Another layout of a fixed region (another version): rebuilt. */
static void
test_fixed_region(void)
{
	struct gw_error err = { GW_OK, 0, "" };
	struct state_layout lay;
	struct state *st2;

	layout(&lay, 64);
	lay.region[GW_REGION_CATALOG].size += 8;
	ok(state_open(path, &lay, NULL, &st2, &err) == 0 && state_stale(st), "a fixed region of another size: rebuilt");
	state_close(st2);
	state_close(st);
}

/* The file removed under a running process: rebuilt with its keys and tombstones. */
static void
test_removed(void)
{
	unsigned char key[32];
	char id[SESSION_ID_MAX], other[SESSION_ID_MAX];
	struct state *st2;

	st = open_state(NULL);
	memcpy(key, state_session_key(st), 32);
	seal(key, now / 1000 + 100, id);
	seal(key, now / 1000 + 100, other);
	session_end(state_region(st, GW_REGION_TOMBS, NULL), id, now / 1000 + 100, now / 1000);
	unlink(path);
	ok(state_stale(st), "removed: stale");
	st2 = open_state(st);
	ok(st2 && !state_stale(st2) && !state_broken(st2, NULL), "re-opened: rebuilt");
	ok(st2 && memcmp(state_session_key(st2), key, 32) == 0 &&
	    memcmp(state_digest_key(st2), state_digest_key(st), 32) == 0, "with the keys of the intact mapping");
	is_int(st2 ? opens(key, state_region(st2, GW_REGION_TOMBS, NULL), id) : 9, -1, "an ended session stays ended");
	is_int(st2 ? opens(key, state_region(st2, GW_REGION_TOMBS, NULL), other) : 9, 0, "another one still opens");
	state_close(st);
	state_close(st2);
}

/* The file made readable by group or others: its keys may have been read, so it is not
 * taken; a new one is built in its place, with new keys, readable by this user alone. */
static void
test_exposed(void)
{
	unsigned char key[32];
	struct state *st2;
	struct stat sb;

	st = open_state(NULL);
	memcpy(key, state_session_key(st), 32);
	state_close(st);
	chmod(path, 0644);
	st2 = open_state(NULL);
	ok(st2 && memcmp(state_session_key(st2), key, 32) != 0, "a state file readable by others: rebuilt, new keys");
	ok(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600, "… readable by this user alone");
	memcpy(key, state_session_key(st2), 32);
	state_close(st2);
	chmod(path, 0640);
	st2 = open_state(NULL);
	ok(st2 && memcmp(state_session_key(st2), key, 32) != 0, "readable by its group: rebuilt too");
	memcpy(key, state_session_key(st2), 32);
	state_close(st2);
	st2 = open_state(NULL);
	ok(st2 && memcmp(state_session_key(st2), key, 32) == 0, "0600: taken as it is");
	state_close(st2);
}

/* The default path: a directory only this user may write. */
static void
test_default_path(void)
{
	struct gw_error err = { GW_OK, 0, "" };
	struct stat sb;
	char rd[300], p[512], buf[512];

	snprintf(rd, sizeof(rd), "%s/rt", dir);
	setenv("RUNTIME_DIRECTORY", rd, 1);
	ok(state_default_path(p, sizeof(p), 0, &err) == 0 && stat(rd, &sb) < 0,
	    "without create: the path, nothing made");
	ok(state_default_path(p, sizeof(p), 1, &err) == 0, "$RUNTIME_DIRECTORY: %s", p);
	snprintf(buf, sizeof(buf), "%s/state", rd);
	is_str(p, buf, "the state file in it");
	memset(&sb, 0, sizeof(sb));
	stat(rd, &sb);
	is_int(sb.st_mode & 0777, 0700, "made 0700");
	chmod(rd, 0777);
	ok(state_default_path(p, sizeof(p), 1, &err) < 0 &&
	    strstr(err.detail, "writable by other users"),
	    "a directory others may write: refused (%s)", err.detail);
	rmdir(rd);
	symlink(dir, rd);
	ok(state_default_path(p, sizeof(p), 1, &err) < 0 && strstr(err.detail, "symlink"),
	    "a symlink: refused (%s)", err.detail);
	unlink(rd);
	snprintf(buf, sizeof(buf), "%s/rt:/elsewhere", dir);
	setenv("RUNTIME_DIRECTORY", buf, 1);
	ok(state_default_path(p, sizeof(p), 1, &err) == 0 &&
	    strcmp(p + strlen(p) - 9, "/rt/state") == 0,
	    "several runtime directories: the first");
	rmdir(rd);
	unsetenv("RUNTIME_DIRECTORY");
}

/* The directory of a state file the configuration names: made like the default's (only
 * its last component), judged like it, a symlink followed only when it is ours. */
static void
test_file_dir(void)
{
	struct gw_error err = { GW_OK, 0, "" };
	struct stat sb;
	char d[300], f[400], other[300];

	snprintf(d, sizeof(d), "%s/named", dir);
	snprintf(f, sizeof(f), "%s/state", d);
	ok(state_file_dir(f, 1, &err) == 0 && stat(d, &sb) == 0 && (sb.st_mode & 0777) == 0700,
	    "a missing directory: made, 0700");
	ok(state_file_dir(f, 1, &err) == 0, "made already: taken");
	chmod(d, 0777);
	ok(state_file_dir(f, 1, &err) < 0 && strstr(err.detail, "writable by other users (mode 777)"),
	    "world-writable: refused (%s)", err.detail);
	chmod(d, 0770);
	ok(state_file_dir(f, 1, &err) < 0 && strstr(err.detail, "writable by other users"),
	    "group-writable: refused (%s)", err.detail);
	chmod(d, 0700);
	snprintf(other, sizeof(other), "%s/link", dir);
	snprintf(f, sizeof(f), "%s/state", other);
	symlink(d, other);
	ok(state_file_dir(f, 1, &err) == 0, "a symlink of ours to a private directory: followed");
	chmod(d, 0777);
	ok(state_file_dir(f, 1, &err) < 0 && strstr(err.detail, "writable by other users"),
	    "… to a world-writable one: refused (%s)", err.detail);
	chmod(d, 0700);
	ok(state_file_dir(f, 0, &err) < 0 && strstr(err.detail, "symlink"),
	    "the default directory as a symlink: refused (%s)", err.detail);
	if (geteuid() == 0 && lchown(other, 65534, 65534) == 0)
		ok(state_file_dir(f, 1, &err) < 0 && strstr(err.detail, "symlink that is neither"),
		    "a symlink of another user: refused (%s)", err.detail);
	unlink(other);
	if (geteuid() == 0 && chown(d, 65534, 65534) == 0) {
		snprintf(f, sizeof(f), "%s/state", d);
		ok(state_file_dir(f, 1, &err) < 0 && strstr(err.detail, "belongs to uid 65534"),
		    "a directory of another user: refused (%s)", err.detail);
	}
	snprintf(f, sizeof(f), "%s/no/such/state", dir);
	snprintf(other, sizeof(other), "%s/no", dir);
	ok(state_file_dir(f, 1, &err) < 0 && strstr(err.detail, "cannot make") && stat(other, &sb) < 0,
	    "a missing parent: not made (%s)", err.detail);
	rmdir(d);
}

/* A private mapping works the same (and is never stale). */
static void
test_private(void)
{
	struct gw_error err = { GW_OK, 0, "" };
	struct state_layout lay;

	layout(&lay, 64);
	ok(state_open(NULL, &lay, NULL, &st, &err) == 0 && state_is_private(st) && !state_stale(st) &&
	    !state_broken(st, NULL) && (tc = cache_of(st)) != NULL && lookup(tc, "x") == TC_MISS,
	    "private mapping");
	token_cache_detach(tc);
	state_close(st);
}

int
main(int argc, char **argv)
{
	char buf[512];

	tap_args(argc, argv);
	*(void **)&real_unlock = dlsym(RTLD_NEXT, "pthread_mutex_unlock");
	secret_init();
	mkdtemp(dir);
	snprintf(path, sizeof(path), "%s/state", dir);
	atexit(unlink_quietly);
	run_case(test_allocated);
	run_case(test_sparse);
	run_case(test_no_room);
	run_case(test_faults);
	run_case(test_killed_stripe_lock);
	run_case(test_killed_tombs_lock);
	run_case(test_stopped_stripe_lock);
	run_case(test_cache_adopted);
	run_case(test_fixed_region);
	run_case(test_removed);
	run_case(test_exposed);
	run_case(test_default_path);
	run_case(test_file_dir);
	run_case(test_private);
	snprintf(buf, sizeof(buf), "%s/state.lock", dir);
	unlink(buf);
	snprintf(buf, sizeof(buf), "%s/small.lock", dir);
	unlink(buf);
	unlink(path);
	rmdir(dir);
	return done_testing();
}
