// SPDX-License-Identifier: GPL-2.0-or-later
/* Native gate evaluation: a port of harness/rtgate/core/gates.py and gate_kinds.py decisions. */
#include "gate.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mathfns.h"
#include "numparse.h"

/* libm, loaded when the first gate is evaluated (mathfns.h) */
static const struct mathfns *M;

static void set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* The --gate keys: one table for parsing, ranges and --dump-contract. */
enum gkey_type { GK_NAME, GK_KIND, GK_DECIMAL, GK_COUNT, GK_LIST, GK_SCOPE };
enum gkey_id { GK_ID_NAME, GK_ID_KIND, GK_ID_LIMIT, GK_ID_ABOVE, GK_ID_RATE, GK_ID_PERCENTILE,
	       GK_ID_MAX_COUNT, GK_ID_MAX_RATE, GK_ID_CONFIDENCE, GK_ID_MIN_SAMPLES, GK_ID_THREADS,
	       GK_ID_CPUS, GK_ID_SCOPE, GK_ID_COUNT };

static const struct gate_key {
	const char *key;
	enum gkey_type type;
	double min, max;
	int min_open, max_open;   /* bounds excluded */
} gate_keys[GK_ID_COUNT] = {
	[GK_ID_NAME] = {"name", GK_NAME, 0, 0, 0, 0},
	[GK_ID_KIND] = {"kind", GK_KIND, 0, 0, 0, 0},
	[GK_ID_LIMIT] = {"limit", GK_DECIMAL, 0, 1e9, 0, 0},
	[GK_ID_ABOVE] = {"above", GK_DECIMAL, 0, 1e9, 0, 0},
	[GK_ID_RATE] = {"rate", GK_DECIMAL, 0, 1, 0, 1},
	[GK_ID_PERCENTILE] = {"percentile", GK_DECIMAL, 0, 100, 1, 1},
	[GK_ID_MAX_COUNT] = {"max_count", GK_COUNT, 0, GATE_MAX_COUNT, 0, 0},
	[GK_ID_MAX_RATE] = {"max_rate", GK_DECIMAL, 0, 1, 0, 1},
	[GK_ID_CONFIDENCE] = {"confidence", GK_DECIMAL, 0.5, 0.999999, 0, 0},
	[GK_ID_MIN_SAMPLES] = {"min_samples", GK_COUNT, 1, GATE_MAX_COUNT, 0, 0},
	[GK_ID_THREADS] = {"threads", GK_LIST, 0, 1000000, 0, 0},
	[GK_ID_CPUS] = {"cpus", GK_LIST, 0, 1000000, 0, 0},
	[GK_ID_SCOPE] = {"scope", GK_SCOPE, 0, 0, 0, 0},
};

#define KEY(id) (1u << (id))
/* The keys whose meaning depends on the kind: a kind refuses those it does not take, as thresholds.py does. */
#define KIND_KEYS (KEY(GK_ID_LIMIT) | KEY(GK_ID_ABOVE) | KEY(GK_ID_RATE) | KEY(GK_ID_PERCENTILE) | \
		   KEY(GK_ID_MAX_COUNT) | KEY(GK_ID_MAX_RATE) | KEY(GK_ID_CONFIDENCE))

/* Every gate kind, declared once: parsing, --help, the unit of RTGATE-GATE lines and --dump-contract. */
static const struct gate_kind_def {
	const char *name;
	unsigned needs;     /* keys it requires */
	unsigned takes;     /* kind-specific keys it accepts (KIND_KEYS) */
	unsigned one_of;    /* keys of which exactly one is required (0: none) */
	const char *unit;   /* the value's unit */
	int share_key;      /* the key that, when given, makes the value a share of samples in % (-1: none) */
} gate_kinds[GATE_KIND_END] = {
	[GATE_MAX_KIND] = {"max", KEY(GK_ID_LIMIT), KEY(GK_ID_LIMIT), 0, "us", -1},
	[GATE_MISS_RATE] = {"miss_rate", KEY(GK_ID_ABOVE) | KEY(GK_ID_RATE),
			    KEY(GK_ID_ABOVE) | KEY(GK_ID_RATE) | KEY(GK_ID_CONFIDENCE), 0, "%", GK_ID_RATE},
	[GATE_PERCENTILE] = {"percentile", KEY(GK_ID_PERCENTILE) | KEY(GK_ID_LIMIT),
			     KEY(GK_ID_PERCENTILE) | KEY(GK_ID_LIMIT) | KEY(GK_ID_CONFIDENCE), 0, "us", -1},
	[GATE_AVG] = {"avg", KEY(GK_ID_LIMIT), KEY(GK_ID_LIMIT), 0, "us", -1},
	[GATE_MISSED] = {"missed", 0, KEY(GK_ID_MAX_COUNT) | KEY(GK_ID_MAX_RATE) | KEY(GK_ID_CONFIDENCE),
			 KEY(GK_ID_MAX_COUNT) | KEY(GK_ID_MAX_RATE), "periods", GK_ID_MAX_RATE},
};

static int parse_kind(const char *s)
{
	for (int k = 1; k < GATE_KIND_END; k++)
		if (strcmp(s, gate_kinds[k].name) == 0)
			return k;
	return 0;
}

const char *gate_kind_name(int kind)
{
	return kind > 0 && kind < GATE_KIND_END ? gate_kinds[kind].name : "unknown";
}

const char *gate_unit(const struct gate_spec *g)
{
	const struct gate_kind_def *k = &gate_kinds[g->kind];

	return k->share_key >= 0 && (g->keys & KEY(k->share_key)) ? "%" : k->unit;
}

/* The keys of a mask, each as PRE key POST, joined by sep: "limit= and percentile=" for messages,
 * "\"limit\", \"percentile\"" for the contract. */
static void key_names(unsigned mask, const char *sep, const char *pre, const char *post, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int id = 0; id < GK_ID_COUNT && used < len; id++)
		if (mask & KEY(id))
			used += (size_t)snprintf(buf + used, len - used, "%s%s%s%s", used ? sep : "", pre,
						 gate_keys[id].key, post);
}

