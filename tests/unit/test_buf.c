/* Unit tests: buf, sink, clock, secret helpers, jsonw, the log's lines. */
#include "autoconf.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "jsonw.h"
#include "log.h"
#include "secret.h"
#include "sink.h"
#include "str.h"
#include "tap.h"

/* A capped buffer: appends within and past the cap, reset. */
static void
test_buf_cap(void)
{
	struct buf b;

	buf_init(&b, 10);
	is_str(buf_str(&b), "", "empty buffer reads as an empty string");
	ok(buf_puts(&b, "hello") == 0, "append within the cap");
	ok(buf_printf(&b, "%d", 1234) == 0, "printf within the cap");
	is_str(buf_str(&b), "hello1234", "contents");
	ok(buf_puts(&b, "xy") < 0, "append past the cap fails");
	is_int(b.len, 9, "a failed append changes nothing");
	ok(buf_putc(&b, '!') == 0, "exactly at the cap");
	ok(buf_putc(&b, '!') < 0, "one past the cap fails");
	buf_reset(&b);
	is_int(b.len, 0, "reset empties");
	buf_free(&b);
}

/* A buffer that grows keeps every byte and its terminating NUL. */
static void
test_buf_growth(void)
{
	struct buf b;
	int i, failed = 0;

	buf_init(&b, 1 << 20);
	for (i = 0; i < 10000; i++)
		failed += buf_puts(&b, "0123456789") < 0;
	is_int(failed, 0, "every append within the cap succeeds");
	is_int(b.len, 100000, "growth by doubling keeps every byte");
	ok(b.data[b.len] == '\0', "always NUL-terminated");
	buf_free(&b);
}

/* A memory sink takes bytes up to its buffer's cap, then stays failed. */
static void
test_sink_mem(void)
{
	struct buf b;
	struct sink s;

	buf_init(&b, 8);
	sink_mem_init(&s, &b);
	ok(sink_puts(&s, "abcd") == 0, "memory sink takes bytes");
	ok(sink_puts(&s, "efghij") < 0, "memory sink refuses past its cap");
	ok(s.failed && sink_puts(&s, "k") < 0, "a failed sink stays failed");
	buf_free(&b);
}

/* sink_gone: the watched connection, looked at every SINK_WATCH_MS at most. */
static void
test_sink_gone(void)
{
	struct buf b;
	struct sink s;
	int sv[2], pp[2];
	int64_t t = 1000000, step = SINK_WATCH_MS * 1000;

	buf_init(&b, 64);
	sink_mem_init(&s, &b);
	ok(sink_gone(&s, t) == 0, "a sink that is not watched: never gone");
	ok(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0 && pipe(pp) == 0,
	    "a socket pair and a pipe");
	s.watch_fd = sv[0];
	s.watch_events = POLLRDHUP;
	ok(write(sv[1], "unread", 6) == 6, "the peer sends what is never read");
	ok(sink_gone(&s, t) == 0 && sink_gone(&s, t + step) == 0,
	    "unread input is not a client gone");
	shutdown(sv[1], SHUT_WR);
	ok(sink_gone(&s, t + step + 1) == 0, "within the period after a look: not looked at again");
	ok(sink_gone(&s, t + 2 * step) == 1 && s.failed,
	    "the peer shut its side down: gone, and the sink failed");
	ok(sink_puts(&s, "x") < 0, "a gone client's sink takes nothing more");
	sink_mem_init(&s, &b);
	s.watch_fd = pp[1];
	s.watch_events = 0;
	ok(sink_gone(&s, t) == 0 && sink_gone(&s, t + step) == 0,
	    "a pipe with its reader: not gone");
	close(pp[0]);
	ok(sink_gone(&s, t + 2 * step) == 1, "a pipe whose reader closed (CGI's stdout): gone");
	sink_mem_init(&s, &b);
	s.watch_fd = sv[0];
	s.watch_events = POLLRDHUP;
	ok(sink_gone(&s, t) == 0,
	    "the first look is a period after the first call (none for a short request)");
	close(sv[0]);
	close(sv[1]);
	close(pp[1]);
	buf_free(&b);
}

