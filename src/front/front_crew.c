/* front_crew — the FastCGI worker threads and their connections (front_crew.h). */
#include "autoconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <fcgiapp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "front_crew.h"
#include "front_fcgi.h"
#include "log.h"
#include "router.h"

#define SHUTDOWN_GRACE_MS	30000
#define BODY_MAX_DEFAULT	(1 << 20)	/* the body read before serving, without a configuration */
#define EXTRA_IDLE_MS	10000
#define HELD_MS		1000
#define SPARE_MIN_PERCENT	10	/* idle processor time in the last tick that is "to spare" */

/* Whether the machine's processors were idle SPARE_MIN_PERCENT of the time since the
 * last tick (/proc/stat; unreadable: taken as spare). prev holds the last totals: idle
 * (with iowait) and all. */
void
crew_cpu_tick(struct crew *c, unsigned long long prev[2])
{
	unsigned long long v, idle = 0, all = 0;
	char line[512], *p, *end;
	ssize_t n;
	int fd, i;

	if ((fd = open("/proc/stat", O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 4 || memcmp(line, "cpu ", 4) != 0)
		return;
	line[n] = '\0';
	/* cpu  user nice system idle iowait irq softirq steal ... */
	for (p = line + 4, i = 0; i < 8; i++, p = end) {
		v = strtoull(p, &end, 10);
		if (end == p)
			return;
		all += v;
		if (i == 3 || i == 4)
			idle += v;
	}
	if (prev[1] && all > prev[1])
		__atomic_store_n(&c->spare, (idle - prev[0]) * 100 >= (all - prev[1]) * SPARE_MIN_PERCENT,
		    __ATOMIC_RELAXED);
	prev[0] = idle;
	prev[1] = all;
}

static void
conn_state(struct thread *t, int state)
{
	pthread_mutex_lock(&t->mu);
	t->state = state;
	t->since_us = clock_mono_us();
	pthread_mutex_unlock(&t->mu);
}

/* The connection is no longer the thread's (libfcgi closed it, or it is parked): the
 * watchdog's duplicate closed, nothing to watch. */
static void
conn_gone(struct thread *t)
{
	pthread_mutex_lock(&t->mu);
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	t->cut = 0;
	t->state = CONN_NONE;
	pthread_mutex_unlock(&t->mu);
}

/* A TCP peer in FCGI_WEB_SERVER_ADDRS (comma-separated IPv4 addresses), as libfcgi's
 * own accept checks it: no list admits every peer. */
static int
peer_allowed(const struct sockaddr_storage *sa)
{
	const char *list = getenv("FCGI_WEB_SERVER_ADDRS");
	char copy[1024], *cur, *next;

	if (list == NULL || *list == '\0' || sa->ss_family != AF_INET)
		return 1;	/* libfcgi checks IPv4 peers only */
	if (strlen(list) >= sizeof(copy))
		return 0;
	memcpy(copy, list, strlen(list) + 1);
	for (cur = copy; cur; cur = next) {
		if ((next = strchr(cur, ',')) != NULL)
			*next++ = '\0';
		if (inet_addr(cur) == ((const struct sockaddr_in *)sa)->sin_addr.s_addr)
			return 1;
	}
	return 0;
}

/* Connection fd is the thread's: the watchdog's duplicate made and the clock of
 * READING started. fd, or -1 (closed: no duplicate to be had). */
static int
conn_watch(struct thread *t, int fd)
{
	int copy;

	if ((copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		log_warn(NULL, "fastcgi: cannot duplicate a connection (errno %d)", errno);
		close(fd);
		usleep(100 * 1000);
		return -1;
	}
	pthread_mutex_lock(&t->mu);
	t->fd = copy;
	t->cut = 0;
	t->state = CONN_READING;
	t->since_us = clock_mono_us();
	pthread_mutex_unlock(&t->mu);
	return fd;
}

/* The next connection of fd 0 (non-blocking: another worker or process may have taken
 * it first): the descriptor, or -1 (none, interrupted, refused or failed). */
static int
conn_accept(struct thread *t)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	int fd, one = 1;

	if ((fd = accept4(LISTEN_FD, (struct sockaddr *)&sa, &len, SOCK_CLOEXEC)) < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED &&
		    !__atomic_load_n(&t->crew->stopping, __ATOMIC_ACQUIRE)) {
			log_warn(NULL, "fastcgi: accept failed (errno %d)", errno);
			usleep(100 * 1000);	/* e.g. EMFILE: do not spin */
		}
		return -1;
	}
	if (sa.ss_family == AF_INET || sa.ss_family == AF_INET6) {
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));	/* as libfcgi does */
		if (!peer_allowed(&sa)) {
			close(fd);
			return -1;
		}
	}
	return conn_watch(t, fd);
}