static int parse_key_decimal(const struct gate_key *k, const char *val, double *out)
{
	if (parse_decimal(val, k->min, k->max, out))
		return -1;
	return (k->min_open && *out <= k->min) || (k->max_open && *out >= k->max) ? -1 : 0;
}

static int set_key(struct gate_spec *g, int id, const char *val, unsigned *seen)
{
	const struct gate_key *k = &gate_keys[id];
	uint64_t u;
	double d;

	*seen |= 1u << id;
	switch (k->type) {
	case GK_NAME:
		if (!val[0] || strlen(val) >= GATE_NAME_LEN || strpbrk(val, " \t\n"))
			return -1;
		strcpy(g->name, val);
		return 0;
	case GK_KIND:
		return (g->kind = parse_kind(val)) ? 0 : -1;
	case GK_SCOPE:
		g->worst = strcmp(val, "worst") == 0;
		return g->worst || strcmp(val, "per_thread") == 0 ? 0 : -1;
	case GK_LIST:
		if (id == GK_ID_THREADS)
			return (g->nthreads = parse_index_list(val, '+', (uint64_t)k->max, g->threads, MAX_THREADS)) > 0 ? 0 : -1;
		return (g->ncpus = parse_index_list(val, '+', (uint64_t)k->max, g->cpus, 64)) > 0 ? 0 : -1;
	case GK_COUNT:
		if (parse_u64(val, (uint64_t)k->min, (uint64_t)k->max, &u))
			return -1;
		if (id == GK_ID_MAX_COUNT)
			g->max_count = (long long)u;
		else
			g->min_samples = u;
		return 0;
	case GK_DECIMAL:
		if (parse_key_decimal(k, val, &d))
			return -1;
		switch (id) {
		case GK_ID_LIMIT: g->limit = d; break;
		case GK_ID_ABOVE: g->above = d; break;
		case GK_ID_RATE: g->rate = d; break;
		case GK_ID_PERCENTILE: g->percentile = d; break;
		case GK_ID_MAX_RATE: g->max_rate = d; break;
		default: g->confidence = d; break;
		}
		return 0;
	}
	return -1;
}

int gate_parse(const char *arg, struct gate_spec *g, char *err, size_t errlen)
{
	char buf[2048];
	char *tok, *save = NULL;
	unsigned seen = 0;
	const struct gate_kind_def *kind;
	char names[160];
#define HAS_ONE(mask) ((mask) && !((mask) & ((mask) - 1)))

	memset(g, 0, sizeof(*g));
	g->max_count = -1;
	g->max_rate = -1;
	g->confidence = 0.95;
	if (strlen(arg) >= sizeof(buf)) {
		set_err(err, errlen, "too long");
		return -1;
	}
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		int id;

		if (!eq) {
			set_err(err, errlen, "'%s' is not KEY=VALUE", tok);
			return -1;
		}
		*eq = '\0';
		for (id = 0; id < GK_ID_COUNT && strcmp(tok, gate_keys[id].key) != 0; id++)
			;
		if (id == GK_ID_COUNT) {
			set_err(err, errlen, "unknown key '%s'", tok);
			return -1;
		}
		if (set_key(g, id, eq + 1, &seen)) {
			set_err(err, errlen, "bad value for %s: '%s'", tok, eq + 1);
			return -1;
		}
	}
	if (!g->name[0] || !g->kind) {
		set_err(err, errlen, "needs name= and kind=");
		return -1;
	}
	kind = &gate_kinds[g->kind];
	if (seen & KIND_KEYS & ~kind->takes) {
		key_names(seen & KIND_KEYS & ~kind->takes, ", ", "", "=", names, sizeof(names));
		set_err(err, errlen, "a %s gate does not take %s", kind->name, names);
		return -1;
	}
	if ((seen & kind->needs) != kind->needs) {
		key_names(kind->needs, " and ", "", "=", names, sizeof(names));
		set_err(err, errlen, "gate %s needs %s", g->name, names);
		return -1;
	}
	if (kind->one_of && !HAS_ONE(seen & kind->one_of)) {
		key_names(kind->one_of, " and ", "", "=", names, sizeof(names));
		set_err(err, errlen, "gate %s needs exactly one of %s", g->name, names);
		return -1;
	}
	g->keys = seen;
#undef HAS_ONE
	return 0;
}

void gate_dump_contract(FILE *f)
{
	static const char *const type_names[] = {"name", "kind", "decimal", "integer", "list", "scope"};
	static const char *const fields[] = GATE_LINE_FIELDS;
	char names[256];

	fprintf(f, "  \"gate_keys\": [\n");
	for (int i = 0; i < GK_ID_COUNT; i++) {
		const struct gate_key *k = &gate_keys[i];

		fprintf(f, "    {\"key\": \"%s\", \"type\": \"%s\"", k->key, type_names[k->type]);
		if (k->type == GK_DECIMAL || k->type == GK_COUNT || k->type == GK_LIST)
			fprintf(f, ", \"min\": %.17g, \"max\": %.17g, \"min_open\": %s, \"max_open\": %s",
				k->min, k->max, k->min_open ? "true" : "false", k->max_open ? "true" : "false");
		fprintf(f, "}%s\n", i == GK_ID_COUNT - 1 ? "" : ",");
	}
	fprintf(f, "  ],\n  \"gate_kinds\": [\n");
	for (int i = 1; i < GATE_KIND_END; i++) {
		const struct gate_kind_def *k = &gate_kinds[i];

		fprintf(f, "    {\"name\": \"%s\", \"needs\": [", k->name);
		key_names(k->needs, ", ", "\"", "\"", names, sizeof(names));
		fprintf(f, "%s], \"takes\": [", names);
		key_names(k->takes, ", ", "\"", "\"", names, sizeof(names));
		fprintf(f, "%s], \"one_of\": [", names);
		key_names(k->one_of, ", ", "\"", "\"", names, sizeof(names));
		fprintf(f, "%s], \"unit\": \"%s\", \"share_key\": ", names, k->unit);
		if (k->share_key >= 0)
			fprintf(f, "\"%s\"", gate_keys[k->share_key].key);
		else
			fprintf(f, "null");
		fprintf(f, "}%s\n", i == GATE_KIND_END - 1 ? "" : ",");
	}
	fprintf(f, "  ],\n  \"gate_line\": {\"prefix\": \"RTGATE-GATE\", \"fields\": [");
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		fprintf(f, "%s\"%s\"", i ? ", " : "", fields[i]);
	fprintf(f, "], \"statuses\": [");
	for (int st = 0; st < GATE_STATUS_END; st++)
		fprintf(f, "%s\"%s\"", st ? ", " : "", gate_status_name(st));
	fprintf(f, "], \"no_value\": \"-\"}\n");
}

