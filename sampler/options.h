// SPDX-License-Identifier: GPL-2.0-or-later
/* cyclictest-compatible command line -> struct params. All validation lives here. */
#ifndef RTGATE_OPTIONS_H
#define RTGATE_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "numparse.h"
#include "params.h"

/* Longest run the sampler accepts (3650 days): every instant of the schedule fits in int64 ns. */
#define MAX_DURATION_S 315360000ULL
#define MAX_LOOPS (1ULL << 62)
#define MAX_INTERVAL_US 3600000000ULL

enum options_result {
	OPTIONS_OK = 0,
	OPTIONS_EXIT_OK,   /* --help / --version / --dump-contract printed: exit 0 */
	OPTIONS_ERROR,     /* message in err: exit 2 */
};

/* Warnings (cyclictest's "-a ignored due to smp mode") go to warn, when not NULL. */
enum options_result options_parse(int argc, char **argv, const struct cpu_info *cpus,
				  struct params *p, char *err, size_t errlen);
void options_set_warning_stream(FILE *warn);
/* Control characters of `text` (NUL-terminated, in a buffer of `len`) written as \n, \xHH; "<LAVA_"
 * as "?LAVA_". */
void options_escape(char *text, size_t len);

void options_usage(FILE *f);
/* The option table as JSON: what the harness may pass, with ranges and defaults. */
void options_dump_contract(FILE *f);
const char *policy_name(int policy);

#endif
