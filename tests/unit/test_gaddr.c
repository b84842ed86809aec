/* Global addresses and the global heap on one rank (`self`): block-cyclic
 * arithmetic (also for made-up job sizes, through the inline decoder), the
 * 2D forms, the allocator (first fit, free, reuse, exhaustion naming
 * GV_HEAP), delegates that short-circuit locally, and out-of-allocation
 * errors naming the address. SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include <grapevine.h>
#include "dsm/dsm_internal.h"
#include "tasking/task_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void setup(void)
{
    setenv("GV_HEAP", "4m", 1);
    cr_assert_eq(gv_init(NULL, NULL), GV_OK);
}

static void teardown(void)
{
    gv_barrier(); /* let the last messages to self land first */
    gv_finalize();
}

TestSuite(gaddr, .init = setup, .fini = teardown, .timeout = 60);

/* ---- arithmetic with made-up geometries (no allocation involved) --------- */

static void fake_geo(int P, unsigned bshift, uint64_t top)
{
    int p;

    gv__geo.size   = P;
    gv__geo.bshift = bshift;
    gv__geo.bsize  = 1ull << bshift;
    gv__geo.bmask  = gv__geo.bsize - 1;
    gv__geo.pshift = -1;
    for (p = 0; p < 31; p++)
        if ((1 << p) == P)
            gv__geo.pshift = p;
    gv__geo.top     = top;
    gv__geo.nlocal  = top >> bshift;
    gv__geo.nglobal = gv__geo.nlocal * (uint64_t)P;
    gv__geo.heap_len = top;
}

Test(gaddr, linear_walks_blocks_round_robin)
{
    static const int Ps[] = {1, 2, 3, 4, 7, 8};
    gv__dsm_geo_t    saved = gv__geo;
    unsigned         k;

    for (k = 0; k < sizeof(Ps) / sizeof(Ps[0]); k++) {
        int      P = Ps[k];
        uint64_t o;

        fake_geo(P, 6, 1 << 20);
        for (o = 0; o < 64 * 1000; o += 8) {
            gv_gaddr_t a = gv_gaddr_add(gv__ga_linear(0), (int64_t)o);
            uint64_t   off, b = o / 64;
            int        home, kind = gv__ga_decode(a, &home, &off);

            cr_assert_eq(kind, GV__GA_KIND_LIN);
            cr_assert_eq(home, (int)(b % (uint64_t)P), "P %d byte %" PRIu64,
                         P, o);
            cr_assert_eq(gv__ga_home(a), home);
            /* Local block b / P, laid out from the top down. */
            cr_assert_eq(off, (1u << 20) - (b / (uint64_t)P + 1) * 64 +
                                  (o % 64));
        }
        /* Past the last block: no home. */
        {
            uint64_t   off;
            int        home;
            gv_gaddr_t end = gv__ga_linear(gv__geo.nglobal * 64);
            cr_assert_eq(gv__ga_decode(end, &home, &off), -1);
            cr_assert_eq(gv__ga_home(end), -1);
        }
    }
    gv__geo = saved;
}

Test(gaddr, two_dimensional_forms)
{
    uint64_t   off;
    int        home, x = 42;
    gv_gaddr_t h = gv__ga_heap(0, 4096), p;
    char       s[64];

    cr_assert(!gv_gaddr_is_linear(h));
    cr_assert_eq(gv__ga_decode(h, &home, &off), GV__GA_KIND_HEAP);
    cr_assert_eq(home, 0);
    cr_assert_eq(off, 4096);
    cr_assert_eq(gv_gaddr_add(h, 8) - h, 8);
    cr_assert_eq(gv_gaddr_on(h, 0), h);
    cr_assert_eq(gv_gaddr_on(h, 1), GV_GADDR_NULL); /* one rank */
    cr_assert_str_eq(gv_gaddr_str(h, s, sizeof(s)), "heap:0:0x1000");
    cr_assert_eq(gv_gaddr_local(h), (uint8_t *)gv_sym_ptr(0) + 4096);

    cr_assert_eq(gv_export(&x, sizeof(x), &p), GV_OK);
    cr_assert_eq(gv__ga_kind(p), GV__GA_KIND_PTR);
    cr_assert_eq(gv_gaddr_rank(p), 0);
    cr_assert_eq(gv_gaddr_local(p), (void *)&x);
    cr_assert_eq(gv_unexport(p), GV_OK);

    cr_assert_eq(gv_gaddr_rank(GV_GADDR_NULL), -1);
    cr_assert_eq(gv_gaddr_local(GV_GADDR_NULL), NULL);
    cr_assert_eq(gv_gaddr_str(gv__ga_linear(0x40), s, sizeof(s)), s);
    cr_assert_str_eq(s, "lin:0x40");
}

