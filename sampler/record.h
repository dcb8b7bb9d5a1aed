// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The run's record ("rtgate_run" in the --json results, format 2): what was measured or why
 * nothing was, what made a measured run invalid, what stopped it, the requirements as judged,
 * the machine, the load and the real-time tasks seen before, while and after measuring. Readers
 * judge a run from it (the harness's core/validity.py), so the sampler writes it with the results.
 *
 * Fixed-size storage, allocated once by record_init() before measuring: reporting a reason
 * afterwards allocates nothing. A process without record_init() records nothing.
 */
#ifndef RTGATE_RECORD_H
#define RTGATE_RECORD_H

#include <stdio.h>

#include "require.h"
#include "result.h"
#include "rtscan.h"
#include "sysinfo.h"

#define RECORD_FORMAT 2
#define RECORD_REASON_LEN 4096
#define RECORD_MAX_INVALID 8

/* Start recording for measurement `name` (NULL: not named). 0, or -1 when memory is short. */
int record_init(const char *name);
int record_enabled(void);
/* Measured, but not under the conditions asked: every gate is then ERROR, its figures kept. */
void record_invalid(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Nothing measured (status GATE_ERROR or GATE_INCONCLUSIVE): every gate that status, unmeasured.
 * The first reason given is kept. */
void record_not_measured(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The reason nothing was measured and its gate status; NULL when the run is to be measured. */
const char *record_not_measured_reason(int *status);
/* The invalid reasons joined by "; "; 0 when there are none (the run is valid). */
int record_invalid_reason(char *buf, size_t len);
void record_stopped_by(const char *signal_name);
void record_expected_seconds(const struct params *p);
/* What the record shows: the machine, the requirements, the real-time tasks (tables owned by
 * the caller, read when the record is written). */
void record_attach(const struct sysinfo *system, const struct require_report *require,
		   const struct rt_priorities *priorities, int competing_matters, const struct rt_tasks *before,
		   const struct rt_tasks *during, const struct rt_tasks *after);
/* The "load" object's writer (load.c); without one the record says {"kind": "none"}. */
void record_load_writer(void (*write)(FILE *f, const void *ctx), const void *ctx);
/* The "backend" object's writer (timerlat.c: what measured in place of the sampler's threads); without
 * one the record has no "backend" key: the sampler's own threads measured. */
void record_backend_writer(void (*write)(FILE *f, const void *ctx), const void *ctx);
/* The "rtgate_run" value, for the results r (r->nthreads == 0: not measured). */
void record_write_json(FILE *f, const struct run_result *r);
/* A JSON string (NULL: null), as valid UTF-8: a byte that is not is written as U+FFFD. */
void record_json_string(FILE *f, const char *s);
/* Console text from input (names, task names, reasons): control characters as '?' and "<LAVA_"
 * as "?LAVA_", so that it can forge neither a verdict line nor a LAVA signal. In place. */
void record_console_escape(char *text);

#endif
