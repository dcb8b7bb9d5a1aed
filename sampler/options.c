// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cyclictest's command line, parsed strictly. One table declares every option: the getopt
 * tables, --help, the range checks and --dump-contract (the harness's view) come from it.
 */
#include "options.h"

#include <ctype.h>
#include <getopt.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gate.h"
#include "load.h"
#include "require.h"
#include "timerlat.h"
#include "version.h"

enum opt_id {
	O_AFFINITY, O_ALIGNED, O_BREAKTRACE, O_CLOCK, O_DEFAULT_SYSTEM, O_DISTANCE, O_DURATION,
	O_FIFO, O_HISTOGRAM, O_HISTOFALL, O_HISTFILE, O_INTERVAL, O_JSON, O_LOOPS, O_LAPTOP,
	O_LATENCY, O_MAINAFFINITY, O_MLOCKALL, O_REFRESH, O_NANOSLEEP, O_NSECS, O_OSCOPE,
	O_PRIORITY, O_POLICY, O_PRIOSPREAD, O_QUIET, O_RELATIVE, O_RESOLUTION, O_SECALIGNED,
	O_SYSTEM, O_SMP, O_SPIKE, O_SPIKE_NODES, O_SMI, O_THREADS, O_TRACEMARK, O_UNBUFFERED,
	O_VERBOSE, O_DBGCYCLIC, O_POSIX_TIMERS, O_HELP, O_VERSION,
	/* rtgate extensions */
	O_CHECKPOINT, O_BLOCK, O_LOOPS_PER_THREAD, O_THREAD_CPUS, O_THREAD_PRIOS, O_THREAD_LABELS,
	O_GATE, O_LOAD, O_LOAD_ARG, O_LOAD_DIR, O_DUMP_CONTRACT, O_SYSROOT, O_DUMP_SYSTEM,
	/* the measurement engine */
	O_MEASUREMENT, O_REQUIRE, O_CHECK_ONLY, O_PLAN, O_PARAM, O_OUTPUT_DIR, O_TIMERLAT,
	O_COUNT
};

/* How an option's value is read and checked before it is stored. */
enum opt_type {
	T_FLAG,        /* no value */
	T_U64,         /* whole number in [min, max] */
	T_DURATION,    /* whole seconds, suffix s/m/h/d, in [min, max] */
	T_DECIMAL,     /* decimal number in [dmin, dmax] */
	T_CPUSET,      /* 0-3,5 / !1 / all */
	T_TEXT,        /* path, name or list: checked by its handler */
	T_REFUSED,     /* cyclictest option we do not support */
};

enum { F_EXT = 1, F_HIDDEN = 2 };

/* Where a plain option stores its checked value in struct params: such an option needs no case in apply(). */
enum opt_store {
	ST_NONE,       /* apply() handles it */
	ST_FLAG,       /* int field = 1 */
	ST_INT,        /* int field = the value */
	ST_U64,        /* uint64_t field = the value */
	ST_DOUBLE,     /* double field = the value */
};

struct opt_def {
	const char *name;       /* long name */
	char shortopt;          /* 0: long only */
	char arg;               /* 'n' none, 'r' required, 'o' optional (cyclictest also takes the next word) */
	enum opt_type type;
	uint64_t min, max;
	double dmin, dmax;
	const char *deflt;      /* default, as text ("" = none) */
	const char *meta;
	const char *what;       /* "a ..." noun for error messages */
	const char *help;
	unsigned flags;
	enum opt_store store;
	size_t off;             /* offsetof(struct params, field) */
};

#define TO_FLAG(field) ST_FLAG, offsetof(struct params, field)
#define TO_INT(field) ST_INT, offsetof(struct params, field)
#define TO_U64(field) ST_U64, offsetof(struct params, field)
#define TO_DOUBLE(field) ST_DOUBLE, offsetof(struct params, field)
#define BY_APPLY ST_NONE, 0

#define U(lo, hi) T_U64, (lo), (hi), 0, 0
#define DUR(lo, hi) T_DURATION, (lo), (hi), 0, 0
#define DEC(lo, hi) T_DECIMAL, 0, 0, (lo), (hi)
#define FLAG T_FLAG, 0, 0, 0, 0
#define CPUS T_CPUSET, 0, 0, 0, 0
#define TEXT T_TEXT, 0, 0, 0, 0
#define REFUSED T_REFUSED, 0, 0, 0, 0

static const struct opt_def opts[O_COUNT] = {
	[O_AFFINITY] = {"affinity", 'a', 'o', CPUS, "", "CPUSET", "a CPU set",
		"pin threads round-robin to CPUSET (0-3, 0,2, !1, all; no value: every CPU)", 0, BY_APPLY},
	[O_ALIGNED] = {"aligned", 'A', 'o', U(0, 999999), "0", "USEC", "an offset in us",
		"common start, thread N offset N*USEC", 0, BY_APPLY},
	[O_BREAKTRACE] = {"breaktrace", 'b', 'r', U(1, UINT32_MAX), "", "USEC", "a positive latency",
		"stop when a latency exceeds USEC", 0, TO_U64(breaktrace)},
	[O_CLOCK] = {"clock", 'c', 'r', U(0, 1), "0", "CLOCK", "0 (monotonic) or 1 (realtime)",
		"0 = CLOCK_MONOTONIC, 1 = CLOCK_REALTIME", 0, BY_APPLY},
	[O_DEFAULT_SYSTEM] = {"default-system", 0, 'n', FLAG, "", "", "",
		"leave /dev/cpu_dma_latency alone", 0, BY_APPLY},
	[O_DISTANCE] = {"distance", 'd', 'r', U(0, MAX_INTERVAL_US), "500", "DIST", "a distance in us",
		"interval increment per thread in us", 0, BY_APPLY},
	[O_DURATION] = {"duration", 'D', 'r', DUR(0, MAX_DURATION_S), "0", "TIME",
		"a duration (whole number with optional s, m, h or d)", "run length; suffix s, m, h or d (0 = endless)", 0, TO_U64(duration_s)},
	[O_FIFO] = {"fifo", 'F', 'r', REFUSED, "", "PATH", "", "not supported", F_HIDDEN, BY_APPLY},
	[O_HISTOGRAM] = {"histogram", 'h', 'r', U(1, 1000000), "", "US", "a bucket count",
		"histogram text with US 1-unit buckets at the end", 0, BY_APPLY},
	[O_HISTOFALL] = {"histofall", 'H', 'r', U(1, 1000000), "", "US", "a bucket count",
		"same, with a summary column", 0, BY_APPLY},
	[O_HISTFILE] = {"histfile", 0, 'r', TEXT, "", "PATH", "", "histogram to PATH instead of stdout", 0, BY_APPLY},
	[O_INTERVAL] = {"interval", 'i', 'r', U(1, MAX_INTERVAL_US), "1000", "INTV", "an interval in us",
		"base interval in us", 0, TO_U64(interval_us)},
	[O_JSON] = {"json", 0, 'r', TEXT, "", "PATH", "", "results as JSON (rt-tests layout + \"rtgate\")", 0, BY_APPLY},
	[O_LOOPS] = {"loops", 'l', 'r', U(0, MAX_LOOPS), "0", "LOOPS", "a loop count",
		"periods; the run ends when the first thread has LOOPS (0 = endless)", 0, TO_U64(loops)},
	[O_LAPTOP] = {"laptop", 0, 'n', FLAG, "", "", "", "same as --default-system", 0, BY_APPLY},
	[O_LATENCY] = {"latency", 0, 'r', U(0, INT32_MAX), "0", "PM_QOS", "a latency in us",
		"value held in /dev/cpu_dma_latency", 0, BY_APPLY},
	[O_MAINAFFINITY] = {"mainaffinity", 0, 'r', CPUS, "", "CPUSET", "a CPU set", "run the main thread on CPUSET", 0, BY_APPLY},
	[O_MLOCKALL] = {"mlockall", 'm', 'n', FLAG, "", "", "", "lock current and future memory", 0, TO_FLAG(mlockall)},
	[O_REFRESH] = {"refresh_on_max", 'M', 'n', FLAG, "", "", "", "update the screen only on a new max", 0, TO_FLAG(refresh_on_max)},
	[O_NANOSLEEP] = {"nanosleep", 'n', 'n', FLAG, "", "", "", "accepted for old command lines (always clock_nanosleep)", 0, BY_APPLY},
	[O_NSECS] = {"nsecs", 'N', 'n', FLAG, "", "", "", "measure and print in ns", 0, TO_FLAG(nsecs)},
	[O_OSCOPE] = {"oscope", 'o', 'r', U(1, UINT32_MAX), "1", "RED", "a reduction factor (>= 1)",
		"with -v, print the max of every RED samples", 0, TO_U64(oscope)},
	[O_PRIORITY] = {"priority", 'p', 'r', U(0, 99), "0", "PRIO", "a priority", "priority of the first thread", 0, TO_INT(priority)},
	[O_POLICY] = {"policy", 0, 'r', TEXT, "other", "NAME", "", "other, normal, batch, idle, fifo or rr", 0, BY_APPLY},
	[O_PRIOSPREAD] = {"priospread", 0, 'n', FLAG, "", "", "", "thread N gets priority PRIO-N", 0, TO_FLAG(priospread)},
	[O_QUIET] = {"quiet", 'q', 'n', FLAG, "", "", "", "print a summary only on exit", 0, TO_FLAG(quiet)},
	[O_RELATIVE] = {"relative", 'r', 'n', FLAG, "", "", "", "relative timer instead of absolute", 0, TO_FLAG(relative)},
	[O_RESOLUTION] = {"resolution", 'R', 'n', FLAG, "", "", "", "check the clock resolution", 0, TO_FLAG(resolution_check)},
	[O_SECALIGNED] = {"secaligned", 0, 'o', U(0, 999999), "0", "USEC", "an offset in us",
		"start on the next full second (+USEC)", 0, BY_APPLY},
	[O_SYSTEM] = {"system", 's', 'n', REFUSED, "", "", "", "not supported", F_HIDDEN, BY_APPLY},
	[O_SMP] = {"smp", 'S', 'n', FLAG, "", "", "", "one thread per CPU, pinned, same priority", 0, TO_FLAG(smp)},
	[O_SPIKE] = {"spike", 0, 'r', U(1, UINT32_MAX), "", "TRIGGER", "a positive latency", "record samples above TRIGGER", 0, TO_U64(spike)},
	[O_SPIKE_NODES] = {"spike-nodes", 0, 'r', U(1, 1000000), "1024", "N", "a count", "how many spikes to record", 0, TO_U64(spike_nodes)},
	[O_SMI] = {"smi", 0, 'n', REFUSED, "", "", "", "not supported", F_HIDDEN, BY_APPLY},
	[O_THREADS] = {"threads", 't', 'o', U(0, MAX_THREADS), "1", "NUM", "a thread count",
		"number of threads (no value or 0: one per CPU)", 0, BY_APPLY},
	[O_TRACEMARK] = {"tracemark", 0, 'n', FLAG, "", "", "", "write a trace marker when -b is exceeded", 0, TO_FLAG(tracemark)},
	[O_UNBUFFERED] = {"unbuffered", 'u', 'n', FLAG, "", "", "", "unbuffered output", 0, TO_FLAG(unbuffered)},
	[O_VERBOSE] = {"verbose", 'v', 'n', FLAG, "", "", "", "print every sample as thread:cycle:value", 0, TO_FLAG(verbose)},
	[O_DBGCYCLIC] = {"dbg_cyclictest", 0, 'n', FLAG, "", "", "", "accepted, no effect", F_HIDDEN, BY_APPLY},
	[O_POSIX_TIMERS] = {"posix_timers", 'x', 'n', FLAG, "", "", "", "POSIX interval timers instead of clock_nanosleep", 0, TO_FLAG(posix_timers)},
	[O_HELP] = {"help", 0, 'n', FLAG, "", "", "", "this help", 0, BY_APPLY},
	[O_VERSION] = {"version", 0, 'n', FLAG, "", "", "", "print the version", F_EXT, BY_APPLY},
	[O_CHECKPOINT] = {"checkpoint", 0, 'r', DUR(0, 86400), "60", "SEC", "a period in seconds (0..86400)",
		"rewrite the JSON every SEC seconds (0 = only at start and end)", F_EXT, TO_U64(checkpoint_s)},
	[O_BLOCK] = {"block", 0, 'r', DEC(0.001, 86400.0), "1", "SEC", "a block length in seconds",
		"block length of the block-maxima series", F_EXT, TO_DOUBLE(block_s)},
	[O_LOOPS_PER_THREAD] = {"loops-per-thread", 0, 'n', FLAG, "", "", "",
		"every thread runs its -l periods (threshold files)", F_EXT, TO_FLAG(loops_per_thread)},
	[O_THREAD_CPUS] = {"thread-cpus", 0, 'r', TEXT, "", "LIST", "", "CPU of each thread, e.g. 0,1 ('*' = not pinned)", F_EXT, BY_APPLY},
	[O_THREAD_PRIOS] = {"thread-priorities", 0, 'r', TEXT, "", "LIST", "", "priority of each thread, e.g. 51,48", F_EXT, BY_APPLY},
	[O_THREAD_LABELS] = {"thread-labels", 0, 'r', TEXT, "", "LIST", "", "thread-group label of each thread (gate ids)", F_EXT, BY_APPLY},
	[O_GATE] = {"gate", 0, 'r', TEXT, "", "SPEC", "",
		"evaluate a gate at the end, print RTGATE-GATE lines (name=N,kind=KIND,KEY=VALUE,...); KIND:", F_EXT, BY_APPLY},
	[O_LOAD] = {"load", 0, 'r', TEXT, "", "SPEC", "",
		"run a background load around the measurement, repeatable; SPEC: kind=KIND, then any of cpus=LIST "
		"(or measured, others, all), workers=N, warmup=SEC, min=LEVEL, size=BYTES, tree=PATH, comma-separated; "
		"KIND: cpu, memory, io, timer, network, hackbench, kcompile or custom", F_EXT, BY_APPLY},
	[O_LOAD_ARG] = {"load-arg", 0, 'r', TEXT, "", "WORD", "",
		"one word of the command of the kind=custom --load before it, repeatable", F_EXT, BY_APPLY},
	[O_LOAD_DIR] = {"load-dir", 0, 'r', TEXT, "", "DIR", "",
		"the load's log folder (several loads: DIR-<i>-<kind>; default: the --json path minus .json, "
		"plus .load)", F_EXT, BY_APPLY},
	[O_DUMP_CONTRACT] = {"dump-contract", 0, 'n', FLAG, "", "", "", "print this option table as JSON", F_EXT | F_HIDDEN, BY_APPLY},
	[O_SYSROOT] = {"sysroot", 0, 'r', TEXT, "/", "DIR", "",
		"read /proc, /sys and /boot under DIR for the system record (tests)", F_EXT | F_HIDDEN, BY_APPLY},
	[O_DUMP_SYSTEM] = {"dump-system", 0, 'n', FLAG, "", "", "",
		"print the system record as JSON and exit", F_EXT | F_HIDDEN, TO_FLAG(dump_system)},
	[O_MEASUREMENT] = {"measurement", 0, 'r', TEXT, "", "NAME", "",
		"measure as NAME (1..64 letters, digits, dots, dashes, underscores): scan for competing real-time tasks, "
		"write the run's record "
		"(\"rtgate_run\") into --json", F_EXT, BY_APPLY},
	[O_REQUIRE] = {"require", 0, 'r', TEXT, "", "ITEM", "",
		"measure only if the machine meets ITEM, repeatable: preempt_rt, isolated_cpus, governor=NAME, bare_metal, "
		"rt_throttling_off, architecture=X, compatible=X, dmi_product=X, cpu_count=N, no_competing_rt", F_EXT, BY_APPLY},
	[O_CHECK_ONLY] = {"check-only", 0, 'n', FLAG, "", "", "",
		"measure nothing: print the machine, the requirements judged and the real-time tasks as JSON "
		"(exit 0 all met, 1 one unmet)", F_EXT, TO_FLAG(check_only)},
	/* A board's words (plan.c expands them before parsing: these entries declare and document them) */
	[O_PLAN] = {"plan", 0, 'r', TEXT, "", "WORDS", "",
		"the compiled measurement (rtgate lava args): these options, space-separated, one word on the board", F_EXT,
		BY_APPLY},
	[O_PARAM] = {"param", 0, 'r', TEXT, "", "NAME=VALUE", "",
		"a board parameter: DURATION, or RT_PRIORITY, INTERVAL, THREADS, AFFINITY, HISTOGRAM as the plan fixes them "
		"(a bad one: every gate ERROR)", F_EXT, BY_APPLY},
	[O_OUTPUT_DIR] = {"output-dir", 0, 'r', TEXT, "", "DIR", "",
		"write DIR/<measurement>.json (and .hist with a histogram)", F_EXT, BY_APPLY},
	[O_TIMERLAT] = {"timerlat", 0, 'r', TEXT, "", "SPEC", "",
		"measure with the kernel's timerlat tracer through 'rtla timerlat hist' instead of the sampler's threads "
		"(-i, -D, the threads' CPUs and --latency become rtla's; its histogram goes beside --json as .rtla.txt); "
		"SPEC: bucket=US,entries=N, then any of sched=P:N (rtla -P), user, irq=US and thread=US (stop tracing at "
		"that latency)", F_EXT, BY_APPLY},
};

static FILE *warn_stream;

void options_set_warning_stream(FILE *warn)
{
	warn_stream = warn;
}

void options_escape(char *text, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	char src[1024];
	size_t o = 0;

	if (!len)
		return;
	snprintf(src, sizeof(src), "%s", text);
	for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
		char esc[5] = {(char)*p, 0};

		if (*p == '\n' || *p == '\r' || *p == '\t') {
			esc[0] = '\\';
			esc[1] = *p == '\n' ? 'n' : *p == '\r' ? 'r' : 't';
		} else if (*p < 0x20 || *p == 0x7f) {
			esc[0] = '\\';
			esc[1] = 'x';
			esc[2] = hex[*p >> 4];
			esc[3] = hex[*p & 0xf];
		}
		size_t n = strlen(esc);
		if (o + n >= len)
			break;
		memcpy(text + o, esc, n);
		o += n;
	}
	text[o] = 0;
	/* nor a LAVA signal on a board's console, which shows the sampler's errors */
	for (char *at = text; (at = strstr(at, "<LAVA_")) != NULL; at++)
		*at = '?';
}

