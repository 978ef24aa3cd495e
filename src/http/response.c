/* response — status table, header set, HttpError bodies, and the one writer. */
#include "autoconf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jsonw.h"
#include "response.h"
#include "str.h"
#include "sse.h"

static const struct {
	int status;
	const char *text;
} status_texts[] = {
	{ 200, "OK" },
	{ 202, "Accepted" },
	{ 204, "No Content" },
	{ 304, "Not Modified" },
	{ 400, "Bad Request" },
	{ 401, "Unauthorized" },
	{ 403, "Forbidden" },
	{ 404, "Not Found" },
	{ 405, "Method Not Allowed" },
	{ 406, "Not Acceptable" },
	{ 413, "Content Too Large" },
	{ 415, "Unsupported Media Type" },
	{ 429, "Too Many Requests" },
	{ 500, "Internal Server Error" },
	{ 502, "Bad Gateway" },
	{ 503, "Service Unavailable" },
	{ 504, "Gateway Timeout" },
};

const char *
response_status_text(int status)
{
	size_t i;

	for (i = 0; i < sizeof(status_texts) / sizeof(status_texts[0]); i++)
		if (status_texts[i].status == status)
			return status_texts[i].text;
	return "Unknown";
}

void
response_init(struct response *r, const char *request_id)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->request_id, sizeof(r->request_id), "%s", request_id);
	r->status = 500;
	buf_init(&r->body, RESPONSE_BODY_MAX);
}

/* Lets the held part of the body go. */
static void
unsplice(struct response *r)
{
	if (r->splice && r->splice_release)
		r->splice_release((void *)(uintptr_t)r->splice);
	r->splice = NULL;
	r->splice_len = r->splice_at = 0;
	r->splice_release = NULL;
}

void
response_free(struct response *r)
{
	size_t i;

	for (i = 0; i < r->n_headers; i++)
		if (r->headers[i].owned)
			free(r->headers[i].value);
	r->n_headers = 0;
	r->values_len = 0;
	json_decref(r->json);
	r->json = NULL;
	unsplice(r);
	buf_free(&r->body);
}

/* A copy of s (n bytes) for a header value: in the response's own values[] while they
 * have room (no allocation for the few short values of a usual answer), else
 * allocated (*owned = 1). NULL when out of memory. */
static char *
value_copy(struct response *r, const char *s, size_t n, int *owned)
{
	char *v;

	if (n < sizeof(r->values) - r->values_len) {
		v = r->values + r->values_len;
		r->values_len += n + 1;
		*owned = 0;
	} else {
		if ((v = malloc(n + 1)) == NULL)
			return NULL;
		*owned = 1;
	}
	memcpy(v, s, n);
	v[n] = '\0';
	return v;
}

int
response_set_header(struct response *r, const char *name, const char *fmt, ...)
{
	va_list ap;
	char *v = NULL, *c;
	const char *s;
	size_t i;
	int owned = 1;

	va_start(ap, fmt);
	/* the common forms, a literal and "%s", without printf */
	if (strcmp(fmt, "%s") == 0)
		v = (s = va_arg(ap, const char *)) != NULL ? value_copy(r, s, strlen(s), &owned) : NULL;
	else if (strchr(fmt, '%') == NULL)
		v = value_copy(r, fmt, strlen(fmt), &owned);
	else if (vasprintf(&v, fmt, ap) < 0)
		v = NULL;
	va_end(ap);
	if (v == NULL)
		return -1;
	for (c = v; *c; c++)
		if (*c == '\r' || *c == '\n')
			*c = ' ';
	for (i = 0; i < r->n_headers; i++)
		if (strcasecmp(r->headers[i].name, name) == 0) {
			if (r->headers[i].owned)
				free(r->headers[i].value);
			r->headers[i].value = v;
			r->headers[i].owned = owned;
			return 0;
		}
	if (r->n_headers == RESPONSE_MAX_HEADERS) {
		if (owned)
			free(v);
		return -1;
	}
	r->headers[r->n_headers].name = name;
	r->headers[r->n_headers].value = v;
	r->headers[r->n_headers].owned = owned;
	r->n_headers++;
	return 0;
}

const char *
response_get_header(const struct response *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n_headers; i++)
		if (strcasecmp(r->headers[i].name, name) == 0)
			return r->headers[i].value;
	return NULL;
}

void
response_set_json(struct response *r, int status, json_t *body)
{
	json_decref(r->json);
	unsplice(r);
	buf_reset(&r->body);
	r->status = status;
	r->json = body;
	r->content_type = body ? "application/json" : NULL;
}

int
response_set_body(struct response *r, int status, const char *content_type, const char *data, size_t len)
{
	json_decref(r->json);
	r->json = NULL;
	unsplice(r);
	buf_reset(&r->body);
	r->status = status;
	r->content_type = content_type;
	return buf_append(&r->body, data, len);
}

int
response_set_body_spliced(struct response *r, int status, const char *content_type,
    const struct response_parts *p)
{
	if (response_set_body(r, status, content_type, p->head, p->head_len) < 0 ||
	    p->mid_len > r->body.max - r->body.len || buf_append(&r->body, p->tail, p->tail_len) < 0 ||
	    r->body.len > r->body.max - p->mid_len) {
		if (p->release)
			p->release((void *)(uintptr_t)p->mid);
		buf_reset(&r->body);
		return -1;
	}
	r->splice = p->mid;
	r->splice_len = p->mid_len;
	r->splice_at = p->head_len;
	r->splice_release = p->release;
	return 0;
}