/* The next connection with a request to read: a new one, or a kept one whose next
 * request (or close) has come. -1: nothing this time. */
static int
conn_next(struct thread *t, int timeout_ms)
{
	int fd = kept_wait(&t->crew->kept, timeout_ms);

	if (fd == KEPT_LISTEN)
		return conn_accept(t);
	if (fd == KEPT_IDLE)
		return KEPT_IDLE;
	return fd < 0 ? -1 : conn_watch(t, fd);
}

/* A connection the server keeps after an answer: parked until its next request, and no
 * longer the thread's. */
static void
conn_park(struct thread *t, FCGX_Request *fr)
{
	conn_gone(t);
	kept_park(&t->crew->kept, fr->ipcFd, clock_mono_us());
	fr->ipcFd = -1;
}

/* One request: the body read whole (still under the watchdog's bound), then answered
 * with no bound but the gateway's own. */
static void
serve(struct thread *t, FCGX_Request *fr)
{
	struct fcgi_params params;
	struct body_copy bc;
	struct request req;
	struct config *cfg;
	struct sink out;
	long max;
	int cut;

	__atomic_add_fetch(&t->crew->served, 1, __ATOMIC_RELAXED);
	fcgi_params_init(&params, fr);
	if (request_init(&req, fcgi_param, &params, NULL, clock_mono_us(), clock_wall()) < 0) {
		log_err(NULL, "fastcgi: out of memory");
		return;
	}
	cfg = gateway_config(t->w.gw);
	max = cfg ? cfg->max_body : BODY_MAX_DEFAULT;
	config_unref(cfg);
	if (fcgi_body_read(fr->in, &req, max, &bc) < 0) {
		pthread_mutex_lock(&t->mu);
		cut = t->cut;
		pthread_mutex_unlock(&t->mu);
		if (!cut)	/* (the watchdog said why it cut it) */
			log_info(req.id, "fastcgi: the connection failed while the body arrived; not answered");
		goto out;
	}
	conn_state(t, CONN_SERVING);
	fcgi_body_source(&bc, &req.body);
	fcgi_sink_init(&out, fr);
	router_serve(&t->w, &req, &out);
out:
	request_free(&req);
	buf_free(&bc.b);
}

/* After the answer: FCGX_Finish_r ends the request and closes the connection, unless
 * the server keeps it: then it is parked (kept.h). When the server's stdin was read to
 * its end, nothing can come that a close would refuse, so libfcgi need not wait for the
 * server to close first. */
static void
finish(struct thread *t, FCGX_Request *fr)
{
	conn_state(t, CONN_CLOSING);
	if (!fr->keepConnection && fr->in && FCGX_HasSeenEOF(fr->in))
		FCGX_Detach(fr);	/* its close is then a plain close(2) */
	FCGX_Finish_r(fr);
	if (fr->ipcFd >= 0)
		conn_park(t, fr);
	else
		conn_gone(t);
}

/* A thread that has something to do (busy = 1) or is done with it (0). */
static void
crew_busy(struct crew *c, int busy)
{
	__atomic_add_fetch(&c->idle, busy ? -1 : 1, __ATOMIC_RELAXED);
}

/* A worker no thread will use again: its upstream sessions ended, its memory freed. */
static void
worker_done(struct worker *w)
{
	worker_end_sessions(w);
	worker_free(w);
}

/* An extra thread stops, idle for EXTRA_IDLE_MS or done with a request while another
 * thread is idle: its worker kept for the next extra thread (spare.h), sessions,
 * connections and all, else (SPARE_MAX kept, or the crew stopping) ended; and the
 * spares kept too long ended. */
