/* The vertex engine's applications against the sequential checkers:
 * PageRank (fixed sweeps, 1e-9 relative), BFS levels and parents, CC
 * labels and SSSP distances (exact; SSSP within float rounding), the maxdeg
 * root, and the Graph500 BFS with its validation (which must also reject
 * corrupted parent arrays), on Kronecker graphs and hand-made edge cases.
 * Run: gvrun -n P fw_vertex [--scales "10 12"] (also with GV_AMO=native).
 * SPDX-License-Identifier: BSD-3-Clause */
#include <grapevine.h>
#include <grapevine/fw/graph.h>
#include <grapevine/fw/vertex.h>

#include "check/check.h"
#include "../multirank/mr.h"

#include <math.h>

static int  scales[8] = {10, 12};
static int  nscales   = 2;
static char msg[512];

/* ---- helpers --------------------------------------------------------------- */

/* The whole list on every rank (each rank's share placed at its first
 * edge and summed), as the checkers want it. */
typedef struct {
    chk_edges_t e;
    uint64_t   *src, *dst;
    float      *w;
} full_t;

static void gather_list(gv_edgelist_t *el, full_t *f)
{
    int64_t  m = el->total, n = el->nverts;
    int64_t *a = calloc((size_t)(m > 0 ? m : 1), 8);
    int64_t *b = calloc((size_t)(m > 0 ? m : 1), 8);
    double  *w = calloc((size_t)(m > 0 ? m : 1), 8);

    MR_CHECK(a && b && w, "out of memory");
    for (int64_t k = 0; k < el->n; k++) {
        a[el->first + k] = el->src[k];
        b[el->first + k] = el->dst[k];
        w[el->first + k] = el->w ? el->w[k] : 1.0;
    }
    for (int64_t k = 0; k < m; k += 1 << 17) {
        size_t c = (size_t)((m - k < (1 << 17)) ? m - k : (1 << 17));

        MR_OK(gv_allreduce(a + k, c, GV_INT64, GV_SUM));
        MR_OK(gv_allreduce(b + k, c, GV_INT64, GV_SUM));
        MR_OK(gv_allreduce(w + k, c, GV_DOUBLE, GV_SUM));
    }
    f->src = (uint64_t *)a;
    f->dst = (uint64_t *)b;
    f->w   = malloc((size_t)(m > 0 ? m : 1) * sizeof(float));
    MR_CHECK(f->w != NULL, "out of memory");
    for (int64_t k = 0; k < m; k++)
        f->w[k] = (float)w[k];
    free(w);
    {
        int64_t weighted = (el->w != NULL);

        /* A rank with no edge of a weighted list may have no array. */
        MR_OK(gv_allreduce(&weighted, 1, GV_INT64, GV_MAX));
        f->e = (chk_edges_t){.n = n, .m = m, .src = f->src, .dst = f->dst,
                             .w = weighted ? f->w : NULL};
    }
}

static void full_free(full_t *f)
{
    free(f->src);
    free(f->dst);
    free(f->w);
}

static int64_t *dense_i64(const gv_graph_t *g, const int64_t *local)
{
    int64_t *d = calloc((size_t)(g->nverts > 0 ? g->nverts : 1), 8);

    MR_CHECK(d != NULL, "out of memory");
    for (int64_t i = 0; i < g->nlocal; i++)
        d[gv_graph_global(g, i)] = local[i];
    for (int64_t k = 0; k < g->nverts; k += 1 << 17) {
        size_t c = (size_t)((g->nverts - k < (1 << 17)) ? g->nverts - k
                                                        : (1 << 17));

        MR_OK(gv_allreduce(d + k, c, GV_INT64, GV_SUM));
    }
    return d;
}

