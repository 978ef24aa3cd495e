/* gateway — the current configuration behind a mutex, swapped whole on reload. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gateway.h"
#include "log.h"

/* Each worker's cache of serialized list pages: a 200-tool page is about 45 kB. */
#define GW_PAGE_CACHE_BYTES	(1u << 20)
#define GW_PAGE_CACHE_ENTRIES	16

/* The log destination follows the configuration; a forced reload (SIGHUP) also
 * reopens it, for logrotate. */
static void
reopen_log(const struct config *cfg)
{
	if (log_open(cfg->log_file) < 0)
		log_err(NULL, "log-file %s: cannot open; logging to stderr", cfg->log_file);
}

/* The shared state file; when it cannot be opened, a private mapping keeps the
 * gateway working (nothing shared) and the log says why. */
static void
open_state(struct gateway *gw, const struct config *cfg)
{
	struct state_layout lay;
	struct gw_error err = { GW_OK, "" };
	char fallback[256];
	const char *path = cfg->state;
	void *region;
	size_t size;

	memset(&lay, 0, sizeof(lay));
	lay.region[STATE_ASMETA].size = introspect_asmeta_region_size();
	lay.region[STATE_ASMETA].init = introspect_asmeta_region_init;
	lay.region[STATE_CACHE].size = token_cache_region_size((uint32_t)cfg->cache_entries);
	lay.region[STATE_CACHE].init = token_cache_region_init;
	lay.region[STATE_TOMBS].size = session_tombstones_size();
	lay.region[STATE_TOMBS].init = session_tombstones_init;
	lay.region[STATE_CATALOG].size = catalog_region_size();
	lay.region[STATE_CATALOG].init = catalog_region_init;
	if (path == NULL) {
		snprintf(fallback, sizeof(fallback), "%s/mcpgate-%ld.state",
		    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)geteuid());
		path = fallback;
	}
	if (state_open(path, &lay, &gw->state, &err) < 0) {
		log_err(NULL, "%s; using a private cache (not shared between processes)", err.detail);
		if (state_open(NULL, &lay, &gw->state, &err) < 0) {
			log_err(NULL, "%s", err.detail);
			return;
		}
	}
	gw->asmeta = state_region(gw->state, STATE_ASMETA, NULL);
	gw->tombs = state_region(gw->state, STATE_TOMBS, NULL);
	gw->catalog = state_region(gw->state, STATE_CATALOG, NULL);
	region = state_region(gw->state, STATE_CACHE, &size);
	if ((gw->tokens = token_cache_attach(region, size)) == NULL)
		log_err(NULL, "state: token cache region unusable; caching off");
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
	open_state(gw, gw->cfg);
	return 0;
}

void
gateway_free(struct gateway *gw)
{
	token_cache_detach(gw->tokens);
	state_close(gw->state);
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

const unsigned char *
gateway_session_key(const struct gateway *gw, const struct config *cfg)
{
	if (cfg->has_session_key)
		return cfg->session_key;
	return gw->state ? state_session_key(gw->state) : NULL;
}

int
worker_init(struct worker *w, struct gateway *gw)
{
	memset(w, 0, sizeof(*w));
	w->gw = gw;
	w->ix = introspect_new();
	w->ups = upstream_pool_new();
	w->pages = fragcache_new(GW_PAGE_CACHE_BYTES, GW_PAGE_CACHE_ENTRIES);
	return w->ix && w->ups && w->pages ? 0 : -1;
}

void
worker_end_sessions(struct worker *w)
{
	struct config *cfg = gateway_config(w->gw);

	upstream_pool_end(w->ups, cfg);
	if (cfg)
		config_unref(cfg);
}

void
worker_free(struct worker *w)
{
	introspect_free(w->ix);
	w->ix = NULL;
	upstream_pool_free(w->ups);
	w->ups = NULL;
	fragcache_free(w->pages);
	w->pages = NULL;
	catalog_view_free(&w->cat);
}
