// SPDX-License-Identifier: GPL-2.0-or-later
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "out_histtext.h"
#include "out_json.h"
#include "out_text.h"

static char *render(void (*fn)(FILE *, const struct run_result *), const struct run_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, r);
	fclose(f);
	return buf;
}

int main(void)
{
	static char *argv[] = {"rtgate-sampler", "-h", "4", "--json=\"q\".json", NULL};
	struct params p;
	struct hist_layout l;
	struct sys_facts sys;
	struct thread_result t[2];
	struct run_result r;
	static uint64_t h0[20000], h1[20000];
	static const uint64_t ovc[] = {3, 9};
	static const uint64_t blocks[] = {12, 5000};

	memset(&p, 0, sizeof(p));
	p.hist_limit = 4;
	p.histofall = 1;
	p.argc = 4;
	p.argv = argv;
	p.policy = SCHED_FIFO;
	p.block_s = 1.0;
	hist_layout_init(&l, 0, p.hist_limit);
	memset(&sys, 0, sizeof(sys));
	strcpy(sys.sysname, "Linux");
	strcpy(sys.release, "6.1.0-rt");
	sys.realtime = 1;

	/* thread 0: 1,1,2 and two samples of 5000 (overflow of the -h 4 view); thread 1: nothing */
	h0[1] = 2;
	h0[2] = 1;
	h0[hist_index(&l, 5000)] = 2;
	memset(t, 0, sizeof(t));
	t[0] = (struct thread_result){ .index = 0, .cpu = 0, .node = 0, .priority = 80, .policy = SCHED_FIFO,
		.tid = 42, .interval_us = 200, .cycles = 5, .min = 1, .max = 5000, .act = 2, .sum = 10004,
		.missed = 7, .overflow = 2, .hist = h0, .overflow_cycles = ovc, .n_overflow_cycles = 2,
		.blocks = blocks, .bview = { .count = 2, .block_cycles = 5000 } };
	t[1] = (struct thread_result){ .index = 1, .cpu = 1, .node = 0, .priority = 80, .policy = SCHED_FIFO,
		.tid = 43, .interval_us = 200, .hist = h1, .blocks = blocks };
	memset(&r, 0, sizeof(r));
	r.p = &p;
	r.layout = &l;
	r.sys = &sys;
	r.nthreads = 2;
	r.t = t;
	r.complete = 1;
	r.reason = STOP_LOOPS;
	r.latency_target = 0;
	r.break_thread = -1;

	char *hist = render(histtext_write, &r);
	const char *expect =
		"# Histogram\n"
		"000000 000000\t000000\t000000\n"
		"000001 000002\t000000\t000002\n"
		"000002 000001\t000000\t000001\n"
		"000003 000000\t000000\t000000\n"
		"# Total: 000000003 000000000 000000003\n"
		"# Min Latencies: 00001 00000\n"
		"# Avg Latencies: 02000 00000\n"
		"# Max Latencies: 05000 00000 05000\n"
		"# Histogram Overflows: 00002 00000 00002\n"
		"# Histogram Overflow at cycle number:\n"
		"# Thread 0: 00003 00009\n"
		"# Thread 1:\n"
		"\n";
	if (strcmp(hist, expect) != 0) {
		fprintf(stderr, "histogram text differs:\n%s\nexpected:\n%s\n", hist, expect);
		check_failures++;
	}
	free(hist);

	char *json = render(json_write, &r);
	CHECK_STR_HAS(json, "\"file_version\": 1,");
	CHECK_STR_HAS(json, "\"cmdline:\": \"rtgate-sampler -h 4 --json=\\\"q\\\".json\"");
	CHECK_STR_HAS(json, "\"rt_test_version:\"");
	CHECK_STR_HAS(json, "\"num_threads\": 2,");
	CHECK_STR_HAS(json, "\"resolution_in_ns\": 0,");
	CHECK_STR_HAS(json, "\"realtime\": 1");
	CHECK_STR_HAS(json, "\"histogram\": {\n        \"1\": 2,\n        \"2\": 1\n      },");
	CHECK_STR_HAS(json, "\"avg\": 2000.80,");
	/* a thread without samples: no sentinel min, no nan */
	CHECK_STR_HAS(json, "\"cycles\": 0,\n      \"min\": null,\n      \"max\": null,\n      \"avg\": null,");
	CHECK(strstr(json, ": nan") == NULL && strstr(json, ": -nan") == NULL);
	CHECK(strstr(json, "1000000") == NULL);
	CHECK_STR_HAS(json, "\"missed_periods\": 7");
	CHECK_STR_HAS(json, "\"stop_reason\": \"loops\"");
	CHECK_STR_HAS(json, "\"complete\": true");
	/* full-range buckets carry their bounds; 5000 us sits in a 1 us bucket */
	CHECK_STR_HAS(json, "\"histogram\": [[1, 2, 2], [2, 3, 1], [5000, 5001, 2]]");
	CHECK_STR_HAS(json, "\"values\": [12, 5000]");
	CHECK_STR_HAS(json, "\"overflow_cycles\": [3, 9]");
	free(json);

	char *line = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);
	text_status_line(f, &r, &t[0]);
	fclose(f);
	CHECK(strcmp(line, "T: 0 (   42) P:80 I:200 C:      5 Min:      1 Act:    2 Avg: 2000 Max:    5000\n") == 0);
	free(line);
	CHECK_DONE();
}
