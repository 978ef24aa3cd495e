/* limiter — keys, order and answers of the rate limits; the buckets are ratelimit.c's. */
#include "autoconf.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "jsonrpc.h"
#include "limiter.h"
#include "log.h"
#include "secret.h"

static const struct {
	const char *name;
	size_t cfg_off;		/* its struct rate in struct config ([limits]) */
	size_t tenant_off;	/* in struct cfg_tenant; 0: no override */
} classes[LIMIT_CLASSES] = {
	[LIMIT_GATEWAY] = { "gateway", offsetof(struct config, limit_gateway), 0 },
	[LIMIT_IP] = { "ip", offsetof(struct config, limit_ip), 0 },
	[LIMIT_TENANT] = { "tenant", offsetof(struct config, limit_tenant), offsetof(struct cfg_tenant, limit_tenant) },
	[LIMIT_TOKEN] = { "token", offsetof(struct config, limit_token), offsetof(struct cfg_tenant, limit_token) },
	[LIMIT_TOOL] = { "tool", offsetof(struct config, limit_tool), offsetof(struct cfg_tenant, limit_tool) },
};

const char *
limiter_class_name(enum limit_class c)
{
	return (unsigned)c < LIMIT_CLASSES ? classes[c].name : "?";
}

/* a is tighter than b: the lower steady rate n/per (n <= 10^9 and per <= 366 days, so
 * the products fit in 64 bits), then the smaller burst. */
static int
rate_tighter(const struct rate *a, const struct rate *b)
{
	int64_t x = (int64_t)a->n * b->per, y = (int64_t)b->n * a->per;

	return x < y || (x == y && a->burst < b->burst);
}

/* The tightest tool rate so far, and the group it is from (NULL: none yet). */
struct tightest {
	const struct rate *r;
	const struct cfg_group *g;
};

static int
tighter_group(const struct cfg_group *g, void *arg)
{
	struct tightest *k = arg;

	if (config_rate_on(&g->limit_tool) && (!config_rate_on(k->r) || rate_tighter(&g->limit_tool, k->r))) {
		k->r = &g->limit_tool;
		k->g = g;
	}
	return 0;
}

const struct rate *
limiter_rate(const struct config *cfg, const struct cfg_tenant *tn, enum limit_class c, const struct policy_tool *t,
    int *from_tenant, const struct cfg_group **from_group)
{
	struct tightest k = { (const struct rate *)((const char *)cfg + classes[c].cfg_off), NULL };
	const struct rate *r;
	int over = 0;

	if (tn && classes[c].tenant_off) {
		r = (const struct rate *)((const char *)tn + classes[c].tenant_off);
		if (r->per > 0) {
			k.r = r;
			over = 1;
		}
	}
	if (c == LIMIT_TOOL && t && cfg->group_limits)
		(void)policy_tool_groups(cfg, t, tighter_group, &k);
	if (from_tenant)
		*from_tenant = over && k.g == NULL;
	if (from_group)
		*from_group = k.g;
	return k.r;
}

/* The rate of class c for this request (of tool t): limiter_rate's. */
static const struct rate *
rate_of(const struct limiter *l, enum limit_class c, const struct policy_tool *t)
{
	return limiter_rate(l->cfg, l->tn, c, t, NULL, NULL);
}

void
limiter_init(struct limiter *l, struct ratelimit *rl, struct rstore *rs, const struct config *cfg,
    const unsigned char *digest_key, const struct request *req)
{
	struct netaddr client;

	memset(l, 0, sizeof(*l));
	l->rl = rl;
	l->rs = rs;
	if (rs && req->session_id) {	/* digest_key is the hosts' shared key then */
		session_tomb_key(digest_key, req->session_id, l->probe);
		l->probe_state = 1;
	}
	l->cfg = cfg;
	l->digest_key = digest_key;
	l->request_id = req->id;
	if (req->remote_addr && netaddr_client(req->remote_addr, req->forwarded_for,
	    cfg->trusted, cfg->n_trusted, &client) == 0) {
		netaddr_limit_key(&client, &l->ip);
		l->have_ip = 1;
	}
}

int
limiter_probed(const struct limiter *l, const unsigned char key[RSTORE_KEY_BYTES])
{
	if (l->probe_state != 2 || memcmp(l->probe, key, RSTORE_KEY_BYTES) != 0)
		return -1;
	return l->probe_seen;
}

