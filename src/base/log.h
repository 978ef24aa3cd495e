/* log — one JSON object per line on a file descriptor (stderr by default). */
#ifndef GW_LOG_H
#define GW_LOG_H

#include <jansson.h>
#include <stdint.h>

#include "buf.h"

enum log_level {
	GW_LOG_ERR = 1,
	GW_LOG_WARN,
	GW_LOG_INFO,
	GW_LOG_DEBUG,
};

void log_init(int fd, enum log_level threshold);
/* The lines written from now on: those of level at or above threshold ([gateway]
 * log-level; any thread, at any time). */
void log_set_level(enum log_level threshold);
/* Sends lines to path (appending), or back to stderr when path is NULL; 0 or -1 (then
 * the previous destination stays). Call again after logrotate to reopen. */
int log_open(const char *path);
int log_enabled(enum log_level level);
/* A JSON string of s; bytes that are not valid UTF-8 become '?'. Never NULL for non-NULL s. */
json_t *log_string(const char *s);
/* Adds "ts" and "level" to obj and writes it as one line; steals obj. */
void log_json(enum log_level level, json_t *obj);
/* A line of plain members (strings, integers, booleans) written as it is built, without
 * a JSON object: log_line_begin, the members in order, log_line_end (writes it, if its
 * level is on, and frees it). A string that is not valid UTF-8 has its invalid bytes
 * written as '?'; a NULL string is null. The request's own line uses it. */
struct log_line {
	struct buf b;
	int on;
};
void log_line_begin(struct log_line *l, enum log_level level);
void log_line_str(struct log_line *l, const char *key, const char *value);
void log_line_int(struct log_line *l, const char *key, int64_t value);
void log_line_true(struct log_line *l, const char *key);
void log_line_end(struct log_line *l);
/* A message line; request_id may be NULL. */
void log_msg(enum log_level level, const char *request_id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A reason the process will not start (or serve), said where an operator looks: the
 * log (the log-file once open, else stderr), and besides it stderr when the log is a
 * file, or syslog (LOG_DAEMON, ident "mcpgate") when it is not: spawn-fcgi may have
 * sent stderr to /dev/null, leaving only "child exited with: 1". Start-up only: never
 * from a request's path (a syslog line per CGI request would be noise). */
void log_fatal(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#define log_err(rid, ...)	log_msg(GW_LOG_ERR, (rid), __VA_ARGS__)
#define log_warn(rid, ...)	log_msg(GW_LOG_WARN, (rid), __VA_ARGS__)
#define log_info(rid, ...)	log_msg(GW_LOG_INFO, (rid), __VA_ARGS__)
#define log_debug(rid, ...)	log_msg(GW_LOG_DEBUG, (rid), __VA_ARGS__)

#endif
