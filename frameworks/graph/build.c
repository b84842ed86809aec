/* Building the distributed CSR graph: every edge travels (in bulk) to the
 * owner of its source, which sorts its adjacency lists; in-edges the same
 * way from the finished out-edges to the owners of their targets.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "graph/graph_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define ALL_FLAGS (GV_GRAPH_SYMMETRIZE | GV_GRAPH_NO_SELF_LOOPS | \
                   GV_GRAPH_DEDUP | GV_GRAPH_IN_EDGES | GV_GRAPH_UNWEIGHTED)

/* One neighbour while sorting. */
typedef struct {
    int64_t v;
    float   w;
} nbr_t;

static int nbr_lt(const nbr_t *a, const nbr_t *b)
{
    return (a->v < b->v) || ((a->v == b->v) && (a->w < b->w));
}

static void nbr_sort(nbr_t *a, int64_t n)
{
    while (n > 16) {
        int64_t i = 0, j = n - 1, m = n / 2;
        nbr_t   pivot, t;

        /* median of three */
        if (nbr_lt(&a[m], &a[0])) { t = a[m]; a[m] = a[0]; a[0] = t; }
        if (nbr_lt(&a[j], &a[0])) { t = a[j]; a[j] = a[0]; a[0] = t; }
        if (nbr_lt(&a[j], &a[m])) { t = a[j]; a[j] = a[m]; a[m] = t; }
        pivot = a[m];
        while (i <= j) {
            while (nbr_lt(&a[i], &pivot))
                i++;
            while (nbr_lt(&pivot, &a[j]))
                j--;
            if (i <= j) {
                t = a[i]; a[i] = a[j]; a[j] = t;
                i++;
                j--;
            }
        }
        /* recurse into the smaller part, loop on the larger */
        if (j + 1 < n - i) {
            nbr_sort(a, j + 1);
            a += i;
            n -= i;
        } else {
            nbr_sort(a + i, n - i);
            n = j + 1;
        }
    }
    for (int64_t i = 1; i < n; i++) {
        nbr_t   x = a[i];
        int64_t j = i - 1;

        while ((j >= 0) && nbr_lt(&x, &a[j])) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = x;
    }
}

int64_t gv_graph_nlocal_of(const gv_graph_t *g, int r)
{
    int64_t n = g->nverts, P = g->nranks;

    if (g->placement == GV_GRAPH_BLOCK)
        return (int64_t)(((unsigned __int128)n * (unsigned)(r + 1)) /
                         (unsigned)P) -
               (int64_t)(((unsigned __int128)n * (unsigned)r) / (unsigned)P);
    return (n > r) ? (n - r + P - 1) / P : 0;
}

static void put_rec(uint8_t *p, int64_t a, int64_t b, float w, int weighted)
{
    memcpy(p, &a, 8);
    memcpy(p + 8, &b, 8);
    if (weighted)
        memcpy(p + 16, &w, 4);
}

/* Records (key, other[, w]) with every key owned here -> CSR over local
 * indices: *off_p [nlocal + 1], *adj_p (other, w) sorted per vertex, and
 * deduplicated if asked (keeping the smallest weight: the first after
 * sorting). */
static int csr_from(const gv_graph_t *g, const uint8_t *recs, int64_t n,
                    int weighted, int dedup, int64_t **off_p, int64_t **v_p,
                    float **w_p, int64_t *m_p)
{
    size_t   rec = weighted ? 20 : 16;
    int64_t *off = calloc((size_t)g->nlocal + 1, sizeof(int64_t));
    int64_t *loc = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *pos = NULL, i, k, m = 0;
    nbr_t   *adj = malloc((size_t)(n ? n : 1) * sizeof(nbr_t));
    int64_t *vs = NULL;
    float   *ws = NULL;

    if ((off == NULL) || (loc == NULL) || (adj == NULL))
        goto err;
    for (i = 0; i < n; i++) {
        int64_t a;

        memcpy(&a, recs + (size_t)i * rec, 8);
        loc[i] = gv_graph_local(g, a);
        off[loc[i] + 1]++;
    }
    for (i = 0; i < g->nlocal; i++)
        off[i + 1] += off[i];
    pos = malloc((size_t)(g->nlocal ? g->nlocal : 1) * sizeof(int64_t));
    if (pos == NULL)
        goto err;
    memcpy(pos, off, (size_t)g->nlocal * sizeof(int64_t));
    for (i = 0; i < n; i++) {
        nbr_t *x = &adj[pos[loc[i]]++];

        memcpy(&x->v, recs + (size_t)i * rec + 8, 8);
        x->w = 0;
        if (weighted)
            memcpy(&x->w, recs + (size_t)i * rec + 16, 4);
    }
    free(pos);
    pos = NULL;
    free(loc);
    loc = NULL;
    /* Sort, deduplicate, compact (in place: m never passes off[i]). */
    for (i = 0; i < g->nlocal; i++) {
        int64_t b = off[i], e = off[i + 1];

        nbr_sort(adj + b, e - b);
        off[i] = m;
        for (k = b; k < e; k++)
            if (!dedup || (k == b) || (adj[k].v != adj[k - 1].v))
                adj[m++] = adj[k];
        if ((i & 0xfff) == 0xfff)
            gv_yield();
    }
    off[g->nlocal] = m;
    vs = malloc((size_t)(m ? m : 1) * sizeof(int64_t));
    if (weighted)
        ws = malloc((size_t)(m ? m : 1) * sizeof(float));
    if ((vs == NULL) || (weighted && (ws == NULL)))
        goto err;
    for (k = 0; k < m; k++) {
        vs[k] = adj[k].v;
        if (weighted)
            ws[k] = adj[k].w;
    }
    free(adj);
    *off_p = off;
    *v_p   = vs;
    *w_p   = ws;
    *m_p   = m;
    return 0;
err:
    free(off);
    free(loc);
    free(pos);
    free(adj);
    free(vs);
    free(ws);
    return -1;
}