static void warn(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!warn_stream)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	options_escape(line, sizeof(line));
	fprintf(warn_stream, "rtgate-sampler: warning: %s\n", line);
}

/* Every message may echo the user's text: escaped, so it stays one line and cannot forge a
 * RTGATE-GATE line for a reader of the combined output. */
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	options_escape(err, errlen);
}

/* The getopt tables, built once from opts[]. */
static struct option long_options[O_COUNT + 1];
static char short_options[3 * O_COUNT + 2];

static void build_getopt_tables(void)
{
	char *s = short_options;

	if (long_options[0].name)
		return;
	*s++ = ':';
	for (int i = 0; i < O_COUNT; i++) {
		const struct opt_def *o = &opts[i];

		long_options[i].name = o->name;
		long_options[i].has_arg = o->arg == 'n' ? no_argument : o->arg == 'r' ? required_argument
							: optional_argument;
		long_options[i].val = 1000 + i;
		if (o->shortopt) {
			*s++ = o->shortopt;
			if (o->arg != 'n')
				*s++ = ':';
			if (o->arg == 'o')
				*s++ = ':';
		}
	}
	*s = '\0';
}

static int id_of_short(int c)
{
	for (int i = 0; i < O_COUNT; i++)
		if (opts[i].shortopt == c)
			return i;
	return -1;
}

