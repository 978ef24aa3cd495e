/* Configuration files with includes (config_load: src/config/config.c, config_keys.c,
 * cfgfile.c). The input is cut into up to 8 files at each line "%%\n": main.conf, then 1.conf, 2.conf, ... in a private
 * directory that is also the working directory, so that `include = 1.conf`,
 * `include = *.conf` and relative secret files stay inside it; a '/' in the input
 * becomes '_', so nothing outside is ever named. Properties: a load either succeeds or
 * reports at least one error, each "file:line: ..." or "file: ..." of a file in the
 * directory; a successful load can be asked whether it changed (it did not), and
 * `mcpgate -t`'s warnings on it (confcheck.c) each name a file of the directory. */
#include "autoconf.h"

#include <sys/stat.h>

#include "confcheck.h"
#include "fuzz.h"

#define FILES_MAX	8

static char dir[512];

void
fuzz_setup(void)
{
	snprintf(dir, sizeof(dir), "%s/mcpgate-fuzz-config-XXXXXX", fuzz_tmpdir());
	FUZZ_CHECK(mkdtemp(dir) != NULL);
	FUZZ_CHECK(chdir(dir) == 0);
}

static void
name_of(size_t i, char *out, size_t n)
{
	if (i == 0)
		snprintf(out, n, "main.conf");
	else
		snprintf(out, n, "%zu.conf", i);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[32], main_path[600];
	static struct confcheck cc;
	struct cfg_errors errs;
	struct config *cfg = NULL;
	size_t nfiles = 0, start = 0, i, j;
	FILE *f;
	int rc;

	while (nfiles < FILES_MAX) {
		const uint8_t *sep = NULL;

		for (j = start; nfiles < FILES_MAX - 1 && j + 3 <= size; j++)
			if (data[j] == '%' && data[j + 1] == '%' && data[j + 2] == '\n' && (j == start || data[j - 1] == '\n')) {
				sep = data + j;
				break;
			}
		name_of(nfiles++, name, sizeof(name));
		FUZZ_CHECK((f = fopen(name, "wb")) != NULL);
		for (j = start; j < (sep ? (size_t)(sep - data) : size); j++)
			fputc(data[j] == '/' ? '_' : data[j], f);
		fclose(f);
		if (sep == NULL)
			break;
		start = (size_t)(sep - data) + 3;
	}
	snprintf(main_path, sizeof(main_path), "%s/main.conf", dir);
	rc = config_load(main_path, &cfg, &errs);
	FUZZ_CHECK(cfg != NULL);
	if (rc == 0) {
		FUZZ_CHECK(errs.n == 0 && !cfg->broken);
		FUZZ_CHECK(cfg->origin != NULL && cfg->prm_url != NULL && cfg->n_files >= 1);
		FUZZ_CHECK(!config_changed(cfg));
		confcheck_run(cfg, NULL, &cc);
		for (i = 0; i < cc.n; i++)
			FUZZ_CHECK(strncmp(cc.msg[i], dir, strlen(dir)) == 0 && memchr(cc.msg[i], '\0', sizeof(cc.msg[i])));
	} else {
		FUZZ_CHECK(errs.n > 0 && cfg->broken);
		for (i = 0; i < errs.n; i++)
			FUZZ_CHECK(strncmp(errs.err[i].detail, dir, strlen(dir)) == 0 && memchr(errs.err[i].detail, '\0', sizeof(errs.err[i].detail)));
	}
	config_unref(cfg);
	for (i = 0; i < nfiles; i++) {
		name_of(i, name, sizeof(name));
		unlink(name);
	}
	return 0;
}
