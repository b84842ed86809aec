/* Distributed CSR construction against a sequential build of the same
 * edge list: every option, both placements, graphs with self-loops,
 * duplicates, isolated vertices, no vertex, one vertex, vertex counts not
 * divisible by the number of ranks, and a weighted Kronecker graph.
 * Run: gvrun -n 3 build/tests/frameworks/fw_graph_build
 * SPDX-License-Identifier: BSD-3-Clause */
#include "../multirank/mr.h"

#include <grapevine/fw/graph.h>

#include <inttypes.h>

typedef struct {
    int64_t v;
    float   w;
} ref_nbr_t;

static int ref_cmp(const void *x, const void *y)
{
    const ref_nbr_t *a = x, *b = y;

    if (a->v != b->v)
        return (a->v < b->v) ? -1 : 1;
    return (a->w < b->w) ? -1 : (a->w > b->w);
}

/* The sequential reference: adjacency of every vertex, after the options,
 * keyed by the source (out) or the target (in). */
typedef struct {
    int64_t   *off;
    ref_nbr_t *adj;
} ref_t;

static void ref_build(int64_t nv, int64_t m, const int64_t *src,
                      const int64_t *dst, const float *w, unsigned flags,
                      int in, ref_t *r)
{
    int64_t    i, k, n = 0, *pos;
    ref_nbr_t *tmp = malloc((size_t)(2 * m + 1) * sizeof(*tmp));
    int64_t   *key = malloc((size_t)(2 * m + 1) * sizeof(int64_t));

    /* the directed edges after the options, then (in) reversed */
    for (i = 0; i < m; i++) {
        float x = (w != NULL) ? w[i] : 0;

        if ((src[i] == dst[i]) && (flags & GV_GRAPH_NO_SELF_LOOPS))
            continue;
        key[n] = src[i]; tmp[n].v = dst[i]; tmp[n].w = x; n++;
        if ((flags & GV_GRAPH_SYMMETRIZE) && (src[i] != dst[i])) {
            key[n] = dst[i]; tmp[n].v = src[i]; tmp[n].w = x; n++;
        }
    }
    /* dedup on (key, v) first: sort by key then v then w */
    r->off = calloc((size_t)nv + 1, sizeof(int64_t));
    r->adj = malloc((size_t)(n + 1) * sizeof(ref_nbr_t));
    pos    = calloc((size_t)nv + 1, sizeof(int64_t));
    for (i = 0; i < n; i++)
        r->off[key[i] + 1]++;
    for (i = 0; i < nv; i++)
        r->off[i + 1] += r->off[i];
    for (i = 0; i < n; i++)
        r->adj[r->off[key[i]] + pos[key[i]]++] = tmp[i];
    k = 0;
    for (i = 0; i < nv; i++) {
        int64_t b = r->off[i], e = r->off[i + 1], j;

        qsort(r->adj + b, (size_t)(e - b), sizeof(ref_nbr_t), ref_cmp);
        r->off[i] = k;
        for (j = b; j < e; j++)
            if (!(flags & GV_GRAPH_DEDUP) || (j == b) ||
                (r->adj[j].v != r->adj[j - 1].v))
                r->adj[k++] = r->adj[j];
    }
    r->off[nv] = k;
    if (in) { /* transpose the result */
        ref_t t;

        t.off = calloc((size_t)nv + 1, sizeof(int64_t));
        t.adj = malloc((size_t)(k + 1) * sizeof(ref_nbr_t));
        memset(pos, 0, (size_t)(nv + 1) * sizeof(int64_t));
        for (i = 0; i < k; i++)
            t.off[r->adj[i].v + 1]++;
        for (i = 0; i < nv; i++)
            t.off[i + 1] += t.off[i];
        for (i = 0; i < nv; i++)
            for (int64_t j = r->off[i]; j < r->off[i + 1]; j++) {
                int64_t d = r->adj[j].v;

                t.adj[t.off[d] + pos[d]].v = i;
                t.adj[t.off[d] + pos[d]++].w = r->adj[j].w;
            }
        for (i = 0; i < nv; i++)
            qsort(t.adj + t.off[i], (size_t)(t.off[i + 1] - t.off[i]),
                  sizeof(ref_nbr_t), ref_cmp);
        free(r->off);
        free(r->adj);
        *r = t;
    }
    free(pos);
    free(tmp);
    free(key);
}

static void check_side(const gv_graph_t *g, const ref_t *r, const int64_t *off,
                       const int64_t *v, const float *w, const int64_t *deg,
                       const char *what)
{
    int64_t i, k;

    for (i = 0; i < g->nlocal; i++) {
        int64_t u = gv_graph_global(g, i), n = r->off[u + 1] - r->off[u];

        MR_CHECK(off[i + 1] - off[i] == n, "rank %d %s: vertex %" PRId64
                 " has %" PRId64 " edges, expected %" PRId64, g->rank, what,
                 u, off[i + 1] - off[i], n);
        MR_CHECK(deg[i] == n, "rank %d %s degree of %" PRId64, g->rank, what,
                 u);
        for (k = 0; k < n; k++) {
            MR_CHECK(v[off[i] + k] == r->adj[r->off[u] + k].v,
                     "rank %d %s: vertex %" PRId64 " neighbour %" PRId64
                     " is %" PRId64 ", expected %" PRId64, g->rank, what, u,
                     k, v[off[i] + k], r->adj[r->off[u] + k].v);
            if (w != NULL)
                MR_CHECK(w[off[i] + k] == r->adj[r->off[u] + k].w,
                         "rank %d %s: weight of vertex %" PRId64, g->rank,
                         what, u);
        }
    }
}

