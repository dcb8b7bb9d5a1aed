// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdint.h>

#include "check.h"
#include "histogram.h"

static void check_layout(const struct hist_layout *l, uint64_t ten_seconds)
{
	/* contiguous, increasing bounds */
	for (size_t i = 0; i + 1 < l->nbuckets; i++) {
		if (hist_upper(l, i) != hist_lower(l, i + 1) || hist_lower(l, i) >= hist_upper(l, i)) {
			fprintf(stderr, "bucket %zu: [%llu, %llu) next lower %llu\n", i,
				(unsigned long long)hist_lower(l, i), (unsigned long long)hist_upper(l, i),
				(unsigned long long)hist_lower(l, i + 1));
			check_failures++;
			return;
		}
	}
	/* beyond the linear range, relative width <= 1 % */
	for (size_t i = (size_t)1 << l->lin_bits; i + 1 < l->nbuckets; i++) {
		double lo = (double)hist_lower(l, i), hi = (double)hist_upper(l, i);
		if ((hi - lo) / lo > 0.01) {
			fprintf(stderr, "bucket %zu too wide: [%g, %g)\n", i, lo, hi);
			check_failures++;
			return;
		}
	}
	CHECK(hist_lower(l, l->nbuckets - 1) >= ten_seconds);
	CHECK(hist_upper(l, l->nbuckets - 1) == UINT64_MAX);
	/* every value lands in the bucket whose bounds contain it */
	for (uint64_t v = 0; v < ((uint64_t)1 << 36); v = v < 70000 ? v + 1 : v + v / 977 + 1) {
		size_t i = hist_index(l, v);
		if (i >= l->nbuckets || v < hist_lower(l, i) || v >= hist_upper(l, i)) {
			fprintf(stderr, "value %llu in bucket %zu [%llu, %llu)\n", (unsigned long long)v, i,
				(unsigned long long)hist_lower(l, i), (unsigned long long)hist_upper(l, i));
			check_failures++;
			return;
		}
	}
	CHECK_EQ(hist_index(l, UINT64_MAX), l->nbuckets - 1);
}

int main(void)
{
	struct hist_layout us, ns, wide;

	hist_layout_init(&us, 0, 0);
	CHECK_EQ(us.lin_bits, 14);
	CHECK(((uint64_t)1 << us.lin_bits) >= 10000);   /* 1 us buckets up to at least 10 ms */
	CHECK_EQ(hist_index(&us, 0), 0);
	CHECK_EQ(hist_index(&us, 80), 80);
	CHECK_EQ(hist_index(&us, 16383), 16383);
	CHECK_EQ(hist_index(&us, 16384), 16384);
	CHECK_EQ(hist_lower(&us, 16384), 16384);
	CHECK_EQ(hist_upper(&us, 16384), 16384 + 128);
	CHECK_EQ(hist_index(&us, 16384 + 127), 16384);
	CHECK_EQ(hist_index(&us, 16384 + 128), 16385);
	CHECK_EQ(hist_index(&us, 32767), 16384 + 127);
	CHECK_EQ(hist_index(&us, 32768), 16384 + 128);
	check_layout(&us, 10000000ULL);

	hist_layout_init(&ns, 1, 0);
	CHECK_EQ(ns.lin_bits, 17);
	check_layout(&ns, 10000000000ULL);

	/* a -h limit beyond the default linear range widens it, so the -h view stays exact */
	hist_layout_init(&wide, 0, 100000);
	CHECK(((uint64_t)1 << wide.lin_bits) >= 100000);
	check_layout(&wide, 10000000ULL);
	CHECK_DONE();
}
