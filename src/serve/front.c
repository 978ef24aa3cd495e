/* front — CGI and FastCGI (libfcgi) transport. Worker threads (workers of them, more
 * while calls are held by upstreams: crew below) each own an
 * FCGX_Request; they take their connections themselves, a new one from the listening
 * socket or one the web server kept from an earlier request (kept.h: no thread waits on
 * a kept connection), and hand each to libfcgi, which reads the params; the front then
 * reads the body whole, and a watchdog thread shuts down a connection that takes longer
 * than client-timeout-ms to deliver its request (or lingers before its close), never one
 * whose answer is being made, and closes a kept one idle for as long. The main thread
 * only waits for signals and checks the config once a second. Shutdown: stop accepting,
 * wake the threads that are not answering a request with SIGUSR1, let busy threads
 * finish their request (bounded), return to main. Longer than most files here: the
 * worker threads, the watchdog and the signal thread share one set of connection states
 * and one shutdown. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <fastcgi.h>
#include <fcgiapp.h>
#if defined(HAVE_MALLOC_TRIM) || defined(HAVE_MALLOPT)
#include <malloc.h>
#endif
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "front.h"
#include "kept.h"
#include "log.h"
#include "request.h"
#include "router.h"
#include "sink.h"

#define SHUTDOWN_GRACE_MS	30000
#define DRAIN_MAX		(64 << 20)	/* unread CGI body discarded before exiting */
#define CGI_READ_TIMEOUT_MS	5000	/* a CGI body that stops arriving */
#define LISTEN_FD		0	/* the socket spawn-fcgi or systemd hands over (FCGI_LISTENSOCK_FILENO) */
#define BODY_MAX_DEFAULT	(1 << 20)	/* the body read before serving, without a configuration */
#define CLIENT_TIMEOUT_DEFAULT_MS	10000	/* client-timeout-ms, without a configuration */
#define WATCH_PERIOD_MAX_MS	1000	/* the watchdog looks this often at most... */
#define WATCH_PERIOD_MIN_MS	20	/* ...and at least: client-timeout-ms / 8 in between */

static int stopping;	/* read with __atomic: set once by the main thread */
static struct kept kept;	/* the listening socket and the connections between requests */
static unsigned long served;	/* requests begun (__atomic): the main thread sees idleness */

static void
on_wake(int sig)
{
	(void)sig;	/* only interrupts accept(2) */
}

int
front_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_wake;	/* no SA_RESTART: accept returns EINTR */
	if (sigaction(SIGUSR1, &sa, NULL) < 0)
		return -1;
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL) < 0)
		return -1;
	return FCGX_Init() == 0 ? 0 : -1;
}

int
front_is_fastcgi(void)
{
	return !FCGX_IsCGI();
}

/* --- CGI ------------------------------------------------------------------ */

