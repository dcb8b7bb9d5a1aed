// SPDX-License-Identifier: GPL-2.0-or-later
#include "rtscan.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record.h"

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif
#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif
#define PF_KTHREAD 0x00200000UL

static int is_rt_policy(int policy)
{
	return policy == SCHED_FIFO || policy == SCHED_RR || policy == SCHED_DEADLINE;
}

const char *rtscan_policy_name(int policy)
{
	return policy == SCHED_FIFO ? "FIFO" : policy == SCHED_RR ? "RR" : "DEADLINE";
}

static int params_priority(const struct params *p, int i)
{
	if (p->policy != SCHED_FIFO && p->policy != SCHED_RR)
		return 0;
	return p->thread_prio[i] >= 0 ? p->thread_prio[i] : p->priority - (p->priospread ? i : 0);
}

void rtscan_priorities(const struct params *p, const struct cpu_info *allowed, struct rt_priorities *out)
{
	for (int c = 0; c < MAX_CPUS; c++)
		out->prio[c] = -1;
	for (int i = 0; i < p->num_threads; i++) {
		int prio = params_priority(p, i);

		for (int c = 0; c < MAX_CPUS && c < allowed->ncpus; c++) {
			if (p->thread_cpu[i] >= 0 ? c != p->thread_cpu[i] : !allowed->allowed[c])
				continue;
			if (out->prio[c] < 0 || prio < out->prio[c])
				out->prio[c] = prio;
		}
	}
}

/* Whole name "PREFIX/DIGITS" for one of the prefixes (a '|'-separated list). */
static int prefix_digits(const char *comm, const char *prefixes)
{
	for (const char *p = prefixes; *p;) {
		size_t n = strcspn(p, "|");
		const char *d = comm + n;

		if (strncmp(comm, p, n) == 0 && *d == '/' && isdigit((unsigned char)d[1])) {
			for (d++; isdigit((unsigned char)*d); d++)
				;
			if (!*d)
				return 1;
		}
		p += n + (p[n] == '|');
	}
	return 0;
}

static int timerlat_measures, rtla_pid;

void rtscan_timerlat_measures(int pid)
{
	timerlat_measures = 1;
	rtla_pid = pid;
}

/* rt_tasks.py EXPECTED: kernel threads every (RT) kernel runs per CPU or per interrupt. */
static const char *expected_why(const char *comm, int kernel, int own, int pid)
{
	if (own)
		return "the sampler's own thread";
	if (timerlat_measures && rtla_pid && pid == rtla_pid)
		return "rtla's own thread: the timerlat backend measures";
	if (timerlat_measures && kernel && prefix_digits(comm, "timerlat"))
		return "the timerlat tracer's thread: the timerlat backend measures";
	if (!kernel)
		return NULL; /* a user task can take any name */
	if (prefix_digits(comm, "migration"))
		return "per-CPU stopper: runs only to move tasks and for stop_machine";
	if (prefix_digits(comm, "watchdog") || strcmp(comm, "watchdogd") == 0)
		return "lockup detector / watchdog feeder: brief and periodic";
	if (strncmp(comm, "irq/", 4) == 0 && isdigit((unsigned char)comm[4])) {
		const char *d = comm + 4;
		while (isdigit((unsigned char)*d))
			d++;
		if (*d == '-')
			return "threaded interrupt handler (FIFO 50 by default): part of the kernel's latency";
	}
	if (prefix_digits(comm, "ksoftirqd|ktimers|ktimersoftd|irq_work|posixcputmr|rcuc|rcub|idle_inject"))
		return "per-CPU kernel housekeeping thread";
	if (strcmp(comm, "rcu_preempt") == 0 || strcmp(comm, "rcu_sched") == 0 ||
	    prefix_digits(comm, "rcuop|rcuog|rcub"))
		return "RCU kernel thread";
	return NULL;
}

