// SPDX-License-Identifier: GPL-2.0-or-later
#include "plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numparse.h"
#include "options.h"

enum named { N_DURATION, N_RT_PRIORITY, N_INTERVAL, N_THREADS, N_AFFINITY, N_HISTOGRAM, N_PRIORITY, N_COUNT };
static const char *const named[N_COUNT] = {"DURATION", "RT_PRIORITY", "INTERVAL", "THREADS",
					   "AFFINITY", "HISTOGRAM",   "PRIORITY"};

static char problem[PLAN_PROBLEM_LEN];
/* What the last expansion allocated: its word list and the words it made (argv's own are not). */
static char **list;
static char **made;
static int nmade, capmade;

static int own(char *w)
{
	if (nmade == capmade) {
		int cap = capmade ? 2 * capmade : 32;
		char **m = realloc(made, (size_t)cap * sizeof(*m));
		if (!m)
			return -1;
		made = m;
		capmade = cap;
	}
	made[nmade++] = w;
	return 0;
}

void plan_release(void)
{
	for (int i = 0; i < nmade; i++)
		free(made[i]);
	free(made);
	free(list);
	made = list = NULL;
	nmade = capmade = 0;
}

const char *plan_problem(void)
{
	return problem;
}

struct words {
	int n, cap;
	char **w;
};

static int push(struct words *ws, char *s)
{
	if (ws->n + 1 >= ws->cap) {
		int cap = ws->cap ? 2 * ws->cap : 64;
		char **w = realloc(ws->w, (size_t)cap * sizeof(*w));
		if (!w)
			return -1;
		ws->w = w;
		ws->cap = cap;
	}
	ws->w[ws->n++] = s;
	ws->w[ws->n] = NULL;
	return 0;
}

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	options_escape(err, len);
}

/* Options that name the board's outputs and parameters: given beside a plan, never inside one. */
static int outside_only(const char *w)
{
	return starts(w, "--plan") || starts(w, "--output-dir") || starts(w, "--param") || starts(w, "--json") ||
	       starts(w, "--histfile");
}

/* One word of a plan, "%20" and "%25" decoded; NULL with err set for anything else odd. */
static char *plan_word(const char *start, size_t len, char *err, size_t errlen)
{
	char *w = malloc(len + 1), *o = w;

	if (!w) {
		set_err(err, errlen, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)start[i];
		if (c < 0x20 || c == 0x7f) {
			set_err(err, errlen, "--plan: a control character in the plan");
			free(w);
			return NULL;
		}
		if (c == '%') {
			if (i + 2 < len && (start[i + 1] == '2' && (start[i + 2] == '0' || start[i + 2] == '5'))) {
				*o++ = start[i + 2] == '0' ? ' ' : '%';
				i += 2;
				continue;
			}
			set_err(err, errlen, "--plan: '%%' not followed by 20 or 25 in '%.*s'", (int)len, start);
			free(w);
			return NULL;
		}
		*o++ = (char)c;
	}
	*o = '\0';
	if (outside_only(w)) {
		set_err(err, errlen, "--plan: '%s' cannot be part of a plan (the board names outputs and parameters)", w);
		free(w);
		return NULL;
	}
	return w;
}

static int split_plan(const char *plan, struct words *ws, char *err, size_t errlen)
{
	int before = ws->n;

	for (const char *p = plan; *p;) {
		const char *end;
		char *w;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		end = strchr(p, ' ');
		if (!end)
			end = p + strlen(p);
		w = plan_word(p, (size_t)(end - p), err, errlen);
		if (!w)
			return -1;
		if (own(w)) {
			free(w);
			set_err(err, errlen, "out of memory");
			return -1;
		}
		if (push(ws, w)) {
			set_err(err, errlen, "out of memory");
			return -1;
		}
		p = end;
	}
	if (ws->n == before) {
		set_err(err, errlen, "--plan is empty: compile a threshold file with 'rtgate lava args'");
		return -1;
	}
	return 0;
}

