/* sink — where response bytes go: a FastCGI stream, stdout, or memory (tests). */
#ifndef GW_SINK_H
#define GW_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define SINK_WATCH_MS	200	/* sink_gone looks at the connection at most this often */

struct sink {
	int (*write)(void *ctx, const void *p, size_t n);	/* 0 or -1 */
	int (*flush)(void *ctx);				/* 0 or -1 */
	void *ctx;
	int failed;	/* sticky: once a write failed (or the client left), later ones are dropped */
	/* The connection the bytes go out on, for sink_gone: -1 = not watched. watch_events
	 * is POLLRDHUP where the peer closing its side means the client left (a FastCGI
	 * socket), 0 where only a hang-up or an error does (CGI's stdout). */
	int watch_fd;
	short watch_events;
	int64_t watch_next_us;	/* when sink_gone may look again; 0 = not yet started */
};

int sink_write(struct sink *s, const void *p, size_t n);
int sink_puts(struct sink *s, const char *str);
int sink_flush(struct sink *s);
/* 1 when the client went away: a write failed, or the watched connection reports a
 * hang-up (one poll(2) without waiting, at most every SINK_WATCH_MS of now_us, the
 * first a period after the first call: a request answered within it costs none).
 * Sticky, as a failed write. 0 otherwise, and for a sink that is not watched. */
int sink_gone(struct sink *s, int64_t now_us);

/* A sink into a capped buffer (tests, benchmarks). */
void sink_mem_init(struct sink *s, struct buf *b);
/* A sink onto a file descriptor (CGI stdout). */
void sink_fd_init(struct sink *s, int *fd);

#endif
