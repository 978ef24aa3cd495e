/* explain — `mcpgate explain [-c FILE] --claims JSON [--tool NAME] [--json]`
 * (docs/ARCHITECTURE.md §2): which tools a caller with these introspection claims sees,
 * and for each hidden tool the first failing step of docs/ARCHITECTURE.md §4 with the
 * configuration line that decided it; with --tool, that one decision and the
 * rate limits of such a call: each class's effective rate for the caller, the line it
 * comes from, and what its bucket is keyed by (never a token: explain has none), and,
 * when its upstream's tokens are obtained, whether one is cached for this caller (the
 * markers of the state file, read without mapping it: credential_json).
 *
 * The catalog is fetched from the configured upstreams as one gateway worker would
 * (no state file: this process's own copy); an upstream that fails is left out with a
 * note, as the gateway leaves it out. The decisions are policy_decide's, the very
 * function tools/list and tools/call use, so what explain says is what the gateway
 * does. Made for an operator's CI job: exit 0 when explained, 2 when --tool names a
 * tool the caller may not call (or no tool of the catalog), 1 on a usage, claims or
 * configuration error (configuration errors as FILE:LINE: key: reason), and 1 when an
 * upstream asked live did not answer (the answer, printed all the same, lacks its
 * tools: a CI job must not pass on it). */
#include "autoconf.h"

#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "catalog_store.h"
#include "clock.h"
#include "explain.h"
#include "gateway.h"
#include "jwt.h"
#include "limiter.h"
#include "pinning.h"
#include "policy.h"
#include "secret.h"
#include "session.h"
#include "str.h"
#include "upcred.h"
#include "upstream.h"

#define EXPLAIN_NOTES	16

struct explain {
	const struct config *cfg;
	const char *config_path;
	const char *tool;		/* --tool, or NULL */
	int as_json;
	struct claims claims;
	struct policy_caller pc;
	json_t *notes;			/* strings, also printed on stderr in text mode */
};