void
limiter_caller(struct limiter *l, const char *tenant_claim, const unsigned char *token_key)
{
	l->tenant = tenant_claim[0] ? tenant_claim : "*";
	l->tn = l->cfg->n_tenants ? config_tenant(l->cfg, l->tenant) : NULL;
	memcpy(l->token, token_key, RL_KEY_BYTES);
	l->have_token = 1;
}

/* The bucket key of class c: a keyed digest of the class, the gateway (its resource and
 * issuer: gateways of one state file or of one Redis count apart) and its value. */
static void
key_of(const struct limiter *l, enum limit_class c, const struct policy_tool *tool, unsigned char key[RL_KEY_BYTES])
{
	struct secret_part p[5] = { { classes[c].name, strlen(classes[c].name) + 1 }, { l->cfg->bind, CFG_BIND_BYTES } };
	unsigned char d[32];
	size_t n = 2;

	switch (c) {
	case LIMIT_GATEWAY:
		break;
	case LIMIT_IP:
		p[n++] = (struct secret_part){ l->ip.b, sizeof(l->ip.b) };
		break;
	case LIMIT_TOKEN:
		p[n++] = (struct secret_part){ l->token, RL_KEY_BYTES };
		break;
	case LIMIT_TOOL:
		assert(tool != NULL);	/* the tool class is decided for a call, with its tool */
		p[n++] = (struct secret_part){ tool->name, strlen(tool->name) + 1 };
		/* FALLTHROUGH */
	case LIMIT_TENANT:
		p[n++] = (struct secret_part){ l->tenant, strlen(l->tenant) };
		break;
	default:
		break;
	}
	secret_keyed_digest_parts(l->digest_key, p, n, d);
	memcpy(key, d, RL_KEY_BYTES);
}

/* Class c is charged: it is on and its key is known. */
static int
applies(const struct limiter *l, enum limit_class c, const struct rate *r)
{
	if (!config_rate_on(r))
		return 0;
	switch (c) {
	case LIMIT_IP:
		return l->have_ip;
	case LIMIT_TENANT:
	case LIMIT_TOOL:
		return l->tenant != NULL;
	case LIMIT_TOKEN:
		return l->have_token;
	default:
		return 1;
	}
}

static void
log_refusal(const struct limiter *l, const struct rl_take *t)
{
	char id[9];

	snprintf(id, sizeof(id), "%02x%02x%02x%02x", t->key[0], t->key[1], t->key[2], t->key[3]);
	log_json(GW_LOG_INFO, json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I}",
	    "request_id", l->request_id, "event", "rate_limited", "class", classes[l->refused].name,
	    "key", id, "limit", (json_int_t)t->r.n, "window_s", (json_int_t)t->r.per,
	    "retry_after_s", (json_int_t)t->v.retry_s));
}

/* The classes of want (bits), in order, in one decision of the store (one round trip
 * with Redis): each charged until one refuses. */
static int
decide(struct limiter *l, unsigned want, const struct policy_tool *tool, int64_t now_ns)
{
	struct rl_take t[LIMIT_CLASSES];
	enum limit_class cls[LIMIT_CLASSES];
	const struct rate *r;
	size_t n = 0, i;
	int c, k;

	for (c = 0; c < LIMIT_CLASSES; c++) {
		if (!(want & (1u << c)) || !applies(l, (enum limit_class)c, r = rate_of(l, (enum limit_class)c, tool)))
			continue;
		key_of(l, (enum limit_class)c, tool, t[n].key);
		t[n].r = *r;
		cls[n++] = (enum limit_class)c;
	}
	if (n == 0)
		return LIMIT_PASS;
	if (l->rs) {
		struct rs_probe probe = { l->probe, -1 };

		k = rstore_take_all(l->rs, l->cfg, t, n, l->probe_state == 1 ? &probe : NULL, now_ns / 1000000);
		if (l->probe_state == 1) {
			l->probe_state = 2;
			l->probe_seen = probe.seen;
		}
	} else
		k = l->rl ? ratelimit_take_all(l->rl, t, n, now_ns) : -1;
	if (k < 0)	/* the store cannot answer: closed, unless Redis is to fail open */
		return l->rs && l->cfg->redis_fail == REDIS_FAIL_OPEN ? LIMIT_PASS : LIMIT_UNAVAILABLE;
	for (i = 0; i < n && i <= (size_t)k; i++)
		if (!l->shown || t[i].v.remaining < l->shown_v.remaining) {
			l->shown = 1;
			l->shown_class = cls[i];
			l->shown_rate = t[i].r;
			l->shown_v = t[i].v;
		}
	if ((size_t)k == n)
		return LIMIT_PASS;
	l->refused = cls[k];
	l->rate = t[k].r;
	l->v = t[k].v;
	log_refusal(l, &t[k]);
	return LIMIT_REFUSED;
}

