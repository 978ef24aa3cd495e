/* cfgfile — regular files only, bounded reads, and the credential files' formats. */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfgfile.h"
#include "err.h"
#include "secret.h"

/* Never blocks: a FIFO or a device is refused by stat() before it is opened, and the
 * open itself is O_NONBLOCK and checked again with fstat() (the path may have been
 * replaced in between). Symbolic links are followed (configuration managers link
 * files into place). */
int
cfgfile_open(const char *path, struct stat *st, struct gw_error *err)
{
	int fd;

	if (stat(path, st) < 0) {
		gw_error_set(err, GW_ECONFIG, "%s", strerror(errno));
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		gw_error_set(err, GW_ECONFIG, "not a regular file");
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0) {
		gw_error_set(err, GW_ECONFIG, "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		gw_error_set(err, GW_ECONFIG, "not a regular file");
		return -1;
	}
	return fd;
}

int
cfgfile_judge(const struct stat *st, enum cfgfile_trust kind, struct gw_error *err)
{
	unsigned mode = (unsigned)(st->st_mode & 07777);

	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		gw_error_set(err, GW_ECONFIG, "writable by group or others (mode %04o)", mode);
		return -1;
	}
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		gw_error_set(err, GW_ECONFIG, "owned by uid %ld, neither root nor the user running the gateway (uid %ld)",
		    (long)st->st_uid, (long)geteuid());
		return -1;
	}
	if (kind == CFGFILE_SECRET && (st->st_mode & S_IROTH)) {
		gw_error_set(err, GW_ECONFIG, "readable by others (mode %04o)", mode);
		return 1;
	}
	return 0;
}

