/* tokenep — a token endpoint: RFC 8693 token exchange, client_credentials, jwt-bearer,
 * authorization_code with PKCE, refresh_token, and the answer (tokenep.h). */
#include "autoconf.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "tokenep.h"

#define TOKENEP_URL_MAX		2048

/* What each grant's answer must be (from 1: none is a flag). */
enum issued {
	ISSUED_ACCESS = 1,	/* an access token of type Bearer */
	ISSUED_ID_JAG,		/* an ID-JAG: issued_token_type id-jag, token_type N_A */
	ISSUED_PERSON,		/* ISSUED_ACCESS, with a refresh token and the scope kept */
};

/* Each grant's form and answer: its grant_type; the form's name of ask->subject; an
 * exchange's requested_token_type; whether the PKCE verifier and redirect_uri go too,
 * whether the resource does (the jwt-bearer assertion names its own); what must come
 * back. */
static const struct {
	const char *grant_type;
	const char *subject_as;	/* NULL: no subject */
	const char *requested;	/* NULL: not an exchange */
	int pkce;
	int resource;
	int issued;		/* enum issued */
} grants[] = {
	[TOKENEP_CLIENT_CREDENTIALS] = { "client_credentials", NULL, NULL, 0, 1, ISSUED_ACCESS },
	[TOKENEP_EXCHANGE] = { "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token", TOKENEP_TYPE_ACCESS,
	    0, 1, ISSUED_ACCESS },
	[TOKENEP_EXCHANGE_ID_JAG] = { "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token",
	    TOKENEP_TYPE_ID_JAG, 0, 1, ISSUED_ID_JAG },
	[TOKENEP_JWT_BEARER] = { "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion", NULL, 0, 0, ISSUED_ACCESS },
	[TOKENEP_AUTH_CODE] = { "authorization_code", "code", NULL, 1, 1, ISSUED_PERSON },
	[TOKENEP_REFRESH] = { "refresh_token", "refresh_token", NULL, 0, 1, ISSUED_PERSON },
};

/* RFC 6749 §5.2: error and error_description use %x20-21 / %x23-5B / %x5D-7E. */
static int
oauth_char(unsigned char c)
{
	return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\';
}

/* A refusal's words, kept only when they are what RFC 6749 allows: 1, or 0. */
static int
read_refusal(json_t *doc, struct tokenep_answer *out)
{
	const char *e = json_string_value(json_object_get(doc, "error"));
	const char *d = json_string_value(json_object_get(doc, "error_description"));
	size_t i, n;

	if (e == NULL || (n = json_string_length(json_object_get(doc, "error"))) == 0 || n >= TOKENEP_ERROR_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!oauth_char((unsigned char)e[i]) || e[i] == ' ')
			return 0;
	memcpy(out->error, e, n);
	out->error[n] = '\0';
	if (d != NULL) {	/* only for the log and the caller: cut, and what is not allowed replaced */
		n = json_string_length(json_object_get(doc, "error_description"));
		if (n >= TOKENEP_DESC_MAX)
			n = TOKENEP_DESC_MAX - 1;
		for (i = 0; i < n; i++)
			out->description[i] = oauth_char((unsigned char)d[i]) ? d[i] : '?';
		out->description[n] = '\0';
	}
	return 1;
}

/* A token the gateway can send back (an access token in a header, a refresh token in
 * a form): 1 to TOKENEP_TOKEN_MAX visible ASCII bytes (no blank, no control, no byte
 * past 0x7e). */
static int
token_ok(const char *t, size_t n)
{
	size_t i;

	if (t == NULL || n == 0 || n > TOKENEP_TOKEN_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)t[i] < 0x21 || (unsigned char)t[i] > 0x7e)
			return 0;
	return 1;
}

/* RFC 6749 §3.3: scope tokens (%x21 / %x23-5B / %x5D-7E) separated by single blanks,
 * at most TOKENEP_SCOPE_MAX bytes: what the gateway can read back as a list. */
