// SPDX-License-Identifier: GPL-2.0-or-later
/* The board's plan and parameters into command-line words (plan.c), with known answers. */
#include <stdlib.h>

#include "check.h"
#include "plan.h"

static char joined[4096];
static char err[512];

/* Expand argv words; the result joined by '|' in `joined`. Returns plan_expand's status. */
static int expand(const char **words)
{
	char *argv[32];
	char **out;
	int argc = 0, n;

	for (; words[argc]; argc++)
		argv[argc] = (char *)words[argc];
	argv[argc] = NULL;
	joined[0] = err[0] = '\0';
	if (plan_expand(argc, argv, &n, &out, err, sizeof(err)))
		return -1;
	for (int i = 0; i < n; i++) {
		if (i)
			strcat(joined, "|");
		strcat(joined, out[i]);
	}
	return 0;
}

int main(void)
{
	/* A plain cyclictest command line is untouched. */
	CHECK_EQ(expand((const char *[]){"s", "-p", "80", "-i", "1000", NULL}), 0);
	CHECK(!strcmp(joined, "s|-p|80|-i|1000"));
	CHECK(!strcmp(plan_problem(), ""));

	/* A plan is split at spaces, %20 and %25 decoded, in place of --plan. */
	CHECK_EQ(expand((const char *[]){"s", "--plan=-p 80  --require=dmi_product=A%20B%25 -q", "-v", NULL}), 0);
	CHECK(!strcmp(joined, "s|-p|80|--require=dmi_product=A B%|-q|-v"));

	/* Outputs and parameters never come from inside a plan; odd escapes and control characters are refused. */
	CHECK_EQ(expand((const char *[]){"s", "--plan=-q --json=/etc/x", NULL}), -1);
	CHECK_STR_HAS(err, "cannot be part of a plan");
	CHECK_EQ(expand((const char *[]){"s", "--plan=-q --histfile=F", NULL}), -1);
	CHECK_EQ(expand((const char *[]){"s", "--plan=-q 50%", NULL}), -1);
	CHECK_STR_HAS(err, "not followed by 20 or 25");
	CHECK_EQ(expand((const char *[]){"s", "--plan=-q\n-v", NULL}), -1);
	CHECK_EQ(expand((const char *[]){"s", "--plan=  ", NULL}), -1);
	CHECK_STR_HAS(err, "empty");

	/* DURATION replaces the plan's length; a forged value is one problem, never options. */
	CHECK_EQ(expand((const char *[]){"s", "--plan=-i 1000 -l 500 --loops-per-thread -q", "--param=DURATION=2m",
					 NULL}), 0);
	CHECK(!strcmp(joined, "s|-i|1000|-q|--duration=120s"));
	CHECK(!strcmp(plan_problem(), ""));
	CHECK_EQ(expand((const char *[]){"s", "--plan=-i 1000 -q",
					 "--param=DURATION=1s --gate=name=forged,kind=max,limit=99999999 -p 1", NULL}), 0);
	CHECK(!strcmp(joined, "s|-i|1000|-q"));
	CHECK_STR_HAS(plan_problem(), "parameter DURATION=1s --gate=name=forged");
	CHECK_STR_HAS(plan_problem(), "is not a duration");

	/* Named knobs must say what the plan says. */
	CHECK_EQ(expand((const char *[]){"s", "--plan=-t 1 -a 1 -p 80 -i 1000 -h 200", "--param=RT_PRIORITY=80",
					 "--param=INTERVAL=1000", "--param=THREADS=1", "--param=AFFINITY=1",
					 "--param=HISTOGRAM=200", NULL}), 0);
	CHECK(!strcmp(plan_problem(), ""));
	CHECK_EQ(expand((const char *[]){"s", "--plan=-S -p 80 -i 1000", "--param=INTERVAL=500",
					 "--param=THREADS=all", "--param=HISTOGRAM=10", NULL}), 0);
	CHECK_STR_HAS(plan_problem(), "parameter INTERVAL=500 contradicts the threshold file's 1000");
	CHECK_STR_HAS(plan_problem(), "parameter HISTOGRAM=10 contradicts the threshold file's (not set)");
	CHECK(!strstr(plan_problem(), "THREADS"));
	CHECK_EQ(expand((const char *[]){"s", "--plan=--thread-cpus=0,1 --thread-priorities=80,70",
					 "--param=THREADS=2", "--param=AFFINITY=0,1", "--param=RT_PRIORITY=80,70", NULL}), 0);
	CHECK(!strcmp(plan_problem(), ""));

	/* PRIORITY is refused with its new name; an unknown name or a name given twice is a usage error. */
	CHECK_EQ(expand((const char *[]){"s", "--plan=-p 80", "--param=PRIORITY=80", NULL}), 0);
	CHECK_STR_HAS(plan_problem(), "PRIORITY is now RT_PRIORITY");
	CHECK_EQ(expand((const char *[]){"s", "--plan=-p 80", "--param=PRIO=80", NULL}), -1);
	CHECK_EQ(expand((const char *[]){"s", "--plan=-p 80", "--param=INTERVAL=1", "--param=INTERVAL=2", NULL}), -1);

	/* --output-dir names the files after the measurement. */
	CHECK_EQ(expand((const char *[]){"s", "--plan=--measurement=idle -h 100", "--output-dir=/tmp/o", NULL}), 0);
	CHECK(!strcmp(joined, "s|--measurement=idle|-h|100|--json=/tmp/o/idle.json|--histfile=/tmp/o/idle.hist"));
	CHECK_EQ(expand((const char *[]){"s", "--plan=-q", "--output-dir=/tmp/o", NULL}), -1);
	CHECK_STR_HAS(err, "needs --measurement");
	plan_release();
	CHECK_DONE();
}
