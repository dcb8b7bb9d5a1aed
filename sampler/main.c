// SPDX-License-Identifier: GPL-2.0-or-later
/* rtgate-sampler: wiring. Parse, prepare, start the threads, watch, stop, write every output. */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gate.h"
#include "load.h"
#include "measure.h"
#include "options.h"
#include "out_histtext.h"
#include "out_json.h"
#include "out_text.h"
#include "outfile.h"
#include "plan.h"
#include "record.h"
#include "require.h"
#include "result.h"
#include "rtscan.h"
#include "sysinfo.h"
#include "sysprep.h"
#include "timerlat.h"

#define BLOCK_CAP 4096        /* block-maxima entries per thread before coarsening */
#define RING_SIZE 16384       /* -v: samples buffered per thread between prints */
#define STACK_SIZE (32 * 1024) /* as cyclictest's; the loop and a signal frame use a few KiB */
#define TICK_NS 10000000LL    /* main loop period on screen, as cyclictest's refresh */
#define QUIET_TICK_NS 1000000000LL /* -q: thread ends and signals wake main at once */
#define LEAD_NS 2000000LL     /* from the start instant to the first period: thread creation */
#define LEAD_PER_THREAD_NS 50000LL
#define CREATE_MARGIN_NS 200000LL
#define SCAN_NS 1000000000LL  /* competing real-time tasks are looked for this often while measuring, */
#define SCAN_BUDGET 1250      /* or every 1250 times a scan's CPU time: the engine's cost stays <= 0.08 % */
#define OVERRUN_MIN_S 0.5     /* unaccounted time that makes a run invalid (core/validity.py) */
#define OVERRUN_PERIODS 10

static volatile sig_atomic_t sig_stop;
static volatile sig_atomic_t sig_status;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		sig_status = 1;
	else if (!sig_stop)
		sig_stop = sig;
}

static void on_wake(int sig)
{
	(void)sig; /* only interrupts clock_nanosleep */
}

/*
 * The measurement engine's state (--measurement, --require): allocated only when asked for, so
 * that a plain cyclictest command line locks none of it with -m.
 */
struct engine {
	struct sysinfo sys;
	struct require_report require;
	struct rt_priorities prio;
	struct rt_tasks before, during, after;
	int competing_matters;      /* --require=no_competing_rt */
	int64_t next_scan_ns;       /* CLOCK_MONOTONIC */
};

struct sampler {
	struct params p;
	struct engine *eng;         /* NULL: a plain run */
	char start_error[512];      /* why the threads could not start */
	struct sys_facts sys;
	struct run_control ctl;
	struct thread_state *ts;
	struct thread_arg *args;
	struct thread_result *tr;
	uint64_t *verbose_read;
	uint64_t *oscope_n, *oscope_max, *oscope_cycle;
	int latency_fd;
	int64_t start_rt_ns, start_mono_ns, end_mono_ns;
	int64_t expected_end_mono_ns;   /* scheduled end of the run; 0 = endless */
	uint64_t longest_interval_ns;
};

static void die_oom(void)
{
	fprintf(stderr, "rtgate-sampler: out of memory while preparing the run\n");
	exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
	void *ptr = calloc(n ? n : 1, size);

	if (!ptr)
		die_oom();
	return ptr;
}

