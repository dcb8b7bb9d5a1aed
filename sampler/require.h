// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * --require: what a measurement needs of the machine, parsed strictly and judged against the
 * machine record, with the reasons of the harness's measure/conditions.py unmet_by_key() and
 * machine_mismatch(), word for word (the four machine keys give one "board" entry, as there).
 */
#ifndef RTGATE_REQUIRE_H
#define RTGATE_REQUIRE_H

#include <stddef.h>
#include <stdio.h>

#include "params.h"
#include "rtscan.h"
#include "sysinfo.h"

#define REQUIRE_MAX 10
#define REQUIRE_REASON_LEN 4096

struct require_result {
	const char *key;       /* preempt_rt, isolated_cpus, governor, bare_metal, rt_throttling_off, board, no_competing_rt;
				* timerlat: what the timerlat backend needs (rtla, root, the tracer) */
	int met;
	char reason[REQUIRE_REASON_LEN];
};

struct require_report {
	int n;
	struct require_result r[REQUIRE_MAX];
};

/* One --require ITEM into spec: 0, or -1 with a one-line reason in err (the caller names the option). */
int require_parse(const char *item, struct require_spec *spec, char *err, size_t errlen);
/* The requirements of spec the record can answer, judged; measured: the CPUs the threads are pinned
 * to, in order of first use (nmeasured < 0: a thread is not pinned). no_competing_rt is not judged
 * here (require_judge_competing). */
void require_judge(const struct require_spec *spec, const struct sysinfo *s, const int *measured, int nmeasured,
		   struct require_report *out);
/* no_competing_rt from the scan before measuring (competitors: what rtscan() returned, kept or not):
 * met when it found none. */
void require_judge_competing(const struct require_spec *spec, const struct rt_tasks *before, int competitors,
			     struct require_report *out);
/* The unmet reasons joined by "; " into buf; returns how many are unmet. */
int require_unmet(const struct require_report *r, char *buf, size_t len);
/* [{"key": K, "met": bool, "reason": R|null}, ...] */
void require_write_json(FILE *f, const struct require_report *r);
/* The CPUs the threads are pinned to, in order of first use: their count, or -1 when one is not pinned. */
int require_measured_cpus(const struct params *p, int *cpus, int max);

#endif
