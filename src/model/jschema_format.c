/* jschema_format — the "format" values jschema asserts when asked to
 * (jschema_opts.format_assert): date, time, date-time (RFC 3339), email (a plain
 * local@domain), hostname, ipv4, ipv6, uuid and uri (a scheme and no blank). Any
 * other format stays an annotation: it never fails. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <string.h>

#include "jschema_int.h"

/* n digits at s as a number, or -1. */
static int
digits(const char *s, int n)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* YYYY-MM-DD, a day the month has: its length (10), or 0. */
static size_t
date_len(const char *s, size_t len)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, m, d;

	if (len < 10 || s[4] != '-' || s[7] != '-' || (y = digits(s, 4)) < 0 || (m = digits(s + 5, 2)) < 1 ||
	    m > 12 || (d = digits(s + 8, 2)) < 1 || d > mdays[m - 1])
		return 0;
	if (m == 2 && d == 29 && (y % 4 != 0 || (y % 100 == 0 && y % 400 != 0)))
		return 0;
	return 10;
}

/* HH:MM:SS[.frac](Z|+HH:MM|-HH:MM), the whole of s: 1 or 0. */
static int
time_ok(const char *s, size_t len)
{
	size_t i = 8;
	int h, m, sec;

	if (len < 9 || s[2] != ':' || s[5] != ':' || (h = digits(s, 2)) < 0 || h > 23 ||
	    (m = digits(s + 3, 2)) < 0 || m > 59 || (sec = digits(s + 6, 2)) < 0 || sec > 60)
		return 0;
	if (s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == 9)
			return 0;
	}
	if (i + 1 == len && (s[i] == 'Z' || s[i] == 'z'))
		return 1;
	return i + 6 == len && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':' &&
	    (h = digits(s + i + 1, 2)) >= 0 && h <= 23 && (m = digits(s + i + 4, 2)) >= 0 && m <= 59;
}

static int
ipv4_ok(const char *s, size_t len)
{
	size_t i = 0, start;
	int parts = 0, v;

	while (parts < 4) {
		for (start = i, v = 0; i < len && s[i] >= '0' && s[i] <= '9' && i - start < 3; i++)
			v = v * 10 + (s[i] - '0');
		if (i == start || v > 255 || (s[start] == '0' && i - start > 1))
			return 0;
		if (++parts < 4 && (i >= len || s[i++] != '.'))
			return 0;
	}
	return i == len;
}

static int
hostname_ok(const char *s, size_t len)
{
	size_t i, label = 0;

	if (len == 0 || len > 253)
		return 0;
	for (i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (label == 0 || s[i - 1] == '-')
				return 0;
			label = 0;
		} else if ((s[i] >= '0' && s[i] <= '9') || ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z') ||
		    (s[i] == '-' && label > 0)) {
			if (++label > 63)
				return 0;
		} else
			return 0;
	}
	return label > 0 && s[len - 1] != '-';
}

static int
uuid_ok(const char *s, size_t len)
{
	size_t i;

	if (len != 36)
		return 0;
	for (i = 0; i < len; i++)
		if (i == 8 || i == 13 || i == 18 || i == 23 ? s[i] != '-' : strchr("0123456789abcdefABCDEF", s[i]) == NULL ||
		    s[i] == '\0')
			return 0;
	return 1;
}

/* A scheme, ':', and no blank or control character. */
static int
uri_ok(const char *s, size_t len)
{
	size_t i = 0;

	if (len == 0 || (s[0] | 0x20) < 'a' || (s[0] | 0x20) > 'z')
		return 0;
	while (i < len && strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-", s[i]) && s[i])
		i++;
	if (i == len || s[i] != ':')
		return 0;
	for (; i < len; i++)
		if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f || strchr("<>\"{}|\\^`", s[i]))
			return 0;
	return 1;
}

int
jschema_format_ok(const char *format, const char *s, size_t len)
{
	char ip[64];
	const char *at;
	unsigned char addr[16];

	if (strcmp(format, "date") == 0)
		return date_len(s, len) == len;
	if (strcmp(format, "time") == 0)
		return time_ok(s, len);
	if (strcmp(format, "date-time") == 0)
		return date_len(s, len) && len > 11 && (s[10] == 'T' || s[10] == 't') && time_ok(s + 11, len - 11);
	if (strcmp(format, "email") == 0)
		return (at = memchr(s, '@', len)) != NULL && at > s && at + 1 < s + len &&
		    memchr(at + 1, '@', len - (size_t)(at + 1 - s)) == NULL && memchr(s, ' ', len) == NULL;
	if (strcmp(format, "hostname") == 0)
		return hostname_ok(s, len);
	if (strcmp(format, "ipv4") == 0)
		return ipv4_ok(s, len);
	if (strcmp(format, "ipv6") == 0) {
		if (len >= sizeof(ip) || memchr(s, '\0', len) != NULL || memchr(s, '%', len) != NULL)
			return 0;
		memcpy(ip, s, len);
		ip[len] = '\0';
		return inet_pton(AF_INET6, ip, addr) == 1;
	}
	if (strcmp(format, "uuid") == 0)
		return uuid_ok(s, len);
	if (strcmp(format, "uri") == 0)
		return uri_ok(s, len);
	return 1;
}