/* RFC 3339 timestamps and the monotonic clock. */
static void
test_clock(void)
{
	char ts[32];

	clock_rfc3339(0, ts, sizeof(ts));
	is_str(ts, "1970-01-01T00:00:00Z", "RFC 3339 of the epoch");
	clock_rfc3339(1795000000, ts, sizeof(ts));
	is_str(ts, "2026-11-18T11:06:40Z", "RFC 3339 of a later time");
	clock_rfc3339(951868799, ts, sizeof(ts));
	is_str(ts, "2000-02-29T23:59:59Z", "… a leap day's last second");
	clock_rfc3339(951868800, ts, sizeof(ts));
	is_str(ts, "2000-03-01T00:00:00Z", "… the day after");
	clock_rfc3339(4107542400, ts, sizeof(ts));
	is_str(ts, "2100-03-01T00:00:00Z", "… 2100 has no leap day");
	clock_rfc3339(-1, ts, sizeof(ts));
	is_str(ts, "1969-12-31T23:59:59Z", "… before the epoch");
	clock_utc(1795000000, ts, sizeof(ts));
	is_str(ts, "2026-11-18T11:06:40", "the same without the Z");
	ok(clock_mono_us() > 0, "monotonic clock runs");
}

/* The constant-time compare at each length it has its own path for (16, 32, 64) and
 * around them: equal, and unequal in the first, a middle or the last byte. */
static void
test_equal_sizes(void)
{
	static const size_t lens[] = { 1, 15, 16, 17, 31, 32, 33, 64, 65 };
	unsigned char a[80], b[80];
	size_t i, j, bad = 0;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t n = lens[i], at[3] = { 0, n / 2, n - 1 };

		for (j = 0; j < n; j++)
			a[j] = b[j] = (unsigned char)(j * 7 + n);
		bad += !secret_equal(a, b, n);
		for (j = 0; j < 3; j++) {
			b[at[j]] ^= 0x80;
			bad += secret_equal(a, b, n);
			b[at[j]] ^= 0x80;
		}
	}
	ok(bad == 0, "constant-time compare of 1 to 65 bytes: equal, and a flipped first, middle or last byte");
}

/* Random ids, digests and the constant-time compare. */
static void
test_secret(void)
{
	char hex[33], hex2[33];

	ok(secret_init() == 0, "libsodium initialises");
	secret_random_hex(hex, 16);
	secret_random_hex(hex2, 16);
	ok(strlen(hex) == 32 && strcmp(hex, hex2) != 0, "random ids are hex and differ");
	secret_digest_hex("abc", 3, hex, 16);
	secret_digest_hex("abc", 3, hex2, 16);
	is_str(hex, hex2, "digest is deterministic");
	secret_digest_hex("abd", 3, hex2, 16);
	ok(strcmp(hex, hex2) != 0, "digest depends on the input");
	ok(secret_equal("abcd", "abcd", 4) && !secret_equal("abcd", "abce", 4), "constant-time compare");
	test_equal_sizes();
}

