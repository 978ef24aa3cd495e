/* introspect — libcurl client for the authorization server (RFC 8414, RFC 7662). */
#include "autoconf.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "httpc.h"
#include "introspect.h"
#include "secret.h"
#include "state.h"
#include "url.h"

#define ASMETA_MAGIC	0x41534d31u	/* "ASM1" */

#define ENDPOINT_MAX	1024	/* an introspection endpoint's URL, with its NUL */

struct asmeta_region {
	pthread_mutex_t lock;
	uint32_t magic;
	uint32_t len;
	int64_t fetched_ms;	/* 0 = never */
	int64_t failed_ms;	/* last failed attempt */
	int64_t since_ms;	/* when the fetches began to succeed (up) or to fail (down) */
	int32_t up;		/* enum metrics_state of the last fetch */
	uint32_t pad;
	char issuer[512];	/* whose document this is */
	char endpoint[ENDPOINT_MAX];	/* its introspection_endpoint, so introspection needs no parse */
	char doc[ASMETA_MAX_DOC];
};

struct introspect {
	CURL *h;
	struct buf body;
};

/* The curl handle is made on first use: a request answered from the cache (every CGI
 * run with a known token) never initialises libcurl and its TLS library. */
struct introspect *
introspect_new(void)
{
	struct introspect *ix = calloc(1, sizeof(*ix));

	if (ix != NULL)
		buf_init(&ix->body, INTROSPECT_MAX_RESPONSE);
	return ix;
}

void
introspect_free(struct introspect *ix)
{
	if (ix == NULL)
		return;
	if (ix->h)
		curl_easy_cleanup(ix->h);
	buf_free(&ix->body);
	free(ix);
}

const struct state_region introspect_asmeta_region_def = {
	"asmeta", sizeof(struct asmeta_region), ASMETA_MAGIC, offsetof(struct asmeta_region, magic),
	offsetof(struct asmeta_region, lock), 0, NULL, NULL, NULL, 0,
};

/* Takes the mirror's lock: 0, or -1 when it cannot be had or the region is no longer
 * ours (a broken mapping reads as zeros): not locked then, and no mirror to use. */
static int
asmeta_lock(struct asmeta_region *a)
{
	return state_region_lock(&a->lock, &a->magic, ASMETA_MAGIC) < 0 ? -1 : 0;
}

/* Is the mirror, locked, of this issuer? (Its strings may lack their NUL.) */
static int
asmeta_of(const struct asmeta_region *a, const char *issuer)
{
	return a->fetched_ms && strnlen(a->issuer, sizeof(a->issuer)) < sizeof(a->issuer) &&
	    strcmp(a->issuer, issuer) == 0;
}

static size_t
on_data(char *p, size_t size, size_t n, void *ud)
{
	return buf_append(ud, p, size * n) < 0 ? 0 : size * n;	/* 0 aborts: over the cap */
}

/* The WWW-Authenticate lines of an answer, joined with ", " (RFC 9110 §5.3), bounded
 * by the buffer's ceiling. Past it, with a NUL, or folded over lines, they are
 * unreadable (bad): read in part, they could say what their server did not. */
struct challenge_sink {
	struct buf *b;
	int bad;
	int in;		/* the last line was one of them (a folded line continues it) */
};

/* One HTTP request: post NULL = GET. */
struct http_req {
	const char *url;
	const char *post;		/* the body of a POST, post_len bytes */
	size_t post_len;
	struct curl_slist *headers;	/* NULL = libcurl's */
	struct challenge_sink *challenge;	/* NULL: not read */
	int body_cut;			/* a body past the ceiling ends the read, not the request */
	const char *what;		/* the server, for a connection error: "introspection endpoint" */
};

static size_t
on_header(char *p, size_t size, size_t n, void *ud)
{
	static const char name[] = "www-authenticate:";
	struct challenge_sink *s = ud;
	size_t len = size * n, nl = sizeof(name) - 1;

	if (len >= 5 && memcmp(p, "HTTP/", 5) == 0) {	/* a new answer (after a 1xx): start over */
		buf_reset(s->b);
		s->bad = s->in = 0;
		return size * n;
	}
	if (len > 0 && (p[0] == ' ' || p[0] == '\t')) {
		s->bad |= s->in;
		return size * n;
	}
	if (!(s->in = len > nl && strncasecmp(p, name, nl) == 0))
		return size * n;
	for (p += nl, len -= nl; len > 0 && (*p == ' ' || *p == '\t'); p++, len--)
		;
	while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == '\n' || p[len - 1] == ' ' || p[len - 1] == '\t'))
		len--;
	if (memchr(p, '\0', len) != NULL ||
	    (len > 0 && ((s->b->len > 0 && buf_puts(s->b, ", ") < 0) || buf_append(s->b, p, len) < 0)))
		s->bad = 1;
	return size * n;
}

