/* grb_graph: the GraphBLAS peer of the graph frameworks. PageRank, BFS,
 * connected components and SSSP with SuiteSparse:GraphBLAS, in the
 * formulations of LAGraph (written here, not linked), on a binary edge
 * list, under the same definitions as the frameworks and the reference
 * checkers (tests/frameworks/check/check.h):
 *
 * - PageRank and SSSP read the edges as directed, BFS and connected
 *   components as undirected; self-loops are dropped and duplicate pairs
 *   collapsed (SSSP keeps the smallest weight, read as float32 and
 *   computed in double).
 * - PageRank: rank = 0.15 + 0.85 * sum of in-neighbours' rank / outdeg,
 *   from 1.0, synchronous sweeps (plus_second products on the transpose);
 *   vertices with no out-edges distribute nothing.
 * - BFS: direction-optimising push/pull with the any_secondi semiring
 *   (parents), levels from the frontier number.
 * - Connected components: FastSV (hooking and shortcutting on the parent
 *   vector); the label of a vertex is the smallest id of its component.
 * - SSSP: delta-stepping with min_plus products from sparse frontiers
 *   (light edges per bucket until it settles, then heavy edges).
 *
 *   grb_graph APP --input FILE.el [--weights FILE.w] --nthreads T
 *             [--vertices N] [--root maxdeg|N] [--iters N] [--tol X]
 *             [--delta X] [--output FILE] [--burble]
 *
 * Prints one line: graph app=... system=graphblas threads=T vertices=N
 * edges=M load_s=... build_s=... run_s=... iters=... and the check fields
 * (PageRank sum= max=, BFS reached= depth=, CC components= largest=, SSSP
 * reached= sumdist=). --output writes the per-vertex result in binary:
 * PageRank and SSSP n doubles (INFINITY unreached), BFS n int64 levels
 * then n int64 parents (-1 unreached), CC n int64 labels.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <GraphBLAS.h>

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define DEFAULT_ITERS 20

typedef struct {
    const char *app;
    const char *input;
    const char *weights;
    const char *output;
    int         nthreads;
    int64_t     vertices; /* -1: max id + 1 */
    int64_t     root;     /* -1: maxdeg */
    int         iters;
    double      tol;
    double      delta;    /* SSSP; <= 0: from the weights */
    int         burble;
} opts_t;

typedef struct {
    int64_t   n;
    GrB_Index m;
    uint64_t *src;
    uint64_t *dst;
    double   *w;
} edges_t;

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of the whole process (every thread): beside the elapsed
 * time, it shows how much of the machine a run had. */
static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "grb_graph: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

/* Every GraphBLAS call is checked; a failure names the call and exits. */
#define TRY(_call)                                                            \
    do {                                                                      \
        GrB_Info _info = (_call);                                             \
        if (_info < GrB_SUCCESS)                                              \
            die("%s:%d: %s failed: GrB_Info %d", __FILE__, __LINE__, #_call, \
                (int)_info);                                                  \
    } while (0)

static void usage(FILE *f)
{
    fprintf(f,
            "usage: grb_graph pagerank|bfs|cc|sssp --input FILE.el [--weights FILE.w]\n"
            "                 --nthreads T [--vertices N] [--root maxdeg|N] [--iters N]\n"
            "                 [--tol X] [--delta X] [--output FILE] [--burble]\n"
            "  FILE.el: little-endian uint64 pairs (src, dst); FILE.w: one float32 per\n"
            "  edge (sssp; without it every weight is 1). Vertices: max id + 1 unless\n"
            "  --vertices. PageRank: --iters sweeps (default %d), or until the largest\n"
            "  change is below --tol (default 0: all sweeps). SSSP: delta-stepping\n"
            "  with buckets of width --delta (default: the largest weight over the\n"
            "  average out-degree). --burble: GraphBLAS\n"
            "  reports each operation and its method (GxB_BURBLE).\n",
            DEFAULT_ITERS);
}

static int64_t parse_i64(const char *opt, const char *s, int64_t lo, int64_t hi)
{
    char     *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if ((errno != 0) || (end == s) || (*end != '\0') || (v < lo) || (v > hi))
        die("%s '%s': expected an integer in %lld..%lld", opt, s, (long long)lo,
            (long long)hi);
    return v;
}

