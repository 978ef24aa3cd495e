/* config_keys — the tables of every section and key (the configuration's contract),
 * values parsed and stored through them, defaults, where a key was set, and a
 * configuration's lifetime: its references, its lookups, and freeing (credentials
 * wiped). */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config_keys.h"
#include "secret.h"
#include "url.h"

static const char *const deny_styles[] = { "forbidden", "hide", NULL };
static const char *const access_modes[] = { "read-write", "read-only", NULL };
static const char *const client_auths[] = { "client_secret_basic", "client_secret_post", NULL };
static const char *const redis_fails[] = { "closed", "open", NULL };
static const char *const verifies[] = { "introspection", "jwt", "auto", NULL };
static const char *const jwt_typs[] = { "strict", "lenient", NULL };
static const char *const dpop_modes[] = { "allowed", "required", NULL };
static const char *const credentials[] = { "none", "static", "exchange", "client-credentials", "id-jag", "user-oauth", NULL };
static const char *const catalog_credentials[] = { "caller", "client-credentials", NULL };
static const char *const catalogs[] = { "shared", "per-caller", NULL };
static const char *const output_checks[] = { "yes", "no", "log", NULL };
static const char *const pin_modes[] = { "off", "warn", "hold", NULL };
static const char *const new_tools[] = { "allow", "hold", NULL };
/* In the order of log.h's enum log_level, so that the stored value (index + 1) is one. */
static const char *const log_levels[] = { "error", "warn", "info", NULL };

#define C(f)	offsetof(struct config, f)
static const struct cfg_key gateway_keys[] = {
	{ "resource", T_URL, C(resource), 0, 0, NULL, NULL, CK_ACCEPT },
	{ "docs-url", T_URL, C(docs_url), 0, 0, NULL, NULL, 0 },
	{ "name", T_STR, C(name), 0, 0, NULL, NULL, 0 },
	{ "title", T_STR, C(title), 0, 0, NULL, NULL, 0 },
	{ "description", T_STR, C(description), 0, 0, NULL, NULL, 0 },
	{ "version", T_STR, C(version), 0, 0, NULL, NULL, 0 },
	{ "website-url", T_URL, C(website_url), 0, 0, NULL, NULL, 0 },
	{ "instructions", T_STR, C(instructions), 0, 0, NULL, NULL, 0 },
	{ "allowed-origins", T_LIST, C(allowed_origins), 0, 0, NULL, NULL, 0 },
	{ "max-body", T_INT, C(max_body), 64, 64L << 20, NULL, "1048576", 0 },
	{ "max-batch", T_INT, C(max_batch), 1, 10000, NULL, "100", 0 },
	{ "catalog-ttl", T_INT, C(catalog_ttl), 1, 86400, NULL, "60", 0 },
	{ "page-size", T_INT, C(page_size), 1, 10000, NULL, "100", 0 },
	{ "state", T_STR, C(state), 0, 0, NULL, NULL, 0 },
	{ "pins-file", T_STR, C(pins_file), 0, 0, NULL, NULL, 0 },
	{ "session-key-file", T_STR, C(session_key_file), 0, 0, NULL, NULL, 0 },
	{ "session-ttl", T_INT, C(session_ttl), 60, 30 * 86400, NULL, "86400", 0 },
	{ "connect-path", T_STR, C(connect_path), 0, 0, NULL, "/mcp/connect", 0 },
	{ "connect-client-id", T_STR, C(connect_client_id), 0, 0, NULL, NULL, 0 },
	{ "connect-client-secret-file", T_STR, C(connect_client_secret_file), 0, 0, NULL, NULL, 0 },
	{ "vault-entries", T_INT, C(vault_entries), 8, 65536, NULL, "1024", 0 },
	{ "log-file", T_STR, C(log_file), 0, 0, NULL, NULL, 0 },
	{ "log-level", T_ENUM, C(log_level), 0, 0, log_levels, "info", 0 },
	{ "trusted-proxies", T_LIST, C(trusted_proxies), 0, 0, NULL, NULL, 0 },
	{ "workers", T_INT, C(workers), 1, 256, NULL, "4", 0 },
	{ "max-workers", T_INT, C(max_workers), 1, 1024, NULL, "64", 0 },
	{ "deny-style", T_ENUM, C(deny_style), 0, 0, deny_styles, "forbidden", 0 },
	/* No default in the table: the longest upstream timeout-ms (derive). */
	{ "request-timeout-ms", T_INT, C(request_timeout_ms), 1, 3600000, NULL, NULL, 0 },
	{ "client-timeout-ms", T_INT, C(client_timeout_ms), 100, 3600000, NULL, "10000", 0 },
	{ NULL, 0, 0, 0, 0, NULL, NULL, 0 }
};

