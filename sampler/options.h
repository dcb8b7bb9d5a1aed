/* cyclictest-compatible command line -> struct params. All validation lives here. */
#ifndef RTGATE_OPTIONS_H
#define RTGATE_OPTIONS_H

#include <stddef.h>
#include "params.h"

/* The CPUs the process may run on, passed in so tests can describe any machine. */
struct cpu_info {
	int ncpus;                      /* configured CPUs */
	unsigned char allowed[MAX_CPUS];
	int nallowed;
};

enum options_result {
	OPTIONS_OK = 0,
	OPTIONS_EXIT_OK,   /* --help / --version printed: exit 0 */
	OPTIONS_ERROR,     /* message in err: exit 2 */
};

enum options_result options_parse(int argc, char **argv, const struct cpu_info *cpus,
				  struct params *p, char *err, size_t errlen);

/* Strict number parsers, shared with the gate arguments. Return 0 on success. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int parse_duration_s(const char *s, uint64_t *out);
int parse_decimal(const char *s, double min, double max, double *out);
int parse_cpuset(const char *s, const struct cpu_info *cpus, unsigned char *set,
		 char *err, size_t errlen);

void options_usage(void);
const char *policy_name(int policy);

#endif
