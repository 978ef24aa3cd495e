/* request — parameter copy, method table, bounded body read. */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"
#include "secret.h"

static const struct {
	const char *name;
	unsigned bit;
} methods[] = {
	{ "GET", M_GET },
	{ "HEAD", M_HEAD },
	{ "POST", M_POST },
	{ "DELETE", M_DELETE },
	{ "OPTIONS", M_OPTIONS },
};

/* Parameters copied verbatim into the request. */
static const struct {
	const char *param;
	size_t offset;
} params[] = {
	{ "QUERY_STRING", offsetof(struct request, query) },
	{ "CONTENT_TYPE", offsetof(struct request, content_type) },
	{ "HTTP_ACCEPT", offsetof(struct request, accept) },
	{ "HTTP_ORIGIN", offsetof(struct request, origin) },
	{ "HTTP_AUTHORIZATION", offsetof(struct request, authorization) },
	{ "HTTP_DPOP", offsetof(struct request, dpop) },
	{ "HTTP_IF_NONE_MATCH", offsetof(struct request, if_none_match) },
	{ "HTTP_MCP_PROTOCOL_VERSION", offsetof(struct request, protocol_version) },
	{ "HTTP_MCP_SESSION_ID", offsetof(struct request, session_id) },
	{ "HTTP_LAST_EVENT_ID", offsetof(struct request, last_event_id) },
	{ "HTTP_MCP_METHOD", offsetof(struct request, mcp_method) },
	{ "HTTP_MCP_NAME", offsetof(struct request, mcp_name) },
	{ "HTTP_HOST", offsetof(struct request, host) },
	{ "REMOTE_ADDR", offsetof(struct request, remote_addr) },
	{ "HTTP_X_FORWARDED_FOR", offsetof(struct request, forwarded_for) },
	{ "HTTPS", offsetof(struct request, https) },
	{ "HTTP_COOKIE", offsetof(struct request, cookie) },
};

unsigned
request_method_bit(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strcmp(methods[i].name, name) == 0)
			return methods[i].bit;
	return M_OTHER;
}

/* An incoming X-Request-Id (e.g. nginx's $request_id) is kept when it is tame. */
static int
request_id_ok(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!isalnum((unsigned char)s[n]) && s[n] != '-' && s[n] != '_' && s[n] != '.')
			return 0;
	return n >= 8 && n <= REQUEST_ID_MAX;
}

#define NPARAMS	(sizeof(params) / sizeof(params[0]))

/* The field of params[i] (i < NPARAMS), then the method's and the path's. */
static char **
field(struct request *r, size_t i)
{
	if (i < NPARAMS)
		return (char **)((char *)r + params[i].offset);
	return i == NPARAMS ? &r->method_name : &r->path;
}

int
request_init(struct request *r, param_fn get, void *ctx, const struct source *body,
    int64_t start_us, time_t now)
{
	const char *v, *pi, *val[NPARAMS + 2];
	size_t i, len[NPARAMS + 2], total = 0;
	char *p;

	memset(r, 0, sizeof(*r));
	r->content_length = -1;
	r->start_us = start_us;
	r->now = now;
	if (body)
		r->body = *body;

	v = get(ctx, "HTTP_X_REQUEST_ID");
	if (v && request_id_ok(v))
		memcpy(r->id, v, strlen(v) + 1);
	else
		secret_unique_hex(r->id);

	/* Every string copied into one block (the parameters are the front's, valid only
	 * while it reads them): one allocation a request, not one a parameter. */
	for (i = 0; i < NPARAMS; i++)
		val[i] = get(ctx, params[i].param);
	v = get(ctx, "REQUEST_METHOD");
	val[NPARAMS] = v ? v : "GET";
	pi = get(ctx, "PATH_INFO");
	v = pi && *pi ? pi : get(ctx, "SCRIPT_NAME");
	val[NPARAMS + 1] = v ? v : "/";
	for (i = 0; i < NPARAMS + 2; i++)
		if (val[i])
			total += (len[i] = strlen(val[i])) + 1;
	if ((r->strings = malloc(total)) == NULL)
		return -1;
	for (i = 0, p = r->strings; i < NPARAMS + 2; i++)
		if (val[i]) {
			memcpy(p, val[i], len[i] + 1);
			*field(r, i) = p;
			p += len[i] + 1;
		}
	r->method = request_method_bit(r->method_name);

	v = get(ctx, "CONTENT_LENGTH");
	if (v && *v) {
		char *end;
		long long n;

		errno = 0;
		n = strtoll(v, &end, 10);
		r->content_length = (errno || *end || n < 0) ? -2 : n;	/* -2: unreadable */
	}
	return 0;
}

void
request_free(struct request *r)
{
	size_t i;

	if (r->authorization)
		secret_wipe(r->authorization, strlen(r->authorization));
	if (r->cookie)
		secret_wipe(r->cookie, strlen(r->cookie));
	free(r->strings);
	r->strings = NULL;
	for (i = 0; i < NPARAMS + 2; i++)
		*field(r, i) = NULL;
}

static const char unreadable[] = "unreadable request body";
static const char too_large[] = "request body exceeds max-body";

int
request_read_body(struct request *r, size_t max, struct buf *out, struct gw_error *err)
{
	char chunk[8192];
	long n;
	size_t want;

	if (r->content_length == -2) {
		gw_error_set(err, GW_EBADREQUEST, "%s", unreadable);
		return -1;
	}
	if (r->content_length > (long long)max) {
		gw_error_set(err, GW_ETOOLARGE, "%s", too_large);
		return -1;
	}
	if (r->body.read == NULL)
		return 0;
	buf_init(out, max);
	for (;;) {
		want = sizeof(chunk);
		if (r->content_length >= 0) {
			long long left = r->content_length - (long long)out->len;

			if (left <= 0)
				break;
			if ((long long)want > left)
				want = (size_t)left;
		}
		n = r->body.read(r->body.ctx, chunk, want);
		if (n < 0) {
			gw_error_set(err, GW_EBADREQUEST, "%s", unreadable);
			return -1;
		}
		if (n == 0)
			break;
		r->body_consumed += n;
		if (buf_append(out, chunk, (size_t)n) < 0) {
			gw_error_set(err, GW_ETOOLARGE, "%s", too_large);
			return -1;
		}
	}
	if (r->content_length >= 0 && (long long)out->len != r->content_length) {
		gw_error_set(err, GW_EBADREQUEST, "%s", unreadable);	/* shorter than announced */
		return -1;
	}
	return 0;
}

long long
request_drain_body(struct request *r, size_t cap)
{
	char chunk[16384];
	long long left, drained = 0;
	long n;

	if (r->body.read == NULL || r->content_length <= 0)
		return 0;
	left = r->content_length - r->body_consumed;
	if (left > (long long)cap)
		return -1;	/* too much to be worth reading: let the connection fail */
	while (left > 0) {
		n = r->body.read(r->body.ctx, chunk, left < (long long)sizeof(chunk) ? (size_t)left : sizeof(chunk));
		if (n <= 0)
			return n < 0 ? -1 : drained;
		left -= n;
		drained += n;
		r->body_consumed += n;
	}
	return drained;
}