static const struct cfg_key auth_keys[] = {
	{ "issuer", T_URL, C(issuer), 0, 0, NULL, NULL, CK_ACCEPT },
	{ "introspection-endpoint", T_URL, C(introspection_endpoint), 0, 0, NULL, NULL, CK_ACCEPT },
	{ "client-id", T_STR, C(client_id), 0, 0, NULL, NULL, CK_ACCEPT },
	{ "client-secret-file", T_STR, C(client_secret_file), 0, 0, NULL, NULL, 0 },
	{ "client-auth", T_ENUM, C(client_auth), 0, 0, client_auths, "client_secret_basic", 0 },
	{ "required-scopes", T_LIST, C(required_scopes), 0, 0, NULL, NULL, 0 },
	{ "scopes-supported", T_LIST, C(scopes_supported), 0, 0, NULL, NULL, 0 },
	{ "cache-ttl", T_INT, C(cache_ttl), 0, 86400, NULL, "300", 0 },
	{ "cache-entries", T_INT, C(cache_entries), 64, 1 << 20, NULL, "4096", 0 },
	{ "shared-cache", T_BOOL, C(shared_cache), 0, 0, NULL, "no", 0 },
	{ "negative-ttl", T_INT, C(negative_ttl), 0, 3600, NULL, "10", 0 },
	{ "timeout-ms", T_INT, C(auth_timeout_ms), 1, 60000, NULL, "3000", 0 },
	{ "groups-claim", T_STR, C(groups_claim), 0, 0, NULL, "groups", CK_ACCEPT },
	{ "tenant-claim", T_STR, C(tenant_claim), 0, 0, NULL, "tenant", CK_ACCEPT },
	{ "as-metadata", T_STR, C(as_metadata), 0, 0, NULL, "fetch", 0 },
	{ "ca-file", T_STR, C(auth_ca_file), 0, 0, NULL, NULL, 0 },
	{ "verify", T_ENUM, C(verify), 0, 0, verifies, "introspection", CK_ACCEPT },
	{ "jwks-uri", T_STR, C(jwks_uri), 0, 0, NULL, NULL, CK_ACCEPT },
	{ "jwt-algs", T_LIST, C(jwt_algs_list), 0, 0, NULL, NULL, CK_ACCEPT },
	{ "jwt-typ", T_ENUM, C(jwt_typ), 0, 0, jwt_typs, "strict", CK_ACCEPT },
	{ "introspect-jwt", T_BOOL, C(introspect_jwt), 0, 0, NULL, "no", CK_ACCEPT },
	{ "jwks-ttl", T_INT, C(jwks_ttl), 60, 86400, NULL, "600", 0 },
	{ "jwks-max-age", T_INT, C(jwks_max_age), 60, 2678400, NULL, NULL, 0 },	/* jwks-ttl + 3600 */
	{ "jwks-min-interval", T_INT, C(jwks_min_interval), 1, 3600, NULL, "30", 0 },
	{ "clock-skew", T_INT, C(clock_skew), 0, 600, NULL, "60", CK_ACCEPT },
	{ "audiences", T_LIST, C(audiences), 0, 0, NULL, NULL, CK_ACCEPT },
	{ "scope-claim", T_STR, C(scope_claim), 0, 0, NULL, "scope", CK_ACCEPT },
	{ "dpop", T_ENUM, C(dpop), 0, 0, dpop_modes, "allowed", CK_ACCEPT },
	{ "dpop-algs", T_LIST, C(dpop_algs_list), 0, 0, NULL, NULL, 0 },
	{ "dpop-window", T_INT, C(dpop_window), 1, 600, NULL, "60", 0 },
	{ NULL, 0, 0, 0, 0, NULL, NULL, 0 }
};

