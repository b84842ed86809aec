/* The default root of BFS and SSSP: the vertex with the most distinct
 * undirected neighbours, the smallest id on ties, from an undirected
 * simple pattern of the edges. SPDX-License-Identifier: BSD-3-Clause */
#include "linalg/la.h"

gv_status_t gv_la_matrix_root_maxdeg(const gv_la_matrix_t *A,
                                     int64_t *root_p)
{
    gv_status_t rc;
    int64_t     best = -1, id = INT64_MAX, m;
    unsigned    need = GV_GRAPH_SYMMETRIZE | GV_GRAPH_NO_SELF_LOOPS |
                       GV_GRAPH_DEDUP;

    if ((A->flags & need) != need) {
        gv__la_err("maxdeg root: the matrix is not built undirected simple "
                   "(GV_GRAPH_UNDIRECTED_SIMPLE)");
        return GV_ERR_INVALID;
    }
    if (A->n == 0) {
        gv__la_err("maxdeg root: the graph has no vertices");
        return GV_ERR_INVALID;
    }
    for (int64_t v = 0; v < A->nloc; v++) {
        if (A->in_deg[v] > best) {
            best = A->in_deg[v];
            id   = A->lo + v;
        }
    }
    m  = best;
    rc = gv_allreduce(&m, 1, GV_INT64, GV_MAX);
    if (rc != GV_OK)
        return rc;
    if (best != m)
        id = INT64_MAX;
    rc = gv_allreduce(&id, 1, GV_INT64, GV_MIN);
    if (rc == GV_OK)
        *root_p = id;
    return rc;
}

gv_status_t gv_la_root_maxdeg(gv_edgelist_t *el, int64_t *root_p)
{
    gv_la_matrix_t A;
    gv_status_t    rc;

    rc = gv_la_build(el, GV_GRAPH_UNDIRECTED_SIMPLE | GV_GRAPH_UNWEIGHTED,
                     &A);
    if (rc != GV_OK)
        return rc;
    rc = gv_la_matrix_root_maxdeg(&A, root_p);
    gv_la_free(&A);
    return rc;
}
