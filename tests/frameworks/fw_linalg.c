/* The linear-algebra engine: the tiling (2DT-Staggered on every rank count
 * 1..64 and pretend-node layouts: every tile owned once, every segment led
 * by exactly one rank, row groups within a node when the node sizes allow;
 * on the job itself: every nonzero in exactly one tile, in its segments,
 * DCSC and DCSR alike, the degrees, the row teams within the node team)
 * and the applications against the sequential checkers and against the
 * vertex engine (identical levels, parents, labels, distances; PageRank
 * within 1e-9), on Kronecker graphs and hand-made edge cases.
 * Run: gvrun -n P fw_linalg [--scales "10 12"]
 * SPDX-License-Identifier: BSD-3-Clause */
#include <grapevine.h>
#include <grapevine/team.h>
#include <grapevine/fw/graph.h>
#include <grapevine/fw/linalg.h>
#include <grapevine/fw/vertex.h>

#include "check/check.h"
#include "../multirank/mr.h"

#include <math.h>

static int  scales[8] = {10, 12};
static int  nscales   = 2;
static char msg[512];

/* ---- the layout, as pure functions --------------------------------------- */

static void check_layout(int P, const int *node_of, int contiguous_nodes)
{
    gv_la_layout_t L;
    int64_t        n = 1000 + P;
    int           *tiles = calloc((size_t)P, sizeof(int));
    int           *led   = calloc((size_t)P, sizeof(int));

    MR_CHECK(tiles && led, "out of memory");
    MR_OK(gv_la_layout_init(P, node_of, n, &L));
    MR_CHECK(L.pr * L.pc == P && L.pr <= L.pc, "P=%d: pr %d pc %d", P, L.pr,
             L.pc);
    for (int i = 0; i < P; i++) {
        int own0 = gv_la_tile_owner(&L, i, 0);

        for (int j = 0; j < P; j++) {
            int o = gv_la_tile_owner(&L, i, j);

            MR_CHECK((o >= 0) && (o < P), "P=%d: tile (%d,%d) owner %d", P, i,
                     j, o);
            tiles[o]++;
            /* the row group is one block of pr virtual ids */
            MR_CHECK(L.vid_of[o] / L.pr == L.vid_of[own0] / L.pr,
                     "P=%d: row group %d spans blocks", P, i);
            /* the column group one class modulo pr */
            MR_CHECK(L.vid_of[o] % L.pr ==
                         L.vid_of[gv_la_tile_owner(&L, 0, j)] % L.pr,
                     "P=%d: column group %d spans classes", P, j);
            if ((node_of != NULL) && contiguous_nodes)
                MR_CHECK(node_of[o] == node_of[own0], "P=%d: row group %d "
                         "leaves its node (ranks %d, %d)", P, i, o, own0);
        }
        led[L.leader[i]]++;
        MR_CHECK(L.leader[i] == gv_la_tile_owner(&L, i, i), "P=%d: leader", P);
        MR_CHECK(L.seg_of[L.leader[i]] == i, "P=%d: seg_of", P);
        MR_CHECK(gv_la_seg_lo(&L, i) <= gv_la_seg_lo(&L, i + 1), "P=%d", P);
    }
    MR_CHECK(gv_la_seg_lo(&L, 0) == 0 && gv_la_seg_lo(&L, P) == n, "P=%d", P);
    for (int64_t v = 0; v < n; v++) {
        int k = gv_la_seg_of_vertex(&L, v);

        MR_CHECK((v >= gv_la_seg_lo(&L, k)) && (v < gv_la_seg_lo(&L, k + 1)),
                 "P=%d: vertex %lld in segment %d", P, (long long)v, k);
    }
    for (int r = 0; r < P; r++) {
        MR_CHECK(tiles[r] == P, "P=%d: rank %d owns %d tiles", P, r, tiles[r]);
        MR_CHECK(led[r] == 1, "P=%d: rank %d leads %d segments", P, r,
                 led[r]);
        MR_CHECK(L.rank_of[L.vid_of[r]] == r, "P=%d: vid map", P);
    }
    gv_la_layout_free(&L);
    free(tiles);
    free(led);
}