/* A value checked against its option's type and range: what the handlers store. */
struct value {
	const char *text;       /* NULL: optional value absent */
	uint64_t u;
	double d;
	unsigned char cpus[MAX_CPUS];
};

static int is_blank(const char *s)
{
	for (; *s; s++)
		if (!isspace((unsigned char)*s))
			return 0;
	return 1;
}

/* cyclictest takes "-t 4", "-a 1", "-a !1" and "-A 50" with the value as the next word; "-a all" too. */
static const char *optional_value(int id, int argc, char **argv)
{
	const char *next = optind < argc ? argv[optind] : NULL;
	char buf[32];

	if (optarg)
		return optarg;
	if (!next || trim_copy(next, buf, sizeof(buf)))
		return NULL;
	if (isdigit((unsigned char)buf[0]) ||
	    (id == O_AFFINITY && (buf[0] == '!' || strcmp(buf, "all") == 0))) {
		optind++;
		return next;
	}
	return NULL;
}

static int check_value(int id, const char *name, const struct cpu_info *cpus, struct value *v,
		       char *err, size_t errlen)
{
	const struct opt_def *o = &opts[id];
	char cerr[160];

	if (o->type == T_REFUSED) {
		set_err(err, errlen, "option '%s' is not supported by rtgate-sampler", name);
		return -1;
	}
	if (!v->text)
		return 0;
	switch (o->type) {
	case T_U64:
		if (parse_u64(v->text, o->min, o->max, &v->u)) {
			set_err(err, errlen, "%s: '%s' is not %s (%llu..%llu)", name, v->text, o->what,
				(unsigned long long)o->min, (unsigned long long)o->max);
			return -1;
		}
		return 0;
	case T_DURATION:
		if (parse_duration_s(v->text, o->min, o->max, &v->u)) {
			set_err(err, errlen, "%s: '%s' is not %s, at most %llu s", name, v->text, o->what,
				(unsigned long long)o->max);
			return -1;
		}
		return 0;
	case T_DECIMAL:
		if (parse_decimal(v->text, o->dmin, o->dmax, &v->d)) {
			set_err(err, errlen, "%s: '%s' is not %s (%g..%g)", name, v->text, o->what, o->dmin, o->dmax);
			return -1;
		}
		return 0;
	case T_CPUSET:
		if (parse_cpuset(v->text, cpus, v->cpus, cerr, sizeof(cerr))) {
			set_err(err, errlen, "%s %s: %s", name, v->text, cerr);
			return -1;
		}
		return 0;
	default:
		return 0;
	}
}