static size_t vdata_bump(void *local, const void *args, size_t len,
                         void *result)
{
    int64_t *x = local, v;

    memcpy(&v, args, 8);
    x[0] += 1;
    x[1] = v;
    return 0;
}

/* Build the graph of (the whole list src/dst/w, m edges), split over ranks
 * by @a split (edge i to rank (i * split) % P), with every combination of
 * options, and check each against the reference. */
static void check_graph(const char *name, int64_t nv, int64_t m,
                        const int64_t *src, const int64_t *dst,
                        const float *w)
{
    static const unsigned combos[] = {
        0, GV_GRAPH_NO_SELF_LOOPS, GV_GRAPH_DEDUP,
        GV_GRAPH_DIRECTED_SIMPLE | GV_GRAPH_IN_EDGES,
        GV_GRAPH_SYMMETRIZE | GV_GRAPH_IN_EDGES,
        GV_GRAPH_UNDIRECTED_SIMPLE,
        GV_GRAPH_UNDIRECTED_SIMPLE | GV_GRAPH_UNWEIGHTED | GV_GRAPH_IN_EDGES,
        GV_GRAPH_IN_EDGES,
    };
    int P = gv_nranks(), me = gv_rank(), pl, c, split;

    for (split = 0; split < 2; split++)
    for (pl = 0; pl < 2; pl++)
    for (c = 0; c < (int)(sizeof(combos) / sizeof(combos[0])); c++) {
        gv_edgelist_t   el;
        gv_graph_t      g;
        gv_graph_opts_t o = {combos[c], pl ? GV_GRAPH_BLOCK : GV_GRAPH_HASH,
                             (c == 3) ? 16 : 0};
        ref_t           out, in;
        int64_t         i, tot, *deg;
        int             weighted = (w != NULL) &&
                                   !(o.flags & GV_GRAPH_UNWEIGHTED);

        gv_edgelist_init(&el, (split == 0) ? nv : GV_GRAPH_NVERTS_AUTO,
                         w != NULL);
        for (i = 0; i < m; i++)
            if ((split ? (i * 7 + 3) % P : i % P) == me)
                MR_OK(gv_edgelist_push(&el, src[i], dst[i],
                                       w ? w[i] : 0));
        if ((split == 1) && (m == 0))
            el.nverts = nv; /* nothing to infer from */
        MR_OK(gv_graph_build(&el, &o, &g));
        if (split == 1) {
            int64_t mx = -1;

            for (i = 0; i < m; i++)
                mx = (src[i] > mx) ? src[i] : (dst[i] > mx) ? dst[i] : mx;
            if (m > 0)
                nv = mx + 1;
        }
        MR_CHECK(g.nverts == nv, "%s: nverts %" PRId64, name, g.nverts);
        MR_CHECK(g.weighted == weighted, "%s: weighted", name);
        ref_build(nv, m, src, dst, weighted ? w : NULL, o.flags, 0, &out);
        MR_CHECK(g.nedges == out.off[nv], "%s flags 0x%x: %" PRId64
                 " edges, expected %" PRId64, name, o.flags, g.nedges,
                 out.off[nv]);
        check_side(&g, &out, g.out_off, g.out_dst, g.out_w, g.out_deg,
                   name);
        if (o.flags & GV_GRAPH_IN_EDGES) {
            ref_build(nv, m, src, dst, weighted ? w : NULL, o.flags, 1, &in);
            check_side(&g, &in, g.in_off, g.in_src, g.in_w, g.in_deg, name);
            free(in.off);
            free(in.adj);
        } else {
            MR_CHECK(g.in_off == NULL, "%s: in-edges not asked for", name);
        }
        /* placement: a bijection, consistent both ways */
        tot = g.nlocal;
        MR_OK(gv_allreduce(&tot, 1, GV_INT64, GV_SUM));
        MR_CHECK(tot == nv, "%s: %" PRId64 " vertices placed", name, tot);
        MR_CHECK(g.nlocal == gv_graph_nlocal_of(&g, me), "%s nlocal", name);
        for (i = 0; i < g.nlocal; i++) {
            int64_t u = gv_graph_global(&g, i);

            MR_CHECK((u >= 0) && (u < nv) && (gv_graph_owner(&g, u) == me) &&
                     (gv_graph_local(&g, u) == i), "%s: placement of local %"
                     PRId64 " (global %" PRId64 ")", name, i, u);
        }
        deg = malloc((size_t)(nv + 1) * sizeof(int64_t));
        MR_OK(gv_graph_degrees_all(&g, GV_GRAPH_OUT, deg));
        for (i = 0; i < nv; i++)
            MR_CHECK(deg[i] == out.off[i + 1] - out.off[i], "%s: gathered "
                     "degree of %" PRId64, name, i);
        free(deg);
        if (o.vdata_size > 0) {
            /* every rank bumps every vertex once through a delegate */
            for (i = 0; i < nv; i++)
                MR_OK(gv_delegate_call(gv_graph_vdata_gaddr(&g, i),
                                       vdata_bump, &i, 8, NULL, 0, NULL));
            gv_barrier();
            for (i = 0; i < g.nlocal; i++) {
                int64_t *x = gv_graph_vdata(&g, i);

                MR_CHECK((x[0] == P) && (x[1] == gv_graph_global(&g, i)),
                         "%s: vertex data of %" PRId64, name,
                         gv_graph_global(&g, i));
            }
        }
        free(out.off);
        free(out.adj);
        gv_graph_destroy(&g);
        gv_edgelist_free(&el);
    }
}

