/* sink — byte sinks with a sticky failure flag. */
#include "autoconf.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "sink.h"

int
sink_write(struct sink *s, const void *p, size_t n)
{
	if (s->failed)
		return -1;
	if (n && s->write(s->ctx, p, n) < 0) {
		s->failed = 1;
		return -1;
	}
	return 0;
}

int
sink_puts(struct sink *s, const char *str)
{
	return sink_write(s, str, strlen(str));
}

int
sink_flush(struct sink *s)
{
	if (s->failed)
		return -1;
	if (s->flush && s->flush(s->ctx) < 0) {
		s->failed = 1;
		return -1;
	}
	return 0;
}

static int
mem_write(void *ctx, const void *p, size_t n)
{
	return buf_append(ctx, p, n);
}

void
sink_mem_init(struct sink *s, struct buf *b)
{
	s->write = mem_write;
	s->flush = NULL;
	s->ctx = b;
	s->failed = 0;
}

static int
fd_write(void *ctx, const void *p, size_t n)
{
	int fd = *(int *)ctx;
	const char *c = p;
	ssize_t w;

	while (n > 0) {
		w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

void
sink_fd_init(struct sink *s, int *fd)
{
	s->write = fd_write;
	s->flush = NULL;
	s->ctx = fd;
	s->failed = 0;
}