const char *gate_status_name(int status)
{
	switch (status) {
	case GATE_PASS: return "PASS";
	case GATE_INCONCLUSIVE: return "INCONCLUSIVE";
	case GATE_FAIL: return "FAIL";
	default: return "ERROR";
	}
}

/* ------------------------------------------------------------ Clopper-Pearson, as stats.py */

static double betacf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double qab = a + b, qap = a + 1.0, qam = a - 1.0, c = 1.0, d = 1.0 - qab * x / qap, h;

	d = 1.0 / (fabs(d) > tiny ? d : tiny);
	h = d;
	for (int m = 1; m < 10000; m++) {
		double m2 = 2.0 * m, aa, delta;

		aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		d = 1.0 + aa * d;
		d = 1.0 / (fabs(d) > tiny ? d : tiny);
		c = 1.0 + aa / c;
		c = fabs(c) > tiny ? c : tiny;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1.0 + aa * d;
		d = 1.0 / (fabs(d) > tiny ? d : tiny);
		c = 1.0 + aa / c;
		c = fabs(c) > tiny ? c : tiny;
		delta = d * c;
		h *= delta;
		if (fabs(delta - 1.0) < 1e-15)
			break;
	}
	return h;
}

/* log(1 + y) - y without the cancellation near 0: log(1 + y) = 2 atanh(y / (2 + y)). */
static double log1pmx(double y)
{
	double t, t2, lead, power, rest = 0.0;

	if (y <= -1.0) /* x * r rounded up to r, x a few 1e-16 under 1: the density is 0 there */
		return -INFINITY;
	if (fabs(y) > 0.5)
		return M->log1p(y) - y;
	t = y / (2.0 + y);
	t2 = t * t;
	lead = -y * y / (2.0 + y);
	power = 2.0 * t * t2;
	for (double j = 3.0; j < 200.0; j += 2.0) {
		double term = power / j;

		rest += term;
		if (fabs(term) <= 1e-17 * fabs(lead))
			break;
		power *= t2;
	}
	return lead + rest;
}

/* ln(Gamma(x) / (sqrt(2 pi) x^(x - 1/2) e^-x)) for x > 0: small and exact where lgamma is large. */
static double lgamma_star(double x)
{
	if (x >= 10.0) {
		double y = 1.0 / x, y2 = y * y;

		return y * (1.0 / 12 - y2 * (1.0 / 360 - y2 * (1.0 / 1260 - y2 * (1.0 / 1680 - y2 / 1188))));
	}
	return M->lgamma(x) - (x - 0.5) * M->log(x) + x - 0.5 * M->log(2.0 * M_PI);
}

/* erfc(x) for x >= 0 (libm is loaded through mathfns.h, which has no erfc): below 2 from the series
 * erf(x) = 2/sqrt(pi) exp(-x^2) sum_n (2 x^2)^n x / (1 3 5 ... (2n+1)) (positive terms), above it from
 * the continued fraction erfc(x) = exp(-x^2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))). */
static double erfc_pos(double x)
{
	if (x < 2.0) {
		double term = x, sum = x, x2 = 2.0 * x * x;

		for (int n = 1; n < 200 && term > 1e-17 * sum; n++) {
			term *= x2 / (2.0 * n + 1.0);
			sum += term;
		}
		return 1.0 - 2.0 / M->sqrt(M_PI) * M->exp(-x * x) * sum;
	}
	{
		double f = x, c = x, d = 0.0;

		for (int j = 1; j < 500; j++) {
			double an = 0.5 * j, delta;

			d = 1.0 / (x + an * d);
			c = x + an / c;
			delta = c * d;
			f *= delta;
			if (fabs(delta - 1.0) < 1e-16)
				break;
		}
		return M->exp(-x * x) / M->sqrt(M_PI) / f;
	}
}

/* Temme's uniform expansion of the incomplete beta for large a and b: rtgate/core/stats.py says how, and
 * tests/unit/test_stats.py derives the coefficients of h_j(gamma), of gamma^0 .. gamma^j. */
#define TEMME_TERMS 11
static const double temme_h[TEMME_TERMS][TEMME_TERMS] = {
	{1.0},
	{0.0, -0.3333333333333333},
	{0.25, 0.0, 0.08333333333333333},
	{0.0, -0.06666666666666667, 0.0, -0.014814814814814815},
	{0.010416666666666666, 0.0, 0.006944444444444444, 0.0, 0.0011574074074074073},
	{0.0, 0.004761904761904762, 0.0, 0.0026455026455026454, 0.0, 0.0003527336860670194},
	{-0.0026041666666666665, 0.0, -0.004270833333333333, 0.0, -0.0016087962962962963, 0.0,
	 -0.0001787551440329218},
	{0.0, 0.0015873015873015873, 0.0, 0.0014109347442680777, 0.0, 0.00041152263374485596, 0.0,
	 3.919263178522438e-05},
	{-9.765625e-05, 0.0, -0.00018973214285714286, 0.0, -0.00011140046296296297, 0.0,
	 -2.6225382128159905e-05, 0.0, -2.185448510679992e-06},
	{0.0, -0.00018037518037518038, 0.0, -0.0002541285874619208, 0.0, -0.00012265512265512266, 0.0,
	 -2.502983984465466e-05, 0.0, -1.85406221071516e-06},
	{5.154079861111111e-05, 0.0, 0.00019845329624905517, 0.0, 0.00018232529315738641, 0.0,
	 7.050181076374308e-05, 0.0, 1.2445067011429629e-05, 0.0, 8.296711340953087e-07},
};
#define TEMME_MIN_A 200.0
#define TEMME_W2 0.25

