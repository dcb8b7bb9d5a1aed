// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The libm functions the native gates use. A dynamic build loads libm only when a gate is
 * evaluated, after the run: linked, libm would be mapped for the whole run and, with -m,
 * locked (about 900 KiB) for nothing the measurement touches. Static builds link it.
 */
#ifndef RTGATE_MATHFNS_H
#define RTGATE_MATHFNS_H

struct mathfns {
	double (*exp)(double);
	double (*expm1)(double);
	double (*log)(double);
	double (*log1p)(double);
	double (*lgamma)(double);
	double (*pow)(double, double);
	double (*sqrt)(double);
	double (*ceil)(double);
};

/* NULL when libm cannot be loaded; *why then says why. */
const struct mathfns *mathfns_get(const char **why);

#endif