size_t
response_body_len(const struct response *r)
{
	return r->body.len + r->splice_len;
}

int
response_take_body(struct response *r, int status, const char *content_type, struct buf *b)
{
	struct buf old = r->body;

	if (b->len > r->body.max)
		return response_set_body(r, status, content_type, b->data, b->len);	/* fails as it says */
	json_decref(r->json);
	r->json = NULL;
	unsplice(r);
	r->status = status;
	r->content_type = content_type;
	r->body = *b;
	r->body.max = old.max;
	buf_free(&old);
	buf_init(b, b->max);
	return 0;
}

void
response_set_empty(struct response *r, int status)
{
	response_set_json(r, status, NULL);
}

void
response_set_error(struct response *r, enum gw_err e, const char *description)
{
	const struct gw_err_info *info = err_info(e);
	json_t *body;

	body = json_pack("{s:s, s:s, s:s, s:s}",
	    "error", info->error,
	    "error_description", description && *description ? description : info->message,
	    "message", info->message,
	    "request_id", r->request_id);
	if (body && info->jsonrpc_code)
		json_object_set_new(body, "jsonrpc_code", json_integer(info->jsonrpc_code));
	response_set_json(r, info->status, body);
	if (body == NULL) {	/* description was not UTF-8, or no memory */
		body = json_pack("{s:s, s:s, s:s}", "error", info->error,
		    "message", info->message, "request_id", r->request_id);
		response_set_json(r, info->status, body);
	}
}

int
response_serialize(struct response *r)
{
	if (r->json == NULL || r->body.len > 0)
		return 0;
	if (jsonw_dump(&r->body, r->json) < 0) {
		buf_reset(&r->body);
		return -1;
	}
	return 0;
}

static int
put_header(struct buf *h, const char *name, const char *value)
{
	return buf_puts(h, name) < 0 || buf_append(h, ": ", 2) < 0 || buf_puts(h, value) < 0 ||
	    buf_append(h, "\r\n", 2) < 0 ? -1 : 0;
}

/* Status and headers; has_body adds Content-Type and, unless streamed, Content-Length. */
static int
write_head(struct response *r, struct sink *s, int has_body)
{
	char num[32];
	struct buf h;
	size_t i;
	int rc = -1;

	buf_init(&h, 64 * 1024);
	str_u64(num, (uint64_t)(r->status > 0 ? r->status : 0));
	if (buf_reserve(&h, 448) < 0 || buf_puts(&h, "Status: ") < 0 || buf_puts(&h, num) < 0 ||
	    buf_putc(&h, ' ') < 0 || buf_puts(&h, response_status_text(r->status)) < 0 ||
	    buf_append(&h, "\r\n", 2) < 0)
		goto out;
	if (has_body && put_header(&h, "Content-Type", r->content_type) < 0)
		goto out;
	str_u64(num, response_body_len(r));
	if (has_body && !r->streamed && put_header(&h, "Content-Length", num) < 0)
		goto out;
	for (i = 0; i < r->n_headers; i++)
		if (put_header(&h, r->headers[i].name, r->headers[i].value) < 0)
			goto out;
	if (put_header(&h, "X-Request-Id", r->request_id) < 0 || buf_append(&h, "\r\n", 2) < 0)
		goto out;
	rc = sink_write(s, h.data, h.len);
out:
	buf_free(&h);
	return rc;
}

int
response_send(struct response *r, struct sink *s)
{
	int has_body;

	if (r->streamed)
		return sink_flush(s);
	if (response_serialize(r) < 0) {
		response_set_error(r, GW_EINTERNAL, "response too large");
		if (response_serialize(r) < 0)
			return -1;
	}
	has_body = r->content_type != NULL && r->status != 204 && r->status != 304;
	if (write_head(r, s, has_body) < 0)
		return -1;
	if (has_body && !r->headers_only && r->splice &&
	    (sink_write(s, r->body.data, r->splice_at) < 0 || sink_write(s, r->splice, r->splice_len) < 0 ||
	    sink_write(s, r->body.data + r->splice_at, r->body.len - r->splice_at) < 0))
		return -1;
	if (has_body && !r->headers_only && !r->splice && sink_write(s, r->body.data, r->body.len) < 0)
		return -1;
	return sink_flush(s);
}

int
response_stream_open(struct response *r)
{
	if (r->sink == NULL)
		return -1;
	if (r->streamed)
		return 0;
	json_decref(r->json);
	r->json = NULL;
	unsplice(r);
	buf_reset(&r->body);
	r->status = 200;
	r->content_type = "text/event-stream";
	r->streamed = 1;
	/* no-cache, and X-Accel-Buffering tells nginx not to buffer this answer. */
	response_set_header(r, "Cache-Control", "no-cache");
	response_set_header(r, "X-Accel-Buffering", "no");
	if (write_head(r, r->sink, 1) < 0)
		return -1;
	return sink_flush(r->sink);
}

int
response_stream_message(struct response *r, json_t *msg)
{
	return r->streamed ? sse_write_message(r->sink, msg) : -1;
}

int
response_stream_comment(struct response *r, const char *text)
{
	return r->streamed ? sse_write_comment(r->sink, text) : -1;
}
