// SPDX-License-Identifier: GPL-2.0-or-later
#include "sysprep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The kernel's isolated CPUs ("2-3,5" in ROOT/sys/devices/system/cpu/isolated; absent or empty: none). */
static void isolated_cpus(struct cpu_info *cpus, const char *root)
{
	char buf[4096], *tok, *save = NULL;
	FILE *f;

	snprintf(buf, sizeof(buf), "%s/sys/devices/system/cpu/isolated", root);
	f = fopen(buf, "re");

	if (!f)
		return;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t lo, hi;
		char *dash = strchr(tok, '-');

		if (dash)
			*dash = '\0';
		if (parse_u64(tok, 0, MAX_CPUS - 1, &lo))
			continue;
		if (!dash)
			hi = lo;
		else if (parse_u64(dash + 1, 0, MAX_CPUS - 1, &hi) || hi < lo)
			continue;
		for (uint64_t c = lo; c <= hi && (int)c < cpus->ncpus; c++)
			cpus->isolated[c] = 1;
	}
}

void sys_cpu_info(struct cpu_info *cpus)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_CONF);

	memset(cpus, 0, sizeof(*cpus));
	cpus->ncpus = n > MAX_CPUS ? MAX_CPUS : (int)n;
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		for (int i = 0; i < cpus->ncpus; i++)
			if (CPU_ISSET(i, &set)) {
				cpus->allowed[i] = 1;
				cpus->nallowed++;
			}
	}
	if (cpus->nallowed == 0) {
		for (int i = 0; i < cpus->ncpus; i++)
			cpus->allowed[i] = 1;
		cpus->nallowed = cpus->ncpus;
	}
	isolated_cpus(cpus, "");
}

void sys_cpu_info_at(struct cpu_info *cpus, const char *root, int ncpus)
{
	memset(cpus, 0, sizeof(*cpus));
	cpus->ncpus = ncpus > MAX_CPUS ? MAX_CPUS : ncpus;
	for (int i = 0; i < cpus->ncpus; i++)
		cpus->allowed[i] = 1;
	cpus->nallowed = cpus->ncpus;
	isolated_cpus(cpus, root);
}

void sys_facts(struct sys_facts *f)
{
	struct utsname u;
	FILE *fp;

	memset(f, 0, sizeof(*f));
	if (uname(&u) == 0) {
		snprintf(f->sysname, sizeof(f->sysname), "%s", u.sysname);
		snprintf(f->nodename, sizeof(f->nodename), "%s", u.nodename);
		snprintf(f->release, sizeof(f->release), "%s", u.release);
		snprintf(f->version, sizeof(f->version), "%s", u.version);
		snprintf(f->machine, sizeof(f->machine), "%s", u.machine);
	}
	fp = fopen("/sys/kernel/realtime", "r");
	if (fp) {
		if (fscanf(fp, "%d", &f->realtime) != 1)
			f->realtime = 0;
		fclose(fp);
	}
}

int sys_cpu_node(int cpu)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	int node = -1;

	if (cpu < 0)
		return -1;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", cpu);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "node", 4) == 0 && sscanf(e->d_name + 4, "%d", &node) == 1)
			break;
	closedir(d);
	return node;
}

int sys_set_dma_latency(int value)
{
	int32_t v = value;
	int fd = open("/dev/cpu_dma_latency", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (write(fd, &v, sizeof(v)) != (ssize_t)sizeof(v)) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd; /* the setting holds while the file stays open */
}

int sys_open_trace_marker(void)
{
	static const char *paths[] = {
		"/sys/kernel/tracing/trace_marker",
		"/sys/kernel/debug/tracing/trace_marker",
	};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		int fd = open(paths[i], O_WRONLY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

void sys_explain_sched_failure(char *buf, size_t len, int policy, int prio, int err)
{
	struct rlimit rl;
	char lim[32] = "unknown";

	if (getrlimit(RLIMIT_RTPRIO, &rl) == 0) {
		if (rl.rlim_cur == RLIM_INFINITY)
			snprintf(lim, sizeof(lim), "unlimited");
		else
			snprintf(lim, sizeof(lim), "%llu", (unsigned long long)rl.rlim_cur);
	}
	if (err == EPERM && (policy == SCHED_FIFO || policy == SCHED_RR))
		snprintf(buf, len, "%s (SCHED_%s priority %d needs root or CAP_SYS_NICE, "
			 "or RLIMIT_RTPRIO >= %d; RLIMIT_RTPRIO is %s)",
			 strerror(err), policy == SCHED_FIFO ? "FIFO" : "RR", prio, prio, lim);
	else if (err == EPERM)
		snprintf(buf, len, "%s (changing the scheduling policy needs root or CAP_SYS_NICE)",
			 strerror(err));
	else
		snprintf(buf, len, "%s", strerror(err));
}

void sys_explain_mlock_failure(char *buf, size_t len, int err)
{
	struct rlimit rl;
	char lim[32] = "unknown";

	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
		if (rl.rlim_cur == RLIM_INFINITY)
			snprintf(lim, sizeof(lim), "unlimited");
		else
			snprintf(lim, sizeof(lim), "%llu KiB", (unsigned long long)rl.rlim_cur / 1024);
	}
	snprintf(buf, len, "%s (-m needs root or CAP_IPC_LOCK, or a large enough RLIMIT_MEMLOCK; "
		 "RLIMIT_MEMLOCK is %s)", strerror(err), lim);
}