static void set_bit(uint64_t *w, int c)
{
	if (c >= 0 && c < MAX_CPUS)
		w[c / 64] |= 1ULL << (c % 64);
}

static int has_bit(const uint64_t *w, int c)
{
	return (w[c / 64] >> (c % 64)) & 1;
}

/* "Cpus_allowed_list:\t0-3,5" of a status file. */
static void status_cpus(const char *text, uint64_t *cpus)
{
	const char *at = strstr(text, "\nCpus_allowed_list:");

	if (!at)
		return;
	at += strlen("\nCpus_allowed_list:");
	while (*at == ' ' || *at == '\t')
		at++;
	while (isdigit((unsigned char)*at)) {
		char *end;
		long lo = strtol(at, &end, 10), hi = lo;

		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (long c = lo; c <= hi && c < MAX_CPUS; c++)
			set_bit(cpus, (int)c);
		at = end + (*end == ',');
	}
}

/* A small file under dirfd, NUL-terminated; its length or -1. */
static ssize_t read_at(int dirfd, const char *rel, char *buf, size_t len)
{
	int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

struct scan {
	const struct rt_priorities *pr;
	int live, own_pid, procfd;
	enum rtscan_mode mode;
	struct rt_tasks *out;
	int first_new, competitors;
};

static int known(const struct rt_tasks *t, int pid, int tid)
{
	for (int i = 0; i < t->n; i++)
		if (t->t[i].pid == pid && t->t[i].tid == tid)
			return 1;
	return 0;
}

/* One task: judged from its stat (policy, rt_priority, flags, comm) and where it may run. */
static void look_at(struct scan *sc, int pid, int tid)
{
	char rel[64], text[2048], *open, *close;
	long long fields[40];
	struct rt_task t;
	int nf = 0, any = 0;

	if (sc->live) {
		int policy = sched_getscheduler(tid);
		if (policy >= 0 && !is_rt_policy(policy & ~SCHED_RESET_ON_FORK))
			return; /* one system call for the many tasks that are not real-time */
	}
	snprintf(rel, sizeof(rel), "%d/task/%d/stat", pid, tid);
	if (read_at(sc->procfd, rel, text, sizeof(text)) <= 0)
		return; /* it ended while we looked */
	open = strchr(text, '(');
	close = strrchr(text, ')');
	if (!open || !close || close < open || close[1] != ' ')
		return;
	/* fields after ")": [0] is field 3 (state) of proc(5); flags [6], rt_priority [37], policy [38] */
	for (const char *f = close + 2; *f && nf < 40;) {
		fields[nf++] = strtoll(f, NULL, 10);
		f += strcspn(f, " \n");
		f += strspn(f, " \n");
	}
	if (nf < 39 || !is_rt_policy((int)fields[38]))
		return;
	memset(&t, 0, sizeof(t));
	t.pid = pid;
	t.tid = tid;
	snprintf(t.comm, sizeof(t.comm), "%.*s", (int)(close - open - 1), open + 1);
	t.policy = (int)fields[38];
	t.priority = t.policy == SCHED_DEADLINE ? -1 : (int)fields[37];
	t.kernel = ((unsigned long long)fields[6] & PF_KTHREAD) != 0;
	if (sc->live) {
		cpu_set_t set;

		if (sched_getaffinity(tid, sizeof(set), &set))
			return;
		for (int c = 0; c < MAX_CPUS && c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				set_bit(t.cpus, c);
	} else {
		snprintf(rel, sizeof(rel), "%d/task/%d/status", pid, tid);
		if (read_at(sc->procfd, rel, text, sizeof(text)) < 0)
			return;
		status_cpus(text, t.cpus);
	}
	for (int c = 0; c < MAX_CPUS; c++) {
		if (sc->pr->prio[c] >= 0 && has_bit(t.cpus, c) && (t.priority < 0 || t.priority >= sc->pr->prio[c])) {
			set_bit(t.on_cpus, c);
			any = 1;
		}
	}
	if (!any)
		return;
	t.expected = expected_why(t.comm, t.kernel, pid == sc->own_pid, pid);
	if (!t.expected)
		sc->competitors++;
	if (sc->mode == RTSCAN_NEW_COMPETITORS && (t.expected || known(sc->out, pid, tid)))
		return;
	if (sc->out->n == RTSCAN_MAX) {
		/* full: a competitor takes the place of an expected task, never the other way round */
		sc->out->overflow++;
		for (int i = sc->out->n - 1; i >= sc->first_new && !t.expected; i--)
			if (sc->out->t[i].expected) {
				sc->out->t[i] = t;
				break;
			}
		return;
	}
	sc->out->t[sc->out->n++] = t;
}

/* The numeric names of a directory, through getdents64 into buf (no allocation). */
static void each_number(int dirfd, char *buf, size_t len, void (*fn)(struct scan *, int, int), struct scan *sc,
			int pid)
{
	long n;

	while ((n = syscall(SYS_getdents64, dirfd, buf, len)) > 0) {
		for (long off = 0; off < n;) {
			/* struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name */
			unsigned short reclen;
			const char *name = buf + off + 19;
			char *end;
			long v;

			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			off += reclen;
			if (!isdigit((unsigned char)name[0]))
				continue;
			v = strtol(name, &end, 10);
			if (!*end && v > 0 && v <= 0x7fffffff)
				fn(sc, pid, (int)v);
		}
		/* procfs fills the buffer while entries remain: room for another name means this was the
		 * last of them, and the call that would return 0 can be saved (one per process a second) */
		if ((size_t)n + 512 < len)
			break;
	}
}

static void each_task(struct scan *sc, int unused, int pid)
{
	char buf[8192], rel[32]; /* main's stack: nothing static that -m would lock in every run */
	int fd;

	(void)unused;
	snprintf(rel, sizeof(rel), "%d/task", pid);
	/* procfs counts a process's threads in its task directory's links (2 + threads), a zombie
	 * leader included until the group is reaped: one thread is the leader itself, and one
	 * fstatat replaces listing the directory (openat, getdents, close) for most processes */
	if (sc->live) {
		struct stat st;

		if (fstatat(sc->procfd, rel, &st, 0) == 0 && st.st_nlink == 3) {
			look_at(sc, pid, pid);
			return;
		}
	}
	fd = openat(sc->procfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	each_number(fd, buf, sizeof(buf), look_at, sc, pid);
	close(fd);
}

static int before(const struct rt_task *a, const struct rt_task *b)
{
	return a->pid < b->pid || (a->pid == b->pid && a->tid < b->tid);
}

/* Entries from `from` on in (pid, tid) order, as rt_tasks.py lists them (insertion sort: no allocation). */
static void sort_from(struct rt_tasks *t, int from)
{
	for (int i = from + 1; i < t->n; i++) {
		struct rt_task x = t->t[i];
		int j = i;

		for (; j > from && before(&x, &t->t[j - 1]); j--)
			t->t[j] = t->t[j - 1];
		t->t[j] = x;
	}
}

int rtscan(const char *root, const struct rt_priorities *pr, int own_pid, struct rt_tasks *out,
	   enum rtscan_mode mode)
{
	char buf[16384], proc[4200];
	struct scan sc = { .pr = pr, .own_pid = own_pid, .mode = mode, .out = out };

	sc.live = strcmp(root, "/") == 0;
	snprintf(proc, sizeof(proc), "%s/proc", sc.live ? "" : root);
	if (mode == RTSCAN_ALL) {
		out->n = 0;
		out->overflow = 0;
	}
	sc.first_new = out->n;
	sc.procfd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sc.procfd < 0)
		return 0;
	each_number(sc.procfd, buf, sizeof(buf), each_task, &sc, 0);
	close(sc.procfd);
	sort_from(out, sc.first_new);
	return sc.competitors;
}

static void cpu_list(char *buf, size_t len, const uint64_t *w, const char *sep)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int c = 0; c < MAX_CPUS && used < len; c++)
		if (has_bit(w, c))
			used += (size_t)snprintf(buf + used, len - used, "%s%d", used ? sep : "", c);
}