/* What the plan fixes for each named parameter, as `rtgate lava args` derives it (lava/board.py). */
static void fixed_values(const struct words *ws, const char *fixed[N_COUNT], char *threads, size_t len)
{
	static const struct {
		const char *shortopt, *longopt;
		enum named name;
	} knobs[] = {
		{"-p", "--priority=", N_RT_PRIORITY}, {"-i", "--interval=", N_INTERVAL},
		{"-t", "--threads=", N_THREADS},      {"-a", "--affinity=", N_AFFINITY},
		{"-h", "--histogram=", N_HISTOGRAM},
	};

	for (int i = 0; i < ws->n; i++) {
		const char *w = ws->w[i];
		if (!strcmp(w, "-S") || !strcmp(w, "--smp")) {
			fixed[N_THREADS] = fixed[N_AFFINITY] = "all";
		} else if (starts(w, "--thread-cpus=")) {
			int n = 1;
			fixed[N_AFFINITY] = w + strlen("--thread-cpus=");
			for (const char *c = fixed[N_AFFINITY]; *c; c++)
				n += *c == ',';
			snprintf(threads, len, "%d", n);
			fixed[N_THREADS] = threads;
		} else if (starts(w, "--thread-priorities=")) {
			fixed[N_RT_PRIORITY] = w + strlen("--thread-priorities=");
		}
		for (size_t k = 0; k < sizeof(knobs) / sizeof(knobs[0]); k++) {
			if (!strcmp(w, knobs[k].shortopt) && i + 1 < ws->n)
				fixed[knobs[k].name] = ws->w[i + 1];
			else if (starts(w, knobs[k].longopt))
				fixed[knobs[k].name] = w + strlen(knobs[k].longopt);
		}
	}
}

