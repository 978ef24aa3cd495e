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

/* UTC with microseconds; the date and time of the second are formatted once per
 * second and thread. */
static void
log_timestamp(char *out, size_t n)
{
	static __thread time_t sec = -1;
	static __thread char day[32];
	struct timeval tv;

	gettimeofday(&tv, NULL);
	if (tv.tv_sec != sec) {
		clock_utc(tv.tv_sec, day, sizeof(day));
		sec = tv.tv_sec;
	}
	snprintf(out, n, "%s.%06ldZ", day, (long)tv.tv_usec);
}

/* One line: {"ts":…,"level":…, then obj's members (serialized once, after those two)
 * and a newline, in one write. */
void
log_json(enum log_level level, json_t *obj)
{
	char small[2048], ts[40], *line = small;
	size_t head, n, cap = sizeof(small), off;
	ssize_t w;
	int fd;

	if (obj == NULL)
		return;
	if (!log_enabled(level) || !json_is_object(obj)) {
		json_decref(obj);
		return;
	}
	log_timestamp(ts, sizeof(ts));
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
	fd = __atomic_load_n(&log_fd, __ATOMIC_ACQUIRE);
	for (off = 0; off < n; off += (size_t)w) {
		w = write(fd, line + off, n - off);
		if (w < 0 && errno == EINTR) {
			w = 0;
			continue;
		}
		if (w <= 0)
			break;
	}
out:
	if (line != small)
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