static void note(struct explain *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
note(struct explain *x, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (json_array_size(x->notes) < EXPLAIN_NOTES)
		json_array_append_new(x->notes, json_string(msg));
}

/* The claims policy reads, from an introspection-like object (or a JWT's payload), read by auth.c's own
 * auth_claims_read (a scope claim that is neither a string nor an array is an error here). The token's own acceptance
 * (active, exp, aud, ...) is step 1, auth's: it only gives a note here. 0, or -1 with
 * *why. */
static int
claims_from_json(struct explain *x, json_t *j, const char **why)
{
	const struct config *cfg = x->cfg;
	struct claims *c = &x->claims;
	json_t *v;
	static struct gw_error err;	/* its detail is *why: one call, in one thread */
	struct claims scratch;
	size_t i;

	memset(c, 0, sizeof(*c));
	if (!json_is_object(j))
		return *why = "--claims must be a JSON object (an introspection response)", -1;
	/* What the gateway would ignore, an operator should hear about. */
	if ((v = json_object_get(j, cfg->scope_claim)) != NULL && !json_is_string(v) && !json_is_array(v))
		return *why = "the scope claim must be a string of space-separated scopes or an array of them", -1;
	if (auth_claims_read(cfg, j, c, &err) < 0)
		return *why = err.detail, -1;
	/* Step 1, for what it is worth: a full introspection response is checked as
	 * auth.c would; a bare claims object only for required-scopes. */
	if (json_object_get(j, "active") && auth_check_claims(cfg, j, (int64_t)clock_wall(), &scratch, &err) < 0)
		note(x, "step 1: the token would be refused (%s): every /mcp request is 401", err.detail);
	else if (!json_object_get(j, "active") && json_object_get(j, "iss") && cfg->verify != VERIFY_INTROSPECTION &&
	    jwt_check_claims(cfg, j, (int64_t)clock_wall(), &scratch, &err) < 0)	/* a JWT's payload */
		note(x, "step 1: a JWT with these claims would be refused (%s): every /mcp request is 401", err.detail);
	for (i = 0; i < cfg->required_scopes.n; i++)
		if (!str_has_word(c->scope, cfg->required_scopes.v[i]))
			note(x, "step 1: the token lacks required scope %s: every POST /mcp is 403 insufficient_scope",
			    cfg->required_scopes.v[i]);
	return 0;
}

/* What an upstream receives as its callers' credentials (its credentials key). */
static const char *
credentials_word(const struct cfg_upstream *u)
{
	static const char *const words[] = { "", "none", "static", "exchange", "client-credentials", "id-jag",
	    "user-oauth" };

	return u == NULL || u->credentials < 1 || u->credentials > UP_CRED_USER_OAUTH ? "" : words[u->credentials];
}

/* Whether a token for up, whose tokens the gateway obtains, is cached for this caller
 * (the gateway's own, whoever the caller, for client-credentials), as the host's state
 * file says (its markers: upcred_cached_until), into the decision o:
 * "credential_cached" (true, false, or null when the file cannot be read, with
 * "credential_unknown" saying why) and "credential_until" (RFC 3339, or null). Read,
 * never written: nothing is obtained here. */
static void
credential_json(const struct explain *x, const struct cfg_upstream *up, json_t *o)
{
	struct upcred u = { 0 };
	struct gw_error err = { GW_OK, 0, "" };
	unsigned char key[32];
	char who[33], when[32];
	void *copy = NULL;
	size_t size = 0;
	int64_t until = 0;
	int rc = -1;

	if (gateway_saved_region(x->cfg, GW_REGION_CREDS, &copy, &size, key, &err) == 0) {
		session_who(x->cfg->bind, x->claims.subject, x->claims.client_id, x->claims.tenant, who);
		u.cfg = x->cfg;
		u.key = key;
		u.caller_who = who;
		upcred_bind(&u);
		if ((rc = upcred_cached_until(&u, up, copy, size, clock_wall_ms(), &until)) < 0)
			gw_error_set(&err, GW_ECONFIG, "the state file's credential cache could not be read");
		upcred_clear(&u);
		secret_wipe(key, sizeof(key));
	}
	json_object_set_new(o, "credential_for", json_string(up->credentials == UP_CRED_CLIENT ? "gateway" : "caller"));
	json_object_set_new(o, "credential_cached", rc < 0 ? json_null() : json_boolean(rc == 1));
	if (rc == 1)
		clock_rfc3339((time_t)(until / 1000), when, sizeof(when));
	json_object_set_new(o, "credential_until", rc == 1 ? json_string(when) : json_null());
	if (rc < 0)
		json_object_set_new(o, "credential_unknown", json_string(err.detail));
	free(copy);
}

/* Whether this caller (its claims' subject) has connected their account at up, a
 * user-oauth upstream, as the state file's vault says: "connected" (true, false, or null
 * with "connection_unknown" saying why) and "connected_since" (RFC 3339, or null). Read,
 * never written. */
static void
connection_json(const struct explain *x, const struct cfg_upstream *up, json_t *o)
{
	struct upcred u = { 0 };
	struct gw_error err = { GW_OK, 0, "" };
	unsigned char key[32], name[VAULT_NAME_BYTES];
	char *sealed = malloc(VAULT_VALUE_MAX), when[32];
	struct vault_tokens t = { 0 };
	enum vault_status st = VAULT_UNAVAILABLE;
	void *copy = NULL;
	size_t size = 0;

	if (x->cfg->redis_on) {
		gw_error_set(&err, GW_ECONFIG, "connections are kept in the Redis store, which explain does not read");
	} else if (sealed && gateway_saved_region(x->cfg, GW_REGION_VAULT, &copy, &size, key, &err) == 0) {
		u.cfg = x->cfg;
		u.key = key;
		upcred_bind(&u);
		vault_name(&u.vault_keys, x->cfg->issuer, x->claims.subject, up->s.name, name);
		st = vault_peek(copy, size, name, clock_wall_ms(), sealed, VAULT_VALUE_MAX);
		if (st == VAULT_HIT && vault_open(&u.vault_keys, name, sealed, &t) < 0)
			st = VAULT_NONE;	/* another key's, or altered: not a connection */
		upcred_clear(&u);
		secret_wipe(key, sizeof(key));
		if (st == VAULT_UNAVAILABLE)
			gw_error_set(&err, GW_ECONFIG, "the state file has no vault that can be read");
	} else if (sealed == NULL) {
		gw_error_set(&err, GW_EINTERNAL, "out of memory");
	}
	json_object_set_new(o, "connected", st == VAULT_UNAVAILABLE ? json_null() : json_boolean(st == VAULT_HIT));
	if (st == VAULT_HIT && t.obtained_ms > 0)
		clock_rfc3339((time_t)(t.obtained_ms / 1000), when, sizeof(when));
	json_object_set_new(o, "connected_since", st == VAULT_HIT && t.obtained_ms > 0 ? json_string(when) :
	    json_null());
	if (st == VAULT_UNAVAILABLE)
		json_object_set_new(o, "connection_unknown", json_string(err.detail));
	vault_tokens_free(&t);
	if (sealed)
		secret_wipe(sealed, VAULT_VALUE_MAX);
	free(sealed);
	free(copy);
}

/* "connection: ..." from connection_json's members of the decision o, when it has them. */
static void
print_connection(const struct explain *x, json_t *o)
{
	json_t *c = json_object_get(o, "connected");

	if (c == NULL)
		return;
	if (json_is_null(c))
		printf("connection: not known (%s; explain reads it as the gateway's user)\n",
		    json_string_value(json_object_get(o, "connection_unknown")));
	else if (json_is_true(c))
		printf("connection: this person's own account, connected%s%s\n",
		    json_is_string(json_object_get(o, "connected_since")) ? " since " : "",
		    json_is_string(json_object_get(o, "connected_since")) ?
		    json_string_value(json_object_get(o, "connected_since")) : "");
	else
		printf("connection: not connected (a call asks the person to connect at %s)\n", x->cfg->connect_url);
}

/* "credential: ..." from credential_json's members of the decision o, when it has them. */
static void
print_credential(json_t *o)
{
	json_t *cached = json_object_get(o, "credential_cached");
	int own = json_is_string(json_object_get(o, "credential_for")) &&
	    strcmp(json_string_value(json_object_get(o, "credential_for")), "gateway") == 0;

	if (cached == NULL)
		return;
	if (json_is_null(cached))
		printf("credential: not known (%s; explain reads it as the gateway's user)\n",
		    json_string_value(json_object_get(o, "credential_unknown")));
	else if (json_is_true(cached))
		printf("credential: %s until %s\n", own ? "the gateway's own cached (one per host, whoever the caller)" :
		    "cached for this caller", json_string_value(json_object_get(o, "credential_until")));
	else
		printf("credential: %s (one is obtained at %s first call)\n", own ?
		    "the gateway's own not cached" : "none cached for this caller", own ? "the" : "its");
}

/* A decision on a tool or an upstream (what: "tool", "upstream") named name. */
static json_t *
decision_json(const char *what, const char *name, const struct policy_why *why)
{
	json_t *o = json_pack("{s:s, s:b}", what, name, "visible", why->step == POLICY_VISIBLE);

	if (why->step != POLICY_VISIBLE) {
		json_object_set_new(o, "step", json_integer(why->step));
		json_object_set_new(o, "reason", json_string(why->reason));
		json_object_set_new(o, "rule", json_string(why->rule));
		json_object_set_new(o, "file", why->where.file ? json_string(why->where.file) : json_null());
		json_object_set_new(o, "line", why->where.file ? json_integer(why->where.line) : json_null());
		json_object_set_new(o, "step_up", json_boolean(why->only_scope));
		if (why->only_scope)
			json_object_set_new(o, "scopes", json_string(why->scopes));
	}
	return o;
}

/* What the pins say of tool key of upstream up (pinning.h), as explain shows it:
 * {"state": "pinned" | "new" | "changed" | "off", "digest", and what catalog_pending
 * says: "pinned", "hygiene", "held"}. A new reference. */
static json_t *
pin_json(const struct config *cfg, json_t *doc, const char *key, const char *up)
{
	const struct cfg_upstream *u = up ? config_upstream(cfg, up) : NULL;
	json_t *e = catalog_pending(doc, CATALOG_TOOLS, key), *out;
	const char *digest;

	if (u && u->pin == UP_PIN_OFF)
		return json_pack("{s:s}", "state", "off");
	if (e == NULL) {
		digest = catalog_digest(doc, CATALOG_TOOLS, (size_t)catalog_find(doc, key));
		return json_pack("{s:s, s:s?}", "state", "pinned", "digest", digest);
	}
	out = json_deep_copy(e);
	json_object_del(out, "record");
	json_object_del(out, "upstream");
	json_object_del(out, "name");
	return out;
}

/* "  pin: ..." from pin_json's p: the state, the digests, what becomes of it. */
static void
print_pin(json_t *p)
{
	const char *state = json_string_value(json_object_get(p, "state")), *hygiene;

	if (p == NULL)
		return;
	if (strcmp(state, "off") == 0) {
		printf("  pin: off (its upstream has pin = off: served as listed, unchecked)\n");
		return;
	}
	printf("  pin: %s", strcmp(state, "new") == 0 ? "new, not approved yet" : strcmp(state, "changed") == 0 ?
	    "changed since it was approved" : "pinned: the definition approved");
	if (json_object_get(p, "pinned"))
		printf(" (approved %s,", json_string_value(json_object_get(p, "pinned")));
	printf("%s%s%s", json_object_get(p, "pinned") ? " listed " : " (", json_string_value(json_object_get(p, "digest")) ?
	    json_string_value(json_object_get(p, "digest")) : "no digest", ")");
	if (strcmp(state, "pinned") != 0)
		printf(": %s", json_is_true(json_object_get(p, "held")) ? "held back until an operator approves it" :
		    "served, flagged");
	putchar('\n');
	if ((hygiene = json_string_value(json_object_get(p, "hygiene"))) != NULL)
		printf("  hygiene: %s\n", hygiene);
}

/* "  NAME: hidden at step N (REASON) by FILE:LINE: rule" from a decision_json on what. */
static void
print_hidden(json_t *h, const char *what)
{
	printf("  %s: hidden at step %d (%s) by %s", json_string_value(json_object_get(h, what)),
	    (int)json_integer_value(json_object_get(h, "step")), json_string_value(json_object_get(h, "reason")),
	    json_string_value(json_object_get(h, "rule")));
	if (json_is_true(json_object_get(h, "step_up")))
		printf("; a token with scope \"%s\" may call it", json_string_value(json_object_get(h, "scopes")));
	putchar('\n');
}

/* What the bucket of class c is keyed by, for the caller of x (tenant: the bucket's
 * tenant name), in words; malloc'd. The limiter's keys are keyed digests of these. */
static char *
limit_key_text(const struct explain *x, enum limit_class c, const char *tenant)
{
	const struct strlist *tp = &x->cfg->trusted_proxies;
	char *out = NULL, *proxies;
	size_t i, n = 1, at = 0, len;

	switch (c) {
	case LIMIT_GATEWAY:
		return strdup("nothing: one bucket for the whole gateway");
	case LIMIT_IP:
		if (tp->n == 0)
			return strdup("the client address (REMOTE_ADDR: no trusted-proxies, so X-Forwarded-For is "
			    "not read), an IPv6 client by its /64");
		for (i = 0; i < tp->n; i++)
			n += strlen(tp->v[i]) + 1;
		if ((proxies = calloc(1, n)) == NULL)
			return NULL;
		for (i = 0; i < tp->n; i++) {	/* sized above */
			if (i)
				proxies[at++] = ' ';
			len = strlen(tp->v[i]);
			memcpy(proxies + at, tp->v[i], len);
			at += len;
		}
		if (asprintf(&out, "the client address (X-Forwarded-For only from trusted-proxies: %s), an IPv6 "
		    "client by its /64", proxies) < 0)
			out = NULL;
		free(proxies);
		return out;
	case LIMIT_TENANT:
		if (asprintf(&out, "tenant \"%s\"%s", tenant, x->claims.tenant[0] ? "" :
		    " (every token without a tenant claim)") < 0)
			out = NULL;
		return out;
	case LIMIT_TOKEN:
		return strdup("this token's digest (one bucket per token)");
	default:
		if (asprintf(&out, "tool \"%s\" within tenant \"%s\"", x->tool, tenant) < 0)
			out = NULL;
		return out;
	}
}

/* The rate limits of a tools/call of tool t (x->tool) by this caller, in the order the
 * gateway takes them: for each class its effective rate (limiter_rate: the caller's
 * tenant's override, else [limits]; for the tool, a group's limit-tool when tighter),
 * the configuration line it comes from, and what its bucket is keyed by. The caller's
 * tenant is the limiter's (the tenant claim, "*" without one), whether or not the
 * policy knows it: an unknown tenant's requests are counted before the policy refuses
 * them.
 * Long: one object per limit class with its rate, its configuration line and its key,
 * in the order the gateway takes them. */
static json_t *
limits_json(const struct explain *x, const struct policy_tool *t)
{
	static const char *const taken[LIMIT_CLASSES] = {
		[LIMIT_GATEWAY] = "before authentication, once per HTTP request (and per further request of a batch)",
		[LIMIT_IP] = "before authentication, once per HTTP request (and per further request of a batch)",
		[LIMIT_TENANT] = "per JSON-RPC request, once the token is accepted",
		[LIMIT_TOKEN] = "per JSON-RPC request, once the token is accepted",
		[LIMIT_TOOL] = "per tools/call the policy allows",
	};
	const struct config *cfg = x->cfg;
	const char *tenant = x->claims.tenant[0] ? x->claims.tenant : "*";
	const struct cfg_tenant *tn = cfg->n_tenants ? config_tenant(cfg, tenant) : NULL;
	const struct cfg_group *g;
	const struct cfg_where *w;
	const struct rate *r;
	char from[CLAIMS_TENANT_MAX + 512], rate[96], key_name[32], *key;
	json_t *out = json_array(), *o;
	int c, over;

	for (c = 0; c < LIMIT_CLASSES; c++) {
		const char *name = limiter_class_name((enum limit_class)c);

		r = limiter_rate(cfg, tn, (enum limit_class)c, t, &over, &g);
		snprintf(key_name, sizeof(key_name), "limit-%s", name);
		if (g) {
			w = config_group_where(g, key_name);
			snprintf(from, sizeof(from), "%s:%d: [group \"%s\"] %s", w->file ? w->file : "?", w->line,
			    g->s.name, key_name);
		} else if (over) {
			w = config_tenant_where(tn, key_name);
			snprintf(from, sizeof(from), "%s:%d: [tenant \"%s\"] %s", w->file ? w->file : "?", w->line,
			    tn->s.name, key_name);
		} else {
			w = config_limits_where(cfg, name);
			if (w->file)
				snprintf(from, sizeof(from), "%s:%d: [limits] %s", w->file, w->line, name);
			else
				snprintf(from, sizeof(from), "[limits] %s, not set", name);
		}
		if (!config_rate_on(r))
			snprintf(rate, sizeof(rate), "unlimited");
		else if (r->burst)
			snprintf(rate, sizeof(rate), "%ld/%ld s burst %ld", r->n, r->per, r->burst);
		else
			snprintf(rate, sizeof(rate), "%ld/%ld s", r->n, r->per);
		key = limit_key_text(x, (enum limit_class)c, tenant);
		o = json_pack("{s:s, s:b, s:s, s:I, s:I, s:I, s:s, s:s, s:s?, s:s}", "limit", name,
		    "on", config_rate_on(r), "rate", rate, "n", (json_int_t)r->n, "per", (json_int_t)r->per,
		    "burst", (json_int_t)r->burst, "from", from, "section", g ? "group" : over ? "tenant" : "limits",
		    "key", key, "taken", taken[c]);
		json_object_set_new(o, "file", w->file ? json_string(w->file) : json_null());
		json_object_set_new(o, "line", w->file ? json_integer(w->line) : json_null());
		if (c == LIMIT_TOOL)
			json_object_set_new(o, "tool", json_string(x->tool));
		if (g)
			json_object_set_new(o, "group", json_string(g->s.name));
		json_array_append_new(out, o);
		free(key);
	}
	return out;
}

/* "  CLASS: RATE (from FROM); keyed by KEY", in the order they are taken. */
static void
print_limits(json_t *limits)
{
	json_t *l;
	size_t i;

	printf("rate limits of a call, in the order they are taken (gateway and ip before authentication; "
	    "tenant and token per JSON-RPC request; tool once the policy allows the call):\n");
	json_array_foreach(limits, i, l)
		printf("  %s: %s (from %s); keyed by %s\n", json_string_value(json_object_get(l, "limit")),
		    json_string_value(json_object_get(l, "rate")), json_string_value(json_object_get(l, "from")),
		    json_string_value(json_object_get(l, "key")));
}

static void
print_tenant(const struct explain *x)
{
	const struct cfg_tenant *tn = x->pc.tenant;
	struct policy_why why;
	struct policy_tool none = { "", NULL, 0, POLICY_TOOL };

	if (x->pc.off)
		printf("policy: off (no [tenant] in %s): every tool is visible to every admitted token\n", x->config_path);
	else if (tn)
		printf("tenant: %s (%s:%d)\n", tn->s.name, tn->s.where.file, tn->s.where.line);
	else {
		policy_decide(&x->pc, &none, &why);
		printf("tenant: %s is not configured: every /mcp request is 403 tenant_forbidden (%s)\n",
		    x->claims.tenant[0] ? x->claims.tenant : "* (no tenant claim)", why.rule);
	}
}

static void
usage(void)
{
	fputs("usage: mcpgate explain [-c FILE] --claims JSON [--tool NAME] [--json]\n"
	    "                       [--catalog FILE | --save-catalog FILE]\n"
	    "  exit 0 explained; 2 --tool names a tool the caller may not call (or none);\n"
	    "  1 an error, or an upstream asked live did not answer\n", stderr);
}

/* What --catalog reads, for the errors that say what it expected. */
#define CATALOG_EXPECTED "expected {\"<upstream>\": its tools/list result, ...} as explain " \
	"--save-catalog writes, or, with one [upstream], its tools/list result ({\"tools\": [...]}, " \
	"bare or as a JSON-RPC answer)"

/* v's result when v is a JSON-RPC answer ({"jsonrpc", "id", "result"}), else v as it
 * is; NULL, with *why, for an error answer or one without a result object. */
static json_t *
rpc_result(json_t *v, const char **why)
{
	json_t *r;

	if (!json_is_object(v) || json_object_get(v, "jsonrpc") == NULL)
		return v;
	if (json_object_get(v, "error") != NULL) {
		*why = "a JSON-RPC error answer, not a tools/list result";
		return NULL;
	}
	if (!json_is_object(r = json_object_get(v, "result"))) {
		*why = "a JSON-RPC answer without a result object";
		return NULL;
	}
	return r;
}

/* in (a JSON object) as one list per upstream of cfg, in lists (reasons for those it
 * lacks): a bare tools/list result is the one upstream's, a map names each. 0, or -1
 * said on stderr when nothing in it is any upstream's. */
static int
catalog_file_lists(const struct config *cfg, const char *path, json_t *in, json_t **lists, const char **reasons)
{
	const char *why = NULL;
	size_t i, found = 0;
	json_t *v;

	if (json_is_array(json_object_get(in, "tools")) && config_upstream(cfg, "tools") == NULL) {
		if (cfg->n_upstreams == 1) {
			lists[0] = in;
			return 0;
		}
		fprintf(stderr, "mcpgate: --catalog %s: one tools/list result, but the configuration has %zu "
		    "[upstream] sections: it does not say whose tools they are; write {\"<upstream>\": its "
		    "tools/list result, ...} as explain --save-catalog does\n", path, cfg->n_upstreams);
		return -1;
	}
	for (i = 0; i < cfg->n_upstreams; i++) {
		v = json_object_get(in, cfg->upstreams[i].s.name);
		if (v == NULL)
			reasons[i] = "not in --catalog";
		else if ((v = rpc_result(v, &reasons[i])) == NULL)
			continue;
		else if (json_is_array(v) || json_is_object(v))
			lists[i] = v, found++;
		else
			reasons[i] = "in --catalog, but neither a tools/list result nor a tools array";
	}
	if (found > 0 || cfg->n_upstreams == 0)
		return 0;
	for (i = 0; i < cfg->n_upstreams && why == NULL; i++)
		if (json_object_get(in, cfg->upstreams[i].s.name) != NULL)
			why = reasons[i];
	fprintf(stderr, "mcpgate: --catalog %s: %s; " CATALOG_EXPECTED "\n", path,
	    why ? why : "names no [upstream] of the configuration");
	return -1;
}

/* --catalog FILE (explain.h). */
json_t *
explain_catalog_load(const struct config *cfg, const char *path, json_t *notes)
{
	char msg[512];
	json_error_t jerr;
	json_t *in = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr), *doc = NULL, *v, *top, **lists = NULL;
	const char **reasons = NULL, *name, *why = NULL;

	if (in == NULL) {
		fprintf(stderr, "mcpgate: --catalog %s:%d: %s; " CATALOG_EXPECTED "\n", path, jerr.line, jerr.text);
		return NULL;
	}
	if (!json_is_object(in) || (top = rpc_result(in, &why)) == NULL) {
		fprintf(stderr, "mcpgate: --catalog %s: %s; " CATALOG_EXPECTED "\n", path,
		    why ? why : "not a JSON object");
		goto out;
	}
	lists = calloc(cfg->n_upstreams + 1, sizeof(*lists));
	reasons = calloc(cfg->n_upstreams + 1, sizeof(*reasons));
	if (lists == NULL || reasons == NULL || catalog_file_lists(cfg, path, top, lists, reasons) < 0)
		goto out;
	if (lists[0] != top || cfg->n_upstreams != 1)
		json_object_foreach(top, name, v)
			if (config_upstream(cfg, name) == NULL && json_array_size(notes) < EXPLAIN_NOTES) {
				snprintf(msg, sizeof(msg), "--catalog: \"%s\" names no [upstream] of the configuration: "
				    "ignored", name);
				json_array_append_new(notes, json_string(msg));
			}
	doc = catalog_build(cfg, lists, reasons);
out:
	free(lists);
	free(reasons);
	json_decref(in);
	return doc;
}

