/* front_fcgi — a FastCGI request's I/O over libfcgi: its params (a repeated header
 * joined, as the other fronts do), its body read whole before it is served, and the
 * answer written (its large parts as FastCGI records of their own). */
#ifndef GW_FRONT_FCGI_H
#define GW_FRONT_FCGI_H

#include <fcgiapp.h>

#include "buf.h"
#include "request.h"
#include "sink.h"

/* Parameter lookup that joins a repeated header with ", " (RFC 9110 §5.3), as
 * lighttpd and Apache do: nginx sends each header line as its own param, and
 * FCGX_GetParam would see only the first (two Authorization headers must fail). The
 * first PARAMS_INDEXED params are indexed once per request by their names' lengths, so
 * that a lookup visits only the params whose names are as long as the one it wants;
 * any past them are scanned. */
#define PARAMS_INDEXED	128
#define LEN_BUCKETS	48	/* a name this long or longer is scanned for */

struct fcgi_params {
	FCGX_Request *fr;
	int n;					/* params indexed; -1 = not yet */
	unsigned char first[LEN_BUCKETS];	/* by name length: 1 + the first's index; 0 none */
	unsigned char next[PARAMS_INDEXED];	/* 1 + the next of the same length; 0 none */
	char joined[8192];
};

/* Before a request's first lookup: fr's params, indexed on first use. */
void fcgi_params_init(struct fcgi_params *fp, FCGX_Request *fr);
/* request_init's lookup (ctx: struct fcgi_params): the value, or the values of a
 * repeated param joined with ", " ("" when too long to join), or NULL. */
const char *fcgi_param(void *ctx, const char *name);

/* The body as the front read it before serving (fcgi_body_read). */
struct body_copy {
	struct buf b;
	size_t off;
	int failed;	/* the connection failed or was cut before the end */
};

/* Reads the body whole, while the watchdog's bound still runs: Content-Length bytes
 * and the end of FastCGI's stdin after them (so that nothing is left to read before the
 * close), or, without a length, up to max + 1 bytes (the handler refuses more). A body
 * announced over max is left unread: the router refuses it. 0, or -1 when the
 * connection failed. bc->b is the caller's to free either way. */
int fcgi_body_read(FCGX_Stream *in, const struct request *req, long max, struct body_copy *bc);
/* What was read, as the request's body. */
void fcgi_body_source(struct body_copy *bc, struct source *src);
/* The answer's sink: fr's stdout. The server closing the connection is the client
 * gone (nginx does when its client leaves); it never half-closes it while it waits
 * for the answer. */
void fcgi_sink_init(struct sink *out, FCGX_Request *fr);

#endif
