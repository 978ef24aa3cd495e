/* limiter — the rate limits of one request (docs/ARCHITECTURE.md §8): the five classes,
 * whose bucket each request is charged to, the order, and what a refusal looks like.
 *
 * Classes and keys (each a keyed digest: never a token, an address or a name):
 *   gateway  one bucket for the whole gateway
 *   ip       the client address (netaddr_client: X-Forwarded-For only from a trusted
 *            proxy), an IPv6 client by its /64
 *   tenant   the caller's tenant claim ("*" for tokens without one, like the policy)
 *   token    the token (a digest of its cache key)
 *   tool     a tools/call's tool name within the caller's tenant
 * Order: gateway and ip before authentication (a flood never reaches the authorization
 * server or the token cache); tenant and token after it, once per JSON-RPC request (a
 * batch element is a request of its own, and pays gateway and ip too beyond the first);
 * tool when the policy has allowed the call. A tenant's limit-tenant, limit-token and
 * limit-tool replace [limits]'s for its callers. A [group]'s limit-tool applies to the
 * tools it holds (policy_tool_groups) when it is tighter than that: of the tool rate
 * and the limit-tool of each group holding the tool, the tightest wins (a group never
 * loosens a limit; it may set one where there is none). The bucket stays the tool's
 * within the tenant, whichever rate applies. A refusal charges nothing further;
 * what earlier classes took stays taken (a refused request was still a request).
 * When the buckets cannot be read (the state file's locks keep failing) the request
 * is refused with 503 and Retry-After: limits fail closed. */
#ifndef GW_LIMITER_H
#define GW_LIMITER_H

#include <jansson.h>
#include <stdint.h>

#include "config.h"
#include "err.h"
#include "metrics.h"
#include "netaddr.h"
#include "policy.h"
#include "ratelimit.h"
#include "request.h"
#include "response.h"
#include "rstore.h"
#include "session.h"

enum limit_class { LIMIT_GATEWAY, LIMIT_IP, LIMIT_TENANT, LIMIT_TOKEN, LIMIT_TOOL, LIMIT_CLASSES };

#define LIMIT_PASS		0
#define LIMIT_REFUSED		1
#define LIMIT_UNAVAILABLE	(-1)

struct limiter {
	struct ratelimit *rl;		/* the host's buckets; NULL: none to be had */
	struct rstore *rs;		/* the Redis store; NULL: the buckets are rl's */
	struct metrics *metrics;	/* where refusals are counted ([metrics]); NULL: not */
	const struct config *cfg;
	const unsigned char *digest_key;	/* the host's (state file) */
	const char *request_id;
	struct netaddr ip;		/* the client, its limit key (netaddr_limit_key) */
	int have_ip;
	const char *tenant;		/* the tenant bucket's name; NULL before the caller is known */
	const struct cfg_tenant *tn;	/* its section: the overrides; may be NULL */
	unsigned char token[RL_KEY_BYTES];
	int have_token;
	unsigned owed;			/* classes (bits) to be decided with the next decision */
	/* With Redis: the tombstone of the request's session, asked in the round trip of
	 * its first decision. probe_state: 0 none, 1 to ask, 2 asked (probe_seen: 1, 0;
	 * -1 no answer). */
	unsigned char probe[RSTORE_KEY_BYTES];
	int probe_state, probe_seen;
	/* The tightest decision so far (fewest remaining), for the RateLimit headers. */
	int shown;
	enum limit_class shown_class;
	struct rate shown_rate;
	struct rl_verdict shown_v;
	/* The refusal: its class, rate and verdict. */
	enum limit_class refused;
	struct rate rate;
	struct rl_verdict v;
};

const char *limiter_class_name(enum limit_class c);
/* The rate of class c for the callers of tenant tn (NULL: no [tenant] of that name):
 * its limit-tenant, limit-token or limit-tool when it sets one, else [limits]'s (a
 * tenant's limit-gateway and limit-ip are not read: those are taken before the caller
 * is known); for LIMIT_TOOL and a tool t (may be NULL: none), the limit-tool of a
 * [group] holding t instead when it is tighter (the lower n/per, then the smaller
 * burst; off is the loosest), the first such group in the file among equals.
 * *from_tenant (may be NULL): 1 when the tenant's override applies; *from_group (may
 * be NULL): the group whose limit-tool applies, else NULL. */
const struct rate *limiter_rate(const struct config *cfg, const struct cfg_tenant *tn, enum limit_class c,
    const struct policy_tool *t, int *from_tenant, const struct cfg_group **from_group);
/* For a request: the client address from REMOTE_ADDR and X-Forwarded-For. The buckets
 * are Redis's when rs is not NULL, else rl's; rl may be NULL (then any limit that is on
 * fails closed). */
void limiter_init(struct limiter *l, struct ratelimit *rl, struct rstore *rs, const struct config *cfg,
    const unsigned char *digest_key, const struct request *req);
/* Whether the request's session (its Mcp-Session-Id's tombstone key) was found ended
 * by the round trip of its first decision: 1, 0, or -1 when that was not asked or not
 * answered (no decision yet, the state file's buckets, Redis not answering). */
int limiter_probed(const struct limiter *l, const unsigned char key[RSTORE_KEY_BYTES]);
/* The authenticated caller: its tenant claim ("" = none) and its token's key. */
void limiter_caller(struct limiter *l, const char *tenant_claim, const unsigned char *token_key);

/* LIMIT_PASS, LIMIT_REFUSED (l says which class and when), or LIMIT_UNAVAILABLE.
 * known: the caller is already known without the network (auth_cached): then gateway
 * and ip are owed, and decided with tenant and token in the first element's decision
 * (one round trip to a Redis store), in the same order. */
int limiter_before_auth(struct limiter *l, int known, int64_t now_ns);
/* One JSON-RPC request of the caller: tenant and token, and gateway and ip unless it
 * is the first of its HTTP request (those were taken before authentication). */
int limiter_element(struct limiter *l, int first, int64_t now_ns);
/* A tools/call the policy allowed (or any, without a policy): t's name and upstream
 * (whose groups may set its rate, limiter_rate). */
int limiter_tool(struct limiter *l, const struct policy_tool *t, int64_t now_ns);
/* At the end of the request: what is still owed (an answer made before the first
 * element's decision, say a 400) is charged; a refusal no longer changes the answer. */
void limiter_settle(struct limiter *l, int64_t now_ns);

/* The error of rc (LIMIT_REFUSED: 429 naming the class and its window, e.g. "token
 * limit 120 per 60 s exceeded"; LIMIT_UNAVAILABLE: 503). Logs a refusal (class, the
 * key's digest, the limit, retry-after). */
void limiter_error(const struct limiter *l, int rc, struct gw_error *err);
/* The facts of a refusal for a JSON-RPC error's data: {class, limit, window, burst,
 * retry_after}; NULL for LIMIT_UNAVAILABLE. */
json_t *limiter_data(const struct limiter *l, int rc);
/* The whole answer to a refused HTTP request: 429 (or 503), an HttpError body, or for
 * 2026-07-28 (modern) the JSON-RPC error body with id, and the headers. */
void limiter_answer(const struct limiter *l, int rc, int modern, json_t *id, struct response *resp);
/* RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers) for the
 * tightest class this request met, and Retry-After after a refusal. */
void limiter_headers(const struct limiter *l, int rc, struct response *resp);

#endif