/* --save-catalog FILE: what each upstream of doc offered, under its own names, in the
 * form --catalog reads. 0, or -1 said on stderr. */
static int
catalog_save(json_t *doc, const char *path)
{
	json_t *out = json_object(), *st, *copy, *mine, *arr;
	const char *name, *up, *orig;
	size_t i, n, alt;
	int k, rc;

	json_object_foreach(catalog_upstreams(doc), name, st)
		if (json_is_true(json_object_get(st, "ok")))
			json_object_set_new(out, name, json_pack("{s:O}", "caps", json_object_get(st, "caps")));
	for (k = 0; k < CATALOG_NKINDS; k++) {
		const struct catalog_kind_info *kd = &catalog_kinds[k];

		/* (a record several upstreams offer is kept once: the first's, written for each) */
		n = catalog_count(doc, (enum catalog_kind)k);
		for (i = 0; i < n; i++)
			for (alt = 0; catalog_route_alt(doc, (enum catalog_kind)k, (long)i, alt, &up, &orig) == 0; alt++) {
				if ((mine = json_object_get(out, up)) == NULL ||
				    (copy = catalog_record(doc, (enum catalog_kind)k, i)) == NULL)
					continue;
				if ((arr = json_object_get(mine, kd->array)) == NULL)
					json_object_set_new(mine, kd->array, arr = json_array());
				json_object_set_new(copy, kd->key, json_string(orig));
				json_array_append_new(arr, copy);
			}
	}
	rc = json_dump_file(out, path, JSON_INDENT(1) | JSON_SORT_KEYS);
	if (rc < 0)
		fprintf(stderr, "mcpgate explain: --save-catalog %s: cannot write it\n", path);
	json_decref(out);
	return rc;
}

