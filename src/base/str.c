/* str — small string helpers shared by the modules. */
#include "autoconf.h"

#include <string.h>

#include "str.h"

int
str_has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	if (n == 0 || p == NULL)
		return 0;
	while (*p) {
		p += strspn(p, " \t");
		if (strncmp(p, word, n) == 0 && (p[n] == ' ' || p[n] == '\t' || p[n] == '\0'))
			return 1;
		p += strcspn(p, " \t");
	}
	return 0;
}

size_t
str_what_happened(const char *detail)
{
	size_t n = strcspn(detail, "(");

	while (n > 0 && (detail[n - 1] == ' ' || detail[n - 1] == '\t'))
		n--;
	return n;
}

size_t
str_u64(char out[21], uint64_t v)
{
	char d[20];
	size_t i = sizeof(d), n;

	do
		d[--i] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	n = sizeof(d) - i;
	memcpy(out, d + i, n);
	out[n] = '\0';
	return n;
}

size_t
str_join0(char *buf, size_t cap, const char *const *parts, size_t n)
{
	size_t i, k, len = 0;

	for (i = 0; i < n; i++) {
		k = strlen(parts[i]);
		if (k > cap - 1 - len)
			k = cap - 1 - len;
		memcpy(buf + len, parts[i], k);
		len += k;
		if (i + 1 < n && len < cap - 1)
			buf[len++] = '\0';
	}
	return len;
}

size_t
str_utf8(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c;
	size_t k, i;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		k = 2, c = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		k = 3, c = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		k = 4, c = s[0] & 0x07u;
	else
		return 0;
	if (k > n)
		return 0;
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3fu);
	}
	if ((k == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (k == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	*cp = c;
	return k;
}
