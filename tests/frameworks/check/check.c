/* Sequential reference checkers: see check.h for the definitions.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "check/check.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *msg, size_t msg_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *msg, size_t msg_len, const char *fmt, ...)
{
    va_list ap;

    if ((msg != NULL) && (msg_len > 0)) {
        va_start(ap, fmt);
        vsnprintf(msg, msg_len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---------------------------------------------------------------- CSR */

typedef struct {
    int64_t v;
    double  w;
} nbr_t;

static int nbr_cmp(const void *a, const void *b)
{
    const nbr_t *x = a, *y = b;

    if (x->v != y->v)
        return (x->v < y->v) ? -1 : 1;
    if (x->w != y->w)
        return (x->w < y->w) ? -1 : 1;
    return 0;
}

static int el_valid(const chk_edges_t *el, int weighted, char *msg,
                    size_t msg_len)
{
    if ((el == NULL) || (el->n < 0) || (el->m < 0))
        return fail(msg, msg_len, "edge list: negative or missing sizes");
    if ((el->m > 0) && ((el->src == NULL) || (el->dst == NULL)))
        return fail(msg, msg_len, "edge list: %lld edges but no arrays",
                    (long long)el->m);
    for (int64_t e = 0; e < el->m; e++) {
        if ((el->src[e] >= (uint64_t)el->n) || (el->dst[e] >= (uint64_t)el->n))
            return fail(msg, msg_len,
                        "edge %lld (%llu -> %llu): vertex id beyond n = %lld",
                        (long long)e, (unsigned long long)el->src[e],
                        (unsigned long long)el->dst[e], (long long)el->n);
        if (weighted && (el->w != NULL) && !(el->w[e] >= 0.0f))
            return fail(msg, msg_len,
                        "edge %lld (%llu -> %llu): weight %g is negative or "
                        "NaN (SSSP accepts weights >= 0)",
                        (long long)e, (unsigned long long)el->src[e],
                        (unsigned long long)el->dst[e], (double)el->w[e]);
    }
    return 0;
}

/* Build from the edge list, both ways if @a both; with weights if
 * @a weighted. */
static int csr_build(const chk_edges_t *el, int both, int weighted,
                     chk_csr_t *g_p, char *msg, size_t msg_len)
{
    int64_t n = el->n, *cnt, *ptr, *adj, k = 0;
    nbr_t  *tmp;
    double *w = NULL;

    memset(g_p, 0, sizeof(*g_p));
    if (el_valid(el, weighted, msg, msg_len) != 0)
        return -1;
    cnt = calloc((size_t)n + 1, sizeof(*cnt));
    ptr = calloc((size_t)n + 1, sizeof(*ptr));
    tmp = malloc(((size_t)el->m * (both ? 2 : 1) + 1) * sizeof(*tmp));
    if ((cnt == NULL) || (ptr == NULL) || (tmp == NULL)) {
        free(cnt);
        free(ptr);
        free(tmp);
        return fail(msg, msg_len, "out of memory for %lld edges", (long long)el->m);
    }
    for (int64_t e = 0; e < el->m; e++) {
        if (el->src[e] == el->dst[e])
            continue;
        cnt[el->src[e]]++;
        if (both)
            cnt[el->dst[e]]++;
    }
    for (int64_t v = 0; v < n; v++)
        ptr[v + 1] = ptr[v] + cnt[v];
    memcpy(cnt, ptr, (size_t)n * sizeof(*cnt));
    for (int64_t e = 0; e < el->m; e++) {
        int64_t s = (int64_t)el->src[e], d = (int64_t)el->dst[e];
        double  x = (weighted && (el->w != NULL)) ? (double)el->w[e] : 1.0;

        if (s == d)
            continue;
        tmp[cnt[s]++] = (nbr_t){d, x};
        if (both)
            tmp[cnt[d]++] = (nbr_t){s, x};
    }
    /* Sort each row, then collapse duplicates keeping the smallest weight
     * (the first after sorting). */
    adj = malloc(((size_t)ptr[n] + 1) * sizeof(*adj));
    if (weighted)
        w = malloc(((size_t)ptr[n] + 1) * sizeof(*w));
    if ((adj == NULL) || (weighted && (w == NULL))) {
        free(cnt);
        free(ptr);
        free(tmp);
        free(adj);
        free(w);
        return fail(msg, msg_len, "out of memory for %lld edges", (long long)el->m);
    }
    for (int64_t v = 0; v < n; v++) {
        int64_t lo = ptr[v], hi = ptr[v + 1];

        qsort(tmp + lo, (size_t)(hi - lo), sizeof(*tmp), nbr_cmp);
        ptr[v] = k;
        for (int64_t i = lo; i < hi; i++) {
            if ((i > lo) && (tmp[i].v == tmp[i - 1].v))
                continue;
            adj[k] = tmp[i].v;
            if (weighted)
                w[k] = tmp[i].w;
            k++;
        }
    }
    ptr[n] = k;
    free(cnt);
    free(tmp);
    *g_p = (chk_csr_t){n, k, ptr, adj, w};
    return 0;
}

