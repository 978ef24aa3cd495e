/* spare — the workers of stopped extra threads, kept for the next (spare.h). */
#include "autoconf.h"

#include <string.h>

#include "spare.h"

int
spare_put(struct spares *s, struct worker *w, int64_t now_us, struct worker *old, long *n_old)
{
	long i, k = 0;

	*n_old = 0;
	/* The oldest first: those kept too long are a prefix. */
	while (k < s->n && now_us - s->since_us[k] > SPARE_KEEP_MS * 1000LL)
		k++;
	if (k > 0) {
		memcpy(old, s->w, (size_t)k * sizeof(*old));
		*n_old = k;
		for (i = k; i < s->n; i++) {
			s->w[i - k] = s->w[i];
			s->since_us[i - k] = s->since_us[i];
		}
		s->n -= k;
		memset(&s->w[s->n], 0, (size_t)k * sizeof(s->w[0]));
	}
	if (s->n >= SPARE_MAX)
		return 0;
	s->w[s->n] = *w;
	s->since_us[s->n] = now_us;
	s->n++;
	memset(w, 0, sizeof(*w));
	return 1;
}

int
spare_take(struct spares *s, struct worker *w)
{
	if (s->n <= 0)
		return 0;
	s->n--;
	*w = s->w[s->n];
	memset(&s->w[s->n], 0, sizeof(s->w[0]));
	return 1;
}
