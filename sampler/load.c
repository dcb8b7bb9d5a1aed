// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Background loads (load.h): a port of rtgate's measure/load.py. Each load runs in its own
 * session and process group, pinned to its CPUs before exec, bounded (stress-ng's --timeout,
 * PR_SET_PDEATHSIG on its leader, and a guard process that stops every load session when the
 * sampler dies or the bound passes). Nothing here runs while the sampler measures: the level is
 * judged from a reading after the warm-up and one at the end.
 */
#include "load.h"

#include "result.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "out_json.h"
#include "toolpath.h"

#define DEFAULT_WARMUP_S 2.0
#define DEFAULT_CPU_PERCENT_PER_WORKER 25.0
#define DEFAULT_CUSTOM_CPU_PERCENT 1.0
#define DEFAULT_OPS_PER_SECOND 1.0
#define KILL_AFTER_S 5          /* each of SIGTERM and SIGKILL gets this long to end a session */
#define YAML_NAME "stress-ng.yaml"
#define YAML_MAX_BYTES (1 << 20)
#define LOG_READ_MAX (64LL << 20)
#define WORKDIR_PREFIX "rtgate-load-"
#define HACKBENCH_LOOPS 500

static const char *const kind_names[LOAD_KIND_END] = {
	"cpu", "memory", "io", "timer", "network", "hackbench", "kcompile", "custom",
};

const char *load_kind_name(enum load_kind kind)
{
	return kind < LOAD_KIND_END ? kind_names[kind] : "none";
}

static int is_stress_ng(enum load_kind k)
{
	return k <= LOAD_NETWORK;
}

/* io, timer, network: held to stress-ng's operation rate; the others to their CPU use. */
static int is_rate_kind(enum load_kind k)
{
	return k == LOAD_IO || k == LOAD_TIMER || k == LOAD_NETWORK;
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static long long now_ns_mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* ---------------------------------------------------------------- parsing */

static int only_chars(const char *s, const char *allowed)
{
	return *s && strspn(s, allowed) == strlen(s);
}

static int parse_field(struct load_spec *spec, const char *key, const char *val, const struct cpu_info *cpus,
		       char *err, size_t errlen)
{
	uint64_t u;
	char cerr[160];

	if (!val[0]) {
		set_err(err, errlen, "%s: empty value", key);
		return -1;
	}
	if (strcmp(key, "kind") == 0) {
		for (int k = 0; k < LOAD_KIND_END; k++)
			if (strcmp(val, kind_names[k]) == 0) {
				spec->kind = (enum load_kind)k;
				return 0;
			}
		set_err(err, errlen, "kind: '%s' is not a load kind (cpu, memory, io, timer, network, hackbench, "
			"kcompile, custom)", val);
		return -1;
	}
	if (strcmp(key, "cpus") == 0) {
		static const struct { const char *name; enum load_place place; } places[] = {
			{"others", PLACE_OTHERS}, {"measured", PLACE_MEASURED}, {"all", PLACE_ALL},
		};
		for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++)
			if (strcmp(val, places[i].name) == 0) {
				spec->place = places[i].place;
				return 0;
			}
		if (!only_chars(val, "0123456789,-") || !cpus ||
		    parse_cpuset(val, cpus, spec->cpus, cerr, sizeof(cerr))) {
			set_err(err, errlen, "cpus: '%s' is not a CPU list such as 0-1,3 (or measured, others, all)%s%s",
				val, cpus && only_chars(val, "0123456789,-") ? ": " : "",
				cpus && only_chars(val, "0123456789,-") ? cerr : "");
			return -1;
		}
		spec->place = PLACE_LIST;
		return 0;
	}
	if (strcmp(key, "workers") == 0) {
		if (parse_u64(val, 1, 4096, &u)) {
			set_err(err, errlen, "workers: '%s' is not a worker count (1..4096)", val);
			return -1;
		}
		spec->workers = (int)u;
		return 0;
	}
	if (strcmp(key, "warmup") == 0) {
		if (parse_decimal(val, 0.0, 3600.0, &spec->warmup_s)) {
			set_err(err, errlen, "warmup: '%s' is not a warm-up in seconds (0..3600)", val);
			return -1;
		}
		return 0;
	}
	if (strcmp(key, "min") == 0) {
		if (parse_decimal(val, 0.0, 1e12, &spec->min)) {
			set_err(err, errlen, "min: '%s' is not a level (a decimal number, 0..1e12)", val);
			return -1;
		}
		spec->min_given = 1;
		return 0;
	}
	if (strcmp(key, "size") == 0) {
		size_t n = strlen(val);
		if (n >= sizeof(spec->size) || !isdigit((unsigned char)val[0]) ||
		    !only_chars(val, "0123456789KMG") || strspn(val, "0123456789") < n - 1) {
			set_err(err, errlen, "size: '%s' is not a size such as 64M or 1G", val);
			return -1;
		}
		memcpy(spec->size, val, n + 1);
		return 0;
	}
	if (strcmp(key, "tree") == 0) {
		if (strlen(val) >= sizeof(spec->tree)) {
			set_err(err, errlen, "tree: path too long");
			return -1;
		}
		strcpy(spec->tree, val);
		return 0;
	}
	set_err(err, errlen, "unknown key '%s' (kind, cpus, workers, warmup, min, size, tree)", key);
	return -1;
}

/* A field's own rules once the kind is known. */
static int check_spec(const struct load_spec *spec, const unsigned seen, char *err, size_t errlen)
{
	enum { SEEN_SIZE = 1u << 5, SEEN_TREE = 1u << 6 };

	if ((seen & SEEN_SIZE) && spec->kind != LOAD_MEMORY && spec->kind != LOAD_IO) {
		set_err(err, errlen, "size: for memory and io loads only");
		return -1;
	}
	if ((seen & SEEN_TREE) && spec->kind != LOAD_KCOMPILE) {
		set_err(err, errlen, "tree: a kernel source tree's path, for kind=kcompile only");
		return -1;
	}
	if (spec->min_given && !is_rate_kind(spec->kind) && spec->min > 1e6) {
		set_err(err, errlen, "min: a %s load's level is in %% CPU (0..1e6)", kind_names[spec->kind]);
		return -1;
	}
	return 0;
}

