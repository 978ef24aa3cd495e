/* Unit tests: the upstream client against a scripted loopback stub (a thread of this
 * process), and the auth-header-file of its configuration. The real upstream (the SDK
 * fixture) and the slow faults are in tests/fed/upstream.sh. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "catalog_store.h"
#include "clock.h"
#include "config.h"
#include "curlload.h"
#include "log.h"
#include "fixture.h"
#include "tap.h"
#include "upstream.h"

/* ---- the stub: one connection at a time, keep-alive, answers chosen by `mode` ---- */

#define MAX_REQS 64

static struct {
	pthread_mutex_t lock;
	int lfd;
	int port;
	volatile int stop;
	const char *mode;
	int generation;		/* bumped to forget every session (a restart) */
	int connections;
	int initializes;
	int deletes;		/* mode "callers": the DELETEs, and the session each ended */
	char deleted[4][32];
	const char *tool;	/* mode "tools": the one tool tools/list answers */
	int nreq;
	char *headers[MAX_REQS];	/* lower-cased header block of each request */
	char *bodies[MAX_REQS];
} stub = { PTHREAD_MUTEX_INITIALIZER, -1, 0, 0, "json", 1, 0, 0, 0, { "" }, "", 0, { 0 }, { 0 } };

static int
send_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = send(fd, p, n, MSG_NOSIGNAL)) <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int
send_str(int fd, const char *s)
{
	return send_all(fd, s, strlen(s));
}

/* Waits until the client closes the connection (or the stub stops). */
static void
wait_close(int fd)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	char b[4096];

	while (!stub.stop) {
		if (poll(&pfd, 1, 50) > 0 && recv(fd, b, sizeof(b), 0) <= 0)
			return;
	}
}

static void
answer_json(int fd, int status, const char *extra_headers, const char *body)
{
	char head[512];

	snprintf(head, sizeof(head), "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n%sContent-Length: %zu\r\n\r\n",
	    status, extra_headers, strlen(body));
	send_str(fd, head);
	send_str(fd, body);
}

static void
answer_sse(int fd, const char *events, int end)
{
	char head[256];

	if (end) {
		snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %zu\r\n\r\n",
		    strlen(events));
		send_str(fd, head);
		send_str(fd, events);
		return;
	}
	send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
	snprintf(head, sizeof(head), "%zx\r\n", strlen(events));
	send_str(fd, head);
	send_str(fd, events);
	send_str(fd, "\r\n");
	wait_close(fd);	/* the stream stays open */
}

/* Mode "callers" (and "callers-none", an upstream that keeps no sessions): a new
 * session "c-N" for each initialize; a request answers which session carried it. */
