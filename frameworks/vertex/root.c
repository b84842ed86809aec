/* The default root of BFS and SSSP: the vertex with the most distinct
 * undirected neighbours, the smallest id on ties. SPDX-License-Identifier: BSD-3-Clause */
#include "vertex/vx.h"

/* |a u b - {self}| of two ascending lists (with repeats). */
static int64_t union_count(const int64_t *a, int64_t na, const int64_t *b,
                           int64_t nb, int64_t self)
{
    int64_t i = 0, j = 0, n = 0, last = -1;

    while ((i < na) || (j < nb)) {
        int64_t v;

        if ((j >= nb) || ((i < na) && (a[i] <= b[j])))
            v = a[i++];
        else
            v = b[j++];
        if ((v != last) && (v != self))
            n++;
        last = v;
    }
    return n;
}

gv_status_t gv_vx_root_maxdeg(const gv_graph_t *g, int64_t *root_p)
{
    int     sym  = (g->flags & GV_GRAPH_SYMMETRIZE) != 0;
    int64_t best = -1, id = INT64_MAX;
    gv_status_t rc;

    if (!sym && (g->in_off == NULL)) {
        gv__vx_err0("maxdeg root: the graph is neither symmetrized nor has "
                   "in-edges");
        return GV_ERR_INVALID;
    }
    if (g->nverts == 0) {
        gv__vx_err0("maxdeg root: the graph has no vertices");
        return GV_ERR_INVALID;
    }
    for (int64_t i = 0; i < g->nlocal; i++) {
        int64_t v = gv_graph_global(g, i);
        const int64_t *o = g->out_dst + g->out_off[i];
        int64_t no = g->out_off[i + 1] - g->out_off[i];
        int64_t d = sym ? union_count(o, no, NULL, 0, v)
                        : union_count(o, no, g->in_src + g->in_off[i],
                                      g->in_off[i + 1] - g->in_off[i], v);

        if ((d > best) || ((d == best) && (v < id))) {
            best = d;
            id   = v;
        }
    }
    {
        int64_t m = best;

        rc = gv_allreduce(&m, 1, GV_INT64, GV_MAX);
        if (rc != GV_OK)
            return rc;
        if (best != m)
            id = INT64_MAX;
        rc = gv_allreduce(&id, 1, GV_INT64, GV_MIN);
    }
    if (rc == GV_OK)
        *root_p = id;
    return rc;
}
