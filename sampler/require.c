// SPDX-License-Identifier: GPL-2.0-or-later
#include "require.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "numparse.h"
#include "record.h"

#define JUDGE "cannot be judged here:" /* a requirement this machine cannot answer is never met */
#define RT_RUNTIME "/proc/sys/kernel/sched_rt_runtime_us"

/* The items, declared once: parsing, and the order the reasons come in (conditions.py's). */
static const struct item {
	const char *name;
	unsigned bit;
	enum { I_FLAG, I_TEXT, I_COUNT } type;
	size_t off;   /* I_TEXT: the field of struct require_spec */
} items[] = {
	{"preempt_rt", REQ_PREEMPT_RT, I_FLAG, 0},
	{"isolated_cpus", REQ_ISOLATED_CPUS, I_FLAG, 0},
	{"governor", REQ_GOVERNOR, I_TEXT, offsetof(struct require_spec, governor)},
	{"bare_metal", REQ_BARE_METAL, I_FLAG, 0},
	{"rt_throttling_off", REQ_RT_THROTTLING_OFF, I_FLAG, 0},
	{"architecture", REQ_ARCHITECTURE, I_TEXT, offsetof(struct require_spec, architecture)},
	{"compatible", REQ_COMPATIBLE, I_TEXT, offsetof(struct require_spec, compatible)},
	{"dmi_product", REQ_DMI_PRODUCT, I_TEXT, offsetof(struct require_spec, dmi_product)},
	{"cpu_count", REQ_CPU_COUNT, I_COUNT, 0},
	{"no_competing_rt", REQ_NO_COMPETING_RT, I_FLAG, 0},
};
#define NITEMS (sizeof(items) / sizeof(items[0]))
#define MACHINE_KEYS (REQ_ARCHITECTURE | REQ_COMPATIBLE | REQ_DMI_PRODUCT | REQ_CPU_COUNT)

int require_parse(const char *item, struct require_spec *spec, char *err, size_t errlen)
{
	size_t klen = strcspn(item, "=");
	const char *value = item[klen] ? item + klen + 1 : NULL;

	for (size_t i = 0; i < NITEMS; i++) {
		const struct item *it = &items[i];
		uint64_t n;

		if (strlen(it->name) != klen || strncmp(item, it->name, klen))
			continue;
		if (spec->given & it->bit) {
			snprintf(err, errlen, "%s is given twice", it->name);
			return -1;
		}
		if (it->type == I_FLAG && value) {
			snprintf(err, errlen, "%s takes no value", it->name);
			return -1;
		}
		if (it->type == I_COUNT && (!value || parse_u64(value, 1, 4096, &n))) {
			snprintf(err, errlen, "%s needs a CPU count (1..4096)", it->name);
			return -1;
		}
		if (it->type == I_TEXT) {
			int blank = 1, bad = 0;

			for (const unsigned char *c = (const unsigned char *)(value ? value : ""); *c; c++) {
				blank &= *c == ' ' || *c == '\t';
				bad |= *c < 0x20 || *c == 0x7f;
			}
			if (!value || blank || bad || strlen(value) >= REQUIRE_TEXT_LEN) {
				snprintf(err, errlen, "%s needs a value: %s=TEXT (printable, 1..%d bytes)", it->name,
					 it->name, REQUIRE_TEXT_LEN - 1);
				return -1;
			}
			memcpy((char *)spec + it->off, value, strlen(value) + 1);
		}
		if (it->type == I_COUNT)
			spec->cpu_count = (int)n;
		spec->given |= it->bit;
		return 0;
	}
	snprintf(err, errlen, "unknown requirement (preempt_rt, isolated_cpus, governor=NAME, bare_metal, "
		 "rt_throttling_off, architecture=X, compatible=X, dmi_product=X, cpu_count=N, no_competing_rt)");
	return -1;
}

int require_measured_cpus(const struct params *p, int *cpus, int max)
{
	int n = 0;

	for (int i = 0; i < p->num_threads; i++) {
		int seen = 0;

		if (p->thread_cpu[i] < 0)
			return -1;
		for (int k = 0; k < n; k++)
			seen |= cpus[k] == p->thread_cpu[i];
		if (!seen && n < max)
			cpus[n++] = p->thread_cpu[i];
	}
	return n;
}

static struct require_result *add(struct require_report *out, const char *key)
{
	struct require_result *r = &out->r[out->n < REQUIRE_MAX ? out->n++ : REQUIRE_MAX - 1];

	r->key = key;
	r->met = 1;
	r->reason[0] = '\0';
	return r;
}

