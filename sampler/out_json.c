// SPDX-License-Identifier: GPL-2.0-or-later
#include "out_json.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "options.h"
#include "outfile.h"
#include "version.h"

void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_time(FILE *f, int64_t ns)
{
	char buf[64];
	time_t t = (time_t)(ns / 1000000000LL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S %z", &tm);
	json_string(f, buf);
}

static void json_cmdline(FILE *f, const struct params *p)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < p->argc; i++)
		len += strlen(p->argv[i]) + 1;
	s = calloc(len, 1);
	if (!s) {
		json_string(f, "");
		return;
	}
	for (int i = 0; i < p->argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, p->argv[i]);
	}
	json_string(f, s);
	free(s);
}

static void json_avg(FILE *f, const struct thread_result *t)
{
	if (t->cycles)
		fprintf(f, "%.2f", (double)t->sum / (double)t->cycles);
	else
		fprintf(f, "null");
}

static void json_opt_u64(FILE *f, int present, uint64_t v)
{
	if (present)
		fprintf(f, "%llu", (unsigned long long)v);
	else
		fprintf(f, "null");
}

static void rt_tests_thread(FILE *f, const struct run_result *r, const struct thread_result *t, int last)
{
	int comma = 0;

	fprintf(f, "    \"%d\": {\n      \"histogram\": {", t->index);
	for (size_t k = 0, n = result_hist_len(t, r->layout); k < n; k++) {
		size_t i = result_hist_bucket(t, k);

		if (i >= r->p->hist_limit)
			break; /* the -h view is the start of the linear range */
		if (!t->hist[k])
			continue;
		fprintf(f, "%s\n        \"%llu\": %llu", comma ? "," : "", (unsigned long long)i,
			(unsigned long long)t->hist[k]);
		comma = 1;
	}
	fprintf(f, "%s},\n", comma ? "\n      " : "");
	fprintf(f, "      \"cycles\": %llu,\n      \"min\": ", (unsigned long long)t->cycles);
	json_opt_u64(f, t->cycles > 0, t->min);
	fprintf(f, ",\n      \"max\": ");
	json_opt_u64(f, t->cycles > 0, t->max);
	fprintf(f, ",\n      \"avg\": ");
	json_avg(f, t);
	fprintf(f, ",\n      \"cpu\": %d,\n      \"node\": %d\n    }%s\n", t->cpu, t->node, last ? "" : ",");
}

static void rtgate_thread(FILE *f, const struct run_result *r, const struct thread_result *t, int last)
{
	const struct hist_layout *l = r->layout;
	int comma = 0;

	fprintf(f, "      {\n        \"index\": %d, \"tid\": %d, \"cpu\": %d, \"policy\": \"%s\", "
		"\"priority\": %d, \"interval_us\": %llu,\n",
		t->index, t->tid, t->cpu, policy_name(t->policy), t->priority,
		(unsigned long long)t->interval_us);
	fprintf(f, "        \"cycles\": %llu, \"min\": ", (unsigned long long)t->cycles);
	json_opt_u64(f, t->cycles > 0, t->min);
	fprintf(f, ", \"max\": ");
	json_opt_u64(f, t->cycles > 0, t->max);
	fprintf(f, ", \"avg\": ");
	json_avg(f, t);
	fprintf(f, ", \"sum\": %llu,\n        \"missed_periods\": %llu, \"overflows\": %llu, "
		"\"stop_reason\": \"%s\",\n",
		(unsigned long long)t->sum, (unsigned long long)t->missed,
		(unsigned long long)t->overflow, stop_reason_name(t->reason));
	fprintf(f, "        \"first_wake_ns\": %lld, \"last_wake_ns\": %lld, \"span_s\": %.6f,\n",
		(long long)t->first_wake_ns, (long long)t->last_wake_ns, t->span_s);
	fprintf(f, "        \"overflow_cycles\": [");
	for (uint64_t k = 0; k < t->n_overflow_cycles; k++)
		fprintf(f, "%s%llu", k ? ", " : "", (unsigned long long)t->overflow_cycles[k]);
	fprintf(f, "],\n        \"histogram\": [");
	for (size_t k = 0, n = result_hist_len(t, l); k < n; k++) {
		size_t i = result_hist_bucket(t, k);
		uint64_t hi;

		if (!t->hist[k])
			continue;
		hi = hist_upper(l, i);
		fprintf(f, "%s[%llu, ", comma ? ", " : "", (unsigned long long)hist_lower(l, i));
		if (hi == UINT64_MAX)
			fprintf(f, "null");
		else
			fprintf(f, "%llu", (unsigned long long)hi);
		fprintf(f, ", %llu]", (unsigned long long)t->hist[k]);
		comma = 1;
	}
	fprintf(f, "],\n        \"block_maxima\": {\"block_cycles\": %llu, \"block_seconds\": %.6f, "
		"\"partial_cycles\": %llu, \"partial_max\": ",
		(unsigned long long)t->bview.block_cycles,
		(double)t->bview.block_cycles * (double)t->interval_us / 1e6,
		(unsigned long long)t->bview.partial_n);
	json_opt_u64(f, t->bview.partial_n > 0, t->bview.partial_max);
	fprintf(f, ", \"values\": [");
	for (uint64_t k = 0; k < t->bview.count; k++)
		fprintf(f, "%s%llu", k ? ", " : "", (unsigned long long)t->blocks[k]);
	fprintf(f, "]},\n        \"spikes\": {\"total\": %llu, \"recorded\": [",
		(unsigned long long)t->spikes_total);
	for (uint64_t k = 0; k < t->n_spikes; k++)
		fprintf(f, "%s[%llu, %llu, %lld]", k ? ", " : "", (unsigned long long)t->spikes[k].cycle,
			(unsigned long long)t->spikes[k].value, (long long)t->spikes[k].ts_us);
	fprintf(f, "]}\n      }%s\n", last ? "" : ",");
}