/* Zeroed pages straight from the kernel: untouched until used (calloc would clear heap memory). */
static void *zpages(size_t n, size_t size)
{
	void *ptr = mmap(NULL, (n ? n : 1) * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (ptr == MAP_FAILED)
		die_oom();
	return ptr;
}

/*
 * -m: a buffer whose first hot bytes are locked and mapped now; the kernel maps and locks each
 * later page when it is first written (MCL_ONFAULT). A histogram's later pages hold only
 * buckets at or above HIST_HOT_US, so the thread first writes one after reading the time of a
 * sample already that late: the fault cannot change a measured latency, and runs whose samples
 * stay below the hot end never pay for the rest. Without MCL_ONFAULT (kernel < 4.4), all is
 * locked now, as before.
 */
static void *zpages_hot_head(const struct params *p, size_t bytes, size_t hot)
{
	char *ptr;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	hot = (hot + page - 1) / page * page;
#ifdef MCL_ONFAULT
	if (p->mlockall && hot < bytes && mlockall(MCL_FUTURE | MCL_ONFAULT) == 0) {
		ptr = zpages(bytes, 1);
		/* back to locking every later mapping (stacks, buffers) whole, now */
		if (mlockall(MCL_FUTURE) || mlock(ptr, hot)) {
			fprintf(stderr, "rtgate-sampler: cannot lock memory: %s\n", strerror(errno));
			exit(1);
		}
		/* no 2 MiB page for one late sample (a -h of seconds makes a large linear range) */
		madvise(ptr + hot, bytes - hot, MADV_NOHUGEPAGE);
		return ptr;
	}
#else
	(void)p;
	(void)hot;
#endif
	return zpages(bytes, 1);
}

/*
 * Block-maxima entries a thread can fill: a run with an end (-l, -D) closes at most
 * cycles / block_cycles blocks, so it gets that many and two more (it never fills them, so it
 * coarsens exactly when a BLOCK_CAP buffer would: never); an endless run gets BLOCK_CAP.
 */
static uint64_t block_entries(const struct params *p, uint64_t interval_ns, uint64_t block_cycles)
{
	uint64_t cycles = UINT64_MAX, n;

	if (p->loops)
		cycles = p->loops;
	if (p->duration_s) {
		/* -D: the wakes in [first, first - interval + duration]: at most duration / interval + 1 */
		uint64_t d = p->duration_s * 1000000000ULL / interval_ns + 1;
		if (d < cycles)
			cycles = d;
	}
	if (cycles == UINT64_MAX)
		return BLOCK_CAP;
	n = cycles / block_cycles + 2;
	n += n & 1;
	return n < BLOCK_CAP ? n : BLOCK_CAP;
}

/*
 * Everything a thread will touch is allocated here, before the first sample. Buffers come
 * zeroed from mmap and are not written: with -m, mlockall(MCL_FUTURE) maps every page now
 * (a histogram: its hot head, zpages_hot_head); without it, as with cyclictest, only the pages
 * a run uses become resident (a histogram of 17,665 buckets touches the few pages its
 * latencies fall in).
 */
static void prepare_threads(struct sampler *s)
{
	const struct params *p = &s->p;
	const size_t nb = s->ctl.layout.nbuckets;
	const size_t hot = hist_index(&s->ctl.layout, p->nsecs ? HIST_HOT_US * 1000 : HIST_HOT_US) + 1;
	const int n = p->num_threads;

	s->ts = aligned_alloc(THREAD_STATE_ALIGN, (size_t)n * sizeof(*s->ts)); /* sizeof is a multiple */
	if (!s->ts)
		die_oom();
	memset(s->ts, 0, (size_t)n * sizeof(*s->ts));
	s->args = xcalloc((size_t)n, sizeof(*s->args));
	s->tr = xcalloc((size_t)n, sizeof(*s->tr));
	s->verbose_read = xcalloc((size_t)n, sizeof(uint64_t));
	s->oscope_n = xcalloc((size_t)n, sizeof(uint64_t));
	s->oscope_max = xcalloc((size_t)n, sizeof(uint64_t));
	s->oscope_cycle = xcalloc((size_t)n, sizeof(uint64_t));
	for (int i = 0; i < n; i++) {
		struct thread_state *ts = &s->ts[i];
		uint64_t interval_ns = (p->interval_us + p->distance_us * (uint64_t)i) * 1000;
		uint64_t block_cycles = (uint64_t)(p->block_s * 1e9 / (double)interval_ns + 0.5), nblocks;

		ts->index = i;
		ts->cpu = p->thread_cpu[i];
		ts->node = p->smp ? -1 : sys_cpu_node(ts->cpu); /* as cyclictest: -S places no memory */
		ts->policy = p->policy;
		ts->priority = p->thread_prio[i] >= 0 ? p->thread_prio[i] : p->priority - (p->priospread ? i : 0);
		ts->interval_ns = interval_ns;
		ts->hist = zpages_hot_head(p, nb * sizeof(*ts->hist), hot * sizeof(*ts->hist));
		if (p->hist_limit) {
			ts->overflow_cap = p->hist_limit;
			ts->overflow_cycles = zpages(p->hist_limit, sizeof(uint64_t));
		}
		if (!block_cycles)
			block_cycles = 1;
		nblocks = block_entries(p, interval_ns, block_cycles);
		bm_init(&ts->maxima, zpages(nblocks, sizeof(ctr64)), nblocks, block_cycles, &ts->wseq);
		if (p->verbose) {
			ts->ring = zpages(RING_SIZE, sizeof(*ts->ring));
			ts->ring_mask = RING_SIZE - 1;
		}
		if (p->spike) {
			ts->spike_cap = p->spike_nodes;
			ts->spikes = zpages(p->spike_nodes, sizeof(*ts->spikes));
		}
		s->args[i].ctl = &s->ctl;
		s->args[i].ts = ts;
	}
}

static void install_signals(void)
{
	struct sigaction sa;
	sigset_t ours;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_wake;
	sigaction(WAKE_SIGNAL, &sa, NULL);
	/* blocked by the parent (a runner, a shell in a trap), a stop would stay pending for ever */
	sigemptyset(&ours);
	sigaddset(&ours, SIGINT);
	sigaddset(&ours, SIGTERM);
	sigaddset(&ours, SIGHUP);
	sigaddset(&ours, SIGUSR1);
	sigaddset(&ours, WAKE_SIGNAL);
	sigprocmask(SIG_UNBLOCK, &ours, NULL);
}

/* Locked with -m, so small; never below what this libc needs (128 KiB on aarch64). */
static size_t stack_size(void)
{
	long min = sysconf(_SC_THREAD_STACK_MIN);

	return min > STACK_SIZE ? (size_t)min : STACK_SIZE;
}

/* First wake of thread i: the start instant, its phase, one interval. */
static int64_t first_wake(const struct params *p, int64_t start, int i, uint64_t interval_ns)
{
	int64_t phase;

	if (p->aligned)
		phase = (int64_t)p->align_offset_us * 1000 * i;
	else if (p->secaligned)
		phase = (int64_t)p->align_offset_us * 1000;
	else /* independent phases, as cyclictest's threads that each start on their own */
		phase = (int64_t)(p->interval_us * 1000 * (uint64_t)i / (uint64_t)p->num_threads);
	return start + phase + (int64_t)interval_ns;
}

static void stop_threads(struct sampler *s);

/*
 * One start instant for the whole run, taken here before any thread exists; each thread's
 * schedule follows from it. Policy, priority and CPU are pthread attributes, so a refused
 * privilege is known when pthread_create returns and no thread has to run for the run to
 * start. Returns 0, or 1 after a clear message.
 */
static int start_threads(struct sampler *s)
{
	const struct params *p = &s->p;
	const int n = p->num_threads;
	const clockid_t clock = p->clock_id;
	int64_t now = now_ns(clock), mono = now_ns(CLOCK_MONOTONIC), start;
	sigset_t all, old;

	start = now + LEAD_NS + LEAD_PER_THREAD_NS * n;
	if (p->secaligned)
		start = (start / 1000000000LL + 1) * 1000000000LL;
	s->ctl.start_ns = start;
	s->ctl.stop_at_ns = p->duration_s ? start + (int64_t)p->duration_s * 1000000000LL : 0;
	s->start_mono_ns = mono + (start - now);
	s->start_rt_ns = now_ns(CLOCK_REALTIME) + (start - now_ns(clock));
	sem_init(&s->ctl.finished, 0, 0);

	/* Measurement threads inherit a mask that blocks everything; signals are the main thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (int i = 0; i < n; i++) {
		struct thread_state *ts = &s->ts[i];
		struct sched_param sp = { .sched_priority = ts->priority };
		pthread_attr_t attr;
		int64_t t = now_ns(clock);
		int err;

		ts->first_next_ns = first_wake(p, start, i, ts->interval_ns);
		if (t + CREATE_MARGIN_NS > ts->first_next_ns) {
			/* main itself was held up: this thread starts whole periods later, same phase */
			int64_t k = (t + CREATE_MARGIN_NS - ts->first_next_ns) / (int64_t)ts->interval_ns + 1;
			ts->first_next_ns += k * (int64_t)ts->interval_ns;
		}
		/* -D: every thread serves duration / interval periods of its own schedule */
		if (p->duration_s)
			ts->stop_at_ns = ts->first_next_ns - (int64_t)ts->interval_ns +
					 (int64_t)p->duration_s * 1000000000LL;
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, stack_size());
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, ts->policy);
		pthread_attr_setschedparam(&attr, &sp);
		if (ts->cpu >= 0) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(ts->cpu, &set);
			pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		}
		err = pthread_create(&ts->thread, &attr, measure_thread, &s->args[i]);
		pthread_attr_destroy(&attr);
		if (err) {
			char why[256];

			if (err == EPERM)
				sys_explain_sched_failure(why, sizeof(why), ts->policy, ts->priority, err);
			else
				snprintf(why, sizeof(why), "%s", strerror(err));
			snprintf(s->start_error, sizeof(s->start_error), "cannot start thread %d%s: %s", i,
				 ts->cpu >= 0 ? " on its CPU" : "", why);
			fprintf(stderr, "rtgate-sampler: %s\n", s->start_error);
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			s->p.num_threads = i; /* join those that run; nothing is written */
			stop_threads(s);
			return 1;
		}
		ts->started = 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	for (int i = 0; i < n; i++)
		if (s->ts[i].interval_ns > s->longest_interval_ns)
			s->longest_interval_ns = s->ts[i].interval_ns;
	if (s->ctl.stop_at_ns) {
		int64_t end = 0;
		for (int i = 0; i < n; i++)
			if (s->ts[i].stop_at_ns > end)
				end = s->ts[i].stop_at_ns;
		s->expected_end_mono_ns = s->start_mono_ns + (end - start);
	} else if (p->loops) {
		/* cyclictest: the first thread through its -l periods ends the run; per thread: the last */
		int64_t end = 0;
		for (int i = 0; i < n; i++) {
			int64_t e = s->ts[i].first_next_ns + (int64_t)(p->loops - 1) * (int64_t)s->ts[i].interval_ns;
			if (i == 0 || (p->loops_per_thread ? e > end : e < end))
				end = e;
		}
		s->expected_end_mono_ns = s->start_mono_ns + (end - start);
	}
	return 0;
}

