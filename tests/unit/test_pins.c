/* Unit tests: the pins file (pins.h): a round trip, percent-encoding, every error with
 * its line, a missing file, an atomic save that keeps the mode, and two processes
 * changing the file at once. */
#include "autoconf.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "canon.h"
#include "clock.h"
#include "pins.h"
#include "secret.h"
#include "tap.h"

#define T0	((time_t)1795996800)	/* 2026-11-30T00:00:00Z */

static char dir[256];

/* A definition's canonical text and digest, of the JSON s. */
struct def {
	char text[512];
	char digest[CANON_DIGEST_LEN];
};

static void
def_of(const char *s, struct def *d)
{
	json_t *v = json_loads(s, 0, NULL);
	char *t = canon_text(v);

	snprintf(d->text, sizeof(d->text), "%s", t ? t : "");
	canon_digest_text(d->text, strlen(d->text), d->digest);
	free(t);
	json_decref(v);
}

static struct def d1, d2;

/* The formatted text of p (a new string). */
static char *
format(const struct pins *p)
{
	struct buf b;

	buf_init(&b, PINS_FILE_MAX);
	if (pins_format(p, &b) < 0) {
		buf_free(&b);
		return NULL;
	}
	return b.data;
}

static struct pins *
parse(const char *text, struct gw_error *err)
{
	struct pins *p = NULL;

	if (pins_parse(text, strlen(text), "pins", &p, err) < 0)
		return NULL;
	return p;
}

static struct pins *
sample(void)
{
	struct pins *p = pins_new();
	struct gw_error err;
	struct pin a = { "github", PINS_TOOL, "search", d1.digest, T0, "alice", d1.text };
	struct pin b = { "#odd up", PINS_PROMPT, "my prompt%1", d2.digest, T0 + 61, "Jane Doe", NULL };
	struct pin c = { "files", PINS_TEMPLATE, "file:///{path}", d2.digest, 0, "b\xc3\xa9la", NULL };
	struct pin e = { "github", PINS_PROMPT, "review", d2.digest, T0, "alice", d2.text };

	if (pins_set(p, &a, &err) < 0 || pins_set(p, &b, &err) < 0 || pins_set(p, &c, &err) < 0 || pins_set(p, &e, &err) < 0)
		printf("# pins_set: %s\n", err.detail);
	return p;
}

static void
test_round_trip(void)
{
	struct pins *p = sample(), *q;
	struct gw_error err;
	const struct pin *pin;
	char *t1, *t2 = NULL;

	is_int(pins_count(p), 4, "four pins set");
	t1 = format(p);
	q = parse(t1, &err);
	ok(q != NULL, "the formatted text parses%s%s", q ? "" : ": ", q ? "" : err.detail);
	if (q != NULL)
		t2 = format(q);
	is_str(t2, t1, "… and formats the same again");
	pin = q ? pins_find(q, "github", PINS_TOOL, "search") : NULL;
	ok(pin && strcmp(pin->digest, d1.digest) == 0 && pin->when == T0 && strcmp(pin->by, "alice") == 0 &&
	    pin->def && strcmp(pin->def, d1.text) == 0, "a pin found again, all of it");
	pin = q ? pins_find(q, "#odd up", PINS_PROMPT, "my prompt%1") : NULL;
	ok(pin && pin->def == NULL && pin->when == T0 + 61 && strcmp(pin->by, "Jane Doe") == 0,
	    "… one without a definition, its odd names decoded");
	ok(q && pins_find(q, "github", PINS_PROMPT, "search") == NULL && pins_find(q, "github", PINS_TOOL, "Search") == NULL,
	    "the kind and the name's case count");
	ok(strstr(t1, "\n%23odd%20up prompt my%20prompt%251 sha256:") != NULL && strstr(t1, " Jane%20Doe\n") != NULL,
	    "spaces, '%%' and a leading '#' percent-encoded");
	ok(strstr(t1, " 1970-01-01T00:00:00Z b\xc3\xa9la\n") != NULL, "UTF-8 itself; the time RFC 3339");
	ok(strncmp(t1, "# ", 2) == 0 && strstr(t1, "\n%23odd") < strstr(t1, "\nfiles ") &&
	    strstr(t1, "\nfiles ") < strstr(t1, "\ngithub tool") && strstr(t1, "\ngithub tool") < strstr(t1, "\ngithub prompt"),
	    "a header, then sorted by upstream, then kind (tool, prompt, template)");
	ok(strstr(t1, "\n\t{\"description\":") != NULL, "a definition on the line after its pin, after a tab");
	free(t1);
	free(t2);
	pins_free(q);
	pins_free(p);
}

