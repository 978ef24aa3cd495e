/* router — {path, methods, handler, flags} rows and one gate:
 * route → OPTIONS preflight → method (405 + Allow) → Origin → body size → gateway and ip
 * limits → auth → (not a POST) tenant and token limits → handler → public-document
 * headers (CORS, Cache-Control, ETag / 304). */
#include "autoconf.h"

#include <string.h>
#include <strings.h>

#include "auth.h"
#include "clock.h"
#include "handlers.h"
#include "limiter.h"
#include "log.h"
#include "mcp.h"
#include "router.h"
#include "secret.h"

enum route_flags {
	R_DOC = 1 << 1,		/* cacheable document: Cache-Control, ETag, If-None-Match */
	R_BODY = 1 << 3,	/* carries a body capped by max-body */
	R_AUTH = 1 << 4,	/* needs a bearer token */
	R_SESSION_GET = 1 << 5,	/* GET with an Mcp-Session-Id opens its stream; without, 405 */
};

/* Which web pages may read a route's answers (CORS), one rule a route. */
enum route_cors {
	/* Not for browsers: no CORS headers, and a request carrying an Origin (a page's
	 * fetch, or a form's POST) is refused, 403 forbidden_origin. */
	CORS_NONE,
	CORS_ANY,	/* a public document: any page may read it (Access-Control-Allow-Origin: *) */
	/* The resource's own origin and allowed-origins, reflected (Vary: Origin); a
	 * request from any other is refused, 403 forbidden_origin. */
	CORS_ALLOWED,
	/* A page a browser navigates to (the connect page): no CORS headers (no page may read
	 * its answers), and an Origin is not refused (a navigation may carry one). */
	CORS_PAGE,
};

struct route {
	const char *path;
	unsigned methods;	/* M_* bits; HEAD and OPTIONS are implied */
	route_fn *fn;
	unsigned flags;
	enum route_cors cors;
};

static const struct route routes[] = {
	/* GET: a caller's standalone stream needs its session (R_SESSION_GET). */
	{ "/mcp", M_POST | M_DELETE, h_mcp, R_BODY | R_AUTH | R_SESSION_GET, CORS_ALLOWED },
	{ "/mcp/health", M_GET, h_health, 0, CORS_ANY },
	{ "/.well-known/mcp", M_GET, h_mcp_metadata, R_DOC, CORS_ANY },
	{ "/.well-known/oauth-protected-resource", M_GET, h_protected_resource, R_DOC, CORS_ANY },
	{ "/.well-known/oauth-protected-resource/mcp", M_GET, h_protected_resource, R_DOC, CORS_ANY },
	{ "/.well-known/oauth-authorization-server", M_GET, h_authorization_server, R_DOC, CORS_ANY },
	{ "/server.json", M_GET, h_server_json, R_DOC, CORS_ANY },
};

#define DOC_CACHE_CONTROL	"public, max-age=300"
#define CORS_ALLOW_HEADERS	"Authorization, DPoP, Content-Type, MCP-Protocol-Version, Mcp-Session-Id, Last-Event-ID, Mcp-Method, Mcp-Name"
#define CORS_EXPOSE_HEADERS	"Mcp-Session-Id, WWW-Authenticate, X-Request-Id, Retry-After, RateLimit, RateLimit-Policy"

/* The metadata URL a challenge names follows the resource's path (RFC 9728 §3.1),
 * e.g. /.well-known/oauth-protected-resource/cgi-bin/mcpgate/mcp. */
static const struct route prm_route = {
	NULL, M_GET, h_protected_resource, R_DOC, CORS_ANY
};
/* [metrics] path, when the configuration has [metrics]: for the addresses it allows,
 * and never for a web page (one opened on an allowed address would read it). */
static const struct route metrics_route = {
	NULL, M_GET, h_metrics, 0, CORS_NONE
};

/* [gateway] connect-path, when an upstream keeps people's connections (user-oauth). */
static const struct route connect_route = {
	NULL, M_GET | M_POST, h_connect, R_BODY, CORS_PAGE
};

/* Its Client ID Metadata Document: connect-path + "/client". */
static const struct route client_document_route = {
	NULL, M_GET, h_client_document, R_DOC, CORS_ANY
};

#define N_ROUTES	(sizeof(routes) / sizeof(routes[0]))
/* The index of each route in the metrics: the rows, then these. */
enum { ROUTE_PRM = N_ROUTES, ROUTE_METRICS, ROUTE_CONNECT, ROUTE_CLIENT_DOCUMENT, ROUTE_NONE };
_Static_assert(ROUTE_NONE < METRICS_ROUTES, "every route has its counters");

