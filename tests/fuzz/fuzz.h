/* fuzz.h — what every libFuzzer harness of tests/fuzz/ shares: its LLVMFuzzerInitialize
 * (a quiet logger, libsodium, then the harness's own fuzz_setup if it has one), inputs as
 * C strings, a fixed configuration, and a check that stops the run. Each harness
 * includes it once. */
#ifndef GW_FUZZ_H
#define GW_FUZZ_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "claims.h"
#include "config.h"
#include "log.h"
#include "secret.h"

/* A property that does not hold is a finding: report it and abort (libFuzzer keeps the input). */
#define FUZZ_CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: property does not hold: %s\n", __FILE__, __LINE__, #cond); \
			abort(); \
		} \
	} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* A harness's own set-up, when it has one: it defines fuzz_setup, which runs once before
 * the first input, after what LLVMFuzzerInitialize below makes ready. */
void fuzz_setup(void) __attribute__((weak));

/* Every harness's start: logs go nowhere (the catalog and the loader log what they
 * refuse); libsodium is ready; then the harness's fuzz_setup, if it defines one. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	(void)argc;
	(void)argv;
	log_init(fd < 0 ? 2 : fd, GW_LOG_ERR);
	FUZZ_CHECK(secret_init() == 0);
	if (fuzz_setup != NULL)
		fuzz_setup();
	return 0;
}

/* Every field of c a terminated string within its size. */
static void __attribute__((unused))
fuzz_claims_ok(const struct claims *c)
{
	FUZZ_CHECK(memchr(c->subject, '\0', sizeof(c->subject)) != NULL);
	FUZZ_CHECK(memchr(c->client_id, '\0', sizeof(c->client_id)) != NULL);
	FUZZ_CHECK(memchr(c->scope, '\0', sizeof(c->scope)) != NULL);
	FUZZ_CHECK(memchr(c->groups, '\0', sizeof(c->groups)) != NULL);
	FUZZ_CHECK(memchr(c->tenant, '\0', sizeof(c->tenant)) != NULL);
}

/* The input as a NUL-terminated string (it ends at its first NUL). Free it. */
static char *__attribute__((unused))
fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	FUZZ_CHECK(s != NULL);
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Splits the input at the first NUL byte: a and b are NUL-terminated copies. */
static void __attribute__((unused))
fuzz_split2(const uint8_t *data, size_t size, char **a, char **b)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t n = nul ? (size_t)(nul - data) : size;

	*a = fuzz_cstr(data, n);
	*b = nul ? fuzz_cstr(nul + 1, size - n - 1) : fuzz_cstr(data, 0);
}

/* Where a harness keeps its files: $TMPDIR (tests/fuzz/run sets it in _build), else /tmp. */
static const char *__attribute__((unused))
fuzz_tmpdir(void)
{
	const char *t = getenv("TMPDIR");

	return t && *t ? t : "/tmp";
}

/* A configuration loaded from text (written to a temporary file): the harness's fixed
 * setting. Any error aborts: the text is the harness's own. */
static struct config *__attribute__((unused))
fuzz_config(const char *text)
{
	struct cfg_errors errs;
	struct config *cfg;
	char path[512];
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "%s/mcpgate-fuzz-conf-XXXXXX", fuzz_tmpdir());
	FUZZ_CHECK((fd = mkstemp(path)) >= 0);
	FUZZ_CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	if (config_load(path, &cfg, &errs) < 0) {
		for (i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.err[i].detail);
		abort();
	}
	unlink(path);
	return cfg;
}

#endif