/* Collective: send the edges (a[i], b[i][, w[i]]) of this rank to the
 * owners of a[i], then build the CSR there. */
static gv_status_t shuffle_csr(gv_graph_t *g, const int64_t *a,
                               const int64_t *b, const float *w, int64_t n,
                               int weighted, int dedup, int64_t **off_p,
                               int64_t **v_p, float **w_p, int64_t *m_p)
{
    int          P = g->nranks;
    size_t       rec = weighted ? 20 : 16;
    int64_t     *counts = calloc((size_t)P, sizeof(int64_t));
    int64_t     *start = malloc((size_t)P * sizeof(int64_t));
    int32_t     *own = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    uint8_t     *send = malloc((size_t)(n ? n : 1) * rec);
    void        *recv = NULL;
    int64_t      nrecv = 0, i;
    gv__gerr_t   err;
    gv_status_t  status;

    gv__gerr_init(&err);
    if ((counts == NULL) || (start == NULL) || (own == NULL) ||
        (send == NULL)) {
        gv__gerr_set(&err, -1, GV_ERR_NO_MEMORY, "graph: rank %d: no memory "
                     "for %" PRId64 " edges to send", g->rank, n);
    } else {
        for (i = 0; i < n; i++) {
            own[i] = gv_graph_owner(g, a[i]);
            counts[own[i]]++;
        }
        start[0] = 0;
        for (i = 1; i < P; i++)
            start[i] = start[i - 1] + counts[i - 1];
        for (i = 0; i < n; i++)
            put_rec(send + (size_t)(start[own[i]]++) * rec, a[i], b[i],
                    weighted ? w[i] : 0, weighted);
    }
    free(own);
    free(start);
    status = gv__gerr_agree(&err);
    if (status == GV_OK)
        status = gv__graph_alltoallv(send, counts, rec, &recv, &nrecv);
    free(send);
    free(counts);
    if (status != GV_OK)
        return status;
    if (csr_from(g, recv, nrecv, weighted, dedup, off_p, v_p, w_p, m_p) != 0)
        gv__gerr_set(&err, -1, GV_ERR_NO_MEMORY, "graph: rank %d: no memory "
                     "for the CSR of %" PRId64 " edges", g->rank, nrecv);
    free(recv);
    return gv__gerr_agree(&err);
}

static gv_status_t vdata_setup(gv_graph_t *g, size_t size)
{
    gv__gerr_t  err;
    gv_status_t status;
    gv_gaddr_t  mine = GV_GADDR_NULL;
    size_t      bytes = (size_t)g->nlocal * size;
    int64_t    *all = malloc((size_t)g->nranks * sizeof(int64_t));

    gv__gerr_init(&err);
    g->vdata_size = size;
    g->vdata      = calloc(1, bytes ? bytes : 1);
    g->vdata_addr = malloc((size_t)g->nranks * sizeof(gv_gaddr_t));
    if ((g->vdata == NULL) || (g->vdata_addr == NULL) || (all == NULL))
        gv__gerr_set(&err, -1, GV_ERR_NO_MEMORY, "graph: rank %d: no memory "
                     "for %zu bytes of vertex data", g->rank, bytes);
    else if ((status = gv_export(g->vdata, bytes ? bytes : 1, &mine)) != GV_OK)
        gv__gerr_set(&err, -1, status, "graph: rank %d: cannot export the "
                     "vertex data: %s", g->rank, gv_status_str(status));
    status = gv__gerr_agree(&err);
    if (status == GV_OK)
        status = gv__graph_allgather64((int64_t)mine, all);
    if (status == GV_OK)
        memcpy(g->vdata_addr, all, (size_t)g->nranks * sizeof(int64_t));
    else if (mine != GV_GADDR_NULL)
        gv_unexport(mine);
    free(all);
    return status;
}