static void
answer_callers(int fd, const char *headers, const char *method, const char *idtxt)
{
	const char *h = strstr(headers, "mcp-session-id: ");
	char sid[32] = "", out[512], extra[64];

	if (h)
		snprintf(sid, sizeof(sid), "%.*s", (int)strcspn(h + 16, "\r"), h + 16);
	if (strncmp(headers, "delete ", 7) == 0) {
		if (stub.deletes < 4)
			snprintf(stub.deleted[stub.deletes], sizeof(stub.deleted[0]), "%s", sid);
		stub.deletes++;
		send_str(fd, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
	} else if (method && strcmp(method, "initialize") == 0) {
		snprintf(extra, sizeof(extra), "Mcp-Session-Id: c-%d\r\n", ++stub.initializes);
		snprintf(out, sizeof(out), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocolVersion\":\"2025-06-18\","
		    "\"capabilities\":{},\"serverInfo\":{\"name\":\"stub\",\"version\":\"1\"}}}", idtxt);
		answer_json(fd, 200, strcmp(stub.mode, "callers-none") == 0 ? "" : extra, out);
	} else if (idtxt == NULL) {
		send_str(fd, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
	} else {
		snprintf(out, sizeof(out), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"session\":\"%s\"}}", idtxt, sid);
		answer_json(fd, 200, "", out);
	}
}

/* Modes "modern" (an upstream of 2026-07-28 alone: initialize refused) and "dual" (that
 * keeps sessions for older clients too): server/discover; a request answers with the
 * _meta and the Mcp-* headers it came with; tools/call of "needs" is refused with HTTP
 * 400 and -32021, of "lines" answered as two JSON values in one body. */
static void
answer_modern(int fd, const char *headers, json_t *req, const char *method, const char *idtxt)
{
	const char *name = json_string_value(json_object_get(json_object_get(req, "params"), "name"));
	const char *mn = strstr(headers, "mcp-name: ");
	char out[2048], *meta;

	if (method && strcmp(method, "initialize") == 0 && strcmp(stub.mode, "dual") == 0) {
		stub.initializes++;
		snprintf(out, sizeof(out), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocolVersion\":\"2025-11-25\","
		    "\"capabilities\":{\"logging\":{}},\"serverInfo\":{\"name\":\"stub\",\"version\":\"1\"}}}", idtxt);
		answer_json(fd, 200, "Mcp-Session-Id: old-1\r\n", out);
	} else if (strncmp(headers, "delete ", 7) == 0 || (method && idtxt == NULL)) {
		if (strncmp(headers, "delete ", 7) == 0)
			stub.deletes++;
		send_str(fd, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
	} else if (method && strcmp(method, "initialize") == 0) {
		answer_json(fd, 400, "", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32022,\"message\":\"no\"}}");
	} else if (method && strcmp(method, "server/discover") == 0) {
		snprintf(out, sizeof(out), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"supportedVersions\":[\"2026-07-28\"],"
		    "\"capabilities\":{\"tools\":{}},\"resultType\":\"complete\"}}", idtxt);
		answer_json(fd, 200, "", out);
	} else if (name && strcmp(name, "needs") == 0) {
		snprintf(out, sizeof(out), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32021,\"message\":\"m\","
		    "\"data\":{\"requiredCapabilities\":{\"sampling\":{}}}}}", idtxt);
		answer_json(fd, 400, "", out);
	} else if (name && strcmp(name, "lines") == 0) {
		snprintf(out, sizeof(out), "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n"
		    "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"n\":2}}\n", idtxt);
		answer_json(fd, 200, "", out);
	} else {
		meta = json_dumps(json_object_get(json_object_get(req, "params"), "_meta"), JSON_COMPACT | JSON_ENCODE_ANY);
		snprintf(out, sizeof(out), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"meta\":%s,\"name\":\"%.*s\"}}",
		    idtxt ? idtxt : "null", meta ? meta : "null", mn ? (int)strcspn(mn + 10, "\r") : 0, mn ? mn + 10 : "");
		free(meta);
		answer_json(fd, 200, "", out);
	}
}

/* Answers one request; returns 0 to keep the connection, -1 to close it. */
static int
answer(int fd, const char *headers, const char *body)
{
	json_t *req = json_loads(body, 0, NULL);
	const char *method = json_string_value(json_object_get(req, "method"));
	json_t *id = json_object_get(req, "id");
	char sid[64], want[96], out[1024], *idtxt = id ? json_dumps(id, JSON_ENCODE_ANY) : NULL;
	const char *mode = stub.mode;
	int rc = 0;

	if (strcmp(mode, "modern") == 0 || strcmp(mode, "dual") == 0) {
		answer_modern(fd, headers, req, method, idtxt);
		free(idtxt);
		json_decref(req);
		return 0;
	}
	if (strncmp(mode, "callers", 7) == 0) {
		answer_callers(fd, headers, method, idtxt);
		free(idtxt);
		json_decref(req);
		return 0;
	}

	pthread_mutex_lock(&stub.lock);
	snprintf(sid, sizeof(sid), "sess-%d", stub.generation);
	pthread_mutex_unlock(&stub.lock);
	snprintf(want, sizeof(want), "mcp-session-id: %s\r\n", sid);
	if (method && strcmp(method, "initialize") == 0) {
		char extra[128];

		stub.initializes++;
		snprintf(extra, sizeof(extra), "Mcp-Session-Id: %s\r\n",
		    strcmp(mode, "badsession") == 0 ? "bad session" : sid);
		snprintf(out, sizeof(out), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocolVersion\":\"%s\","
		    "\"capabilities\":{%s},\"serverInfo\":{\"name\":\"stub\",\"version\":\"1\"}}}", idtxt,
		    strcmp(mode, "badversion") == 0 ? "1999-01-01" : "2025-06-18",
		    strcmp(mode, "tools") == 0 ? "\"tools\":{}" : "");
		answer_json(fd, 200, extra, out);
	} else if (strstr(headers, want) == NULL || strcmp(mode, "404") == 0) {
		answer_json(fd, 404, "", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32001,\"message\":\"Session not found\"}}");
	} else if (method && strcmp(method, "notifications/initialized") == 0) {
		send_str(fd, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
	} else if (id == NULL) {
		send_str(fd, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
	} else if (strcmp(mode, "tools") == 0) {
		snprintf(out, sizeof(out), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[{\"name\":\"%s\","
		    "\"description\":\"d\",\"inputSchema\":{\"type\":\"object\"}}]}}", idtxt, stub.tool);
		answer_json(fd, 200, "", out);
	} else if (strcmp(mode, "json") == 0) {
		snprintf(out, sizeof(out), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"echo\":\"%s\"}}", idtxt, method);
		answer_json(fd, 200, "", out);
	} else if (strcmp(mode, "rpcerror") == 0) {
		snprintf(out, sizeof(out), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32602,\"message\":\"no\"}}", idtxt);
		answer_json(fd, 200, "", out);
	} else if (strcmp(mode, "wrongid") == 0) {
		answer_json(fd, 200, "", "{\"jsonrpc\":\"2.0\",\"id\":\"not-yours\",\"result\":{}}");
	} else if (strcmp(mode, "noresult") == 0) {
		snprintf(out, sizeof(out), "{\"jsonrpc\":\"2.0\",\"id\":%s}", idtxt);
		answer_json(fd, 200, "", out);
	} else if (strcmp(mode, "html") == 0) {
		send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 6\r\n\r\n<html>");
	} else if (strcmp(mode, "500") == 0) {
		answer_json(fd, 500, "", "{}");
	} else if (strcmp(mode, "sse") == 0 || strcmp(mode, "sse-open") == 0 || strcmp(mode, "batch") == 0) {
		if (strcmp(mode, "batch") == 0)
			snprintf(out, sizeof(out), "event: message\ndata: [{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
			    "\"params\":{\"level\":\"info\",\"data\":\"b\"}},{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"n\":2}}]\n\n", idtxt);
		else
			snprintf(out, sizeof(out),
			    "id: 1\nretry: 500\ndata:\n\n"
			    ": a comment\n\n"
			    "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":50}}\n\n"
			    "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\r\ndata: \"result\":{\"n\":1}}\r\n\r\n"
			    "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"late\":true}}\n\n", idtxt);
		answer_sse(fd, out, strcmp(mode, "sse-open") != 0);
		rc = strcmp(mode, "sse-open") == 0 ? -1 : 0;
	} else if (strcmp(mode, "sse-end") == 0) {
		answer_sse(fd, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n", 1);
	} else if (strcmp(mode, "bigline") == 0) {
		static char chunk[65536];
		size_t sent;

		memset(chunk, 'x', sizeof(chunk));
		send_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n: ");
		for (sent = 0; sent < UPSTREAM_MAX_LINE + sizeof(chunk) && send_all(fd, chunk, sizeof(chunk)) == 0;
		    sent += sizeof(chunk))
			;
		rc = -1;
	} else if (strcmp(mode, "hang") == 0) {
		wait_close(fd);
		rc = -1;
	}
	free(idtxt);
	json_decref(req);
	return rc;
}

/* Reads one request: headers (lower-cased) and a Content-Length body. */
static int
read_request(int fd, char **headers, char **body)
{
	static char b[1 << 16];
	size_t n = 0, hlen, blen = 0, i;
	ssize_t r;
	char *end, *cl;

	*headers = *body = NULL;
	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };

		if (n == sizeof(b) - 1 || stub.stop)
			return -1;
		if (poll(&pfd, 1, 50) <= 0)
			continue;	/* an idle keep-alive connection: look at stub.stop again */
		if ((r = recv(fd, b + n, sizeof(b) - 1 - n, 0)) <= 0)
			return -1;
		n += (size_t)r;
		b[n] = '\0';
		if ((end = strstr(b, "\r\n\r\n")) != NULL)
			break;
	}
	hlen = (size_t)(end - b) + 4;
	for (i = 0; i < hlen; i++)
		b[i] = (char)(b[i] >= 'A' && b[i] <= 'Z' ? b[i] + 32 : b[i]);
	if ((cl = strstr(b, "content-length:")) != NULL && cl < end)
		blen = strtoul(cl + 15, NULL, 10);
	if (blen > sizeof(b) - 1 - hlen)
		return -1;
	while (n < hlen + blen) {
		if ((r = recv(fd, b + n, hlen + blen - n, 0)) <= 0)
			return -1;
		n += (size_t)r;
	}
	*headers = strndup(b, hlen);
	*body = strndup(b + hlen, blen);
	return 0;
}

static void *
stub_main(void *arg)
{
	struct pollfd pfd;
	char *h, *b;
	int fd;

	while (!stub.stop) {
		pfd.fd = stub.lfd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 50) <= 0 || (fd = accept(stub.lfd, NULL, NULL)) < 0)
			continue;
		stub.connections++;
		while (!stub.stop && read_request(fd, &h, &b) == 0) {
			char *hh = h, *bb = b;
			int keep;

			pthread_mutex_lock(&stub.lock);
			if (stub.nreq < MAX_REQS) {	/* kept before it is answered; past MAX_REQS, answered only */
				stub.headers[stub.nreq] = h;
				stub.bodies[stub.nreq] = b;
				stub.nreq++;
				h = b = NULL;
			}
			pthread_mutex_unlock(&stub.lock);
			keep = answer(fd, hh, bb) == 0;
			free(h);
			free(b);
			if (!keep)
				break;
		}
		close(fd);
	}
	return NULL;
}

static void
stub_reset(const char *mode)
{
	int i;

	pthread_mutex_lock(&stub.lock);
	for (i = 0; i < stub.nreq; i++) {
		free(stub.headers[i]);
		free(stub.bodies[i]);
	}
	stub.nreq = 0;
	stub.mode = mode;
	stub.initializes = 0;
	stub.deletes = 0;
	stub.connections = 0;
	pthread_mutex_unlock(&stub.lock);
}

/* ---- helpers ---- */

static const char *dir;	/* fixture_dir() */
#define write_file(name, text)	fixture_file((name), (text))

#define BASE "[gateway]\nresource = https://gw.example.com/mcp\nname = gw-test\nversion = 9.9\n" \
	"[auth]\nissuer = https://idp.example.com\n"

static struct config *
load(const char *text, struct cfg_errors *errs)
{
	struct config *cfg;

	if (config_load(write_file("main.conf", text), &cfg, errs) < 0) {
		config_unref(cfg);
		return NULL;
	}
	return cfg;
}

static int nmsgs;
static char last_msg[256];

static int
collect(void *ctx, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);

	nmsgs++;
	snprintf(last_msg, sizeof(last_msg), "%s", s ? s : "");
	free(s);
	return ctx ? -1 : 0;
}

/* c: a call of method to cfg's first upstream, made now (the rest zero). */
static void
call_init(struct upstream_call *c, const struct config *cfg, const char *method)
{
	memset(c, 0, sizeof(*c));
	c->cfg = cfg;
	c->up = &cfg->upstreams[0];
	c->method = method;
	c->now_ms = clock_mono_us() / 1000;
}

static int
call(struct upstream_pool *pool, const struct config *cfg, const char *method, json_t **resp,
    struct gw_error *err)
{
	struct upstream_call c;

	call_init(&c, cfg, method);
	c.on_msg = collect;
	nmsgs = 0;
	last_msg[0] = '\0';
	err->code = GW_OK;
	err->detail[0] = '\0';
	return upstream_request(pool, &c, resp, err);
}

/* The stub answering as mode, a method call through pool: what the call failed with
 * (err, its detail returned), or "" when it did not fail. */
static const char *
failure(struct upstream_pool *pool, const struct config *cfg, const char *mode, const char *method,
    struct gw_error *err)
{
	json_t *resp = NULL;

	stub_reset(mode);
	if (call(pool, cfg, method, &resp, err) == 0) {
		json_decref(resp);
		return "";
	}
	return err->detail;
}

/* A call for who (NULL: the gateway itself): the session that carried it, in sid. */
static int
call_as(struct upstream_pool *pool, const struct config *cfg, const char *who, char sid[32])
{
	struct upstream_call c;
	struct gw_error err;
	json_t *resp = NULL;
	int rc;

	call_init(&c, cfg, "tools/call");
	c.who = who;
	rc = upstream_request(pool, &c, &resp, &err);
	snprintf(sid, 32, "%.31s", rc == 0 ? json_string_value(json_object_get(json_object_get(resp, "result"), "session")) :
	    err.detail);
	json_decref(resp);
	return rc;
}

/* Callers without a session of their own each get one of the pool's, never another's;
 * the least recently used gives way past UPSTREAM_CALLER_SESSIONS; an upstream that
 * keeps no sessions needs none of them. */
static void
test_callers(const struct config *cfg)
{
	struct upstream_pool *pool = upstream_pool_new();
	char a[32], b[32], a2[32], g[32], w[32], who[UPSTREAM_WHO_MAX + 1];
	int i, rc;

	stub_reset("callers");
	rc = call_as(pool, cfg, "caller-a", a);
	rc |= call_as(pool, cfg, "caller-b", b);
	rc |= call_as(pool, cfg, "caller-a", a2);
	rc |= call_as(pool, cfg, NULL, g);
	ok(rc == 0 && strcmp(a, b) != 0 && strcmp(a, g) != 0 && strcmp(b, g) != 0,
	    "two callers and the gateway: three upstream sessions (%s, %s, %s)", a, b, g);
	ok(strcmp(a, a2) == 0, "a caller's second call: its own session again (%s)", a2);
	is_int(stub.initializes, 3, "… three initializes in all");
	for (i = 0; i < UPSTREAM_CALLER_SESSIONS; i++) {
		snprintf(who, sizeof(who), "caller-w%d", i);
		rc |= call_as(pool, cfg, who, w);
	}
	ok(rc == 0 && stub.deletes == 2 && strcmp(stub.deleted[0], b) == 0 && strcmp(stub.deleted[1], a) == 0,
	    "%d more callers: the two least recently used sessions ended with a DELETE (%d: %s, %s)",
	    UPSTREAM_CALLER_SESSIONS, stub.deletes, stub.deleted[0], stub.deleted[1]);
	rc = call_as(pool, cfg, "caller-a", a2);
	ok(rc == 0 && strcmp(a2, a) != 0 && strcmp(a2, g) != 0, "the caller whose session ended gets a new one (%s)", a2);
	rc = call_as(pool, cfg, NULL, w);
	ok(rc == 0 && strcmp(w, g) == 0, "the gateway's own session was never given up (%s)", w);
	memset(who, 'x', UPSTREAM_WHO_MAX);
	who[UPSTREAM_WHO_MAX] = '\0';
	ok(call_as(pool, cfg, who, w) < 0, "a caller too long to be told apart: refused (%s)", w);
	upstream_pool_end(pool, cfg);
	/* (3: the two above, and the one that made room for the new one) */
	is_int(stub.deletes, 3 + 1 + UPSTREAM_CALLER_SESSIONS, "upstream_pool_end: every session it held ended");
	upstream_pool_free(pool);

	pool = upstream_pool_new();
	stub_reset("callers-none");
	rc = call_as(pool, cfg, "caller-a", a);
	for (i = 0; i < 10; i++) {
		snprintf(who, sizeof(who), "caller-w%d", i);
		rc |= call_as(pool, cfg, who, w);
	}
	ok(rc == 0 && stub.initializes <= 2, "an upstream that keeps no sessions: no session per caller (%d initializes)",
	    stub.initializes);
	upstream_pool_free(pool);
}

/* What a thread that takes over another's pool does (front_crew.c keeps a stopped extra
 * thread's worker for the next, spare.h): calls for one caller, on a thread of its own. */
struct handover {
	struct upstream_pool *pool;
	const struct config *cfg;
	const char *who;
	char sid[32];
	int rc;
};

static void *
handover_main(void *arg)
{
	struct handover *h = arg;

	h->rc = call_as(h->pool, h->cfg, h->who, h->sid);
	return NULL;
}

/* A pool handed from one thread to another keeps its sessions: the caller's own and the
 * gateway's go on without an initialize; another caller still gets one of its own. */
static void
test_handover(const struct config *cfg)
{
	struct upstream_pool *pool = upstream_pool_new();
	struct handover h[3] = { { pool, cfg, "caller-a", "", -1 }, { pool, cfg, NULL, "", -1 },
		{ pool, cfg, "caller-b", "", -1 } };
	char a[32], g[32];
	pthread_t t;
	int i, rc, made = 0;

	stub_reset("callers");
	rc = call_as(pool, cfg, "caller-a", a);
	rc |= call_as(pool, cfg, NULL, g);
	ok(rc == 0 && stub.initializes == 2, "the first thread: a caller's session and the gateway's (%s, %s)", a, g);
	for (i = 0; i < 3; i++)	/* one after the other, each on a new thread */
		if (pthread_create(&t, NULL, handover_main, &h[i]) == 0 && pthread_join(t, NULL) == 0)
			made++;
	is_int(made, 3, "three more threads took the pool in turn");
	ok(h[0].rc == 0 && strcmp(h[0].sid, a) == 0, "the caller's call on the next thread: its own session (%s)", h[0].sid);
	ok(h[1].rc == 0 && strcmp(h[1].sid, g) == 0, "the gateway's: its own (%s)", h[1].sid);
	ok(h[2].rc == 0 && strcmp(h[2].sid, a) != 0 && strcmp(h[2].sid, g) != 0,
	    "another caller: a session of its own, never the first one's (%s)", h[2].sid);
	is_int(stub.initializes, 3, "one initialize more in all: the new caller's");
	is_int(upstream_pool_connects(pool), 1, "one connection, kept across the threads");
	upstream_pool_end(pool, cfg);
	is_int(stub.deletes, 3, "its end: the three sessions ended once");
	upstream_pool_free(pool);
}

static const char *
req_header(int i)
{
	return i < stub.nreq ? stub.headers[i] : "";
}

/* An upstream of 2026-07-28: found by server/discover, called statelessly (_meta, the
 * Mcp-* headers, no session, no initialize), its errors with HTTP 400 read as answers,
 * a body of several JSON values read as a stream's events; one that keeps sessions for
 * older clients too opens them; one that speaks only older revisions is found so too. */
static void
test_modern(const struct config *cfg)
{
	struct upstream_pool *pool = upstream_pool_new();
	struct upstream_call c;
	struct gw_error err;
	json_t *caps, *resp = NULL, *params, *r;
	char version[16] = "", *sid = NULL;

	stub_reset("modern");
	call_init(&c, cfg, "tools/list");
	caps = upstream_capabilities(pool, &c, version, &err);
	ok(caps && json_object_get(caps, "tools") && strcmp(version, "2026-07-28") == 0 && stub.nreq == 1 &&
	    strstr(stub.bodies[0], "\"server/discover\"") && strstr(req_header(0), "mcp-method: server/discover\r\n") &&
	    strstr(req_header(0), "mcp-protocol-version: 2026-07-28\r\n"),
	    "discovered: 2026-07-28, its capabilities, one request (%s, %d)", version, stub.nreq);
	json_decref(caps);

	params = json_pack("{s:s, s:{s:s, s:i}}", "name", "t\xc3\xa9", "_meta",
	    "io.modelcontextprotocol/protocolVersion", "1999-01-01", "progressToken", 5);
	call_init(&c, cfg, "tools/call");
	c.params = params;
	c.mcp_name = "t\xc3\xa9";
	c.revision = "2026-07-28";
	c.client_caps = json_pack("{s:{}}", "elicitation");
	c.who = "caller-a";
	ok(upstream_request(pool, &c, &resp, &err) == 0, "a call (%s)", err.detail);
	r = json_object_get(resp, "result");
	ok(json_is_object(json_object_get(json_object_get(json_object_get(r, "meta"),
	    "io.modelcontextprotocol/clientCapabilities"), "elicitation")) &&
	    json_integer_value(json_object_get(json_object_get(r, "meta"), "progressToken")) == 5 &&
	    strcmp(json_string_value(json_object_get(json_object_get(r, "meta"), "io.modelcontextprotocol/protocolVersion")),
	    "2026-07-28") == 0 && json_object_get(json_object_get(r, "meta"), "io.modelcontextprotocol/clientInfo"),
	    "… its _meta: the revision, the caller's capabilities, the gateway's clientInfo, the caller's own kept");
	is_str(json_string_value(json_object_get(r, "name")), "=?base64?dmop?=",
	    "… Mcp-Name, base64 for a name not ASCII (dMOp, lower-cased by the stub)");
	ok(strstr(req_header(stub.nreq - 1), "mcp-method: tools/call\r\n") &&
	    strstr(req_header(stub.nreq - 1), "mcp-session-id") == NULL && stub.initializes == 0,
	    "… Mcp-Method, no session, no initialize, even for a caller");
	json_decref(resp);
	json_decref(c.client_caps);
	json_decref(params);

	c.client_caps = NULL;
	c.method = "notifications/cancelled";
	c.params = NULL;
	r = json_integer(stub.nreq);
	ok(upstream_notify(pool, &c, &err) == 0 && stub.nreq == json_integer_value(r), "a notification: nothing to send");
	json_decref(r);

	params = json_pack("{s:s}", "name", "needs");
	c.method = "tools/call";
	c.params = params;
	ok(upstream_request(pool, &c, &resp, &err) == 0 &&
	    json_integer_value(json_object_get(json_object_get(resp, "error"), "code")) == -32021 &&
	    json_object_get(json_object_get(json_object_get(resp, "error"), "data"), "requiredCapabilities"),
	    "an error with HTTP 400: the answer, its data kept (%s)", err.detail);
	json_decref(resp);
	json_decref(params);
	params = json_pack("{s:s}", "name", "lines");
	c.params = params;
	c.on_msg = collect;
	nmsgs = 0;
	ok(upstream_request(pool, &c, &resp, &err) == 0 &&
	    json_integer_value(json_object_get(json_object_get(resp, "result"), "n")) == 2 && nmsgs == 1,
	    "a JSON body of two messages: the notification relayed, then the answer (%s)", err.detail);
	json_decref(resp);
	json_decref(params);

	c.method = NULL;
	ok(upstream_open(pool, &c, NULL, &sid, version, &err) == 0 && sid == NULL && strcmp(version, "2026-07-28") == 0,
	    "a caller's session at an upstream that refuses initialize: none, its calls stateless");
	free(sid);
	ok(upstream_legacy_capabilities(pool, &c) == NULL, "… and no capabilities for older clients");
	upstream_pool_free(pool);

	pool = upstream_pool_new();
	stub_reset("dual");
	c.revision = "2026-07-28";
	ok(upstream_open(pool, &c, NULL, &sid, version, &err) == 0 && sid && strcmp(sid, "old-1") == 0 &&
	    strcmp(version, "2025-11-25") == 0, "one that keeps older clients' sessions: the caller's opened (%s)",
	    sid ? sid : err.detail);
	free(sid);
	caps = upstream_legacy_capabilities(pool, &c);
	ok(json_object_get(caps, "logging") && stub.deletes == 1, "… its capabilities for them, the session ended");
	json_decref(caps);
	upstream_pool_free(pool);

	pool = upstream_pool_new();
	stub_reset("json");
	call_init(&c, cfg, "tools/list");
	caps = upstream_capabilities(pool, &c, version, &err);
	ok(caps && strcmp(version, "2025-06-18") == 0 && stub.initializes == 1,
	    "one of older revisions: its discovery refused, initialize (%s)", version);
	json_decref(caps);
	upstream_pool_free(pool);
}

/* ---- the auth-header-file ---- */

static void
test_auth_header_config(void)
{
	struct cfg_errors errs;
	struct config *cfg;
	char text[1024];
	static const struct {
		const char *content;
		int loads;
		const char *want;	/* the stored header, or the error's tail */
	} cases[] = {
		{ "X-Api-Key: s3cret-value\n", 1, "X-Api-Key: s3cret-value" },
		{ "Authorization:   Bearer s3cret-value \r\n", 1, "Authorization: Bearer s3cret-value" },
		{ "Authorization: Bearer s3cret-value", 1, "Authorization: Bearer s3cret-value" },
		{ "s3cret-value\n", 0, "expected one line 'Name: value'" },
		{ "X-Key:\n", 0, "expected one line 'Name: value'" },
		{ "Bad Name: s3cret-value\n", 0, "expected one line 'Name: value'" },
		{ "X-Key: s3cret-value\nX-Other: 1\n", 0, "expected one line 'Name: value'" },
		{ "X-Key: s3cret\001value\n", 0, "expected one line 'Name: value'" },
		{ "content-type: s3cret-value\n", 0, "names content-type, which the gateway sets itself" },
		{ "Mcp-Session-Id: s3cret-value\n", 0, "names mcp-session-id, which the gateway sets itself" },
		{ "", 0, "expected one line 'Name: value'" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *hf = write_file("up.header", cases[i].content);
		char want[600];

		snprintf(text, sizeof(text), BASE "[upstream \"u\"]\nurl = http://127.0.0.1:1/mcp\nauth-header-file = %s\n", hf);
		cfg = load(text, &errs);
		if (cases[i].loads) {
			is_str(cfg ? cfg->upstreams[0].auth_header : errs.err[0].detail, cases[i].want,
			    "auth-header-file %zu: stored as one header line", i);
		} else {
			snprintf(want, sizeof(want), "%s/main.conf:9: auth-header-file: %s: %s", dir, hf, cases[i].want);
			is_str(cfg ? "(loaded)" : errs.err[0].detail, want, "auth-header-file %zu: refused with file:line", i);
			ok(cfg == NULL && strstr(errs.err[0].detail, "s3cret") == NULL, "auth-header-file %zu: the content is not quoted", i);
		}
		config_unref(cfg);
	}
	snprintf(text, sizeof(text), BASE "[upstream \"u\"]\nurl = http://127.0.0.1:1/mcp\nauth-header-file = %s/none\n", dir);
	cfg = load(text, &errs);
	ok(cfg == NULL && strstr(errs.err[0].detail, "main.conf:9: auth-header-file: ") && strstr(errs.err[0].detail, "No such file"),
	    "auth-header-file missing: %s", cfg ? "(loaded)" : errs.err[0].detail);
	config_unref(cfg);
}

/* ---- the client ---- */

/* The catalog over the stub: a refresh that finds the same tools keeps the generation
 * and every worker's parsed view (and so its cached list pages); a change bumps both. */
static void
test_catalog_refresh(struct upstream_pool *pool, const struct config *cfg)
{
	size_t size = catalog_region_def.size;
	void *region = calloc(1, size);
	struct catalog_view v = { 0 }, w = { 0 };
	json_t *doc, *again;
	uint64_t gen, vserial, wserial;
	int64_t now = clock_mono_us() / 1000, ttl = cfg->catalog_ttl * 1000 + 1;
	int nreq;

	state_region_make(&catalog_region_def, region, size, 0);
	stub_reset("tools");
	stub.tool = "alpha";
	doc = catalog_get(region, &v, &(struct catalog_fetcher){ pool, NULL, NULL, NULL, NULL }, cfg, now);
	is_str(catalog_key(doc, CATALOG_TOOLS, 0),
	    "alpha", "catalog: the stub's tool");
	gen = v.generation;
	vserial = v.serial;
	nreq = stub.nreq;
	json_decref(catalog_get(region, &w, &(struct catalog_fetcher){ pool, NULL, NULL, NULL, NULL }, cfg, now));
	ok(w.generation == gen && stub.nreq == nreq, "catalog: another worker parses the stored one, fetches nothing");
	wserial = w.serial;

	now += ttl;	/* stale: v fetches again, and finds the same tools */
	again = catalog_get(region, &v, &(struct catalog_fetcher){ pool, NULL, NULL, NULL, NULL }, cfg, now);
	ok(stub.nreq > nreq, "catalog: fetched again after catalog-ttl");
	ok(again == doc && v.serial == vserial && v.generation == gen,
	    "catalog: the same tools again: the same generation, the view (and its list pages) kept");
	json_decref(catalog_get(region, &w, &(struct catalog_fetcher){ pool, NULL, NULL, NULL, NULL }, cfg, now));
	ok(w.serial == wserial, "catalog: the other worker parses nothing again");

	json_decref(again);
	json_decref(doc);
	stub.tool = "beta";	/* a change */
	now += ttl;
	doc = catalog_get(region, &v, &(struct catalog_fetcher){ pool, NULL, NULL, NULL, NULL }, cfg, now);
	is_str(catalog_key(doc, CATALOG_TOOLS, 0),
	    "beta", "catalog: a changed tool is seen after catalog-ttl");
	ok(v.generation == gen + 1 && v.serial != vserial, "catalog: a change: a new generation and view");
	json_decref(catalog_get(region, &w, &(struct catalog_fetcher){ pool, NULL, NULL, NULL, NULL }, cfg, now));
	ok(w.generation == gen + 1 && w.serial != wserial, "catalog: the other worker takes it");
	json_decref(doc);
	catalog_view_free(&v);
	catalog_view_free(&w);
	free(region);
	stub_reset("json");
}

static void
test_client(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	struct upstream_pool *pool;
	struct cfg_errors errs;
	struct config *cfg;
	struct gw_error err;
	pthread_t th;
	json_t *resp = NULL;
	char text[1024];
	unsigned long connects;
	int64_t t0;
	int rc, dead;

	stub.lfd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(stub.lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(stub.lfd, 8) < 0 ||
	    getsockname(stub.lfd, (struct sockaddr *)&sa, &len) < 0) {
		ok(0, "stub listens");
		return;
	}
	stub.port = ntohs(sa.sin_port);
	pthread_create(&th, NULL, stub_main, NULL);
	snprintf(text, sizeof(text), BASE "[upstream \"stub\"]\nurl = http://127.0.0.1:%d/mcp\n"
	    "auth-header-file = %s\ntimeout-ms = 3000\n", stub.port, write_file("up.header", "X-Upstream-Key: k-1\n"));
	if ((cfg = load(text, &errs)) == NULL) {
		ok(0, "config loads: %s", errs.err[0].detail);
		return;
	}
	pool = upstream_pool_new();

	/* JSON answers: initialize, initialized, the call; then a second call on the same
	 * connection and session. */
	stub_reset("json");
	rc = call(pool, cfg, "tools/list", &resp, &err);
	ok(rc == 0 && json_is_object(json_object_get(resp, "result")), "json: answered (%s)", err.detail);
	is_str(json_string_value(json_object_get(json_object_get(resp, "result"), "echo")), "tools/list", "json: the result as sent");
	ok(json_is_integer(json_object_get(resp, "id")), "json: the id is the gateway's own");
	json_decref(resp);
	is_int(stub.nreq, 3, "json: initialize, notifications/initialized, tools/list");
	ok(strstr(stub.bodies[0], "\"clientInfo\":{\"name\":\"gw-test\",\"version\":\"9.9\"}") &&
	    strstr(stub.bodies[0], "\"protocolVersion\":\"2025-11-25\""), "initialize: the gateway's identity and version");
	ok(strstr(req_header(0), "mcp-protocol-version") == NULL && strstr(req_header(0), "mcp-session-id") == NULL,
	    "initialize: no version or session header");
	ok(strstr(req_header(1), "mcp-session-id: sess-1\r\n") && strstr(req_header(1), "mcp-protocol-version: 2025-06-18\r\n"),
	    "initialized: the session and the negotiated version");
	ok(strstr(req_header(2), "mcp-session-id: sess-1\r\n") && strstr(req_header(2), "mcp-protocol-version: 2025-06-18\r\n") &&
	    strstr(req_header(2), "accept: application/json, text/event-stream\r\n") &&
	    strstr(req_header(2), "content-type: application/json\r\n") &&
	    strstr(req_header(2), "x-upstream-key: k-1\r\n") && strstr(req_header(2), "expect:") == NULL &&
	    strstr(req_header(2), "authorization") == NULL, "request: the headers it must carry, and no other credentials");
	rc = call(pool, cfg, "ping", &resp, &err);
	json_decref(resp);
	ok(rc == 0 && stub.nreq == 4 && stub.initializes == 1, "json: a second call reuses the session");
	is_int(stub.connections, 1, "json: and the connection");
	is_int(upstream_pool_connects(pool), 1, "upstream_pool_connects counts it");
	upstream_pool_free(pool);
	test_callers(cfg);
	test_handover(cfg);
	test_modern(cfg);
	pool = upstream_pool_new();
	test_catalog_refresh(pool, cfg);

	/* An event stream: a priming event, a comment, a notification, our answer over two
	 * data lines with CRLF, a late notification (dropped). */
	stub_reset("sse");
	connects = upstream_pool_connects(pool);
	rc = call(pool, cfg, "tools/call", &resp, &err);
	is_int(rc, 0, "sse: answered (%s)", err.detail);
	is_int(json_integer_value(json_object_get(json_object_get(resp, "result"), "n")), 1, "sse: the answer");
	json_decref(resp);
	is_int(nmsgs, 1, "sse: one message relayed, none after the answer");
	ok(strstr(last_msg, "notifications/progress") != NULL, "sse: the progress notification");
	rc = call(pool, cfg, "tools/call", &resp, &err);
	json_decref(resp);
	ok(rc == 0 && upstream_pool_connects(pool) == connects, "sse: a stream that ends keeps the connection");

	stub_reset("batch");
	rc = call(pool, cfg, "tools/call", &resp, &err);
	ok(rc == 0 && json_integer_value(json_object_get(json_object_get(resp, "result"), "n")) == 2 && nmsgs == 1,
	    "sse: a batch event (a notification and the answer)");
	json_decref(resp);

	/* Our answer on a stream the upstream keeps open: the call ends after the grace
	 * (50 ms), long before timeout-ms (3 s; bounds with room for a loaded machine). */
	stub_reset("sse-open");
	t0 = clock_mono_us();
	rc = call(pool, cfg, "tools/call", &resp, &err);
	json_decref(resp);
	ok(rc == 0 && clock_mono_us() - t0 < 1500 * 1000, "sse left open: answered in %lld ms",
	    (long long)((clock_mono_us() - t0) / 1000));

	/* 404 on the pool's session: one re-initialize, then success. */
	stub_reset("json");
	pthread_mutex_lock(&stub.lock);
	stub.generation++;
	pthread_mutex_unlock(&stub.lock);
	rc = call(pool, cfg, "tools/list", &resp, &err);
	json_decref(resp);
	ok(rc == 0 && stub.initializes == 1 && stub.nreq == 4, "404: re-initialized once and answered (%s)", err.detail);
	ok(strstr(req_header(3), "mcp-session-id: sess-2\r\n") != NULL, "404: the new session is used");

	/* Always 404: re-initialized once, then the 404 is the reason. */
	stub_reset("404");
	rc = call(pool, cfg, "tools/list", &resp, &err);
	ok(rc < 0 && err.code == GW_EUPSTREAM && stub.initializes == 1, "404 again: one re-initialize only");
	is_str(err.detail, "upstream stub: HTTP 404", "404 again: the reason");

	/* An upstream JSON-RPC error is an answer. */
	stub_reset("rpcerror");
	rc = call(pool, cfg, "tools/call", &resp, &err);
	ok(rc == 0 && json_integer_value(json_object_get(json_object_get(resp, "error"), "code")) == -32602,
	    "a JSON-RPC error answer is passed on");
	json_decref(resp);

	/* Faults. */
	is_str(failure(pool, cfg, "wrongid", "tools/call", &err), "upstream stub: an answer that is not a JSON-RPC response to our request",
	    "an answer to another id");
	is_str(failure(pool, cfg, "noresult", "tools/call", &err), "upstream stub: an answer that is not a JSON-RPC response to our request",
	    "an answer without result or error");
	is_str(failure(pool, cfg, "html", "tools/call", &err), "upstream stub: an answer of type text/html", "an answer of another type");
	is_str(failure(pool, cfg, "500", "tools/call", &err), "upstream stub: HTTP 500", "HTTP 500");
	is_int(err.code, GW_EUPSTREAM, "… the upstream's failure (health: down)");
	is_str(failure(pool, cfg, "sse-end", "tools/call", &err), "upstream stub: the event stream ended before the answer",
	    "a stream without the answer");
	is_str(failure(pool, cfg, "bigline", "tools/call", &err), "upstream stub: an event-stream line over its max-result of 4194304 bytes",
	    "an event-stream line over the cap");
	is_int(err.code, GW_ECALL, "… that call's failure, not the upstream's");
	stub_reset("hang");
	t0 = clock_mono_us();
	rc = call(pool, cfg, "tools/call", &resp, &err);
	is_str(rc < 0 ? err.detail : "", "upstream stub: timed out after 3000 ms", "a hanging upstream");
	is_int(err.code, GW_ECALL, "… that call's failure (one answer too slow), not the upstream's");
	ok(clock_mono_us() - t0 >= 2900 * 1000 && clock_mono_us() - t0 < 6000 * 1000, "a hanging upstream: %lld ms",
	    (long long)((clock_mono_us() - t0) / 1000));

	/* The caller's request has a deadline before the upstream's timeout-ms. */
	stub_reset("hang");
	{
		struct upstream_call c;

		call_init(&c, cfg, "tools/call");
		c.until_ms = c.now_ms + 300;
		t0 = clock_mono_us();
		rc = upstream_request(pool, &c, &resp, &err);
		is_str(rc < 0 ? err.detail : "", "upstream stub: timed out: the request ran out of time (request-timeout-ms)",
		    "the request's deadline ends the call");
		ok(clock_mono_us() - t0 >= 250 * 1000 && clock_mono_us() - t0 < 900 * 1000,
		    "the request's deadline, not timeout-ms (1000): %lld ms", (long long)((clock_mono_us() - t0) / 1000));
	}

	/* The caller goes away while the upstream takes its time: the wait ends at the next
	 * look at its connection, and the upstream is told (notifications/cancelled). */
	stub_reset("hang");
	{
		struct upstream_call c;
		struct buf sb;
		struct sink sk;
		int sv[2], i, told = 0;

		buf_init(&sb, 64);
		sink_mem_init(&sk, &sb);
		socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
		sk.watch_fd = sv[0];
		sk.watch_events = POLLRDHUP;
		call_init(&c, cfg, "tools/call");
		c.client = &sk;
		shutdown(sv[1], SHUT_WR);	/* the front closed the connection: the client left */
		t0 = clock_mono_us();
		rc = upstream_request(pool, &c, &resp, &err);
		is_str(rc < 0 ? err.detail : "", "upstream stub: call abandoned: the caller went away", "a caller gone abandons the call");
		ok(clock_mono_us() - t0 < 700 * 1000, "at the first look at its connection (%d ms apart): %lld ms",
		    SINK_WATCH_MS, (long long)((clock_mono_us() - t0) / 1000));
		for (i = 0; i < 100 && !told; i++) {
			pthread_mutex_lock(&stub.lock);
			told = stub.nreq > 0 && strstr(stub.bodies[stub.nreq - 1], "\"method\":\"notifications/cancelled\"") &&
			    strstr(stub.bodies[stub.nreq - 1], "\"requestId\":") && strstr(stub.bodies[0], "\"method\":\"tools/call\"");
			pthread_mutex_unlock(&stub.lock);
			if (!told)
				usleep(20 * 1000);
		}
		ok(told, "the upstream got notifications/cancelled for the call");
		i = stub.nreq;
		rc = upstream_request(pool, &c, &resp, &err);
		is_str(rc < 0 ? err.detail : "", "upstream stub: not sent: the caller went away",
		    "no request is sent for a caller already gone");
		is_int(stub.nreq, i, "nothing reached the upstream");
		close(sv[0]);
		close(sv[1]);
		buf_free(&sb);
	}

	/* on_msg abandons. */
	stub_reset("sse");
	{
		struct upstream_call c;

		call_init(&c, cfg, "tools/call");
		c.on_msg = collect;
		c.ctx = &c;	/* non-NULL: collect returns -1 */
		rc = upstream_request(pool, &c, &resp, &err);
		is_str(rc < 0 ? err.detail : "", "upstream stub: call abandoned", "on_msg -1 abandons the call");

		/* A caller-given session. */
		stub_reset("json");
		c.ctx = NULL;
		c.session_id = "other\r\nX-Injected: 1";
		rc = upstream_request(pool, &c, &resp, &err);
		is_str(rc < 0 ? err.detail : "", "upstream stub: an unusable session id", "a session id with a CRLF is refused");
		c.session_id = "sess-elsewhere";
		rc = upstream_request(pool, &c, &resp, &err);
		ok(rc < 0 && strstr(req_header(stub.nreq - 1), "mcp-session-id: sess-elsewhere\r\n") && stub.initializes == 0,
		    "a caller-given session is sent as is; its 404 is an error (%s)", err.detail);

		/* Notifications. */
		stub_reset("json");
		c.session_id = NULL;
		c.method = "notifications/cancelled";
		c.params = json_pack("{s:i}", "requestId", 3);
		rc = upstream_notify(pool, &c, &err);
		ok(rc == 0 && stub.nreq == 1 && strstr(stub.bodies[0], "\"id\"") == NULL, "upstream_notify: 202 (%s)", err.detail);
		json_decref(c.params);
	}

	/* Initialize answers the gateway refuses. */
	upstream_pool_free(pool);
	pool = upstream_pool_new();
	is_str(failure(pool, cfg, "badversion", "tools/list", &err), "upstream stub: initialize answered a protocol version the gateway does not speak",
	    "an unknown protocol version");
	is_str(failure(pool, cfg, "badsession", "tools/list", &err), "upstream stub: initialize answered an unusable Mcp-Session-Id",
	    "an unusable session id");

	/* Down: nothing listens. */
	stub.stop = 1;
	pthread_join(th, NULL);
	close(stub.lfd);
	dead = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_port = 0;
	bind(dead, (struct sockaddr *)&sa, sizeof(sa));
	len = sizeof(sa);
	getsockname(dead, (struct sockaddr *)&sa, &len);
	close(dead);	/* a port nobody listens on */
	config_unref(cfg);
	snprintf(text, sizeof(text), BASE "[upstream \"down\"]\nurl = http://127.0.0.1:%d/mcp\n", ntohs(sa.sin_port));
	cfg = load(text, &errs);
	t0 = clock_mono_us();
	rc = call(pool, cfg, "tools/list", &resp, &err);
	ok(rc < 0 && strncmp(err.detail, "upstream down: cannot connect", 29) == 0 && clock_mono_us() - t0 < 1500 * 1000,
	    "down: %s", err.detail);
	upstream_pool_free(pool);
	config_unref(cfg);
	stub_reset("json");
}

/* What libcurl's libraries are told before it is loaded (the calls of test_client load
 * it with that set): GnuTLS not initialised on load, unless the environment says
 * otherwise. */
static void
test_env(void)
{
	const char *v;

	unsetenv("GNUTLS_NO_IMPLICIT_INIT");
	curlload_env();
	v = getenv("GNUTLS_NO_IMPLICIT_INIT");
	is_str(v ? v : "(unset)", "1", "GnuTLS is told not to initialise itself when libcurl loads it");
	setenv("GNUTLS_NO_IMPLICIT_INIT", "0", 1);
	curlload_env();
	v = getenv("GNUTLS_NO_IMPLICIT_INIT");
	is_str(v ? v : "(unset)", "0", "an administrator's own GNUTLS_NO_IMPLICIT_INIT is kept");
	setenv("GNUTLS_NO_IMPLICIT_INIT", "1", 1);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	dir = fixture_dir();
	run_case(test_env);
	log_init(2, GW_LOG_ERR);	/* the warnings of the faults below are expected */
	run_case(test_auth_header_config);
	run_case(test_client);
	return done_testing();
}
