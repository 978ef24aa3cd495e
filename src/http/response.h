/* response — what a handler describes; response_send() is the only writer of
 * status, headers and body. */
#ifndef GW_RESPONSE_H
#define GW_RESPONSE_H

#include <jansson.h>

#include "buf.h"
#include "err.h"
#include "request.h"
#include "sink.h"

#define RESPONSE_MAX_HEADERS	24
#define RESPONSE_HEADER_BYTES	768	/* header values kept in the response itself */
#define RESPONSE_BODY_MAX	(16u << 20)

struct header {
	const char *name;	/* static string */
	char *value;		/* in the response's values[], or allocated when owned */
	int owned;
};

struct response {
	char request_id[REQUEST_ID_MAX + 1];
	int status;
	const char *content_type;	/* static string; NULL = no body */
	struct header headers[RESPONSE_MAX_HEADERS];
	size_t n_headers;
	char values[RESPONSE_HEADER_BYTES];	/* the values that fit, one after another */
	size_t values_len;
	json_t *json;		/* body as JSON, serialized by response_serialize */
	struct buf body;	/* body bytes */
	/* A part of the body held, not copied (response_set_body_spliced): it goes out
	 * after the first splice_at bytes of body; release lets it go. */
	const char *splice;
	size_t splice_len, splice_at;
	void (*splice_release)(void *);
	int headers_only;	/* HEAD: say Content-Length, send no body */
	struct sink *sink;	/* where response_send and an event stream write; may be NULL */
	int streamed;		/* the head went out as an event stream; the body follows as events */
};

void response_init(struct response *r, const char *request_id);
void response_free(struct response *r);
/* Sets (or replaces) a header; CR and LF in the value become blanks. 0 or -1. */
int response_set_header(struct response *r, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *response_get_header(const struct response *r, const char *name);
/* A JSON body; steals body. */
void response_set_json(struct response *r, int status, json_t *body);
/* A body already serialized (copied); content_type is a static string. 0 or -1 (over
 * the body cap: the response is then empty). */
int response_set_body(struct response *r, int status, const char *content_type, const char *data, size_t len);
/* A body of three parts: head and tail copied, mid held rather than copied (a large
 * cached text) until release(mid), which may be NULL. */
struct response_parts {
	const char *head;
	size_t head_len;
	const char *mid;
	size_t mid_len;
	void (*release)(void *);
	const char *tail;
	size_t tail_len;
};
/* The body of p's three parts (content_type a static string): release(mid) is called
 * when the response no longer needs it, and at once on failure. 0 or -1 (over the body
 * cap: the response is then empty). */
int response_set_body_spliced(struct response *r, int status, const char *content_type,
    const struct response_parts *p);
/* The body's length, a held part included. */
size_t response_body_len(const struct response *r);
/* The same, taking b's bytes instead of copying them (b is left empty, to be freed as
 * usual). 0 or -1 (over the body cap: the response is then empty). */
int response_take_body(struct response *r, int status, const char *content_type, struct buf *b);
/* An HttpError body for e; description NULL = the table's message. */
void response_set_error(struct response *r, enum gw_err e, const char *description);
/* A status without body (204, 304). */
void response_set_empty(struct response *r, int status);
/* Serializes the JSON body into r->body; 0 or -1. Idempotent. */
int response_serialize(struct response *r);
/* Writes the whole response as CGI/FastCGI responder output; after an event stream,
 * only flushes. */
int response_send(struct response *r, struct sink *s);

/* Event streams (text/event-stream): the head goes out at once, then one event per
 * JSON-RPC message, each flushed as it is written so that nothing waits in a buffer.
 * open: 0, or -1 when r has no sink (then nothing was written). */
int response_stream_open(struct response *r);
/* "event: message" with msg (compact JSON, one data line); borrows msg. 0 or -1. */
int response_stream_message(struct response *r, json_t *msg);
/* A comment line (": text"), the keep-alive of a long wait. 0 or -1. */
int response_stream_comment(struct response *r, const char *text);
const char *response_status_text(int status);

#endif