static int
cmp_id(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Request ids: 16 hex digits, none twice in a process, none a forked child's. */
static void
test_unique_ids(void)
{
	static char ids[4096][17];
	char mine[17], child[17] = "";
	size_t i, hex = 0, dup = 0;
	int fd[2], status = -1;
	pid_t pid;

	for (i = 0; i < 4096; i++) {
		secret_unique_hex(ids[i]);
		hex += strlen(ids[i]) == 16 && strspn(ids[i], "0123456789abcdef") == 16;
	}
	qsort(ids, 4096, sizeof(ids[0]), cmp_id);
	for (i = 1; i < 4096; i++)
		dup += strcmp(ids[i - 1], ids[i]) == 0;
	ok(hex == 4096 && dup == 0, "4096 request ids: 16 hex digits each, all different");
	if (pipe(fd) < 0 || (pid = fork()) < 0) {
		ok(0, "pipe and fork");
		return;
	}
	if (pid == 0) {	/* the same key and count as the parent's from here on */
		secret_unique_hex(mine);
		_exit(write(fd[1], mine, 17) == 17 ? 0 : 1);
	}
	secret_unique_hex(mine);
	close(fd[1]);
	if (read(fd[0], child, 17) != 17)
		child[0] = '\0';
	close(fd[0]);
	waitpid(pid, &status, 0);
	ok(status == 0 && strlen(child) == 16 && strcmp(child, mine) != 0,
	    "a forked child's next request id is not its parent's next one");
}

/* What one log line built by fill() wrote to a pipe, parsed; NULL when nothing was. */
static json_t *
logged(void (*fill)(struct log_line *), enum log_level level, char *raw, size_t rawlen)
{
	struct log_line l;
	int fd[2];
	ssize_t n;
	json_t *j = NULL;

	if (pipe(fd) < 0)
		return NULL;
	log_init(fd[1], GW_LOG_INFO);
	log_line_begin(&l, level);
	fill(&l);
	log_line_end(&l);
	close(fd[1]);
	n = read(fd[0], raw, rawlen - 1);
	close(fd[0]);
	log_init(2, GW_LOG_INFO);
	raw[n > 0 ? n : 0] = '\0';
	if (n > 0)
		j = json_loads(raw, 0, NULL);
	return j;
}

static void
fill_members(struct log_line *l)
{
	log_line_str(l, "plain", "POST /mcp?x=1");
	log_line_str(l, "escaped", "q\"b\\s/\n\t\r\b\f\x01\x1f\x7f");
	log_line_str(l, "utf8", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	log_line_str(l, "bad", "a\xff b\xc0\xaf c\xed\xa0\x80 d\xe2\x82 e\xf4\x90\x80\x80");
	log_line_str(l, "none", NULL);
	log_line_int(l, "zero", 0);
	log_line_int(l, "min", INT64_MIN);
	log_line_int(l, "max", INT64_MAX);
	log_line_true(l, "gone");
}

static void
fill_nothing(struct log_line *l)
{
	(void)l;
}

/* A log line of plain members: valid JSON whatever the strings hold, the members as
 * given, one line; a level that is off writes nothing. */
static void
test_log_line(void)
{
	char raw[4096];
	json_t *j = logged(fill_members, GW_LOG_INFO, raw, sizeof(raw));
	const char *ts;

	ok(j != NULL, "the line is JSON");
	ok(strchr(raw, '\n') == raw + strlen(raw) - 1, "one line, ended by its newline");
	ts = json_string_value(json_object_get(j, "ts"));
	ok(ts && strlen(ts) == 27 && ts[19] == '.' && ts[26] == 'Z', "ts: UTC to the microsecond (%s)", ts ? ts : "none");
	is_str(json_string_value(json_object_get(j, "level")), "info", "level");
	is_str(json_string_value(json_object_get(j, "plain")), "POST /mcp?x=1", "a plain string as it is");
	is_str(json_string_value(json_object_get(j, "escaped")), "q\"b\\s/\n\t\r\b\f\x01\x1f\x7f",
	    "quotes, backslashes and control characters escaped");
	ok(strstr(raw, "\\u0001\\u001F") != NULL && strstr(raw, "\\n\\t\\r\\b\\f") != NULL,
	    "control characters written as jansson writes them");
	is_str(json_string_value(json_object_get(j, "utf8")), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	    "valid UTF-8 kept");
	is_str(json_string_value(json_object_get(j, "bad")), "a? b?? c??? d?? e????",
	    "bytes that are not UTF-8 (stray, overlong, surrogate, cut, past U+10FFFF) as '?'");
	ok(json_is_null(json_object_get(j, "none")), "NULL as null");
	ok(json_integer_value(json_object_get(j, "zero")) == 0 && json_integer_value(json_object_get(j, "min")) == INT64_MIN &&
	    json_integer_value(json_object_get(j, "max")) == INT64_MAX, "integers, the extremes included");
	ok(json_is_true(json_object_get(j, "gone")), "true");
	is_int(json_object_size(j), 11, "no other member");
	json_decref(j);
	j = logged(fill_nothing, GW_LOG_INFO, raw, sizeof(raw));
	ok(j && json_object_size(j) == 2, "a line of no members: ts and level");
	json_decref(j);
	j = logged(fill_members, GW_LOG_DEBUG, raw, sizeof(raw));
	ok(j == NULL && raw[0] == '\0', "a level that is off writes nothing");
}

/* jsonw_dump(v) and json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY): the same bytes. */
static int
jsonw_same(json_t *v)
{
	char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	struct buf b;
	int same;

	buf_init(&b, 1u << 20);
	same = want && jsonw_dump(&b, v) == 0 && strcmp(buf_str(&b), want) == 0;
	if (!same)
		printf("# jsonw: %s, jansson: %s\n", buf_str(&b), want ? want : "(none)");
	buf_free(&b);
	free(want);
	json_decref(v);
	return same;
}

static void
test_jsonw(void)
{
	static const char *const texts[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"tools\":null,\"nextCursor\":\"abc\",\"ttlMs\":0}}",
		"[1,-1,9223372036854775807,-9223372036854775808,true,false,null,\"\",{},[]]",
		"{\"q\\\"b\\\\s/\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f\":\"caf\\u00e9 \\u20ac \\ud83d\\ude00\"}",
		"{\"z\":1,\"a\":2,\"m\":{\"y\":[{\"x\":[[[]]]}]}}",
		"[0.5,1e300,-2.25,1.0]",
	};
	struct buf b;
	json_t *deep = json_array(), *a = deep;
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		ok(jsonw_same(json_loads(texts[i], JSON_DECODE_ANY, NULL)), "jsonw writes what jansson writes: %.40s", texts[i]);
	ok(jsonw_same(json_stringn("a\0b", 3)), "a string holding NUL: \\u0000");
	for (i = 0; i < 100; i++) {	/* deeper than jsonw goes itself: jansson's for the rest */
		json_array_append_new(a, json_array());
		a = json_array_get(a, 0);
	}
	ok(jsonw_same(deep), "100 arrays deep");
	buf_init(&b, 8);
	a = json_pack("{s:s}", "key", "a value longer than the ceiling");
	ok(jsonw_dump(&b, a) < 0, "past the buffer's ceiling: -1");
	json_decref(a);
	buf_free(&b);
	buf_init(&b, 64);
	ok(jsonw_string(&b, "\xff\xc3", 2) == 0 && strcmp(buf_str(&b), "\"??\"") == 0,
	    "a string that is not UTF-8: '?' for each stray byte");
	buf_free(&b);
}

/* str_u64: decimal digits, their count, the terminating NUL. */
static void
test_str_u64(void)
{
	char d[21];

	ok(str_u64(d, 0) == 1 && strcmp(d, "0") == 0, "0");
	ok(str_u64(d, 7) == 1 && strcmp(d, "7") == 0, "one digit");
	ok(str_u64(d, 1234567890) == 10 && strcmp(d, "1234567890") == 0, "ten digits");
	ok(str_u64(d, UINT64_MAX) == 20 && strcmp(d, "18446744073709551615") == 0, "the largest");
}

/* str_join0: the parts with a NUL between two, cut to the buffer. */
static void
test_str_join0(void)
{
	const char *const parts[3] = { "ab", "", "cde" };
	char buf[16];

	ok(str_join0(buf, sizeof(buf), parts, 3) == 7 && memcmp(buf, "ab\0\0cde", 7) == 0, "joined, NUL-separated");
	ok(str_join0(buf, 5, parts, 3) == 4 && memcmp(buf, "ab\0\0", 4) == 0, "cut to the buffer");
	ok(str_join0(buf, 3, parts, 3) == 2 && memcmp(buf, "ab", 2) == 0, "cut before a separator");
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	run_case(test_buf_cap);
	run_case(test_buf_growth);
	run_case(test_sink_mem);
	run_case(test_sink_gone);
	run_case(test_clock);
	run_case(test_secret);
	run_case(test_unique_ids);
	run_case(test_log_line);
	run_case(test_str_u64);
	run_case(test_str_join0);
	run_case(test_jsonw);
	return done_testing();
}