static void release_snapshot(struct run_result *r)
{
	for (int i = 0; i < r->nthreads; i++)
		result_release(&r->t[i]);
}

/*
 * When the last measurement thread stopped, by its own clock, on CLOCK_MONOTONIC: "late" is the
 * threads' lateness, not the main thread's wind-down (SCHED_OTHER, slow to wake on a busy machine).
 */
static int64_t last_thread_end_mono(struct sampler *s)
{
	int64_t last = 0;

	for (int i = 0; i < s->p.num_threads; i++) {
		int64_t e = (int64_t)ctr_read(&s->ts[i].end_ns, &s->ts[i].wseq);

		if (s->ts[i].started && e > last)
			last = e;
	}
	return last ? s->start_mono_ns + (last - s->ctl.start_ns) : s->end_mono_ns;
}

/* complete: threads are joined, results are read in place; else a checkpoint's copies (0 or -1). */
static int snapshot(struct sampler *s, struct run_result *r, int complete)
{
	int break_idx = atomic_load(&s->ctl.break_claimed) - 1;

	memset(r, 0, sizeof(*r));
	r->p = &s->p;
	r->layout = &s->ctl.layout;
	r->sys = &s->sys;
	r->nthreads = s->p.num_threads;
	r->t = s->tr;
	for (int i = 0; i < r->nthreads; i++) {
		if (complete) {
			result_final(&s->tr[i], &s->ts[i], &s->ctl.layout, &s->p);
		} else if (result_running(&s->tr[i], &s->ts[i], &s->ctl.layout, &s->p)) {
			release_snapshot(r);
			return -1;
		}
	}
	r->complete = complete;
	r->start_rt_ns = s->start_rt_ns;
	r->end_rt_ns = now_ns(CLOCK_REALTIME);
	{
		int64_t end = s->end_mono_ns ? s->end_mono_ns : now_ns(CLOCK_MONOTONIC);
		int64_t late = s->expected_end_mono_ns ? last_thread_end_mono(s) - s->expected_end_mono_ns : 0;

		r->elapsed_s = end > s->start_mono_ns ? (double)(end - s->start_mono_ns) / 1e9 : 0.0;
		r->overrun_s = complete && late > 0 ? (double)late / 1e9 : 0.0;
		/* "a few periods": five of the longest, plus 20 ms for the process to wind down */
		r->ended_late = complete && late > 5 * (int64_t)s->longest_interval_ns + 20000000LL;
	}
	r->latency_target = s->latency_fd >= 0 ? s->p.latency_target : -1;
	r->break_thread = break_idx;
	r->reason = STOP_NONE;
	if (!complete)
		return 0;
	if (sig_stop) {
		r->reason = STOP_SIGNAL;
		r->signal = sig_stop;
	} else if (break_idx >= 0) {
		r->reason = STOP_BREAKTRACE;
	} else {
		r->reason = s->tr[0].reason;
		for (int i = 0; i < r->nthreads; i++)
			if (s->tr[i].reason == STOP_ERROR)
				r->reason = STOP_ERROR;
	}
	if (r->reason == STOP_DURATION) {
		/* Every period up to the end is sampled or missed; fewer means the run did not happen as scheduled. */
		for (int i = 0; i < r->nthreads; i++) {
			uint64_t expected = periods_before(s->ts[i].first_next_ns, s->ts[i].stop_at_ns + 1,
							   (int64_t)s->ts[i].interval_ns);
			if (r->t[i].cycles + r->t[i].missed + 1 < expected) {
				fprintf(stderr, "rtgate-sampler: thread %d accounted for %llu of its %llu periods\n", i,
					(unsigned long long)(r->t[i].cycles + r->t[i].missed),
					(unsigned long long)expected);
				r->reason = STOP_ERROR;
			}
		}
	}
	r->return_code = r->reason == STOP_ERROR ? 1 : 0;
	return 0;
}

static void write_checkpoint(struct sampler *s)
{
	struct run_result r;

	if (snapshot(s, &r, 0)) {
		fprintf(stderr, "rtgate-sampler: checkpoint skipped: out of memory\n");
		return;
	}
	if (json_write_file(s->p.json_path, &r))
		fprintf(stderr, "rtgate-sampler: cannot write checkpoint %s: %s\n", s->p.json_path,
			strerror(errno));
	release_snapshot(&r);
}

/* -v: print the samples the threads buffered since the last tick (with -o, the max of each group). */
static void drain_verbose(struct sampler *s)
{
	for (int i = 0; i < s->p.num_threads; i++) {
		struct thread_state *ts = &s->ts[i];
		uint64_t end = ctr_read(&ts->cycles, &ts->wseq);
		uint64_t c = s->verbose_read[i];

		atomic_thread_fence(memory_order_acquire); /* pairs with the release before cycles: ring entries */

		if (end - c > RING_SIZE)
			c = end - RING_SIZE; /* the thread lapped us: those samples are only in the histogram */
		for (; c < end; c++) {
			uint64_t v = ctr_read(&ts->ring[c & ts->ring_mask], &ts->wseq);

			if (s->oscope_n[i] == 0 || v > s->oscope_max[i]) {
				s->oscope_max[i] = v;
				s->oscope_cycle[i] = c;
			}
			if (++s->oscope_n[i] == s->p.oscope) {
				printf("%8d:%8llu:%8llu\n", i, (unsigned long long)s->oscope_cycle[i],
				       (unsigned long long)s->oscope_max[i]);
				s->oscope_n[i] = 0;
			}
		}
		s->verbose_read[i] = end;
	}
}

/* T: lines of the running threads: counters only, the histogram stays where it is. */
static void print_status(FILE *f, struct sampler *s)
{
	struct run_result r = { .p = &s->p, .nthreads = s->p.num_threads };
	struct thread_result t;

	for (int i = 0; i < r.nthreads; i++) {
		result_counters(&t, &s->ts[i]);
		text_status_line(f, &r, &t);
	}
}

static int all_done(struct sampler *s)
{
	for (int i = 0; i < s->p.num_threads; i++)
		if (!atomic_load(&s->ts[i].done))
			return 0;
	return 1;
}

/* Sleep until the tick, a thread's end or a signal, whichever comes first. */
static void wait_tick(struct sampler *s, int64_t tick_ns)
{
	struct timespec until;
	int64_t t;

	clock_gettime(CLOCK_REALTIME, &until);
	t = (int64_t)until.tv_sec * 1000000000LL + until.tv_nsec + tick_ns;
	until.tv_sec = t / 1000000000LL;
	until.tv_nsec = t % 1000000000LL;
	sem_timedwait(&s->ctl.finished, &until);
}