static void parse(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){.nthreads = 0, .vertices = -1, .root = -1, .iters = DEFAULT_ITERS};
    if (argc < 2) {
        usage(stderr);
        exit(1);
    }
    if ((strcmp(argv[1], "-h") == 0) || (strcmp(argv[1], "--help") == 0)) {
        usage(stdout);
        exit(0);
    }
    o->app = argv[1];
    if (strcmp(o->app, "pagerank") && strcmp(o->app, "bfs") && strcmp(o->app, "cc") &&
        strcmp(o->app, "sssp"))
        die("application '%s' unknown: expected pagerank, bfs, cc or sssp", o->app);
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = (i + 1 < argc) ? argv[i + 1] : NULL;

        if (strcmp(a, "--burble") == 0) {
            o->burble = 1;
            continue;
        }
        if (v == NULL)
            die("option '%s' needs a value (or is unknown; see --help)", a);
        i++;
        if (strcmp(a, "--input") == 0) {
            o->input = v;
        } else if (strcmp(a, "--weights") == 0) {
            o->weights = v;
        } else if (strcmp(a, "--output") == 0) {
            o->output = v;
        } else if (strcmp(a, "--nthreads") == 0) {
            o->nthreads = (int)parse_i64(a, v, 1, 1024);
        } else if (strcmp(a, "--vertices") == 0) {
            o->vertices = parse_i64(a, v, 1, INT64_MAX / 2);
        } else if (strcmp(a, "--root") == 0) {
            o->root = (strcmp(v, "maxdeg") == 0) ? -1 : parse_i64(a, v, 0, INT64_MAX / 2);
        } else if (strcmp(a, "--iters") == 0) {
            o->iters = (int)parse_i64(a, v, 1, 1000000);
        } else if (strcmp(a, "--delta") == 0) {
            char *end;

            errno = 0;
            o->delta = strtod(v, &end);
            if ((errno != 0) || (end == v) || (*end != '\0') || !(o->delta > 0.0) ||
                !isfinite(o->delta))
                die("--delta '%s': expected a number > 0", v);
        } else if (strcmp(a, "--tol") == 0) {
            char *end;

            errno = 0;
            o->tol = strtod(v, &end);
            if ((errno != 0) || (end == v) || (*end != '\0') || !(o->tol >= 0.0))
                die("--tol '%s': expected a number >= 0", v);
        } else {
            die("option '%s' unknown (see --help)", a);
        }
    }
    if (o->input == NULL)
        die("--input FILE.el is required");
    if (o->nthreads == 0)
        die("--nthreads T is required");
    if ((o->weights != NULL) && strcmp(o->app, "sssp"))
        die("--weights is for sssp only");
}

/* ------------------------------------------------------------ loading */

static void *read_whole(const char *path, size_t unit, size_t *count_p)
{
    FILE       *f = fopen(path, "rb");
    struct stat st;
    void       *buf;

    if (f == NULL)
        die("%s: cannot open: %s", path, strerror(errno));
    if ((fstat(fileno(f), &st) != 0) || !S_ISREG(st.st_mode))
        die("%s: not a regular file", path);
    if ((size_t)st.st_size % unit != 0)
        die("%s: size %lld bytes is not a multiple of %zu (truncated?)", path,
            (long long)st.st_size, unit);
    buf = malloc((size_t)st.st_size + unit);
    if (buf == NULL)
        die("%s: out of memory for %lld bytes", path, (long long)st.st_size);
    if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
        die("%s: short read", path);
    fclose(f);
    *count_p = (size_t)st.st_size / unit;
    return buf;
}

static void load(const opts_t *o, edges_t *el)
{
    size_t    npairs, nw;
    uint64_t *pairs = read_whole(o->input, 16, &npairs);
    uint64_t  maxid = 0;

    el->m = npairs;
    el->src = malloc((npairs + 1) * sizeof(uint64_t));
    el->dst = malloc((npairs + 1) * sizeof(uint64_t));
    if ((el->src == NULL) || (el->dst == NULL))
        die("%s: out of memory for %zu edges", o->input, npairs);
    for (size_t e = 0; e < npairs; e++) {
        el->src[e] = le64toh(pairs[2 * e]);
        el->dst[e] = le64toh(pairs[2 * e + 1]);
        if (el->src[e] > maxid)
            maxid = el->src[e];
        if (el->dst[e] > maxid)
            maxid = el->dst[e];
        if ((o->vertices >= 0) &&
            ((el->src[e] >= (uint64_t)o->vertices) || (el->dst[e] >= (uint64_t)o->vertices)))
            die("%s: byte offset %zu: edge %zu (%" PRIu64 " -> %" PRIu64
                ") has a vertex id >= --vertices %" PRId64,
                o->input, 16 * e, e, el->src[e], el->dst[e], o->vertices);
        if (maxid >= (uint64_t)1 << 48)
            die("%s: byte offset %zu: vertex id %" PRIu64 " too large (at most 2^48 - 1)",
                o->input, 16 * e, maxid);
    }
    free(pairs);
    el->n = (o->vertices >= 0) ? o->vertices : ((npairs > 0) ? (int64_t)maxid + 1 : 0);
    if (el->n == 0)
        die("%s: empty edge list and no --vertices N", o->input);
    el->w = NULL;
    if (o->weights != NULL) {
        uint32_t *raw = read_whole(o->weights, 4, &nw);

        if (nw != npairs)
            die("%s: %zu weights for %zu edges in %s (expected one float32 per edge)",
                o->weights, nw, npairs, o->input);
        el->w = malloc((npairs + 1) * sizeof(double));
        if (el->w == NULL)
            die("%s: out of memory", o->weights);
        for (size_t e = 0; e < nw; e++) {
            uint32_t bits = le32toh(raw[e]);
            float    x;

            memcpy(&x, &bits, sizeof(x));
            if (!(x >= 0.0f))
                die("%s: byte offset %zu: weight %g of edge %zu is negative or NaN "
                    "(SSSP accepts weights >= 0)", o->weights, 4 * e, (double)x, e);
            el->w[e] = (double)x;
        }
        free(raw);
    }
}

