/* introspect — the authorization server seen from the gateway, over libcurl:
 * RFC 8414 / OpenID discovery of its metadata (mirrored in the state file, served
 * stale while the issuer is unreachable) and RFC 7662 token introspection through
 * one reused connection per worker. http/https only, no redirects, bounded time and
 * size. The token is only ever put in the request body. */
#ifndef GW_INTROSPECT_H
#define GW_INTROSPECT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "config.h"
#include "err.h"
#include "metrics.h"
#include "secret.h"
#include "state.h"

#define INTROSPECT_MAX_RESPONSE	(64 * 1024)
#define ASMETA_MAX_DOC		(60 * 1024)
#define INTROSPECT_PROBE_BODY_MAX	4096	/* what is read of the body of a 401 asked for */
#define ASMETA_FRESH_MS		(3600 * 1000)	/* refetch after an hour */
#define ASMETA_RETRY_MS		(10 * 1000)	/* after a failure, wait before trying again */

struct introspect;	/* per worker: one curl handle, so connections are reused */

struct introspect *introspect_new(void);
void introspect_free(struct introspect *ix);

/* The shared mirror of the issuer's metadata (a state-file region; opaque, its init
 * is a state_layout's). */
struct asmeta_region;
extern const struct state_region introspect_asmeta_region_def;

/* The issuer's metadata: fresh from the mirror, refetched when old, stale when the
 * issuer fails. *doc is a new reference. -1 with err when none was ever fetched. */
int introspect_as_metadata(struct introspect *ix, struct asmeta_region *asmeta, const struct config *cfg,
    int64_t now_ms, json_t **doc, struct gw_error *err);

/* Another authorization server's metadata (RFC 8414, else OpenID discovery), its
 * "issuer" checked: a new reference, or NULL with err (GW_EAUTHSERVER). Not mirrored:
 * the caller keeps what it needs. */
json_t *introspect_discover(struct introspect *ix, const struct config *cfg, const char *issuer, struct gw_error *err);
/* A resource's RFC 9728 protected resource metadata, at the well-known URL its own
 * gives, whose "resource" must be that URL: a new reference, or NULL with err. */
json_t *introspect_resource_metadata(struct introspect *ix, const struct config *cfg, const char *resource,
    struct gw_error *err);
/* The same at url (where the resource's 401 says it is: the caller judges whether url
 * may be fetched); its "resource" must still be resource. */
json_t *introspect_resource_metadata_at(struct introspect *ix, const struct config *cfg, const char *url,
    const char *resource, struct gw_error *err);
/* What a resource's 401 says of it (RFC 9728 §5.1): POSTs a JSON-RPC ping to url with
 * no credentials at all, its answer's body not read past INTROSPECT_PROBE_BODY_MAX
 * bytes. 0 with the WWW-Authenticate value of the 401 (its lines joined with ", ") in
 * out; -1 with err (GW_EAUTHSERVER) when the answer is not a 401, has no such header,
 * or one that does not fit outlen (CHALLENGE_HEADER_MAX is what is read). */
int introspect_challenge(struct introspect *ix, const struct config *cfg, const char *url, char *out, size_t outlen,
    struct gw_error *err);

/* GETs a document of the authorization server's (its JWK set) at url into out, whose
 * ceiling bounds it: the HTTP status, or -1 with err (a connection error names what,
 * "JWK set", and the host and port it tried). */
long introspect_get(struct introspect *ix, const struct config *cfg, const char *url, const char *what,
    struct buf *out, struct gw_error *err);
/* 1 when a URL taken from the issuer's metadata may be used: https, or http only when the
 * issuer itself is http (a loopback or test set-up). An https issuer's document naming
 * an http endpoint would send tokens, or take keys, in clear: refused. */
int introspect_url_usable(const struct config *cfg, const char *url);

/* How the last fetch of the issuer's metadata went (enum metrics_state: unknown when
 * none was made since the file was built, or the mirror is another issuer's) and since
 * when that has been so (*since_ms, wall clock). Reads the mirror only. */
int introspect_asmeta_state(struct asmeta_region *asmeta, const struct config *cfg, int64_t now_ms,
    int64_t *since_ms);

/* A client of the authorization server, as it authenticates there. */
struct as_client {
	const char *id;		/* NULL: none (no credentials sent) */
	const char *secret;	/* NULL: a public client (its id in the form, no Authorization) */
	int auth;		/* enum client_auth; a public client's: not used */
};

/* A form POSTed to the authorization server as a client. */
struct as_post {
	const char *url;
	struct buf *form;	/* application/x-www-form-urlencoded; the credentials go in it
				 * for client_secret_post, a public client's id too (the caller
				 * wipes it) */
	const struct as_client *client;
	const char *what;	/* the server, for a connection error; NULL: "authorization server" */
};

/* Appends name=value (value's n bytes, escaped) to a form, with a '&' after what it
 * holds: 0, or -1 when it does not fit. */
int introspect_form_add(struct buf *form, const char *name, const char *value, size_t n);
/* POSTs q on the worker's reused connection, bounded by auth-timeout-ms: the HTTP
 * status with the answer in introspect_body(ix) (until the next request), or -1 with
 * err (GW_EAUTHSERVER). */
long introspect_post_form(struct introspect *ix, const struct config *cfg, const struct as_post *q,
    struct gw_error *err);
/* POSTs a JSON document (RFC 7591 registration: no client credentials) to url on the
 * same connection and bounds: the HTTP status with the answer in introspect_body(ix),
 * or -1 with err. */
long introspect_post_json(struct introspect *ix, const struct config *cfg, const char *url, const char *json,
    const char *what, struct gw_error *err);
const struct buf *introspect_body(const struct introspect *ix);

/* POSTs the token (its bytes) to the introspection endpoint: the parsed JSON object
 * (a new reference, with a boolean "active"), or NULL with err (and a reason fit for
 * the log) on any transport or format failure. */
json_t *introspect_token(struct introspect *ix, struct asmeta_region *asmeta, const struct config *cfg,
    const struct secret_part *token, int64_t now_ms, struct gw_error *err);

#endif
