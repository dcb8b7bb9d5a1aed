// SPDX-License-Identifier: GPL-2.0-or-later
/* STAND-IN for E-sys's sysinfo.c: the facts require.c needs, read as environment.py reads them. */
#include "sysinfo.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *base;

/* The file's text, whitespace-trimmed at both ends (as Python's .strip()); -1 when unreadable. */
static long read_text(const char *rel, char *buf, size_t len)
{
	char path[4096];
	FILE *f;
	size_t n, start = 0;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	f = fopen(path, "rb");
	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	while (buf[start] && isspace((unsigned char)buf[start]))
		start++;
	memmove(buf, buf + start, n - start + 1);
	return (long)(n - start);
}

/* "0-2,5" -> cpus (isolcpus flags such as "managed_irq" skipped, as machine.parse_cpulist). */
static int cpulist(const char *text, int *out, int max)
{
	int n = 0;
	char buf[1024], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", text);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long lo, hi;

		while (isspace((unsigned char)*tok))
			tok++;
		if (!isdigit((unsigned char)*tok))
			continue;
		lo = hi = strtol(tok, &end, 10);
		if (*end == '-' && isdigit((unsigned char)end[1]))
			hi = strtol(end + 1, &end, 10);
		while (isspace((unsigned char)*end))
			end++;
		if (*end)
			continue;
		for (long c = lo; c <= hi && n < max; c++)
			out[n++] = (int)c;
	}
	return n;
}

/* /proc/config.gz through `gzip -dc` (no zlib in a static binary), before anything is measured. */
static long gunzip(const char *rel, char *buf, size_t len)
{
	char path[4096];
	int in, fds[2];
	size_t n = 0;
	ssize_t got;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0 || pipe(fds)) {
		if (in >= 0)
			close(in);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		dup2(in, 0);
		dup2(fds[1], 1);
		execlp("gzip", "gzip", "-dc", (char *)NULL);
		_exit(127);
	}
	close(in);
	close(fds[1]);
	while (pid > 0 && n < len - 1 && (got = read(fds[0], buf + n, len - 1 - n)) > 0)
		n += (size_t)got;
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	buf[n] = '\0';
	return pid > 0 ? (long)n : -1;
}

static void model(struct sysinfo *s, const char *version, const char *cmdline, const char *config);

static void preemption(struct sysinfo *s, const char *version, const char *cmdline)
{
	const size_t big = 1 << 20;
	char *config = calloc(1, big), rel[512];

	snprintf(s->preemption, sizeof(s->preemption), "unknown");
	snprintf(s->source, sizeof(s->source), "no source");
	if (!config)
		return;
	snprintf(rel, sizeof(rel), "boot/config-%s", s->release);
	if (read_text(rel, config + 1, big - 1) < 0 && gunzip("proc/config.gz", config + 1, big - 1) < 0)
		config[1] = '\0';
	config[0] = '\n'; /* every option then starts a line: "\nCONFIG_..." */
	model(s, version, cmdline, config);
	free(config);
}

static void model(struct sysinfo *s, const char *version, const char *cmdline, const char *config)
{
	const char *boot;
	char dyn[256];
	int dynamic;

	if (read_text("sys/kernel/realtime", dyn, sizeof(dyn)) >= 0 && strcmp(dyn, "1") == 0) {
		snprintf(s->preemption, sizeof(s->preemption), "PREEMPT_RT");
		snprintf(s->source, sizeof(s->source), "/sys/kernel/realtime");
		return;
	}
	if (strstr(config, "\nCONFIG_PREEMPT_RT=y")) {
		snprintf(s->preemption, sizeof(s->preemption), "PREEMPT_RT");
		snprintf(s->source, sizeof(s->source), "kernel config");
		return;
	}
	if (strstr(version, "PREEMPT_RT")) {
		snprintf(s->preemption, sizeof(s->preemption), "PREEMPT_RT");
		snprintf(s->source, sizeof(s->source), "kernel version");
		return;
	}
	if (read_text("sys/kernel/debug/sched/preempt", dyn, sizeof(dyn)) > 0) {
		const char *open = strstr(dyn, "(full)") ? "PREEMPT" : strstr(dyn, "(voluntary)") ? "VOLUNTARY"
						  : strstr(dyn, "(none)") ? "NONE" : NULL;
		if (open) {
			snprintf(s->preemption, sizeof(s->preemption), "%s", open);
			snprintf(s->source, sizeof(s->source), "/sys/kernel/debug/sched/preempt");
			return;
		}
	}
	dynamic = strstr(config, "\nCONFIG_PREEMPT_DYNAMIC=y") != NULL;
	boot = strstr(cmdline, "preempt=");
	if (boot && (boot == cmdline || isspace((unsigned char)boot[-1])) &&
	    (dynamic || strstr(version, "PREEMPT_DYNAMIC"))) {
		const char *v = boot + 8;
		const char *m = strncmp(v, "none", 4) == 0 ? "NONE" : strncmp(v, "voluntary", 9) == 0 ? "VOLUNTARY"
				: strncmp(v, "full", 4) == 0 ? "PREEMPT" : NULL;
		if (m) {
			snprintf(s->preemption, sizeof(s->preemption), "%s", m);
			snprintf(s->source, sizeof(s->source), "preempt= on the kernel command line (PREEMPT_DYNAMIC)");
			return;
		}
	}
	if (strstr(config, "\nCONFIG_PREEMPT=y") || strstr(config, "\nCONFIG_PREEMPT_VOLUNTARY=y") ||
	    strstr(config, "\nCONFIG_PREEMPT_NONE=y")) {
		snprintf(s->preemption, sizeof(s->preemption), "%s",
			 strstr(config, "\nCONFIG_PREEMPT=y") ? "PREEMPT"
			 : strstr(config, "\nCONFIG_PREEMPT_VOLUNTARY=y") ? "VOLUNTARY" : "NONE");
		snprintf(s->source, sizeof(s->source), "kernel config%s",
			 dynamic ? " (PREEMPT_DYNAMIC boot default)" : "");
		return;
	}
	if (strstr(version, " PREEMPT ") || strstr(version, "PREEMPT_DYNAMIC")) {
		snprintf(s->preemption, sizeof(s->preemption), "PREEMPT");
		snprintf(s->source, sizeof(s->source), "%s", strstr(version, "DYNAMIC")
			 ? "kernel version (PREEMPT_DYNAMIC: mode unknown)" : "kernel version");
	}
}