static void layouts(void)
{
    int node_of[64];

    for (int P = 1; P <= 64; P++) {
        check_layout(P, NULL, 0);
        /* k pretend nodes of contiguous rank blocks, as GV_TEST_NODES
         * makes them: row groups stay inside whenever pr divides every
         * node's size */
        for (int k = 2; k <= 4; k++) {
            int ok = 1, pr = 1;

            for (int d = 1; d * d <= P; d++)
                if (P % d == 0)
                    pr = d;
            for (int r = 0; r < P; r++)
                node_of[r] = r * k / P;
            for (int nd = 0; nd < k; nd++) {
                int c = 0;

                for (int r = 0; r < P; r++)
                    c += node_of[r] == nd;
                ok &= (c % pr) == 0;
            }
            check_layout(P, node_of, ok);
            /* nodes interleaved (rank r on node r mod k): the layout must
             * still group each row group within a node when it can */
            for (int r = 0; r < P; r++)
                node_of[r] = r % k;
            check_layout(P, node_of, ok);
        }
    }
    {
        gv_la_layout_t L;

        MR_CHECK(gv_la_layout_init(0, NULL, 10, &L) == GV_ERR_INVALID,
                 "0 ranks accepted");
        MR_CHECK(gv_la_layout_init(2, NULL, -1, &L) == GV_ERR_INVALID,
                 "negative n accepted");
    }
}

/* ---- gathering and comparing ----------------------------------------------- */

typedef struct {
    chk_edges_t e;
    uint64_t   *src, *dst;
    float      *w;
} full_t;

static void sum_i64(int64_t *a, int64_t n)
{
    for (int64_t k = 0; k < n; k += 1 << 17) {
        size_t c = (size_t)((n - k < (1 << 17)) ? n - k : (1 << 17));

        MR_OK(gv_allreduce(a + k, c, GV_INT64, GV_SUM));
    }
}

static void gather_list(gv_edgelist_t *el, full_t *f)
{
    int64_t  m = el->total, n = el->nverts;
    int64_t *a = calloc((size_t)(m > 0 ? m : 1), 8);
    int64_t *b = calloc((size_t)(m > 0 ? m : 1), 8);
    int64_t *w = calloc((size_t)(m > 0 ? m : 1), 8);
    int64_t  weighted = (el->w != NULL);

    MR_CHECK(a && b && w, "out of memory");
    for (int64_t k = 0; k < el->n; k++) {
        float x = el->w ? el->w[k] : 1.0f;

        a[el->first + k] = el->src[k];
        b[el->first + k] = el->dst[k];
        memcpy(&w[el->first + k], &x, 4);
    }
    sum_i64(a, m);
    sum_i64(b, m);
    sum_i64(w, m);
    f->src = (uint64_t *)a;
    f->dst = (uint64_t *)b;
    f->w   = malloc((size_t)(m > 0 ? m : 1) * sizeof(float));
    MR_CHECK(f->w != NULL, "out of memory");
    for (int64_t k = 0; k < m; k++)
        memcpy(&f->w[k], &w[k], 4);
    free(w);
    MR_OK(gv_allreduce(&weighted, 1, GV_INT64, GV_MAX));
    f->e = (chk_edges_t){.n = n, .m = m, .src = f->src, .dst = f->dst,
                         .w = weighted ? f->w : NULL};
}

static void full_free(full_t *f)
{
    free(f->src);
    free(f->dst);
    free(f->w);
}

/* A segment's values as one array of every vertex, on every rank. */
static int64_t *seg_i64(const gv_la_matrix_t *A, const int64_t *x)
{
    int64_t *d = calloc((size_t)(A->n + 1), 8);

    MR_CHECK(d != NULL, "out of memory");
    memcpy(d + A->lo, x, (size_t)A->nloc * 8);
    sum_i64(d, A->n);
    return d;
}

static double *seg_f64(const gv_la_matrix_t *A, const double *x)
{
    int64_t *d = calloc((size_t)(A->n + 1), 8);

    MR_CHECK(d != NULL, "out of memory");
    memcpy(d + A->lo, x, (size_t)A->nloc * 8); /* bits: one writer each */
    sum_i64(d, A->n);
    return (double *)d;
}

