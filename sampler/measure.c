// SPDX-License-Identifier: GPL-2.0-or-later
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
/* 64-bit values (counter.h): this thread owns them; stores only inside ctr_write_begin/end */
#define OWN(x) ctr_own(&(x))
#define SET(x, v) ctr_set(&(x), (v))

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

void run_stop(struct run_control *ctl, int reason)
{
	int none = STOP_NONE;

	atomic_compare_exchange_strong(&ctl->stop_reason, &none, reason);
	atomic_store(&ctl->stop, 1);
}

uint64_t periods_before(int64_t from, int64_t until, int64_t interval)
{
	if (until <= from)
		return 0;
	return (uint64_t)((until - from - 1) / interval) + 1;
}

static void claim_break(struct run_control *ctl, struct thread_state *ts, uint64_t v)
{
	int expected = 0;

	if (!atomic_compare_exchange_strong(&ctl->break_claimed, &expected, ts->index + 1))
		return;
	SET(ts->break_value, v);
	if (ctl->trace_fd >= 0) {
		char msg[96];
		int n = snprintf(msg, sizeof(msg), "hit latency threshold (%llu > %llu)\n",
				 (unsigned long long)v, (unsigned long long)ctl->p->breaktrace);
		/* The run ends here, so this write costs no measurement. */
		if (write(ctl->trace_fd, msg, (size_t)n) < 0)
			STORE(ts->run_errno, errno);
	}
	run_stop(ctl, STOP_BREAKTRACE);
}

/* Everything a sample touches: preallocated counters, no locks, no I/O. */
static inline void record(struct run_control *ctl, struct thread_state *ts, uint64_t v,
			  uint64_t cycle, int64_t now)
{
	const struct params *p = ctl->p;
	size_t idx = hist_index(&ctl->layout, v);

	SET(ts->hist[idx], OWN(ts->hist[idx]) + 1);
	if (cycle == 0 || v < OWN(ts->min))
		SET(ts->min, v);
	if (v > OWN(ts->max))
		SET(ts->max, v);
	SET(ts->act, v);
	SET(ts->sum, OWN(ts->sum) + v);
	if (p->hist_limit && v >= p->hist_limit) {
		uint64_t n = OWN(ts->n_overflow_cycles);
		if (n < ts->overflow_cap) {
			ts->overflow_cycles[n] = cycle;
			SET(ts->n_overflow_cycles, n + 1);
		}
	}
	bm_add(&ts->maxima, v);
	if (ts->ring)
		SET(ts->ring[cycle & ts->ring_mask], v);
	if (p->spike && v > p->spike) {
		uint64_t n = OWN(ts->n_spikes);
		if (n < ts->spike_cap) {
			ts->spikes[n].cycle = cycle;
			ts->spikes[n].value = v;
			ts->spikes[n].ts_us = now / 1000;
			SET(ts->n_spikes, n + 1);
		}
		SET(ts->spikes_total, OWN(ts->spikes_total) + 1);
	}
	SET(ts->last_wake_ns, (uint64_t)now);
	/* Release: a reader that sees this cycle count sees the sample's ring entry too. */
	atomic_thread_fence(memory_order_release);
	SET(ts->cycles, cycle + 1);
	if (p->breaktrace && v > p->breaktrace)
		claim_break(ctl, ts, v);
}

/*
 * Periods that passed while the thread was late are skipped, as cyclictest skips them, and
 * counted as missed; only those the run still owns count (before its end, within -l).
 */
static int64_t skip_lost(struct run_control *ctl, struct thread_state *ts, int64_t next,
			 int64_t now, int64_t interval, uint64_t cycle)
{
	const struct params *p = ctl->p;
	uint64_t skipped, owned;

	if (now <= next)
		return next;
	skipped = (uint64_t)((now - next) / interval) + 1;
	owned = skipped;
	if (ts->stop_at_ns) {
		uint64_t left = periods_before(next, ts->stop_at_ns + 1, interval);
		if (owned > left)
			owned = left;
	}
	if (p->loops) {
		uint64_t done = cycle + OWN(ts->missed);
		uint64_t left = done < p->loops ? p->loops - done : 0;
		if (owned > left)
			owned = left;
	}
	ctr_write_begin(&ts->wseq);
	SET(ts->missed, OWN(ts->missed) + owned);
	ctr_write_end(&ts->wseq);
	return next + (int64_t)skipped * interval;
}

void *measure_thread(void *arg)
{
	struct run_control *ctl = ((struct thread_arg *)arg)->ctl;
	struct thread_state *ts = ((struct thread_arg *)arg)->ts;
	const struct params *p = ctl->p;
	const clockid_t clock = p->clock_id;
	const int64_t interval = (int64_t)ts->interval_ns;
	const int64_t stop_at = ts->stop_at_ns;
	timer_t timer = 0;
	sigset_t waitset;
	int64_t next = ts->first_next_ns;
	uint64_t cycle = 0;
	int reason = STOP_NONE, first = 1;

	STORE(ts->tid, (int)syscall(SYS_gettid));
	sigemptyset(&waitset);
	sigaddset(&waitset, TIMER_SIGNAL);
	sigaddset(&waitset, WAKE_SIGNAL);

	if (p->posix_timers) {
		struct sigevent sev;
		/* Both modes expire at first_next + n * interval; -r changes only how it is armed. */
		struct itimerspec its = { .it_interval = to_ts(interval), .it_value = to_ts(next) };

		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = TIMER_SIGNAL;
		sev.sigev_notify_thread_id = LOAD(ts->tid);
		if (timer_create(clock, &sev, &timer) ||
		    timer_settime(timer, TIMER_ABSTIME, &its, NULL)) {
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

			if (sigwait(&waitset, &sig) || sig != TIMER_SIGNAL)
				continue;
		} else if (p->relative && !first) {
			/* -r: each sleep is relative; the first one still aims at the fixed start. */
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
		first = 0;
		now = now_ns(clock);
		diff = now - next;
		if (diff < 0)
			diff = 0;
		ctr_write_begin(&ts->wseq);
		if (cycle == 0)
			SET(ts->first_wake_ns, (uint64_t)now);
		record(ctl, ts, p->nsecs ? (uint64_t)diff : (uint64_t)diff / 1000, cycle, now);
		ctr_write_end(&ts->wseq);
		cycle++;

		next += interval;
		if (p->posix_timers) {
			int over = timer_getoverrun(timer);
			if (over > 0)
				next = skip_lost(ctl, ts, next, next + (int64_t)over * interval - 1, interval, cycle);
		} else {
			next = skip_lost(ctl, ts, next, now, interval, cycle);
		}
		if (p->loops && cycle + OWN(ts->missed) >= p->loops) {
			reason = STOP_LOOPS;
			if (!p->loops_per_thread)
				run_stop(ctl, STOP_LOOPS); /* cyclictest: the first thread at -l ends the run */
			break;
		}
		if (stop_at && next > stop_at) {
			reason = STOP_DURATION;
			break;
		}
	}
	if (reason == STOP_NONE)
		reason = atomic_load(&ctl->stop_reason);
	if (atomic_load(&ctl->break_claimed))
		reason = STOP_BREAKTRACE;
out:
	/* under the sequence count: a 32-bit reader sees the whole value (counter.h) */
	ctr_write_begin(&ts->wseq);
	SET(ts->end_ns, (uint64_t)now_ns(clock));
	ctr_write_end(&ts->wseq);
	if (p->posix_timers && timer)
		timer_delete(timer);
	STORE(ts->reason, reason);
	atomic_store(&ts->done, 1);
	sem_post(&ctl->finished);
	return NULL;
}
