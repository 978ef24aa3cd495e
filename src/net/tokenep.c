/* tokenep — a token endpoint: RFC 8693 token exchange, client_credentials, and the
 * answer (tokenep.h). */
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

/* An access token the gateway can send in a header: 1 to TOKENEP_TOKEN_MAX visible
 * ASCII bytes (no blank, no control, no byte past 0x7e). */
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

/* RFC 6749 §5.1 and RFC 8693 §2.2.1: an access token of type Bearer, what it is (when
 * said) an access token or a JWT, and a positive whole lifetime (when said); or, asked
 * for an ID-JAG, one said to be that, of token_type N_A. */
static int
read_issued(enum tokenep_grant grant, json_t *doc, struct tokenep_answer *out, struct gw_error *err)
{
	json_t *tok = json_object_get(doc, "access_token"), *exp = json_object_get(doc, "expires_in");
	const char *type = json_string_value(json_object_get(doc, "token_type"));
	const char *issued = json_string_value(json_object_get(doc, "issued_token_type"));
	size_t n = json_string_length(tok);

	if (!token_ok(json_string_value(tok), n)) {
		gw_error_set(err, GW_EAUTHSERVER, "the token endpoint's answer has no usable access_token");
		return -1;
	}
	if (grant == TOKENEP_EXCHANGE_ID_JAG) {
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
	if (exp && (!json_is_integer(exp) || json_integer_value(exp) <= 0)) {
		gw_error_set(err, GW_EAUTHSERVER, "the token endpoint's expires_in is not a positive integer");
		return -1;
	}
	if ((out->token = malloc(n + 1)) == NULL) {
		gw_error_set(err, GW_EAUTHSERVER, "out of memory");
		return -1;
	}
	memcpy(out->token, json_string_value(tok), n);
	out->token[n] = '\0';
	out->token_len = n;
	out->expires_in = exp == NULL ? 0 : json_integer_value(exp) > TOKENEP_EXPIRES_MAX ? TOKENEP_EXPIRES_MAX :
	    (long)json_integer_value(exp);
	return 0;
}

/* Wipes a parsed answer's strings of the token (jansson's copies of it). */
static void
wipe_doc(json_t *doc)
{
	json_t *tok = json_object_get(doc, "access_token");

	if (json_is_string(tok))
		secret_wipe((void *)(uintptr_t)json_string_value(tok), json_string_length(tok));	/* jansson's own copy */
}

int
tokenep_parse(enum tokenep_grant grant, long status, const char *body, size_t len, struct tokenep_answer *out,
    struct gw_error *err)
{
	json_error_t jerr;
	json_t *doc;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	doc = json_loadb(body ? body : "", body ? len : 0, JSON_REJECT_DUPLICATES, &jerr);
	if (status == 200 && json_is_object(doc))
		rc = read_issued(grant, doc, out, err);
	else if ((status == 400 || status == 401) && json_is_object(doc) && read_refusal(doc, out))
		rc = 1;
	else
		gw_error_set(err, GW_EAUTHSERVER, "the token endpoint answered HTTP %ld%s", status,
		    json_is_object(doc) ? "" : " without a JSON object");
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

/* Each grant's form: its grant_type; an exchange's subject token and the type it asks
 * for; the jwt-bearer grant's assertion. */
static const struct {
	const char *grant_type;
	const char *requested;	/* an exchange's requested_token_type; NULL: not an exchange */
	const char *subject_as;	/* the form's name of ask->subject; NULL: none */
} grants[] = {
	[TOKENEP_CLIENT_CREDENTIALS] = { "client_credentials", NULL, NULL },
	[TOKENEP_EXCHANGE] = { "urn:ietf:params:oauth:grant-type:token-exchange", TOKENEP_TYPE_ACCESS, "subject_token" },
	[TOKENEP_EXCHANGE_ID_JAG] = { "urn:ietf:params:oauth:grant-type:token-exchange", TOKENEP_TYPE_ID_JAG,
	    "subject_token" },
	[TOKENEP_JWT_BEARER] = { "urn:ietf:params:oauth:grant-type:jwt-bearer", NULL, "assertion" },
};

static int
add(struct buf *form, const char *name, const char *value)
{
	return introspect_form_add(form, name, value, strlen(value));
}

/* The form of ask (its grant's row, then the resource, an exchange's audience, the
 * scope): 0, or -1 when it does not fit or the grant lacks its subject. */
static int
build_form(struct buf *form, const struct tokenep_ask *ask, const struct buf *scope)
{
	const struct secret_part *sub = ask->subject;
	const char *requested = grants[ask->grant].requested, *subject_as = grants[ask->grant].subject_as;

	if (add(form, "grant_type", grants[ask->grant].grant_type) < 0 || (subject_as && sub == NULL) ||
	    (subject_as && introspect_form_add(form, subject_as, sub->p, sub->n) < 0))
		return -1;
	if (requested && (add(form, "subject_token_type", TOKENEP_TYPE_ACCESS) < 0 ||
	    add(form, "requested_token_type", requested) < 0 ||
	    (ask->audience && add(form, "audience", ask->audience) < 0)))
		return -1;
	if (ask->grant != TOKENEP_JWT_BEARER && add(form, "resource", ask->resource) < 0)
		return -1;	/* (the assertion names its resource) */
	return scope->len > 0 ? introspect_form_add(form, "scope", scope->data, scope->len) : 0;
}

/* Long: the form (each parameter escaped, the scopes joined by spaces), the POST as
 * the client, the answer read; the form, which held the caller's token, wiped at the
 * one exit. */
int
tokenep_request(struct introspect *ix, struct asmeta_region *asmeta, const struct config *cfg,
    const struct tokenep_ask *ask, struct tokenep_answer *out, struct gw_error *err)
{
	const struct buf *answer;
	char url[TOKENEP_URL_MAX];
	struct buf form, scope;
	size_t i;
	long st;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	buf_init(&form, 3 * (ask->subject ? ask->subject->n : 0) + 16384);
	buf_init(&scope, 4096);
	if (endpoint_of(ix, asmeta, cfg, ask, url, err) < 0)
		goto out;
	for (i = 0; ask->scopes && i < ask->scopes->n; i++)
		if ((i > 0 && buf_putc(&scope, ' ') < 0) || buf_puts(&scope, ask->scopes->v[i]) < 0)
			goto toolong;
	if (build_form(&form, ask, &scope) < 0)
		goto toolong;
	if ((st = introspect_post_form(ix, cfg, &(struct as_post){ url, &form, ask->client, "token endpoint" }, err)) < 0)
		goto out;
	answer = introspect_body(ix);
	rc = tokenep_parse(ask->grant, st, answer->data, answer->len, out, err);
	/* The issued token passed through the worker's buffer: wipe it there. */
	if (answer->data)
		secret_wipe(answer->data, answer->len);
	goto out;
toolong:
	gw_error_set(err, GW_EAUTHSERVER, "the token request could not be built");
out:
	if (form.data)
		secret_wipe(form.data, form.len);
	buf_free(&form);
	buf_free(&scope);
	return rc;
}
