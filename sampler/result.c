// SPDX-License-Identifier: GPL-2.0-or-later
#include "result.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)
/* a 64-bit value of a thread that may be running, whole (counter.h) */
#define READ(x) ctr_read(&(x), &ts->wseq)

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
	tr->min = READ(ts->min);
	tr->max = READ(ts->max);
	tr->act = READ(ts->act);
	tr->sum = READ(ts->sum);
	tr->missed = READ(ts->missed);
	tr->cycles = READ(ts->cycles);
}

/* The histogram is read in place once the thread is joined: counter.h lays a ctr64 out as a uint64_t. */

/* From the start of the thread's first period to its end (now, while it runs), on the run's clock. */
static double thread_span_s(struct thread_state *ts, const struct params *p)
{
	int64_t end = (int64_t)READ(ts->end_ns), start = ts->first_next_ns - (int64_t)ts->interval_ns;

	if (!end)
		end = now_ns(p->clock_id);
	return end > start ? (double)(end - start) / 1e9 : 0.0;
}

static void result_common(struct thread_result *tr, struct thread_state *ts, const struct params *p)
{
	tr->overflow_cycles = ts->overflow_cycles;
	tr->n_overflow_cycles = READ(ts->n_overflow_cycles);
	if (tr->n_overflow_cycles > ts->overflow_cap)
		tr->n_overflow_cycles = ts->overflow_cap;
	tr->spikes = ts->spikes;
	tr->n_spikes = READ(ts->n_spikes);
	tr->spikes_total = READ(ts->spikes_total);
	tr->break_value = READ(ts->break_value);
	tr->reason = LOAD(ts->reason);
	tr->first_wake_ns = (int64_t)READ(ts->first_wake_ns);
	tr->last_wake_ns = (int64_t)READ(ts->last_wake_ns);
	tr->span_s = thread_span_s(ts, p);
}

void result_final(struct thread_result *tr, struct thread_state *ts, const struct hist_layout *l,
		  const struct params *p)
{
	const uint64_t *hist = (const uint64_t *)(const void *)ts->hist;
	uint64_t total = 0, over = 0;

	result_counters(tr, ts);
	for (size_t i = 0; i < l->nbuckets; i++) {
		total += hist[i];
		if (p->hist_limit && hist_lower(l, i) >= p->hist_limit)
			over += hist[i];
	}
	tr->hist = hist;
	tr->cycles = total;
	tr->overflow = over;
	tr->blocks = (const uint64_t *)(const void *)ts->maxima.values;
	tr->bview.count = READ(ts->maxima.count);
	tr->bview.block_cycles = READ(ts->maxima.block_cycles);
	tr->bview.partial_max = READ(ts->maxima.cur_max);
	tr->bview.partial_n = READ(ts->maxima.cur_n);
	result_common(tr, ts, p);
}

int result_running(struct thread_result *tr, struct thread_state *ts, const struct hist_layout *l,
		   const struct params *p)
{
	size_t cap = 0, n = 0;
	uint32_t *idx = NULL;
	uint64_t *cnt = NULL, *blocks, total = 0, over = 0, block_cap;

	result_counters(tr, ts);
	for (size_t i = 0; i < l->nbuckets; i++)
		cap += READ(ts->hist[i]) != 0;
	cap += cap / 4 + 16; /* buckets that fill while we copy */
	for (;;) {
		int full = 0;

		idx = malloc(cap * sizeof(*idx));
		cnt = malloc(cap * sizeof(*cnt));
		if (!idx || !cnt)
			goto oom;
		/* While the thread runs, counts and the histogram may be a sample apart: count from the copy. */
		for (size_t i = 0, k = 0; i < l->nbuckets; i++) {
			uint64_t v = READ(ts->hist[i]);

			if (!v)
				continue;
			if (k == cap) {
				full = 1;
				break;
			}
			idx[k] = (uint32_t)i;
			cnt[k++] = v;
			n = k;
		}
		if (!full)
			break;
		free(idx);
		free(cnt);
		idx = NULL;
		cnt = NULL;
		n = 0;
		cap = cap * 2 < l->nbuckets ? cap * 2 : l->nbuckets;
	}
	for (size_t k = 0; k < n; k++) {
		total += cnt[k];
		if (p->hist_limit && hist_lower(l, idx[k]) >= p->hist_limit)
			over += cnt[k];
	}
	tr->hist = cnt;
	tr->hist_idx = idx;
	tr->hist_n = n;
	tr->cycles = total;
	tr->overflow = over;
	block_cap = READ(ts->maxima.count) + 64; /* blocks close once per --block: far apart */
	if (block_cap > ts->maxima.cap)
		block_cap = ts->maxima.cap;
	blocks = malloc((size_t)block_cap * sizeof(*blocks) + 1);
	if (!blocks)
		goto oom;
	if (bm_snapshot(&ts->maxima, blocks, block_cap, &tr->bview))
		tr->bview.count = 0;
	tr->blocks = blocks;
	tr->owned[0] = idx;
	tr->owned[1] = cnt;
	tr->owned[2] = blocks;
	result_common(tr, ts, p);
	return 0;
oom:
	free(idx);
	free(cnt);
	memset(tr, 0, sizeof(*tr));
	return -1;
}

void result_release(struct thread_result *tr)
{
	for (int i = 0; i < 3; i++) {
		free(tr->owned[i]);
		tr->owned[i] = NULL;
	}
}

const char *signal_name(int sig)
{
	switch (sig) {
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	case SIGHUP: return "SIGHUP";
	default: return NULL;
	}
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
