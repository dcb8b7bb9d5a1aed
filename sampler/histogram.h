// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Full-range latency histogram layout: 1-unit buckets up to 2^lin_bits, then
 * 128 buckets per power of two (<= 0.79 % relative width) up to 2^top_bits,
 * then one last bucket that is open upwards (the exact max is kept apart).
 * Every sample lands in a bucket with known bounds: there is no unknown overflow.
 */
#ifndef RTGATE_HISTOGRAM_H
#define RTGATE_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define HIST_SUB_BITS 7
/* With -m, buckets below this latency (us) are locked before the run; later ones on first use. */
#define HIST_HOT_US 1000

struct hist_layout {
	unsigned lin_bits;
	unsigned top_bits;
	size_t nbuckets;
};

/* nsecs: unit is ns, else us. min_linear: the linear range must reach at least this value. */
void hist_layout_init(struct hist_layout *l, int nsecs, uint64_t min_linear);
size_t hist_index(const struct hist_layout *l, uint64_t v);
uint64_t hist_lower(const struct hist_layout *l, size_t idx);
/* Exclusive upper bound; UINT64_MAX for the last, open bucket. */
uint64_t hist_upper(const struct hist_layout *l, size_t idx);

#endif
