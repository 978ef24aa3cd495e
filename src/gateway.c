/* gateway — the current configuration behind a mutex, swapped whole on reload. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "log.h"

/* The log destination follows the configuration; a forced reload (SIGHUP) also
 * reopens it, for logrotate. */
static void
reopen_log(const struct config *cfg)
{
	if (log_open(cfg->log_file) < 0)
		log_err(NULL, "log-file %s: cannot open; logging to stderr", cfg->log_file);
}

int
gateway_init(struct gateway *gw, const char *config_path, struct cfg_errors *errs)
{
	memset(gw, 0, sizeof(*gw));
	pthread_mutex_init(&gw->lock, NULL);
	if ((gw->config_path = strdup(config_path)) == NULL)
		return -1;
	if (config_load(config_path, &gw->cfg, errs) < 0) {
		gw->failed = gw->cfg;
		gw->cfg = NULL;
		return -1;
	}
	reopen_log(gw->cfg);
	return 0;
}

void
gateway_free(struct gateway *gw)
{
	config_unref(gw->cfg);
	config_unref(gw->failed);
	gw->cfg = gw->failed = NULL;
	free(gw->config_path);
	pthread_mutex_destroy(&gw->lock);
}

struct config *
gateway_config(struct gateway *gw)
{
	struct config *cfg;

	pthread_mutex_lock(&gw->lock);
	cfg = gw->cfg ? config_ref(gw->cfg) : NULL;
	pthread_mutex_unlock(&gw->lock);
	return cfg;
}

int
gateway_reload(struct gateway *gw, int force)
{
	struct cfg_errors errs;
	struct config *cur, *next;
	size_t i;
	int changed;

	/* Only the reload path (one thread) touches gw->failed. */
	if (!force) {
		if (gw->failed) {
			if (!config_changed(gw->failed))
				return 0;
		} else {
			cur = gateway_config(gw);
			changed = cur == NULL || config_changed(cur);
			config_unref(cur);
			if (!changed)
				return 0;
		}
	}
	if (config_load(gw->config_path, &next, &errs) < 0) {
		config_unref(gw->failed);
		gw->failed = next;
		for (i = 0; i < errs.n; i++)
			log_err(NULL, "config: %s", errs.msg[i]);
		log_err(NULL, "config: reload of %s failed; keeping the previous configuration",
		    gw->config_path);
		if (force && (cur = gateway_config(gw)) != NULL) {
			reopen_log(cur);
			config_unref(cur);
		}
		return -1;
	}
	reopen_log(next);
	config_unref(gw->failed);
	gw->failed = NULL;
	pthread_mutex_lock(&gw->lock);
	cur = gw->cfg;
	gw->cfg = next;
	pthread_mutex_unlock(&gw->lock);
	config_unref(cur);
	log_info(NULL, "config: reloaded %s", gw->config_path);
	return 1;
}
