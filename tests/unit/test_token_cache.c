/* Unit tests: token cache and state file — time moves by addition (h2o style). */
#include "autoconf.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gateway.h"
#include "introspect.h"
#include "secret.h"
#include "session.h"
#include "state.h"
#include "token_cache.h"
#include "fixture.h"
#include "tcache.h"
#include "tap.h"

static struct claims
claims(const char *sub, int64_t exp)
{
	struct claims c;

	memset(&c, 0, sizeof(c));
	snprintf(c.subject, sizeof(c.subject), "%s", sub);
	snprintf(c.scope, sizeof(c.scope), "mcp:tools");
	c.exp = exp;
	return c;
}

/* What the tests share: the state file, its layout, its mapping and the cache in it. */
static const int64_t now = 1700000000000LL;	/* ms */
static char path[256];
static struct state_layout lay;
static struct state *st;
static struct token_cache *tc;

/* A state file is created, and its cache attached. */
static void
test_open(void)
{
	struct gw_error err = { GW_OK, 0, "" };

	ok(state_open(path, &lay, NULL, &st, &err) == 0, "state file created: %s", err.detail);
	tc = cache_of(st);
	ok(tc != NULL, "cache attached");
}

/* A miss claims the entry, a fill makes it a hit until its TTL, a release frees it. */
static void
test_fill(void)
{
	char reason[TC_REASON_MAX];
	struct claims got, c;
	unsigned char a[TC_KEY_BYTES];

	cache_key("token-a", a);
	is_int(token_cache_lookup(tc, a, now, &unbounded, &got, reason), TC_MISS, "first lookup: miss, claimed");
	is_int(token_cache_lookup(tc, a, now + 10, &unbounded, &got, reason), TC_BUSY, "a concurrent lookup waits");
	c = claims("alice", now / 1000 + 100);
	token_cache_fill(tc, a, now, &c, now + 60000);
	is_int(token_cache_lookup(tc, a, now + 1000, &unbounded, &got, reason), TC_HIT, "filled: hit");
	is_str(got.subject, "alice", "claims come back");
	is_int(token_cache_lookup(tc, a, now + 60000, &unbounded, &got, reason), TC_MISS, "after its TTL: miss again");
	token_cache_release(tc, a);
	is_int(token_cache_lookup(tc, a, now + 60001, &unbounded, &got, reason), TC_MISS, "a released claim can be taken");
	token_cache_release(tc, a);
}

/* exp is re-checked on every hit, even inside the cache TTL. */
static void
test_exp_rechecked(void)
{
	char reason[TC_REASON_MAX];
	struct claims got, c;
	unsigned char b[TC_KEY_BYTES];

	cache_key("token-b", b);
	is_int(token_cache_lookup(tc, b, now, &unbounded, &got, reason), TC_MISS, "b: miss");
	c = claims("bob", now / 1000 + 5);
	token_cache_fill(tc, b, now, &c, now + 300000);
	is_int(token_cache_lookup(tc, b, now + 4000, &unbounded, &got, reason), TC_HIT, "b: hit before exp");
	is_int(token_cache_lookup(tc, b, now + 5000, &unbounded, &got, reason), TC_NEGATIVE, "b: expired while cached → negative");
	is_str(reason, "token expired", "reason");
}

/* Negative entries live negative-ttl. */
static void
test_negative(void)
{
	char reason[TC_REASON_MAX];
	struct claims got;
	unsigned char a[TC_KEY_BYTES];

	cache_key("token-a", a);
	is_int(token_cache_lookup(tc, a, now, &unbounded, &got, reason), TC_MISS, "a: miss");
	token_cache_fill_negative(tc, a, now, "token is not active", now + 10000);
	is_int(token_cache_lookup(tc, a, now + 9999, &unbounded, &got, reason), TC_NEGATIVE, "negative within its TTL");
	is_str(reason, "token is not active", "negative reason");
	is_int(token_cache_lookup(tc, a, now + 10000, &unbounded, &got, reason), TC_MISS, "negative expires");
	token_cache_release(tc, a);
}

/* An entry is taken only while it promises no more life than the configuration allows
 * now (cache-ttl, negative-ttl): one stored under a longer lifetime, or before the
 * clock went back, is verified again. */
