/* dynload — a shared library loaded when it is first needed (curlload.c, joseload.c): the
 * only user of <dlfcn.h>. */
#ifndef GW_DYNLOAD_H
#define GW_DYNLOAD_H

#include <stddef.h>

#include "err.h"

/* A function of the library: its name and where its address goes in the caller's
 * table of function pointers. */
struct dynload_sym {
	const char *name;
	size_t offset;
};

/* Loads soname (dlopen) and stores the address of each of the n syms at its offset in
 * fns. 0, or -1 with err (GW_EINTERNAL, the loader's reason; then nothing of the
 * library runs). */
int dynload(const char *soname, const struct dynload_sym *syms, size_t n, void *fns,
    struct gw_error *err);

#endif
