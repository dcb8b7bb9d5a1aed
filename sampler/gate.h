// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Native gates for boards without Python: the same verdicts as rtgate's Python gates
 * (harness/rtgate/core/gates.py), held equal by the shared vectors in tests/vectors/gates.txt.
 *
 * --gate=name=NAME,kind=KIND,KEY=VALUE,...   keys (the kinds, with the keys each needs and takes, are
 * declared once in gate.c's kind table; --help and --dump-contract print them from it):
 *   limit       us (max, avg, percentile)      above  us (miss_rate)
 *   percentile  e.g. 99.9                      rate   fraction (miss_rate)
 *   max_count   missed periods (missed)        max_rate  fraction (missed)
 *   confidence  default 0.95                   min_samples  default 1, 1/(1-p) for percentiles
 *   threads     thread indices, e.g. 0+1       cpus   CPUs, e.g. 0+2
 *   scope       per_thread (default) | worst
 */
#ifndef RTGATE_GATE_H
#define RTGATE_GATE_H

#include <stdio.h>

#include "result.h"

#define GATE_MAX 64
#define GATE_NAME_LEN 64
#define GATE_MAX_COUNT 4611686018427387904.0   /* 2^62: max_count and min_samples, as thresholds.py */
/* RTGATE-GATE NAME THREAD STATUS VALUE LIMIT BOUND SAMPLES UNITS REASON... */
#define GATE_LINE_FIELDS {"gate", "thread", "status", "value", "limit", "bound", "samples", "units", "reason"}

enum gate_kind { GATE_MAX_KIND = 1, GATE_AVG, GATE_PERCENTILE, GATE_MISS_RATE, GATE_MISSED, GATE_KIND_END };
/* In rank order, worst last: a gate's worst thread is the one with the highest status. */
enum gate_status { GATE_PASS = 0, GATE_INCONCLUSIVE, GATE_FAIL, GATE_ERROR, GATE_STATUS_END };

struct gate_spec {
	char name[GATE_NAME_LEN];
	int kind;
	double limit, above, rate, percentile, max_rate, confidence;
	long long max_count;           /* -1: not set */
	int threads[MAX_THREADS];
	int nthreads;                  /* 0: every thread */
	int cpus[64];
	int ncpus;
	int worst;
	unsigned long long min_samples; /* 0: the kind's default */
	unsigned keys;                 /* the keys given, one bit per key of gate.c's key table */
};

struct gate_verdict {
	char thread[GATE_NAME_LEN];
	int status;
	int has_value, has_bound, has_lower, has_limit;
	double value;                  /* us, or a fraction for rates */
	double limit, bound, lower;    /* bound, lower: the rate's one-sided confidence bounds */
	unsigned long long samples;
	char value_text[48];
	char reason[448];
};

int gate_parse(const char *arg, struct gate_spec *g, char *err, size_t errlen);
/* Thread ids as rtgate names them: cpuN / tN, prefixed by group label with several groups. */
void gate_thread_ids(const struct run_result *r, char labels[][GATE_NAME_LEN], int nlabels,
		     char ids[][GATE_NAME_LEN]);
/* Returns the number of verdicts written to out (at most max_out). */
int gate_evaluate(const struct gate_spec *g, const struct run_result *r, char ids[][GATE_NAME_LEN],
		  struct gate_verdict *out, int max_out);
void gate_print(FILE *f, const struct gate_spec *g, const struct gate_verdict *v);
/* A gate not judged because nothing was measured: thread "all", its limit, status and reason. */
void gate_unjudged(const struct gate_spec *g, int status, const char *reason, struct gate_verdict *v);
/* The gate keys with their ranges and the RTGATE-GATE fields, as part of --dump-contract. */
void gate_dump_contract(FILE *f);
const char *gate_status_name(int status);
const char *gate_kind_name(int kind);
/* The unit of a verdict's value: "%" for a share of samples (held as a fraction), else the kind's. */
const char *gate_unit(const struct gate_spec *g);
double gate_cp_upper(unsigned long long k, unsigned long long n, double confidence);
double gate_cp_lower(unsigned long long k, unsigned long long n, double confidence);

#endif
