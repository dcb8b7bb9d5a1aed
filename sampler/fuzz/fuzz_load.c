// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target: the --load argument parser, then the plan of what it accepted (CPUs, folders). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char buf[PATH_LEN + 512];
	static struct load_spec spec;
	static struct params p;
	static struct loads ls;
	struct cpu_info cpus;
	char err[600];

	if (size >= sizeof(buf))
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	memset(&cpus, 0, sizeof(cpus));
	cpus.ncpus = 4;
	cpus.nallowed = 3;
	cpus.allowed[0] = cpus.allowed[1] = cpus.allowed[3] = 1;
	if (load_parse_spec(buf, &cpus, &spec, err, sizeof(err)))
		return 0;
	/* accepted: planned as the sampler's one thread on CPU 0 would plan it, with a word if custom */
	memset(&p, 0, sizeof(p));
	p.num_threads = 1;
	p.thread_cpu[0] = 0;
	p.load_opt[0] = buf;
	p.load_opt[1] = "true";
	p.load_opt_is_word[1] = 1;
	p.nload_opts = 2;
	strcpy(p.json_path, "/tmp/fuzz.json");
	loads_plan(&ls, &p, &cpus, err, sizeof(err));
	return 0;
}
