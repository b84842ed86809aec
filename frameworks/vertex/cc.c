/* Connected components by label propagation (minimum label) through the
 * engine. SPDX-License-Identifier: BSD-3-Clause */
#include "vertex/vx.h"

static int cc_init(const gv_graph_t *g, int64_t i, void *state, void *arg)
{
    (void)arg;
    *(int64_t *)state = gv_graph_global(g, i);
    return 1;
}

static int cc_apply(const gv_graph_t *g, int64_t i, void *state,
                    gv_vx_word_t acc, int has_acc, void *arg)
{
    int64_t *label = state;

    (void)g;
    (void)i;
    (void)arg;
    if (!has_acc)
        return 1; /* the first superstep: everyone tells its neighbours */
    if (acc.i >= *label)
        return 0;
    *label = acc.i;
    return 1;
}

static int cc_scatter(const gv_graph_t *g, int64_t i, const void *state,
                      gv_vx_word_t *msg_p, void *arg)
{
    (void)arg;
    if (g->out_off[i + 1] == g->out_off[i])
        return 0;
    msg_p->i = *(const int64_t *)state;
    return 1;
}

static const gv_vx_program_t cc = {
    .state_size  = sizeof(int64_t),
    .scatter_dir = GV_VX_OUT,
    .op          = GV_VX_MIN_I64,
    .init        = cc_init,
    .apply       = cc_apply,
    .scatter     = cc_scatter,
};

gv_status_t gv_vx_cc(const gv_graph_t *g, int64_t *label,
                     const gv_vx_opts_t *opts, gv_vx_stats_t *stats_p)
{
    gv_vx_opts_t o = {0};

    if (opts != NULL)
        o = *opts;
    o.arg = NULL;
    return gv_vx_run(g, &cc, label, &o, stats_p);
}