#define BIT(c)		(1u << (c))
#define BEFORE_AUTH	(BIT(LIMIT_GATEWAY) | BIT(LIMIT_IP))
#define PER_REQUEST	(BIT(LIMIT_TENANT) | BIT(LIMIT_TOKEN))

/* What is owed goes with this decision. */
static int
decide_owed(struct limiter *l, unsigned want, const struct policy_tool *tool, int64_t now_ns)
{
	want |= l->owed;
	l->owed = 0;
	return decide(l, want, tool, now_ns);
}

/* A refusal that answers (a 429, a batch element's error) is counted by its class;
 * one at settling answers nothing. */
static int
answered(struct limiter *l, int rc)
{
	if (rc == LIMIT_REFUSED)
		metrics_limited(l->metrics, (unsigned)l->refused, classes[l->refused].name);
	return rc;
}

int
limiter_before_auth(struct limiter *l, int known, int64_t now_ns)
{
	if (known) {
		l->owed = BEFORE_AUTH;
		return LIMIT_PASS;
	}
	return answered(l, decide(l, BEFORE_AUTH, NULL, now_ns));
}

int
limiter_element(struct limiter *l, int first, int64_t now_ns)
{
	return answered(l, decide_owed(l, PER_REQUEST | (first ? 0 : BEFORE_AUTH), NULL, now_ns));
}

int
limiter_tool(struct limiter *l, const struct policy_tool *tool, int64_t now_ns)
{
	return answered(l, decide_owed(l, BIT(LIMIT_TOOL), tool, now_ns));
}

void
limiter_settle(struct limiter *l, int64_t now_ns)
{
	if (l->owed)
		(void)decide_owed(l, 0, NULL, now_ns);
}

void
limiter_error(const struct limiter *l, int rc, struct gw_error *err)
{
	if (rc != LIMIT_REFUSED) {
		gw_error_set(err, GW_ELIMITSTORE, "rate limits cannot be decided now (their store, %s, "
		    "does not answer); retry later", l->rs ? "Redis" : "the host's state file");
		return;
	}
	gw_error_set(err, GW_ERATELIMIT, "%s limit %ld per %ld s%s exceeded", classes[l->refused].name,
	    l->rate.n, l->rate.per, l->rate.burst ? " (with its burst)" : "");
}

json_t *
limiter_data(const struct limiter *l, int rc)
{
	if (rc != LIMIT_REFUSED)
		return NULL;
	return json_pack("{s:s, s:I, s:I, s:I, s:I}", "class", classes[l->refused].name,
	    "limit", (json_int_t)l->rate.n, "window", (json_int_t)l->rate.per,
	    "burst", (json_int_t)l->rate.burst, "retry_after", (json_int_t)l->v.retry_s);
}

void
limiter_answer(const struct limiter *l, int rc, int modern, json_t *id, struct response *resp)
{
	struct gw_error err;

	limiter_error(l, rc, &err);
	if (modern)
		response_set_json(resp, err_info(err.code)->status,
		    jsonrpc_error(id, gw_error_rpc(&err), err.detail, limiter_data(l, rc)));
	else
		response_set_error(resp, err.code, err.detail);
	response_set_header(resp, "Cache-Control", "no-store");
	limiter_headers(l, rc, resp);
}

void
limiter_headers(const struct limiter *l, int rc, struct response *resp)
{
	const struct rl_verdict *v = &l->shown_v;
	long r;

	if (rc == LIMIT_UNAVAILABLE)
		response_set_header(resp, "Retry-After", "1");
	if (rc == LIMIT_REFUSED)
		response_set_header(resp, "Retry-After", "%lld", (long long)l->v.retry_s);
	if (!l->shown)
		return;
	/* The quota of the window is n; a burst lets more pass at once from idle. */
	r = v->remaining > l->shown_rate.n ? l->shown_rate.n : (long)v->remaining;
	response_set_header(resp, "RateLimit-Policy", "\"%s\";q=%ld;w=%ld",
	    classes[l->shown_class].name, l->shown_rate.n, l->shown_rate.per);
	response_set_header(resp, "RateLimit", "\"%s\";r=%ld;t=%lld", classes[l->shown_class].name,
	    r, (long long)(v->limited ? v->retry_s : v->reset_s));
}
