// SPDX-License-Identifier: GPL-2.0-or-later
/* Run parameters: filled once by options.c, read by everything else. */
#ifndef RTGATE_PARAMS_H
#define RTGATE_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#define MAX_THREADS 1024
#define MAX_CPUS 1024
#define PATH_LEN 4096
#define LOAD_OPTS_MAX 520      /* --load and --load-arg options: 8 loads of 64 words (load.h) */

enum stop_reason {
	STOP_NONE = 0,   /* still running (checkpoints) */
	STOP_LOOPS,
	STOP_DURATION,
	STOP_SIGNAL,
	STOP_BREAKTRACE,
	STOP_ERROR,
};

/* --require=ITEM: what the measurement needs of the machine (require.c judges it). */
enum require_bit {
	REQ_PREEMPT_RT = 1u << 0,
	REQ_ISOLATED_CPUS = 1u << 1,
	REQ_GOVERNOR = 1u << 2,
	REQ_BARE_METAL = 1u << 3,
	REQ_RT_THROTTLING_OFF = 1u << 4,
	REQ_ARCHITECTURE = 1u << 5,
	REQ_COMPATIBLE = 1u << 6,
	REQ_DMI_PRODUCT = 1u << 7,
	REQ_CPU_COUNT = 1u << 8,
	REQ_NO_COMPETING_RT = 1u << 9,
};

#define REQUIRE_TEXT_LEN 256
#define MEASUREMENT_NAME_LEN 65  /* 1..64 characters of [A-Za-z0-9_.-] */

struct require_spec {
	unsigned given;                  /* REQ_* bits */
	char governor[REQUIRE_TEXT_LEN];
	char architecture[REQUIRE_TEXT_LEN];
	char compatible[REQUIRE_TEXT_LEN];
	char dmi_product[REQUIRE_TEXT_LEN];
	int cpu_count;
};

/* --timerlat: the kernel's timerlat tracer measures, through rtla (timerlat.c). */
struct timerlat_spec {
	int given;
	uint64_t bucket_us;              /* rtla -b */
	uint64_t entries;                /* rtla -E */
	uint64_t stop_irq_us;            /* rtla -i: stop tracing at an IRQ latency >= this; 0: never */
	uint64_t stop_thread_us;         /* rtla -T (and -s): the same for the thread latency */
	int user;                        /* rtla -u: user-space threads */
	char sched[16];                  /* rtla -P: f:95, r:50 or o:0; "": rtla's default */
};

struct params {
	/* scheduling */
	int priority;            /* of thread 0; -1 = not given */
	int policy;              /* SCHED_* */
	int policy_given;
	int priospread;
	/* timing */
	uint64_t interval_us;
	uint64_t distance_us;    /* -1 meaning "not given" is kept in distance_given */
	int distance_given;
	uint64_t loops;          /* periods; 0 = endless */
	int loops_per_thread;    /* --loops-per-thread: each thread runs its -l periods */
	uint64_t duration_s;     /* 0 = none */
	int clock_id;            /* CLOCK_MONOTONIC or CLOCK_REALTIME */
	int relative;            /* -r */
	int posix_timers;        /* -x */
	int aligned;             /* -A */
	int secaligned;          /* --secaligned */
	uint64_t align_offset_us;
	/* threads and CPUs */
	int num_threads;
	int smp;                 /* -S */
	int affinity;            /* -a given */
	int thread_cpu[MAX_THREADS]; /* -1 = not pinned */
	int thread_prio[MAX_THREADS]; /* --thread-priorities; -1 = use priority */
	int main_affinity;
	unsigned char main_cpus[MAX_CPUS];
	/* memory and power */
	int mlockall;
	int latency_given;
	int latency_target;      /* /dev/cpu_dma_latency value; -1 = leave alone */
	/* outputs */
	uint64_t hist_limit;     /* -h/-H N: 0 = no rt-tests histogram view */
	int histofall;
	char histfile[PATH_LEN];
	char json_path[PATH_LEN];
	uint64_t checkpoint_s;   /* JSON rewrite period; 0 = only at end */
	double block_s;          /* block-maxima block length */
	int quiet;
	int nsecs;
	int verbose;
	uint64_t oscope;         /* -o RED, 1 = no reduction */
	int unbuffered;
	int refresh_on_max;
	int resolution_check;    /* -R */
	/* break and spikes */
	uint64_t breaktrace;     /* 0 = off, else limit in the run's unit */
	int tracemark;
	uint64_t spike;          /* 0 = off */
	uint64_t spike_nodes;
	/* native gates (gate.c) and the thread-group label of each thread */
	int ngates;
	const char *gate_args[64];
	char (*thread_labels)[32];  /* MAX_THREADS of them, allocated when labels are given */
	int nlabels;
	/* background loads: --load and --load-arg values in command-line order (load.c plans them) */
	int nload_opts;
	const char *load_opt[LOAD_OPTS_MAX];
	unsigned char load_opt_is_word[LOAD_OPTS_MAX];
	char load_dir[PATH_LEN];
	/* the system record (sysinfo.c): its root directory ("" = "/"), --dump-system */
	char sysroot[PATH_LEN];
	int dump_system;
	/* the measurement engine: its name, requirements, and --check-only */
	char measurement[MEASUREMENT_NAME_LEN];
	struct require_spec require;
	int check_only;
	struct timerlat_spec timerlat;
	/* command line, for the JSON */
	int argc;
	char **argv;
};

#endif
