/* config — the configuration file of docs/ARCHITECTURE.md §3: loader, key table,
 * change detection. A loaded config is immutable and reference-counted, so a reload
 * can swap it while requests still hold the old one. */
#ifndef GW_CONFIG_H
#define GW_CONFIG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "err.h"
#include "pins.h"
#include "netaddr.h"
#include "url.h"

#define CFG_MAX_KEYS	40	/* keys per section kind */
#define CFG_LINE_MAX	4096	/* longest accepted line */
#define CFG_MAX_ERRORS	32
#define CFG_MAX_WARNINGS	16
#define CFG_MAX_DEPTH	8	/* include nesting */
#define CFG_BIND_BYTES	16	/* struct config's bind */
#define CFG_FILE_MAX	(1 << 20)	/* bytes in one file */
#define CFG_MAX_FILES	1024	/* files in one configuration, the main file included */
#define CFG_TOTAL_MAX	(16 << 20)	/* bytes in all its files together */

struct strlist {
	char **v;
	size_t n;
};

struct cfg_where {
	const char *file;	/* owned by the config's file list; NULL = default */
	int line;
};

/* Common head of every section instance: its name and where each key was set. */
struct cfg_section {
	char *name;			/* [kind "name"]; NULL for singletons */
	struct cfg_where where;		/* the section header */
	struct cfg_where at[CFG_MAX_KEYS];	/* per key of the kind's table */
};

/* A rate limit: n requests per `per` seconds, burst more at once from idle. per == 0:
 * not set (a tenant's override that is absent); n == 0: unlimited. */
#define RATE_N_MAX	1000000000L
#define RATE_PER_MAX	(86400L * 366)
struct rate {
	long n;		/* requests; 0 = unlimited */
	long per;	/* seconds; 0 = not set */
	long burst;	/* requests beyond n admitted at once from idle */
};

enum deny_style { DENY_FORBIDDEN = 1, DENY_HIDE };
enum access_mode { ACCESS_READ_WRITE = 1, ACCESS_READ_ONLY };
enum client_auth { CLIENT_AUTH_BASIC = 1, CLIENT_AUTH_POST };
enum redis_fail { REDIS_FAIL_CLOSED = 1, REDIS_FAIL_OPEN };
/* [auth] verify: how a token is checked (docs/ARCHITECTURE.md §5). */
enum auth_verify { VERIFY_INTROSPECTION = 1, VERIFY_JWT, VERIFY_AUTO };
enum jwt_typ { JWT_TYP_STRICT = 1, JWT_TYP_LENIENT };
/* [auth] dpop: a DPoP-bound token needs its proof, an unbound one is a bearer token
 * (allowed); or only DPoP-bound tokens are accepted (required). */
enum dpop_mode { DPOP_ALLOWED = 1, DPOP_REQUIRED };
/* [upstream] credentials: what the upstream receives. Unset (0) at parse; derived at
 * load: static when auth-header-file is set, else none. user-oauth: the person's own
 * account at the upstream's authorization server, connected through the connect page
 * and kept in the vault (connected.h). */
enum up_credentials { UP_CRED_NONE = 1, UP_CRED_STATIC, UP_CRED_EXCHANGE, UP_CRED_CLIENT, UP_CRED_ID_JAG,
	UP_CRED_USER_OAUTH };
/* [upstream] catalog-credentials, for an upstream reached as the caller: its catalog
 * fetched with the credential of the caller whose request needs it, or with the
 * gateway's own (client-credentials). Unset (0) at parse: caller, except for user-oauth,
 * whose catalog is fetched with no token unless client-credentials is said (a person's
 * own account never lists for others). */
enum up_catalog_cred { UP_CATALOG_CALLER = 1, UP_CATALOG_CLIENT };
/* [upstream] catalog: one list for every caller the policy lets see the upstream, or, for
 * an upstream reached as the caller whose lists vary by person, one per caller. */
enum up_catalog { UP_CATALOG_SHARED = 1, UP_CATALOG_PER_CALLER };
/* validate-output: a tool result's structuredContent against the tool's outputSchema. */
enum up_output_check { UP_OUTPUT_YES = 1, UP_OUTPUT_NO, UP_OUTPUT_LOG };
/* pin: what becomes of a record whose definition is not the one the pins file approved
 * (pinning.h); new-tools: of one it has no pin for. */
