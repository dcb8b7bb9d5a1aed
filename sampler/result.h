// SPDX-License-Identifier: GPL-2.0-or-later
/* A consistent, plain-value copy of a run for the writers; built from live state or by tests. */
#ifndef RTGATE_RESULT_H
#define RTGATE_RESULT_H

#include <stdint.h>
#include <stdio.h>

#include "histogram.h"
#include "maxima.h"
#include "params.h"
#include "sysprep.h"
#include "thread_state.h"

struct thread_result {
	int index, cpu, node, priority, policy, tid;
	uint64_t interval_us;
	uint64_t cycles;          /* == sum of hist, by construction */
	uint64_t min, max, act, sum, missed;
	uint64_t overflow;        /* samples >= hist_limit, derived from hist */
	/* Dense: hist[i] is bucket i, layout->nbuckets of them (hist_idx NULL). Sparse (checkpoints):
	 * hist[k] is bucket hist_idx[k], hist_n non-zero buckets in ascending order. */
	const uint64_t *hist;
	const uint32_t *hist_idx;
	size_t hist_n;
	const uint64_t *overflow_cycles;
	uint64_t n_overflow_cycles;
	const uint64_t *blocks;
	struct block_maxima_view bview;
	const struct spike *spikes;
	uint64_t n_spikes, spikes_total;
	uint64_t break_value;
	int reason;
	int64_t first_wake_ns, last_wake_ns;
	double span_s;            /* first period's start to the thread's end: what its periods must account for */
	void *owned[3];           /* buffers of a running snapshot, freed by result_release */
};

struct run_result {
	const struct params *p;
	const struct hist_layout *layout;
	const struct sys_facts *sys;
	int nthreads;
	struct thread_result *t;
	int complete;             /* 0 in checkpoints */
	int reason;               /* enum stop_reason */
	int signal;               /* with STOP_SIGNAL */
	int return_code;
	int64_t start_rt_ns, end_rt_ns;
	double elapsed_s;
	double overrun_s;         /* elapsed beyond the scheduled end (>= 0) */
	int ended_late;           /* overrun by more than a few periods */
	int latency_target;       /* value held in /dev/cpu_dma_latency, or -1 */
	int break_thread;         /* index, or -1 */
	/* the final results' "rtgate_run" record (record.c); NULL: none (checkpoints, plain runs) */
	void (*record)(FILE *f, const struct run_result *r);
};

/* The scalar counters only: cheap enough for a screen refreshed 100 times a second. */
void result_counters(struct thread_result *tr, struct thread_state *ts);
/* A joined thread's results, read in place: nothing is copied. */
void result_final(struct thread_result *tr, struct thread_state *ts, const struct hist_layout *l,
		  const struct params *p);
/*
 * A running thread's results for a checkpoint: its non-zero buckets and complete blocks,
 * copied into buffers allocated here (sized by what the run holds now, so a checkpoint costs
 * a few KiB per thread, not a second full histogram) and freed by result_release.
 * Returns 0, or -1 when memory is short (the checkpoint is skipped; the run goes on).
 */
int result_running(struct thread_result *tr, struct thread_state *ts, const struct hist_layout *l,
		   const struct params *p);
void result_release(struct thread_result *tr);
/* Stored buckets: nbuckets when dense, hist_n when sparse; bucket index of stored entry k. */
static inline size_t result_hist_len(const struct thread_result *t, const struct hist_layout *l)
{
	return t->hist_idx ? t->hist_n : l->nbuckets;
}

static inline size_t result_hist_bucket(const struct thread_result *t, size_t k)
{
	return t->hist_idx ? t->hist_idx[k] : k;
}
const char *stop_reason_name(int reason);
/* "SIGINT", "SIGTERM", "SIGHUP" (the stop signals); NULL for another. */
const char *signal_name(int sig);
const char *unit_name(const struct params *p);

#endif