static void add_problem(const char *fmt, ...)
{
	size_t used = strlen(problem);
	va_list ap;

	if (used && used + 2 < sizeof(problem)) {
		strcat(problem, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(problem + used, sizeof(problem) - used, fmt, ap);
	va_end(ap);
}

/* A parameter's value as the problem quotes it: at most 64 characters, control characters '?'. */
static const char *shown(const char *value, char *buf, size_t len)
{
	snprintf(buf, len, "%.64s", value);
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return buf;
}

/* The loop count and duration of the plan give way to DURATION, as rtgate run --duration does. */
static void drop_length(struct words *ws)
{
	int o = 0;

	for (int i = 0; i < ws->n; i++) {
		const char *w = ws->w[i];
		if ((!strcmp(w, "-l") || !strcmp(w, "-D")) && i + 1 < ws->n) {
			i++;
			continue;
		}
		if (starts(w, "--loops") || starts(w, "--duration=") || (starts(w, "-l") && w[2]) ||
		    (starts(w, "-D") && w[2]))
			continue;
		ws->w[o++] = ws->w[i];
	}
	ws->n = o;
	ws->w[o] = NULL;
}

static int check_params(struct words *ws, const char *given[N_COUNT], char *err, size_t errlen)
{
	const char *fixed[N_COUNT] = {0};
	char threads[16], buf[80];

	fixed_values(ws, fixed, threads, sizeof(threads));
	if (given[N_PRIORITY])
		add_problem("parameter PRIORITY is now RT_PRIORITY (LAVA and KernelCI templates take PRIORITY for the "
			    "job's own priority): set RT_PRIORITY=%s", shown(given[N_PRIORITY], buf, sizeof(buf)));
	for (int k = N_RT_PRIORITY; k < N_PRIORITY; k++) {
		if (given[k] && (!fixed[k] || strcmp(given[k], fixed[k])))
			add_problem("parameter %s=%s contradicts the threshold file's %s", named[k],
				    shown(given[k], buf, sizeof(buf)), fixed[k] ? fixed[k] : "(not set)");
	}
	if (given[N_DURATION]) {
		uint64_t s;
		if (parse_duration_s(given[N_DURATION], 1, MAX_DURATION_S, &s)) {
			add_problem("parameter DURATION=%s is not a duration (whole seconds, or with s, m, h or d)",
				    shown(given[N_DURATION], buf, sizeof(buf)));
		} else {
			char *w = malloc(32);
			drop_length(ws);
			if (!w || own(w)) {
				free(w);
				set_err(err, errlen, "out of memory");
				return -1;
			}
			snprintf(w, 32, "--duration=%llus", (unsigned long long)s);
			if (push(ws, w)) {
				set_err(err, errlen, "out of memory");
				return -1;
			}
		}
	}
	return 0;
}

static int take_param(const char *arg, const char *given[N_COUNT], char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');

	for (int k = 0; eq && k < N_COUNT; k++) {
		if (strlen(named[k]) == (size_t)(eq - arg) && !strncmp(arg, named[k], (size_t)(eq - arg))) {
			if (given[k]) {
				set_err(err, errlen, "--param: %s given twice", named[k]);
				return -1;
			}
			given[k] = eq[1] ? eq + 1 : NULL; /* empty: not given */
			return 0;
		}
	}
	set_err(err, errlen,
		"--param: '%s' is not NAME=VALUE with NAME one of DURATION, RT_PRIORITY, INTERVAL, THREADS, AFFINITY, "
		"HISTOGRAM", arg);
	return -1;
}

/* --output-dir: the board's files, named after the measurement. */
static int output_words(struct words *ws, const char *dir, char *err, size_t errlen)
{
	const char *name = NULL;
	int histogram = 0;

	for (int i = 0; i < ws->n; i++) {
		const char *w = ws->w[i];
		if (starts(w, "--measurement="))
			name = w + strlen("--measurement=");
		histogram |= !strcmp(w, "-h") || !strcmp(w, "-H") || starts(w, "--histogram") || starts(w, "--histofall");
	}
	if (!name || !*name || strchr(name, '/')) {
		set_err(err, errlen, "--output-dir needs --measurement=NAME (the files' names)");
		return -1;
	}
	for (int hist = 0; hist <= histogram; hist++) {
		size_t len = strlen(dir) + strlen(name) + 32;
		char *w = malloc(len);
		if (!w || own(w)) {
			free(w);
			set_err(err, errlen, "out of memory");
			return -1;
		}
		snprintf(w, len, "--%s=%s/%s.%s", hist ? "histfile" : "json", dir, name, hist ? "hist" : "json");
		if (push(ws, w)) {
			set_err(err, errlen, "out of memory");
			return -1;
		}
	}
	return 0;
}

/* The words of argv with the plan in place of --plan, the parameters checked, the outputs named. */
static int expand(int argc, char **argv, struct words *ws, char *err, size_t errlen)
{
	const char *given[N_COUNT] = {0};
	const char *dir = NULL;
	int params = 0, planned = 0;

	for (int i = 0; i < argc; i++) {
		if (i && starts(argv[i], "--plan=")) {
			if (planned++) {
				set_err(err, errlen, "--plan given twice");
				return -1;
			}
			if (split_plan(argv[i] + strlen("--plan="), ws, err, errlen))
				return -1;
		} else if (i && starts(argv[i], "--param=")) {
			params = 1;
			if (take_param(argv[i] + strlen("--param="), given, err, errlen))
				return -1;
		} else if (i && starts(argv[i], "--output-dir=")) {
			dir = argv[i] + strlen("--output-dir=");
		} else if (push(ws, argv[i])) {
			set_err(err, errlen, "out of memory");
			return -1;
		}
	}
	if (params && check_params(ws, given, err, errlen))
		return -1;
	return dir ? output_words(ws, dir, err, errlen) : 0;
}

int plan_expand(int argc, char **argv, int *out_argc, char ***out_argv, char *err, size_t errlen)
{
	struct words ws = {0};
	int rc;

	plan_release();
	problem[0] = '\0';
	rc = expand(argc, argv, &ws, err, errlen);
	list = ws.w; /* freed by plan_release, with the words made */
	if (rc) {
		plan_release();
		return -1;
	}
	*out_argc = ws.n;
	*out_argv = ws.w;
	return 0;
}