static void
test_set_remove(void)
{
	struct pins *p = sample();
	struct gw_error err;
	struct pin a = { "github", PINS_TOOL, "search", d2.digest, T0 + 5, "bob", NULL };
	struct pin bad = a;

	ok(pins_set(p, &a, &err) == 0 && pins_count(p) == 4 && strcmp(pins_find(p, "github", PINS_TOOL, "search")->by, "bob") == 0,
	    "pins_set replaces a pin of the same key");
	ok(pins_remove(p, "github", PINS_TOOL, "search") == 1 && pins_count(p) == 3 &&
	    pins_find(p, "github", PINS_TOOL, "search") == NULL, "pins_remove removes it");
	ok(pins_remove(p, "github", PINS_TOOL, "search") == 0, "… once");
	bad.by = "";
	ok(pins_set(p, &bad, &err) < 0 && err.code == GW_ECONFIG, "an empty approver is refused (%s)", err.detail);
	bad = a;
	bad.digest = "sha256:abc";
	ok(pins_set(p, &bad, &err) < 0, "a bad digest is refused (%s)", err.detail);
	bad = a;
	bad.def = d1.text;
	ok(pins_set(p, &bad, &err) < 0 && strcmp(err.detail, "the definition's digest is not the pin's") == 0,
	    "a definition of another digest is refused");
	bad.def = "{\"b\":1, \"a\":2}";
	ok(pins_set(p, &bad, &err) < 0 && strcmp(err.detail, "the definition is not canonical JSON") == 0,
	    "a definition not canonical is refused");
	bad = a;
	bad.when = -1;
	ok(pins_set(p, &bad, &err) < 0, "a time before 1970 is refused");
	bad = a;
	bad.kind = PINS_NKINDS;
	ok(pins_set(p, &bad, &err) < 0, "no such kind is refused");
	is_int(pins_count(p), 3, "nothing refused was added");
	pins_free(p);
}

/* tmpl with "@D" the digest of d1, "@1" and "@2" the texts of d1 and d2, into out. */
static void
fill(const char *tmpl, char *out, size_t n)
{
	const char *sub;
	size_t k = 0, len;

	for (; *tmpl && k + 1 < n; tmpl++) {
		sub = tmpl[0] != '@' ? NULL : tmpl[1] == 'D' ? d1.digest : tmpl[1] == '1' ? d1.text : tmpl[1] == '2' ? d2.text : NULL;
		if (sub == NULL) {
			out[k++] = *tmpl;
			continue;
		}
		len = strlen(sub) < n - 1 - k ? strlen(sub) : n - 1 - k;
		memcpy(out + k, sub, len);
		k += len;
		tmpl++;
	}
	out[k] = '\0';
}

/* Each line, after a comment and a good pin (of d1): the error at line 3. */
static const struct {
	const char *line, *want, *what;
} bad_lines[] = {
	{ "up widget x @D 2026-11-30T00:00:00Z bob", "KIND is tool, prompt or template", "a bad kind" },
	{ "up tool x sha256:ABC 2026-11-30T00:00:00Z bob", "DIGEST is \"sha256:\" and 64 lowercase hex digits", "a bad digest" },
	{ "\t@2", "the definition's digest is not the pin's", "a definition of another digest" },
	{ "\t@1 ", "the definition is not canonical JSON", "a definition not canonical (a blank after it)" },
	{ "\t{\"name\":\"search\", \"description\":\"d\"}", "the definition is not canonical JSON", "… (blanks, order)" },
	{ "\t[1]", "the definition is not a JSON object", "a definition not an object" },
	{ "github tool search @D 2026-12-01T00:00:00Z carol", "a second pin of this UPSTREAM, KIND and NAME (the first: line 2)",
	  "a second pin of a key" },
	{ "up tool a%2 @D 2026-11-30T00:00:00Z bob", "NAME: '%' without two hex digits", "a cut percent-encoding" },
	{ "up tool x @D 2026-11-30T00:00:00Z b%zzob", "BY: '%' without two hex digits", "… not hex" },
	{ "u%00p tool x @D 2026-11-30T00:00:00Z bob", "UPSTREAM: %00", "… a NUL" },
	{ "up tool x\x01y @D 2026-11-30T00:00:00Z bob", "NAME: a control byte not percent-encoded", "… a raw control byte" },
	{ "up tool x @D 2026-02-30T00:00:00Z bob", "WHEN is a UTC time as 2026-11-29T22:00:00Z", "a day February has not" },
	{ "up tool x @D 2026-11-30T00:00:00+01:00 bob", "WHEN is a UTC time as 2026-11-29T22:00:00Z", "a time not in UTC" },
	{ "up tool x @D 2026-11-30 00:00:00Z bob", "a pin line has six fields, UPSTREAM KIND NAME DIGEST WHEN BY, not more than 6",
	  "seven fields" },
	{ "up tool x", "a pin line has six fields, UPSTREAM KIND NAME DIGEST WHEN BY, not 3", "three fields" },
	{ " up tool x @D 2026-11-30T00:00:00Z bob", "a line begins with a space (a definition line, with a tab)",
	  "a line begins with a space" },
};