/* ----------------------------------------------------------- building */

/* The directed pattern (bool, iso) without self-loops. */
static GrB_Matrix build_pattern(const edges_t *el)
{
    GrB_Matrix A, C;
    GrB_Scalar one;

    TRY(GrB_Scalar_new(&one, GrB_BOOL));
    TRY(GrB_Scalar_setElement_BOOL(one, true));
    TRY(GrB_Matrix_new(&A, GrB_BOOL, (GrB_Index)el->n, (GrB_Index)el->n));
    TRY(GxB_Matrix_build_Scalar(A, el->src, el->dst, one, el->m));
    TRY(GrB_Matrix_new(&C, GrB_BOOL, (GrB_Index)el->n, (GrB_Index)el->n));
    TRY(GrB_Matrix_select_INT64(C, NULL, NULL, GrB_OFFDIAG, A, 0, NULL));
    GrB_free(&A);
    GrB_free(&one);
    return C;
}

/* The weighted directed matrix (double; the smallest of duplicate
 * weights, 1 without a weight file) without self-loops. */
static GrB_Matrix build_weighted(const edges_t *el)
{
    GrB_Matrix A, C;
    double    *w = el->w;

    if (w == NULL) {
        w = malloc((el->m + 1) * sizeof(*w));
        if (w == NULL)
            die("out of memory for the weights");
        for (GrB_Index e = 0; e < el->m; e++)
            w[e] = 1.0;
    }
    TRY(GrB_Matrix_new(&A, GrB_FP64, (GrB_Index)el->n, (GrB_Index)el->n));
    TRY(GrB_Matrix_build_FP64(A, el->src, el->dst, w, el->m, GrB_MIN_FP64));
    TRY(GrB_Matrix_new(&C, GrB_FP64, (GrB_Index)el->n, (GrB_Index)el->n));
    TRY(GrB_Matrix_select_INT64(C, NULL, NULL, GrB_OFFDIAG, A, 0, NULL));
    GrB_free(&A);
    if (w != el->w)
        free(w);
    return C;
}

/* S = A + A' (pattern). */
static GrB_Matrix symmetrize(GrB_Matrix A, int64_t n)
{
    GrB_Matrix S;

    TRY(GrB_Matrix_new(&S, GrB_BOOL, (GrB_Index)n, (GrB_Index)n));
    TRY(GrB_Matrix_eWiseAdd_BinaryOp(S, NULL, NULL, GrB_LOR, A, A, GrB_DESC_T1));
    return S;
}

/* d(v) = the number of distinct neighbours of v in S (absent when 0). */
static GrB_Vector degrees(GrB_Matrix S, int64_t n)
{
    GrB_Vector d;

    TRY(GrB_Vector_new(&d, GrB_INT64, (GrB_Index)n));
    TRY(GrB_Matrix_reduce_Monoid(d, NULL, NULL, GrB_PLUS_MONOID_INT64, S, NULL));
    return d;
}

/* The vertex of largest degree, the smallest id on ties. */
static int64_t maxdeg_root(GrB_Vector d, int64_t n)
{
    GrB_Index  nv = (GrB_Index)n;
    GrB_Index *I = malloc(((size_t)n + 1) * sizeof(*I));
    int64_t   *X = malloc(((size_t)n + 1) * sizeof(*X));
    int64_t    best = 0, bestdeg = -1;

    if ((I == NULL) || (X == NULL))
        die("out of memory");
    TRY(GrB_Vector_extractTuples_INT64(I, X, &nv, d));
    for (GrB_Index k = 0; k < nv; k++) {
        if ((X[k] > bestdeg) || ((X[k] == bestdeg) && ((int64_t)I[k] < best))) {
            best = (int64_t)I[k];
            bestdeg = X[k];
        }
    }
    free(I);
    free(X);
    return best;
}

/* ---------------------------------------------------------- utilities */

/* The values of a vector at every index (absent entries get @a absent). */
static double *dense_fp64(GrB_Vector v, int64_t n, double absent)
{
    GrB_Index  nv = (GrB_Index)n;
    GrB_Index *I = malloc(((size_t)n + 1) * sizeof(*I));
    double    *X = malloc(((size_t)n + 1) * sizeof(*X));
    double    *out = malloc(((size_t)n + 1) * sizeof(*out));

    if ((I == NULL) || (X == NULL) || (out == NULL))
        die("out of memory");
    TRY(GrB_Vector_extractTuples_FP64(I, X, &nv, v));
    for (int64_t i = 0; i < n; i++)
        out[i] = absent;
    for (GrB_Index k = 0; k < nv; k++)
        out[I[k]] = X[k];
    free(I);
    free(X);
    return out;
}

