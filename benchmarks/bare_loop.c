// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The least a latency sampler can do per period: one clock_nanosleep(TIMER_ABSTIME) and one
 * clock_gettime, then min/max/sum. The footprint benchmark's floor.
 *   cc -O2 -o bare_loop bare_loop.c
 *   bare_loop INTERVAL_US LOOPS PRIO CPU     (PRIO 0: SCHED_OTHER; CPU -1: not pinned)
 * Holds /dev/cpu_dma_latency at 0 and mlockall()s, as the samplers do with -m.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int64_t ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
}

int main(int argc, char **argv)
{
	int64_t interval, loops, min = INT64_MAX, max = 0, sum = 0, missed = 0;
	struct timespec next, now;
	int zero = 0, fd;

	if (argc != 5)
		return 2;
	interval = atoll(argv[1]) * 1000;
	loops = atoll(argv[2]);
	fd = open("/dev/cpu_dma_latency", O_WRONLY);
	if (fd >= 0 && write(fd, &zero, sizeof(zero)) < 0)
		return 1;
	if (atoi(argv[4]) >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(atoi(argv[4]), &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	if (atoi(argv[3]) > 0) {
		struct sched_param sp = { .sched_priority = atoi(argv[3]) };
		if (sched_setscheduler(0, SCHED_FIFO, &sp))
			return 1;
	}
	mlockall(MCL_CURRENT | MCL_FUTURE);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (int64_t i = 0; i < loops; i++) {
		int64_t d;

		next.tv_nsec += interval;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		d = (ns(&now) - ns(&next)) / 1000;
		if (d < min)
			min = d;
		if (d > max)
			max = d;
		sum += d;
		while (ns(&now) > ns(&next) + interval) { /* periods overslept */
			next.tv_nsec += interval;
			while (next.tv_nsec >= 1000000000L) {
				next.tv_nsec -= 1000000000L;
				next.tv_sec++;
			}
			missed++;
		}
	}
	printf("T: 0 Min: %lld Avg: %.2f Max: %lld Missed: %lld\n", (long long)min,
	       (double)sum / (double)(loops ? loops : 1), (long long)max, (long long)missed);
	return 0;
}
