// SPDX-License-Identifier: GPL-2.0-or-later
#include "numparse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int trim_copy(const char *s, char *buf, size_t len)
{
	size_t n;

	if (!s)
		return -1;
	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (n >= len)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char buf[32], *end;
	unsigned long long v;

	if (trim_copy(s, buf, sizeof(buf)) || !isdigit((unsigned char)buf[0]))
		return -1;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int parse_duration_s(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char num[32];
	size_t len;
	uint64_t mult = 1, v;

	if (trim_copy(s, num, sizeof(num)))
		return -1;
	len = strlen(num);
	if (len == 0)
		return -1;
	switch (num[len - 1]) {
	case 's': case 'S': mult = 1; num[--len] = '\0'; break;
	case 'm': case 'M': mult = 60; num[--len] = '\0'; break;
	case 'h': case 'H': mult = 3600; num[--len] = '\0'; break;
	case 'd': case 'D': mult = 86400; num[--len] = '\0'; break;
	default: break;
	}
	if (parse_u64(num, 0, max / mult, &v) || v * mult < min)
		return -1;
	*out = v * mult;
	return 0;
}

int parse_decimal(const char *s, double min, double max, double *out)
{
	char buf[64], *end;
	double v;

	if (trim_copy(s, buf, sizeof(buf)) || !(isdigit((unsigned char)buf[0]) || buf[0] == '.'))
		return -1;
	errno = 0;
	v = strtod(buf, &end);
	if (errno || *end != '\0' || !isfinite(v) || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int parse_cpuset(const char *s, const struct cpu_info *cpus, unsigned char *set, char *err, size_t errlen)
{
	char buf[1024];
	char *tok, *save = NULL, *p = buf;
	int invert = 0, i;

	memset(set, 0, MAX_CPUS);
	if (trim_copy(s, buf, sizeof(buf)) || !buf[0]) {
		set_err(err, errlen, "empty or too long CPU list");
		return -1;
	}
	if (strcmp(buf, "all") == 0) {
		memcpy(set, cpus->allowed, MAX_CPUS);
		return 0;
	}
	if (p[0] == '!') {
		invert = 1;
		p++;
	}
	if (!p[0]) {
		set_err(err, errlen, "empty CPU list");
		return -1;
	}
	for (tok = strtok_r(p, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		uint64_t lo, hi;

		if (dash) {
			*dash = '\0';
			if (parse_u64(tok, 0, MAX_CPUS - 1, &lo) ||
			    parse_u64(dash + 1, 0, MAX_CPUS - 1, &hi) || hi < lo) {
				set_err(err, errlen, "bad CPU range '%s-%s'", tok, dash + 1);
				return -1;
			}
		} else if (parse_u64(tok, 0, MAX_CPUS - 1, &lo)) {
			set_err(err, errlen, "bad CPU number '%s'", tok);
			return -1;
		} else {
			hi = lo;
		}
		for (uint64_t c = lo; c <= hi; c++) {
			if ((int)c >= cpus->ncpus || !(cpus->allowed[c] || cpus->isolated[c])) {
				set_err(err, errlen, "CPU %llu is not available (this process may use %d CPU%s)",
					(unsigned long long)c, cpus->nallowed, cpus->nallowed == 1 ? "" : "s");
				return -1;
			}
			set[c] = 1;
		}
	}
	if (invert)
		for (i = 0; i < MAX_CPUS; i++)
			set[i] = cpus->allowed[i] && !set[i];
	for (i = 0; i < MAX_CPUS; i++)
		if (set[i])
			return 0;
	set_err(err, errlen, "CPU list '%s' selects no CPU", s);
	return -1;
}

int parse_index_list(const char *s, char sep, uint64_t max, int *out, int cap)
{
	char buf[1024], seps[2] = { sep, '\0' };
	char *tok, *save = NULL;
	int n = 0;
	uint64_t v;

	if (!s || strlen(s) >= sizeof(buf) || !s[0])
		return -1;
	strcpy(buf, s);
	for (tok = strtok_r(buf, seps, &save); tok; tok = strtok_r(NULL, seps, &save)) {
		if (n == cap || parse_u64(tok, 0, max, &v))
			return -1;
		out[n++] = (int)v;
	}
	return n;
}
