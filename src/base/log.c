/* log — JSON lines, one write(2) each so lines from threads and processes never interleave. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "str.h"

static int log_fd = 2;
static enum log_level log_threshold = GW_LOG_INFO;

static const char *const level_names[] = {
	[GW_LOG_ERR] = "error",
	[GW_LOG_WARN] = "warn",
	[GW_LOG_INFO] = "info",
	[GW_LOG_DEBUG] = "debug",
};

void
log_init(int fd, enum log_level threshold)
{
	log_fd = fd;
	log_set_level(threshold);
}

void
log_set_level(enum log_level threshold)
{
	__atomic_store_n(&log_threshold, threshold, __ATOMIC_RELAXED);
}

int
log_open(const char *path)
{
	int fd, old;

	if (path == NULL)
		fd = 2;
	else if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640)) < 0)
		return -1;
	old = __atomic_exchange_n(&log_fd, fd, __ATOMIC_ACQ_REL);
	if (old != 2 && old != fd)
		close(old);	/* a line being written there just fails */
	return 0;
}

int
log_enabled(enum log_level level)
{
	return level <= __atomic_load_n(&log_threshold, __ATOMIC_RELAXED);
}

#define LOG_LINE_MAX	(1024 * 1024)	/* a log_line's ceiling: past it, the line is dropped */

/* UTC with microseconds, "YYYY-MM-DDTHH:MM:SS.uuuuuuZ"; the date and time of the second
 * are formatted once per second and thread. */
static void
log_timestamp(char out[40])
{
	static __thread time_t sec = -1;
	static __thread char day[32];
	static __thread size_t day_len;
	struct timeval tv;
	long us;
	int i;

	gettimeofday(&tv, NULL);
	if (tv.tv_sec != sec) {
		clock_utc(tv.tv_sec, day, sizeof(day));
		day_len = strlen(day);
		sec = tv.tv_sec;
	}
	memcpy(out, day, day_len);
	out[day_len] = '.';
	for (i = 6, us = (long)tv.tv_usec; i > 0; i--, us /= 10)
		out[day_len + (size_t)i] = (char)('0' + us % 10);
	memcpy(out + day_len + 7, "Z", 2);
}

/* Writes the n bytes of a line in one write(2) (more only if the kernel takes part). */
static void
write_line(const char *line, size_t n)
{
	size_t off;
	ssize_t w;
	int fd = __atomic_load_n(&log_fd, __ATOMIC_ACQUIRE);

	for (off = 0; off < n; off += (size_t)w) {
		w = write(fd, line + off, n - off);
		if (w < 0 && errno == EINTR) {
			w = 0;
			continue;
		}
		if (w <= 0)
			break;
	}
}

/* One line: {"ts":…,"level":…, then obj's members (serialized once, after those two)
 * and a newline, in one write. */
void
log_json(enum log_level level, json_t *obj)
{
	char small[2048], ts[40], *line = small;
	size_t head, n, cap = sizeof(small);

	if (obj == NULL)
		return;
	if (!log_enabled(level) || !json_is_object(obj)) {
		json_decref(obj);
		return;
	}
	log_timestamp(ts);
	head = (size_t)snprintf(small, sizeof(small), "{\"ts\":\"%s\",\"level\":\"%s\"", ts, level_names[level]);
	/* obj as "{…}" right after the head; its '{' then becomes the ',' between them */
	if ((n = json_dumpb(obj, line + head, cap - head - 1, JSON_COMPACT)) > cap - head - 1) {
		cap = head + n + 1;
		if ((line = malloc(cap)) == NULL ||
		    json_dumpb(obj, line + head, cap - head - 1, JSON_COMPACT) != n) {
			free(line);
			json_decref(obj);
			return;
		}
		memcpy(line, small, head);
	}
	json_decref(obj);
	if (n < 2)
		goto out;
	if (n == 2) {	/* {} */
		line[head] = '}';
		n = 1;
	} else
		line[head] = ',';
	n += head;
	line[n++] = '\n';
	write_line(line, n);
out:
	if (line != small)
		free(line);
}

