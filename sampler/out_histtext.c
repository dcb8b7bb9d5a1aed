// SPDX-License-Identifier: GPL-2.0-or-later
#include "out_histtext.h"

void histtext_write(FILE *f, const struct run_result *r)
{
	const struct params *p = r->p;
	const int n = r->nthreads;
	const int sumcol = p->histofall && n > 1;
	unsigned long long all_total = 0, all_over = 0, maxmax = 0;

	fprintf(f, "# Histogram\n");
	/* The -h view is the linear part of the full histogram: bucket i holds latency i. */
	for (uint64_t i = 0; i < p->hist_limit; i++) {
		unsigned long long row = 0;

		fprintf(f, "%06llu ", (unsigned long long)i);
		for (int j = 0; j < n; j++) {
			fprintf(f, "%06llu", (unsigned long long)r->t[j].hist[i]);
			if (j < n - 1)
				fprintf(f, "\t");
			row += r->t[j].hist[i];
		}
		if (sumcol)
			fprintf(f, "\t%06llu", row);
		fprintf(f, "\n");
	}
	fprintf(f, "# Total:");
	for (int j = 0; j < n; j++) {
		unsigned long long in_range = r->t[j].cycles - r->t[j].overflow;
		fprintf(f, " %09llu", in_range);
		all_total += in_range;
	}
	if (sumcol)
		fprintf(f, " %09llu", all_total);
	fprintf(f, "\n# Min Latencies:");
	for (int j = 0; j < n; j++)
		fprintf(f, " %05llu", (unsigned long long)(r->t[j].cycles ? r->t[j].min : 0));
	fprintf(f, "\n# Avg Latencies:");
	for (int j = 0; j < n; j++)
		fprintf(f, " %05llu", (unsigned long long)(r->t[j].cycles ? r->t[j].sum / r->t[j].cycles : 0));
	fprintf(f, "\n# Max Latencies:");
	for (int j = 0; j < n; j++) {
		fprintf(f, " %05llu", (unsigned long long)r->t[j].max);
		if (r->t[j].max > maxmax)
			maxmax = r->t[j].max;
	}
	if (sumcol)
		fprintf(f, " %05llu", maxmax);
	fprintf(f, "\n# Histogram Overflows:");
	for (int j = 0; j < n; j++) {
		fprintf(f, " %05llu", (unsigned long long)r->t[j].overflow);
		all_over += r->t[j].overflow;
	}
	if (sumcol)
		fprintf(f, " %05llu", all_over);
	fprintf(f, "\n# Histogram Overflow at cycle number:\n");
	for (int j = 0; j < n; j++) {
		const struct thread_result *t = &r->t[j];

		fprintf(f, "# Thread %d:", t->index);
		for (uint64_t k = 0; k < t->n_overflow_cycles; k++)
			fprintf(f, " %05llu", (unsigned long long)t->overflow_cycles[k]);
		if (t->n_overflow_cycles < t->overflow)
			fprintf(f, " # %05llu others", (unsigned long long)(t->overflow - t->n_overflow_cycles));
		fprintf(f, "\n");
	}
	fprintf(f, "\n");
}
