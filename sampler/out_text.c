// SPDX-License-Identifier: GPL-2.0-or-later
#include "out_text.h"

#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"

void text_status_line(FILE *f, const struct run_result *r, const struct thread_result *t)
{
	/* cyclictest prints its 1000000 start value as Min before the first sample; we print 0. */
	long avg = t->cycles ? (long)(t->sum / t->cycles) : 0;
	long min = t->cycles ? (long)t->min : 0;

	if (r->p->nsecs)
		fprintf(f, "T:%2d (%5d) P:%2d I:%llu C:%7llu Min:%7ld Act:%8ld Avg:%8ld Max:%8ld\n",
			t->index, t->tid, t->priority, (unsigned long long)t->interval_us,
			(unsigned long long)t->cycles, min, (long)t->act, avg, (long)t->max);
	else
		fprintf(f, "T:%2d (%5d) P:%2d I:%llu C:%7llu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld\n",
			t->index, t->tid, t->priority, (unsigned long long)t->interval_us,
			(unsigned long long)t->cycles, min, (long)t->act, avg, (long)t->max);
}

void text_live_header(FILE *f, const struct params *p)
{
	char lavg[256] = "";
	int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t n = read(fd, lavg, sizeof(lavg) - 1);
		close(fd);
		if (n > 0) {
			lavg[n] = '\0';
			lavg[strcspn(lavg, "\n")] = '\0';
		}
	}
	/* cyclictest: "fifo", "rr", or the policy over the "other" it forces: "other/other", "batch/other" */
	if (p->policy == SCHED_FIFO || p->policy == SCHED_RR)
		fprintf(f, "policy: %s: loadavg: %s          \n\n", policy_name(p->policy), lavg);
	else
		fprintf(f, "policy: %s/other: loadavg: %s          \n\n", policy_name(p->policy), lavg);
}

static int by_ts(const void *a, const void *b)
{
	const struct spike *x = *(const struct spike *const *)a, *y = *(const struct spike *const *)b;
	return (x->ts_us > y->ts_us) - (x->ts_us < y->ts_us);
}

void text_spikes(FILE *f, const struct run_result *r)
{
	uint64_t total = 0, n = 0, k = 0;
	const struct spike **all;

	for (int i = 0; i < r->nthreads; i++) {
		total += r->t[i].spikes_total;
		n += r->t[i].n_spikes;
	}
	if (total == 0)
		return;
	all = calloc(n ? n : 1, sizeof(*all));
	if (!all)
		return;
	for (int i = 0; i < r->nthreads; i++)
		for (uint64_t j = 0; j < r->t[i].n_spikes; j++)
			all[k++] = &r->t[i].spikes[j];
	qsort(all, n, sizeof(*all), by_ts);
	fprintf(f, "\n");
	for (uint64_t j = 0; j < n; j++) {
		/* find the owning thread: spikes of one thread are contiguous in its array */
		int tn = 0;
		for (int i = 0; i < r->nthreads; i++)
			if (all[j] >= r->t[i].spikes && all[j] < r->t[i].spikes + r->t[i].n_spikes)
				tn = r->t[i].index;
		fprintf(f, "T:%2d Spike:%8llu: TS: %12lld\n", tn, (unsigned long long)all[j]->value,
			(long long)all[j]->ts_us);
	}
	fprintf(f, "spikes = %llu\n\n", (unsigned long long)total);
	free(all);
}

void text_break(FILE *f, const struct run_result *r)
{
	if (!r->p->breaktrace)
		return;
	fprintf(f, "# Thread Ids:");
	for (int i = 0; i < r->nthreads; i++)
		fprintf(f, " %05d", r->t[i].tid);
	fprintf(f, "\n");
	if (r->break_thread >= 0) {
		const struct thread_result *t = &r->t[r->break_thread];
		fprintf(f, "# Break thread: %d\n", t->tid);
		fprintf(f, "# Break value: %llu\n", (unsigned long long)t->break_value);
	}
}
