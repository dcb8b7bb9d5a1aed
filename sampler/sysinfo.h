// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The machine record ("system"): what the system looked like when it was measured, read from
 * /proc, /sys and /boot under a root directory ("/", or a fixture copy of another system's).
 * A port of the Python capture rtgate made before (tests/reference_environment.py capture() and
 * tests/reference_machine.py describe(), the reference it is held to):
 * the same keys, values and wording, so that a record reads the same whoever wrote it.
 *
 * Everything is read by sysinfo_capture(), before measuring (it may run `gzip -dc` for
 * /proc/config.gz and allocates scratch memory that it frees). After it, the record is fixed-size
 * data in the struct: writing it and asking it questions allocate nothing and read no file.
 * The struct is about a megabyte: keep it on the heap (with -m, a static one stays locked) or
 * static, not on a thread's stack. Capture is not thread-safe (one capture at a time).
 */
#ifndef RTGATE_SYSINFO_H
#define RTGATE_SYSINFO_H

#include <stdint.h>
#include <stdio.h>

#define SYSINFO_NODES 32768      /* JSON values of the record (a 2-CPU VM's takes 200) */
#define SYSINFO_POOL (256 * 1024) /* bytes of its strings and CPU ranges */

struct sysinfo_node {
	uint32_t key;   /* pool offset of the member's name; 0: an array element */
	uint32_t next;  /* next sibling; 0: none */
	union {
		int64_t i;
		struct { uint32_t first, last; } c;   /* children of an object or array */
		struct { uint32_t off, len; } s;      /* a string, number text or CPU ranges */
	} v;
	uint8_t type;
};

struct sysinfo {
	int truncated;                 /* the record outgrew the fixed storage: said in machine.unknown */
	int live;                      /* root is "/" */
	int finishing;                 /* capture is writing its last members (from a reserve) */
	uint32_t used_nodes, used_pool;
	/* the facts require.c asks about, where the record keeps them (0: absent) */
	uint32_t n_release, n_preemption, n_source, n_isolcpus, n_online, n_governors, n_virt,
		 n_runtime, n_compatible, n_dmi_product, n_dt_model, n_architecture, n_cpu_count;
	struct sysinfo_node node[SYSINFO_NODES];   /* node[1] is the "system" object */
	char pool[SYSINFO_POOL];
};

/* 0 ok; never fails on a missing or unreadable file (what cannot be read is null, or listed in
 * machine.unknown with the reason, as the harness does). -1 only when root is NULL or empty. */
int sysinfo_capture(struct sysinfo *s, const char *root);

/* The "system" object as JSON. indent < 0: on one line. indent >= 0: the column of the line the
 * caller is on (the object opens there; its members are indented by two more spaces and the
 * closing brace sits at `indent`). No newline after the closing brace. */
void sysinfo_write_json(FILE *f, const struct sysinfo *s, int indent);

/* The facts require.c needs. A string is NULL when the record holds null (or nothing). */
const char *sysinfo_preemption(const struct sysinfo *s);        /* PREEMPT_RT, PREEMPT, VOLUNTARY, NONE, unknown */
const char *sysinfo_preemption_source(const struct sysinfo *s);
const char *sysinfo_release(const struct sysinfo *s);           /* kernel_release */
const char *sysinfo_architecture(const struct sysinfo *s);      /* uname machine; NULL under a fixture root */
int sysinfo_cpu_count(const struct sysinfo *s);                 /* processors in cpuinfo; 0: unknown */
/* CPUs of the kernel command line's isolcpus= (the last one given): the count, of which at most
 * max are stored into cpus (ascending as written). 0: no isolcpus=. */
int sysinfo_isolcpus(const struct sysinfo *s, int *cpus, int max);
/* Online CPUs (/sys/devices/system/cpu/online): the count, at most max stored. -1: unreadable. */
int sysinfo_online(const struct sysinfo *s, int *cpus, int max);
const char *sysinfo_governor(const struct sysinfo *s, int cpu); /* NULL: none */
int sysinfo_has_governors(const struct sysinfo *s);             /* 1 if any CPU has a cpufreq governor */
/* The CPUs that have a governor, ascending: the count, at most max stored. */
int sysinfo_governor_cpus(const struct sysinfo *s, int *cpus, int max);
const char *sysinfo_virtualisation(const struct sysinfo *s);    /* NULL: bare metal */
int sysinfo_rt_runtime(const struct sysinfo *s, long *out);     /* 0: unreadable; 1: *out set */
int sysinfo_compatible(const struct sysinfo *s, const char *value); /* 1 if the devicetree lists it */
/* The devicetree's compatible strings in its order (for "this machine is compatible a, b"): the
 * count, at most max pointers stored (into the record: valid while it is). 0: no devicetree. */
int sysinfo_compatibles(const struct sysinfo *s, const char **out, int max);
const char *sysinfo_dmi_product(const struct sysinfo *s);       /* board.dmi_product_name */
const char *sysinfo_dt_model(const struct sysinfo *s);          /* board.dt_model */

/* The 1, 5 and 15 minute load averages now, as capture() records them: one small read, for
 * after a measurement. 0 ok, -1 unreadable. */
int sysinfo_loadavg(const char *root, double out[3]);

#endif
