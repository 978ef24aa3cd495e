/* Unit tests: the route table and the gate, through router_dispatch. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "router.h"
#include "secret.h"
#include "fixture.h"
#include "params.h"
#include "tap.h"

static struct config *cfg;
static struct gateway gw;
static struct worker wk;

/* Dispatches method path with extra header pairs; returns the status. */
static int
run(struct response *resp, const char *method, const char *path, const char *const *extra)
{
	const char *v[40] = { "REQUEST_METHOD", method, "SCRIPT_NAME", path };
	struct params ctx = { v };
	struct request req;
	size_t n = 4;

	while (extra && *extra && n < 36)
		v[n++] = *extra++;
	v[n] = NULL;
	request_init(&req, params_get, &ctx, NULL, 0, 1700000000);
	response_init(resp, req.id);
	router_dispatch(&wk, cfg, &req, resp);
	response_serialize(resp);
	request_free(&req);
	return resp->status;
}

/* The status of method path (run), its response freed: for the checks that look at
 * nothing else. */
static int
status_of(const char *method, const char *path, const char *const *extra)
{
	struct response r;
	int status = run(&r, method, path, extra);

	response_free(&r);
	return status;
}

static const char *
hdr(struct response *r, const char *name)
{
	const char *v = response_get_header(r, name);
	return v ? v : "";
}

static const char *
field(struct response *r, const char *key)
{
	json_t *j = r->json ? json_object_get(r->json, key) : NULL;
	return json_is_string(j) ? json_string_value(j) : "";
}

/* A request from a foreign origin: 403, forbidden_origin, and no CORS grant (three checks). */
static void
foreign_origin(const char *method, const char *path, const char *const *extra)
{
	struct response r;

	is_int(run(&r, method, path, extra), 403, "%s %s with a foreign Origin: 403", method, path);
	is_str(field(&r, "error"), "forbidden_origin", "… forbidden_origin");
	is_str(hdr(&r, "Access-Control-Allow-Origin"), "", "… and no CORS grant");
	response_free(&r);
}

/* Each route answers its status, with its Allow header where listed and an HttpError on errors. */
static void
test_route_table(void)
{
	static const struct {
		const char *method, *path;
		int status;
		const char *allow;
	} table[] = {
		{ "GET", "/mcp/health", 200, NULL },
		{ "HEAD", "/mcp/health", 200, NULL },
		{ "GET", "/.well-known/mcp", 200, NULL },
		{ "GET", "/.well-known/oauth-protected-resource", 200, NULL },
		{ "GET", "/.well-known/oauth-protected-resource/mcp", 200, NULL },
		{ "GET", "/server.json", 200, NULL },
		{ "GET", "/.well-known/oauth-authorization-server", 500, NULL },
		{ "POST", "/mcp", 401, NULL },
		{ "DELETE", "/mcp", 401, NULL },
		{ "GET", "/mcp", 405, "POST, DELETE, OPTIONS" },
		{ "PUT", "/mcp", 405, "POST, DELETE, OPTIONS" },
		{ "POST", "/mcp/health", 405, "GET, HEAD, OPTIONS" },
		{ "DELETE", "/server.json", 405, "GET, HEAD, OPTIONS" },
		{ "OPTIONS", "/mcp", 204, "POST, DELETE, OPTIONS" },
		{ "OPTIONS", "/.well-known/mcp", 204, "GET, HEAD, OPTIONS" },
		{ "GET", "/", 404, NULL },
		{ "GET", "/mcp/", 404, NULL },
		{ "GET", "/MCP/health", 404, NULL },
		{ "GET", "/.well-known/oauth-protected-resource/other", 404, NULL },
		{ "GET", "/server.json/", 404, NULL },
	};
	struct response r;
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		is_int(run(&r, table[i].method, table[i].path, NULL), table[i].status,
		    "%s %s → %d", table[i].method, table[i].path, table[i].status);
		if (table[i].allow)
			is_str(hdr(&r, "Allow"), table[i].allow, "%s %s: Allow", table[i].method, table[i].path);
		if (r.status >= 400)
			ok(r.json && *field(&r, "error") && !strcmp(field(&r, "request_id"), r.request_id),
			    "%s %s: HttpError with the request id", table[i].method, table[i].path);
		response_free(&r);
	}
}

