/* main — command line (docs/ARCHITECTURE.md §2), start-up, and the only exit. */
#include "autoconf.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config.h"
#include "confcheck.h"
#include "curlload.h"
#include "explain.h"
#include "front.h"
#include "gateway.h"
#include "log.h"
#include "pins_cmd.h"
#include "secret.h"
#include "validate.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

#define BUILT_CONFIG	SYSCONFDIR "/mcpgate/mcpgate.conf"

/* Every option here is in mcpgate(8) (tests/docs/man.sh checks it). */
static void
usage(FILE *f)
{
	fputs("usage: mcpgate [-c FILE] [-w N]        serve (FastCGI on a listening fd 0, else one CGI request)\n"
	    "       mcpgate -t [-c FILE] [--catalog FILE]  check the configuration\n"
	    "       mcpgate explain [-c FILE] --claims JSON [--tool NAME] [--json]\n"
	    "                       [--catalog FILE | --save-catalog FILE]\n"
	    "                                        which tools a caller sees, and why\n"
	    "       mcpgate pins [-c FILE] [--catalog FILE] [--json] status [UPSTREAM[/NAME]...]\n"
	    "       mcpgate pins [-c FILE] [--catalog FILE] diff [UPSTREAM[/NAME]...]\n"
	    "       mcpgate pins [-c FILE] [--catalog FILE] approve [--by WHO] (--all-new | UPSTREAM[/NAME]...)\n"
	    "                                        records against the pins file; approve them\n"
	    "       mcpgate validate [--remotes DIR] [--format] SCHEMA-FILE INSTANCE-FILE...\n"
	    "                                        instances against a JSON Schema, as tools/call's arguments\n"
	    "       mcpgate --version | --help\n"
	    "FILE defaults to $MCPGATE_CONFIG, else " BUILT_CONFIG ".\n", f);
}

static const char *
default_config(void)
{
	const char *env = getenv("MCPGATE_CONFIG");

	return env && *env ? env : BUILT_CONFIG;
}

/* A run the web server made for one request: RFC 3875 has the server set
 * GATEWAY_INTERFACE, and fd 0 is no FastCGI listening socket. Such a run takes nothing
 * from its command line, which the server may have made of the request's query string
 * (RFC 3875 §4.4: "?-c+/some/file" would choose the configuration); its configuration
 * is the one the server's environment names, or the built-in path. */
static int
cgi_run(void)
{
	return getenv("GATEWAY_INTERFACE") != NULL && !front_is_fastcgi();
}

static void
print_errors(const struct cfg_errors *errs)
{
	size_t i;

	config_errors_print(errs, stderr);
	for (i = 0; i < errs->n_warn; i++)
		fprintf(stderr, "warning: %s\n", errs->warn[i]);
}

/* -t's warnings (confcheck.h): against catalog_path (explain's --catalog format) when
 * given, else the catalog the gateway last saved in the state file, when there is one;
 * line says which (to print after the configuration's). 0, or -1 when catalog_path
 * cannot be used (said on stderr). */
static int
check_warnings(const struct config *cfg, const char *catalog_path, char *line, size_t len)
{
	static struct confcheck cc;
	json_t *notes = json_array(), *doc, *n;
	struct gw_error err = { GW_OK, 0, "" };
	char why[600] = "";
	size_t i;

	if (catalog_path) {
		if ((doc = explain_catalog_load(cfg, catalog_path, notes)) == NULL) {
			json_decref(notes);
			return -1;
		}
		snprintf(why, sizeof(why), "checked against %s", catalog_path);
	} else if ((doc = gateway_saved_catalog(cfg, &err)) != NULL)
		snprintf(why, sizeof(why), "checked against the catalog the gateway saved in its state file");
	else
		snprintf(why, sizeof(why), "%s", err.detail);
	confcheck_run(cfg, doc, &cc);
	json_array_foreach(notes, i, n)
		fprintf(stderr, "note: %s\n", json_string_value(n));
	for (i = 0; i < cc.n; i++)
		fprintf(stderr, "warning: %s\n", cc.msg[i]);
	if (cc.dropped)
		fprintf(stderr, "(%zu more warnings)\n", cc.dropped);
	line[0] = '\0';
	if (doc)
		snprintf(line, len, "catalog: %s (%zu tools, %zu prompts, %zu resources, %zu resource templates)\n", why,
		    catalog_count(doc, CATALOG_TOOLS), catalog_count(doc, CATALOG_PROMPTS),
		    catalog_count(doc, CATALOG_RESOURCES), catalog_count(doc, CATALOG_TEMPLATES));
	else if (cfg->n_upstreams)
		snprintf(line, len, "catalog: none to check tools and patterns against (%s; mcpgate -t --catalog FILE "
		    "takes what mcpgate explain --save-catalog wrote)\n", why);
	json_decref(doc);
	json_decref(notes);
	return 0;
}

