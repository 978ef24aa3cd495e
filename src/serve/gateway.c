/* gateway — the current configuration behind a mutex, swapped whole on reload. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "gateway.h"
#include "log.h"

/* The modules that keep state per thread, a row each: how a worker makes its slot,
 * ends what the slot holds at other servers before the process goes (NULL: nothing),
 * and frees it. A module with a new slot adds its row here and its name to
 * enum req_slot (req_ctx.h). */
static const struct worker_slot {
	void *(*make)(void);
	void (*end)(void *slot, const struct config *cfg);
	void (*free)(void *slot);
} worker_slots[REQ_SLOTS] = {
	[REQ_SLOT_AUTH] = { auth_thread_new, NULL, auth_thread_free },
	[REQ_SLOT_MCP] = { mcp_thread_new, mcp_thread_end, mcp_thread_free },
};

/* The log destination and level follow the configuration; a forced reload (SIGHUP)
 * also reopens it, for logrotate. */
static void
reopen_log(const struct config *cfg)
{
	if (cfg->log_level >= GW_LOG_ERR && cfg->log_level <= GW_LOG_INFO)
		log_set_level((enum log_level)cfg->log_level);
	if (log_open(cfg->log_file) < 0)
		log_err(NULL, "log-file %s: cannot open; logging to stderr", cfg->log_file);
}

#define STATE_RETRY_MS	5000	/* the tick's pause after a failed re-open */

/* The regions of the state file, one row each: their owners define them. */
static const struct state_region *const regions[GW_REGIONS] = {
	[GW_REGION_ASMETA] = &introspect_asmeta_region_def,
	[GW_REGION_CACHE] = &token_cache_region_def,	/* its size: cache-entries; an existing file's wins */
	[GW_REGION_TOMBS] = &session_tombstones_def,
	[GW_REGION_CATALOG] = &catalog_region_def,
	[GW_REGION_LIMITS] = &ratelimit_region_def,
	[GW_REGION_METRICS] = &metrics_region_def,
	[GW_REGION_JWKS] = &jwks_region_def,
	[GW_REGION_REPLAY] = &replay_region_def,
	[GW_REGION_CREDS] = &credcache_region_def,
	/* The vault (vault_region_def, at vault_region_size of its entries) is made when
	 * an upstream keeps people's connections; until then it is empty: no bytes in the
	 * file, nothing made. */
	[GW_REGION_MAILBOX] = &mailbox_region_def,
	[GW_REGION_LOGLEVELS] = &loglevels_region_def,
	[GW_REGION_SUBS] = &subs_region_def,
	[GW_REGION_LEASES] = &leases_region_def,
	[GW_REGION_VAULT] = NULL,
};

static void
layout_of(const struct config *cfg, struct state_layout *lay)
{
	int i;

	memset(lay, 0, sizeof(*lay));
	for (i = 0; i < GW_REGIONS; i++)
		lay->region[i].def = regions[i];
	lay->region[GW_REGION_CACHE].size = token_cache_region_size((uint32_t)cfg->cache_entries);
	if (cfg->user_oauth && !cfg->redis_on) {	/* with a Redis store, the vault is there */
		lay->region[GW_REGION_VAULT].def = &vault_region_def;
		lay->region[GW_REGION_VAULT].size = vault_region_size((uint32_t)cfg->vault_entries);
	}
}

/* The state file's path, `state` or the default, its directory made and judged the
 * same way either way (state_file_dir). */
static char *
state_path_of(const struct config *cfg, struct gw_error *err)
{
	char path[4096];

	if (cfg->state && strlen(cfg->state) >= sizeof(path)) {
		gw_error_set(err, GW_ECONFIG, "state: path too long");
		return NULL;
	}
	if (cfg->state)
		snprintf(path, sizeof(path), "%s", cfg->state);
	else if (state_default_path(path, sizeof(path), 0, err) < 0)
		return NULL;
	if (state_file_dir(path, cfg->state != NULL, err) < 0)
		return NULL;
	return strdup(path);
}