/* The records of the catalog besides tools, each decided by policy_decide with its kind
 * from the upstreams that offer it (one that grants it is enough, as for the lists):
 * {"prompts"|"resources"|"templates": {"visible": [keys], "hidden": [decisions]}}. */
static json_t *
items_json(const struct explain *x, json_t *doc)
{
	static const struct {
		enum catalog_kind kind;
		enum policy_kind pk;
		const char *name, *what;
	} kinds[] = {
		{ CATALOG_PROMPTS, POLICY_PROMPT, "prompts", "prompt" },
		{ CATALOG_RESOURCES, POLICY_RESOURCE, "resources", "resource" },
		{ CATALOG_TEMPLATES, POLICY_RESOURCE, "templates", "template" },
	};
	struct policy_why why, first;
	const char *up, *orig, *key;
	json_t *out = json_object(), *vis, *hid;
	size_t k, i, n, alt;
	int seen;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		vis = json_array();
		hid = json_array();
		n = catalog_count(doc, kinds[k].kind);
		for (i = 0; i < n; i++) {
			if ((key = catalog_key(doc, kinds[k].kind, i)) == NULL)
				continue;
			for (seen = 0, alt = 0; !seen && catalog_route_alt(doc, kinds[k].kind, (long)i, alt, &up, &orig) == 0;
			    alt++) {
				struct policy_tool t = { key, config_upstream(x->cfg, up), 0, kinds[k].pk };

				seen = policy_decide(&x->pc, &t, &why) == POLICY_VISIBLE;
				if (alt == 0)
					first = why;
			}
			if (seen)
				json_array_append_new(vis, json_string(key));
			else if (alt > 0)
				json_array_append_new(hid, decision_json(kinds[k].what, key, &first));
		}
		json_object_set_new(out, kinds[k].name, json_pack("{s:o, s:o}", "visible", vis, "hidden", hid));
	}
	return out;
}