/* The length of the valid UTF-8 sequence of two to four bytes at s, or 0. */
static size_t
utf8_seq(const unsigned char *s)
{
	unsigned cp;
	size_t n, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07u;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* the terminating NUL too */
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/* s as a JSON string: the escapes jansson writes, a byte that is not valid UTF-8 as '?'.
 * 0, or -1 when the buffer's ceiling was reached. */
static int
put_string(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	static const char *const short_esc[0x20] = {
		['\b'] = "\\b", ['\f'] = "\\f", ['\n'] = "\\n", ['\r'] = "\\r", ['\t'] = "\\t",
	};
	const unsigned char *p = (const unsigned char *)s, *run = p;
	char u[7] = "\\u00";
	size_t n;
	int rc = buf_putc(b, '"');

	for (; *p; run = p) {
		while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
			p++;
		rc |= buf_append(b, run, (size_t)(p - run));
		if (*p == '\0')
			break;
		if (*p >= 0x80) {
			n = utf8_seq(p);
			rc |= n > 0 ? buf_append(b, p, n) : buf_putc(b, '?');
			p += n ? n : 1;
		} else if (*p == '"' || *p == '\\') {
			rc |= buf_putc(b, '\\');
			rc |= buf_putc(b, (char)*p++);
		} else if (short_esc[*p]) {
			rc |= buf_puts(b, short_esc[*p++]);
		} else {
			u[4] = hex[*p >> 4];
			u[5] = hex[*p++ & 0xf];
			rc |= buf_append(b, u, 6);
		}
	}
	return rc | buf_putc(b, '"');
}

void
log_line_begin(struct log_line *l, enum log_level level)
{
	char ts[40];

	buf_init(&l->b, LOG_LINE_MAX);
	if ((l->on = log_enabled(level)) == 0)
		return;
	log_timestamp(ts);
	if (buf_reserve(&l->b, 512) < 0 || buf_puts(&l->b, "{\"ts\":\"") < 0 || buf_puts(&l->b, ts) < 0 ||
	    buf_puts(&l->b, "\",\"level\":\"") < 0 || buf_puts(&l->b, level_names[level]) < 0 ||
	    buf_putc(&l->b, '"') < 0)
		l->on = 0;
}

/* ,"key": (keys are the program's own literals: nothing to escape); 0, or -1 when the
 * line is off or has failed. */
static int
put_key(struct log_line *l, const char *key)
{
	if (l->on && (buf_puts(&l->b, ",\"") < 0 || buf_puts(&l->b, key) < 0 || buf_puts(&l->b, "\":") < 0))
		l->on = 0;	/* past the ceiling: the line is dropped, never written cut */
	return l->on ? 0 : -1;
}

void
log_line_str(struct log_line *l, const char *key, const char *value)
{
	if (put_key(l, key) == 0 && (value ? put_string(&l->b, value) : buf_puts(&l->b, "null")) < 0)
		l->on = 0;
}

void
log_line_int(struct log_line *l, const char *key, int64_t value)
{
	char d[22];
	size_t n;

	if (put_key(l, key) < 0)
		return;
	d[0] = '-';
	n = str_u64(d + 1, value < 0 ? 0 - (uint64_t)value : (uint64_t)value);
	if (buf_append(&l->b, value < 0 ? d : d + 1, value < 0 ? n + 1 : n) < 0)
		l->on = 0;
}

void
log_line_true(struct log_line *l, const char *key)
{
	if (put_key(l, key) == 0 && buf_puts(&l->b, "true") < 0)
		l->on = 0;
}

void
log_line_end(struct log_line *l)
{
	if (l->on && buf_append(&l->b, "}\n", 2) == 0)
		write_line(l->b.data, l->b.len);
	buf_free(&l->b);
}

json_t *
log_string(const char *s)
{
	json_t *j;
	char *copy, *c;

	if (s == NULL)
		return json_null();
	if ((j = json_string(s)) != NULL)
		return j;
	if ((copy = strdup(s)) == NULL)
		return json_null();
	for (c = copy; *c; c++)
		if ((unsigned char)*c >= 0x80 || (unsigned char)*c < 0x20)
			*c = '?';
	j = json_string(copy);
	free(copy);
	return j ? j : json_null();
}

void
log_msg(enum log_level level, const char *request_id, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	json_t *o;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o = json_object();
	if (request_id)
		json_object_set_new(o, "request_id", log_string(request_id));
	json_object_set_new(o, "msg", log_string(msg));
	log_json(level, o);
}