static struct shared *
shared_new(struct state *st, const char *degraded)
{
	struct shared *sh = calloc(1, sizeof(*sh));
	void *region;
	size_t size;

	if (sh == NULL) {
		state_close(st);
		return NULL;
	}
	sh->refs = 1;
	sh->state = st;
	sh->asmeta = state_region(st, GW_REGION_ASMETA, NULL);
	sh->tombs = state_region(st, GW_REGION_TOMBS, NULL);
	sh->catalog = state_region(st, GW_REGION_CATALOG, NULL);
	sh->jwks = state_region(st, GW_REGION_JWKS, NULL);
	sh->replay = state_region(st, GW_REGION_REPLAY, NULL);
	sh->creds = state_region(st, GW_REGION_CREDS, NULL);
	sh->mailbox = state_region(st, GW_REGION_MAILBOX, NULL);
	sh->loglevels = state_region(st, GW_REGION_LOGLEVELS, NULL);
	sh->subs = state_region(st, GW_REGION_SUBS, NULL);
	sh->leases = state_region(st, GW_REGION_LEASES, NULL);
	region = state_region(st, GW_REGION_CACHE, &size);
	if ((sh->tokens = token_cache_attach(region, size)) == NULL)
		log_err(NULL, "state: token cache region unusable; caching off");
	region = state_region(st, GW_REGION_LIMITS, &size);
	if ((sh->limits = ratelimit_attach(region, size)) == NULL)
		log_err(NULL, "state: rate-limit region unusable; limited requests are refused (503)");
	region = state_region(st, GW_REGION_METRICS, &size);
	if ((sh->metrics = metrics_attach(region, size)) == NULL)
		log_err(NULL, "state: metrics region unusable; nothing is counted");
	region = state_region(st, GW_REGION_VAULT, &size);
	sh->vault = vault_attach(region, size);	/* NULL: no upstream keeps connections */
	sh->opened_s = (int64_t)clock_wall();
	snprintf(sh->degraded, sizeof(sh->degraded), "%s", degraded);
	return sh;
}

/* The state at path for cfg, replacing from (may be NULL). A file system without room
 * gives a private state (its degraded says why: the caller says it loudly); any other
 * failure gives NULL with err. */
static struct shared *
open_shared(const char *path, const struct config *cfg, const struct state *from,
    struct gw_error *err)
{
	struct state_layout lay;
	struct state *st;
	char why[GW_ERROR_DETAIL] = "";
	size_t size;
	int rc;

	layout_of(cfg, &lay);
	rc = state_open(path, &lay, from, &st, err);
	if (rc == STATE_NOSPACE) {
		snprintf(why, sizeof(why), "%s", err->detail);
		rc = state_open(NULL, &lay, from, &st, err);
	}
	if (rc < 0)
		return NULL;
	if (state_adopted(st, GW_REGION_CACHE)) {
		state_region(st, GW_REGION_CACHE, &size);
		log_warn(NULL, "state: %s keeps its token cache of %zu entries; cache-entries = %ld takes "
		    "effect when the file is built anew (stop every mcpgate process, then remove it)",
		    path, token_cache_region_entries(size), cfg->cache_entries);
	}
	return shared_new(st, why);
}

static void
log_private(const struct shared *sh)
{
	log_err(NULL, "%s; this process uses a private state: sessions, tombstones and the token cache "
	    "are not shared with the other processes until there is room", sh->degraded);
}

struct shared *
gateway_shared(struct gateway *gw)
{
	struct shared *sh;

	pthread_mutex_lock(&gw->lock);
	if ((sh = gw->shared) != NULL)
		__atomic_add_fetch(&sh->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&gw->lock);
	return sh;
}