/* One scan for competing real-time tasks while measuring, and when the next is due: about once a
 * second, less often where a scan costs more than the budget allows. */
static void scan_during(struct engine *e)
{
	int64_t cpu = now_ns(CLOCK_THREAD_CPUTIME_ID), period;

	rtscan("/", &e->prio, (int)getpid(), &e->during, RTSCAN_NEW_COMPETITORS);
	period = (now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu) * SCAN_BUDGET;
	e->next_scan_ns = now_ns(CLOCK_MONOTONIC) + (period > SCAN_NS ? period : SCAN_NS);
}

static void watch(struct sampler *s)
{
	const int live = !s->p.quiet && !s->p.verbose;
	int64_t next_checkpoint = s->start_mono_ns + (int64_t)s->p.checkpoint_s * 1000000000LL;
	uint64_t last_max_sum = UINT64_MAX;

	for (;;) {
		int64_t tick = live || s->p.verbose ? TICK_NS : QUIET_TICK_NS, now;
		int done;

		if (sig_stop)
			run_stop(&s->ctl, STOP_SIGNAL);
		done = all_done(s) || atomic_load(&s->ctl.stop);
		if (sig_status) {
			sig_status = 0;
			fprintf(stderr, "#---------------------------\n# rtgate-sampler current status:\n");
			print_status(stderr, s);
			fprintf(stderr, "#---------------------------\n");
		}
		if (s->p.verbose)
			drain_verbose(s);
		if (done)
			break; /* the last screen is printed once the threads are joined: print_last_screen */
		if (live) {
			uint64_t max_sum = 0;

			for (int i = 0; i < s->p.num_threads; i++)
				max_sum += ctr_read(&s->ts[i].max, &s->ts[i].wseq);
			if (!s->p.refresh_on_max || max_sum != last_max_sum) {
				text_live_header(stdout, &s->p);
				print_status(stdout, s);
				printf("\033[%dA", s->p.num_threads + 2);
				fflush(stdout);
				last_max_sum = max_sum;
			}
		}
		now = now_ns(CLOCK_MONOTONIC);
		if (s->eng && now >= s->eng->next_scan_ns) {
			scan_during(s->eng); /* here, in main's tick, off the measured CPUs: never in a measurement thread */
			now = now_ns(CLOCK_MONOTONIC);
		}
		if (s->eng && s->eng->next_scan_ns - now < tick)
			tick = s->eng->next_scan_ns - now > 0 ? s->eng->next_scan_ns - now : 1;
		if (s->p.checkpoint_s && now >= next_checkpoint) {
			write_checkpoint(s);
			next_checkpoint += (int64_t)s->p.checkpoint_s * 1000000000LL;
		}
		if (s->p.checkpoint_s && next_checkpoint - now < tick)
			tick = next_checkpoint - now > 0 ? next_checkpoint - now : 1;
		wait_tick(s, tick);
	}
}

/* The screen's last lines, once every thread is joined: the same counts as every other output. */
static void print_last_screen(struct sampler *s)
{
	if (s->p.quiet || s->p.verbose)
		return;
	text_live_header(stdout, &s->p);
	print_status(stdout, s);
	fflush(stdout);
}

static void stop_threads(struct sampler *s)
{
	atomic_store(&s->ctl.stop, 1);
	for (int i = 0; i < s->p.num_threads; i++)
		if (s->ts[i].started && !atomic_load(&s->ts[i].done))
			pthread_kill(s->ts[i].thread, WAKE_SIGNAL);
	for (int i = 0; i < s->p.num_threads; i++)
		if (s->ts[i].started)
			pthread_join(s->ts[i].thread, NULL);
	s->end_mono_ns = now_ns(CLOCK_MONOTONIC);
	if (s->p.verbose)
		drain_verbose(s);
}

/* A measured gate of an invalid run: ERROR, its figures kept, the value in the reason. */
static void mark_invalid(const struct gate_spec *g, struct gate_verdict *v, const char *why)
{
	const char *units = gate_unit(g);
	char tail[sizeof(v->reason)], out[sizeof(v->reason)];
	size_t tl, wl = strlen(why), cap = sizeof(out) - 1, o = 0;

	if (v->has_value)
		snprintf(tail, sizeof(tail), " (measured %.6g %s)", v->value * (strcmp(units, "%") == 0 ? 100.0 : 1.0),
			 units);
	else
		snprintf(tail, sizeof(tail), " (no value: %.200s)", v->reason);
	tl = strlen(tail);
	/* the reason is cut, never the measured value */
	memcpy(out, "invalid: ", 9);
	o = 9;
	if (o + wl + tl > cap) {
		size_t keep = cap - o - tl - 3;
		memcpy(out + o, why, keep);
		memcpy(out + o + keep, "...", 3);
		o += keep + 3;
	} else {
		memcpy(out + o, why, wl);
		o += wl;
	}
	memcpy(out + o, tail, tl + 1);
	memcpy(v->reason, out, sizeof(out));
	v->status = GATE_ERROR;
}

/*
 * The record as one console line, "rtgate: ENVIRONMENT NAME {...}", for `rtgate lava results`: the
 * layout's newlines go (JSON strings escape their own), and inside strings a quote or backslash is
 * written as a \u escape, since LAVA's log escapes every '"' of a console line.
 */
static void print_record_line(const char *name, const struct run_result *r)
{
	char *text = NULL, *line;
	size_t len = 0, o = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return;
	record_write_json(f, r);
	if (fclose(f) || !(line = malloc(6 * len + 1))) {
		free(text);
		return;
	}
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\n') {
			while (i + 1 < len && text[i + 1] == ' ')
				i++;
		} else if (text[i] == '\\' && i + 1 < len && (text[i + 1] == '"' || text[i + 1] == '\\')) {
			o += (size_t)sprintf(line + o, "\\u%04x", (unsigned)text[++i]);
		} else {
			line[o++] = text[i];
		}
	}
	line[o] = '\0';
	record_console_escape(line);
	printf("rtgate: ENVIRONMENT %s %s\n", name, line);
	free(line);
	free(text);
}

/* A gate's verdict as the board's console shows it, beside its RTGATE-GATE line. */
static void print_console_verdict(const char *name, const struct gate_spec *g, const struct gate_verdict *v)
{
	printf("rtgate: %s %s/%s[%s]: %s\n", gate_status_name(v->status), name, g->name, v->thread, v->reason);
}

/*
 * --gate: the verdicts, one RTGATE-GATE line each, for shells on boards without Python. Not
 * measured: every gate "all" with the record's status and reason. Measured but invalid: every
 * verdict ERROR with the reason and the value measured.
 */
