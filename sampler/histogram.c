// SPDX-License-Identifier: GPL-2.0-or-later
#include "histogram.h"

/* µs: 2^14 us = 16.4 ms linear, top 2^24 us = 16.8 s.
 * ns: 2^17 ns = 131 us linear (10 ms at 1 ns would lock 80 MB per thread), top 2^34 ns = 17.2 s. */
void hist_layout_init(struct hist_layout *l, int nsecs, uint64_t min_linear)
{
	unsigned lin = nsecs ? 17 : 14;

	while (lin < 40 && ((uint64_t)1 << lin) < min_linear)
		lin++;
	l->lin_bits = lin;
	l->top_bits = nsecs ? 34 : 24;
	if (l->top_bits <= lin)
		l->top_bits = lin + 1;
	l->nbuckets = ((size_t)1 << lin) + (size_t)(l->top_bits - lin) * (1u << HIST_SUB_BITS) + 1;
}

static unsigned floor_log2(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

size_t hist_index(const struct hist_layout *l, uint64_t v)
{
	unsigned k;

	if (v < ((uint64_t)1 << l->lin_bits))
		return (size_t)v;
	k = floor_log2(v);
	if (k >= l->top_bits)
		return l->nbuckets - 1;
	return ((size_t)1 << l->lin_bits) + (size_t)(k - l->lin_bits) * (1u << HIST_SUB_BITS) +
	       (size_t)((v >> (k - HIST_SUB_BITS)) & ((1u << HIST_SUB_BITS) - 1));
}

uint64_t hist_lower(const struct hist_layout *l, size_t idx)
{
	size_t lin = (size_t)1 << l->lin_bits, rel;
	unsigned k;

	if (idx < lin)
		return idx;
	if (idx >= l->nbuckets - 1)
		return (uint64_t)1 << l->top_bits;
	rel = idx - lin;
	k = l->lin_bits + (unsigned)(rel >> HIST_SUB_BITS);
	return ((uint64_t)(1u << HIST_SUB_BITS) + (rel & ((1u << HIST_SUB_BITS) - 1))) << (k - HIST_SUB_BITS);
}

uint64_t hist_upper(const struct hist_layout *l, size_t idx)
{
	if (idx >= l->nbuckets - 1)
		return UINT64_MAX;
	return hist_lower(l, idx + 1);
}