static void
test_life_bound(void)
{
	const struct tc_life life = { 10000, 5000 };
	const struct tc_lookup bounded = { &life, 3000 };
	char reason[TC_REASON_MAX];
	struct claims c, got;
	unsigned char a[TC_KEY_BYTES], b[TC_KEY_BYTES];

	memset(&c, 0, sizeof(c));
	strcpy(c.subject, "alice");
	c.exp = now / 1000 + 3600;
	cache_key("token-life-a", a);
	cache_key("token-life-b", b);
	is_int(token_cache_lookup(tc, a, now, &bounded, &got, reason), TC_MISS, "life: a claimed");
	token_cache_fill(tc, a, now, &c, now + 60000);	/* stored under cache-ttl 60 s */
	is_int(token_cache_lookup(tc, a, now + 1000, &unbounded, &got, reason), TC_HIT,
	    "an entry of 60 s, no bound: a hit");
	is_int(token_cache_peek(tc, a, now + 1000, &life, &got), TC_MISS, "cache-ttl lowered to 10 s: peek misses");
	is_int(token_cache_lookup(tc, a, now + 1000, &bounded, &got, reason), TC_MISS,
	    "… and a lookup misses, claiming it to verify again");
	token_cache_fill(tc, a, now + 1000, &c, now + 11000);
	is_int(token_cache_lookup(tc, a, now + 1000, &bounded, &got, reason), TC_HIT,
	    "refilled under 10 s: a hit");
	is_int(token_cache_lookup(tc, a, now - 3600000, &bounded, &got, reason), TC_MISS,
	    "the clock set back an hour: its end lies further than 10 s ahead, a miss");
	is_int(token_cache_lookup(tc, b, now, &bounded, &got, reason), TC_MISS, "life: b claimed");
	token_cache_fill_negative(tc, b, now, "token is not active", now + 60000);
	is_int(token_cache_lookup(tc, b, now + 1000, &bounded, &got, reason), TC_MISS,
	    "a negative entry of 60 s, negative-ttl lowered to 5 s: a miss");
	token_cache_release(tc, a);
	token_cache_release(tc, b);
}

/* A pending claim past its deadline is taken over. */
static void
test_overdue_claim(void)
{
	char reason[TC_REASON_MAX];
	struct claims got;
	unsigned char a[TC_KEY_BYTES];

	cache_key("token-a", a);
	is_int(token_cache_lookup(tc, a, now, &unbounded, &got, reason), TC_MISS, "claim");
	is_int(token_cache_lookup(tc, a, now + 3001, &unbounded, &got, reason), TC_MISS, "overdue claim taken over");
	token_cache_release(tc, a);
}

/* Bounded: many tokens evict, the count never exceeds the capacity. */
static void
test_bounded(void)
{
	char reason[TC_REASON_MAX];
	struct claims got, c;
	int i;

	for (i = 0; i < 1000; i++) {
		char t[32];
		unsigned char k[TC_KEY_BYTES];

		snprintf(t, sizeof(t), "many-%d", i);
		cache_key(t, k);
		if (token_cache_lookup(tc, k, now, &unbounded, &got, reason) == TC_MISS) {
			c = claims(t, now / 1000 + 1000);
			token_cache_fill(tc, k, now, &c, now + 60000 + i);
		}
	}
	ok(token_cache_count(tc, now) <= 64, "1000 tokens into 64 slots: bounded (%zu)", token_cache_count(tc, now));
	ok(token_cache_count(tc, now) >= 32, "and well used");
}

/* The cache is shared between processes, and a dead one's claim blocks nobody. */
static void
test_shared(void)
{
	char reason[TC_REASON_MAX];
	struct claims got, c;
	unsigned char a[TC_KEY_BYTES], b[TC_KEY_BYTES];
	pid_t pid;
	int ws;

	/* Shared between processes: a child sees what the parent stored, and a child killed
	 * while holding a claim blocks nobody. */
	cache_key("shared", a);
	token_cache_lookup(tc, a, now, &unbounded, &got, reason);
	c = claims("carol", now / 1000 + 100);
	token_cache_fill(tc, a, now, &c, now + 60000);
	pid = fork();
	if (pid == 0) {
		struct gw_error err = { GW_OK, 0, "" };
		struct state *cs;
		struct token_cache *ctc;
		struct claims cg;
		char r[TC_REASON_MAX];
		unsigned char k[TC_KEY_BYTES];
		int okc;

		if (state_open(path, &lay, NULL, &cs, &err) < 0)
			_exit(2);
		ctc = cache_of(cs);
		okc = token_cache_lookup(ctc, a, now + 1, &unbounded, &cg, r) == TC_HIT &&
		    strcmp(cg.subject, "carol") == 0;
		cache_key("orphan", k);
		/* Claims, then dies. */
		token_cache_lookup(ctc, k, now, &unbounded_long, &cg, r);
		_exit(okc ? 0 : 1);
	}
	waitpid(pid, &ws, 0);
	ok(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "another process reads the shared entry");
	cache_key("orphan", b);
	is_int(token_cache_lookup(tc, b, now + 5, &unbounded, &got, reason), TC_MISS,
	    "a dead process's claim does not block (owner gone)");
	token_cache_release(tc, b);
}