enum up_pin { UP_PIN_OFF = 1, UP_PIN_WARN, UP_PIN_HOLD };
enum up_new_tools { UP_NEW_ALLOW = 1, UP_NEW_HOLD };
#define CFG_MAX_RESULT_LIMIT	(8L << 20)	/* max-result's ceiling: what any answer may be */
/* Is upstream u reached as the caller (exchange, id-jag: a token for the caller's)? */
#define UP_AS_CALLER(u)	((u)->credentials == UP_CRED_EXCHANGE || (u)->credentials == UP_CRED_ID_JAG)
/* Does it get a token the gateway obtains at a token endpoint (as the caller, or its
 * own: client-credentials)? */
#define UP_OBTAINED(u)	(UP_AS_CALLER(u) || (u)->credentials == UP_CRED_CLIENT)
/* Does it see the person (a token for the caller's, or the person's own account there):
 * calls as the caller, on sessions of the caller's own? */
#define UP_PERSONAL(u)	(UP_AS_CALLER(u) || (u)->credentials == UP_CRED_USER_OAUTH)
/* Does it get a bearer token from struct upstream_cred (obtained, or from the vault)? */
#define UP_BEARER(u)	(UP_OBTAINED(u) || (u)->credentials == UP_CRED_USER_OAUTH)

struct cfg_upstream {
	struct cfg_section s;
	char *url;
	char *prefix;
	char *group;
	char *auth_header_file;
	char *auth_header;	/* "Name: value" read from auth-header-file; wiped on free */
	int credentials;	/* enum up_credentials */
	/* credentials = exchange (RFC 8693): where, as whom, and for what. */
	char *token_endpoint;		/* NULL: the issuer's, from its metadata */
	char *exchange_resource;	/* NULL: url */
	char *exchange_audience;	/* NULL: none sent */
	struct strlist exchange_scopes;	/* empty: none asked (the caller's token's) */
	char *client_id;		/* NULL: [auth] client-id */
	char *client_secret_file;
	char *client_secret;		/* read from client-secret-file; wiped on free */
	int catalog_credentials;	/* enum up_catalog_cred: what its catalog is fetched with */
	int catalog;			/* enum up_catalog: whose its catalog is */
	/* credentials = user-oauth: the upstream's authorization server as configured (NULL:
	 * discovered) and what is asked of the person there. */
	char *authorization_endpoint;
	struct strlist user_scopes;
	struct strlist read_only_tools;
	int trust_hints;
	long timeout_ms;
	int validate;		/* tools/call arguments against the tool's inputSchema */
	int validate_formats;	/* with "format" asserting */
	int validate_output;	/* enum up_output_check */
	long max_result;	/* bytes of one answer (an event's data) it may send */
	int pin;		/* enum up_pin */
	int new_tools;		/* enum up_new_tools */
	int hygiene;		/* definitions checked for hidden text (tooldef.h) */
	long max_description;	/* code points of a description or title; 0: any */
};

struct cfg_group {
	struct cfg_section s;
	struct strlist tools;
	struct strlist prompts;		/* globs over exposed prompt names */
	struct strlist resources;	/* globs over resource URIs and URI templates */
	struct strlist scopes;
	struct strlist members;
	char *feature;
	struct rate limit_tool;	/* the tool limit of the tools it holds where tighter (limiter_rate); off: none */
};

struct cfg_tenant {
	struct cfg_section s;
	struct strlist groups;
	int access_mode;
	struct strlist features;
	struct strlist deny;
	struct strlist allow;
	struct rate limit_gateway, limit_ip, limit_tenant, limit_token, limit_tool;
	unsigned char *listed;	/* [n_groups], made at load: 1 when groups names that [group] */
};

struct cfg_file {
	char *path;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	mode_t mode;	/* and owner: a file refused for them is tried again when they change */
	uid_t uid;
};

struct config {
	int refs;
	int broken;	/* load failed: only the provenance below is meaningful */
	uint64_t serial;	/* this load's number in the process: what was derived from another is stale */

