/* gateway — long-lived state: the current configuration and its reload. */
#ifndef GW_GATEWAY_H
#define GW_GATEWAY_H

#include <pthread.h>

#include "config.h"

struct gateway {
	pthread_mutex_t lock;
	struct config *cfg;	/* current; NULL when none could be loaded */
	struct config *failed;	/* provenance of the last broken files, not retried until they change */
	char *config_path;
	long workers;		/* -w, 0 = from config */
};

/* Loads the configuration; on failure gw->cfg stays NULL and errs says why. */
int gateway_init(struct gateway *gw, const char *config_path, struct cfg_errors *errs);
void gateway_free(struct gateway *gw);
/* The current configuration, referenced: config_unref() it when done. May be NULL. */
struct config *gateway_config(struct gateway *gw);
/* Reloads when forced or when the files changed. 1 = reloaded, 0 = unchanged,
 * -1 = the new files are broken (logged, the old configuration stays). */
int gateway_reload(struct gateway *gw, int force);

#endif
