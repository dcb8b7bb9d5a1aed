// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Strict number and list parsing, shared by the options (options.c) and the gate
 * arguments (gate.c). Surrounding blanks are allowed (harnesses pass "-h 3500" as one
 * word), anything else that is not part of the number is an error. Return 0 on success.
 */
#ifndef RTGATE_NUMPARSE_H
#define RTGATE_NUMPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "params.h"

/* The CPUs the process may run on, passed in so tests can describe any machine. */
struct cpu_info {
	int ncpus;                      /* configured CPUs */
	unsigned char allowed[MAX_CPUS];
	int nallowed;
	/* CPUs the kernel isolates (isolcpus=): left out of a task's default affinity, yet a thread may be
	 * pinned there, and that is where a board's latency is measured. Named CPUs may be these too. */
	unsigned char isolated[MAX_CPUS];
};

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Whole seconds with an optional s/m/h/d suffix, as cyclictest's -D; "1.5h" is an error. */
int parse_duration_s(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int parse_decimal(const char *s, double min, double max, double *out);
/* "0,2-3", "!1" (all allowed but 1) or "all"; every CPU named must exist and be allowed or isolated. */
int parse_cpuset(const char *s, const struct cpu_info *cpus, unsigned char *set, char *err, size_t errlen);
/* "0+2+3" (sep '+') into at most cap values 0..max; returns the count or -1. */
int parse_index_list(const char *s, char sep, uint64_t max, int *out, int cap);
/* Copy s without leading and trailing blanks into buf; -1 if it does not fit. */
int trim_copy(const char *s, char *buf, size_t len);

#endif
