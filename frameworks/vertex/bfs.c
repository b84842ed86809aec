/* BFS (parent and level) through the engine: messages carry (level, id)
 * packed so that the minimum is the smallest-id neighbour of the previous
 * level. SPDX-License-Identifier: BSD-3-Clause */
#include "vertex/vx.h"

#include <stdlib.h>

typedef struct bfs_state {
    int64_t parent, level;
} bfs_state_t;

static int bfs_init(const gv_graph_t *g, int64_t i, void *state, void *arg)
{
    bfs_state_t *s    = state;
    int64_t      root = *(const int64_t *)arg;

    if (gv_graph_global(g, i) == root) {
        s->parent = root;
        s->level  = 0;
        return 1;
    }
    s->parent = -1;
    s->level  = -1;
    return 0;
}

static int bfs_apply(const gv_graph_t *g, int64_t i, void *state,
                     gv_vx_word_t acc, int has_acc, void *arg)
{
    bfs_state_t *s = state;

    (void)g;
    (void)i;
    (void)arg;
    if (!has_acc)
        return s->level == 0; /* the root, first superstep */
    if (s->level >= 0)
        return 0;
    s->level  = (int64_t)(acc.u >> 32);
    s->parent = (int64_t)(acc.u & 0xffffffffu);
    return 1;
}

static int bfs_scatter(const gv_graph_t *g, int64_t i, const void *state,
                       gv_vx_word_t *msg_p, void *arg)
{
    const bfs_state_t *s = state;

    (void)arg;
    /* The engine numbers vertices in 31 bits. */
    msg_p->u = ((uint64_t)(s->level + 1) << 32) | (uint64_t)gv_graph_global(g, i);
    return 1;
}

static const gv_vx_program_t bfs = {
    .state_size  = sizeof(bfs_state_t),
    .scatter_dir = GV_VX_OUT,
    .op          = GV_VX_MIN_I64,
    .init        = bfs_init,
    .apply       = bfs_apply,
    .scatter     = bfs_scatter,
};

gv_status_t gv_vx_bfs(const gv_graph_t *g, int64_t root, int64_t *parent,
                      int64_t *level, const gv_vx_opts_t *opts,
                      gv_vx_stats_t *stats_p)
{
    gv_vx_opts_t o = {0};
    bfs_state_t *st;
    gv_status_t  rc;

    if ((root < 0) || (root >= g->nverts)) {
        gv__vx_err0("bfs: root %lld is not a vertex (0..%lld)",
                   (long long)root, (long long)g->nverts - 1);
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
    o.arg = &root;
    rc    = gv_vx_run(g, &bfs, st, &o, stats_p);
    for (int64_t i = 0; (rc == GV_OK) && (i < g->nlocal); i++) {
        if (parent != NULL)
            parent[i] = st[i].parent;
        if (level != NULL)
            level[i] = st[i].level;
    }
    free(st);
    return rc;
}
