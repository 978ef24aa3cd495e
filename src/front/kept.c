/* kept — parked FastCGI connections: one epoll set, a table of slots. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "kept.h"

/* An event's data: 0 for the listening socket, else the slot's index + 1 and its
 * generation, so that an event for a connection closed meanwhile finds nothing. */
#define TAG(i, gen)	(((uint64_t)(gen) << 32) | (uint64_t)((i) + 1))

int
kept_init(struct kept *k, int listen_fd, long cap)
{
	struct epoll_event ev;
	long i;
	int fl;

	memset(k, 0, sizeof(*k));
	k->ep = -1;
	k->listen_fd = listen_fd;
	if ((fl = fcntl(listen_fd, F_GETFL)) < 0 || fcntl(listen_fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -1;
	if (cap < 1 || (k->slot = calloc((size_t)cap, sizeof(*k->slot))) == NULL)
		return -1;
	k->cap = cap;
	for (i = 0; i < cap; i++)
		k->slot[i].fd = -1;
	if ((k->ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		free(k->slot);
		k->slot = NULL;
		return -1;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLEXCLUSIVE;
	ev.data.u64 = 0;
	if (epoll_ctl(k->ep, EPOLL_CTL_ADD, listen_fd, &ev) < 0) {
		close(k->ep);
		k->ep = -1;
		free(k->slot);
		k->slot = NULL;
		return -1;
	}
	pthread_mutex_init(&k->mu, NULL);
	return 0;
}

void
kept_free(struct kept *k)
{
	long i;

	if (k->ep < 0)
		return;
	for (i = 0; i < k->cap; i++)
		if (k->slot[i].fd >= 0)
			close(k->slot[i].fd);
	close(k->ep);
	k->ep = -1;
	free(k->slot);
	k->slot = NULL;
	pthread_mutex_destroy(&k->mu);
}

int
kept_wait(struct kept *k, int timeout_ms)
{
	struct epoll_event ev;
	struct kept_slot *s;
	uint64_t i;
	int fd = -1, n;

	if ((n = epoll_wait(k->ep, &ev, 1, timeout_ms)) == 0)
		return KEPT_IDLE;
	if (n != 1)
		return -1;	/* EINTR: the caller looks at why */
	if (ev.data.u64 == 0)
		return KEPT_LISTEN;
	i = (ev.data.u64 & 0xffffffffu) - 1;
	if (i >= (uint64_t)k->cap)
		return -1;
	s = &k->slot[i];
	pthread_mutex_lock(&k->mu);
	if (s->fd >= 0 && s->gen == (unsigned)(ev.data.u64 >> 32)) {
		fd = s->fd;
		s->fd = -1;
		k->n--;
		(void)epoll_ctl(k->ep, EPOLL_CTL_DEL, fd, NULL);
	}
	pthread_mutex_unlock(&k->mu);
	return fd;
}

void
kept_park(struct kept *k, int fd, int64_t now_us)
{
	struct epoll_event ev;
	struct kept_slot *s = NULL;
	long i;

	pthread_mutex_lock(&k->mu);
	for (i = 0; k->n < k->cap && i < k->cap; i++)
		if (k->slot[i].fd < 0) {
			s = &k->slot[i];
			break;
		}
	if (s) {
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
		ev.data.u64 = TAG(i, s->gen + 1);
		if (epoll_ctl(k->ep, EPOLL_CTL_ADD, fd, &ev) == 0) {
			s->fd = fd;
			s->gen++;
			s->since_us = now_us;
			k->n++;
			fd = -1;
		}
	}
	pthread_mutex_unlock(&k->mu);
	if (fd >= 0)
		close(fd);	/* no room: the server opens another when it needs one */
}

long
kept_expire(struct kept *k, int64_t before_us)
{
	long closed = 0, i;

	pthread_mutex_lock(&k->mu);
	for (i = 0; k->n > 0 && i < k->cap; i++)
		if (k->slot[i].fd >= 0 && k->slot[i].since_us < before_us) {
			(void)epoll_ctl(k->ep, EPOLL_CTL_DEL, k->slot[i].fd, NULL);
			close(k->slot[i].fd);
			k->slot[i].fd = -1;
			k->n--;
			closed++;
		}
	pthread_mutex_unlock(&k->mu);
	return closed;
}
