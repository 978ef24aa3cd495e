/* challenge — the WWW-Authenticate grammar (RFC 9110 §11.6.1, §11.2, §5.6):
 *
 *   WWW-Authenticate = #challenge
 *   challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
 *   auth-param = token BWS "=" BWS ( token / quoted-string )
 *   token68    = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
 *
 * Commas separate both challenges and a challenge's parameters: an element that is a
 * token followed by "=" and a value is a parameter of the open challenge, any other
 * token begins the next challenge. The whole value must parse: a header read only in
 * part could be read one way here and another by the server that wrote it. */
#include "autoconf.h"

#include <string.h>
#include <strings.h>

#include "challenge.h"

static int
is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int
is_t68char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    (c != '\0' && strchr("-._~+/", c) != NULL);
}

static const char *
ows(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static size_t
token_len(const char *p)
{
	size_t n = 0;

	while (is_tchar((unsigned char)p[n]))
		n++;
	return n;
}

/* What is being read, and where the wanted value goes. */
struct cursor {
	const char *p;
	char *out;
	size_t outlen, n;
	int put;		/* the value being read is the wanted one */
	int found;		/* how many times the wanted parameter was met */
	int fits;
};

static void
put(struct cursor *c, char ch)
{
	if (!c->put)
		return;
	if (c->n + 1 >= c->outlen) {
		c->fits = 0;
		return;
	}
	c->out[c->n++] = ch;
	c->out[c->n] = '\0';
}

/* A quoted-string at c->p (its opening quote), its content put: 0 with c->p past the
 * closing quote, or -1. qdtext and quoted-pair admit HTAB, SP, VCHAR and obs-text:
 * no other control character, unquoted or escaped. */
static int
quoted(struct cursor *c)
{
	const unsigned char *p = (const unsigned char *)c->p + 1;

	for (;;) {
		if (*p == '"')
			break;
		if (*p == '\\')
			p++;
		if (*p == '\0' || (*p < 0x20 && *p != '\t') || *p == 0x7f)
			return -1;
		put(c, (char)*p++);
	}
	c->p = (const char *)p + 1;
	return 0;
}

/* Is the element at p "token BWS = BWS value" (a parameter), not a token68 or a
 * scheme? The value begins with a quote or a tchar ('=' is none: "abc==" is a token68). */
static int
is_param(const char *p)
{
	size_t n = token_len(p);

	if (n == 0)
		return 0;
	p = ows(p + n);
	if (*p != '=')
		return 0;
	p = ows(p + 1);
	return *p == '"' || is_tchar((unsigned char)*p);
}

/* After an element: optional whitespace, then a comma or the end. */
static int
element_end(struct cursor *c)
{
	c->p = ows(c->p);
	return *c->p == ',' || *c->p == '\0' ? 0 : -1;
}

/* The parameter at c->p (is_param holds) of a challenge, the wanted one (in_wanted)
 * or not, its value put when it is the name wanted: 0 with c->p past the element, or
 * -1 (malformed, or the name met twice in the challenge: which one its server meant is
 * not ours to guess). */
static int
param(struct cursor *c, int in_wanted, const char *name)
{
	size_t n = token_len(c->p);

	c->put = in_wanted && strlen(name) == n && strncasecmp(c->p, name, n) == 0;
	if (c->put && c->found++)
		return -1;
	c->p = ows(ows(c->p + n) + 1);	/* past BWS "=" BWS */
	if (*c->p == '"') {
		if (quoted(c) < 0)
			return -1;
	} else {
		while (is_tchar((unsigned char)*c->p))
			put(c, *c->p++);
	}
	c->put = 0;
	return element_end(c);
}

/* A token68 at c->p: 0 with c->p past the element, or -1. */
static int
token68(struct cursor *c)
{
	const char *p = c->p;

	while (is_t68char((unsigned char)*p))
		p++;
	if (p == c->p)
		return -1;
	while (*p == '=')
		p++;
	c->p = p;
	return element_end(c);
}

int
challenge_param(const char *hdr, const char *scheme, const char *name, char *out, size_t outlen)
{
	struct cursor c = { hdr, out, outlen, 0, 0, 0, 1 };
	int open = 0, in_wanted = 0, met = 0;
	size_t n;

	if (outlen == 0)
		return -1;
	out[0] = '\0';
	for (;;) {
		while (*c.p == ' ' || *c.p == '\t' || *c.p == ',')
			c.p++;
		if (*c.p == '\0')
			break;
		if ((n = token_len(c.p)) == 0)
			return -1;
		if (open && is_param(c.p)) {	/* another parameter of the open challenge */
			if (param(&c, in_wanted, name) < 0)
				return -1;
			continue;
		}
		/* A new challenge: its scheme, then 1*SP and a token68 or a first parameter. */
		in_wanted = !met && strlen(scheme) == n && strncasecmp(c.p, scheme, n) == 0;
		met |= in_wanted;
		c.p += n;
		if (*c.p != ' ' && *c.p != '\t' && *c.p != ',' && *c.p != '\0')
			return -1;
		c.p = ows(c.p);
		open = *c.p == ',' || *c.p == '\0' || is_param(c.p);	/* a token68 ends its challenge */
		if (*c.p == ',' || *c.p == '\0')
			continue;
		if ((open ? param(&c, in_wanted, name) : token68(&c)) < 0)
			return -1;
	}
	return c.found == 1 && c.fits ? 0 : -1;
}
