/* Unit tests: kept, the parked FastCGI connections (socket pairs stand in for them and
 * for the listening socket). */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kept.h"
#include "tap.h"

#define CAP	8

static struct kept k;

/* The peer of a connection mcpgate closed reads its end at once. */
static int
closed_by_peer(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };
	char c;

	return poll(&p, 1, 0) == 1 && read(fd, &c, 1) == 0;
}

/* Parked, a connection is no one's until its next request comes; then kept_wait gives
 * it (once) to the caller; the listening socket's readiness is told apart. */
static void
test_park_wait(int listen_end[2])
{
	int a[2], b[2], fd;
	char c = 'x';

	ok(socketpair(AF_UNIX, SOCK_STREAM, 0, a) == 0 && socketpair(AF_UNIX, SOCK_STREAM, 0, b) == 0, "socket pairs");
	kept_park(&k, a[0], 1000);
	kept_park(&k, b[0], 1000);
	is_int(k.n, 2, "two parked");
	ok(write(b[1], &c, 1) == 1, "b's next request comes");
	fd = kept_wait(&k, -1);
	is_int(fd, b[0], "kept_wait gives b, whose request came");
	is_int(k.n, 1, "b is no longer parked");
	ok(write(listen_end[1], &c, 1) == 1, "a connection on the listening socket");
	is_int(kept_wait(&k, -1), KEPT_LISTEN, "kept_wait says so");
	ok(read(listen_end[0], &c, 1) == 1, "(taken)");
	close(a[1]);
	fd = kept_wait(&k, -1);
	is_int(fd, a[0], "a closed by the server: a is given too (its reader sees the end)");
	is_int(k.n, 0, "none parked");
	is_int(kept_wait(&k, 10), KEPT_IDLE, "nothing to do within the time given: KEPT_IDLE");
	close(a[0]);
	close(b[0]);
	close(b[1]);
}

/* kept_expire closes those parked before the bound, and an event that comes for a
 * connection closed meanwhile gives nothing. */
static void
test_expire(void)
{
	int a[2], b[2];

	ok(socketpair(AF_UNIX, SOCK_STREAM, 0, a) == 0 && socketpair(AF_UNIX, SOCK_STREAM, 0, b) == 0, "socket pairs");
	kept_park(&k, a[0], 1000);
	kept_park(&k, b[0], 5000);
	is_int(kept_expire(&k, 2000), 1, "one parked before the bound: closed");
	ok(closed_by_peer(a[1]), "its peer reads the end");
	ok(!closed_by_peer(b[1]), "the other stays open");
	is_int(kept_expire(&k, 2000), 0, "nothing more to close");
	is_int(kept_expire(&k, 6000), 1, "the other, past its bound");
	ok(closed_by_peer(b[1]), "closed");
	close(a[1]);
	close(b[1]);
}

/* cap parked: one more is closed at once, and a slot that frees is used again. */
static void
test_full(void)
{
	int p[CAP + 2][2];
	int i, made = 0;
	char c = 'z';

	for (i = 0; i < CAP + 2; i++)
		made += socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p[i]) == 0;
	ok(made == CAP + 2, "%d socket pairs", CAP + 2);
	for (i = 0; i < CAP; i++)
		kept_park(&k, p[i][0], 1);
	is_int(k.n, CAP, "cap parked");
	kept_park(&k, p[CAP][0], 1);
	is_int(k.n, CAP, "one more is not");
	ok(closed_by_peer(p[CAP][1]), "but closed");
	ok(write(p[3][1], &c, 1) == 1, "one's next request comes");
	is_int(kept_wait(&k, -1), p[3][0], "it is taken");
	kept_park(&k, p[CAP + 1][0], 1);
	is_int(k.n, CAP, "its slot takes another");
	ok(!closed_by_peer(p[CAP + 1][1]), "which stays open");
	is_int(kept_expire(&k, 2), CAP, "all expire");
	close(p[3][0]);
	for (i = 0; i < CAP + 2; i++)
		close(p[i][1]);
}

int
main(int argc, char **argv)
{
	int l[2];

	tap_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, l) < 0 || kept_init(&k, l[0], CAP) < 0) {
		ok(0, "kept_init (errno %d)", errno);
		return done_testing();
	}
	ok(fcntl(l[0], F_GETFL) & O_NONBLOCK, "kept_init makes the listening socket non-blocking");
	run_case(test_park_wait, l);
	run_case(test_expire);
	run_case(test_full);
	kept_free(&k);
	close(l[1]);
	return done_testing();
}
