// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The machine record: a port of the Python capture rtgate made before (tests/reference_environment.py
 * capture() and tests/reference_machine.py describe()), key by key. Python's text reading is followed where it shows
 * in values: universal newlines, str.strip(), undecodable bytes as U+FFFD, its regular
 * expressions' exact matches (written out by hand below, each beside the pattern it follows).
 * The record is built as a small JSON tree in the struct's fixed storage; the accessors read it.
 */
#include "sysinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

enum { J_NULL, J_TRUE, J_FALSE, J_INT, J_NUM, J_STR, J_CPUS, J_OBJ, J_ARR };

/* kept for the last members: the machine's "unknown" saying the record was cut short, root, euid */
#define RESERVE_NODES 8
#define RESERVE_POOL 4096
/* CPUs in one list: Linux has at most 8192 (NR_CPUS), so a longer list ("0-4000000000") is no
 * kernel's; it is cut there, and the record says so */
#define MAX_LIST_CPUS 8192

/* ---- the tree ---- */

static uint32_t pool_add(struct sysinfo *s, const void *p, size_t n, int nul)
{
	uint32_t at = s->used_pool;

	if (n + (size_t)nul > SYSINFO_POOL - (s->finishing ? 0 : RESERVE_POOL) - at) {
		s->truncated = 1;
		return 0;
	}
	memcpy(s->pool + at, p, n);
	if (nul)
		s->pool[at + n] = 0;
	s->used_pool = at + (uint32_t)(n + (size_t)nul);
	return at;
}

/* A new node, not yet linked. 0: storage full. */
static uint32_t mk(struct sysinfo *s, const char *key, int type)
{
	uint32_t k = 0, i;

	if (key) {
		k = pool_add(s, key, strlen(key), 1);
		if (!k)
			return 0;
	}
	if (s->used_nodes >= SYSINFO_NODES - (s->finishing ? 0 : RESERVE_NODES)) {
		s->truncated = 1;
		return 0;
	}
	i = s->used_nodes++;
	memset(&s->node[i], 0, sizeof(s->node[i]));
	s->node[i].key = k;
	s->node[i].type = (uint8_t)type;
	return i;
}

static uint32_t put(struct sysinfo *s, uint32_t parent, uint32_t child)
{
	struct sysinfo_node *p = &s->node[parent];

	if (!parent || !child)
		return child;
	if (p->v.c.last)
		s->node[p->v.c.last].next = child;
	else
		p->v.c.first = child;
	p->v.c.last = child;
	return child;
}

/* The children of a detached holder appended to parent, in their order. */
static void adopt(struct sysinfo *s, uint32_t parent, uint32_t holder)
{
	struct sysinfo_node *h = &s->node[holder];

	if (!parent || !holder || !h->v.c.first)
		return;
	if (s->node[parent].v.c.last)
		s->node[s->node[parent].v.c.last].next = h->v.c.first;
	else
		s->node[parent].v.c.first = h->v.c.first;
	s->node[parent].v.c.last = h->v.c.last;
	h->v.c.first = h->v.c.last = 0;
}

static uint32_t add(struct sysinfo *s, uint32_t parent, const char *key, int type)
{
	return parent ? put(s, parent, mk(s, key, type)) : 0;
}

static uint32_t add_int(struct sysinfo *s, uint32_t parent, const char *key, int64_t v)
{
	uint32_t n = add(s, parent, key, J_INT);

	if (n)
		s->node[n].v.i = v;
	return n;
}

static uint32_t add_bool(struct sysinfo *s, uint32_t parent, const char *key, int v)
{
	return add(s, parent, key, v ? J_TRUE : J_FALSE);
}

/* Appends src[0..n) to dst as Python's UTF-8 decoder with errors="replace" reads it: each
 * maximal invalid subpart becomes one U+FFFD. Returns the bytes written (dst holds 3n). */
static size_t utf8_clean(char *dst, const char *src, size_t n)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t i = 0, o = 0;

	while (i < n) {
		unsigned c = p[i];
		size_t need = 0, k;
		unsigned lo = 0x80, hi = 0xbf;

		if (c < 0x80) {
			dst[o++] = (char)c;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 1;
		else if (c >= 0xe0 && c <= 0xef) {
			need = 2;
			lo = c == 0xe0 ? 0xa0 : 0x80;
			hi = c == 0xed ? 0x9f : 0xbf;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3;
			lo = c == 0xf0 ? 0x90 : 0x80;
			hi = c == 0xf4 ? 0x8f : 0xbf;
		}
		for (k = 1; k <= need && i + k < n; k++) {
			unsigned b = p[i + k];
			if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xbf))
				break;
		}
		if (need && k == need + 1) {
			memcpy(dst + o, p + i, need + 1);
			o += need + 1;
			i += need + 1;
		} else {
			memcpy(dst + o, "\xef\xbf\xbd", 3);
			o += 3;
			i += need ? k : 1;
		}
	}
	return o;
}

static uint32_t add_strn(struct sysinfo *s, uint32_t parent, const char *key, const char *v, size_t n)
{
	uint32_t node, off;
	char *clean;
	size_t m;

	if (!v)
		return add(s, parent, key, J_NULL);
	if (!parent)
		return 0;
	clean = malloc(3 * n + 1);
	if (!clean) {
		s->truncated = 1;
		return 0;
	}
	m = utf8_clean(clean, v, n);
	off = pool_add(s, clean, m, 1);
	free(clean);
	if (!off)
		return 0;
	node = add(s, parent, key, J_STR);
	if (node) {
		s->node[node].v.s.off = off;
		s->node[node].v.s.len = (uint32_t)m;
	}
	return node;
}

static uint32_t add_str(struct sysinfo *s, uint32_t parent, const char *key, const char *v)
{
	return add_strn(s, parent, key, v, v ? strlen(v) : 0);
}

static uint32_t child(const struct sysinfo *s, uint32_t parent, const char *key)
{
	if (!parent || (s->node[parent].type != J_OBJ))
		return 0;
	for (uint32_t c = s->node[parent].v.c.first; c; c = s->node[c].next)
		if (s->node[c].key && strcmp(s->pool + s->node[c].key, key) == 0)
			return c;
	return 0;
}

static const char *str_of(const struct sysinfo *s, uint32_t n)
{
	return n && s->node[n].type == J_STR ? s->pool + s->node[n].v.s.off : NULL;
}

/* ---- Python's text reading ---- */

/* Length of the str.isspace() character ending at end (0: none), for UTF-8 text. */
static size_t space_before(const char *start, const char *end)
{
	const unsigned char *e = (const unsigned char *)end;
	size_t avail = (size_t)(end - start);

	if (avail >= 1 && ((e[-1] >= 9 && e[-1] <= 13) || (e[-1] >= 0x1c && e[-1] <= 0x20)))
		return 1;
	if (avail >= 2 && e[-2] == 0xc2 && (e[-1] == 0x85 || e[-1] == 0xa0))
		return 2;
	if (avail >= 3) {
		unsigned a = e[-3], b = e[-2], c = e[-1];
		if ((a == 0xe1 && b == 0x9a && c == 0x80) || (a == 0xe3 && b == 0x80 && c == 0x80) ||
		    (a == 0xe2 && b == 0x80 && ((c >= 0x80 && c <= 0x8a) || c == 0xa8 || c == 0xa9 || c == 0xaf)) ||
		    (a == 0xe2 && b == 0x81 && c == 0x9f))
			return 3;
	}
	return 0;
}

static size_t space_at(const char *p, const char *end)
{
	for (size_t n = 1; n <= 3 && (size_t)(end - p) >= n; n++)
		if (space_before(p, p + n) == n)
			return n;
	return 0;
}

static int is_space(int c)
{
	return (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x20);
}