/* What the command line said, before cross-option rules turn it into params. */
struct parse_state {
	unsigned char aff_set[MAX_CPUS];
	int aff_set_given, threads_all, threads_given, histogram_given, affinity_seen, threads_seen;
	int n_list_cpus, n_list_prios;
	int list_cpus[MAX_THREADS], list_prios[MAX_THREADS];
};

static int parse_policy(const char *s, int *policy)
{
	static const struct { const char *name; int policy; } names[] = {
		{"other", SCHED_OTHER}, {"normal", SCHED_OTHER}, {"batch", SCHED_BATCH},
		{"idle", SCHED_IDLE}, {"fifo", SCHED_FIFO}, {"rr", SCHED_RR},
	};
	char buf[16];

	if (trim_copy(s, buf, sizeof(buf)))
		return -1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(buf, names[i].name) == 0) {
			*policy = names[i].policy;
			return 0;
		}
	}
	return -1;
}

const char *policy_name(int policy)
{
	switch (policy) {
	case SCHED_FIFO: return "fifo";
	case SCHED_RR: return "rr";
	case SCHED_BATCH: return "batch";
	case SCHED_IDLE: return "idle";
	default: return "other";
	}
}

/* "0,1,*": one entry per thread; '*' (CPUs only) means not pinned. Returns the count or -1. */
static int parse_thread_list(const char *s, int is_cpus, const struct cpu_info *cpus, int *out,
			     char *err, size_t errlen)
{
	char buf[8192];
	char *tok, *save = NULL;
	int n = 0;
	uint64_t v;

	if (strlen(s) >= sizeof(buf) || !s[0]) {
		set_err(err, errlen, "empty or too long list");
		return -1;
	}
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == MAX_THREADS) {
			set_err(err, errlen, "more than %d entries", MAX_THREADS);
			return -1;
		}
		if (is_cpus && strcmp(tok, "*") == 0) {
			out[n++] = -1;
			continue;
		}
		if (parse_u64(tok, 0, is_cpus ? MAX_CPUS - 1 : 99, &v)) {
			set_err(err, errlen, "'%s' is not a %s", tok, is_cpus ? "CPU number or '*'" : "priority (0..99)");
			return -1;
		}
		if (is_cpus && ((int)v >= cpus->ncpus || !(cpus->allowed[v] || cpus->isolated[v]))) {
			set_err(err, errlen, "CPU %llu is not available", (unsigned long long)v);
			return -1;
		}
		out[n++] = (int)v;
	}
	return n;
}

