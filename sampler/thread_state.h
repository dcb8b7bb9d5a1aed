// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Per-thread live state. The measurement thread is the only writer; the main
 * thread reads it while running (status, checkpoints) through counter.h: relaxed atomics,
 * plain loads and stores, where 64-bit atomics are lock-free; 32-bit halves under a sequence
 * count where they are not (32-bit PowerPC), never a lock.
 */
#ifndef RTGATE_THREAD_STATE_H
#define RTGATE_THREAD_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "counter.h"
#include "histogram.h"
#include "maxima.h"
#include "params.h"

struct spike {
	uint64_t cycle;
	uint64_t value;
	int64_t ts_us;
};

/* Cache-line aligned: each thread writes its own counters, and neighbours must not share lines. */
#define THREAD_STATE_ALIGN 64

struct thread_state {
	/* configuration, fixed before the thread starts */
	_Alignas(THREAD_STATE_ALIGN) int index;
	int cpu;
	int node;
	int priority;
	int policy;
	uint64_t interval_ns;
	int64_t first_next_ns;          /* first scheduled wake, on the run's clock */
	int64_t stop_at_ns;             /* -D: last scheduled wake at most this; 0 = none */
	pthread_t thread;
	int started;

	/* set by the thread */
	_Atomic int tid;
	_Atomic int done;
	_Atomic int reason;             /* enum stop_reason of this thread */
	_Atomic int run_errno;

	ctr_seq wseq;                   /* odd while the thread records a sample (counter.h) */
	ctr64 cycles;
	ctr64 min;
	ctr64 max;
	ctr64 act;
	ctr64 sum;
	ctr64 missed;                   /* periods skipped because the thread overslept them */
	ctr64 *hist;                    /* layout.nbuckets counts */
	uint64_t *overflow_cycles;      /* cycle numbers of samples >= hist_limit (rt-tests view) */
	uint64_t overflow_cap;
	ctr64 n_overflow_cycles;
	struct block_maxima maxima;
	ctr64 *ring;                    /* -v: every sample, read by the main thread */
	uint64_t ring_mask;
	struct spike *spikes;
	uint64_t spike_cap;
	ctr64 n_spikes;
	ctr64 spikes_total;
	ctr64 break_value;
	ctr64 first_wake_ns;            /* int64_t values */
	ctr64 last_wake_ns;
	ctr64 end_ns;                   /* when the thread stopped measuring; 0 while it runs */
};

#endif