int load_parse_spec(const char *text, const struct cpu_info *cpus, struct load_spec *spec, char *err,
		    size_t errlen)
{
	static const char *const keys[] = {"kind", "cpus", "workers", "warmup", "min", "size", "tree"};
	char buf[PATH_LEN + 256];
	char *tok, *save = NULL;
	unsigned seen = 0;
	int last = -1;

	memset(spec, 0, sizeof(*spec));
	spec->warmup_s = DEFAULT_WARMUP_S;
	strcpy(spec->size, "64M");
	if (strlen(text) >= sizeof(buf)) {
		set_err(err, errlen, "too long");
		return -1;
	}
	strcpy(buf, text);
	if (!buf[0] || buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,")) {
		set_err(err, errlen, "empty field (kind=KIND,key=value,...)");
		return -1;
	}
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		int k = -1;

		if (!eq) {
			/* cpus=0-1,3: a CPU list goes on after its comma */
			if (last == 1 && spec->place == PLACE_LIST && only_chars(tok, "0123456789-")) {
				unsigned char more[MAX_CPUS];
				char cerr[160];

				if (!cpus || parse_cpuset(tok, cpus, more, cerr, sizeof(cerr))) {
					set_err(err, errlen, "cpus: %s", cerr);
					return -1;
				}
				for (int c = 0; c < MAX_CPUS; c++)
					spec->cpus[c] |= more[c];
				continue;
			}
			set_err(err, errlen, "'%s' is not key=value", tok);
			return -1;
		}
		*eq = '\0';
		for (int i = 0; i < (int)(sizeof(keys) / sizeof(keys[0])); i++)
			if (strcmp(tok, keys[i]) == 0)
				k = i;
		if (k >= 0 && (seen & (1u << k))) {
			set_err(err, errlen, "%s given twice", tok);
			return -1;
		}
		if (parse_field(spec, tok, eq + 1, cpus, err, errlen))
			return -1;
		seen |= 1u << k;
		last = k;
	}
	if (!(seen & 1u)) {
		set_err(err, errlen, "kind= missing (cpu, memory, io, timer, network, hackbench, kcompile, custom)");
		return -1;
	}
	return check_spec(spec, seen, err, errlen);
}

/* ---------------------------------------------------------------- planning */

static void cpulist(const struct load *ld, char *out, size_t len)
{
	size_t o = 0;

	out[0] = '\0';
	for (int i = 0; i < ld->ncpus && o + 8 < len; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%d", i ? "," : "", ld->cpus[i]);
}

static int resolve_cpus(struct load *ld, const struct params *p, const struct cpu_info *cpus, char *err,
			size_t errlen)
{
	unsigned char measured[MAX_CPUS] = {0}, set[MAX_CPUS] = {0};
	int unpinned = 0;

	for (int i = 0; i < p->num_threads; i++) {
		if (p->thread_cpu[i] >= 0 && p->thread_cpu[i] < MAX_CPUS)
			measured[p->thread_cpu[i]] = 1;
		else
			unpinned = 1;
	}
	if (unpinned) /* a thread that may run anywhere measures every CPU */
		memcpy(measured, cpus->allowed, MAX_CPUS);
	for (int c = 0; c < MAX_CPUS && c < cpus->ncpus; c++) {
		switch (ld->spec.place) {
		case PLACE_MEASURED: set[c] = measured[c] && cpus->allowed[c]; break;
		case PLACE_ALL: set[c] = cpus->allowed[c]; break;
		case PLACE_OTHERS: set[c] = cpus->allowed[c] && !measured[c]; break;
		default: set[c] = ld->spec.cpus[c]; break;
		}
	}
	ld->ncpus = 0;
	for (int c = 0; c < MAX_CPUS; c++)
		if (set[c])
			ld->cpus[ld->ncpus++] = c;
	if (!ld->ncpus) {
		set_err(err, errlen, "--load: the load goes on the other CPUs, but the measurement uses every CPU "
			"(set load cpus: measured or all)");
		return -1;
	}
	return 0;
}

static int name_dirs(struct loads *ls, const struct params *p, char *err, size_t errlen)
{
	char base[PATH_LEN];

	if (p->load_dir[0]) {
		snprintf(base, sizeof(base), "%s", p->load_dir);
	} else if (p->json_path[0]) {
		size_t n = strlen(p->json_path);

		if (n > 5 && strcmp(p->json_path + n - 5, ".json") == 0)
			n -= 5;
		snprintf(base, sizeof(base), "%.*s.load", (int)n, p->json_path);
	} else if (p->check_only) { /* measures nothing: no load runs, no log is written */
		return 0;
	} else {
		set_err(err, errlen, "--load needs --json or --load-dir (where its log goes)");
		return -1;
	}
	for (int i = 0; i < ls->n; i++) {
		struct load *ld = &ls->l[i];
		int w = ls->n == 1 ? snprintf(ld->dir, sizeof(ld->dir), "%s", base)
				   : snprintf(ld->dir, sizeof(ld->dir), "%s-%d-%s", base, i, kind_names[ld->spec.kind]);

		if (w < 0 || (size_t)w >= sizeof(ld->dir) - 32) {
			set_err(err, errlen, "--load-dir: path too long");
			return -1;
		}
	}
	return 0;
}

int loads_plan(struct loads *ls, const struct params *p, const struct cpu_info *cpus, char *err, size_t errlen)
{
	char lerr[300];

	memset(ls, 0, sizeof(*ls));
	ls->guard_fd = -1;
	for (int i = 0; i < p->nload_opts; i++) {
		const char *text = p->load_opt[i];

		if (p->load_opt_is_word[i]) {
			struct load_spec *s = ls->n ? &ls->l[ls->n - 1].spec : NULL;

			if (!s || s->kind != LOAD_CUSTOM) {
				set_err(err, errlen, "--load-arg follows a --load=kind=custom (its command's words)");
				return -1;
			}
			if (s->nwords == LOAD_MAX_WORDS) {
				set_err(err, errlen, "--load-arg: at most %d words", LOAD_MAX_WORDS);
				return -1;
			}
			s->words[s->nwords++] = text;
			continue;
		}
		if (ls->n == LOAD_MAX) {
			set_err(err, errlen, "--load: at most %d loads", LOAD_MAX);
			return -1;
		}
		if (load_parse_spec(text, cpus, &ls->l[ls->n].spec, lerr, sizeof(lerr))) {
			set_err(err, errlen, "--load=%s: %s", text, lerr);
			return -1;
		}
		ls->n++;
	}
	for (int i = 0; i < ls->n; i++) {
		struct load *ld = &ls->l[i];

		if (ld->spec.kind == LOAD_CUSTOM && !ld->spec.nwords) {
			set_err(err, errlen, "--load=kind=custom needs its command as --load-arg=WORD options");
			return -1;
		}
		ld->nstressors = -1;
		if (resolve_cpus(ld, p, cpus, err, errlen))
			return -1;
	}
	return ls->n ? name_dirs(ls, p, err, errlen) : 0;
}

/* ---------------------------------------------------------------- processes of a session */

struct proc_stat {
	pid_t pid, ppid, sid;
	char state;
	long long ticks; /* utime + stime + cutime + cstime */
};

static int read_stat(pid_t pid, struct proc_stat *ps)
{
	char path[64], buf[1024], *rp;
	long long f[16];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	if (!rp || sscanf(rp + 1, " %c %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld",
			  &ps->state, &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10],
			  &f[11], &f[12], &f[13], &f[14]) != 15)
		return -1;
	ps->pid = pid;
	ps->ppid = (pid_t)f[1];
	ps->sid = (pid_t)f[3];
	ps->ticks = f[11] + f[12] + f[13] + f[14];
	return 0;
}

