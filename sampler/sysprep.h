// SPDX-License-Identifier: GPL-2.0-or-later
/* Preparing the system around a run: CPUs, memory locking, PM QoS, tracefs, privilege messages. */
#ifndef RTGATE_SYSPREP_H
#define RTGATE_SYSPREP_H

#include <stddef.h>
#include "numparse.h"  /* struct cpu_info */

struct sys_facts {
	char sysname[65], nodename[65], release[65], version[65], machine[65];
	int realtime;              /* /sys/kernel/realtime says 1 */
};

void sys_cpu_info(struct cpu_info *cpus);
/* The CPUs of the machine whose /proc and /sys are copied under root (--sysroot): all `ncpus` usable. */
void sys_cpu_info_at(struct cpu_info *cpus, const char *root, int ncpus);
void sys_facts(struct sys_facts *f);
int sys_cpu_node(int cpu);
/* Open /dev/cpu_dma_latency and hold it; returns fd or -1 (errno kept). */
int sys_set_dma_latency(int value);
int sys_open_trace_marker(void);
/* A one-line explanation of why a real-time policy/priority or mlock failed. */
void sys_explain_sched_failure(char *buf, size_t len, int policy, int prio, int err);
void sys_explain_mlock_failure(char *buf, size_t len, int err);

#endif
