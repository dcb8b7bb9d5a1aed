// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The machine record ("system"). STAND-IN: only the facts require.c asks about, read under a
 * root directory; E-sys's sysinfo.c/.h (the full port of environment.py capture() and
 * machine.py describe()) replaces this file at merge, with this same API.
 */
#ifndef RTGATE_SYSINFO_H
#define RTGATE_SYSINFO_H

#include <stdio.h>

#define SYSINFO_TEXT 256
#define SYSINFO_CPUS 1024
#define SYSINFO_COMPATIBLE 16

struct sysinfo {
	int live;
	char release[SYSINFO_TEXT], preemption[32], source[96], architecture[72];
	char virtualisation[64], dmi_product[SYSINFO_TEXT], dt_model[SYSINFO_TEXT];
	char compatible[SYSINFO_COMPATIBLE][SYSINFO_TEXT];
	int ncompatible, cpu_count, has_runtime, nisol, nonline;
	long rt_runtime;
	int isolcpus[SYSINFO_CPUS], online[SYSINFO_CPUS];
	char governor[SYSINFO_CPUS][24];
};

int sysinfo_capture(struct sysinfo *s, const char *root);
void sysinfo_write_json(FILE *f, const struct sysinfo *s, int indent);
const char *sysinfo_preemption(const struct sysinfo *s);
const char *sysinfo_preemption_source(const struct sysinfo *s);
const char *sysinfo_release(const struct sysinfo *s);
const char *sysinfo_architecture(const struct sysinfo *s);
int sysinfo_cpu_count(const struct sysinfo *s);
int sysinfo_isolcpus(const struct sysinfo *s, int *cpus, int max);
int sysinfo_online(const struct sysinfo *s, int *cpus, int max);
const char *sysinfo_governor(const struct sysinfo *s, int cpu);
int sysinfo_has_governors(const struct sysinfo *s);
const char *sysinfo_virtualisation(const struct sysinfo *s);
int sysinfo_rt_runtime(const struct sysinfo *s, long *out);
int sysinfo_compatible(const struct sysinfo *s, const char *value);
/* The devicetree's compatible strings in its order: the count, at most max pointers stored. */
int sysinfo_compatibles(const struct sysinfo *s, const char **out, int max);
/* The CPUs that have a governor, ascending: the count, at most max stored. */
int sysinfo_governor_cpus(const struct sysinfo *s, int *cpus, int max);
const char *sysinfo_dmi_product(const struct sysinfo *s);
const char *sysinfo_dt_model(const struct sysinfo *s);

#endif