/* The route of path, or NULL; *ix its index in the metrics, *label its label there. */
static const struct route *
route_find(const struct config *cfg, const char *path, unsigned *ix, const char **label)
{
	size_t i;

	for (i = 0; i < N_ROUTES; i++)
		if (strcmp(routes[i].path, path) == 0) {
			*ix = (unsigned)i;
			*label = routes[i].path;
			return &routes[i];
		}
	if (cfg && strcmp(cfg->prm_path, path) == 0) {
		*ix = ROUTE_PRM;
		*label = cfg->prm_path;
		return &prm_route;
	}
	if (cfg && cfg->metrics_on && strcmp(cfg->metrics_path, path) == 0) {
		*ix = ROUTE_METRICS;
		*label = cfg->metrics_path;
		return &metrics_route;
	}
	if (cfg && cfg->user_oauth && strcmp(cfg->connect_path, path) == 0) {
		*ix = ROUTE_CONNECT;
		*label = cfg->connect_path;
		return &connect_route;
	}
	if (cfg && cfg->user_oauth && strcmp(cfg->client_document_path, path) == 0) {
		*ix = ROUTE_CLIENT_DOCUMENT;
		*label = cfg->client_document_path;
		return &client_document_route;
	}
	*ix = ROUTE_NONE;
	*label = "none";
	return NULL;
}

static unsigned
route_methods(const struct route *rt)
{
	unsigned m = rt->methods | M_OPTIONS;

	if (m & M_GET)
		m |= M_HEAD;
	return m;
}

static void
allow_list(unsigned m, char *out, size_t n)
{
	static const struct {
		unsigned bit;
		const char *name;
	} order[] = {
		{ M_GET, "GET" }, { M_HEAD, "HEAD" }, { M_POST, "POST" },
		{ M_DELETE, "DELETE" }, { M_OPTIONS, "OPTIONS" },
	};
	size_t i, k, len = 0;

	out[0] = '\0';
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (!(m & order[i].bit))
			continue;
		k = strlen(order[i].name);
		if (len + 2 + k >= n)
			break;
		if (len > 0) {
			memcpy(out + len, ", ", 2);
			len += 2;
		}
		memcpy(out + len, order[i].name, k + 1);
		len += k;
	}
}

int
router_origin_allowed(const struct config *cfg, const char *origin)
{
	size_t i;

	if (strcasecmp(origin, cfg->origin) == 0)
		return 1;
	for (i = 0; i < cfg->allowed_origins.n; i++)
		if (strcmp(cfg->allowed_origins.v[i], "*") == 0 ||
		    strcasecmp(cfg->allowed_origins.v[i], origin) == 0)
			return 1;
	return 0;
}

/* Does If-None-Match (a list of entity tags, or *) match etag? Weak comparison. */
static int
etag_matches(const char *inm, const char *etag)
{
	const char *p = inm;
	size_t elen = strlen(etag);

	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '*')
			return 1;
		if (p[0] == 'W' && p[1] == '/')
			p += 2;
		if (strncmp(p, etag, elen) == 0 && (p[elen] == '\0' || p[elen] == ',' ||
		    p[elen] == ' ' || p[elen] == '\t'))
			return 1;
		while (*p && *p != ',')
			p++;
	}
	return 0;
}

static void
finish_document(const struct request *req, struct response *resp)
{
	char hex[33], etag[40];

	if (resp->status != 200 || response_serialize(resp) < 0)
		return;
	if (!response_get_header(resp, "Cache-Control"))
		response_set_header(resp, "Cache-Control", DOC_CACHE_CONTROL);
	secret_digest_hex(resp->body.data, resp->body.len, hex, 16);
	snprintf(etag, sizeof(etag), "\"%s\"", hex);
	response_set_header(resp, "ETag", "%s", etag);
	if (req->if_none_match && etag_matches(req->if_none_match, etag))
		response_set_empty(resp, 304);
}

/* CORS for route rt, by its rule: the headers every answer carries, the Origin check,
 * the preflight. 1 when that answered the request (403, or 204 to OPTIONS), else 0. */
