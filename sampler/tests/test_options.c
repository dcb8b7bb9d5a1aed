// SPDX-License-Identifier: GPL-2.0-or-later
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "options.h"

static struct cpu_info two_cpus(void)
{
	struct cpu_info c;

	memset(&c, 0, sizeof(c));
	c.ncpus = 2;
	c.allowed[0] = c.allowed[1] = 1;
	c.nallowed = 2;
	return c;
}

/* Parse a space-separated command line. */
static enum options_result parse(const char *line, struct params *p, char *err)
{
	static char buf[1024];
	static char *argv[64];
	struct cpu_info cpus = two_cpus();
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *tok = strtok(buf, " "); tok && argc < 63; tok = strtok(NULL, " "))
		argv[argc++] = tok;
	argv[argc] = NULL;
	err[0] = '\0';
	return options_parse(argc, argv, &cpus, p, err, 256);
}

/* A command line given word by word (words with blanks, empty words). */
static enum options_result parse_argv(const char **words, struct params *p, char *err)
{
	static char *argv[64];
	struct cpu_info cpus = two_cpus();
	int argc = 0;

	while (argc < 63 && words[argc]) {
		argv[argc] = (char *)words[argc];
		argc++;
	}
	argv[argc] = NULL;
	err[0] = '\0';
	return options_parse(argc, argv, &cpus, p, err, 256);
}

static void expect_error(const char *line, const char *needle)
{
	struct params p;
	char err[256];

	if (parse(line, &p, err) != OPTIONS_ERROR) {
		fprintf(stderr, "expected an error for: %s\n", line);
		check_failures++;
		return;
	}
	if (!strstr(err, needle)) {
		fprintf(stderr, "error for '%s' is '%s', expected it to name '%s'\n", line, err, needle);
		check_failures++;
	}
}

/* A board booted isolcpus=1: its shell's affinity is CPU 0 alone, yet -a 1 pins a thread there. */
static void test_isolated_cpu(void)
{
	struct params p;
	char err[256], *argv[] = {"ct", "-t", "1", "-a", "1", "-l", "10", NULL}, *all[] = {"ct", "-S", "-l", "10", NULL},
			*off[] = {"ct", "-t", "1", "-a", "2", "-l", "10", NULL};
	struct cpu_info cpus;

	memset(&cpus, 0, sizeof(cpus));
	cpus.ncpus = 3;
	cpus.allowed[0] = 1;
	cpus.nallowed = 1;
	cpus.isolated[1] = 1;
	CHECK(options_parse(7, argv, &cpus, &p, err, sizeof(err)) == OPTIONS_OK);
	CHECK_EQ(p.thread_cpu[0], 1);
	CHECK(options_parse(4, all, &cpus, &p, err, sizeof(err)) == OPTIONS_OK);
	CHECK_EQ(p.num_threads, 1); /* -S: the CPUs the process may use, as cyclictest */
	CHECK(options_parse(7, off, &cpus, &p, err, sizeof(err)) == OPTIONS_ERROR); /* neither allowed nor isolated */
}