static void virtualisation(struct sysinfo *s)
{
	static const char *const rels[] = {"sys/hypervisor/type", "sys/class/dmi/id/sys_vendor",
					   "sys/class/dmi/id/product_name"};
	static const char *const vendors[] = {"QEMU", "KVM", "VMware", "Microsoft", "Xen", "innotek",
					      "Amazon EC2", "Google"};
	const size_t big = 1 << 20;
	char *cpuinfo, text[SYSINFO_TEXT];

	for (size_t r = 0; r < 3 && !s->virtualisation[0]; r++) {
		if (read_text(rels[r], text, sizeof(text)) < 0)
			continue;
		for (size_t v = 0; v < 8 && !s->virtualisation[0]; v++)
			if (strcasestr(text, vendors[v]))
				snprintf(s->virtualisation, sizeof(s->virtualisation), "%s", vendors[v]);
	}
	cpuinfo = malloc(big);
	if (!cpuinfo || read_text("proc/cpuinfo", cpuinfo, big) < 0) {
		free(cpuinfo);
		return;
	}
	for (char *line = cpuinfo; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, "processor", 9) == 0 && strchr(line, ':') && (!strchr(line, '\n') ||
		    strchr(line, ':') < strchr(line, '\n')))
			s->cpu_count++;
		if (strncmp(line, "flags", 5) == 0 && !s->virtualisation[0]) {
			char *end = strchr(line, '\n');
			char keep = end ? *end : 0;

			if (end)
				*end = '\0';
			if (strstr(line, " hypervisor"))
				snprintf(s->virtualisation, sizeof(s->virtualisation), "hypervisor (cpuinfo flag)");
			if (end)
				*end = keep;
		}
	}
	free(cpuinfo);
}

