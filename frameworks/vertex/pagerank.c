/* PageRank (GraphLab's definition) through the engine, with delta caching.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "vertex/vx.h"

#include <math.h>
#include <stdlib.h>

typedef struct pr_state {
    double rank;
    double delta; /* the change of the last apply */
} pr_state_t;

typedef struct pr_arg {
    double tol;
    double maxdiff; /* largest |change| of this rank in this sweep */
    int    converged;
} pr_arg_t;

static int pr_init(const gv_graph_t *g, int64_t i, void *state, void *arg)
{
    pr_state_t *s = state;

    (void)g;
    (void)i;
    (void)arg;
    s->rank  = 1.0;
    s->delta = 0.0;
    return 1;
}

static int pr_gather(const gv_graph_t *g, int64_t i, const void *state,
                     gv_vx_word_t *value_p, void *arg)
{
    const pr_state_t *s = state;

    (void)arg;
    if (g->out_deg[i] == 0)
        return 0; /* no out-edges: distributes nothing */
    value_p->f = s->rank / (double)g->out_deg[i];
    return 1;
}

static int pr_apply(const gv_graph_t *g, int64_t i, void *state,
                    gv_vx_word_t acc, int has_acc, void *arg)
{
    pr_state_t     *s = state;
    pr_arg_t *a = arg;
    double    r = 0.15 + 0.85 * (has_acc ? acc.f : 0.0);

    s->delta = r - s->rank;
    s->rank  = r;
    if (fabs(s->delta) > a->maxdiff)
        a->maxdiff = fabs(s->delta);
    return g->out_deg[i] > 0;
}

/* Stop after the first sweep whose largest change is below tol. */
static int pr_converged(int step, void *arg)
{
    pr_arg_t *a = arg;
    double    m = a->maxdiff;

    (void)step;
    a->maxdiff = 0;
    if (a->tol <= 0)
        return 0;
    if (gv_allreduce(&m, 1, GV_DOUBLE, GV_MAX) != GV_OK)
        return 1;
    a->converged = m < a->tol;
    return a->converged;
}

static int pr_scatter(const gv_graph_t *g, int64_t i, const void *state,
                      gv_vx_word_t *msg_p, void *arg)
{
    const pr_state_t *s = state;

    (void)arg;
    msg_p->f = s->delta / (double)g->out_deg[i];
    return 1;
}

static const gv_vx_program_t pagerank = {
    .state_size    = sizeof(pr_state_t),
    .gather_dir    = GV_VX_IN,
    .scatter_dir   = GV_VX_OUT,
    .op            = GV_VX_SUM_F64,
    .delta_caching = 1,
    .init          = pr_init,
    .gather        = pr_gather,
    .apply         = pr_apply,
    .scatter       = pr_scatter,
};

gv_status_t gv_vx_pagerank(const gv_graph_t *g, int iters, double tol,
                           double *rank, int *iters_p,
                           const gv_vx_opts_t *opts,
                           gv_vx_stats_t *stats_p)
{
    gv_vx_opts_t  o = {0};
    pr_arg_t      a = {.tol = tol};
    pr_state_t   *st;
    gv_vx_stats_t s;
    gv_status_t   rc;

    if ((iters < 0) || !(tol >= 0) || ((iters == 0) && (tol == 0))) {
        gv__vx_err0("pagerank: iterations %d and tolerance %g: give a "
                   "positive number of iterations, a positive tolerance, "
                   "or both", iters, tol);
        return GV_ERR_INVALID;
    }
    st = malloc((size_t)(g->nlocal > 0 ? g->nlocal : 1) * sizeof(*st));
    rc = gv__vx_agree(st != NULL ? GV_OK : GV_ERR_NO_MEMORY);
    if (rc != GV_OK) {
        free(st);
        return rc;
    }
    if (opts != NULL)
        o = *opts;
    o.arg            = &a;
    o.max_supersteps = iters;
    o.after_step     = pr_converged;
    rc = gv_vx_run(g, &pagerank, st, &o, &s);
    /* A run that stopped with no vertex active stopped because no rank
     * would change any more: with tol 0 the result is that of exactly
     * @a iters sweeps; with a tolerance, the next sweep (with no change)
     * is the one that meets it. */
    if (iters_p != NULL) {
        *iters_p = s.steps;
        if ((rc == GV_OK) && (tol == 0))
            *iters_p = iters;
        else if ((rc == GV_OK) && !a.converged &&
                 ((iters == 0) || (s.steps < iters)))
            *iters_p = s.steps + 1;
    }
    if (stats_p != NULL)
        *stats_p = s;
    else
        gv_vx_stats_free(&s);
    for (int64_t i = 0; (rc == GV_OK) && (i < g->nlocal); i++)
        rank[i] = st[i].rank;
    free(st);
    return rc;
}
