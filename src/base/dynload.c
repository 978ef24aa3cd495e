/* dynload — a shared library loaded when it is first needed (dynload.h). */
#include "autoconf.h"

#include <dlfcn.h>
#include <string.h>

#include "dynload.h"

_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "dlsym's pointers hold functions");

int
dynload(const char *soname, const struct dynload_sym *syms, size_t n, void *fns,
    struct gw_error *err)
{
	const char *e;
	void *lib, *p;
	size_t i;

	if ((lib = dlopen(soname, RTLD_LAZY | RTLD_LOCAL)) == NULL) {
		gw_error_set(err, GW_EINTERNAL, "%s", (e = dlerror()) ? e : "dlopen failed");
		return -1;
	}
	for (i = 0; i < n; i++) {
		if ((p = dlsym(lib, syms[i].name)) == NULL) {
			gw_error_set(err, GW_EINTERNAL, "%s has no %s", soname, syms[i].name);
			return -1;	/* lib stays loaded: nothing of it runs */
		}
		memcpy((char *)fns + syms[i].offset, &p, sizeof(p));
	}
	return 0;
}
