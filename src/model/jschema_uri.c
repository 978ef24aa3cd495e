/* jschema_uri — what a $ref names: RFC 3986 reference resolution (§5.2, dot segments
 * removed) against a base URI, and JSON pointers (RFC 6901) as URI fragments. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jschema_int.h"

struct uparts {
	const char *scheme, *auth, *path, *query, *frag;
	size_t nscheme, nauth, npath, nquery, nfrag;	/* auth, query, frag: NULL when absent */
};

static void
uri_split(const char *u, struct uparts *p)
{
	size_t i = 0;

	memset(p, 0, sizeof(*p));
	if ((u[0] | 0x20) >= 'a' && (u[0] | 0x20) <= 'z') {
		i = strspn(u, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-");
		if (u[i] == ':')
			p->scheme = u, p->nscheme = i, u += i + 1;
	}
	if (u[0] == '/' && u[1] == '/') {
		p->auth = u + 2;
		p->nauth = strcspn(p->auth, "/?#");
		u = p->auth + p->nauth;
	}
	p->path = u;
	p->npath = strcspn(u, "?#");
	u += p->npath;
	if (*u == '?') {
		p->query = u + 1;
		p->nquery = strcspn(p->query, "#");
		u = p->query + p->nquery;
	}
	if (*u == '#') {
		p->frag = u + 1;
		p->nfrag = strlen(p->frag);
	}
}

/* Appends n bytes to out (cap), at *len; -1 when they do not fit. */
static int
put(char *out, size_t cap, size_t *len, const char *s, size_t n)
{
	if (*len + n + 1 > cap)
		return -1;
	memcpy(out + *len, s, n);
	*len += n;
	out[*len] = '\0';
	return 0;
}

/* Cuts out's last segment (from its last '/'), not before start. */
static void
drop_segment(char *out, size_t *len, size_t start)
{
	size_t k;

	for (k = *len; k > start && out[k - 1] != '/'; k--)
		;
	*len = k > start ? k - 1 : start;
	out[*len] = '\0';
}

/* The path with its "." and ".." segments removed (RFC 3986 §5.2.4), appended to out. */
static int
put_path(char *out, size_t cap, size_t *len, const char *path, size_t n)
{
	size_t start = *len, seg;

	while (n > 0) {
		if (n >= 3 && memcmp(path, "../", 3) == 0)
			path += 3, n -= 3;
		else if (n >= 2 && memcmp(path, "./", 2) == 0)
			path += 2, n -= 2;
		else if (n >= 3 && memcmp(path, "/./", 3) == 0)
			path += 2, n -= 2;
		else if (n == 2 && memcmp(path, "/.", 2) == 0)
			return put(out, cap, len, "/", 1);
		else if (n >= 4 && memcmp(path, "/../", 4) == 0) {
			drop_segment(out, len, start);
			path += 3, n -= 3;
		} else if (n == 3 && memcmp(path, "/..", 3) == 0) {
			drop_segment(out, len, start);
			return put(out, cap, len, "/", 1);
		} else if ((n == 1 && path[0] == '.') || (n == 2 && memcmp(path, "..", 2) == 0))
			n = 0;
		else {
			for (seg = 1; seg < n && path[seg] != '/'; seg++)
				;
			if (put(out, cap, len, path, seg) < 0)
				return -1;
			path += seg, n -= seg;
		}
	}
	return 0;
}

int
jschema_uri_resolve(const char *base, const char *ref, char *out, size_t cap)
{
	struct uparts b, r;
	const struct uparts *a;
	size_t len = 0, k;
	int rc = 0;

	uri_split(base, &b);
	uri_split(ref, &r);
	out[0] = '\0';
	a = r.scheme ? &r : &b;
	if (a->scheme)
		rc |= put(out, cap, &len, a->scheme, a->nscheme) | put(out, cap, &len, ":", 1);
	a = r.scheme || r.auth ? &r : &b;
	if (a->auth)
		rc |= put(out, cap, &len, "//", 2) | put(out, cap, &len, a->auth, a->nauth);
	if (r.scheme || r.auth || (r.npath > 0 && r.path[0] == '/'))
		rc |= put_path(out, cap, &len, r.path, r.npath);
	else if (r.npath == 0) {
		rc |= put(out, cap, &len, b.path, b.npath);
		if (!r.query && b.query)
			rc |= put(out, cap, &len, "?", 1) | put(out, cap, &len, b.query, b.nquery);
	} else {
		/* merge: the base's path up to its last '/', then the reference's */
		char merged[JSCHEMA_URI_MAX];
		size_t mlen = 0;

		for (k = b.npath; k > 0 && b.path[k - 1] != '/'; k--)
			;
		if (b.auth && b.npath == 0)
			rc |= put(merged, sizeof(merged), &mlen, "/", 1);
		rc |= put(merged, sizeof(merged), &mlen, b.path, k) | put(merged, sizeof(merged), &mlen, r.path, r.npath);
		if (rc == 0)
			rc |= put_path(out, cap, &len, merged, mlen);
	}
	if (r.query)
		rc |= put(out, cap, &len, "?", 1) | put(out, cap, &len, r.query, r.nquery);
	if (r.frag)
		rc |= put(out, cap, &len, "#", 1) | put(out, cap, &len, r.frag, r.nfrag);
	return rc ? -1 : 0;
}

json_t *
jschema_pointer(json_t *root, const char *p)
{
	char tok[256];
	size_t n;
	json_t *v = root;
	char *end;
	unsigned long idx;
	unsigned h;

	while (*p == '/' && v != NULL) {
		p++;
		for (n = 0; *p != '/' && *p != '\0'; p++) {
			char ch = *p;

			if (ch == '%' && p[1] && p[2] && sscanf(p + 1, "%2x", &h) == 1)
				ch = (char)h, p += 2;
			else if (ch == '~' && (p[1] == '0' || p[1] == '1'))
				ch = p[1] == '0' ? '~' : '/', p++;
			if (n + 1 >= sizeof(tok))
				return NULL;
			tok[n++] = ch;
		}
		tok[n] = '\0';
		if (json_is_object(v))
			v = json_object_get(v, tok);
		else if (json_is_array(v) && n > 0 && tok[0] >= '0' && tok[0] <= '9') {
			idx = strtoul(tok, &end, 10);
			v = *end == '\0' ? json_array_get(v, idx) : NULL;
		} else
			v = NULL;
	}
	return *p == '\0' ? v : NULL;
}
