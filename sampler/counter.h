// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * 64-bit values that one measurement thread writes and other threads read, without locks.
 *
 * Where 64-bit atomics are lock-free (x86-64, aarch64, armhf, riscv64) a ctr64 is an
 * _Atomic uint64_t and every call below is one relaxed load or store: the sequence count is not
 * used. Where they are not (32-bit PowerPC), libatomic would take a pthread mutex on every access,
 * in the measurement loop and in the main thread while it reads: there a ctr64 is two 32-bit
 * halves, the writer brackets each sample with a per-thread sequence count (odd while it writes)
 * and a reader retries until it sees the same even count before and after its loads.
 */
#ifndef RTGATE_COUNTER_H
#define RTGATE_COUNTER_H

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#if ATOMIC_LLONG_LOCK_FREE == 2
#define CTR64_NATIVE 1
typedef _Atomic uint64_t ctr64;
#else
#define CTR64_NATIVE 0
/* Halves in memory order of a uint64_t, so that a joined thread's array reads as uint64_t. */
typedef struct {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	_Atomic uint32_t hi, lo;
#else
	_Atomic uint32_t lo, hi;
#endif
} ctr64;
#endif

_Static_assert(sizeof(ctr64) == sizeof(uint64_t), "a ctr64 must be laid out as a uint64_t");

typedef _Atomic uint32_t ctr_seq;

/* Writer side: the thread that owns the values. */
static inline void ctr_write_begin(ctr_seq *seq)
{
#if CTR64_NATIVE
	(void)seq;
#else
	atomic_store_explicit(seq, atomic_load_explicit(seq, memory_order_relaxed) + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
#endif
}

static inline void ctr_write_end(ctr_seq *seq)
{
#if CTR64_NATIVE
	(void)seq;
#else
	atomic_store_explicit(seq, atomic_load_explicit(seq, memory_order_relaxed) + 1, memory_order_release);
#endif
}

/* The owner's own view of its value (no other writer: nothing to check). */
static inline uint64_t ctr_own(const ctr64 *c)
{
#if CTR64_NATIVE
	return atomic_load_explicit((ctr64 *)c, memory_order_relaxed);
#else
	ctr64 *m = (ctr64 *)c;
	return (uint64_t)atomic_load_explicit(&m->hi, memory_order_relaxed) << 32 |
	       atomic_load_explicit(&m->lo, memory_order_relaxed);
#endif
}

/* Only between ctr_write_begin and ctr_write_end (or before the thread starts). */
static inline void ctr_set(ctr64 *c, uint64_t v)
{
#if CTR64_NATIVE
	atomic_store_explicit(c, v, memory_order_relaxed);
#else
	atomic_store_explicit(&c->hi, (uint32_t)(v >> 32), memory_order_relaxed);
	atomic_store_explicit(&c->lo, (uint32_t)v, memory_order_relaxed);
#endif
}

/* Reader side, any other thread: a value the writer wrote whole, never half of two. */
static inline uint64_t ctr_read(const ctr64 *c, const ctr_seq *seq)
{
#if CTR64_NATIVE
	(void)seq;
	return atomic_load_explicit((ctr64 *)c, memory_order_relaxed);
#else
	ctr_seq *s = (ctr_seq *)seq;

	for (;;) {
		uint32_t s1 = atomic_load_explicit(s, memory_order_acquire);
		uint64_t v;

		if (s1 & 1) {
			sched_yield(); /* the writer is inside one sample; let it finish if it shares our CPU */
			continue;
		}
		v = ctr_own(c);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(s, memory_order_relaxed) == s1)
			return v;
	}
#endif
}

#endif
