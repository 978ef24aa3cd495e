/* Unit tests: request parameters, bearer syntax, bounded body reads. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "request.h"
#include "secret.h"
#include "params.h"
#include "tap.h"

struct chunks {
	const char *data;
	size_t len, off, step;
};

static long
read_chunks(void *ctx, void *p, size_t n)
{
	struct chunks *c = ctx;
	size_t k = c->len - c->off;

	if (k > n)
		k = n;
	if (k > c->step)
		k = c->step;
	memcpy(p, c->data + c->off, k);
	c->off += k;
	return (long)k;
}

static int
init(struct request *r, const char *const *kv, struct chunks *body)
{
	struct params e = { kv };
	struct source src = { read_chunks, body };

	return request_init(r, params_get, &e, body ? &src : NULL, 1, 1000);
}

static const char *const cgi[] = {
	"REQUEST_METHOD", "POST", "SCRIPT_NAME", "/cgi-bin/mcpgate", "PATH_INFO", "/mcp",
	"QUERY_STRING", "a=1", "HTTP_ORIGIN", "https://app", "CONTENT_LENGTH", "5",
	"HTTP_AUTHORIZATION", "Bearer abc", "HTTP_X_REQUEST_ID", "nginx-0123456789abcdef", NULL
};

/* A CGI request: its parameters copied or parsed, its body read in small chunks. */
static void
test_cgi(void)
{
	struct chunks body = { "hello", 5, 0, 2 };
	struct request r;
	struct buf b;
	struct gw_error why;

	ok(init(&r, cgi, &body) == 0, "CGI request parses");
	is_str(r.path, "/mcp", "PATH_INFO wins when non-empty");
	is_int(r.method, M_POST, "method bit");
	is_str(r.query, "a=1", "query copied");
	is_str(r.origin, "https://app", "Origin copied");
	is_int(r.content_length, 5, "Content-Length parsed");
	is_str(r.id, "nginx-0123456789abcdef", "a tame incoming X-Request-Id is kept");
	ok(request_read_body(&r, 100, &b, &why) == 0 && b.len == 5 && memcmp(b.data, "hello", 5) == 0,
	    "body read in small chunks");
	buf_free(&b);
	request_free(&r);
}

/* Whether reading r's body with the cap fails, and for the reason want (what it read is
 * let go of). */
static int
read_refused(struct request *r, size_t cap, enum gw_err want)
{
	struct buf b = { 0 };	/* a read refused at once leaves it as it is */
	struct gw_error why;
	int rc = request_read_body(r, cap, &b, &why);

	buf_free(&b);
	return rc < 0 && why.code == want;
}

/* A body over the cap fails, announced or not. */
static void
test_body_cap(void)
{
	struct chunks body = { "hello", 5, 0, 2 };
	struct request r;

	ok(init(&r, cgi, &body) == 0, "again");
	ok(read_refused(&r, 4, GW_ETOOLARGE) && body.off == 0, "Content-Length over the cap fails before reading");
	r.content_length = -1;	/* no Content-Length: the cap applies while reading */
	ok(read_refused(&r, 4, GW_ETOOLARGE), "unannounced body over the cap");
	request_free(&r);
}

/* A body shorter than its Content-Length is a bad request. */
static void
test_short_body(void)
{
	struct chunks body = { "hello", 3, 0, 2 };
	struct request r;

	ok(init(&r, cgi, &body) == 0 && read_refused(&r, 100, GW_EBADREQUEST),
	    "a body shorter than its Content-Length is a bad request");
	request_free(&r);
}

/* An nginx-style request: the path from SCRIPT_NAME, a fresh id, absent parameters. */
static void
test_nginx(void)
{
	static const char *const nginx[] = {
		"REQUEST_METHOD", "GET", "SCRIPT_NAME", "/mcp/health", "PATH_INFO", "",
		"HTTP_X_REQUEST_ID", "bad id with spaces", NULL
	};
	struct request r;

	ok(init(&r, nginx, NULL) == 0, "nginx-style request parses");
	is_str(r.path, "/mcp/health", "SCRIPT_NAME when PATH_INFO is empty");
	is_int(strlen(r.id), 16, "an untame X-Request-Id is replaced by a fresh one");
	ok(r.authorization == NULL && r.content_length == -1, "absent parameters stay absent");
	request_free(&r);
}

/* An unknown method and an unreadable Content-Length parse, and the body is refused. */
static void
test_odd(void)
{
	static const char *const odd[] = {
		"REQUEST_METHOD", "PATCH", "SCRIPT_NAME", "/mcp", "CONTENT_LENGTH", "12x", NULL
	};
	struct request r;
	struct buf b;
	struct gw_error why;

	ok(init(&r, odd, NULL) == 0, "odd request parses");
	is_int(r.method, M_OTHER, "unknown method");
	is_int(r.content_length, -2, "unreadable Content-Length marked");
	ok(request_read_body(&r, 100, &b, &why) < 0 && why.code == GW_EBADREQUEST, "and refused");
	request_free(&r);
}

/* The bearer syntax of RFC 6750: the b64token, the scheme, blanks, padding. */
static void
test_bearer(void)
{
	const char *tok;
	size_t len;

	ok(auth_parse_bearer("Bearer abc.DEF-_~+/=", &tok, &len) == 0 && len == 13, "RFC 6750 b64token");
	ok(auth_parse_bearer("bearer abc", &tok, &len) == 0, "scheme is case-insensitive");
	ok(auth_parse_bearer("Bearer  abc", &tok, &len) == 0 && strncmp(tok, "abc", len) == 0, "extra blanks before the token");
	ok(auth_parse_bearer("Basic abc", &tok, &len) < 0, "other schemes refused");
	ok(auth_parse_bearer("Bearer", &tok, &len) < 0, "no token");
	ok(auth_parse_bearer("Bearer ", &tok, &len) < 0, "empty token");
	ok(auth_parse_bearer("Bearer a b", &tok, &len) < 0, "blank inside");
	ok(auth_parse_bearer("Bearer abc, Bearer def", &tok, &len) < 0, "two Authorization headers merged");
	ok(auth_parse_bearer("Bearer a=b", &tok, &len) < 0, "= only as padding");
	ok(auth_parse_bearer("Bearer ====", &tok, &len) < 0, "padding alone is no token");
	ok(auth_parse_bearer("Bearer a==", &tok, &len) == 0 && len == 3, "a token with its padding");
	ok(auth_parse_bearer("Bearer \"abc\"", &tok, &len) < 0, "quotes refused");
	ok(auth_parse_bearer("Bearer ====", &tok, &len) < 0, "padding alone is no b64token");
	ok(auth_parse_bearer("Bearer =", &tok, &len) < 0, "one = is no b64token");
	ok(auth_parse_bearer("Bearer a==", &tok, &len) == 0 && len == 3, "a token with padding");
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	secret_init();
	run_case(test_cgi);
	run_case(test_body_cap);
	run_case(test_short_body);
	run_case(test_nginx);
	run_case(test_odd);
	run_case(test_bearer);
	return done_testing();
}