int sysinfo_capture(struct sysinfo *s, const char *root)
{
	char version[1024], cmdline[4096], text[4096], rel[512];
	struct utsname u;
	DIR *d;

	if (!root || !root[0])
		return -1;
	memset(s, 0, sizeof(*s));
	base = strcmp(root, "/") == 0 ? "" : root;
	s->live = !base[0];
	if (read_text("proc/sys/kernel/osrelease", s->release, sizeof(s->release)) < 0)
		s->release[0] = '\0';
	if (read_text("proc/sys/kernel/version", version, sizeof(version)) < 0)
		version[0] = '\0';
	if (read_text("proc/cmdline", cmdline, sizeof(cmdline)) < 0)
		cmdline[0] = '\0';
	preemption(s, version, cmdline);
	for (char *w = cmdline; (w = strstr(w, "isolcpus=")) != NULL; w += 9)
		if (w == cmdline || isspace((unsigned char)w[-1])) {
			char list[1024];
			snprintf(list, sizeof(list), "%.*s", (int)strcspn(w + 9, " \t\n"), w + 9);
			s->nisol = cpulist(list, s->isolcpus, SYSINFO_CPUS);
		}
	if (read_text("sys/devices/system/cpu/online", text, sizeof(text)) >= 0)
		s->nonline = cpulist(text, s->online, SYSINFO_CPUS);
	else
		s->nonline = -1;
	snprintf(text, sizeof(text), "%s/sys/devices/system/cpu", base);
	d = opendir(text);
	for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
		char *end;
		long cpu;

		if (strncmp(e->d_name, "cpu", 3) || !isdigit((unsigned char)e->d_name[3]))
			continue;
		cpu = strtol(e->d_name + 3, &end, 10);
		if (*end || cpu >= SYSINFO_CPUS)
			continue;
		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/%s/cpufreq/scaling_governor", e->d_name);
		if (read_text(rel, s->governor[cpu], sizeof(s->governor[cpu])) < 0)
			s->governor[cpu][0] = '\0';
	}
	if (d)
		closedir(d);
	if (read_text("proc/sys/kernel/sched_rt_runtime_us", text, sizeof(text)) > 0) {
		char *end;
		s->rt_runtime = strtol(text, &end, 10);
		s->has_runtime = !*end && (isdigit((unsigned char)text[0]) || text[0] == '-');
	}
	virtualisation(s);
	if (s->live && uname(&u) == 0)
		snprintf(s->architecture, sizeof(s->architecture), "%s", u.machine);
	if (read_text("sys/class/dmi/id/product_name", s->dmi_product, sizeof(s->dmi_product)) < 0)
		s->dmi_product[0] = '\0';
	for (int i = 0; i < 2 && !s->ncompatible; i++) {
		const char *dir = i ? "sys/firmware/devicetree/base" : "proc/device-tree";
		char raw[4096], path[4096 + 64];
		FILE *f;
		size_t n;

		snprintf(path, sizeof(path), "%s/%s/compatible", base, dir);
		f = fopen(path, "rb");
		if (!f)
			continue;
		n = fread(raw, 1, sizeof(raw) - 1, f);
		fclose(f);
		raw[n] = '\0';
		for (size_t at = 0; at < n && s->ncompatible < SYSINFO_COMPATIBLE; at += strlen(raw + at) + 1)
			if (raw[at])
				snprintf(s->compatible[s->ncompatible++], SYSINFO_TEXT, "%s", raw + at);
		snprintf(rel, sizeof(rel), "%s/model", dir);
		if (read_text(rel, s->dt_model, sizeof(s->dt_model)) < 0)
			s->dt_model[0] = '\0';
		break;
	}
	return 0;
}

static void json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void sysinfo_write_json(FILE *f, const struct sysinfo *s, int indent)
{
	(void)indent;
	fputs("{\"kernel_release\": ", f);
	json_str(f, sysinfo_release(s));
	fputs(", \"preemption\": ", f);
	json_str(f, s->preemption);
	fputs(", \"preemption_source\": ", f);
	json_str(f, s->source);
	fputs(", \"stand_in\": true}", f);
}

const char *sysinfo_preemption(const struct sysinfo *s) { return s->preemption; }
const char *sysinfo_preemption_source(const struct sysinfo *s) { return s->source; }
const char *sysinfo_release(const struct sysinfo *s) { return s->release[0] ? s->release : NULL; }
const char *sysinfo_architecture(const struct sysinfo *s) { return s->architecture[0] ? s->architecture : NULL; }
int sysinfo_cpu_count(const struct sysinfo *s) { return s->cpu_count; }

int sysinfo_isolcpus(const struct sysinfo *s, int *cpus, int max)
{
	for (int i = 0; i < s->nisol && i < max; i++)
		cpus[i] = s->isolcpus[i];
	return s->nisol;
}

int sysinfo_online(const struct sysinfo *s, int *cpus, int max)
{
	for (int i = 0; i < s->nonline && i < max; i++)
		cpus[i] = s->online[i];
	return s->nonline;
}

const char *sysinfo_governor(const struct sysinfo *s, int cpu)
{
	return cpu >= 0 && cpu < SYSINFO_CPUS && s->governor[cpu][0] ? s->governor[cpu] : NULL;
}

int sysinfo_has_governors(const struct sysinfo *s)
{
	for (int i = 0; i < SYSINFO_CPUS; i++)
		if (s->governor[i][0])
			return 1;
	return 0;
}

const char *sysinfo_virtualisation(const struct sysinfo *s) { return s->virtualisation[0] ? s->virtualisation : NULL; }

int sysinfo_rt_runtime(const struct sysinfo *s, long *out)
{
	if (s->has_runtime)
		*out = s->rt_runtime;
	return s->has_runtime;
}

int sysinfo_compatible(const struct sysinfo *s, const char *value)
{
	for (int i = 0; i < s->ncompatible; i++)
		if (strcmp(s->compatible[i], value) == 0)
			return 1;
	return 0;
}

int sysinfo_compatibles(const struct sysinfo *s, const char **out, int max)
{
	for (int i = 0; i < s->ncompatible && i < max; i++)
		out[i] = s->compatible[i];
	return s->ncompatible;
}

int sysinfo_governor_cpus(const struct sysinfo *s, int *cpus, int max)
{
	int n = 0;

	for (int c = 0; c < SYSINFO_CPUS; c++)
		if (s->governor[c][0]) {
			if (n < max)
				cpus[n] = c;
			n++;
		}
	return n;
}

const char *sysinfo_dmi_product(const struct sysinfo *s) { return s->dmi_product[0] ? s->dmi_product : NULL; }
const char *sysinfo_dt_model(const struct sysinfo *s) { return s->dt_model[0] ? s->dt_model : NULL; }
