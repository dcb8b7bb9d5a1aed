// SPDX-License-Identifier: GPL-2.0-or-later
/* The machine record on the fixture trees of tests/fixtures/systems (argv[1]): known answers,
 * composed with each tree (see its README), for every fact require.c asks and the preemption
 * model from each of its sources. */
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "check.h"
#include "sysinfo.h"

static struct sysinfo si;
static const char *systems;

#define CHECK_STR(a, b) do { \
	const char *a_ = (a), *b_ = (b); \
	if (!a_ || !b_ || strcmp(a_, b_)) { \
		fprintf(stderr, "%s:%d: %s is '%s', not '%s'\n", __FILE__, __LINE__, #a, a_ ? a_ : "(null)", \
			b_ ? b_ : "(null)"); \
		check_failures++; \
	} \
} while (0)

static void capture(const char *tree)
{
	char root[4096];

	snprintf(root, sizeof(root), "%s/%s", systems, tree);
	CHECK_EQ(sysinfo_capture(&si, root), 0);
}

/* The record as written, in a buffer the caller frees. */
static char *written(int indent)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	sysinfo_write_json(f, &si, indent);
	fclose(f);
	return buf;
}

static void test_rt_board(void)
{
	int cpus[8] = {0};

	capture("rt-arm64");
	CHECK_STR(sysinfo_preemption(&si), "PREEMPT_RT");
	CHECK_STR(sysinfo_preemption_source(&si), "/sys/kernel/realtime");
	CHECK_STR(sysinfo_release(&si), "6.6.52-rt43-imx8mp");
	CHECK(sysinfo_architecture(&si) == NULL); /* a fixture root says nothing of this machine */
	CHECK_EQ(sysinfo_cpu_count(&si), 4);
	CHECK_EQ(sysinfo_isolcpus(&si, cpus, 8), 2);
	CHECK_EQ(cpus[0], 2);
	CHECK_EQ(cpus[1], 3);
	CHECK_EQ(sysinfo_online(&si, cpus, 8), 4);
	CHECK_EQ(cpus[3], 3);
	CHECK(sysinfo_has_governors(&si));
	CHECK_STR(sysinfo_governor(&si, 2), "performance");
	CHECK(sysinfo_governor(&si, 7) == NULL);
	CHECK(sysinfo_virtualisation(&si) == NULL);
	long runtime = 0;
	CHECK_EQ(sysinfo_rt_runtime(&si, &runtime), 1);
	CHECK_EQ(runtime, -1);
	CHECK(sysinfo_compatible(&si, "fsl,imx8mp"));
	CHECK(sysinfo_compatible(&si, "fsl,imx8mp-evk"));
	CHECK(!sysinfo_compatible(&si, "fsl,imx8"));
	CHECK_STR(sysinfo_dt_model(&si), "NXP i.MX8MPlus EVK board");
	CHECK(sysinfo_dmi_product(&si) == NULL);
}

static void test_vm_booted_voluntary(void)
{
	capture("nonrt-x86-vm");
	CHECK_STR(sysinfo_preemption(&si), "VOLUNTARY");
	CHECK_STR(sysinfo_preemption_source(&si), "preempt= on the kernel command line (PREEMPT_DYNAMIC)");
	CHECK_STR(sysinfo_virtualisation(&si), "QEMU");
	CHECK_EQ(sysinfo_isolcpus(&si, NULL, 0), 0);
	long runtime = 0;
	CHECK_EQ(sysinfo_rt_runtime(&si, &runtime), 1);
	CHECK_EQ(runtime, 950000);
	CHECK_STR(sysinfo_governor(&si, 1), "schedutil");
}

/* The case the board got wrong: uname says PREEMPT_DYNAMIC, the config's boot default is
 * voluntary, the command line says none. */