void json_write(FILE *f, const struct run_result *r)
{
	const struct params *p = r->p;
	const struct sys_facts *s = r->sys;
	const char *sig = r->reason == STOP_SIGNAL ? signal_name(r->signal) : NULL;

	fprintf(f, "{\n  \"file_version\": 1,\n  \"cmdline:\": ");
	json_cmdline(f, p);
	fprintf(f, ",\n  \"rt_test_version:\": \"%s\",\n  \"start_time\": ", RTGATE_VERSION);
	json_time(f, r->start_rt_ns);
	fprintf(f, ",\n  \"end_time\": ");
	json_time(f, r->end_rt_ns);
	fprintf(f, ",\n  \"return_code\": %d,\n  \"sysinfo\": {\n    \"sysname\": ", r->return_code);
	json_string(f, s->sysname);
	fprintf(f, ",\n    \"nodename\": ");
	json_string(f, s->nodename);
	fprintf(f, ",\n    \"release\": ");
	json_string(f, s->release);
	fprintf(f, ",\n    \"version\": ");
	json_string(f, s->version);
	fprintf(f, ",\n    \"machine\": ");
	json_string(f, s->machine);
	fprintf(f, ",\n    \"realtime\": %d\n  },\n", s->realtime);
	fprintf(f, "  \"num_threads\": %d,\n  \"resolution_in_ns\": %d,\n  \"thread\": {\n",
		r->nthreads, p->nsecs);
	for (int i = 0; i < r->nthreads; i++)
		rt_tests_thread(f, r, &r->t[i], i == r->nthreads - 1);
	fprintf(f, "  },\n  \"rtgate\": {\n");
	fprintf(f, "    \"format\": 1,\n    \"sampler\": \"rtgate-sampler %s\",\n", RTGATE_VERSION);
	fprintf(f, "    \"complete\": %s,\n    \"stop_reason\": \"%s\",\n    \"signal\": ",
		r->complete ? "true" : "false", r->complete ? stop_reason_name(r->reason) : "running");
	if (sig)
		json_string(f, sig);
	else
		fprintf(f, "null");
	fprintf(f, ",\n    \"unit\": \"%s\",\n    \"clock\": \"%s\",\n    \"timer\": \"%s\",\n"
		"    \"relative\": %s,\n",
		unit_name(p), p->clock_id == CLOCK_REALTIME ? "realtime" : "monotonic",
		p->posix_timers ? "posix_timers" : "clock_nanosleep", p->relative ? "true" : "false");
	fprintf(f, "    \"start_time_ns\": %lld,\n    \"end_time_ns\": %lld,\n    \"elapsed_s\": %.6f,\n",
		(long long)r->start_rt_ns, (long long)r->end_rt_ns, r->elapsed_s);
	fprintf(f, "    \"overrun_s\": %.6f,\n    \"ended_late\": %s,\n    \"loops_per_thread\": %s,\n",
		r->overrun_s, r->ended_late ? "true" : "false", p->loops_per_thread ? "true" : "false");
	fprintf(f, "    \"loops\": %llu,\n    \"duration_s\": %llu,\n    \"mlockall\": %s,\n"
		"    \"latency_target_us\": ",
		(unsigned long long)p->loops, (unsigned long long)p->duration_s,
		p->mlockall ? "true" : "false");
	if (r->latency_target >= 0)
		fprintf(f, "%d", r->latency_target);
	else
		fprintf(f, "null");
	fprintf(f, ",\n    \"histogram_limit\": %llu,\n    \"breaktrace\": %llu,\n    \"break_thread\": ",
		(unsigned long long)p->hist_limit, (unsigned long long)p->breaktrace);
	if (r->break_thread >= 0)
		fprintf(f, "%d", r->break_thread);
	else
		fprintf(f, "null");
	fprintf(f, ",\n    \"block_seconds\": %.6f,\n", p->block_s);
	fprintf(f, "    \"histogram_layout\": {\"linear_limit\": %llu, \"sub_buckets\": %u, \"top\": %llu},\n",
		(unsigned long long)1 << r->layout->lin_bits, 1u << HIST_SUB_BITS,
		(unsigned long long)1 << r->layout->top_bits);
	fprintf(f, "    \"threads\": [\n");
	for (int i = 0; i < r->nthreads; i++)
		rtgate_thread(f, r, &r->t[i], i == r->nthreads - 1);
	fprintf(f, "    ]\n  }");
	if (r->record) {
		fprintf(f, ",\n  \"rtgate_run\": ");
		r->record(f, r);
	}
	fprintf(f, "\n}\n");
}

static void write_cb(FILE *f, const void *ctx)
{
	json_write(f, ctx);
}

int json_write_file(const char *path, const struct run_result *r)
{
	return outfile_write(path, write_cb, r);
}