/* HEAD /mcp/health keeps the body's length but sends no body. */
static void
test_head(void)
{
	struct response r;

	run(&r, "HEAD", "/mcp/health", NULL);
	ok(r.headers_only && r.body.len > 0, "HEAD keeps the body length but sends no body");
	response_free(&r);
}

/* GET /mcp/health is not cached and reports ok with the request's time. */
static void
test_health(void)
{
	struct response r;

	run(&r, "GET", "/mcp/health", NULL);
	is_str(hdr(&r, "Cache-Control"), "no-store", "health is not cached");
	is_str(field(&r, "status"), "ok", "health status");
	is_str(field(&r, "timestamp"), "2023-11-14T22:13:20Z", "health timestamp is the request's now");
	response_free(&r);
}

/* Each route's CORS rule: the metrics are for no web page, whatever its origin. */
static void
test_cors_rules(void)
{
	const char *const local[] = { "REMOTE_ADDR", "127.0.0.1", NULL };
	const char *const evil[] = { "REMOTE_ADDR", "127.0.0.1", "HTTP_ORIGIN", "https://evil.example", NULL };
	const char *const own[] = { "REMOTE_ADDR", "127.0.0.1", "HTTP_ORIGIN", "https://gw.example.com", NULL };
	const char *const allowed[] = { "REMOTE_ADDR", "127.0.0.1", "HTTP_ORIGIN", "https://app.example.com", NULL };
	struct response r;

	is_int(run(&r, "GET", "/metrics", local), 200, "/metrics without an Origin: 200");
	is_str(hdr(&r, "Access-Control-Allow-Origin"), "", "… no CORS grant");
	response_free(&r);
	foreign_origin("GET", "/metrics", evil);
	is_int(status_of("GET", "/metrics", own), 403, "… with the resource's own origin too: 403");
	is_int(status_of("GET", "/metrics", allowed), 403, "… and with an allowed origin: 403");
	is_int(status_of("OPTIONS", "/metrics", evil), 403, "… its preflight: 403");
	is_int(run(&r, "OPTIONS", "/metrics", local), 204, "OPTIONS without an Origin: 204");
	is_str(hdr(&r, "Access-Control-Allow-Methods"), "", "… no CORS headers");
	response_free(&r);
	is_int(run(&r, "GET", "/mcp/health", evil), 200, "health, a public document: any origin");
	is_str(hdr(&r, "Access-Control-Allow-Origin"), "*", "… *");
	response_free(&r);
}

/* The public documents carry an ETag and caching headers, and If-None-Match answers 304. */
static void
test_documents(void)
{
	char inm[128];
	struct response r;

	run(&r, "GET", "/server.json", NULL);
	snprintf(inm, sizeof(inm), "W/\"nope\", %s", hdr(&r, "ETag"));
	ok(strlen(hdr(&r, "ETag")) == 34, "documents carry a strong ETag");
	is_str(hdr(&r, "Cache-Control"), "public, max-age=300", "documents are cacheable");
	is_str(hdr(&r, "Access-Control-Allow-Origin"), "*", "public documents allow any origin");
	response_free(&r);
	{
		const char *const cond[] = { "HTTP_IF_NONE_MATCH", inm, NULL };
		const char *const stale[] = { "HTTP_IF_NONE_MATCH", "\"0000\"", NULL };
		const char *const star[] = { "HTTP_IF_NONE_MATCH", "*", NULL };

		is_int(run(&r, "GET", "/server.json", cond), 304, "If-None-Match list with the ETag → 304");
		ok(r.json == NULL && *hdr(&r, "ETag"), "304 has the ETag and no body");
		response_free(&r);
		is_int(run(&r, "GET", "/server.json", stale), 200, "a stale ETag → 200");
		response_free(&r);
		is_int(run(&r, "GET", "/server.json", star), 304, "If-None-Match: * → 304");
		response_free(&r);
		is_int(run(&r, "GET", "/mcp/health", star), 200, "health ignores If-None-Match");
		response_free(&r);
	}
}