/*
 * Every process of the sessions sids[0..n): fn(index of its session, its stat, ctx) for each.
 * Returns how many live ones (zombies hold no CPU and are reaped by their parent).
 */
static int scan_sessions(const pid_t *sids, int n, void (*fn)(int which, const struct proc_stat *ps, void *ctx),
			 void *ctx)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int live = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct proc_stat ps;
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0 || read_stat((pid_t)pid, &ps))
			continue;
		for (int i = 0; i < n; i++) {
			if (sids[i] > 0 && ps.sid == sids[i]) {
				if (ps.state != 'Z')
					live++;
				if (fn)
					fn(i, &ps, ctx);
				break;
			}
		}
	}
	closedir(d);
	return live;
}

static void add_ticks(int which, const struct proc_stat *ps, void *ctx)
{
	((long long *)ctx)[which] += ps->ticks;
	((long long *)ctx)[LOAD_MAX + which] += 1;
}

static void send_signal(int which, const struct proc_stat *ps, void *ctx)
{
	(void)which;
	if (ps->state != 'Z')
		kill(ps->pid, *(const int *)ctx);
}

static void note_left(int which, const struct proc_stat *ps, void *ctx)
{
	char *out = ctx;
	size_t o = strlen(out);

	(void)which;
	if (ps->state != 'Z' && o + 16 < LOAD_REASON_LEN)
		snprintf(out + o, LOAD_REASON_LEN - o, "%s%d", o ? ", " : "", (int)ps->pid);
}

/* Reap every child that ended (loads' leaders, orphans of their sessions, the guard). */
static void reap(struct loads *ls)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (int i = 0; i < ls->n; i++)
			if (ls->l[i].pid == pid && !ls->l[i].exited) {
				ls->l[i].status = st;
				ls->l[i].exited = 1;
			}
		if (pid == ls->guard)
			ls->guard = 0;
	}
}

static void sleep_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&t, NULL);
}

/*
 * SIGTERM to each session's process group and every process of the sessions, up to 5 s for them to
 * go; then SIGKILL, 5 s. ls (may be NULL: the guard, which is not their parent) reaps meanwhile.
 * Returns how many are left.
 */
static int end_sessions(struct loads *ls, const pid_t *sids, int n)
{
	static const int sigs[2] = {SIGTERM, SIGKILL};
	int live = 0, any = 0;

	for (int i = 0; i < n; i++)
		any |= sids[i] > 0;
	if (!any) /* none started, or all stopped already: no /proc scan on the exit path */
		return 0;

	for (int s = 0; s < 2; s++) {
		long long deadline = now_ns_mono() + KILL_AFTER_S * 1000000000LL;

		for (int i = 0; i < n; i++)
			if (sids[i] > 0)
				kill(-sids[i], sigs[s]);
		scan_sessions(sids, n, send_signal, (void *)&sigs[s]);
		do {
			if (ls)
				reap(ls);
			live = scan_sessions(sids, n, NULL, NULL);
			if (!live)
				return 0;
			sleep_ms(10);
		} while (now_ns_mono() < deadline);
	}
	if (ls)
		reap(ls);
	return scan_sessions(sids, n, NULL, NULL);
}

