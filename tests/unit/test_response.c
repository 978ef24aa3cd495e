/* Unit tests: the one writer — exact bytes, HEAD, 204/304, header hygiene, HttpError. */
#include "autoconf.h"

#include <string.h>

#include "response.h"
#include "tap.h"

static const char *
send_to_string(struct response *r, struct buf *out)
{
	struct sink s;

	buf_init(out, 1 << 20);
	sink_mem_init(&s, out);
	response_send(r, &s);
	return buf_str(out);
}

/* A JSON response's exact bytes, and the same headers without the body for HEAD. */
static void
test_json(void)
{
	struct response r;
	struct buf out;

	response_init(&r, "rid1");
	response_set_json(&r, 200, json_pack("{s:s}", "a", "b"));
	response_set_header(&r, "Cache-Control", "no-store");
	is_str(send_to_string(&r, &out),
	    "Status: 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n"
	    "Cache-Control: no-store\r\nX-Request-Id: rid1\r\n\r\n{\"a\":\"b\"}",
	    "JSON response bytes");
	buf_free(&out);
	r.headers_only = 1;
	is_str(send_to_string(&r, &out),
	    "Status: 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n"
	    "Cache-Control: no-store\r\nX-Request-Id: rid1\r\n\r\n",
	    "HEAD: same headers, no body");
	buf_free(&out);
	response_free(&r);
}

static int released;

static void
count_release(void *p)
{
	(void)p;
	released++;
}

/* A body of three parts: the middle one held, not copied, goes out between the others,
 * counts in Content-Length, and is let go once (replaced, freed, or refused). */
static void
test_spliced(void)
{
	struct response r;
	struct buf out;
	char mid[] = "[1,2,3]";
	const struct response_parts parts = { "[", 1, mid, 7, count_release, "]", 1 };

	response_init(&r, "rid5");
	is_int(response_set_body_spliced(&r, 200, "application/json",
	    &(struct response_parts){ "{\"a\":", 5, mid, 7, count_release, "}", 1 }), 0, "a spliced body");
	mid[1] = '9';	/* held, not copied: what is written is what mid holds then */
	is_str(send_to_string(&r, &out),
	    "Status: 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n"
	    "X-Request-Id: rid5\r\n\r\n{\"a\":[9,2,3]}", "… the three parts in order, Content-Length all of them");
	buf_free(&out);
	is_int(released, 0, "… the middle not let go before the response is done");
	response_set_json(&r, 200, json_pack("{s:i}", "a", 1));
	is_int(released, 1, "… and let go once the body is replaced");
	is_str(send_to_string(&r, &out),
	    "Status: 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n"
	    "X-Request-Id: rid5\r\n\r\n{\"a\":1}", "… which then goes out alone");
	buf_free(&out);
	response_set_body_spliced(&r, 200, "application/json", &parts);
	response_free(&r);
	is_int(released, 2, "freeing the response lets the middle go");
	response_init(&r, "rid6");
	r.body.max = 8;
	is_int(response_set_body_spliced(&r, 200, "application/json", &parts), -1,
	    "parts over the body cap: refused");
	is_int(released, 3, "… and the middle let go at once");
	ok(response_body_len(&r) == 0 && r.splice == NULL, "… the body left empty");
	response_free(&r);
	is_int(released, 3, "… not twice");
}

/* A 204 goes out without Content-Type or body. */
static void
test_no_content(void)
{
	struct response r;
	struct buf out;

	response_init(&r, "rid2");
	response_set_empty(&r, 204);
	response_set_header(&r, "Allow", "GET, HEAD, OPTIONS");
	is_str(send_to_string(&r, &out), "Status: 204 No Content\r\nAllow: GET, HEAD, OPTIONS\r\nX-Request-Id: rid2\r\n\r\n",
	    "204 without Content-Type or body");
	buf_free(&out);
	response_free(&r);
}

/* Setting a header replaces it, whatever the case of its name, and CR/LF cannot split one. */
static void
test_headers(void)
{
	struct response r;

	response_init(&r, "rid3");
	response_set_header(&r, "X-Test", "a\r\nSet-Cookie: evil");
	response_set_header(&r, "x-test", "%s", "replaced");
	is_str(response_get_header(&r, "X-TEST"), "replaced", "set replaces a header, names case-insensitive");
	is_int(r.n_headers, 1, "no duplicate header");
	response_set_header(&r, "X-Inject", "a\r\nSet-Cookie: evil");
	is_str(response_get_header(&r, "X-Inject"), "a  Set-Cookie: evil", "CR/LF in a value cannot split headers");
	response_free(&r);
}

