/* The event-stream parser (src/http/sse.c) over a stream cut into random pieces. The first
 * bytes choose the caps and the cutting; the rest is the stream. Property: the events
 * and the final status do not depend on how the stream was cut (CR LF split between
 * two pieces, a BOM in pieces, a line across many). */
#include "autoconf.h"

#include "buf.h"
#include "fuzz.h"
#include "sse.h"

struct seen {
	struct buf log;	/* every event, framed: event NUL id NUL length data */
	size_t n;
	size_t stop_at;	/* the callback stops the parse at this event (0: never) */
};

static int
on_event(void *ctx, const struct sse_event *ev)
{
	struct seen *s = ctx;

	FUZZ_CHECK(ev->event != NULL && ev->data != NULL && ev->id != NULL);
	FUZZ_CHECK(strlen(ev->event) < SSE_EVENT_NAME_MAX && strlen(ev->id) < SSE_ID_MAX);
	FUZZ_CHECK(ev->data[ev->data_len] == '\0');
	/* The log's cap is far above what an input can make. */
	FUZZ_CHECK(buf_puts(&s->log, ev->event) == 0 && buf_putc(&s->log, '\0') == 0 &&
	    buf_puts(&s->log, ev->id) == 0 && buf_putc(&s->log, '\0') == 0 &&
	    buf_printf(&s->log, "%zu:", ev->data_len) == 0 && buf_append(&s->log, ev->data, ev->data_len) == 0);
	s->n++;
	return s->stop_at && s->n == s->stop_at ? -1 : 0;
}

/* Feeds the stream in pieces whose sizes come from seed (0: all at once). */
static enum sse_status
run(const char *stream, size_t n, size_t max_line, size_t max_event, uint32_t seed, struct seen *s)
{
	struct sse_parser p;
	enum sse_status st = SSE_OK;
	size_t off = 0, piece;

	sse_parser_init(&p, max_line, max_event, on_event, s);
	while (off < n && st == SSE_OK) {
		if (seed == 0)
			piece = n - off;
		else {
			seed = seed * 1103515245u + 12345u;
			piece = 1 + (seed >> 16) % (seed & 0x100 ? 3 : 64);
			if (piece > n - off)
				piece = n - off;
		}
		st = sse_parser_feed(&p, stream + off, piece);
		off += piece;
	}
	sse_parser_free(&p);
	return st;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen whole = { .stop_at = 0 }, cut = { .stop_at = 0 };
	enum sse_status a, b;
	size_t max_line, max_event;
	uint32_t seed;

	if (size < 6)
		return 0;
	max_line = 1 + data[0] * 4;	/* small caps, so that the errors are reached */
	max_event = 1 + data[1] * 16;
	whole.stop_at = cut.stop_at = data[2] % 8;
	seed = (uint32_t)data[3] << 16 | (uint32_t)data[4] << 8 | data[5] | 1;
	data += 6;
	size -= 6;
	buf_init(&whole.log, 64u << 20);
	buf_init(&cut.log, 64u << 20);
	a = run((const char *)data, size, max_line, max_event, 0, &whole);
	b = run((const char *)data, size, max_line, max_event, seed, &cut);
	FUZZ_CHECK(a == b);
	FUZZ_CHECK(whole.n == cut.n && whole.log.len == cut.log.len &&
	    memcmp(buf_str(&whole.log), buf_str(&cut.log), whole.log.len) == 0);
	FUZZ_CHECK(whole.n <= size / 2 + 1);
	buf_free(&whole.log);
	buf_free(&cut.log);
	return 0;
}