static void
print_items(json_t *items)
{
	static const char *const kinds[][2] = { { "prompts", "prompt" }, { "resources", "resource" },
		{ "templates", "template" } };
	json_t *kind, *h;
	size_t k, i;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		kind = json_object_get(items, kinds[k][0]);
		printf("%s visible (%zu):\n", kinds[k][0], json_array_size(json_object_get(kind, "visible")));
		json_array_foreach(json_object_get(kind, "visible"), i, h)
			printf("  %s\n", json_string_value(h));
		printf("%s hidden (%zu):\n", kinds[k][0], json_array_size(json_object_get(kind, "hidden")));
		json_array_foreach(json_object_get(kind, "hidden"), i, h)
			print_hidden(h, kinds[k][1]);
	}
}

/* What answer() decided, which both forms of the answer (text and JSON) say: the tools
 * visible (names) and hidden (decisions), each upstream's decision, the prompts and
 * resources (items_json), and with --tool its decision (one; NULL when the catalog
 * lacks it) and its limits. */
struct decided {
	json_t *visible, *hidden, *upstreams, *items;
	json_t *one, *limits;
};

/* The answer for people: the notes on stderr, then the tenant, and --tool's decision or
 * every tool, upstream, prompt and resource. */
static void
print_answer(const struct explain *x, const struct decided *d)
{
	json_t *h;
	size_t i;

	json_array_foreach(x->notes, i, h)
		fprintf(stderr, "note: %s\n", json_string_value(h));
	print_tenant(x);
	if (x->tool) {
		if (d->one == NULL)
			printf("%s: not in the catalog (no upstream offers it, or its upstream is left out): "
			    "a call is -32602 Unknown tool\n", x->tool);
		else if (json_object_get(d->one, "step") == NULL && !json_is_true(json_object_get(d->one, "visible")))
			printf("%s: held back by its pins (from [upstream \"%s\"], where it is %s): not listed, and a call "
			    "is refused until an operator approves it (mcpgate pins diff %s/%s)\n", x->tool,
			    json_string_value(json_object_get(d->one, "upstream")),
			    json_string_value(json_object_get(d->one, "upstream_name")),
			    json_string_value(json_object_get(d->one, "upstream")),
			    json_string_value(json_object_get(d->one, "upstream_name")));
		else if (json_is_true(json_object_get(d->one, "visible")))
			printf("%s: visible (from [upstream \"%s\"], where it is %s; credentials = %s)\n", x->tool,
			    json_string_value(json_object_get(d->one, "upstream")),
			    json_string_value(json_object_get(d->one, "upstream_name")),
			    json_string_value(json_object_get(d->one, "credentials")));
		else
			print_hidden(d->one, "tool");
		if (d->one) {
			print_pin(json_object_get(d->one, "pin"));
			print_credential(d->one);
			print_connection(x, d->one);
		}
		print_limits(d->limits);
		return;
	}
	printf("visible (%zu):\n", json_array_size(d->visible));
	json_array_foreach(d->visible, i, h)
		printf("  %s\n", json_string_value(h));
	printf("hidden (%zu):\n", json_array_size(d->hidden));
	json_array_foreach(d->hidden, i, h)
		print_hidden(h, "tool");
	printf("prompts, resources and completions, by upstream as a whole: by its own group (allow, deny and "
	    "read-only mode are about tools; a group's prompts and resources may grant some on their own, below):\n");
	json_array_foreach(d->upstreams, i, h) {
		if (json_is_true(json_object_get(h, "visible")))
			printf("  %s: visible\n", json_string_value(json_object_get(h, "upstream")));
		else
			print_hidden(h, "upstream");
	}
	print_items(d->items);
}

