// SPDX-License-Identifier: GPL-2.0-or-later
/* A few assertion macros: the C tests need nothing more. */
#ifndef RTGATE_CHECK_H
#define RTGATE_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
		check_failures++; \
	} \
} while (0)

#define CHECK_EQ(a, b) do { \
	unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
	if (a_ != b_) { \
		fprintf(stderr, "%s:%d: %s == %s failed: %llu != %llu\n", __FILE__, __LINE__, #a, #b, a_, b_); \
		check_failures++; \
	} \
} while (0)

#define CHECK_STR_HAS(hay, needle) do { \
	if (!strstr((hay), (needle))) { \
		fprintf(stderr, "%s:%d: '%s' not found in output\n", __FILE__, __LINE__, (needle)); \
		check_failures++; \
	} \
} while (0)

#define CHECK_DONE() do { \
	if (check_failures) \
		fprintf(stderr, "%d check(s) failed\n", check_failures); \
	return check_failures ? 1 : 0; \
} while (0)

#endif