struct beta_tails {
	double a, b, r, front0, norm, w2_max, up[TEMME_TERMS], down[TEMME_TERMS];
	int temme;
};

static void beta_tails_init(struct beta_tails *t, double a, double b)
{
	double r = a + b, k = M->exp(lgamma_star(r) - lgamma_star(a) - lgamma_star(b)), spread = a * b / r;

	t->a = a;
	t->b = b;
	t->r = r;
	/* x^a (1 - x)^b / B(a, b) = front0 exp(-r zeta^2 / 2): its value at x0, from Stirling, times K */
	t->front0 = M->sqrt(spread) * k / M->sqrt(2.0 * M_PI);
	t->norm = k / M->sqrt(2.0 * M_PI);
	t->temme = spread >= TEMME_MIN_A;
	t->w2_max = TEMME_W2 * spread;
	if (t->temme) {
		double gm = (b - a) / M->sqrt(a * b), g2 = gm * gm, scale = 1.0, shrink = 1.0 / M->sqrt(r);

		/* h_j(gamma) r^(-j/2), gm = gamma: Horner in gamma^2, as h_j has the parity of j */
		for (int j = 0; j < TEMME_TERMS; j++) {
			double v = 0.0;

			for (int i = j; i >= 0; i -= 2)
				v = v * g2 + temme_h[j][i];
			v *= scale * (j % 2 ? gm : 1.0);
			t->up[j] = v;
			t->down[j] = j % 2 ? -v : v;
			scale *= shrink;
		}
	}
}

/*
 * 1 - I_x(a, b) for integer a as P(Bin(a + b - 1, x) <= a - 1), its a terms summed from the largest: the
 * continued fraction of the upper tail takes 1 - x, off by 1e-16 / x in doubles (stats.py says more).
 */
static double binomial_sum(const struct beta_tails *t, double x, double front)
{
	double term = front / (x * t->b), ratio = (1.0 - x) / x, total = 0.0;

	for (double i = t->a - 1.0; term > 1e-17 * total; i -= 1.0) {
		total += term;
		if (i <= 0.0)
			break;
		term *= i / (t->r - i) * ratio;
	}
	return total;
}

/* I_x(a, b), 1 - I_x(a, b), each computed where it is small, and the Beta(a, b) density at x (0 < x < 1). */
static void beta_tails_at(const struct beta_tails *t, double x, double *lower, double *upper, double *density)
{
	double a = t->a, b = t->b, d = x * t->r - a, e, front;

	e = -a * log1pmx(d / a) - b * log1pmx(-d / b); /* r zeta^2 / 2 */
	front = t->front0 * M->exp(-e);
	*density = front / (x * (1.0 - x));
	if (t->temme && 2.0 * e <= t->w2_max) {
		double w = M->sqrt(2.0 * e), g = M->exp(-e), wg = g, n2, n1, tail, nj;
		const double *hs = d >= 0 ? t->up : t->down;

		n2 = M->sqrt(0.5 * M_PI) * erfc_pos(w * M_SQRT1_2);
		n1 = g;
		tail = hs[0] * n2 + hs[1] * n1;
		for (int j = 2; j < TEMME_TERMS; j++) {
			wg *= w;
			nj = wg + (j - 1) * n2;
			n2 = n1;
			n1 = nj;
			tail += hs[j] * nj;
		}
		tail *= t->norm;
		*lower = d >= 0 ? 1.0 - tail : tail;
		*upper = d >= 0 ? tail : 1.0 - tail;
	} else if (front == 0.0) { /* far out in a tail (a bisection step): no continued fraction for 0 */
		*lower = x < (a + 1.0) / (t->r + 2.0) ? 0.0 : 1.0;
		*upper = 1.0 - *lower;
	} else if (x < (a + 1.0) / (t->r + 2.0)) {
		*lower = front * betacf(a, b, x) / a;
		*upper = 1.0 - *lower;
	} else if (x < 0.5 && a == M->ceil(a)) {
		*upper = binomial_sum(t, x, front);
		*lower = 1.0 - *upper;
	} else {
		*upper = front * betacf(b, a, 1.0 - x) / b; /* 1 - x is exact from 0.5 up */
		*lower = 1.0 - *upper;
	}
}

static double binom_cdf(unsigned long long k, unsigned long long n, double p)
{
	struct beta_tails t;
	double lower, upper, density;

	if (k >= n || p <= 0.0)
		return 1.0;
	if (p >= 1.0)
		return 0.0;
	beta_tails_init(&t, (double)k + 1.0, (double)(n - k));
	beta_tails_at(&t, p, &lower, &upper, &density);
	return upper;
}

static double normal_quantile(double q)
{
	static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
				   1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
	static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
				   6.680131188771972e+01, -1.328068155288572e+01};
	static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
				   -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
	static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
				   3.754408661907416e+00};
	double r, t;

	if (q < 0.02425) {
		r = M->sqrt(-2.0 * M->log(q));
		return (((((c[0] * r + c[1]) * r + c[2]) * r + c[3]) * r + c[4]) * r + c[5]) /
		       ((((d[0] * r + d[1]) * r + d[2]) * r + d[3]) * r + 1.0);
	}
	if (q > 1.0 - 0.02425)
		return -normal_quantile(1.0 - q);
	r = q - 0.5;
	t = r * r;
	return (((((a[0] * t + a[1]) * t + a[2]) * t + a[3]) * t + a[4]) * t + a[5]) * r /
	       (((((b[0] * t + b[1]) * t + b[2]) * t + b[3]) * t + b[4]) * t + 1.0);
}

