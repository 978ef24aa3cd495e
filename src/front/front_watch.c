/* front_watch — the FastCGI crew's watchdog (front_watch.h). */
#include "autoconf.h"

#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "clock.h"
#include "front_watch.h"
#include "log.h"

#define CLIENT_TIMEOUT_DEFAULT_MS	10000	/* client-timeout-ms, without a configuration */
#define WATCH_PERIOD_MAX_MS	1000	/* the watchdog looks this often at most... */
#define WATCH_PERIOD_MIN_MS	20	/* ...and at least: client-timeout-ms / 8 in between */

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
		cfg = gateway_config(wd->crew->gw);
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
		if ((idle = kept_expire(&wd->crew->kept, now_us - bound_us)) > 0)
			log_info(NULL, "fastcgi: %ld kept connection%s idle for client-timeout-ms (%lld ms): closed",
			    idle, idle == 1 ? "" : "s", (long long)(bound_us / 1000));
		for (i = 0; i < wd->crew->max; i++) {
			struct thread *t = &wd->crew->ws[i];

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

int
watchdog_start(struct watchdog *wd, struct crew *crew)
{
	memset(wd, 0, sizeof(*wd));
	wd->crew = crew;
	if (pthread_create(&wd->thread, NULL, watchdog_main, wd) != 0) {
		log_fatal("fastcgi: cannot start the connection watchdog");
		return -1;
	}
	wd->running = 1;
	return 0;
}

void
watchdog_stop(struct watchdog *wd)
{
	if (!wd->running)
		return;
	__atomic_store_n(&wd->stop, 1, __ATOMIC_RELEASE);
	pthread_join(wd->thread, NULL);
	wd->running = 0;
}
