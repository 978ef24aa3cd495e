/* Unit tests: the requestState of a relayed input_required (input_seal.c: wrapped and
 * unwrapped, bound to the caller, the key, the upstream's own state and an end; the
 * strict layout; what a caller sees holds the caller's digest nowhere in clear), the
 * header values of a stateless request (negotiate_header_encode, read back by
 * negotiate_header_value), and the mailbox older clients' answers wait in (mailbox.c:
 * taken once, by its key, until its end; full, too long, unusable). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input_seal.h"
#include "mailbox.h"
#include "negotiate.h"
#include "secret.h"
#include "tap.h"

static const int64_t now = 1700000000000LL;	/* ms */

static void
test_wrap(void)
{
	unsigned char skey[32] = { 7 }, other_skey[32] = { 8 }, key[32], other[32];
	char up[INPUT_UPSTREAM_MAX], *w, *w2, *t, longname[INPUT_UPSTREAM_MAX + 1];
	const char *state;

	input_key_derive(key, skey);
	input_key_derive(other, other_skey);
	w = input_wrap(key, "who-a", "tracker", "{\"step\":1}", now + INPUT_STATE_MS);
	ok(w && strchr(w, '.') && strcmp(strchr(w, '.') + 1, "{\"step\":1}") == 0,
	    "wrapped: SEAL.STATE, the upstream's state as it wrote it (%s)", w ? w : "NULL");
	ok(w && strstr(w, "who-a") == NULL && strstr(w, "tracker") == NULL, "… the caller and the upstream sealed");
	ok(input_unwrap(key, w, "who-a", now, up, &state) == 0 && strcmp(up, "tracker") == 0 && state &&
	    strcmp(state, "{\"step\":1}") == 0 && state > w && state < w + strlen(w),
	    "unwrapped: the upstream, its state (in the string)");
	ok(input_unwrap(key, w, "who-b", now, up, &state) < 0 && up[0] == '\0' && state == NULL,
	    "another caller: refused, nothing given");
	ok(input_unwrap(other, w, "who-a", now, up, &state) < 0, "another session key: refused");
	ok(input_unwrap(key, w, "who-a", now + INPUT_STATE_MS + 1, up, &state) < 0, "past its end: refused");
	ok(input_unwrap(key, w, "who-a", now + INPUT_STATE_MS, up, &state) == 0, "at its end: still good");
	t = malloc(strlen(w) + 16);
	snprintf(t, strlen(w) + 16, "%s-TAMPERED", w);
	ok(input_unwrap(key, t, "who-a", now, up, &state) < 0, "its state altered (a suffix): refused");
	snprintf(t, strlen(w) + 16, "%s", w);
	*strchr(t, '.') = '\0';
	ok(input_unwrap(key, t, "who-a", now, up, &state) < 0, "its state dropped: refused");
	snprintf(t, strlen(w) + 16, "%s", w);
	t[3] = t[3] == 'A' ? 'B' : 'A';
	ok(input_unwrap(key, t, "who-a", now, up, &state) < 0, "its seal altered: refused");
	free(t);

	w2 = input_wrap(key, "who-a", "tracker", NULL, now + INPUT_STATE_MS);
	ok(w2 && strchr(w2, '.') == NULL, "no state of the upstream's: the seal alone");
	ok(input_unwrap(key, w2, "who-a", now, up, &state) == 0 && state == NULL && strcmp(up, "tracker") == 0,
	    "… unwrapped: the upstream, no state");
	t = malloc(strlen(w2) + 8);
	snprintf(t, strlen(w2) + 8, "%s.x", w2);
	ok(input_unwrap(key, t, "who-a", now, up, &state) < 0, "… a state added to it: refused");
	free(t);
	w2 = (free(w2), input_wrap(key, "who-a", "tracker", "", now + INPUT_STATE_MS));
	ok(w2 && input_unwrap(key, w2, "who-a", now, up, &state) == 0 && state && state[0] == '\0',
	    "an empty state is a state");
	free(w2);

	memset(longname, 'u', INPUT_UPSTREAM_MAX);
	longname[INPUT_UPSTREAM_MAX] = '\0';
	ok(input_wrap(key, "who-a", longname, "s", now) == NULL, "an upstream name too long: not wrapped");
	ok(input_wrap(key, "", "tracker", "s", now) == NULL && input_wrap(key, "who-a", "", "s", now) == NULL,
	    "no caller or no upstream: not wrapped");
	ok(input_unwrap(key, "", "who-a", now, up, &state) < 0 && input_unwrap(key, ".s", "who-a", now, up, &state) < 0 &&
	    input_unwrap(key, "not-ours", "who-a", now, up, &state) < 0, "strings not ours: refused");
	free(w);
}

/* The layout behind an authentic seal, read strictly. */
static void
test_parse(void)
{
	unsigned char p[256], d[32];
	char up[INPUT_UPSTREAM_MAX];
	size_t n = 0;
	int i;

	for (i = 7; i >= 0; i--)
		p[n++] = (unsigned char)((uint64_t)(now + 1000) >> (8 * i));
	p[n++] = 1;
	secret_sha256("st", 2, d);
	memcpy(p + n, d, 32), n += 32;
	p[n++] = 3;
	memcpy(p + n, "who", 3), n += 3;
	p[n++] = 2;
	memcpy(p + n, "up", 2), n += 2;
	ok(input_parse(p, n, "who", "st", now, up) == 0 && strcmp(up, "up") == 0, "a plaintext of the layout: read");
	ok(input_parse(p, n - 1, "who", "st", now, up) < 0 && up[0] == '\0', "one byte short: refused");
	p[n] = 'x';
	ok(input_parse(p, n + 1, "who", "st", now, up) < 0, "one byte over: refused");
	ok(input_parse(p, n, "who", NULL, now, up) < 0, "a state flagged, none given: refused");
	p[8] = 2;
	ok(input_parse(p, n, "who", "st", now, up) < 0, "a flag neither 0 nor 1: refused");
	p[8] = 1;
	p[n - 3] = 0;
	ok(input_parse(p, n, "who", "st", now, up) < 0, "an empty upstream name: refused");
}

