// SPDX-License-Identifier: GPL-2.0-or-later
#include "timerlat.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record.h"
#include "toolpath.h"

#define MAX_ENTRIES 100000 /* core/timerlat_spec.py MAX_ENTRIES */
#define HELP_READ_MAX 65536
#define HELP_WAIT_S 30

static void set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* "f:95", "r:1".."r:99", "o:-20".."o:19": rtla's -P for the policies a threshold file names. */
static int parse_sched(const char *v, char *out, size_t len)
{
	long n;
	char *end;

	if ((v[0] != 'f' && v[0] != 'r' && v[0] != 'o') || v[1] != ':' || !v[2])
		return -1;
	errno = 0;
	n = strtol(v + 2, &end, 10);
	if (errno || *end || (v[0] == 'o' ? n < -20 || n > 19 : n < 1 || n > 99))
		return -1;
	snprintf(out, len, "%c:%ld", v[0], n);
	return 0;
}

int timerlat_parse(const char *text, struct timerlat_spec *t, char *err, size_t errlen)
{
	char buf[256];
	char *save = NULL;

	memset(t, 0, sizeof(*t));
	t->given = 1;
	if (strlen(text) >= sizeof(buf)) {
		set_err(err, errlen, "too long");
		return -1;
	}
	strcpy(buf, text);
	for (char *f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(f, '=');
		const char *v = eq ? eq + 1 : NULL;
		int bad = 0;

		if (eq)
			*eq = '\0';
		if (!strcmp(f, "user") && !v)
			t->user = 1;
		else if (!strcmp(f, "bucket") && v)
			bad = parse_u64(v, 1, 1000000, &t->bucket_us);
		else if (!strcmp(f, "entries") && v)
			bad = parse_u64(v, 10, MAX_ENTRIES, &t->entries);
		else if (!strcmp(f, "irq") && v)
			bad = parse_u64(v, 1, UINT32_MAX, &t->stop_irq_us);
		else if (!strcmp(f, "thread") && v)
			bad = parse_u64(v, 1, UINT32_MAX, &t->stop_thread_us);
		else if (!strcmp(f, "sched") && v)
			bad = parse_sched(v, t->sched, sizeof(t->sched));
		else {
			set_err(err, errlen, "unknown field '%s' (bucket=US, entries=N, sched=P:N, user, irq=US, thread=US)",
				f);
			return -1;
		}
		if (bad) {
			set_err(err, errlen, "%s=%s: not a valid value", f, v);
			return -1;
		}
	}
	if (!t->bucket_us || !t->entries) {
		set_err(err, errlen, "needs bucket=US and entries=N");
		return -1;
	}
	return 0;
}

static const char *tracefs(void)
{
	static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	char path[128];

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/available_tracers", dirs[i]);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			return dirs[i];
	}
	return NULL;
}

