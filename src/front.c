/* front — CGI and FastCGI (libfcgi) transport. Worker threads each own an
 * FCGX_Request; the main thread only waits for signals and checks the config once a
 * second. Shutdown: stop accepting, wake the accepting thread with SIGUSR1, let busy
 * threads finish their request (bounded), return to main. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <fcgiapp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "front.h"
#include "log.h"
#include "request.h"
#include "router.h"
#include "sink.h"

#define SHUTDOWN_GRACE_MS	30000
#define DRAIN_MAX		(64 << 20)	/* unread CGI body discarded before exiting */
#define CGI_READ_TIMEOUT_MS	5000	/* a CGI body that stops arriving */

static int stopping;	/* read with __atomic: set once by the main thread */

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
 * FCGX_GetParam would see only the first (two Authorization headers must fail). */
struct fcgi_params {
	FCGX_Request *fr;
	char joined[8192];
};

static const char *
fcgi_param(void *ctx, const char *name)
{
	struct fcgi_params *fp = ctx;
	size_t nlen = strlen(name), used = 0;
	const char *first = NULL;
	char **e;
	int n = 0;

	for (e = fp->fr->envp; e && *e; e++) {
		const char *v;
		size_t vlen;

		if (strncmp(*e, name, nlen) != 0 || (*e)[nlen] != '=')
			continue;
		v = *e + nlen + 1;
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

static long
fcgi_read(void *ctx, void *p, size_t n)
{
	FCGX_Stream *in = ctx;
	int k;

	if (n > 1 << 30)
		n = 1 << 30;
	k = FCGX_GetStr(p, (int)n, in);
	if (k == 0 && FCGX_GetError(in) != 0)
		return -1;
	return k;
}

static int
fcgi_write(void *ctx, const void *p, size_t n)
{
	return FCGX_PutStr(p, (int)n, ctx) == (int)n ? 0 : -1;
}

static int
fcgi_flush(void *ctx)
{
	return FCGX_FFlush(ctx) < 0 ? -1 : 0;
}

struct thread {
	pthread_t thread;
	struct worker w;
	int done;	/* __atomic */
};

static void *
worker_main(void *arg)
{
	struct thread *t = arg;
	struct fcgi_params params;
	FCGX_Request fr;
	struct request req;
	struct source body;
	struct sink out;
	sigset_t wake;
	int rc;

	sigemptyset(&wake);
	sigaddset(&wake, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	FCGX_InitRequest(&fr, 0, FCGI_FAIL_ACCEPT_ON_INTR);
	while (!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE)) {
		/* No accept lock: Linux accept(2) is thread-safe, and libfcgi reads the
		 * params inside FCGX_Accept_r, so a lock would let one slow client stall all. */
		rc = FCGX_Accept_r(&fr);
		if (rc < 0) {
			if (__atomic_load_n(&stopping, __ATOMIC_ACQUIRE))
				break;
			if (rc != -EINTR && rc != -1)
				log_warn(NULL, "fastcgi: accept failed (%d)", rc);
			if (rc != -EINTR)
				usleep(100 * 1000);	/* e.g. EMFILE: do not spin */
			continue;
		}
		body.read = fcgi_read;
		body.ctx = fr.in;
		out.write = fcgi_write;
		out.flush = fcgi_flush;
		out.ctx = fr.out;
		out.failed = 0;
		params.fr = &fr;
		if (request_init(&req, fcgi_param, &params, &body, clock_mono_us(), clock_wall()) < 0) {
			log_err(NULL, "fastcgi: out of memory");
			FCGX_Finish_r(&fr);
			continue;
		}
		router_serve(&t->w, &req, &out);
		/* No drain here: the server may stop sending a body once the answer has
		 * begun, and FCGX_Finish_r already closes with a bounded lingering read. */
		request_free(&req);
		FCGX_Finish_r(&fr);
	}
	FCGX_Finish_r(&fr);
	FCGX_Free(&fr, 0);
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void
stop_workers(struct thread *ws, long n)
{
	struct timespec pause = { 0, 50 * 1000 * 1000 };
	long i, waited = 0;

	__atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
	FCGX_ShutdownPending();
	for (i = 0; i < n; i++) {
		/* The thread in accept(2) needs waking; a busy one finishes its request. */
		while (!__atomic_load_n(&ws[i].done, __ATOMIC_ACQUIRE) && waited < SHUTDOWN_GRACE_MS) {
			pthread_kill(ws[i].thread, SIGUSR1);
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
front_fastcgi(struct gateway *gw, long workers)
{
	struct timespec tick = { 1, 0 };
	struct thread *ws;
	sigset_t set;
	long i, started = 0;
	int sig, rc = 0, leak = 0;

	if ((ws = calloc((size_t)workers, sizeof(*ws))) == NULL)
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);	/* threads inherit; workers unblock USR1 */
	sigdelset(&set, SIGUSR1);

	for (i = 0; i < workers; i++) {
		if (worker_init(&ws[i].w, gw) < 0) {
			log_err(NULL, "fastcgi: cannot set up worker %ld", i);
			rc = 1;
			break;
		}
		if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]) != 0) {
			log_err(NULL, "fastcgi: cannot start worker %ld", i);
			rc = 1;
			break;
		}
		started++;
	}
	/* A standalone stream holds its thread: one is always left for the rest. */
	__atomic_store_n(&gw->listen_max, started - 1, __ATOMIC_RELEASE);
	log_info(NULL, "fastcgi: serving with %ld worker threads (pid %ld)", started, (long)getpid());
	while (rc == 0) {
		sig = sigtimedwait(&set, NULL, &tick);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		gateway_reload(gw, sig == SIGHUP);
		gateway_tick(gw, clock_mono_us() / 1000);	/* the state file: replaced, broken? */
	}
	stop_workers(ws, started);
	for (i = 0; i < workers; i++)
		if (i >= started || __atomic_load_n(&ws[i].done, __ATOMIC_ACQUIRE)) {
			if (i < started)
				worker_end_sessions(&ws[i].w);
			worker_free(&ws[i].w);
		} else
			leak = 1;	/* still running: its memory stays until exit */
	log_info(NULL, "fastcgi: stopped");
	if (!leak)
		free(ws);
	return rc;
}