static double *dense_f64(const gv_graph_t *g, const double *local)
{
    double *d = calloc((size_t)(g->nverts > 0 ? g->nverts : 1), 8);

    MR_CHECK(d != NULL, "out of memory");
    for (int64_t i = 0; i < g->nlocal; i++)
        d[gv_graph_global(g, i)] = isinf(local[i]) ? 0 : local[i];
    for (int64_t k = 0; k < g->nverts; k += 1 << 17) {
        size_t c = (size_t)((g->nverts - k < (1 << 17)) ? g->nverts - k
                                                        : (1 << 17));

        MR_OK(gv_allreduce(d + k, c, GV_DOUBLE, GV_SUM));
    }
    /* Unreached vertices: +inf, marked apart (a sum of infinities is
     * fine, but 0 * inf is not). */
    {
        int64_t *inf = calloc((size_t)(g->nverts > 0 ? g->nverts : 1), 8);

        MR_CHECK(inf != NULL, "out of memory");
        for (int64_t i = 0; i < g->nlocal; i++)
            inf[gv_graph_global(g, i)] = isinf(local[i]);
        for (int64_t k = 0; k < g->nverts; k += 1 << 17) {
            size_t c = (size_t)((g->nverts - k < (1 << 17)) ? g->nverts - k
                                                            : (1 << 17));

            MR_OK(gv_allreduce(inf + k, c, GV_INT64, GV_SUM));
        }
        for (int64_t v = 0; v < g->nverts; v++)
            if (inf[v])
                d[v] = INFINITY;
        free(inf);
    }
    return d;
}

/* Every rank checks (the arrays are the same everywhere); a failure
 * aborts naming the rank. */
#define CHK(_call, _what)                                                    \
    MR_CHECK((_call) == 0, "%s on %s: %s", _what, name, msg)

/* ---- the engine's own API: gathers in both directions, int64 sums (native
 * atomic adds) and a custom operator (always by messages) -------------- */

static int one(const gv_graph_t *g, int64_t i, const void *state,
               gv_vx_word_t *v, void *arg)
{
    (void)state;
    (void)arg;
    (void)g;
    (void)i;
    v->i = 1;
    return 1;
}

static int my_id(const gv_graph_t *g, int64_t i, const void *state,
                 gv_vx_word_t *v, void *arg)
{
    (void)state;
    (void)arg;
    v->i = gv_graph_global(g, i);
    return 1;
}

static int keep(const gv_graph_t *g, int64_t i, void *state, gv_vx_word_t acc,
                int has_acc, void *arg)
{
    (void)g;
    (void)i;
    (void)arg;
    *(int64_t *)state = has_acc ? acc.i : -7;
    return 0;
}

static gv_vx_word_t max_sum(gv_vx_word_t a, gv_vx_word_t b)
{
    return (a.i > b.i) ? a : b;
}

static void check_engine(const char *name, const gv_graph_t *g)
{
    static const gv_vx_program_t indeg = {
        .state_size = 8, .gather_dir = GV_VX_IN, .op = GV_VX_SUM_I64,
        .gather = one, .apply = keep};
    static const gv_vx_program_t outdeg = {
        .state_size = 8, .gather_dir = GV_VX_OUT, .op = GV_VX_SUM_I64,
        .gather = one, .apply = keep};
    static const gv_vx_program_t maxin = {
        .state_size = 8, .gather_dir = GV_VX_IN, .op = GV_VX_CUSTOM,
        .sum = max_sum, .identity = {.i = -1}, .gather = my_id,
        .apply = keep};
    static const gv_vx_program_t bad = {.state_size = 8, .gather_dir = GV_VX_IN,
                                        .op = GV_VX_SUM_I64, .apply = keep};
    int64_t      *s = malloc((size_t)(g->nlocal + 1) * 8);
    gv_vx_stats_t st;

    MR_CHECK(s != NULL, "out of memory");
    MR_OK(gv_vx_run(g, &indeg, s, NULL, &st));
    MR_CHECK((st.steps == 1) || (g->nverts == 0), "%s: in-degree run took %d "
             "supersteps", name, st.steps);
    MR_CHECK(st.native == gv_dsm_amo_native(), "%s: native %d, GV_AMO says "
             "%d", name, st.native, gv_dsm_amo_native());
    gv_vx_stats_free(&st);
    for (int64_t i = 0; i < g->nlocal; i++)
        MR_CHECK(s[i] == (g->in_deg[i] ? g->in_deg[i] : -7), "%s: vertex "
                 "%lld gathered in-degree %lld, the graph says %lld", name,
                 (long long)gv_graph_global(g, i), (long long)s[i],
                 (long long)g->in_deg[i]);
    MR_OK(gv_vx_run(g, &outdeg, s, NULL, NULL));
    for (int64_t i = 0; i < g->nlocal; i++)
        MR_CHECK(s[i] == (g->out_deg[i] ? g->out_deg[i] : -7), "%s: vertex "
                 "%lld gathered out-degree %lld, the graph says %lld", name,
                 (long long)gv_graph_global(g, i), (long long)s[i],
                 (long long)g->out_deg[i]);
    MR_OK(gv_vx_run(g, &maxin, s, NULL, NULL));
    for (int64_t i = 0; i < g->nlocal; i++) {
        int64_t n = g->in_off[i + 1] - g->in_off[i];
        int64_t want = n ? g->in_src[g->in_off[i + 1] - 1] : -7;

        MR_CHECK(s[i] == want, "%s: vertex %lld: largest in-neighbour %lld, "
                 "expected %lld", name, (long long)gv_graph_global(g, i),
                 (long long)s[i], (long long)want);
    }
    /* A program without its gather() is refused on every rank. */
    MR_CHECK(gv_vx_run(g, &bad, s, NULL, NULL) == GV_ERR_INVALID,
             "%s: a program without gather() was accepted", name);
    free(s);
}

