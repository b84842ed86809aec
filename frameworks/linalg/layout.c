/* The 2D tiling of Graphite over ranks: the factor pair, 2DT-Staggered
 * placement of tiles on virtual ids, and virtual ids on ranks by node.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "linalg/la.h"

#include <stdlib.h>

static int gcd(int a, int b)
{
    while (b != 0) {
        int t = a % b;

        a = b;
        b = t;
    }
    return a;
}

/* Virtual id of tile (i, j): Algorithm 1 of the paper with t = 1. */
static int tile_vid(const gv_la_layout_t *L, int i, int j)
{
    int P = L->nranks, pr = L->pr, pc = L->pc, g = gcd(pr, pc);

    return (int)((((int64_t)(i % pc) * pr) + (j % pr) +
                  (int64_t)(i / (P / g)) * pr) % P);
}

int gv_la_tile_owner(const gv_la_layout_t *L, int i, int j)
{
    return L->rank_of[tile_vid(L, i, j)];
}

void gv_la_layout_free(gv_la_layout_t *L)
{
    free(L->rank_of);
    free(L->vid_of);
    free(L->leader);
    free(L->seg_of);
    L->rank_of = L->vid_of = L->leader = L->seg_of = NULL;
}

gv_status_t gv_la_layout_init(int nranks, const int *node_of, int64_t n,
                              gv_la_layout_t *L)
{
    int  P = nranks, pr = 1, b = 0, *taken, *order;

    if ((P < 1) || (n < 0)) {
        gv__la_err("layout: %d ranks, %lld vertices: need at least one rank "
                   "and no negative count", P, (long long)n);
        return GV_ERR_INVALID;
    }
    if ((n + P - 1) / P >= ((int64_t)1 << 32)) {
        gv__la_err("layout: %lld vertices over %d ranks: segments of 2^32 "
                   "vertices or more are not supported", (long long)n, P);
        return GV_ERR_INVALID;
    }
    for (int d = 1; (int64_t)d * d <= P; d++)
        if (P % d == 0)
            pr = d;
    L->nranks  = P;
    L->pr      = pr;
    L->pc      = P / pr;
    L->n       = n;
    L->rank_of = malloc((size_t)P * sizeof(int));
    L->vid_of  = malloc((size_t)P * sizeof(int));
    L->leader  = malloc((size_t)P * sizeof(int));
    L->seg_of  = malloc((size_t)P * sizeof(int));
    taken      = calloc((size_t)P, sizeof(int));
    order      = malloc((size_t)P * sizeof(int));
    if (!L->rank_of || !L->vid_of || !L->leader || !L->seg_of || !taken ||
        !order) {
        free(taken);
        free(order);
        gv_la_layout_free(L);
        return GV_ERR_NO_MEMORY;
    }
    /* Ranks in node order (stable by rank), then blocks of pr virtual ids:
     * first the blocks one node can fill, then the rest. */
    {
        int k = 0, maxnode = 0;

        for (int r = 0; r < P; r++)
            if (node_of && node_of[r] > maxnode)
                maxnode = node_of[r];
        for (int nd = 0; nd <= maxnode; nd++)
            for (int r = 0; r < P; r++)
                if ((node_of ? node_of[r] : 0) == nd)
                    order[k++] = r;
        for (int r = 0; r < P; r++) /* nodes out of range: at the end */
            if (node_of && ((node_of[r] < 0) || (node_of[r] > maxnode)))
                order[k++] = r;
    }
    for (int s = 0; s < P;) { /* whole blocks within one node */
        int e = s, nd = node_of ? node_of[order[s]] : 0;

        while ((e < P) && ((node_of ? node_of[order[e]] : 0) == nd))
            e++;
        for (; s + pr <= e; s += pr, b++)
            for (int q = 0; q < pr; q++) {
                L->rank_of[b * pr + q] = order[s + q];
                taken[order[s + q]]    = 1;
            }
        s = e;
    }
    for (int s = 0, q = 0; s < P; s++) { /* the rest, mixed */
        if (taken[order[s]])
            continue;
        L->rank_of[b * pr + q] = order[s];
        if (++q == pr) {
            q = 0;
            b++;
        }
    }
    for (int v = 0; v < P; v++)
        L->vid_of[L->rank_of[v]] = v;
    for (int k = 0; k < P; k++) {
        L->leader[k]            = gv_la_tile_owner(L, k, k);
        L->seg_of[L->leader[k]] = k;
    }
    free(taken);
    free(order);
    return GV_OK;
}