static void
test_errors(void)
{
	char text[4096], tmpl[1024], want[512];
	struct gw_error err;
	struct pins *p;
	size_t i;

	for (i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++) {
		snprintf(tmpl, sizeof(tmpl), "# pins\ngithub tool search @D 2026-11-30T00:00:00Z alice\n%s\n", bad_lines[i].line);
		fill(tmpl, text, sizeof(text));
		memset(&err, 0, sizeof(err));
		p = parse(text, &err);
		snprintf(want, sizeof(want), "pins:3: %s", bad_lines[i].want);
		ok(p == NULL && err.code == GW_ECONFIG, "%s: an error", bad_lines[i].what);
		is_str(err.detail, want, "… at its line");
		pins_free(p);
	}
}

static void
test_definition_lines(void)
{
	char text[4096], *big;
	struct gw_error err;
	struct pins *p;
	size_t n;

	snprintf(text, sizeof(text), "\t%s\n", d1.text);
	ok((p = parse(text, &err)) == NULL && strcmp(err.detail, "pins:1: a definition line without its pin line right before it") == 0,
	    "a definition line first: %s", err.detail);
	snprintf(text, sizeof(text), "github tool search %s 2026-11-30T00:00:00Z alice\n# c\n\t%s\n", d1.digest, d1.text);
	ok((p = parse(text, &err)) == NULL && strcmp(err.detail, "pins:3: a definition line without its pin line right before it") == 0,
	    "… after a comment: %s", err.detail);
	snprintf(text, sizeof(text), "github tool search %s 2026-11-30T00:00:00Z alice\n\t%s\n\t%s\n", d1.digest, d1.text, d1.text);
	ok((p = parse(text, &err)) == NULL && strcmp(err.detail, "pins:3: a definition line without its pin line right before it") == 0,
	    "… a second one: %s", err.detail);
	snprintf(text, sizeof(text), "\r\n  \t \ngithub tool  search\t%s 2026-11-30T00:00:00Z  alice \r\n\t%s\r\n\t\n# end", d1.digest, d1.text);
	p = parse(text, &err);
	ok(p != NULL && pins_count(p) == 1 && pins_find(p, "github", PINS_TOOL, "search")->def != NULL,
	    "blank lines, runs of blanks, CRLF, no final newline: fine");
	pins_free(p);
	n = PINS_LINE_MAX + 1;
	big = malloc(n + 2);
	memset(big, '#', n);
	memcpy(big + n, "\n", 2);
	ok((p = parse(big, &err)) == NULL && strcmp(err.detail, "pins:1: longer than 327680 bytes") == 0,
	    "a line over PINS_LINE_MAX, even a comment: %s", err.detail);
	big[n - 1] = '\n';
	ok((p = parse(big, &err)) != NULL && pins_count(p) == 0, "… one at it is read");
	pins_free(p);
	free(big);
	snprintf(text, sizeof(text), "up tool x%%2a %s 2026-11-30T00:00:00Z bob\n", d1.digest);
	ok((p = parse(text, &err)) != NULL && pins_find(p, "up", PINS_TOOL, "x*") != NULL, "lowercase hex is read");
	pins_free(p);
}

static void
test_times(void)
{
	time_t t = 0;

	ok(clock_parse_rfc3339("2026-11-30T00:00:00Z", &t) == 0 && t == T0, "a time read");
	ok(clock_parse_rfc3339("2024-02-29T23:59:59Z", &t) == 0 && clock_parse_rfc3339("1970-01-01T00:00:00Z", &t) == 0 && t == 0,
	    "a leap day, the epoch");
	ok(clock_parse_rfc3339("2023-02-29T00:00:00Z", &t) < 0 && clock_parse_rfc3339("2026-11-30T24:00:00Z", &t) < 0 &&
	    clock_parse_rfc3339("2026-11-30T00:60:00Z", &t) < 0 && clock_parse_rfc3339("2026-11-30T00:00:60Z", &t) < 0 &&
	    clock_parse_rfc3339("2026-13-01T00:00:00Z", &t) < 0 && clock_parse_rfc3339("1969-12-31T23:59:59Z", &t) < 0 &&
	    clock_parse_rfc3339("2026-11-30t00:00:00Z", &t) < 0 && clock_parse_rfc3339("2026-11-30T00:00:00.5Z", &t) < 0 &&
	    clock_parse_rfc3339("+026-11-30T00:00:00Z", &t) < 0, "no 02-29 of 2023, hour 24, minute or second 60, month 13, 1969, other forms");
	ok(clock_parse_rfc3339("9999-12-31T23:59:59Z", &t) == 0 && t == (time_t)253402300799LL, "9999 is the last year");
}