static int64_t *graph_i64(const gv_graph_t *g, const int64_t *x)
{
    int64_t *d = calloc((size_t)(g->nverts + 1), 8);

    MR_CHECK(d != NULL, "out of memory");
    for (int64_t i = 0; i < g->nlocal; i++)
        d[gv_graph_global(g, i)] = x[i];
    sum_i64(d, g->nverts);
    return d;
}

static double *graph_f64(const gv_graph_t *g, const double *x)
{
    int64_t *d = calloc((size_t)(g->nverts + 1), 8);

    MR_CHECK(d != NULL, "out of memory");
    for (int64_t i = 0; i < g->nlocal; i++)
        memcpy(&d[gv_graph_global(g, i)], &x[i], 8);
    sum_i64(d, g->nverts);
    return (double *)d;
}

#define CHK(_call, _what)                                                    \
    MR_CHECK((_call) == 0, "%s on %s: %s", _what, name, msg)

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t entry_hash(int64_t r, int64_t c, double w)
{
    uint64_t wb;

    memcpy(&wb, &w, 8);
    return mix((uint64_t)r * 0x9E3779B97F4A7C15ull ^ mix((uint64_t)c + 1) ^
               mix(wb + 7));
}

/* Every nonzero in exactly one tile: the tiles' entries, inside their
 * segments, DCSC and DCSR the same, equal as a multiset (count and an
 * order-free hash) to the checker's graph, transposed; the degrees. */
static void check_tiles(const char *name, const gv_la_matrix_t *A,
                        const chk_csr_t *ref)
{
    const gv_la_layout_t *L = &A->L;
    uint64_t h[2] = {0, 0}, href = 0;
    int64_t  cnt = 0, *odeg, *ideg;

    MR_CHECK(A->ntiles == L->nranks, "%s: %d tiles on a rank of %d", name,
             A->ntiles, L->nranks);
    for (int k = 0; k < A->ntiles; k++) {
        const gv_la_tile_t *t  = &A->tiles[k];
        int64_t             ri = gv_la_seg_lo(L, t->i), cj = gv_la_seg_lo(L, t->j);
        int64_t             hr = gv_la_seg_lo(L, t->i + 1) - ri;
        int64_t             wc = gv_la_seg_lo(L, t->j + 1) - cj;

        MR_CHECK(gv_la_tile_owner(L, t->i, t->j) == gv_rank(), "%s: tile "
                 "(%d,%d) on the wrong rank", name, t->i, t->j);
        MR_CHECK(t->cp[t->nzc] == t->nnz && t->rp[t->nzr] == t->nnz,
                 "%s: tile (%d,%d) pointers", name, t->i, t->j);
        for (int64_t q = 0; q < t->nzc; q++) {
            MR_CHECK(t->jc[q] < wc && (q == 0 || t->jc[q] > t->jc[q - 1]) &&
                         t->cp[q + 1] > t->cp[q],
                     "%s: tile (%d,%d): column list", name, t->i, t->j);
            for (int64_t p = t->cp[q]; p < t->cp[q + 1]; p++) {
                MR_CHECK(t->ir[p] < hr, "%s: row out of the segment", name);
                h[0] += entry_hash(ri + t->ir[p], cj + t->jc[q],
                                   t->cw ? t->cw[p] : 1.0);
            }
        }
        for (int64_t q = 0; q < t->nzr; q++) {
            MR_CHECK(t->ir2[q] < hr && (q == 0 || t->ir2[q] > t->ir2[q - 1]) &&
                         t->rp[q + 1] > t->rp[q],
                     "%s: tile (%d,%d): row list", name, t->i, t->j);
            for (int64_t p = t->rp[q]; p < t->rp[q + 1]; p++) {
                MR_CHECK(t->jc2[p] < wc && (p == t->rp[q] ||
                                            t->jc2[p] > t->jc2[p - 1]),
                         "%s: columns of a row", name);
                h[1] += entry_hash(ri + t->ir2[q], cj + t->jc2[p],
                                   t->rw ? t->rw[p] : 1.0);
            }
        }
        cnt += t->nnz;
    }
    MR_CHECK(h[0] == h[1], "%s: DCSC and DCSR differ", name);
    MR_OK(gv_allreduce(&cnt, 1, GV_INT64, GV_SUM));
    MR_OK(gv_allreduce(h, 1, GV_UINT64, GV_SUM));
    MR_CHECK(cnt == ref->nnz && A->nnz == ref->nnz, "%s: %lld nonzeros in "
             "the tiles, the checker's graph has %lld", name, (long long)cnt,
             (long long)ref->nnz);
    for (int64_t u = 0; u < ref->n; u++)
        for (int64_t p = ref->ptr[u]; p < ref->ptr[u + 1]; p++)
            href += entry_hash(ref->adj[p], u,
                               (A->weighted && ref->w) ? (double)(float)ref->w[p]
                                                       : 1.0);
    MR_CHECK(h[0] == href, "%s: the tiles' nonzeros are not the graph's",
             name);
    /* degrees of the led segment */
    odeg = calloc((size_t)(A->n + 1), 8);
    ideg = calloc((size_t)(A->n + 1), 8);
    MR_CHECK(odeg && ideg, "out of memory");
    for (int64_t u = 0; u < ref->n; u++)
        for (int64_t p = ref->ptr[u]; p < ref->ptr[u + 1]; p++) {
            odeg[u]++;
            ideg[ref->adj[p]]++;
        }
    for (int64_t v = 0; v < A->nloc; v++)
        MR_CHECK(A->out_deg[v] == odeg[A->lo + v] &&
                     A->in_deg[v] == ideg[A->lo + v],
                 "%s: degrees of vertex %lld", name, (long long)(A->lo + v));
    free(odeg);
    free(ideg);
    /* the row team: within the node team when the nodes allow */
    {
        int64_t ok = 1;
        int     pr = A->L.pr, me = gv_node_of(gv_rank());

        for (int nd = 0; nd < gv_nnodes(); nd++) {
            int c = 0;

            for (int r = 0; r < gv_nranks(); r++)
                c += gv_node_of(r) == nd;
            ok &= (c % pr) == 0;
        }
        for (int k = 0; ok && (k < gv_team_size(A->row_team)); k++)
            MR_CHECK(gv_node_of(gv_team_world_rank(A->row_team, k)) == me,
                     "%s: the row team leaves node %d", name, me);
        MR_CHECK(gv_team_size(A->row_team) == pr &&
                     gv_team_size(A->col_team) == A->L.pc,
                 "%s: team sizes", name);
    }
}