static int set_path(char *dst, size_t cap, const char *name, const char *val, char *err, size_t errlen)
{
	if (!val[0] || strlen(val) >= cap) {
		set_err(err, errlen, "%s: bad path", name);
		return -1;
	}
	strcpy(dst, val);
	return 0;
}

static int set_labels(struct params *p, const char *name, const char *val, char *err, size_t errlen)
{
	char buf[4096];
	char *tok, *save = NULL;

	if (strlen(val) >= sizeof(buf)) {
		set_err(err, errlen, "%s: too long", name);
		return -1;
	}
	strcpy(buf, val);
	/* one table for the process, allocated only when labels are given (with -m a static one
	 * would be locked for the whole run), reused by every parse */
	static char (*storage)[32];

	p->nlabels = 0;
	if (!storage)
		storage = calloc(MAX_THREADS, sizeof(*storage));
	if (!storage) {
		set_err(err, errlen, "%s: out of memory", name);
		return -1;
	}
	memset(storage, 0, MAX_THREADS * sizeof(*storage));
	p->thread_labels = storage;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (p->nlabels == MAX_THREADS || strlen(tok) >= sizeof(p->thread_labels[0])) {
			set_err(err, errlen, "%s: too many or too long labels", name);
			return -1;
		}
		strcpy(p->thread_labels[p->nlabels++], tok);
	}
	return 0;
}

/* A plain option's value, stored where its table entry says. */
static void store(const struct opt_def *o, const struct value *v, struct params *p)
{
	char *at = (char *)p + o->off;
	int i = o->store == ST_FLAG ? 1 : (int)v->u;

	switch (o->store) {
	case ST_FLAG:
	case ST_INT: memcpy(at, &i, sizeof(i)); break;
	case ST_U64: memcpy(at, &v->u, sizeof(v->u)); break;
	case ST_DOUBLE: memcpy(at, &v->d, sizeof(v->d)); break;
	default: break;
	}
}

