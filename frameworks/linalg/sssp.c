/* SSSP by Bellman-Ford relaxation in the linear-algebra engine: min-plus
 * products from the vertices whose distance fell.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "linalg/la.h"

#include <math.h>

typedef struct sssp_arg {
    int64_t root;
    double *dist;
} sssp_arg_t;

static void sssp_init(gv_la_segment_t *s)
{
    sssp_arg_t *a = s->arg;

    for (int64_t v = 0; v < s->n; v++)
        a->dist[v] = s->x[v].f = INFINITY;
    if ((a->root >= s->lo) && (a->root < s->lo + s->n)) {
        int64_t v = a->root - s->lo;

        a->dist[v]              = 0.0;
        s->x[v].f               = 0.0;
        s->active[s->nactive++] = (uint32_t)v;
    }
}

static void sssp_apply(gv_la_segment_t *s)
{
    sssp_arg_t *a = s->arg;

    for (int64_t v = 0; v < s->n; v++) {
        if (!(s->y[v].f < a->dist[v]))
            continue;
        a->dist[v] = s->x[v].f = s->y[v].f;
        s->active[s->nactive++] = (uint32_t)v;
    }
}

static const gv_la_program_t sssp = {
    .semiring = GV_LA_MIN_PLUS,
    .x_whole  = 1,
    .init     = sssp_init,
    .apply    = sssp_apply,
};

gv_status_t gv_la_sssp(const gv_la_matrix_t *A, int64_t root, double *dist,
                       const gv_la_opts_t *opts, gv_la_stats_t *stats_p)
{
    gv_la_opts_t o = {0};
    sssp_arg_t   a = {.root = root, .dist = dist};
    gv_status_t  rc = GV_OK;

    if ((root < 0) || (root >= A->n)) {
        gv__la_err("sssp: root %lld is not a vertex (the graph has %lld)",
                   (long long)root, (long long)A->n);
        return GV_ERR_INVALID;
    }
    for (int k = 0; (rc == GV_OK) && (k < A->ntiles); k++) {
        const gv_la_tile_t *t = &A->tiles[k];

        for (int64_t p = 0; (t->cw != NULL) && (p < t->nnz); p++) {
            if (!(t->cw[p] >= 0)) {
                gv__la_err("sssp: weight %g: weights must be non-negative "
                           "numbers", (double)t->cw[p]);
                rc = GV_ERR_INVALID;
                break;
            }
        }
    }
    rc = gv__la_agree(rc);
    if (rc != GV_OK)
        return rc;
    if (opts != NULL)
        o = *opts;
    o.arg       = &a;
    o.max_iters = 0;
    o.tol       = 0;
    return gv_la_run(A, &sssp, &o, stats_p);
}
