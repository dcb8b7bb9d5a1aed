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

#include "counter.h"

struct block_maxima {
	ctr64 *values;
	uint64_t cap;                    /* even */
	ctr64 count;                     /* complete blocks */
	ctr64 block_cycles;              /* cycles per block */
	ctr64 cur_max;                   /* the block being filled */
	ctr64 cur_n;
	_Atomic unsigned seq;            /* odd while the writer changes the layout */
	const ctr_seq *wseq;             /* the writer's per-sample sequence (counter.h) */
};

struct block_maxima_view {
	uint64_t count;
	uint64_t block_cycles;
	uint64_t partial_max;
	uint64_t partial_n;
};

/* wseq: the sequence count the writer brackets its samples with (counter.h). */
void bm_init(struct block_maxima *b, ctr64 *storage, uint64_t cap, uint64_t block_cycles, const ctr_seq *wseq);
void bm_close_block(struct block_maxima *b);

/* Hot path: a few relaxed loads and stores, the block closes once per block. */
static inline void bm_add(struct block_maxima *b, uint64_t v)
{
	uint64_t n = ctr_own(&b->cur_n) + 1;

	if (v > ctr_own(&b->cur_max) || n == 1)
		ctr_set(&b->cur_max, v);
	ctr_set(&b->cur_n, n);
	if (n >= ctr_own(&b->block_cycles))
		bm_close_block(b);
}

/* Copies up to out_cap complete blocks; returns 0, or -1 if the writer kept changing it. */
int bm_snapshot(struct block_maxima *b, uint64_t *out, uint64_t out_cap, struct block_maxima_view *view);

#endif