/* One HTTP exchange on the reused handle. Returns the HTTP status, or -1 with err. The
 * body is in body (its ceiling bounds it). */
static long
http_into(struct introspect *ix, const struct config *cfg, const struct http_req *q, struct buf *body,
    struct gw_error *err)
{
	long timeout_ms = cfg->auth_timeout_ms;
	char where[300];
	CURL *h;
	CURLcode rc;
	long status = 0;

	if (ix->h == NULL && (ix->h = curl_easy_init()) == NULL) {
		gw_error_set(err, GW_EAUTHSERVER, "cannot initialise libcurl");
		return -1;
	}
	h = ix->h;
	httpc_reset(h, q->url, timeout_ms, timeout_ms);
	buf_reset(body);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
	if (cfg->auth_ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, cfg->auth_ca_file);
	if (q->headers)
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, q->headers);
	if (q->post) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, q->post);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)q->post_len);
	}
	if (q->challenge) {
		buf_reset(q->challenge->b);
		q->challenge->bad = q->challenge->in = 0;
		curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(h, CURLOPT_HEADERDATA, q->challenge);
	}
	rc = curl_easy_perform(h);
	if (rc == CURLE_WRITE_ERROR && q->body_cut)
		rc = CURLE_OK;
	if (rc == CURLE_WRITE_ERROR) {
		gw_error_set(err, GW_EAUTHSERVER, "response larger than %zu bytes", body->max);
		return -1;
	}
	if (rc != CURLE_OK) {	/* the host it tried, from the URL: curl cannot say for a resolve failure */
		url_host_port(q->url, where, sizeof(where));
		gw_error_set(err, GW_EAUTHSERVER, "%s %s: %s", q->what ? q->what : "authorization server",
		    where, curl_easy_strerror(rc));
		return -1;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	return status;
}

/* http_into the worker's own buffer (ix->body). */
static long
http(struct introspect *ix, const struct config *cfg, const struct http_req *q, struct gw_error *err)
{
	return http_into(ix, cfg, q, &ix->body, err);
}

long
introspect_get(struct introspect *ix, const struct config *cfg, const char *url, const char *what,
    struct buf *out, struct gw_error *err)
{
	struct curl_slist *headers = NULL;
	long st;
	int bad = 0;

	headers = httpc_header(headers, "Accept: application/json, application/jwk-set+json", &bad);
	st = bad ? (gw_error_set(err, GW_EAUTHSERVER, "out of memory"), -1) :
	    http_into(ix, cfg, &(struct http_req){ url, NULL, 0, headers, NULL, 0, what }, out, err);
	httpc_free_headers(headers);
	return st;
}

int
introspect_url_usable(const struct config *cfg, const char *url)
{
	if (url == NULL)
		return 0;
	if (strncasecmp(url, "https://", 8) == 0)
		return 1;
	return strncasecmp(url, "http://", 7) == 0 && strncasecmp(cfg->issuer, "http://", 7) == 0;
}

static json_t *
parse_object(struct introspect *ix, const char *what, struct gw_error *err)
{
	json_error_t jerr;
	json_t *j;

	j = json_loadb(ix->body.data ? ix->body.data : "", ix->body.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(j)) {
		json_decref(j);
		gw_error_set(err, GW_EAUTHSERVER, "%s is not a JSON object", what);
		return NULL;
	}
	return j;
}

