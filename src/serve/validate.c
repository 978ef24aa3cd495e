/* validate — `mcpgate validate`: see validate.h. Remote references are never fetched:
 * --remotes DIR serves a URL's path from DIR (http://host/a/b.json is DIR/a/b.json). */
#include "autoconf.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "jschema.h"
#include "validate.h"

static void
usage(void)
{
	fputs("usage: mcpgate validate [--remotes DIR] [--format] SCHEMA-FILE INSTANCE-FILE...\n", stderr);
}

/* The document of a remote URL: DIR and the URL's path, when the URL has an authority
 * and its path no ".." (a reference stays under DIR). */
static json_t *
remote(const char *uri, void *arg)
{
	const char *dir = arg, *p;
	char path[4096];

	if ((p = strstr(uri, "://")) == NULL || (p = strchr(p + 3, '/')) == NULL || strstr(p, "/..") != NULL)
		return NULL;
	if ((size_t)snprintf(path, sizeof(path), "%s%.*s", dir, (int)strcspn(p, "?#"), p) >= sizeof(path))
		return NULL;
	return json_load_file(path, JSON_DECODE_ANY, NULL);
}

/* One instance file: its line; VALIDATE_OK, _INVALID or _ERROR. */
static int
check(const struct jschema *s, const char *file)
{
	struct jschema_error e;
	json_error_t jerr;
	json_t *inst;
	int rc;

	if ((inst = json_load_file(file, JSON_DECODE_ANY, &jerr)) == NULL) {
		fprintf(stderr, "mcpgate validate: %s: %s (line %d)\n", file, jerr.text, jerr.line);
		return VALIDATE_ERROR;
	}
	rc = jschema_validate(s, inst, &e);
	json_decref(inst);
	if (rc == 1) {
		printf("%s: valid\n", file);
		return VALIDATE_OK;
	}
	printf("%s: invalid at \"%s\": %s (%s%s%s\"%s\")\n", file, e.instance_path, e.message,
	    e.keyword[0] ? "keyword " : "", e.keyword, e.keyword[0] ? ", schema " : "schema ", e.schema_path);
	return VALIDATE_INVALID;
}

int
validate_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "remotes", required_argument, NULL, 'R' },
		{ "format", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct jschema_opts o = { 0 };
	struct jschema *s = NULL;
	json_error_t jerr;
	json_t *schema = NULL;
	struct gw_error err;
	int c, i, one, rc = VALIDATE_ERROR;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'R': o.resolve = remote; o.resolve_arg = optarg; break;
		case 'F': o.format_assert = 1; break;
		default: usage(); goto out;
		}
	}
	if (argc - optind < 2) {
		usage();
		goto out;
	}
	if ((schema = json_load_file(argv[optind], JSON_DECODE_ANY, &jerr)) == NULL) {
		fprintf(stderr, "mcpgate validate: %s: %s (line %d)\n", argv[optind], jerr.text, jerr.line);
		goto out;
	}
	if ((s = jschema_compile(schema, &o, &err)) == NULL) {
		fprintf(stderr, "mcpgate validate: %s: %s\n", argv[optind], err.detail);
		goto out;
	}
	rc = VALIDATE_OK;
	for (i = optind + 1; i < argc; i++)
		if ((one = check(s, argv[i])) > rc)
			rc = one;
out:
	jschema_free(s);
	json_decref(schema);
	return rc;
}