/* ---- one graph --------------------------------------------------------------- */

static void check_graph(const char *name, gv_edgelist_t *el, int64_t root)
{
    gv_la_matrix_t  Ad, Aw, Au;
    gv_graph_t      gd, gu;
    gv_graph_opts_t od = {.flags = GV_GRAPH_DIRECTED_SIMPLE};
    gv_graph_opts_t ou = {.flags = GV_GRAPH_UNDIRECTED_SIMPLE |
                                   GV_GRAPH_UNWEIGHTED};
    chk_csr_t       cd, cw, cu;
    full_t          f;
    int64_t         r, r_ref, r2;
    int             iters = 0;
    size_t          nl;
    double         *x, *xv;
    int64_t        *a, *b, *av, *bv;
    gv_la_stats_t   st;

    gather_list(el, &f);
    CHK(chk_csr_directed(&f.e, 0, &cd, msg, sizeof(msg)), "reference");
    CHK(chk_csr_directed(&f.e, 1, &cw, msg, sizeof(msg)), "reference");
    CHK(chk_csr_undirected(&f.e, &cu, msg, sizeof(msg)), "reference");
    MR_OK(gv_la_build(el, GV_GRAPH_DIRECTED_SIMPLE | GV_GRAPH_UNWEIGHTED,
                      &Ad));
    MR_OK(gv_la_build(el, GV_GRAPH_DIRECTED_SIMPLE, &Aw));
    MR_OK(gv_la_build(el, GV_GRAPH_UNDIRECTED_SIMPLE | GV_GRAPH_UNWEIGHTED,
                      &Au));
    check_tiles(name, &Ad, &cd);
    check_tiles(name, &Aw, &cw);
    check_tiles(name, &Au, &cu);
    MR_OK(gv_graph_build(el, &od, &gd));
    MR_OK(gv_graph_build(el, &ou, &gu));
    nl = (size_t)(Ad.nloc + gd.nlocal + gu.nlocal + 1);
    x  = malloc(nl * 8);
    xv = malloc(nl * 8);
    a  = malloc(nl * 8);
    b  = malloc(nl * 8);
    av = malloc(nl * 8);
    bv = malloc(nl * 8);
    MR_CHECK(x && xv && a && b && av && bv, "out of memory");

    r_ref = chk_root_maxdeg(&f.e);
    if (el->nverts > 0) {
        MR_OK(gv_la_root_maxdeg(el, &r));
        MR_OK(gv_la_matrix_root_maxdeg(&Au, &r2));
        MR_CHECK(r == r_ref && r2 == r_ref, "%s: maxdeg root %lld and %lld, "
                 "the checker's %lld", name, (long long)r, (long long)r2,
                 (long long)r_ref);
    }
    MR_CHECK(gv_la_matrix_root_maxdeg(&Ad, &r2) == GV_ERR_INVALID,
             "%s: maxdeg root of a directed matrix accepted", name);
    if (root < 0)
        root = r_ref;

    /* PageRank: 1, 7, 20 sweeps; the checker, the vertex engine */
    for (int k = 0; k < 3; k++) {
        int     n = (k == 0) ? 1 : (k == 1) ? 7 : 20;
        double *d, *dv;

        MR_OK(gv_la_pagerank(&Ad, n, 0, x, &iters, NULL, &st));
        MR_CHECK((iters == n) || (Ad.n == 0), "%s: pagerank did %d sweeps "
                 "of %d", name, iters, n);
        MR_CHECK(st.iters == iters, "%s: stats", name);
        gv_la_stats_free(&st);
        d = seg_f64(&Ad, x);
        CHK(chk_check_pagerank(&f.e, n, d, msg, sizeof(msg)), "pagerank");
        MR_OK(gv_vx_pagerank(&gd, n, 0, xv, NULL, NULL, NULL));
        dv = graph_f64(&gd, xv);
        for (int64_t v = 0; v < Ad.n; v++)
            MR_CHECK(fabs(d[v] - dv[v]) <= 1e-9 * fabs(dv[v]), "%s: pagerank "
                     "vertex %lld: linalg %.17g, vertex %.17g", name,
                     (long long)v, d[v], dv[v]);
        free(d);
        free(dv);
    }
    if (Ad.n > 0) { /* with a tolerance: the sweeps the checker does */
        int     ref = 0;
        double *d, *rr = malloc((size_t)(Ad.n + 1) * sizeof(double));

        MR_CHECK(rr != NULL, "out of memory");
        MR_OK(gv_la_pagerank(&Ad, 100, 1e-3, x, &iters, NULL, NULL));
        CHK(chk_pagerank(&f.e, 100, 1e-3, rr, &ref, msg, sizeof(msg)),
            "reference pagerank");
        MR_CHECK(iters == ref, "%s: pagerank tol 1e-3 did %d sweeps, the "
                 "checker %d", name, iters, ref);
        d = seg_f64(&Ad, x);
        for (int64_t v = 0; v < Ad.n; v++)
            MR_CHECK(fabs(d[v] - rr[v]) <= 1e-9 * fabs(rr[v]), "%s: "
                     "pagerank tol vertex %lld", name, (long long)v);
        free(d);
        free(rr);
    }
    if (Aw.n > 0) { /* SSSP: the checker; the vertex engine's distances */
        double *d, *dv;

        MR_OK(gv_la_sssp(&Aw, root, x, NULL, NULL));
        d = seg_f64(&Aw, x);
        CHK(chk_check_sssp(&f.e, root, d, msg, sizeof(msg)), "sssp");
        MR_OK(gv_vx_sssp(&gd, root, -1.0, xv, NULL, NULL));
        dv = graph_f64(&gd, xv);
        for (int64_t v = 0; v < Aw.n; v++)
            MR_CHECK((d[v] == dv[v]) || (fabs(d[v] - dv[v]) <=
                                         1e-12 * fabs(dv[v])),
                     "%s: sssp vertex %lld: linalg %.17g, vertex %.17g", name,
                     (long long)v, d[v], dv[v]);
        free(d);
        free(dv);
        MR_CHECK(gv_la_sssp(&Aw, Aw.n, x, NULL, NULL) == GV_ERR_INVALID,
                 "%s: sssp from a root out of range", name);
    }
    if (Au.n > 0) { /* BFS: levels and parents exactly the vertex engine's */
        int64_t *lv, *pa, *lvv, *pav;

        MR_OK(gv_la_bfs(&Au, root, a, b, NULL, NULL));
        pa = seg_i64(&Au, a);
        lv = seg_i64(&Au, b);
        CHK(chk_check_bfs(&f.e, root, lv, pa, msg, sizeof(msg)), "bfs");
        MR_OK(gv_vx_bfs(&gu, root, av, bv, NULL, NULL));
        pav = graph_i64(&gu, av);
        lvv = graph_i64(&gu, bv);
        for (int64_t v = 0; v < Au.n; v++)
            MR_CHECK(pa[v] == pav[v] && lv[v] == lvv[v], "%s: bfs vertex "
                     "%lld: linalg parent %lld level %lld, vertex %lld %lld",
                     name, (long long)v, (long long)pa[v], (long long)lv[v],
                     (long long)pav[v], (long long)lvv[v]);
        MR_OK(gv_la_bfs(&Au, root, NULL, b, NULL, NULL)); /* levels only */
        free(lv);
        lv = seg_i64(&Au, b);
        for (int64_t v = 0; v < Au.n; v++)
            MR_CHECK(lv[v] == lvv[v], "%s: bfs levels alone", name);
        free(lv);
        free(pa);
        free(lvv);
        free(pav);
    }
    { /* CC: labels exactly the checker's and the vertex engine's */
        int64_t *lab, *labv;

        MR_OK(gv_la_cc(&Au, a, NULL, NULL));
        lab = seg_i64(&Au, a);
        CHK(chk_check_cc(&f.e, lab, msg, sizeof(msg)), "cc");
        MR_OK(gv_vx_cc(&gu, av, NULL, NULL));
        labv = graph_i64(&gu, av);
        MR_CHECK(memcmp(lab, labv, (size_t)Au.n * 8) == 0, "%s: cc labels "
                 "differ between the engines", name);
        free(lab);
        free(labv);
    }
    if (gv_rank() == 0)
        printf("fw_linalg: %s: %lld vertices, %lld edges, root %lld, tiles "
               "%dx%d: ok\n", name, (long long)el->nverts,
               (long long)el->total, (long long)root, Ad.L.pr, Ad.L.pc);
    free(x);
    free(xv);
    free(a);
    free(b);
    free(av);
    free(bv);
    chk_csr_free(&cd);
    chk_csr_free(&cw);
    chk_csr_free(&cu);
    full_free(&f);
    gv_la_free(&Ad);
    gv_la_free(&Aw);
    gv_la_free(&Au);
    gv_graph_destroy(&gd);
    gv_graph_destroy(&gu);
}

