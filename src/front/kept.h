/* kept — FastCGI connections between two requests, parked so that no thread waits on
 * one (docs/ARCHITECTURE.md §1, "Threads and processes").
 *
 * A web server with FastCGI keep-alive (nginx `fastcgi_keep_conn on` + `keepalive`,
 * Apache `enablereuse=on`) keeps its connections open after an answer. A worker thread
 * that waited on such a connection for its next request would be lost to every other
 * connection meanwhile, and a pool larger than the threads would stall. Instead the
 * worker parks the connection here and waits, like every idle worker, for the first
 * thing to do: a new connection on the listening socket, or a parked connection whose
 * next request (or close) has arrived, which then becomes that worker's alone. One
 * epoll set per process holds the listening socket (EPOLLEXCLUSIVE: the processes of a
 * host share it) and the parked connections (EPOLLONESHOT: one worker takes each).
 * A connection parked longer than the caller's bound is closed by kept_expire. */
#ifndef GW_KEPT_H
#define GW_KEPT_H

#include <pthread.h>
#include <stdint.h>

#define KEPT_MAX	1024	/* parked at once by default; one more is closed at once */
#define KEPT_LISTEN	(-2)	/* kept_wait: the listening socket has a connection */
#define KEPT_IDLE	(-3)	/* kept_wait: nothing came within the time given */

struct kept_slot {
	int fd;			/* -1: free */
	unsigned gen;		/* told apart from the slot's earlier connections */
	int64_t since_us;	/* parked when */
};

struct kept {
	int ep;			/* the epoll set */
	int listen_fd;
	long n;			/* slots in use */
	long cap;		/* slots */
	pthread_mutex_t mu;	/* slot, n and the parked part of the set change under it */
	struct kept_slot *slot;
};

/* The set, with listen_fd in it, made non-blocking (a worker woken for a connection
 * another took must not block in accept), and room for cap parked connections. 0, or -1
 * with errno. */
int kept_init(struct kept *k, int listen_fd, long cap);
/* Closes every parked connection and the set. */
void kept_free(struct kept *k);
/* Waits until there is something to do, at most timeout_ms (-1: no bound): KEPT_LISTEN
 * (accept on the listening socket: it may find nothing, EAGAIN), a parked connection's
 * descriptor, now the caller's, KEPT_IDLE when the time ran out, or -1 (a signal
 * interrupted the wait, or the event was for a connection closed meanwhile). */
int kept_wait(struct kept *k, int timeout_ms);
/* Parks connection fd (now_us: when); closes it when cap are parked already or it
 * cannot be watched. */
void kept_park(struct kept *k, int fd, int64_t now_us);
/* Closes the connections parked before before_us: how many. */
long kept_expire(struct kept *k, int64_t before_us);

#endif
