/* front_crew — the FastCGI worker threads and their connections: workers of them
 * always, and more, up to max, while every one is busy and a call is held by an upstream (on_upstream_wait): for
 * UPSTREAM_SLOW_MS while the machine has CPU to spare, or for HELD_MS whatever the
 * load. A thread held by a slow upstream is busy without working, and the next request
 * must not queue behind it; but where the processors are what every request waits for
 * (a saturated machine, where a local upstream's answers come late because it waits
 * for them too), more threads only add switches between them. An extra thread stops
 * once it is not needed: done with a request while another thread is idle, or after
 * EXTRA_IDLE_MS without one. Slots 0 .. base - 1 are the workers, the others the
 * extras'.
 *
 * Each thread owns an FCGX_Request and takes its connections itself, a new one from the
 * listening socket or one the web server kept from an earlier request (kept.h: no
 * thread waits on a kept connection), and hands each to libfcgi, which reads the
 * params; then the body is read whole (front_fcgi.h) and the request served. Where each
 * connection is (its state, under the thread's mu) is what the watchdog (front_watch.h)
 * and the shutdown look at. */
#ifndef GW_FRONT_CREW_H
#define GW_FRONT_CREW_H

#include <pthread.h>
#include <stdint.h>

#include "gateway.h"
#include "kept.h"
#include "spare.h"

#define LISTEN_FD		0	/* the socket spawn-fcgi or systemd hands over (FCGI_LISTENSOCK_FILENO) */

/* Where a worker's connection is, for the watchdog and crew_stop. */
enum conn_state {
	CONN_NONE,	/* none: the thread is in accept(2) */
	CONN_READING,	/* its params and body are arriving: client-timeout-ms from accept */
	CONN_SERVING,	/* its request is being answered: no bound (upstream calls, streams) */
	CONN_CLOSING,	/* answered; libfcgi waits for the server to close: client-timeout-ms */
};

struct crew;

struct thread {
	pthread_t thread;
	struct crew *crew;
	struct worker w;
	int done;	/* __atomic */
	int started;	/* (crew->mu) the thread runs or ran: it is joined before its slot is reused */
	int extra;	/* beyond workers: it stops after EXTRA_IDLE_MS without a request */
	int freed;	/* its worker was freed by the thread itself (an extra that stopped) */
	/* Under mu: what the watchdog and stop_workers look at. libfcgi closes the
	 * connection's descriptor itself (a protocol error in its params, FCGX_Finish_r),
	 * and another thread may get that number at once: so the watchdog shuts down a
	 * duplicate of it (fd), which the worker closes only under mu. */
	pthread_mutex_t mu;
	int state;		/* enum conn_state */
	int fd;			/* the duplicate, or -1 */
	int64_t since_us;	/* when the state began */
	int cut;		/* the watchdog shut the connection down */
};

struct crew {
	pthread_mutex_t mu;
	struct gateway *gw;
	struct thread *ws;	/* max slots */
	long base, max;
	long running;		/* threads started and not stopped */
	long idle;		/* (__atomic) of them, waiting for something to do */
	int spare;		/* (__atomic) the machine had CPU to spare in the last tick */
	int stopping;		/* (__atomic) set once, by crew_stop */
	unsigned long served;	/* (__atomic) requests begun: the main thread sees idleness */
	struct kept kept;	/* the listening socket and the connections between requests */
	struct spares spares;	/* (mu) the workers of stopped extra threads, for the next */
};

/* c's slots for max threads and its kept connections of LISTEN_FD, then workers threads
 * started: 0, or -1 (logged; crew_stop and crew_free still follow). The signal mask the
 * threads inherit is the caller's. */
int crew_start(struct crew *c, struct gateway *gw, long workers, long max);
/* Once a tick: whether the machine's processors had time to spare since the last one
 * (prev: the last totals). */
void crew_cpu_tick(struct crew *c, unsigned long long prev[2]);
/* Stops the threads: those without a request in hand are woken (SIGUSR1 interrupts
 * their wait and reads), those answering one finish it, within a grace period in all. */
void crew_stop(struct crew *c);
/* After crew_stop: each stopped thread's sessions ended and worker freed; 1 when a
 * thread still runs (its memory, the slots and the kept connections stay until exit),
 * else 0 with everything freed. */
int crew_free(struct crew *c);

#endif
