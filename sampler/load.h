// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Background loads around a measurement (--load): started together, each in its own session on
 * its CPUs, warmed up, held to a level judged from two readings (after the warm-up, at the end),
 * and stopped with every process of their sessions whatever happens. A port of rtgate's
 * measure/load.py (Load, Loads): the same record, the same reasons.
 */
#ifndef RTGATE_LOAD_H
#define RTGATE_LOAD_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "numparse.h"
#include "params.h"

#define LOAD_MAX 8              /* loads in one measurement */
#define LOAD_MAX_WORDS 64       /* words of a custom load's command */
#define LOAD_REASON_LEN 512
#define LOAD_MAX_STRESSORS 8    /* stress-ng metrics kept per load */
#define LOAD_MAX_METRICS 24     /* fields of one stressor's metrics */

enum load_kind {
	LOAD_CPU, LOAD_MEMORY, LOAD_IO, LOAD_TIMER, LOAD_NETWORK, LOAD_HACKBENCH, LOAD_KCOMPILE, LOAD_CUSTOM,
	LOAD_KIND_END
};

enum load_place { PLACE_OTHERS, PLACE_MEASURED, PLACE_ALL, PLACE_LIST };

/* One --load=SPEC, as parsed (no CPU resolved yet). */
struct load_spec {
	enum load_kind kind;
	enum load_place place;          /* default: others, as a threshold file's load */
	unsigned char cpus[MAX_CPUS];   /* PLACE_LIST */
	int workers;                    /* 0: one per CPU */
	double warmup_s;                /* default 2 */
	double min;                     /* the level floor in the kind's unit */
	int min_given;
	char size[24];                  /* memory, io: "64M" */
	char tree[PATH_LEN];            /* kcompile; "" = the bundled project */
	const char *words[LOAD_MAX_WORDS]; /* custom: the command, from --load-arg (argv's own strings) */
	int nwords;
};

struct load_metric { char key[48], value[64]; };
struct load_stressor { int n; struct load_metric m[LOAD_MAX_METRICS]; };

struct load {
	struct load_spec spec;
	int cpus[MAX_CPUS];
	int ncpus;
	char dir[PATH_LEN];             /* its log folder: load.log, stress-ng.yaml */
	char workdir[PATH_LEN];         /* private temporary folder, removed when it stops */
	char argbuf[PATH_LEN * 2 + 1024];
	char *argv[LOAD_MAX_WORDS + 24];
	int argc;
	pid_t pid;                      /* leader = its session and process group; 0: not started */
	int status, exited;             /* the leader's wait status, once reaped */
	long long start_ticks;
	long long start_ns;
	double cpu_seconds, elapsed;
	int settled, finished, stopped;
	int over;                       /* reached more than its CPUs can give: no figure */
	char problem[LOAD_REASON_LEN];
	int nstressors;                 /* -1: no metrics */
	struct load_stressor stressors[LOAD_MAX_STRESSORS];
	long long runs;                 /* hackbench/kcompile: the runs its log counts */
};

struct loads {
	int n;
	struct load l[LOAD_MAX];
	pid_t guard;                    /* stops the loads if the sampler dies (or at the bound) */
	int guard_fd;
	char not_measured[LOAD_REASON_LEN];
	int stopped_by;                 /* the stop signal that ended the warm-up (gates INCONCLUSIVE), or 0 */
};

const char *load_kind_name(enum load_kind kind);
/* One --load value, strictly: kind=KIND[,cpus=..][,workers=N][,warmup=S][,min=L][,size=B][,tree=P].
 * 0, or -1 with a one-line message in err. */
int load_parse_spec(const char *text, const struct cpu_info *cpus, struct load_spec *spec, char *err,
		    size_t errlen);

/*
 * The measurement's loads from the options (--load/--load-arg in order, --load-dir, --json): CPUs
 * resolved against the thread plan (measured = the sampler's pinned CPUs, or every allowed CPU when
 * a thread is not pinned), log folders named. 0, or -1 with a usage error in err.
 */
int loads_plan(struct loads *ls, const struct params *p, const struct cpu_info *cpus, char *err, size_t errlen);
/*
 * Start every load and warm them up together (the longest warm-up). A stop signal ends the warm-up
 * at once: stopped() returns the signal's number (0: none), and is read with SIGINT, SIGTERM and
 * SIGHUP blocked. expected_s: how long the measurement should take (0: unknown); the loads end by
 * themselves after their warm-up and 1.1 times that, plus 30 s.
 * 0: the loads run; -1: not measured, the reason in ls->not_measured (a missing tool, a load that
 * died in its warm-up, the stop signal), the loads already stopped.
 */
int loads_start(struct loads *ls, double expected_s, int (*stopped)(void));
/* When the measurement ends, with the loads still running: the second reading. */
void loads_finish(struct loads *ls);
/* Stop every load's session (SIGTERM, 5 s, SIGKILL, 5 s), reap, judge stress-ng's rate, remove the
 * temporary folders. Idempotent; safe from an atexit handler. */
void loads_stop(struct loads *ls);
/* Loads.summary(): the "load" object (no indentation, one line). */
void load_write_json(FILE *f, const struct loads *ls);
/* Each load's problem (the run measured, but not under the load asked): the count, at most max. */
int load_problems(const struct loads *ls, char out[][LOAD_REASON_LEN], int max);

#endif