static void test_dynamic_booted_none(void)
{
	int cpus[8] = {0};

	capture("dynamic-none-x86");
	CHECK_STR(sysinfo_preemption(&si), "NONE");
	CHECK_STR(sysinfo_preemption_source(&si), "preempt= on the kernel command line (PREEMPT_DYNAMIC)");
	CHECK_EQ(sysinfo_isolcpus(&si, cpus, 8), 4); /* managed_irq,domain,1-3,5 */
	CHECK_EQ(cpus[0], 1);
	CHECK_EQ(cpus[3], 5);
	CHECK_EQ(sysinfo_isolcpus(&si, cpus, 2), 4); /* the count, whatever fits */
	CHECK_EQ(sysinfo_online(&si, NULL, 0), 6);
	CHECK_EQ(sysinfo_cpu_count(&si), 6);
	CHECK_STR(sysinfo_governor(&si, 3), "powersave");
	CHECK_STR(sysinfo_governor(&si, 5), "performance");
	CHECK_STR(sysinfo_dmi_product(&si), "PowerEdge R650");
	CHECK(sysinfo_virtualisation(&si) == NULL);
	CHECK(!sysinfo_compatible(&si, "PowerEdge R650"));
	CHECK_EQ(sysinfo_compatibles(&si, NULL, 0), 0);
	CHECK_EQ(sysinfo_governor_cpus(&si, cpus, 8), 6);
	CHECK_EQ(cpus[5], 5);
	char *json = written(0);
	CHECK_STR_HAS(json, "\"loadavg\": [\n    0.5,\n    1.25,\n    2.0\n  ]");
	CHECK_STR_HAS(json, "\"cpu_model\": \"Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\"");
	free(json);
}

/* QEMU's arm64 virt machine: no DMI, no cpuinfo flag; its devicetree says it is a guest. */
static void test_arm64_guest(void)
{
	capture("qemu-virt-arm64");
	CHECK_STR(sysinfo_virtualisation(&si), "QEMU (devicetree linux,dummy-virt)");
	CHECK_STR(sysinfo_preemption(&si), "PREEMPT_RT");
	CHECK(sysinfo_compatible(&si, "linux,dummy-virt"));
}

/* No /boot config: the model comes from /proc/config.gz, read through gzip -dc. */
static void test_config_gz_only(void)
{
	capture("configgz-arm64");
	CHECK_STR(sysinfo_preemption(&si), "PREEMPT");
	CHECK_STR(sysinfo_preemption_source(&si), "kernel config");
	CHECK(!sysinfo_has_governors(&si));
	CHECK(sysinfo_governor(&si, 0) == NULL);
	CHECK(sysinfo_compatible(&si, "brcm,bcm2711"));
	CHECK_STR(sysinfo_dt_model(&si), "Raspberry Pi 4 Model B Rev 1.4");
	long runtime = 7;
	CHECK_EQ(sysinfo_rt_runtime(&si, &runtime), 0);
	CHECK_EQ(runtime, 7);
	char *json = written(0);
	CHECK_STR_HAS(json, "\"cpu_model\": \"BCM2835\""); /* the first of model name, Model, Hardware */
	free(json);
}

/* Without gzip the config cannot be read, and is not guessed at; busybox's zcat alone reads it. */
static void test_config_gz_tools(void)
{
	char dir[] = "/tmp/rtgate-sysinfo-XXXXXX", link[256];
	char *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;

	CHECK(mkdtemp(dir) != NULL);
	setenv("PATH", dir, 1); /* an empty folder: no gzip, no zcat */
	capture("configgz-arm64");
	CHECK_STR(sysinfo_preemption(&si), "unknown");
	CHECK_STR(sysinfo_preemption_source(&si), "no source");
	snprintf(link, sizeof(link), "%s/zcat", dir);
	if (access("/usr/bin/busybox", X_OK) == 0 && symlink("/usr/bin/busybox", link) == 0) {
		capture("configgz-arm64");
		CHECK_STR(sysinfo_preemption(&si), "PREEMPT");
		CHECK_STR(sysinfo_preemption_source(&si), "kernel config");
		unlink(link);
	} else {
		fprintf(stderr, "test_config_gz_tools: no /usr/bin/busybox, zcat fallback not tried\n");
	}
	rmdir(dir);
	if (path)
		setenv("PATH", path, 1);
	else
		unsetenv("PATH");
	free(path);
}

/* Python's reading of odd text, and what may reach a console: never "<LAVA_", nor a control
 * character, nor a byte that is not ASCII. */