static void print_gates(struct sampler *s, const struct run_result *r)
{
	struct gate_verdict *verdicts;
	char (*ids)[GATE_NAME_LEN], (*labels)[GATE_NAME_LEN];
	const int nv = r->nthreads > 0 ? r->nthreads : 1;
	int unjudged_status = GATE_ERROR;
	const char *unjudged = record_not_measured_reason(&unjudged_status);
	char *invalid = NULL, *why = NULL;
	const int named = s->p.measurement[0] && record_enabled();

	if (!s->p.ngates)
		return;
	/* allocated now, after the run: a static table would be locked with -m (700 KiB) */
	verdicts = xcalloc((size_t)nv, sizeof(*verdicts));
	ids = xcalloc(MAX_THREADS, sizeof(*ids));
	labels = xcalloc(MAX_THREADS, sizeof(*labels));
	if (unjudged) {
		why = xcalloc(1, RECORD_REASON_LEN + 32);
		snprintf(why, RECORD_REASON_LEN + 32, "not measured: %s", unjudged);
	} else {
		invalid = xcalloc(1, RECORD_MAX_INVALID * RECORD_REASON_LEN);
		if (!record_invalid_reason(invalid, RECORD_MAX_INVALID * RECORD_REASON_LEN)) {
			free(invalid);
			invalid = NULL;
		}
	}
	for (int i = 0; i < s->p.nlabels; i++)
		snprintf(labels[i], GATE_NAME_LEN, "%s", s->p.thread_labels[i]);
	gate_thread_ids(r, labels, s->p.nlabels, ids);
	if (named) /* a measurement's verdicts, as the board glue reports them */
		printf("RTGATE-BEGIN %s\n", s->p.measurement);
	for (int i = 0; i < s->p.ngates; i++) {
		struct gate_spec g;
		char err[200];
		int n = 1;

		if (gate_parse(s->p.gate_args[i], &g, err, sizeof(err)))
			continue; /* checked when the options were parsed */
		if (why)
			gate_unjudged(&g, unjudged_status, why, &verdicts[0]);
		else
			n = gate_evaluate(&g, r, ids, verdicts, nv);
		for (int j = 0; j < n; j++) {
			if (invalid)
				mark_invalid(&g, &verdicts[j], invalid);
			record_console_escape(verdicts[j].reason);
			gate_print(stdout, &g, &verdicts[j]);
			if (named)
				print_console_verdict(s->p.measurement, &g, &verdicts[j]);
		}
	}
	if (named) {
		print_record_line(s->p.measurement, r);
		printf("RTGATE-END %s\n", s->p.measurement);
	}
	free(why);
	free(invalid);
	free(verdicts);
	free(ids);
	free(labels);
}

/*
 * overrun: time within a thread's own schedule, from its first period to its end, that its sampled
 * and missed periods do not account for (core/validity.py overrun()). The main thread's own delays,
 * before a thread's first period or joining it after its last, are not measuring time and do not
 * count. Relative sleeps (-r) stretch every period by its latency: nothing to account against.
 */
static void check_overrun(const struct run_result *r)
{
	double worst = 0, worst_span = 0, worst_accounted = 0, floor;
	int which = -1;

	if (!r->nthreads || r->p->relative)
		return;
	for (int i = 0; i < r->nthreads; i++) {
		const struct thread_result *t = &r->t[i];
		double accounted = (double)(t->cycles + t->missed) * (double)t->interval_us / 1e6;

		if (!t->interval_us)
			return;
		floor = OVERRUN_PERIODS * (double)t->interval_us / 1e6;
		if (t->span_s - accounted > (floor > OVERRUN_MIN_S ? floor : OVERRUN_MIN_S) &&
		    t->span_s - accounted > worst) {
			worst = t->span_s - accounted;
			worst_span = t->span_s;
			worst_accounted = accounted;
			which = i;
		}
	}
	if (which >= 0)
		record_invalid("overrun: thread %d ran %.3f s but its sampled and missed periods account for %.3f s; "
			       "%.3f s went unmeasured (the thread was held where it could not count what it lost)",
			       r->t[which].index, worst_span, worst_accounted, worst);
}

/* After the run: the last scan, and what makes the record invalid. The record goes into the JSON. */
static void engine_judge(struct sampler *s, struct run_result *r)
{
	struct engine *e = s->eng;

	r->record = record_write_json;
	if (sig_stop)
		record_stopped_by(signal_name(sig_stop));
	if (record_not_measured_reason(NULL))
		return;
	check_overrun(r);
	if (e->competing_matters) {
		const struct rt_tasks *seen[3] = {&e->before, &e->during, &e->after};
		char *text = xcalloc(1, RECORD_REASON_LEN);

		if (rtscan_competitors_text(seen, 3, "a competing real-time task could preempt the sampler:", text,
					    RECORD_REASON_LEN))
			record_invalid("%s", text);
		free(text);
	}
}

static void histtext_cb(FILE *f, const void *r)
{
	histtext_write(f, r);
}

static int write_outputs(struct sampler *s)
{
	struct run_result r;
	int rc = 0;

	snapshot(s, &r, 1);
	if (s->eng)
		engine_judge(s, &r);
	if (s->p.quiet && !s->p.hist_limit && !s->p.verbose)
		for (int i = 0; i < r.nthreads; i++)
			text_status_line(stdout, &r, &r.t[i]);
	if (s->p.spike)
		text_spikes(stdout, &r);
	if (s->p.hist_limit && s->p.histfile[0]) {
		if (outfile_write(s->p.histfile, histtext_cb, &r)) {
			fprintf(stderr, "rtgate-sampler: cannot write histogram file %s: %s\n", s->p.histfile,
				strerror(errno));
			rc = 1;
		}
	} else if (s->p.hist_limit) {
		histtext_write(stdout, &r);
	}
	text_break(stdout, &r);
	if (r.ended_late)
		fprintf(stderr, "rtgate-sampler: the run ended %.3f s after its scheduled end: a thread could "
			"not run (another real-time task on its CPU?)\n", r.overrun_s);
	print_gates(s, &r);
	fflush(stdout);
	if (s->p.json_path[0] && json_write_file(s->p.json_path, &r)) {
		fprintf(stderr, "rtgate-sampler: cannot write %s: %s\n", s->p.json_path, strerror(errno));
		rc = 1;
	}
	for (int i = 0; i < r.nthreads; i++) {
		int err = atomic_load(&s->ts[i].run_errno);
		if (r.t[i].reason == STOP_ERROR)
			fprintf(stderr, "rtgate-sampler: thread %d stopped on an error: %s\n", i, strerror(err));
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "rtgate-sampler: cannot write to standard output: %s\n",
			errno ? strerror(errno) : "write error");
		rc = 1;
	}
	return rc || r.return_code;
}

static void check_resolution(const struct params *p)
{
	struct timespec res;
	int64_t prev, best = INT64_MAX;

	if (clock_getres(p->clock_id, &res) == 0)
		fprintf(stderr, "# reported clock resolution: %ld nsec\n", res.tv_nsec);
	prev = now_ns(p->clock_id);
	for (int i = 0; i < 100000; i++) {
		int64_t t = now_ns(p->clock_id);
		if (t != prev && t - prev < best)
			best = t - prev;
		prev = t;
	}
	fprintf(stderr, "# measured clock resolution approximately: %lld nsec\n", (long long)best);
}

/* --load: started and warmed up before the threads, stopped on every exit path (atexit too). */
static struct loads *loads;

static int stop_signal(void)
{
	return sig_stop;
}