/* ---------------------------------------------------------------- files */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void remove_tree(const char *path)
{
	if (path[0])
		nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *tmp_dir(void)
{
	const char *t = getenv("TMPDIR");

	return t && t[0] == '/' ? t : "/tmp";
}

/* The load folders a killed sampler left in $TMPDIR: ours (same user, a real folder) whose owner is
 * gone, or (owner > 0) those of that owner. */
static void reclaim_workdirs(pid_t owner)
{
	const char *tmp = tmp_dir();
	DIR *d = opendir(tmp);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[PATH_LEN], *end;
		struct stat st;
		long pid;

		if (strncmp(e->d_name, WORKDIR_PREFIX, strlen(WORKDIR_PREFIX)) != 0)
			continue;
		pid = strtol(e->d_name + strlen(WORKDIR_PREFIX), &end, 10);
		if (pid <= 0 || *end != '-' || (owner > 0 && pid != owner))
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp, e->d_name);
		if (lstat(path, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (owner <= 0 && !(kill((pid_t)pid, 0) && errno == ESRCH))
			continue; /* its owner lives (or the pid is in use again): left alone */
		remove_tree(path);
	}
	closedir(d);
}

/* The load's folder, made in its parent (never through a link there); an fd on it, or -1. */
static int open_dir(const char *dir)
{
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -1;
	return open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static int write_file_at(int dirfd, const char *name, const char *data, size_t len)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	size_t o = 0;

	if (fd < 0)
		return -1;
	while (o < len) {
		ssize_t w = write(fd, data + o, len - o);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		o += (size_t)w;
	}
	return close(fd);
}

/* The bundled C project of the kcompile load: units enough for make -j to keep every worker busy. */
static int write_bundled_project(const char *dir)
{
	enum { SOURCES = 48, FUNCS = 40 };
	char path[PATH_LEN + 32];
	FILE *f;

	if (mkdir(dir, 0755))
		return -1;
	for (int i = 0; i < SOURCES; i++) {
		snprintf(path, sizeof(path), "%s/unit%d.c", dir, i);
		if (!(f = fopen(path, "wx")))
			return -1;
		for (int k = 0; k < FUNCS; k++)
			fprintf(f, "static unsigned f%d_%d(unsigned x) { unsigned s = %du; for (unsigned j = 0; j < x; j++) "
				"{ s = s * 2654435761u + (j ^ %du); if (s & 1u) s ^= s >> 7; } return s; }\n", i, k, k, k);
		fprintf(f, "unsigned unit%d(unsigned x) { return ", i);
		for (int k = 0; k < FUNCS; k++)
			fprintf(f, "%sf%d_%d(x)", k ? " + " : "", i, k);
		fprintf(f, "; }\n");
		if (fclose(f))
			return -1;
	}
	snprintf(path, sizeof(path), "%s/main.c", dir);
	if (!(f = fopen(path, "wx")))
		return -1;
	for (int i = 0; i < SOURCES; i++)
		fprintf(f, "unsigned unit%d(unsigned);\n", i);
	fprintf(f, "int main(int argc, char **argv) { unsigned n = (unsigned)argc; (void)argv; return (int)((");
	for (int i = 0; i < SOURCES; i++)
		fprintf(f, "%sunit%d(n)", i ? " + " : "", i);
	fprintf(f, ") & 1u); }\n");
	if (fclose(f))
		return -1;
	snprintf(path, sizeof(path), "%s/Makefile", dir);
	if (!(f = fopen(path, "wx")))
		return -1;
	fprintf(f, "CFLAGS = -O2 -Wall\nOBJS =");
	for (int i = 0; i < SOURCES; i++)
		fprintf(f, " unit%d.o", i);
	fprintf(f, " main.o\nkcompile-project: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n%%.o: %%.c\n\t$(CC) $(CFLAGS) -c -o $@ $<\n"
		"clean:\n\trm -f $(OBJS) kcompile-project\n");
	return fclose(f);
}

/* ---------------------------------------------------------------- launching */

static char *arg(struct load *ld, size_t *used, const char *fmt, ...)
{
	va_list ap;
	char *at = ld->argbuf + *used;
	size_t room = sizeof(ld->argbuf) - *used;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(at, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room)
		n = (int)room - 1; /* cannot happen with the paths' limits; cut, never overrun */
	*used += (size_t)n + 1;
	ld->argv[ld->argc++] = at;
	return at;
}

/* The load's command: values travel as arguments ($1, $2...), never as shell text. */
static void build_argv(struct load *ld, long bound_s)
{
	static const char hackbench[] =
		"while hackbench -g \"$1\" -l 500 >/dev/null; do echo rtgate-hackbench-run; done; exit 1";
	static const char kbuild_tree[] =
		"make -s -C \"$2\" O=\"$3\" defconfig >/dev/null || exit 1; "
		"while make -s -C \"$2\" O=\"$3\" -j \"$1\" >/dev/null; do "
		"echo rtgate-kcompile-run; make -s -C \"$2\" O=\"$3\" clean >/dev/null; done; exit 1";
	static const char kbuild_project[] =
		"while make -s -C \"$2\" -j \"$1\" >/dev/null; do "
		"echo rtgate-kcompile-run; make -s -C \"$2\" clean >/dev/null; done; exit 1";
	const struct load_spec *s = &ld->spec;
	int n = s->workers ? s->workers : ld->ncpus;
	char cpus[MAX_CPUS * 5];
	size_t used = 0;

	ld->argc = 0;
	cpulist(ld, cpus, sizeof(cpus));
	if (is_stress_ng(s->kind)) {
		static const char *const opt[] = {"--cpu", "--vm", "--hdd", "--timerfd", "--icmp-flood"};

		arg(ld, &used, "stress-ng");
		arg(ld, &used, "--taskset");
		arg(ld, &used, "%s", cpus);
		arg(ld, &used, "--metrics-brief");
		arg(ld, &used, "--timeout");
		arg(ld, &used, "%lds", bound_s);
		arg(ld, &used, "--yaml");
		arg(ld, &used, "%s/%s", ld->workdir, YAML_NAME);
		arg(ld, &used, "%s", opt[s->kind]);
		arg(ld, &used, "%d", n);
		if (s->kind == LOAD_MEMORY || s->kind == LOAD_IO) {
			arg(ld, &used, s->kind == LOAD_MEMORY ? "--vm-bytes" : "--hdd-bytes");
			arg(ld, &used, "%s", s->size);
		}
		if (s->kind == LOAD_IO) {
			arg(ld, &used, "--temp-path");
			arg(ld, &used, "%s", ld->workdir);
		}
		if (s->kind == LOAD_TIMER) { /* timerfd: stress-ng 0.15's --timer stops after 65536 operations */
			arg(ld, &used, "--timerfd-freq");
			arg(ld, &used, "100000");
		}
	} else if (s->kind == LOAD_HACKBENCH) {
		arg(ld, &used, "sh");
		arg(ld, &used, "-c");
		arg(ld, &used, "%s", hackbench);
		arg(ld, &used, "rtgate-hackbench");
		arg(ld, &used, "%d", n);
	} else if (s->kind == LOAD_KCOMPILE) {
		arg(ld, &used, "sh");
		arg(ld, &used, "-c");
		arg(ld, &used, "%s", s->tree[0] ? kbuild_tree : kbuild_project);
		arg(ld, &used, "rtgate-kcompile");
		arg(ld, &used, "%d", n);
		if (s->tree[0]) {
			arg(ld, &used, "%s", s->tree);
			arg(ld, &used, "%s/build", ld->workdir);
		} else {
			arg(ld, &used, "%s/project", ld->workdir);
		}
	} else {
		for (int i = 0; i < s->nwords; i++)
			ld->argv[ld->argc++] = (char *)s->words[i];
	}
	ld->argv[ld->argc] = NULL;
}

/* Its tools are here, its tree is one (made absolute: the load runs in its temporary folder): 0, or
 * -1 and the reason it cannot run. */
static int check_tools(struct load *ld, char *why, size_t len)
{
	const char *tools[2] = {"stress-ng", NULL};
	const char *kind = kind_names[ld->spec.kind];

	if (ld->spec.kind == LOAD_HACKBENCH)
		tools[0] = "hackbench";
	else if (ld->spec.kind == LOAD_KCOMPILE)
		tools[0] = "make", tools[1] = "cc";
	else if (ld->spec.kind == LOAD_CUSTOM)
		tools[0] = ld->spec.words[0];
	for (int i = 0; i < 2 && tools[i]; i++) {
		char found[PATH_LEN];

		if (tool_path(tools[i], found, sizeof(found))) {
			const char *pkg = strcmp(tools[i], "hackbench") == 0 ? "rt-tests"
					  : strcmp(tools[i], "cc") == 0     ? "gcc"
									    : tools[i];
			set_err(why, len, "load %s: %s not found (apt-get install %s)", kind, tools[i], pkg);
			return -1;
		}
	}
	if (ld->spec.kind == LOAD_KCOMPILE && ld->spec.tree[0]) {
		char mk[PATH_LEN + 16];
		struct stat st;

		char abs[PATH_MAX];

		snprintf(mk, sizeof(mk), "%s/Makefile", ld->spec.tree);
		if (stat(mk, &st) || !S_ISREG(st.st_mode) || !realpath(ld->spec.tree, abs) ||
		    strlen(abs) >= sizeof(ld->spec.tree)) {
			set_err(why, len, "load kcompile: %s is not a kernel source tree (no Makefile)", ld->spec.tree);
			return -1;
		}
		strcpy(ld->spec.tree, abs);
	}
	return 0;
}

/* In the child, before exec: its own session, its CPUs, stdin /dev/null, output to its log, death
 * with the sampler. Only async-signal-safe calls here. */
static void exec_load(const struct load *ld, pid_t parent, int log_fd)
{
	cpu_set_t set;
	sigset_t none;
	int null_fd;

	setsid();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127); /* the sampler died before the line above */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	CPU_ZERO(&set);
	for (int i = 0; i < ld->ncpus; i++)
		if (ld->cpus[i] < CPU_SETSIZE)
			CPU_SET(ld->cpus[i], &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		_exit(126);
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0)
		_exit(126);
	if (chdir(ld->workdir))
		_exit(126);
	execvp(ld->argv[0], ld->argv);
	_exit(127);
}