static int64_t *dense_int64(GrB_Vector v, int64_t n, int64_t absent)
{
    GrB_Index  nv = (GrB_Index)n;
    GrB_Index *I = malloc(((size_t)n + 1) * sizeof(*I));
    int64_t   *X = malloc(((size_t)n + 1) * sizeof(*X));
    int64_t   *out = malloc(((size_t)n + 1) * sizeof(*out));

    if ((I == NULL) || (X == NULL) || (out == NULL))
        die("out of memory");
    TRY(GrB_Vector_extractTuples_INT64(I, X, &nv, v));
    for (int64_t i = 0; i < n; i++)
        out[i] = absent;
    for (GrB_Index k = 0; k < nv; k++)
        out[I[k]] = X[k];
    free(I);
    free(X);
    return out;
}

static void write_out(const char *path, const void *a, size_t alen,
                      const void *b, size_t blen)
{
    FILE *f;

    if (path == NULL)
        return;
    f = fopen(path, "wb");
    if ((f == NULL) || (fwrite(a, 1, alen, f) != alen) ||
        ((b != NULL) && (fwrite(b, 1, blen, f) != blen)) || (fclose(f) != 0))
        die("%s: cannot write the result: %s", path, strerror(errno));
}

/* ----------------------------------------------------------- PageRank */

static void run_pagerank(const opts_t *o, const edges_t *el, double load_s)
{
    double     t0 = now(), t1, t2, c1, c2, sum = 0.0, max = 0.0, *rank;
    int64_t    n = el->n;
    GrB_Matrix A = build_pattern(el), AT;
    GrB_Vector d, r, rnew, w, t, diff;
    int        it;

    /* d(u) = out-degree (entries only where it is > 0) and AT. */
    TRY(GrB_Vector_new(&d, GrB_FP64, (GrB_Index)n));
    TRY(GrB_Matrix_reduce_Monoid(d, NULL, NULL, GrB_PLUS_MONOID_FP64, A, NULL));
    TRY(GrB_Matrix_new(&AT, GrB_BOOL, (GrB_Index)n, (GrB_Index)n));
    TRY(GrB_transpose(AT, NULL, NULL, A, NULL));
    TRY(GrB_Vector_new(&r, GrB_FP64, (GrB_Index)n));
    TRY(GrB_Vector_new(&rnew, GrB_FP64, (GrB_Index)n));
    TRY(GrB_Vector_new(&w, GrB_FP64, (GrB_Index)n));
    TRY(GrB_Vector_new(&t, GrB_FP64, (GrB_Index)n));
    TRY(GrB_Vector_new(&diff, GrB_FP64, (GrB_Index)n));
    TRY(GrB_Vector_wait(d, GrB_MATERIALIZE));
    TRY(GrB_Matrix_wait(AT, GrB_MATERIALIZE));
    t1 = now();
    c1 = cpu_now();

    TRY(GrB_Vector_assign_FP64(r, NULL, NULL, 1.0, GrB_ALL, (GrB_Index)n, NULL));
    for (it = 0; it < o->iters;) {
        /* w = r ./ d where d exists: dangling vertices give nothing. */
        TRY(GrB_Vector_eWiseMult_BinaryOp(w, NULL, NULL, GrB_DIV_FP64, r, d, NULL));
        /* t(v) = sum over in-neighbours u of w(u). */
        TRY(GrB_mxv(t, NULL, NULL, GxB_PLUS_SECOND_FP64, AT, w, NULL));
        /* rnew = 0.15 + 0.85 t */
        TRY(GrB_Vector_assign_FP64(rnew, NULL, NULL, 0.15, GrB_ALL, (GrB_Index)n, NULL));
        TRY(GrB_Vector_apply_BinaryOp2nd_FP64(t, NULL, NULL, GrB_TIMES_FP64, t, 0.85, NULL));
        TRY(GrB_Vector_assign(rnew, NULL, GrB_PLUS_FP64, t, GrB_ALL, (GrB_Index)n, NULL));
        it++;
        if (o->tol > 0.0) {
            double delta = 0.0;

            TRY(GrB_Vector_eWiseAdd_BinaryOp(diff, NULL, NULL, GrB_MINUS_FP64, rnew, r, NULL));
            TRY(GrB_Vector_apply(diff, NULL, NULL, GrB_ABS_FP64, diff, NULL));
            TRY(GrB_Vector_reduce_FP64(&delta, NULL, GrB_MAX_MONOID_FP64, diff, NULL));
            GrB_Vector tmp = r;

            r = rnew;
            rnew = tmp;
            if (delta < o->tol)
                break;
        } else {
            GrB_Vector tmp = r;

            r = rnew;
            rnew = tmp;
        }
    }
    TRY(GrB_Vector_wait(r, GrB_MATERIALIZE));
    t2 = now();
    c2 = cpu_now();

    rank = dense_fp64(r, n, NAN);
    for (int64_t v = 0; v < n; v++) {
        sum += rank[v];
        if ((v == 0) || (rank[v] > max))
            max = rank[v];
    }
    write_out(o->output, rank, (size_t)n * sizeof(*rank), NULL, 0);
    printf("graph app=pagerank system=graphblas threads=%d vertices=%" PRId64
           " edges=%" PRIu64 " load_s=%.6f build_s=%.6f run_s=%.6f run_cpu_s=%.6f iters=%d"
           " sum=%.15g max=%.15g\n",
           o->nthreads, n, el->m, load_s, t1 - t0, t2 - t1, c2 - c1, it, sum, max);
    free(rank);
    GrB_free(&A);
    GrB_free(&AT);
    GrB_free(&d);
    GrB_free(&r);
    GrB_free(&rnew);
    GrB_free(&w);
    GrB_free(&t);
    GrB_free(&diff);
}

