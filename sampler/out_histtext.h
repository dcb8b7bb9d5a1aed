// SPDX-License-Identifier: GPL-2.0-or-later
/* The histogram text exactly as cyclictest (rt-tests 2.x) writes it for -h/-H. */
#ifndef RTGATE_OUT_HISTTEXT_H
#define RTGATE_OUT_HISTTEXT_H

#include <stdio.h>
#include "result.h"

void histtext_write(FILE *f, const struct run_result *r);

#endif