/*
 * A bracket [*lo, *hi] around the p where P(X <= k | n, p) = level (0 <= k < n, 0 < level < 1):
 * Newton from the Cornish-Fisher start, every evaluation narrowing the bracket, as stats.py.
 */
static void cdf_root(unsigned long long k, unsigned long long n, double level, double *plo, double *phi)
{
	const double rel_tol = 1e-7;
	double a = (double)k + 1.0, b = (double)(n - k), lo, hi, p, z, mean, sd, skew;
	int low_side = level > 0.5;
	struct beta_tails t;

	beta_tails_init(&t, a, b);
	/* k is a median of Binomial(n, k/n): P(X <= k | k/n) >= 1/2 >= P(X <= k | (k+1)/n). */
	lo = level <= 0.5 ? (double)k / (double)n : 0.0;
	hi = level >= 0.5 ? ((double)k + 1.0) / (double)n : 1.0;
	z = normal_quantile(1.0 - level);
	mean = a / (a + b);
	sd = M->sqrt(a * b / ((a + b) * (a + b) * (a + b + 1.0)));
	skew = 2.0 * (b - a) * M->sqrt(a + b + 1.0) / ((a + b + 2.0) * M->sqrt(a * b));
	p = mean + sd * (z + skew * (z * z - 1.0) / 6.0);
	if (p < lo + (hi - lo) * 1e-9)
		p = lo + (hi - lo) * 1e-9;
	if (p > hi - (hi - lo) * 1e-9)
		p = hi - (hi - lo) * 1e-9;
	if (!(lo < p && p < hi)) /* that nudge is below the spacing of doubles next to 1 (k = n - 1 at 3e7 trials) */
		p = (lo + hi) / 2.0;
	for (int i = 0; i < 200; i++) {
		double lower, upper, density, f, step, nxt, reach;

		beta_tails_at(&t, p, &lower, &upper, &density);
		/* each tail where it is small: f keeps its relative precision at levels near 0 and near 1 */
		f = low_side ? (1.0 - level) - lower : upper - level;
		if (f > 0)
			lo = p;
		else
			hi = p;
		if (hi - lo <= rel_tol * hi)
			break;
		step = density > 0 ? f / density : INFINITY;
		/* Newton's error, bounded as stats.py does: when it is narrow enough, no evaluation closes the bracket */
		reach = 2.0 * fabs(step);
		if (p - reach > 0.0 && p + reach < 1.0) {
			double left = p - reach, right = p + reach, m1, m2, err, root;

			m1 = fabs((a - 1.0) / left - (b - 1.0) / (1.0 - left));
			m2 = fabs((a - 1.0) / right - (b - 1.0) / (1.0 - right));
			m1 = m1 > m2 ? m1 : m2; /* the larger end of J: psi' falls */
			if (m1 * reach < 0.5) {
				err = 2.0 * m1 * M->exp(m1 * reach) * step * step * 1.01;
				root = p + step;
				if (2.0 * err <= rel_tol * (root + err) && lo <= root - err && root + err <= hi) {
					*plo = root - err;
					*phi = root + err;
					return;
				}
			}
		}
		if (fabs(step) < rel_tol * p / 4)
			nxt = f > 0 ? p + rel_tol * p / 2 : p - rel_tol * p / 2;
		else
			nxt = p + step;
		p = (lo < nxt && nxt < hi) ? nxt : (lo + hi) / 2.0;
	}
	*plo = lo;
	*phi = hi;
}

/* Outward margin on every bound, relative: the incomplete beta in doubles can sit a few 1e-9 on the
 * wrong side of the exact root. The same as rtgate.core.stats.CP_MARGIN (the shared vectors hold both). */
#define CP_MARGIN 1e-8

/* Rounded up by at most 1e-7 + CP_MARGIN relative, never down: a gate never passes on rounding. */
double gate_cp_upper(unsigned long long k, unsigned long long n, double confidence)
{
	double lo, hi;

	if (n == 0 || k >= n || !(M = mathfns_get(NULL)))
		return 1.0;
	if (k == 0) /* 1 - (1 - c)^(1/n) without the cancellation of 1 - pow() at large n */
		hi = -M->expm1(M->log1p(-confidence) / (double)n);
	else
		cdf_root(k, n, 1.0 - confidence, &lo, &hi);
	hi *= 1.0 + CP_MARGIN;
	return hi < 1.0 ? hi : 1.0;
}

/* P(X >= k | p) = 1 - confidence; rounded down, never up: a gate never fails on rounding. */
double gate_cp_lower(unsigned long long k, unsigned long long n, double confidence)
{
	double lo, hi;

	if (n == 0 || k == 0 || !(M = mathfns_get(NULL)))
		return 0.0;
	if (k >= n)
		lo = M->exp(M->log1p(-confidence) / (double)n);
	else
		cdf_root(k - 1, n, confidence, &lo, &hi);
	return lo * (1.0 - CP_MARGIN);
}

/* More samples, none above the limit, that would bring the upper bound to the limit (0: none found). */
static unsigned long long clean_to_pass(unsigned long long k, unsigned long long n, double allowed, double conf)
{
	unsigned long long lo = n ? n - 1 : 0, hi = n > k + 1 ? n : k + 1, step;

	if (allowed <= 0.0 || allowed >= 1.0)
		return 0;
	while (!(hi > k && binom_cdf(k, hi, allowed) <= 1.0 - conf)) {
		if (hi > (1ULL << 61))
			return 0;
		hi *= 2;
	}
	while (hi - lo > 1) {
		unsigned long long mid = lo + (hi - lo) / 2;

		if (mid > k && binom_cdf(k, mid, allowed) <= 1.0 - conf)
			hi = mid;
		else
			lo = mid;
	}
	/* The gate's own rule decides ties. Its bound sits up to 1.1e-7 above the exact one: at 1e14 trials that
	 * is 1e7 counts, so they are searched (doubling, then halving), as stats.py does. */
	for (step = 1; gate_cp_upper(k, hi + step - 1, conf) > allowed; step *= 2)
		if (step > (1ULL << 61))
			return 0;
	lo = hi + step / 2 - 1;
	hi = hi + step - 1;
	while (hi - lo > 1) {
		unsigned long long mid = lo + (hi - lo) / 2;

		if (gate_cp_upper(k, mid, conf) <= allowed)
			hi = mid;
		else
			lo = mid;
	}
	return hi - n;
}