/* ---------------------------------------------------------------- BFS */

static void run_bfs(const opts_t *o, const edges_t *el, double load_s)
{
    double     t0 = now(), t1, t2, c1, c2;
    int64_t    n = el->n, root, level = 0, nq = 1, nq_prev = 0, reached = 0, depth = 0;
    int64_t   *lv, *pa, mf, mu;
    GrB_Matrix A = build_pattern(el), S = symmetrize(A, n);
    GrB_Vector q, pi, lvl, deg, qdeg;
    GrB_Index  nnz;
    bool       push = true;

    GrB_free(&A);
    deg = degrees(S, n);
    root = (o->root >= 0) ? o->root : maxdeg_root(deg, n);
    if (root >= n)
        die("--root %" PRId64 ": not a vertex (0..%" PRId64 ")", root, n - 1);
    TRY(GrB_Matrix_nvals(&nnz, S));
    TRY(GrB_Matrix_wait(S, GrB_MATERIALIZE));
    TRY(GrB_Vector_wait(deg, GrB_MATERIALIZE));
    t1 = now();
    c1 = cpu_now();

    TRY(GrB_Vector_new(&q, GrB_INT64, (GrB_Index)n));
    TRY(GrB_Vector_new(&pi, GrB_INT64, (GrB_Index)n));
    TRY(GrB_Vector_new(&lvl, GrB_INT64, (GrB_Index)n));
    TRY(GrB_Vector_new(&qdeg, GrB_INT64, (GrB_Index)n));
    TRY(GxB_Vector_Option_set(pi, GxB_SPARSITY_CONTROL, GxB_BITMAP));
    TRY(GrB_Vector_setElement_INT64(q, root, (GrB_Index)root));
    TRY(GrB_Vector_setElement_INT64(pi, root, (GrB_Index)root));
    TRY(GrB_Vector_setElement_INT64(lvl, 0, (GrB_Index)root));
    /* Beamer's rule: mf, the edges out of the frontier; mu, the edges out
     * of unvisited vertices. */
    mf = 0;
    TRY(GrB_Vector_extractElement_INT64(&mf, deg, (GrB_Index)root));
    mu = (int64_t)nnz - mf;
    for (;;) {
        GrB_Index nqv;

        level++;
        /* Pull once the frontier's edges exceed 1/14 of the unexplored
         * ones; push again once the frontier shrinks below n / 24. */
        if (push && (mf > mu / 14))
            push = false;
        else if (!push && (nq < nq_prev) && (nq * 24 < n))
            push = true;
        nq_prev = nq;
        if (push) {
            TRY(GxB_Vector_Option_set(q, GxB_SPARSITY_CONTROL, GxB_SPARSE));
            /* q'(j) = any parent i in the frontier, over unvisited j. */
            TRY(GrB_vxm(q, pi, NULL, GxB_ANY_SECONDI_INT64, q, S, GrB_DESC_RSC));
        } else {
            TRY(GxB_Vector_Option_set(q, GxB_SPARSITY_CONTROL, GxB_BITMAP));
            /* Each unvisited i looks for any neighbour in the frontier. */
            TRY(GrB_mxv(q, pi, NULL, GxB_ANY_SECONDI_INT64, S, q, GrB_DESC_RSC));
        }
        TRY(GrB_Vector_nvals(&nqv, q));
        nq = (int64_t)nqv;
        if (nq == 0)
            break;
        depth = level;
        TRY(GrB_Vector_assign(pi, q, NULL, q, GrB_ALL, (GrB_Index)n, GrB_DESC_S));
        TRY(GrB_Vector_assign_INT64(lvl, q, NULL, level, GrB_ALL, (GrB_Index)n, GrB_DESC_S));
        TRY(GrB_Vector_eWiseMult_BinaryOp(qdeg, NULL, NULL, GrB_SECOND_INT64, q, deg, NULL));
        mf = 0;
        TRY(GrB_Vector_reduce_INT64(&mf, NULL, GrB_PLUS_MONOID_INT64, qdeg, NULL));
        mu -= mf;
    }
    TRY(GrB_Vector_wait(pi, GrB_MATERIALIZE));
    TRY(GrB_Vector_wait(lvl, GrB_MATERIALIZE));
    t2 = now();
    c2 = cpu_now();

    lv = dense_int64(lvl, n, -1);
    pa = dense_int64(pi, n, -1);
    for (int64_t v = 0; v < n; v++)
        reached += (lv[v] >= 0);
    write_out(o->output, lv, (size_t)n * sizeof(*lv), pa, (size_t)n * sizeof(*pa));
    printf("graph app=bfs system=graphblas threads=%d vertices=%" PRId64
           " edges=%" PRIu64 " load_s=%.6f build_s=%.6f run_s=%.6f run_cpu_s=%.6f iters=%" PRId64
           " root=%" PRId64 " reached=%" PRId64 " depth=%" PRId64 "\n",
           o->nthreads, n, el->m, load_s, t1 - t0, t2 - t1, c2 - c1, level, root, reached, depth);
    free(lv);
    free(pa);
    GrB_free(&S);
    GrB_free(&q);
    GrB_free(&pi);
    GrB_free(&lvl);
    GrB_free(&deg);
    GrB_free(&qdeg);
}