int main(void)
{
	struct params p;
	char err[256];

	test_isolated_cpu();

	/* defaults are cyclictest's */
	CHECK(parse("ct -l 100", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.interval_us, 1000);
	CHECK_EQ(p.num_threads, 1);
	CHECK_EQ(p.policy, SCHED_OTHER);
	CHECK_EQ(p.priority, 0);
	CHECK_EQ(p.loops, 100);
	CHECK_EQ(p.thread_cpu[0], 0); /* cyclictest 2.x: pinned round-robin without -a too */
	CHECK_EQ(p.latency_target, 0);

	/* the classic SMP histogram line */
	CHECK(parse("ct -m -S -p 80 -i 200 -l 5000 -q -h 300 --histfile=h.txt --json=r.json", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.num_threads, 2);
	CHECK_EQ(p.thread_cpu[0], 0);
	CHECK_EQ(p.thread_cpu[1], 1);
	CHECK_EQ(p.policy, SCHED_FIFO);
	CHECK_EQ(p.priority, 80);
	CHECK_EQ(p.hist_limit, 300);
	CHECK_EQ(p.distance_us, 0);
	CHECK(p.mlockall && p.quiet);
	CHECK(strcmp(p.histfile, "h.txt") == 0);
	CHECK(strcmp(p.json_path, "r.json") == 0);
	CHECK_EQ(p.checkpoint_s, 60);

	/* -t N as a separate word, distance applies without a histogram */
	CHECK(parse("ct -t 3 -p 80 -i 500 -n", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.num_threads, 3);
	CHECK_EQ(p.distance_us, 500);
	CHECK_EQ(p.thread_cpu[0], 0);
	CHECK_EQ(p.thread_cpu[1], 1);
	CHECK_EQ(p.thread_cpu[2], 0);
	CHECK(parse("ct -t", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.num_threads, 2);
	CHECK(parse("ct --threads=4 -H 100", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.num_threads, 4);
	CHECK(p.histofall);

	/* affinity forms */
	CHECK(parse("ct -a 1 -t 3", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.thread_cpu[0], 1);
	CHECK_EQ(p.thread_cpu[2], 1);
	CHECK(parse("ct -a 0-1 -t 3", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.thread_cpu[0], 0);
	CHECK_EQ(p.thread_cpu[1], 1);
	CHECK_EQ(p.thread_cpu[2], 0);
	CHECK(parse("ct -a -t 2", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.thread_cpu[1], 1);
	CHECK(parse("ct --affinity=!0", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.thread_cpu[0], 1);

	/* durations */
	CHECK(parse("ct -D 10", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.duration_s, 10);
	CHECK(parse("ct -D 2m", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.duration_s, 120);
	CHECK(parse("ct --duration=1h", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.duration_s, 3600);
	CHECK(parse("ct -D 1d", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.duration_s, 86400);

	/* policy and priority defaults */
	CHECK(parse("ct --policy fifo -t 2", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.priority, 3);
	CHECK(parse("ct --policy rr -p 70", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.policy, SCHED_RR);
	CHECK(parse("ct --priospread -p 80 -t 3", &p, err) == OPTIONS_OK);
	CHECK(p.priospread);
	CHECK(parse("ct -N -b 5000 --spike=100 --spike-nodes=10 -c 1 -x -r", &p, err) == OPTIONS_OK);
	CHECK(p.nsecs && p.posix_timers && p.relative);
	CHECK_EQ(p.breaktrace, 5000);
	CHECK_EQ(p.spike, 100);
	CHECK_EQ(p.spike_nodes, 10);
	CHECK_EQ(p.clock_id, CLOCK_REALTIME);
	CHECK(parse("ct --secaligned 250 -v -o 10", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.align_offset_us, 250);
	CHECK_EQ(p.oscope, 10);
	CHECK(parse("ct --default-system", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.latency_target, (unsigned long long)-1);
	CHECK(parse("ct --latency=5 --json=x --checkpoint=0", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.latency_target, 5);
	CHECK_EQ(p.checkpoint_s, 0);
	CHECK(parse("ct --json=x --checkpoint=2m --block=0.5", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.checkpoint_s, 120);
	CHECK(p.block_s == 0.5);
	CHECK(parse("ct --help", &p, err) == OPTIONS_EXIT_OK);

	/* rtgate extension: one CPU and priority per thread */
	CHECK(parse("ct --thread-cpus=1,0 --thread-priorities=51,48", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.num_threads, 2);
	CHECK_EQ(p.thread_cpu[0], 1);
	CHECK_EQ(p.thread_cpu[1], 0);
	CHECK_EQ(p.thread_prio[0], 51);
	CHECK_EQ(p.thread_prio[1], 48);
	CHECK_EQ(p.policy, SCHED_FIFO);
	CHECK(parse("ct -t 2 --thread-cpus=*,1", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.thread_cpu[0], (unsigned long long)-1);
	expect_error("ct -t 3 --thread-cpus=0,1", "one entry per thread");
	expect_error("ct --thread-cpus=0,1 --thread-priorities=5", "one entry per thread");
	expect_error("ct --thread-cpus=0,7", "CPU 7");
	expect_error("ct --thread-priorities=51,x", "'x'");
	expect_error("ct --thread-priorities=51,48 -p 90", "drop -p");
	expect_error("ct --policy other --thread-priorities=5", "--policy other");
	expect_error("ct --policy fifo --thread-priorities=0,5", "does not fit");

	/* strict errors, each naming what is wrong */
	/* --timerlat: rtla's fields, strictly; what only the sampler's threads do is refused beside it */
	CHECK(parse("ct -S -p 95 -D 5s --json=k.json --timerlat=bucket=2,entries=500,sched=f:95,user,irq=31,thread=81",
		    &p, err) == OPTIONS_OK);
	CHECK(p.timerlat.given && p.timerlat.user);
	CHECK_EQ(p.timerlat.bucket_us, 2);
	CHECK_EQ(p.timerlat.entries, 500);
	CHECK_EQ(p.timerlat.stop_irq_us, 31);
	CHECK_EQ(p.timerlat.stop_thread_us, 81);
	CHECK(strcmp(p.timerlat.sched, "f:95") == 0);
	CHECK(parse("ct -S -p 95 --check-only --timerlat=bucket=1,entries=10,sched=o:-5", &p, err) == OPTIONS_OK);
	CHECK(strcmp(p.timerlat.sched, "o:-5") == 0);
	expect_error("ct -D 5s --json=k.json --timerlat=bucket=1", "entries=N");
	expect_error("ct -D 5s --json=k.json --timerlat=bucket=1,entries=9", "entries=9");
	expect_error("ct -D 5s --json=k.json --timerlat=bucket=1,entries=10,sched=f:100", "sched=f:100");
	expect_error("ct -D 5s --json=k.json --timerlat=bucket=1,entries=10,sched=x:1", "sched=x:1");
	expect_error("ct -D 5s --json=k.json --timerlat=bucket=1,entries=10,trace", "unknown field 'trace'");
	expect_error("ct -D 5s --json=k.json --timerlat=bucket=1,entries=10 -h 100", "--timerlat: rtla measures");
	expect_error("ct -D 5s --json=k.json --timerlat=bucket=1,entries=10 --gate=name=m,kind=max,limit=10",
		     "--timerlat: rtla measures");
	expect_error("ct --json=k.json --timerlat=bucket=1,entries=10", "needs -D");
	expect_error("ct -D 5s --timerlat=bucket=1,entries=10", "needs -D and --json");

	expect_error("ct --bogus-option", "--bogus-option");
	expect_error("ct -Z", "-Z");
	expect_error("ct -i abc", "'abc'");
	expect_error("ct -i 0", "-i");
	expect_error("ct -i", "-i");
	expect_error("ct -D 1.5h", "1.5h");
	expect_error("ct -D 10x", "10x");
	expect_error("ct -l -5", "-l");
	expect_error("ct -a 5", "CPU 5");
	expect_error("ct -a 1-7", "CPU 2");
	expect_error("ct -a x", "'x'");
	expect_error("ct -p 100", "priority");
	expect_error("ct --policy foo", "foo");
	expect_error("ct --policy other -p 80", "--policy other");
	expect_error("ct -o 10", "--oscope");
	expect_error("ct -A --secaligned", "exclude");
	expect_error("ct -t 2 stray", "stray");
	expect_error("ct -h 0", "-h");
	expect_error("ct --histfile=x", "--histfile");
	expect_error("ct -F /tmp/fifo", "not supported");
	expect_error("ct --smi", "--smi");
	expect_error("ct --priospread -p 2 -t 5", "priospread");
	expect_error("ct -c 2", "-c");
	expect_error("ct --mainaffinity=3", "CPU 3");

	/* forms real harnesses pass (rteval, Linaro test-definitions), as cyclictest takes them */
	CHECK(parse_argv((const char *[]){"ct", "-i100", "-qmu", "-h 3500", "-p95", "-t2", "-a0-1", NULL}, &p, err) == OPTIONS_OK);
	CHECK_EQ(p.hist_limit, 3500);
	CHECK_EQ(p.num_threads, 2);
	CHECK(p.quiet && p.mlockall && p.unbuffered);
	CHECK_EQ(p.thread_cpu[1], 1);
	CHECK(parse_argv((const char *[]){"ct", "", "-qmu", "-h 3500", "-p95", NULL}, &p, err) == OPTIONS_OK);
	CHECK_EQ(p.interval_us, 1000);
	CHECK(parse("ct -p 98 -i 1000 -t 0 -a all -D 1m -m", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.num_threads, 2);
	CHECK_EQ(p.thread_cpu[0], 0);
	CHECK_EQ(p.thread_cpu[1], 1);
	CHECK(parse("ct -t0", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.num_threads, 2);
	CHECK(parse("ct -S -a 1", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.num_threads, 2);
	CHECK_EQ(p.thread_cpu[1], 1);
	CHECK(parse("ct -a 1 -S", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.num_threads, 2);
	CHECK_EQ(p.thread_cpu[0], 0);
	CHECK(parse("ct -S -t 3", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.num_threads, 2);
	CHECK(parse("ct -t 3 -S", &p, err) == OPTIONS_OK);
	CHECK_EQ(p.num_threads, 2);
	CHECK(parse("ct -l 10", &p, err) == OPTIONS_OK);
	CHECK(!p.loops_per_thread);
	CHECK(parse("ct -l 10 --loops-per-thread", &p, err) == OPTIONS_OK);
	CHECK(p.loops_per_thread);
	CHECK(parse("ct -D 3650d", &p, err) == OPTIONS_OK);
	expect_error("ct -D 3651d", "-D");
	expect_error("ct -D 106752d", "-D");
	expect_error("ct -l 4611686018427387905", "-l");
	expect_error("ct -l 4611686018427387904 -i 1000", "longest run");
	expect_error("ct -h 35x", "'35x'");
	expect_error("ct -i 1 000", "'000'");
	expect_error("ct --checkpoint=86401 --json=x", "--checkpoint");

	/* shared number parsers */
	uint64_t v;
	CHECK(parse_u64("18446744073709551615", 0, UINT64_MAX, &v) == 0);
	CHECK(parse_u64("18446744073709551616", 0, UINT64_MAX, &v) != 0);
	CHECK(parse_u64("+5", 0, 10, &v) != 0);
	CHECK(parse_u64(" 5", 0, 10, &v) == 0 && v == 5);   /* rteval passes '-h 3500' as one word */
	CHECK(parse_u64("5 \t", 0, 10, &v) == 0 && v == 5);
	CHECK(parse_u64("5 5", 0, 10, &v) != 0);
	CHECK(parse_u64(" ", 0, 10, &v) != 0);
	CHECK(parse_duration_s(" 2m ", 0, 1000, &v) == 0 && v == 120);
	CHECK(parse_duration_s("1d", 0, 1000, &v) != 0);          /* beyond max after the suffix */
	CHECK(parse_duration_s("213503982334602d", 0, UINT64_MAX, &v) != 0);

	/* a bad value echoed in an error stays on one line: no forged RTGATE-GATE line */
	const char *forged[] = {"ct", "--gate=max\nRTGATE-GATE g t PASS\r\x1b", NULL};
	CHECK(parse_argv(forged, &p, err) == OPTIONS_ERROR);
	CHECK(!strchr(err, '\n') && !strchr(err, '\r') && !strchr(err, 0x1b));
	CHECK(strstr(err, "max\\nRTGATE-GATE") != NULL);
	char small[8] = "a\nbcdef";
	options_escape(small, sizeof(small)); /* truncated to fit */
	CHECK(strcmp(small, "a\\nbcde") == 0);
	char tiny[3] = "a\n";
	options_escape(tiny, sizeof(tiny)); /* never split inside an escape */
	CHECK(strcmp(tiny, "a") == 0);
	CHECK_DONE();
}
