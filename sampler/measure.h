// SPDX-License-Identifier: GPL-2.0-or-later
/* The measurement thread: sleep to the next period, read the clock, record. Nothing else. */
#ifndef RTGATE_MEASURE_H
#define RTGATE_MEASURE_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "histogram.h"
#include "params.h"
#include "thread_state.h"

#define WAKE_SIGNAL SIGUSR2   /* sent by main to cut a sleep short when stopping */
#define TIMER_SIGNAL SIGALRM  /* -x: the per-thread POSIX timer */

/*
 * The schedule of every thread is fixed by main before the thread is created, from one
 * start instant: thread i wakes at first_next_ns + k * interval. Policy, priority and CPU
 * are set at creation (pthread attributes), so nothing waits for a thread to run: a
 * thread that first runs late records that lateness and counts the periods it lost.
 */
struct run_control {
	const struct params *p;
	struct hist_layout layout;
	_Atomic int stop;
	_Atomic int stop_reason;     /* enum stop_reason of whoever stopped the run first */
	_Atomic int break_claimed;   /* index + 1 of the thread that hit -b */
	int trace_fd;                /* tracefs trace_marker, or -1 */
	int64_t start_ns;            /* the run's start on p->clock_id */
	int64_t stop_at_ns;          /* start + duration (each thread: its own start + duration); 0 = none */
	sem_t finished;              /* posted by each thread as it ends: main wakes at once */
};

struct thread_arg {
	struct run_control *ctl;
	struct thread_state *ts;
};

void *measure_thread(void *arg);
int64_t now_ns(clockid_t clock);
/* Stop the run for every thread; the first caller's reason is kept. */
void run_stop(struct run_control *ctl, int reason);
/* Periods of one thread with a scheduled wake in [from, until): lost periods still count. */
uint64_t periods_before(int64_t from, int64_t until, int64_t interval);

#endif
