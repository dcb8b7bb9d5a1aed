// SPDX-License-Identifier: GPL-2.0-or-later
#include "record.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "version.h"

struct record {
	char name[MEASUREMENT_NAME_LEN];
	int named;
	int not_measured_status;
	char not_measured[RECORD_REASON_LEN];
	int ninvalid;
	char invalid[RECORD_MAX_INVALID][RECORD_REASON_LEN];
	char stopped_by[16];
	double expected_s;
	int has_expected;
	const struct sysinfo *system;
	const struct require_report *require;
	const struct rt_priorities *priorities;
	int competing_matters;
	const struct rt_tasks *before, *during, *after;
	void (*load)(FILE *f, const void *ctx);
	const void *load_ctx;
	void (*backend)(FILE *f, const void *ctx);
	const void *backend_ctx;
};

static struct record *rec;

int record_init(const char *name)
{
	if (!rec)
		rec = calloc(1, sizeof(*rec));
	if (!rec)
		return -1;
	if (name) {
		snprintf(rec->name, sizeof(rec->name), "%s", name);
		rec->named = 1;
	}
	return 0;
}

int record_enabled(void)
{
	return rec != NULL;
}

void record_invalid(const char *fmt, ...)
{
	va_list ap;

	if (!rec || rec->ninvalid == RECORD_MAX_INVALID)
		return;
	va_start(ap, fmt);
	vsnprintf(rec->invalid[rec->ninvalid++], RECORD_REASON_LEN, fmt, ap);
	va_end(ap);
}

void record_not_measured(int status, const char *fmt, ...)
{
	va_list ap;

	if (!rec || rec->not_measured[0])
		return;
	rec->not_measured_status = status;
	va_start(ap, fmt);
	vsnprintf(rec->not_measured, sizeof(rec->not_measured), fmt, ap);
	va_end(ap);
	if (!rec->not_measured[0])
		snprintf(rec->not_measured, sizeof(rec->not_measured), "no reason given");
}

const char *record_not_measured_reason(int *status)
{
	if (!rec || !rec->not_measured[0])
		return NULL;
	if (status)
		*status = rec->not_measured_status;
	return rec->not_measured;
}

int record_invalid_reason(char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	if (!rec)
		return 0;
	for (int i = 0; i < rec->ninvalid && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "; " : "", rec->invalid[i]);
	return rec->ninvalid;
}

void record_stopped_by(const char *signal_name)
{
	if (rec && signal_name && !rec->stopped_by[0])
		snprintf(rec->stopped_by, sizeof(rec->stopped_by), "%s", signal_name);
}

/* As the harness's ThreadPlan.expected_seconds: the duration, else the slowest thread's loops. */
void record_expected_seconds(const struct params *p)
{
	if (!rec)
		return;
	rec->has_expected = p->duration_s || p->loops;
	if (p->duration_s) {
		rec->expected_s = (double)p->duration_s;
		return;
	}
	for (int i = 0; i < p->num_threads; i++) {
		double s = (double)p->loops * (double)(p->interval_us + p->distance_us * (uint64_t)i) / 1e6;
		if (s > rec->expected_s)
			rec->expected_s = s;
	}
}

void record_attach(const struct sysinfo *system, const struct require_report *require,
		   const struct rt_priorities *priorities, int competing_matters, const struct rt_tasks *before,
		   const struct rt_tasks *during, const struct rt_tasks *after)
{
	if (!rec)
		return;
	rec->system = system;
	rec->require = require;
	rec->priorities = priorities;
	rec->competing_matters = competing_matters;
	rec->before = before;
	rec->during = during;
	rec->after = after;
}

void record_backend_writer(void (*write)(FILE *f, const void *ctx), const void *ctx)
{
	if (!rec)
		return;
	rec->backend = write;
	rec->backend_ctx = ctx;
}

void record_load_writer(void (*write)(FILE *f, const void *ctx), const void *ctx)
{
	if (!rec)
		return;
	rec->load = write;
	rec->load_ctx = ctx;
}