/* RFC 8414 §3.1 and OpenID discovery: the well-known URLs for an issuer, in order. */
static int
discovery_urls(const char *issuer, char urls[3][2200])
{
	const char *host, *path;
	size_t origin_len, n = 0, len;
	char clean[1024];

	snprintf(clean, sizeof(clean), "%s", issuer);
	while ((len = strlen(clean)) > 0 && clean[len - 1] == '/')
		clean[len - 1] = '\0';
	host = strstr(clean, "://") ? strstr(clean, "://") + 3 : clean;
	path = strchr(host, '/');
	origin_len = path ? (size_t)(path - clean) : strlen(clean);
	if (path) {
		snprintf(urls[n++], sizeof(urls[0]), "%.*s/.well-known/oauth-authorization-server%s", (int)origin_len, clean, path);
		snprintf(urls[n++], sizeof(urls[0]), "%.*s/.well-known/openid-configuration%s", (int)origin_len, clean, path);
		snprintf(urls[n++], sizeof(urls[0]), "%s/.well-known/openid-configuration", clean);
	} else {
		snprintf(urls[n++], sizeof(urls[0]), "%s/.well-known/oauth-authorization-server", clean);
		snprintf(urls[n++], sizeof(urls[0]), "%s/.well-known/openid-configuration", clean);
	}
	return (int)n;
}

/* Fetches an issuer's metadata; first 2xx wins, a 4xx tries the next URL, anything
 * else stops. */
static json_t *
fetch_metadata(struct introspect *ix, const struct config *cfg, const char *issuer, struct gw_error *err)
{
	char urls[3][2200];
	int i, n = discovery_urls(issuer, urls);
	long st;
	json_t *doc;

	for (i = 0; i < n; i++) {
		st = http(ix, cfg, &(struct http_req){ urls[i], NULL, 0, NULL, NULL, 0,
		    "authorization server metadata" }, err);
		if (st < 0)
			return NULL;
		if (st >= 400 && st < 500)
			continue;
		if (st < 200 || st >= 300) {
			gw_error_set(err, GW_EAUTHSERVER, "%s answered %ld", urls[i], st);
			return NULL;
		}
		if ((doc = parse_object(ix, "authorization server metadata", err)) == NULL)
			return NULL;
		if (!json_is_string(json_object_get(doc, "issuer")) ||
		    !url_same(json_string_value(json_object_get(doc, "issuer")), issuer)) {
			json_decref(doc);
			gw_error_set(err, GW_EAUTHSERVER, "metadata at %s names another issuer", urls[i]);
			return NULL;
		}
		return doc;
	}
	gw_error_set(err, GW_EAUTHSERVER, "no metadata found for issuer %s", issuer);
	return NULL;
}

json_t *
introspect_discover(struct introspect *ix, const struct config *cfg, const char *issuer, struct gw_error *err)
{
	return fetch_metadata(ix, cfg, issuer, err);
}

json_t *
introspect_resource_metadata(struct introspect *ix, const struct config *cfg, const char *resource,
    struct gw_error *err)
{
	const char *host = strstr(resource, "://"), *path;
	char url[2300];

	host = host ? host + 3 : resource;
	path = strchr(host, '/');
	if (path == NULL || strcmp(path, "/") == 0)
		snprintf(url, sizeof(url), "%.*s/.well-known/oauth-protected-resource", (int)(host - resource + strcspn(host, "/")),
		    resource);
	else
		snprintf(url, sizeof(url), "%.*s/.well-known/oauth-protected-resource%s", (int)(path - resource), resource, path);
	return introspect_resource_metadata_at(ix, cfg, url, resource, err);
}

json_t *
introspect_resource_metadata_at(struct introspect *ix, const struct config *cfg, const char *url,
    const char *resource, struct gw_error *err)
{
	json_t *doc;
	long st;

	if ((st = http(ix, cfg, &(struct http_req){ url, NULL, 0, NULL, NULL, 0,
	    "protected resource metadata" }, err)) < 0)
		return NULL;
	if (st != 200) {
		gw_error_set(err, GW_EAUTHSERVER, "%s answered %ld", url, st);
		return NULL;
	}
	if ((doc = parse_object(ix, "protected resource metadata", err)) == NULL)
		return NULL;
	/* RFC 9728 §3.3: the document is the resource's own. */
	if (!json_is_string(json_object_get(doc, "resource")) ||
	    !url_same(json_string_value(json_object_get(doc, "resource")), resource)) {
		json_decref(doc);
		gw_error_set(err, GW_EAUTHSERVER, "the protected resource metadata at %s names another resource", url);
		return NULL;
	}
	return doc;
}

