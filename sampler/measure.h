/* The measurement thread: sleep to the next period, read the clock, record. Nothing else. */
#ifndef RTGATE_MEASURE_H
#define RTGATE_MEASURE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "histogram.h"
#include "params.h"
#include "thread_state.h"

#define WAKE_SIGNAL SIGUSR2   /* sent by main to cut a sleep short when stopping */
#define TIMER_SIGNAL SIGALRM  /* -x: the per-thread POSIX timer */

enum setup_step { STEP_NONE = 0, STEP_AFFINITY, STEP_SCHEDULER, STEP_TIMER };

struct run_control {
	const struct params *p;
	struct hist_layout layout;
	pthread_barrier_t ready;     /* threads set up; main checks them */
	pthread_barrier_t go;        /* main says start (or abort) */
	_Atomic int abort_start;
	_Atomic int stop;
	_Atomic int break_claimed;   /* index + 1 of the thread that hit -b */
	int trace_fd;                /* tracefs trace_marker, or -1 */
	int64_t common_start_ns;     /* -A/--secaligned: shared start; 0 = each its own */
};

struct thread_arg {
	struct run_control *ctl;
	struct thread_state *ts;
};

void *measure_thread(void *arg);
int64_t now_ns(clockid_t clock);

#endif
