// SPDX-License-Identifier: GPL-2.0-or-later
/* The engine's parts on known inputs: --require parsing, requirements judged on a fixture tree
 * (reasons word for word as measure/conditions.py words them), the competitor scan of a fixture
 * /proc, the record's JSON and the console escaping. */
#include <sched.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "gate.h"
#include "options.h"
#include "record.h"
#include "require.h"
#include "rtscan.h"
#include "sysinfo.h"

static char root[64];

static void put(const char *rel, const char *text, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	f = fopen(path, "wb");
	if (!f) {
		perror(path);
		exit(2);
	}
	fwrite(text, 1, len ? len : strlen(text), f);
	fclose(f);
}

/* A task's stat: fields after the comm as proc(5) numbers them (flags 9, rt_priority 40, policy 41). */
static void task(int pid, int tid, const char *comm, unsigned long flags, int prio, int policy, const char *cpus)
{
	char rel[128], text[1024], status[256];
	size_t used;

	used = (size_t)snprintf(text, sizeof(text), "%d (%s) S", tid, comm);
	for (int field = 4; field <= 52; field++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, " %lu",
					 field == 9 ? flags : field == 40 ? (unsigned long)prio : field == 41 ? (unsigned long)policy : 0);
	snprintf(text + used, sizeof(text) - used, "\n");
	snprintf(rel, sizeof(rel), "proc/%d/task/%d/stat", pid, tid);
	put(rel, text, 0);
	snprintf(status, sizeof(status), "Name:\t%s\nCpus_allowed:\t3\nCpus_allowed_list:\t%s\nMems_allowed:\t1\n", comm, cpus);
	snprintf(rel, sizeof(rel), "proc/%d/task/%d/status", pid, tid);
	put(rel, status, 0);
}

static void fixture(void)
{
	snprintf(root, sizeof(root), "/tmp/rtgate-engine-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		exit(2);
	}
	put("proc/sys/kernel/osrelease", "6.1.0-test\n", 0);
	put("proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.0\n", 0);
	put("proc/cmdline", "root=/dev/sda1 isolcpus=managed_irq,1 preempt=none quiet\n", 0);
	put("boot/config-6.1.0-test", "# config\nCONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_DYNAMIC=y\n", 0);
	put("proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu\n\nprocessor\t: 1\nflags\t\t: fpu\n", 0);
	put("sys/devices/system/cpu/online", "0-1\n", 0);
	put("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n", 0);
	put("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance\n", 0);
	put("proc/sys/kernel/sched_rt_runtime_us", "950000\n", 0);
	put("sys/hypervisor/type", "xen\n", 0);
	put("sys/class/dmi/id/product_name", "Board 9000\n", 0);
	put("proc/device-tree/compatible", "acme,board\0acme,soc\0", 21);
	put("proc/device-tree/model", "Acme Board\0", 11);
	task(7, 7, "migration/1", 0x00200040, 99, SCHED_FIFO, "1");
	task(100, 100, "busy", 0x400000, 50, SCHED_FIFO, "0-1");
	task(100, 101, "busy worker", 0x400000, 0, SCHED_OTHER, "0-1");
	task(100, 102, "a) b", 0x400000, 90, SCHED_RR, "0-1");
	task(300, 300, "dl", 0x400000, 0, 6, "1");
	task(400, 400, "irq/24-eth0", 0x00208040, 50, SCHED_FIFO, "0");
}

static void test_parse(void)
{
	struct require_spec r;
	char err[256];

	memset(&r, 0, sizeof(r));
	CHECK(require_parse("preempt_rt", &r, err, sizeof(err)) == 0);
	CHECK(require_parse("governor=performance", &r, err, sizeof(err)) == 0);
	CHECK(require_parse("cpu_count=4", &r, err, sizeof(err)) == 0);
	CHECK(require_parse("dmi_product=Standard PC (Q35 + ICH9, 2009)", &r, err, sizeof(err)) == 0);
	CHECK(r.given == (REQ_PREEMPT_RT | REQ_GOVERNOR | REQ_CPU_COUNT | REQ_DMI_PRODUCT));
	CHECK(strcmp(r.governor, "performance") == 0 && r.cpu_count == 4);
	CHECK(strcmp(r.dmi_product, "Standard PC (Q35 + ICH9, 2009)") == 0);
	CHECK(require_parse("preempt_rt", &r, err, sizeof(err)) == -1);
	CHECK_STR_HAS(err, "given twice");
	CHECK(require_parse("bare_metal=yes", &r, err, sizeof(err)) == -1);
	CHECK_STR_HAS(err, "takes no value");
	CHECK(require_parse("cpu_count=0", &r, err, sizeof(err)) == -1);
	CHECK(require_parse("architecture", &r, err, sizeof(err)) == -1);
	CHECK(require_parse("architecture=  ", &r, err, sizeof(err)) == -1);
	CHECK(require_parse("compatible=a\nb", &r, err, sizeof(err)) == -1);
	CHECK(require_parse("preempt", &r, err, sizeof(err)) == -1);
	CHECK_STR_HAS(err, "unknown requirement");
}