/* Decides every tool of doc (or --tool's) and prints the answer. The exit code.
 * Long: the decision of every tool, then the answer's two forms (text and JSON), which
 * share what was decided. */
static int
answer(struct explain *x, json_t *doc)
{
	struct policy_tool t;
	struct policy_why why;
	const char *up, *orig;
	struct decided d = { json_array(), json_array(), json_array(), NULL, NULL, NULL };
	json_t *out = NULL, *pin;
	size_t i, n = catalog_count(doc, CATALOG_TOOLS);
	long ix = -1;
	int64_t t0 = clock_mono_us();
	int rc = EXPLAIN_OK;

	memset(&t, 0, sizeof(t));
	t.name = x->tool;	/* --tool's, when the catalog lacks it: its groups by their globs */
	if (x->tool && (ix = catalog_find(doc, x->tool)) < 0) {
		rc = EXPLAIN_HIDDEN;
		if ((pin = pinning_held(doc, CATALOG_TOOLS, x->tool)) != NULL)
			d.one = json_pack("{s:s, s:b, s:s, s:O, s:O, s:o}", "tool", x->tool, "visible", 0,
			    "reason", "held_by_pins", "upstream", json_object_get(pin, "upstream"),
			    "upstream_name", json_object_get(pin, "name"), "pin", pin_json(x->cfg, doc, x->tool, NULL));
	}
	for (i = x->tool ? (size_t)(ix < 0 ? (long)n : ix) : 0; i < n; i++) {
		catalog_policy_tool(x->cfg, doc, i, &t, &up, &orig);
		if (t.name == NULL)
			continue;
		if (policy_decide(&x->pc, &t, &why) == POLICY_VISIBLE)
			json_array_append_new(d.visible, json_string(t.name));
		else
			json_array_append_new(d.hidden, decision_json("tool", t.name, &why));
		if (x->tool) {
			const struct cfg_upstream *u = up ? config_upstream(x->cfg, up) : NULL;

			d.one = decision_json("tool", t.name, &why);
			json_object_set_new(d.one, "upstream", json_string(up ? up : ""));
			json_object_set_new(d.one, "upstream_name", json_string(orig ? orig : ""));
			json_object_set_new(d.one, "credentials", json_string(credentials_word(u)));
			json_object_set_new(d.one, "pin", pin_json(x->cfg, doc, t.name, up));
			if (u && (u->credentials == UP_CRED_EXCHANGE || u->credentials == UP_CRED_ID_JAG ||
			    u->credentials == UP_CRED_CLIENT))
				credential_json(x, u, d.one);
			else if (u && u->credentials == UP_CRED_USER_OAUTH)
				connection_json(x, u, d.one);
			rc = why.step == POLICY_VISIBLE ? EXPLAIN_OK : EXPLAIN_HIDDEN;
			break;
		}
	}
	if (x->tool)
		d.limits = limits_json(x, &t);
	for (i = 0; i < x->cfg->n_upstreams; i++) {
		policy_decide_upstream(&x->pc, &x->cfg->upstreams[i], &why);
		json_array_append_new(d.upstreams, decision_json("upstream", x->cfg->upstreams[i].s.name, &why));
	}
	d.items = items_json(x, doc);
	if (x->as_json) {
		out = json_pack("{s:s, s:b, s:s, s:s?, s:O, s:O, s:O}", "config", x->config_path, "policy", !x->pc.off,
		    "tenant_claim", x->claims.tenant, "tenant", x->pc.tenant ? x->pc.tenant->s.name : NULL,
		    "visible", d.visible, "hidden", d.hidden, "notes", x->notes);
		json_object_set(out, "upstreams", d.upstreams);
		json_object_update(out, d.items);
		if (x->tool) {
			json_object_set_new(out, "decision", d.one ? json_incref(d.one) :
			    json_pack("{s:s, s:b, s:s}", "tool", x->tool, "visible", 0, "reason", "unknown_tool"));
			json_object_set_new(out, "limits", json_incref(d.limits));
		}
		json_object_set_new(out, "decide_us", json_integer((json_int_t)(clock_mono_us() - t0)));
		json_dumpf(out, stdout, JSON_INDENT(2));
		putchar('\n');
		goto out;
	}
	print_answer(x, &d);
out:
	json_decref(d.items);
	json_decref(d.upstreams);
	json_decref(out);
	json_decref(d.one);
	json_decref(d.limits);
	json_decref(d.visible);
	json_decref(d.hidden);
	return rc;
}

