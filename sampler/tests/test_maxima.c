// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdlib.h>

#include "check.h"
#include "maxima.h"

int main(void)
{
	static ctr64 store[8];
	static ctr_seq seq;
	struct block_maxima b;
	struct block_maxima_view v;
	uint64_t out[8];

	/* blocks of 2 cycles, 8 of them before the buffer is full */
	bm_init(&b, store, 8, 2, &seq);
	for (uint64_t i = 1; i <= 16; i++)
		bm_add(&b, i * 10);
	CHECK(bm_snapshot(&b, out, 8, &v) == 0);
	CHECK_EQ(v.count, 8);
	CHECK_EQ(v.block_cycles, 2);
	CHECK_EQ(out[0], 20);
	CHECK_EQ(out[7], 160);
	CHECK_EQ(v.partial_n, 0);

	/* the 9th block does not fit: pairs merge, blocks double, the new block is half full */
	bm_add(&b, 5);
	bm_add(&b, 7);
	CHECK(bm_snapshot(&b, out, 8, &v) == 0);
	CHECK_EQ(v.count, 4);
	CHECK_EQ(v.block_cycles, 4);
	CHECK_EQ(out[0], 40);
	CHECK_EQ(out[1], 80);
	CHECK_EQ(out[3], 160);
	CHECK_EQ(v.partial_n, 2);
	CHECK_EQ(v.partial_max, 7);
	bm_add(&b, 3);
	bm_add(&b, 1000);
	CHECK(bm_snapshot(&b, out, 8, &v) == 0);
	CHECK_EQ(v.count, 5);
	CHECK_EQ(out[4], 1000);
	CHECK_EQ(v.partial_n, 0);

	/* a long run: no maximum is ever lost, the series keeps covering every cycle */
	static ctr64 big[64];
	uint64_t bout[64], truth = 0, total = 100003;
	bm_init(&b, big, 64, 3, &seq);
	for (uint64_t i = 0; i < total; i++) {
		uint64_t x = (i * 2654435761u) % 100000;
		if (i == 77777)
			x = 999999;
		if (x > truth)
			truth = x;
		bm_add(&b, x);
	}
	CHECK(bm_snapshot(&b, bout, 64, &v) == 0);
	uint64_t seen = v.partial_n ? v.partial_max : 0;
	for (uint64_t i = 0; i < v.count; i++)
		if (bout[i] > seen)
			seen = bout[i];
	CHECK_EQ(seen, truth);
	CHECK_EQ(v.count * v.block_cycles + v.partial_n, total);
	CHECK(v.count <= 64 && v.count >= 32);
	CHECK_DONE();
}
