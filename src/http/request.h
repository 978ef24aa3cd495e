/* request — one HTTP request, copied out of the front's parameters so that nothing
 * borrowed outlives FCGX_Finish_r. Per-request state only. */
#ifndef GW_REQUEST_H
#define GW_REQUEST_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "buf.h"
#include "err.h"

enum http_method {
	M_GET = 1 << 0,
	M_HEAD = 1 << 1,
	M_POST = 1 << 2,
	M_DELETE = 1 << 3,
	M_OPTIONS = 1 << 4,
	M_OTHER = 1 << 5,	/* PUT, PATCH, anything else */
};

#define REQUEST_ID_MAX	64

/* Where the body comes from: returns bytes read, 0 at the end, -1 on error. */
struct source {
	long (*read)(void *ctx, void *p, size_t n);
	void *ctx;
};

/* Looks up a CGI/FastCGI parameter; NULL when absent. */
typedef const char *(*param_fn)(void *ctx, const char *name);

struct request {
	char id[REQUEST_ID_MAX + 1];
	unsigned method;		/* one M_* bit */
	char *method_name;
	char *path;			/* PATH_INFO when non-empty, else SCRIPT_NAME */
	char *query;
	char *content_type;
	char *accept;
	char *origin;
	char *authorization;		/* wiped on free; never logged */
	char *dpop;			/* the DPoP proof header (RFC 9449); never logged */
	char *if_none_match;
	char *protocol_version;		/* MCP-Protocol-Version */
	char *session_id;		/* Mcp-Session-Id */
	char *last_event_id;
	char *mcp_method;		/* Mcp-Method */
	char *mcp_name;			/* Mcp-Name */
	char *host;
	char *remote_addr;
	char *forwarded_for;
	char *https;
	char *cookie;			/* Cookie (the connect page's binding); wiped on free; never logged */
	char *strings;			/* the one block the strings above are copied into */
	long long content_length;	/* -1 when absent, -2 unreadable */
	long long body_consumed;	/* bytes read from body so far */
	struct source body;
	int64_t start_us;		/* monotonic, for the log */
	time_t now;			/* wall clock at arrival */
};

/* Fills r from the parameters; 0, or -1 when out of memory (nothing to free then). */
int request_init(struct request *r, param_fn get, void *ctx, const struct source *body,
    int64_t start_us, time_t now);
void request_free(struct request *r);
unsigned request_method_bit(const char *name);
/* Reads the whole body into out (capped at max): 0, or -1 with err: GW_ETOOLARGE
 * ("request body exceeds max-body") or GW_EBADREQUEST ("unreadable request body").
 * Content-Length over max fails before anything is read. */
int request_read_body(struct request *r, size_t max, struct buf *out, struct gw_error *err);

/* Reads and discards what is left of an announced body (at most cap bytes), so a
 * CGI program never exits on unread input (the server then fails writing it, e.g.
 * Apache mod_cgid). Returns the bytes discarded, -1 when it gave up. */
long long request_drain_body(struct request *r, size_t cap);

#endif