/* ---------------------------------------------------------------- the guard */

/*
 * A child outside the loads' sessions and the sampler's process group, blocked reading a pipe: the
 * sampler sends each load's session ('L' pid), then 'D' when it stopped them. At end of file
 * without 'D' (the sampler died, SIGKILL included) or at the bound, it ends every load session and
 * removes the sampler's temporary folders.
 */
struct guard_msg { char type; int pid; };

static void guard_main(int fd, pid_t owner, long bound_s)
{
	pid_t sids[LOAD_MAX];
	int n = 0, done = 0;
	long long deadline = now_ns_mono() + (long long)(bound_s + KILL_AFTER_S) * 1000000000LL;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	setpgid(0, 0);
	for (;;) {
		struct pollfd pfd = {fd, POLLIN, 0};
		long long left = deadline - now_ns_mono();
		struct guard_msg m;

		if (left <= 0) {
			end_sessions(NULL, sids, n);
			deadline = now_ns_mono() + 86400LL * 1000000000LL;
			continue;
		}
		if (poll(&pfd, 1, (int)(left / 1000000 < (1 << 30) ? left / 1000000 + 1 : (1 << 30))) <= 0)
			continue;
		if (read(fd, &m, sizeof(m)) != (ssize_t)sizeof(m))
			break;
		if (m.type == 'L' && n < LOAD_MAX)
			sids[n++] = m.pid;
		else if (m.type == 'D')
			done = 1;
	}
	if (!done) {
		end_sessions(NULL, sids, n);
		reclaim_workdirs(owner);
	}
	_exit(0);
}

static void guard_send(struct loads *ls, char type, pid_t pid)
{
	struct guard_msg m;

	if (ls->guard_fd < 0)
		return;
	memset(&m, 0, sizeof(m));
	m.type = type;
	m.pid = pid;
	if (write(ls->guard_fd, &m, sizeof(m)) != (ssize_t)sizeof(m)) {
		/* the guard is gone: the loads still have their bound and PDEATHSIG */
	}
}

static void guard_start(struct loads *ls, long bound_s)
{
	int fds[2];
	pid_t owner = getpid(), pid;

	if (pipe2(fds, O_CLOEXEC))
		return;
	pid = fork();
	if (pid == 0) {
		close(fds[1]);
		guard_main(fds[0], owner, bound_s);
	}
	close(fds[0]);
	if (pid < 0) {
		close(fds[1]);
		return;
	}
	ls->guard = pid;
	ls->guard_fd = fds[1];
}

/* ---------------------------------------------------------------- start, finish, stop */

static void ticks_now(struct loads *ls, long long *ticks, long long *procs)
{
	long long acc[2 * LOAD_MAX] = {0};
	pid_t sids[LOAD_MAX];

	for (int i = 0; i < ls->n; i++)
		sids[i] = ls->l[i].pid;
	scan_sessions(sids, ls->n, add_ticks, acc);
	for (int i = 0; i < ls->n; i++) {
		ticks[i] = acc[i];
		if (procs)
			procs[i] = acc[LOAD_MAX + i];
	}
}