/* Store one checked option. Returns OPTIONS_OK, or an exit result with err set. */
static enum options_result apply(int id, const char *name, struct value *v, const struct cpu_info *cpus,
				 struct params *p, struct parse_state *st, char *err, size_t errlen)
{
	if (opts[id].store != ST_NONE) {
		store(&opts[id], v, p);
		return OPTIONS_OK;
	}
	switch (id) {
	case O_AFFINITY:
		st->affinity_seen = 1;
		if (p->smp)
			break; /* cyclictest: -a is ignored in smp mode (warned after parsing) */
		p->affinity = 1;
		if (v->text) {
			memcpy(st->aff_set, v->cpus, MAX_CPUS);
			st->aff_set_given = 1;
		}
		break;
	case O_ALIGNED: p->aligned = 1; p->align_offset_us = v->text ? v->u : 0; break;
	case O_SECALIGNED: p->secaligned = 1; p->align_offset_us = v->text ? v->u : 0; break;
	case O_CLOCK: p->clock_id = v->u ? CLOCK_REALTIME : CLOCK_MONOTONIC; break;
	case O_DEFAULT_SYSTEM:
	case O_LAPTOP:
		if (!p->latency_given)
			p->latency_target = -1;
		break;
	case O_DISTANCE: p->distance_us = v->u; p->distance_given = 1; break;
	case O_LATENCY: p->latency_target = (int)v->u; p->latency_given = 1; break;
	case O_HISTOFALL: p->histofall = 1; /* fall through */
	case O_HISTOGRAM: p->hist_limit = v->u; st->histogram_given = 1; break;
	case O_HISTFILE: return set_path(p->histfile, PATH_LEN, name, v->text, err, errlen) ? OPTIONS_ERROR : OPTIONS_OK;
	case O_SYSROOT: return set_path(p->sysroot, PATH_LEN - 64, name, v->text, err, errlen) ? OPTIONS_ERROR : OPTIONS_OK;
	case O_JSON: return set_path(p->json_path, PATH_LEN - 32, name, v->text, err, errlen) ? OPTIONS_ERROR : OPTIONS_OK;
	case O_MAINAFFINITY: memcpy(p->main_cpus, v->cpus, MAX_CPUS); p->main_affinity = 1; break;
	case O_NANOSLEEP: case O_DBGCYCLIC: break;
	case O_POLICY:
		if (parse_policy(v->text, &p->policy)) {
			set_err(err, errlen, "%s: unknown policy '%s' (other, normal, batch, idle, fifo, rr)",
				name, v->text);
			return OPTIONS_ERROR;
		}
		p->policy_given = 1;
		break;
	case O_THREADS:
		st->threads_seen = 1;
		if (p->smp)
			break; /* cyclictest: -t is ignored in smp mode (warned after parsing) */
		/* cyclictest: no value, or 0 given as the next word, means one thread per CPU */
		st->threads_all = !v->text || v->u == 0;
		st->threads_given = !st->threads_all;
		if (st->threads_given)
			p->num_threads = (int)v->u;
		break;
	case O_THREAD_CPUS:
	case O_THREAD_PRIOS: {
		int is_cpus = id == O_THREAD_CPUS;
		char lerr[160];
		int n = parse_thread_list(v->text, is_cpus, cpus, is_cpus ? st->list_cpus : st->list_prios,
					  lerr, sizeof(lerr));
		if (n < 0) {
			set_err(err, errlen, "%s=%s: %s", name, v->text, lerr);
			return OPTIONS_ERROR;
		}
		*(is_cpus ? &st->n_list_cpus : &st->n_list_prios) = n;
		break;
	}
	case O_GATE: {
		/* parsed here to report errors now; main parses again. On the heap: with -m a static
		 * copy would stay locked for the whole run */
		struct gate_spec *check = malloc(sizeof(*check));
		char gerr[200];
		int bad;

		if (p->ngates == 64 || !check) {
			free(check);
			set_err(err, errlen, "%s: %s", name, check ? "at most 64 gates" : "out of memory");
			return OPTIONS_ERROR;
		}
		bad = gate_parse(v->text, check, gerr, sizeof(gerr));
		free(check);
		if (bad) {
			set_err(err, errlen, "%s=%s: %s", name, v->text, gerr);
			return OPTIONS_ERROR;
		}
		p->gate_args[p->ngates++] = v->text;
		break;
	}
	case O_LOAD:
	case O_LOAD_ARG:
		if (p->nload_opts == LOAD_OPTS_MAX || !v->text[0]) {
			set_err(err, errlen, "%s: %s", name, v->text[0] ? "too many" : "empty value");
			return OPTIONS_ERROR;
		}
		p->load_opt_is_word[p->nload_opts] = id == O_LOAD_ARG;
		p->load_opt[p->nload_opts++] = v->text;
		break;
	case O_PLAN:
	case O_PARAM:
	case O_OUTPUT_DIR: /* plan.c took every --NAME=VALUE form: this one came apart from its value */
		set_err(err, errlen, "give %s=VALUE as one word", name);
		return OPTIONS_ERROR;
	case O_LOAD_DIR: return set_path(p->load_dir, PATH_LEN - 64, name, v->text, err, errlen) ? OPTIONS_ERROR : OPTIONS_OK;
	case O_THREAD_LABELS: return set_labels(p, name, v->text, err, errlen) ? OPTIONS_ERROR : OPTIONS_OK;
	case O_MEASUREMENT: {
		size_t n = strlen(v->text);

		if (n < 1 || n >= MEASUREMENT_NAME_LEN || strspn(v->text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
							   "0123456789_.-") != n) {
			set_err(err, errlen, "%s=%s: not a measurement name (1..%d of A-Z a-z 0-9 _ . -)", name, v->text,
				MEASUREMENT_NAME_LEN - 1);
			return OPTIONS_ERROR;
		}
		memcpy(p->measurement, v->text, n + 1);
		break;
	}
	case O_TIMERLAT: {
		char terr[256];

		if (timerlat_parse(v->text, &p->timerlat, terr, sizeof(terr))) {
			set_err(err, errlen, "%s=%s: %s", name, v->text, terr);
			return OPTIONS_ERROR;
		}
		break;
	}
	case O_REQUIRE: {
		char rerr[256];

		if (require_parse(v->text, &p->require, rerr, sizeof(rerr))) {
			set_err(err, errlen, "%s=%s: %s", name, v->text, rerr);
			return OPTIONS_ERROR;
		}
		break;
	}
	case O_HELP: options_usage(stdout); return OPTIONS_EXIT_OK;
	case O_VERSION: printf("rtgate-sampler %s\n", RTGATE_VERSION); return OPTIONS_EXIT_OK;
	case O_DUMP_CONTRACT: options_dump_contract(stdout); return OPTIONS_EXIT_OK;
	default: break;
	}
	return OPTIONS_OK;
}

static void defaults(struct params *p, int argc, char **argv)
{
	memset(p, 0, sizeof(*p));
	p->priority = -1;
	p->policy = SCHED_OTHER;
	p->interval_us = 1000;
	p->distance_us = 500;
	p->clock_id = CLOCK_MONOTONIC;
	p->num_threads = 1;
	p->latency_target = 0;
	p->checkpoint_s = 60;
	p->block_s = 1.0;
	p->oscope = 1;
	p->spike_nodes = 1024;
	for (int i = 0; i < MAX_THREADS; i++) {
		p->thread_cpu[i] = -1;
		p->thread_prio[i] = -1;
	}
	p->argc = argc;
	p->argv = argv;
}

void options_usage(FILE *f)
{
	fprintf(f, "rtgate-sampler %s: timer wake-up latency sampler, cyclictest-compatible\n"
		"Usage: rtgate-sampler [options]\n\n", RTGATE_VERSION);
	for (int ext = 0; ext < 2; ext++) {
		if (ext)
			fprintf(f, "\nrtgate extensions:\n");
		for (int i = 0; i < O_COUNT; i++) {
			const struct opt_def *o = &opts[i];
			char left[64], right[64];

			if ((o->flags & F_HIDDEN) || !!(o->flags & F_EXT) != ext)
				continue;
			if (o->shortopt)
				snprintf(left, sizeof(left), "-%c%s%s%s", o->shortopt, o->arg == 'n' ? "" : " ",
					 o->arg == 'o' ? "[" : "", o->arg == 'n' ? "" : o->meta);
			else
				left[0] = '\0';
			if (o->shortopt && o->arg == 'o')
				strcat(left, "]");
			snprintf(right, sizeof(right), "--%s%s%s%s", o->name, o->arg == 'o' ? "[=" : o->arg == 'r' ? "=" : "",
				 o->arg == 'n' ? "" : o->meta, o->arg == 'o' ? "]" : "");
			fprintf(f, "%-12s %-24s %s", left, right, o->help);
			for (int k = 1; i == O_GATE && k < GATE_KIND_END; k++)
				fprintf(f, "%s%s", k > 1 ? "|" : " ", gate_kind_name(k));
			if (o->deflt[0] && o->arg != 'n')
				fprintf(f, " (default %s)", o->deflt);
			fprintf(f, "\n");
		}
	}
	fprintf(f, "\nExit status: 0 measured, 1 not measured (a requirement, a stop signal) or runtime error "
		"(privileges, memory, outputs), 2 usage error.\n");
}