/* Whether `word` is one of the blank-separated words of a small file; -1 with errno when unreadable. */
static int file_has_word(const char *path, const char *word)
{
	char text[4096], *save = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return -1;
	text[n] = '\0';
	for (char *w = strtok_r(text, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
		if (!strcmp(w, word))
			return 1;
	return 0;
}

/* Whether `rtla timerlat hist --help` names --user-threads (rtla from Linux 6.6 on). */
static int has_user_threads(const char *rtla)
{
	char *text = malloc(HELP_READ_MAX + 1);
	int fds[2], found = 0, status;
	size_t used = 0;
	pid_t pid;

	if (!text || pipe2(fds, O_CLOEXEC)) {
		free(text);
		return 0;
	}
	pid = fork();
	if (pid == 0) {
		int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(fds[1], 1) < 0 || dup2(fds[1], 2) < 0)
			_exit(126);
		alarm(HELP_WAIT_S);
		execl(rtla, "rtla", "timerlat", "hist", "--help", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (pid > 0) {
		ssize_t n;

		while (used < HELP_READ_MAX && (n = read(fds[0], text + used, HELP_READ_MAX - used)) != 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				break;
			used += (size_t)n;
		}
		text[used] = '\0';
		found = strstr(text, "--user-threads") != NULL;
		kill(pid, SIGKILL); /* it has said all it will */
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	close(fds[0]);
	free(text);
	return found;
}

static void append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used && used + 2 < len) {
		strcpy(buf + used, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

int timerlat_unavailable(const struct timerlat_spec *t, char *buf, size_t len)
{
	char rtla[PATH_LEN], path[160];
	const char *dir = tracefs();
	int found = !tool_path("rtla", rtla, sizeof(rtla));

	buf[0] = '\0';
	if (!found)
		append(buf, len, "rtla not found (apt-get install rtla)");
	if (geteuid() != 0)
		append(buf, len, "rtla needs root");
	if (!dir) {
		append(buf, len, "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
	} else {
		int has;

		snprintf(path, sizeof(path), "%s/available_tracers", dir);
		has = file_has_word(path, "timerlat");
		if (has < 0) {
			append(buf, len, "cannot read %s: %s", path, strerror(errno));
		} else if (!has) {
			struct utsname u;

			append(buf, len, "kernel %s has no timerlat tracer (CONFIG_TIMERLAT_TRACER)",
			       uname(&u) == 0 ? u.release : "?");
		}
	}
	if (found && t->user && !has_user_threads(rtla))
		append(buf, len, "this rtla has no user-space threads (-u/--user-threads: rtla from Linux 6.6 on)");
	return buf[0] != '\0';
}

/* The measured CPUs as rtla's -c list: the threads' CPUs, or every allowed CPU (-S, or a thread not pinned). */
static void cpu_list(const struct params *p, const struct cpu_info *cpus, char *out, size_t len)
{
	unsigned char set[MAX_CPUS] = {0};
	size_t o = 0;
	int every = p->smp;

	for (int i = 0; i < p->num_threads && !every; i++) {
		if (p->thread_cpu[i] < 0)
			every = 1;
		else if (p->thread_cpu[i] < MAX_CPUS)
			set[p->thread_cpu[i]] = 1;
	}
	out[0] = '\0';
	for (int c = 0; c < MAX_CPUS; c++) {
		if (!(every ? cpus->allowed[c] : set[c]))
			continue;
		int n = snprintf(out + o, len - o, "%s%d", o ? "," : "", c);

		if (n < 0 || (size_t)n >= len - o)
			break;
		o += (size_t)n;
	}
}

/* base.json -> base<suffix> */
static int beside(const char *json, const char *suffix, char *out, size_t len)
{
	size_t n = strlen(json);

	if (n > 5 && !strcmp(json + n - 5, ".json"))
		n -= 5;
	return (size_t)snprintf(out, len, "%.*s%s", (int)n, json, suffix) >= len ? -1 : 0;
}

int timerlat_prepare(struct timerlat_run *t, const struct params *p, const struct cpu_info *cpus, char *err,
		     size_t errlen)
{
	const struct timerlat_spec *s = &p->timerlat;
	char cpulist[4 * MAX_CPUS + 1];
	size_t used = 0;
	int n = 0;

	memset(t, 0, sizeof(*t));
	if (tool_path("rtla", t->path, sizeof(t->path))) {
		set_err(err, errlen, "rtla not found (apt-get install rtla)");
		return -1;
	}
	if (beside(p->json_path, ".rtla.txt", t->out, sizeof(t->out)) ||
	    beside(p->json_path, ".rtla.stderr", t->err, sizeof(t->err)) ||
	    beside(p->json_path, ".trace.txt", t->trace, sizeof(t->trace))) {
		set_err(err, errlen, "%s: the path is too long", p->json_path);
		return -1;
	}
	cpu_list(p, cpus, cpulist, sizeof(cpulist));
#define ARG(...)                                                                                      \
	do {                                                                                          \
		int w_ = snprintf(t->argbuf + used, sizeof(t->argbuf) - used, __VA_ARGS__);           \
		if (w_ < 0 || (size_t)w_ >= sizeof(t->argbuf) - used || n + 2 >= (int)(sizeof(t->argv) / sizeof(t->argv[0]))) { \
			set_err(err, errlen, "rtla's command line is too long");                      \
			return -1;                                                                    \
		}                                                                                     \
		t->argv[n++] = t->argbuf + used;                                                      \
		used += (size_t)w_ + 1;                                                               \
	} while (0)
	ARG("%s", t->path);
	ARG("timerlat");
	ARG("hist");
	ARG("-p");
	ARG("%llu", (unsigned long long)p->interval_us);
	ARG("-d");
	ARG("%llus", (unsigned long long)p->duration_s);
	ARG("-c");
	ARG("%s", cpulist);
	ARG("-b");
	ARG("%llu", (unsigned long long)s->bucket_us);
	ARG("-E");
	ARG("%llu", (unsigned long long)s->entries);
	if (s->sched[0]) {
		ARG("-P");
		ARG("%s", s->sched);
	}
	if (p->latency_given) {
		ARG("--dma-latency");
		ARG("%d", p->latency_target);
	}
	if (s->user)
		ARG("-u");
	if (s->stop_irq_us) {
		ARG("-i");
		ARG("%llu", (unsigned long long)s->stop_irq_us);
	}
	if (s->stop_thread_us) {
		ARG("-T");
		ARG("%llu", (unsigned long long)s->stop_thread_us);
		ARG("-s");
		ARG("%llu", (unsigned long long)s->stop_thread_us);
	}
	if (s->stop_irq_us || s->stop_thread_us) {
		/* rtla 6.1 drops the first character of -t's argument (meant to be '='); later rtla
		 * drops a leading '=': this spelling names the file for both. */
		ARG("-t=%s", t->trace);
	}
#undef ARG
	t->argv[n] = NULL;
	return 0;
}

/* A fresh file for rtla to write: a stale one (or a link planted there) removed, never followed. */
static int fresh(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		set_err(err, errlen, "%s exists and is not a regular file: refusing to replace it", path);
		return -1;
	}
	if (unlink(path) && errno != ENOENT) {
		set_err(err, errlen, "cannot replace %s: %s", path, strerror(errno));
		return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		set_err(err, errlen, "cannot write %s: %s", path, strerror(errno));
	return fd;
}

int timerlat_start(struct timerlat_run *t, char *err, size_t errlen)
{
	int out, errfd;
	pid_t parent = getpid();
	struct stat st;

	if (lstat(t->trace, &st) == 0) { /* rtla opens it by name: nothing stale, nothing planted */
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
			set_err(err, errlen, "%s exists and is not a regular file: refusing to replace it", t->trace);
			return -1;
		}
		unlink(t->trace);
	}
	out = fresh(t->out, err, errlen);
	if (out < 0)
		return -1;
	errfd = fresh(t->err, err, errlen);
	if (errfd < 0) {
		close(out);
		return -1;
	}
	t->pid = fork();
	if (t->pid == 0) {
		sigset_t none;
		int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		/* SIGINT ignored until rtla installs its handler (setting up the tracer takes seconds
		 * under emulation): a SIGINT before would kill it with nothing printed and the tracer
		 * left on; the engine repeats its SIGINT until rtla stops. */
		signal(SIGINT, SIG_IGN);
		prctl(PR_SET_PDEATHSIG, SIGINT);
		if (getppid() != parent)
			_exit(127);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(out, 1) < 0 || dup2(errfd, 2) < 0)
			_exit(126);
		execv(t->path, t->argv);
		_exit(127);
	}
	close(out);
	close(errfd);
	if (t->pid < 0) {
		t->pid = 0;
		set_err(err, errlen, "cannot start %s: %s", t->path, strerror(errno));
		return -1;
	}
	return 0;
}

/* The first non-blank line of a file (at most len - 1 bytes of it); 0 when there is one. */
static int first_line(const char *path, char *out, size_t len)
{
	char *text = malloc(HELP_READ_MAX + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), found = -1;
	ssize_t n = -1;
	char *save = NULL;

	if (text && fd >= 0)
		n = read(fd, text, HELP_READ_MAX);
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		text[n] = '\0';
		for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			while (*l == ' ' || *l == '\t')
				l++;
			if (*l) {
				snprintf(out, len, "%s", l);
				found = 0;
				break;
			}
		}
	}
	free(text);
	return found;
}

int timerlat_measured(const struct timerlat_run *t, char *why, size_t len)
{
	char *text = malloc(HELP_READ_MAX + 1);
	int fd = open(t->out, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), printed = 0;
	ssize_t n = -1;

	if (text && fd >= 0)
		n = read(fd, text, HELP_READ_MAX); /* the magic is rtla's first line */
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		text[n] = '\0';
		printed = strstr(text, TIMERLAT_MAGIC) != NULL;
	}
	free(text);
	if (printed)
		return 0;
	if (first_line(t->err, why, len) && first_line(t->out, why, len)) {
		if (WIFSIGNALED(t->status))
			snprintf(why, len, "killed by signal %d", WTERMSIG(t->status));
		else
			snprintf(why, len, "exit status %d", WIFEXITED(t->status) ? WEXITSTATUS(t->status) : -1);
	}
	return -1;
}

void timerlat_write_json(FILE *f, const void *run)
{
	const struct timerlat_run *t = run;

	fputs("{\"name\": \"timerlat\", \"command\": [", f);
	for (int i = 0; t->argv[i]; i++) {
		fputs(i ? ", " : "", f);
		record_json_string(f, t->argv[i]);
	}
	fputs("]}", f);
}
