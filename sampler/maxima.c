// SPDX-License-Identifier: GPL-2.0-or-later
#include "maxima.h"

void bm_init(struct block_maxima *b, ctr64 *storage, uint64_t cap, uint64_t block_cycles, const ctr_seq *wseq)
{
	b->values = storage;
	b->cap = cap & ~(uint64_t)1;
	b->wseq = wseq;
	ctr_set(&b->count, 0);
	ctr_set(&b->block_cycles, block_cycles ? block_cycles : 1);
	ctr_set(&b->cur_max, 0);
	ctr_set(&b->cur_n, 0);
	atomic_init(&b->seq, 0);
	/* storage is left untouched (an entry is read only after it is written): without -m,
	 * only the pages a run fills become resident. */
}

#define LOAD(x) ctr_own(&(x))
#define STORE(x, v) ctr_set(&(x), (v))
#define READ(x) ctr_read(&(x), b->wseq)

void bm_close_block(struct block_maxima *b)
{
	uint64_t count = LOAD(b->count);

	atomic_store_explicit(&b->seq, atomic_load_explicit(&b->seq, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	if (count == b->cap) {
		/* Full: merge pairs; the block in progress becomes the first half of a doubled block. */
		for (uint64_t i = 0; i < b->cap / 2; i++) {
			uint64_t x = LOAD(b->values[2 * i]), y = LOAD(b->values[2 * i + 1]);
			STORE(b->values[i], x > y ? x : y);
		}
		count = b->cap / 2;
		STORE(b->block_cycles, LOAD(b->block_cycles) * 2);
		STORE(b->count, count);
		if (LOAD(b->cur_n) < LOAD(b->block_cycles))
			goto out;
	}
	STORE(b->values[count], LOAD(b->cur_max));
	STORE(b->count, count + 1);
	STORE(b->cur_max, 0);
	STORE(b->cur_n, 0);
out:
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&b->seq, atomic_load_explicit(&b->seq, memory_order_relaxed) + 1,
			      memory_order_release);
}

int bm_snapshot(struct block_maxima *b, uint64_t *out, uint64_t out_cap, struct block_maxima_view *view)
{
	for (int tries = 0; tries < 1000; tries++) {
		unsigned s1 = atomic_load_explicit(&b->seq, memory_order_acquire);

		if (s1 & 1)
			continue;
		view->count = READ(b->count);
		view->block_cycles = READ(b->block_cycles);
		view->partial_max = READ(b->cur_max);
		view->partial_n = READ(b->cur_n);
		if (view->count > out_cap)
			view->count = out_cap;
		for (uint64_t i = 0; i < view->count; i++)
			out[i] = READ(b->values[i]);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&b->seq, memory_order_relaxed) == s1)
			return 0;
	}
	return -1;
}