static const struct cfg_key limits_keys[] = {
	{ "gateway", T_RATE, C(limit_gateway), 0, 0, NULL, "0/1", 0 },
	{ "ip", T_RATE, C(limit_ip), 0, 0, NULL, "0/1", 0 },
	{ "tenant", T_RATE, C(limit_tenant), 0, 0, NULL, "0/1", 0 },
	{ "token", T_RATE, C(limit_token), 0, 0, NULL, "0/1", 0 },
	{ "tool", T_RATE, C(limit_tool), 0, 0, NULL, "0/1", 0 },
	{ "store", T_STR, C(limit_store), 0, 0, NULL, "shm", 0 },
	{ "redis-timeout-ms", T_INT, C(redis_timeout_ms), 1, 10000, NULL, "20", 0 },
	{ "redis-fail", T_ENUM, C(redis_fail), 0, 0, redis_fails, "closed", 0 },
	{ NULL, 0, 0, 0, 0, NULL, NULL, 0 }
};

static const struct cfg_key metrics_keys[] = {
	{ "path", T_STR, C(metrics_path), 0, 0, NULL, "/metrics", 0 },
	{ "allow", T_LIST, C(metrics_allow), 0, 0, NULL, NULL, 0 },
	{ NULL, 0, 0, 0, 0, NULL, NULL, 0 }
};
#undef C

#define U(f)	offsetof(struct cfg_upstream, f)
static const struct cfg_key upstream_keys[] = {
	{ "url", T_URL, U(url), 0, 0, NULL, NULL, 0 },
	{ "prefix", T_STR, U(prefix), 0, 0, NULL, "", 0 },
	{ "group", T_STR, U(group), 0, 0, NULL, NULL, 0 },
	{ "auth-header-file", T_STR, U(auth_header_file), 0, 0, NULL, NULL, 0 },
	{ "credentials", T_ENUM, U(credentials), 0, 0, credentials, NULL, 0 },
	{ "token-endpoint", T_URL, U(token_endpoint), 0, 0, NULL, NULL, 0 },
	{ "exchange-resource", T_URL, U(exchange_resource), 0, 0, NULL, NULL, 0 },
	{ "exchange-audience", T_STR, U(exchange_audience), 0, 0, NULL, NULL, 0 },
	{ "exchange-scopes", T_LIST, U(exchange_scopes), 0, 0, NULL, NULL, 0 },
	{ "client-id", T_STR, U(client_id), 0, 0, NULL, NULL, 0 },
	{ "client-secret-file", T_STR, U(client_secret_file), 0, 0, NULL, NULL, 0 },
	{ "catalog-credentials", T_ENUM, U(catalog_credentials), 0, 0, catalog_credentials, NULL, 0 },
	{ "authorization-endpoint", T_URL, U(authorization_endpoint), 0, 0, NULL, NULL, 0 },
	{ "user-scopes", T_LIST, U(user_scopes), 0, 0, NULL, NULL, 0 },
	{ "catalog", T_ENUM, U(catalog), 0, 0, catalogs, "shared", 0 },
	{ "read-only-tools", T_LIST, U(read_only_tools), 0, 0, NULL, NULL, 0 },
	{ "trust-hints", T_BOOL, U(trust_hints), 0, 0, NULL, "no", 0 },
	{ "timeout-ms", T_INT, U(timeout_ms), 1, 3600000, NULL, UPSTREAM_TIMEOUT_DEFAULT, 0 },
	{ "validate", T_BOOL, U(validate), 0, 0, NULL, "yes", 0 },
	{ "validate-formats", T_BOOL, U(validate_formats), 0, 0, NULL, "no", 0 },
	{ "validate-output", T_ENUM, U(validate_output), 0, 0, output_checks, "log", 0 },
	{ "max-result", T_INT, U(max_result), 1024, CFG_MAX_RESULT_LIMIT, NULL, "4194304", 0 },
	{ "pin", T_ENUM, U(pin), 0, 0, pin_modes, "warn", 0 },
	{ "new-tools", T_ENUM, U(new_tools), 0, 0, new_tools, "allow", 0 },
	{ "hygiene", T_BOOL, U(hygiene), 0, 0, NULL, "yes", 0 },
	{ "max-description", T_INT, U(max_description), 0, 1000000, NULL, "8192", 0 },
	{ NULL, 0, 0, 0, 0, NULL, NULL, 0 }
};
#undef U

