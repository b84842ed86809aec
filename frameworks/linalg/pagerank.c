/* PageRank (GraphLab's definition) in the linear-algebra engine: plus-times
 * products of A (in-neighbours) with x = rank / out-degree, every vertex
 * active every sweep. SPDX-License-Identifier: BSD-3-Clause */
#include "linalg/la.h"

#include <math.h>

typedef struct pr_arg {
    double *rank;
} pr_arg_t;

static void pr_init(gv_la_segment_t *s)
{
    pr_arg_t      *a   = s->arg;
    const int64_t *deg = s->A->out_deg;

    for (int64_t v = 0; v < s->n; v++) {
        a->rank[v] = 1.0;
        s->x[v].f  = (deg[v] > 0) ? 1.0 / (double)deg[v] : 0.0;
    }
    s->nactive = s->n;
}

static void pr_apply(gv_la_segment_t *s)
{
    pr_arg_t      *a   = s->arg;
    const int64_t *deg = s->A->out_deg;
    double         m   = 0;

    for (int64_t v = 0; v < s->n; v++) {
        double r = 0.15 + 0.85 * s->y[v].f, d = fabs(r - a->rank[v]);

        if (d > m)
            m = d;
        a->rank[v] = r;
        /* vertices with no out-edges distribute nothing */
        s->x[v].f = (deg[v] > 0) ? r / (double)deg[v] : 0.0;
    }
    s->change  = m;
    s->nactive = s->n;
}

static const gv_la_program_t pagerank = {
    .semiring = GV_LA_PLUS_TIMES,
    .init     = pr_init,
    .apply    = pr_apply,
};

gv_status_t gv_la_pagerank(const gv_la_matrix_t *A, int iters, double tol,
                           double *rank, int *iters_p,
                           const gv_la_opts_t *opts, gv_la_stats_t *stats_p)
{
    gv_la_opts_t  o = {0};
    pr_arg_t      a = {.rank = rank};
    gv_la_stats_t st;
    gv_status_t   rc;

    if ((iters < 0) || !(tol >= 0) || ((iters == 0) && (tol == 0))) {
        gv__la_err("pagerank: iterations %d and tolerance %g: give a "
                   "positive number of iterations, a positive tolerance, "
                   "or both", iters, tol);
        return GV_ERR_INVALID;
    }
    if (opts != NULL)
        o = *opts;
    o.arg       = &a;
    o.max_iters = iters;
    o.tol       = tol;
    rc = gv_la_run(A, &pagerank, &o, &st);
    if (iters_p != NULL)
        *iters_p = st.iters;
    if (stats_p != NULL)
        *stats_p = st;
    else
        gv_la_stats_free(&st);
    return rc;
}
