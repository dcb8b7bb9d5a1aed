/* Parse cyclictest's command line strictly: every bad value is an error naming the option. */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gate.h"
#include "version.h"

enum {
	OPT_AFFINITY = 1000, OPT_ALIGNED, OPT_BREAKTRACE, OPT_CLOCK, OPT_DEFAULT_SYSTEM,
	OPT_DISTANCE, OPT_DURATION, OPT_LATENCY, OPT_FIFO, OPT_HISTOGRAM, OPT_HISTOFALL,
	OPT_HISTFILE, OPT_INTERVAL, OPT_JSON, OPT_LOOPS, OPT_LAPTOP, OPT_MAINAFFINITY,
	OPT_MLOCKALL, OPT_REFRESH, OPT_NSECS, OPT_OSCOPE, OPT_PRIORITY, OPT_POLICY,
	OPT_PRIOSPREAD, OPT_QUIET, OPT_RELATIVE, OPT_RESOLUTION, OPT_SECALIGNED, OPT_SYSTEM,
	OPT_SMP, OPT_SPIKE, OPT_SPIKE_NODES, OPT_SMI, OPT_THREADS, OPT_TRACEMARK,
	OPT_UNBUFFERED, OPT_VERBOSE, OPT_DBGCYCLIC, OPT_POSIX_TIMERS, OPT_NANOSLEEP,
	OPT_HELP, OPT_VERSION, OPT_CHECKPOINT, OPT_BLOCK, OPT_THREAD_CPUS, OPT_THREAD_PRIOS, OPT_GATE, OPT_THREAD_LABELS,
};

static const struct option long_options[] = {
	{"affinity", optional_argument, NULL, OPT_AFFINITY},
	{"aligned", optional_argument, NULL, OPT_ALIGNED},
	{"breaktrace", required_argument, NULL, OPT_BREAKTRACE},
	{"clock", required_argument, NULL, OPT_CLOCK},
	{"default-system", no_argument, NULL, OPT_DEFAULT_SYSTEM},
	{"distance", required_argument, NULL, OPT_DISTANCE},
	{"duration", required_argument, NULL, OPT_DURATION},
	{"latency", required_argument, NULL, OPT_LATENCY},
	{"fifo", required_argument, NULL, OPT_FIFO},
	{"histogram", required_argument, NULL, OPT_HISTOGRAM},
	{"histofall", required_argument, NULL, OPT_HISTOFALL},
	{"histfile", required_argument, NULL, OPT_HISTFILE},
	{"interval", required_argument, NULL, OPT_INTERVAL},
	{"json", required_argument, NULL, OPT_JSON},
	{"loops", required_argument, NULL, OPT_LOOPS},
	{"laptop", no_argument, NULL, OPT_LAPTOP},
	{"mainaffinity", required_argument, NULL, OPT_MAINAFFINITY},
	{"mlockall", no_argument, NULL, OPT_MLOCKALL},
	{"refresh_on_max", no_argument, NULL, OPT_REFRESH},
	{"nsecs", no_argument, NULL, OPT_NSECS},
	{"oscope", required_argument, NULL, OPT_OSCOPE},
	{"priority", required_argument, NULL, OPT_PRIORITY},
	{"policy", required_argument, NULL, OPT_POLICY},
	{"priospread", no_argument, NULL, OPT_PRIOSPREAD},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{"relative", no_argument, NULL, OPT_RELATIVE},
	{"resolution", no_argument, NULL, OPT_RESOLUTION},
	{"secaligned", optional_argument, NULL, OPT_SECALIGNED},
	{"system", no_argument, NULL, OPT_SYSTEM},
	{"smp", no_argument, NULL, OPT_SMP},
	{"spike", required_argument, NULL, OPT_SPIKE},
	{"spike-nodes", required_argument, NULL, OPT_SPIKE_NODES},
	{"smi", no_argument, NULL, OPT_SMI},
	{"threads", optional_argument, NULL, OPT_THREADS},
	{"tracemark", no_argument, NULL, OPT_TRACEMARK},
	{"unbuffered", no_argument, NULL, OPT_UNBUFFERED},
	{"verbose", no_argument, NULL, OPT_VERBOSE},
	{"dbg_cyclictest", no_argument, NULL, OPT_DBGCYCLIC},
	{"posix_timers", no_argument, NULL, OPT_POSIX_TIMERS},
	{"nanosleep", no_argument, NULL, OPT_NANOSLEEP},
	{"help", no_argument, NULL, OPT_HELP},
	{"version", no_argument, NULL, OPT_VERSION},
	{"checkpoint", required_argument, NULL, OPT_CHECKPOINT},
	{"block", required_argument, NULL, OPT_BLOCK},
	{"thread-cpus", required_argument, NULL, OPT_THREAD_CPUS},
	{"thread-priorities", required_argument, NULL, OPT_THREAD_PRIOS},
	{"gate", required_argument, NULL, OPT_GATE},
	{"thread-labels", required_argument, NULL, OPT_THREAD_LABELS},
	{NULL, 0, NULL, 0},
};

