/* buf — a byte buffer with a ceiling: it fails rather than grow past max. */
#ifndef GW_BUF_H
#define GW_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *data;	/* always NUL-terminated when not NULL */
	size_t len;
	size_t cap;
	size_t max;	/* ceiling on len */
};

/* What a buffer function returns says whether the bytes are there: a caller that
 * does not look writes a truncated document without knowing it. */
#define BUF_MUST	__attribute__((warn_unused_result))

void buf_init(struct buf *b, size_t max);
/* Room for extra more bytes (within max), so that appends up to it do not reallocate
 * (the capacity: a power of two above len + extra). 0 or -1. */
int buf_reserve(struct buf *b, size_t extra) BUF_MUST;
int buf_append(struct buf *b, const void *p, size_t n) BUF_MUST;
int buf_puts(struct buf *b, const char *s) BUF_MUST;
int buf_putc(struct buf *b, char c) BUF_MUST;
int buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3))) BUF_MUST;
int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0))) BUF_MUST;
const char *buf_str(const struct buf *b);	/* "" when empty */
void buf_reset(struct buf *b);
void buf_free(struct buf *b);

#endif
