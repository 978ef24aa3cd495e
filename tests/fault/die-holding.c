/* die-holding.c — an LD_PRELOAD library for tests/fault/state.sh: with
 * MCPGATE_DIE_HOLDING set, the process is killed (SIGKILL) at its first unlock of a
 * robust mutex — only the state file's are robust — so it dies holding that lock and
 * whatever it wrote under it (for a request with a token: a token-cache stripe and the
 * pending introspection claim in it). glibc only: it reads the mutex's kind. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#define KIND_ROBUST	16	/* glibc's PTHREAD_MUTEX_ROBUST_NORMAL_NP bit of __kind (pthreadP.h) */

int
pthread_mutex_unlock(pthread_mutex_t *m)
{
	static int (*real)(pthread_mutex_t *);

	if ((m->__data.__kind & KIND_ROBUST) && getenv("MCPGATE_DIE_HOLDING"))
		raise(SIGKILL);
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "pthread_mutex_unlock");
	return real(m);
}