gv_status_t gv_graph_build(gv_edgelist_t *el, const gv_graph_opts_t *opts,
                           gv_graph_t *g_p)
{
    static const gv_graph_opts_t defaults;
    gv_graph_t   g;
    gv__gerr_t   err;
    gv_status_t  status;
    int64_t     *a = NULL, *b = NULL, i, k, n = 0, cap;
    float       *w = NULL;
    gv__perm_t   hperm;

    if (opts == NULL)
        opts = &defaults;
    gv__gerr_init(&err);
    if ((el == NULL) || (g_p == NULL))
        gv__gerr_set(&err, 0, GV_ERR_INVALID, "graph: NULL edge list or "
                     "output");
    else if (opts->flags & ~(unsigned)ALL_FLAGS)
        gv__gerr_set(&err, 0, GV_ERR_INVALID, "graph: unknown flags 0x%x",
                     opts->flags & ~(unsigned)ALL_FLAGS);
    else if ((opts->placement != GV_GRAPH_HASH) &&
             (opts->placement != GV_GRAPH_BLOCK))
        gv__gerr_set(&err, 0, GV_ERR_INVALID, "graph: placement %d (expected "
                     "GV_GRAPH_HASH or GV_GRAPH_BLOCK)", (int)opts->placement);
    status = gv__gerr_agree(&err);
    if (status == GV_OK)
        status = gv_edgelist_sync(el);
    if (status != GV_OK)
        return status;

    memset(&g, 0, sizeof(g));
    g.nverts    = el->nverts;
    g.rank      = gv_rank();
    g.nranks    = gv_nranks();
    g.placement = opts->placement;
    g.flags     = opts->flags;
    g.weighted  = el->weighted && !(opts->flags & GV_GRAPH_UNWEIGHTED);
    g.hash_bits = gv__graph_bits(g.nverts);
    g.nlocal    = gv_graph_nlocal_of(&g, g.rank);
    g.lo = (int64_t)(((unsigned __int128)g.nverts * (unsigned)g.rank) /
                     (unsigned)g.nranks);
    g.local_ids = malloc((size_t)(g.nlocal ? g.nlocal : 1) * sizeof(int64_t));
    g.out_deg   = malloc((size_t)(g.nlocal ? g.nlocal : 1) * sizeof(int64_t));
    cap = (opts->flags & GV_GRAPH_SYMMETRIZE) ? 2 * el->n : el->n;
    a   = malloc((size_t)(cap ? cap : 1) * sizeof(int64_t));
    b   = malloc((size_t)(cap ? cap : 1) * sizeof(int64_t));
    if (g.weighted)
        w = malloc((size_t)(cap ? cap : 1) * sizeof(float));
    if ((g.local_ids == NULL) || (g.out_deg == NULL) || (a == NULL) ||
        (b == NULL) || (g.weighted && (w == NULL)))
        gv__gerr_set(&err, -1, GV_ERR_NO_MEMORY, "graph: rank %d: no memory "
                     "for %" PRId64 " vertices and %" PRId64 " edges", g.rank,
                     g.nlocal, cap);
    status = gv__gerr_agree(&err);
    if (status != GV_OK)
        goto err;
    gv__perm_init(&hperm, g.nverts, GV__GRAPH_HASH_KEY);
    for (i = 0; i < g.nlocal; i++)
        g.local_ids[i] = (g.placement == GV_GRAPH_BLOCK) ?
            g.lo + i : gv__perm_bwd(&hperm, i * g.nranks + g.rank);

    /* The edges this rank sends, after the options. */
    for (k = 0; k < el->n; k++) {
        int64_t s = el->src[k], d = el->dst[k];
        float   x = g.weighted ? el->w[k] : 0;

        if ((s == d) && (opts->flags & GV_GRAPH_NO_SELF_LOOPS))
            continue;
        a[n] = s;
        b[n] = d;
        if (w != NULL)
            w[n] = x;
        n++;
        if ((opts->flags & GV_GRAPH_SYMMETRIZE) && (s != d)) {
            a[n] = d;
            b[n] = s;
            if (w != NULL)
                w[n] = x;
            n++;
        }
    }
    status = shuffle_csr(&g, a, b, w, n, g.weighted,
                         (opts->flags & GV_GRAPH_DEDUP) != 0, &g.out_off,
                         &g.out_dst, &g.out_w, &g.nlocal_out);
    free(a);
    free(b);
    free(w);
    a = b = NULL;
    w = NULL;
    if (status != GV_OK)
        goto err;
    for (i = 0; i < g.nlocal; i++)
        g.out_deg[i] = g.out_off[i + 1] - g.out_off[i];

    if (opts->flags & GV_GRAPH_IN_EDGES) {
        int64_t *src = malloc((size_t)(g.nlocal_out ? g.nlocal_out : 1) *
                              sizeof(int64_t));

        g.in_deg = malloc((size_t)(g.nlocal ? g.nlocal : 1) * sizeof(int64_t));
        if ((src == NULL) || (g.in_deg == NULL))
            gv__gerr_set(&err, -1, GV_ERR_NO_MEMORY, "graph: rank %d: no "
                         "memory for in-edges", g.rank);
        else
            for (i = 0; i < g.nlocal; i++)
                for (k = g.out_off[i]; k < g.out_off[i + 1]; k++)
                    src[k] = g.local_ids[i];
        status = gv__gerr_agree(&err);
        if (status == GV_OK)
            status = shuffle_csr(&g, g.out_dst, src, g.out_w, g.nlocal_out,
                                 g.weighted, 0, &g.in_off, &g.in_src,
                                 &g.in_w, &g.nlocal_in);
        free(src);
        if (status != GV_OK)
            goto err;
        for (i = 0; i < g.nlocal; i++)
            g.in_deg[i] = g.in_off[i + 1] - g.in_off[i];
    }
    g.nedges = g.nlocal_out;
    status   = gv_allreduce(&g.nedges, 1, GV_INT64, GV_SUM);
    if ((status == GV_OK) && (opts->vdata_size > 0))
        status = vdata_setup(&g, opts->vdata_size);
    if (status != GV_OK)
        goto err;
    *g_p = g;
    return GV_OK;
err:
    free(a);
    free(b);
    free(w);
    free(g.vdata_addr);
    g.vdata_addr = NULL; /* not exported on failure */
    gv_graph_destroy(&g);
    return status;
}

