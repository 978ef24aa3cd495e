/* front_watch — the watchdog thread of the FastCGI crew: it shuts down (shutdown(2),
 * so that libfcgi's blocking read returns) the connection of every worker that has
 * been READING or CLOSING for longer than client-timeout-ms, and closes the kept
 * connections idle for as long. A SERVING one is never touched: what an answer waits
 * for (upstream calls, streams) has bounds of its own. */
#ifndef GW_FRONT_WATCH_H
#define GW_FRONT_WATCH_H

#include <pthread.h>

#include "front_crew.h"

struct watchdog {
	pthread_t thread;
	struct crew *crew;
	int stop;	/* __atomic */
	int running;
};

/* Starts watching crew's connections: 0, or -1 (logged). */
int watchdog_start(struct watchdog *wd, struct crew *crew);
/* Stops and joins it, if it runs. */
void watchdog_stop(struct watchdog *wd);

#endif
