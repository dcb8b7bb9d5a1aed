// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The timerlat backend (--timerlat): the kernel's timerlat tracer measures, through
 * `rtla timerlat hist`, in place of the sampler's own threads. Everything around it is the
 * engine's, as for its threads: the requirements, the loads, the competing-task scans, the stop
 * signals and the record. rtla's options come from the engine's (-i, -D, the threads' CPUs,
 * --latency) and from --timerlat's fields; it writes beside the --json results:
 * <base>.rtla.txt (its histogram, which rtgate reads), <base>.rtla.stderr, <base>.trace.txt.
 */
#ifndef RTGATE_TIMERLAT_H
#define RTGATE_TIMERLAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "numparse.h"
#include "params.h"

#define TIMERLAT_MAGIC "# RTLA timerlat histogram" /* parsers/rtla.py MAGIC: rtla printed a histogram */
#define TIMERLAT_GRACE_S 120   /* beyond its duration, for rtla to set up the tracer (slow under emulation) and stop */
#define TIMERLAT_KILL_WAIT_S 30 /* after SIGKILL, before the engine gives up waiting for rtla */

/* What the engine runs and watches; pid 0: not started. */
struct timerlat_run {
	char path[PATH_LEN];        /* rtla, found on PATH */
	char out[PATH_LEN], err[PATH_LEN], trace[PATH_LEN];
	char argbuf[1024];
	char *argv[40];
	pid_t pid;
	int status;                 /* wait status, once reaped */
};

/* One --timerlat value, strictly: bucket=US,entries=N[,sched=P:N][,user][,irq=US][,thread=US]. 0, or -1
 * with a one-line reason in err. */
int timerlat_parse(const char *text, struct timerlat_spec *t, char *err, size_t errlen);
/* Why this machine cannot run it (the reasons joined by "; "), or 0 when it can. */
int timerlat_unavailable(const struct timerlat_spec *t, char *buf, size_t len);
/* rtla's command line and file names for the run (json: the --json path). 0, or -1 with err. */
int timerlat_prepare(struct timerlat_run *t, const struct params *p, const struct cpu_info *cpus, char *err,
		     size_t errlen);
/* Start rtla: SIGINT ignored until it installs its own handler, SIGINT if the engine dies. 0, or -1 with err. */
int timerlat_start(struct timerlat_run *t, char *err, size_t errlen);
/* After rtla ended: 0 when it printed a histogram; else -1 with the first line it said in why. */
int timerlat_measured(const struct timerlat_run *t, char *why, size_t len);
/* rtla's command line as a JSON list (the record's "backend" object). */
void timerlat_write_json(FILE *f, const void *run);

#endif
