/* BFS in the linear-algebra engine: min-secondi products (the parent is
 * the smallest active neighbour id) masked by the visited vertices.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "linalg/la.h"

#include <stdlib.h>

typedef struct bfs_arg {
    int64_t  root;
    int64_t *parent, *level;
} bfs_arg_t;

static void bfs_init(gv_la_segment_t *s)
{
    bfs_arg_t *a = s->arg;

    for (int64_t v = 0; v < s->n; v++)
        a->parent[v] = a->level[v] = -1;
    if ((a->root >= s->lo) && (a->root < s->lo + s->n)) {
        int64_t v = a->root - s->lo;

        a->parent[v] = a->root;
        a->level[v]  = 0;
        s->mask[v >> 6] |= 1ull << (v & 63);
        s->active[s->nactive++] = (uint32_t)v;
    }
}

static void bfs_apply(gv_la_segment_t *s)
{
    bfs_arg_t *a = s->arg;

    for (int64_t v = 0; v < s->n; v++) {
        if ((s->y[v].i == INT64_MAX) || (a->level[v] >= 0))
            continue;
        a->parent[v] = s->y[v].i;
        a->level[v]  = s->iter;
        s->mask[v >> 6] |= 1ull << (v & 63);
        s->active[s->nactive++] = (uint32_t)v;
    }
}

static const gv_la_program_t bfs = {
    .semiring = GV_LA_MIN_SECONDI,
    .use_mask = 1,
    .init     = bfs_init,
    .apply    = bfs_apply,
};

gv_status_t gv_la_bfs(const gv_la_matrix_t *A, int64_t root, int64_t *parent,
                      int64_t *level, const gv_la_opts_t *opts,
                      gv_la_stats_t *stats_p)
{
    gv_la_opts_t o = {0};
    bfs_arg_t    a = {.root = root, .parent = parent, .level = level};
    gv_status_t  rc;

    if ((root < 0) || (root >= A->n)) {
        gv__la_err("bfs: root %lld is not a vertex (the graph has %lld)",
                   (long long)root, (long long)A->n);
        return GV_ERR_INVALID;
    }
    if (parent == NULL)
        a.parent = malloc((size_t)(A->nloc + 1) * sizeof(int64_t));
    if (level == NULL)
        a.level = malloc((size_t)(A->nloc + 1) * sizeof(int64_t));
    rc = (a.parent && a.level) ? GV_OK : GV_ERR_NO_MEMORY;
    rc = gv__la_agree(rc);
    if (opts != NULL)
        o = *opts;
    o.arg       = &a;
    o.max_iters = 0;
    o.tol       = 0;
    if (rc == GV_OK)
        rc = gv_la_run(A, &bfs, &o, stats_p);
    if (parent == NULL)
        free(a.parent);
    if (level == NULL)
        free(a.level);
    return rc;
}