/* ------------------------------------------------------------ evaluation */

void gate_thread_ids(const struct run_result *r, char labels[][GATE_NAME_LEN], int nlabels,
		     char ids[][GATE_NAME_LEN])
{
	int several = 0, dup = 0;

	for (int i = 0; i < nlabels && !several; i++)
		for (int j = 0; j < i; j++)
			if (labels[i][0] && labels[j][0] && strcmp(labels[i], labels[j]) != 0)
				several = 1;
	for (int i = 0; i < r->nthreads; i++) {
		const struct thread_result *t = &r->t[i];
		char base[24];
		const char *label = i < nlabels && labels[i][0] ? labels[i] : NULL;

		if (t->cpu >= 0)
			snprintf(base, sizeof(base), "cpu%d", t->cpu);
		else
			snprintf(base, sizeof(base), "t%d", t->index);
		if (several && label)
			snprintf(ids[i], GATE_NAME_LEN, "%s-%s", label, base);
		else
			snprintf(ids[i], GATE_NAME_LEN, "%s", base);
	}
	for (int i = 0; i < r->nthreads && !dup; i++)
		for (int j = 0; j < i; j++)
			if (strcmp(ids[i], ids[j]) == 0)
				dup = 1;
	if (dup)
		for (int i = 0; i < r->nthreads; i++) {
			const char *label = i < nlabels && labels[i][0] ? labels[i] : NULL;
			if (several && label)
				snprintf(ids[i], GATE_NAME_LEN, "%s-t%d", label, r->t[i].index);
			else
				snprintf(ids[i], GATE_NAME_LEN, "t%d", r->t[i].index);
		}
}

/* "%g"-like without trailing noise: integers plain, else two decimals, as gates.py _fmt. */
static void fmt_num(char *buf, size_t len, double v)
{
	if (fabs(v) < 1e15 && v == (double)(long long)v)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.2f", v);
}

static void fmt_pct(char *buf, size_t len, double r)
{
	snprintf(buf, len, "%.4g %%", r * 100.0);
}

static void who(char *buf, size_t len, const struct thread_result *t)
{
	if (t->cpu >= 0)
		snprintf(buf, len, "thread %d (cpu %d, prio %d)", t->index, t->cpu, t->priority);
	else
		snprintf(buf, len, "thread %d (prio %d)", t->index, t->priority);
}

/*
 * Samples above `limit`: *most counts a bucket whole when any value in it could exceed the
 * limit; *fewest counts buckets wholly above it, and at least the max when that is above.
 */
static void count_above(const struct run_result *r, const struct thread_result *t, double limit,
			uint64_t *fewest, uint64_t *most)
{
	*fewest = *most = 0;
	if ((double)t->max <= limit)
		return;
	for (size_t i = 0; i < r->layout->nbuckets; i++) {
		uint64_t hi;

		if (!t->hist[i])
			continue;
		hi = hist_upper(r->layout, i);
		if (hi == UINT64_MAX || (double)(hi - 1) > limit)
			*most += t->hist[i];
		if ((double)hist_lower(r->layout, i) > limit)
			*fewest += t->hist[i];
	}
	if (*fewest == 0)
		*fewest = 1;
	if (*fewest > *most)
		*fewest = *most;
}

/* Conservative percentile: the highest value the q-th sample could have. */
static double percentile(const struct run_result *r, const struct thread_result *t, double q)
{
	uint64_t total = t->cycles, seen = 0;
	double rank = M->ceil(q * (double)total / 100.0 - 1e-9);

	if (rank < 1)
		rank = 1;
	for (size_t i = 0; i < r->layout->nbuckets; i++) {
		uint64_t hi;
		double upper;

		if (!t->hist[i])
			continue;
		seen += t->hist[i];
		if ((double)seen < rank)
			continue;
		hi = hist_upper(r->layout, i);
		upper = hi == UINT64_MAX ? (double)t->max : (double)(hi - 1);
		return upper < (double)t->max ? upper : (double)t->max;
	}
	return (double)t->max;
}

struct eval {
	const struct gate_spec *g;
	const struct run_result *r;
	const struct thread_result *t;
	double scale;
	char who[96];
	struct gate_verdict *v;
};

static void verdict(struct eval *e, int status, const char *fmt, ...)
{
	char text[340];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	e->v->status = status;
	snprintf(e->v->reason, sizeof(e->v->reason), "%s on %s", text, e->who);
}

static void set_value(struct eval *e, double value, double limit, uint64_t samples)
{
	e->v->has_value = 1;
	e->v->value = value;
	e->v->has_limit = 1;
	e->v->limit = limit;
	e->v->samples = samples;
	fmt_num(e->v->value_text, sizeof(e->v->value_text) - 3, value);
	strcat(e->v->value_text, " us");
}

static void fmt_pct_range(char *buf, size_t len, double lo, double hi)
{
	if (lo == hi)
		fmt_pct(buf, len, hi);
	else
		snprintf(buf, len, "%.4g..%.4g %%", lo * 100.0, hi * 100.0);
}

/*
 * Between k_min and k_max of n samples are above the limit: PASS when the upper bound (from
 * k_max) is at or under `allowed`, FAIL when the lower bound (from k_min) is above it, else
 * INCONCLUSIVE with the clean samples that would decide it. Fills text with the reason.
 */