/* The gate in front of /mcp: the challenge, the body's length, the Origin and CORS. */
static void
test_gate(void)
{
	static const char *const big[] = { "CONTENT_LENGTH", "2000", NULL };
	static const char *const badlen[] = { "CONTENT_LENGTH", "-5", NULL };
	static const char *const own_origin[] = { "HTTP_ORIGIN", "https://gw.example.com", NULL };
	static const char *const allowed_origin[] = { "HTTP_ORIGIN", "https://app.example.com", NULL };
	static const char *const evil_origin[] = { "HTTP_ORIGIN", "https://evil.example", NULL };
	static const char *const bad_auth[] = { "HTTP_AUTHORIZATION", "Basic dXNlcjpwYXNz", NULL };
	struct response r;

	is_int(run(&r, "POST", "/mcp", NULL), 401, "POST /mcp without a token");
	is_str(hdr(&r, "WWW-Authenticate"),
	    "Bearer resource_metadata=\"https://gw.example.com/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:tools\"",
	    "challenge names the metadata and the scope");
	response_free(&r);
	is_int(run(&r, "POST", "/mcp", bad_auth), 401, "Basic credentials");
	ok(strstr(hdr(&r, "WWW-Authenticate"), "error=\"invalid_token\"") != NULL, "invalid_token when a credential was sent");
	response_free(&r);
	is_int(status_of("POST", "/mcp", big), 413, "Content-Length over max-body → 413 before auth");
	is_int(status_of("POST", "/mcp", badlen), 400, "unreadable Content-Length → 400");
	foreign_origin("POST", "/mcp", evil_origin);
	is_int(status_of("OPTIONS", "/mcp", evil_origin), 403, "foreign Origin preflight → 403");
	is_int(status_of("POST", "/mcp", own_origin), 401, "own Origin passes the gate");
	is_int(run(&r, "OPTIONS", "/mcp", allowed_origin), 204, "allowed Origin preflight");
	is_str(hdr(&r, "Access-Control-Allow-Origin"), "https://app.example.com", "echoes the allowed origin");
	is_str(hdr(&r, "Vary"), "Origin", "varies on Origin");
	ok(strstr(hdr(&r, "Access-Control-Allow-Headers"), "MCP-Protocol-Version") &&
	    strstr(hdr(&r, "Access-Control-Allow-Headers"), "Mcp-Session-Id") &&
	    strstr(hdr(&r, "Access-Control-Allow-Headers"), "Last-Event-ID") &&
	    strstr(hdr(&r, "Access-Control-Allow-Headers"), "Authorization"), "preflight allows the MCP headers");
	ok(strstr(hdr(&r, "Access-Control-Expose-Headers"), "Mcp-Session-Id") &&
	    strstr(hdr(&r, "Access-Control-Expose-Headers"), "WWW-Authenticate"), "exposes session and challenge");
	response_free(&r);
}

/* The protected resource metadata names the canonical URL and the header method only. */
static void
test_prm(void)
{
	struct response r;

	is_int(run(&r, "GET", "/.well-known/oauth-protected-resource", NULL), 200, "PRM");
	is_str(field(&r, "resource"), "https://gw.example.com/mcp", "PRM resource is the canonical URL");
	{
		json_t *want = json_pack("[s]", "header");
		ok(json_equal(json_object_get(r.json, "bearer_methods_supported"), want), "header only");
		json_decref(want);
	}
	response_free(&r);
}

/* A dispatch without a usable configuration answers 500 and does not crash. */
static void
test_no_config(void)
{
	struct response r;

	response_init(&r, "x");
	router_dispatch(&wk, NULL,
	    &(struct request){ .path = "/mcp/health", .method = M_GET, .method_name = "GET" }, &r);
	is_int(r.status, 500, "no usable configuration → 500, never a crash");
	response_free(&r);
}

int
main(int argc, char **argv)
{
	char text[1024];
	struct cfg_errors errs;

	tap_args(argc, argv);
	secret_init();
	snprintf(text, sizeof(text), "[gateway]\nstate = %s/state\n"
	    "resource = https://gw.example.com/mcp\nmax-body = 1000\n"
	    "allowed-origins = https://app.example.com\nname = com.example/gw\n"
	    "[auth]\nissuer = https://idp.example.com\nrequired-scopes = mcp:tools\n[metrics]\n", fixture_dir());
	if (gateway_init(&gw, fixture_file("gw.conf", text), &errs) < 0 || worker_init(&wk, &gw) < 0) {
		printf("Bail out! %s\n", errs.err[0].detail);
		return 1;
	}
	cfg = gw.cfg;

	run_case(test_route_table);
	run_case(test_head);
	run_case(test_health);
	run_case(test_documents);
	run_case(test_cors_rules);
	run_case(test_gate);
	run_case(test_prm);
	run_case(test_no_config);
	worker_free(&wk);
	gateway_free(&gw);
	return done_testing();
}
