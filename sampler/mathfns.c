// SPDX-License-Identifier: GPL-2.0-or-later
#include "mathfns.h"

#include <stddef.h>

#ifdef RTGATE_LAZY_LIBM
#include <dlfcn.h>

static struct mathfns loaded;
static const char *load_error;

static void *sym(void *lib, const char *name)
{
	void *f = dlsym(lib, name);

	if (!f && !load_error)
		load_error = "a function is missing from libm";
	return f;
}

const struct mathfns *mathfns_get(const char **why)
{
	static int tried;
	static const struct mathfns *ready;

	if (!tried) {
		void *lib = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);

		tried = 1;
		if (!lib)
			lib = dlopen("libm.so", RTLD_NOW | RTLD_LOCAL);
		if (!lib) {
			load_error = dlerror();
		} else {
			/* POSIX: a function pointer may be read from dlsym's object pointer this way */
			*(void **)&loaded.exp = sym(lib, "exp");
			*(void **)&loaded.expm1 = sym(lib, "expm1");
			*(void **)&loaded.log = sym(lib, "log");
			*(void **)&loaded.log1p = sym(lib, "log1p");
			*(void **)&loaded.lgamma = sym(lib, "lgamma");
			*(void **)&loaded.pow = sym(lib, "pow");
			*(void **)&loaded.sqrt = sym(lib, "sqrt");
			*(void **)&loaded.ceil = sym(lib, "ceil");
			if (!load_error)
				ready = &loaded;
		}
	}
	if (!ready && why)
		*why = load_error ? load_error : "cannot load libm";
	return ready;
}
#else
#include <math.h>

static const struct mathfns linked = {
	.exp = exp, .expm1 = expm1, .log = log, .log1p = log1p,
	.lgamma = lgamma, .pow = pow, .sqrt = sqrt, .ceil = ceil,
};

const struct mathfns *mathfns_get(const char **why)
{
	(void)why;
	return &linked;
}
#endif