/* Files: dir/NAME. */
static const char *
path_of(const char *name)
{
	static char p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

/* How many names in dir contain s. */
static int
names_with(const char *s)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) != NULL)
		n += strstr(e->d_name, s) != NULL;
	if (d)
		closedir(d);
	return n;
}

static void
test_files(void)
{
	struct pins *p = NULL, *s = sample();
	struct gw_error err;
	struct stat st;
	char *t1, *t2;

	ok(pins_load(path_of("none"), &p, &err) == 0 && p && pins_count(p) == 0, "a missing file: no pins");
	pins_free(p);
	ok(pins_save(s, path_of("pins"), &err) == 0 && stat(path_of("pins"), &st) == 0 && (st.st_mode & 07777) == 0644,
	    "saved, a new file 0644");
	ok(names_with(".tmp.") == 0, "… no temporary file left");
	ok(pins_load(path_of("pins"), &p, &err) == 0 && pins_count(p) == 4, "… loaded again");
	t1 = format(s);
	t2 = format(p);
	is_str(t2, t1, "… the same pins");
	free(t1);
	free(t2);
	pins_remove(p, "files", PINS_TEMPLATE, "file:///{path}");
	chmod(path_of("pins"), 0600);
	ok(pins_save(p, path_of("pins"), &err) == 0 && stat(path_of("pins"), &st) == 0 && (st.st_mode & 07777) == 0600,
	    "saved over: the mode kept");
	pins_free(p);
	ok(pins_load(path_of("pins"), &p, &err) == 0 && pins_count(p) == 3 && names_with(".tmp.") == 0, "… the change there");
	pins_free(p);
	chmod(path_of("pins"), 0664);
	ok(pins_load(path_of("pins"), &p, &err) < 0 && strstr(err.detail, "writable by group or others") != NULL,
	    "a file others may write is refused: %s", err.detail);
	ok(pins_load(dir, &p, &err) < 0 && strstr(err.detail, "not a regular file") != NULL, "a directory is refused");
	ok(pins_save(s, path_of("no/such/dir/pins"), &err) < 0 && strstr(err.detail, "temporary file") != NULL,
	    "a save into a missing directory fails: %s", err.detail);
	pins_free(s);
}

#define ROUNDS	25

/* pins_update's change: one more pin, named by arg. */
static int
add_one(struct pins *p, void *arg, struct gw_error *err)
{
	struct pin pin = { "race", PINS_TOOL, arg, d1.digest, T0, "racer", d1.text };

	return pins_set(p, &pin, err);
}

static int
skip_save(struct pins *p, void *arg, struct gw_error *err)
{
	(void)p;
	(void)arg;
	(void)err;
	return 1;
}

static void
test_update(void)
{
	struct pins *p = NULL;
	struct gw_error err;
	pid_t kid[2];
	int i, k, status, fine = 1;
	char name[32];

	for (k = 0; k < 2; k++)
		if ((kid[k] = fork()) == 0) {
			for (i = 0; i < ROUNDS; i++) {
				snprintf(name, sizeof(name), "tool_%d_%d", k, i);
				if (pins_update(path_of("race"), add_one, name, &err) != 0)
					_exit(1);
			}
			_exit(0);
		}
	for (k = 0; k < 2; k++)
		fine &= waitpid(kid[k], &status, 0) == kid[k] && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	ok(fine, "two processes, %d updates each", ROUNDS);
	ok(pins_load(path_of("race"), &p, &err) == 0 && pins_count(p) == 2 * ROUNDS, "… every pin landed (%zu)",
	    p ? pins_count(p) : 0);
	pins_free(p);
	ok(pins_update(path_of("race"), skip_save, NULL, &err) == 1 && names_with(".tmp.") == 0, "nothing to save: 1");
	ok(names_with("race.lock") == 1, "the lock file beside it");
}

int
main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");

	tap_args(argc, argv);
	if (secret_init() < 0)
		return 1;
	snprintf(dir, sizeof(dir), "%s/mcpgate-test-pins-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		return 1;
	def_of("{\"name\":\"search\",\"description\":\"Search code\",\"inputSchema\":{\"type\":\"object\"}}", &d1);
	def_of("{\"name\":\"review\",\"arguments\":[{\"name\":\"pr\",\"required\":true}]}", &d2);
	run_case(test_round_trip);
	run_case(test_set_remove);
	run_case(test_errors);
	run_case(test_definition_lines);
	run_case(test_times);
	run_case(test_files);
	run_case(test_update);
	unlink(path_of("pins"));
	unlink(path_of("race"));
	unlink(path_of("race.lock"));
	rmdir(dir);
	return done_testing();
}
