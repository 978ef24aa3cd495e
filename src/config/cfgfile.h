/* cfgfile — the files a configuration reads. Each is opened only when it is a regular
 * file (a FIFO or a device never blocks the loader), read with a bound, judged by its
 * owner and mode (cfgfile_judge), and, for the credential files a configuration names,
 * checked against its format. Nothing of a credential's content ever reaches an error
 * message. An error is a struct gw_error (code GW_ECONFIG, or GW_EINTERNAL without
 * memory) whose detail the caller places at the line of the key that named the file;
 * a warning is text ("PATH: why") for the same place. */
#ifndef GW_CFGFILE_H
#define GW_CFGFILE_H

#include <stddef.h>
#include <sys/stat.h>

#include "err.h"

#define CFGFILE_WHY_MAX	512

/* What a file the gateway trusts may be (docs/ARCHITECTURE.md §3): owned by root or by
 * the user running the gateway (the effective uid), and writable by neither its group
 * nor others, whoever they are: another user who may write it (or own it, and so chmod
 * it) decides what the gateway believes. A secret (CFGFILE_SECRET) should not be
 * readable by others either: that is a warning, since a group or an ACL may be how the
 * gateway's user reads it. Directories are judged alike (the state file's). */
enum cfgfile_trust {
	CFGFILE_TRUSTED = 1,	/* configuration files, ca-file, a jwks-uri or as-metadata file */
	CFGFILE_SECRET,		/* session-key-file, client-secret-file, auth-header-file */
};
/* 0 fine; 1 fine, with err's detail saying what to warn about; -1 refused, with err
 * (the words without the path). */
int cfgfile_judge(const struct stat *st, enum cfgfile_trust kind, struct gw_error *err);

/* path opened for reading when it is a regular file: the fd and *st, or -1 with err
 * (the words without the path). Symbolic links are followed; the file is checked again
 * after it is opened. */
int cfgfile_open(const char *path, struct stat *st, struct gw_error *err);
/* All of fd into *out (NUL-terminated, *len bytes): 0; 1 when it holds more than max
 * bytes, -1 when it cannot be read (out of memory, a read error), each with err. */
int cfgfile_read_all(int fd, size_t max, char **out, size_t *len, struct gw_error *err);
/* The credential files, each judged as CFGFILE_SECRET: refused as cfgfile_judge says,
 * and when it warns, its words in warn ("PATH: why"; "" when there is nothing to say).
 * An error's detail names the path. A secret: the file's first line, non-empty. A new
 * string, or NULL with err. */
char *cfgfile_secret(const char *path, struct gw_error *err, char *warn, size_t warnlen);
/* An upstream's credentials: one line "Name: value", a name the gateway does not set
 * itself. A new "Name: value" string (one blank), or NULL with err. */
char *cfgfile_header(const char *path, struct gw_error *err, char *warn, size_t warnlen);
/* A 32-byte key: 32 raw bytes, or 64 hex digits and a newline. 0, or -1 with err. */
int cfgfile_key32(const char *path, unsigned char key[32], struct gw_error *err, char *warn,
    size_t warnlen);

#endif