/* Short options map onto the long ones so one switch handles both. */
static int short_to_long(int c)
{
	switch (c) {
	case 'a': return OPT_AFFINITY;
	case 'A': return OPT_ALIGNED;
	case 'b': return OPT_BREAKTRACE;
	case 'c': return OPT_CLOCK;
	case 'd': return OPT_DISTANCE;
	case 'D': return OPT_DURATION;
	case 'F': return OPT_FIFO;
	case 'h': return OPT_HISTOGRAM;
	case 'H': return OPT_HISTOFALL;
	case 'i': return OPT_INTERVAL;
	case 'l': return OPT_LOOPS;
	case 'm': return OPT_MLOCKALL;
	case 'M': return OPT_REFRESH;
	case 'n': return OPT_NANOSLEEP;
	case 'N': return OPT_NSECS;
	case 'o': return OPT_OSCOPE;
	case 'p': return OPT_PRIORITY;
	case 'q': return OPT_QUIET;
	case 'r': return OPT_RELATIVE;
	case 'R': return OPT_RESOLUTION;
	case 's': return OPT_SYSTEM;
	case 'S': return OPT_SMP;
	case 't': return OPT_THREADS;
	case 'u': return OPT_UNBUFFERED;
	case 'v': return OPT_VERBOSE;
	case 'x': return OPT_POSIX_TIMERS;
	default: return c;
	}
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Whole seconds with an optional s/m/h/d suffix, as cyclictest's -D; "1.5h" is an error. */
int parse_duration_s(const char *s, uint64_t *out)
{
	char num[32];
	size_t len;
	uint64_t mult = 1, v;

	if (!s)
		return -1;
	len = strlen(s);
	if (len == 0 || len >= sizeof(num))
		return -1;
	memcpy(num, s, len + 1);
	switch (num[len - 1]) {
	case 's': case 'S': mult = 1; num[--len] = '\0'; break;
	case 'm': case 'M': mult = 60; num[--len] = '\0'; break;
	case 'h': case 'H': mult = 3600; num[--len] = '\0'; break;
	case 'd': case 'D': mult = 86400; num[--len] = '\0'; break;
	default: break;
	}
	if (parse_u64(num, 1, UINT64_MAX / 86400, &v))
		return -1;
	*out = v * mult;
	return 0;
}

int parse_decimal(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end != '\0' || !isfinite(v) || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* "0,2-3", "!1" (all allowed but 1) or "all". Every CPU named must exist and be allowed. */
int parse_cpuset(const char *s, const struct cpu_info *cpus, unsigned char *set,
		 char *err, size_t errlen)
{
	char buf[1024];
	char *tok, *save = NULL;
	int invert = 0, i;

	memset(set, 0, MAX_CPUS);
	if (strcmp(s, "all") == 0) {
		memcpy(set, cpus->allowed, MAX_CPUS);
		return 0;
	}
	if (s[0] == '!') {
		invert = 1;
		s++;
	}
	if (strlen(s) == 0 || strlen(s) >= sizeof(buf)) {
		set_err(err, errlen, "empty or too long CPU list");
		return -1;
	}
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		uint64_t lo, hi;

		if (dash) {
			*dash = '\0';
			if (parse_u64(tok, 0, MAX_CPUS - 1, &lo) ||
			    parse_u64(dash + 1, 0, MAX_CPUS - 1, &hi) || hi < lo) {
				set_err(err, errlen, "bad CPU range '%s-%s'", tok, dash + 1);
				return -1;
			}
		} else if (parse_u64(tok, 0, MAX_CPUS - 1, &lo)) {
			set_err(err, errlen, "bad CPU number '%s'", tok);
			return -1;
		} else {
			hi = lo;
		}
		for (uint64_t c = lo; c <= hi; c++) {
			if ((int)c >= cpus->ncpus || !cpus->allowed[c]) {
				set_err(err, errlen, "CPU %llu is not available (this process may use %d CPU%s)",
					(unsigned long long)c, cpus->nallowed, cpus->nallowed == 1 ? "" : "s");
				return -1;
			}
			set[c] = 1;
		}
	}
	if (invert)
		for (i = 0; i < MAX_CPUS; i++)
			set[i] = cpus->allowed[i] && !set[i];
	for (i = 0; i < MAX_CPUS; i++)
		if (set[i])
			return 0;
	set_err(err, errlen, "CPU list '%s' selects no CPU", s);
	return -1;
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
		if (is_cpus && ((int)v >= cpus->ncpus || !cpus->allowed[v])) {
			set_err(err, errlen, "CPU %llu is not available", (unsigned long long)v);
			return -1;
		}
		out[n++] = (int)v;
	}
	return n;
}

