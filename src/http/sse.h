/* sse — text/event-stream both ways: framing the events we write (response.c sends
 * them), and an incremental parser with caps for the streams upstreams send us. */
#ifndef GW_SSE_H
#define GW_SSE_H

#include <jansson.h>
#include <stddef.h>

#include "buf.h"
#include "sink.h"

/* "event: message" + one data line of compact JSON (it never holds a raw newline). */
int sse_write_message(struct sink *s, json_t *msg);
/* ": text" — a comment, the keep-alive of a long wait; text must not hold a newline. */
int sse_write_comment(struct sink *s, const char *text);

#define SSE_EVENT_NAME_MAX	64
#define SSE_ID_MAX		256

struct sse_event {
	const char *event;	/* "message" when the stream named none */
	const char *data;	/* data lines joined by "\n"; NUL-terminated */
	size_t data_len;
	const char *id;		/* the last event id seen, "" when none */
};

/* Called once per dispatched event: 0 to go on, -1 to stop the parse. */
typedef int sse_event_fn(void *ctx, const struct sse_event *ev);

struct sse_parser {
	struct buf line;	/* the line being read, capped at max_line */
	struct buf data;	/* the event's data, capped at max_event */
	char event[SSE_EVENT_NAME_MAX];
	char id[SSE_ID_MAX];
	int has_data;
	int after_cr;		/* the last byte ended a line with CR: skip one LF */
	int started;		/* past a leading BOM */
	sse_event_fn *fn;
	void *ctx;
};

enum sse_status {
	SSE_OK = 0,
	SSE_ELINE = -1,		/* a line longer than max_line */
	SSE_EEVENT = -2,	/* an event's data larger than max_event */
	SSE_ESTOP = -3,		/* the callback stopped the parse */
};

void sse_parser_init(struct sse_parser *p, size_t max_line, size_t max_event,
    sse_event_fn *fn, void *ctx);
/* Feeds bytes as they arrive, in pieces of any size. SSE_OK, or an error after which
 * the parser must not be fed again. */
enum sse_status sse_parser_feed(struct sse_parser *p, const char *bytes, size_t n);
void sse_parser_free(struct sse_parser *p);

#endif
