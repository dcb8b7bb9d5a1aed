// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target: the --gate argument parser, then an evaluation of what it accepted. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char buf[4096];
	static struct gate_spec g;
	static struct gate_verdict out[4];
	char err[256];
	struct params p;
	struct hist_layout layout;
	struct thread_result t[2];
	struct run_result r;
	char ids[2][GATE_NAME_LEN] = {"cpu0", "cpu1"};

	if (size >= sizeof(buf))
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	if (gate_parse(buf, &g, err, sizeof(err)))
		return 0;
	/* accepted: evaluate it against two small threads, one empty */
	static uint64_t h[1 << 16];
	hist_layout_init(&layout, 0, 0);
	memset(&p, 0, sizeof(p));
	memset(t, 0, sizeof(t));
	memset(&r, 0, sizeof(r));
	h[3] = 90;
	h[hist_index(&layout, 40000)] = 10;
	t[0].index = 0; t[0].cpu = 0; t[0].cycles = 100; t[0].min = 3; t[0].max = 40000; t[0].sum = 400270;
	t[0].hist = h; t[0].missed = 2; t[0].interval_us = 1000;
	t[1].index = 1; t[1].cpu = 1; t[1].hist = h; t[1].interval_us = 1000;
	r.p = &p; r.layout = &layout; r.nthreads = 2; r.t = t; r.complete = 1; r.reason = STOP_DURATION;
	gate_evaluate(&g, &r, ids, out, 4);
	return 0;
}