#define G(f)	offsetof(struct cfg_group, f)
static const struct cfg_key group_keys[] = {
	{ "tools", T_LIST, G(tools), 0, 0, NULL, NULL, 0 },
	{ "prompts", T_LIST, G(prompts), 0, 0, NULL, NULL, 0 },
	{ "resources", T_LIST, G(resources), 0, 0, NULL, NULL, 0 },
	{ "scopes", T_LIST, G(scopes), 0, 0, NULL, NULL, 0 },
	{ "members", T_LIST, G(members), 0, 0, NULL, NULL, 0 },
	{ "feature", T_STR, G(feature), 0, 0, NULL, NULL, 0 },
	{ "limit-tool", T_RATE, G(limit_tool), 0, 0, NULL, NULL, 0 },
	{ NULL, 0, 0, 0, 0, NULL, NULL, 0 }
};
#undef G

#define N(f)	offsetof(struct cfg_tenant, f)
static const struct cfg_key tenant_keys[] = {
	{ "groups", T_LIST, N(groups), 0, 0, NULL, NULL, 0 },
	{ "access-mode", T_ENUM, N(access_mode), 0, 0, access_modes, "read-write", 0 },
	{ "features", T_LIST, N(features), 0, 0, NULL, NULL, 0 },
	{ "deny", T_LIST, N(deny), 0, 0, NULL, NULL, 0 },
	{ "allow", T_LIST, N(allow), 0, 0, NULL, NULL, 0 },
	{ "limit-gateway", T_RATE, N(limit_gateway), 0, 0, NULL, NULL, 0 },
	{ "limit-ip", T_RATE, N(limit_ip), 0, 0, NULL, NULL, 0 },
	{ "limit-tenant", T_RATE, N(limit_tenant), 0, 0, NULL, NULL, 0 },
	{ "limit-token", T_RATE, N(limit_token), 0, 0, NULL, NULL, 0 },
	{ "limit-tool", T_RATE, N(limit_tool), 0, 0, NULL, NULL, 0 },
	{ NULL, 0, 0, 0, 0, NULL, NULL, 0 }
};
#undef N

const struct cfg_kind cfg_kinds[K_MAX] = {
	[K_GATEWAY] = { "gateway", gateway_keys, 0, 0, 0, 0, offsetof(struct config, gateway) },
	[K_AUTH] = { "auth", auth_keys, 0, 0, 0, 0, offsetof(struct config, auth) },
	[K_LIMITS] = { "limits", limits_keys, 0, 0, 0, 0, offsetof(struct config, limits) },
	[K_METRICS] = { "metrics", metrics_keys, 0, 0, 0, 0, offsetof(struct config, metrics) },
	[K_UPSTREAM] = { "upstream", upstream_keys, 1, sizeof(struct cfg_upstream),
		offsetof(struct config, upstreams), offsetof(struct config, n_upstreams), 0 },
	[K_GROUP] = { "group", group_keys, 1, sizeof(struct cfg_group),
		offsetof(struct config, groups), offsetof(struct config, n_groups), 0 },
	[K_TENANT] = { "tenant", tenant_keys, 1, sizeof(struct cfg_tenant),
		offsetof(struct config, tenants), offsetof(struct config, n_tenants), 0 },
};

/* Keys that load (a configuration written for a later version still does) but that
 * nothing implements yet: setting one is a warning. Matched by the start of the key
 * ("" is every key of the section). */
static const struct {
	enum kind kind;
	const char *prefix;
	const char *what;
} inert_keys[] = {
	{ K_TENANT, "limit-gateway", "the gateway limit is decided before the caller's tenant is known: "
	    "[limits] gateway applies" },
	{ K_TENANT, "limit-ip", "the ip limit is decided before the caller's tenant is known: "
	    "[limits] ip applies" },
};

const char *
cfg_inert(enum kind kind, const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(inert_keys) / sizeof(inert_keys[0]); i++)
		if (inert_keys[i].kind == kind &&
		    strncmp(key, inert_keys[i].prefix, strlen(inert_keys[i].prefix)) == 0)
			return inert_keys[i].what;
	return NULL;
}