/* --claims, a JSON object, into x->claims: 0, or -1 said on stderr. */
static int
claims_from_arg(struct explain *x, const char *arg)
{
	json_error_t jerr;
	const char *msg = NULL;
	json_t *j;
	int rc;

	if ((j = json_loads(arg, JSON_REJECT_DUPLICATES, &jerr)) == NULL) {
		fprintf(stderr, "mcpgate explain: --claims is not JSON: %s (column %d)\n", jerr.text, jerr.column);
		return -1;
	}
	if ((rc = claims_from_json(x, j, &msg)) < 0)
		fprintf(stderr, "mcpgate explain: --claims: %s\n", msg);
	json_decref(j);
	return rc < 0 ? -1 : 0;
}

/* The catalog to explain: the file --catalog names (its notes in x), or asked of the
 * upstreams now (no shared state: this run's own fetch). NULL when the file is unusable. */
static json_t *
catalog_for(struct explain *x, const char *catalog_in, struct upstream_pool *pool, struct catalog_view *view)
{
	if (catalog_in)
		return explain_catalog_load(x->cfg, catalog_in, x->notes);
	const struct catalog_fetcher by = { pool, NULL, NULL, NULL, NULL };

	return catalog_get(NULL, view, &by, x->cfg, clock_mono_us() / 1000);
}