static void unmet(struct require_result *r, const char *fmt, ...)
{
	va_list ap;

	r->met = 0;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

/* Python's str() of an optional string. */
static const char *py(const char *s)
{
	return s ? s : "None";
}

static int contains(const int *cpus, int n, int cpu)
{
	for (int i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return 1;
	return 0;
}

static void isolated(struct require_result *r, const struct sysinfo *s, const int *measured, int nmeasured)
{
	int isol[MAX_CPUS], n = sysinfo_isolcpus(s, isol, MAX_CPUS), sorted[MAX_CPUS], ns = 0;
	char outside[1024] = "", list[4096] = "";
	size_t used = 0;

	if (n > MAX_CPUS)
		n = MAX_CPUS;
	if (nmeasured < 0) {
		unmet(r, "requires isolated CPUs, but the measurement's threads are not pinned");
		return;
	}
	for (int i = 0; i < nmeasured; i++)
		if (!contains(isol, n, measured[i]))
			used += (size_t)snprintf(outside + used, used < sizeof(outside) ? sizeof(outside) - used : 0,
						 "%s%d", used ? "," : "", measured[i]);
	if (!used)
		return;
	/* sorted(set(isolated)), as Python prints a list: [2, 3] */
	for (int c = 0; c < MAX_CPUS; c++)
		if (contains(isol, n, c))
			sorted[ns++] = c;
	used = 0;
	for (int i = 0; i < ns && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%d", i ? ", " : "[", sorted[i]);
	if (ns && used < sizeof(list))
		snprintf(list + used, sizeof(list) - used, "]");
	unmet(r, "requires isolated CPUs; cpu %s not in isolcpus (%s)", outside, ns ? list : "none");
}

static void governor(struct require_result *r, const char *wanted, const struct sysinfo *s, const int *measured,
		     int nmeasured)
{
	char wrong[REQUIRE_REASON_LEN] = "";
	size_t used = 0;

	if (!sysinfo_has_governors(s)) {
		unmet(r, "requires governor %s; %s no cpufreq governor on this machine", wanted, JUDGE);
		return;
	}
	int cpus[MAX_CPUS], n = sysinfo_governor_cpus(s, cpus, MAX_CPUS);

	for (int i = 0; i < n && i < MAX_CPUS; i++) {
		const int c = cpus[i];
		const char *g = sysinfo_governor(s, c);

		if (!g || strcmp(g, wanted) == 0 || (nmeasured >= 0 && !contains(measured, nmeasured, c)))
			continue;
		if (used < sizeof(wrong))
			used += (size_t)snprintf(wrong + used, sizeof(wrong) - used, "%scpu%d is %s", used ? ", " : "", c, g);
	}
	if (used)
		unmet(r, "requires governor %s; %s", wanted, wrong);
}

/* "compatible a, b" / "no devicetree compatible", as machine_mismatch's show(). */
static void show(char *buf, size_t len, unsigned key, const struct require_spec *want, const struct sysinfo *s)
{
	const char *v, *list[64];
	size_t used;
	int n;

	switch (key) {
	case REQ_ARCHITECTURE:
		v = want ? want->architecture : sysinfo_architecture(s);
		snprintf(buf, len, "%s", v && v[0] ? v : "an unknown architecture");
		return;
	case REQ_DMI_PRODUCT:
		v = want ? want->dmi_product : sysinfo_dmi_product(s);
		if (v && v[0])
			snprintf(buf, len, "DMI product %s", v);
		else
			snprintf(buf, len, "no DMI product");
		return;
	case REQ_CPU_COUNT: {
		int n = want ? want->cpu_count : sysinfo_cpu_count(s);
		if (n)
			snprintf(buf, len, "%d CPUs", n);
		else
			snprintf(buf, len, "an unknown CPU count");
		return;
	}
	default:
		if (want) {
			snprintf(buf, len, "compatible %s", want->compatible);
			return;
		}
		n = sysinfo_compatibles(s, list, 64);
		if (n <= 0) {
			snprintf(buf, len, "no devicetree compatible");
			return;
		}
		used = (size_t)snprintf(buf, len, "compatible ");
		for (int i = 0; i < n && i < 64 && used < len; i++)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", list[i]);
	}
}

static void machine(struct require_result *r, const struct require_spec *spec, const struct sysinfo *s)
{
	static const unsigned order[] = {REQ_ARCHITECTURE, REQ_COMPATIBLE, REQ_DMI_PRODUCT, REQ_CPU_COUNT};
	char wanted[REQUIRE_REASON_LEN / 2] = "", actual[REQUIRE_REASON_LEN / 2] = "";
	size_t uw = 0, ua = 0;
	const char *arch = sysinfo_architecture(s), *dmi = sysinfo_dmi_product(s);
	int wrong = 0;

	wrong |= (spec->given & REQ_ARCHITECTURE) && (!arch || strcmp(arch, spec->architecture));
	wrong |= (spec->given & REQ_COMPATIBLE) && !sysinfo_compatible(s, spec->compatible);
	wrong |= (spec->given & REQ_DMI_PRODUCT) && (!dmi || strcmp(dmi, spec->dmi_product));
	wrong |= (spec->given & REQ_CPU_COUNT) && spec->cpu_count != sysinfo_cpu_count(s);
	if (!wrong)
		return;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		char w[1024], a[1024];

		if (!(spec->given & order[i]))
			continue;
		show(w, sizeof(w), order[i], spec, s);
		show(a, sizeof(a), order[i], NULL, s);
		if (uw < sizeof(wanted))
			uw += (size_t)snprintf(wanted + uw, sizeof(wanted) - uw, "%s%s", uw ? ", " : "", w);
		if (ua < sizeof(actual))
			ua += (size_t)snprintf(actual + ua, sizeof(actual) - ua, "%s%s", ua ? ", " : "", a);
	}
	unmet(r, "this file is for %s; this machine is %s", wanted, actual);
}

void require_judge(const struct require_spec *spec, const struct sysinfo *s, const int *measured, int nmeasured,
		   struct require_report *out)
{
	const char *model = sysinfo_preemption(s);
	long runtime;

	out->n = 0;
	if (spec->given & REQ_PREEMPT_RT) {
		struct require_result *r = add(out, "preempt_rt");

		if (!model || strcmp(model, "unknown") == 0)
			unmet(r, "requires a PREEMPT_RT kernel; %s the preemption model of %s is unknown", JUDGE,
			      py(sysinfo_release(s)));
		else if (strcmp(model, "PREEMPT_RT") != 0)
			unmet(r, "requires a PREEMPT_RT kernel; %s is %s (%s)", py(sysinfo_release(s)), model,
			      py(sysinfo_preemption_source(s)));
	}
	if (spec->given & REQ_ISOLATED_CPUS)
		isolated(add(out, "isolated_cpus"), s, measured, nmeasured);
	if (spec->given & REQ_GOVERNOR)
		governor(add(out, "governor"), spec->governor, s, measured, nmeasured);
	if (spec->given & REQ_BARE_METAL) {
		struct require_result *r = add(out, "bare_metal");

		if (sysinfo_virtualisation(s))
			unmet(r, "requires bare metal; running under %s", sysinfo_virtualisation(s));
	}
	if (spec->given & REQ_RT_THROTTLING_OFF) {
		struct require_result *r = add(out, "rt_throttling_off");

		if (!sysinfo_rt_runtime(s, &runtime))
			unmet(r, "requires RT throttling off; %s %s is unreadable", JUDGE, RT_RUNTIME);
		else if (runtime != -1)
			unmet(r, "requires RT throttling off; sched_rt_runtime_us is %ld", runtime);
	}
	if (spec->given & MACHINE_KEYS)
		machine(add(out, "board"), spec, s);
}

void require_judge_competing(const struct require_spec *spec, const struct rt_tasks *before, int competitors,
			     struct require_report *out)
{
	struct require_result *r;
	const struct rt_tasks *lists[1] = {before};
	int named;
	size_t used;

	if (!(spec->given & REQ_NO_COMPETING_RT))
		return;
	r = add(out, "no_competing_rt");
	if (!competitors)
		return;
	named = rtscan_competitors_text(lists, 1, "requires no competing real-time task on the measured CPUs; found",
					r->reason, sizeof(r->reason));
	used = strlen(r->reason);
	if (competitors > named)
		snprintf(r->reason + used, sizeof(r->reason) - used, "%s%d more", named ? ", and " : " ",
			 competitors - named);
	r->met = 0;
}

int require_unmet(const struct require_report *r, char *buf, size_t len)
{
	size_t used = 0;
	int n = 0;

	if (len)
		buf[0] = '\0';
	for (int i = 0; i < r->n; i++) {
		if (r->r[i].met)
			continue;
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", n ? "; " : "", r->r[i].reason);
		n++;
	}
	return n;
}

void require_write_json(FILE *f, const struct require_report *r)
{
	fputc('[', f);
	for (int i = 0; i < r->n; i++) {
		fprintf(f, "%s{\"key\": \"%s\", \"met\": %s, \"reason\": ", i ? ", " : "", r->r[i].key,
			r->r[i].met ? "true" : "false");
		record_json_string(f, r->r[i].met ? NULL : r->r[i].reason);
		fputc('}', f);
	}
	fputc(']', f);
}