int chk_csr_directed(const chk_edges_t *el, int weighted, chk_csr_t *g_p,
                     char *msg, size_t msg_len)
{
    return csr_build(el, 0, weighted, g_p, msg, msg_len);
}

int chk_csr_undirected(const chk_edges_t *el, chk_csr_t *g_p, char *msg,
                       size_t msg_len)
{
    return csr_build(el, 1, 0, g_p, msg, msg_len);
}

void chk_csr_free(chk_csr_t *g)
{
    free(g->ptr);
    free(g->adj);
    free(g->w);
    memset(g, 0, sizeof(*g));
}

static int has_edge(const chk_csr_t *g, int64_t u, int64_t v)
{
    int64_t lo = g->ptr[u], hi = g->ptr[u + 1];

    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;

        if (g->adj[mid] == v)
            return 1;
        if (g->adj[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static int64_t root_of(const chk_csr_t *g)
{
    int64_t best = -1, bestdeg = -1;

    for (int64_t v = 0; v < g->n; v++) {
        int64_t d = g->ptr[v + 1] - g->ptr[v];

        if (d > bestdeg) {
            best = v;
            bestdeg = d;
        }
    }
    return best;
}

int64_t chk_root_maxdeg(const chk_edges_t *el)
{
    chk_csr_t g;
    int64_t   r;

    if (chk_csr_undirected(el, &g, NULL, 0) != 0)
        return -1;
    r = root_of(&g);
    chk_csr_free(&g);
    return r;
}

/* ----------------------------------------------------------- PageRank */

int chk_pagerank(const chk_edges_t *el, int iters, double tol, double *rank,
                 int *iters_done_p, char *msg, size_t msg_len)
{
    chk_csr_t g;
    double   *contrib;
    int       it;

    if (iters < 0)
        return fail(msg, msg_len, "pagerank: iterations %d < 0", iters);
    if (chk_csr_directed(el, 0, &g, msg, msg_len) != 0)
        return -1;
    contrib = calloc((size_t)g.n + 1, sizeof(*contrib));
    if (contrib == NULL) {
        chk_csr_free(&g);
        return fail(msg, msg_len, "pagerank: out of memory");
    }
    for (int64_t v = 0; v < g.n; v++)
        rank[v] = 1.0;
    for (it = 0; it < iters;) {
        double delta = 0.0;

        /* contrib[v] = sum over in-neighbours: scatter along out-edges
         * from the previous sweep's ranks. */
        memset(contrib, 0, (size_t)g.n * sizeof(*contrib));
        for (int64_t u = 0; u < g.n; u++) {
            int64_t deg = g.ptr[u + 1] - g.ptr[u];

            for (int64_t i = g.ptr[u]; i < g.ptr[u + 1]; i++)
                contrib[g.adj[i]] += rank[u] / (double)deg;
        }
        for (int64_t v = 0; v < g.n; v++) {
            double r = 0.15 + 0.85 * contrib[v];

            delta = fmax(delta, fabs(r - rank[v]));
            rank[v] = r;
        }
        it++;
        if ((tol > 0.0) && (delta < tol))
            break;
    }
    if (iters_done_p != NULL)
        *iters_done_p = it;
    free(contrib);
    chk_csr_free(&g);
    return 0;
}

/* ---------------------------------------------------------------- BFS */

static int bfs_csr(const chk_csr_t *g, int64_t root, int64_t *level,
                   int64_t *parent)
{
    int64_t *queue = malloc(((size_t)g->n + 1) * sizeof(*queue));
    int64_t  head = 0, tail = 0;

    if (queue == NULL)
        return -1;
    for (int64_t v = 0; v < g->n; v++) {
        level[v] = -1;
        parent[v] = -1;
    }
    level[root] = 0;
    parent[root] = root;
    queue[tail++] = root;
    while (head < tail) {
        int64_t u = queue[head++];

        for (int64_t i = g->ptr[u]; i < g->ptr[u + 1]; i++) {
            int64_t v = g->adj[i];

            if (level[v] < 0) {
                level[v] = level[u] + 1;
                queue[tail++] = v;
            }
        }
    }
    /* The parent: the smallest-id neighbour one level up (adj is sorted). */
    for (int64_t v = 0; v < g->n; v++) {
        if ((level[v] <= 0) || (v == root))
            continue;
        for (int64_t i = g->ptr[v]; i < g->ptr[v + 1]; i++) {
            if (level[g->adj[i]] == level[v] - 1) {
                parent[v] = g->adj[i];
                break;
            }
        }
    }
    free(queue);
    return 0;
}

int chk_bfs(const chk_edges_t *el, int64_t root, int64_t *level,
            int64_t *parent, char *msg, size_t msg_len)
{
    chk_csr_t g;
    int64_t  *lv, *pa;
    int       rc;

    if (chk_csr_undirected(el, &g, msg, msg_len) != 0)
        return -1;
    if ((root < 0) || (root >= g.n)) {
        chk_csr_free(&g);
        return fail(msg, msg_len, "bfs: root %lld is not a vertex (0..%lld)",
                    (long long)root, (long long)g.n - 1);
    }
    lv = (level != NULL) ? level : malloc((size_t)g.n * sizeof(*lv));
    pa = (parent != NULL) ? parent : malloc((size_t)g.n * sizeof(*pa));
    rc = ((lv != NULL) && (pa != NULL)) ? bfs_csr(&g, root, lv, pa) : -1;
    if (level == NULL)
        free(lv);
    if (parent == NULL)
        free(pa);
    chk_csr_free(&g);
    return (rc == 0) ? 0 : fail(msg, msg_len, "bfs: out of memory");
}

/* ----------------------------------------------------------------- CC */

int chk_cc(const chk_edges_t *el, int64_t *label, char *msg, size_t msg_len)
{
    chk_csr_t g;
    int64_t  *stack;

    if (chk_csr_undirected(el, &g, msg, msg_len) != 0)
        return -1;
    stack = malloc(((size_t)g.n + 1) * sizeof(*stack));
    if (stack == NULL) {
        chk_csr_free(&g);
        return fail(msg, msg_len, "cc: out of memory");
    }
    for (int64_t v = 0; v < g.n; v++)
        label[v] = -1;
    /* Scanning in increasing id, the first vertex met of each component
     * is its smallest. */
    for (int64_t s = 0; s < g.n; s++) {
        int64_t top = 0;

        if (label[s] >= 0)
            continue;
        label[s] = s;
        stack[top++] = s;
        while (top > 0) {
            int64_t u = stack[--top];

            for (int64_t i = g.ptr[u]; i < g.ptr[u + 1]; i++) {
                if (label[g.adj[i]] < 0) {
                    label[g.adj[i]] = s;
                    stack[top++] = g.adj[i];
                }
            }
        }
    }
    free(stack);
    chk_csr_free(&g);
    return 0;
}

/* --------------------------------------------------------------- SSSP */

typedef struct {
    double  d;
    int64_t v;
} heap_item_t;

static void heap_push(heap_item_t *h, int64_t *len, heap_item_t x)
{
    int64_t i = (*len)++;

    while (i > 0) {
        int64_t up = (i - 1) / 2;

        if (h[up].d <= x.d)
            break;
        h[i] = h[up];
        i = up;
    }
    h[i] = x;
}

static heap_item_t heap_pop(heap_item_t *h, int64_t *len)
{
    heap_item_t top = h[0], last = h[--(*len)];
    int64_t     i = 0;

    for (;;) {
        int64_t c = 2 * i + 1;

        if (c >= *len)
            break;
        if ((c + 1 < *len) && (h[c + 1].d < h[c].d))
            c++;
        if (last.d <= h[c].d)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*len > 0)
        h[i] = last;
    return top;
}

int chk_sssp(const chk_edges_t *el, int64_t root, double *dist, char *msg,
             size_t msg_len)
{
    chk_csr_t    g;
    heap_item_t *heap;
    int64_t      len = 0;

    if (chk_csr_directed(el, 1, &g, msg, msg_len) != 0)
        return -1;
    if ((root < 0) || (root >= g.n)) {
        chk_csr_free(&g);
        return fail(msg, msg_len, "sssp: root %lld is not a vertex (0..%lld)",
                    (long long)root, (long long)g.n - 1);
    }
    /* Lazy deletion: at most one entry per relaxation, nnz + 1 in all. */
    heap = malloc(((size_t)g.nnz + 1) * sizeof(*heap));
    if (heap == NULL) {
        chk_csr_free(&g);
        return fail(msg, msg_len, "sssp: out of memory");
    }
    for (int64_t v = 0; v < g.n; v++)
        dist[v] = INFINITY;
    dist[root] = 0.0;
    heap_push(heap, &len, (heap_item_t){0.0, root});
    while (len > 0) {
        heap_item_t top = heap_pop(heap, &len);

        if (top.d > dist[top.v])
            continue;
        for (int64_t i = g.ptr[top.v]; i < g.ptr[top.v + 1]; i++) {
            double nd = top.d + g.w[i];

            if (nd < dist[g.adj[i]]) {
                dist[g.adj[i]] = nd;
                heap_push(heap, &len, (heap_item_t){nd, g.adj[i]});
            }
        }
    }
    free(heap);
    chk_csr_free(&g);
    return 0;
}

/* ------------------------------------------------------- check fields */

void chk_pagerank_fields(int64_t n, const double *rank, double *sum_p,
                         double *max_p)
{
    double sum = 0.0, max = 0.0;

    for (int64_t v = 0; v < n; v++) {
        sum += rank[v];
        if ((v == 0) || (rank[v] > max))
            max = rank[v];
    }
    *sum_p = sum;
    *max_p = max;
}

void chk_bfs_fields(int64_t n, const int64_t *level, int64_t *reached_p,
                    int64_t *depth_p)
{
    int64_t reached = 0, depth = -1;

    for (int64_t v = 0; v < n; v++) {
        if (level[v] >= 0) {
            reached++;
            if (level[v] > depth)
                depth = level[v];
        }
    }
    *reached_p = reached;
    *depth_p = depth;
}

void chk_cc_fields(int64_t n, const int64_t *label, int64_t *components_p,
                   int64_t *largest_p)
{
    int64_t *size = calloc((size_t)n + 1, sizeof(*size));
    int64_t  comps = 0, largest = 0;

    if (size == NULL) {
        *components_p = -1;
        *largest_p = -1;
        return;
    }
    for (int64_t v = 0; v < n; v++) {
        if ((label[v] >= 0) && (label[v] < n))
            size[label[v]]++;
    }
    for (int64_t v = 0; v < n; v++) {
        if (size[v] > 0)
            comps++;
        if (size[v] > largest)
            largest = size[v];
    }
    free(size);
    *components_p = comps;
    *largest_p = largest;
}

void chk_sssp_fields(int64_t n, const double *dist, int64_t *reached_p,
                     double *sumdist_p)
{
    int64_t reached = 0;
    double  sum = 0.0;

    for (int64_t v = 0; v < n; v++) {
        if (isfinite(dist[v])) {
            reached++;
            sum += dist[v];
        }
    }
    *reached_p = reached;
    *sumdist_p = sum;
}

/* --------------------------------------------------------- validation */

int chk_check_bfs(const chk_edges_t *el, int64_t root, const int64_t *level,
                  const int64_t *parent, char *msg, size_t msg_len)
{
    chk_csr_t g;
    int64_t  *ref;
    int       rc = 0;

    if (chk_csr_undirected(el, &g, msg, msg_len) != 0)
        return -1;
    if ((root < 0) || (root >= g.n)) {
        chk_csr_free(&g);
        return fail(msg, msg_len, "bfs: root %lld is not a vertex (0..%lld)",
                    (long long)root, (long long)g.n - 1);
    }
    ref = malloc(((size_t)g.n + 1) * 2 * sizeof(*ref));
    if ((ref == NULL) || (bfs_csr(&g, root, ref, ref + g.n) != 0)) {
        free(ref);
        chk_csr_free(&g);
        return fail(msg, msg_len, "bfs: out of memory");
    }
    for (int64_t v = 0; (v < g.n) && (rc == 0); v++) {
        int64_t p = (parent != NULL) ? parent[v] : -2;

        if ((level != NULL) && (level[v] != ref[v])) {
            rc = fail(msg, msg_len, "bfs: vertex %lld has level %lld, expected %lld",
                      (long long)v, (long long)level[v], (long long)ref[v]);
        } else if (parent == NULL) {
            continue;
        } else if (v == root) {
            if (p != root)
                rc = fail(msg, msg_len, "bfs: root %lld has parent %lld, "
                          "expected itself", (long long)v, (long long)p);
        } else if (ref[v] < 0) {
            if (p != -1)
                rc = fail(msg, msg_len, "bfs: vertex %lld is unreached but "
                          "has parent %lld (expected -1)", (long long)v, (long long)p);
        } else if ((p < 0) || (p >= g.n)) {
            rc = fail(msg, msg_len, "bfs: vertex %lld (level %lld) has parent "
                      "%lld, not a vertex", (long long)v, (long long)ref[v],
                      (long long)p);
        } else if (!has_edge(&g, v, p)) {
            rc = fail(msg, msg_len, "bfs: vertex %lld has parent %lld, not a "
                      "neighbour", (long long)v, (long long)p);
        } else if (ref[p] != ref[v] - 1) {
            rc = fail(msg, msg_len, "bfs: vertex %lld (level %lld) has parent "
                      "%lld at level %lld, expected level %lld", (long long)v,
                      (long long)ref[v], (long long)p, (long long)ref[p],
                      (long long)ref[v] - 1);
        }
    }
    free(ref);
    chk_csr_free(&g);
    return rc;
}

int chk_check_cc(const chk_edges_t *el, const int64_t *label, char *msg,
                 size_t msg_len)
{
    int64_t *ref = malloc(((size_t)el->n + 1) * sizeof(*ref));
    int      rc = 0;

    if (ref == NULL)
        return fail(msg, msg_len, "cc: out of memory");
    if (chk_cc(el, ref, msg, msg_len) != 0) {
        free(ref);
        return -1;
    }
    for (int64_t v = 0; v < el->n; v++) {
        if (label[v] != ref[v]) {
            rc = fail(msg, msg_len, "cc: vertex %lld has label %lld, expected "
                      "%lld (smallest id of its component)", (long long)v,
                      (long long)label[v], (long long)ref[v]);
            break;
        }
    }
    free(ref);
    return rc;
}

int chk_check_sssp(const chk_edges_t *el, int64_t root, const double *dist,
                   char *msg, size_t msg_len)
{
    double *ref = malloc(((size_t)el->n + 1) * sizeof(*ref));
    int     rc = 0;

    if (ref == NULL)
        return fail(msg, msg_len, "sssp: out of memory");
    if (chk_sssp(el, root, ref, msg, msg_len) != 0) {
        free(ref);
        return -1;
    }
    for (int64_t v = 0; v < el->n; v++) {
        int ok = isinf(ref[v]) ? (isinf(dist[v]) && (dist[v] > 0))
                               : (fabs(dist[v] - ref[v]) <= CHK_SSSP_RTOL * fabs(ref[v]));

        if (!ok) {
            rc = fail(msg, msg_len, "sssp: vertex %lld has distance %.17g, "
                      "expected %.17g (relative tolerance %g)", (long long)v,
                      dist[v], ref[v], CHK_SSSP_RTOL);
            break;
        }
    }
    free(ref);
    return rc;
}

int chk_check_pagerank(const chk_edges_t *el, int iters, const double *rank,
                       char *msg, size_t msg_len)
{
    double *ref = malloc(((size_t)el->n + 1) * sizeof(*ref));
    int     rc = 0;

    if (ref == NULL)
        return fail(msg, msg_len, "pagerank: out of memory");
    if (chk_pagerank(el, iters, 0.0, ref, NULL, msg, msg_len) != 0) {
        free(ref);
        return -1;
    }
    for (int64_t v = 0; v < el->n; v++) {
        if (!(fabs(rank[v] - ref[v]) <= CHK_PAGERANK_RTOL * fabs(ref[v]))) {
            rc = fail(msg, msg_len, "pagerank: vertex %lld has rank %.17g, "
                      "expected %.17g after %d sweeps (relative tolerance %g)",
                      (long long)v, rank[v], ref[v], iters, CHK_PAGERANK_RTOL);
            break;
        }
    }
    free(ref);
    return rc;
}

int chk_graph500_validate(const chk_edges_t *el, int64_t root,
                          const int64_t *parent, int64_t *reached_p,
                          char *msg, size_t msg_len)
{
    chk_csr_t g;
    int64_t  *depth, reached = 0;
    int       rc = 0;

    if (chk_csr_undirected(el, &g, msg, msg_len) != 0)
        return -1;
    if ((root < 0) || (root >= g.n)) {
        chk_csr_free(&g);
        return fail(msg, msg_len, "graph500: root %lld is not a vertex (0..%lld)",
                    (long long)root, (long long)g.n - 1);
    }
    if (parent[root] != root) {
        chk_csr_free(&g);
        return fail(msg, msg_len, "graph500: root %lld has parent %lld, "
                    "expected itself", (long long)root, (long long)parent[root]);
    }
    depth = malloc(((size_t)g.n + 1) * sizeof(*depth));
    if (depth == NULL) {
        chk_csr_free(&g);
        return fail(msg, msg_len, "graph500: out of memory");
    }
    /* -1: outside the tree; -2: not yet known. */
    for (int64_t v = 0; v < g.n; v++)
        depth[v] = (parent[v] == -1) ? -1 : -2;
    depth[root] = 0;
    for (int64_t v = 0; (v < g.n) && (rc == 0); v++) {
        int64_t u = v, steps = 0, d;

        if ((parent[v] < -1) || (parent[v] >= g.n)) {
            rc = fail(msg, msg_len, "graph500: vertex %lld has parent %lld, "
                      "neither -1 nor a vertex", (long long)v, (long long)parent[v]);
            break;
        }
        if (depth[v] != -2)
            continue;
        /* Check 1: walk up to a vertex of known depth; more than n steps
         * means a cycle. */
        while (depth[u] == -2) {
            u = parent[u];
            if ((u < 0) || (u >= g.n) || (++steps > g.n))
                break;
        }
        if ((u < 0) || (u >= g.n)) {
            rc = fail(msg, msg_len, "graph500: the parent chain of vertex %lld "
                      "reaches %lld, not a vertex", (long long)v, (long long)u);
        } else if ((steps > g.n) || (depth[u] == -1)) {
            rc = fail(msg, msg_len, "graph500: check 1 (no cycle): the parent "
                      "chain of vertex %lld %s", (long long)v,
                      (steps > g.n) ? "runs into a cycle"
                                    : "ends at a vertex outside the tree");
        } else {
            /* Fill the depths down the chain. */
            d = depth[u] + steps;
            for (u = v; depth[u] == -2; u = parent[u])
                depth[u] = d--;
        }
    }
    for (int64_t v = 0; (v < g.n) && (rc == 0); v++) {
        if (depth[v] < 0)
            continue;
        reached++;
        if (v == root)
            continue;
        if (depth[v] != depth[parent[v]] + 1)
            rc = fail(msg, msg_len, "graph500: check 2 (tree edges span one "
                      "level): vertex %lld at level %lld, parent %lld at %lld",
                      (long long)v, (long long)depth[v], (long long)parent[v],
                      (long long)depth[parent[v]]);
        else if (!has_edge(&g, v, parent[v]))
            rc = fail(msg, msg_len, "graph500: check 5 (tree edges are input "
                      "edges): vertex %lld has parent %lld but no edge joins them",
                      (long long)v, (long long)parent[v]);
    }
    for (int64_t v = 0; (v < g.n) && (rc == 0); v++) {
        for (int64_t i = g.ptr[v]; (i < g.ptr[v + 1]) && (rc == 0); i++) {
            int64_t u = g.adj[i];

            if ((depth[v] < 0) != (depth[u] < 0))
                rc = fail(msg, msg_len, "graph500: check 4 (the tree spans the "
                          "component): edge %lld - %lld joins a vertex in the "
                          "tree and one outside", (long long)v, (long long)u);
            else if ((depth[v] >= 0) && (llabs(depth[v] - depth[u]) > 1))
                rc = fail(msg, msg_len, "graph500: check 3 (input edges span at "
                          "most one level): edge %lld - %lld joins levels %lld "
                          "and %lld", (long long)v, (long long)u,
                          (long long)depth[v], (long long)depth[u]);
        }
    }
    free(depth);
    chk_csr_free(&g);
    if ((rc == 0) && (reached_p != NULL))
        *reached_p = reached;
    return rc;
}
