/* sse — event framing and the WHATWG event-stream parsing rules (lines end in CRLF,
 * LF or CR; "field: value" with one optional blank; data lines join with "\n"; a
 * blank line dispatches; comments and unknown fields are ignored). */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "jsonw.h"
#include "sse.h"

#define SSE_MESSAGE_MAX	(64u << 20)	/* one message's JSON */

int
sse_write_message(struct sink *s, json_t *msg)
{
	struct buf b;
	int rc = -1;

	buf_init(&b, SSE_MESSAGE_MAX);
	if (jsonw_dump(&b, msg) == 0 && sink_puts(s, "event: message\ndata: ") == 0 &&
	    sink_write(s, b.data, b.len) == 0 && sink_puts(s, "\n\n") == 0)
		rc = sink_flush(s);
	buf_free(&b);
	return rc;
}

int
sse_write_comment(struct sink *s, const char *text)
{
	if (sink_puts(s, ": ") < 0 || sink_puts(s, text) < 0 || sink_puts(s, "\n\n") < 0)
		return -1;
	return sink_flush(s);
}

void
sse_parser_init(struct sse_parser *p, size_t max_line, size_t max_event,
    sse_event_fn *fn, void *ctx)
{
	memset(p, 0, sizeof(*p));
	buf_init(&p->line, max_line);
	buf_init(&p->data, max_event);
	p->fn = fn;
	p->ctx = ctx;
}

void
sse_parser_free(struct sse_parser *p)
{
	buf_free(&p->line);
	buf_free(&p->data);
}

static enum sse_status
dispatch(struct sse_parser *p)
{
	struct sse_event ev;
	int rc;

	if (!p->has_data) {
		p->event[0] = '\0';
		return SSE_OK;
	}
	ev.event = p->event[0] ? p->event : "message";
	ev.data = buf_str(&p->data);
	ev.data_len = p->data.len;
	ev.id = p->id;
	rc = p->fn(p->ctx, &ev);
	buf_reset(&p->data);
	p->has_data = 0;
	p->event[0] = '\0';
	return rc < 0 ? SSE_ESTOP : SSE_OK;
}

/* One complete line (without its end). */
static enum sse_status
line(struct sse_parser *p, const char *l, size_t n)
{
	const char *colon, *v;
	size_t fn, vn;

	if (!p->started) {	/* the stream's first line may start with a BOM */
		p->started = 1;
		if (n >= 3 && memcmp(l, "\xef\xbb\xbf", 3) == 0) {
			l += 3;
			n -= 3;
		}
	}
	if (n == 0)
		return dispatch(p);
	if (l[0] == ':')
		return SSE_OK;
	colon = memchr(l, ':', n);
	fn = colon ? (size_t)(colon - l) : n;
	v = colon ? colon + 1 : l + n;
	vn = n - fn - (colon ? 1 : 0);
	if (vn && *v == ' ') {
		v++;
		vn--;
	}
	if (fn == 4 && memcmp(l, "data", 4) == 0) {
		if ((p->has_data && buf_putc(&p->data, '\n') < 0) || buf_append(&p->data, v, vn) < 0)
			return SSE_EEVENT;
		p->has_data = 1;
	} else if (fn == 5 && memcmp(l, "event", 5) == 0) {
		snprintf(p->event, sizeof(p->event), "%.*s", (int)vn, v);
	} else if (fn == 2 && memcmp(l, "id", 2) == 0 && !memchr(v, '\0', vn)) {
		snprintf(p->id, sizeof(p->id), "%.*s", (int)vn, v);
	}
	return SSE_OK;	/* retry and unknown fields: nothing for us */
}

enum sse_status
sse_parser_feed(struct sse_parser *p, const char *bytes, size_t n)
{
	enum sse_status st;
	size_t i, start = 0;

	for (i = 0; i < n; i++) {
		char c = bytes[i];

		if (p->after_cr) {
			p->after_cr = 0;
			if (c == '\n') {
				start = i + 1;
				continue;
			}
		}
		if (c != '\n' && c != '\r')
			continue;
		if (buf_append(&p->line, bytes + start, i - start) < 0)
			return SSE_ELINE;
		if ((st = line(p, buf_str(&p->line), p->line.len)) != SSE_OK)
			return st;
		buf_reset(&p->line);
		p->after_cr = c == '\r';
		start = i + 1;
	}
	if (buf_append(&p->line, bytes + start, n - start) < 0)
		return SSE_ELINE;
	return SSE_OK;
}
