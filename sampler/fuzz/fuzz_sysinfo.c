// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target: the system record over a tree of arbitrary file contents. Input: the contents of
 * the files below, in this order, separated by a line "#". The record must come out as one ASCII JSON
 * value, balanced, with no "<LAVA_" in it, whatever the files hold. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sysinfo.h"

static const char *const files[] = {
	"proc/sys/kernel/osrelease", "proc/sys/kernel/version", "proc/cmdline", "proc/cpuinfo",
	"boot/config-fuzz", "sys/kernel/debug/sched/preempt", "proc/interrupts", "proc/meminfo",
	"proc/modules", "proc/7/stat", "proc/7/comm", "proc/loadavg", "sys/devices/system/cpu/online",
	"sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "sys/kernel/mm/transparent_hugepage/enabled",
	"sys/firmware/devicetree/base/compatible", "proc/sys/kernel/sched_rt_runtime_us",
	"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "proc/irq/3/smp_affinity_list",
};
#define NFILES (sizeof(files) / sizeof(files[0]))

static char root[64];
static struct sysinfo si;

static void mkdirs(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		mkdir(path, 0700);
		*p = '/';
	}
}

/* Each input changes a file or two of the last one's: only those are written again. */
static struct { uint8_t data[4096]; size_t n; int valid; } last[NFILES];

static void put(size_t i, const uint8_t *data, size_t n)
{
	const char *rel = files[i];
	char path[512];
	FILE *f;

	if (last[i].valid && last[i].n == n && !memcmp(last[i].data, data, n))
		return;
	last[i].valid = n <= sizeof(last[i].data);
	if (last[i].valid) {
		memcpy(last[i].data, data, n);
		last[i].n = n;
	}

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "wb");
	if (!f)
		abort();
	if (n && fwrite(data, 1, n, f) != n)
		abort();
	fclose(f);
}

/* The tree goes when the fuzzer exits: files, then their folders, deepest first. */
static void cleanup(void)
{
	char path[512];

	for (size_t i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/%s", root, files[i]);
		unlink(path);
	}
	for (int pass = 0; pass < 8; pass++)
		for (size_t i = 0; i < NFILES; i++) {
			snprintf(path, sizeof(path), "%s/%s", root, files[i]);
			for (char *slash; (slash = strrchr(path, '/')) && slash > path + strlen(root);) {
				*slash = 0;
				rmdir(path);
			}
		}
	rmdir(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	char *out = NULL;
	size_t len = 0;
	int depth = 0, in_string = 0;
	FILE *f;

	if (!root[0]) {
		/* tmpfs when there is one: each input rewrites the tree */
		snprintf(root, sizeof(root), "/dev/shm/rtgate-fuzz-sysinfo-%d", (int)getpid());
		if (mkdir(root, 0700)) {
			snprintf(root, sizeof(root), "/tmp/rtgate-fuzz-sysinfo-%d", (int)getpid());
			mkdir(root, 0700);
		}
		for (size_t i = 0; i < NFILES; i++)
			mkdirs(files[i]);
		atexit(cleanup);
	}
	for (size_t i = 0; i < NFILES; i++) {
		const uint8_t *sep = p;

		while (sep + 2 < end && !(sep[0] == '\n' && sep[1] == '#' && sep[2] == '\n'))
			sep++;
		if (sep + 2 >= end)
			sep = end;
		put(i, p, (size_t)(sep - p));
		p = sep == end ? end : sep + 3;
	}
	if (sysinfo_capture(&si, root))
		abort();
	f = open_memstream(&out, &len);
	if (!f)
		return 0;
	sysinfo_write_json(f, &si, 0);
	fclose(f);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)out[i];

		if ((c < 0x20 && c != '\n') || c >= 0x7f || c == '<')
			abort(); /* ASCII only, '<' always escaped */
		if (c == '\\' && in_string)
			i++; /* the escaped character */
		else if (c == '"')
			in_string = !in_string;
		else if (!in_string)
			depth += (c == '{' || c == '[') - (c == '}' || c == ']');
	}
	if (depth || in_string || strstr(out, "<LAVA_"))
		abort();
	free(out);
	return 0;
}