static int
scope_ok(const char *s, size_t n)
{
	size_t i;

	if (s == NULL || n == 0 || n > TOKENEP_SCOPE_MAX || s[0] == ' ' || s[n - 1] == ' ')
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] == ' ' ? s[i - 1] == ' ' : !oauth_char((unsigned char)s[i]))
			return 0;
	return 1;
}

/* RFC 6749 §5.1 and RFC 8693 §2.2.1: asked for an ID-JAG, one said to be that, of
 * token_type N_A; else a token of type Bearer, what it is (when said) an access token
 * or a JWT. 0, or -1 with err. */
static int
type_ok(enum tokenep_grant grant, json_t *doc, struct gw_error *err)
{
	const char *type = json_string_value(json_object_get(doc, "token_type"));
	const char *issued = json_string_value(json_object_get(doc, "issued_token_type"));

	if (grants[grant].issued == ISSUED_ID_JAG) {
		if (issued == NULL || strcmp(issued, TOKENEP_TYPE_ID_JAG) != 0 || type == NULL || strcmp(type, "N_A") != 0) {
			gw_error_set(err, GW_EAUTHSERVER, "the token endpoint issued something other than an ID-JAG");
			return -1;
		}
	} else if (type == NULL || strcasecmp(type, "Bearer") != 0) {
		gw_error_set(err, GW_EAUTHSERVER, "the token endpoint issued a token that is not a Bearer token");
		return -1;
	} else if (json_object_get(doc, "issued_token_type") && (issued == NULL ||
	    (strcmp(issued, TOKENEP_TYPE_ACCESS) != 0 && strcmp(issued, "urn:ietf:params:oauth:token-type:jwt") != 0))) {
		gw_error_set(err, GW_EAUTHSERVER, "the token endpoint issued something other than an access token");
		return -1;
	}
	return 0;
}

/* A copy of the answer's string s, its length in *len when len is given: 0, or -1. */
static int
keep(json_t *s, char **out, size_t *len, struct gw_error *err)
{
	size_t n = json_string_length(s);

	if ((*out = malloc(n + 1)) == NULL) {
		gw_error_set(err, GW_EAUTHSERVER, "out of memory");
		return -1;
	}
	memcpy(*out, json_string_value(s), n);
	(*out)[n] = '\0';
	if (len)
		*len = n;
	return 0;
}

/* The issued token (type_ok), a positive whole lifetime (when said); for a person's
 * grants, a refresh token and the scope granted, each when said, and then usable:
 * neither can be half-read, and a refresh token the gateway could not send back would
 * be lost later, not now. Only checked answers are copied. */
static int
read_issued(enum tokenep_grant grant, json_t *doc, struct tokenep_answer *out, struct gw_error *err)
{
	json_t *tok = json_object_get(doc, "access_token"), *exp = json_object_get(doc, "expires_in");
	json_t *rt = NULL, *sc = NULL;

	if (grants[grant].issued == ISSUED_PERSON) {
		rt = json_object_get(doc, "refresh_token");
		sc = json_object_get(doc, "scope");
		/* "" (servers that grant no scope, oidc-provider for a resource without any):
		 * no scope said, not a broken answer. */
		if (json_is_string(sc) && json_string_length(sc) == 0)
			sc = NULL;
	}
	if (!token_ok(json_string_value(tok), json_string_length(tok))) {
		gw_error_set(err, GW_EAUTHSERVER, "the token endpoint's answer has no usable access_token");
		return -1;
	}
	if (type_ok(grant, doc, err) < 0)
		return -1;
	if (exp && (!json_is_integer(exp) || json_integer_value(exp) <= 0)) {
		gw_error_set(err, GW_EAUTHSERVER, "the token endpoint's expires_in is not a positive integer");
		return -1;
	}
	if (rt && !token_ok(json_string_value(rt), json_string_length(rt))) {
		gw_error_set(err, GW_EAUTHSERVER, "the token endpoint's refresh_token is not usable");
		return -1;
	}
	if (sc && !scope_ok(json_string_value(sc), json_string_length(sc))) {
		gw_error_set(err, GW_EAUTHSERVER, "the token endpoint's scope is not a list of scope tokens");
		return -1;
	}
	if (keep(tok, &out->token, &out->token_len, err) < 0 ||
	    (rt && keep(rt, &out->refresh_token, &out->refresh_len, err) < 0) || (sc && keep(sc, &out->scope, NULL, err) < 0))
		return -1;
	out->expires_in = exp == NULL ? 0 : json_integer_value(exp) > TOKENEP_EXPIRES_MAX ? TOKENEP_EXPIRES_MAX :
	    (long)json_integer_value(exp);
	return 0;
}