/* fopen() for the credential files: regular files only, judged as secrets. */
static FILE *
open_file(const char *path, struct gw_error *err, char *warn, size_t warnlen)
{
	struct gw_error judged;
	struct stat st;
	FILE *f;
	int fd;

	warn[0] = '\0';
	if ((fd = cfgfile_open(path, &st, &judged)) < 0) {
		gw_error_set(err, judged.code, "%s: %s", path, judged.detail);
		return NULL;
	}
	switch (cfgfile_judge(&st, CFGFILE_SECRET, &judged)) {
	case -1:
		gw_error_set(err, judged.code, "%s: %s", path, judged.detail);
		close(fd);
		return NULL;
	case 1:
		snprintf(warn, warnlen, "%s: %s", path, judged.detail);
		break;
	default:
		break;
	}
	if ((f = fdopen(fd, "rb")) == NULL) {
		gw_error_set(err, GW_ECONFIG, "%s: %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

/* Read, not stat: the file may be growing. */
int
cfgfile_read_all(int fd, size_t max, char **out, size_t *len, struct gw_error *err)
{
	size_t n = 0, cap = 4096;
	char *b = NULL, *nb;
	ssize_t r;

	*out = NULL;
	*len = 0;
	for (;;) {
		if (b == NULL || n == cap) {
			if (b != NULL)
				cap = cap > max / 2 ? max + 1 : cap * 2;
			if ((nb = realloc(b, cap + 1)) == NULL) {
				free(b);
				gw_error_set(err, GW_EINTERNAL, "out of memory");
				return -1;
			}
			b = nb;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			gw_error_set(err, GW_ECONFIG, "read error: %s", strerror(errno));
			free(b);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			free(b);
			gw_error_set(err, GW_ECONFIG, "larger than %zu bytes", max);
			return 1;
		}
	}
	b[n] = '\0';
	*out = b;
	*len = n;
	return 0;
}

char *
cfgfile_secret(const char *path, struct gw_error *err, char *warn, size_t warnlen)
{
	char line[1024], *s;
	FILE *f;
	size_t n;

	if ((f = open_file(path, err, warn, warnlen)) == NULL)
		return NULL;
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	n = strcspn(line, "\r\n");
	line[n] = '\0';
	if (n == 0) {
		gw_error_set(err, GW_ECONFIG, "%s is empty", path);
		return NULL;
	}
	if ((s = strdup(line)) == NULL)
		gw_error_set(err, GW_EINTERNAL, "%s: out of memory", path);
	secret_wipe(line, sizeof(line));
	return s;
}

/* Header names the gateway sets itself on upstream requests, or that would change the
 * framing: an auth-header-file may not name them. */
static const char *const reserved_headers[] = {
	"accept", "connection", "content-length", "content-type", "expect", "host",
	"mcp-protocol-version", "mcp-session-id", "transfer-encoding", NULL
};

static int
is_tchar(char c)
{
	return isalnum((unsigned char)c) || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

char *
cfgfile_header(const char *path, struct gw_error *err, char *warn, size_t warnlen)
{
	char raw[8192 + 2], name[64], *header = NULL;
	size_t n, i, nlen, vstart;
	const char *bad = NULL;
	FILE *f;

	if ((f = open_file(path, err, warn, warnlen)) == NULL)
		return NULL;
	n = fread(raw, 1, sizeof(raw) - 1, f);
	if (ferror(f))
		bad = "cannot be read";
	fclose(f);
	if (n >= sizeof(raw) - 1)
		bad = "longer than 8192 bytes";
	if (n > 0 && raw[n - 1] == '\n')
		n--;
	if (n > 0 && raw[n - 1] == '\r')
		n--;
	while (n > 0 && (raw[n - 1] == ' ' || raw[n - 1] == '\t'))
		n--;
	raw[n] = '\0';
	/* field-name = token (RFC 9110 §5.1), ":", optional blanks, a visible value. */
	for (nlen = 0; nlen < n && is_tchar(raw[nlen]); nlen++)
		;
	vstart = nlen + 1;
	while (vstart < n && (raw[vstart] == ' ' || raw[vstart] == '\t'))
		vstart++;
	if (!bad && (nlen == 0 || nlen >= sizeof(name) || nlen >= n || raw[nlen] != ':' || vstart >= n))
		bad = "expected one line 'Name: value'";
	for (i = vstart; !bad && i < n; i++)	/* no control character but HTAB: no second line */
		if (((unsigned char)raw[i] < 0x20 && raw[i] != '\t') || (unsigned char)raw[i] == 0x7f)
			bad = "expected one line 'Name: value'";
	if (!bad) {
		for (i = 0; i < nlen; i++)
			name[i] = (char)tolower((unsigned char)raw[i]);
		name[nlen] = '\0';
		for (i = 0; reserved_headers[i]; i++)
			if (strcmp(name, reserved_headers[i]) == 0) {
				gw_error_set(err, GW_ECONFIG, "%s: names %s, which the gateway sets itself",
				    path, reserved_headers[i]);
				goto out;
			}
	}
	if (bad) {
		gw_error_set(err, GW_ECONFIG, "%s: %s", path, bad);
		goto out;
	}
	/* Stored as "Name: value" with exactly one blank. */
	if ((header = malloc(nlen + 2 + (n - vstart) + 1)) != NULL)
		snprintf(header, nlen + 2 + (n - vstart) + 1, "%.*s: %s", (int)nlen, raw, raw + vstart);
	else
		gw_error_set(err, GW_EINTERNAL, "%s: out of memory", path);
out:
	secret_wipe(raw, sizeof(raw));
	return header;
}

int
cfgfile_key32(const char *path, unsigned char key[32], struct gw_error *err, char *warn, size_t warnlen)
{
	unsigned char raw[80];
	size_t n, i;
	FILE *f;

	if ((f = open_file(path, err, warn, warnlen)) == NULL)
		return -1;
	n = fread(raw, 1, sizeof(raw), f);
	fclose(f);
	while (n > 32 && (raw[n - 1] == '\n' || raw[n - 1] == '\r'))
		n--;
	if (n == 32)
		memcpy(key, raw, 32);
	else if (n == 64) {
		for (i = 0; i < 32; i++)
			if (sscanf((const char *)raw + 2 * i, "%2hhx", &key[i]) != 1 ||
			    !isxdigit(raw[2 * i]) || !isxdigit(raw[2 * i + 1]))
				n = 0;
	}
	secret_wipe(raw, sizeof(raw));
	if (n != 32 && n != 64) {
		secret_wipe(key, 32);
		gw_error_set(err, GW_ECONFIG, "%s: expected 32 bytes or 64 hex digits", path);
		return -1;
	}
	return 0;
}
