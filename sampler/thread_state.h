// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Per-thread live state. The measurement thread is the only writer; the main
 * thread reads it while running (status, checkpoints) through relaxed atomics,
 * which cost nothing more than plain loads and stores on the targets we build for.
 */
#ifndef RTGATE_THREAD_STATE_H
#define RTGATE_THREAD_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

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

	_Atomic uint64_t cycles;
	_Atomic uint64_t min;
	_Atomic uint64_t max;
	_Atomic uint64_t act;
	_Atomic uint64_t sum;
	_Atomic uint64_t missed;        /* periods skipped because the thread overslept them */
	_Atomic uint64_t *hist;         /* layout.nbuckets counts */
	uint64_t *overflow_cycles;      /* cycle numbers of samples >= hist_limit (rt-tests view) */
	uint64_t overflow_cap;
	_Atomic uint64_t n_overflow_cycles;
	struct block_maxima maxima;
	_Atomic uint64_t *ring;         /* -v: every sample, read by the main thread */
	uint64_t ring_mask;
	struct spike *spikes;
	uint64_t spike_cap;
	_Atomic uint64_t n_spikes;
	_Atomic uint64_t spikes_total;
	_Atomic uint64_t break_value;
	_Atomic int64_t first_wake_ns;
	_Atomic int64_t last_wake_ns;
};

#endif