static struct sysinfo sys;
static struct require_report rep;

static const char *reason(const char *key)
{
	for (int i = 0; i < rep.n; i++)
		if (strcmp(rep.r[i].key, key) == 0)
			return rep.r[i].met ? "(met)" : rep.r[i].reason;
	return "(absent)";
}

static void test_judge(void)
{
	struct require_spec r;
	char err[256], all[8192];
	int measured[2] = {0, 1};

	memset(&r, 0, sizeof(r));
	const char *items[] = {"preempt_rt", "isolated_cpus", "governor=performance", "bare_metal", "rt_throttling_off",
			       "architecture=aarch64", "compatible=acme,other", "cpu_count=4"};
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
		CHECK(require_parse(items[i], &r, err, sizeof(err)) == 0);
	CHECK(sysinfo_capture(&sys, root) == 0);
	require_judge(&r, &sys, measured, 2, &rep);
	CHECK_EQ(rep.n, 6);
	CHECK(strcmp(reason("preempt_rt"), "requires a PREEMPT_RT kernel; 6.1.0-test is NONE "
					   "(preempt= on the kernel command line (PREEMPT_DYNAMIC))") == 0);
	CHECK(strcmp(reason("isolated_cpus"), "requires isolated CPUs; cpu 0 not in isolcpus ([1])") == 0);
	CHECK(strcmp(reason("governor"), "requires governor performance; cpu0 is powersave") == 0);
	CHECK(strcmp(reason("bare_metal"), "requires bare metal; running under Xen") == 0);
	CHECK(strcmp(reason("rt_throttling_off"), "requires RT throttling off; sched_rt_runtime_us is 950000") == 0);
	CHECK(strcmp(reason("board"), "this file is for aarch64, compatible acme,other, 4 CPUs; this machine is an "
				      "unknown architecture, compatible acme,board, acme,soc, 2 CPUs") == 0);
	CHECK_EQ(require_unmet(&rep, all, sizeof(all)), 6);
	CHECK_STR_HAS(all, "cpu0 is powersave; requires bare metal");

	/* only cpu 1 measured: isolated, and its governor is performance */
	measured[0] = 1;
	require_judge(&r, &sys, measured, 1, &rep);
	CHECK(strcmp(reason("isolated_cpus"), "(met)") == 0);
	CHECK(strcmp(reason("governor"), "(met)") == 0);
	/* an unpinned thread */
	require_judge(&r, &sys, measured, -1, &rep);
	CHECK(strcmp(reason("isolated_cpus"), "requires isolated CPUs, but the measurement's threads are not pinned") == 0);
	CHECK(strcmp(reason("governor"), "requires governor performance; cpu0 is powersave") == 0);

	memset(&r, 0, sizeof(r));
	CHECK(require_parse("compatible=acme,soc", &r, err, sizeof(err)) == 0);
	CHECK(require_parse("dmi_product=Board 9000", &r, err, sizeof(err)) == 0);
	require_judge(&r, &sys, measured, 1, &rep);
	CHECK(strcmp(reason("board"), "(met)") == 0);
}