	/* [gateway] */
	struct cfg_section gateway;
	char *resource;
	char *docs_url;
	char *name;
	char *title;
	char *description;
	char *version;
	char *website_url;
	char *instructions;
	struct strlist allowed_origins;
	long max_body;
	long max_batch;
	long catalog_ttl;	/* seconds a federated tool catalog is kept */
	long page_size;		/* tools per tools/list page */
	char *state;
	/* The approved definitions (pins.h): read with the configuration, its file watched
	 * with the configuration's; pins_digest: of their canonical text (pins_format). */
	char *pins_file;
	struct pins *pins;
	unsigned char pins_digest[32];
	char *session_key_file;
	unsigned char session_key[32];	/* from session-key-file */
	int has_session_key;
	long session_ttl;
	/* The connect page (user-oauth): its path, the gateway's client at the issuer that
	 * signs people in there (NULL: [auth]'s), and the vault's size in the state file. */
	char *connect_path;
	char *connect_client_id;
	char *connect_client_secret_file;
	char *connect_client_secret;	/* read from connect-client-secret-file; wiped on free */
	long vault_entries;
	char *log_file;
	int log_level;		/* log-level: 1 error, 2 warn, 3 info (log.h's enum log_level) */
	struct strlist trusted_proxies;
	struct netaddr_range *trusted;	/* trusted-proxies, parsed at load */
	size_t n_trusted;
	long workers;
	/* The most worker threads of a FastCGI process (at least workers): beyond workers,
	 * threads start while every one is busy and calls wait on upstreams. */
	long max_workers;
	int deny_style;
	/* The upstream calls of one request (a batch's, an initialize's) end by this long
	 * after its exchange began; batch elements not started by then are not run. */
	long request_timeout_ms;
	/* How long a FastCGI connection may take to deliver its params and body (and a kept
	 * one may stay idle between requests) before the gateway shuts it down. */
	long client_timeout_ms;

	/* [auth] */
	struct cfg_section auth;
	char *issuer;
	char *introspection_endpoint;
	char *client_id;
	char *client_secret_file;
	char *client_secret;	/* read from client-secret-file; wiped on free */
	long cache_entries;
	int client_auth;
	struct strlist required_scopes;
	struct strlist scopes_supported;
	long cache_ttl;
	int shared_cache;	/* accepted tokens' claims kept in the Redis store too */
	long negative_ttl;
	long auth_timeout_ms;
	char *groups_claim;
	char *tenant_claim;
	char *as_metadata;
	char *auth_ca_file;	/* CA bundle for the authorization server; NULL = the system's */
	int verify;		/* enum auth_verify */
	char *jwks_uri;		/* an http(s) URL or an absolute path; NULL: the metadata's jwks_uri */
	int jwks_file;		/* jwks_uri is a file */
	struct strlist jwt_algs_list;
	unsigned jwt_algs;	/* jws.h bits, made at load */
	int jwt_typ;		/* enum jwt_typ */
	int introspect_jwt;	/* a verified JWT is introspected too */
	unsigned char bind[CFG_BIND_BYTES];	/* a digest of resource and issuer (at load): what binds
						 * what a caller leaves in state other gateways may
						 * share (sessions, cursors, rate-limit buckets) to this
						 * gateway */
	long jwks_ttl;		/* seconds the keys are fresh */
	long jwks_max_age;	/* seconds they verify at most, fetched or not since (>= jwks_ttl) */
	long jwks_min_interval;	/* seconds between two fetches for an unknown kid */
	long clock_skew;	/* seconds of leeway on exp, nbf and iat */
	struct strlist audiences;	/* accepted besides resource */
	char *scope_claim;
	int dpop;		/* enum dpop_mode */
	struct strlist dpop_algs_list;
	unsigned dpop_algs;	/* jws.h bits, made at load */
	long dpop_window;	/* seconds a proof's iat may be off; its jti is remembered that long */

	/* [limits] */
	struct cfg_section limits;
	struct rate limit_gateway, limit_ip, limit_tenant, limit_token, limit_tool;
	char *limit_store;
	long redis_timeout_ms;	/* the longest one Redis operation may take */
	int redis_fail;		/* enum redis_fail: what limits do while Redis cannot answer */
	int limits_on;		/* some limit is on (a tenant or group override included): made at load */
	int group_limits;	/* some [group] sets limit-tool: made at load */
	int item_grants;	/* some [group] sets prompts or resources: made at load */
	int obtains;		/* some [upstream] gets a token the gateway obtains (UP_OBTAINED) */
	int per_caller;		/* some [upstream] has catalog = per-caller */
	int user_oauth;		/* some [upstream] has credentials = user-oauth: the vault and the
				 * connect page are on */
	/* store = redis://… or unix://…, parsed at load; neither redis.host nor redis.path:
	 * the state file. */
	struct url_redis redis;
	int redis_on;		/* the store is a Redis (redis.host or redis.path): made at load */
	/* With Redis: what keys every shared record (a digest of the token, the rate-limit
	 * keys, the tombstones), derived from session-key-file and resource, so that hosts
	 * that share both share them. */
	unsigned char shared_key[32];