static int parse_policy(const char *s, int *policy)
{
	static const struct { const char *name; int policy; } names[] = {
		{"other", SCHED_OTHER}, {"normal", SCHED_OTHER}, {"batch", SCHED_BATCH},
		{"idle", SCHED_IDLE}, {"fifo", SCHED_FIFO}, {"rr", SCHED_RR},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(s, names[i].name) == 0) {
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

/* cyclictest accepts "-t 4" and "-a 1" with the value as the next word; so do we. */
static const char *optional_value(int argc, char **argv, int allow_bang)
{
	if (optarg)
		return optarg;
	if (optind < argc && (isdigit((unsigned char)argv[optind][0]) ||
			      (allow_bang && argv[optind][0] == '!')))
		return argv[optind++];
	return NULL;
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

void options_usage(void)
{
	printf("rtgate-sampler %s: timer wake-up latency sampler, cyclictest-compatible\n"
	       "Usage: rtgate-sampler [options]\n\n"
	       "-a [CPUSET] --affinity[=CPUSET] pin threads round-robin to CPUSET (default: all)\n"
	       "-A [USEC]   --aligned[=USEC]    align thread wake-ups, thread N offset N*USEC\n"
	       "-b USEC     --breaktrace=USEC   stop when a latency exceeds USEC\n"
	       "-c CLOCK    --clock=CLOCK       0 = CLOCK_MONOTONIC (default), 1 = CLOCK_REALTIME\n"
	       "            --default-system    do not touch /dev/cpu_dma_latency\n"
	       "-d DIST     --distance=DIST     interval increment per thread in us (default 500)\n"
	       "-D TIME     --duration=TIME     run length; suffix s, m, h or d\n"
	       "-h US       --histogram=US      write a histogram with US buckets at the end\n"
	       "-H US       --histofall=US      same, with a summary column\n"
	       "            --histfile=PATH     write the histogram to PATH instead of stdout\n"
	       "-i INTV     --interval=INTV     base interval in us (default 1000)\n"
	       "            --json=PATH         write results as JSON (rt-tests layout + \"rtgate\")\n"
	       "            --checkpoint=SEC    rewrite the JSON every SEC seconds (default 60, 0 = off)\n"
	       "            --block=SEC         block length of the block-maxima series (default 1)\n"
	       "            --laptop            same as --default-system\n"
	       "            --latency=PM_QOS    value for /dev/cpu_dma_latency (default 0)\n"
	       "-l LOOPS    --loops=LOOPS       cycles per thread (default 0 = endless)\n"
	       "            --mainaffinity=CPUSET  run the main thread on CPUSET\n"
	       "-m          --mlockall          lock current and future memory\n"
	       "-M          --refresh_on_max    update the screen only on a new max\n"
	       "-n          --nanosleep         accepted for old command lines; clock_nanosleep is the default\n"
	       "-N          --nsecs             measure and print in ns\n"
	       "-o RED      --oscope=RED        with -v, print the max of every RED samples\n"
	       "-p PRIO     --priority=PRIO     priority of the highest-priority thread\n"
	       "            --policy=NAME       other, normal, batch, idle, fifo or rr\n"
	       "            --priospread        thread N gets priority PRIO-N\n"
	       "-q          --quiet             print a summary only on exit\n"
	       "-r          --relative          relative timer instead of absolute\n"
	       "-R          --resolution        check the clock resolution\n"
	       "            --secaligned[=USEC] align wake-ups to the next full second (+USEC)\n"
	       "-S          --smp               one thread per CPU, pinned, same priority\n"
	       "            --spike=TRIGGER     record samples above TRIGGER\n"
	       "            --spike-nodes=N     how many spikes to record (default 1024)\n"
	       "-t [NUM]    --threads[=NUM]     number of threads (without NUM: one per CPU)\n"
	       "            --tracemark         write a trace marker when -b is exceeded\n"
	       "-u          --unbuffered        unbuffered output\n"
	       "-v          --verbose           print every sample as thread:cycle:value\n"
	       "-x          --posix_timers      POSIX interval timers instead of clock_nanosleep\n"
	       "            --thread-cpus=LIST  rtgate: CPU of each thread, e.g. 0,1 ('*' = not pinned)\n"
	       "            --thread-priorities=LIST  rtgate: priority of each thread, e.g. 51,48\n"
	       "            --gate=SPEC         rtgate: evaluate a gate at the end, print RTGATE-GATE lines\n"
	       "                                (name=N,kind=max|avg|percentile|miss_rate|missed,limit=US,...)\n"
	       "            --thread-labels=LIST  rtgate: thread-group label of each thread (gate ids)\n"
	       "            --version           print the version\n"
	       "\nExit status: 0 measured, 1 runtime error (privileges, memory), 2 usage error.\n",
	       RTGATE_VERSION);
}

static int resolve_threads(struct params *p, const struct cpu_info *cpus, int threads_all,
			   const unsigned char *aff_set, int aff_set_given, char *err, size_t errlen)
{
	int list[MAX_CPUS], n = 0, i;
	const unsigned char *set = aff_set_given ? aff_set : cpus->allowed;

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
	} else if (threads_all) {
		p->num_threads = aff_set_given ? n : cpus->nallowed;
	}
	if (p->num_threads > MAX_THREADS) {
		set_err(err, errlen, "too many threads (%d, at most %d)", p->num_threads, MAX_THREADS);
		return -1;
	}
	for (i = 0; i < p->num_threads; i++)
		p->thread_cpu[i] = p->affinity ? list[i % n] : -1;
	return 0;
}

enum options_result options_parse(int argc, char **argv, const struct cpu_info *cpus,
				  struct params *p, char *err, size_t errlen)
{
	unsigned char aff_set[MAX_CPUS];
	int aff_set_given = 0, threads_all = 0, c, idx;
	int histogram_given = 0, threads_given = 0, n_list_cpus = 0, n_list_prios = 0;
	int list_cpus[MAX_THREADS], list_prios[MAX_THREADS];
	uint64_t v;
	const char *val;

	defaults(p, argc, argv);
	memset(aff_set, 0, sizeof(aff_set));
	optind = 0; /* glibc: full reset, so tests can parse many command lines */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":a::A::b:c:d:D:F:h:H:i:l:mMnNo:p:qrRsSt::uvx",
				long_options, &idx)) != -1) {
		const char *name = c >= OPT_AFFINITY ? long_options[idx].name : NULL;
		char sname[3] = {'-', (char)c, '\0'};
		char lname[64];

		if (c < OPT_AFFINITY && c != '?' && c != ':') {
			name = sname;
		} else if (name) {
			snprintf(lname, sizeof(lname), "--%s", name);
			name = lname;
		}
		switch (short_to_long(c)) {
		case '?':
			if (optopt)
				set_err(err, errlen, "unknown option '-%c'", optopt);
			else
				set_err(err, errlen, "unknown option '%s'", argv[optind - 1]);
			return OPTIONS_ERROR;
		case ':':
			if (optopt)
				set_err(err, errlen, "option '-%c' needs a value", optopt);
			else
				set_err(err, errlen, "option '%s' needs a value", argv[optind - 1]);
			return OPTIONS_ERROR;
		case OPT_AFFINITY:
			p->affinity = 1;
			val = optional_value(argc, argv, 1);
			if (val) {
				char cerr[160];

				if (parse_cpuset(val, cpus, aff_set, cerr, sizeof(cerr))) {
					set_err(err, errlen, "%s %s: %s", name, val, cerr);
					return OPTIONS_ERROR;
				}
				aff_set_given = 1;
			}
			break;
		case OPT_ALIGNED:
		case OPT_SECALIGNED:
			if (short_to_long(c) == OPT_ALIGNED)
				p->aligned = 1;
			else
				p->secaligned = 1;
			val = optional_value(argc, argv, 0);
			if (val && parse_u64(val, 0, 999999, &p->align_offset_us)) {
				set_err(err, errlen, "%s: '%s' is not an offset in us (0..999999)", name, val);
				return OPTIONS_ERROR;
			}
			break;
		case OPT_BREAKTRACE:
			if (parse_u64(optarg, 1, UINT32_MAX, &p->breaktrace)) {
				set_err(err, errlen, "%s: '%s' is not a positive latency", name, optarg);
				return OPTIONS_ERROR;
			}
			break;
		case OPT_CLOCK:
			if (parse_u64(optarg, 0, 1, &v)) {
				set_err(err, errlen, "%s: '%s' is not 0 (monotonic) or 1 (realtime)", name, optarg);
				return OPTIONS_ERROR;
			}
			p->clock_id = v ? CLOCK_REALTIME : CLOCK_MONOTONIC;
			break;
		case OPT_DEFAULT_SYSTEM:
		case OPT_LAPTOP:
			if (!p->latency_given)
				p->latency_target = -1;
			break;
		case OPT_DISTANCE:
			if (parse_u64(optarg, 0, 3600000000ULL, &p->distance_us)) {
				set_err(err, errlen, "%s: '%s' is not a distance in us", name, optarg);
				return OPTIONS_ERROR;
			}
			p->distance_given = 1;
			break;
		case OPT_DURATION:
			if (parse_duration_s(optarg, &p->duration_s)) {
				set_err(err, errlen, "%s: '%s' is not a duration (whole number with optional s, m, h or d)",
					name, optarg);
				return OPTIONS_ERROR;
			}
			break;
		case OPT_LATENCY:
			if (parse_u64(optarg, 0, INT32_MAX, &v)) {
				set_err(err, errlen, "%s: '%s' is not a latency in us", name, optarg);
				return OPTIONS_ERROR;
			}
			p->latency_target = (int)v;
			p->latency_given = 1;
			break;
		case OPT_HISTOFALL:
			p->histofall = 1;
			/* fall through */
		case OPT_HISTOGRAM:
			if (parse_u64(optarg, 1, 1000000, &p->hist_limit)) {
				set_err(err, errlen, "%s: '%s' is not a bucket count (1..1000000)", name, optarg);
				return OPTIONS_ERROR;
			}
			histogram_given = 1;
			break;
		case OPT_HISTFILE:
			if (strlen(optarg) >= PATH_LEN || !optarg[0]) {
				set_err(err, errlen, "%s: bad path", name);
				return OPTIONS_ERROR;
			}
			strcpy(p->histfile, optarg);
			break;
		case OPT_JSON:
			if (strlen(optarg) >= PATH_LEN - 32 || !optarg[0]) {
				set_err(err, errlen, "%s: bad path", name);
				return OPTIONS_ERROR;
			}
			strcpy(p->json_path, optarg);
			break;
		case OPT_CHECKPOINT:
			if (parse_duration_s(optarg, &p->checkpoint_s) && strcmp(optarg, "0") != 0) {
				set_err(err, errlen, "%s: '%s' is not a period in seconds", name, optarg);
				return OPTIONS_ERROR;
			}
			if (strcmp(optarg, "0") == 0)
				p->checkpoint_s = 0;
			break;
		case OPT_BLOCK:
			if (parse_decimal(optarg, 0.001, 86400.0, &p->block_s)) {
				set_err(err, errlen, "%s: '%s' is not a block length in seconds (0.001..86400)",
					name, optarg);
				return OPTIONS_ERROR;
			}
			break;
		case OPT_INTERVAL:
			if (parse_u64(optarg, 1, 3600000000ULL, &p->interval_us)) {
				set_err(err, errlen, "%s: '%s' is not an interval in us (1..3600000000)", name, optarg);
				return OPTIONS_ERROR;
			}
			break;
		case OPT_LOOPS:
			if (parse_u64(optarg, 0, UINT64_MAX >> 1, &p->loops)) {
				set_err(err, errlen, "%s: '%s' is not a loop count", name, optarg);
				return OPTIONS_ERROR;
			}
			break;
		case OPT_MAINAFFINITY: {
			char cerr[160];

			if (parse_cpuset(optarg, cpus, p->main_cpus, cerr, sizeof(cerr))) {
				set_err(err, errlen, "%s %s: %s", name, optarg, cerr);
				return OPTIONS_ERROR;
			}
			p->main_affinity = 1;
			break;
		}
		case OPT_MLOCKALL: p->mlockall = 1; break;
		case OPT_REFRESH: p->refresh_on_max = 1; break;
		case OPT_NANOSLEEP: break; /* clock_nanosleep is what we always use */
		case OPT_NSECS: p->nsecs = 1; break;
		case OPT_OSCOPE:
			if (parse_u64(optarg, 1, UINT32_MAX, &p->oscope)) {
				set_err(err, errlen, "%s: '%s' is not a reduction factor (>= 1)", name, optarg);
				return OPTIONS_ERROR;
			}
			break;
		case OPT_PRIORITY:
			if (parse_u64(optarg, 0, 99, &v)) {
				set_err(err, errlen, "%s: '%s' is not a priority (0..99)", name, optarg);
				return OPTIONS_ERROR;
			}
			p->priority = (int)v;
			break;
		case OPT_POLICY:
			if (parse_policy(optarg, &p->policy)) {
				set_err(err, errlen, "%s: unknown policy '%s' (other, normal, batch, idle, fifo, rr)",
					name, optarg);
				return OPTIONS_ERROR;
			}
			p->policy_given = 1;
			break;
		case OPT_PRIOSPREAD: p->priospread = 1; break;
		case OPT_QUIET: p->quiet = 1; break;
		case OPT_RELATIVE: p->relative = 1; break;
		case OPT_RESOLUTION: p->resolution_check = 1; break;
		case OPT_SMP: p->smp = 1; break;
		case OPT_SPIKE:
			if (parse_u64(optarg, 1, UINT32_MAX, &p->spike)) {
				set_err(err, errlen, "%s: '%s' is not a positive latency", name, optarg);
				return OPTIONS_ERROR;
			}
			break;
		case OPT_SPIKE_NODES:
			if (parse_u64(optarg, 1, 1000000, &p->spike_nodes)) {
				set_err(err, errlen, "%s: '%s' is not a count (1..1000000)", name, optarg);
				return OPTIONS_ERROR;
			}
			break;
		case OPT_THREADS:
			val = optional_value(argc, argv, 0);
			if (val) {
				if (parse_u64(val, 1, MAX_THREADS, &v)) {
					set_err(err, errlen, "%s: '%s' is not a thread count (1..%d)", name, val,
						MAX_THREADS);
					return OPTIONS_ERROR;
				}
				p->num_threads = (int)v;
				threads_all = 0;
				threads_given = 1;
			} else {
				threads_all = 1;
			}
			break;
		case OPT_THREAD_CPUS:
		case OPT_THREAD_PRIOS: {
			int is_cpus = short_to_long(c) == OPT_THREAD_CPUS;
			char lerr[160];
			int n = parse_thread_list(optarg, is_cpus, cpus, is_cpus ? list_cpus : list_prios,
						  lerr, sizeof(lerr));
			if (n < 0) {
				set_err(err, errlen, "%s=%s: %s", name, optarg, lerr);
				return OPTIONS_ERROR;
			}
			if (is_cpus)
				n_list_cpus = n;
			else
				n_list_prios = n;
			break;
		}
		case OPT_GATE: {
			static struct gate_spec check; /* parsed here to report errors now; main parses again */
			char gerr[200];

			if (p->ngates == 64) {
				set_err(err, errlen, "%s: at most 64 gates", name);
				return OPTIONS_ERROR;
			}
			if (gate_parse(optarg, &check, gerr, sizeof(gerr))) {
				set_err(err, errlen, "%s=%s: %s", name, optarg, gerr);
				return OPTIONS_ERROR;
			}
			p->gate_args[p->ngates++] = optarg;
			break;
		}
		case OPT_THREAD_LABELS: {
			char buf[4096];
			char *tok, *save = NULL;

			if (strlen(optarg) >= sizeof(buf)) {
				set_err(err, errlen, "%s: too long", name);
				return OPTIONS_ERROR;
			}
			strcpy(buf, optarg);
			p->nlabels = 0;
			for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (p->nlabels == MAX_THREADS || strlen(tok) >= sizeof(p->thread_labels[0])) {
					set_err(err, errlen, "%s: too many or too long labels", name);
					return OPTIONS_ERROR;
				}
				strcpy(p->thread_labels[p->nlabels++], tok);
			}
			break;
		}
		case OPT_TRACEMARK: p->tracemark = 1; break;
		case OPT_UNBUFFERED: p->unbuffered = 1; break;
		case OPT_VERBOSE: p->verbose = 1; break;
		case OPT_DBGCYCLIC: break;
		case OPT_POSIX_TIMERS: p->posix_timers = 1; break;
		case OPT_FIFO:
		case OPT_SYSTEM:
		case OPT_SMI:
			set_err(err, errlen, "option '%s' is not supported by rtgate-sampler", name);
			return OPTIONS_ERROR;
		case OPT_HELP:
			options_usage();
			return OPTIONS_EXIT_OK;
		case OPT_VERSION:
			printf("rtgate-sampler %s\n", RTGATE_VERSION);
			return OPTIONS_EXIT_OK;
		default:
			set_err(err, errlen, "unknown option");
			return OPTIONS_ERROR;
		}
	}
	if (optind < argc) {
		set_err(err, errlen, "unexpected argument '%s'", argv[optind]);
		return OPTIONS_ERROR;
	}

	/* Cross-option rules, as cyclictest applies them, but as errors instead of silent fixes. */
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
	if (p->histfile[0] && !histogram_given) {
		set_err(err, errlen, "--histfile needs -h/--histogram or -H/--histofall");
		return OPTIONS_ERROR;
	}
	if (histogram_given)
		p->distance_us = 0; /* cyclictest: same interval on every thread with a histogram */
	if (resolve_threads(p, cpus, threads_all, aff_set, aff_set_given, err, errlen))
		return OPTIONS_ERROR;
	if (n_list_cpus || n_list_prios) {
		/* rtgate extension: per-thread CPUs and priorities, as threshold files describe them */
		int n = n_list_cpus ? n_list_cpus : n_list_prios;

		if ((n_list_cpus && n_list_prios && n_list_cpus != n_list_prios) ||
		    ((threads_given || threads_all || p->smp) && n != p->num_threads)) {
			set_err(err, errlen, "--thread-cpus/--thread-priorities need one entry per thread (%d)",
				threads_given || threads_all || p->smp ? p->num_threads : n);
			return OPTIONS_ERROR;
		}
		p->num_threads = n;
		for (int i = 0; i < n; i++) {
			if (n_list_cpus)
				p->thread_cpu[i] = list_cpus[i];
			if (n_list_prios)
				p->thread_prio[i] = list_prios[i];
		}
		if (n_list_prios && p->priority >= 0) {
			set_err(err, errlen, "--thread-priorities sets every thread's priority: drop -p/--priority");
			return OPTIONS_ERROR;
		}
		if (n_list_prios)
			p->priority = list_prios[0];
	}

	/* Priority and policy, with cyclictest's defaults. */
	if (p->priospread && p->priority <= 0)
		p->priority = p->num_threads + 1 > 99 ? 99 : p->num_threads + 1;
	if (p->priority >= 0 && p->policy != SCHED_FIFO && p->policy != SCHED_RR) {
		if (p->policy_given && p->priority > 0) {
			set_err(err, errlen, "--policy %s does not take a real-time priority (-p %d)",
				policy_name(p->policy), p->priority);
			return OPTIONS_ERROR;
		}
		if (!p->policy_given)
			p->policy = SCHED_FIFO;
	}
	if (p->priority < 0)
		p->priority = 0;
	if ((p->policy == SCHED_FIFO || p->policy == SCHED_RR) && p->priority == 0)
		p->priority = p->num_threads + 1 > 99 ? 99 : p->num_threads + 1;
	for (int i = 0; i < p->num_threads; i++) {
		int rt = p->policy == SCHED_FIFO || p->policy == SCHED_RR;
		if (p->thread_prio[i] >= 0 && (rt ? p->thread_prio[i] < 1 : p->thread_prio[i] != 0)) {
			set_err(err, errlen, "--thread-priorities: priority %d does not fit policy %s",
				p->thread_prio[i], policy_name(p->policy));
			return OPTIONS_ERROR;
		}
	}
	if (p->priospread && (p->policy == SCHED_FIFO || p->policy == SCHED_RR) &&
	    p->priority - (p->num_threads - 1) < 1) {
		set_err(err, errlen, "--priospread: %d threads from priority %d would go below 1",
			p->num_threads, p->priority);
		return OPTIONS_ERROR;
	}
	if (p->interval_us + p->distance_us * (uint64_t)(p->num_threads - 1) > 3600000000ULL) {
		set_err(err, errlen, "interval plus distance exceeds one hour");
		return OPTIONS_ERROR;
	}
	return OPTIONS_OK;
}
