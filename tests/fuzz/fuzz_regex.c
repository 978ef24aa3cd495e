/* The pattern engine of JSON Schema's pattern keywords (regex_compile, regex_search,
 * src/base/regex*.c): the input is a pattern and a subject cut at the first NUL.
 * Properties: a pattern compiles or says why; a search ends with 0 or 1; a pattern with
 * no special character matches exactly the subjects that contain it, when both are
 * UTF-8 (JSON strings are: a byte that is not is a code point of its own, so that a
 * pattern's lone lead byte does not match the same byte starting a sequence). */
#include "autoconf.h"

#include "regex.h"
#include "fuzz.h"

/* Whether every byte of s is in a sequence regex_utf8_next decodes as one. */
static int
utf8(const char *s)
{
	unsigned long cp;
	size_t n, len = strlen(s);

	while (len > 0) {
		n = regex_utf8_next(s, len, &cp);
		if (n == 1 && (unsigned char)*s >= 0x80)
			return 0;
		s += n, len -= n;
	}
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct regex *re;
	char *p, *s;
	struct gw_error err;
	int rc;

	fuzz_split2(data, size, &p, &s);
	err.code = GW_OK;
	err.detail[0] = '\0';
	re = regex_compile(p, &err);
	FUZZ_CHECK(re != NULL || (err.code != GW_OK && err.detail[0] != '\0'));
	if (re != NULL) {
		rc = regex_search(re, s, strlen(s));
		FUZZ_CHECK(rc == 0 || rc == 1);
		if (strpbrk(p, "\\^$.|?*+()[]{}") == NULL && utf8(p) && utf8(s))
			FUZZ_CHECK(rc == (strstr(s, p) != NULL));
		regex_free(re);
	}
	free(p);
	free(s);
	return 0;
}
