/* Unit tests: event-stream framing, and the parser fed in pieces of every size. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sse.h"
#include "tap.h"

/* The events a parse produced, as "event|id|data;" lines. */
static struct buf seen;
static int stop_after = -1;

static int
collect(void *ctx, const struct sse_event *ev)
{
	int *n = ctx;

	if (buf_printf(&seen, "%s|%s|%.*s;", ev->event, ev->id, (int)ev->data_len, ev->data) < 0)
		abort();	/* the cap is far above what a case makes */
	return ++*n == stop_after ? -1 : 0;
}

/* Parses in, split into pieces of step bytes; returns the status, *out the events. */
static enum sse_status
parse(const char *in, size_t len, size_t step, size_t max_line, size_t max_event)
{
	struct sse_parser p;
	enum sse_status st = SSE_OK;
	size_t i, k;
	int n = 0;

	buf_reset(&seen);
	sse_parser_init(&p, max_line, max_event, collect, &n);
	for (i = 0; i < len && st == SSE_OK; i += k) {
		k = len - i < step ? len - i : step;
		st = sse_parser_feed(&p, in + i, k);
	}
	sse_parser_free(&p);
	return st;
}

static const struct {
	const char *in;
	const char *want;
	const char *what;
} rows[] = {
	{ "event: message\ndata: {\"a\":1}\n\n", "message||{\"a\":1};", "one event" },
	{ "data: x\n\n", "message||x;", "no event name: message" },
	{ "data:x\r\n\r\n", "message||x;", "CRLF, no blank after the colon" },
	{ "data: x\r\rdata: y\r\r", "message||x;message||y;", "CR line ends" },
	{ "data: a\ndata: b\n\n", "message||a\nb;", "data lines join with a newline" },
	{ ": keep-alive\n\ndata: z\n\n", "message||z;", "comments are skipped" },
	{ "id: 7\nevent: progress\ndata: p\n\ndata: q\n\n", "progress|7|p;message|7|q;", "the id persists, the name does not" },
	{ "retry: 10\nfoo: bar\ndata: r\n\n", "message||r;", "retry and unknown fields ignored" },
	{ "event: e\n\ndata: s\n\n", "message||s;", "an event without data is not dispatched" },
	{ "\xef\xbb\xbf" "data: bom\n\n", "message||bom;", "a leading BOM is dropped" },
	{ "data:  two\n\n", "message|| two;", "only one blank after the colon goes" },
	{ "data\n\n", "message||;", "a field without colon" },
	{ "data: unfinished\n", "", "an event without its blank line is not dispatched" },
};

/* Every row of the table parses to its events, fed in pieces of every size. */
static void
test_rows(void)
{
	static const size_t steps[] = { 1, 2, 3, 7, 4096 };
	size_t i, j;
	int all;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		all = 1;
		for (j = 0; j < sizeof(steps) / sizeof(steps[0]); j++) {
			all &= parse(rows[i].in, strlen(rows[i].in), steps[j], 256, 1024) == SSE_OK &&
			    strcmp(buf_str(&seen), rows[i].want) == 0;
			if (!all) {
				printf("# step %zu: got %s\n", steps[j], buf_str(&seen));
				break;
			}
		}
		ok(all, "%s (every piece size)", rows[i].what);
	}
}

/* The limits on lines and events, and a callback that stops the parse. */
static void
test_limits(void)
{
	char big[300];

	memset(big, 'x', sizeof(big));
	memcpy(big, "data: ", 6);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\n';
	is_int(parse(big, sizeof(big), 5, 256, 1 << 16), SSE_ELINE, "a line over max-line fails");
	is_int(parse("data: 0123456789\ndata: 0123456789\n\n", 35, 4, 256, 20), SSE_EEVENT,
	    "an event over max-event fails");
	stop_after = 1;
	is_int(parse("data: a\n\ndata: b\n\n", 18, 1, 256, 256), SSE_ESTOP, "the callback can stop the parse");
	is_str(buf_str(&seen), "message||a;", "… after the first event");
	stop_after = -1;
}

/* Our framing of a message and of a comment, and the message parsed back. */
static void
test_framing(void)
{
	struct buf out;
	struct sink s;
	json_t *msg;

	buf_init(&out, 4096);
	sink_mem_init(&s, &out);
	msg = json_pack("{s:s, s:i, s:{s:s}}", "jsonrpc", "2.0", "id", 1, "result", "t", "a\nb");
	ok(sse_write_message(&s, msg) == 0, "framing a message");
	is_str(buf_str(&out), "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"a\\nb\"}}\n\n",
	    "one data line: the newline inside a string stays escaped");
	is_int(parse(out.data, out.len, 3, 256, 256), SSE_OK, "our framing parses");
	is_str(buf_str(&seen), "message||{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"a\\nb\"}};", "… back to the message");
	buf_reset(&out);
	ok(sse_write_comment(&s, "keep-alive") == 0 && strcmp(buf_str(&out), ": keep-alive\n\n") == 0, "a comment");
	json_decref(msg);
	buf_free(&out);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	buf_init(&seen, 1 << 16);
	run_case(test_rows);
	run_case(test_limits);
	run_case(test_framing);
	buf_free(&seen);
	return done_testing();
}