static int launch(struct loads *ls, struct load *ld, long bound_s)
{
	char tmpl[PATH_LEN];
	int dirfd, log_fd;
	pid_t parent = getpid(), pid;

	snprintf(tmpl, sizeof(tmpl), "%s/%s%d-XXXXXX", tmp_dir(), WORKDIR_PREFIX, (int)parent);
	if (!mkdtemp(tmpl)) {
		set_err(ld->problem, sizeof(ld->problem), "load %s: cannot make its temporary folder in %s: %s",
			 kind_names[ld->spec.kind], tmp_dir(), strerror(errno));
		return -1;
	}
	snprintf(ld->workdir, sizeof(ld->workdir), "%s", tmpl);
	build_argv(ld, bound_s);
	if (ld->spec.kind == LOAD_KCOMPILE && !ld->spec.tree[0]) {
		char project[PATH_LEN + 16];

		snprintf(project, sizeof(project), "%s/project", ld->workdir);
		if (write_bundled_project(project)) {
			set_err(ld->problem, sizeof(ld->problem), "load kcompile: cannot write its project in %s: %s",
				 ld->workdir, strerror(errno));
			return -1;
		}
	}
	dirfd = open_dir(ld->dir);
	if (dirfd < 0) {
		set_err(ld->problem, sizeof(ld->problem), "load %s: cannot make its folder %s: %s",
			 kind_names[ld->spec.kind], ld->dir, strerror(errno));
		return -1;
	}
	/* each run its own log and figures: a repeated run into the same folder starts afresh */
	unlinkat(dirfd, YAML_NAME, 0);
	log_fd = openat(dirfd, "load.log", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	close(dirfd);
	if (log_fd < 0) {
		set_err(ld->problem, sizeof(ld->problem), "load %s: cannot write %s/load.log: %s",
			 kind_names[ld->spec.kind], ld->dir, strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0)
		exec_load(ld, parent, log_fd);
	close(log_fd);
	if (pid < 0) {
		set_err(ld->problem, sizeof(ld->problem), "load %s: cannot start: %s", kind_names[ld->spec.kind],
			 strerror(errno));
		return -1;
	}
	ld->pid = pid;
	guard_send(ls, 'L', pid);
	return 0;
}

/* Sleep for the warm-up; a stop signal (SIGINT, SIGTERM, SIGHUP) ends it at once: the signals are
 * blocked while the flag is read, and ppoll unblocks them atomically. Returns 1 if stopped. */
static int warm_up(double seconds, int (*stopped)(void))
{
	long long end = now_ns_mono() + (long long)(seconds * 1e9);
	sigset_t block, old;
	int stop = 0;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	for (;;) {
		long long left = end - now_ns_mono();
		struct timespec t;

		if ((stop = stopped()) || left <= 0)
			break;
		t.tv_sec = (time_t)(left / 1000000000LL);
		t.tv_nsec = (long)(left % 1000000000LL);
		ppoll(NULL, 0, &t, &old);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return stop;
}

static int alive(struct loads *ls, const struct load *ld)
{
	reap(ls);
	return ld->pid > 0 && !ld->exited;
}


int loads_start(struct loads *ls, double expected_s, int (*stopped)(void))
{
	double warmup = 0.0;
	long bound_s;
	long long ticks[LOAD_MAX];

	if (!ls->n)
		return 0;
	for (int i = 0; i < ls->n; i++) {
		if (check_tools(&ls->l[i], ls->not_measured, sizeof(ls->not_measured)))
			return -1;
		if (ls->l[i].spec.warmup_s > warmup)
			warmup = ls->l[i].spec.warmup_s;
	}
	/* the loads end by themselves after their warm-up and the measurement, with room for a slow start */
	bound_s = (long)(warmup + (expected_s > 0 ? expected_s : 86400.0) * 1.1 + 30);
	reclaim_workdirs(0);
	/* orphaned workers of a load come back to the sampler, which reaps them */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	guard_start(ls, bound_s);
	for (int i = 0; i < ls->n; i++) {
		if (launch(ls, &ls->l[i], bound_s)) {
			set_err(ls->not_measured, sizeof(ls->not_measured), "%s", ls->l[i].problem);
			ls->l[i].problem[0] = '\0';
			loads_stop(ls);
			return -1;
		}
	}
	if (warm_up(warmup, stopped)) {
		ls->stopped_by = stopped();
		set_err(ls->not_measured, sizeof(ls->not_measured), "stopped by %s during the load's warm-up",
			 signal_name(ls->stopped_by) ? signal_name(ls->stopped_by) : "a signal");
		loads_stop(ls);
		return -1;
	}
	for (int i = 0; i < ls->n; i++) {
		struct load *ld = &ls->l[i];

		if (!alive(ls, ld) && !ls->not_measured[0])
			set_err(ls->not_measured, sizeof(ls->not_measured),
				 "the %s load died during its warm-up (see %s/load.log)", kind_names[ld->spec.kind],
				 ld->dir);
	}
	if (ls->not_measured[0]) {
		loads_stop(ls);
		return -1;
	}
	ticks_now(ls, ticks, NULL);
	for (int i = 0; i < ls->n; i++) {
		ls->l[i].start_ticks = ticks[i];
		ls->l[i].start_ns = now_ns_mono();
		ls->l[i].settled = 1;
	}
	return 0;
}

static double min_cpu_percent(const struct load *ld)
{
	const struct load_spec *s = &ld->spec;
	int n = s->workers ? s->workers : ld->ncpus;

	if (is_rate_kind(s->kind))
		return -1.0;
	if (s->min_given)
		return s->min;
	if (s->kind == LOAD_CUSTOM)
		return DEFAULT_CUSTOM_CPU_PERCENT;
	return DEFAULT_CPU_PERCENT_PER_WORKER * (n < ld->ncpus ? n : ld->ncpus);
}

static double min_ops_per_second(const struct load *ld)
{
	if (!is_rate_kind(ld->spec.kind))
		return -1.0;
	return ld->spec.min_given ? ld->spec.min : DEFAULT_OPS_PER_SECOND;
}

static double cpu_percent(const struct load *ld)
{
	return ld->elapsed > 0 ? 100.0 * ld->cpu_seconds / ld->elapsed : 0.0;
}

static const char *unit(const struct load *ld)
{
	switch (ld->spec.kind) {
	case LOAD_IO: return "hdd operations/s";
	case LOAD_NETWORK: return "ICMP packets/s";
	case LOAD_TIMER: return "timer expirations/s";
	default: return "% CPU";
	}
}

/* Python's returncode: the exit status, or minus the signal that ended it. */
static int exit_code(const struct load *ld)
{
	if (WIFSIGNALED(ld->status))
		return -WTERMSIG(ld->status);
	return WEXITSTATUS(ld->status);
}

void loads_finish(struct loads *ls)
{
	long long ticks[LOAD_MAX], procs[LOAD_MAX], now;
	long clk = sysconf(_SC_CLK_TCK);

	if (!ls->n)
		return;
	ticks_now(ls, ticks, procs);
	now = now_ns_mono();
	for (int i = 0; i < ls->n; i++) {
		struct load *ld = &ls->l[i];
		double floor = min_cpu_percent(ld), pct, margin;

		if (!ld->settled || ld->finished)
			continue;
		ld->elapsed = (double)(now - ld->start_ns) / 1e9;
		ld->cpu_seconds = (double)(ticks[i] - ld->start_ticks) / (double)(clk > 0 ? clk : 100);
		if (ld->cpu_seconds < 0)
			ld->cpu_seconds = 0;
		ld->finished = 1;
		if (!alive(ls, ld)) {
			set_err(ld->problem, sizeof(ld->problem),
				 "the %s load stopped during the measurement (exit status %d)", kind_names[ld->spec.kind],
				 exit_code(ld));
			continue;
		}
		if (floor < 0 || ld->elapsed <= 0)
			continue;
		pct = cpu_percent(ld);
		/* each process's times are whole ticks, in each reading: that much above 100 % is rounding */
		margin = 100.0 * 2.0 * (double)procs[i] / ((double)(clk > 0 ? clk : 100) * ld->elapsed);
		if (pct > 100.0 * ld->ncpus + margin) {
			ld->over = 1;
			set_err(ld->problem, sizeof(ld->problem),
				 "the %s load's level cannot be judged: it reached %.1f %% CPU, more than its %d CPU%s "
				 "can give", kind_names[ld->spec.kind], pct, ld->ncpus, ld->ncpus == 1 ? "" : "s");
		} else if (pct < floor) {
			set_err(ld->problem, sizeof(ld->problem), "the %s load reached %.0f %% CPU, below its level of %g %%",
				 kind_names[ld->spec.kind], pct, floor);
		}
	}
}

/* stress-ng's `metrics:` list: one mapping per stressor, kept as written. */
static void parse_metrics(struct load *ld, char *text)
{
	char *line, *save = NULL;
	int in = 0;
	struct load_stressor *cur = NULL;

	ld->nstressors = -1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = line, *colon, *v, *end;

		if (!in) {
			if (strcmp(line, "metrics:") == 0) {
				in = 1;
				ld->nstressors = 0;
			}
			continue;
		}
		if (!isspace((unsigned char)line[0]))
			break;
		while (isspace((unsigned char)*p))
			p++;
		if (p[0] == '-' && p[1] == ' ') {
			cur = ld->nstressors < LOAD_MAX_STRESSORS ? &ld->stressors[ld->nstressors++] : NULL;
			if (cur)
				cur->n = 0;
			p += 2;
			while (isspace((unsigned char)*p))
				p++;
		}
		colon = strstr(p, ": ");
		if (!cur || !colon || cur->n == LOAD_MAX_METRICS)
			continue;
		*colon = '\0';
		v = colon + 2;
		while (isspace((unsigned char)*v))
			v++;
		end = v + strlen(v);
		while (end > v && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (end - v >= 2 && (*v == '\'' || *v == '"') && end[-1] == *v) {
			end[-1] = '\0';
			v++;
		}
		snprintf(cur->m[cur->n].key, sizeof(cur->m[0].key), "%s", p);
		snprintf(cur->m[cur->n].value, sizeof(cur->m[0].value), "%s", v);
		cur->n++;
	}
	/* only the mappings that name their stressor */
	for (int i = 0; i < ld->nstressors; i++) {
		int named = 0;

		for (int k = 0; k < ld->stressors[i].n; k++)
			named |= strcmp(ld->stressors[i].m[k].key, "stressor") == 0;
		if (!named) {
			memmove(&ld->stressors[i], &ld->stressors[i + 1],
				(size_t)(ld->nstressors - i - 1) * sizeof(ld->stressors[0]));
			ld->nstressors--;
			i--;
		}
	}
}

static const char *metric(const struct load_stressor *s, const char *key)
{
	for (int k = 0; k < s->n; k++)
		if (strcmp(s->m[k].key, key) == 0)
			return s->m[k].value;
	return NULL;
}

/* A YAML scalar that is a number: 1 and its value, else 0. */
static int number(const char *v, double *out)
{
	char *end;

	if (!v || !*v || !(isdigit((unsigned char)*v) || *v == '-' || *v == '+' || *v == '.'))
		return 0;
	errno = 0;
	*out = strtod(v, &end);
	return !*end && !errno && isfinite(*out);
}

static int is_integer(const char *v)
{
	return v && *v && strspn(v + (*v == '-'), "0123456789") == strlen(v + (*v == '-')) && v[*v == '-'];
}

/* stress-ng's own rate, bogo-ops per second of real time over its stressors: 1 and the rate, or 0. */
static int ops_per_second(const struct load *ld, double *rate)
{
	double sum = 0, r;

	if (ld->nstressors <= 0)
		return 0;
	for (int i = 0; i < ld->nstressors; i++) {
		if (!number(metric(&ld->stressors[i], "bogo-ops-per-second-real-time"), &r))
			return 0;
		sum += r;
	}
	*rate = sum;
	return 1;
}

static void keep_yaml(struct load *ld)
{
	char path[PATH_LEN + 32];
	char *buf = malloc(YAML_MAX_BYTES + 2);
	ssize_t n, got = 0;
	int fd, dirfd;

	if (!buf)
		return;
	snprintf(path, sizeof(path), "%s/%s", ld->workdir, YAML_NAME);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	while (fd >= 0 && got <= YAML_MAX_BYTES && (n = read(fd, buf + got, (size_t)(YAML_MAX_BYTES + 1 - got))) > 0)
		got += n;
	if (fd >= 0)
		close(fd);
	if (fd >= 0 && got <= YAML_MAX_BYTES) {
		dirfd = open_dir(ld->dir);
		if (dirfd >= 0) {
			write_file_at(dirfd, YAML_NAME, buf, (size_t)got);
			close(dirfd);
		}
		buf[got] = '\0';
		parse_metrics(ld, buf);
	}
	free(buf);
}

static void check_ops_level(struct load *ld)
{
	double floor = min_ops_per_second(ld), rate = 0;

	if (floor < 0 || ld->problem[0] || !ld->finished)
		return;
	if (!ops_per_second(ld, &rate))
		set_err(ld->problem, sizeof(ld->problem),
			 "the %s load's level cannot be judged: stress-ng wrote no metrics (%s/%s)",
			 kind_names[ld->spec.kind], ld->dir, YAML_NAME);
	else if (rate < floor)
		set_err(ld->problem, sizeof(ld->problem), "the %s load reached %g %s, below its level of %g",
			 kind_names[ld->spec.kind], rate, unit(ld), floor);
}

/* hackbench and kcompile: the runs their loop logged. */
static long long count_runs(const struct load *ld, const char *marker)
{
	char path[PATH_LEN + 16], *line = NULL;
	size_t cap = 0;
	long long count = 0, total = 0;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/load.log", ld->dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (total < LOG_READ_MAX && (n = getline(&line, &cap, f)) > 0) {
		total += n;
		for (const char *p = line; (p = strstr(p, marker)); p += strlen(marker))
			count++;
	}
	free(line);
	fclose(f);
	return count;
}

void loads_stop(struct loads *ls)
{
	pid_t sids[LOAD_MAX];

	for (int i = 0; i < ls->n; i++)
		sids[i] = ls->l[i].stopped ? 0 : ls->l[i].pid;
	if (ls->n && end_sessions(ls, sids, ls->n)) {
		for (int i = 0; i < ls->n; i++) {
			char left[LOAD_REASON_LEN] = "";

			scan_sessions(&sids[i], 1, note_left, left);
			if (left[0] && !ls->l[i].problem[0])
				set_err(ls->l[i].problem, sizeof(ls->l[i].problem),
					 "load processes [%s] survived SIGKILL", left);
		}
	}
	for (int i = 0; i < ls->n; i++) {
		struct load *ld = &ls->l[i];

		if (ld->stopped)
			continue;
		ld->stopped = 1;
		if (ld->pid > 0 && is_stress_ng(ld->spec.kind))
			keep_yaml(ld);
		remove_tree(ld->workdir);
		ld->workdir[0] = '\0';
		if (ld->pid > 0 && ld->spec.kind == LOAD_HACKBENCH)
			ld->runs = count_runs(ld, "rtgate-hackbench-run");
		if (ld->pid > 0 && ld->spec.kind == LOAD_KCOMPILE)
			ld->runs = count_runs(ld, "rtgate-kcompile-run");
		check_ops_level(ld);
	}
	if (ls->guard_fd >= 0) {
		guard_send(ls, 'D', 0);
		close(ls->guard_fd);
		ls->guard_fd = -1;
		for (int k = 0; k < 100 && ls->guard > 0; k++) {
			reap(ls);
			if (ls->guard > 0)
				sleep_ms(10);
		}
	}
}

/* ---------------------------------------------------------------- the record */

/* A float as Python's repr writes it: the shortest text that reads back the same. */
static void json_double(FILE *f, double x)
{
	char buf[40];
	int p, e;

	if (!isfinite(x)) {
		fputs("null", f);
		return;
	}
	for (p = 1; p < 17; p++) {
		snprintf(buf, sizeof(buf), "%.*e", p - 1, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	snprintf(buf, sizeof(buf), "%.*e", p - 1, x);
	e = atoi(strchr(buf, 'e') + 1);
	if (x != 0 && (e < -4 || e >= 16)) {
		fputs(buf, f);
		return;
	}
	fprintf(f, "%.*f", p - 1 - e > 1 ? p - 1 - e : 1, x);
}

/* Python's round(x, digits), written as a float. */
static void json_round(FILE *f, double x, int digits)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.*f", digits, x);
	json_double(f, strtod(buf, NULL));
}

static void json_value(FILE *f, const char *v)
{
	double d;

	if (is_integer(v))
		fputs(v, f);
	else if (number(v, &d))
		json_double(f, d);
	else
		json_string(f, v);
}

static void write_metrics(FILE *f, const struct load *ld)
{
	fputs(", \"stress_ng\": [", f);
	for (int i = 0; i < ld->nstressors; i++) {
		const struct load_stressor *s = &ld->stressors[i];

		fputs(i ? ", {" : "{", f);
		for (int k = 0; k < s->n; k++) {
			fputs(k ? ", " : "", f);
			json_string(f, s->m[k].key);
			fputs(": ", f);
			json_value(f, s->m[k].value);
		}
		fputs("}", f);
	}
	fputs("], \"bogo_ops\": {", f);
	for (int i = 0; i < ld->nstressors; i++) {
		const char *v = metric(&ld->stressors[i], "bogo-ops");

		fputs(i ? ", " : "", f);
		json_string(f, metric(&ld->stressors[i], "stressor"));
		fputs(": ", f);
		if (v)
			json_value(f, v);
		else
			fputs("null", f);
	}
	fputs("}", f);
}

static void write_level(FILE *f, const struct load *ld, double floor, int known, double reached, int digits)
{
	fputs(", \"level\": {\"unit\": ", f);
	json_string(f, unit(ld));
	fputs(", \"min\": ", f);
	json_double(f, floor);
	fputs(", \"reached\": ", f);
	if (known)
		json_round(f, reached, digits);
	else
		fputs("null", f);
	fputs("}", f);
}

static void write_one(FILE *f, const struct load *ld)
{
	double rate = 0;

	fputs("{\"kind\": ", f);
	json_string(f, kind_names[ld->spec.kind]);
	fputs(", \"command\": [", f);
	for (int i = 0; i < ld->argc; i++) {
		fputs(i ? ", " : "", f);
		json_string(f, ld->argv[i]);
	}
	fputs("], \"cpus\": [", f);
	for (int i = 0; i < ld->ncpus; i++)
		fprintf(f, "%s%d", i ? ", " : "", ld->cpus[i]);
	fputs("], \"pgid\": ", f);
	if (ld->pid > 0)
		fprintf(f, "%d", (int)ld->pid);
	else
		fputs("null", f);
	fputs(", \"cpu_seconds\": ", f);
	json_round(f, ld->cpu_seconds, 3);
	fputs(", \"cpu_percent\": ", f);
	if (ld->over) /* more than its CPUs can give: an error in the record, never a figure */
		fputs("null", f);
	else
		json_round(f, cpu_percent(ld), 1);
	fputs(", \"seconds\": ", f);
	json_round(f, ld->elapsed, 3);
	fputs(", \"problem\": ", f);
	if (ld->problem[0])
		json_string(f, ld->problem);
	else
		fputs("null", f);
	if (ld->spec.kind == LOAD_HACKBENCH)
		fprintf(f, ", \"hackbench_loops\": %lld", HACKBENCH_LOOPS * ld->runs);
	if (ld->spec.kind == LOAD_KCOMPILE) {
		fprintf(f, ", \"builds\": %lld, \"tree\": ", ld->runs);
		json_string(f, ld->spec.tree[0] ? ld->spec.tree : "bundled C project");
	}
	if (!is_rate_kind(ld->spec.kind)) {
		char buf[32];

		/* "reached" is the recorded cpu_percent, already rounded */
		snprintf(buf, sizeof(buf), "%.1f", cpu_percent(ld));
		write_level(f, ld, min_cpu_percent(ld), !ld->over, strtod(buf, NULL), 1);
	}
	if (ld->nstressors >= 0)
		write_metrics(f, ld);
	if (is_rate_kind(ld->spec.kind)) {
		int known = ops_per_second(ld, &rate);

		write_level(f, ld, min_ops_per_second(ld), known, rate, 3);
	}
	fputs("}", f);
}

int load_problems(const struct loads *ls, char out[][LOAD_REASON_LEN], int max)
{
	int n = 0;

	for (int i = 0; i < ls->n && n < max; i++)
		if (ls->l[i].problem[0])
			snprintf(out[n++], LOAD_REASON_LEN, "%s", ls->l[i].problem);
	return n;
}

void load_write_json(FILE *f, const struct loads *ls)
{
	unsigned char cpus[MAX_CPUS] = {0};
	char joined[LOAD_MAX * (LOAD_REASON_LEN + 2)];
	int first = 1;

	if (!ls->n) {
		fputs("{\"kind\": \"none\"}", f);
		return;
	}
	if (ls->n == 1) {
		write_one(f, &ls->l[0]);
		return;
	}
	fputs("{\"kind\": \"", f);
	for (int i = 0; i < ls->n; i++) {
		fprintf(f, "%s%s", i ? "+" : "", kind_names[ls->l[i].spec.kind]);
		for (int c = 0; c < ls->l[i].ncpus; c++)
			cpus[ls->l[i].cpus[c]] = 1;
	}
	fputs("\", \"cpus\": [", f);
	for (int c = 0; c < MAX_CPUS; c++)
		if (cpus[c]) {
			fprintf(f, "%s%d", first ? "" : ", ", c);
			first = 0;
		}
	fputs("], \"problem\": ", f);
	joined[0] = '\0';
	for (int i = 0; i < ls->n; i++) /* Loads.problem: every load's, "; " between them */
		if (ls->l[i].problem[0])
			snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%s", joined[0] ? "; " : "",
				 ls->l[i].problem);
	if (joined[0])
		json_string(f, joined);
	else
		fputs("null", f);
	fputs(", \"loads\": [", f);
	for (int i = 0; i < ls->n; i++) {
		fputs(i ? ", " : "", f);
		write_one(f, &ls->l[i]);
	}
	fputs("]}", f);
}