static void stop_loads(void)
{
	if (loads)
		loads_stop(loads);
}

/* When the measurement ends: the loads' level read a second time with them still in place, then
 * stopped; a load that did not hold makes the record invalid. */
static void finish_loads(void)
{
	char (*problems)[LOAD_REASON_LEN];
	int n;

	if (!loads)
		return;
	problems = xcalloc(LOAD_MAX, LOAD_REASON_LEN);
	loads_finish(loads);
	loads_stop(loads);
	n = load_problems(loads, problems, LOAD_MAX);
	for (int i = 0; i < n; i++)
		record_invalid("%s", problems[i]);
	free(problems);
}

static void write_load(FILE *f, const void *ctx)
{
	load_write_json(f, ctx);
}

/* --dump-system: the machine record alone. */
static int dump_system(const char *root)
{
	struct sysinfo *si = malloc(sizeof(*si));

	if (!si || sysinfo_capture(si, root)) {
		fprintf(stderr, "rtgate-sampler: cannot read the system record\n");
		free(si);
		return 1;
	}
	sysinfo_write_json(stdout, si, 0);
	fputc('\n', stdout);
	free(si);
	return fflush(stdout) ? 1 : 0;
}

/* Where the engine reads /proc, /sys and /boot: "/", or a copy of another machine's (--sysroot). */
static const char *sysroot(const struct sampler *s)
{
	return s->p.sysroot[0] ? s->p.sysroot : "/";
}

/*
 * --sysroot DIR, looked for before the options are parsed: the CPUs that -a and -t may name are
 * then the copied machine's, not this one's. NULL without it.
 */
static const char *sysroot_arg(int argc, char **argv)
{
	const char *found = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strncmp(argv[i], "--sysroot=", 10))
			found = argv[i] + 10;
		else if (!strcmp(argv[i], "--sysroot") && i + 1 < argc)
			found = argv[++i];
	}
	return found && found[0] && strcmp(found, "/") ? found : NULL;
}

/* The CPUs of the copied machine: as many as its proc/cpuinfo lists; when it lists none, which CPUs
 * it has cannot be judged, and any CPU may be named. */
static void sysroot_cpu_info(const char *root, struct cpu_info *cpus)
{
	struct sysinfo *si = malloc(sizeof(*si));
	int n = si && !sysinfo_capture(si, root) ? sysinfo_cpu_count(si) : 0;

	free(si);
	sys_cpu_info_at(cpus, root, n > 0 ? n : MAX_CPUS);
}

/*
 * The engine before anything is measured: the machine, the requirements, the real-time tasks
 * already there. The main thread moves off the measured CPUs first, so that the scans and the
 * record cost nothing where the threads measure. An unmet requirement: nothing is measured.
 */
static struct engine *engine_prepare(struct sampler *s, const struct cpu_info *cpus, int pin_main)
{
	struct engine *e = calloc(1, sizeof(*e));
	int measured[MAX_CPUS], n, competitors;
	char *unmet;

	if (!e || record_init(s->p.measurement[0] ? s->p.measurement : NULL))
		die_oom();
	if (plan_problem()[0]) /* a board parameter that is not what its name says: first, and alone */
		record_not_measured(GATE_ERROR, "%s", plan_problem());
	n = require_measured_cpus(&s->p, measured, MAX_CPUS);
	if (pin_main && n > 0 && !s->p.main_affinity) {
		cpu_set_t set;
		int others = 0;

		CPU_ZERO(&set);
		for (int c = 0; c < cpus->ncpus && c < CPU_SETSIZE; c++) {
			int mine = 0;

			for (int k = 0; k < n; k++)
				mine |= measured[k] == c;
			if (cpus->allowed[c] && !mine) {
				CPU_SET(c, &set);
				others++;
			}
		}
		if (others && sched_setaffinity(0, sizeof(set), &set))
			fprintf(stderr, "rtgate-sampler: cannot move the main thread off the measured CPUs: %s\n",
				strerror(errno));
	}
	sysinfo_capture(&e->sys, sysroot(s));
	require_judge(&s->p.require, &e->sys, measured, n, &e->require);
	rtscan_priorities(&s->p, cpus, &e->prio);
	competitors = rtscan(sysroot(s), &e->prio, (int)getpid(), &e->before, RTSCAN_ALL);
	require_judge_competing(&s->p.require, &e->before, competitors, &e->require);
	if (s->p.timerlat.given && !strcmp(sysroot(s), "/") && e->require.n < REQUIRE_MAX) {
		/* the backend's needs are the machine's like any requirement: doctor fails where run would */
		struct require_result *q = &e->require.r[e->require.n++];

		q->key = "timerlat";
		q->met = !timerlat_unavailable(&s->p.timerlat, q->reason, sizeof(q->reason));
	}
	e->competing_matters = !!(s->p.require.given & REQ_NO_COMPETING_RT);
	record_attach(&e->sys, &e->require, &e->prio, e->competing_matters, &e->before, &e->during, &e->after);
	record_expected_seconds(&s->p);
	unmet = xcalloc(1, REQUIRE_MAX * REQUIRE_REASON_LEN);
	if (require_unmet(&e->require, unmet, REQUIRE_MAX * REQUIRE_REASON_LEN))
		record_not_measured(GATE_ERROR, "%s", unmet);
	free(unmet);
	return e;
}

/* --check-only: doctor's questions, answered by the engine itself; nothing is measured. With
 * --timerlat, the command line rtla would be run with too. */
static int check_only(struct sampler *s, const struct cpu_info *cpus)
{
	struct engine *e = engine_prepare(s, cpus, 0);
	int rc = require_unmet(&e->require, NULL, 0) ? 1 : 0;

	printf("{\"system\": ");
	sysinfo_write_json(stdout, &e->sys, 0);
	printf(",\n\"require\": ");
	require_write_json(stdout, &e->require);
	printf(",\n\"rt_tasks\": ");
	rtscan_write_json(stdout, &e->before, 0);
	if (s->p.timerlat.given) { /* the command rtla would run with (null: no rtla here) */
		static struct timerlat_run t;
		char err[PATH_LEN + 64];

		printf(",\n\"backend\": ");
		if (timerlat_prepare(&t, &s->p, cpus, err, sizeof(err)))
			printf("null");
		else
			timerlat_write_json(stdout, &t);
	}
	printf("}\n");
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "rtgate-sampler: cannot write to standard output: %s\n", strerror(errno));
		return 2;
	}
	return rc;
}

/* Results without threads of their own (nothing measured, or rtla measured): complete, ending now. */
static void threadless_result(struct sampler *s, struct run_result *r, int reason)
{
	memset(r, 0, sizeof(*r));
	r->p = &s->p;
	r->layout = &s->ctl.layout;
	r->sys = &s->sys;
	r->complete = 1;
	r->reason = sig_stop ? STOP_SIGNAL : reason;
	r->signal = sig_stop;
	r->end_rt_ns = now_ns(CLOCK_REALTIME);
	r->break_thread = -1;
}

