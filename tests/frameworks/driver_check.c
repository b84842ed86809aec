/* The sequential reference checkers (check/check.h) on hand-made graphs
 * with known answers, their validators against corrupted results, and the
 * GraphBLAS peer (build/perf/grb_graph) against the checkers.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "../multirank/driver.h"
#include "check/check.h"

#include <endian.h>
#include <math.h>

#define EL(_n, _s, _d, _w) \
    ((chk_edges_t){(_n), (int64_t)(sizeof(_s) / sizeof((_s)[0])), (_s), (_d), (_w)})

static char msg[512];

/* ------------------------------------------------------------ a path */

static uint64_t path_s[] = {0, 1, 2, 3};
static uint64_t path_d[] = {1, 2, 3, 4};
static float    path_w[] = {1, 2, 3, 4};

Test(check, path, .timeout = 30)
{
    chk_edges_t el = EL(5, path_s, path_d, path_w);
    int64_t     level[5], parent[5], label[5], reached, depth;
    double      rank[5], dist[5], sumdist;
    int         done;

    cr_assert_eq(chk_bfs(&el, 0, level, parent, msg, sizeof(msg)), 0, "%s", msg);
    for (int64_t v = 0; v < 5; v++) {
        cr_expect_eq(level[v], v);
        cr_expect_eq(parent[v], (v == 0) ? 0 : v - 1);
    }
    chk_bfs_fields(5, level, &reached, &depth);
    cr_expect_eq(reached, 5);
    cr_expect_eq(depth, 4);
    /* Undirected: from the far end too. */
    cr_assert_eq(chk_bfs(&el, 4, level, parent, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect_eq(level[0], 4);
    cr_expect_eq(parent[0], 1);
    cr_assert_eq(chk_cc(&el, label, msg, sizeof(msg)), 0, "%s", msg);
    for (int64_t v = 0; v < 5; v++)
        cr_expect_eq(label[v], 0);
    /* Two sweeps from 1.0: r0 = 0.15, r1 = 0.15 + 0.85 * 0.15, others 1. */
    cr_assert_eq(chk_pagerank(&el, 2, 0.0, rank, &done, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect_eq(done, 2);
    cr_expect(fabs(rank[0] - 0.15) < 1e-15);
    cr_expect(fabs(rank[1] - 0.2775) < 1e-15);
    cr_expect(fabs(rank[2] - 1.0) < 1e-15 && fabs(rank[4] - 1.0) < 1e-15);
    /* Directed SSSP: 0, 1, 3, 6, 10 from 0; only itself from 4. */
    cr_assert_eq(chk_sssp(&el, 0, dist, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect(dist[0] == 0.0 && dist[1] == 1.0 && dist[2] == 3.0 && dist[3] == 6.0 &&
              dist[4] == 10.0);
    chk_sssp_fields(5, dist, &reached, &sumdist);
    cr_expect_eq(reached, 5);
    cr_expect_eq(sumdist, 20.0);
    cr_assert_eq(chk_sssp(&el, 4, dist, msg, sizeof(msg)), 0, "%s", msg);
    chk_sssp_fields(5, dist, &reached, &sumdist);
    cr_expect_eq(reached, 1);
    cr_expect(isinf(dist[0]));
}

/* ------------------------------------------------------------ a star */

static uint64_t star_s[] = {3, 3, 3, 3, 3};
static uint64_t star_d[] = {0, 1, 2, 4, 5};

Test(check, star, .timeout = 30)
{
    chk_edges_t el = EL(6, star_s, star_d, NULL);
    int64_t     level[6], reached, depth;
    double      rank[6], sum, max;

    cr_expect_eq(chk_root_maxdeg(&el), 3);
    cr_assert_eq(chk_bfs(&el, 3, level, NULL, msg, sizeof(msg)), 0, "%s", msg);
    chk_bfs_fields(6, level, &reached, &depth);
    cr_expect_eq(reached, 6);
    cr_expect_eq(depth, 1);
    /* One sweep: the leaves get 0.15 + 0.85 / 5, the centre 0.15. */
    cr_assert_eq(chk_pagerank(&el, 1, 0.0, rank, NULL, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect(fabs(rank[0] - 0.32) < 1e-15);
    cr_expect(fabs(rank[3] - 0.15) < 1e-15);
    chk_pagerank_fields(6, rank, &sum, &max);
    cr_expect(fabs(sum - (5 * 0.32 + 0.15)) < 1e-14);
    cr_expect(fabs(max - 0.32) < 1e-15);
    /* The tolerance stops it: the 3rd sweep changes nothing (the centre
     * stays at 0.15 from the 1st, the leaves from the 2nd). */
    int done;

    cr_assert_eq(chk_pagerank(&el, 50, 1e-12, rank, &done, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect_eq(done, 3, "sweeps %d", done);
}

/* ------------------------------------ two components and isolated ones */

static uint64_t two_s[] = {1, 2, 4, 5, 6};
static uint64_t two_d[] = {0, 1, 5, 6, 4};

Test(check, components_and_isolated, .timeout = 30)
{
    chk_edges_t   el = EL(8, two_s, two_d, NULL);
    int64_t       label[8], comps, largest, level[8], parent[8], reached, depth;
    const int64_t want[8] = {0, 0, 0, 3, 4, 4, 4, 7};

    cr_assert_eq(chk_cc(&el, label, msg, sizeof(msg)), 0, "%s", msg);
    for (int v = 0; v < 8; v++)
        cr_expect_eq(label[v], want[v], "vertex %d: label %lld", v, (long long)label[v]);
    chk_cc_fields(8, label, &comps, &largest);
    cr_expect_eq(comps, 4);
    cr_expect_eq(largest, 3);
    /* Ties of degree 2: 1, 4, 5, 6; the smallest id wins. */
    cr_expect_eq(chk_root_maxdeg(&el), 1);
    /* A root with no edges. */
    cr_assert_eq(chk_bfs(&el, 3, level, parent, msg, sizeof(msg)), 0, "%s", msg);
    chk_bfs_fields(8, level, &reached, &depth);
    cr_expect_eq(reached, 1);
    cr_expect_eq(depth, 0);
    cr_expect_eq(parent[3], 3);
    cr_expect_eq(parent[0], -1);
    cr_expect_eq(chk_check_bfs(&el, 3, level, parent, msg, sizeof(msg)), 0, "%s", msg);
}

/* ---------------------------------------- self-loops and duplicates */

static uint64_t dup_s[] = {0, 0, 0, 1, 1, 2, 2};
static uint64_t dup_d[] = {1, 1, 2, 1, 3, 2, 3};
static float    dup_w[] = {5, 2, 9, 0.5f, 1, 7, 4};

Test(check, selfloops_and_duplicates, .timeout = 30)
{
    chk_edges_t el = EL(4, dup_s, dup_d, dup_w);
    chk_csr_t   g;
    double      rank[4], dist[4];
    int64_t     level[4], reached, depth;

    cr_assert_eq(chk_csr_directed(&el, 1, &g, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect_eq(g.nnz, 4, "0->1, 0->2, 1->3, 2->3; got %lld", (long long)g.nnz);
    cr_expect_eq(g.w[0], 2.0, "the smallest weight of the copies");
    chk_csr_free(&g);
    cr_assert_eq(chk_csr_undirected(&el, &g, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect_eq(g.nnz, 8);
    chk_csr_free(&g);
    /* Distinct out-degree: 0 has 2 (not 3), 1 has 1 (the loop dropped). */
    cr_assert_eq(chk_pagerank(&el, 1, 0.0, rank, NULL, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect(fabs(rank[1] - 0.575) < 1e-15, "rank[1] %.17g", rank[1]);
    cr_expect(fabs(rank[3] - 1.85) < 1e-15, "rank[3] %.17g", rank[3]);
    cr_assert_eq(chk_sssp(&el, 0, dist, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect(dist[1] == 2.0 && dist[2] == 9.0 && dist[3] == 3.0, "%g %g %g", dist[1],
              dist[2], dist[3]);
    cr_assert_eq(chk_bfs(&el, 0, level, NULL, msg, sizeof(msg)), 0, "%s", msg);
    chk_bfs_fields(4, level, &reached, &depth);
    cr_expect(reached == 4 && depth == 2);
}

Test(check, bad_input, .timeout = 30)
{
    uint64_t    s[] = {0, 7}, d[] = {1, 2};
    float       w[] = {1, -1};
    chk_edges_t el = EL(4, s, d, NULL);
    int64_t     label[8];
    double      dist[8];

    cr_expect_eq(chk_cc(&el, label, msg, sizeof(msg)), -1);
    cr_expect(strstr(msg, "edge 1 (7 -> 2)") != NULL, "%s", msg);
    s[1] = 3;
    el.w = w;
    cr_expect_eq(chk_sssp(&el, 0, dist, msg, sizeof(msg)), -1);
    cr_expect(strstr(msg, "negative") != NULL, "%s", msg);
    cr_expect_eq(chk_sssp(&el, 9, dist, msg, sizeof(msg)), -1);
    cr_expect_eq(chk_root_maxdeg(&(chk_edges_t){0, 0, NULL, NULL, NULL}), -1);
}

/* --------------------------------------------------------- validators */

/* A 3x3 grid plus a pendant: many valid BFS trees. Vertices r*3+c, and 9
 * hangs off 8; 10 is isolated. */
static uint64_t grid_s[] = {0, 1, 3, 4, 6, 7, 0, 3, 1, 4, 2, 5, 8};
static uint64_t grid_d[] = {1, 2, 4, 5, 7, 8, 3, 6, 4, 7, 5, 8, 9};

Test(check, validate_bfs_cc_sssp_pagerank, .timeout = 30)
{
    chk_edges_t el = EL(11, grid_s, grid_d, NULL);
    int64_t     level[11], parent[11], label[11];
    double      rank[11], dist[11];

    cr_assert_eq(chk_bfs(&el, 0, level, parent, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect_eq(chk_check_bfs(&el, 0, level, parent, msg, sizeof(msg)), 0, "%s", msg);
    /* Another valid parent: 4 from 3 instead of 1. */
    parent[4] = (parent[4] == 1) ? 3 : 1;
    cr_expect_eq(chk_check_bfs(&el, 0, level, parent, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect_eq(chk_check_bfs(&el, 0, NULL, parent, msg, sizeof(msg)), 0, "%s", msg);
    parent[4] = 5; /* a neighbour one level deeper */
    cr_expect_eq(chk_check_bfs(&el, 0, level, parent, msg, sizeof(msg)), -1);
    cr_expect(strstr(msg, "vertex 4") != NULL, "%s", msg);
    parent[4] = 0; /* not a neighbour */
    cr_expect_eq(chk_check_bfs(&el, 0, level, parent, msg, sizeof(msg)), -1);
    cr_expect(strstr(msg, "not a neighbour") != NULL, "%s", msg);
    parent[4] = 1;
    level[6] = 3;
    cr_expect_eq(chk_check_bfs(&el, 0, level, parent, msg, sizeof(msg)), -1);
    cr_expect(strstr(msg, "vertex 6 has level 3, expected 2") != NULL, "%s", msg);
    level[6] = 2;
    parent[10] = 10;
    cr_expect_eq(chk_check_bfs(&el, 0, level, parent, msg, sizeof(msg)), -1);
    cr_expect(strstr(msg, "vertex 10 is unreached") != NULL, "%s", msg);

    cr_assert_eq(chk_cc(&el, label, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect_eq(chk_check_cc(&el, label, msg, sizeof(msg)), 0, "%s", msg);
    label[9] = 9;
    cr_expect_eq(chk_check_cc(&el, label, msg, sizeof(msg)), -1);
    cr_expect(strstr(msg, "vertex 9") != NULL, "%s", msg);

    cr_assert_eq(chk_sssp(&el, 0, dist, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect_eq(dist[9], 5.0);
    dist[9] *= 1.0 + 1e-8;
    cr_expect_eq(chk_check_sssp(&el, 0, dist, msg, sizeof(msg)), 0, "%s", msg);
    dist[9] *= 1.0 + 1e-5;
    cr_expect_eq(chk_check_sssp(&el, 0, dist, msg, sizeof(msg)), -1);
    cr_expect(strstr(msg, "vertex 9") != NULL, "%s", msg);
    dist[9] = 5.0;
    dist[10] = 1.0;
    cr_expect_eq(chk_check_sssp(&el, 0, dist, msg, sizeof(msg)), -1);
    cr_expect(strstr(msg, "vertex 10") != NULL, "%s", msg);

    /* The directed grid is acyclic: ranks settle after 6 sweeps; 3 and 4
     * differ. */
    cr_assert_eq(chk_pagerank(&el, 4, 0.0, rank, NULL, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect_eq(chk_check_pagerank(&el, 4, rank, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect_eq(chk_check_pagerank(&el, 3, rank, msg, sizeof(msg)), -1,
                 "one sweep fewer must differ");
    rank[5] *= 1.0 + 1e-8;
    cr_expect_eq(chk_check_pagerank(&el, 4, rank, msg, sizeof(msg)), -1);
    cr_expect(strstr(msg, "vertex 5") != NULL, "%s", msg);
}

Test(check, graph500_validation, .timeout = 30)
{
    chk_edges_t el = EL(11, grid_s, grid_d, NULL);
    int64_t     good[11], p[11], reached = 0;
    struct {
        const char *what;
        int64_t     v, parent, v2, parent2;
        const char *expect;
    } bad[] = {
        {"the root's parent", 0, 1, -1, 0, "root 0 has parent 1"},
        {"a cycle", 4, 5, 5, 4, "check 1"},
        {"a parent out of range", 7, 11, -1, 0, "neither -1 nor a vertex"},
        {"a chain to an unreached vertex", 9, 10, -1, 0, "outside the tree"},
        {"a parent one level too deep", 4, 5, -1, 0, "check 3"},
        {"a parent that is no neighbour", 8, 0, -1, 0, "check 5"},
        {"a vertex of the component left out", 9, -1, -1, 0, "check 4"},
        {"a vertex of another component", 10, 0, -1, 0, "check 5"},
    };

    cr_assert_eq(chk_bfs(&el, 0, NULL, good, msg, sizeof(msg)), 0, "%s", msg);
    cr_expect_eq(chk_graph500_validate(&el, 0, good, &reached, msg, sizeof(msg)), 0, "%s",
                 msg);
    cr_expect_eq(reached, 10);
    memcpy(p, good, sizeof(p));
    p[4] = (p[4] == 1) ? 3 : 1;
    cr_expect_eq(chk_graph500_validate(&el, 0, p, NULL, msg, sizeof(msg)), 0, "%s", msg);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memcpy(p, good, sizeof(p));
        p[bad[i].v] = bad[i].parent;
        if (bad[i].v2 >= 0)
            p[bad[i].v2] = bad[i].parent2;
        cr_expect_eq(chk_graph500_validate(&el, 0, p, NULL, msg, sizeof(msg)), -1,
                     "%s not rejected", bad[i].what);
        cr_expect(strstr(msg, bad[i].expect) != NULL, "%s: message \"%s\", expected \"%s\"",
                  bad[i].what, msg, bad[i].expect);
    }
}

/* ---------------------------------------- the GraphBLAS peer, checked */

#define GRB GV_BUILD_DIR "/perf/grb_graph"

typedef struct {
    int64_t   n, m;
    uint64_t *src, *dst;
    float    *w;
} rgraph_t;

static uint64_t sm(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A skewed random graph with self-loops, duplicates (with different
 * weights), vertices without edges and small components. */
static void rgraph(rgraph_t *g, int64_t n, int64_t m, uint64_t seed)
{
    g->n = n;
    g->m = m;
    g->src = malloc((size_t)m * sizeof(*g->src));
    g->dst = malloc((size_t)m * sizeof(*g->dst));
    g->w = malloc((size_t)m * sizeof(*g->w));
    cr_assert(g->src && g->dst && g->w);
    for (int64_t e = 0; e < m; e++) {
        uint64_t a = sm(&seed) % (uint64_t)n, b = sm(&seed) % (uint64_t)n;

        /* Squaring the uniform draws skews the degrees to low ids; only
         * the first 80% of the ids get edges. */
        a = (a * a / (uint64_t)n) * 8 / 10;
        b = (b * b / (uint64_t)n) * 8 / 10;
        if (e % 97 == 0)
            b = a;
        if ((e % 89 == 0) && (e > 0)) {
            a = g->src[e - 1];
            b = g->dst[e - 1];
        }
        g->src[e] = a;
        g->dst[e] = b;
        g->w[e] = (float)((sm(&seed) >> 40) + 1) * 0x1.0p-24f;
    }
}

static void write_file(const char *path, const void *a, size_t len)
{
    FILE *f = fopen(path, "wb");

    cr_assert(f != NULL, "cannot write %s", path);
    cr_assert_eq(fwrite(a, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

static void *read_file(const char *path, size_t len)
{
    FILE *f = fopen(path, "rb");
    void *buf = malloc(len + 1);

    cr_assert(f != NULL, "cannot read %s", path);
    cr_assert_eq(fread(buf, 1, len, f), len, "%s: short", path);
    fclose(f);
    return buf;
}

static const char *field(const char *out, const char *key)
{
    const char *p = strstr(out, key);

    cr_assert(p != NULL, "no %s in: %s", key, out);
    return p + strlen(key);
}

static void grb_skip_if_absent(void)
{
    if (access(GRB, X_OK) != 0)
        cr_skip_test("%s not built: SuiteSparse:GraphBLAS (libgraphblas-dev) is absent, "
                     "so the Makefile does not build perf/grb_*.c", GRB);
}

static char dir[64];

static void grb_files(const rgraph_t *g)
{
    char      path[128];
    uint64_t *pairs = malloc(2 * (size_t)g->m * sizeof(*pairs));

    strcpy(dir, "/tmp/gv-check-XXXXXX");
    cr_assert(mkdtemp(dir) != NULL);
    for (int64_t e = 0; e < g->m; e++) {
        pairs[2 * e] = htole64(g->src[e]);
        pairs[2 * e + 1] = htole64(g->dst[e]);
    }
    snprintf(path, sizeof(path), "%s/g.el", dir);
    write_file(path, pairs, 2 * (size_t)g->m * sizeof(*pairs));
    snprintf(path, sizeof(path), "%s/g.w", dir);
    write_file(path, g->w, (size_t)g->m * sizeof(*g->w));
    free(pairs);
}

static char *grb_run(const rgraph_t *g, const char *app, int threads, const char *extra)
{
    char  cmd[1024], *out;
    int   rc;

    snprintf(cmd, sizeof(cmd),
             "timeout 120 %s %s --input %s/g.el --nthreads %d --vertices %lld "
             "--output %s/%s.out %s",
             GRB, app, dir, threads, (long long)g->n, dir, app, extra);
    rc = drv_run(cmd, &out);
    cr_assert_eq(rc, 0, "%s: exit %d: %s", cmd, rc, out ? out : "");
    return out;
}

static void grb_cleanup(void)
{
    char cmd[128];
    char *out;

    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    drv_run(cmd, &out);
    free(out);
}

/* Run the four applications on the graph in dir/g.el (and g.w) at 1 and 2
 * threads; check each per-vertex result and each check field. */
static void grb_check_all(const rgraph_t *g, int64_t isolated)
{
    chk_edges_t el = {g->n, g->m, g->src, g->dst, g->w};
    char       *out, path[128], want[128];
    int64_t     root, n = g->n, *res, reached, depth, comps, largest;
    double     *val, sum, max;

    root = chk_root_maxdeg(&el);
    cr_assert(root >= 0);
    for (int threads = 1; threads <= 2; threads++) {
        /* PageRank: 15 sweeps. */
        out = grb_run(g, "pagerank", threads, "--iters 15");
        snprintf(path, sizeof(path), "%s/pagerank.out", dir);
        val = read_file(path, (size_t)n * sizeof(double));
        cr_expect_eq(chk_check_pagerank(&el, 15, val, msg, sizeof(msg)), 0, "%s", msg);
        chk_pagerank_fields(n, val, &sum, &max);
        cr_expect(fabs(strtod(field(out, " sum="), NULL) - sum) <= 1e-10 * sum, "%s", out);
        cr_expect(fabs(strtod(field(out, " max="), NULL) - max) <= 1e-10 * max, "%s", out);
        cr_expect(strstr(out, " iters=15 ") != NULL, "%s", out);
        free(val);
        free(out);

        /* BFS from the default root (maxdeg), then from an isolated one. */
        out = grb_run(g, "bfs", threads, "");
        snprintf(path, sizeof(path), "%s/bfs.out", dir);
        res = read_file(path, 2 * (size_t)n * sizeof(int64_t));
        cr_expect_eq(chk_check_bfs(&el, root, res, res + n, msg, sizeof(msg)), 0, "%s", msg);
        cr_expect_eq(chk_graph500_validate(&el, root, res + n, NULL, msg, sizeof(msg)), 0,
                     "%s", msg);
        chk_bfs_fields(n, res, &reached, &depth);
        snprintf(want, sizeof(want), " root=%lld reached=%lld depth=%lld", (long long)root,
                 (long long)reached, (long long)depth);
        cr_expect(strstr(out, want) != NULL, "expected%s in %s", want, out);
        free(res);
        free(out);
        if (isolated >= 0) {
            snprintf(want, sizeof(want), "--root %lld", (long long)isolated);
            out = grb_run(g, "bfs", threads, want);
            cr_expect(strstr(out, " reached=1 depth=0") != NULL, "%s", out);
            free(out);
        }

        /* Connected components. */
        out = grb_run(g, "cc", threads, "");
        snprintf(path, sizeof(path), "%s/cc.out", dir);
        res = read_file(path, (size_t)n * sizeof(int64_t));
        cr_expect_eq(chk_check_cc(&el, res, msg, sizeof(msg)), 0, "%s", msg);
        chk_cc_fields(n, res, &comps, &largest);
        snprintf(want, sizeof(want), " components=%lld largest=%lld", (long long)comps,
                 (long long)largest);
        cr_expect(strstr(out, want) != NULL, "expected%s in %s", want, out);
        cr_expect(comps > 1, "more than one component: %lld", (long long)comps);
        free(res);
        free(out);

        /* SSSP with the weights. */
        snprintf(want, sizeof(want), "--weights %s/g.w", dir);
        out = grb_run(g, "sssp", threads, want);
        snprintf(path, sizeof(path), "%s/sssp.out", dir);
        val = read_file(path, (size_t)n * sizeof(double));
        cr_expect_eq(chk_check_sssp(&el, root, val, msg, sizeof(msg)), 0, "%s", msg);
        chk_sssp_fields(n, val, &reached, &sum);
        snprintf(want, sizeof(want), " reached=%lld sumdist=", (long long)reached);
        cr_expect(strstr(out, want) != NULL, "expected%s in %s", want, out);
        cr_expect(fabs(strtod(field(out, " sumdist="), NULL) - sum) <= 1e-10 * sum, "%s",
                  out);
        free(val);
        free(out);

        /* SSSP without weights: every edge weighs 1. */
        out = grb_run(g, "sssp", threads, "");
        val = read_file(path, (size_t)n * sizeof(double));
        el.w = NULL;
        cr_expect_eq(chk_check_sssp(&el, root, val, msg, sizeof(msg)), 0, "unweighted: %s",
                     msg);
        el.w = g->w;
        free(val);
        free(out);
    }
}

Test(grb, against_checkers, .timeout = 300)
{
    rgraph_t g;

    grb_skip_if_absent();
    /* Ids 2400..2999 have no edges. */
    rgraph(&g, 3000, 24000, 12345);
    grb_files(&g);
    grb_check_all(&g, 2999);
    grb_cleanup();
    free(g.src);
    free(g.dst);
    free(g.w);
}

/* A Kronecker graph from perf/kron: the benchmark's kind of graph. */
Test(grb, kron_against_checkers, .timeout = 300)
{
    char     cmd[512], *out, path[128];
    rgraph_t g;
    uint64_t *pairs;
    void     *again;
    int       rc;

    grb_skip_if_absent();
    if (access(GV_BUILD_DIR "/perf/kron", X_OK) != 0)
        cr_skip_test(GV_BUILD_DIR "/perf/kron not built (make perf)");
    strcpy(dir, "/tmp/gv-check-XXXXXX");
    cr_assert(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof(cmd), "timeout 60 %s/perf/kron --scale 11 --seed 5 --output %s/g.el "
             "--weights %s/g.w", GV_BUILD_DIR, dir, dir);
    rc = drv_run(cmd, &out);
    cr_assert_eq(rc, 0, "%s: exit %d: %s", cmd, rc, out);
    free(out);
    /* 2^11 vertices, 16 edges each; every id below 2^11; the same file
     * again from the same seed. */
    g.n = 2048;
    g.m = 16 * 2048;
    snprintf(path, sizeof(path), "%s/g.el", dir);
    pairs = read_file(path, 2 * (size_t)g.m * sizeof(uint64_t));
    g.src = malloc((size_t)g.m * sizeof(*g.src));
    g.dst = malloc((size_t)g.m * sizeof(*g.dst));
    for (int64_t e = 0; e < g.m; e++) {
        g.src[e] = le64toh(pairs[2 * e]);
        g.dst[e] = le64toh(pairs[2 * e + 1]);
        cr_assert(g.src[e] < 2048 && g.dst[e] < 2048, "edge %lld out of range", (long long)e);
    }
    snprintf(path, sizeof(path), "%s/g.w", dir);
    g.w = read_file(path, (size_t)g.m * sizeof(float));
    for (int64_t e = 0; e < g.m; e++)
        cr_assert(g.w[e] > 0.0f && g.w[e] <= 1.0f, "weight %lld: %g", (long long)e, g.w[e]);
    snprintf(cmd, sizeof(cmd), "timeout 60 %s/perf/kron --scale 11 --seed 5 --output %s/again.el",
             GV_BUILD_DIR, dir);
    rc = drv_run(cmd, &out);
    cr_assert_eq(rc, 0, "%s: %s", cmd, out);
    free(out);
    snprintf(path, sizeof(path), "%s/again.el", dir);
    again = read_file(path, 2 * (size_t)g.m * sizeof(uint64_t));
    cr_expect(memcmp(again, pairs, 2 * (size_t)g.m * sizeof(uint64_t)) == 0,
              "kron is not deterministic for a given seed");
    free(again);
    free(pairs);
    grb_check_all(&g, -1);
    grb_cleanup();
    free(g.src);
    free(g.dst);
    free(g.w);
}

Test(grb, bad_input, .timeout = 120)
{
    rgraph_t g;
    char     cmd[512], *out;
    int      rc;
    struct {
        const char *args, *expect;
    } bad[] = {
        {"bfs --input %s/short.el --nthreads 1", "not a multiple of 16"},
        {"sssp --input %s/g.el --weights %s/short.el --nthreads 1", "weights for"},
        {"cc --input %s/g.el --nthreads 1 --vertices 10", "--vertices 10"},
        {"bfs --input %s/g.el --nthreads 1 --root 99999", "--root 99999"},
        {"pagerank --input %s/g.el --nthreads x", "--nthreads 'x'"},
        {"tc --input %s/g.el --nthreads 1", "application 'tc' unknown"},
        {"pagerank --input %s/none.el --nthreads 1", "cannot open"},
        {"pagerank --input %s/g.el --nthreads 1 --tol -1", "--tol '-1'"},
        {"pagerank --input %s/empty.el --nthreads 1", "empty edge list"},
        {"bfs --input %s/g.el", "--nthreads T is required"},
    };

    grb_skip_if_absent();
    rgraph(&g, 100, 500, 7);
    grb_files(&g);
    snprintf(cmd, sizeof(cmd), "%s/short.el", dir);
    write_file(cmd, g.src, 1000);
    snprintf(cmd, sizeof(cmd), "%s/empty.el", dir);
    write_file(cmd, g.src, 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char args[256];

        snprintf(args, sizeof(args), bad[i].args, dir, dir);
        snprintf(cmd, sizeof(cmd), "timeout 60 %s %s", GRB, args);
        rc = drv_run(cmd, &out);
        cr_expect(rc != 0 && rc != 124, "%s: exit %d", args, rc);
        cr_expect(out && strstr(out, bad[i].expect) != NULL, "%s: expected \"%s\" in: %s",
                  args, bad[i].expect, out ? out : "");
        free(out);
    }
    grb_cleanup();
    free(g.src);
    free(g.dst);
    free(g.w);
}