/* ---- hand-made graphs (rank 0 holds every edge) ------------------------- */

static void push(gv_edgelist_t *el, int64_t s, int64_t d, float w)
{
    if (gv_rank() == 0)
        MR_OK(gv_edgelist_push(el, s, d, w));
}

static void hand_made(void *arg)
{
    gv_edgelist_t el;

    (void)arg;
    /* Two components, isolated vertices, a self-loop, duplicate pairs
     * with different weights, a vertex with only in-edges, a zero weight;
     * the root 12 has no edges. */
    gv_edgelist_init(&el, 20, 1);
    push(&el, 0, 1, 0.5f);
    push(&el, 0, 1, 0.25f);
    push(&el, 1, 2, 1.0f);
    push(&el, 2, 3, 0.125f);
    push(&el, 3, 4, 2.0f);
    push(&el, 4, 5, 0.75f);
    push(&el, 5, 0, 0.5f);
    push(&el, 2, 0, 3.0f);
    push(&el, 7, 8, 1.0f);
    push(&el, 8, 9, 1.0f);
    push(&el, 9, 7, 1.0f);
    push(&el, 9, 7, 0.5f);
    push(&el, 15, 15, 1.0f);
    push(&el, 16, 5, 0.0f);
    push(&el, 19, 0, 1.5f);
    MR_OK(gv_edgelist_sync(&el));
    check_graph("hand-made (two components)", &el, -1);
    check_graph("hand-made (root with no edges)", &el, 12);
    check_graph("hand-made (root 7)", &el, 7);
    gv_edgelist_free(&el);
    /* No edges; one vertex; fewer vertices than ranks. */
    gv_edgelist_init(&el, 9, 1);
    MR_OK(gv_edgelist_sync(&el));
    check_graph("no edges", &el, 3);
    gv_edgelist_free(&el);
    gv_edgelist_init(&el, 1, 1);
    MR_OK(gv_edgelist_sync(&el));
    check_graph("one vertex", &el, 0);
    gv_edgelist_free(&el);
    gv_edgelist_init(&el, 3, 1);
    push(&el, 0, 2, 1.0f);
    push(&el, 2, 1, 2.0f);
    MR_OK(gv_edgelist_sync(&el));
    check_graph("three vertices", &el, 0);
    gv_edgelist_free(&el);
    /* Every edge inside the last segment (one tile holds them all), and a
     * long path through every segment (many iterations, sparse inputs). */
    {
        int64_t n = 200, lo = n - n / (gv_nranks() + 1);

        gv_edgelist_init(&el, n, 1);
        for (int64_t v = lo; v + 1 < n; v++) {
            push(&el, v, v + 1, 0.5f);
            if (v + 3 < n)
                push(&el, v + 3, v, 1.0f);
        }
        MR_OK(gv_edgelist_sync(&el));
        check_graph("edges in one segment", &el, lo);
        gv_edgelist_free(&el);
        gv_edgelist_init(&el, n, 1);
        for (int64_t v = 0; v + 1 < n; v++)
            push(&el, (v * 37) % n, ((v + 1) * 37) % n, 0.25f);
        MR_OK(gv_edgelist_sync(&el));
        check_graph("a path of 200", &el, 0);
        gv_edgelist_free(&el);
    }
    /* A bad flag and a negative weight are refused on every rank. */
    {
        gv_la_matrix_t A;

        gv_edgelist_init(&el, 4, 1);
        push(&el, 0, 1, -1.0f);
        MR_OK(gv_edgelist_sync(&el));
        MR_CHECK(gv_la_build(&el, GV_GRAPH_IN_EDGES, &A) == GV_ERR_INVALID,
                 "a build with GV_GRAPH_IN_EDGES accepted");
        MR_OK(gv_la_build(&el, GV_GRAPH_DIRECTED_SIMPLE, &A));
        MR_CHECK(gv_la_sssp(&A, 0, NULL, NULL, NULL) == GV_ERR_INVALID,
                 "sssp with a negative weight accepted");
        MR_CHECK(gv_la_pagerank(&A, 0, 0, NULL, NULL, NULL, NULL) ==
                     GV_ERR_INVALID, "pagerank without sweeps or tolerance");
        gv_la_free(&A);
        gv_edgelist_free(&el);
    }
}