static const char *type_name(enum opt_type t)
{
	switch (t) {
	case T_FLAG: return "flag";
	case T_U64: return "integer";
	case T_DURATION: return "duration";
	case T_DECIMAL: return "decimal";
	case T_CPUSET: return "cpuset";
	case T_REFUSED: return "refused";
	default: return "text";
	}
}

void options_dump_contract(FILE *f)
{
	fprintf(f, "{\n  \"sampler\": \"rtgate-sampler %s\",\n  \"max_threads\": %d,\n  \"max_cpus\": %d,\n"
		"  \"options\": [\n", RTGATE_VERSION, MAX_THREADS, MAX_CPUS);
	for (int i = 0; i < O_COUNT; i++) {
		const struct opt_def *o = &opts[i];

		fprintf(f, "    {\"name\": \"%s\", \"short\": ", o->name);
		if (o->shortopt)
			fprintf(f, "\"%c\"", o->shortopt);
		else
			fprintf(f, "null");
		fprintf(f, ", \"arg\": \"%s\", \"type\": \"%s\", \"extension\": %s, ",
			o->arg == 'n' ? "none" : o->arg == 'r' ? "required" : "optional", type_name(o->type),
			o->flags & F_EXT ? "true" : "false");
		if (o->type == T_U64 || o->type == T_DURATION)
			fprintf(f, "\"min\": %llu, \"max\": %llu, ", (unsigned long long)o->min,
				(unsigned long long)o->max);
		else if (o->type == T_DECIMAL)
			fprintf(f, "\"min\": %.17g, \"max\": %.17g, ", o->dmin, o->dmax);
		else
			fprintf(f, "\"min\": null, \"max\": null, ");
		fprintf(f, "\"default\": ");
		if (o->deflt[0])
			fprintf(f, "\"%s\"", o->deflt);
		else
			fprintf(f, "null");
		fprintf(f, "}%s\n", i == O_COUNT - 1 ? "" : ",");
	}
	fprintf(f, "  ],\n");
	gate_dump_contract(f);
	fprintf(f, "}\n");
}

/* Cross-option rules: threads, CPUs, priorities, as cyclictest resolves them. */
static int resolve_threads(struct params *p, const struct cpu_info *cpus, struct parse_state *st,
			   char *err, size_t errlen)
{
	int list[MAX_CPUS], n = 0, i;
	const unsigned char *set = st->aff_set_given && !p->smp ? st->aff_set : cpus->allowed;

	if (p->smp && st->affinity_seen)
		warn("-a ignored due to smp mode (-S runs one thread on every CPU)");
	if (p->smp && st->threads_seen)
		warn("-t ignored due to smp mode (-S runs one thread on every CPU)");
	if (p->smp)
		st->threads_given = st->threads_all = 0;
	for (i = 0; i < MAX_CPUS && i < cpus->ncpus; i++)
		if (set[i])
			list[n++] = i;
	if (n == 0) {
		set_err(err, errlen, "no CPU available to run on");
		return -1;
	}
	if (p->smp) {
		p->num_threads = n;
		p->affinity = 1;
	} else if (st->threads_all) {
		p->num_threads = n;
	}
	if (p->num_threads > MAX_THREADS) {
		set_err(err, errlen, "too many threads (%d, at most %d)", p->num_threads, MAX_THREADS);
		return -1;
	}
	/* cyclictest 2.x pins every thread round-robin: over -a's CPUs, else over the CPUs the
	 * process may use when it starts (taskset, cpuset); --thread-cpus '*' leaves one unpinned */
	for (i = 0; i < p->num_threads; i++)
		p->thread_cpu[i] = list[i % n];
	if (st->n_list_cpus || st->n_list_prios) {
		/* rtgate extension: per-thread CPUs and priorities, as threshold files describe them */
		int k = st->n_list_cpus ? st->n_list_cpus : st->n_list_prios;
		int fixed = st->threads_given || st->threads_all || p->smp;

		if ((st->n_list_cpus && st->n_list_prios && st->n_list_cpus != st->n_list_prios) ||
		    (fixed && k != p->num_threads)) {
			set_err(err, errlen, "--thread-cpus/--thread-priorities need one entry per thread (%d)",
				fixed ? p->num_threads : k);
			return -1;
		}
		p->num_threads = k;
		for (i = 0; i < k; i++) {
			if (st->n_list_cpus)
				p->thread_cpu[i] = st->list_cpus[i];
			if (st->n_list_prios)
				p->thread_prio[i] = st->list_prios[i];
		}
		if (st->n_list_prios && p->priority >= 0) {
			set_err(err, errlen, "--thread-priorities sets every thread's priority: drop -p/--priority");
			return -1;
		}
		if (st->n_list_prios)
			p->priority = st->list_prios[0];
	}
	return 0;
}

static int resolve_priorities(struct params *p, char *err, size_t errlen)
{
	int rt;

	if (p->priospread && p->priority <= 0)
		p->priority = p->num_threads + 1 > 99 ? 99 : p->num_threads + 1;
	if (p->priority >= 0 && p->policy != SCHED_FIFO && p->policy != SCHED_RR) {
		if (p->policy_given && p->priority > 0) {
			set_err(err, errlen, "--policy %s does not take a real-time priority (-p %d)",
				policy_name(p->policy), p->priority);
			return -1;
		}
		if (!p->policy_given)
			p->policy = SCHED_FIFO;
	}
	if (p->priority < 0)
		p->priority = 0;
	rt = p->policy == SCHED_FIFO || p->policy == SCHED_RR;
	if (rt && p->priority == 0)
		p->priority = p->num_threads + 1 > 99 ? 99 : p->num_threads + 1;
	for (int i = 0; i < p->num_threads; i++) {
		if (p->thread_prio[i] >= 0 && (rt ? p->thread_prio[i] < 1 : p->thread_prio[i] != 0)) {
			set_err(err, errlen, "--thread-priorities: priority %d does not fit policy %s",
				p->thread_prio[i], policy_name(p->policy));
			return -1;
		}
	}
	if (p->priospread && rt && p->priority - (p->num_threads - 1) < 1) {
		set_err(err, errlen, "--priospread: %d threads from priority %d would go below 1",
			p->num_threads, p->priority);
		return -1;
	}
	return 0;
}