/*
 * Nothing measured (a requirement, a stop signal before the start, a load that could not run):
 * no measuring thread started; the JSON still carries the record ("thread": {}), and every gate
 * its line with the record's status. Exit status 1.
 */
static int write_not_measured(struct sampler *s)
{
	struct run_result r;
	int rc = 1;

	threadless_result(s, &r, STOP_ERROR);
	r.return_code = 1;
	r.start_rt_ns = r.end_rt_ns;
	r.latency_target = -1;
	r.record = record_write_json;
	if (sig_stop)
		record_stopped_by(signal_name(sig_stop));
	{
		int status;
		char *line = xcalloc(1, RECORD_REASON_LEN);

		snprintf(line, RECORD_REASON_LEN, "%s", record_not_measured_reason(&status));
		record_console_escape(line);
		fprintf(stderr, "rtgate-sampler: not measured: %s\n", line);
		free(line);
	}
	print_gates(s, &r);
	fflush(stdout);
	if (s->p.json_path[0] && json_write_file(s->p.json_path, &r)) {
		fprintf(stderr, "rtgate-sampler: cannot write %s: %s\n", s->p.json_path, strerror(errno));
		rc = 1;
	}
	return rc;
}

/* A descriptor that polls readable when the child ends (pidfd, Linux 5.3), or -1. */
static int child_fd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

/* Sleep until the child ends, a signal arrives or CLOCK_MONOTONIC reaches until_ns; without a pidfd,
 * at most 100 ms at a time. */
static void wait_child(int pidfd, int64_t until_ns)
{
	int64_t left = until_ns - now_ns(CLOCK_MONOTONIC);
	struct pollfd pfd = {.fd = pidfd, .events = POLLIN};

	if (left <= 0)
		return;
	if (pidfd < 0 && left > 100000000LL)
		left = 100000000LL;
	poll(&pfd, pidfd >= 0 ? 1 : 0, (int)((left + 999999) / 1000000)); /* EINTR on a signal: looked at */
}

/*
 * --timerlat: rtla measures in place of the threads, and the engine watches it as it watches them:
 * competing real-time tasks about once a second, a stop signal passed on as SIGINT (repeated: rtla
 * ignores it until its handler is in place), SIGKILL only if rtla does not stop; then the loads'
 * level, and the record written with the results (no threads: rtgate reads rtla's histogram).
 */