/* Length of the valid UTF-8 sequence at s, or 0 (overlong, surrogate, above U+10FFFF, cut short). */
static int utf8_len(const unsigned char *s)
{
	int n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
	unsigned cp;

	if (!n || s[0] > 0xf4)
		return 0;
	cp = s[0] & (0x7f >> n);
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

void record_json_string(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c;) {
		int n;

		if (*c == '"' || *c == '\\') {
			fprintf(f, "\\%c", *c++);
		} else if (*c < 0x20 || *c == 0x7f) {
			fprintf(f, "\\u%04x", *c++);
		} else if (*c < 0x80) {
			fputc(*c++, f);
		} else if ((n = utf8_len(c)) > 0) {
			fwrite(c, 1, (size_t)n, f);
			c += n;
		} else {
			fputs("\\ufffd", f); /* as Python reads such a byte: errors="replace" */
			c++;
		}
	}
	fputc('"', f);
}

void record_console_escape(char *text)
{
	for (char *c = text; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	for (char *at = text; (at = strstr(at, "<LAVA_")) != NULL; at++)
		*at = '?';
}

static void digest(FILE *f, const struct run_result *r)
{
	fprintf(f, "{\"elapsed_s\": %.6f, \"stop_reason\": \"%s\", \"cycles\": [", r->elapsed_s,
		r->complete ? stop_reason_name(r->reason) : "running");
	for (int i = 0; i < r->nthreads; i++)
		fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)r->t[i].cycles);
	fputs("], \"missed\": [", f);
	for (int i = 0; i < r->nthreads; i++)
		fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)r->t[i].missed);
	fputs("]}", f);
}

static void rt_tasks(FILE *f)
{
	int first = 1;

	fputs("{\"sampler_priority\": {", f);
	for (int c = 0; rec->priorities && c < MAX_CPUS; c++)
		if (rec->priorities->prio[c] >= 0) {
			fprintf(f, "%s\"%d\": %d", first ? "" : ", ", c, rec->priorities->prio[c]);
			first = 0;
		}
	fprintf(f, "},\n    \"competing_matters\": %s,\n    \"before\": ", rec->competing_matters ? "true" : "false");
	if (rec->before)
		rtscan_write_json(f, rec->before, 0);
	else
		fputs("[]", f);
	fputs(",\n    \"during\": ", f);
	if (rec->during)
		rtscan_write_json(f, rec->during, 1);
	else
		fputs("[]", f);
	fputs(",\n    \"after\": ", f);
	if (rec->after)
		rtscan_write_json(f, rec->after, 0);
	else
		fputs("[]", f);
	fputs("}", f);
}

void record_write_json(FILE *f, const struct run_result *r)
{
	const int measured = !rec->not_measured[0];

	fprintf(f, "{\n    \"format\": %d,\n    \"written_by\": \"rtgate-sampler %s\",\n    \"measurement\": ",
		RECORD_FORMAT, RTGATE_VERSION);
	record_json_string(f, rec->named ? rec->name : NULL);
	fprintf(f, ",\n    \"measured\": %s,\n    \"not_measured\": ", measured ? "true" : "false");
	record_json_string(f, measured ? NULL : rec->not_measured);
	fputs(",\n    \"not_measured_status\": ", f); /* what every gate then is: ERROR, or INCONCLUSIVE if stopped */
	record_json_string(f, measured ? NULL : gate_status_name(rec->not_measured_status));
	fprintf(f, ",\n    \"valid\": %s,\n    \"invalid\": [", measured && !rec->ninvalid ? "true" : "false");
	for (int i = 0; i < rec->ninvalid; i++) {
		fputs(i ? ", " : "", f);
		record_json_string(f, rec->invalid[i]);
	}
	fputs("],\n    \"stopped_by\": ", f);
	record_json_string(f, rec->stopped_by[0] ? rec->stopped_by : NULL);
	fputs(",\n    \"expected_seconds\": ", f);
	if (rec->has_expected)
		fprintf(f, "%.6g", rec->expected_s);
	else
		fputs("null", f);
	fputs(",\n    \"results\": ", f);
	digest(f, r);
	fputs(",\n    \"require\": ", f);
	if (rec->require)
		require_write_json(f, rec->require);
	else
		fputs("[]", f);
	fputs(",\n    \"system\": ", f);
	if (rec->system)
		sysinfo_write_json(f, rec->system, 4);
	else
		fputs("null", f);
	fputs(",\n    \"load\": ", f);
	if (rec->load)
		rec->load(f, rec->load_ctx);
	else
		fputs("{\"kind\": \"none\"}", f);
	if (rec->backend) {
		fputs(",\n    \"backend\": ", f);
		rec->backend(f, rec->backend_ctx);
	}
	fputs(",\n    \"rt_tasks\": ", f);
	rt_tasks(f);
	fputs("\n  }", f);
}
