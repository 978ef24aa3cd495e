/* sink — byte sinks with a sticky failure flag. */
#include "autoconf.h"

#include <errno.h>
#include <poll.h>
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

int
sink_gone(struct sink *s, int64_t now_us)
{
	struct pollfd pfd;

	if (s->failed)
		return 1;
	if (s->watch_fd < 0)
		return 0;
	if (s->watch_next_us == 0 || now_us < s->watch_next_us) {
		if (s->watch_next_us == 0)
			s->watch_next_us = now_us + SINK_WATCH_MS * 1000;
		return 0;
	}
	s->watch_next_us = now_us + SINK_WATCH_MS * 1000;
	pfd.fd = s->watch_fd;
	pfd.events = s->watch_events;
	pfd.revents = 0;
	/* POLLIN is not asked for: a FastCGI server's unread records make the socket readable
	 * without the client having gone anywhere. */
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR | POLLNVAL | POLLRDHUP)))
		s->failed = 1;
	return s->failed;
}

static int
mem_write(void *ctx, const void *p, size_t n)
{
	return buf_append(ctx, p, n);
}

void
sink_mem_init(struct sink *s, struct buf *b)
{
	memset(s, 0, sizeof(*s));
	s->write = mem_write;
	s->ctx = b;
	s->watch_fd = -1;
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
	memset(s, 0, sizeof(*s));
	s->write = fd_write;
	s->ctx = fd;
	s->watch_fd = -1;
}