static void kron(void *arg)
{
    gv_kron_opts_t ko = {.scale = *(int *)arg, .edgefactor = 16, .seed = 7,
                         .weighted = 1};
    gv_edgelist_t  el;
    char           name[32];

    MR_OK(gv_kron_generate(&ko, &el));
    snprintf(name, sizeof(name), "kron %d", ko.scale);
    check_graph(name, &el, -1);
    gv_edgelist_free(&el);
}

int main(int argc, char **argv)
{
    mr_init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "--scales") == 0) && (i + 1 < argc)) {
            char *s = argv[++i], *end;

            nscales = 0;
            while ((*s != '\0') && (nscales < 8)) {
                long v = strtol(s, &end, 10);

                if ((end == s) || (v < 1) || (v > 20))
                    gv_abort(2, "--scales '%s': scales 1..20", argv[i]);
                scales[nscales++] = (int)v;
                s = end;
                while (*s == ' ')
                    s++;
            }
        } else {
            gv_abort(2, "usage: fw_linalg [--scales \"10 12\"]");
        }
    }
    if (gv_rank() == 0)
        layouts();
    MR_OK(gv_run_all(hand_made, NULL, 0));
    for (int k = 0; k < nscales; k++)
        MR_OK(gv_run_all(kron, &scales[k], sizeof(int)));
    if (gv_rank() == 0)
        printf("fw_linalg: %d ranks, %d nodes, %s: ok\n", gv_nranks(),
               gv_nnodes(), gv_transport_name());
    gv_barrier();
    gv_finalize();
    return 0;
}
