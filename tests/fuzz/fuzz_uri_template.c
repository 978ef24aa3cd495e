/* The RFC 6570 matcher that routes resources/read to the upstream whose template a
 * URI expands (uritemplate_matches, src/base/uritemplate.c). The input is a template and a
 * URI cut at the first NUL. Properties: it ends (a step budget), a template without
 * expressions matches exactly itself, and every template matches its own expansion with each
 * variable replaced by "x" (level 1; "+x", "#x", ".x", "/x", ";v=x", "?v=x", "&v=x" for
 * the operators the matcher knows), for templates of up to 6 expressions and 63 bytes
 * (beyond, the budget may end a match: adjacent expressions over a long run of the URI
 * try every way to cut it, six of them over 270 bytes more than the budget's steps). */
#include "autoconf.h"

#include "buf.h"
#include "uritemplate.h"
#include "fuzz.h"

/* The characters of a variable name (RFC 6570 §2.3, pct-encoded loosely). */
#define VARCHARS	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.%"

/* tmpl with every {expression} expanded for its one variable = "x"; -1 when an
 * expression is not one of the simple forms (several variables, modifiers), or there
 * are more than 6. */
static int
expand(const char *t, struct buf *out)
{
	const char *close, *name;
	int n = 0, rc;
	char op;

	while (*t) {
		if (*t != '{') {
			if (*t == '}' || buf_putc(out, *t++) < 0)
				return -1;
			continue;
		}
		if ((close = strchr(t, '}')) == NULL || ++n > 6)
			return -1;
		op = strchr("+#./;?&", t[1]) && t[1] ? t[1] : 0;
		name = t + 1 + (op != 0);
		if (name == close || strspn(name, VARCHARS) < (size_t)(close - name))
			return -1;
		switch (op) {
		case 0: case '+':
			rc = buf_puts(out, "x");
			break;
		case '#': case '.': case '/':
			rc = buf_putc(out, op) < 0 || buf_puts(out, "x") < 0 ? -1 : 0;
			break;
		default:	/* ; ? & */
			rc = buf_putc(out, op) < 0 || buf_append(out, name, (size_t)(close - name)) < 0 ||
			    buf_puts(out, "=x") < 0 ? -1 : 0;
			break;
		}
		if (rc < 0)
			return -1;
		t = close + 1;
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf x;
	char *tmpl, *uri;

	fuzz_split2(data, size, &tmpl, &uri);
	(void)uritemplate_matches(tmpl, uri);
	if (strchr(tmpl, '{') == NULL && strchr(tmpl, '}') == NULL)
		FUZZ_CHECK(uritemplate_matches(tmpl, uri) == (strcmp(tmpl, uri) == 0));
	buf_init(&x, 1 << 20);
	if (strlen(tmpl) < 64 && expand(tmpl, &x) == 0)
		FUZZ_CHECK(uritemplate_matches(tmpl, buf_str(&x)));
	buf_free(&x);
	free(tmpl);
	free(uri);
	return 0;
}