void rtscan_describe(const struct rt_task *t, char *buf, size_t len)
{
	char cpus[1024], tid[32] = "", prio[16] = "";

	cpu_list(cpus, sizeof(cpus), t->on_cpus, ",");
	if (t->tid != t->pid)
		snprintf(tid, sizeof(tid), ", tid %d", t->tid);
	if (t->priority >= 0)
		snprintf(prio, sizeof(prio), " %d", t->priority);
	snprintf(buf, len, "%s%s (pid %d%s, %s%s, cpu %s)", t->kernel ? "kernel thread " : "", t->comm, t->pid, tid,
		 rtscan_policy_name(t->policy), prio, cpus);
}

int rtscan_competitors_text(const struct rt_tasks *const *lists, int nlists, const char *lead, char *buf,
			    size_t len)
{
	size_t used;
	int count = 0;

	used = (size_t)snprintf(buf, len, "%s", lead);
	for (int l = 0; l < nlists; l++) {
		for (int i = 0; i < lists[l]->n; i++) {
			const struct rt_task *t = &lists[l]->t[i], *latest = t;
			char one[1024];
			int seen = 0;

			if (t->expected)
				continue;
			/* once, where it first appears; described from where it was seen last (a dict's update) */
			for (int k = 0; k <= l && !seen; k++)
				for (int j = 0; j < (k == l ? i : lists[k]->n) && !seen; j++)
					seen = !lists[k]->t[j].expected && lists[k]->t[j].pid == t->pid &&
					       lists[k]->t[j].tid == t->tid;
			if (seen)
				continue;
			for (int k = l; k < nlists; k++)
				for (int j = 0; j < lists[k]->n; j++)
					if (!lists[k]->t[j].expected && lists[k]->t[j].pid == t->pid &&
					    lists[k]->t[j].tid == t->tid)
						latest = &lists[k]->t[j];
			rtscan_describe(latest, one, sizeof(one));
			if (used < len)
				used += (size_t)snprintf(buf + used, len - used, "%s%s", count ? ", " : " ", one);
			count++;
		}
	}
	return count;
}

