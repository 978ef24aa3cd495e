/* bench/null_fcgi.c — the null FastCGI responder of bench/run: "the limit" a
 * FastCGI program behind nginx can reach on this machine. It does what every
 * libfcgi responder must do and nothing else: each of its threads takes a
 * connection with FCGX_Accept_r, reads the request body to its end, writes one
 * fixed answer and finishes the request. No parsing, no token, no JSON, no log.
 *
 *     null_fcgi -c ANSWER [-w THREADS]     (fd 0: the listening socket, as spawn-fcgi gives it)
 *     null_fcgi -t -c ANSWER               (checks that ANSWER can be read; exits 0)
 *
 * ANSWER holds the whole FastCGI stdout of the answer, CGI headers and body
 * ("Status: 200 OK\r\nContent-Type: application/json\r\n...\r\n\r\n{...}"): bench/run
 * writes there what mcpgate itself answered to the request being measured, so the
 * two send nginx the same bytes. The options are mcpgate's own (-c, -w, -t), so
 * the same spawn-fcgi script (deploy/spawn-fcgi.sh.in) starts either.
 *
 * Built by bench/run: cc -O2 -o null_fcgi bench/null_fcgi.c -lfcgi -lpthread */
#include <fcgiapp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *answer;
static int answer_len;

static char *
slurp(const char *path, int *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && n < (1L << 30) &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n)) != NULL &&
	    fread(buf, 1, (size_t)n, f) == (size_t)n) {
		*len = (int)n;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void *
serve(void *arg)
{
	FCGX_Request req;
	char sink[16384];

	(void)arg;
	if (FCGX_InitRequest(&req, 0, 0) != 0)
		return NULL;
	while (FCGX_Accept_r(&req) >= 0) {
		while (FCGX_GetStr(sink, (int)sizeof sink, req.in) > 0)
			;
		FCGX_PutStr(answer, answer_len, req.out);
		FCGX_Finish_r(&req);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	const char *path = NULL;
	int threads = 2, check = 0, c, i;
	pthread_t *t;

	while ((c = getopt(argc, argv, "c:tw:")) != -1) {
		switch (c) {
		case 'c': path = optarg; break;
		case 't': check = 1; break;
		case 'w': threads = (int)strtol(optarg, NULL, 10); break;
		default: goto usage;
		}
	}
	if (!path || threads < 1 || threads > 256)
		goto usage;
	if (!(answer = slurp(path, &answer_len))) {
		fprintf(stderr, "null_fcgi: cannot read %s\n", path);
		return 1;
	}
	if (check)
		return 0;
	if (FCGX_Init() != 0) {
		fprintf(stderr, "null_fcgi: FCGX_Init failed\n");
		return 1;
	}
	if (!(t = calloc((size_t)threads, sizeof *t)))
		return 1;
	for (i = 0; i < threads; i++) {
		if (pthread_create(&t[i], NULL, serve, NULL) != 0) {
			fprintf(stderr, "null_fcgi: pthread_create failed\n");
			return 1;
		}
	}
	for (i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
usage:
	fprintf(stderr, "usage: null_fcgi [-t] -c ANSWER [-w THREADS]\n");
	return 2;
}
