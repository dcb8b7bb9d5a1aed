// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A board's plan into command-line words, before options.c parses them (so that a plan and a
 * command line are one grammar, checked by one parser):
 *   --plan=WORDS        the compiled measurement (`rtgate lava args`): words separated by spaces,
 *                       "%20" a space and "%25" a '%' inside a word; never a shell's to split
 *   --output-dir=DIR    DIR/<measurement>.json (and .hist with a histogram): the board's outputs
 *   --param=NAME=VALUE  a named parameter of the LAVA definition: DURATION overrides the plan's
 *                       length; RT_PRIORITY, INTERVAL, THREADS, AFFINITY and HISTOGRAM must say
 *                       what the plan says; PRIORITY is refused with its new name
 * A parameter whose value is not what its name says, or that contradicts the plan, is no usage
 * error: the plan's gates are still printed, each ERROR with the reason (plan_problem).
 */
#ifndef RTGATE_PLAN_H
#define RTGATE_PLAN_H

#include <stddef.h>

#define PLAN_PROBLEM_LEN 512

/* Returns 0 with the words in out_argc and out_argv (allocated once, kept for the run), or -1 with a
 * usage error in err. */
int plan_expand(int argc, char **argv, int *out_argc, char ***out_argv, char *err, size_t errlen);
/* Free what the last plan_expand allocated (its words are then gone). */
void plan_release(void);
/* Why the board's parameters keep the run from being measured ("" when nothing does). */
const char *plan_problem(void);

#endif