static const char *
env_param(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

static long
fd_read(void *ctx, void *p, size_t n)
{
	struct pollfd pfd = { *(int *)ctx, POLLIN, 0 };
	ssize_t r;

	if (poll(&pfd, 1, CGI_READ_TIMEOUT_MS) <= 0)
		return -1;
	do
		r = read(*(int *)ctx, p, n);
	while (r < 0 && errno == EINTR);
	return (long)r;
}

int
front_cgi(struct gateway *gw)
{
	struct request req;
	struct source body;
	struct worker w;
	struct sink out;
	int in_fd = 0, out_fd = 1, null_fd;

	body.read = fd_read;
	body.ctx = &in_fd;
	sink_fd_init(&out, &out_fd);
	/* A client gone is seen only when the server closes the CGI's stdout (a pipe's
	 * reader gone: POLLERR); a half-closed socket is no sign of it here. */
	out.watch_fd = out_fd;
	out.watch_events = 0;
	if (worker_init(&w, gw) < 0 ||
	    request_init(&req, env_param, NULL, &body, clock_mono_us(), clock_wall()) < 0) {
		log_err(NULL, "cgi: out of memory");
		worker_free(&w);
		return 1;
	}
	gw->listen_max = 1;
	router_serve(&w, &req, &out);
	request_drain_body(&req, DRAIN_MAX);
	request_free(&req);
	/* The answer is complete once stdout closes; then the upstream sessions this run
	 * opened for itself are ended, so that CGI does not leave one per run behind. */
	if ((null_fd = open("/dev/null", O_WRONLY)) >= 0) {
		dup2(null_fd, out_fd);
		close(null_fd);
	}
	worker_end_sessions(&w);
	worker_free(&w);
	/* The state file broke during this run (it shrank, its locks failed): mend it for
	 * the next runs (no tick in CGI). */
	if (gw->shared && state_broken(gw->shared->state))
		gateway_tick(gw, clock_mono_us() / 1000);
	return 0;
}

/* --- FastCGI -------------------------------------------------------------- */

/* Parameter lookup that joins a repeated header with ", " (RFC 9110 §5.3), as
 * lighttpd and Apache do: nginx sends each header line as its own param, and
 * FCGX_GetParam would see only the first (two Authorization headers must fail). The
 * first PARAMS_INDEXED params are indexed once per request by their names' lengths, so
 * that a lookup visits only the params whose names are as long as the one it wants;
 * any past them are scanned. */
#define PARAMS_INDEXED	128
#define LEN_BUCKETS	48	/* a name this long or longer is scanned for */

struct fcgi_params {
	FCGX_Request *fr;
	int n;					/* params indexed; -1 = not yet */
	unsigned char first[LEN_BUCKETS];	/* by name length: 1 + the first's index; 0 none */
	unsigned char next[PARAMS_INDEXED];	/* 1 + the next of the same length; 0 none */
	char joined[8192];
};

static void
index_params(struct fcgi_params *fp)
{
	const char *eq;
	char **e = fp->fr->envp;
	size_t len[PARAMS_INDEXED];
	int i;

	for (fp->n = 0; e && e[fp->n] && fp->n < PARAMS_INDEXED; fp->n++) {
		eq = strchr(e[fp->n], '=');
		len[fp->n] = eq ? (size_t)(eq - e[fp->n]) : LEN_BUCKETS;	/* no '=': never found */
	}
	memset(fp->first, 0, sizeof(fp->first));
	for (i = fp->n - 1; i >= 0; i--)	/* backwards, so that each list is in order */
		if (len[i] < LEN_BUCKETS) {
			fp->next[i] = fp->first[len[i]];
			fp->first[len[i]] = (unsigned char)(i + 1);
		}
}

/* The index of the next param named name (nlen bytes) after index i (-1: the first), or
 * -1. */
static long
next_named(const struct fcgi_params *fp, const char *name, size_t nlen, long i)
{
	char **e = fp->fr->envp;

	if (e == NULL)
		return -1;
	if (nlen < LEN_BUCKETS && i < fp->n) {	/* the indexed params of that length */
		for (i = i < 0 ? fp->first[nlen] - 1 : fp->next[i] - 1; i >= 0; i = fp->next[i] - 1)
			if (memcmp(e[i], name, nlen) == 0)
				return i;
		i = fp->n - 1;	/* then those past them */
	}
	for (i++; e[i]; i++)	/* a long name is looked for in every param */
		if (strncmp(e[i], name, nlen) == 0 && e[i][nlen] == '=')
			return i;
	return -1;
}

static const char *
fcgi_param(void *ctx, const char *name)
{
	struct fcgi_params *fp = ctx;
	size_t nlen = strlen(name), used = 0, vlen;
	const char *first = NULL, *v;
	long i;
	int n = 0;

	if (fp->n < 0)
		index_params(fp);
	for (i = next_named(fp, name, nlen, -1); i >= 0; i = next_named(fp, name, nlen, i)) {
		v = fp->fr->envp[i] + nlen + 1;
		if (n++ == 0) {
			first = v;
			continue;
		}
		if (n == 2) {
			used = strlen(first);
			if (used >= sizeof(fp->joined))
				return "";	/* too long to join: refuse rather than pick one */
			memcpy(fp->joined, first, used + 1);
		}
		vlen = strlen(v);
		if (used + 2 + vlen >= sizeof(fp->joined))
			return "";
		memcpy(fp->joined + used, ", ", 2);
		memcpy(fp->joined + used + 2, v, vlen + 1);
		used += 2 + vlen;
	}
	return n > 1 ? fp->joined : first;
}

/* The large parts of an answer (a cached list page) go out in FastCGI records of up to
 * RECORD_MAX bytes written straight to the connection, rather than through libfcgi's
 * 8 KiB stream buffer, which copies them and writes a record of 8 KiB at a time: what
 * the stream holds is flushed first, so the bytes keep their order, and libfcgi ends the
 * stream as usual. */
#define DIRECT_MIN	(16 * 1024)
#define RECORD_MAX	65528	/* a record's content: at most 65535 bytes (8-aligned here) */

static int
fcgi_records(FCGX_Request *fr, const char *p, size_t n)
{
	unsigned char head[FCGI_HEADER_LEN];
	struct iovec iov[2];
	size_t k, off;
	ssize_t w;

	while (n > 0) {
		k = n < RECORD_MAX ? n : RECORD_MAX;
		head[0] = FCGI_VERSION_1;
		head[1] = FCGI_STDOUT;
		head[2] = (unsigned char)((fr->requestId >> 8) & 0xff);
		head[3] = (unsigned char)(fr->requestId & 0xff);
		head[4] = (unsigned char)((k >> 8) & 0xff);
		head[5] = (unsigned char)(k & 0xff);
		head[6] = 0;	/* no padding */
		head[7] = 0;
		for (off = 0; off < sizeof(head) + k; off += (size_t)w) {
			/* what is left of the header, then of the content */
			iov[0].iov_base = head + (off < sizeof(head) ? off : sizeof(head));
			iov[0].iov_len = off < sizeof(head) ? sizeof(head) - off : 0;
			iov[1].iov_base = (void *)(uintptr_t)(p + (off > sizeof(head) ? off - sizeof(head) : 0));
			iov[1].iov_len = k - (off > sizeof(head) ? off - sizeof(head) : 0);
			if ((w = writev(fr->ipcFd, iov, 2)) < 0 && errno == EINTR)
				w = 0;
			else if (w <= 0)
				return -1;
		}
		p += k;
		n -= k;
	}
	return 0;
}

static int
fcgi_write(void *ctx, const void *p, size_t n)
{
	FCGX_Request *fr = ctx;

	if (n < DIRECT_MIN || fr->ipcFd < 0)
		return FCGX_PutStr(p, (int)n, fr->out) == (int)n ? 0 : -1;
	return FCGX_FFlush(fr->out) < 0 ? -1 : fcgi_records(fr, p, n);
}

static int
fcgi_flush(void *ctx)
{
	return FCGX_FFlush(((FCGX_Request *)ctx)->out) < 0 ? -1 : 0;
}

/* The body as the front read it before serving (body_read): the request's source. */
struct body_copy {
	struct buf b;
	size_t off;
	int failed;	/* the connection failed or was cut before the end */
};

static long
copy_read(void *ctx, void *p, size_t n)
{
	struct body_copy *bc = ctx;

	if (bc->off == bc->b.len)
		return bc->failed ? -1 : 0;
	if (n > bc->b.len - bc->off)
		n = bc->b.len - bc->off;
	memcpy(p, bc->b.data + bc->off, n);
	bc->off += n;
	return (long)n;
}

/* Reads the body whole, while the watchdog's bound still runs: Content-Length bytes
 * and the end of FastCGI's stdin after them (so that nothing is left to read before the
 * close), or, without a length, up to max + 1 bytes (the handler refuses more). A body
 * announced over max is left unread: the router refuses it. 0, or -1 when the
 * connection failed. */
static int
body_read(FCGX_Stream *in, const struct request *req, long max, struct body_copy *bc)
{
	char chunk[16384];
	long long cap;
	int k;

	memset(bc, 0, sizeof(*bc));
	if (req->content_length == -2 || req->content_length > max)
		return 0;
	cap = req->content_length >= 0 ? req->content_length + 1 : (long long)max + 1;
	buf_init(&bc->b, (size_t)cap);
	while ((long long)bc->b.len < cap) {
		k = FCGX_GetStr(chunk, (int)(cap - (long long)bc->b.len < (long long)sizeof(chunk) ?
		    cap - (long long)bc->b.len : (long long)sizeof(chunk)), in);
		if (k <= 0) {
			bc->failed = FCGX_GetError(in) != 0;
			break;
		}
		if (buf_append(&bc->b, chunk, (size_t)k) < 0) {
			bc->failed = 1;
			break;
		}
	}
	return bc->failed ? -1 : 0;
}

/* Where a worker's connection is, for the watchdog and stop_workers. */
enum conn_state {
	CONN_NONE,	/* none: the thread is in accept(2) */
	CONN_READING,	/* its params and body are arriving: client-timeout-ms from accept */
	CONN_SERVING,	/* its request is being answered: no bound (upstream calls, streams) */
	CONN_CLOSING,	/* answered; libfcgi waits for the server to close: client-timeout-ms */
};

struct thread {
	pthread_t thread;
	struct worker w;
	int done;	/* __atomic */
	int started;	/* (crew.mu) the thread runs or ran: it is joined before its slot is reused */
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

/* The worker threads of the process: workers of them always, and more, up to max, while
 * every one is busy and a call is held by an upstream (on_upstream_wait): for
 * UPSTREAM_SLOW_MS while the machine has CPU to spare, or for HELD_MS whatever the
 * load. A thread held by a slow upstream is busy without working, and the next request
 * must not queue behind it; but where the processors are what every request waits for
 * (a saturated machine, where a local upstream's answers come late because it waits
 * for them too), more threads only add switches between them. An extra thread stops
 * once it is not needed: done with a request while another thread is idle, or after
 * EXTRA_IDLE_MS without one. Slots 0 .. base - 1 are the workers, the others the
 * extras'. */
#define EXTRA_IDLE_MS	10000
#define HELD_MS		1000
#define SPARE_MIN_PERCENT	10	/* idle processor time in the last tick that is "to spare" */

static struct {
	pthread_mutex_t mu;
	struct gateway *gw;
	struct thread *ws;	/* max slots */
	long base, max;
	long running;		/* threads started and not stopped */
	long idle;		/* (__atomic) of them, waiting for something to do */
	int spare;		/* (__atomic) the machine had CPU to spare in the last tick */
} crew = { .mu = PTHREAD_MUTEX_INITIALIZER, .spare = 1 };

/* Once a tick: whether the machine's processors were idle SPARE_MIN_PERCENT of the time
 * since the last one (/proc/stat; unreadable: taken as spare). prev holds the last
 * totals: idle (with iowait) and all. */
static void
cpu_spare_tick(unsigned long long prev[2])
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
		__atomic_store_n(&crew.spare, (idle - prev[0]) * 100 >= (all - prev[1]) * SPARE_MIN_PERCENT,
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

/* The connection is gone (libfcgi closed its descriptor): the duplicate too. */
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
		    !__atomic_load_n(&stopping, __ATOMIC_ACQUIRE)) {
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
	int fd = kept_wait(&kept, timeout_ms);

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
	pthread_mutex_lock(&t->mu);
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	t->cut = 0;
	t->state = CONN_NONE;
	pthread_mutex_unlock(&t->mu);
	kept_park(&kept, fr->ipcFd, clock_mono_us());
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

	__atomic_add_fetch(&served, 1, __ATOMIC_RELAXED);
	params.fr = fr;
	params.n = -1;
	if (request_init(&req, fcgi_param, &params, NULL, clock_mono_us(), clock_wall()) < 0) {
		log_err(NULL, "fastcgi: out of memory");
		return;
	}
	cfg = gateway_config(t->w.gw);
	max = cfg ? cfg->max_body : BODY_MAX_DEFAULT;
	config_unref(cfg);
	if (body_read(fr->in, &req, max, &bc) < 0) {
		pthread_mutex_lock(&t->mu);
		cut = t->cut;
		pthread_mutex_unlock(&t->mu);
		if (!cut)	/* (the watchdog said why it cut it) */
			log_info(req.id, "fastcgi: the connection failed while the body arrived; not answered");
		goto out;
	}
	conn_state(t, CONN_SERVING);
	req.body.read = copy_read;
	req.body.ctx = &bc;
	memset(&out, 0, sizeof(out));
	out.write = fcgi_write;
	out.flush = fcgi_flush;
	out.ctx = fr;
	/* The server closing the connection is the client gone (nginx does when its
	 * client leaves); it never half-closes it while it waits for the answer. */
	out.watch_fd = fr->ipcFd;
	out.watch_events = POLLRDHUP;
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
crew_busy(int busy)
{
	__atomic_add_fetch(&crew.idle, busy ? -1 : 1, __ATOMIC_RELAXED);
}

/* An extra thread stops, idle for EXTRA_IDLE_MS or done with a request while another
 * thread is idle: its upstream sessions ended, its worker freed. */
static void
retire(struct thread *t)
{
	pthread_mutex_lock(&crew.mu);
	crew.running--;
	__atomic_sub_fetch(&crew.idle, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&crew.mu);
	worker_end_sessions(&t->w);
	worker_free(&t->w);
	t->freed = 1;
	log_debug(NULL, "fastcgi: an extra worker thread stopped");
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
	 * accept of its own. The thread counts as idle (crew.idle) from its start. */
	FCGX_InitRequest(&fr, -1, 0);
	while (!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE)) {
		if (fr.ipcFd < 0) {
			if ((fd = conn_next(t, t->extra ? EXTRA_IDLE_MS : -1)) == KEPT_IDLE) {
				retire(t);
				break;
			}
			if (fd < 0)
				continue;
			fr.ipcFd = fd;
		}
		crew_busy(1);
		/* FCGX_Accept_r first finishes the previous request: it must not close the
		 * descriptor it is now given. The request's own flags then decide. */
		fr.keepConnection = 1;
		if (FCGX_Accept_r(&fr) < 0) {	/* libfcgi closed the connection */
			conn_gone(t);
			crew_busy(0);
			continue;
		}
		serve(t, &fr);
		finish(t, &fr);
		/* An extra thread done with its request while another waits for work is not
		 * needed any more (the idle ones take the requests in turn: a thread left to
		 * idle out would rarely get the chance). */
		if (t->extra && __atomic_load_n(&crew.idle, __ATOMIC_RELAXED) > 0) {
			crew_busy(0);
			retire(t);
			break;
		}
		crew_busy(0);
	}
	if (fr.ipcFd >= 0)
		FCGX_Detach(&fr);	/* a kept connection: closed without waiting */
	FCGX_Free(&fr, 1);
	conn_gone(t);
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Starts the thread of slot t (crew.mu held), an extra one or a worker: 0 or -1. */
static void on_upstream_wait(void *ctx, int64_t waited_ms);

static int
start_thread(struct thread *t, int extra)
{
	if (t->started) {	/* an extra that stopped: reclaimed before its slot is used again */
		pthread_join(t->thread, NULL);
		t->started = 0;
	}
	if (worker_init(&t->w, crew.gw) < 0) {
		worker_free(&t->w);
		return -1;
	}
	upstream_pool_on_wait(t->w.ups, on_upstream_wait, NULL);
	t->done = 0;
	t->extra = extra;
	t->freed = 0;
	if (pthread_create(&t->thread, NULL, worker_main, t) != 0) {
		worker_free(&t->w);
		return -1;
	}
	t->started = 1;
	crew.running++;
	__atomic_add_fetch(&crew.idle, 1, __ATOMIC_RELAXED);
	return 0;
}

/* A worker's call is held by an upstream: when no thread is left idle, another starts
 * (up to max), so that the next request is taken meanwhile. */
static void
on_upstream_wait(void *ctx, int64_t waited_ms)
{
	long i;

	(void)ctx;
	if (waited_ms < HELD_MS && !__atomic_load_n(&crew.spare, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&crew.mu);
	if (__atomic_load_n(&crew.idle, __ATOMIC_RELAXED) <= 0 && crew.running < crew.max &&
	    !__atomic_load_n(&stopping, __ATOMIC_ACQUIRE)) {
		for (i = crew.base; i < crew.max; i++)
			if (!crew.ws[i].started || __atomic_load_n(&crew.ws[i].done, __ATOMIC_ACQUIRE))
				break;
		if (i < crew.max && start_thread(&crew.ws[i], 1) == 0)
			log_debug(NULL, "fastcgi: every worker thread busy, one waiting on an upstream: "
			    "thread %ld of at most %ld started", crew.running, crew.max);
	}
	pthread_mutex_unlock(&crew.mu);
}

/* The watchdog: shuts down (shutdown(2), so that libfcgi's blocking read returns) the
 * connection of every worker that has been READING or CLOSING for longer than
 * client-timeout-ms, and closes the kept connections idle for as long. A SERVING one is
 * never touched. */
struct watchdog {
	pthread_t thread;
	struct gateway *gw;
	struct thread *ws;
	long n;
	int stop;	/* __atomic */
};

static void *
watchdog_main(void *arg)
{
	static const char *const what[] = {
		[CONN_READING] = "a connection did not deliver its request within",
		[CONN_CLOSING] = "the server did not close a connection after its answer within",
	};
	struct watchdog *wd = arg;
	struct timespec pause;
	struct config *cfg;
	int64_t bound_us, now_us, period_ms;
	long i, idle;
	int state;

	while (!__atomic_load_n(&wd->stop, __ATOMIC_ACQUIRE)) {
		cfg = gateway_config(wd->gw);
		bound_us = (cfg ? cfg->client_timeout_ms : CLIENT_TIMEOUT_DEFAULT_MS) * 1000LL;
		config_unref(cfg);
		period_ms = bound_us / 8000;
		if (period_ms > WATCH_PERIOD_MAX_MS)
			period_ms = WATCH_PERIOD_MAX_MS;
		if (period_ms < WATCH_PERIOD_MIN_MS)
			period_ms = WATCH_PERIOD_MIN_MS;
		pause.tv_sec = period_ms / 1000;
		pause.tv_nsec = (period_ms % 1000) * 1000000L;
		nanosleep(&pause, NULL);
		now_us = clock_mono_us();
		if ((idle = kept_expire(&kept, now_us - bound_us)) > 0)
			log_info(NULL, "fastcgi: %ld kept connection%s idle for client-timeout-ms (%lld ms): closed",
			    idle, idle == 1 ? "" : "s", (long long)(bound_us / 1000));
		for (i = 0; i < wd->n; i++) {
			struct thread *t = &wd->ws[i];

			state = CONN_NONE;
			pthread_mutex_lock(&t->mu);
			if (t->fd >= 0 && !t->cut && t->state != CONN_SERVING && t->state != CONN_NONE &&
			    now_us - t->since_us >= bound_us) {
				shutdown(t->fd, SHUT_RDWR);
				t->cut = 1;
				state = t->state;
			}
			pthread_mutex_unlock(&t->mu);
			if (state != CONN_NONE)	/* a slow client is worth a warning; the others are routine */
				log_msg(state == CONN_READING ? GW_LOG_WARN : GW_LOG_INFO, NULL,
				    "fastcgi: %s client-timeout-ms (%lld ms): shut down", what[state],
				    (long long)(bound_us / 1000));
		}
	}
	return NULL;
}

/* Stops the threads: those without a request in hand are woken (SIGUSR1 interrupts
 * their wait and reads), those answering one finish it, within SHUTDOWN_GRACE_MS in all.
 * No thread starts once stopping is set (under crew.mu). */
static void
stop_workers(void)
{
	struct timespec pause = { 0, 50 * 1000 * 1000 };
	struct thread *ws = crew.ws;
	long i, waited = 0;

	pthread_mutex_lock(&crew.mu);
	__atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&crew.mu);
	FCGX_ShutdownPending();
	for (i = 0; i < crew.max; i++) {
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

/* Once a tick: when no request began during the last one and some did since the last
 * time, the memory freed since goes back to the system. The heap of a busy process
 * otherwise keeps every page it ever touched, and fragments at its top: at rest, its
 * size is then what it holds, not the high-water mark of every burst. malloc_trim
 * returns the top of the main arena and the whole free pages inside every arena, but
 * never the top of a thread's own arena: single_arena makes the workers share the main
 * one. */
static void
release_idle(unsigned long *seen, unsigned long *trimmed)
{
	unsigned long now = __atomic_load_n(&served, __ATOMIC_RELAXED);

#ifdef HAVE_MALLOC_TRIM
	if (now == *seen && now != *trimmed) {
		malloc_trim(0);
		*trimmed = now;
	}
#else
	(void)trimmed;
#endif
	*seen = now;
}

/* Before the threads start: one malloc arena for all of them. glibc gives each thread
 * that allocates an arena of its own, whose top only shrinks past the trim threshold
 * (128 kB): a process at rest then kept up to that much per thread, more as the traffic
 * went on (docs/ARCHITECTURE.md §1). The workers share the arena's lock instead. The
 * administrator's MALLOC_ARENA_MAX or glibc.malloc.arena_max is kept. */
static void
single_arena(void)
{
#if defined(HAVE_MALLOPT) && defined(M_ARENA_MAX)
	const char *tun = getenv("GLIBC_TUNABLES");

	if (getenv("MALLOC_ARENA_MAX") || (tun && strstr(tun, "glibc.malloc.arena_max")))
		return;
	mallopt(M_ARENA_MAX, 1);
#endif
}

int
front_fastcgi(struct gateway *gw, long workers)
{
	unsigned long seen = 0, trimmed = 0;
	unsigned long long cpu[2] = { 0, 0 };
	struct timespec tick = { 1, 0 };
	struct watchdog wd;
	struct config *cfg;
	struct thread *ws;
	sigset_t set;
	long i, max;
	int sig, rc = 0, leak = 0, watching = 0;

	single_arena();
	cfg = gateway_config(gw);
	max = cfg && cfg->max_workers > workers ? cfg->max_workers : workers;
	config_unref(cfg);
	if (kept_init(&kept, LISTEN_FD, KEPT_MAX) < 0) {
		log_err(NULL, "fastcgi: cannot watch the listening socket (errno %d)", errno);
		return 1;
	}
	if ((ws = calloc((size_t)max, sizeof(*ws))) == NULL) {
		kept_free(&kept);
		return 1;
	}
	for (i = 0; i < max; i++) {
		pthread_mutex_init(&ws[i].mu, NULL);
		ws[i].fd = -1;
	}
	crew.gw = gw;
	crew.ws = ws;
	crew.base = workers;
	crew.max = max;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);	/* threads inherit; workers unblock USR1 */
	sigdelset(&set, SIGUSR1);

	pthread_mutex_lock(&crew.mu);
	for (i = 0; i < workers && rc == 0; i++)
		if (start_thread(&ws[i], 0) < 0) {
			log_err(NULL, "fastcgi: cannot start worker %ld", i);
			rc = 1;
		}
	pthread_mutex_unlock(&crew.mu);
	memset(&wd, 0, sizeof(wd));
	wd.gw = gw;
	wd.ws = ws;
	wd.n = max;
	if (rc == 0 && pthread_create(&wd.thread, NULL, watchdog_main, &wd) != 0) {
		log_err(NULL, "fastcgi: cannot start the connection watchdog");
		rc = 1;
	} else if (rc == 0)
		watching = 1;
	/* A standalone stream holds its thread: one worker is always left for the rest. */
	__atomic_store_n(&gw->listen_max, crew.running - 1, __ATOMIC_RELEASE);
	log_info(NULL, "fastcgi: serving with %ld worker threads, up to %ld while calls wait on upstreams (pid %ld)",
	    crew.running, max, (long)getpid());
	while (rc == 0) {
		sig = sigtimedwait(&set, NULL, &tick);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		gateway_reload(gw, sig == SIGHUP);
		gateway_tick(gw, clock_mono_us() / 1000);	/* the state file: replaced, broken? */
		release_idle(&seen, &trimmed);
		cpu_spare_tick(cpu);
	}
	stop_workers();
	if (watching) {
		__atomic_store_n(&wd.stop, 1, __ATOMIC_RELEASE);
		pthread_join(wd.thread, NULL);
	}
	for (i = 0; i < max; i++)
		if (!ws[i].started || __atomic_load_n(&ws[i].done, __ATOMIC_ACQUIRE)) {
			if (ws[i].started && !ws[i].freed)
				worker_end_sessions(&ws[i].w);
			if (!ws[i].freed)
				worker_free(&ws[i].w);
			pthread_mutex_destroy(&ws[i].mu);
		} else
			leak = 1;	/* still running: its memory stays until exit */
	log_info(NULL, "fastcgi: stopped");
	if (!leak) {	/* (a thread still running may yet park its connection) */
		free(ws);
		kept_free(&kept);
	}
	return rc;
}