/* ---- one graph --------------------------------------------------------------- */

static void check_graph(const char *name, gv_edgelist_t *el, int64_t root)
{
    gv_graph_t      gd, gu;
    gv_graph_opts_t od = {.flags = GV_GRAPH_DIRECTED_SIMPLE | GV_GRAPH_IN_EDGES};
    gv_graph_opts_t ou = {.flags = GV_GRAPH_UNDIRECTED_SIMPLE |
                                   GV_GRAPH_UNWEIGHTED};
    full_t          f;
    size_t          nl;
    double         *x;
    int64_t        *a, *b, r, r_ref, edges = 0;
    int             iters = 0;
    gv_vx_stats_t   st;

    MR_OK(gv_graph_build(el, &od, &gd));
    MR_OK(gv_graph_build(el, &ou, &gu));
    gather_list(el, &f);
    nl = (size_t)((gd.nlocal > gu.nlocal ? gd.nlocal : gu.nlocal) + 1);
    x  = malloc(nl * sizeof(double));
    a  = malloc(nl * sizeof(int64_t));
    b  = malloc(nl * sizeof(int64_t));
    MR_CHECK(x && a && b, "out of memory");

    /* The default root, on both kinds of graph. */
    r_ref = chk_root_maxdeg(&f.e);
    if (gd.nverts > 0) {
        MR_OK(gv_vx_root_maxdeg(&gu, &r));
        MR_CHECK(r == r_ref, "%s: maxdeg root %lld, the checker's %lld", name,
                 (long long)r, (long long)r_ref);
        MR_OK(gv_vx_root_maxdeg(&gd, &r));
        MR_CHECK(r == r_ref, "%s: maxdeg root (directed) %lld, the "
                 "checker's %lld", name, (long long)r, (long long)r_ref);
    }
    if (root < 0)
        root = r_ref;
    check_engine(name, &gd);

    /* PageRank: 1, 7 and 20 sweeps, with and without attached tables. */
    for (int k = 0; k < 3; k++) {
        int     n = (k == 0) ? 1 : (k == 1) ? 7 : 20;
        double *d;

        if (k == 1)
            MR_OK(gv_vx_attach(&gd));
        MR_OK(gv_vx_pagerank(&gd, n, 0, x, &iters, NULL, &st));
        MR_CHECK((iters == n) || (gd.nverts == 0), "%s: pagerank did %d "
                 "sweeps of %d", name, iters, n);
        gv_vx_stats_free(&st);
        d = dense_f64(&gd, x);
        CHK(chk_check_pagerank(&f.e, n, d, msg, sizeof(msg)), "pagerank");
        free(d);
    }
    /* With a tolerance: the sweeps the checker does. */
    if (gd.nverts > 0) {
        int     ref = 0;
        double *d, *rr = malloc((size_t)(gd.nverts + 1) * sizeof(double));

        MR_CHECK(rr != NULL, "out of memory");
        MR_OK(gv_vx_pagerank(&gd, 100, 1e-3, x, &iters, NULL, NULL));
        CHK(chk_pagerank(&f.e, 100, 1e-3, rr, &ref, msg, sizeof(msg)),
            "reference pagerank");
        MR_CHECK(iters == ref, "%s: pagerank --tol 1e-3 did %d sweeps, the "
                 "checker %d", name, iters, ref);
        d = dense_f64(&gd, x);
        for (int64_t v = 0; v < gd.nverts; v++)
            MR_CHECK(fabs(d[v] - rr[v]) <= 1e-9 * fabs(rr[v]), "%s: "
                     "pagerank --tol vertex %lld: %.17g, the checker %.17g",
                     name, (long long)v, d[v], rr[v]);
        free(d);
        free(rr);
    }
    gv_vx_detach(&gd);

    /* SSSP. */
    if (gd.nverts > 0) {
        double *d;

        /* Delta-stepping (auto and narrow buckets) and Bellman-Ford. */
        static const double deltas[] = {0, 0.05, -1};

        for (int k = 0; k < 3; k++) {
            MR_OK(gv_vx_sssp(&gd, root, deltas[k], x, NULL, NULL));
            d = dense_f64(&gd, x);
            CHK(chk_check_sssp(&f.e, root, d, msg, sizeof(msg)), "sssp");
            free(d);
        }
    }

    /* BFS and CC through the engine. */
    MR_OK(gv_vx_attach(&gu));
    if (gu.nverts > 0) {
        int64_t *lv, *pa;

        MR_OK(gv_vx_bfs(&gu, root, a, b, NULL, NULL));
        pa = dense_i64(&gu, a);
        lv = dense_i64(&gu, b);
        CHK(chk_check_bfs(&f.e, root, lv, pa, msg, sizeof(msg)), "bfs");
        free(pa);
        free(lv);
    }
    {
        int64_t *lab;

        MR_OK(gv_vx_cc(&gu, a, NULL, NULL));
        lab = dense_i64(&gu, a);
        CHK(chk_check_cc(&f.e, lab, msg, sizeof(msg)), "cc");
        free(lab);
        MR_OK(gv_vx_cc_native(&gu, a, NULL, NULL));
        lab = dense_i64(&gu, a);
        CHK(chk_check_cc(&f.e, lab, msg, sizeof(msg)), "cc (native)");
        free(lab);
    }

    /* The Graph500 BFS: valid by both validations, levels as the
     * checker's; then corrupted parent arrays must fail. */
    if (gu.nverts > 0) {
        int64_t *pa, depth = -1, reached = 0, victim = -1;

        MR_OK(gv_bfs500(&gu, root, a, NULL, NULL));
        MR_OK(gv_bfs500_validate(&gu, root, a, &edges, &depth));
        pa = dense_i64(&gu, a);
        CHK(chk_graph500_validate(&f.e, root, pa, &reached, msg, sizeof(msg)),
            "bfs500 (checker's validation)");
        CHK(chk_check_bfs(&f.e, root, NULL, pa, msg, sizeof(msg)),
            "bfs500 parents");
        /* Corruptions: a reached vertex other than the root, on its
         * owner: (a) parent set to itself (a cycle), (b) parent set to a
         * vertex it has no edge to, (c) unreached while its neighbours
         * are. */
        for (int64_t v = 0; v < gu.nverts; v++)
            if ((v != root) && (pa[v] >= 0)) {
                victim = v;
                break;
            }
        for (int c = 0; (victim >= 0) && (c < 3); c++) {
            int         owner = gv_graph_owner(&gu, victim);
            int64_t     li    = gv_graph_local(&gu, victim), keep = 0;
            gv_status_t s;

            if (owner == gv_rank()) {
                keep = a[li];
                a[li] = (c == 0) ? victim : (c == 1) ? -2 : -1;
                if (c == 1) { /* a vertex that is not a neighbour */
                    for (int64_t u = 0; u < gu.nverts; u++) {
                        int adj = (u == victim);

                        for (int64_t e = gu.out_off[li];
                             !adj && (e < gu.out_off[li + 1]); e++)
                            adj = gu.out_dst[e] == u;
                        if (!adj && (pa[u] >= 0)) {
                            a[li] = u;
                            break;
                        }
                    }
                }
            }
            {
                int64_t any = (owner == gv_rank()) ? a[li] : 0;

                MR_OK(gv_allreduce(&any, 1, GV_INT64, GV_SUM));
                if (any == -2)
                    goto restore; /* every vertex is a neighbour */
            }
            s = gv_bfs500_validate(&gu, root, a, NULL, NULL);
            MR_CHECK(s == GV_ERR_INVALID, "%s: the validation accepted a "
                     "corrupted parent array (case %d, vertex %lld)", name,
                     c, (long long)victim);
        restore:
            if (owner == gv_rank())
                a[li] = keep;
        }
        MR_OK(gv_bfs500_validate(&gu, root, a, NULL, NULL));
        free(pa);
        (void)reached;
    }
    gv_vx_detach(&gu);
    if (gv_rank() == 0)
        printf("fw_vertex: %s: %lld vertices, %lld edges, root %lld: ok\n",
               name, (long long)el->nverts, (long long)el->total,
               (long long)root);
    free(x);
    free(a);
    free(b);
    full_free(&f);
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
    (void)arg;
    gv_edgelist_t el;

    /* Two components, isolated vertices, a self-loop, duplicate pairs
     * with different weights, a vertex with only in-edges; the root 12
     * has no edges. */
    gv_edgelist_init(&el, 20, 1);
    push(&el, 0, 1, 0.5f);
    push(&el, 0, 1, 0.25f); /* duplicate, smaller weight */
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
    push(&el, 15, 15, 1.0f); /* self-loop only */
    push(&el, 16, 5, 0.0f);  /* zero weight */
    MR_OK(gv_edgelist_sync(&el));
    check_graph("hand-made (two components)", &el, -1);
    check_graph("hand-made (root with no edges)", &el, 12);
    check_graph("hand-made (root 7)", &el, 7);
    gv_edgelist_free(&el);

    /* No edges at all; one vertex. */
    gv_edgelist_init(&el, 9, 1);
    MR_OK(gv_edgelist_sync(&el));
    check_graph("no edges", &el, 3);
    gv_edgelist_free(&el);
    gv_edgelist_init(&el, 1, 1);
    MR_OK(gv_edgelist_sync(&el));
    check_graph("one vertex", &el, 0);
    gv_edgelist_free(&el);

    /* Every edge among vertices owned by the last rank (hashed placement,
     * learnt from an empty graph of the same size). */
    {
        gv_graph_t g0;
        int64_t    n = 64, own[64], k = 0;

        gv_edgelist_init(&el, n, 1);
        MR_OK(gv_edgelist_sync(&el));
        MR_OK(gv_graph_build(&el, NULL, &g0));
        for (int64_t v = 0; v < n; v++)
            if (gv_graph_owner(&g0, v) == gv_nranks() - 1)
                own[k++] = v;
        gv_graph_destroy(&g0);
        for (int64_t j = 0; j + 1 < k; j++) {
            push(&el, own[j], own[j + 1], 0.5f + (float)(j % 3));
            if (j + 3 < k)
                push(&el, own[j + 3], own[j], 1.0f);
        }
        MR_OK(gv_edgelist_sync(&el));
        check_graph("one rank's vertices", &el, k > 0 ? own[0] : 0);
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
            gv_abort(2, "usage: fw_vertex [--scales \"10 12\"]");
        }
    }
    MR_OK(gv_run_all(hand_made, NULL, 0));
    for (int k = 0; k < nscales; k++)
        MR_OK(gv_run_all(kron, &scales[k], sizeof(int)));
    if (gv_rank() == 0)
        printf("fw_vertex: %d ranks, %s, amo=%s: ok\n", gv_nranks(),
               gv_transport_name(), gv_dsm_amo_native() ? "native" : "am");
    gv_barrier();
    gv_finalize();
    return 0;
}