static void run(void *unused)
{
    /* self-loops, duplicates (with different weights), isolated vertices,
     * 37 vertices */
    enum { NV = 37, M = 300 };
    int64_t  src[M], dst[M], i;
    float    w[M];
    uint64_t x = 12345;

    for (i = 0; i < M; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        src[i] = (int64_t)((x >> 33) % 30); /* 30..36 isolated */
        dst[i] = (int64_t)((x >> 17) % 30);
        if (i % 11 == 0)
            dst[i] = src[i];
        if (i % 13 == 0 && i > 0) {
            src[i] = src[i - 1];
            dst[i] = dst[i - 1];
        }
        w[i] = (float)((x >> 40) % 100) / 8.0f;
    }
    check_graph("random37", NV, M, src, dst, w);
    check_graph("random37-unweighted", NV, M, src, dst, NULL);
    check_graph("empty", 0, 0, src, dst, NULL);
    check_graph("no-edges", 5, 0, src, dst, NULL);
    {
        int64_t s1[] = {0, 0}, d1[] = {0, 0};
        float   w1[] = {2.5f, 1.5f};

        check_graph("one-vertex", 1, 2, s1, d1, w1);
    }
    {
        /* all edges among rank 0's block-placed vertices */
        int64_t s2[] = {0, 1, 1, 2}, d2[] = {1, 0, 2, 0};

        check_graph("corner", 1001, 4, s2, d2, NULL);
    }
    {
        gv_kron_opts_t ko = {9, 8, 7, 1};
        gv_edgelist_t  el;
        int64_t       *ks, *kd, n;
        float         *kw;

        MR_OK(gv_kron_generate(&ko, &el));
        n  = el.total;
        ks = calloc((size_t)n, sizeof(int64_t));
        kd = calloc((size_t)n, sizeof(int64_t));
        kw = calloc((size_t)n, sizeof(float));
        /* the whole list on every rank (ids and weight bits summed) */
        for (i = 0; i < el.n; i++) {
            ks[el.first + i] = el.src[i];
            kd[el.first + i] = el.dst[i];
        }
        MR_OK(gv_allreduce(ks, (size_t)n, GV_INT64, GV_SUM));
        MR_OK(gv_allreduce(kd, (size_t)n, GV_INT64, GV_SUM));
        {
            double *dw = calloc((size_t)n, sizeof(double));

            for (i = 0; i < el.n; i++)
                dw[el.first + i] = el.w[i];
            MR_OK(gv_allreduce(dw, (size_t)n, GV_DOUBLE, GV_SUM));
            for (i = 0; i < n; i++)
                kw[i] = (float)dw[i];
            free(dw);
        }
        check_graph("kron9", el.nverts, n, ks, kd, kw);
        free(ks);
        free(kd);
        free(kw);
        gv_edgelist_free(&el);
    }
    {
        /* an id out of range is an error on every rank */
        gv_edgelist_t el;
        gv_graph_t    g;

        gv_edgelist_init(&el, 10, 0);
        if (gv_rank() == gv_nranks() - 1)
            MR_OK(gv_edgelist_push(&el, 3, 10, 0));
        MR_CHECK(gv_graph_build(&el, NULL, &g) == GV_ERR_INVALID,
                 "rank %d: id 10 of 10 vertices accepted", gv_rank());
        MR_CHECK(strstr(gv_graph_errmsg(), "vertex id 10 outside 0..9") !=
                     NULL, "rank %d: message '%s'", gv_rank(),
                 gv_graph_errmsg());
        gv_edgelist_free(&el);
    }
    if (gv_rank() == 0)
        printf("fw_graph_build ok on %d ranks\n", gv_nranks());
}

int main(int argc, char **argv)
{
    mr_init(&argc, &argv);
    MR_OK(gv_run_all(run, NULL, 0));
    gv_finalize();
    return 0;
}