static int decide(struct eval *e, uint64_t k_min, uint64_t k_max, uint64_t n, double allowed, const char *what,
		  char *text, size_t len)
{
	double conf = e->g->confidence, upper = gate_cp_upper(k_max, n, conf), lower = gate_cp_lower(k_min, n, conf);
	double lo_rate = (double)k_min / (double)n, observed = (double)k_max / (double)n;
	char obs[48], bnd[32], low[32], lim[32], count[64];
	int status;
	size_t used;

	e->v->has_value = e->v->has_bound = e->v->has_lower = e->v->has_limit = 1;
	e->v->value = observed;
	e->v->bound = upper;
	e->v->lower = lower;
	e->v->limit = allowed;
	e->v->samples = n;
	fmt_pct_range(obs, sizeof(obs), lo_rate, observed);
	fmt_pct(bnd, sizeof(bnd), upper);
	fmt_pct(low, sizeof(low), lower);
	fmt_pct(lim, sizeof(lim), allowed);
	snprintf(e->v->value_text, sizeof(e->v->value_text), "%s", obs);
	if (k_min == k_max)
		snprintf(count, sizeof(count), "%llu", (unsigned long long)k_max);
	else
		snprintf(count, sizeof(count), "between %llu and %llu", (unsigned long long)k_min,
			 (unsigned long long)k_max);
	snprintf(text, len, "%s of %llu %s (%s; %g %% bounds %s to %s)", count, (unsigned long long)n, what, obs,
		 conf * 100.0, low, bnd);
	used = strlen(text);
	if (upper <= allowed) {
		status = GATE_PASS;
		snprintf(text + used, len - used, ": upper bound <= %s", lim);
	} else if (lower > allowed) {
		status = GATE_FAIL;
		snprintf(text + used, len - used, ": lower bound > %s", lim);
	} else {
		unsigned long long clean = clean_to_pass(k_max, n, allowed, conf);

		status = GATE_INCONCLUSIVE;
		if (clean)
			snprintf(text + used, len - used, ": the bounds straddle %s; %llu more clean samples would pass it",
				 lim, clean);
		else
			snprintf(text + used, len - used, ": the bounds straddle %s", lim);
	}
	return status;
}

static void rate(struct eval *e, uint64_t k_min, uint64_t k_max, uint64_t n, double allowed, const char *what)
{
	char text[300];
	int status = decide(e, k_min, k_max, n, allowed, what, text, sizeof(text));

	verdict(e, status, "%s", text);
}

/* A latency figure against the gate's limit: "max 112 us > 80 us". */
static void compare(struct eval *e, const char *what, double v, uint64_t samples)
{
	char a[32], b[32];
	int fail = v > e->g->limit;

	set_value(e, v, e->g->limit, samples);
	fmt_num(a, sizeof(a), v);
	fmt_num(b, sizeof(b), e->g->limit);
	verdict(e, fail ? GATE_FAIL : GATE_PASS, "%s %s us %s %s us", what, a, fail ? ">" : "<=", b);
}

static void eval_thread(struct eval *e)
{
	const struct gate_spec *g = e->g;
	const struct thread_result *t = e->t;
	uint64_t n = t->cycles + t->missed, need = g->min_samples;
	char a[32], b[32];

	if (t->cycles == 0) {
		verdict(e, GATE_ERROR, "no samples (0 cycles)");
		return;
	}
	if (!need)
		need = g->kind == GATE_PERCENTILE ? (uint64_t)M->ceil(100.0 / (100.0 - g->percentile) - 1e-9) : 1;
	if (n < need) {
		e->v->samples = n;
		verdict(e, GATE_INCONCLUSIVE, "only %llu samples, the %s gate needs %llu", (unsigned long long)n,
			gate_kind_name(g->kind), (unsigned long long)need);
		return;
	}
	switch (g->kind) {
	case GATE_MAX_KIND:
		compare(e, "max", (double)t->max / e->scale, t->cycles);
		return;
	case GATE_AVG:
		compare(e, "avg", (double)t->sum / (double)t->cycles / e->scale, t->cycles);
		return;
	case GATE_PERCENTILE: {
		/* "pQ <= L" is "at most (100 - Q) % of samples above L": judged by the bounds of that rate. */
		double q = g->percentile, qh = q, v = 0, allowed = (100.0 - q) / 100.0;
		uint64_t k_min, k_max;
		char name[32], what[128], text[300];
		int status, is_missed = 0;

		snprintf(name, sizeof(name), "p%g", q);
		count_above(e->r, t, g->limit * e->scale, &k_min, &k_max);
		if (t->missed) {
			is_missed = M->ceil(q * (double)n / 100.0 - 1e-9) > (double)t->cycles;
			qh = (q / 100.0) * (double)n / (double)t->cycles;
			qh = 100.0 * (qh < 1.0 ? qh : 1.0);
		}
		if (!is_missed)
			v = percentile(e->r, t, qh) / e->scale;
		fmt_num(b, sizeof(b), g->limit);
		if (t->missed)
			snprintf(what, sizeof(what), "samples above %s us or missed (%llu missed)", b,
				 (unsigned long long)t->missed);
		else
			snprintf(what, sizeof(what), "samples above %s us", b);
		status = decide(e, k_min + t->missed, k_max + t->missed, n, allowed, what, text, sizeof(text));
		e->v->has_bound = e->v->has_lower = 0;
		e->v->bound = e->v->lower = 0;
		if (is_missed) {
			e->v->has_value = 0;
			e->v->value = 0;
			e->v->limit = g->limit;
			snprintf(e->v->value_text, sizeof(e->v->value_text), "missed");
			verdict(e, status, "%s is a missed period: %s", name, text);
		} else {
			set_value(e, v, g->limit, n);
			fmt_num(a, sizeof(a), v);
			verdict(e, status, "%s %s us: %s", name, a, text);
		}
		return;
	}
	case GATE_MISS_RATE: {
		uint64_t k_min, k_max;
		char what[96];

		count_above(e->r, t, g->above * e->scale, &k_min, &k_max);

		fmt_num(a, sizeof(a), g->above);
		if (t->missed)
			snprintf(what, sizeof(what), "samples above %s us or missed (%llu missed)", a,
				 (unsigned long long)t->missed);
		else
			snprintf(what, sizeof(what), "samples above %s us", a);
		rate(e, k_min + t->missed, k_max + t->missed, n, g->rate, what);
		return;
	}
	default:
		if (g->max_count >= 0) {
			e->v->has_value = e->v->has_limit = 1;
			e->v->value = (double)t->missed;
			e->v->limit = (double)g->max_count;
			e->v->samples = n;
			snprintf(e->v->value_text, sizeof(e->v->value_text), "%llu", (unsigned long long)t->missed);
			verdict(e, (long long)t->missed > g->max_count ? GATE_FAIL : GATE_PASS, "%llu missed periods %s %lld",
				(unsigned long long)t->missed, (long long)t->missed > g->max_count ? ">" : "<=", g->max_count);
		} else {
			rate(e, t->missed, t->missed, n, g->max_rate, "periods missed");
		}
	}
}