static void test_odd_text(void)
{
	int cpus[8] = {0};

	capture("odd-text");
	CHECK_STR(sysinfo_release(&si), "6.9.0-odd");
	CHECK_STR(sysinfo_preemption(&si), "PREEMPT");
	CHECK_STR(sysinfo_preemption_source(&si), "kernel version");
	CHECK_EQ(sysinfo_isolcpus(&si, cpus, 8), 3); /* the last isolcpus= given: 4,6-7 */
	CHECK_EQ(cpus[0], 4);
	CHECK_EQ(cpus[2], 7);
	CHECK_EQ(sysinfo_online(&si, cpus, 8), 3);
	CHECK_EQ(cpus[2], 10);
	CHECK_STR(sysinfo_governor(&si, 10), "performance");
	CHECK_EQ(sysinfo_governor_cpus(&si, cpus, 8), 3);
	CHECK_EQ(cpus[0], 0);
	CHECK_EQ(cpus[1], 1);
	CHECK_EQ(cpus[2], 10);
	CHECK_EQ(sysinfo_governor_cpus(&si, cpus, 2), 3);
	CHECK_EQ(cpus[1], 1);
	CHECK_STR(sysinfo_virtualisation(&si), "hypervisor (cpuinfo flag)");
	long runtime = 0;
	CHECK_EQ(sysinfo_rt_runtime(&si, &runtime), 0); /* "+5" is no -?\d+ */
	CHECK(sysinfo_compatible(&si, "other"));
	CHECK(!sysinfo_compatible(&si, ""));
	const char *compat[4] = {0};
	CHECK_EQ(sysinfo_compatibles(&si, compat, 4), 2); /* the empty string between two NULs is none */
	CHECK_STR(compat[0], "vendor,board");
	CHECK_STR(compat[1], "other");
	char *json = written(0);
	CHECK(!strstr(json, "<LAVA_"));
	CHECK_STR_HAS(json, "\\u003cLAVA_SIGNAL_TESTCASE");
	CHECK_STR_HAS(json, "label=\\ufffd\\ufffd\\ufffd ctl=\\u0001 ");
	for (const unsigned char *p = (const unsigned char *)json; *p; p++)
		CHECK(*p == '\n' || (*p >= 0x20 && *p < 0x7f));
	CHECK_STR_HAS(json, "\"loadavg\": [\n    0.0,\n    1000.0,\n    7.0\n  ]");
	CHECK_STR_HAS(json, "\"cpu_model\": \"flags\\t\\t: fpu hypervisor_x vme\"");
	CHECK_STR_HAS(json, "\"8\": {\n          \"cpus\": [0, 1],\n          \"name\": \"0\"");
	CHECK_STR_HAS(json, "\"11\": {\n          \"cpus\": [0, 1],\n          \"name\": null");
	CHECK_STR_HAS(json, "\"transparent_hugepage\": \"madvise\"");
	CHECK_STR_HAS(json, "\"comm\": \"x) R (y\"");
	CHECK(!strstr(json, "irq/9-")); /* its stat is not UTF-8: Python skips it */
	free(json);
	json = written(2); /* opened at column 2: everything two spaces further in */
	CHECK_STR_HAS(json, "\n          \"8\": {\n            \"cpus\": [0, 1],\n");
	CHECK_STR_HAS(json, "\n  }");
	free(json);
	json = written(-1);
	CHECK(!strchr(json, '\n'));
	CHECK_STR_HAS(json, "\"isolation\": {\"isolcpus\": {\"value\": \"4,6-7\", \"cpus\": [4, 6, 7]}, ");
	free(json);
}

static void test_missing_root(void)
{
	char *json;

	CHECK_EQ(sysinfo_capture(&si, "/nonexistent/rtgate-root"), 0);
	CHECK_STR(sysinfo_preemption(&si), "unknown");
	CHECK_STR(sysinfo_preemption_source(&si), "no source");
	CHECK(sysinfo_release(&si) == NULL);
	CHECK_EQ(sysinfo_cpu_count(&si), 0);
	CHECK_EQ(sysinfo_online(&si, NULL, 0), -1);
	json = written(0);
	CHECK_STR_HAS(json, "\"rt_kernel_threads\": \"/proc: no process entries\"");
	CHECK_STR_HAS(json, "\"root\": \"/nonexistent/rtgate-root\"");
	free(json);
	/* the root as str(Path(root)) writes it: "." parts and trailing slashes go */
	CHECK_EQ(sysinfo_capture(&si, "/nonexistent/./rtgate-root//"), 0);
	json = written(0);
	CHECK_STR_HAS(json, "\"root\": \"/nonexistent/rtgate-root\"");
	free(json);
	CHECK_EQ(sysinfo_capture(&si, "///"), 0);
	CHECK(si.live);
	CHECK_EQ(sysinfo_capture(&si, "//"), 0); /* POSIX keeps two leading slashes apart, and so does Python */
	CHECK(!si.live);
	CHECK_EQ(sysinfo_capture(&si, ""), -1);
	CHECK_EQ(sysinfo_capture(&si, NULL), -1);
}

