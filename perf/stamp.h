/* Per-iteration timestamps for the ping-pong benchmarks, taken the way
 * ucx_perftest takes them (ucs_get_time() reads the cycle counter): one
 * read per round trip, from the cycle counter where there is one. A
 * clock_gettime() costs 23 ns in this VM, and a strict ping-pong pays for
 * every read on its critical path; the counter costs 10. Ticks become
 * nanoseconds at a rate measured against CLOCK_MONOTONIC over the same
 * stretch of the run.
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_PERF_STAMP_H
#define GV_PERF_STAMP_H

#include <stdint.h>
#include <time.h>

static inline uint64_t stamp_mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t stamp_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return stamp_mono_ns();
#endif
}

/* A stretch of the run over which ticks are converted. */
typedef struct {
    uint64_t ticks0, ns0;
} stamp_span_t;

static inline void stamp_span_begin(stamp_span_t *s)
{
    s->ns0    = stamp_mono_ns();
    s->ticks0 = stamp_ticks();
}

/* Nanoseconds per tick over the span so far (1 if no tick passed). */
static inline double stamp_span_rate(const stamp_span_t *s)
{
    uint64_t ticks = stamp_ticks(), ns = stamp_mono_ns();

    if ((ticks <= s->ticks0) || (ns <= s->ns0))
        return 1.0;
    return (double)(ns - s->ns0) / (double)(ticks - s->ticks0);
}

#endif