int gate_evaluate(const struct gate_spec *g, const struct run_result *r, char ids[][GATE_NAME_LEN],
		  struct gate_verdict *out, int max_out)
{
	int chosen[MAX_THREADS], nchosen = 0, count = 0;
	const char *problem = NULL;
	char missing[160] = "";
	double scale = r->p->nsecs ? 1000.0 : 1.0;

	M = mathfns_get(&problem);
	if (!r->complete)
		problem = "the results are a checkpoint of a run that did not finish";
	else if (r->reason == STOP_ERROR)
		problem = "the sampler stopped on an error";
	for (int i = 0; i < r->nthreads; i++) {
		int ok = 1;
		if (g->nthreads) {
			ok = 0;
			for (int j = 0; j < g->nthreads; j++)
				ok |= g->threads[j] == r->t[i].index;
		}
		if (ok)
			chosen[nchosen++] = i;
	}
	if (g->nthreads && !nchosen)
		snprintf(missing, sizeof(missing), "no thread of the gate's groups in the results (%d threads)",
			 r->nthreads);
	if (!missing[0] && g->ncpus) {
		int keep = 0;
		for (int j = 0; j < g->ncpus && !missing[0]; j++) {
			int ran = 0;
			for (int i = 0; i < nchosen; i++)
				ran |= r->t[chosen[i]].cpu == g->cpus[j];
			if (!ran)
				snprintf(missing, sizeof(missing), "no thread ran on cpu %d", g->cpus[j]);
		}
		for (int i = 0; i < nchosen; i++)
			for (int j = 0; j < g->ncpus; j++)
				if (r->t[chosen[i]].cpu == g->cpus[j]) {
					chosen[keep++] = chosen[i];
					break;
				}
		nchosen = keep;
	}
	if (problem || missing[0]) {
		if (max_out < 1)
			return 0;
		memset(&out[0], 0, sizeof(out[0]));
		snprintf(out[0].thread, sizeof(out[0].thread), "%s", g->worst ? "worst" : "all");
		out[0].status = GATE_ERROR;
		snprintf(out[0].reason, sizeof(out[0].reason), "%s", problem ? problem : missing);
		return 1;
	}
	for (int c = 0; c < nchosen && count < max_out; c++) {
		struct eval e = { .g = g, .r = r, .t = &r->t[chosen[c]], .scale = scale, .v = &out[count] };

		memset(e.v, 0, sizeof(*e.v));
		snprintf(e.v->thread, sizeof(e.v->thread), "%s", ids[chosen[c]]);
		who(e.who, sizeof(e.who), e.t);
		eval_thread(&e);
		if (r->reason == STOP_SIGNAL && e.v->status == GATE_PASS) {
			size_t len = strlen(e.v->reason);
			e.v->status = GATE_INCONCLUSIVE;
			snprintf(e.v->reason + len, sizeof(e.v->reason) - len, "; but the run was stopped early by %s",
				 signal_name(r->signal) ? signal_name(r->signal) : "a signal");
		}
		count++;
	}
	if (g->worst && count > 1) {
		int best = 0;
		for (int i = 1; i < count; i++) {
			double vi = out[i].has_value ? out[i].value : -1.0, vb = out[best].has_value ? out[best].value : -1.0;
			/* statuses are in rank order (gate.h) */
			if (out[i].status > out[best].status || (out[i].status == out[best].status && vi > vb))
				best = i;
		}
		out[0] = out[best];
		count = 1;
	}
	if (g->worst && count == 1)
		snprintf(out[0].thread, sizeof(out[0].thread), "worst");
	return count;
}

void gate_unjudged(const struct gate_spec *g, int status, const char *reason, struct gate_verdict *v)
{
	memset(v, 0, sizeof(*v));
	snprintf(v->thread, sizeof(v->thread), "%s", g->worst ? "worst" : "all"); /* as the harness's error_verdicts */
	v->status = status;
	v->has_limit = 1;
	if (g->kind == GATE_MISS_RATE)
		v->limit = g->rate;
	else if (g->kind == GATE_MISSED)
		v->limit = g->max_count >= 0 ? (double)g->max_count : g->max_rate;
	else
		v->limit = g->limit;
	snprintf(v->reason, sizeof(v->reason), "%s", reason);
}

/* One line per verdict for shells: fields are space-free until the reason, which ends the line. */
void gate_print(FILE *f, const struct gate_spec *g, const struct gate_verdict *v)
{
	const char *units = gate_unit(g);
	double k = strcmp(units, "%") == 0 ? 100.0 : 1.0; /* shares are held as fractions */

	fprintf(f, "RTGATE-GATE %s %s %s ", g->name, v->thread, gate_status_name(v->status));
	if (v->has_value)
		fprintf(f, "%.6g ", v->value * k);
	else
		fprintf(f, "- ");
	if (v->has_limit)
		fprintf(f, "%.6g ", v->limit * k);
	else
		fprintf(f, "- ");
	if (v->has_bound)
		fprintf(f, "%.6g ", v->bound * k);
	else
		fprintf(f, "- ");
	fprintf(f, "%llu %s %s\n", v->samples, units, v->reason);
}
