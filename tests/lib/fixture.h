/* fixture.h — what the unit tests set up: a temporary directory (removed with all it
 * holds when the test exits), files written in it, and a configuration from text.
 *
 *   fixture_dir()               /tmp/mcpgate-unit-XXXXXX, made on first use
 *   fixture_bytes(name, p, n)   writes dir/name, returns its path
 *   fixture_file(name, text)    the same for a string
 *   fixture_config(text)        a configuration loaded from text (NULL, with every error
 *                               as a TAP comment, when it does not load)
 *
 * A returned path stays valid for the next FIXTURE_PATHS - 1 calls. */
#ifndef GW_FIXTURE_H
#define GW_FIXTURE_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

#define FIXTURE_PATHS	8

static char fixture_dirbuf[] = "/tmp/mcpgate-unit-XXXXXX";
static int fixture_made;

static __attribute__((unused)) int
fixture_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static __attribute__((unused)) void
fixture_cleanup(void)
{
	nftw(fixture_dirbuf, fixture_rm, 8, FTW_DEPTH | FTW_PHYS);
}

static __attribute__((unused)) const char *
fixture_dir(void)
{
	if (!fixture_made) {
		if (mkdtemp(fixture_dirbuf) == NULL) {
			printf("Bail out! mkdtemp %s\n", fixture_dirbuf);
			exit(1);
		}
		fixture_made = 1;
		atexit(fixture_cleanup);
	}
	return fixture_dirbuf;
}

static __attribute__((unused)) const char *
fixture_bytes(const char *name, const void *data, size_t len)
{
	static char paths[FIXTURE_PATHS][512];
	static unsigned k;
	char *path = paths[k++ % FIXTURE_PATHS];
	FILE *f;

	snprintf(path, sizeof(paths[0]), "%s/%s", fixture_dir(), name);
	if ((f = fopen(path, "w")) == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
	return path;
}

static __attribute__((unused)) const char *
fixture_file(const char *name, const char *text)
{
	return fixture_bytes(name, text, strlen(text));
}

static __attribute__((unused)) struct config *
fixture_config(const char *text)
{
	static unsigned n;
	struct cfg_errors errs;
	struct config *cfg = NULL;
	char name[32];
	const char *path;
	size_t i;

	snprintf(name, sizeof(name), "fixture-%u.conf", n++);
	path = fixture_file(name, text);
	if (config_load(path, &cfg, &errs) < 0) {
		for (i = 0; i < errs.n; i++)
			printf("# %s\n", errs.err[i].detail);
		config_unref(cfg);
		cfg = NULL;
	}
	unlink(path);
	return cfg;
}

#endif