static void test_scan(void)
{
	static struct rt_tasks found, during;
	struct rt_priorities pr;
	struct require_spec r;
	char text[2048], err[64];
	const struct rt_tasks *lists[2] = {&found, &during};
	int n;

	for (int c = 0; c < MAX_CPUS; c++)
		pr.prio[c] = -1;
	pr.prio[1] = 80;
	n = rtscan(root, &pr, 4242, &found, RTSCAN_ALL);
	/* migration/1 (expected), "a) b" RR 90, dl DEADLINE; busy FIFO 50 is below 80, irq/24 is on cpu 0 */
	CHECK_EQ(n, 2);
	CHECK_EQ(found.n, 3);
	CHECK_EQ(found.t[0].pid, 7);
	CHECK(found.t[0].expected && strstr(found.t[0].expected, "per-CPU stopper"));
	CHECK_EQ(found.t[1].tid, 102);
	CHECK(strcmp(found.t[1].comm, "a) b") == 0 && found.t[1].priority == 90 && !found.t[1].expected);
	CHECK_EQ(found.t[2].priority, -1);
	rtscan_describe(&found.t[1], text, sizeof(text));
	CHECK(strcmp(text, "a) b (pid 100, tid 102, RR 90, cpu 1)") == 0);
	rtscan_describe(&found.t[2], text, sizeof(text));
	CHECK(strcmp(text, "dl (pid 300, DEADLINE, cpu 1)") == 0);
	rtscan_describe(&found.t[0], text, sizeof(text));
	CHECK(strcmp(text, "kernel thread migration/1 (pid 7, FIFO 99, cpu 1)") == 0);

	/* during: each competitor once, however many scans see it */
	rtscan(root, &pr, 4242, &during, RTSCAN_NEW_COMPETITORS);
	rtscan(root, &pr, 4242, &during, RTSCAN_NEW_COMPETITORS);
	CHECK_EQ(during.n, 2);
	CHECK_EQ(rtscan_competitors_text(lists, 2, "seen:", text, sizeof(text)), 2);
	CHECK(strcmp(text, "seen: a) b (pid 100, tid 102, RR 90, cpu 1), dl (pid 300, DEADLINE, cpu 1)") == 0);

	/* the sampler's own threads are expected, never competitors */
	CHECK_EQ(rtscan(root, &pr, 100, &found, RTSCAN_ALL), 1);
	CHECK(strcmp(found.t[1].expected, "the sampler's own thread") == 0);

	/* a non-RT sampler: every RT task on its CPUs competes, expected kernel threads aside */
	pr.prio[0] = 0;
	CHECK_EQ(rtscan(root, &pr, 4242, &found, RTSCAN_ALL), 3);
	CHECK_EQ(found.n, 5);

	memset(&r, 0, sizeof(r));
	CHECK(require_parse("no_competing_rt", &r, err, sizeof(err)) == 0);
	rep.n = 0;
	pr.prio[0] = -1;
	n = rtscan(root, &pr, 4242, &found, RTSCAN_ALL);
	require_judge_competing(&r, &found, n, &rep);
	CHECK(strcmp(reason("no_competing_rt"), "requires no competing real-time task on the measured CPUs; found "
						"a) b (pid 100, tid 102, RR 90, cpu 1), dl (pid 300, DEADLINE, cpu 1)") == 0);
}

/* A table full of expected kernel threads still keeps every competitor: one is never dropped for them. */
static void test_full_table(void)
{
	static struct rt_tasks found;
	struct rt_priorities pr;
	char name[32];

	for (int i = 0; i < RTSCAN_MAX + 8; i++) {
		snprintf(name, sizeof(name), "rcuc/%d", i);
		task(1000 + i, 1000 + i, name, 0x00200040, 1, SCHED_FIFO, "1");
	}
	task(5000, 5000, "late", 0x400000, 10, SCHED_FIFO, "1");
	for (int c = 0; c < MAX_CPUS; c++)
		pr.prio[c] = -1;
	pr.prio[1] = 1;
	CHECK_EQ(rtscan(root, &pr, 4242, &found, RTSCAN_ALL), 4); /* late, busy, "a) b" and dl */
	CHECK_EQ(found.n, RTSCAN_MAX);
	CHECK(found.overflow > 0);
	{
		int late = 0, competitors = 0;

		for (int i = 0; i < found.n; i++) {
			late |= found.t[i].pid == 5000;
			competitors += !found.t[i].expected;
			if (i)
				CHECK(found.t[i - 1].pid <= found.t[i].pid);
		}
		CHECK(late);
		CHECK_EQ(competitors, 4);
	}
}

