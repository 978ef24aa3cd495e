/* mailbox — answers between two requests of a host: see mailbox.h. */
#include "autoconf.h"

#include <pthread.h>
#include <string.h>

#include "mailbox.h"
#include "secret.h"

#define MB_MAGIC	0x4d424f31u	/* "MBO1" */

struct mailbox {
	uint32_t magic;
	pthread_mutex_t lock;
	struct {
		unsigned char key[MAILBOX_KEY_BYTES];
		int64_t until;		/* ms; 0 = free */
		char value[MAILBOX_VALUE_MAX];
	} slot[MAILBOX_SLOTS];
};

const struct state_region mailbox_region_def = {
	"mailbox", sizeof(struct mailbox), MB_MAGIC, offsetof(struct mailbox, magic), offsetof(struct mailbox, lock), 0,
	NULL, NULL, NULL, 0,
};

/* The slot of key at now_ms, or -1. */
static int
find(const struct mailbox *m, const unsigned char key[MAILBOX_KEY_BYTES], int64_t now_ms)
{
	int i;

	for (i = 0; i < MAILBOX_SLOTS; i++)
		if (m->slot[i].until > now_ms && secret_equal(m->slot[i].key, key, MAILBOX_KEY_BYTES))
			return i;
	return -1;
}

int
mailbox_put(struct mailbox *m, const unsigned char key[MAILBOX_KEY_BYTES], const char *value, int64_t until_ms,
    int64_t now_ms)
{
	size_t n = strlen(value);
	int i, rc = -1;

	if (m == NULL || n == 0 || n >= MAILBOX_VALUE_MAX || until_ms <= now_ms ||
	    state_region_lock(&m->lock, &m->magic, MB_MAGIC) < 0)
		return -1;
	if ((i = find(m, key, now_ms)) < 0)
		for (i = 0; i < MAILBOX_SLOTS && m->slot[i].until > now_ms; i++)
			;
	if (i < MAILBOX_SLOTS) {
		memcpy(m->slot[i].key, key, MAILBOX_KEY_BYTES);
		memcpy(m->slot[i].value, value, n + 1);
		m->slot[i].until = until_ms;
		rc = 0;
	}
	state_unlock(&m->lock);
	return rc;
}

int
mailbox_take(struct mailbox *m, const unsigned char key[MAILBOX_KEY_BYTES], char *out, size_t outlen,
    int64_t now_ms)
{
	size_t n;
	int i, rc = 0;

	if (m == NULL || state_region_lock(&m->lock, &m->magic, MB_MAGIC) < 0)
		return -1;
	if ((i = find(m, key, now_ms)) >= 0) {
		n = strnlen(m->slot[i].value, MAILBOX_VALUE_MAX - 1);
		if (n < outlen) {
			memcpy(out, m->slot[i].value, n);
			out[n] = '\0';
			rc = 1;
		}
		m->slot[i].until = 0;
		secret_wipe(m->slot[i].value, sizeof(m->slot[i].value));
	}
	state_unlock(&m->lock);
	return rc;
}