static int is_word(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

struct ctx {
	struct sysinfo *s;
	char base[4096];     /* root without its trailing slashes: "" for "/" */
	uint32_t unknown;    /* machine.unknown */
};

/* The whole file, NUL-terminated, in a malloc'd buffer. NULL and *err = errno on failure. */
static char *slurp(const char *path, size_t *len, int *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 4096, n = 0;
	char *buf;

	if (fd < 0) {
		*err = errno;
		return NULL;
	}
	buf = malloc(cap);
	for (;;) {
		ssize_t r;

		if (buf && n + 1 >= cap) {
			char *bigger = realloc(buf, cap * 2);
			if (!bigger) {
				free(buf);
				buf = NULL;
			} else {
				buf = bigger;
				cap *= 2;
			}
		}
		if (!buf) {
			*err = ENOMEM;
			break;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*err = errno;
			free(buf);
			buf = NULL;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (buf) {
		buf[n] = 0;
		*len = n;
	}
	return buf;
}

static void set_unknown(struct ctx *c, const char *item, const char *reason)
{
	struct sysinfo *s = c->s;
	uint32_t old = child(s, c->unknown, item);

	if (old) { /* a dict keeps the first place and the last value */
		uint32_t tmp = add_str(s, c->unknown, NULL, reason);
		if (tmp) {
			s->node[old].v = s->node[tmp].v;
			s->node[old].type = s->node[tmp].type;
			s->node[c->unknown].v.c.last = 0; /* unlink tmp: it is the last child */
			for (uint32_t k = s->node[c->unknown].v.c.first; k; k = s->node[k].next)
				if (s->node[k].next == tmp) {
					s->node[k].next = 0;
					s->node[c->unknown].v.c.last = k;
				}
		}
		return;
	}
	add_str(s, c->unknown, item, reason);
}

/* Python's open(...).read() in text mode: universal newlines, then .strip(). Returns the text
 * (malloc'd; free it) or NULL; with an item, a failure is recorded in machine.unknown. */
static char *text_len(struct ctx *c, const char *rel, const char *item, size_t *len)
{
	char path[8192];
	size_t n = 0, o = 0, i;
	int err = 0;
	char *buf, *start, *end;

	snprintf(path, sizeof(path), "%s/%s", c->base, rel);
	buf = slurp(path, &n, &err);
	if (!buf) {
		if (item) {
			char why[512];
			snprintf(why, sizeof(why), "/%s: %s", rel, strerror(err));
			set_unknown(c, item, why);
		}
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (buf[i] == '\r') {
			buf[o++] = '\n';
			if (i + 1 < n && buf[i + 1] == '\n')
				i++;
		} else {
			buf[o++] = buf[i];
		}
	}
	start = buf;
	end = buf + o;
	for (size_t k; start < end && (k = space_at(start, end)); start += k)
		;
	for (size_t k; end > start && (k = space_before(start, end)); end -= k)
		;
	*len = (size_t)(end - start);
	memmove(buf, start, *len);
	buf[*len] = 0;
	return buf;
}

static char *text(struct ctx *c, const char *rel, const char *item)
{
	size_t n;

	return text_len(c, rel, item, &n);
}

/* ---- CPU lists: "0-2,5" kept as ranges, written out as Python's list ---- */

/* parse_cpulist(): each comma-separated part that fullmatches \s*(\d+)(?:-(\d+))?\s* */
static uint32_t add_cpulist(struct sysinfo *s, uint32_t parent, const char *key, const char *t)
{
	uint64_t ranges[2 * 512], total = 0;
	int nr = 0;
	uint32_t node, off;

	if (!t)
		return add(s, parent, key, J_NULL);
	while (t) {
		const char *comma = strchr(t, ',');
		const char *e = comma ? comma : t + strlen(t), *p = t;
		uint64_t a = 0, b;
		int da = 0, db = 0, ok = 1;

		while (p < e && is_space((unsigned char)*p))
			p++;
		for (; p < e && is_digit((unsigned char)*p); p++, da++)
			ok &= (a = a * 10 + (uint64_t)(*p - '0')) < (1ULL << 40);
		b = a;
		if (p < e && *p == '-' && da) {
			b = 0;
			for (p++; p < e && is_digit((unsigned char)*p); p++, db++)
				ok &= (b = b * 10 + (uint64_t)(*p - '0')) < (1ULL << 40);
			ok &= db > 0;
		}
		while (p < e && is_space((unsigned char)*p))
			p++;
		if (ok && da && p == e && b >= a && total >= MAX_LIST_CPUS) {
			s->truncated = 1;
		} else if (ok && da && p == e && b >= a) {
			if (b - a >= MAX_LIST_CPUS - total) {
				b = a + (MAX_LIST_CPUS - total) - 1;
				s->truncated = 1;
			}
			total += b - a + 1;
			if (nr == 512)
				s->truncated = 1;
			else {
				ranges[2 * nr] = a;
				ranges[2 * nr + 1] = b;
				nr++;
			}
		}
		t = comma ? comma + 1 : NULL;
	}
	off = nr ? pool_add(s, ranges, (size_t)nr * 2 * sizeof(uint64_t), 0) : 0;
	if (nr && !off)
		return 0;
	node = add(s, parent, key, J_CPUS);
	if (node) {
		s->node[node].v.s.off = off;
		s->node[node].v.s.len = (uint32_t)nr;
	}
	return node;
}

static void cpus_range(const struct sysinfo *s, uint32_t n, uint32_t i, uint64_t *a, uint64_t *b)
{
	uint64_t r[2];

	memcpy(r, s->pool + s->node[n].v.s.off + i * sizeof(r), sizeof(r));
	*a = r[0];
	*b = r[1];
}

static int cpus_of(const struct sysinfo *s, uint32_t n, int *cpus, int max)
{
	int count = 0;

	if (!n || s->node[n].type != J_CPUS)
		return -1;
	for (uint32_t i = 0; i < s->node[n].v.s.len; i++) {
		uint64_t a, b;

		cpus_range(s, n, i, &a, &b);
		for (uint64_t c = a; c <= b; c++, count++)
			if (count < max && cpus)
				cpus[count] = c > (uint64_t)INT32_MAX ? -1 : (int)c;
	}
	return count;
}

/* ---- directory listings ---- */

/* Entries of dir whose names are prefix + digits (what glob("prefix[0-9]*") lists and int()
 * reads), as numbers, ascending. Returns the count; *out is malloc'd (free it). */
static int numbered(const char *dir, const char *prefix, long **out)
{
	DIR *d = opendir(dir);
	size_t plen = strlen(prefix);
	int n = 0, cap = 0;
	struct dirent *e;

	*out = NULL;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		const char *p = e->d_name + plen;
		char *endp;
		long v;

		if (strncmp(e->d_name, prefix, plen) || !is_digit((unsigned char)*p))
			continue;
		errno = 0;
		v = strtol(p, &endp, 10);
		if (*endp || errno)
			continue;
		if (n == cap) {
			long *bigger = realloc(*out, (size_t)(cap = cap ? 2 * cap : 64) * sizeof(long));
			if (!bigger)
				break;
			*out = bigger;
		}
		(*out)[n++] = v;
	}
	closedir(d);
	for (int i = 1; i < n; i++) /* insertion sort: a few hundred entries at most */
		for (int j = i; j > 0 && (*out)[j - 1] > (*out)[j]; j--) {
			long t = (*out)[j];
			(*out)[j] = (*out)[j - 1];
			(*out)[j - 1] = t;
		}
	return n;
}

/* ---- environment.py ---- */

enum { K_RT, K_DYNAMIC, K_PREEMPT, K_VOLUNTARY, K_NONE, K_COUNT };

/* The config lines findall(r"^(CONFIG_PREEMPT\w*)=(\w+)", re.M) reads, last one winning. */
static void scan_config(const char *t, char yes[K_COUNT])
{
	static const char *names[K_COUNT] = {
		"CONFIG_PREEMPT_RT", "CONFIG_PREEMPT_DYNAMIC", "CONFIG_PREEMPT", "CONFIG_PREEMPT_VOLUNTARY",
		"CONFIG_PREEMPT_NONE",
	};

	for (const char *line = t; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *p = line, *v;
		size_t nlen, vlen;

		if (strncmp(p, "CONFIG_PREEMPT", 14))
			continue;
		for (p += 14; is_word((unsigned char)*p); p++)
			;
		nlen = (size_t)(p - line);
		if (*p != '=')
			continue;
		for (v = ++p; is_word((unsigned char)*p); p++)
			;
		vlen = (size_t)(p - v);
		if (!vlen)
			continue;
		for (int k = 0; k < K_COUNT; k++)
			if (strlen(names[k]) == nlen && !strncmp(line, names[k], nlen))
				yes[k] = vlen == 1 && *v == 'y' ? 'y' : 'n';
	}
}

/* /proc/config.gz through `gzip -dc` (else `zcat`): the static sampler carries no zlib. */
static char *gunzip(const char *path)
{
	static const char *const tools[] = {"gzip", "zcat"};

	for (size_t t = 0; t < 2; t++) {
		char *argv[] = {(char *)tools[t], (char *)"-dc", (char *)"--", (char *)path, NULL};
		posix_spawn_file_actions_t fa;
		int pipefd[2], status = -1, spawned;
		size_t n = 0, cap = 64 * 1024;
		char *buf;
		pid_t pid, reaped;

		if (t == 1)
			argv[1] = (char *)"-c";
		if (pipe2(pipefd, O_CLOEXEC))
			return NULL;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
		spawned = posix_spawnp(&pid, tools[t], &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
		close(pipefd[1]);
		if (spawned) {
			close(pipefd[0]);
			continue;
		}
		buf = malloc(cap);
		for (;;) {
			ssize_t r;

			if (buf && n + 1 >= cap) {
				char *bigger = realloc(buf, cap * 2);
				if (!bigger)
					free(buf);
				buf = bigger;
				cap *= 2;
			}
			if (!buf)
				break;
			r = read(pipefd[0], buf + n, cap - n - 1);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			n += (size_t)r;
		}
		close(pipefd[0]);
		while ((reaped = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
			;
		if (reaped != pid) /* reaped by someone else: its verdict is unknown, and so the text */
			status = -1;
		if (buf && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			buf[n] = 0;
			return buf;
		}
		free(buf);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 127)
			return NULL; /* the tool ran and refused the file: another would too */
	}
	return NULL;
}

static void kernel_config(struct ctx *c, const char *release, char yes[K_COUNT])
{
	char rel[512], path[8192];
	struct stat st;
	char *t = NULL;

	if (release && release[0]) {
		snprintf(rel, sizeof(rel), "boot/config-%s", release);
		t = text(c, rel, NULL);
	}
	snprintf(path, sizeof(path), "%s/proc/config.gz", c->base);
	if (!t && stat(path, &st) == 0 && S_ISREG(st.st_mode))
		t = gunzip(path);
	if (t)
		scan_config(t, yes);
	free(t);
}

/* A word of `text` equal to `word` with \b on both sides (ASCII \w). */
static int has_word(const char *t, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = t; t && (p = strstr(p, word)); p++)
		if ((p == t || !is_word((unsigned char)p[-1])) && !is_word((unsigned char)p[n]))
			return 1;
	return 0;
}

static const char *mode_name(const char *m, size_t n)
{
	if (n == 4 && !strncmp(m, "full", 4))
		return "PREEMPT";
	if (n == 9 && !strncmp(m, "voluntary", 9))
		return "VOLUNTARY";
	if (n == 4 && !strncmp(m, "none", 4))
		return "NONE";
	return NULL;
}

/* environment.preemption_model(): model and source, in its order of evidence. */
static void preemption_model(struct ctx *c, const char *release, const char *version, const char *cmdline,
			     char *model, size_t mlen, char *source, size_t slen)
{
	char yes[K_COUNT] = {0};
	char *rt = text(c, "sys/kernel/realtime", NULL), *dyn;
	int is_rt = rt && strcmp(rt, "1") == 0;

	free(rt);
	if (is_rt) {
		snprintf(model, mlen, "PREEMPT_RT");
		snprintf(source, slen, "/sys/kernel/realtime");
		return;
	}
	kernel_config(c, release, yes);
	if (yes[K_RT] == 'y') {
		snprintf(model, mlen, "PREEMPT_RT");
		snprintf(source, slen, "kernel config");
		return;
	}
	if (version && strstr(version, "PREEMPT_RT")) {
		snprintf(model, mlen, "PREEMPT_RT");
		snprintf(source, slen, "kernel version");
		return;
	}
	dyn = text(c, "sys/kernel/debug/sched/preempt", NULL); /* e.g. "none voluntary (full)" */
	for (const char *p = dyn; p && (p = strchr(p, '(')); p++) { /* re.search(r"\((\w+)\)") */
		const char *w = p + 1, *e = w;

		while (is_word((unsigned char)*e))
			e++;
		if (e > w && *e == ')') {
			const char *name = mode_name(w, (size_t)(e - w));

			if (name)
				snprintf(model, mlen, "%s", name);
			else
				snprintf(model, mlen, "%.*s", (int)(e - w), w);
			snprintf(source, slen, "/sys/kernel/debug/sched/preempt");
			free(dyn);
			return;
		}
	}
	free(dyn);
	/* re.search(r"(?:^|\s)preempt=(none|voluntary|full)\b", cmdline) */
	if (yes[K_DYNAMIC] == 'y' || (version && strstr(version, "PREEMPT_DYNAMIC"))) {
		for (const char *p = cmdline; (p = strstr(p, "preempt=")); p++) {
			static const char *const modes[] = {"none", "voluntary", "full"};

			if (p != cmdline && !is_space((unsigned char)p[-1]))
				continue;
			for (int k = 0; k < 3; k++) {
				size_t n = strlen(modes[k]);

				if (!strncmp(p + 8, modes[k], n) && !is_word((unsigned char)p[8 + n])) {
					snprintf(model, mlen, "%s", mode_name(modes[k], n));
					snprintf(source, slen, "preempt= on the kernel command line (PREEMPT_DYNAMIC)");
					return;
				}
			}
		}
	}
	for (int k = K_PREEMPT; k <= K_NONE; k++) {
		if (yes[k] == 'y') {
			snprintf(model, mlen, "%s", k == K_PREEMPT ? "PREEMPT" : k == K_VOLUNTARY ? "VOLUNTARY" : "NONE");
			snprintf(source, slen, "kernel config%s",
				 yes[K_DYNAMIC] == 'y' ? " (PREEMPT_DYNAMIC boot default)" : "");
			return;
		}
	}
	if (has_word(version, "PREEMPT")) {
		snprintf(model, mlen, "PREEMPT");
		snprintf(source, slen, strstr(version, "DYNAMIC") ? "kernel version (PREEMPT_DYNAMIC: mode unknown)"
								  : "kernel version");
		return;
	}
	snprintf(model, mlen, "unknown");
	snprintf(source, slen, "no source");
}

/* Start of the value of re.search(r"^KEY\s*:\s*(.+)$", t, re.M) for a line at `line`, else NULL. */
static const char *field_value(const char *line, const char *key, const char **vend)
{
	size_t n = strlen(key);
	const char *p = line + n, *colon, *k;

	if (strncmp(line, key, n))
		return NULL;
	while (is_space((unsigned char)*p))
		p++;
	if (*p != ':')
		return NULL;
	colon = p++;
	while (is_space((unsigned char)*p))
		p++;
	/* the greedy \s* gives back characters until (.+) finds one that is not a newline */
	for (k = p; k > colon + 1 && (!*k || *k == '\n'); k--)
		;
	if (!*k || *k == '\n' || k == colon)
		return NULL;
	*vend = strchr(k, '\n');
	if (!*vend)
		*vend = k + strlen(k);
	return k;
}

static const char *next_line(const char *p)
{
	p = strchr(p, '\n');
	return p ? p + 1 : NULL;
}

static int is_number_text(const char *t, size_t n)
{
	/* what float() reads as a finite number: [+-] digits [. digits] | . digits, then [e [+-] digits] */
	size_t i = 0, d = 0, e = 0;

	if (i < n && (t[i] == '-' || t[i] == '+'))
		i++;
	for (; i < n && is_digit((unsigned char)t[i]); i++)
		d++;
	if (i < n && t[i] == '.')
		for (i++; i < n && is_digit((unsigned char)t[i]); i++)
			d++;
	if (d && i < n && (t[i] == 'e' || t[i] == 'E')) {
		i++;
		if (i < n && (t[i] == '-' || t[i] == '+'))
			i++;
		for (; i < n && is_digit((unsigned char)t[i]); i++)
			e++;
		if (!e)
			return 0;
	}
	return d && i == n;
}

/* float(x) as JSON: the shortest text that reads back as the same double, as Python's repr. */
static uint32_t add_float(struct sysinfo *s, uint32_t parent, const char *t, size_t n)
{
	char in[64], out[64];
	double v;
	uint32_t node, off;

	if (!is_number_text(t, n) || n >= sizeof(in))
		return add(s, parent, NULL, J_NULL);
	memcpy(in, t, n);
	in[n] = 0;
	v = strtod(in, NULL);
	if (v != v || v - v != 0) /* 1e999: Python writes Infinity, which is no JSON */
		return add(s, parent, NULL, J_NULL);
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(out, sizeof(out), "%.*e", prec - 1, v);
		if (strtod(out, NULL) == v) {
			int exp = atoi(strchr(out, 'e') + 1);

			if (exp >= -4 && exp < 16) /* repr() writes these without an exponent */
				snprintf(out, sizeof(out), "%.*f", prec - 1 - exp > 0 ? prec - 1 - exp : 0, v);
			break;
		}
	}
	if (!strpbrk(out, ".e"))
		strcat(out, ".0");
	off = pool_add(s, out, strlen(out), 1);
	node = off ? add(s, parent, NULL, J_NUM) : 0;
	if (node) {
		s->node[node].v.s.off = off;
		s->node[node].v.s.len = (uint32_t)strlen(out);
	}
	return node;
}

static void loadavg(struct ctx *c, uint32_t sys)
{
	char *t = text(c, "proc/loadavg", NULL);
	const char *p = t;
	uint32_t list;
	int k = 0;

	if (!t || !*t) {
		free(t);
		add(c->s, sys, "loadavg", J_NULL);
		return;
	}
	list = add(c->s, sys, "loadavg", J_ARR);
	while (k < 3 && *p) {
		const char *e = p;

		while (*e && !space_at(e, e + strlen(e)))
			e++;
		add_float(c->s, list, p, (size_t)(e - p));
		k++;
		while (*e && space_at(e, e + strlen(e)))
			e += space_at(e, e + strlen(e));
		p = e;
	}
	free(t);
}

static const char *const VENDORS[] = {"QEMU", "KVM", "VMware", "Microsoft", "Xen", "innotek", "Amazon EC2", "Google"};

static int contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return 1;
	return 0;
}

/*
 * An Arm guest has neither DMI nor a cpuinfo flag: its devicetree says so (environment.py's
 * _devicetree_virtualisation). QEMU's virt machine is "linux,dummy-virt"; a KVM or Xen guest's tree
 * has a /hypervisor node. The first tree with a compatible decides. Returns 1 when it added the key.
 */
static int devicetree_virtualisation(struct ctx *c, uint32_t sys)
{
	static const char *const dt[] = {"proc/device-tree", "sys/firmware/devicetree/base"};
	static const char virt[] = "linux,dummy-virt";

	for (size_t k = 0; k < 2; k++) {
		char path[8400], name[512];
		size_t len;
		int err;
		char *raw;

		snprintf(path, sizeof(path), "%s/%s/hypervisor/compatible", c->base, dt[k]);
		if ((raw = slurp(path, &len, &err))) {
			size_t first = strnlen(raw, len); /* the first string; bytes not UTF-8 the writer replaces */

			if (first)
				snprintf(name, sizeof(name), "hypervisor (devicetree %.*s)", (int)(first < 400 ? first : 400),
					 raw);
			else
				snprintf(name, sizeof(name), "hypervisor (devicetree hypervisor node)");
			free(raw);
			c->s->n_virt = add_str(c->s, sys, "virtualisation", name);
			return 1;
		}
		snprintf(path, sizeof(path), "%s/%s/compatible", c->base, dt[k]);
		if (!(raw = slurp(path, &len, &err)))
			continue;
		for (size_t i = 0; i < len; i += strnlen(raw + i, len - i) + 1) {
			if (strnlen(raw + i, len - i) == sizeof(virt) - 1 && !memcmp(raw + i, virt, sizeof(virt) - 1)) {
				free(raw);
				c->s->n_virt = add_str(c->s, sys, "virtualisation", "QEMU (devicetree linux,dummy-virt)");
				return 1;
			}
		}
		free(raw);
		return 0;
	}
	return 0;
}

static void virtualisation(struct ctx *c, uint32_t sys, const char *cpuinfo)
{
	static const char *const rels[] = {"sys/hypervisor/type", "sys/class/dmi/id/sys_vendor",
					   "sys/class/dmi/id/product_name"};

	for (size_t r = 0; r < 3; r++) {
		char *t = text(c, rels[r], NULL);

		for (size_t v = 0; t && v < sizeof(VENDORS) / sizeof(VENDORS[0]); v++) {
			if (contains_nocase(t, VENDORS[v])) {
				c->s->n_virt = add_str(c->s, sys, "virtualisation", VENDORS[v]);
				free(t);
				return;
			}
		}
		free(t);
	}
	/* re.search(r"^flags\s*:.*\bhypervisor\b", cpuinfo, re.M) */
	for (const char *line = cpuinfo; line; line = next_line(line)) {
		const char *p = line + 5, *eol;
		char one[4096];

		if (strncmp(line, "flags", 5))
			continue;
		while (is_space((unsigned char)*p))
			p++;
		if (*p != ':')
			continue;
		eol = strchr(p, '\n');
		if (!eol)
			eol = p + strlen(p);
		for (const char *q = p; q < eol;) { /* the line, in pieces: has_word needs a string */
			size_t n = (size_t)(eol - q) < sizeof(one) - 1 ? (size_t)(eol - q) : sizeof(one) - 1;

			if (n < (size_t)(eol - q)) /* cut at a space so no word is split */
				while (n > 1 && !is_space((unsigned char)q[n - 1]))
					n--;
			memcpy(one, q, n);
			one[n] = 0;
			if (has_word(one, "hypervisor")) {
				c->s->n_virt = add_str(c->s, sys, "virtualisation", "hypervisor (cpuinfo flag)");
				return;
			}
			q += n;
		}
	}
	if (!devicetree_virtualisation(c, sys))
		add(c->s, sys, "virtualisation", J_NULL);
}

static void isolation(struct ctx *c, uint32_t sys, const char *cmdline)
{
	static const char *const keys[] = {"isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"};
	const char *value[4] = {0};
	size_t vlen[4] = {0};
	int order[4], n = 0;
	uint32_t iso = add(c->s, sys, "isolation", J_OBJ);
	const char *end = cmdline + strlen(cmdline);

	for (const char *p = cmdline; p < end;) { /* cmdline.split() */
		const char *w, *eq;
		size_t k;

		while (p < end && (k = space_at(p, end)))
			p += k;
		for (w = p; p < end && !space_at(p, end); p++)
			;
		if (p == w)
			break;
		eq = memchr(w, '=', (size_t)(p - w));
		for (int i = 0; i < 4; i++) {
			size_t klen = (size_t)((eq ? eq : p) - w);

			if (strlen(keys[i]) != klen || strncmp(w, keys[i], klen))
				continue;
			if (!value[i])
				order[n++] = i;
			value[i] = eq ? eq + 1 : p;
			vlen[i] = (size_t)(p - value[i]);
		}
	}
	for (int j = 0; j < n; j++) {
		int i = order[j];
		uint32_t o = add(c->s, iso, keys[i], J_OBJ);
		char *v = strndup(value[i], vlen[i]);

		add_str(c->s, o, "value", v);
		if (i == 0)
			c->s->n_isolcpus = add_cpulist(c->s, o, "cpus", v);
		else
			add_cpulist(c->s, o, "cpus", v);
		free(v);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void governors(struct ctx *c, uint32_t sys)
{
	char dir[8192];
	long *cpus;
	int n;
	char **names;
	uint32_t g = add(c->s, sys, "governors", J_OBJ);

	c->s->n_governors = g;
	snprintf(dir, sizeof(dir), "%s/sys/devices/system/cpu", c->base);
	n = numbered(dir, "cpu", &cpus);
	names = calloc((size_t)n + 1, sizeof(*names));
	for (int i = 0; names && i < n; i++) {
		names[i] = malloc(32);
		if (names[i])
			snprintf(names[i], 32, "%ld/", cpus[i]); /* sorted() of the paths: "cpu1/" < "cpu10/" */
	}
	if (names)
		qsort(names, (size_t)n, sizeof(*names), cmp_str);
	for (int i = 0; names && i < n; i++) {
		char rel[128], key[32], *t;
		size_t len;

		if (!names[i])
			continue;
		snprintf(key, sizeof(key), "%.*s", (int)strlen(names[i]) - 1, names[i]);
		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%s/cpufreq/scaling_governor", key);
		t = text_len(c, rel, NULL, &len);
		if (t)
			add_strn(c->s, g, key, t, len);
		free(t);
	}
	for (int i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	free(cpus);
}

static uint32_t add_int_text(struct sysinfo *s, uint32_t parent, const char *key, const char *t, int sign)
{
	/* int(t) where re.fullmatch(r"-?\d+") (sign) or t.isdigit() says it is one */
	const char *p = t;
	char *end;
	long long v;

	if (t && sign && *p == '-')
		p++;
	if (!t || !is_digit((unsigned char)*p))
		return add(s, parent, key, J_NULL);
	while (is_digit((unsigned char)*p))
		p++;
	if (*p)
		return add(s, parent, key, J_NULL);
	errno = 0;
	v = strtoll(t, &end, 10);
	if (errno)
		return add(s, parent, key, J_NULL);
	return add_int(s, parent, key, v);
}

static void describe(struct ctx *c, uint32_t machine);

/* ---- the record ---- */

static void normalise_root(const char *root, char *out, size_t cap)
{
	/* str(Path(root)): empty and "." parts go, and trailing slashes; exactly two leading slashes stay */
	size_t o = 0;
	const char *p = root;

	if (*p == '/') {
		out[o++] = '/';
		if (p[1] == '/' && p[2] != '/')
			out[o++] = '/';
	}
	while (*p) {
		const char *start;
		size_t n;

		while (*p == '/')
			p++;
		for (start = p; *p && *p != '/'; p++)
			;
		n = (size_t)(p - start);
		if (n == 0 || (n == 1 && *start == '.'))
			continue;
		if (o + n + 2 >= cap)
			break;
		if (o && out[o - 1] != '/')
			out[o++] = '/';
		memcpy(out + o, start, n);
		o += n;
	}
	if (o == 0)
		out[o++] = '.';
	out[o] = 0;
}

int sysinfo_capture(struct sysinfo *s, const char *root)
{
	static struct ctx c;
	char normal[4096], model[64], source[96];
	char *release, *version, *cmdline, *cpuinfo, *runtime, *period;
	size_t rl, vl, cl, il;
	uint32_t sys, machine;
	int count = 0;

	if (!root || !*root)
		return -1;
	memset(s, 0, offsetof(struct sysinfo, node));
	s->used_nodes = 1;  /* node 0: "none" */
	s->used_pool = 1;   /* offset 0: "none" */
	s->pool[0] = 0;
	memset(&c, 0, sizeof(c));
	c.s = s;
	normalise_root(root, normal, sizeof(normal));
	s->live = strcmp(normal, "/") == 0;
	snprintf(c.base, sizeof(c.base), "%s", normal);
	for (size_t n = strlen(c.base); n && c.base[n - 1] == '/'; n--)
		c.base[n - 1] = 0;
	sys = mk(s, NULL, J_OBJ);
	release = text_len(&c, "proc/sys/kernel/osrelease", NULL, &rl);
	version = text_len(&c, "proc/sys/kernel/version", NULL, &vl);
	cmdline = text_len(&c, "proc/cmdline", NULL, &cl);
	if (!cmdline)
		cmdline = strdup("");
	preemption_model(&c, release, version, cmdline ? cmdline : "", model, sizeof(model), source, sizeof(source));
	s->n_release = release ? add_strn(s, sys, "kernel_release", release, rl) : add(s, sys, "kernel_release", J_NULL);
	version ? add_strn(s, sys, "kernel_version", version, vl) : add(s, sys, "kernel_version", J_NULL);
	s->n_preemption = add_str(s, sys, "preemption", model);
	s->n_source = add_str(s, sys, "preemption_source", source);
	add_str(s, sys, "cmdline", cmdline ? cmdline : "");
	isolation(&c, sys, cmdline ? cmdline : "");
	cpuinfo = text_len(&c, "proc/cpuinfo", NULL, &il);
	if (!cpuinfo)
		cpuinfo = strdup("");
	{
		const char *model_at = NULL, *vend = NULL;

		for (const char *line = cpuinfo; cpuinfo && line; line = next_line(line)) {
			const char *p = NULL;

			if (!model_at && ((p = field_value(line, "model name", &vend)) ||
					  (p = field_value(line, "Model", &vend)) || (p = field_value(line, "Hardware", &vend))))
				model_at = p;
			if (!strncmp(line, "processor", 9)) { /* ^processor\s*: */
				const char *q = line + 9;
				while (is_space((unsigned char)*q))
					q++;
				count += *q == ':';
			}
		}
		model_at ? add_strn(s, sys, "cpu_model", model_at, (size_t)(vend - model_at)) : add(s, sys, "cpu_model", J_NULL);
	}
	s->n_cpu_count = count ? add_int(s, sys, "cpu_count", count) : add(s, sys, "cpu_count", J_NULL);
	governors(&c, sys);
	runtime = text(&c, "proc/sys/kernel/sched_rt_runtime_us", NULL);
	period = text(&c, "proc/sys/kernel/sched_rt_period_us", NULL);
	s->n_runtime = add_int_text(s, sys, "sched_rt_runtime_us", runtime, 1);
	add_int_text(s, sys, "sched_rt_period_us", period, 0);
	virtualisation(&c, sys, cpuinfo ? cpuinfo : "");
	loadavg(&c, sys);
	machine = add(s, sys, "machine", J_OBJ);
	describe(&c, machine);
	s->live ? add(s, sys, "root", J_NULL) : add_str(s, sys, "root", normal);
	s->live ? add_int(s, sys, "euid", (int64_t)geteuid()) : add(s, sys, "euid", J_NULL);
	free(release);
	free(version);
	free(cmdline);
	free(cpuinfo);
	free(runtime);
	free(period);
	return 0;
}

/* ---- machine.py ---- */

struct proc {
	long pid;
	char *comm;
};

static int processes(struct ctx *c, struct proc **out)
{
	char dir[8192];
	DIR *d;
	struct dirent *e;
	int n = 0, cap = 0;

	*out = NULL;
	snprintf(dir, sizeof(dir), "%s/proc", c->base);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char rel[300], *comm, *endp;
		long pid;

		if (!is_digit((unsigned char)e->d_name[0]))
			continue;
		pid = strtol(e->d_name, &endp, 10);
		if (*endp)
			continue;
		snprintf(rel, sizeof(rel), "proc/%s/comm", e->d_name);
		comm = text(c, rel, NULL);
		if (!comm)
			continue;
		if (n == cap) {
			struct proc *bigger = realloc(*out, (size_t)(cap = cap ? 2 * cap : 256) * sizeof(**out));
			if (!bigger) {
				free(comm);
				break;
			}
			*out = bigger;
		}
		(*out)[n].pid = pid;
		(*out)[n++].comm = comm;
	}
	closedir(d);
	return n;
}

/* '[madvise]' of 'always [madvise] never': re.search(r"\[([^\]]+)\]"), else the text. */
static void add_selected(struct sysinfo *s, uint32_t parent, const char *key, const char *t)
{
	for (const char *p = t; p && (p = strchr(p, '[')); p++) {
		const char *e = strchr(p + 1, ']');

		if (!e)
			break;
		if (e > p + 1) {
			add_strn(s, parent, key, p + 1, (size_t)(e - p - 1));
			return;
		}
	}
	add_str(s, parent, key, t);
}

static void topology(struct ctx *c, uint32_t machine)
{
	struct sysinfo *s = c->s;
	char dir[8192];
	long *cpus, packages[256];
	int n, npack = 0, any_siblings = 0, multi = 0;
	char *smt, *online, *active;
	uint32_t topo = add(s, machine, "topology", J_OBJ), list;

	snprintf(dir, sizeof(dir), "%s/sys/devices/system/cpu", c->base);
	n = numbered(dir, "cpu", &cpus);
	if (!n)
		set_unknown(c, "topology", "/sys/devices/system/cpu: no cpuN directories");
	smt = text(c, "sys/devices/system/cpu/smt/control", "smt");
	online = text(c, "sys/devices/system/cpu/online", "online_cpus");
	s->n_online = add_cpulist(s, topo, "online", online);
	add_str(s, topo, "smt_control", smt);
	active = smt ? text(c, "sys/devices/system/cpu/smt/active", NULL) : NULL;
	/* smt_active is known once the CPUs are read: keep its place */
	uint32_t smt_active = add(s, topo, "smt_active", J_NULL);
	uint32_t npackages = add(s, topo, "packages", J_NULL);

	list = add(s, topo, "cpus", J_OBJ);
	for (int i = 0; i < n; i++) {
		char rel[256], key[32], *t, sdir[8400];
		long *states;
		int ns;
		uint32_t cpu, idle;

		snprintf(key, sizeof(key), "%ld", cpus[i]);
		cpu = add(s, list, key, J_OBJ);
		static const char *const ids[][2] = {{"core", "core_id"}, {"package", "physical_package_id"}};
		for (int k = 0; k < 2; k++) {
			const char *p;

			snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%ld/topology/%s", cpus[i], ids[k][1]);
			t = text(c, rel, NULL);
			p = t && *t == '-' ? t + 1 : t;
			if (p && *p && strspn(p, "0123456789") == strlen(p)) {
				long long v = strtoll(t, NULL, 10);
				add_int(s, cpu, ids[k][0], v);
				if (k == 1) {
					int seen = 0;
					for (int j = 0; j < npack; j++)
						seen |= packages[j] == v;
					if (!seen && npack < 256)
						packages[npack++] = (long)v;
				}
			} else {
				add(s, cpu, ids[k][0], J_NULL);
			}
			free(t);
		}
		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%ld/topology/thread_siblings_list", cpus[i]);
		t = text(c, rel, NULL);
		{
			uint32_t sib = add_cpulist(s, cpu, "siblings", t);
			int count = sib ? cpus_of(s, sib, NULL, 0) : -1;

			if (count > 0)
				any_siblings = 1;
			if (count > 1)
				multi = 1;
		}
		free(t);
		idle = add(s, cpu, "idle_states", J_ARR);
		snprintf(sdir, sizeof(sdir), "%s/cpu%ld/cpuidle", dir, cpus[i]);
		ns = numbered(sdir, "state", &states);
		for (int j = 0; j < ns; j++) {
			uint32_t st = add(s, idle, NULL, J_OBJ);
			char *lat, *dis;

			snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%ld/cpuidle/state%ld/name", cpus[i], states[j]);
			t = text(c, rel, NULL);
			add_str(s, st, "name", t);
			free(t);
			snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%ld/cpuidle/state%ld/latency", cpus[i], states[j]);
			lat = text(c, rel, NULL);
			add_int_text(s, st, "exit_latency_us", lat, 0);
			free(lat);
			snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%ld/cpuidle/state%ld/disable", cpus[i], states[j]);
			dis = text(c, rel, NULL);
			add_bool(s, st, "disabled", dis && strcmp(dis, "1") == 0);
			free(dis);
		}
		free(states);
	}
	if (smt_active && smt)
		s->node[smt_active].type = active && strcmp(active, "1") == 0 ? J_TRUE : J_FALSE;
	else if (smt_active && any_siblings)
		s->node[smt_active].type = multi ? J_TRUE : J_FALSE;
	if (npackages && npack) {
		s->node[npackages].type = J_INT;
		s->node[npackages].v.i = npack;
	}
	free(smt);
	free(online);
	free(active);
	free(cpus);
}

static void pm_qos(struct ctx *c, uint32_t machine, struct proc *procs, int np)
{
	struct sysinfo *s = c->s;
	uint32_t holders;

	if (!s->live) {
		add(s, machine, "pm_qos_holders", J_NULL);
		return;
	}
	if (geteuid() != 0) {
		set_unknown(c, "pm_qos_holders", "reading other processes' file descriptors needs root");
		add(s, machine, "pm_qos_holders", J_NULL);
		return;
	}
	holders = add(s, machine, "pm_qos_holders", J_ARR);
	for (int i = 0; i < np; i++) {
		char dir[64];
		DIR *d;
		struct dirent *e;

		snprintf(dir, sizeof(dir), "/proc/%ld/fd", procs[i].pid);
		d = opendir(dir);
		if (!d)
			continue;
		while ((e = readdir(d))) {
			char link[600], target[64];
			ssize_t n;

			if (e->d_name[0] == '.')
				continue;
			snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
			n = readlink(link, target, sizeof(target) - 1);
			if (n == 20 && !memcmp(target, "/dev/cpu_dma_latency", 20)) {
				uint32_t h = add(s, holders, NULL, J_OBJ);
				add_int(s, h, "pid", procs[i].pid);
				add_str(s, h, "comm", procs[i].comm);
				break;
			}
		}
		closedir(d);
	}
}

struct irqname {
	const char *irq, *name;
	size_t irqlen, namelen;
};

/* The IRQ names of /proc/interrupts: re.match(r"\s*(\d+):((?:\s+\d+)+)\s+(.*)$") on each line
 * after the first; the name is the last word of the third group. */
static int irq_names(char *t, struct irqname **out)
{
	int n = 0, cap = 0;
	const char *line = t ? next_line(t) : NULL;

	*out = NULL;
	for (; line; line = next_line(line)) {
		const char *eol = strchr(line, '\n'), *p = line, *num, *rest = NULL, *w, *we;
		size_t numlen;

		if (!eol)
			eol = line + strlen(line);
		while (p < eol && is_space((unsigned char)*p))
			p++;
		for (num = p; p < eol && is_digit((unsigned char)*p); p++)
			;
		numlen = (size_t)(p - num);
		if (!numlen || p >= eol || *p != ':')
			continue;
		p++;
		/* (?:\s+\d+)+ then \s+: the last all-digit word that whitespace follows ends the counts */
		for (;;) {
			const char *ws = p, *d;

			while (p < eol && is_space((unsigned char)*p))
				p++;
			if (p == ws)
				break;
			for (d = p; p < eol && is_digit((unsigned char)*p); p++)
				;
			if (p == d || (p < eol && !is_space((unsigned char)*p)))
				break;
			if (p < eol) {
				const char *r = p;
				while (r < eol && is_space((unsigned char)*r))
					r++;
				rest = r;
			}
		}
		if (!rest)
			continue;
		/* " ".join(group(3).split()[-1:]) */
		we = eol;
		while (we > rest && is_space((unsigned char)we[-1]))
			we--;
		for (w = we; w > rest && !is_space((unsigned char)w[-1]); w--)
			;
		if (n == cap) {
			struct irqname *bigger = realloc(*out, (size_t)(cap = cap ? 2 * cap : 64) * sizeof(**out));
			if (!bigger)
				break;
			*out = bigger;
		}
		(*out)[n].irq = num;
		(*out)[n].irqlen = numlen;
		(*out)[n].name = w;
		(*out)[n++].namelen = (size_t)(we - w);
	}
	return n;
}

static void irqs(struct ctx *c, uint32_t machine)
{
	struct sysinfo *s = c->s;
	char *t = text(c, "proc/interrupts", "irqs"), *def, dir[8192];
	struct irqname *names;
	int nn = irq_names(t, &names), n;
	long *nums;
	uint32_t obj = add(s, machine, "irqs", J_OBJ), aff;

	def = text(c, "proc/irq/default_smp_affinity", NULL);
	add_str(s, obj, "default_affinity", def);
	free(def);
	aff = add(s, obj, "affinity", J_OBJ);
	snprintf(dir, sizeof(dir), "%s/proc/irq", c->base);
	n = numbered(dir, "", &nums);
	for (int i = 0; i < n; i++) {
		char rel[128], key[32], *list;
		uint32_t one;
		int found = -1;

		snprintf(key, sizeof(key), "%ld", nums[i]);
		snprintf(rel, sizeof(rel), "proc/irq/%ld/smp_affinity_list", nums[i]);
		list = text(c, rel, NULL);
		if (list) {
			one = add(s, aff, key, J_OBJ);
			add_cpulist(s, one, "cpus", list);
			for (int k = nn - 1; k >= 0 && found < 0; k--) /* a later line wins, as in a dict */
				if (names[k].irqlen == strlen(key) && !strncmp(names[k].irq, key, names[k].irqlen))
					found = k;
			if (found >= 0)
				add_strn(s, one, "name", names[found].name, names[found].namelen);
			else
				add(s, one, "name", J_NULL);
		}
		free(list);
	}
	free(nums);
	free(names);
	free(t);
}

static void memory(struct ctx *c, uint32_t machine)
{
	struct sysinfo *s = c->s;
	char *t = text(c, "proc/meminfo", "memory"), dir[8192];
	long long total = -1, avail = -1;
	long *nodes;
	int n;
	uint32_t mem = add(s, machine, "memory", J_OBJ), list;

	for (const char *line = t; line; line = next_line(line)) {
		/* re.match(r"(\w+):\s+(\d+)\s*kB") */
		const char *p = line, *num;
		long long v;

		while (is_word((unsigned char)*p))
			p++;
		if (p == line || *p != ':' || !is_space((unsigned char)p[1]))
			continue;
		for (p++; is_space((unsigned char)*p); p++)
			;
		for (num = p; is_digit((unsigned char)*p); p++)
			;
		if (p == num)
			continue;
		v = strtoll(num, NULL, 10);
		while (is_space((unsigned char)*p))
			p++;
		if (strncmp(p, "kB", 2))
			continue;
		if (!strncmp(line, "MemTotal:", 9))
			total = v;
		else if (!strncmp(line, "MemAvailable:", 13))
			avail = v;
	}
	total >= 0 ? add_int(s, mem, "total_kib", total) : add(s, mem, "total_kib", J_NULL);
	avail >= 0 ? add_int(s, mem, "available_kib", avail) : add(s, mem, "available_kib", J_NULL);
	snprintf(dir, sizeof(dir), "%s/sys/devices/system/node", c->base);
	n = numbered(dir, "node", &nodes);
	list = n ? add(s, mem, "numa_nodes", J_ARR) : add(s, mem, "numa_nodes", J_NULL);
	for (int i = 0; i < n; i++)
		add_int(s, list, NULL, nodes[i]);
	free(nodes);
	free(t);
}

static void modules(struct ctx *c, uint32_t machine)
{
	struct sysinfo *s = c->s;
	char *t = text(c, "proc/modules", "modules");
	char **names = NULL;
	int n = 0, cap = 0;
	uint32_t list;

	if (!t || !*t) {
		free(t);
		add(s, machine, "modules", J_NULL);
		return;
	}
	for (char *line = t; line;) { /* line.split()[0] of every line with more than whitespace */
		char *eol = strchr(line, '\n'), *w = line, *e;

		if (eol)
			*eol = 0;
		while (*w && is_space((unsigned char)*w))
			w++;
		for (e = w; *e && !is_space((unsigned char)*e); e++)
			;
		if (e > w) {
			*e = 0;
			if (n == cap) {
				char **bigger = realloc(names, (size_t)(cap = cap ? 2 * cap : 128) * sizeof(*names));
				if (!bigger)
					break;
				names = bigger;
			}
			names[n++] = w;
		}
		line = eol ? eol + 1 : NULL;
	}
	if (names)
		qsort(names, (size_t)n, sizeof(*names), cmp_str);
	list = add(s, machine, "modules", J_ARR);
	for (int i = 0; i < n; i++)
		add_str(s, list, NULL, names[i]);
	free(names);
	free(t);
}

struct rt_thread {
	const char *comm;
	long pid;
	int policy;
	long long priority;
};

static int cmp_rt(const void *a, const void *b)
{
	const struct rt_thread *x = a, *y = b;
	int d;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	d = strcmp(x->comm, y->comm);
	return d ? d : (x->pid > y->pid) - (x->pid < y->pid);
}

static int valid_utf8(const char *t, size_t n)
{
	char *tmp = malloc(3 * n + 1);
	int ok = tmp && utf8_clean(tmp, t, n) == n && !memcmp(tmp, t, n);

	free(tmp);
	return ok;
}

/* Field i (0 = the state) after the last ')' of a stat line, as Python's int() reads it. */
static int stat_fields(const char *t, long long *out, const int *want, int nwant)
{
	const char *p = strrchr(t, ')');
	int field = 0, got = 0;

	if (!p)
		return -1;
	for (p++; *p;) {
		const char *w;

		while (*p && is_space((unsigned char)*p))
			p++;
		if (!*p)
			break;
		for (w = p; *p && !is_space((unsigned char)*p); p++)
			;
		for (int k = 0; k < nwant; k++) {
			if (want[k] != field)
				continue;
			const char *d = w + (*w == '-' || *w == '+');
			char *end;
			if (d == p || strspn(d, "0123456789") < (size_t)(p - d))
				return -1;
			errno = 0;
			out[k] = strtoll(w, &end, 10);
			if (errno)
				return -1;
			got++;
		}
		field++;
	}
	return got == nwant ? 0 : -1;
}

#define PF_KTHREAD 0x00200000

static const char *rt_policy(long long p)
{
	return p == 1 ? "FIFO" : p == 2 ? "RR" : p == 6 ? "DEADLINE" : NULL;
}

static void rt_kernel_threads(struct ctx *c, uint32_t machine, struct proc *procs, int np)
{
	struct sysinfo *s = c->s;
	struct rt_thread *found;
	int n = 0;
	uint32_t list;

	if (!np) {
		set_unknown(c, "rt_kernel_threads", "/proc: no process entries");
		add(s, machine, "rt_kernel_threads", J_NULL);
		return;
	}
	found = calloc((size_t)np, sizeof(*found));
	for (int i = 0; found && i < np; i++) {
		static const int want[3] = {6, 37, 38};
		char path[8300];
		long long f[3];
		size_t len;
		int err;
		char *t;

		if (s->live) {
			/* one system call, not a stat read, for a task that is not real-time now */
			int pol = sched_getscheduler((pid_t)procs[i].pid);
			if (pol >= 0 && !rt_policy(pol & ~0x40000000))
				continue;
		}
		snprintf(path, sizeof(path), "%s/proc/%ld/stat", c->base, procs[i].pid);
		t = slurp(path, &len, &err);
		if (!t || !valid_utf8(t, len) || stat_fields(t, f, want, 3) ||
		    !(f[0] & PF_KTHREAD) || !rt_policy(f[2])) {
			free(t);
			continue;
		}
		free(t);
		found[n].comm = procs[i].comm;
		found[n].pid = procs[i].pid;
		found[n].priority = f[1];
		found[n++].policy = (int)f[2];
	}
	if (found)
		qsort(found, (size_t)n, sizeof(*found), cmp_rt);
	list = add(s, machine, "rt_kernel_threads", J_ARR);
	for (int i = 0; i < n; i++) {
		uint32_t o = add(s, list, NULL, J_OBJ);

		add_str(s, o, "comm", found[i].comm);
		add_int(s, o, "pid", found[i].pid);
		add_str(s, o, "policy", rt_policy(found[i].policy));
		add_int(s, o, "priority", found[i].priority);
	}
	free(found);
}

static void board(struct ctx *c, uint32_t machine)
{
	static const char *const dmi[] = {"sys_vendor", "product_name", "board_name", "bios_version"};
	static const char *const dt[] = {"proc/device-tree", "sys/firmware/devicetree/base"};
	struct sysinfo *s = c->s;
	uint32_t b = add(s, machine, "board", J_OBJ);

	for (size_t k = 0; k < 4; k++) {
		char rel[128], key[64], *t;
		size_t len;

		snprintf(rel, sizeof(rel), "sys/class/dmi/id/%s", dmi[k]);
		snprintf(key, sizeof(key), "dmi_%s", dmi[k]);
		t = text_len(c, rel, NULL, &len);
		if (t && len) {
			uint32_t n = add_strn(s, b, key, t, len);
			if (k == 1)
				s->n_dmi_product = n;
		}
		free(t);
	}
	for (size_t k = 0; k < 2; k++) {
		char path[8400];
		size_t len, mlen;
		int err;
		struct stat st;
		char *raw, *model;
		uint32_t list;

		snprintf(path, sizeof(path), "%s/%s/compatible", c->base, dt[k]);
		raw = slurp(path, &len, &err);
		if (!raw)
			continue;
		snprintf(path, sizeof(path), "%s/%s/model", c->base, dt[k]);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (model = slurp(path, &mlen, &err))) {
			while (mlen && model[mlen - 1] == 0) /* .rstrip("\0") */
				mlen--;
			s->n_dt_model = add_strn(s, b, "dt_model", model, mlen);
			free(model);
		}
		list = add(s, b, "dt_compatible", J_ARR);
		s->n_compatible = list;
		for (size_t i = 0; i < len;) {
			size_t e = i;

			while (e < len && raw[e])
				e++;
			if (e > i)
				add_strn(s, list, NULL, raw + i, e - i);
			i = e + 1;
		}
		free(raw);
		break;
	}
	if (!s->node[b].v.c.first)
		set_unknown(c, "board", "neither DMI (/sys/class/dmi/id) nor a devicetree (/proc/device-tree) is present");
}

static const char *const TUNING_SERVICES[] = {
	"irqbalance", "tuned", "power-profiles-daemon", "thermald", "rtkit-daemon", "cpupower", "stalld", "tlp",
};

static int has_comm(struct proc *procs, int np, const char *comm)
{
	for (int i = 0; i < np; i++)
		if (!strcmp(procs[i].comm, comm))
			return 1;
	return 0;
}

static void describe(struct ctx *c, uint32_t machine)
{
	struct sysinfo *s = c->s;
	struct proc *procs;
	int np = processes(c, &procs);
	char *t, *t2;
	const char *svc[8] = {0};
	int nsvc = 0;
	uint32_t list, qos_value, identity;

	/* unknown goes last in the object but collects reasons from the start */
	c->unknown = mk(s, "unknown", J_OBJ);
	/* board and architecture are read first, written last: require.c judges the machine by them,
	 * and a record cut short on a large machine must still hold them */
	identity = mk(s, NULL, J_OBJ);
	board(c, identity);
	if (s->live) {
		struct utsname u;
		s->n_architecture = uname(&u) == 0 ? add_str(s, identity, "architecture", u.machine)
						   : add(s, identity, "architecture", J_NULL);
	} else {
		add(s, identity, "architecture", J_NULL);
	}
	t = text(c, "sys/devices/system/clocksource/clocksource0/current_clocksource", "clocksource");
	add_str(s, machine, "clocksource", t);
	free(t);
	t = text(c, "sys/devices/system/clocksource/clocksource0/available_clocksource", NULL);
	if (t && *t) {
		list = add(s, machine, "clocksources_available", J_ARR);
		for (char *w = strtok(t, " \t\n\v\f\r\x1c\x1d\x1e\x1f"); w; w = strtok(NULL, " \t\n\v\f\r\x1c\x1d\x1e\x1f"))
			add_str(s, list, NULL, w);
	} else {
		add(s, machine, "clocksources_available", J_NULL);
	}
	free(t);
	topology(c, machine);
	t = text(c, "sys/devices/system/cpu/cpuidle/current_driver", "cpuidle_driver");
	add_str(s, machine, "cpuidle_driver", t);
	free(t);
	t = text(c, "sys/devices/system/cpu/cpuidle/current_governor_ro", NULL);
	if (!t || !*t) {
		free(t);
		t = text(c, "sys/devices/system/cpu/cpuidle/current_governor", NULL);
	}
	add_str(s, machine, "cpuidle_governor", t);
	free(t);
	qos_value = add(s, machine, "pm_qos_latency_us", J_NULL);
	if (s->live && geteuid() == 0) {
		size_t len;
		int err;
		char *raw = slurp("/dev/cpu_dma_latency", &len, &err);

		if (!raw) {
			char why[256];
			snprintf(why, sizeof(why), "/dev/cpu_dma_latency: %s", strerror(err));
			set_unknown(c, "pm_qos_value", why);
		} else if (len >= 4 && qos_value) {
			int32_t v;
			unsigned char *u = (unsigned char *)raw;
			uint32_t le = (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
			memcpy(&v, &le, sizeof(v));
			s->node[qos_value].type = J_INT;
			s->node[qos_value].v.i = v;
		}
		free(raw);
	}
	pm_qos(c, machine, procs, np);
	np ? add_bool(s, machine, "irqbalance_running", has_comm(procs, np, "irqbalance"))
	   : add(s, machine, "irqbalance_running", J_NULL);
	irqs(c, machine);
	t = text(c, "proc/sys/kernel/timer_migration", "timer_migration");
	add_str(s, machine, "timer_migration", t);
	free(t);
	t = text(c, "sys/kernel/mm/transparent_hugepage/enabled", "thp");
	add_selected(s, machine, "transparent_hugepage", t);
	free(t);
	t = text(c, "sys/kernel/mm/transparent_hugepage/defrag", NULL);
	add_selected(s, machine, "transparent_hugepage_defrag", t);
	free(t);
	memory(c, machine);
	modules(c, machine);
	for (size_t k = 0; k < 8; k++)
		if (has_comm(procs, np, TUNING_SERVICES[k]))
			svc[nsvc++] = TUNING_SERVICES[k];
	qsort(svc, (size_t)nsvc, sizeof(svc[0]), cmp_str);
	list = add(s, machine, "services", J_ARR);
	for (int i = 0; i < nsvc; i++)
		add_str(s, list, NULL, svc[i]);
	rt_kernel_threads(c, machine, procs, np);
	t = text(c, "etc/tuned/active_profile", NULL);
	add_str(s, machine, "tuned_profile", t);
	free(t);
	t = text(c, "sys/devices/system/cpu/isolated", "isolated_cpus");
	add_cpulist(s, machine, "isolated_cpus", t);
	free(t);
	t2 = text(c, "sys/devices/system/cpu/nohz_full", NULL);
	add_cpulist(s, machine, "nohz_full_cpus", t2);
	adopt(s, machine, identity);
	if (!t2 && !child(s, c->unknown, "nohz_full_cpus"))
		set_unknown(c, "nohz_full_cpus", "/sys/devices/system/cpu/nohz_full: absent (CONFIG_NO_HZ_FULL off)");
	free(t2);
	s->finishing = 1;
	if (s->truncated)
		set_unknown(c, "record", "cut short: this machine has more than rtgate-sampler's record holds");
	put(s, machine, c->unknown);
	for (int i = 0; i < np; i++)
		free(procs[i].comm);
	free(procs);
}

/* ---- writing ---- */

static void json_text(FILE *f, const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;

	fputc('"', f);
	/* ASCII only, as Python's json.dumps writes it; '<' too, so no "<LAVA_" ever reaches a console */
	for (size_t i = 0; i < n;) {
		unsigned c = u[i], cp = c;
		size_t len = 1;

		if (c >= 0xf0) {
			cp = (c & 7u) << 18 | (u[i + 1] & 0x3fu) << 12 | (u[i + 2] & 0x3fu) << 6 | (u[i + 3] & 0x3fu);
			len = 4;
		} else if (c >= 0xe0) {
			cp = (c & 15u) << 12 | (u[i + 1] & 0x3fu) << 6 | (u[i + 2] & 0x3fu);
			len = 3;
		} else if (c >= 0xc0) {
			cp = (c & 31u) << 6 | (u[i + 1] & 0x3fu);
			len = 2;
		}
		i += len;
		if (cp == '"' || cp == '\\')
			fprintf(f, "\\%c", (char)cp);
		else if (cp == '\n')
			fputs("\\n", f);
		else if (cp == '\t')
			fputs("\\t", f);
		else if (cp == '\r')
			fputs("\\r", f);
		else if (cp >= 0x10000)
			fprintf(f, "\\u%04x\\u%04x", 0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff));
		else if (cp < 0x20 || cp >= 0x7f || cp == '<')
			fprintf(f, "\\u%04x", cp);
		else
			fputc((int)cp, f);
	}
	fputc('"', f);
}

static void newline(FILE *f, int indent, int level)
{
	if (indent < 0)
		return;
	fputc('\n', f);
	fprintf(f, "%*s", indent + 2 * level, "");
}

static void write_node(FILE *f, const struct sysinfo *s, uint32_t n, int indent, int level)
{
	const struct sysinfo_node *x = &s->node[n];

	switch (x->type) {
	case J_TRUE: fputs("true", f); break;
	case J_FALSE: fputs("false", f); break;
	case J_INT: fprintf(f, "%lld", (long long)x->v.i); break;
	case J_NUM: fputs(s->pool + x->v.s.off, f); break;
	case J_STR: json_text(f, s->pool + x->v.s.off, x->v.s.len); break;
	case J_CPUS:
		fputc('[', f);
		for (uint32_t i = 0, k = 0; i < x->v.s.len; i++) {
			uint64_t a, b;

			cpus_range(s, n, i, &a, &b);
			for (uint64_t c = a; c <= b; c++, k++)
				fprintf(f, "%s%llu", k ? ", " : "", (unsigned long long)c);
		}
		fputc(']', f);
		break;
	case J_OBJ:
	case J_ARR:
		fputc(x->type == J_OBJ ? '{' : '[', f);
		for (uint32_t c = x->v.c.first; c; c = s->node[c].next) {
			newline(f, indent, level + 1);
			if (x->type == J_OBJ) {
				json_text(f, s->pool + s->node[c].key, strlen(s->pool + s->node[c].key));
				fputs(": ", f);
			}
			write_node(f, s, c, indent, level + 1);
			if (s->node[c].next)
				fputs(indent < 0 ? ", " : ",", f);
		}
		if (x->v.c.first)
			newline(f, indent, level);
		fputc(x->type == J_OBJ ? '}' : ']', f);
		break;
	default: fputs("null", f); break;
	}
}

void sysinfo_write_json(FILE *f, const struct sysinfo *s, int indent)
{
	if (s->used_nodes < 2) {
		fputs("null", f);
		return;
	}
	write_node(f, s, 1, indent, 0);
}

/* ---- the facts ---- */

const char *sysinfo_preemption(const struct sysinfo *s) { return str_of(s, s->n_preemption); }
const char *sysinfo_preemption_source(const struct sysinfo *s) { return str_of(s, s->n_source); }
const char *sysinfo_release(const struct sysinfo *s) { return str_of(s, s->n_release); }
const char *sysinfo_architecture(const struct sysinfo *s) { return str_of(s, s->n_architecture); }
const char *sysinfo_virtualisation(const struct sysinfo *s) { return str_of(s, s->n_virt); }
const char *sysinfo_dmi_product(const struct sysinfo *s) { return str_of(s, s->n_dmi_product); }
const char *sysinfo_dt_model(const struct sysinfo *s) { return str_of(s, s->n_dt_model); }

int sysinfo_cpu_count(const struct sysinfo *s)
{
	return s->n_cpu_count && s->node[s->n_cpu_count].type == J_INT ? (int)s->node[s->n_cpu_count].v.i : 0;
}

int sysinfo_isolcpus(const struct sysinfo *s, int *cpus, int max)
{
	int n = cpus_of(s, s->n_isolcpus, cpus, max);

	return n < 0 ? 0 : n;
}

int sysinfo_online(const struct sysinfo *s, int *cpus, int max)
{
	return cpus_of(s, s->n_online, cpus, max);
}

const char *sysinfo_governor(const struct sysinfo *s, int cpu)
{
	char key[32];

	snprintf(key, sizeof(key), "%d", cpu);
	return str_of(s, child(s, s->n_governors, key));
}

int sysinfo_governor_cpus(const struct sysinfo *s, int *cpus, int max)
{
	int n = 0;

	for (uint32_t c = s->n_governors ? s->node[s->n_governors].v.c.first : 0; c; c = s->node[c].next) {
		int cpu = atoi(s->pool + s->node[c].key), at = n < max ? n : max;

		while (at > 0 && cpus[at - 1] > cpu) { /* ascending, as sorted() orders the int keys */
			if (at < max)
				cpus[at] = cpus[at - 1];
			at--;
		}
		if (at < max)
			cpus[at] = cpu;
		n++;
	}
	return n;
}

int sysinfo_compatibles(const struct sysinfo *s, const char **out, int max)
{
	int n = 0;

	for (uint32_t c = s->n_compatible ? s->node[s->n_compatible].v.c.first : 0; c; c = s->node[c].next, n++)
		if (n < max)
			out[n] = s->pool + s->node[c].v.s.off;
	return n;
}

int sysinfo_has_governors(const struct sysinfo *s)
{
	return s->n_governors && s->node[s->n_governors].v.c.first != 0;
}

int sysinfo_rt_runtime(const struct sysinfo *s, long *out)
{
	if (!s->n_runtime || s->node[s->n_runtime].type != J_INT)
		return 0;
	*out = (long)s->node[s->n_runtime].v.i;
	return 1;
}

int sysinfo_compatible(const struct sysinfo *s, const char *value)
{
	if (!s->n_compatible || !value)
		return 0;
	for (uint32_t c = s->node[s->n_compatible].v.c.first; c; c = s->node[c].next)
		if (s->node[c].type == J_STR && !strcmp(s->pool + s->node[c].v.s.off, value))
			return 1;
	return 0;
}

int sysinfo_loadavg(const char *root, double out[3])
{
	char path[4200], buf[256];
	int fd, n;
	ssize_t r;

	snprintf(path, sizeof(path), "%s/proc/loadavg", strcmp(root, "/") ? root : "");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return -1;
	buf[r] = 0;
	n = sscanf(buf, "%lf %lf %lf", &out[0], &out[1], &out[2]);
	return n == 3 ? 0 : -1;
}
