/* Single-source shortest paths by delta-stepping through the engine: a
 * vertex whose distance fell scatters once it lies in the current bucket
 * and holds until then. SPDX-License-Identifier: BSD-3-Clause */
#include "vertex/vx.h"

#include <math.h>
#include <stdlib.h>

typedef struct sp_state {
    double dist;
    int    dirty; /* fell since it last scattered */
} sp_state_t;

typedef struct sp_arg {
    int64_t root;
    double  delta;    /* bucket width; +inf: Bellman-Ford */
    double  end;      /* the current bucket ends here (exclusive) */
    int64_t scattered, held; /* this rank, this superstep */
    double  held_min; /* smallest held distance of this rank */
} sp_arg_t;

static int sp_init(const gv_graph_t *g, int64_t i, void *state, void *arg)
{
    sp_state_t *s = state;
    sp_arg_t   *a = arg;

    s->dirty = gv_graph_global(g, i) == a->root;
    s->dist  = s->dirty ? 0.0 : INFINITY;
    return s->dirty;
}

static int sp_apply(const gv_graph_t *g, int64_t i, void *state,
                    gv_vx_word_t acc, int has_acc, void *arg)
{
    sp_state_t *s = state;
    sp_arg_t   *a = arg;

    (void)g;
    (void)i;
    if (has_acc && (acc.f < s->dist)) {
        s->dist  = acc.f;
        s->dirty = 1;
    }
    if (!s->dirty)
        return 0;
    if (s->dist < a->end) {
        s->dirty = 0;
        a->scattered++;
        return 1;
    }
    a->held++;
    if (s->dist < a->held_min)
        a->held_min = s->dist;
    return GV_VX_HOLD;
}

static int sp_scatter(const gv_graph_t *g, int64_t i, const void *state,
                      gv_vx_word_t *msg_p, void *arg)
{
    (void)g;
    (void)i;
    (void)arg;
    msg_p->f = ((const sp_state_t *)state)->dist;
    return 1;
}

static gv_vx_word_t sp_edge(gv_vx_word_t v, float w, void *arg)
{
    (void)arg;
    v.f += (double)w;
    return v;
}

/* When a superstep scattered nothing anywhere, the next bucket is the one
 * of the smallest held distance. */
static int sp_after(int step, void *arg)
{
    sp_arg_t *a = arg;
    int64_t   n[2] = {a->scattered, a->held};
    double    m    = a->held_min;

    (void)step;
    a->scattered = a->held = 0;
    a->held_min  = INFINITY;
    if (isinf(a->delta))
        return 0;
    if ((gv_allreduce(n, 2, GV_INT64, GV_SUM) != GV_OK) ||
        (gv_allreduce(&m, 1, GV_DOUBLE, GV_MIN) != GV_OK))
        return 1;
    if ((n[0] == 0) && (n[1] > 0))
        a->end = (floor(m / a->delta) + 1) * a->delta;
    return 0;
}

static const gv_vx_program_t sssp = {
    .state_size  = sizeof(sp_state_t),
    .scatter_dir = GV_VX_OUT,
    .op          = GV_VX_MIN_F64,
    .init        = sp_init,
    .edge        = sp_edge,
    .apply       = sp_apply,
    .scatter     = sp_scatter,
};

gv_status_t gv_vx_sssp(const gv_graph_t *g, int64_t root, double delta,
                       double *dist, const gv_vx_opts_t *opts,
                       gv_vx_stats_t *stats_p)
{
    gv_vx_opts_t o   = {0};
    sp_arg_t     a   = {.root = root, .held_min = INFINITY};
    double       mw[2] = {0, 0}; /* largest weight, -bad edge */
    sp_state_t  *st;
    gv_status_t  rc;

    for (int64_t e = 0; (g->out_w != NULL) && (e < g->nlocal_out); e++) {
        if (!(g->out_w[e] >= 0))
            mw[1] = 1;
        else if (g->out_w[e] > mw[0])
            mw[0] = g->out_w[e];
    }
    if (g->out_w == NULL)
        mw[0] = 1;
    rc = gv_allreduce(mw, 2, GV_DOUBLE, GV_MAX);
    if (rc != GV_OK)
        return rc;
    if (mw[1] > 0) {
        gv__vx_err0("sssp: the graph has a negative or NaN weight: weights "
                    "must be non-negative");
        return GV_ERR_INVALID;
    }
    if ((root < 0) || (root >= g->nverts)) {
        gv__vx_err0("sssp: root %lld is not a vertex (0..%lld)",
                    (long long)root, (long long)g->nverts - 1);
        return GV_ERR_INVALID;
    }
    if (isnan(delta)) {
        gv__vx_err0("sssp: delta is not a number");
        return GV_ERR_INVALID;
    }
    if (delta < 0) {
        a.delta = INFINITY;
    } else if (delta > 0) {
        a.delta = delta;
    } else {
        double avg = (g->nverts > 0) ? (double)g->nedges / (double)g->nverts
                                     : 1;

        a.delta = (mw[0] > 0) ? mw[0] / (avg > 1 ? avg : 1) : 1;
    }
    a.end = isinf(a.delta) ? INFINITY : a.delta;
    st    = malloc((size_t)(g->nlocal > 0 ? g->nlocal : 1) * sizeof(*st));
    rc = gv__vx_agree(st != NULL ? GV_OK : GV_ERR_NO_MEMORY);
    if (rc != GV_OK) {
        free(st);
        return rc;
    }
    if (opts != NULL)
        o = *opts;
    o.arg        = &a;
    o.after_step = sp_after;
    rc = gv_vx_run(g, &sssp, st, &o, stats_p);
    for (int64_t i = 0; (rc == GV_OK) && (i < g->nlocal); i++)
        dist[i] = st[i].dist;
    free(st);
    return rc;
}