static int
check_config(const char *path, const char *catalog_path)
{
	struct cfg_errors errs;
	struct config *cfg;
	int rc;

	char note[8192], line[1024];

	rc = config_load(path, &cfg, &errs);
	print_errors(&errs);
	if (rc == 0 && check_warnings(cfg, catalog_path, line, sizeof(line)) < 0)
		rc = -1;
	else if (rc == 0) {
		printf("%s: ok (%zu upstreams, %zu groups, %zu tenants)\n", path,
		    cfg->n_upstreams, cfg->n_groups, cfg->n_tenants);
		gateway_state_note(cfg, note, sizeof(note));
		fputs(note, stdout);
		fputs(line, stdout);
		confcheck_credentials_note(cfg, note, sizeof(note));
		fputs(note, stdout);
	}
	config_unref(cfg);
	return rc < 0 ? 1 : 0;
}

/* jansson's hash seed: its own seeding opens /dev/urandom, libsodium's random bytes come
 * from getrandom(2) (a CGI run pays for every system call). */
static void
seed_json(void)
{
	uint32_t seed;

	secret_random_bytes(&seed, sizeof(seed));
	json_object_seed(seed | 1);	/* 0 would ask jansson to seed itself */
}

/* A configuration that keeps FastCGI from starting: every error through log_fatal, to
 * the log-file the broken configuration names when it names one that opens (what the
 * operator reads), else to stderr and syslog. */
static void
refuse_config(const struct gateway *gw, const struct cfg_errors *errs)
{
	size_t i;

	if (gw->failed && gw->failed->log_file && log_open(gw->failed->log_file) < 0)
		log_fatal("log-file %s: cannot open", gw->failed->log_file);
	for (i = 0; i < errs->n; i++)
		log_fatal("config: %s", errs->err[i].detail);
	if (errs->dropped)
		log_fatal("config: %zu more errors", errs->dropped);
	log_fatal("%s: not starting", gw->config_path);
}

static int
serve(const char *path, long workers)
{
	struct cfg_errors errs;
	struct gateway gw;
	int rc, fastcgi;
	size_t i;

	if (front_init() < 0) {
		log_fatal("cannot initialise libfcgi; not starting");
		return 1;
	}
	fastcgi = front_is_fastcgi();
	if (gateway_init(&gw, path, &errs) < 0) {
		if (fastcgi) {	/* refuse to start; a CGI request still gets its 500 */
			refuse_config(&gw, &errs);
			gateway_free(&gw);
			return 1;
		}
		for (i = 0; i < errs.n; i++)
			log_err(NULL, "config: %s", errs.err[i].detail);
	}
	if (gw.shared == NULL && fastcgi) {	/* refuse rather than serve unshared */
		log_fatal("%s", gw.state_error);
		gateway_free(&gw);
		return 1;
	} else if (gw.shared == NULL && gw.cfg)
		log_err(NULL, "%s", gw.state_error);
	if (fastcgi) {
		if (workers == 0)
			workers = gw.cfg->workers;
		rc = front_fastcgi(&gw, workers);
	} else
		rc = front_cgi(&gw);
	gateway_free(&gw);
	return rc;
}

/* Long: the option table, then each mode of the command line (explain, pins, -t, CGI,
 * FastCGI) in a few lines of its own. */
/* The commands besides serving and -t, one row each: the word, its main, its exit code
 * when libsodium does not start. They log errors alone to stderr (upstream trouble is
 * summed up as notes). */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv, const char *config_path);
	int trouble;
} commands[] = {
	{ "explain", explain_main, 1 },
	{ "pins", pins_cmd_main, 2 },
};

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "test", no_argument, NULL, 't' },
		{ "catalog", required_argument, NULL, 'K' },
		{ "workers", required_argument, NULL, 'w' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *path = default_config(), *catalog = NULL;
	long workers = 0;
	size_t i;
	int c, test = 0;
	char *end;

	curlload_env();
	if (cgi_run()) {
		/* A request header "Proxy:" is HTTP_PROXY here, never a proxy of ours. */
		unsetenv("HTTP_PROXY");
		if (secret_init() < 0) {
			fprintf(stderr, "mcpgate: libsodium failed to initialise\n");
			return 1;
		}
		seed_json();
		log_init(2, GW_LOG_INFO);
		if (argc > 1)
			log_warn(NULL, "a CGI run takes no arguments: %d ignored (the configuration is "
			    "$MCPGATE_CONFIG's, else the built-in path)", argc - 1);
		return serve(path, 0);
	}
	for (i = 0; argc > 1 && i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) != 0)
			continue;
		if (secret_init() < 0) {
			fprintf(stderr, "mcpgate: libsodium failed to initialise\n");
			return commands[i].trouble;
		}
		log_init(2, GW_LOG_ERR);
		return commands[i].run(argc - 1, argv + 1, path);
	}
	if (argc > 1 && strcmp(argv[1], "validate") == 0)
		return validate_main(argc - 1, argv + 1);
	while ((c = getopt_long(argc, argv, "c:tw:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 't':
			test = 1;
			break;
		case 'K':
			catalog = optarg;
			break;
		case 'w':
			workers = strtol(optarg, &end, 10);
			if (*end || workers < 1 || workers > 256) {
				fprintf(stderr, "mcpgate: -w: expected 1 to 256\n");
				return 2;
			}
			break;
		case 'V':
			printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || (catalog && !test)) {
		usage(stderr);
		return 2;
	}
	if (test)
		return check_config(path, catalog);
	if (secret_init() < 0) {
		log_fatal("libsodium failed to initialise; not starting");
		return 1;
	}
	seed_json();
	log_init(2, GW_LOG_INFO);
	return serve(path, workers);
}