/* A note for each upstream left out of doc (how many were: the count), and for each
 * whose lists are each caller's (not in doc: explain has no caller's credential). */
static size_t
note_left_out(struct explain *x, json_t *doc)
{
	const char *name;
	size_t n = 0;
	json_t *st;

	json_object_foreach(catalog_upstreams(doc), name, st)
		if (!json_is_true(json_object_get(st, "ok"))) {
			note(x, "[upstream \"%s\"] is left out of the catalog (its tools are not listed): %s", name,
			    json_string_value(json_object_get(st, "reason")));
			n++;
		} else if (json_is_true(json_object_get(st, "perCaller"))) {
			note(x, "[upstream \"%s\"] lists its tools per caller (catalog = per-caller): none of them is "
			    "in this catalog; a caller sees what it lists for that caller, decided as any other", name);
		}
	return n;
}

/* Long: the option table, then the run's steps (options, configuration, claims,
 * catalog, answer) with one cleanup. */
int
explain_main(int argc, char **argv, const char *config_path)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "claims", required_argument, NULL, 'C' },
		{ "tool", required_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 'J' },
		{ "catalog", required_argument, NULL, 'K' },
		{ "save-catalog", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct explain x;
	struct cfg_errors errs;
	struct config *cfg = NULL;
	struct catalog_view view;
	struct upstream_pool *pool = NULL;
	json_t *doc = NULL;
	const char *claims_arg = NULL, *catalog_in = NULL, *catalog_out = NULL;
	size_t left_out = 0;
	int c, rc = EXPLAIN_ERROR;

	memset(&x, 0, sizeof(x));
	memset(&view, 0, sizeof(view));
	x.notes = json_array();
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': config_path = optarg; break;
		case 'C': claims_arg = optarg; break;
		case 'T': x.tool = optarg; break;
		case 'J': x.as_json = 1; break;
		case 'K': catalog_in = optarg; break;
		case 'S': catalog_out = optarg; break;
		default: usage(); goto out;
		}
	}
	if (claims_arg == NULL || optind < argc || (catalog_in && catalog_out)) {
		usage();
		goto out;
	}
	x.config_path = config_path;
	if (config_load(config_path, &cfg, &errs) < 0) {
		config_errors_print(&errs, stderr);
		goto out;
	}
	x.cfg = cfg;
	if (claims_from_arg(&x, claims_arg) < 0)
		goto out;
	policy_caller_init(&x.pc, cfg, &x.claims);
	if ((pool = upstream_pool_new()) == NULL) {
		fprintf(stderr, "mcpgate explain: out of memory\n");
		goto out;
	}
	if ((doc = catalog_for(&x, catalog_in, pool, &view)) == NULL ||
	    (catalog_out && catalog_save(doc, catalog_out) < 0))
		goto out;
	left_out = note_left_out(&x, doc);
	rc = answer(&x, doc);
	/* Asked live, an upstream that did not answer makes the answer incomplete: say so
	 * and fail, so that a CI job does not pass on a catalog that lacks its tools. (From
	 * --catalog, the file is what the operator chose to explain.) */
	if (!catalog_in && left_out > 0) {
		fprintf(stderr, "mcpgate explain: %zu of %zu upstreams could not be asked (the notes above "
		    "say why): this answer lacks their tools; explain from a saved catalog with --catalog FILE "
		    "(made by --save-catalog)\n", left_out, cfg->n_upstreams);
		rc = EXPLAIN_ERROR;
	}
out:
	json_decref(x.notes);
	json_decref(doc);
	catalog_view_free(&view);
	if (pool)
		upstream_pool_free(pool);
	if (cfg)
		config_unref(cfg);
	return rc;
}
