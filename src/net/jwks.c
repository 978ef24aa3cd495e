/* jwks — the issuer's JWK set: fetched, mirrored in the state file, parsed per worker. */
#include "autoconf.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "cfgfile.h"
#include "clock.h"
#include "jwks.h"
#include "log.h"
#include "secret.h"
#include "state.h"

#define JWKS_MAGIC	0x4a574b31u	/* "JWK1" */
#define JWKS_WAIT_STEP_MS	5	/* polling another process's fetch */
#define JWKS_CLOCK_AHEAD_MS	60000	/* a fetch time further ahead than this is not believed */

struct jwks_region {
	pthread_mutex_t lock;
	uint32_t magic;
	uint32_t len;
	uint64_t gen;			/* of the document; random at init, so never reused */
	int64_t fetched_ms;		/* 0 = none */
	int64_t failed_ms;		/* the last failed fetch */
	int64_t forced_ms;		/* the last fetch for an unknown kid */
	int64_t busy_until_ms;		/* a fetch is under way until then */
	char source[JWKS_SOURCE_MAX];	/* where doc came from */
	char doc[JWS_SET_MAX];
};

/* What a fetch brought: the document (a new string) and its keys, and the parse's
 * word on them. */
struct fetched {
	char *doc;
	size_t len;
	struct jws_keys *keys;
	char why[GW_ERROR_DETAIL];
};

/* What the mirror told a worker, read under its lock. */
struct mirror {
	int mine;		/* it holds this source's keys */
	int stale;		/* older than jwks-ttl */
	int64_t fetched_ms;	/* when they were fetched */
	uint64_t gen;
	char *doc;		/* a copy when its generation is not the view's */
	size_t len;
};

const struct state_region jwks_region_def = {
	"jwks", sizeof(struct jwks_region), JWKS_MAGIC, offsetof(struct jwks_region, magic),
	offsetof(struct jwks_region, lock), 0, NULL, NULL, NULL, offsetof(struct jwks_region, gen),
};

void
jwks_view_free(struct jwks_view *v)
{
	jws_keys_free(v->keys);
	memset(v, 0, sizeof(*v));
}

/* Where this configuration's keys come from: jwks-uri, or the issuer's metadata. */
static void
source_of(const struct config *cfg, char *out, size_t n)
{
	if (cfg->jwks_uri)
		snprintf(out, n, "%s", cfg->jwks_uri);
	else
		snprintf(out, n, "issuer %s", cfg->issuer);
}

/* Takes the region's lock: 0, or -1 when it cannot be had or the region is no longer
 * ours. A dead owner may have left a document half-written: forgotten. */
static int
region_lock(struct jwks_region *r)
{
	int rc;

	if (r == NULL)
		return -1;
	if ((rc = state_region_lock(&r->lock, &r->magic, JWKS_MAGIC)) < 0)
		return -1;
	if (rc == 1 || r->len > sizeof(r->doc)) {
		r->fetched_ms = 0;
		r->busy_until_ms = 0;
		r->len = 0;
	}
	return 0;
}

/* The JWK set document: read from the file, or fetched from jwks-uri or the metadata's
 * jwks_uri. 0 with f->doc and its keys, or -1 with err (f->doc and f->keys NULL). A
 * JWK set without a usable key is one (what the issuer publishes: it may have withdrawn
 * every key): its keys are none, and f->why says so.
 * Long: the three places keys come from (a file, jwks-uri, the metadata's jwks_uri),
 * each with its own error, then the one parse. */
static int
fetch(const struct jwks_env *env, const struct config *cfg, int64_t now_ms, struct fetched *f,
    struct gw_error *err)
{
	char *doc = NULL, *why = f->why;
	size_t *len = &f->len, whylen = sizeof(f->why);
	const char *url = cfg->jwks_uri;
	struct gw_error perr = { GW_OK, 0, "" }, file;
	json_t *meta = NULL;
	struct buf b;
	struct stat st;
	long status;
	int fd, rc;