static int measure_timerlat(struct sampler *s, const struct cpu_info *cpus)
{
	static struct timerlat_run t; /* read by the record's writer until the end */
	char err[PATH_LEN + 160];
	const int64_t second = 1000000000LL, start = now_ns(CLOCK_MONOTONIC);
	const int64_t deadline = start + ((int64_t)s->p.duration_s + TIMERLAT_GRACE_S) * second;
	int64_t asked = 0, next_int = 0;
	int late = 0, stuck = 0, measured, pidfd;
	struct run_result r;

	if (sig_stop) {
		record_not_measured(GATE_INCONCLUSIVE, "stopped by %s before the measurement started",
				    signal_name(sig_stop));
		stop_loads();
		return write_not_measured(s);
	}
	if (timerlat_prepare(&t, &s->p, cpus, err, sizeof(err)) || timerlat_start(&t, err, sizeof(err))) {
		record_not_measured(GATE_ERROR, "%s", err);
		stop_loads();
		return write_not_measured(s);
	}
	rtscan_timerlat_measures((int)t.pid);
	record_backend_writer(timerlat_write_json, &t);
	pidfd = child_fd(t.pid);
	s->start_rt_ns = now_ns(CLOCK_REALTIME);
	s->eng->next_scan_ns = start + SCAN_NS;
	for (;;) {
		pid_t w = waitpid(t.pid, &t.status, WNOHANG);
		int64_t now = now_ns(CLOCK_MONOTONIC);

		if (w == t.pid || (w < 0 && errno != EINTR))
			break;
		if (!asked && (sig_stop || now > deadline)) {
			asked = now;
			late = !sig_stop;
		}
		if (asked && now - asked > (TIMERLAT_GRACE_S + TIMERLAT_KILL_WAIT_S) * second) {
			stuck = 1;
			break;
		} else if (asked && now - asked > TIMERLAT_GRACE_S * second) {
			kill(t.pid, SIGKILL);
		} else if (asked && now >= next_int) {
			kill(t.pid, SIGINT);
			next_int = now + 2 * second;
		}
		if (now >= s->eng->next_scan_ns)
			scan_during(s->eng);
		/* until rtla ends, a stop signal, the next scan or the next SIGINT: about a wake-up a second */
		wait_child(pidfd, asked && next_int < s->eng->next_scan_ns ? next_int : s->eng->next_scan_ns);
	}
	if (pidfd >= 0)
		close(pidfd);
	s->end_mono_ns = now_ns(CLOCK_MONOTONIC);
	rtscan("/", &s->eng->prio, (int)getpid(), &s->eng->after, RTSCAN_ALL);
	finish_loads();
	measured = !stuck && !late && !timerlat_measured(&t, err, sizeof(err));
	if (stuck) {
		char wchan[128] = "?";
		FILE *f;

		snprintf(err, sizeof(err), "/proc/%d/wchan", (int)t.pid);
		if ((f = fopen(err, "re")) != NULL) {
			if (!fgets(wchan, sizeof(wchan), f) || !wchan[0])
				snprintf(wchan, sizeof(wchan), "?");
			fclose(f);
		}
		record_not_measured(GATE_ERROR, "rtla (pid %d) does not die even with SIGKILL: stuck in the kernel at "
				    "%s; the tracer may be left on", (int)t.pid, wchan);
	} else if (late) {
		record_not_measured(GATE_ERROR, "rtla did not stop %llu s after it started; stopped it",
				    (unsigned long long)s->p.duration_s + TIMERLAT_GRACE_S);
	} else if (!measured && sig_stop) {
		record_not_measured(GATE_INCONCLUSIVE, "stopped by %s before rtla measured anything",
				    signal_name(sig_stop));
	} else if (!measured) {
		record_not_measured(GATE_ERROR, "rtla measured nothing: %s", err);
	}
	if (!measured)
		return write_not_measured(s);
	threadless_result(s, &r, STOP_DURATION);
	r.start_rt_ns = s->start_rt_ns;
	r.elapsed_s = (double)(s->end_mono_ns - start) / 1e9;
	r.latency_target = s->p.latency_given ? s->p.latency_target : -1;
	engine_judge(s, &r);
	print_gates(s, &r);
	fflush(stdout);
	if (json_write_file(s->p.json_path, &r)) {
		fprintf(stderr, "rtgate-sampler: cannot write %s: %s\n", s->p.json_path, strerror(errno));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct sampler s;
	struct cpu_info cpus;
	const char *root;
	char err[512];
	int rc;

	/* Handlers first of all: a stop signal from here on ends the run cleanly (it only sets a flag),
	 * and one the parent left blocked and pending is taken here. */
	install_signals();
	sys_cpu_info(&cpus);
	options_set_warning_stream(stderr);
	/* A board's plan and parameters become command-line words first: one grammar, one parser. */
	if (plan_expand(argc, argv, &argc, &argv, err, sizeof(err))) {
		fprintf(stderr, "rtgate-sampler: %s (see --help)\n", err);
		return 2;
	}
	root = sysroot_arg(argc, argv);
	if (root)
		sysroot_cpu_info(root, &cpus);
	switch (options_parse(argc, argv, &cpus, &s.p, err, sizeof(err))) {
	case OPTIONS_EXIT_OK:
		return 0;
	case OPTIONS_ERROR:
		fprintf(stderr, "rtgate-sampler: %s (see --help)\n", err);
		return 2;
	default:
		break;
	}
	if (strcmp(sysroot(&s), "/") && !s.p.dump_system && !s.p.check_only) {
		fprintf(stderr, "rtgate-sampler: --sysroot: only with --check-only or --dump-system (see --help)\n");
		return 2;
	}
	if (s.p.dump_system)
		return dump_system(s.p.sysroot[0] ? s.p.sysroot : "/");
	if (s.p.check_only)
		return check_only(&s, &cpus);
	if (s.p.unbuffered)
		setvbuf(stdout, NULL, _IONBF, 0);
	/* Every output checked before anything is measured: no hour of measuring for nothing. */
	if ((s.p.json_path[0] && outfile_check(s.p.json_path, err, sizeof(err))) ||
	    (s.p.histfile[0] && outfile_check(s.p.histfile, err, sizeof(err)))) {
		options_escape(err, sizeof(err)); /* the paths are the user's text */
		fprintf(stderr, "rtgate-sampler: %s\n", err);
		return 2;
	}
	sys_facts(&s.sys);
	hist_layout_init(&s.ctl.layout, s.p.nsecs, s.p.hist_limit);
	if (plan_problem()[0] && !s.p.measurement[0]) { /* parameters without a measurement to refuse */
		fprintf(stderr, "rtgate-sampler: %s (see --help)\n", plan_problem());
		return 2;
	}
	if (s.p.measurement[0] || s.p.require.given || s.p.nload_opts || s.p.timerlat.given) {
		s.eng = engine_prepare(&s, &cpus, 1);
		if (record_not_measured_reason(NULL))
			return write_not_measured(&s);
	}
	if (s.p.nload_opts) {
		uint64_t longest = s.p.interval_us + s.p.distance_us * (uint64_t)(s.p.num_threads - 1);
		double expected = s.p.duration_s ? (double)s.p.duration_s : (double)s.p.loops * (double)longest / 1e6;

		/* a load outlives every instant the engine lets rtla run: its start under emulation takes tens of s */
		if (s.p.timerlat.given)
			expected += TIMERLAT_GRACE_S + TIMERLAT_KILL_WAIT_S;

		loads = xcalloc(1, sizeof(*loads));
		if (loads_plan(loads, &s.p, &cpus, err, sizeof(err))) { /* checked with the options already */
			fprintf(stderr, "rtgate-sampler: %s (see --help)\n", err);
			return 2;
		}
		atexit(stop_loads);
		record_load_writer(write_load, loads);
		if (loads_start(loads, expected, stop_signal)) { /* the loads are stopped already */
			record_not_measured(loads->stopped_by ? GATE_INCONCLUSIVE : GATE_ERROR, "%s", loads->not_measured);
			return write_not_measured(&s);
		}
	}
	if (s.p.timerlat.given)
		return measure_timerlat(&s, &cpus);
	if (s.p.main_affinity) {
		cpu_set_t set;
		CPU_ZERO(&set);
		for (int i = 0; i < MAX_CPUS && i < CPU_SETSIZE; i++)
			if (s.p.main_cpus[i])
				CPU_SET(i, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			fprintf(stderr, "rtgate-sampler: --mainaffinity: %s\n", strerror(errno));
	}
#ifdef __GLIBC__
	/* glibc keeps 128 KiB spare at the heap's top, which -m would lock: the heap holds a few KiB */
	if (s.p.mlockall) {
		mallopt(M_TOP_PAD, 0);
		malloc_trim(0);
	}
#endif
	if (s.p.mlockall && mlockall(MCL_CURRENT | MCL_FUTURE)) {
		char why[256];
		sys_explain_mlock_failure(why, sizeof(why), errno);
		fprintf(stderr, "rtgate-sampler: cannot lock memory: %s\n", why);
		if (s.eng) {
			record_not_measured(GATE_ERROR, "cannot lock memory: %s", why);
			stop_loads();
			return write_not_measured(&s);
		}
		return 1;
	}
	if (s.p.verbose) /* cyclictest's order: CPUs, then the PM QoS line, then the intervals */
		printf("Max CPUs = %ld\nOnline CPUs = %ld\n", sysconf(_SC_NPROCESSORS_CONF),
		       sysconf(_SC_NPROCESSORS_ONLN));
	s.latency_fd = -1;
	if (s.p.latency_target >= 0) {
		s.latency_fd = sys_set_dma_latency(s.p.latency_target);
		if (s.latency_fd >= 0)
			printf("# /dev/cpu_dma_latency set to %dus\n", s.p.latency_target);
		else if (s.p.latency_given)
			fprintf(stderr, "rtgate-sampler: --latency: cannot set /dev/cpu_dma_latency: %s\n",
				strerror(errno));
	}
	s.ctl.p = &s.p;
	s.ctl.trace_fd = s.p.breaktrace ? sys_open_trace_marker() : -1;
	if (s.p.resolution_check)
		check_resolution(&s.p);
	prepare_threads(&s);
	if (s.p.verbose) {
		/* As cyclictest prints it: after adding the distance, so the next thread's interval (the
		 * distance is 0 with a histogram); readers take X - d as this thread's (parsers/verbose.py). */
		for (int i = 0; i < s.p.num_threads; i++)
			printf("Thread %d Interval: %llu\n", i,
			       (unsigned long long)(s.ts[i].interval_ns / 1000 + s.p.distance_us));
	}
	if (s.eng && sig_stop) {
		record_not_measured(GATE_INCONCLUSIVE, "stopped by %s before the measurement started",
				    signal_name(sig_stop));
		stop_loads();
		return write_not_measured(&s);
	}
	if (start_threads(&s)) {
		stop_loads();
		if (s.eng) { /* no privilege for the threads' policy, a CPU refused: every gate says why */
			record_not_measured(GATE_ERROR, "%s", s.start_error);
			return write_not_measured(&s);
		}
		return 1;
	}
	if (s.eng)
		s.eng->next_scan_ns = now_ns(CLOCK_MONOTONIC) + SCAN_NS;
	if (s.p.json_path[0])
		write_checkpoint(&s); /* a run killed before the first period still leaves valid JSON */
	watch(&s);
	stop_threads(&s);
	print_last_screen(&s);
	if (s.p.mlockall)
		munlockall(); /* measuring is over: what outputs and gates map need not be locked */
	if (s.eng)
		rtscan("/", &s.eng->prio, (int)getpid(), &s.eng->after, RTSCAN_ALL);
	finish_loads();
	rc = write_outputs(&s);
	if (s.latency_fd >= 0)
		close(s.latency_fd);
	return rc;
}
