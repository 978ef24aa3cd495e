/* Unit tests: regex, the linear-time ECMA-262 subset of JSON Schema's patterns. */
#include "autoconf.h"

#include <string.h>
#include <time.h>

#include "regex.h"
#include "tap.h"

/* 1 match, 0 none, -2 when the pattern did not compile. */
static int
search(const char *pattern, const char *subject)
{
	struct regex *re;
	int rc;

	if ((re = regex_compile(pattern, NULL)) == NULL)
		return -2;
	rc = regex_search(re, subject, strlen(subject));
	regex_free(re);
	return rc;
}

static void
test_regex_match(void)
{
	static const struct {
		const char *pattern, *subject;
		int want;
	} t[] = {
		{ "abc", "xxabcxx", 1 }, { "abc", "abxc", 0 }, { "^abc$", "abc", 1 }, { "^abc$", "abcd", 0 },
		{ "^a*$", "", 1 }, { "^a*$", "aaab", 0 }, { "a+", "xay", 1 }, { "a+", "xy", 0 },
		{ "^a?b$", "b", 1 }, { "^a?b$", "aab", 0 }, { "^(ab|cd)+$", "abcdab", 1 },
		{ "^(ab|cd)+$", "abc", 0 }, { "^(?:x|y|z){2,3}$", "xyz", 1 }, { "^(?:x|y|z){2,3}$", "x", 0 },
		{ "^(?:x|y|z){2,3}$", "xyzx", 0 }, { "^a{3}$", "aaa", 1 }, { "^a{3}$", "aa", 0 },
		{ "^a{2,}$", "aaaaa", 1 }, { "^a{2,}$", "a", 0 }, { "[0-9]{2,}", "a12", 1 }, { "[0-9]{2,}", "a1b2", 0 },
		{ "^[^a-c]+$", "xyz", 1 }, { "^[^a-c]+$", "xbz", 0 }, { "^\\d+$", "0123", 1 }, { "^\\d+$", "12a", 0 },
		{ "^\\w+$", "a_Z9", 1 }, { "^\\w+$", "a-b", 0 }, { "^\\s$", "\t", 1 }, { "^\\S$", " ", 0 },
		{ "^[\\d\\s]+$", "1 2", 1 }, { "^[\\D]+$", "ab", 1 }, { "^[\\D]+$", "a1", 0 },
		{ "^.$", "\xcf\x80", 1 }, { "^.$", "\n", 0 }, { "^\xc3\xa1", "\xc3\xa1x", 1 },
		{ "^\\u00e1$", "\xc3\xa1", 1 }, { "^\\x41\\/$", "A/", 1 }, { "f.o", "xfzo", 1 },
		{ "\\bfoo\\b", "a foo b", 1 }, { "\\bfoo\\b", "afoo", 0 }, { "\\Boo", "foo", 1 },
		{ "a|", "zzz", 1 }, { "^(a|)$", "", 1 }, { "^[]$", "a", 0 }, { "^[^]$", "a", 1 },
		{ "x{a}", "x{a}", 1 }, { "^a*?b+?$", "aab", 1 }, { "^[a-]+$", "a-a", 1 },
		{ "^(a*)*b$", "aaab", 1 }, { "^\\uD83D\\uDE00$", "\xf0\x9f\x98\x80", 1 },
		{ "^\\p{Letter}+$", "Hello\xcf\x80", 1 }, { "^\\p{L}+$", "a1", 0 }, { "^\\p{Nd}+$", "\xe0\xa7\xaa" "2", 1 },
		{ "^\\P{L}+$", "12-", 1 }, { "^[\\p{L}\\d_]+$", "\xc3\xa9t\xc3\xa9_2", 1 }, { "^[^\\p{N}]$", "5", 0 },
		{ "^\\p{gc=Number}$", "\xc2\xbd", 1 },
	};
	char shown[64];
	size_t i, j;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		/* a control character in the subject would break the TAP line */
		for (j = 0; t[i].subject[j] && j + 1 < sizeof(shown); j++)
			shown[j] = (unsigned char)t[i].subject[j] < 0x20 ? '?' : t[i].subject[j];
		shown[j] = '\0';
		is_int(search(t[i].pattern, t[i].subject), t[i].want, "/%s/ on \"%s\"", t[i].pattern, shown);
	}
}

/* What the engine does not support is refused at compile, with a reason, never a crash. */
static void
test_regex_refused(void)
{
	static const char *const bad[] = {
		"(a)\\1", "(?=a)", "(?!a)", "(?<=a)b", "(?<!a)b", "\\p{Script=Greek}", "\\p{L", "\\k<x>", "*a", "a**", "(a",
		"a)", "[a", "[z-a]", "a{3,2}", "a{1001}", "\\", "^*", "\\q", "(?<n", "(((((((((((((((((((((((((((("
		"(((((((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))",
		"((a{1000}){1000}){1000}",
	};
	struct gw_error err;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err.code = GW_OK;
		err.detail[0] = '\0';
		ok(regex_compile(bad[i], &err) == NULL && err.code == GW_EPARAMS && err.detail[0] != '\0',
		    "/%s/ refused: %s", bad[i], err.detail);
	}
}

/* A pattern a backtracking engine takes exponential time on ends at once. */
static void
test_regex_linear(void)
{
	static char subject[100001];
	struct timespec t0, t1;
	struct regex *re;
	double secs;

	memset(subject, 'a', sizeof(subject) - 1);
	re = regex_compile("(a*)*b", NULL);
	ok(re != NULL, "(a*)*b compiles");
	if (re == NULL)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	is_int(regex_search(re, subject, sizeof(subject) - 1), 0, "(a*)*b does not match 100,000 a's");
	is_int(regex_search(re, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", 44), 1, "(a*)*b matches a's then b");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ok(secs < 2.0, "in linear time (%.3f s)", secs);
	regex_free(re);
	re = regex_compile("^(a|a)*(a|aa)*(a?){20}a{20}$", NULL);
	ok(re != NULL && regex_search(re, subject, 5000) == 1 &&
	    regex_search(re, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", 45) == 0, "a pathological alternation ends too");
	regex_free(re);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	run_case(test_regex_match);
	run_case(test_regex_refused);
	run_case(test_regex_linear);
	return done_testing();
}