/* A process killed while holding a stripe lock: the robust mutex recovers. */
static void
test_robust_lock(void)
{
	pthread_mutex_t *m = (pthread_mutex_t *)state_region(st, GW_REGION_ASMETA, NULL);
	pid_t pid = fork();
	int ws;

	if (pid == 0) {
		state_lock(m);
		raise(SIGKILL);
	}
	waitpid(pid, &ws, 0);
	is_int(state_lock(m), 1, "lock held by a killed process: taken, reported as recovered");
	state_unlock(m);
	is_int(state_lock(m), 0, "and normal afterwards");
	state_unlock(m);
}

/* Reopen: same file, same keys. */
static void
test_reopen(void)
{
	struct gw_error err = { GW_OK, 0, "" };
	struct state *st2;

	ok(state_open(path, &lay, NULL, &st2, &err) == 0, "reopened");
	ok(memcmp(state_digest_key(st), state_digest_key(st2), STATE_KEY_BYTES) == 0, "same digest key");
	state_close(st2);
}

/* A different layout (one more region) rebuilds the file, with fresh keys. */
static void
test_new_layout(void)
{
	struct gw_error err = { GW_OK, 0, "" };
	struct state *st2;

	cache_layout(&lay, 128);
	lay.region[GW_REGION_TOMBS].def = &session_tombstones_def;
	ok(state_open(path, &lay, NULL, &st2, &err) == 0 && state_stale(st) && !state_stale(st2),
	    "new layout: file rebuilt");
	ok(memcmp(state_digest_key(st), state_digest_key(st2), STATE_KEY_BYTES) != 0, "with fresh keys");
	state_close(st2);
	state_close(st);
}

/* A corrupt header rebuilds the file. */
static void
test_corrupt_header(void)
{
	struct gw_error err = { GW_OK, 0, "" };
	int fd = open(path, O_RDWR);

	(void)!write(fd, "garbage!", 8);
	close(fd);
	ok(state_open(path, &lay, NULL, &st, &err) == 0 && (tc = cache_of(st)) != NULL,
	    "corrupt header: rebuilt, usable");
	token_cache_detach(tc);
	state_close(st);
}

/* A foreign file (world-writable, or a symlink) is replaced by a private regular one. */
static void
test_foreign_file(void)
{
	struct gw_error err = { GW_OK, 0, "" };
	struct stat sb;

	chmod(path, 0666);
	ok(state_open(path, &lay, NULL, &st, &err) == 0, "world-writable file: replaced");
	stat(path, &sb);
	is_int(sb.st_mode & 0777, 0600, "by a private one");
	state_close(st);
	unlink(path);
	symlink("/etc/passwd", path);
	ok(state_open(path, &lay, NULL, &st, &err) == 0, "a symlink is not followed: replaced");
	lstat(path, &sb);
	ok(S_ISREG(sb.st_mode), "by a regular file");
	state_close(st);
}

/* A private mapping (no file) works the same. */
static void
test_private(void)
{
	struct gw_error err = { GW_OK, 0, "" };

	ok(state_open(NULL, &lay, NULL, &st, &err) == 0 && (tc = cache_of(st)) != NULL,
	    "private mapping works the same");
	token_cache_detach(tc);
	state_close(st);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	secret_init();
	snprintf(path, sizeof(path), "%s/state", fixture_dir());
	cache_layout(&lay, 64);
	run_case(test_open);
	run_case(test_fill);
	run_case(test_exp_rechecked);
	run_case(test_negative);
	run_case(test_life_bound);
	run_case(test_overdue_claim);
	run_case(test_bounded);
	run_case(test_shared);
	run_case(test_robust_lock);
	token_cache_detach(tc);
	run_case(test_reopen);
	run_case(test_new_layout);
	run_case(test_corrupt_header);
	run_case(test_foreign_file);
	run_case(test_private);
	return done_testing();
}