/* Values past the response's own room are allocated: every one reads back whole, a
 * long one too, replaced ones included, and CR/LF go either way. */
static void
test_header_room(void)
{
	static const char *const names[] = { "X-A", "X-B", "X-C", "X-D", "X-E", "X-F", "X-G", "X-H" };
	char big[300];
	struct response r;
	size_t i, whole = 0;

	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[10] = '\n';
	response_init(&r, "rid4");
	for (i = 0; i < 8; i++)	/* 8 x 300 bytes: well past RESPONSE_HEADER_BYTES */
		ok(response_set_header(&r, names[i], "%s", big) == 0, "header %zu set", i);
	response_set_header(&r, "X-A", "%s", "short again");
	response_set_header(&r, "X-H", "%s%d", "formatted\r", 7);
	big[10] = ' ';
	for (i = 1; i < 7; i++)
		whole += response_get_header(&r, names[i]) && strcmp(response_get_header(&r, names[i]), big) == 0;
	ok(whole == 6, "six long values read back whole, LF made a blank, stored in the response or allocated");
	is_str(response_get_header(&r, "X-A"), "short again", "a replaced value");
	is_str(response_get_header(&r, "X-H"), "formatted 7", "a formatted value, CR made a blank");
	is_int(r.n_headers, 8, "eight headers, none twice");
	response_free(&r);
}

/* A not-found error: status 404 and the exact HttpError body. */
static void
test_not_found(void)
{
	struct response r;

	response_init(&r, "rid4");
	response_set_error(&r, GW_ENOTFOUND, NULL);
	is_int(r.status, 404, "not found status");
	response_serialize(&r);
	is_str(buf_str(&r.body), "{\"error\":\"not_found\",\"error_description\":\"No such endpoint\","
	    "\"message\":\"No such endpoint\",\"request_id\":\"rid4\"}", "HttpError body");
	response_free(&r);
}

/* A parse error: 400 with its JSON-RPC code and the description given. */
static void
test_parse_error(void)
{
	struct response r;
	json_t *body;

	response_init(&r, "rid5");
	response_set_error(&r, GW_EPARSE, "body is not JSON");
	body = r.json;
	is_int(r.status, 400, "parse error is 400");
	is_int(json_integer_value(json_object_get(body, "jsonrpc_code")), -32700, "jsonrpc_code carried");
	is_str(json_string_value(json_object_get(body, "error_description")), "body is not JSON", "description");
	response_free(&r);
}

/* A description that is not UTF-8 is dropped, and the HttpError still goes out. */
static void
test_bad_utf8(void)
{
	struct response r;

	response_init(&r, "rid6");
	response_set_error(&r, GW_EBADREQUEST, "bad \xff utf8");
	ok(r.json && json_object_get(r.json, "request_id") && !json_object_get(r.json, "error_description"),
	    "invalid UTF-8 in a description still gives an HttpError");
	response_free(&r);
}

/* Status texts: those of RFC 9110, and "Unknown" for any other status. */
static void
test_status_text(void)
{
	is_str(response_status_text(413), "Content Too Large", "RFC 9110 status text");
	is_str(response_status_text(599), "Unknown", "unknown status text");
}

/* Every error maps to a 4xx or 5xx status with a known text, an error and a message. */
static void
test_error_table(void)
{
	int s;
	int bad = 0;

	for (s = GW_ENOTFOUND; s < GW_ERR_MAX; s++) {
		const struct gw_err_info *i = err_info((enum gw_err)s);

		if (i->status < 400 || !i->error || !i->message ||
		    !strcmp(response_status_text(i->status), "Unknown"))
			bad++;
	}
	is_int(bad, 0, "every error maps to a 4xx/5xx with a known text");
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	run_case(test_json);
	run_case(test_no_content);
	run_case(test_spliced);
	run_case(test_headers);
	run_case(test_header_room);
	run_case(test_not_found);
	run_case(test_parse_error);
	run_case(test_bad_utf8);
	run_case(test_status_text);
	run_case(test_error_table);
	return done_testing();
}
