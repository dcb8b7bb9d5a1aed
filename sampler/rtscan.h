// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Competing real-time tasks: a port of the Python scan rtgate made before
 * (tests/reference_rt_tasks.py scan(), the reference it is held to). A SCHED_FIFO,
 * SCHED_RR or SCHED_DEADLINE task (kernel threads included) allowed on a CPU a sampler thread may
 * run on, at or above the sampler's lowest priority there (DEADLINE at any), can hold that CPU,
 * and the latency then measures it. Known per-CPU kernel threads are listed as expected, with why.
 *
 * Cheap, for the main thread's quiet tick: the tids come from getdents of /proc and
 * /proc/PID/task, one sched_getscheduler() each; only real-time ones have their stat read and
 * their affinity asked. No allocation: fixed tables, an overflow counted, never grown.
 */
#ifndef RTGATE_RTSCAN_H
#define RTGATE_RTSCAN_H

#include <stdint.h>
#include <stdio.h>

#include "numparse.h"
#include "params.h"

#define RTSCAN_MAX 512        /* tasks a table keeps; more are counted in overflow (competitors kept first) */
#define RTSCAN_COMM 64
#define RTSCAN_WORDS (MAX_CPUS / 64)

struct rt_task {
	int pid, tid;                     /* the process (thread group) and the thread */
	char comm[RTSCAN_COMM];
	int policy;                       /* SCHED_FIFO, SCHED_RR or SCHED_DEADLINE (6) */
	int priority;                     /* rt_priority; -1 for DEADLINE, which preempts every FIFO and RR task */
	int kernel;                       /* PF_KTHREAD */
	uint64_t cpus[RTSCAN_WORDS];      /* where it may run */
	uint64_t on_cpus[RTSCAN_WORDS];   /* the sampler's CPUs it can preempt it on */
	const char *expected;             /* why it is expected there; NULL: a competitor */
};

struct rt_tasks {
	int n;
	int overflow;                     /* found but not kept: the table was full */
	struct rt_task t[RTSCAN_MAX];
};

/* Per CPU, the lowest priority of a sampler thread that may run there (0 for non-RT policies:
 * every RT task preempts those); -1 where none may run. */
struct rt_priorities {
	int prio[MAX_CPUS];
};

enum rtscan_mode {
	RTSCAN_ALL,              /* the table becomes this scan's tasks, expected ones included (before, after) */
	RTSCAN_NEW_COMPETITORS,  /* competitors not yet in the table are added (during: each once) */
};

/* From the sampler's own thread plan: each pinned thread's CPU, an unpinned one every CPU in allowed. */
void rtscan_priorities(const struct params *p, const struct cpu_info *allowed, struct rt_priorities *out);
/* Scan root ("/": this machine, live; else a copy of its /proc, read from stat and status files).
 * own_pid's threads are expected ("the sampler's own thread"). Returns the competitors found. */
int rtscan(const char *root, const struct rt_priorities *pr, int own_pid, struct rt_tasks *out,
	   enum rtscan_mode mode);
/* The timerlat backend measures (--timerlat): its kernel threads (timerlat/N) are expected, and so is
 * every thread of rtla's process `pid` (0 until it runs), e.g. its user-space timerlat threads. */
void rtscan_timerlat_measures(int pid);
/* "kernel thread comm (pid P, tid T, FIFO 50, cpu 0,1)", as core/validity.py describe_task(). */
void rtscan_describe(const struct rt_task *t, char *buf, size_t len);
/* Competitors of the lists, each (pid, tid) once in order of first appearance with its latest data,
 * described and joined by ", " after lead and a space. Returns how many. */
int rtscan_competitors_text(const struct rt_tasks *const *lists, int nlists, const char *lead, char *buf,
			    size_t len);
/* The table as a JSON list of RtTask.as_dict() objects (competitors_only: the unexpected ones). */
void rtscan_write_json(FILE *f, const struct rt_tasks *t, int competitors_only);
const char *rtscan_policy_name(int policy);

#endif
