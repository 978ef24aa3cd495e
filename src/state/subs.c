/* subs — sessions' resource subscriptions at stateless upstreams: see subs.h. */
#include "autoconf.h"

#include <pthread.h>
#include <string.h>

#include "secret.h"
#include "subs.h"

#define SUBS_MAGIC	0x53554231u	/* "SUB1" */

struct subs {
	uint32_t magic;
	pthread_mutex_t lock;
	struct {
		unsigned char key[SUBS_KEY_BYTES];
		int64_t until;		/* seconds; at or before now = free */
		char text[SUBS_TEXT_MAX];
	} slot[SUBS_SLOTS];
};

const struct state_region subs_region_def = {
	"subscriptions", sizeof(struct subs), SUBS_MAGIC, offsetof(struct subs, magic), offsetof(struct subs, lock), 0,
	NULL, NULL, NULL, 0,
};

/* key's live slot, or -1. */
static int
find(const struct subs *s, const unsigned char key[SUBS_KEY_BYTES], int64_t now_s)
{
	int i;

	for (i = 0; i < SUBS_SLOTS; i++)
		if (s->slot[i].until > now_s && secret_equal(s->slot[i].key, key, SUBS_KEY_BYTES))
			return i;
	return -1;
}

/* Where uri is a line of text (its start), or NULL. */
static char *
line_of(char *text, const char *uri, size_t n)
{
	char *p, *end;

	for (p = text; *p && (end = strchr(p, '\n')) != NULL; p = end + 1)
		if ((size_t)(end - p) == n && memcmp(p, uri, n) == 0)
			return p;
	return NULL;
}

static int
uri_ok(const char *uri)
{
	const unsigned char *p;

	for (p = (const unsigned char *)uri; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 0;
	return p != (const unsigned char *)uri;
}

int
subs_edit(struct subs *s, const unsigned char key[SUBS_KEY_BYTES], const char *uri, int on, int64_t until_s,
    int64_t now_s)
{
	size_t n = strlen(uri), used;
	char *at;
	int i, rc = 0;

	if (s == NULL || !uri_ok(uri) || until_s <= now_s || state_region_lock(&s->lock, &s->magic, SUBS_MAGIC) < 0)
		return -1;
	if ((i = find(s, key, now_s)) < 0) {
		if (!on)
			goto out;
		for (i = 0; i < SUBS_SLOTS && s->slot[i].until > now_s; i++)
			;
		if (i == SUBS_SLOTS) {
			rc = -2;
			goto out;
		}
		memcpy(s->slot[i].key, key, SUBS_KEY_BYTES);
		s->slot[i].text[0] = '\0';
	}
	s->slot[i].until = until_s;
	s->slot[i].text[SUBS_TEXT_MAX - 1] = '\0';	/* (a file written over is still bounded) */
	at = line_of(s->slot[i].text, uri, n);
	used = strlen(s->slot[i].text);
	if (on && at == NULL) {
		if (used + n + 2 > SUBS_TEXT_MAX)
			rc = -2;
		else {
			memcpy(s->slot[i].text + used, uri, n);
			memcpy(s->slot[i].text + used + n, "\n", 2);
		}
	} else if (!on && at) {
		memmove(at, at + n + 1, used - (size_t)(at - s->slot[i].text) - n);	/* (the NUL with it) */
	}
	if (s->slot[i].text[0] == '\0')
		s->slot[i].until = 0;	/* nothing left: free */
out:
	state_unlock(&s->lock);
	return rc;
}

int
subs_get(struct subs *s, const unsigned char key[SUBS_KEY_BYTES], char *out, size_t outlen, int64_t now_s)
{
	size_t n;
	int i, rc = 0;

	if (s == NULL || outlen == 0 || state_region_lock(&s->lock, &s->magic, SUBS_MAGIC) < 0)
		return -1;
	out[0] = '\0';
	if ((i = find(s, key, now_s)) >= 0) {
		n = strnlen(s->slot[i].text, SUBS_TEXT_MAX - 1);
		if (n < outlen) {
			memcpy(out, s->slot[i].text, n);
			out[n] = '\0';
		} else
			rc = -1;
	}
	state_unlock(&s->lock);
	return rc;
}