	f->doc = NULL;
	f->len = 0;
	f->keys = NULL;
	buf_init(&b, JWS_SET_MAX);
	if (cfg->jwks_file) {
		if ((fd = cfgfile_open(cfg->jwks_uri, &st, &file)) < 0) {
			gw_error_set(err, GW_EAUTHSERVER, "JWK set %s: %s", cfg->jwks_uri, file.detail);
			goto out;
		}
		/* Judged again at every read, as at load: keys another user may write are none. */
		if (cfgfile_judge(&st, CFGFILE_TRUSTED, &file) < 0) {
			gw_error_set(err, GW_EAUTHSERVER, "JWK set %s: %s", cfg->jwks_uri, file.detail);
			close(fd);
			goto out;
		}
		rc = cfgfile_read_all(fd, JWS_SET_MAX, &doc, len, &file);
		close(fd);
		if (rc != 0) {
			gw_error_set(err, GW_EAUTHSERVER, "JWK set %s: %s", cfg->jwks_uri,
			    rc > 0 ? "too large" : file.detail);
			free(doc);
			doc = NULL;
			goto out;
		}
	} else {
		if (url == NULL) {
			if (introspect_as_metadata(env->ix, env->asmeta, cfg, now_ms, &meta, err) < 0)
				goto out;
			url = json_string_value(json_object_get(meta, "jwks_uri"));
			if (!introspect_url_usable(cfg, url)) {
				gw_error_set(err, GW_EAUTHSERVER, "issuer metadata has no usable jwks_uri%s",
				    url ? " (http:// from an https:// issuer: refused)" : "");
				goto out;
			}
		}
		if ((status = introspect_get(env->ix, cfg, url, "JWK set", &b, err)) < 0)
			goto out;
		if (status != 200) {
			gw_error_set(err, GW_EAUTHSERVER, "JWK set at %s: HTTP %ld", url, status);
			goto out;
		}
		if ((doc = strndup(b.data ? b.data : "", b.len)) == NULL) {
			gw_error_set(err, GW_EAUTHSERVER, "out of memory");
			goto out;
		}
		*len = b.len;
	}
	f->keys = jws_keys_parse(doc, *len, &perr);
	snprintf(why, whylen, "%s", perr.detail);
	if (f->keys == NULL) {
		gw_error_set(err, GW_EAUTHSERVER, "JWK set from %s: %s", url ? url : cfg->jwks_uri, why);
		free(doc);
		doc = NULL;
	}
out:
	json_decref(meta);
	buf_free(&b);
	f->doc = doc;
	return doc ? 0 : -1;
}

/* What health says of the JWK set after a fetch: keys had (NULL: none had), usable or
 * not (never where from: health is public). */
static void
observe(const struct jwks_env *env, const struct jws_keys *keys, int64_t now_ms)
{
	const char *down = keys ? "the issuer's JWK set holds no usable key: every JWT is refused" :
	    "the JWK set could not be had (unreachable, an HTTP error, or not a JWK set)";

	metrics_observe(env->metrics, METRICS_DEP_JWKS, jws_keys_count(keys) > 0, now_ms / 1000, down);
}

/* What the log says of keys just fetched from src (why: the parse's word on them). */
static void
log_fetched(const char *rid, const struct jws_keys *keys, const char *src, const char *why, int unknown_kid)
{
	if (jws_keys_count(keys) == 0)
		log_warn(rid, "jwks: the JWK set from %s holds no usable key (%s): every JWT is refused until the "
		    "issuer publishes one", src, why);
	else
		log_info(rid, "jwks: %zu keys from %s%s", jws_keys_count(keys), src,
		    unknown_kid ? " (a token named a key the set lacked)" : "");
}

/* The view takes keys (parsed from generation gen), fetched at fetched_ms. */
static void
view_take(struct jwks_view *v, struct jws_keys *keys, uint64_t gen, int64_t fetched_ms)
{
	jws_keys_free(v->keys);
	v->keys = keys;
	v->gen = gen;
	v->keys_ms = fetched_ms;
}

/* The keys the view holds, unless nothing confirmed them for longer than jwks-max-age
 * (the issuer unreachable all along: it may have withdrawn them meanwhile): then none,
 * as when none were ever had (500 with Retry-After, never a 401). 0, or -1 with err. */
