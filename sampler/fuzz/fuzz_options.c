// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target: the command-line parser. Input: argv words separated by NUL or newline. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct params p;
	static char buf[8192];
	char *argv[130], err[512];
	struct cpu_info cpus;
	int argc = 1;

	if (size >= sizeof(buf))
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = (char *)"rtgate-sampler";
	for (char *w = buf; argc < 128;) {
		char *end = w + strcspn(w, "\n");
		int last = *end == '\0';

		*end = '\0';
		argv[argc++] = w;
		if (last)
			break;
		w = end + 1;
	}
	argv[argc] = NULL;
	memset(&cpus, 0, sizeof(cpus));
	cpus.ncpus = 4;
	cpus.nallowed = 3;
	cpus.allowed[0] = cpus.allowed[1] = cpus.allowed[3] = 1;
	options_set_warning_stream(NULL);
	err[0] = '\0';
	if (options_parse(argc, argv, &cpus, &p, err, sizeof(err)) == OPTIONS_ERROR &&
	    (!memchr(err, '\0', sizeof(err)) || !err[0] || strchr(err, '\n')))
		abort(); /* every error is one non-empty, terminated line */
	return 0;
}
