/* sink — where response bytes go: a FastCGI stream, stdout, or memory (tests). */
#ifndef GW_SINK_H
#define GW_SINK_H

#include <stddef.h>

#include "buf.h"

struct sink {
	int (*write)(void *ctx, const void *p, size_t n);	/* 0 or -1 */
	int (*flush)(void *ctx);				/* 0 or -1 */
	void *ctx;
	int failed;	/* sticky: once a write failed, later ones are dropped */
};

int sink_write(struct sink *s, const void *p, size_t n);
int sink_puts(struct sink *s, const char *str);
int sink_flush(struct sink *s);

/* A sink into a capped buffer (tests, benchmarks). */
void sink_mem_init(struct sink *s, struct buf *b);
/* A sink onto a file descriptor (CGI stdout). */
void sink_fd_init(struct sink *s, int *fd);

#endif
