/* confcheck — `mcpgate -t`'s warnings (the contract is in confcheck.h). */
#include "autoconf.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "confcheck.h"
#include "policy.h"
#include "schemas.h"
#include "upreg.h"

static void warn(struct confcheck *o, const struct cfg_where *w, const struct cfg_where *section, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* One warning at w, else at section (a key not set: its section's header). */
static void
warn(struct confcheck *o, const struct cfg_where *w, const struct cfg_where *section, const char *fmt, ...)
{
	va_list ap;

	if (w == NULL || w->file == NULL)
		w = section;
	if (o->n >= CONFCHECK_MAX) {
		o->dropped++;
		return;
	}
	va_start(ap, fmt);
	cfg_vsay(o->msg[o->n++], sizeof(o->msg[0]), w && w->file ? w->file : "?", w ? w->line : 0, fmt, ap);
	va_end(ap);
}

static const struct cfg_where *
where(const struct cfg_section *s, const char *kind, const char *key)
{
	return config_key_where(s, kind, key);
}

/* Is key of section s set (in a file, not by default)? */
static int
set(const struct cfg_section *s, const char *kind, const char *key)
{
	return where(s, kind, key)->file != NULL;
}

/* The tenant that lists the group named group (NULL: any) and has access mode mode (0:
 * any) and feature (NULL: any), or NULL. */
static const struct cfg_tenant *
tenant_with(const struct config *cfg, const char *group, int mode, const char *feature)
{
	const struct cfg_tenant *t;
	size_t i;

	for (i = 0; i < cfg->n_tenants; i++) {
		t = &cfg->tenants[i];
		if ((group == NULL || strlist_has(&t->groups, group)) && (mode == 0 || t->access_mode == mode) &&
		    (feature == NULL || strlist_has(&t->features, feature)))
			return t;
	}
	return NULL;
}

/* Does some tenant list the group named name? */
static int
listed(const struct config *cfg, const char *name)
{
	return tenant_with(cfg, name, 0, NULL) != NULL;
}

/* Does some tenant list a [group] with prompts or resources of its own? */
static int
items_granted(const struct config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->n_groups; i++)
		if ((cfg->groups[i].prompts.n || cfg->groups[i].resources.n) && listed(cfg, cfg->groups[i].s.name))
			return 1;
	return 0;
}

/* --- keys that do nothing whatever the policy ------------------------------------------ */

/* Are tokens verified here as JWTs and never introspected? */
static int
jwt_alone(const struct config *cfg)
{
	return cfg->verify == VERIFY_JWT && !cfg->introspect_jwt;
}

/* The keys of a check that never runs: a JWT's with verify = introspection, the
 * introspection's with verify = jwt and introspect-jwt = no. (The DPoP keys apply to
 * every DPoP request, whichever way its token is checked; audiences and scope-claim to
 * introspection responses too.) */
static void
verify_keys(const struct config *cfg, struct confcheck *o)
{
	static const char *const jwt_keys[] = { "jwks-uri", "jwt-algs", "jwt-typ", "introspect-jwt", "jwks-ttl",
	    "jwks-max-age", "jwks-min-interval", "clock-skew" };
	static const char *const introspection_keys[] = { "introspection-endpoint", "client-id",
	    "client-secret-file", "client-auth" };
	const struct cfg_where *w;
	size_t i;

	for (i = 0; cfg->verify == VERIFY_INTROSPECTION && i < sizeof(jwt_keys) / sizeof(jwt_keys[0]); i++)
		if ((w = where(&cfg->auth, "auth", jwt_keys[i]))->file)
			warn(o, w, NULL, "%s: has no effect with verify = introspection: no token is verified here as "
			    "a JWT (verify = jwt or auto)", jwt_keys[i]);
	for (i = 0; jwt_alone(cfg) && i < sizeof(introspection_keys) / sizeof(introspection_keys[0]); i++)
		if ((w = where(&cfg->auth, "auth", introspection_keys[i]))->file)
			warn(o, w, NULL, "%s: has no effect with verify = jwt: tokens are verified here, never "
			    "introspected (introspect-jwt = yes introspects them too)", introspection_keys[i]);
}

static void
inert_keys(const struct config *cfg, struct confcheck *o)
{
	static const char *const redis_keys[] = { "redis-timeout-ms", "redis-fail" };
	static const char *const client_keys[] = { "client-auth", "client-secret-file" };
	const struct cfg_where *w;
	size_t i;

	for (i = 0; !cfg->redis_on && i < sizeof(redis_keys) / sizeof(redis_keys[0]); i++)
		if ((w = config_limits_where(cfg, redis_keys[i]))->file)
			warn(o, w, NULL, "%s: has no effect: [limits] store is not a Redis store (redis://… or unix://…)", redis_keys[i]);
	/* (with verify = jwt alone they are inert whatever client-id says: verify_keys) */
	for (i = 0; !cfg->client_id && !jwt_alone(cfg) && i < sizeof(client_keys) / sizeof(client_keys[0]); i++)
		if ((w = where(&cfg->auth, "auth", client_keys[i]))->file)
			warn(o, w, NULL, "%s: has no effect without [auth] client-id: the gateway introspects "
			    "without client credentials", client_keys[i]);
	if (cfg->n_trusted && !config_rate_on(&cfg->limit_ip) && !cfg->metrics_on)
		warn(o, where(&cfg->gateway, "gateway", "trusted-proxies"), NULL, "trusted-proxies: has no effect: "
		    "only the ip limit ([limits] ip) and [metrics] allow read the client's address, and neither is set");
	if (set(&cfg->gateway, "gateway", "request-timeout-ms"))
		for (i = 0; i < cfg->n_upstreams; i++)
			if (set(&cfg->upstreams[i].s, "upstream", "timeout-ms") &&
			    cfg->upstreams[i].timeout_ms > cfg->request_timeout_ms)
				warn(o, where(&cfg->upstreams[i].s, "upstream", "timeout-ms"), NULL, "timeout-ms: %ld ms is "
				    "longer than [gateway] request-timeout-ms (%ld ms), by which every call ends",
				    cfg->upstreams[i].timeout_ms, cfg->request_timeout_ms);
}

/* --- the policy ----------------------------------------------------------------------------- */

/* No [tenant]: no policy, so the keys that only the policy reads do nothing. */
static void
policy_off(const struct config *cfg, struct confcheck *o)
{
	static const char *const group_keys[] = { "tools", "prompts", "resources", "scopes", "members", "feature" };
	static const char *const upstream_keys[] = { "read-only-tools", "trust-hints" };
	static const char why[] = "has no effect: without a [tenant] there is no policy (every admitted caller "
	    "sees everything)";
	const struct cfg_group *g;
	size_t i, k;

	for (i = 0; i < cfg->n_groups; i++) {
		g = &cfg->groups[i];
		for (k = 0; k < sizeof(group_keys) / sizeof(group_keys[0]); k++)
			/* (tools still say which tools a limit-tool applies to) */
			if (set(&g->s, "group", group_keys[k]) && !(k == 0 && config_rate_on(&g->limit_tool)))
				warn(o, where(&g->s, "group", group_keys[k]), NULL, "%s: %s", group_keys[k], why);
	}
	for (i = 0; i < cfg->n_upstreams; i++)
		for (k = 0; k < sizeof(upstream_keys) / sizeof(upstream_keys[0]); k++)
			if (set(&cfg->upstreams[i].s, "upstream", upstream_keys[k]))
				warn(o, where(&cfg->upstreams[i].s, "upstream", upstream_keys[k]), NULL, "%s: %s",
				    upstream_keys[k], why);
}

/* Groups no tenant lists, features nobody has or needs. */
static void
groups_and_features(const struct config *cfg, struct confcheck *o)
{
	const struct cfg_group *g;
	const struct cfg_tenant *t;
	size_t i, j, k;
	int has;

	for (i = 0; i < cfg->n_groups; i++) {
		g = &cfg->groups[i];
		if (!listed(cfg, g->s.name)) {
			warn(o, &g->s.where, NULL, "[group \"%s\"]: no tenant lists it in groups: it grants nothing%s",
			    g->s.name, config_rate_on(&g->limit_tool) ? " (its limit-tool still applies to the tools it holds)" : "");
			continue;
		}
		if (g->feature && tenant_with(cfg, g->s.name, 0, g->feature) == NULL)
			warn(o, config_group_where(g, "feature"), &g->s.where, "feature: no tenant that lists [group \"%s\"] "
			    "has %s in its features: the group grants nothing", g->s.name, g->feature);
	}
	for (i = 0; i < cfg->n_tenants; i++) {
		t = &cfg->tenants[i];
		for (k = 0; k < t->features.n; k++) {
			for (j = 0, has = 0; j < cfg->n_groups && !has; j++)
				has = cfg->groups[j].feature && strcmp(cfg->groups[j].feature, t->features.v[k]) == 0;
			if (!has)
				warn(o, config_tenant_where(t, "features"), &t->s.where,
				    "features: %s: no [group] needs this feature: it has no effect", t->features.v[k]);
		}
	}
}

/* What the catalog says an upstream offers besides tools: 1 some, 0 none, -1 unknown
 * (no catalog, or the upstream left out of it). */
static int
offers_more(json_t *doc, const char *upstream)
{
	static const char *const caps[] = { "prompts", "resources", "completions", "logging" };
	json_t *st = json_object_get(catalog_upstreams(doc), upstream), *c;
	size_t i;

	if (doc == NULL || !json_is_true(json_object_get(st, "ok")))
		return -1;
	c = json_object_get(st, "caps");
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		if (json_object_get(c, caps[i]))
			return 1;
	return 0;
}

/* Upstreams whose prompts and resources no tenant reaches; read-only marks with no
 * read-only tenant. */
static void
upstreams(const struct config *cfg, json_t *doc, struct confcheck *o)
{
	static const char *const ro_keys[] = { "read-only-tools", "trust-hints" };
	const struct cfg_upstream *u;
	int granted = items_granted(cfg), ro = tenant_with(cfg, NULL, ACCESS_READ_ONLY, NULL) != NULL, more = -1;
	size_t i, k;

	for (i = 0; i < cfg->n_upstreams; i++) {
		u = &cfg->upstreams[i];
		if (!listed(cfg, u->group) && !granted && (more = offers_more(doc, u->s.name)) != 0)
			warn(o, &u->s.where, NULL, "[upstream \"%s\"]: no tenant lists its group \"%s\", and no group a "
			    "tenant lists has prompts or resources: its prompts, resources and completions%s reach no "
			    "caller, nor does its log level (list \"%s\" in a tenant's groups, or grant them with a "
			    "[group]'s prompts and resources)", u->s.name, u->group, more < 0 ? " (if it offers any)" : "",
			    u->group);
		for (k = 0; !ro && k < sizeof(ro_keys) / sizeof(ro_keys[0]); k++)
			if (set(&u->s, "upstream", ro_keys[k]))
				warn(o, where(&u->s, "upstream", ro_keys[k]), NULL, "%s: has no effect: no [tenant] has "
				    "access-mode = read-only", ro_keys[k]);
	}
}

/* --- against a catalog ----------------------------------------------------------------- */

struct lister {
	const struct config *cfg;
};

static int
group_listed(const struct cfg_group *g, void *arg)
{
	const struct lister *l = arg;

	return listed(l->cfg, g->s.name);
}

/* Tools that no group a tenant lists holds: nobody sees them. */
static void
unseen_tools(const struct config *cfg, json_t *doc, struct confcheck *o)
{
	size_t i, k, n = catalog_count(doc, CATALOG_TOOLS);
	size_t counts[POLICY_UPSTREAMS_MAX] = { 0 };
	struct lister l = { cfg };
	struct policy_tool t;
	const char *up;

	for (i = 0; i < n; i++) {
		catalog_policy_tool(cfg, doc, i, &t, &up, NULL);
		if (t.name == NULL || t.upstream == NULL || listed(cfg, t.upstream->group) ||
		    policy_tool_groups(cfg, &t, group_listed, &l))
			continue;
		k = (size_t)(t.upstream - cfg->upstreams);
		if (k >= POLICY_UPSTREAMS_MAX || counts[k]++ < CONFCHECK_TOOLS_MAX)
			warn(o, &t.upstream->s.where, NULL, "[upstream \"%s\"]: tool %s: no group a tenant lists holds "
			    "it: no caller sees it", t.upstream->s.name, t.name);
	}
	for (k = 0; k < cfg->n_upstreams && k < POLICY_UPSTREAMS_MAX; k++)
		if (counts[k] > CONFCHECK_TOOLS_MAX)
			warn(o, &cfg->upstreams[k].s.where, NULL, "[upstream \"%s\"]: %zu more tools no group a tenant "
			    "lists holds", cfg->upstreams[k].s.name, counts[k] - CONFCHECK_TOOLS_MAX);
}

/* Does pattern match a record of kind (its key), from upstream only when not NULL? */
static int
matches(json_t *doc, enum catalog_kind kind, const char *pattern, const char *upstream)
{
	const char *key, *up, *orig;
	size_t i, n = catalog_count(doc, kind), alt;

	for (i = 0; i < n; i++) {
		if ((key = catalog_key(doc, kind, i)) == NULL || fnmatch(pattern, key, 0) != 0)
			continue;
		if (upstream == NULL)
			return 1;
		for (alt = 0; catalog_route_alt(doc, kind, (long)i, alt, &up, &orig) == 0; alt++)
			if (strcmp(up, upstream) == 0)
				return 1;
	}
	return 0;
}

/* A key whose words are patterns: the section that sets it (of kind kind_name), its
 * name, and its words. */
struct pattern_key {
	const struct cfg_section *s;
	const char *kind_name;
	const char *key;
	const struct strlist *l;
};

/* What a key's patterns name in the catalog: records of kind (or of also, unless it is
 * CATALOG_NKINDS), from upstream only when not NULL; what, in words. */
struct pattern_target {
	enum catalog_kind kind, also;
	const char *upstream;
	const char *what;
};

static const struct pattern_target tools = { CATALOG_TOOLS, CATALOG_NKINDS, NULL, "tool" };
static const struct pattern_target prompts = { CATALOG_PROMPTS, CATALOG_NKINDS, NULL, "prompt" };
static const struct pattern_target resources = { CATALOG_RESOURCES, CATALOG_TEMPLATES, NULL,
	"resource or resource template" };

/* Each pattern of k that matches no record of t. */
static void
patterns(json_t *doc, const struct pattern_key *k, const struct pattern_target *t, struct confcheck *o)
{
	size_t i;
	const char *v;

	for (i = 0; i < k->l->n; i++) {
		v = k->l->v[i];
		if (!matches(doc, t->kind, v, t->upstream) &&
		    (t->also == CATALOG_NKINDS || !matches(doc, t->also, v, t->upstream)))
			warn(o, where(k->s, k->kind_name, k->key), &k->s->where, "%s: %s matches no %s in the catalog%s",
			    k->key, v, t->what, catalog_degraded(doc) ? " (an upstream is left out of it)" : "");
	}
}

static void
against_catalog(const struct config *cfg, json_t *doc, struct confcheck *o)
{
	const struct cfg_group *g;
	const struct cfg_tenant *t;
	const struct cfg_upstream *u;
	size_t i;

	unseen_tools(cfg, doc, o);
	for (i = 0; i < cfg->n_groups; i++) {
		g = &cfg->groups[i];
		patterns(doc, &(struct pattern_key){ &g->s, "group", "tools", &g->tools }, &tools, o);
		patterns(doc, &(struct pattern_key){ &g->s, "group", "prompts", &g->prompts }, &prompts, o);
		patterns(doc, &(struct pattern_key){ &g->s, "group", "resources", &g->resources }, &resources, o);
	}
	for (i = 0; i < cfg->n_tenants; i++) {
		t = &cfg->tenants[i];
		patterns(doc, &(struct pattern_key){ &t->s, "tenant", "allow", &t->allow }, &tools, o);
		patterns(doc, &(struct pattern_key){ &t->s, "tenant", "deny", &t->deny }, &tools, o);
	}
	for (i = 0; i < cfg->n_upstreams; i++) {
		u = &cfg->upstreams[i];
		if (offers_more(doc, u->s.name) >= 0)	/* (not for one left out of the catalog) */
			patterns(doc, &(struct pattern_key){ &u->s, "upstream", "read-only-tools", &u->read_only_tools },
			    &(struct pattern_target){ CATALOG_TOOLS, CATALOG_NKINDS, u->s.name, "tool of this upstream" }, o);
	}
}

/* Names (and URIs) two upstreams both offer: each is the first's in the file (its call
 * goes there, and is refused while that one is down, never passed to the other). Said at
 * the other upstream's section, CONFCHECK_TOOLS_MAX of them a kind, then how many more. */
static void
shared_names(const struct config *cfg, json_t *doc, struct confcheck *o)
{
	static const char *const what[CATALOG_NKINDS] = { "tool", "prompt", "resource", "resource template" };
	const struct cfg_upstream *first, *other;
	const char *up, *orig, *key;
	size_t i, n, alt, said;
	int k;

	for (k = 0; k < CATALOG_NKINDS; k++) {
		n = catalog_count(doc, (enum catalog_kind)k);
		for (i = said = 0; i < n; i++) {
			if (catalog_route_alt(doc, (enum catalog_kind)k, (long)i, 1, &up, &orig) < 0 ||
			    catalog_route(doc, (enum catalog_kind)k, (long)i, &up, &orig) < 0 ||
			    (first = config_upstream(cfg, up)) == NULL || (key = catalog_key(doc, (enum catalog_kind)k, i)) == NULL)
				continue;
			for (alt = 1; catalog_route_alt(doc, (enum catalog_kind)k, (long)i, alt, &up, &orig) == 0; alt++) {
				if ((other = config_upstream(cfg, up)) == NULL || said++ >= CONFCHECK_TOOLS_MAX)
					continue;
				warn(o, &other->s.where, NULL, "[upstream \"%s\"]: %s %s is also upstream %s's, before it in "
				    "the file: %s (give one a prefix)", other->s.name, what[k], key, first->s.name,
				    k <= CATALOG_PROMPTS ? "every call goes there, and is refused while it is down" :
				    "read from the first that lets the caller, never from another while one is down");
			}
		}
		if (said > CONFCHECK_TOOLS_MAX)
			warn(o, &cfg->upstreams[0].s.where, NULL, "%zu more %ss are offered by more than one upstream",
			    said - CONFCHECK_TOOLS_MAX, what[k]);
	}
}

/* Tools whose inputSchema the gateway cannot check (a lookahead pattern, say) at an
 * upstream that validates: their calls are refused. Said at the upstream's section,
 * CONFCHECK_TOOLS_MAX of them, then how many more. */
static void
unchecked_schemas(const struct config *cfg, json_t *doc, struct confcheck *o)
{
	struct schemas *c = schemas_new();
	const struct tool_schemas *ts;
	const struct cfg_upstream *u;
	struct schemas_opts so;
	const char *up, *orig;
	size_t i, n = catalog_count(doc, CATALOG_TOOLS), said = 0;

	for (i = 0; c && i < n; i++) {
		if (catalog_route(doc, CATALOG_TOOLS, (long)i, &up, &orig) < 0 || (u = config_upstream(cfg, up)) == NULL ||
		    !u->validate)
			continue;
		schemas_opts_of(doc, u, &so);
		if (schemas_of(c, doc, i, &so, &ts) < 0 || !ts->in_failed || said++ >= CONFCHECK_TOOLS_MAX)
			continue;
		warn(o, &u->s.where, NULL, "[upstream \"%s\"]: tool %s: its inputSchema cannot be checked (%s): its calls "
		    "are refused (validate = no passes them unchecked)", u->s.name, catalog_key(doc, CATALOG_TOOLS, i),
		    ts->in_reason);
	}
	if (said > CONFCHECK_TOOLS_MAX)
		warn(o, &cfg->upstreams[0].s.where, NULL, "%zu more tools have an inputSchema that cannot be checked",
		    said - CONFCHECK_TOOLS_MAX);
	schemas_free(c);
}

/* Upstreams whose tokens the gateway obtains: they are sealed under a key of
 * session-key-file's, else of the state file's (which its reader has too). */
static void
credentials(const struct config *cfg, struct confcheck *o)
{
	const struct cfg_upstream *u;
	size_t i;

	for (i = 0; i < cfg->n_upstreams && !cfg->has_session_key; i++)
		if (UP_OBTAINED(u = &cfg->upstreams[i]))
			warn(o, where(&u->s, "upstream", "credentials"), NULL, "credentials = %s: without [gateway] "
			    "session-key-file, the tokens obtained for it are sealed under the state file's own key "
			    "(whoever can read the state file can open them)",
			    u->credentials == UP_CRED_EXCHANGE ? "exchange" : u->credentials == UP_CRED_CLIENT ?
			    "client-credentials" : "id-jag");
}

/* line (k bytes, as snprintf made it into 2048) after the used bytes of out: 0, or -1
 * when it was cut or out is full. */
static int
put_line(char *out, size_t n, size_t *used, const char *line, int k)
{
	if (k <= 0 || k >= 2048 || *used + (size_t)k >= n)
		return -1;
	memcpy(out + *used, line, (size_t)k + 1);
	*used += (size_t)k;
	return 0;
}

void
confcheck_credentials_note(const struct config *cfg, char *out, size_t n)
{
	static const char *const how[] = {
		[UP_CRED_EXCHANGE] = "each caller's token exchanged (RFC 8693) at",
		[UP_CRED_CLIENT] = "the gateway's own token (client_credentials) from",
		[UP_CRED_ID_JAG] = "each caller's token exchanged for an ID-JAG at the issuer, traded (jwt-bearer) at",
	};
	const struct cfg_upstream *u;
	char where[1200], line[2048];
	size_t i, used = 0;
	int k;

	out[0] = '\0';
	for (i = 0; i < cfg->n_upstreams; i++) {
		if ((u = &cfg->upstreams[i])->credentials == UP_CRED_USER_OAUTH) {
			k = snprintf(line, sizeof(line), "upstream \"%s\": each person's own account there, connected at "
			    "%s (sign-in at the issuer as client %s; consent at %s as %s%s%s); its catalog %s\n",
			    u->s.name, cfg->connect_url, cfg->connect_client_id ? cfg->connect_client_id : cfg->client_id,
			    u->authorization_endpoint ? u->authorization_endpoint :
			    "the authorization server its protected resource metadata names", upreg_how_words(u),
			    u->client_id ? " " : "", u->client_id ? u->client_id : "",
			    u->catalog_credentials == UP_CATALOG_CLIENT ? "with the gateway's own token (client_credentials)" :
			    "asked with no token");
			if (put_line(out, n, &used, line, k) < 0)
				break;
			continue;
		}
		if (!UP_OBTAINED(u))
			continue;
		if (u->token_endpoint)
			snprintf(where, sizeof(where), "%s", u->token_endpoint);
		else
			snprintf(where, sizeof(where), "%s", u->credentials == UP_CRED_EXCHANGE ?
			    "the issuer's token endpoint (its metadata)" :
			    "the token endpoint of the authorization server its protected resource metadata names");
		k = snprintf(line, sizeof(line), "upstream \"%s\": %s %s, as client %s%s\n", u->s.name, how[u->credentials],
		    where, u->client_id ? u->client_id : cfg->client_id, UP_AS_CALLER(u) &&
		    u->catalog_credentials == UP_CATALOG_CLIENT ? "; its catalog with the gateway's own token" : "");
		if (put_line(out, n, &used, line, k) < 0)
			break;
	}
}

void
confcheck_run(const struct config *cfg, json_t *doc, struct confcheck *o)
{
	o->n = o->dropped = 0;
	inert_keys(cfg, o);
	verify_keys(cfg, o);
	credentials(cfg, o);
	if (doc) {
		shared_names(cfg, doc, o);
		unchecked_schemas(cfg, doc, o);
	}
	if (cfg->n_tenants == 0) {
		policy_off(cfg, o);
		return;
	}
	groups_and_features(cfg, o);
	upstreams(cfg, doc, o);
	if (doc)
		against_catalog(cfg, doc, o);
}