/* ----------------------------------------------------------------- CC */

static void run_cc(const opts_t *o, const edges_t *el, double load_s)
{
    double     t0 = now(), t1, t2, c1, c2;
    int64_t    n = el->n, comps = 0, largest = 0, *label, *size;
    GrB_Matrix A = build_pattern(el), S = symmetrize(A, n);
    GrB_Vector f, gp, gpnew, mngp, t, same;
    GrB_Index *fidx = malloc(((size_t)n + 1) * sizeof(*fidx));
    int64_t   *mx = malloc(((size_t)n + 1) * sizeof(*mx));
    int        it = 0;

    if ((fidx == NULL) || (mx == NULL))
        die("out of memory");
    GrB_free(&A);
    TRY(GrB_Matrix_wait(S, GrB_MATERIALIZE));
    t1 = now();
    c1 = cpu_now();

    /* f: the parent of each vertex, starting as itself; gp = f(f); mngp:
     * the smallest grandparent among the neighbours. */
    TRY(GrB_Vector_new(&f, GrB_INT64, (GrB_Index)n));
    TRY(GrB_Vector_new(&t, GrB_INT64, (GrB_Index)n));
    TRY(GrB_Vector_new(&same, GrB_BOOL, (GrB_Index)n));
    TRY(GrB_Vector_assign_INT64(f, NULL, NULL, 0, GrB_ALL, (GrB_Index)n, NULL));
    TRY(GrB_Vector_apply_IndexOp_INT64(f, NULL, NULL, GrB_ROWINDEX_INT64, f, 0, NULL));
    TRY(GrB_Vector_dup(&gp, f));
    TRY(GrB_Vector_dup(&gpnew, f));
    TRY(GrB_Vector_dup(&mngp, f));
    for (;;) {
        GrB_Index nv = (GrB_Index)n;
        bool      stable = false;

        it++;
        /* mngp(u) = min(mngp(u), min over neighbours v of gp(v)) */
        TRY(GrB_mxv(mngp, NULL, GrB_MIN_INT64, GxB_MIN_SECOND_INT64, S, gp, NULL));
        /* Stochastic hooking: f(f(u)) = min(f(f(u)), mngp(u)), the
         * duplicates of f(u) reduced by min through a build. */
        TRY(GrB_Vector_extractTuples_INT64(NULL, (int64_t *)fidx, &nv, f));
        TRY(GrB_Vector_extractTuples_INT64(NULL, mx, &nv, mngp));
        TRY(GrB_Vector_clear(t));
        TRY(GrB_Vector_build_INT64(t, fidx, mx, nv, GrB_MIN_INT64));
        TRY(GrB_Vector_assign(f, NULL, GrB_MIN_INT64, t, GrB_ALL, (GrB_Index)n, NULL));
        /* Aggressive hooking f = min(f, mngp), shortcutting f = min(f, gp). */
        TRY(GrB_Vector_assign(f, NULL, GrB_MIN_INT64, mngp, GrB_ALL, (GrB_Index)n, NULL));
        TRY(GrB_Vector_assign(f, NULL, GrB_MIN_INT64, gp, GrB_ALL, (GrB_Index)n, NULL));
        /* gpnew = f(f); done when the grandparents no longer change. */
        TRY(GrB_Vector_extractTuples_INT64(NULL, (int64_t *)fidx, &nv, f));
        TRY(GrB_Vector_extract(gpnew, NULL, NULL, f, fidx, nv, NULL));
        TRY(GrB_Vector_eWiseMult_BinaryOp(same, NULL, NULL, GrB_EQ_INT64, gpnew, gp, NULL));
        TRY(GrB_Vector_reduce_BOOL(&stable, NULL, GrB_LAND_MONOID_BOOL, same, NULL));
        GrB_Vector tmp = gp;

        gp = gpnew;
        gpnew = tmp;
        if (stable)
            break;
    }
    TRY(GrB_Vector_wait(f, GrB_MATERIALIZE));
    t2 = now();
    c2 = cpu_now();

    label = dense_int64(f, n, -1);
    size = calloc((size_t)n + 1, sizeof(*size));
    if (size == NULL)
        die("out of memory");
    for (int64_t v = 0; v < n; v++) {
        if ((label[v] < 0) || (label[v] >= n))
            die("cc: vertex %" PRId64 " has label %" PRId64 ", not a vertex", v, label[v]);
        size[label[v]]++;
    }
    for (int64_t v = 0; v < n; v++) {
        comps += (size[v] > 0);
        if (size[v] > largest)
            largest = size[v];
    }
    write_out(o->output, label, (size_t)n * sizeof(*label), NULL, 0);
    printf("graph app=cc system=graphblas threads=%d vertices=%" PRId64
           " edges=%" PRIu64 " load_s=%.6f build_s=%.6f run_s=%.6f run_cpu_s=%.6f iters=%d"
           " components=%" PRId64 " largest=%" PRId64 "\n",
           o->nthreads, n, el->m, load_s, t1 - t0, t2 - t1, c2 - c1, it, comps, largest);
    free(label);
    free(size);
    free(fidx);
    free(mx);
    GrB_free(&S);
    GrB_free(&f);
    GrB_free(&gp);
    GrB_free(&gpnew);
    GrB_free(&mngp);
    GrB_free(&t);
    GrB_free(&same);
}

