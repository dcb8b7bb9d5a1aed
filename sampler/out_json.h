// SPDX-License-Identifier: GPL-2.0-or-later
/* JSON results: the rt-tests layout (so existing consumers read it) plus an "rtgate" object. */
#ifndef RTGATE_OUT_JSON_H
#define RTGATE_OUT_JSON_H

#include <stdio.h>
#include "result.h"

void json_write(FILE *f, const struct run_result *r);
/* The "rtgate_run" record's writer, added to every later json_write (NULL: none). */
void json_set_record(void (*write)(FILE *f));
/* A JSON string: quotes, backslashes and control characters escaped. */
void json_string(FILE *f, const char *s);
/* Write to PATH.tmp, fsync, rename: readers see the old file or the new one, never half. */
int json_write_file(const char *path, const struct run_result *r);

#endif
