/* front — the only user of <fcgiapp.h>: a CGI request, or the FastCGI accept loop
 * with worker threads, signals and reload ticks. */
#ifndef GW_FRONT_H
#define GW_FRONT_H

#include "gateway.h"

/* 1 when fd 0 is a listening socket (spawn-fcgi, systemd), 0 for CGI. Call after
 * front_init. */
int front_is_fastcgi(void);
/* Signal handlers and libfcgi set-up; 0 or -1. */
int front_init(void);
/* Serves one CGI request from the environment and stdin. Returns the exit status. */
int front_cgi(struct gateway *gw);
/* Serves FastCGI until SIGTERM/SIGINT with workers threads, and up to the
 * configuration's max-workers while calls wait on upstreams; SIGHUP or a changed file
 * reloads. */
int front_fastcgi(struct gateway *gw, long workers);

#endif