void gv_graph_destroy(gv_graph_t *g)
{
    if (g == NULL)
        return;
    if (g->vdata_addr != NULL) {
        /* No delegate may reach the data any more: wait for quiet. */
        gv_barrier();
        gv_unexport(g->vdata_addr[g->rank]);
    }
    free(g->local_ids);
    free(g->out_off);
    free(g->out_dst);
    free(g->out_w);
    free(g->out_deg);
    free(g->in_off);
    free(g->in_src);
    free(g->in_w);
    free(g->in_deg);
    free(g->vdata);
    free(g->vdata_addr);
    memset(g, 0, sizeof(*g));
}

gv_status_t gv_graph_degrees_all(const gv_graph_t *g, gv_graph_dir_t dir,
                                 int64_t *deg)
{
    const int64_t *d = (dir == GV_GRAPH_IN) ? g->in_deg : g->out_deg;
    gv__gerr_t     err;
    gv_status_t    status;
    int64_t        i, c;

    gv__gerr_init(&err);
    if ((dir != GV_GRAPH_OUT) && (dir != GV_GRAPH_IN))
        gv__gerr_set(&err, 0, GV_ERR_INVALID, "graph degrees: direction %d",
                     (int)dir);
    else if ((dir == GV_GRAPH_IN) && (g->in_deg == NULL))
        gv__gerr_set(&err, 0, GV_ERR_INVALID, "graph degrees: in-degrees "
                     "asked of a graph built without GV_GRAPH_IN_EDGES");
    status = gv__gerr_agree(&err);
    if (status != GV_OK)
        return status;
    memset(deg, 0, (size_t)g->nverts * sizeof(int64_t));
    for (i = 0; i < g->nlocal; i++)
        deg[g->local_ids[i]] = d[i];
    for (i = 0; i < g->nverts; i += c) {
        c = g->nverts - i;
        if (c > (int64_t)GV__GRAPH_COLL_ELEMS)
            c = (int64_t)GV__GRAPH_COLL_ELEMS;
        status = gv_allreduce(deg + i, (size_t)c, GV_INT64, GV_SUM);
        if (status != GV_OK)
            return status;
    }
    return GV_OK;
}