static char *
xstrndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

void
strlist_free(struct strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

int
strlist_has(const struct strlist *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

int
strlist_split(struct strlist *l, const char *value)
{
	const char *p = value, *start;
	char **nv;

	while (*p) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		/* l owns what it holds (strlist_free); gcc -fanalyzer takes the realloc'd
		 * array's new element for a leak. */
		if ((nv = realloc(l->v, (l->n + 1) * sizeof(*nv))) == NULL)
			return -1;
		l->v = nv;
		if ((l->v[l->n] = xstrndup(start, (size_t)(p - start))) == NULL)
			return -1;
		l->n++;
	}
	return 0;
}

#define RATE_SYNTAX	"expected N/SECONDS, N/SECONDS burst B, or 0 (unlimited)"

/* Bounded decimal parse of the whole string. */
static int
parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*s) && *s != '-')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* A rate: "0" (unlimited), "N/SECONDS" or "N/SECONDS burst B" (B requests more than N
 * may come at once from idle). NULL, or why not. */
static const char *
parse_rate(const char *value, struct rate *r)
{
	char num[32], per[32], word[8], burst[32], extra;
	int got;

	if (strcmp(value, "0") == 0) {
		r->n = 0, r->per = 1, r->burst = 0;
		return NULL;
	}
	got = sscanf(value, "%31[0-9]/%31[0-9] %7s %31s %c", num, per, word, burst, &extra);
	if ((got != 2 && got != 4) || (got == 4 && strcmp(word, "burst") != 0) ||
	    (got == 2 && strspn(value, "0123456789/") != strlen(value)))
		return RATE_SYNTAX;
	if (parse_long(num, 0, RATE_N_MAX, &r->n) < 0 || parse_long(per, 1, RATE_PER_MAX, &r->per) < 0)
		return RATE_SYNTAX;
	r->burst = 0;
	if (got == 4 && parse_long(burst, 0, RATE_N_MAX, &r->burst) < 0)
		return "burst: expected 0 to 1000000000 requests";
	return NULL;
}

static const char nomem[] = "out of memory";

/* One value stored: NULL, or the reason it was refused (nomem without memory; an
 * integer's bounds written in err, and its detail returned). */
static const char *
store(void *base, const struct cfg_key *k, const char *value, struct gw_error *err)
{
	void *field = (char *)base + k->offset;
	long v;
	size_t i;

	switch (k->type) {
	case T_URL:
		if (url_check(value) < 0)
			return "expected an absolute http:// or https:// URL without fragment";
		/* FALLTHROUGH */
	case T_STR:	/* what field holds is the configuration's: config_unref frees it (not a leak,
			 * whatever gcc -fanalyzer says of a pointer stored through a cast) */
		free(*(char **)field);
		return (*(char **)field = strdup(value)) == NULL ? nomem : NULL;
	case T_INT:
		if (parse_long(value, k->min, k->max, &v) < 0) {
			gw_error_set(err, GW_ECONFIG, "expected an integer from %ld to %ld", k->min, k->max);
			return err->detail;
		}
		*(long *)field = v;
		return NULL;
	case T_BOOL:
		if (!strcmp(value, "yes") || !strcmp(value, "true") || !strcmp(value, "on") || !strcmp(value, "1"))
			*(int *)field = 1;
		else if (!strcmp(value, "no") || !strcmp(value, "false") || !strcmp(value, "off") || !strcmp(value, "0"))
			*(int *)field = 0;
		else
			return "expected yes or no";
		return NULL;
	case T_LIST:
		strlist_free(field);
		return strlist_split(field, value) < 0 ? nomem : NULL;
	case T_ENUM:
		for (i = 0; k->names[i]; i++)
			if (strcmp(value, k->names[i]) == 0) {
				*(int *)field = (int)i + 1;
				return NULL;
			}
		return "unknown value";
	case T_RATE:
		return parse_rate(value, field);
	}
	return "unknown key type";
}

