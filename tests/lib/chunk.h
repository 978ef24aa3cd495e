/* chunk.h — a request body from a string, for unit tests that drive an exchange
 * (struct request's body.read): { body, strlen(body) } and chunk_read. */
#ifndef GW_TEST_CHUNK_H
#define GW_TEST_CHUNK_H

#include <string.h>

struct chunk {
	const char *p;
	size_t n;
};

static long __attribute__((unused))
chunk_read(void *ctx, void *p, size_t n)
{
	struct chunk *c = ctx;

	if (n > c->n)
		n = c->n;
	memcpy(p, c->p, n);
	c->p += n;
	c->n -= n;
	return (long)n;
}

#endif