static void
retire(struct thread *t)
{
	struct worker old[SPARE_MAX];
	long i, n_old = 0;
	int kept = 0;

	pthread_mutex_lock(&t->crew->mu);
	t->crew->running--;
	__atomic_sub_fetch(&t->crew->idle, 1, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&t->crew->stopping, __ATOMIC_ACQUIRE))
		kept = spare_put(&t->crew->spares, &t->w, clock_mono_us(), old, &n_old);
	pthread_mutex_unlock(&t->crew->mu);
	if (!kept)
		worker_done(&t->w);
	for (i = 0; i < n_old; i++)
		worker_done(&old[i]);
	t->freed = 1;
	log_debug(NULL, "fastcgi: an extra worker thread stopped (its worker %s)", kept ? "kept" : "ended");
}

static void *
worker_main(void *arg)
{
	struct thread *t = arg;
	FCGX_Request fr;
	sigset_t wake;
	int fd;

	sigemptyset(&wake);
	sigaddset(&wake, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	/* libfcgi gets no listening socket: the front accepts (conn_accept) or takes a kept
	 * connection back (conn_next), so that it knows the connection from the start, and
	 * a connection libfcgi gives up on ends FCGX_Accept_r rather than a wait in an
	 * accept of its own. The thread counts as idle (t->crew->idle) from its start. */
	FCGX_InitRequest(&fr, -1, 0);
	while (!__atomic_load_n(&t->crew->stopping, __ATOMIC_ACQUIRE)) {
		if (fr.ipcFd < 0) {
			if ((fd = conn_next(t, t->extra ? EXTRA_IDLE_MS : -1)) == KEPT_IDLE) {
				retire(t);
				break;
			}
			if (fd < 0)
				continue;
			fr.ipcFd = fd;
		}
		crew_busy(t->crew, 1);
		/* FCGX_Accept_r first finishes the previous request: it must not close the
		 * descriptor it is now given. The request's own flags then decide. */
		fr.keepConnection = 1;
		if (FCGX_Accept_r(&fr) < 0) {	/* libfcgi closed the connection */
			conn_gone(t);
			crew_busy(t->crew, 0);
			continue;
		}
		serve(t, &fr);
		finish(t, &fr);
		/* An extra thread done with its request while another waits for work is not
		 * needed any more (the idle ones take the requests in turn: a thread left to
		 * idle out would rarely get the chance). */
		if (t->extra && __atomic_load_n(&t->crew->idle, __ATOMIC_RELAXED) > 0) {
			crew_busy(t->crew, 0);
			retire(t);
			break;
		}
		crew_busy(t->crew, 0);
	}
	if (fr.ipcFd >= 0)
		FCGX_Detach(&fr);	/* a kept connection: closed without waiting */
	FCGX_Free(&fr, 1);
	conn_gone(t);
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Starts the thread of slot t (t->crew->mu held), an extra one or a worker: 0 or -1. */
static void on_upstream_wait(void *ctx, int64_t waited_ms);

static int
start_thread(struct thread *t, int extra)
{
	if (t->started) {	/* an extra that stopped: reclaimed before its slot is used again */
		pthread_join(t->thread, NULL);
		t->started = 0;
	}
	/* An extra thread takes over a stopped one's worker when one is kept. */
	if ((!extra || !spare_take(&t->crew->spares, &t->w)) && worker_init(&t->w, t->crew->gw) < 0) {
		worker_free(&t->w);
		return -1;
	}
	upstream_pool_on_wait(worker_mcp(&t->w)->ups, on_upstream_wait, t->crew);
	t->done = 0;
	t->extra = extra;
	t->freed = 0;
	if (pthread_create(&t->thread, NULL, worker_main, t) != 0) {
		worker_free(&t->w);	/* (a spare's sessions left to expire: not ended under mu) */
		return -1;
	}
	t->started = 1;
	t->crew->running++;
	__atomic_add_fetch(&t->crew->idle, 1, __ATOMIC_RELAXED);
	return 0;
}

/* A worker's call is held by an upstream: when no thread is left idle, another starts
 * (up to max), so that the next request is taken meanwhile. */
static void
on_upstream_wait(void *ctx, int64_t waited_ms)
{
	struct crew *c = ctx;
	long i;

	if (waited_ms < HELD_MS && !__atomic_load_n(&c->spare, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&c->mu);
	if (__atomic_load_n(&c->idle, __ATOMIC_RELAXED) <= 0 && c->running < c->max &&
	    !__atomic_load_n(&c->stopping, __ATOMIC_ACQUIRE)) {
		for (i = c->base; i < c->max; i++)
			if (!c->ws[i].started || __atomic_load_n(&c->ws[i].done, __ATOMIC_ACQUIRE))
				break;
		if (i < c->max && start_thread(&c->ws[i], 1) == 0)
			log_debug(NULL, "fastcgi: every worker thread busy, one waiting on an upstream: "
			    "thread %ld of at most %ld started", c->running, c->max);
	}
	pthread_mutex_unlock(&c->mu);
}

/* Stops the threads: those without a request in hand are woken (SIGUSR1 interrupts
 * their wait and reads), those answering one finish it, within SHUTDOWN_GRACE_MS in all.
 * No thread starts once stopping is set (under t->crew->mu). */
void
crew_stop(struct crew *c)
{
	struct timespec pause = { 0, 50 * 1000 * 1000 };
	struct thread *ws = c->ws;
	long i, waited = 0;

	pthread_mutex_lock(&c->mu);
	__atomic_store_n(&c->stopping, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&c->mu);
	FCGX_ShutdownPending();
	for (i = 0; ws && i < c->max; i++) {
		if (!ws[i].started)
			continue;
		while (!__atomic_load_n(&ws[i].done, __ATOMIC_ACQUIRE) && waited < SHUTDOWN_GRACE_MS) {
			/* Under mu: a thread that has begun answering is never interrupted. */
			pthread_mutex_lock(&ws[i].mu);
			if (ws[i].state != CONN_SERVING)
				pthread_kill(ws[i].thread, SIGUSR1);
			pthread_mutex_unlock(&ws[i].mu);
			nanosleep(&pause, NULL);
			waited += 50;
		}
		if (__atomic_load_n(&ws[i].done, __ATOMIC_ACQUIRE))
			pthread_join(ws[i].thread, NULL);
		else
			pthread_detach(ws[i].thread);
	}
	if (waited >= SHUTDOWN_GRACE_MS)
		log_warn(NULL, "fastcgi: stopped with requests still running");
}


int
crew_start(struct crew *c, struct gateway *gw, long workers, long max)
{
	long i;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->mu, NULL);
	c->spare = 1;
	c->gw = gw;
	c->base = workers;
	c->max = max;
	if (kept_init(&c->kept, LISTEN_FD, KEPT_MAX) < 0) {
		log_fatal("fastcgi: cannot watch the listening socket (errno %d)", errno);
		return -1;
	}
	if ((c->ws = calloc((size_t)max, sizeof(*c->ws))) == NULL) {
		log_fatal("fastcgi: out of memory");
		return -1;
	}
	for (i = 0; i < max; i++) {
		pthread_mutex_init(&c->ws[i].mu, NULL);
		c->ws[i].fd = -1;
		c->ws[i].crew = c;
	}
	pthread_mutex_lock(&c->mu);
	for (i = 0; i < workers && rc == 0; i++)
		if (start_thread(&c->ws[i], 0) < 0) {
			log_fatal("fastcgi: cannot start worker %ld", i);
			rc = -1;
		}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int
crew_free(struct crew *c)
{
	struct thread *ws = c->ws;
	struct worker w;
	long i;
	int leak = 0, got;

	do {
		pthread_mutex_lock(&c->mu);
		got = spare_take(&c->spares, &w);
		pthread_mutex_unlock(&c->mu);
		if (got)
			worker_done(&w);
	} while (got);
	for (i = 0; ws && i < c->max; i++)
		if (!ws[i].started || __atomic_load_n(&ws[i].done, __ATOMIC_ACQUIRE)) {
			if (ws[i].started && !ws[i].freed)
				worker_done(&ws[i].w);
			else if (!ws[i].freed)
				worker_free(&ws[i].w);
			pthread_mutex_destroy(&ws[i].mu);
		} else
			leak = 1;	/* still running: its memory stays until exit */
	if (leak)	/* (a thread still running may yet park its connection) */
		return 1;
	free(ws);
	c->ws = NULL;
	kept_free(&c->kept);
	return 0;
}
