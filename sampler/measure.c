#include "measure.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define STORE(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

int64_t now_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static struct timespec to_ts(int64_t ns)
{
	struct timespec t = { .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };
	return t;
}

static void fail_setup(struct thread_state *ts, int step, int err)
{
	STORE(ts->setup_step, step);
	STORE(ts->setup_errno, err);
}

static int setup(struct run_control *ctl, struct thread_state *ts, timer_t *timer)
{
	struct sched_param sp = { .sched_priority = ts->priority };

	STORE(ts->tid, (int)syscall(SYS_gettid));
	if (ts->cpu >= 0) {
		cpu_set_t set;
		int err;

		CPU_ZERO(&set);
		CPU_SET(ts->cpu, &set);
		err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
		if (err) {
			fail_setup(ts, STEP_AFFINITY, err);
			return -1;
		}
	}
	if (sched_setscheduler(0, ts->policy, &sp)) {
		fail_setup(ts, STEP_SCHEDULER, errno);
		return -1;
	}
	if (ctl->p->posix_timers) {
		struct sigevent sev;

		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = TIMER_SIGNAL;
		sev.sigev_notify_thread_id = LOAD(ts->tid);
		if (timer_create(ctl->p->clock_id, &sev, timer)) {
			fail_setup(ts, STEP_TIMER, errno);
			return -1;
		}
	}
	return 0;
}

static void claim_break(struct run_control *ctl, struct thread_state *ts, uint64_t v)
{
	int expected = 0;

	if (!atomic_compare_exchange_strong(&ctl->break_claimed, &expected, ts->index + 1))
		return;
	STORE(ts->break_value, v);
	if (ctl->trace_fd >= 0) {
		char msg[96];
		int n = snprintf(msg, sizeof(msg), "hit latency threshold (%llu > %llu)\n",
				 (unsigned long long)v, (unsigned long long)ctl->p->breaktrace);
		/* The run ends here, so this write costs no measurement. */
		if (write(ctl->trace_fd, msg, (size_t)n) < 0)
			STORE(ts->run_errno, errno);
	}
	atomic_store(&ctl->stop, 1);
}

/* Everything a sample touches: preallocated counters, no locks, no I/O. */
static inline void record(struct run_control *ctl, struct thread_state *ts, uint64_t v,
			  uint64_t cycle, int64_t now)
{
	const struct params *p = ctl->p;
	size_t idx = hist_index(&ctl->layout, v);

	STORE(ts->hist[idx], LOAD(ts->hist[idx]) + 1);
	if (cycle == 0 || v < LOAD(ts->min))
		STORE(ts->min, v);
	if (v > LOAD(ts->max))
		STORE(ts->max, v);
	STORE(ts->act, v);
	STORE(ts->sum, LOAD(ts->sum) + v);
	if (p->hist_limit && v >= p->hist_limit) {
		uint64_t n = LOAD(ts->n_overflow_cycles);
		if (n < ts->overflow_cap) {
			ts->overflow_cycles[n] = cycle;
			STORE(ts->n_overflow_cycles, n + 1);
		}
	}
	bm_add(&ts->maxima, v);
	if (ts->ring)
		STORE(ts->ring[cycle & ts->ring_mask], v);
	if (p->spike && v > p->spike) {
		uint64_t n = LOAD(ts->n_spikes);
		if (n < ts->spike_cap) {
			ts->spikes[n].cycle = cycle;
			ts->spikes[n].value = v;
			ts->spikes[n].ts_us = now / 1000;
			STORE(ts->n_spikes, n + 1);
		}
		STORE(ts->spikes_total, LOAD(ts->spikes_total) + 1);
	}
	STORE(ts->last_wake_ns, now);
	/* Release: a reader that sees this cycle count sees the sample's ring entry too. */
	atomic_store_explicit(&ts->cycles, cycle + 1, memory_order_release);
	if (p->breaktrace && v > p->breaktrace)
		claim_break(ctl, ts, v);
}