	/* [metrics]: the section turns them on */
	struct cfg_section metrics;
	char *metrics_path;	/* the route that serves them */
	struct strlist metrics_allow;
	struct netaddr_range *metrics_from;	/* metrics_allow parsed, or loopback when unset */
	size_t n_metrics_from;
	int metrics_on;		/* made at load: the configuration has a [metrics] section */

	struct cfg_upstream *upstreams;
	size_t n_upstreams;
	struct cfg_group *groups;
	size_t n_groups;
	struct cfg_tenant *tenants;
	size_t n_tenants;

	/* Derived at load. */
	char *origin;		/* scheme://host[:port] of resource */
	char *prm_url;		/* RFC 9728 path-suffixed metadata URL */
	const char *prm_path;	/* its path, which the router serves (points into prm_url) */
	char *connect_url;	/* origin + connect-path: the connect page, its redirect URI */
	char *client_document_url;	/* connect_url + "/client": its Client ID Metadata Document */
	const char *client_document_path;	/* its path, which the router serves (into it) */
	/* The digest of what decides whether a token is accepted (the keys flagged
	 * CK_ACCEPT in config_keys.c: resource, issuer, introspection client, claim names,
	 * verify mode, algorithms, audiences, …), at the start of every token cache key
	 * (auth_cache_key): a reload that changes one of them meets none of the old
	 * acceptances. */
	unsigned char accept[32];

	/* Provenance, for change detection. */
	struct cfg_file *files;
	size_t n_files;
	struct strlist include_globs;	/* absolute patterns */
};

/* What a load found: errors (the configuration is refused), and warnings about keys
 * that load but that nothing implements yet ("file:line: key: has no effect yet").
 * A load reports every error at once: a list of the one error channel's struct
 * gw_error (GW_ECONFIG, or GW_EINTERNAL when out of memory), each detail "file:line: "
 * and the words, the loader's own or those of the struct gw_error a callee filled
 * (cfgfile's files, cfg_set_value's values, the store's URL), prefixed with the key. */
struct cfg_errors {
	struct gw_error err[CFG_MAX_ERRORS];
	size_t n;
	size_t dropped;
	char warn[CFG_MAX_WARNINGS][320];
	size_t n_warn;
};

/* Loads path and its includes. Returns 0 and *out (refs = 1), or -1 with errors
 * as "file:line: key: reason" in errs and, in *out (may be NULL), a broken
 * configuration that serves only config_changed(): unref it either way. */
int config_load(const char *path, struct config **out, struct cfg_errors *errs);
/* One message of such a list into out (outlen bytes, truncated): "file:line: " (line 0:
 * "file: ") and fmt's words. The loader's errors and warnings, and mcpgate -t's. */
void cfg_vsay(char *out, size_t outlen, const char *file, int line, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));
/* errs's errors on f, a line each, then "(N more errors)" when some were dropped: what
 * a command that loads the configuration says when it does not load (its warnings
 * are the caller's). */
void config_errors_print(const struct cfg_errors *errs, FILE *f);
struct config *config_ref(struct config *cfg);
void config_unref(struct config *cfg);
/* 1 when a file it was loaded from changed, vanished, or an include glob matches
 * another set of files; 0 otherwise. */
int config_changed(const struct config *cfg);

const struct cfg_tenant *config_tenant(const struct config *cfg, const char *name);
/* 1 when r limits anything: set, and not 0 (unlimited). */
int config_rate_on(const struct rate *r);
const struct cfg_upstream *config_upstream(const struct config *cfg, const char *name);
int strlist_has(const struct strlist *l, const char *s);
/* Where a key of a [group] or [tenant] section, or of [limits], was set ({NULL, 0}
 * when it was not). */
const struct cfg_where *config_group_where(const struct cfg_group *g, const char *key);
const struct cfg_where *config_tenant_where(const struct cfg_tenant *t, const char *key);
const struct cfg_where *config_limits_where(const struct config *cfg, const char *key);
/* The same for a section of any kind, by the kind's name ("gateway", "upstream", …). */
const struct cfg_where *config_key_where(const struct cfg_section *sec, const char *kind, const char *key);

#endif