static int
cors(const struct route *rt, const struct config *cfg, const struct request *req, const char *allow,
    struct response *resp)
{
	switch (rt->cors) {
	case CORS_PAGE:
	case CORS_NONE:
		if (req->origin && rt->cors == CORS_NONE) {
			response_set_error(resp, GW_EORIGIN, "This endpoint is not for web pages: no Origin is allowed");
			return 1;
		}
		if (req->method == M_OPTIONS) {
			response_set_empty(resp, 204);
			response_set_header(resp, "Allow", "%s", allow);
			return 1;
		}
		return 0;
	case CORS_ANY:
		response_set_header(resp, "Access-Control-Allow-Origin", "*");
		break;
	case CORS_ALLOWED:
		if (req->origin && !router_origin_allowed(cfg, req->origin)) {
			response_set_header(resp, "Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
			response_set_error(resp, GW_EORIGIN, "Origin is not allowed for this endpoint");
			return 1;
		}
		if (req->origin) {
			response_set_header(resp, "Access-Control-Allow-Origin", "%s", req->origin);
			response_set_header(resp, "Vary", "Origin");
		}
		break;
	}
	response_set_header(resp, "Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
	if (req->method == M_OPTIONS) {
		response_set_empty(resp, 204);
		response_set_header(resp, "Allow", "%s", allow);
		response_set_header(resp, "Access-Control-Allow-Methods", "%s", allow);
		response_set_header(resp, "Access-Control-Allow-Headers", CORS_ALLOW_HEADERS);
		response_set_header(resp, "Access-Control-Max-Age", "86400");
		return 1;
	}
	return 0;
}

/* A limit refused the request (rc): the answer, in the revision's form. */
static void
limited(const struct limiter *lim, int rc, const struct request *req, struct response *resp)
{
	int modern = req->protocol_version && strcmp(req->protocol_version, MCP_MODERN_VERSION) == 0;

	limiter_answer(lim, rc, modern, json_null(), resp);
}

/* The caller's token, and before it, when limits are on, the limits decided before
 * auth (docs/ARCHITECTURE.md §8). auth's slot of rc holds its environment for this
 * call only. 0 with *caller, or -1 answered. */
static void
auth_env_of(const struct req_ctx *rc, struct auth_env *env)
{
	struct worker *w = rc->w;
	struct auth_thread *th = worker_auth(w);
	const struct config *cfg = rc->cfg;

	*env = (struct auth_env){
		th->ix, rc->sh->tokens, rc->sh->asmeta, gateway_digest_key(rc->sh, cfg),
		cfg->shared_cache ? worker_rstore(w, cfg) : NULL, &th->jwks, rc->sh->jwks, rc->sh->replay,
		worker_rstore(w, cfg), th->proof_keys, rc->sh->metrics,
	};
}

int
router_verify_token(struct req_ctx *rc, const char *tok, size_t len, struct caller *caller, struct gw_error *err)
{
	struct auth_env env;
	int ret;

	auth_env_of(rc, &env);
	rc->slot[REQ_SLOT_AUTH] = &env;
	ret = auth_verify_token(rc, tok, len, caller, err);
	rc->slot[REQ_SLOT_AUTH] = NULL;
	return ret;
}

static int
authenticate(struct req_ctx *rc, struct caller *caller, struct limiter *lim)
{
	struct worker *w = rc->w;
	const struct config *cfg = rc->cfg;
	struct auth_env env;
	int known = 0, rc_limit, ret = -1;

	auth_env_of(rc, &env);

	rc->slot[REQ_SLOT_AUTH] = &env;
	if (cfg->limits_on) {
		/* A caller the token cache knows reaches nothing before its limits are
		 * decided, all in one decision of the store (limiter.h). */
		known = auth_cached(rc, caller);
		limiter_init(lim, rc->sh->limits, worker_rstore(w, cfg), cfg, env.digest_key, rc->req);
		lim->metrics = cfg->metrics_on ? rc->sh->metrics : NULL;
		if ((rc_limit = limiter_before_auth(lim, known, clock_mono_us() * 1000)) != LIMIT_PASS) {
			limited(lim, rc_limit, rc->req, rc->resp);
			goto out;
		}
		limiter_headers(lim, LIMIT_PASS, rc->resp);
	}
	if (!known && auth_authenticate(rc, caller) < 0) {
		response_set_header(rc->resp, "Cache-Control", "no-store");
		goto out;
	}
	ret = 0;
out:
	rc->slot[REQ_SLOT_AUTH] = NULL;	/* env ends with this call */
	return ret;
}

/* The caller of a route that needs one: its token and its rate limits, in their order
 * (docs/ARCHITECTURE.md §8). 0 with *caller (and rc->lim = lim, when limits are on, for
 * the rest of the request), or -1 with the answer made. */
static int
gate(struct req_ctx *rc, struct caller *caller, struct limiter *lim)
{
	int rc_limit;

	if (authenticate(rc, caller, lim) < 0)
		return -1;
	if (!rc->cfg->limits_on)
		return 0;
	rc->lim = lim;
	limiter_caller(lim, caller->claims.tenant, caller->token_key);
	/* A POST pays per JSON-RPC request (mcp.c); the others once. */
	if (rc->req->method != M_POST &&
	    (rc_limit = limiter_element(lim, 1, clock_mono_us() * 1000)) != LIMIT_PASS) {
		limited(lim, rc_limit, rc->req, rc->resp);
		return -1;
	}
	limiter_headers(lim, LIMIT_PASS, rc->resp);
	return 0;
}

/* The checks of rt before its caller is known, in their order (docs/ARCHITECTURE.md
 * §1): 1 with the answer made, or 0. */
static int
refused(const struct route *rt, const struct req_ctx *rc)
{
	const struct config *cfg = rc->cfg;
	const struct request *req = rc->req;
	struct response *resp = rc->resp;
	char allow[64];

	allow_list(route_methods(rt), allow, sizeof(allow));
	if (cfg == NULL) {
		response_set_error(resp, GW_ECONFIG, NULL);
		return 1;
	}
	if (rc->sh == NULL) {	/* never a silent private fallback: the log says why */
		response_set_error(resp, GW_EINTERNAL, "the shared state file is unavailable");
		return 1;
	}
	if (cors(rt, cfg, req, allow, resp))
		return 1;
	if (!(route_methods(rt) & req->method) &&
	    !(req->method == M_GET && (rt->flags & R_SESSION_GET) && req->session_id)) {
		response_set_error(resp, GW_EMETHOD, NULL);
		response_set_header(resp, "Allow", "%s", allow);
		return 1;
	}
	if ((rt->flags & R_BODY) && req->content_length == -2) {
		response_set_error(resp, GW_EBADREQUEST, "Content-Length is not a number");
		return 1;
	}
	if ((rt->flags & R_BODY) && req->content_length > cfg->max_body) {
		response_set_error(resp, GW_ETOOLARGE, "request body exceeds max-body");
		return 1;
	}
	return 0;
}

static void
dispatch(struct req_ctx *rc, unsigned *route_ix, const char **route_label)
{
	struct caller caller;
	struct limiter lim;
	const struct route *rt;

	if ((rt = route_find(rc->cfg, rc->req->path, route_ix, route_label)) == NULL) {
		/* Readable cross-origin, so a browser client can report the request id. */
		response_set_header(rc->resp, "Access-Control-Allow-Origin", "*");
		response_set_header(rc->resp, "Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
		response_set_error(rc->resp, GW_ENOTFOUND, NULL);
		return;
	}
	if (refused(rt, rc))
		return;
	if (rt->flags & R_AUTH) {
#ifdef MCPGATE_BENCH_NO_AUTH
		/* Built only by bench/ as the baseline of the auth benchmark: the same request
		 * with no token check. configure never sets this; a shipped binary checks. */
		memset(&caller, 0, sizeof(caller));
		(void)gate, (void)lim;
#else
		if (gate(rc, &caller, &lim) < 0)
			return;
#endif
		rc->caller = &caller;
	}

	rc->resp->headers_only = rc->req->method == M_HEAD;
	rt->fn(rc);
	if (rc->lim)
		limiter_settle(rc->lim, clock_mono_us() * 1000);
	rc->lim = NULL;
	rc->caller = NULL;
	if (rt->flags & R_DOC)
		finish_document(rc->req, rc->resp);
}

void
router_dispatch(struct worker *w, const struct config *cfg, struct request *req,
    struct response *resp)
{
	/* The shared state the whole request uses, even if the tick swaps in another. */
	struct req_ctx rc = { .w = w, .sh = gateway_shared(w->gw), .cfg = cfg, .req = req, .resp = resp };
	unsigned route = 0;
	const char *label = NULL;

	rstore_observe(w->rs, rc.sh ? rc.sh->metrics : NULL);	/* health: whether Redis answered */
	dispatch(&rc, &route, &label);
	if (cfg && cfg->metrics_on && rc.sh)
		metrics_request(rc.sh->metrics, route, label, resp->status);
	rstore_observe(w->rs, NULL);
	shared_unref(rc.sh);
}

void
router_serve(struct worker *w, struct request *req, struct sink *out)
{
	struct response resp;
	struct config *cfg;
	struct log_line line;
	int64_t dur;

	cfg = gateway_config(w->gw);
	response_init(&resp, req->id);
	resp.sink = out;
	router_dispatch(w, cfg, req, &resp);
	/* A body the answer did not need is read first (at most max-body; a larger one was
	 * refused unread with 413): an answer that overtakes the body the front is still
	 * sending can stall in Apache's mod_proxy_fcgi. */
	if (cfg && req->content_length > 0 && req->content_length <= cfg->max_body)
		request_drain_body(req, (size_t)cfg->max_body);
	response_send(&resp, out);
	dur = clock_mono_us() - req->start_us;
	log_line_begin(&line, GW_LOG_INFO);
	log_line_str(&line, "request_id", req->id);
	log_line_str(&line, "method", req->method_name);
	log_line_str(&line, "path", req->path);
	log_line_int(&line, "status", resp.status);
	log_line_int(&line, "duration_us", dur);
	if (req->remote_addr)
		log_line_str(&line, "remote_addr", req->remote_addr);
	if (out->failed)
		log_line_true(&line, "client_gone");
	log_line_end(&line);
	response_free(&resp);
	config_unref(cfg);
}