int
introspect_challenge(struct introspect *ix, const struct config *cfg, const char *url, char *out, size_t outlen,
    struct gw_error *err)
{
	/* The least an MCP server reads: it answers 401 before it parses. */
	static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}";
	struct curl_slist *headers = NULL;
	struct buf body, hdr;
	struct challenge_sink sink = { &hdr, 0, 0 };
	long st = -1;
	int bad = 0, rc = -1;

	buf_init(&body, INTROSPECT_PROBE_BODY_MAX);
	buf_init(&hdr, outlen > 0 ? outlen - 1 : 0);
	headers = httpc_header(headers, "Content-Type: application/json", &bad);
	headers = httpc_header(headers, "Accept: application/json, text/event-stream", &bad);
	if (bad)
		gw_error_set(err, GW_EAUTHSERVER, "out of memory");
	else
		st = http_into(ix, cfg, &(struct http_req){ url, ping, sizeof(ping) - 1, headers, &sink, 1,
		    "upstream" }, &body, err);
	if (st < 0)
		goto out;
	if (st != 401)
		gw_error_set(err, GW_EAUTHSERVER, "asked without a token, %s answered %ld, not 401", url, st);
	else if (sink.bad)
		gw_error_set(err, GW_EAUTHSERVER, "the WWW-Authenticate of %s's 401 is longer than %zu bytes, or folded",
		    url, outlen > 0 ? outlen - 1 : 0);
	else if (hdr.len == 0)
		gw_error_set(err, GW_EAUTHSERVER, "the 401 of %s has no WWW-Authenticate", url);
	else {
		snprintf(out, outlen, "%s", buf_str(&hdr));
		rc = 0;
	}
out:
	httpc_free_headers(headers);
	buf_free(&body);
	buf_free(&hdr);
	return rc;
}

/* Long: the host's mirror read and, when stale and this worker's turn, fetched,
 * validated and written back under one hold of its lock. */
int
introspect_as_metadata(struct introspect *ix, struct asmeta_region *region, const struct config *cfg,
    int64_t now_ms, json_t **doc, struct gw_error *err)
{
	struct asmeta_region *a = region;
	char *copy = NULL;
	int have = 0, fetch = 1, mirror;
	json_t *fresh;
	char *dump;

	*doc = NULL;
	/* Without a usable mirror (a lock not had, a broken mapping): fetch, keep nothing. */
	if ((mirror = asmeta_lock(a) == 0)) {
		if (asmeta_of(a, cfg->issuer) && a->len < ASMETA_MAX_DOC &&
		    (copy = strndup(a->doc, a->len)) != NULL)
			have = 1;
		fetch = !have || now_ms - a->fetched_ms > ASMETA_FRESH_MS;
		if (fetch && now_ms - a->failed_ms < ASMETA_RETRY_MS && a->failed_ms <= now_ms)
			fetch = 0;	/* failed a moment ago: do not hammer the issuer */
		state_unlock(&a->lock);
	}

	if (fetch) {
		if ((fresh = fetch_metadata(ix, cfg, cfg->issuer, err)) != NULL &&
		    (dump = json_dumps(fresh, JSON_COMPACT)) != NULL && strlen(dump) < ASMETA_MAX_DOC) {
			const char *ep = json_string_value(json_object_get(fresh, "introspection_endpoint"));

			if (mirror && asmeta_lock(a) == 0) {
				a->len = (uint32_t)strlen(dump);
				memcpy(a->doc, dump, a->len);
				snprintf(a->endpoint, sizeof(a->endpoint), "%s",
				    introspect_url_usable(cfg, ep) && strlen(ep) < sizeof(a->endpoint) ? ep : "");
				snprintf(a->issuer, sizeof(a->issuer), "%s", cfg->issuer);
				a->fetched_ms = now_ms;
				a->failed_ms = 0;
				if (a->up != METRICS_UP)
					a->since_ms = now_ms;
				a->up = METRICS_UP;
				state_unlock(&a->lock);
			}
			free(dump);
			free(copy);
			*doc = fresh;
			return 0;
		}
		json_decref(fresh);
		if (mirror && asmeta_lock(a) == 0) {
			a->failed_ms = now_ms;
			if (a->up != METRICS_DOWN)
				a->since_ms = now_ms;
			a->up = METRICS_DOWN;
			state_unlock(&a->lock);
		}
	}
	if (have) {
		*doc = json_loads(copy, 0, NULL);	/* fresh enough, or stale while the issuer fails */
		free(copy);
		return *doc ? 0 : -1;
	}
	if (!fetch)
		gw_error_set(err, GW_EAUTHSERVER, "authorization server metadata unavailable (recent failure)");
	return -1;
}

