/* front — CGI and FastCGI (libfcgi) transport: a CGI request served from the
 * environment and stdin; or FastCGI, where the worker threads (front_crew.h, their
 * requests' I/O in front_fcgi.h) serve and a watchdog (front_watch.h) bounds the
 * clients, while the main thread only waits for signals and ticks once a second
 * (reload, the state file, memory given back). Shutdown: stop accepting, wake the
 * threads that are not answering a request with SIGUSR1, let busy threads finish their
 * request (bounded), return to main. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <fcgiapp.h>
#if defined(HAVE_MALLOC_TRIM) || defined(HAVE_MALLOPT)
#include <malloc.h>
#endif
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "front.h"
#include "front_crew.h"
#include "front_watch.h"
#include "log.h"
#include "request.h"
#include "router.h"
#include "sink.h"

#define DRAIN_MAX		(64 << 20)	/* unread CGI body discarded before exiting */
#define CGI_READ_TIMEOUT_MS	5000	/* a CGI body that stops arriving */

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
	if (gw->shared && state_broken(gw->shared->state, NULL))
		gateway_tick(gw, clock_mono_us() / 1000);
	return 0;
}

/* --- FastCGI -------------------------------------------------------------- */

/* The crew, static: a thread still running after a shutdown's grace uses it until exit. */
static struct crew crew;

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
	unsigned long now = __atomic_load_n(&crew.served, __ATOMIC_RELAXED);

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
	struct watchdog wd = { 0 };
	struct config *cfg;
	sigset_t set;
	long max;
	int sig, rc;

	single_arena();
	cfg = gateway_config(gw);
	max = cfg && cfg->max_workers > workers ? cfg->max_workers : workers;
	config_unref(cfg);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);	/* threads inherit; workers unblock USR1 */
	sigdelset(&set, SIGUSR1);

	rc = crew_start(&crew, gw, workers, max) < 0 || watchdog_start(&wd, &crew) < 0;
	/* A standalone stream holds its thread: one worker is always left for the rest. */
	__atomic_store_n(&gw->listen_max, crew.running - 1, __ATOMIC_RELEASE);
	if (rc == 0)
		log_info(NULL, "fastcgi: serving with %ld worker threads, up to %ld while calls wait on upstreams (pid %ld)",
		    crew.running, max, (long)getpid());
	while (rc == 0) {
		sig = sigtimedwait(&set, NULL, &tick);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		gateway_reload(gw, sig == SIGHUP);
		gateway_tick(gw, clock_mono_us() / 1000);	/* the state file: replaced, broken? */
		release_idle(&seen, &trimmed);
		crew_cpu_tick(&crew, cpu);
	}
	crew_stop(&crew);
	watchdog_stop(&wd);
	crew_free(&crew);
	log_info(NULL, "fastcgi: stopped");
	return rc;
}