/* A CPU list no kernel writes: cut at 8192 CPUs, and the record says so. */
static void test_absurd_cpu_list(void)
{
	char dir[] = "/tmp/rtgate-sysinfo-XXXXXX", path[256];
	FILE *f;
	char *json;
	int cpus[4];

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/proc", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/proc/cmdline", dir);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "isolcpus=5,0-4000000000,7\n");
		fclose(f);
	}
	CHECK_EQ(sysinfo_capture(&si, dir), 0);
	CHECK_EQ(sysinfo_isolcpus(&si, cpus, 4), 8192);
	CHECK_EQ(cpus[0], 5);
	CHECK_EQ(cpus[1], 0);
	CHECK(si.truncated);
	json = written(-1);
	CHECK_STR_HAS(json, "8189, 8190]}}");
	CHECK_STR_HAS(json, "\"record\": \"cut short:");
	free(json);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc", dir);
	rmdir(path);
	rmdir(dir);
}

/* More than the fixed storage holds: cut short, said in machine.unknown, still JSON. */
static void test_truncated(void)
{
	char dir[] = "/tmp/rtgate-sysinfo-XXXXXX", path[256];
	FILE *f;
	char *json;
	int depth = 0, in_string = 0;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/proc", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/proc/modules", dir);
	f = fopen(path, "w");
	for (int i = 0; f && i < SYSINFO_NODES + 10; i++)
		fprintf(f, "module_%06d 16384 0 - Live 0x0\n", i);
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/proc/device-tree", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/proc/device-tree/compatible", dir);
	f = fopen(path, "w");
	if (f) {
		fwrite("acme,board\0", 1, 11, f);
		fclose(f);
	}
	CHECK_EQ(sysinfo_capture(&si, dir), 0);
	CHECK(si.truncated);
	CHECK(sysinfo_compatible(&si, "acme,board")); /* the machine's identity is read before the lists */
	json = written(0);
	CHECK_STR_HAS(json, "\"record\": \"cut short:");
	CHECK_STR_HAS(json, "\"dt_compatible\": [\n        \"acme,board\"\n      ]");
	for (const char *p = json; *p; p++) { /* balanced outside strings */
		if (*p == '"' && p[-1] != '\\')
			in_string = !in_string;
		else if (!in_string)
			depth += (*p == '{' || *p == '[') - (*p == '}' || *p == ']');
	}
	CHECK_EQ(depth, 0);
	free(json);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc/device-tree", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/proc/modules", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc", dir);
	rmdir(path);
	rmdir(dir);
}

static void test_live(void)
{
	struct utsname u;
	double avg[3];
	char *json;

	CHECK_EQ(sysinfo_capture(&si, "/"), 0);
	CHECK(si.live);
	CHECK(uname(&u) == 0);
	CHECK_STR(sysinfo_architecture(&si), u.machine);
	CHECK_STR(sysinfo_release(&si), u.release);
	json = written(0);
	char euid[64];
	snprintf(euid, sizeof(euid), "\"euid\": %u\n", (unsigned)geteuid());
	CHECK_STR_HAS(json, euid);
	CHECK_STR_HAS(json, "\"root\": null");
	free(json);
	CHECK_EQ(sysinfo_loadavg("/", avg), 0);
	CHECK(avg[0] >= 0);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s FIXTURES/systems\n", argv[0]);
		return 2;
	}
	systems = argv[1];
	test_rt_board();
	test_vm_booted_voluntary();
	test_dynamic_booted_none();
	test_arm64_guest();
	test_config_gz_only();
	test_config_gz_tools();
	test_odd_text();
	test_missing_root();
	test_truncated();
	test_absurd_cpu_list();
	test_live();
	CHECK_DONE();
}