/* ---- the allocator ------------------------------------------------------- */

Test(gaddr, alloc_is_block_aligned_and_disjoint)
{
    gv_gaddr_t a[16];
    size_t     B = gv_global_block_size();
    int        i, j;

    for (i = 0; i < 16; i++) {
        cr_assert_eq(gv_global_alloc((size_t)(i * 37 + 1), &a[i]), GV_OK);
        cr_assert(gv_gaddr_is_linear(a[i]));
        cr_assert_eq((a[i] & GV__GA_OFF_MASK) % B, 0);
    }
    for (i = 0; i < 16; i++) {
        uint64_t lo = a[i] & GV__GA_OFF_MASK, hi = lo + (uint64_t)(i * 37 + 1);
        for (j = 0; j < 16; j++) {
            uint64_t lo2 = a[j] & GV__GA_OFF_MASK;
            if (j != i)
                cr_assert((lo2 >= hi) || (lo2 + (uint64_t)(j * 37 + 1) <= lo),
                          "allocations %d and %d overlap", i, j);
        }
    }
    for (i = 0; i < 16; i++)
        cr_assert_eq(gv_global_free(a[i]), GV_OK);
}

Test(gaddr, free_makes_room_first_fit)
{
    gv_gaddr_t a, b, c;

    cr_assert_eq(gv_global_alloc(1000, &a), GV_OK);
    cr_assert_eq(gv_global_alloc(1000, &b), GV_OK);
    cr_assert_eq(gv_global_free(a), GV_OK);
    /* The first run that fits is a's old place. */
    cr_assert_eq(gv_global_alloc(500, &c), GV_OK);
    cr_assert_eq(c, a);
    cr_assert_eq(gv_global_free(c), GV_OK);
    cr_assert_eq(gv_global_free(b), GV_OK);
    /* Everything coalesced back: one allocation of almost all of it. */
    cr_assert_eq(gv_global_alloc(3u << 20, &a), GV_OK);
    cr_assert_eq(gv_global_free(a), GV_OK);
}

Test(gaddr, exhaustion_names_gv_heap)
{
    gv_gaddr_t a;
    char       buf[4096];
    size_t     n;

    cr_redirect_stderr();
    cr_assert_eq(gv_global_alloc(64u << 20, &a), GV_ERR_NO_MEMORY);
    fflush(stderr);
    n = fread(buf, 1, sizeof(buf) - 1, cr_get_redirected_stderr());
    buf[n] = '\0';
    cr_assert(strstr(buf, "GV_HEAP") != NULL, "message: %s", buf);
}

Test(gaddr, bad_free_is_an_error)
{
    gv_gaddr_t a;

    cr_assert_eq(gv_global_alloc(64, &a), GV_OK);
    cr_assert_eq(gv_global_free(gv_gaddr_add(a, 8)), GV_ERR_INVALID);
    cr_assert_eq(gv_global_free(a), GV_OK);
    cr_assert_eq(gv_global_free(a), GV_ERR_INVALID); /* twice */
}

Test(gaddr, symmetric_same_offset)
{
    gv_gaddr_t s, t;
    uint64_t   v = 7, w = 0;

    cr_assert_eq(gv_global_alloc_symmetric(100, &s), GV_OK);
    cr_assert_eq(gv__ga_kind(s), GV__GA_KIND_HEAP);
    cr_assert_eq(gv_gaddr_on(s, 0), s);
    cr_assert_eq(gv_delegate_write(gv_gaddr_add(s, 88), &v, 8), GV_OK);
    cr_assert_eq(gv_delegate_read(gv_gaddr_add(s, 88), &w, 8), GV_OK);
    cr_assert_eq(w, 7);
    /* Byte 100 is past the object. */
    cr_assert_eq(gv_delegate_read(gv_gaddr_add(s, 96), &w, 8), GV_ERR_INVALID);
    cr_assert_eq(gv_global_alloc_symmetric(100, &t), GV_OK);
    cr_assert_neq(t, s);
    cr_assert_eq(gv_global_free(s), GV_OK);
    cr_assert_eq(gv_global_free(t), GV_OK);
}

