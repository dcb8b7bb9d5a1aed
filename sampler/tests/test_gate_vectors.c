// SPDX-License-Identifier: GPL-2.0-or-later
/* The shared gate vectors (tests/vectors/gates.txt) through the C gates: same verdicts as Python. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gate.h"

#define MAXT 8
#define MAXE 8

struct expect {
	char thread[GATE_NAME_LEN], status[16], value[32], bound[32], lower[32];
	unsigned long long samples;
};

struct vec {
	char name[96];
	int nsecs, complete, reason, nthreads, nexpect, nlabels;
	char gate[512];
	char labels[MAXT][GATE_NAME_LEN];
	struct thread_result t[MAXT];
	uint64_t *hist[MAXT];
	struct expect e[MAXE];
};

static const char *field(const char *line, const char *key)
{
	static char buf[4096];
	char pat[64];
	const char *p;
	size_t n;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	n = strcspn(p, " \n");
	snprintf(buf, sizeof(buf), "%.*s", (int)n, p);
	return buf;
}

static long long num(const char *line, const char *key)
{
	const char *v = field(line, key);
	return v ? atoll(v) : 0;
}

static int close_enough(const char *want, int has, double got)
{
	double w;

	if (strcmp(want, "-") == 0)
		return !has;
	if (!has)
		return 0;
	w = atof(want);
	return fabs(got - w) <= 1e-6 * fabs(w) + 1e-12;
}

static void run_vector(struct vec *v, const struct hist_layout *l)
{
	static struct params p;
	struct run_result r;
	struct gate_spec g;
	struct gate_verdict out[MAXT];
	char ids[MAXT][GATE_NAME_LEN], err[200];
	int n;

	memset(&p, 0, sizeof(p));
	p.nsecs = v->nsecs;
	memset(&r, 0, sizeof(r));
	r.p = &p;
	r.layout = l;
	r.nthreads = v->nthreads;
	r.t = v->t;
	r.complete = v->complete;
	r.reason = v->reason;
	r.signal = 2;
	if (gate_parse(v->gate, &g, err, sizeof(err))) {
		fprintf(stderr, "%s: gate '%s': %s\n", v->name, v->gate, err);
		check_failures++;
		return;
	}
	gate_thread_ids(&r, v->labels, v->nlabels, ids);
	n = gate_evaluate(&g, &r, ids, out, MAXT);
	if (n != v->nexpect) {
		fprintf(stderr, "%s: %d verdicts, expected %d\n", v->name, n, v->nexpect);
		check_failures++;
		return;
	}
	for (int i = 0; i < n; i++) {
		struct expect *e = &v->e[i];
		if (strcmp(out[i].thread, e->thread) || strcmp(gate_status_name(out[i].status), e->status) ||
		    !close_enough(e->value, out[i].has_value, out[i].value) ||
		    !close_enough(e->bound, out[i].has_bound, out[i].bound) ||
		    !close_enough(e->lower, out[i].has_lower, out[i].lower) || out[i].samples != e->samples) {
			fprintf(stderr, "%s: got %s %s value=%.10g bound=%.10g lower=%.10g samples=%llu (%s); expected %s %s "
				"value=%s bound=%s lower=%s samples=%llu\n", v->name, out[i].thread,
				gate_status_name(out[i].status), out[i].value, out[i].bound, out[i].lower, out[i].samples,
				out[i].reason, e->thread, e->status, e->value, e->bound, e->lower, e->samples);
			check_failures++;
		}
	}
}

static int reason_code(const char *s)
{
	if (!strcmp(s, "loops")) return STOP_LOOPS;
	if (!strcmp(s, "duration")) return STOP_DURATION;
	if (!strcmp(s, "signal")) return STOP_SIGNAL;
	if (!strcmp(s, "breaktrace")) return STOP_BREAKTRACE;
	if (!strcmp(s, "error")) return STOP_ERROR;
	return STOP_NONE;
}

int main(int argc, char **argv)
{
	static struct vec v;
	struct hist_layout us, ns;
	char line[4096];
	int vectors = 0;
	FILE *f;

	if (argc != 2 || !(f = fopen(argv[1], "r"))) {
		fprintf(stderr, "usage: test_gate_vectors tests/vectors/gates.txt\n");
		return 1;
	}
	hist_layout_init(&us, 0, 0);
	hist_layout_init(&ns, 1, 0);
	while (fgets(line, sizeof(line), f)) {
		const struct hist_layout *l = v.nsecs ? &ns : &us;

		line[strcspn(line, "\n")] = ' ';
		if (!strncmp(line, "vector ", 7)) {
			memset(&v, 0, sizeof(v));
			sscanf(line + 7, "%95s", v.name);
			v.complete = 1;
			v.reason = STOP_LOOPS;
		} else if (!strncmp(line, "unit ns", 7)) {
			v.nsecs = 1;
		} else if (!strncmp(line, "run ", 4)) {
			v.complete = (int)num(line, "complete");
			v.reason = reason_code(field(line, "reason"));
		} else if (!strncmp(line, "labels ", 7)) {
			char *save = NULL, buf[256];
			snprintf(buf, sizeof(buf), "%.255s", line + 7);
			buf[strcspn(buf, " ")] = '\0';
			for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
				snprintf(v.labels[v.nlabels++], GATE_NAME_LEN, "%s", tok);
		} else if (!strncmp(line, "thread ", 7)) {
			struct thread_result *t = &v.t[v.nthreads];
			char buckets[4096], *save = NULL;
			const char *bf;

			t->index = (int)num(line, "index");
			t->cpu = (int)num(line, "cpu");
			t->priority = (int)num(line, "prio");
			t->cycles = (uint64_t)num(line, "cycles");
			t->missed = (uint64_t)num(line, "missed");
			t->min = (uint64_t)num(line, "min");
			t->max = (uint64_t)num(line, "max");
			t->sum = (uint64_t)num(line, "sum");
			v.hist[v.nthreads] = calloc(us.nbuckets > ns.nbuckets ? us.nbuckets : ns.nbuckets, sizeof(uint64_t));
			t->hist = v.hist[v.nthreads];
			bf = field(line, "buckets");
			snprintf(buckets, sizeof(buckets), "%s", bf ? bf : "");
			for (char *tok = strtok_r(buckets, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				unsigned long long lo, count;
				char hi[32];
				size_t idx;

				if (sscanf(tok, "%llu:%31[^:]:%llu", &lo, hi, &count) != 3) {
					fprintf(stderr, "%s: bad bucket %s\n", v.name, tok);
					return 1;
				}
				idx = hist_index(l, lo);
				if (hist_lower(l, idx) != lo || (strcmp(hi, "-") ? hist_upper(l, idx) != strtoull(hi, NULL, 10)
										  : hist_upper(l, idx) != UINT64_MAX)) {
					fprintf(stderr, "%s: bucket %s is not one of the sampler's\n", v.name, tok);
					return 1;
				}
				v.hist[v.nthreads][idx] += count;
			}
			v.nthreads++;
		} else if (!strncmp(line, "gate ", 5)) {
			snprintf(v.gate, sizeof(v.gate), "%.511s", line + 5);
			v.gate[strcspn(v.gate, " ")] = '\0';
		} else if (!strncmp(line, "expect ", 7)) {
			struct expect *e = &v.e[v.nexpect++];
			sscanf(line + 7, "%63s %15s", e->thread, e->status);
			snprintf(e->value, sizeof(e->value), "%s", field(line, "value"));
			snprintf(e->bound, sizeof(e->bound), "%s", field(line, "bound"));
			snprintf(e->lower, sizeof(e->lower), "%s", field(line, "lower") ? field(line, "lower") : "(missing)");
			e->samples = (unsigned long long)num(line, "samples");
		} else if (!strncmp(line, "end", 3)) {
			run_vector(&v, l);
			for (int i = 0; i < v.nthreads; i++)
				free(v.hist[i]);
			vectors++;
		}
	}
	fclose(f);
	CHECK(vectors >= 25);
	CHECK_DONE();
}
