/* bench/hello_cgi.c — the hello-world CGI program of bench/run: what a CGI
 * program costs under Apache (a fork and exec by mod_cgid, the dynamic loader, a
 * process exit) when it does nothing. It reads its request body (CONTENT_LENGTH
 * bytes of stdin) and writes the file named by the environment variable
 * BENCH_ANSWER as it is: CGI headers and a body. bench/run points it at what
 * mcpgate answered to the same request, so both CGI programs send Apache the same
 * bytes. Plain system calls, no stdio, no other library than libc.
 *
 * Built by bench/run: cc -O2 -o hello.cgi bench/hello_cgi.c */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static const char fail[] = "Status: 500 Internal Server Error\r\nContent-Type: text/plain\r\n\r\nno BENCH_ANSWER\n";

int
main(void)
{
	char buf[65536];
	const char *path = getenv("BENCH_ANSWER"), *cl = getenv("CONTENT_LENGTH");
	long left = cl ? strtol(cl, NULL, 10) : 0;
	ssize_t n;
	int fd;

	while (left > 0 && (n = read(0, buf, left < (long)sizeof buf ? (size_t)left : sizeof buf)) > 0)
		left -= n;
	if (!path || (fd = open(path, O_RDONLY)) < 0) {
		(void)!write(1, fail, sizeof fail - 1);
		return 0;
	}
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		char *p = buf;

		while (n > 0) {
			ssize_t w = write(1, p, (size_t)n);

			if (w <= 0)
				return 1;
			p += w;
			n -= w;
		}
	}
	close(fd);
	return 0;
}