static void json_cpus(FILE *f, const uint64_t *w)
{
	int first = 1;

	fputc('[', f);
	for (int c = 0; c < MAX_CPUS; c++)
		if (has_bit(w, c)) {
			fprintf(f, "%s%d", first ? "" : ", ", c);
			first = 0;
		}
	fputc(']', f);
}

void rtscan_write_json(FILE *f, const struct rt_tasks *t, int competitors_only)
{
	int first = 1;

	fputc('[', f);
	for (int i = 0; i < t->n; i++) {
		const struct rt_task *x = &t->t[i];

		if (competitors_only && x->expected)
			continue;
		fprintf(f, "%s{\"pid\": %d, \"tid\": %d, \"comm\": ", first ? "" : ", ", x->pid, x->tid);
		record_json_string(f, x->comm);
		fprintf(f, ", \"policy\": \"%s\", \"priority\": ", rtscan_policy_name(x->policy));
		if (x->priority >= 0)
			fprintf(f, "%d", x->priority);
		else
			fputs("null", f);
		fputs(", \"cpus\": ", f);
		json_cpus(f, x->cpus);
		fprintf(f, ", \"kernel\": %s, \"on_cpus\": ", x->kernel ? "true" : "false");
		json_cpus(f, x->on_cpus);
		fputs(", \"expected\": ", f);
		record_json_string(f, x->expected);
		fputc('}', f);
		first = 0;
	}
	fputc(']', f);
}
