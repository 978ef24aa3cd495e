/* upstream_cli — drives the upstream client (src/net/upstream*.c) from the command line,
 * for tests/fed/upstream.sh.
 *
 *   upstream_cli -c CONF [-n COUNT] [-W FILE] [-a N] [-s SESSION] [-N] UPSTREAM METHOD [PARAMS]
 *
 * Loads CONF, makes COUNT calls of METHOD (params: the JSON PARAMS) to the [upstream
 * "UPSTREAM"] on one pool, so that connection and session reuse show. On stdout, one
 * line each, flushed: "T message JSON" for every message relayed before an answer,
 * "T response JSON" for every answer, and "connects N" at the end; T is milliseconds
 * since start on the monotonic clock. A failure prints "upstream_cli: REASON" on
 * stderr and exits 1 (2 for usage and configuration errors).
 *
 *   -n COUNT    calls to make (default 1)
 *   -W FILE     before each call but the first, wait (up to 60 s) until FILE exists,
 *               then remove it (the script restarts the upstream in between)
 *   -a N        abandon the call at its N-th relayed message (on_msg returns -1)
 *   -s SESSION  use this upstream session instead of the pool's own
 *   -N          send METHOD as a notification (upstream_notify) */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "log.h"
#include "upstream.h"

static int64_t t0_us;
static long abandon_at, seen;

static long long
elapsed_ms(void)
{
	return (long long)((clock_mono_us() - t0_us) / 1000);
}

static void
print_json(const char *what, json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);

	printf("%lld %s %s\n", elapsed_ms(), what, s ? s : "null");
	fflush(stdout);
	free(s);
}

static int
on_msg(void *ctx, json_t *msg)
{
	print_json("message", msg);
	return abandon_at > 0 && ++seen >= abandon_at ? -1 : 0;
}

static int
wait_for(const char *path)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int i;

	for (i = 0; i < 6000; i++) {
		if (access(path, F_OK) == 0)
			return unlink(path);
		nanosleep(&ts, NULL);
	}
	return -1;
}

static void
usage(void)
{
	fprintf(stderr, "usage: upstream_cli -c CONF [-n COUNT] [-W FILE] [-a N] [-s SESSION] [-N] "
	    "UPSTREAM METHOD [PARAMS]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	const char *conf = NULL, *wait_file = NULL, *session = NULL;
	const struct cfg_upstream *up = NULL;
	struct upstream_pool *pool = NULL;
	struct cfg_errors errs;
	struct config *cfg = NULL;
	json_t *params = NULL, *resp;
	json_error_t jerr;
	long count = 1, i;
	size_t k;
	int c, notify = 0, rc = 0;

	t0_us = clock_mono_us();
	while ((c = getopt(argc, argv, "c:n:W:a:s:N")) != -1) {
		switch (c) {
		case 'c': conf = optarg; break;
		case 'n': count = strtol(optarg, NULL, 10); break;
		case 'W': wait_file = optarg; break;
		case 'a': abandon_at = strtol(optarg, NULL, 10); break;
		case 's': session = optarg; break;
		case 'N': notify = 1; break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (conf == NULL || argc < 2 || argc > 3 || count < 1 || count > 1000)
		usage();
	log_init(2, GW_LOG_INFO);
	if (config_load(conf, &cfg, &errs) < 0) {
		for (k = 0; k < errs.n; k++)
			fprintf(stderr, "%s\n", errs.err[k].detail);
		config_unref(cfg);
		return 2;
	}
	for (k = 0; k < cfg->n_upstreams && up == NULL; k++)
		if (strcmp(cfg->upstreams[k].s.name, argv[0]) == 0)
			up = &cfg->upstreams[k];
	if (up == NULL) {
		fprintf(stderr, "upstream_cli: no [upstream \"%s\"] in %s\n", argv[0], conf);
		config_unref(cfg);
		return 2;
	}
	if (argc == 3 && (params = json_loads(argv[2], 0, &jerr)) == NULL) {
		fprintf(stderr, "upstream_cli: PARAMS: %s\n", jerr.text);
		config_unref(cfg);
		return 2;
	}
	if ((pool = upstream_pool_new()) == NULL)
		return 2;
	for (i = 0; i < count && rc == 0; i++) {
		struct upstream_call call;
		struct gw_error err = { GW_OK, 0, "" };

		if (i > 0 && wait_file && wait_for(wait_file) < 0) {
			fprintf(stderr, "upstream_cli: %s never appeared\n", wait_file);
			rc = 2;
			break;
		}
		memset(&call, 0, sizeof(call));
		call.cfg = cfg;
		call.up = up;
		call.method = argv[1];
		call.params = params;
		call.session_id = session;
		call.on_msg = on_msg;
		call.now_ms = clock_mono_us() / 1000;
		seen = 0;
		if (notify) {
			if (upstream_notify(pool, &call, &err) < 0)
				rc = 1;
			else
				printf("%lld accepted\n", elapsed_ms());
		} else if (upstream_request(pool, &call, &resp, &err) < 0) {
			rc = 1;
		} else {
			print_json("response", resp);
			json_decref(resp);
		}
		if (rc == 1) {
			fprintf(stderr, "upstream_cli: %s\n", err.detail);
			if (err.code != GW_EUPSTREAM && err.code != GW_ECALL)
				fprintf(stderr, "upstream_cli: error code %d, not GW_EUPSTREAM or GW_ECALL\n", (int)err.code);
		}
	}
	printf("connects %lu\n", upstream_pool_connects(pool));
	upstream_pool_free(pool);
	json_decref(params);
	config_unref(cfg);
	return rc;
}
