/* The Graph500 Kronecker generator, in parallel and the same on any number
 * of ranks: edge k of the list is edge perm_E(k) of the generator; the
 * generator's edge j takes its bits from a SplitMix64 stream keyed by the
 * seed and j (a counter-based generator: no state shared between edges);
 * vertex v is labelled perm_V(v). SPDX-License-Identifier: BSD-3-Clause
 *
 * Per bit level, as the specification's reference (kronecker_generator.m):
 * ii = rand > A + B; jj = rand > (ii ? C / (1 - A - B) : A / (A + B)).
 */
#include "graph/graph_internal.h"

#include <inttypes.h>
#include <stdlib.h>

#define KRON_A 0.57
#define KRON_B 0.19
#define KRON_C 0.19

/* Streams of one seed, told apart by a constant each. */
#define KEY_EDGE   0x243f6a8885a308d3ull
#define KEY_WEIGHT 0x13198a2e03707344ull
#define KEY_VPERM  0xa4093822299f31d0ull
#define KEY_EPERM  0x082efa98ec4e6c89ull
#define GOLDEN     0x9e3779b97f4a7c15ull

static void kron_edge(uint64_t seed, int scale, int64_t j, int64_t *s_p,
                      int64_t *d_p)
{
    const double ab = KRON_A + KRON_B;
    const double c_norm = KRON_C / (1.0 - ab), a_norm = KRON_A / ab;
    uint64_t     state = gv__graph_mix64(seed ^ KEY_EDGE) ^
                         gv__graph_mix64((uint64_t)j + GOLDEN);
    int64_t      s = 0, d = 0;
    int          b;

    for (b = 0; b < scale; b++) {
        uint64_t x;
        double   u1, u2;
        int      ii, jj;

        state += GOLDEN;
        x  = gv__graph_mix64(state);
        u1 = (double)(x >> 32) * (1.0 / 4294967296.0);
        u2 = (double)(x & 0xffffffffu) * (1.0 / 4294967296.0);
        ii = u1 > ab;
        jj = u2 > (ii ? c_norm : a_norm);
        s |= (int64_t)ii << b;
        d |= (int64_t)jj << b;
    }
    *s_p = s;
    *d_p = d;
}

static float kron_weight(uint64_t seed, int64_t j)
{
    uint64_t x = gv__graph_mix64(gv__graph_mix64(seed ^ KEY_WEIGHT) ^
                                 ((uint64_t)j * GOLDEN));

    /* 24 random bits: (x + 1) / 2^24 is exactly a float in (0, 1]. */
    return (float)((x >> 40) + 1) * (1.0f / 16777216.0f);
}

gv_status_t gv_kron_generate(const gv_kron_opts_t *opts,
                             gv_edgelist_t *el_p)
{
    gv_edgelist_t el;
    gv__gerr_t    err;
    gv_status_t   status;
    int64_t       nv, m = 0, lo, hi, k;
    int           P = gv_nranks(), me = gv_rank();
    gv__perm_t    vperm, eperm;

    gv__gerr_init(&err);
    if ((opts == NULL) || (el_p == NULL))
        gv__gerr_set(&err, 0, GV_ERR_INVALID, "kronecker: NULL argument");
    else if ((opts->scale < 0) || (opts->scale > 40))
        gv__gerr_set(&err, 0, GV_ERR_INVALID,
                     "kronecker: scale %d (expected 0..40)", opts->scale);
    else if ((opts->edgefactor < 0) ||
             (opts->edgefactor > (INT64_MAX >> 2) >> opts->scale))
        gv__gerr_set(&err, 0, GV_ERR_INVALID,
                     "kronecker: edge factor %" PRId64 " (expected 0..%"
                     PRId64 " at scale %d)", opts->edgefactor,
                     (INT64_MAX >> 2) >> opts->scale, opts->scale);
    status = gv__gerr_agree(&err);
    if (status != GV_OK)
        return status;

    nv = (int64_t)1 << opts->scale;
    m  = opts->edgefactor << opts->scale;
    lo = (int64_t)(((unsigned __int128)m * (unsigned)me) / (unsigned)P);
    hi = (int64_t)(((unsigned __int128)m * (unsigned)(me + 1)) / (unsigned)P);
    gv_edgelist_init(&el, nv, opts->weighted);
    el.n     = hi - lo;
    el.cap   = el.n;
    el.first = lo;
    el.total = m;
    el.src   = malloc((size_t)(el.n ? el.n : 1) * sizeof(int64_t));
    el.dst   = malloc((size_t)(el.n ? el.n : 1) * sizeof(int64_t));
    if (opts->weighted)
        el.w = malloc((size_t)(el.n ? el.n : 1) * sizeof(float));
    if ((el.src == NULL) || (el.dst == NULL) ||
        (opts->weighted && (el.w == NULL)))
        gv__gerr_set(&err, -1, GV_ERR_NO_MEMORY,
                     "kronecker: rank %d: no memory for %" PRId64 " edges",
                     me, el.n);
    status = gv__gerr_agree(&err);
    if (status != GV_OK) {
        gv_edgelist_free(&el);
        return status;
    }

    gv__perm_init(&vperm, nv, gv__graph_mix64(opts->seed ^ KEY_VPERM));
    gv__perm_init(&eperm, m, gv__graph_mix64(opts->seed ^ KEY_EPERM));
    for (k = 0; k < el.n; k++) {
        int64_t j = gv__perm_fwd(&eperm, lo + k), s, d;

        kron_edge(opts->seed, opts->scale, j, &s, &d);
        el.src[k] = gv__perm_fwd(&vperm, s);
        el.dst[k] = gv__perm_fwd(&vperm, d);
        if (opts->weighted)
            el.w[k] = kron_weight(opts->seed, j);
        if ((k & 0xffff) == 0xffff)
            gv_yield(); /* let this rank's messages progress */
    }
    *el_p = el;
    return GV_OK;
}