/* --------------------------------------------------------------- SSSP */

/* Delta-stepping (Meyer and Sanders) in GraphBLAS terms: t holds every
 * tentative distance (INFINITY unreached); bucket i holds the vertices
 * with i*delta <= t < (i+1)*delta. Light edges (weight <= delta) are
 * relaxed from the bucket's frontier until the bucket stops changing;
 * then heavy edges once from every vertex the bucket held. Empty buckets
 * are skipped. Relaxations are min_plus products from a sparse frontier. */
static void run_sssp(const opts_t *o, const edges_t *el, double load_s)
{
    double     t0 = now(), t1, t2, c1, c2, sumdist = 0.0, *dist, delta = o->delta, maxw = 0.0;
    int64_t    n = el->n, root, reached = 0, it = 0, buckets = 0;
    GrB_Matrix A = build_weighted(el), AL, AH, P, S;
    GrB_Vector t, fr, req, better, s, tmp, deg;
    GrB_Index  nnz, nf;

    if (o->root >= 0) {
        root = o->root;
    } else {
        P = build_pattern(el);
        S = symmetrize(P, n);
        GrB_free(&P);
        deg = degrees(S, n);
        root = maxdeg_root(deg, n);
        GrB_free(&deg);
        GrB_free(&S);
    }
    if (root >= n)
        die("--root %" PRId64 ": not a vertex (0..%" PRId64 ")", root, n - 1);
    TRY(GrB_Matrix_nvals(&nnz, A));
    TRY(GrB_Matrix_reduce_FP64(&maxw, NULL, GrB_MAX_MONOID_FP64, A, NULL));
    /* Default delta: the largest weight over the average out-degree (one
     * light edge per vertex on average), as Meyer and Sanders suggest for
     * random weights. */
    if (delta <= 0.0)
        delta = (nnz > 0) ? maxw * (double)n / (double)nnz : 1.0;
    if (!(delta > 0.0))
        delta = 1.0;
    TRY(GrB_Matrix_new(&AL, GrB_FP64, (GrB_Index)n, (GrB_Index)n));
    TRY(GrB_Matrix_new(&AH, GrB_FP64, (GrB_Index)n, (GrB_Index)n));
    TRY(GrB_Matrix_select_FP64(AL, NULL, NULL, GrB_VALUELE_FP64, A, delta, NULL));
    TRY(GrB_Matrix_select_FP64(AH, NULL, NULL, GrB_VALUEGT_FP64, A, delta, NULL));
    GrB_free(&A);
    TRY(GrB_Matrix_wait(AL, GrB_MATERIALIZE));
    TRY(GrB_Matrix_wait(AH, GrB_MATERIALIZE));
    t1 = now();
    c1 = cpu_now();

    TRY(GrB_Vector_new(&t, GrB_FP64, (GrB_Index)n));
    TRY(GrB_Vector_new(&fr, GrB_FP64, (GrB_Index)n));
    TRY(GrB_Vector_new(&req, GrB_FP64, (GrB_Index)n));
    TRY(GrB_Vector_new(&tmp, GrB_FP64, (GrB_Index)n));
    TRY(GrB_Vector_new(&better, GrB_BOOL, (GrB_Index)n));
    TRY(GrB_Vector_new(&s, GrB_BOOL, (GrB_Index)n));
    TRY(GrB_Vector_assign_FP64(t, NULL, NULL, INFINITY, GrB_ALL, (GrB_Index)n, NULL));
    TRY(GrB_Vector_setElement_FP64(t, 0.0, (GrB_Index)root));
    for (double lo = 0.0; isfinite(lo);) {
        double hi = lo + delta, next = INFINITY;

        buckets++;
        /* The bucket: lo <= t < hi. */
        TRY(GrB_Vector_select_FP64(tmp, NULL, NULL, GrB_VALUEGE_FP64, t, lo, NULL));
        TRY(GrB_Vector_select_FP64(fr, NULL, NULL, GrB_VALUELT_FP64, tmp, hi, NULL));
        TRY(GrB_Vector_clear(s));
        TRY(GrB_Vector_nvals(&nf, fr));
        while (nf > 0) {
            it++;
            /* Remember the bucket's vertices for the heavy edges. */
            TRY(GrB_Vector_assign_BOOL(s, fr, NULL, true, GrB_ALL, (GrB_Index)n, GrB_DESC_S));
            /* Relax the light edges out of the frontier. */
            TRY(GrB_vxm(req, NULL, NULL, GrB_MIN_PLUS_SEMIRING_FP64, fr, AL, NULL));
            TRY(GrB_Vector_eWiseMult_BinaryOp(better, NULL, NULL, GrB_LT_FP64, req, t, NULL));
            TRY(GrB_Vector_apply(tmp, better, NULL, GrB_IDENTITY_FP64, req, GrB_DESC_R));
            TRY(GrB_Vector_assign(t, tmp, GrB_MIN_FP64, tmp, GrB_ALL, (GrB_Index)n, GrB_DESC_S));
            /* Those improved that stay in this bucket go again. */
            TRY(GrB_Vector_select_FP64(fr, NULL, NULL, GrB_VALUELT_FP64, tmp, hi, NULL));
            TRY(GrB_Vector_nvals(&nf, fr));
        }
        /* Heavy edges, once, from every vertex the bucket held. */
        TRY(GrB_Vector_apply(fr, s, NULL, GrB_IDENTITY_FP64, t, GrB_DESC_RS));
        TRY(GrB_vxm(req, NULL, NULL, GrB_MIN_PLUS_SEMIRING_FP64, fr, AH, NULL));
        TRY(GrB_Vector_assign(t, NULL, GrB_MIN_FP64, req, GrB_ALL, (GrB_Index)n, NULL));
        /* The next non-empty bucket. */
        TRY(GrB_Vector_select_FP64(tmp, NULL, NULL, GrB_VALUEGE_FP64, t, hi, NULL));
        TRY(GrB_Vector_reduce_FP64(&next, NULL, GrB_MIN_MONOID_FP64, tmp, NULL));
        lo = isfinite(next) ? floor(next / delta) * delta : INFINITY;
        if (isfinite(lo) && (lo < hi))
            lo = hi; /* rounding of floor(): never go back */
    }
    TRY(GrB_Vector_wait(t, GrB_MATERIALIZE));
    t2 = now();
    c2 = cpu_now();

    dist = dense_fp64(t, n, INFINITY);
    for (int64_t v = 0; v < n; v++) {
        if (isfinite(dist[v])) {
            reached++;
            sumdist += dist[v];
        }
    }
    write_out(o->output, dist, (size_t)n * sizeof(*dist), NULL, 0);
    printf("graph app=sssp system=graphblas threads=%d vertices=%" PRId64
           " edges=%" PRIu64 " load_s=%.6f build_s=%.6f run_s=%.6f run_cpu_s=%.6f iters=%" PRId64
           " buckets=%" PRId64 " delta=%.6g root=%" PRId64 " reached=%" PRId64
           " sumdist=%.15g\n",
           o->nthreads, n, el->m, load_s, t1 - t0, t2 - t1, c2 - c1, it, buckets, delta, root,
           reached, sumdist);
    free(dist);
    GrB_free(&AL);
    GrB_free(&AH);
    GrB_free(&t);
    GrB_free(&fr);
    GrB_free(&req);
    GrB_free(&tmp);
    GrB_free(&better);
    GrB_free(&s);
}

int main(int argc, char **argv)
{
    opts_t  o;
    edges_t el;
    double  t0, load_s;

    parse(argc, argv, &o);
    TRY(GrB_init(GrB_NONBLOCKING));
    TRY(GxB_Global_Option_set(GxB_NTHREADS, o.nthreads));
    TRY(GxB_Global_Option_set(GxB_BURBLE, (bool)o.burble));
    t0 = now();
    load(&o, &el);
    load_s = now() - t0;
    if ((o.root >= 0) && (o.root >= el.n))
        die("--root %" PRId64 ": not a vertex (0..%" PRId64 ")", o.root, el.n - 1);
    if (strcmp(o.app, "pagerank") == 0)
        run_pagerank(&o, &el, load_s);
    else if (strcmp(o.app, "bfs") == 0)
        run_bfs(&o, &el, load_s);
    else if (strcmp(o.app, "cc") == 0)
        run_cc(&o, &el, load_s);
    else
        run_sssp(&o, &el, load_s);
    free(el.src);
    free(el.dst);
    free(el.w);
    TRY(GrB_finalize());
    return (fflush(stdout) == 0) ? 0 : 1;
}
