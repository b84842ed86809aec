/* The HPCC RandomAccess stream, shared by perf/gups.c and perf/gups_dsm.c:
 * x -> x * 2 mod the primitive polynomial POLY over GF(2), and a jump to
 * the stream's n-th element. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_PERF_HPCC_STREAM_H
#define GV_PERF_HPCC_STREAM_H

#include <stdint.h>

#define POLY   0x0000000000000007ull
#define PERIOD 1317624576693539401ll

static inline uint64_t next_ran(uint64_t x)
{
    return (x << 1) ^ (((int64_t)x < 0) ? POLY : 0);
}

/* The stream's element n steps after 1, i.e. x^n mod the polynomial, by
 * square-and-multiply: squaring a polynomial over GF(2) maps bit j to bit
 * 2j, so square(a) is the xor of x^(2j) mod poly over the set bits j of a;
 * those 64 values are tabulated first. */
static inline uint64_t hpcc_starts(int64_t n)
{
    uint64_t sq[64], t, ran;
    int      i, j;

    while (n < 0)
        n += PERIOD;
    while (n > PERIOD)
        n -= PERIOD;
    if (n == 0)
        return 1;
    for (t = 1, i = 0; i < 64; i++) {
        sq[i] = t;                  /* x^(2i) mod poly */
        t     = next_ran(next_ran(t));
    }
    for (i = 62; i >= 0; i--)       /* highest set bit of n */
        if ((n >> i) & 1)
            break;
    ran = 2;                        /* x^1 */
    while (i > 0) {
        for (t = 0, j = 0; j < 64; j++)
            if ((ran >> j) & 1)
                t ^= sq[j];
        ran = t;
        i--;
        if ((n >> i) & 1)
            ran = next_ran(ran);
    }
    return ran;
}

#endif