static void
test_header_encode(void)
{
	char out[64], back[64];

	ok(negotiate_header_encode("tools/call", out, sizeof(out)) == 0 && strcmp(out, "tools/call") == 0,
	    "visible ASCII: as it is");
	ok(negotiate_header_encode("a b", out, sizeof(out)) == 0 && strcmp(out, "a b") == 0, "a blank inside: as it is");
	ok(negotiate_header_encode(" a", out, sizeof(out)) == 0 && strcmp(out, "=?base64?IGE=?=") == 0,
	    "a blank at an end: base64 (%s)", out);
	ok(negotiate_header_encode("t\xc3\xa9", out, sizeof(out)) == 0 && strcmp(out, "=?base64?dMOp?=") == 0 &&
	    negotiate_header_value(out, back, sizeof(back)) == 0 && strcmp(back, "t\xc3\xa9") == 0,
	    "not ASCII: base64, read back as itself (%s)", out);
	ok(negotiate_header_encode("=?base64?YQ==?=", out, sizeof(out)) == 0 && strcmp(out, "=?base64?YQ==?=") != 0 &&
	    negotiate_header_value(out, back, sizeof(back)) == 0 && strcmp(back, "=?base64?YQ==?=") == 0,
	    "a value that reads as encoded: encoded itself, read back as itself (%s)", out);
	ok(negotiate_header_encode("a\r\nX: y", out, sizeof(out)) == 0 && strchr(out, '\r') == NULL &&
	    strchr(out, '\n') == NULL, "a line break cannot get into a header (%s)", out);
	ok(negotiate_header_encode("0123456789", out, 10) < 0 && negotiate_header_encode("\xff\xff\xff\xff", out, 12) < 0,
	    "too long for out: refused");
}

static void
test_mailbox(void)
{
	size_t size = mailbox_region_def.size;
	void *mem = calloc(1, size);
	struct mailbox *m = mem;
	unsigned char k[MAILBOX_KEY_BYTES] = { 1 }, k2[MAILBOX_KEY_BYTES] = { 2 };
	char out[64], big[MAILBOX_VALUE_MAX + 1];
	int i, rc = 0;

	state_region_make(&mailbox_region_def, mem, size, 0);
	ok(mailbox_put(m, k, "answer-1", now + 1000, now) == 0, "put");
	ok(mailbox_take(m, k2, out, sizeof(out), now) == 0, "another key: nothing");
	ok(mailbox_take(m, k, out, sizeof(out), now) == 1 && strcmp(out, "answer-1") == 0, "taken: the value");
	ok(mailbox_take(m, k, out, sizeof(out), now) == 0, "taken once: gone");
	ok(mailbox_put(m, k, "a", now + 1000, now) == 0 && mailbox_put(m, k, "b", now + 1000, now) == 0 &&
	    mailbox_take(m, k, out, sizeof(out), now) == 1 && strcmp(out, "b") == 0 &&
	    mailbox_take(m, k, out, sizeof(out), now) == 0, "put twice: the second replaces the first");
	ok(mailbox_put(m, k, "late", now + 1000, now) == 0 && mailbox_take(m, k, out, sizeof(out), now + 1000) == 0,
	    "past its end: gone");
	ok(mailbox_put(m, k, "x", now, now) < 0 && mailbox_put(m, k, "", now + 1000, now) < 0, "no end left, or empty: refused");
	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ok(mailbox_put(m, k, big, now + 1000, now) < 0, "too long: refused");
	ok(mailbox_put(m, k, "0123456789", now + 1000, now) == 0 && mailbox_take(m, k, out, 5, now) == 0 &&
	    mailbox_take(m, k, out, sizeof(out), now) == 0, "one that does not fit out: not given, removed all the same");
	for (i = 0; i < MAILBOX_SLOTS; i++) {
		k2[1] = (unsigned char)i;
		rc |= mailbox_put(m, k2, "full", now + 1000, now);
	}
	ok(rc == 0 && mailbox_put(m, k, "one more", now + 1000, now) < 0, "every slot live: nothing more put");
	ok(mailbox_put(m, k, "one more", now + 2000, now + 1000) == 0, "… until their end: room again");
	ok(mailbox_put(NULL, k, "x", now + 1000, now) < 0 && mailbox_take(NULL, k, out, sizeof(out), now) < 0,
	    "no region: unusable");
	memset(mem, 0x5a, sizeof(uint32_t));	/* its magic written over */
	ok(mailbox_take(m, k, out, sizeof(out), now) < 0, "a region written over: unusable");
	free(mem);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	if (secret_init() < 0)
		return 1;
	run_case(test_wrap);
	run_case(test_parse);
	run_case(test_header_encode);
	run_case(test_mailbox);
	return done_testing();
}