static int
held(const struct jwks_view *v, const struct config *cfg, int64_t now_ms, const struct jws_keys **keys,
    struct gw_error *err)
{
	if (now_ms - v->keys_ms > cfg->jwks_max_age * 1000 || v->keys_ms > now_ms + JWKS_CLOCK_AHEAD_MS) {
		gw_error_set(err, GW_EAUTHSERVER, "JWK set: the keys held were fetched %llds ago, older than "
		    "jwks-max-age (%lds), and none could be had since", (long long)((now_ms - v->keys_ms) / 1000),
		    cfg->jwks_max_age);
		return -1;
	}
	*keys = v->keys;
	return 0;
}

/* Reads the mirror, and claims the fetch when one is due and nobody is at it: 1 claimed,
 * 0 not, 2 another's fetch this request should wait for, -1 the region is unusable. */
static int
mirror_read(struct jwks_region *r, const struct config *cfg, const struct jwks_view *v, const char *src,
    const struct jwks_ask *ask, struct mirror *m)
{
	int64_t now_ms = ask->now_ms;
	int unknown_kid = ask->unknown_kid;
	int64_t ttl = cfg->jwks_ttl * 1000, gap = cfg->jwks_min_interval * 1000;
	int due, busy, claimed = 0;

	memset(m, 0, sizeof(*m));
	if (region_lock(r) < 0)
		return -1;
	m->mine = r->fetched_ms && strnlen(r->source, sizeof(r->source)) < sizeof(r->source) &&
	    strcmp(r->source, src) == 0 && r->len > 0;
	m->stale = !m->mine || now_ms - r->fetched_ms > ttl || r->fetched_ms > now_ms + JWKS_CLOCK_AHEAD_MS;
	m->fetched_ms = r->fetched_ms;
	m->gen = r->gen;
	/* A fetch for an unknown kid is bounded by jwks-min-interval alone; a scheduled one
	 * waits JWKS_RETRY_MS after a failure, so that a failing issuer is not hammered. */
	due = unknown_kid && (now_ms - r->forced_ms >= gap || r->forced_ms > now_ms);
	if (!due && m->stale)
		due = !(r->failed_ms && now_ms - r->failed_ms < JWKS_RETRY_MS && r->failed_ms <= now_ms);
	busy = r->busy_until_ms > now_ms;
	if (due && !busy) {
		r->busy_until_ms = now_ms + cfg->auth_timeout_ms + 500;
		if (unknown_kid)
			r->forced_ms = now_ms;
		claimed = 1;
	}
	if (m->mine && (m->gen != v->gen || v->keys == NULL) && (m->doc = malloc(r->len)) != NULL) {
		memcpy(m->doc, r->doc, r->len);
		m->len = r->len;
	}
	state_unlock(&r->lock);
	if (claimed)
		return 1;
	/* A fetch under way: the keys it brings are what this request needs when there are
	 * none, or when its token names a key the set lacks. */
	return busy && (!m->mine || unknown_kid) ? 2 : 0;
}

/* Stores what this worker's claimed fetch brought (doc NULL: it failed). */
static void
mirror_store(struct jwks_region *r, const char *src, int64_t now_ms, const char *doc, size_t len, uint64_t *gen)
{
	if (region_lock(r) < 0)
		return;
	r->busy_until_ms = 0;
	if (doc == NULL || len > sizeof(r->doc)) {
		r->failed_ms = now_ms;
	} else {
		memcpy(r->doc, doc, len);
		r->len = (uint32_t)len;
		snprintf(r->source, sizeof(r->source), "%s", src);
		r->gen++;
		r->fetched_ms = now_ms;
		r->failed_ms = 0;
		*gen = r->gen;
	}
	state_unlock(&r->lock);
}

/* Without a usable region: the view's own schedule, per worker. */
static int
private_keys(struct jwks_view *v, const struct jwks_env *env, const struct config *cfg,
    const struct jwks_ask *ask, struct gw_error *err)
{
	const char *rid = ask->rid;
	int64_t now_ms = ask->now_ms;
	int unknown_kid = ask->unknown_kid;
	char src[JWKS_SOURCE_MAX];
	struct fetched f;
	int due;

	due = unknown_kid && now_ms - v->forced_ms >= cfg->jwks_min_interval * 1000;
	if (!due && (v->keys == NULL || now_ms - v->fetched_ms > cfg->jwks_ttl * 1000))
		due = !(v->failed_ms && now_ms - v->failed_ms < JWKS_RETRY_MS && v->failed_ms <= now_ms);
	if (!due)
		return v->keys ? 0 : (gw_error_set(err, GW_EAUTHSERVER, "JWK set unavailable (recent failure)"), -1);
	if (unknown_kid)
		v->forced_ms = now_ms;
	fetch(env, cfg, now_ms, &f, err);
	observe(env, f.keys, now_ms);
	if (f.doc == NULL) {
		v->failed_ms = now_ms;
		if (v->keys)
			log_warn(rid, "jwks: %s; the keys fetched before are used", err->detail);
		return v->keys ? 0 : -1;
	}
	free(f.doc);
	source_of(cfg, src, sizeof(src));
	log_fetched(rid, f.keys, src, f.why, unknown_kid);
	view_take(v, f.keys, 0, now_ms);
	v->fetched_ms = now_ms;
	v->failed_ms = 0;
	return 0;
}

