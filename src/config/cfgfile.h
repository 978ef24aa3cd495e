/* cfgfile — the files a configuration reads. Each is opened only when it is a regular
 * file (a FIFO or a device never blocks the loader), read with a bound, and, for the
 * credential files a configuration names, checked against its format. Nothing of a
 * credential's content ever reaches an error message. Errors are text ("PATH: why")
 * for the caller to place at the line of the key that named the file. */
#ifndef GW_CFGFILE_H
#define GW_CFGFILE_H

#include <stddef.h>
#include <sys/stat.h>

#define CFGFILE_WHY_MAX	512

/* path opened for reading when it is a regular file: the fd and *st, or -1 with *why.
 * Symbolic links are followed; the file is checked again after it is opened. */
int cfgfile_open(const char *path, struct stat *st, const char **why);
/* All of fd into *out (NUL-terminated, *len bytes): 0, 1 when it holds more than max
 * bytes, -1 on an error. */
int cfgfile_read_all(int fd, size_t max, char **out, size_t *len);
/* A secret: the file's first line, non-empty. A new string, or NULL with why. */
char *cfgfile_secret(const char *path, char *why, size_t whylen);
/* An upstream's credentials: one line "Name: value", a name the gateway does not set
 * itself. A new "Name: value" string (one blank), or NULL with why. */
char *cfgfile_header(const char *path, char *why, size_t whylen);
/* A 32-byte key: 32 raw bytes, or 64 hex digits and a newline. 0, or -1 with why. */
int cfgfile_key32(const char *path, unsigned char key[32], char *why, size_t whylen);

#endif