/* Every instant of the schedule must fit in int64 nanoseconds. */
static int check_schedule(const struct params *p, char *err, size_t errlen)
{
	uint64_t longest = p->interval_us + p->distance_us * (uint64_t)(p->num_threads - 1);

	if (longest > MAX_INTERVAL_US) {
		set_err(err, errlen, "interval plus distance exceeds one hour");
		return -1;
	}
	if (p->loops && p->loops > MAX_DURATION_S * 1000000ULL / longest) {
		set_err(err, errlen, "-l %llu periods of %llu us exceed the longest run (%llu days)",
			(unsigned long long)p->loops, (unsigned long long)longest,
			(unsigned long long)(MAX_DURATION_S / 86400));
		return -1;
	}
	return 0;
}

/* The loads planned once here, against the thread plan, so that a bad one is a usage error now;
 * main plans them again for the run. */
static int check_loads(const struct params *p, const struct cpu_info *cpus, char *err, size_t errlen)
{
	struct loads *ls;
	char lerr[600];
	int bad;

	if (p->load_dir[0] && !p->nload_opts) {
		set_err(err, errlen, "--load-dir needs --load");
		return -1;
	}
	if (!p->nload_opts)
		return 0;
	ls = malloc(sizeof(*ls)); /* large: on the heap, and freed before any -m */
	if (!ls) {
		set_err(err, errlen, "out of memory");
		return -1;
	}
	bad = loads_plan(ls, p, cpus, lerr, sizeof(lerr));
	free(ls);
	if (bad)
		set_err(err, errlen, "%s", lerr);
	return bad;
}

/* rtla measures in place of the threads: what only the threads do is refused beside it. */
static int check_timerlat(const struct params *p, const struct parse_state *st, char *err, size_t errlen)
{
	if (!p->timerlat.given)
		return 0;
	if (p->ngates || st->histogram_given || p->loops || p->verbose || p->breaktrace || p->spike ||
	    p->posix_timers || p->relative || p->nsecs || p->clock_id != CLOCK_MONOTONIC) {
		set_err(err, errlen, "--timerlat: rtla measures, so --gate, -h/-H, -l, -v, -b, --spike, -x, -r, -N and "
			"-c 1 do not apply (rtgate judges the gates from rtla's histogram)");
		return -1;
	}
	if (!p->check_only && (!p->json_path[0] || !p->duration_s)) {
		set_err(err, errlen, "--timerlat needs -D and --json (or --output-dir): rtla's files go beside it");
		return -1;
	}
	return 0;
}

static enum options_result parse_all(int argc, char **argv, const struct cpu_info *cpus,
				     struct params *p, char *err, size_t errlen, struct parse_state *st)
{
	int c, idx;

	defaults(p, argc, argv);
	build_getopt_tables();
	optind = 0; /* glibc: full reset, so tests can parse many command lines */
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_options, long_options, &idx)) != -1) {
		int id = c >= 1000 ? c - 1000 : id_of_short(c);
		char name[64];
		struct value v;
		enum options_result r;

		if (c == '?' || c == ':') {
			const char *what = c == '?' ? "unknown option" : "option needs a value:";
			if (optopt && optopt < 1000)
				set_err(err, errlen, "%s '-%c'", what, optopt);
			else
				set_err(err, errlen, "%s '%s'", what, argv[optind - 1]);
			return OPTIONS_ERROR;
		}
		if (id < 0) {
			set_err(err, errlen, "unknown option");
			return OPTIONS_ERROR;
		}
		if (c >= 1000)
			snprintf(name, sizeof(name), "--%s", opts[id].name);
		else
			snprintf(name, sizeof(name), "-%c", c);
		memset(&v, 0, sizeof(v));
		v.text = opts[id].arg == 'o' ? optional_value(id, argc, argv) : optarg;
		if (check_value(id, name, cpus, &v, err, errlen))
			return OPTIONS_ERROR;
		r = apply(id, name, &v, cpus, p, st, err, errlen);
		if (r != OPTIONS_OK)
			return r;
	}
	/* cyclictest ignores stray words; we refuse them, except empty ones (rteval's unset interval) */
	for (; optind < argc; optind++) {
		if (!is_blank(argv[optind])) {
			set_err(err, errlen, "unexpected argument '%s'", argv[optind]);
			return OPTIONS_ERROR;
		}
	}

	if (p->aligned && p->secaligned) {
		set_err(err, errlen, "--aligned and --secaligned exclude each other");
		return OPTIONS_ERROR;
	}
	if (p->oscope > 1 && !p->verbose) {
		set_err(err, errlen, "--oscope needs --verbose");
		return OPTIONS_ERROR;
	}
	if (p->checkpoint_s && !p->json_path[0])
		p->checkpoint_s = 0;
	if (p->histfile[0] && !st->histogram_given) {
		set_err(err, errlen, "--histfile needs -h/--histogram or -H/--histofall");
		return OPTIONS_ERROR;
	}
	if (st->histogram_given)
		p->distance_us = 0; /* cyclictest: same interval on every thread with a histogram */
	if (resolve_threads(p, cpus, st, err, errlen) || resolve_priorities(p, err, errlen) ||
	    check_schedule(p, err, errlen) || check_loads(p, cpus, err, errlen) || check_timerlat(p, st, err, errlen))
		return OPTIONS_ERROR;
	return OPTIONS_OK;
}

enum options_result options_parse(int argc, char **argv, const struct cpu_info *cpus,
				  struct params *p, char *err, size_t errlen)
{
	/* on the heap and freed: with -m, static parse state would stay locked for the whole run */
	struct parse_state *st = calloc(1, sizeof(*st));
	enum options_result r;

	if (!st) {
		set_err(err, errlen, "out of memory");
		return OPTIONS_ERROR;
	}
	r = parse_all(argc, argv, cpus, p, err, errlen, st);
	free(st);
	return r;
}
