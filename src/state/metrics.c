/* metrics — counters, histograms and dependency states in the state file (the contract
 * is in metrics.h). */
#include "autoconf.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "state.h"

#define M_MAGIC		0x4d455431u	/* "MET1" */
#define OTHER_TOOL	METRICS_TOOLS	/* the slot index of "other" */
#define OTHER_UP	METRICS_UPSTREAMS

/* The statuses counted each on its own; any other is "other" (the last). */
static const int statuses[] = {
	200, 202, 204, 304, 400, 401, 403, 404, 405, 406, 413, 415, 429, 500, 502, 503, 504,
};
#define N_STATUSES	(sizeof(statuses) / sizeof(statuses[0]) + 1)

/* Upper bounds of the latency buckets, in microseconds; the last bucket is +Inf. */
static const int64_t bounds_us[] = {
	1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000,
};
#define N_BUCKETS	(sizeof(bounds_us) / sizeof(bounds_us[0]) + 1)

static const char *const outcomes[METRICS_OUTCOMES] = { "allowed", "denied", "error", "invalid", "held" };
static const char *const jwt_outcomes[METRICS_JWT_OUTCOMES] = { "accepted", "refused", "error" };
static const char *const cred_outcomes[METRICS_CRED_OUTCOMES] = { "cached", "obtained", "refreshed", "refused",
	"failed", "connected", "disconnected", "dropped" };

/* Every counter is written with __atomic adds and read with __atomic loads. */
struct m_hist {
	uint64_t n[N_BUCKETS];	/* per bucket, not cumulative: the scrape adds them up */
	uint64_t sum_us;
};

struct m_name {
	uint32_t used;		/* __atomic: 1 once name is written (release) */
	uint32_t hash;
	char name[METRICS_NAME_MAX];
};

/* A dependency's last observed state: since (s) << 2 | state, changed by CAS; the
 * detail is written by whoever made the change (readers clean it up). */
struct m_dep {
	uint64_t word;
	char detail[METRICS_DETAIL_MAX];
};

struct m_region {
	uint32_t magic;
	uint32_t pad;
	pthread_mutex_t lock;	/* claims of name slots */
	struct m_name route_name[METRICS_ROUTES];	/* the labels of indexed counters */
	struct m_name method_name[METRICS_METHODS];
	struct m_name class_name[METRICS_CLASSES];
	uint64_t requests[METRICS_ROUTES][N_STATUSES];
	uint64_t rpc[METRICS_METHODS];
	uint64_t limited[METRICS_CLASSES];
	uint64_t cache[2];	/* misses, hits */
	struct m_hist introspection;
	uint64_t introspection_errors;
	uint64_t jwt[METRICS_JWT_OUTCOMES];
	struct m_name tool_name[METRICS_TOOLS];
	uint64_t tool[METRICS_TOOLS + 1][METRICS_OUTCOMES];
	struct m_name up_name[METRICS_UPSTREAMS];
	struct m_hist up_time[METRICS_UPSTREAMS + 1];
	uint64_t up_errors[METRICS_UPSTREAMS + 1];
	uint64_t up_cred[METRICS_UPSTREAMS + 1][METRICS_CRED_OUTCOMES];
	struct m_dep up_dep[METRICS_UPSTREAMS];
	struct m_dep dep[METRICS_DEPS];
};

struct metrics {
	struct m_region *r;
};

const struct state_region metrics_region_def = {
	"metrics", sizeof(struct m_region), M_MAGIC, offsetof(struct m_region, magic),
	offsetof(struct m_region, lock), 0, NULL, NULL, NULL, 0,
};

struct metrics *
metrics_attach(void *region, size_t size)
{
	struct metrics *m;

	if (region == NULL || size != sizeof(struct m_region))
		return NULL;
	if ((m = malloc(sizeof(*m))) != NULL)
		m->r = region;
	return m;
}

void
metrics_detach(struct metrics *m)
{
	free(m);
}

/* The region, when it is still ours; a region written over counts against its mapping. */
static struct m_region *
region(struct metrics *m)
{
	if (m == NULL)
		return NULL;
	return state_owned(&m->r->magic, M_MAGIC) ? m->r : NULL;
}

