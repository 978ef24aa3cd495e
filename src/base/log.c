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

static void
log_timestamp(char *out, size_t n)
{
	struct timeval tv;
	char utc[32];

	gettimeofday(&tv, NULL);
	clock_utc(tv.tv_sec, utc, sizeof(utc));
	snprintf(out, n, "%s.%06ldZ", utc, (long)tv.tv_usec);
}

void
log_json(enum log_level level, json_t *obj)
{
	char ts[40];
	char *line;
	size_t len, off;
	ssize_t w;
	int fd;

	if (obj == NULL)
		return;
	if (!log_enabled(level)) {
		json_decref(obj);
		return;
	}
	log_timestamp(ts, sizeof(ts));
	/* ts and level first: jansson keeps insertion order, so rebuild. */
	json_t *line_obj = json_pack("{s:s, s:s}", "ts", ts, "level", level_names[level]);
	if (line_obj == NULL || json_object_update(line_obj, obj) < 0) {
		json_decref(line_obj);
		json_decref(obj);
		return;
	}
	json_decref(obj);
	line = json_dumps(line_obj, JSON_COMPACT);
	json_decref(line_obj);
	if (line == NULL)
		return;
	len = strlen(line);
	line[len] = '\n';	/* json_dumps leaves room: replace NUL, write len+1 */
	fd = __atomic_load_n(&log_fd, __ATOMIC_ACQUIRE);
	for (off = 0; off < len + 1; off += (size_t)w) {
		w = write(fd, line + off, len + 1 - off);
		if (w < 0 && errno == EINTR) {
			w = 0;
			continue;
		}
		if (w <= 0)
			break;
	}
	free(line);
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