int
introspect_asmeta_state(struct asmeta_region *a, const struct config *cfg, int64_t now_ms, int64_t *since_ms)
{
	int st = METRICS_UNKNOWN;

	*since_ms = 0;
	if (asmeta_lock(a) < 0)
		return METRICS_UNKNOWN;
	/* (fetched_ms names the issuer the mirror is of; a mirror of another issuer, or a
	 * record from a clock that went back, says nothing) */
	if ((a->up == METRICS_UP || a->up == METRICS_DOWN) &&
	    (a->fetched_ms == 0 || asmeta_of(a, cfg->issuer)) && a->since_ms > 0 && a->since_ms <= now_ms + 60000) {
		st = a->up;
		*since_ms = a->since_ms;
	}
	state_unlock(&a->lock);
	return st;
}

/* application/x-www-form-urlencoded component (RFC 6749 §2.3.1 for client credentials). */
static int
form_escape(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~') {
			if (buf_putc(b, (char)c) < 0)
				return -1;
		} else if (buf_printf(b, "%%%c%c", hex[c >> 4], hex[c & 15]) < 0)
			return -1;
	}
	return 0;
}

int
introspect_form_add(struct buf *form, const char *name, const char *value, size_t n)
{
	if ((form->len > 0 && buf_putc(form, '&') < 0) || buf_puts(form, name) < 0 || buf_putc(form, '=') < 0)
		return -1;
	return form_escape(form, value, n);
}

/* Long: the client's credentials as its auth says (in the form, or a Basic header
 * built and wiped here; a public client, without a secret, only names itself in the
 * form: RFC 6749 §3.2.1, and an empty password in a header would be a credential it
 * does not have), the POST, and everything that held the secret wiped at its one exit. */
long
introspect_post_form(struct introspect *ix, const struct config *cfg, const struct as_post *q,
    struct gw_error *err)
{
	const struct as_client *cl = q->client;
	struct curl_slist *headers = NULL;
	struct buf cred, hdr;
	char *b64 = NULL;
	size_t b64len;
	long st = -1;
	int bad = 0;

	buf_init(&cred, 4096);
	buf_init(&hdr, 8192);
	if (cl->id && cl->secret == NULL) {
		if (introspect_form_add(q->form, "client_id", cl->id, strlen(cl->id)) < 0)
			goto toolong;
	} else if (cl->id && cl->auth == CLIENT_AUTH_POST) {
		if (introspect_form_add(q->form, "client_id", cl->id, strlen(cl->id)) < 0 ||
		    introspect_form_add(q->form, "client_secret", cl->secret, strlen(cl->secret)) < 0)
			goto toolong;
	} else if (cl->id) {
		if (form_escape(&cred, cl->id, strlen(cl->id)) < 0 || buf_putc(&cred, ':') < 0 ||
		    form_escape(&cred, cl->secret, strlen(cl->secret)) < 0)
			goto toolong;
		b64len = cred.len / 3 * 4 + 8;
		if ((b64 = malloc(b64len)) == NULL || secret_base64(cred.data, cred.len, b64, b64len) < 0 ||
		    buf_printf(&hdr, "Authorization: Basic %s", b64) < 0)
			goto toolong;
		headers = httpc_header(headers, hdr.data, &bad);
	}
	headers = httpc_header(headers, "Accept: application/json", &bad);
	headers = httpc_header(headers, "Content-Type: application/x-www-form-urlencoded", &bad);
	if (bad)
		goto toolong;
	st = http(ix, cfg, &(struct http_req){ q->url, q->form->data, q->form->len, headers, NULL, 0,
	    q->what }, err);
	goto out;
toolong:
	gw_error_set(err, GW_EAUTHSERVER, "the request to the authorization server could not be built");
out:
	if (cred.data)
		secret_wipe(cred.data, cred.len);
	if (hdr.data)
		secret_wipe(hdr.data, hdr.len);
	if (b64) {
		secret_wipe(b64, strlen(b64));
		free(b64);
	}
	httpc_free_headers(headers);
	buf_free(&cred);
	buf_free(&hdr);
	return st;
}

