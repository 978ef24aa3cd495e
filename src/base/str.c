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