/* Wipes jansson's own copy of the answer's member name, when a string. */
static void
wipe_member(json_t *doc, const char *name)
{
	json_t *s = json_object_get(doc, name);

	if (json_is_string(s))
		secret_wipe((void *)(uintptr_t)json_string_value(s), json_string_length(s));
}

/* Wipes a parsed answer's strings of the tokens, whatever the grant (an exchange's
 * answer may hold a refresh token the gateway does not keep). */
static void
wipe_doc(json_t *doc)
{
	wipe_member(doc, "access_token");
	wipe_member(doc, "refresh_token");
}

/* (Anything but an issued token or a refusal leaves out holding nothing.) */
int
tokenep_parse(enum tokenep_grant grant, long status, const char *body, size_t len, struct tokenep_answer *out,
    struct gw_error *err)
{
	json_error_t jerr;
	json_t *doc;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if ((size_t)grant >= sizeof(grants) / sizeof(grants[0])) {
		gw_error_set(err, GW_EAUTHSERVER, "no such grant: %d", (int)grant);
		return -1;
	}
	doc = json_loadb(body ? body : "", body ? len : 0, JSON_REJECT_DUPLICATES, &jerr);
	if (status == 200 && json_is_object(doc))
		rc = read_issued(grant, doc, out, err);
	else if ((status == 400 || status == 401) && json_is_object(doc) && read_refusal(doc, out))
		rc = 1;
	else
		gw_error_set(err, GW_EAUTHSERVER, "the token endpoint answered HTTP %ld%s", status,
		    json_is_object(doc) ? "" : " without a JSON object");
	if (rc < 0)
		tokenep_answer_clear(out);
	wipe_doc(doc);
	json_decref(doc);
	return rc;
}

void
tokenep_answer_clear(struct tokenep_answer *out)
{
	if (out->token) {
		secret_wipe(out->token, out->token_len);
		free(out->token);
	}
	if (out->refresh_token) {
		secret_wipe(out->refresh_token, out->refresh_len);
		free(out->refresh_token);
	}
	if (out->scope) {
		secret_wipe(out->scope, strlen(out->scope));
		free(out->scope);
	}
	memset(out, 0, sizeof(*out));
}

/* The token endpoint: the configured one, else the issuer's from its metadata. */
static int
endpoint_of(struct introspect *ix, struct asmeta_region *asmeta, const struct config *cfg,
    const struct tokenep_ask *ask, char out[TOKENEP_URL_MAX], struct gw_error *err)
{
	json_t *meta = NULL;
	const char *ep;

	if (ask->endpoint) {
		snprintf(out, TOKENEP_URL_MAX, "%s", ask->endpoint);
		return 0;
	}
	if (introspect_as_metadata(ix, asmeta, cfg, ask->now_ms, &meta, err) < 0)
		return -1;
	ep = json_string_value(json_object_get(meta, "token_endpoint"));
	if (!introspect_url_usable(cfg, ep) || strlen(ep) >= TOKENEP_URL_MAX) {
		gw_error_set(err, GW_EAUTHSERVER, "issuer metadata has no usable token_endpoint");
		json_decref(meta);
		return -1;
	}
	snprintf(out, TOKENEP_URL_MAX, "%s", ep);
	json_decref(meta);
	return 0;
}