long
introspect_post_json(struct introspect *ix, const struct config *cfg, const char *url, const char *json,
    const char *what, struct gw_error *err)
{
	struct curl_slist *headers = NULL;
	long st = -1;
	int bad = 0;

	headers = httpc_header(headers, "Content-Type: application/json", &bad);
	headers = httpc_header(headers, "Accept: application/json", &bad);
	if (bad)
		gw_error_set(err, GW_EAUTHSERVER, "out of memory");
	else
		st = http(ix, cfg, &(struct http_req){ url, json, strlen(json), headers, NULL, 0, what }, err);
	httpc_free_headers(headers);
	return st;
}

const struct buf *
introspect_body(const struct introspect *ix)
{
	return &ix->body;
}

/* The introspection endpoint: configured, or from the mirrored metadata (the stored
 * string when the mirror is fresh: no JSON parse on the hot path). */
static int
endpoint_of(struct introspect *ix, struct asmeta_region *region, const struct config *cfg, int64_t now_ms,
    char out[ENDPOINT_MAX], struct gw_error *err)
{
	struct asmeta_region *a = region;
	const size_t n = ENDPOINT_MAX;
	json_t *meta = NULL;
	const char *ep;
	size_t elen;
	int ok = 0;

	if (cfg->introspection_endpoint) {
		snprintf(out, n, "%s", cfg->introspection_endpoint);
		return 0;
	}
	if (asmeta_lock(a) == 0) {
		elen = strnlen(a->endpoint, sizeof(a->endpoint));
		if (asmeta_of(a, cfg->issuer) && now_ms - a->fetched_ms <= ASMETA_FRESH_MS && elen > 0 &&
		    elen < sizeof(a->endpoint) && elen < n) {
			memcpy(out, a->endpoint, elen);
			out[elen] = '\0';
			ok = 1;
		}
		state_unlock(&a->lock);
	}
	if (ok)
		return 0;
	if (introspect_as_metadata(ix, region, cfg, now_ms, &meta, err) < 0)
		return -1;
	ep = json_string_value(json_object_get(meta, "introspection_endpoint"));
	if (!introspect_url_usable(cfg, ep) || strlen(ep) >= n) {
		gw_error_set(err, GW_EAUTHSERVER, "issuer metadata has no usable introspection_endpoint%s",
		    ep && strncasecmp(ep, "http://", 7) == 0 ? " (http:// from an https:// issuer: refused)" : "");
		json_decref(meta);
		return -1;
	}
	snprintf(out, n, "%s", ep);
	json_decref(meta);
	return 0;
}

/* One RFC 7662 request: the form with the token escaped, the POST as the gateway's
 * client, the answer checked; the form, which held the token, wiped at its one exit. */
json_t *
introspect_token(struct introspect *ix, struct asmeta_region *asmeta, const struct config *cfg,
    const struct secret_part *tok, int64_t now_ms, struct gw_error *err)
{
	const struct as_client client = { cfg->client_id, cfg->client_secret, cfg->client_auth };
	char endpoint[ENDPOINT_MAX];
	json_t *resp = NULL;
	struct buf form;
	long st;

	/* Every byte escaped at worst: the form always fits, whatever the token's length. */
	buf_init(&form, 3 * (tok->n + (cfg->client_id ? strlen(cfg->client_id) : 0) +
	    (cfg->client_secret ? strlen(cfg->client_secret) : 0)) + 128);
	if (endpoint_of(ix, asmeta, cfg, now_ms, endpoint, err) < 0)
		goto out;
	if (introspect_form_add(&form, "token", tok->p, tok->n) < 0 ||
	    buf_puts(&form, "&token_type_hint=access_token") < 0) {
		gw_error_set(err, GW_EAUTHSERVER, "introspection request could not be built");
		goto out;
	}
	st = introspect_post_form(ix, cfg, &(struct as_post){ endpoint, &form, &client,
	    "introspection endpoint" }, err);
	if (st < 0)
		goto out;
	if (st != 200) {
		gw_error_set(err, GW_EAUTHSERVER, "introspection endpoint answered %ld", st);
		goto out;
	}
	if ((resp = parse_object(ix, "introspection response", err)) == NULL)
		goto out;
	if (!json_is_boolean(json_object_get(resp, "active"))) {
		json_decref(resp);
		resp = NULL;
		gw_error_set(err, GW_EAUTHSERVER, "introspection response without a boolean \"active\"");
	}
out:
	if (form.data)
		secret_wipe(form.data, form.len);
	buf_free(&form);
	return resp;
}
