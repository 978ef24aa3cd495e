/* challenge — one parameter of an authentication challenge (RFC 9110 §11), read from
 * a WWW-Authenticate field value: what an upstream's 401 says of itself (its
 * resource_metadata, RFC 9728 §5.1). Pure. */
#ifndef GW_CHALLENGE_H
#define GW_CHALLENGE_H

#include <stddef.h>

#define CHALLENGE_HEADER_MAX	4096	/* the WWW-Authenticate value(s) of one answer read */

/* The auth-param name of the first challenge of scheme (both compared without case)
 * in hdr, a WWW-Authenticate field value (its lines joined with ", "): challenges
 * comma-separated, each an auth-scheme, then a token68 or a comma-separated list of
 * name=value, the value a token or a quoted-string (its quotes and quoted-pairs
 * undone), into out (NUL-terminated). 0; or -1 when hdr does not parse (all of it: a
 * malformed header is read as none), that challenge is not there or has no such
 * parameter, names it twice, or its value does not fit outlen. */
int challenge_param(const char *hdr, const char *scheme, const char *name, char *out, size_t outlen);

#endif