void
shared_unref(struct shared *sh)
{
	if (sh == NULL || __atomic_sub_fetch(&sh->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	token_cache_detach(sh->tokens);
	ratelimit_detach(sh->limits);
	metrics_detach(sh->metrics);
	vault_detach(sh->vault);
	state_close(sh->state);
	free(sh);
}

/* A mapping seen broken: since now, unless seen so before. */
static int64_t
broken_since(struct shared *sh, int64_t now_s)
{
	int64_t none = 0;

	if (!__atomic_compare_exchange_n(&sh->broken_s, &none, now_s, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return none;
	return now_s;
}

void
gateway_tick(struct gateway *gw, int64_t now_ms)
{
	struct shared *cur = gw->shared, *next;	/* only this thread replaces it */
	struct gw_error err = { GW_OK, 0, "" }, berr;
	struct config *cfg;
	const char *why = NULL;

	if (cur == NULL || gw->state_path == NULL || now_ms < gw->state_retry_ms)
		return;
	if (cur->degraded[0])
		why = "it could not be had";
	else if (state_broken(cur->state, &berr)) {
		why = berr.detail;
		broken_since(cur, (int64_t)clock_wall());
	} else if (state_stale(cur->state))
		why = "it was replaced or removed";
	if (why == NULL || (cfg = gateway_config(gw)) == NULL)
		return;
	next = open_shared(gw->state_path, cfg, cur->state, &err);
	config_unref(cfg);
	/* A private state only replaces a broken mapping: an intact one, even of a
	 * removed file, still shares with the processes that have it too. */
	if (next && next->degraded[0] && (cur->degraded[0] || !state_broken(cur->state, NULL))) {
		snprintf(err.detail, sizeof(err.detail), "%s", next->degraded);
		shared_unref(next);
		next = NULL;
	}
	if (next == NULL) {
		if (strcmp(err.detail, gw->state_error) != 0)
			log_err(NULL, "state: %s: %s, and it cannot be re-opened: %s; retrying", gw->state_path,
			    why, err.detail);
		snprintf(gw->state_error, sizeof(gw->state_error), "%s", err.detail);
		gw->state_retry_ms = now_ms + STATE_RETRY_MS;
		return;
	}
	pthread_mutex_lock(&gw->lock);
	gw->shared = next;
	pthread_mutex_unlock(&gw->lock);
	if (next->degraded[0])
		log_private(next);
	else
		log_warn(NULL, "state: %s: %s; re-opened", gw->state_path, why);
	shared_unref(cur);	/* unmapped when the last request using it ends */
	gw->state_error[0] = '\0';
	gw->state_retry_ms = 0;
}

void
gateway_state_degraded(const struct shared *sh, char *out, size_t n)
{
	struct gw_error err;

	if (sh->degraded[0])
		snprintf(out, n, "state file: %s", sh->degraded);
	else if (state_broken(sh->state, &err))
		snprintf(out, n, "state file: %s (being re-opened)", err.detail);
	else
		out[0] = '\0';
}

int
gateway_state_health(struct shared *sh, int64_t now_s, int64_t *since_s, char *out, size_t n)
{
	gateway_state_degraded(sh, out, n);
	*since_s = sh->opened_s;
	if (out[0] == '\0')
		return METRICS_UP;
	if (!sh->degraded[0])	/* broken after it was mapped */
		*since_s = broken_since(sh, now_s);
	return METRICS_DOWN;
}

void
gateway_state_note(const struct config *cfg, char *out, size_t n)
{
	struct gw_error err = { GW_OK, 0, "" };
	struct state_layout lay;
	char path[4096], where[320];
	size_t size, want;
	int len;

	if (cfg->state)
		snprintf(path, sizeof(path), "%s", cfg->state);
	else if (state_default_path(path, sizeof(path), 0, &err) < 0) {
		snprintf(out, n, "%s\n", err.detail);
		return;
	}
	len = snprintf(out, n, "state: %s%s\n", path, cfg->state ? "" : " (the default)");
	if (cfg->redis_on && len > 0 && (size_t)len < n) {	/* never its credentials */
		url_redis_where(&cfg->redis, where, sizeof(where));
		len += snprintf(out + len, n - (size_t)len, "shared store: Redis at %s, database %d%s "
		    "(rate limits and ended sessions%s; redis-fail = %s)\n", where,
		    cfg->redis.db, cfg->redis.password ? ", with AUTH" : "",
		    cfg->shared_cache ? ", accepted tokens" : "",
		    cfg->redis_fail == REDIS_FAIL_OPEN ? "open" : "closed");
	}
	layout_of(cfg, &lay);
	want = lay.region[GW_REGION_CACHE].size;
	if (len > 0 && (size_t)len < n && state_peek(path, &lay, GW_REGION_CACHE, &size) == 0 && size != want)
		snprintf(out + len, n - (size_t)len, "note: the state file keeps its token cache of %zu entries: "
		    "cache-entries = %ld takes effect when it is built anew (stop every mcpgate process, then "
		    "remove it)\n", token_cache_region_entries(size), cfg->cache_entries);
}

json_t *
gateway_saved_catalog(const struct config *cfg, struct gw_error *err)
{
	struct state_layout lay;
	char path[4096];
	void *copy = NULL;
	size_t size;
	json_t *doc = NULL;

	if (cfg->state)
		snprintf(path, sizeof(path), "%s", cfg->state);
	else if (state_default_path(path, sizeof(path), 0, err) < 0)
		return NULL;
	layout_of(cfg, &lay);
	if (state_peek_region(path, &lay, GW_REGION_CATALOG, &copy, &size) < 0)
		gw_error_set(err, GW_ECONFIG, "no state file at %s that this user may read", path);
	else if ((doc = catalog_region_read(copy, size, cfg, err)) == NULL) {
		char words[sizeof(err->detail)];

		memcpy(words, err->detail, sizeof(words));
		gw_error_set(err, err->code, "%s: %s", path, words);
	}
	free(copy);
	return doc;
}

int
gateway_saved_region(const struct config *cfg, enum gw_region id, void **copy, size_t *size, unsigned char key[32],
    struct gw_error *err)
{
	struct state_layout lay;
	char path[4096];

	*copy = NULL;
	if (cfg->state)
		snprintf(path, sizeof(path), "%s", cfg->state);
	else if (state_default_path(path, sizeof(path), 0, err) < 0)
		return -1;
	layout_of(cfg, &lay);
	if (state_peek_region(path, &lay, id, copy, size) < 0 ||
	    (!cfg->has_session_key && state_peek_session_key(path, &lay, key) < 0)) {
		free(*copy);
		*copy = NULL;
		gw_error_set(err, GW_ECONFIG, "no state file at %s that this user may read", path);
		return -1;
	}
	if (cfg->has_session_key)
		memcpy(key, cfg->session_key, 32);
	return 0;
}

static void
log_warnings(const struct cfg_errors *errs)
{
	size_t i;

	for (i = 0; i < errs->n_warn; i++)
		log_warn(NULL, "config: %s", errs->warn[i]);
}

int
gateway_init(struct gateway *gw, const char *config_path, struct cfg_errors *errs)
{
	struct gw_error err = { GW_OK, 0, "" };

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
	log_warnings(errs);
	if ((gw->state_path = state_path_of(gw->cfg, &err)) != NULL)
		gw->shared = open_shared(gw->state_path, gw->cfg, NULL, &err);
	if (gw->shared == NULL)
		snprintf(gw->state_error, sizeof(gw->state_error), "%s; not serving without the host's "
		    "shared state (see the README, \"State file\")", err.detail[0] ? err.detail :
		    "state: out of memory");
	else if (gw->shared->degraded[0])
		log_private(gw->shared);
	return 0;
}

void
gateway_free(struct gateway *gw)
{
	shared_unref(gw->shared);
	gw->shared = NULL;
	free(gw->state_path);
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
			log_err(NULL, "config: %s", errs.err[i].detail);
		log_err(NULL, "config: reload of %s failed; keeping the previous configuration",
		    gw->config_path);
		if (force && (cur = gateway_config(gw)) != NULL) {
			reopen_log(cur);
			config_unref(cur);
		}
		return -1;
	}
	reopen_log(next);
	log_warnings(&errs);
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
gateway_session_key(const struct shared *sh, const struct config *cfg)
{
	if (cfg->has_session_key)
		return cfg->session_key;
	return sh ? state_session_key(sh->state) : NULL;
}

const unsigned char *
gateway_digest_key(const struct shared *sh, const struct config *cfg)
{
	if (cfg->redis_on)
		return cfg->shared_key;
	return sh ? state_digest_key(sh->state) : NULL;
}

struct rstore *
worker_rstore(const struct worker *w, const struct config *cfg)
{
	return cfg->redis_on ? w->rs : NULL;
}

int
worker_init(struct worker *w, struct gateway *gw)
{
	size_t i;
	int rc = 0;

	memset(w, 0, sizeof(*w));
	w->gw = gw;
	if ((w->rs = rstore_new(&gw->redis_outage)) == NULL)
		rc = -1;
	for (i = 0; i < REQ_SLOTS; i++)
		if ((w->slot[i] = worker_slots[i].make()) == NULL)
			rc = -1;
	return rc;
}

void
worker_end_sessions(struct worker *w)
{
	struct config *cfg = gateway_config(w->gw);
	size_t i;

	for (i = 0; i < REQ_SLOTS; i++)
		if (worker_slots[i].end && w->slot[i])
			worker_slots[i].end(w->slot[i], cfg);
	if (cfg)
		config_unref(cfg);
}

void
worker_free(struct worker *w)
{
	size_t i;

	for (i = 0; i < REQ_SLOTS; i++) {
		worker_slots[i].free(w->slot[i]);
		w->slot[i] = NULL;
	}
	rstore_free(w->rs);
	w->rs = NULL;
}