static int
add(struct buf *form, const char *name, const char *value)
{
	return introspect_form_add(form, name, value, strlen(value));
}

/* The scopes of ask joined by blanks (RFC 6749 §3.3), as the form's scope when any. */
static int
add_scope(struct buf *form, const struct strlist *scopes)
{
	struct buf scope;
	size_t i;
	int rc = -1;

	if (scopes == NULL || scopes->n == 0)
		return 0;
	buf_init(&scope, 4096);
	for (i = 0; i < scopes->n; i++)
		if ((i > 0 && buf_putc(&scope, ' ') < 0) || buf_puts(&scope, scopes->v[i]) < 0)
			goto out;
	rc = introspect_form_add(form, "scope", scope.data, scope.len);
out:
	buf_free(&scope);
	return rc;
}

/* Its grant's row, then the resource, the scope. */
int
tokenep_form(const struct tokenep_ask *ask, struct buf *form)
{
	const struct secret_part *sub = ask->subject;
	const char *requested, *subject_as;

	if ((size_t)ask->grant >= sizeof(grants) / sizeof(grants[0]))
		return -1;
	requested = grants[ask->grant].requested;
	subject_as = grants[ask->grant].subject_as;
	if (add(form, "grant_type", grants[ask->grant].grant_type) < 0 ||
	    (subject_as && (sub == NULL || introspect_form_add(form, subject_as, sub->p, sub->n) < 0)))
		return -1;
	if (requested && (add(form, "subject_token_type", TOKENEP_TYPE_ACCESS) < 0 ||
	    add(form, "requested_token_type", requested) < 0 ||
	    (ask->audience && add(form, "audience", ask->audience) < 0)))
		return -1;
	/* RFC 6749 §4.1.3: the redirect_uri the code was sent to; RFC 7636 §4.5: the
	 * verifier only the gateway knows, so that a stolen code alone is worth nothing. */
	if (grants[ask->grant].pkce && (ask->redirect_uri == NULL || ask->code_verifier == NULL ||
	    add(form, "redirect_uri", ask->redirect_uri) < 0 || add(form, "code_verifier", ask->code_verifier) < 0))
		return -1;
	if (grants[ask->grant].resource && ask->resource && add(form, "resource", ask->resource) < 0)
		return -1;
	return add_scope(form, ask->scopes);
}

/* Long: the form (each parameter escaped, its buffer had whole at once so that no
 * copy of the grant's secret is left behind by a realloc), the POST as the client, the
 * answer read; the form, which held the secret, wiped at the one exit. */
int
tokenep_request(struct introspect *ix, struct asmeta_region *asmeta, const struct config *cfg,
    const struct tokenep_ask *ask, struct tokenep_answer *out, struct gw_error *err)
{
	const struct buf *answer;
	char url[TOKENEP_URL_MAX];
	struct buf form;
	long st;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	buf_init(&form, 3 * ((ask->subject ? ask->subject->n : 0) + (ask->code_verifier ? strlen(ask->code_verifier) : 0) +
	    (ask->redirect_uri ? strlen(ask->redirect_uri) : 0)) + 16384);
	if (endpoint_of(ix, asmeta, cfg, ask, url, err) < 0)
		goto out;
	if (buf_reserve(&form, form.max) < 0 || tokenep_form(ask, &form) < 0) {
		gw_error_set(err, GW_EAUTHSERVER, "the token request could not be built");
		goto out;
	}
	if ((st = introspect_post_form(ix, cfg, &(struct as_post){ url, &form, ask->client, "token endpoint" }, err)) < 0)
		goto out;
	answer = introspect_body(ix);
	rc = tokenep_parse(ask->grant, st, answer->data, answer->len, out, err);
	/* The issued tokens passed through the worker's buffer: wipe them there. */
	if (answer->data)
		secret_wipe(answer->data, answer->len);
out:
	if (form.data)
		secret_wipe(form.data, form.len);
	buf_free(&form);
	return rc;
}