int
cfg_set_value(void *base, const struct cfg_key *k, const char *value, struct gw_error *err)
{
	const char *reason = store(base, k, value, err);

	if (reason == NULL)
		return 0;
	if (reason != err->detail)
		gw_error_set(err, reason == nomem ? GW_EINTERNAL : GW_ECONFIG, "%s", reason);
	return -1;
}

/* Where key of a section was set (for errors that arise after parsing). */
const struct cfg_where *
cfg_where(const struct cfg_section *sec, enum kind kind, const char *key)
{
	static const struct cfg_where none = { NULL, 0 };
	const struct cfg_key *keys = cfg_kinds[kind].keys;
	size_t i;

	for (i = 0; keys[i].key; i++)
		if (strcmp(keys[i].key, key) == 0)
			return &sec->at[i];
	return &none;
}

/* One value into b, in words: absent and empty differ. */
static int
put_value(struct buf *b, const void *base, const struct cfg_key *k)
{
	const void *field = (const char *)base + k->offset;
	const struct strlist *l;
	size_t i;
	int rc = 0;

	switch (k->type) {
	case T_STR: case T_URL:
		return *(char *const *)field ? buf_printf(b, "=%s", *(char *const *)field) : 0;
	case T_INT:
		return buf_printf(b, "=%ld", *(const long *)field);
	case T_BOOL: case T_ENUM:
		return buf_printf(b, "=%d", *(const int *)field);
	case T_LIST:
		l = field;
		rc = buf_putc(b, '=');
		for (i = 0; i < l->n && rc == 0; i++)
			rc = buf_printf(b, "%s%s", i ? " " : "", l->v[i]);
		return rc;
	case T_RATE:
		return buf_printf(b, "=%ld/%ld+%ld", ((const struct rate *)field)->n,
		    ((const struct rate *)field)->per, ((const struct rate *)field)->burst);
	}
	return -1;
}

int
cfg_accept_digest(const struct config *cfg, unsigned char out[32])
{
	const struct cfg_kind *k;
	const struct cfg_key *key;
	struct buf b;
	int rc = 0;

	buf_init(&b, 1 << 20);
	for (k = cfg_kinds; k < cfg_kinds + K_MAX && rc == 0; k++)
		for (key = k->keys; !k->named && key->key && rc == 0; key++)
			if (key->flags & CK_ACCEPT)
				rc = buf_printf(&b, "%s.%s", k->name, key->key) < 0 ||
				    put_value(&b, cfg, key) < 0 || buf_putc(&b, '\n') < 0 ? -1 : 0;
	if (rc == 0)
		secret_digest(b.data ? b.data : "", b.len, out, 32);
	buf_free(&b);
	return rc;
}

/* The defaults are valid values (test_config loads them): only memory can fail. */
static int
apply_defaults(void *base, struct cfg_section *sec, const struct cfg_key *keys)
{
	struct gw_error err;
	size_t i;

	for (i = 0; keys[i].key; i++)
		if (keys[i].def && sec->at[i].line == 0 &&
		    cfg_set_value(base, &keys[i], keys[i].def, &err) < 0)
			return -1;
	return 0;
}

int
cfg_defaults(struct config *cfg)
{
	const struct cfg_kind *k;
	size_t i, n;
	char *arr;

	for (k = cfg_kinds; k < cfg_kinds + K_MAX; k++) {
		if (!k->named) {
			if (apply_defaults(cfg, (struct cfg_section *)((char *)cfg + k->section_off), k->keys) < 0)
				return -1;
			continue;
		}
		arr = *(char **)((char *)cfg + k->array_off);	/* each element begins with its section */
		n = *(size_t *)((char *)cfg + k->count_off);
		for (i = 0; i < n; i++)
			if (apply_defaults(arr + i * k->elem_size, (struct cfg_section *)(arr + i * k->elem_size),
			    k->keys) < 0)
				return -1;
	}
	return 0;
}

/* config.h */
void
config_errors_print(const struct cfg_errors *errs, FILE *f)
{
	size_t i;

	for (i = 0; i < errs->n; i++)
		fprintf(f, "%s\n", errs->err[i].detail);
	if (errs->dropped)
		fprintf(f, "(%zu more errors)\n", errs->dropped);
}

struct config *
config_ref(struct config *cfg)
{
	__atomic_add_fetch(&cfg->refs, 1, __ATOMIC_RELAXED);
	return cfg;
}

