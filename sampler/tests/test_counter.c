// SPDX-License-Identifier: GPL-2.0-or-later
/* A reader never sees half of one value and half of another (counter.h), on every target. */
#include <pthread.h>

#include "check.h"
#include "counter.h"

#define READS 300000u

static ctr64 value;
static ctr_seq seq;
static _Atomic int reading = 1;

static void *writer(void *arg)
{
	(void)arg;
	for (uint32_t i = 1; atomic_load_explicit(&reading, memory_order_relaxed); i++) {
		/* both halves equal, and both change on every store: a torn read shows two halves */
		uint32_t h = i * 2654435761u;

		ctr_write_begin(&seq);
		ctr_set(&value, (uint64_t)h << 32 | h);
		ctr_write_end(&seq);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	unsigned long long torn = 0;

	ctr_set(&value, 0);
	CHECK(pthread_create(&t, NULL, writer, NULL) == 0);
	for (uint32_t r = 0; r < READS; r++) {
		uint64_t v = ctr_read(&value, &seq);

		torn += (uint32_t)(v >> 32) != (uint32_t)v;
	}
	atomic_store(&reading, 0);
	pthread_join(t, NULL);
	CHECK_EQ(torn, 0);
	CHECK_DONE();
}