/* ---- delegates, short-circuited ------------------------------------------- */

static size_t add_and_double(void *local, const void *args, size_t len,
                             void *result)
{
    int64_t v, d;

    memcpy(&v, local, 8);
    memcpy(&d, args, 8);
    v += d;
    memcpy(local, &v, 8);
    v *= 2;
    memcpy(result, &v, 8);
    return 8;
}

Test(gaddr, delegates_local)
{
    gv_gaddr_t  a;
    int64_t     old, d = 5, r = 0;
    uint64_t    o, zero = 0;
    size_t      rl;
    gv_future_t f;

    cr_assert_eq(gv_global_alloc(256, &a), GV_OK);
    cr_assert_eq(gv_delegate_write(a, &zero, 8), GV_OK);
    cr_assert_eq(gv_delegate_fetch_add(a, 3, &old), GV_OK);
    cr_assert_eq(old, 0);
    cr_assert_eq(gv_delegate_cswap(a, 3, 10, &o), GV_OK);
    cr_assert_eq(o, 3);
    cr_assert_eq(gv_delegate_cswap(a, 3, 99, &o), GV_OK); /* fails */
    cr_assert_eq(o, 10);
    cr_assert_eq(gv_delegate_call(a, add_and_double, &d, 8, &r, 8, &rl),
                 GV_OK);
    cr_assert_eq(rl, 8);
    cr_assert_eq(r, 30);
    cr_assert_eq(gv_delegate_add(a, 100, NULL), GV_OK);
    cr_assert_eq(gv_gce_wait(NULL), GV_OK);
    cr_assert_eq(gv_delegate_read_async(a, &o, 8, &f), GV_OK);
    cr_assert_eq(gv_future_wait(&f, NULL), GV_OK);
    cr_assert_eq(o, 115);
    /* Crossing a block is refused. */
    cr_assert_eq(gv_delegate_read(gv_gaddr_add(a, 60), &o, 8),
                 GV_ERR_INVALID);
    cr_assert_eq(gv_global_free(a), GV_OK);
}

Test(gaddr, out_of_allocation_names_address)
{
    gv_gaddr_t a, bad;
    uint64_t   v;
    char       buf[8192], hex[32];
    size_t     n;

    cr_redirect_stderr();
    cr_assert_eq(gv_global_alloc(64, &a), GV_OK);
    cr_assert_eq(gv_global_free(a), GV_OK);
    bad = gv_gaddr_add(a, 16);
    cr_assert_eq(gv_delegate_read(bad, &v, 8), GV_ERR_INVALID);
    cr_assert_eq(gv_delegate_write(bad, &v, 8), GV_ERR_INVALID);
    cr_assert_eq(gv_delegate_add(bad, 1, NULL), GV_OK); /* asynchronous */
    cr_assert_eq(gv_gce_wait(NULL), GV_ERR_INVALID);
    fflush(stderr);
    n = fread(buf, 1, sizeof(buf) - 1, cr_get_redirected_stderr());
    buf[n] = '\0';
    snprintf(hex, sizeof(hex), "%#" PRIx64, bad);
    cr_assert(strstr(buf, hex) != NULL, "no %s in: %s", hex, buf);
    cr_assert(strstr(buf, "outside any allocation") != NULL);
}

Test(gaddr, exported_stack_word)
{
    int64_t    word = 40, old;
    gv_gaddr_t p;

    cr_assert_eq(gv_export(&word, sizeof(word), &p), GV_OK);
    cr_assert_eq(gv_delegate_fetch_add(p, 2, &old), GV_OK);
    cr_assert_eq(old, 40);
    cr_assert_eq(word, 42);
    cr_assert_eq(gv_unexport(p), GV_OK);
    cr_assert_eq(gv_delegate_fetch_add(p, 2, &old), GV_ERR_INVALID);
}
