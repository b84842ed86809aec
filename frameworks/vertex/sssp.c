/* Single-source shortest paths by Bellman-Ford-style relaxation through
 * the engine: only vertices whose distance fell scatter. SPDX-License-Identifier: BSD-3-Clause */
#include "vertex/vx.h"

#include <math.h>

static int sp_init(const gv_graph_t *g, int64_t i, void *state, void *arg)
{
    double *d = state;

    if (gv_graph_global(g, i) == *(const int64_t *)arg) {
        *d = 0.0;
        return 1;
    }
    *d = INFINITY;
    return 0;
}

static int sp_apply(const gv_graph_t *g, int64_t i, void *state,
                    gv_vx_word_t acc, int has_acc, void *arg)
{
    double *d = state;

    (void)g;
    (void)i;
    (void)arg;
    if (!has_acc)
        return *d == 0.0; /* the root, first superstep */
    if (!(acc.f < *d))
        return 0;
    *d = acc.f;
    return 1;
}

static int sp_scatter(const gv_graph_t *g, int64_t i, const void *state,
                      gv_vx_word_t *msg_p, void *arg)
{
    (void)g;
    (void)i;
    (void)arg;
    msg_p->f = *(const double *)state;
    return 1;
}

static gv_vx_word_t sp_edge(gv_vx_word_t v, float w, void *arg)
{
    (void)arg;
    v.f += (double)w;
    return v;
}

static const gv_vx_program_t sssp = {
    .state_size  = sizeof(double),
    .scatter_dir = GV_VX_OUT,
    .op          = GV_VX_MIN_F64,
    .init        = sp_init,
    .edge        = sp_edge,
    .apply       = sp_apply,
    .scatter     = sp_scatter,
};

gv_status_t gv_vx_sssp(const gv_graph_t *g, int64_t root, double *dist,
                       const gv_vx_opts_t *opts, gv_vx_stats_t *stats_p)
{
    gv_vx_opts_t o   = {0};
    int64_t      bad = -1;
    gv_status_t  rc;

    for (int64_t e = 0; (g->out_w != NULL) && (e < g->nlocal_out); e++) {
        if (!(g->out_w[e] >= 0)) {
            bad = e;
            break;
        }
    }
    rc = gv_allreduce(&bad, 1, GV_INT64, GV_MAX);
    if (rc != GV_OK)
        return rc;
    if (bad >= 0) {
        gv__vx_err("sssp: the graph has a negative or NaN weight: weights "
                   "must be non-negative");
        return GV_ERR_INVALID;
    }
    if ((root < 0) || (root >= g->nverts)) {
        gv__vx_err("sssp: root %lld is not a vertex (0..%lld)",
                   (long long)root, (long long)g->nverts - 1);
        return GV_ERR_INVALID;
    }
    if (opts != NULL)
        o = *opts;
    o.arg = &root;
    return gv_vx_run(g, &sssp, dist, &o, stats_p);
}
