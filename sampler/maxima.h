// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Block maxima: the largest latency of each block of cycles, in a fixed buffer.
 * When the buffer is full, neighbours are merged (max of each pair) and the block
 * doubles, so a long run keeps its whole time line at a coarser grain, never drops it.
 * One thread writes; others read through a sequence counter.
 */
#ifndef RTGATE_MAXIMA_H
#define RTGATE_MAXIMA_H

#include <stdatomic.h>
#include <stdint.h>

struct block_maxima {
	_Atomic uint64_t *values;
	uint64_t cap;                    /* even */
	_Atomic uint64_t count;          /* complete blocks */
	_Atomic uint64_t block_cycles;   /* cycles per block */
	_Atomic uint64_t cur_max;        /* the block being filled */
	_Atomic uint64_t cur_n;
	_Atomic unsigned seq;            /* odd while the writer changes the layout */
};

struct block_maxima_view {
	uint64_t count;
	uint64_t block_cycles;
	uint64_t partial_max;
	uint64_t partial_n;
};

void bm_init(struct block_maxima *b, _Atomic uint64_t *storage, uint64_t cap, uint64_t block_cycles);
void bm_close_block(struct block_maxima *b);

/* Hot path: a few relaxed loads and stores, the block closes once per block. */
static inline void bm_add(struct block_maxima *b, uint64_t v)
{
	uint64_t n = atomic_load_explicit(&b->cur_n, memory_order_relaxed) + 1;

	if (v > atomic_load_explicit(&b->cur_max, memory_order_relaxed) || n == 1)
		atomic_store_explicit(&b->cur_max, v, memory_order_relaxed);
	atomic_store_explicit(&b->cur_n, n, memory_order_relaxed);
	if (n >= atomic_load_explicit(&b->block_cycles, memory_order_relaxed))
		bm_close_block(b);
}

/* Copies up to out_cap complete blocks; returns 0, or -1 if the writer kept changing it. */
int bm_snapshot(struct block_maxima *b, uint64_t *out, uint64_t out_cap, struct block_maxima_view *view);

#endif