static void
free_section_values(void *base, const struct cfg_key *keys)
{
	size_t i;

	for (i = 0; keys[i].key; i++) {
		void *field = (char *)base + keys[i].offset;

		if (keys[i].type == T_STR || keys[i].type == T_URL)
			free(*(char **)field);
		else if (keys[i].type == T_LIST)
			strlist_free(field);
	}
}

void
config_unref(struct config *cfg)
{
	size_t i;

	if (cfg == NULL || __atomic_sub_fetch(&cfg->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	free_section_values(cfg, gateway_keys);
	free_section_values(cfg, auth_keys);
	free_section_values(cfg, limits_keys);
	free_section_values(cfg, metrics_keys);
	free(cfg->metrics_from);
	url_redis_free(&cfg->redis);
	secret_wipe(cfg->shared_key, sizeof(cfg->shared_key));
	free(cfg->trusted);
	for (i = 0; i < cfg->n_upstreams; i++) {
		free_section_values(&cfg->upstreams[i], upstream_keys);
		free(cfg->upstreams[i].s.name);
		if (cfg->upstreams[i].client_secret) {
			secret_wipe(cfg->upstreams[i].client_secret, strlen(cfg->upstreams[i].client_secret));
			free(cfg->upstreams[i].client_secret);
		}
		if (cfg->upstreams[i].auth_header) {
			secret_wipe(cfg->upstreams[i].auth_header, strlen(cfg->upstreams[i].auth_header));
			free(cfg->upstreams[i].auth_header);
		}
	}
	for (i = 0; i < cfg->n_groups; i++) {
		free_section_values(&cfg->groups[i], group_keys);
		free(cfg->groups[i].s.name);
	}
	for (i = 0; i < cfg->n_tenants; i++) {
		free_section_values(&cfg->tenants[i], tenant_keys);
		free(cfg->tenants[i].s.name);
		free(cfg->tenants[i].listed);
	}
	free(cfg->upstreams);
	free(cfg->groups);
	free(cfg->tenants);
	secret_wipe(cfg->session_key, sizeof(cfg->session_key));
	free(cfg->origin);
	free(cfg->prm_url);
	free(cfg->connect_url);
	free(cfg->client_document_url);
	if (cfg->connect_client_secret) {
		secret_wipe(cfg->connect_client_secret, strlen(cfg->connect_client_secret));
		free(cfg->connect_client_secret);
	}
	if (cfg->client_secret) {
		secret_wipe(cfg->client_secret, strlen(cfg->client_secret));
		free(cfg->client_secret);
	}
	pins_free(cfg->pins);
	for (i = 0; i < cfg->n_files; i++)
		free(cfg->files[i].path);
	free(cfg->files);
	strlist_free(&cfg->include_globs);
	free(cfg);
}


const struct cfg_tenant *
config_tenant(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->n_tenants; i++)
		if (strcmp(cfg->tenants[i].s.name, name) == 0)
			return &cfg->tenants[i];
	return NULL;
}

int
config_rate_on(const struct rate *r)
{
	return r->per > 0 && r->n > 0;
}

const struct cfg_where *
config_group_where(const struct cfg_group *g, const char *key)
{
	return cfg_where(&g->s, K_GROUP, key);
}

const struct cfg_where *
config_tenant_where(const struct cfg_tenant *t, const char *key)
{
	return cfg_where(&t->s, K_TENANT, key);
}

const struct cfg_where *
config_limits_where(const struct config *cfg, const char *key)
{
	return cfg_where(&cfg->limits, K_LIMITS, key);
}

const struct cfg_where *
config_key_where(const struct cfg_section *sec, const char *kind, const char *key)
{
	static const struct cfg_where none = { NULL, 0 };
	int k;

	for (k = 0; k < K_MAX; k++)
		if (strcmp(cfg_kinds[k].name, kind) == 0)
			return cfg_where(sec, (enum kind)k, key);
	return &none;
}

const struct cfg_upstream *
config_upstream(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; name && i < cfg->n_upstreams; i++)
		if (strcmp(cfg->upstreams[i].s.name, name) == 0)
			return &cfg->upstreams[i];
	return NULL;
}
