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
#include "state.h"
#include "token_cache.h"
#include "fixture.h"
#include "tap.h"

static void
key_of(const char *token, unsigned char key[TC_KEY_BYTES])
{
	static const unsigned char k[32] = { 1, 2, 3 };

	secret_keyed_digest(k, token, strlen(token), key);
}

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

static struct token_cache *
attach(struct state *st)
{
	size_t size;
	void *region = state_region(st, GW_REGION_CACHE, &size);

	return token_cache_attach(region, size);
}

static void
layout(struct state_layout *lay, uint32_t entries)
{
	memset(lay, 0, sizeof(*lay));
	lay->region[GW_REGION_ASMETA].size = introspect_asmeta_region_size();
	lay->region[GW_REGION_ASMETA].init = introspect_asmeta_region_init;
	lay->region[GW_REGION_CACHE].size = token_cache_region_size(entries);
	lay->region[GW_REGION_CACHE].init = token_cache_region_init;
}

int
main(void)
{
	char path[256], reason[TC_REASON_MAX];
	struct gw_error err = { GW_OK, 0, "" };
	struct state_layout lay;
	struct state *st, *st2;
	struct token_cache *tc;
	struct claims got, c;
	unsigned char a[TC_KEY_BYTES], b[TC_KEY_BYTES];
	int64_t now = 1700000000000LL;	/* ms */
	int i;

	secret_init();
	snprintf(path, sizeof(path), "%s/state", fixture_dir());
	layout(&lay, 64);
	ok(state_open(path, &lay, NULL, &st, &err) == 0, "state file created: %s", err.detail);
	tc = attach(st);
	ok(tc != NULL, "cache attached");
	key_of("token-a", a);
	key_of("token-b", b);

	is_int(token_cache_lookup(tc, a, now, 3000, &got, reason, sizeof(reason)), TC_MISS, "first lookup: miss, claimed");
	is_int(token_cache_lookup(tc, a, now + 10, 3000, &got, reason, sizeof(reason)), TC_BUSY, "a concurrent lookup waits");
	c = claims("alice", now / 1000 + 100);
	token_cache_fill(tc, a, now, &c, now + 60000);
	is_int(token_cache_lookup(tc, a, now + 1000, 3000, &got, reason, sizeof(reason)), TC_HIT, "filled: hit");
	is_str(got.subject, "alice", "claims come back");
	is_int(token_cache_lookup(tc, a, now + 60000, 3000, &got, reason, sizeof(reason)), TC_MISS, "after its TTL: miss again");
	token_cache_release(tc, a);
	is_int(token_cache_lookup(tc, a, now + 60001, 3000, &got, reason, sizeof(reason)), TC_MISS, "a released claim can be taken");
	token_cache_release(tc, a);

	/* exp is re-checked on every hit, even inside the cache TTL. */
	is_int(token_cache_lookup(tc, b, now, 3000, &got, reason, sizeof(reason)), TC_MISS, "b: miss");
	c = claims("bob", now / 1000 + 5);
	token_cache_fill(tc, b, now, &c, now + 300000);
	is_int(token_cache_lookup(tc, b, now + 4000, 3000, &got, reason, sizeof(reason)), TC_HIT, "b: hit before exp");
	is_int(token_cache_lookup(tc, b, now + 5000, 3000, &got, reason, sizeof(reason)), TC_NEGATIVE, "b: expired while cached → negative");
	is_str(reason, "token expired", "reason");

	/* Negative entries live negative-ttl. */
	is_int(token_cache_lookup(tc, a, now, 3000, &got, reason, sizeof(reason)), TC_MISS, "a: miss");
	token_cache_fill_negative(tc, a, now, "token is not active", now + 10000);
	is_int(token_cache_lookup(tc, a, now + 9999, 3000, &got, reason, sizeof(reason)), TC_NEGATIVE, "negative within its TTL");
	is_str(reason, "token is not active", "negative reason");
	is_int(token_cache_lookup(tc, a, now + 10000, 3000, &got, reason, sizeof(reason)), TC_MISS, "negative expires");
	token_cache_release(tc, a);

	/* A pending claim past its deadline is taken over. */
	is_int(token_cache_lookup(tc, a, now, 3000, &got, reason, sizeof(reason)), TC_MISS, "claim");
	is_int(token_cache_lookup(tc, a, now + 3001, 3000, &got, reason, sizeof(reason)), TC_MISS, "overdue claim taken over");
	token_cache_release(tc, a);

	/* Bounded: many tokens evict, the count never exceeds the capacity. */
	for (i = 0; i < 1000; i++) {
		char t[32];
		unsigned char k[TC_KEY_BYTES];

		snprintf(t, sizeof(t), "many-%d", i);
		key_of(t, k);
		if (token_cache_lookup(tc, k, now, 3000, &got, reason, sizeof(reason)) == TC_MISS) {
			c = claims(t, now / 1000 + 1000);
			token_cache_fill(tc, k, now, &c, now + 60000 + i);
		}
	}
	ok(token_cache_count(tc, now) <= 64, "1000 tokens into 64 slots: bounded (%zu)", token_cache_count(tc, now));
	ok(token_cache_count(tc, now) >= 32, "and well used");

	/* Shared between processes: a child sees what the parent stored, and a child killed
	 * while holding a claim blocks nobody. */
	key_of("shared", a);
	token_cache_lookup(tc, a, now, 3000, &got, reason, sizeof(reason));
	c = claims("carol", now / 1000 + 100);
	token_cache_fill(tc, a, now, &c, now + 60000);
	{
		pid_t pid = fork();

		if (pid == 0) {
			struct state *cs;
			struct token_cache *ctc;
			struct claims cg;
			char r[TC_REASON_MAX];
			unsigned char k[TC_KEY_BYTES];
			int okc;

			if (state_open(path, &lay, NULL, &cs, &err) < 0)
				_exit(2);
			ctc = attach(cs);
			okc = token_cache_lookup(ctc, a, now + 1, 3000, &cg, r, sizeof(r)) == TC_HIT &&
			    strcmp(cg.subject, "carol") == 0;
			key_of("orphan", k);
			token_cache_lookup(ctc, k, now, 60000, &cg, r, sizeof(r));	/* claim, then die */
			_exit(okc ? 0 : 1);
		}
		int ws;
		waitpid(pid, &ws, 0);
		ok(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "another process reads the shared entry");
		key_of("orphan", b);
		is_int(token_cache_lookup(tc, b, now + 5, 3000, &got, reason, sizeof(reason)), TC_MISS,
		    "a dead process's claim does not block (owner gone)");
		token_cache_release(tc, b);
	}
	/* A process killed while holding a stripe lock: the robust mutex recovers. */
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
	token_cache_detach(tc);

	/* Reopen: same file, same keys. */
	ok(state_open(path, &lay, NULL, &st2, &err) == 0, "reopened");
	ok(memcmp(state_digest_key(st), state_digest_key(st2), STATE_KEY_BYTES) == 0, "same digest key");
	state_close(st2);

	/* A different layout rebuilds; a corrupt header rebuilds; a foreign file is replaced. */
	layout(&lay, 128);
	ok(state_open(path, &lay, NULL, &st2, &err) == 0 && state_stale(st) && !state_stale(st2), "new layout: file rebuilt");
	ok(memcmp(state_digest_key(st), state_digest_key(st2), STATE_KEY_BYTES) != 0, "with fresh keys");
	state_close(st2);
	state_close(st);
	{
		int fd = open(path, O_RDWR);
		(void)!write(fd, "garbage!", 8);
		close(fd);
	}
	ok(state_open(path, &lay, NULL, &st, &err) == 0 && (tc = attach(st)) != NULL,
	    "corrupt header: rebuilt, usable");
	token_cache_detach(tc);
	state_close(st);
	chmod(path, 0666);
	ok(state_open(path, &lay, NULL, &st, &err) == 0, "world-writable file: replaced");
	{
		struct stat sb;
		stat(path, &sb);
		is_int(sb.st_mode & 0777, 0600, "by a private one");
	}
	state_close(st);
	unlink(path);
	symlink("/etc/passwd", path);
	ok(state_open(path, &lay, NULL, &st, &err) == 0, "a symlink is not followed: replaced");
	{
		struct stat sb;
		lstat(path, &sb);
		ok(S_ISREG(sb.st_mode), "by a regular file");
	}
	state_close(st);
	ok(state_open(NULL, &lay, NULL, &st, &err) == 0 && (tc = attach(st)) != NULL,
	    "private mapping works the same");
	token_cache_detach(tc);
	state_close(st);
	return done_testing();
}
