/* Unit tests: spare, the workers of stopped extra threads kept for the next (workers
 * told apart by a marker in their first slot; nothing is made or ended here). */
#include "autoconf.h"

#include <string.h>

#include "spare.h"
#include "tap.h"

#define MS	1000LL	/* µs */

static char marker[SPARE_MAX + 4];

static struct worker
worker_of(int i)
{
	struct worker w;

	memset(&w, 0, sizeof(w));
	w.slot[0] = &marker[i];
	return w;
}

static int
is_worker(const struct worker *w, int i)
{
	return w->slot[0] == &marker[i];
}

static int
zeroed(const struct worker *w)
{
	static const struct worker none;

	return memcmp(w, &none, sizeof(none)) == 0;
}

/* A stopped thread's worker is the next thread's, the newest first; taken once. */
static void
test_put_take(void)
{
	struct spares s;
	struct worker w, old[SPARE_MAX];
	long n_old = -1;

	memset(&s, 0, sizeof(s));
	ok(spare_take(&s, &w) == 0, "none kept: nothing to take");
	w = worker_of(0);
	ok(spare_put(&s, &w, 1000 * MS, old, &n_old) == 1, "a worker kept");
	ok(zeroed(&w), "moved: the thread's copy is zeroed (it frees nothing)");
	is_int(n_old, 0, "none handed back");
	w = worker_of(1);
	ok(spare_put(&s, &w, 1001 * MS, old, &n_old) == 1, "another kept");
	ok(spare_take(&s, &w) == 1 && is_worker(&w, 1), "the newest is taken first");
	ok(spare_take(&s, &w) == 1 && is_worker(&w, 0), "then the other");
	ok(spare_take(&s, &w) == 0, "then none");
	is_int(s.n, 0, "empty");
}

/* SPARE_MAX kept: one more stays the caller's, untouched. */
static void
test_full(void)
{
	struct spares s;
	struct worker w, old[SPARE_MAX];
	long n_old;
	int i, kept = 0;

	memset(&s, 0, sizeof(s));
	for (i = 0; i < SPARE_MAX; i++) {
		w = worker_of(i);
		kept += spare_put(&s, &w, 1000 * MS, old, &n_old);
	}
	is_int(kept, SPARE_MAX, "SPARE_MAX kept");
	w = worker_of(SPARE_MAX);
	ok(spare_put(&s, &w, 1000 * MS, old, &n_old) == 0, "one more is not");
	ok(is_worker(&w, SPARE_MAX), "and stays the caller's, to end");
	is_int(n_old, 0, "nothing handed back");
	ok(spare_take(&s, &w) == 1 && is_worker(&w, SPARE_MAX - 1), "the newest kept is taken");
}

/* Spares kept longer than SPARE_KEEP_MS are handed back at the next put, oldest first. */
static void
test_expire(void)
{
	struct spares s;
	struct worker w, old[SPARE_MAX];
	long n_old;
	int i;

	memset(&s, 0, sizeof(s));
	for (i = 0; i < 3; i++) {
		w = worker_of(i);
		spare_put(&s, &w, (1000 + i * 1000) * MS, old, &n_old);	/* at 1, 2 and 3 s */
	}
	w = worker_of(3);
	/* at 2 s + SPARE_KEEP_MS + 1 ms: those of 1 and 2 s are too old, that of 3 s is not */
	ok(spare_put(&s, &w, (2000 + SPARE_KEEP_MS + 1) * MS, old, &n_old) == 1, "a new one kept");
	is_int(n_old, 2, "the two kept too long handed back");
	ok(n_old == 2 && is_worker(&old[0], 0) && is_worker(&old[1], 1), "the oldest first");
	is_int(s.n, 2, "two kept");
	ok(spare_take(&s, &w) == 1 && is_worker(&w, 3), "the newest");
	ok(spare_take(&s, &w) == 1 && is_worker(&w, 2), "then the one not too old");
	ok(zeroed(&s.w[0]) && zeroed(&s.w[1]) && zeroed(&s.w[2]), "no copy left behind");
	/* full of old ones: they make room */
	for (i = 0; i < SPARE_MAX; i++) {
		w = worker_of(i);
		spare_put(&s, &w, 1000 * MS, old, &n_old);
	}
	w = worker_of(SPARE_MAX);
	ok(spare_put(&s, &w, (1000 + SPARE_KEEP_MS + 1) * MS, old, &n_old) == 1, "full of old ones: kept");
	is_int(n_old, SPARE_MAX, "every old one handed back");
	is_int(s.n, 1, "the new one alone");
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	run_case(test_put_take);
	run_case(test_full);
	run_case(test_expire);
	return done_testing();
}
