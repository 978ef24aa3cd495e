/* log — JSON lines, one write(2) each so lines from threads and processes never interleave. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "jsonw.h"
#include "log.h"

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
/* A line's first block: a request's line fits, and it stays under 1 KiB, below which
 * glibc's malloc takes a free small block; a larger request first merges all the small
 * blocks freed since the last one (malloc_consolidate). */
#define LINE_FIRST	400

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

void
log_line_begin(struct log_line *l, enum log_level level)
{
	char ts[40];

	buf_init(&l->b, LOG_LINE_MAX);
	if ((l->on = log_enabled(level)) == 0)
		return;
	log_timestamp(ts);
	if (buf_reserve(&l->b, LINE_FIRST) < 0 || buf_puts(&l->b, "{\"ts\":\"") < 0 || buf_puts(&l->b, ts) < 0 ||
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
	if (put_key(l, key) == 0 && (value ? jsonw_string(&l->b, value, strlen(value)) : buf_puts(&l->b, "null")) < 0)
		l->on = 0;
}

void
log_line_int(struct log_line *l, const char *key, int64_t value)
{
	if (put_key(l, key) == 0 && jsonw_int(&l->b, value) < 0)
		l->on = 0;
}

void
log_line_true(struct log_line *l, const char *key)
{
	if (put_key(l, key) == 0 && buf_puts(&l->b, "true") < 0)
		l->on = 0;
}

/* One line: {"ts":…,"level":…, then obj's members (names and values written by jsonw),
 * in one write. */
void
log_json(enum log_level level, json_t *obj)
{
	struct log_line l;
	const char *key;
	json_t *v;

	if (obj == NULL)
		return;
	if (!json_is_object(obj)) {
		json_decref(obj);
		return;
	}
	log_line_begin(&l, level);
	json_object_foreach(obj, key, v)
		if (!l.on || buf_putc(&l.b, ',') < 0 || jsonw_string(&l.b, key, strlen(key)) < 0 ||
		    buf_putc(&l.b, ':') < 0 || jsonw_dump(&l.b, v) < 0) {
			l.on = 0;
			break;
		}
	json_decref(obj);
	log_line_end(&l);
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

void
log_fatal(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int fd = __atomic_load_n(&log_fd, __ATOMIC_ACQUIRE);

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_msg(GW_LOG_ERR, NULL, "%s", msg);
	if (fd != 2)
		fprintf(stderr, "mcpgate: %s\n", msg);
	else {
		openlog("mcpgate", LOG_PID, LOG_DAEMON);
		syslog(LOG_ERR, "%s", msg);
		closelog();
	}
}
