// SPDX-License-Identifier: GPL-2.0-or-later
#include "result.h"

#include <string.h>

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

void result_counters(struct thread_result *tr, struct thread_state *ts)
{
	memset(tr, 0, sizeof(*tr));
	tr->index = ts->index;
	tr->cpu = ts->cpu;
	tr->node = ts->node;
	tr->priority = ts->priority;
	tr->policy = ts->policy;
	tr->tid = LOAD(ts->tid);
	tr->interval_us = ts->interval_ns / 1000;
	tr->min = LOAD(ts->min);
	tr->max = LOAD(ts->max);
	tr->act = LOAD(ts->act);
	tr->sum = LOAD(ts->sum);
	tr->missed = LOAD(ts->missed);
	tr->cycles = LOAD(ts->cycles);
}

void result_snapshot(struct thread_result *tr, struct thread_state *ts, const struct hist_layout *l,
		     const struct params *p, uint64_t *hist_buf, uint64_t *block_buf, uint64_t block_cap)
{
	uint64_t total = 0, over = 0;

	result_counters(tr, ts);
	/* While threads run, counts and the histogram may be a sample apart: count from the histogram. */
	for (size_t i = 0; i < l->nbuckets; i++) {
		uint64_t v = LOAD(ts->hist[i]);

		if (v || hist_buf[i]) /* an empty bucket stays an untouched (shared zero) page */
			hist_buf[i] = v;
		total += hist_buf[i];
		if (p->hist_limit && hist_lower(l, i) >= p->hist_limit)
			over += hist_buf[i];
	}
	tr->hist = hist_buf;
	tr->cycles = total;
	tr->overflow = over;
	tr->overflow_cycles = ts->overflow_cycles;
	tr->n_overflow_cycles = atomic_load(&ts->n_overflow_cycles);
	if (bm_snapshot(&ts->maxima, block_buf, block_cap, &tr->bview))
		tr->bview.count = 0;
	tr->blocks = block_buf;
	tr->spikes = ts->spikes;
	tr->n_spikes = atomic_load(&ts->n_spikes);
	tr->spikes_total = LOAD(ts->spikes_total);
	tr->break_value = LOAD(ts->break_value);
	tr->reason = LOAD(ts->reason);
	tr->first_wake_ns = LOAD(ts->first_wake_ns);
	tr->last_wake_ns = LOAD(ts->last_wake_ns);
}

const char *stop_reason_name(int reason)
{
	switch (reason) {
	case STOP_LOOPS: return "loops";
	case STOP_DURATION: return "duration";
	case STOP_SIGNAL: return "signal";
	case STOP_BREAKTRACE: return "breaktrace";
	case STOP_ERROR: return "error";
	default: return "running";
	}
}

const char *unit_name(const struct params *p)
{
	return p->nsecs ? "ns" : "us";
}