static void test_record(void)
{
	static struct rt_tasks before, none;
	struct rt_priorities pr;
	struct params p;
	struct thread_result t[1];
	struct run_result r;
	char *buf = NULL, line[64];
	size_t len = 0;
	FILE *f;

	memset(&p, 0, sizeof(p));
	p.duration_s = 30;
	for (int c = 0; c < MAX_CPUS; c++)
		pr.prio[c] = -1;
	pr.prio[1] = 80;
	rtscan(root, &pr, 4242, &before, RTSCAN_ALL);
	CHECK(record_init("m.1") == 0);
	record_attach(&sys, &rep, &pr, 1, &before, &none, &none);
	record_expected_seconds(&p);
	record_invalid("a %s", "reason");
	record_invalid("another");
	record_stopped_by("SIGTERM");
	CHECK_EQ(record_invalid_reason(line, sizeof(line)), 2);
	CHECK(strcmp(line, "a reason; another") == 0);
	CHECK(record_not_measured_reason(NULL) == NULL);
	memset(&r, 0, sizeof(r));
	memset(t, 0, sizeof(t));
	t[0].cycles = 2999;
	t[0].missed = 1;
	r.nthreads = 1;
	r.t = t;
	r.complete = 1;
	r.reason = STOP_SIGNAL;
	r.elapsed_s = 2.5;
	f = open_memstream(&buf, &len);
	record_write_json(f, &r);
	fclose(f);
	CHECK_STR_HAS(buf, "\"format\": 2");
	CHECK_STR_HAS(buf, "\"measurement\": \"m.1\"");
	CHECK_STR_HAS(buf, "\"measured\": true,\n    \"not_measured\": null,\n    \"not_measured_status\": null,\n"
			   "    \"valid\": false");
	CHECK_STR_HAS(buf, "\"invalid\": [\"a reason\", \"another\"]");
	CHECK_STR_HAS(buf, "\"stopped_by\": \"SIGTERM\"");
	CHECK_STR_HAS(buf, "\"expected_seconds\": 30,");
	CHECK_STR_HAS(buf, "\"results\": {\"elapsed_s\": 2.500000, \"stop_reason\": \"signal\", \"cycles\": [2999], "
			   "\"missed\": [1]}");
	CHECK_STR_HAS(buf, "\"sampler_priority\": {\"1\": 80}");
	CHECK_STR_HAS(buf, "\"competing_matters\": true");
	CHECK_STR_HAS(buf, "{\"pid\": 100, \"tid\": 102, \"comm\": \"a) b\", \"policy\": \"RR\", \"priority\": 90, "
			   "\"cpus\": [0, 1], \"kernel\": false, \"on_cpus\": [1], \"expected\": null}");
	CHECK_STR_HAS(buf, "\"load\": {\"kind\": \"none\"}");
	free(buf);

	record_not_measured(GATE_INCONCLUSIVE, "stopped by %s", "SIGHUP");
	record_not_measured(GATE_ERROR, "a later reason");
	{
		int status = -1;
		const char *why = record_not_measured_reason(&status);
		CHECK(why && strcmp(why, "stopped by SIGHUP") == 0 && status == GATE_INCONCLUSIVE);
	}
	f = open_memstream(&buf, &len); /* the record says which status every gate then has */
	record_write_json(f, &r);
	fclose(f);
	CHECK_STR_HAS(buf, "\"measured\": false,\n    \"not_measured\": \"stopped by SIGHUP\",\n"
			   "    \"not_measured_status\": \"INCONCLUSIVE\",\n    \"valid\": false");
	free(buf);
}

static void test_escaping(void)
{
	char *buf = NULL, text[64];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	record_json_string(f, "q\"\\\x01\xff\xc3\xa9\xe2\x82");
	record_json_string(f, NULL);
	fclose(f);
	CHECK(strcmp(buf, "\"q\\\"\\\\\\u0001\\ufffd\xc3\xa9\\ufffd\\ufffd\"null") == 0);
	free(buf);
	snprintf(text, sizeof(text), "x\n<LAVA_SIGNAL_TESTCASE <LAVA_\x7f");
	record_console_escape(text);
	CHECK(strcmp(text, "x??LAVA_SIGNAL_TESTCASE ?LAVA_?") == 0);
	/* a usage error echoes the option's value: no LAVA signal there either */
	snprintf(text, sizeof(text), "--require=<LAVA_SIGNAL_X\n");
	options_escape(text, sizeof(text));
	CHECK(strcmp(text, "--require=?LAVA_SIGNAL_X\\n") == 0);
}

static void test_unjudged(void)
{
	struct gate_spec g;
	struct gate_verdict v;
	char err[128];

	CHECK(gate_parse("name=r,kind=miss_rate,above=50,rate=0.001", &g, err, sizeof(err)) == 0);
	gate_unjudged(&g, GATE_ERROR, "not measured: x", &v);
	CHECK(v.has_limit && v.limit == 0.001 && strcmp(v.thread, "all") == 0 && !v.has_value);
	CHECK(gate_parse("name=m,kind=missed,max_count=3", &g, err, sizeof(err)) == 0);
	gate_unjudged(&g, GATE_INCONCLUSIVE, "not measured: y", &v);
	CHECK(v.limit == 3.0 && v.status == GATE_INCONCLUSIVE && strcmp(v.reason, "not measured: y") == 0);
}

int main(void)
{
	char cmd[128];

	fixture();
	test_parse();
	test_judge();
	test_scan();
	test_record();
	test_escaping();
	test_unjudged();
	test_full_table();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", root);
	CHECK_DONE();
}