/* Long: where a worker's keys come from, in order (its own parsed view while fresh,
 * the host's mirror, waiting for another worker's fetch, a fetch of its own, the keys
 * held): one decision read from top to bottom. */
int
jwks_keys(struct jwks_view *v, const struct jwks_env *env, const struct config *cfg,
    const struct jwks_ask *ask, const struct jws_keys **keys, struct gw_error *err)
{
	struct jwks_ask a = *ask;	/* its time and kid move on while it waits */
	const char *rid = a.rid;
	char src[JWKS_SOURCE_MAX];
	struct gw_error perr = { GW_OK, 0, "" };
	int64_t deadline = a.now_ms + cfg->auth_timeout_ms + 1000;
	struct jws_keys *fresh = NULL;
	struct mirror m = { 0 };
	struct fetched f;
	uint64_t gen = 0;
	int st;

	*keys = NULL;
	source_of(cfg, src, sizeof(src));
	if (strcmp(v->source, src) != 0) {	/* a reload changed where keys come from */
		jwks_view_free(v);
		snprintf(v->source, sizeof(v->source), "%s", src);
	}
	if (v->keys && !a.unknown_kid && v->checked_ms <= a.now_ms && a.now_ms - v->checked_ms < JWKS_LOOK_MS)
		return held(v, cfg, a.now_ms, keys, err);	/* looked a moment ago */
	v->checked_ms = a.now_ms;
	while ((st = mirror_read(env->region, cfg, v, src, &a, &m)) == 2 && a.now_ms < deadline) {
		struct timespec ts = { 0, JWKS_WAIT_STEP_MS * 1000000L };

		free(m.doc);
		nanosleep(&ts, NULL);
		a.now_ms = clock_wall_ms();
		a.unknown_kid = 0;	/* the fetch under way is the one it asked for */
	}
	if (st < 0) {
		if (private_keys(v, env, cfg, &a, err) < 0)
			return -1;
		return held(v, cfg, a.now_ms, keys, err);
	}
	if (m.doc) {	/* the mirror holds a generation this worker has not parsed */
		if ((fresh = jws_keys_parse(m.doc, m.len, &perr)) != NULL)
			view_take(v, fresh, m.gen, m.fetched_ms);
		else
			log_err(rid, "jwks: the mirrored JWK set does not parse: %s", perr.detail);
		free(m.doc);
	} else if (m.mine && m.gen == v->gen) {
		v->keys_ms = m.fetched_ms;	/* (a generation is fetched once: this is its time) */
	}
	if (st == 1) {
		fetch(env, cfg, a.now_ms, &f, err);
		observe(env, f.keys, a.now_ms);
		if (f.doc != NULL) {
			mirror_store(env->region, src, a.now_ms, f.doc, f.len, &gen);
			view_take(v, f.keys, gen, a.now_ms);
			log_fetched(rid, f.keys, src, f.why, a.unknown_kid);
			free(f.doc);
		} else {
			mirror_store(env->region, src, a.now_ms, NULL, 0, &gen);
			if (v->keys)
				log_warn(rid, "jwks: %s; the keys fetched before are used", err->detail);
		}
	}
	if (v->keys == NULL) {
		if (st != 1)
			gw_error_set(err, GW_EAUTHSERVER, "JWK set unavailable (%s)",
			    st == 2 ? "another fetch is still under way" : "a fetch failed moments ago");
		return -1;
	}
	return held(v, cfg, a.now_ms, keys, err);
}