void *measure_thread(void *arg)
{
	struct run_control *ctl = ((struct thread_arg *)arg)->ctl;
	struct thread_state *ts = ((struct thread_arg *)arg)->ts;
	const struct params *p = ctl->p;
	const clockid_t clock = p->clock_id;
	const int64_t interval = (int64_t)ts->interval_ns;
	timer_t timer = 0;
	sigset_t waitset;
	int64_t next, stop_at = 0, start;
	uint64_t cycle = 0;
	int reason = STOP_SIGNAL;

	sigemptyset(&waitset);
	sigaddset(&waitset, TIMER_SIGNAL);
	sigaddset(&waitset, WAKE_SIGNAL);

	setup(ctl, ts, &timer);
	pthread_barrier_wait(&ctl->ready);
	pthread_barrier_wait(&ctl->go);
	if (atomic_load(&ctl->abort_start) || LOAD(ts->setup_errno))
		goto out;

	if (ctl->common_start_ns) {
		start = ctl->common_start_ns;
		if (p->aligned)
			start += (int64_t)p->align_offset_us * 1000 * ts->index;
		else
			start += (int64_t)p->align_offset_us * 1000;
	} else {
		start = now_ns(clock);
	}
	next = start + interval;
	if (p->duration_s)
		stop_at = start + (int64_t)p->duration_s * 1000000000LL;
	if (p->posix_timers) {
		struct itimerspec its = { .it_interval = to_ts(interval) };

		its.it_value = p->relative ? to_ts(interval) : to_ts(next);
		if (timer_settime(timer, p->relative ? 0 : TIMER_ABSTIME, &its, NULL)) {
			STORE(ts->run_errno, errno);
			reason = STOP_ERROR;
			goto out;
		}
	} else {
		/* Only the wake signal may interrupt a sleep, and only to stop. */
		sigset_t wake;

		sigemptyset(&wake);
		sigaddset(&wake, WAKE_SIGNAL);
		pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	}

	while (!atomic_load_explicit(&ctl->stop, memory_order_relaxed)) {
		int64_t now, diff;
		int ret;

		if (p->posix_timers) {
			int sig;

			/* Relative or absolute, the timer expires at start + n * interval. */
			if (sigwait(&waitset, &sig) || sig != TIMER_SIGNAL)
				continue;
		} else if (p->relative) {
			struct timespec rel = to_ts(interval);
			int64_t before = now_ns(clock);

			ret = clock_nanosleep(clock, 0, &rel, NULL);
			if (ret == EINTR)
				continue;
			if (ret) {
				STORE(ts->run_errno, ret);
				reason = STOP_ERROR;
				break;
			}
			next = before + interval;
		} else {
			struct timespec abs_next = to_ts(next);

			ret = clock_nanosleep(clock, TIMER_ABSTIME, &abs_next, NULL);
			if (ret == EINTR)
				continue;
			if (ret) {
				STORE(ts->run_errno, ret);
				reason = STOP_ERROR;
				break;
			}
		}
		now = now_ns(clock);
		diff = now - next;
		if (diff < 0)
			diff = 0;
		if (cycle == 0)
			STORE(ts->first_wake_ns, now);
		record(ctl, ts, p->nsecs ? (uint64_t)diff : (uint64_t)diff / 1000, cycle, now);
		cycle++;

		/* Periods that passed while we were late are skipped, as cyclictest does; count them. */
		next += interval;
		if (p->posix_timers) {
			int over = timer_getoverrun(timer);
			if (over > 0) {
				STORE(ts->missed, LOAD(ts->missed) + (uint64_t)over);
				next += (int64_t)over * interval;
			}
		} else if (now > next) {
			int64_t skipped = (now - next) / interval + 1;
			STORE(ts->missed, LOAD(ts->missed) + (uint64_t)skipped);
			next += skipped * interval;
		}
		if (p->loops && cycle >= p->loops) {
			reason = STOP_LOOPS;
			break;
		}
		if (stop_at && now >= stop_at) {
			reason = STOP_DURATION;
			break;
		}
	}
	if (atomic_load(&ctl->break_claimed))
		reason = STOP_BREAKTRACE;
out:
	if (p->posix_timers && timer)
		timer_delete(timer);
	STORE(ts->reason, reason);
	atomic_store(&ts->done, 1);
	return NULL;
}