static void
add(uint64_t *p, uint64_t n)
{
	__atomic_add_fetch(p, n, __ATOMIC_RELAXED);
}

static uint64_t
get(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void
hist_add(struct m_hist *h, int64_t us)
{
	size_t i;

	if (us < 0)
		us = 0;
	for (i = 0; i < N_BUCKETS - 1 && us > bounds_us[i]; i++)
		;
	add(&h->n[i], 1);
	add(&h->sum_us, (uint64_t)us);
}

/* --- name slots ---------------------------------------------------------------------- */

/* A name that may have a slot: printable ASCII, short enough. Length, or 0. */
static size_t
name_ok(const char *s, size_t max)
{
	size_t n;

	for (n = 0; n < max && s[n]; n++)
		if ((unsigned char)s[n] < 0x21 || (unsigned char)s[n] > 0x7e)
			return 0;
	return n < max ? n : 0;
}

static uint32_t
hash_of(const char *s, size_t n)
{
	uint32_t h = 2166136261u;	/* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/* Probes slots[0..n) for name (len bytes, hash h) from its home: its index, or -(free
 * slot index) - 1 at the first unused slot, or n when the probe went round. Slots are
 * never freed, so an unused one ends the search. */
static long
probe(struct m_name *slots, size_t n, const char *name, size_t len, uint32_t h)
{
	struct m_name *s;
	size_t i, at;

	for (i = 0; i < n; i++) {
		at = (h + i) % n;
		s = &slots[at];
		if (!__atomic_load_n(&s->used, __ATOMIC_ACQUIRE))
			return -(long)at - 1;
		if (s->hash == h && memcmp(s->name, name, len + 1) == 0)
			return (long)at;
	}
	return (long)n;
}

/* The slot of name in slots[0..n): found, claimed (claim), or n ("other"; also for a
 * name that may not have one). -1 when not found and not claimed. */
static long
slot_of(struct m_region *r, struct m_name *slots, size_t n, const char *name, int claim)
{
	size_t len = name ? name_ok(name, METRICS_NAME_MAX) : 0;
	uint32_t h;
	long at;

	if (len == 0)
		return (long)n;
	h = hash_of(name, len);
	if ((at = probe(slots, n, name, len, h)) >= 0)
		return at;
	if (!claim)
		return -1;
	if (state_lock(&r->lock) < 0)
		return (long)n;
	/* Again under the lock: another process may have claimed it meanwhile. An unused
	 * slot a dead claimer left half written is taken like any other. */
	if ((at = probe(slots, n, name, len, h)) < 0) {
		at = -at - 1;
		slots[at].hash = h;
		memcpy(slots[at].name, name, len + 1);
		__atomic_store_n(&slots[at].used, 1, __ATOMIC_RELEASE);
	}
	state_unlock(&r->lock);
	return at;
}

/* The label of index i, written by its first count (later ones only look). */
static void
label_set(struct m_region *r, struct m_name *slot, const char *label)
{
	size_t len;

	if (__atomic_load_n(&slot->used, __ATOMIC_ACQUIRE) || label == NULL ||
	    (len = name_ok(label, METRICS_NAME_MAX)) == 0 || state_lock(&r->lock) < 0)
		return;
	if (!__atomic_load_n(&slot->used, __ATOMIC_ACQUIRE)) {
		memcpy(slot->name, label, len + 1);
		__atomic_store_n(&slot->used, 1, __ATOMIC_RELEASE);
	}
	state_unlock(&r->lock);
}

/* --- counting ------------------------------------------------------------------------ */

void
metrics_request(struct metrics *m, unsigned route, const char *label, int status)
{
	struct m_region *r = region(m);
	size_t i;

	if (r == NULL || route >= METRICS_ROUTES)
		return;
	label_set(r, &r->route_name[route], label);
	for (i = 0; i < N_STATUSES - 1 && statuses[i] != status; i++)
		;
	add(&r->requests[route][i], 1);
}

/* One count of index i of an indexed family with n counters, labelled. */
static void
count_indexed(struct m_region *r, struct m_name *names, uint64_t *counters, unsigned n, unsigned i,
    const char *label)
{
	if (i >= n)
		return;
	label_set(r, &names[i], label);
	add(&counters[i], 1);
}

void
metrics_rpc(struct metrics *m, unsigned method, const char *label)
{
	struct m_region *r = region(m);

	if (r)
		count_indexed(r, r->method_name, r->rpc, METRICS_METHODS, method, label);
}

void
metrics_limited(struct metrics *m, unsigned cls, const char *label)
{
	struct m_region *r = region(m);

	if (r)
		count_indexed(r, r->class_name, r->limited, METRICS_CLASSES, cls, label);
}

void
metrics_token_cache(struct metrics *m, int hit)
{
	struct m_region *r = region(m);

	if (r)
		add(&r->cache[hit != 0], 1);
}

void
metrics_introspection(struct metrics *m, int64_t us, int ok)
{
	struct m_region *r = region(m);

	if (r == NULL)
		return;
	hist_add(&r->introspection, us);
	if (!ok)
		add(&r->introspection_errors, 1);
}

void
metrics_jwt(struct metrics *m, enum metrics_jwt o)
{
	struct m_region *r = region(m);

	if (r && (unsigned)o < METRICS_JWT_OUTCOMES)
		add(&r->jwt[o], 1);
}

void
metrics_tool(struct metrics *m, const char *tool, enum metrics_outcome o)
{
	struct m_region *r = region(m);
	long at;

	if (r == NULL || (unsigned)o >= METRICS_OUTCOMES)
		return;
	at = slot_of(r, r->tool_name, METRICS_TOOLS, tool, 1);
	add(&r->tool[at][o], 1);
}

void
metrics_upstream(struct metrics *m, const char *upstream, int64_t us, int ok)
{
	struct m_region *r = region(m);
	long at;

	if (r == NULL)
		return;
	at = slot_of(r, r->up_name, METRICS_UPSTREAMS, upstream, 1);
	hist_add(&r->up_time[at], us);
	if (!ok)
		add(&r->up_errors[at], 1);
}

void
metrics_credential(struct metrics *m, const char *upstream, enum metrics_cred o)
{
	struct m_region *r = region(m);

	if (r == NULL || (unsigned)o >= METRICS_CRED_OUTCOMES)
		return;
	add(&r->up_cred[slot_of(r, r->up_name, METRICS_UPSTREAMS, upstream, 1)][o], 1);
}

/* --- dependencies ------------------------------------------------------------------- */

static void
observe(struct m_dep *d, int ok, int64_t now_s, const char *detail)
{
	uint64_t want = ok ? METRICS_UP : METRICS_DOWN;
	uint64_t old = __atomic_load_n(&d->word, __ATOMIC_ACQUIRE);
	size_t n;

	if ((old & 3) == want)
		return;
	if (now_s < 0)
		now_s = 0;
	if (!__atomic_compare_exchange_n(&d->word, &old, (uint64_t)now_s << 2 | want, 0, __ATOMIC_ACQ_REL,
	    __ATOMIC_ACQUIRE))
		return;	/* another request made the change first */
	n = ok || detail == NULL ? 0 : strnlen(detail, sizeof(d->detail) - 1);
	memcpy(d->detail, ok || detail == NULL ? "" : detail, n);
	d->detail[n] = '\0';
}

/* A record as it may be shown: its state, since (0 when unknown or ahead of now), and
 * its detail cut to printable ASCII. */
static int
read_dep(const struct m_dep *d, int64_t now_s, int64_t *since_s, char *detail, size_t n)
{
	uint64_t w = __atomic_load_n(&d->word, __ATOMIC_ACQUIRE);
	int state = (int)(w & 3);
	size_t i;

	*since_s = (int64_t)(w >> 2);
	if (state != METRICS_UP && state != METRICS_DOWN)
		state = METRICS_UNKNOWN;
	if (state == METRICS_UNKNOWN || *since_s > now_s + 60)	/* a clock gone back, or garbage */
		*since_s = 0;
	if (n == 0)
		return state;
	for (i = 0; state == METRICS_DOWN && i + 1 < n && i < sizeof(d->detail) && d->detail[i]; i++)
		detail[i] = d->detail[i] >= 0x20 && d->detail[i] < 0x7f ? d->detail[i] : '?';
	detail[i] = '\0';
	return state;
}

void
metrics_observe(struct metrics *m, enum metrics_dep dep, int ok, int64_t now_s, const char *detail)
{
	struct m_region *r = region(m);

	if (r && (unsigned)dep < METRICS_DEPS)
		observe(&r->dep[dep], ok, now_s, detail);
}

void
metrics_observe_upstream(struct metrics *m, const char *upstream, int ok, int64_t now_s, const char *detail)
{
	struct m_region *r = region(m);
	long at;

	if (r == NULL || (at = slot_of(r, r->up_name, METRICS_UPSTREAMS, upstream, 1)) >= METRICS_UPSTREAMS)
		return;
	observe(&r->up_dep[at], ok, now_s, detail);
}

int
metrics_dep_state(struct metrics *m, enum metrics_dep dep, int64_t now_s, int64_t *since_s, char *detail,
    size_t n)
{
	struct m_region *r = region(m);

	*since_s = 0;
	if (n)
		detail[0] = '\0';
	if (r == NULL || (unsigned)dep >= METRICS_DEPS)
		return METRICS_UNKNOWN;
	return read_dep(&r->dep[dep], now_s, since_s, detail, n);
}

int
metrics_upstream_state(struct metrics *m, const char *upstream, int64_t now_s, int64_t *since_s, char *detail,
    size_t n)
{
	struct m_region *r = region(m);
	long at;

	*since_s = 0;
	if (n)
		detail[0] = '\0';
	if (r == NULL || (at = slot_of(r, r->up_name, METRICS_UPSTREAMS, upstream, 0)) < 0 ||
	    at >= METRICS_UPSTREAMS)
		return METRICS_UNKNOWN;
	return read_dep(&r->up_dep[at], now_s, since_s, detail, n);
}

/* --- the scrape ----------------------------------------------------------------------- */

/* A slot's name as a label value: printable ASCII within the slot, with \ and " escaped;
 * NULL when the slot is unused or holds anything else. */
static const char *
label_of(const struct m_name *s, char *out, size_t n)
{
	char name[METRICS_NAME_MAX];
	size_t len, i, o = 0;

	if (!__atomic_load_n(&s->used, __ATOMIC_ACQUIRE))
		return NULL;
	memcpy(name, s->name, sizeof(name));
	if ((len = name_ok(name, sizeof(name))) == 0)
		return NULL;
	for (i = 0; i < len && o + 3 < n; i++) {
		if (name[i] == '\\' || name[i] == '"')
			out[o++] = '\\';
		out[o++] = name[i];
	}
	out[o] = '\0';
	return out;
}

static int
family(struct buf *out, const char *name, const char *type, const char *help)
{
	return buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static uint64_t
hist_count(const struct m_hist *h)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < N_BUCKETS; i++)
		n += get(&h->n[i]);
	return n;
}

/* One histogram's lines; labels is "" or `name="value"`. */
static int
hist_lines(struct buf *out, const char *name, const char *labels, const struct m_hist *h)
{
	const char *sep = *labels ? "," : "", *open = *labels ? "{" : "", *close = *labels ? "}" : "";
	uint64_t cum = 0;
	size_t i;
	int rc = 0;

	for (i = 0; i < N_BUCKETS; i++) {
		cum += get(&h->n[i]);
		if (i < N_BUCKETS - 1)
			rc |= buf_printf(out, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep,
			    (double)bounds_us[i] / 1e6, (unsigned long long)cum);
		else
			rc |= buf_printf(out, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep,
			    (unsigned long long)cum);
	}
	/* The count is the buckets' total, so the two always agree. */
	rc |= buf_printf(out, "%s_sum%s%s%s %.6f\n", name, open, labels, close, (double)get(&h->sum_us) / 1e6);
	rc |= buf_printf(out, "%s_count%s%s%s %llu\n", name, open, labels, close, (unsigned long long)cum);
	return rc;
}

/* A label and the n values it takes, one a counter of a row. */
struct label_words {
	const char *key;
	const char *const *words;
	size_t n;
};

/* The samples of a family with two labels for one value of the first (k1 = v1): one a
 * counter of v[0..second->n) that is not zero, its second label second->key =
 * second->words[j]. */
static int
render_row(struct buf *out, const char *fam, const char *k1, const char *v1, const struct label_words *second,
    const uint64_t *v)
{
	uint64_t c;
	size_t j;
	int rc = 0;

	for (j = 0; j < second->n; j++)
		if ((c = get(&v[j])) > 0)
			rc |= buf_printf(out, "%s{%s=\"%s\",%s=\"%s\"} %llu\n", fam, k1, v1, second->key,
			    second->words[j], (unsigned long long)c);
	return rc;
}

static int
render_requests(const struct m_region *r, struct buf *out)
{
	const char *fam = "mcpgate_http_requests_total", *route, *words[N_STATUSES];
	const struct label_words status = { "status", words, N_STATUSES };
	char label[2 * METRICS_NAME_MAX], text[N_STATUSES][8];
	size_t rt, s;
	int rc = family(out, fam, "counter", "HTTP requests answered, by route and status.");

	for (s = 0; s < N_STATUSES - 1; s++) {
		snprintf(text[s], sizeof(text[s]), "%d", statuses[s]);
		words[s] = text[s];
	}
	words[s] = "other";
	for (rt = 0; rt < METRICS_ROUTES; rt++)
		if ((route = label_of(&r->route_name[rt], label, sizeof(label))) != NULL)
			rc |= render_row(out, fam, "route", route, &status, r->requests[rt]);
	return rc;
}

/* The counters of an indexed family with one label (when its index has one). */
static int
render_indexed(const uint64_t *v, const struct m_name *names, size_t n, const char *fam, const char *key,
    struct buf *out)
{
	char label[2 * METRICS_NAME_MAX];
	const char *name;
	size_t i;
	int rc = 0;

	for (i = 0; i < n; i++)
		if ((name = label_of(&names[i], label, sizeof(label))) != NULL)
			rc |= buf_printf(out, "%s{%s=\"%s\"} %llu\n", fam, key, name, (unsigned long long)get(&v[i]));
	return rc;
}

static int
render_tools(const struct m_region *r, struct buf *out)
{
	const char *fam = "mcpgate_tool_calls_total", *name;
	const struct label_words outcome = { "outcome", outcomes, METRICS_OUTCOMES };
	char label[2 * METRICS_NAME_MAX];
	size_t i;
	int rc = family(out, fam, "counter", "tools/call requests, by tool and outcome: allowed (answered), "
	    "denied (by the policy or a rate limit), error (failed, or a tool the catalog lacks: other), invalid "
	    "(arguments that do not satisfy the tool's inputSchema).");

	for (i = 0; i <= METRICS_TOOLS; i++)
		if ((name = i < METRICS_TOOLS ? label_of(&r->tool_name[i], label, sizeof(label)) : "other") != NULL)
			rc |= render_row(out, fam, "tool", name, &outcome, r->tool[i]);
	return rc;
}

static int
render_upstreams(const struct m_region *r, int64_t now_s, struct buf *out)
{
	const char *hist = "mcpgate_upstream_request_duration_seconds", *name;
	char label[2 * METRICS_NAME_MAX], labels[2 * METRICS_NAME_MAX + 16], detail[1];
	int64_t since;
	size_t i;
	const struct label_words cred = { "outcome", cred_outcomes, METRICS_CRED_OUTCOMES };
	int st, rc = family(out, hist, "histogram", "Requests to upstream MCP servers (calls, not catalog "
	    "fetches), by upstream: time to the answer or the failure.");

	for (i = 0; i <= METRICS_UPSTREAMS; i++) {
		if ((name = i < METRICS_UPSTREAMS ? label_of(&r->up_name[i], label, sizeof(label)) : "other") == NULL ||
		    hist_count(&r->up_time[i]) == 0)
			continue;
		snprintf(labels, sizeof(labels), "upstream=\"%s\"", name);
		rc |= hist_lines(out, hist, labels, &r->up_time[i]);
	}
	rc |= family(out, "mcpgate_upstream_errors_total", "counter",
	    "Requests to upstream MCP servers that failed (refused, timed out, broken answers), by upstream.");
	for (i = 0; i <= METRICS_UPSTREAMS; i++)
		if ((name = i < METRICS_UPSTREAMS ? label_of(&r->up_name[i], label, sizeof(label)) : "other") != NULL &&
		    get(&r->up_errors[i]) > 0)
			rc |= buf_printf(out, "mcpgate_upstream_errors_total{upstream=\"%s\"} %llu\n", name,
			    (unsigned long long)get(&r->up_errors[i]));
	rc |= family(out, "mcpgate_upstream_credentials_total", "counter",
	    "Tokens the gateway obtains for upstreams (credentials = exchange, client-credentials, id-jag) and people's "
	    "connected accounts (user-oauth), by upstream and how each call had its token: cached (or a connection's), "
	    "obtained (a token exchange or the client_credentials grant), refreshed, refused (by the authorization "
	    "server), failed (the token endpoint); and connections made, disconnected, and dropped (refused or "
	    "unusable: the person is asked again).");
	for (i = 0; i <= METRICS_UPSTREAMS; i++)
		if ((name = i < METRICS_UPSTREAMS ? label_of(&r->up_name[i], label, sizeof(label)) : "other") != NULL)
			rc |= render_row(out, "mcpgate_upstream_credentials_total", "upstream", name, &cred, r->up_cred[i]);
	rc |= family(out, "mcpgate_upstream_up", "gauge",
	    "1 when the last call or catalog fetch of an upstream succeeded, 0 when it failed (upstreams observed).");
	for (i = 0; i < METRICS_UPSTREAMS; i++)
		if ((name = label_of(&r->up_name[i], label, sizeof(label))) != NULL &&
		    (st = read_dep(&r->up_dep[i], now_s, &since, detail, 0)) != METRICS_UNKNOWN)
			rc |= buf_printf(out, "mcpgate_upstream_up{upstream=\"%s\"} %d\n", name, st == METRICS_UP);
	return rc;
}

int
metrics_render(struct metrics *m, int64_t now_s, struct buf *out)
{
	const struct m_region *r = region(m);
	size_t i;
	int rc = 0;

	if (r == NULL)
		return 0;
	rc |= render_requests(r, out);
	rc |= family(out, "mcpgate_jsonrpc_requests_total", "counter",
	    "JSON-RPC requests, by method (a method the gateway does not know: other).");
	rc |= render_indexed(r->rpc, r->method_name, METRICS_METHODS, "mcpgate_jsonrpc_requests_total", "method", out);
	rc |= render_tools(r, out);
	rc |= family(out, "mcpgate_token_cache_hits_total", "counter",
	    "Token checks answered by the host's token cache (accepted or refused before).");
	rc |= buf_printf(out, "mcpgate_token_cache_hits_total %llu\n", (unsigned long long)get(&r->cache[1]));
	rc |= family(out, "mcpgate_token_cache_misses_total", "counter",
	    "Token checks the token cache could not answer (then introspected, or verified as a JWT).");
	rc |= buf_printf(out, "mcpgate_token_cache_misses_total %llu\n", (unsigned long long)get(&r->cache[0]));
	rc |= family(out, "mcpgate_introspection_duration_seconds", "histogram",
	    "Token introspections at the authorization server: time to the answer or the failure.");
	rc |= hist_lines(out, "mcpgate_introspection_duration_seconds", "", &r->introspection);
	rc |= family(out, "mcpgate_introspection_errors_total", "counter",
	    "Token introspections that failed (the authorization server unreachable, slow or broken).");
	rc |= buf_printf(out, "mcpgate_introspection_errors_total %llu\n",
	    (unsigned long long)get(&r->introspection_errors));
	rc |= family(out, "mcpgate_jwt_verifications_total", "counter",
	    "JWT access tokens verified here (on a token cache miss), by outcome: accepted, refused (signature, "
	    "claims, a key the issuer does not publish), error (no keys: the JWK set could not be had).");
	for (i = 0; i < METRICS_JWT_OUTCOMES; i++)
		rc |= buf_printf(out, "mcpgate_jwt_verifications_total{outcome=\"%s\"} %llu\n", jwt_outcomes[i],
		    (unsigned long long)get(&r->jwt[i]));
	rc |= render_upstreams(r, now_s, out);
	rc |= family(out, "mcpgate_rate_limited_total", "counter",
	    "Requests (and batch elements) refused by a rate limit (429), by class.");
	rc |= render_indexed(r->limited, r->class_name, METRICS_CLASSES, "mcpgate_rate_limited_total", "class", out);
	return rc < 0 ? -1 : 0;
}
