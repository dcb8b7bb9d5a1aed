// SPDX-License-Identifier: GPL-2.0-or-later
/* cyclictest's text outputs: the T: status lines, the live header, spikes and break report. */
#ifndef RTGATE_OUT_TEXT_H
#define RTGATE_OUT_TEXT_H

#include <stdio.h>
#include "result.h"

void text_status_line(FILE *f, const struct run_result *r, const struct thread_result *t);
void text_live_header(FILE *f, const struct params *p);
void text_spikes(FILE *f, const struct run_result *r);
void text_break(FILE *f, const struct run_result *r);

#endif
