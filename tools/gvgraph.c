/* gvgraph: run a graph application on a generated or loaded graph.
 *
 *   gvrun -n 2 build/bin/gvgraph pagerank|bfs|cc|sssp|bfs500|ccnative
 *       --kron S [--ef 16] [--seed N] | --input FILE.el [--weights FILE.w]
 *       [--vertices N] | --text FILE | --mtx FILE
 *       [--root maxdeg|N] [--roots K] [--iters N] [--tol X]
 *       [--engine vertex|linalg] [--placement hash|block] [--output FILE]
 *       [--verbose]
 *
 * The last line (rank 0, stdout) is
 *   graph app=... ranks=... transport=... engine=... amo=... vertices=...
 *   edges=... load_s=... build_s=... run_s=... iters=... <check fields>
 * with the check fields of each application (PageRank sum= max=; BFS
 * reached= depth=; CC components= largest=; SSSP reached= sumdist=).
 * SPDX-License-Identifier: BSD-3-Clause */
#include <grapevine.h>
#include <grapevine/fw/graph.h>
#include <grapevine/fw/linalg.h>
#include <grapevine/fw/vertex.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum {
    APP_PR, APP_BFS, APP_CC, APP_SSSP, APP_BFS500, APP_CCNATIVE, NAPPS
} app_t;
static const char *const app_names[] = {"pagerank", "bfs", "cc", "sssp",
                                        "bfs500", "ccnative"};

typedef struct opts {
    app_t       app;
    int         kron;      /* scale, or -1 */
    int64_t     ef;
    uint64_t    seed;
    const char *input, *weights, *text, *mtx, *output;
    int64_t     vertices;  /* binary input: declared count, or auto */
    int64_t     root;      /* -1: maxdeg */
    int         roots;     /* bfs500: searches */
    int         iters;
    double      tol;
    double      delta;     /* sssp: bucket width, 0 auto, < 0 none */
    int         delta_set;
    int         linalg;        /* --engine linalg */
    int         placement_set; /* --placement given */
    int         verbose;
    int         roots_set, tol_set;
    gv_graph_placement_t placement;
} opts_t;

static opts_t O;
static int    failed; /* this rank saw an error */

static void usage(FILE *f)
{
    fprintf(f,
"usage: gvrun -n P gvgraph pagerank|bfs|cc|sssp|bfs500|ccnative GRAPH [opts]\n"
"  cc: label propagation through the engine; ccnative: union-find within\n"
"  ranks and label exchange across them; bfs500: the Graph500 BFS with\n"
"  direction optimisation, validated, TEPS over --roots searches\n"
"GRAPH, one of:\n"
"  --kron S [--ef 16] [--seed 1]   Graph500 Kronecker graph of 2^S vertices\n"
"                                  (weighted uniform (0,1] for sssp)\n"
"  --input FILE.el [--weights FILE.w] [--vertices N]\n"
"                                  binary uint64 pairs, float32 weights\n"
"  --text FILE                     SNAP text: 'src dst [weight]' lines\n"
"  --mtx FILE                      Matrix Market coordinate file\n"
"options:\n"
"  --root maxdeg|N   BFS, SSSP, BFS500 root (default maxdeg: the vertex with\n"
"                    the most distinct undirected neighbours)\n"
"  --roots K         bfs500: searches (the root, then K-1 pseudo-random\n"
"                    vertices with edges; default 8), TEPS harmonic mean\n"
"  --iters N         PageRank sweeps (default 20; 0: until --tol); the\n"
"                    other applications run to the end and ignore it\n"
"  --tol X           PageRank: stop after a sweep whose largest change is\n"
"                    below X (default 0: all sweeps)\n"
"  --delta X         sssp: delta-stepping's bucket width (0: the largest\n"
"                    weight / the average out-degree); below 0 (the\n"
"                    default, measured faster here): Bellman-Ford\n"
"  --engine vertex|linalg  the engine: vertex-centric (default) or linear\n"
"                    algebra (2D tiles, Broadcast/Combine/Apply: pagerank,\n"
"                    bfs, cc, sssp)\n"
"  --placement hash|block  vertex placement of the vertex engine (default\n"
"                    hash)\n"
"  --output FILE     per-vertex results, indexed by vertex id: binary\n"
"                    little-endian (float64 ranks or distances, int64\n"
"                    labels, BFS levels then parents), or text 'id value'\n"
"                    lines if FILE ends in .txt\n"
"  --verbose         per-superstep statistics on stderr\n");
}

/* Argument errors are found alike on every rank: rank 0 says so. */
static void bad_arg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void bad_arg(const char *fmt, ...)
{
    va_list ap;

    if (gv_rank() == 0) {
        fprintf(stderr, "gvgraph: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, " (see gvgraph --help)\n");
    }
    gv_finalize();
    exit(1);
}

static int64_t parse_int(const char *opt, const char *s, int64_t lo,
                         int64_t hi)
{
    char     *end;
    long long v;

    errno = 0;
    v     = strtoll(s, &end, 10);
    if ((errno != 0) || (end == s) || (*end != '\0') || (v < lo) || (v > hi))
        bad_arg("%s '%s': expected an integer in %lld..%lld", opt, s,
                (long long)lo, (long long)hi);
    return v;
}

static void parse(int argc, char **argv)
{
    int i, sources = 0;

    O = (opts_t){.kron = -1, .ef = 16, .seed = 1, .vertices = -1,
                 .root = -1, .roots = 8, .iters = 20, .delta = -1};
    if (argc < 2)
        bad_arg("an application is required: pagerank, bfs, cc, sssp, bfs500 "
                "or ccnative");
    for (i = 0; i < NAPPS; i++)
        if (strcmp(argv[1], app_names[i]) == 0)
            break;
    if (i == NAPPS)
        bad_arg("application '%s' unknown: expected pagerank, bfs, cc, sssp, "
                "bfs500 or ccnative", argv[1]);
    O.app = (app_t)i;
    for (i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;

        if (strcmp(a, "--verbose") == 0) {
            O.verbose = 1;
            continue;
        }
        if (strncmp(a, "--", 2) != 0)
            bad_arg("unexpected argument '%s'", a);
        if (v == NULL)
            bad_arg("option '%s' needs a value (or is unknown)", a);
        i++;
        if (strcmp(a, "--kron") == 0) {
            O.kron = (int)parse_int(a, v, 1, 40);
            sources++;
        } else if (strcmp(a, "--ef") == 0) {
            O.ef = parse_int(a, v, 1, 1 << 20);
        } else if (strcmp(a, "--seed") == 0) {
            O.seed = (uint64_t)parse_int(a, v, 0, INT64_MAX);
        } else if (strcmp(a, "--input") == 0) {
            O.input = v;
            sources++;
        } else if (strcmp(a, "--weights") == 0) {
            O.weights = v;
        } else if (strcmp(a, "--vertices") == 0) {
            O.vertices = parse_int(a, v, 1, INT64_MAX / 4);
        } else if (strcmp(a, "--text") == 0) {
            O.text = v;
            sources++;
        } else if (strcmp(a, "--mtx") == 0) {
            O.mtx = v;
            sources++;
        } else if (strcmp(a, "--root") == 0) {
            O.root = (strcmp(v, "maxdeg") == 0)
                         ? -1 : parse_int(a, v, 0, INT64_MAX / 4);
        } else if (strcmp(a, "--roots") == 0) {
            O.roots     = (int)parse_int(a, v, 1, 1 << 16);
            O.roots_set = 1;
        } else if (strcmp(a, "--iters") == 0) {
            O.iters = (int)parse_int(a, v, 0, 1 << 24);
        } else if (strcmp(a, "--tol") == 0) {
            char *end;

            errno = 0;
            O.tol = strtod(v, &end);
            if ((errno != 0) || (end == v) || (*end != '\0') || !(O.tol >= 0) ||
                isinf(O.tol))
                bad_arg("--tol '%s': expected a finite number >= 0", v);
            O.tol_set = 1;
        } else if (strcmp(a, "--delta") == 0) {
            char *end;

            errno   = 0;
            O.delta = strtod(v, &end);
            if ((errno != 0) || (end == v) || (*end != '\0') ||
                isnan(O.delta) || isinf(O.delta))
                bad_arg("--delta '%s': expected a number (0: auto, below 0: "
                        "Bellman-Ford)", v);
            O.delta_set = 1;
        } else if (strcmp(a, "--engine") == 0) {
            if (strcmp(v, "linalg") == 0)
                O.linalg = 1;
            else if (strcmp(v, "vertex") == 0)
                O.linalg = 0;
            else
                bad_arg("--engine '%s' unknown: expected vertex or linalg",
                        v);
        } else if (strcmp(a, "--placement") == 0) {
            O.placement_set = 1;
            if (strcmp(v, "hash") == 0)
                O.placement = GV_GRAPH_HASH;
            else if (strcmp(v, "block") == 0)
                O.placement = GV_GRAPH_BLOCK;
            else
                bad_arg("--placement '%s' unknown: expected hash or block", v);
        } else if (strcmp(a, "--output") == 0) {
            O.output = v;
        } else {
            bad_arg("option '%s' unknown", a);
        }
    }
    if ((O.app != APP_BFS500) && O.roots_set)
        bad_arg("--roots is for bfs500");
    if ((O.app != APP_SSSP) && O.delta_set)
        bad_arg("--delta is for sssp");
    if ((O.app != APP_PR) && O.tol_set)
        bad_arg("--tol is for pagerank");
    if ((O.weights != NULL) && (O.app != APP_SSSP))
        bad_arg("--weights is for sssp (the other applications read the "
                "graph unweighted)");
    if (sources != 1)
        bad_arg("give exactly one graph: --kron S, --input FILE, --text FILE "
                "or --mtx FILE");
    if ((O.weights != NULL) && (O.input == NULL))
        bad_arg("--weights goes with --input (text and Matrix Market files "
                "carry their weights in the lines)");
    if ((O.vertices >= 0) && (O.input == NULL) && (O.text == NULL))
        bad_arg("--vertices goes with --input or --text");
    if (O.linalg && ((O.app == APP_BFS500) || (O.app == APP_CCNATIVE)))
        bad_arg("%s is written natively on the vertex engine's graph: "
                "--engine linalg runs pagerank, bfs, cc and sssp",
                app_names[O.app]);
    if (O.linalg && O.placement_set)
        bad_arg("--placement is the vertex engine's: the linalg engine tiles "
                "contiguous id ranges");
    if (O.linalg && O.delta_set)
        bad_arg("--delta is the vertex engine's: the linalg engine's sssp is "
                "Bellman-Ford by min-plus products");
    if ((O.app == APP_PR) && (O.iters == 0) && (O.tol == 0))
        bad_arg("pagerank with --iters 0 needs a --tol above 0");
}

/* ---- output -------------------------------------------------------------- */

/* Collective: the per-vertex values of every rank as one dense array on
 * every rank (chunked all-reductions of disjoint entries). */
/* Where this rank's results are: the vertex engine's local vertices of a
 * graph, or the linalg engine's segment lo .. lo + nlocal - 1. */
typedef struct where {
    const gv_graph_t *g; /* NULL: a segment */
    int64_t           nverts, nlocal, lo;
} where_t;

static int64_t where_id(const where_t *w, int64_t i)
{
    return (w->g != NULL) ? gv_graph_global(w->g, i) : w->lo + i;
}

static int64_t *dense_i64(const where_t *g, const int64_t *local)
{
    int64_t *d = calloc((size_t)(g->nverts > 0 ? g->nverts : 1), 8);

    if (d == NULL)
        gv_abort(1, "gvgraph: out of memory for %lld results",
                 (long long)g->nverts);
    for (int64_t i = 0; i < g->nlocal; i++)
        d[where_id(g, i)] = local[i];
    for (int64_t k = 0; k < g->nverts; k += 1 << 17) {
        int64_t c = (g->nverts - k < (1 << 17)) ? g->nverts - k : (1 << 17);

        if (gv_allreduce(d + k, (size_t)c, GV_INT64, GV_SUM) != GV_OK)
            gv_abort(1, "gvgraph: gathering the results failed");
    }
    return d;
}

static double *dense_f64(const where_t *g, const double *local)
{
    double *d = calloc((size_t)(g->nverts > 0 ? g->nverts : 1), 8);

    if (d == NULL)
        gv_abort(1, "gvgraph: out of memory for %lld results",
                 (long long)g->nverts);
    for (int64_t i = 0; i < g->nlocal; i++)
        d[where_id(g, i)] = local[i];
    for (int64_t k = 0; k < g->nverts; k += 1 << 17) {
        int64_t c = (g->nverts - k < (1 << 17)) ? g->nverts - k : (1 << 17);

        if (gv_allreduce(d + k, (size_t)c, GV_DOUBLE, GV_SUM) != GV_OK)
            gv_abort(1, "gvgraph: gathering the results failed");
    }
    return d;
}

/* Collective: write one or two per-vertex arrays (rank 0 writes). */
static void write_output(const where_t *g, const int64_t *i1,
                         const int64_t *i2, const double *f1)
{
    int64_t *a = NULL, *b = NULL;
    double  *x = NULL;
    size_t   len = strlen(O.output);
    int      text = (len > 4) && (strcmp(O.output + len - 4, ".txt") == 0);
    int      ok = 1;

    if (i1 != NULL)
        a = dense_i64(g, i1);
    if (i2 != NULL)
        b = dense_i64(g, i2);
    if (f1 != NULL)
        x = dense_f64(g, f1);
    if (gv_rank() == 0) {
        FILE *f = fopen(O.output, text ? "w" : "wb");

        if (f == NULL) {
            fprintf(stderr, "gvgraph: %s: cannot open for writing: %s\n",
                    O.output, strerror(errno));
            ok = 0;
        } else {
            int64_t n = g->nverts;

            if (text) {
                for (int64_t v = 0; v < n; v++) {
                    if (x != NULL)
                        fprintf(f, "%lld %.17g\n", (long long)v, x[v]);
                    else if (b != NULL)
                        fprintf(f, "%lld %lld %lld\n", (long long)v,
                                (long long)a[v], (long long)b[v]);
                    else
                        fprintf(f, "%lld %lld\n", (long long)v,
                                (long long)a[v]);
                }
            } else {
                if (x != NULL)
                    ok &= fwrite(x, 8, (size_t)n, f) == (size_t)n;
                if (a != NULL)
                    ok &= fwrite(a, 8, (size_t)n, f) == (size_t)n;
                if (b != NULL)
                    ok &= fwrite(b, 8, (size_t)n, f) == (size_t)n;
            }
            ok &= !ferror(f);
            if ((fclose(f) != 0) || !ok) {
                fprintf(stderr, "gvgraph: %s: write failed\n", O.output);
                ok = 0;
            }
        }
    }
    if (!ok)
        failed = 1;
    free(a);
    free(b);
    free(x);
}

/* ---- the run -------------------------------------------------------------- */

static void check(gv_status_t st, const char *what)
{
    int64_t bad = (st != GV_OK);

    /* Agree: a failure anywhere ends the run everywhere. */
    if (gv_allreduce(&bad, 1, GV_INT64, GV_MAX) != GV_OK)
        bad = 1;
    if (bad) {
        if (gv_rank() == 0)
            fprintf(stderr, "gvgraph: %s failed%s%s\n", what,
                    (st != GV_OK) ? ": " : "",
                    (st != GV_OK) ? gv_status_str(st) : "");
        gv_barrier();
        gv_finalize();
        exit(1);
    }
}

/* CPU seconds of this process (to see how much of a shared machine a run
 * had). */
static double cpu_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Collective: the common fields; @a cpu is this rank's CPU seconds of the
 * algorithm, summed over the ranks. */
static void head(int64_t nverts, const gv_edgelist_t *el, double load_s,
                 double build_s, double run_s, double cpu, int iters)
{
    check(gv_allreduce(&cpu, 1, GV_DOUBLE, GV_SUM), "a reduction");
    if (gv_rank() != 0)
        return;
    printf("graph app=%s ranks=%d transport=%s engine=%s amo=%s "
           "vertices=%" PRId64 " edges=%" PRId64 " load_s=%.6f build_s=%.6f "
           "run_s=%.6f run_cpu_s=%.6f iters=%d", app_names[O.app],
           gv_nranks(), gv_transport_name(), O.linalg ? "linalg" : "vertex",
           gv_dsm_amo_native() ? "native" : "am", nverts, el->total,
           load_s, build_s, run_s, cpu, iters);
}

/* Collective: the check fields of the last line, from this rank's results
 * (@a f: PageRank ranks or SSSP distances; @a a: BFS levels or labels). */
static void fields(const where_t *w, int64_t root, const double *f,
                   const int64_t *a)
{
    if (O.app == APP_PR) {
        double *d = dense_f64(w, f), sm = 0, mx = -INFINITY;

        /* summed in id order: the same digits whatever the engine and the
         * number of ranks, for the same per-vertex values */
        for (int64_t v = 0; v < w->nverts; v++) {
            sm += d[v];
            mx = (d[v] > mx) ? d[v] : mx;
        }
        free(d);
        if (gv_rank() == 0)
            printf(" sum=%.15g max=%.15g\n", sm, mx);
    } else if (O.app == APP_BFS) {
        int64_t r[2] = {0, -1};

        for (int64_t i = 0; i < w->nlocal; i++) {
            r[0] += (a[i] >= 0);
            r[1] = (a[i] > r[1]) ? a[i] : r[1];
        }
        check(gv_allreduce(&r[0], 1, GV_INT64, GV_SUM), "a reduction");
        check(gv_allreduce(&r[1], 1, GV_INT64, GV_MAX), "a reduction");
        if (gv_rank() == 0)
            printf(" root=%lld reached=%lld depth=%lld\n",
                   (long long)root, (long long)r[0], (long long)r[1]);
    } else if ((O.app == APP_CC) || (O.app == APP_CCNATIVE)) {
        int64_t *cnt = calloc((size_t)(w->nverts > 0 ? w->nverts : 1), 8);
        int64_t  comps = 0, largest = 0;

        if (cnt == NULL)
            gv_abort(1, "gvgraph: out of memory");
        for (int64_t i = 0; i < w->nlocal; i++)
            cnt[a[i]]++;
        for (int64_t k = 0; k < w->nverts; k += 1 << 17) {
            int64_t c = (w->nverts - k < (1 << 17)) ? w->nverts - k
                                                    : (1 << 17);

            check(gv_allreduce(cnt + k, (size_t)c, GV_INT64, GV_SUM),
                  "a reduction");
        }
        for (int64_t v = 0; v < w->nverts; v++) {
            comps += (cnt[v] > 0);
            largest = (cnt[v] > largest) ? cnt[v] : largest;
        }
        if (gv_rank() == 0)
            printf(" components=%lld largest=%lld\n", (long long)comps,
                   (long long)largest);
        free(cnt);
    } else {
        double *d = dense_f64(w, f), sd = 0;
        int64_t reached = 0;

        for (int64_t v = 0; v < w->nverts; v++) { /* in id order */
            if (isfinite(d[v])) {
                reached++;
                sd += d[v];
            }
        }
        free(d);
        if (gv_rank() == 0)
            printf(" root=%lld reached=%lld sumdist=%.15g\n",
                   (long long)root, (long long)reached, sd);
    }
}

static int64_t pick_root(const gv_graph_t *g)
{
    int64_t r = O.root;

    if (r < 0)
        check(gv_vx_root_maxdeg(g, &r), "finding the maxdeg root");
    else if (r >= g->nverts) {
        if (gv_rank() == 0)
            fprintf(stderr, "gvgraph: --root %lld is not a vertex (the graph "
                    "has %lld)\n", (long long)r, (long long)g->nverts);
        gv_barrier();
        gv_finalize();
        exit(1);
    }
    return r;
}

static void run_bfs500(gv_graph_t *g, gv_edgelist_t *el, double load_s,
                       double build_s, gv_vx_opts_t *vo)
{
    int64_t *parent = malloc((size_t)(g->nlocal > 0 ? g->nlocal : 1) * 8);
    int64_t *deg    = malloc((size_t)(g->nverts > 0 ? g->nverts : 1) * 8);
    int64_t  root   = pick_root(g), first_root = root, first_reached = 0;
    int64_t  first_depth = -1;
    double   sum_inv = 0, sum_t = 0, sum_cpu = 0;
    uint64_t s       = O.seed * 0x9E3779B97F4A7C15ull + 7;
    int      levels  = 0;

    if ((parent == NULL) || (deg == NULL))
        gv_abort(1, "gvgraph: out of memory");
    check(gv_graph_degrees_all(g, GV_GRAPH_OUT, deg), "gathering degrees");
    for (int k = 0; k < O.roots; k++) {
        gv_vx_stats_t st;
        int64_t       edges = 0, depth = -1, reached = 0;
        double        t0, t;

        if (k > 0) { /* a pseudo-random vertex with edges */
            int tries = 0;

            do {
                uint64_t z = (s += 0x9E3779B97F4A7C15ull);

                z    = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
                z    = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
                root = (int64_t)((z ^ (z >> 31)) % (uint64_t)g->nverts);
            } while ((deg[root] == 0) && (++tries < 1000000));
        }
        double c0;

        check(gv_coll_barrier(), "a barrier");
        c0 = cpu_s();
        t0 = gv_wtime();
        check(gv_bfs500(g, root, parent, vo, &st), "bfs500");
        t = gv_wtime() - t0;
        sum_cpu += cpu_s() - c0;
        check(gv_allreduce(&t, 1, GV_DOUBLE, GV_MAX), "a reduction");
        check(gv_bfs500_validate(g, root, parent, &edges, &depth),
              "the Graph500 validation");
        for (int64_t i = 0; i < g->nlocal; i++)
            reached += (parent[i] != -1);
        check(gv_allreduce(&reached, 1, GV_INT64, GV_SUM), "a reduction");
        if (k == 0) {
            first_reached = reached;
            first_depth   = depth;
            levels        = st.steps;
            if (O.output != NULL)
            {
                where_t w = {g, g->nverts, g->nlocal, 0};

                write_output(&w, parent, NULL, NULL);
            }
        }
        sum_t += t;
        if (edges > 0)
            sum_inv += t / (double)edges;
        if (O.verbose && (gv_rank() == 0))
            fprintf(stderr, "bfs500 root=%lld levels=%d reached=%lld "
                    "edges=%lld seconds=%.6f teps=%.4g valid=yes\n",
                    (long long)root, st.steps, (long long)reached,
                    (long long)edges, t, (t > 0) ? (double)edges / t : 0.0);
        gv_vx_stats_free(&st);
    }
    head(g->nverts, el, load_s, build_s, sum_t / O.roots, sum_cpu / O.roots,
         levels);
    if (gv_rank() == 0)
        printf(" root=%lld reached=%lld depth=%lld roots=%d valid=%d "
               "teps_hmean=%.6g\n", (long long)first_root,
               (long long)first_reached, (long long)first_depth, O.roots,
               O.roots, (sum_inv > 0) ? O.roots / sum_inv : 0.0);
    free(parent);
    free(deg);
}

/* The linear-algebra engine: tiles instead of a graph, the same
 * applications, options and last line. */
static void run_linalg(gv_edgelist_t *el, double load_s)
{
    gv_la_matrix_t A;
    gv_la_opts_t   lo = {.verbose = O.verbose};
    gv_la_stats_t  st = {0};
    gv_status_t    rc;
    int      undirected = (O.app == APP_BFS) || (O.app == APP_CC);
    unsigned flags = undirected ? GV_GRAPH_UNDIRECTED_SIMPLE
                                : GV_GRAPH_DIRECTED_SIMPLE;
    int64_t  root = -1;
    double   t0, c0, build_s, run_s;
    double  *f = NULL;
    int64_t *a = NULL, *b = NULL;
    int      iters = 0;
    size_t   n;

    if (O.app != APP_SSSP)
        flags |= GV_GRAPH_UNWEIGHTED;
    check(gv_coll_barrier(), "a barrier");
    t0 = gv_wtime();
    check(gv_la_build(el, flags, &A), "building the tiles");
    check(gv_coll_barrier(), "a barrier");
    build_s = gv_wtime() - t0;
    if ((O.app == APP_BFS) || (O.app == APP_SSSP)) {
        root = O.root;
        if ((root < 0) && (O.app == APP_BFS))
            check(gv_la_matrix_root_maxdeg(&A, &root),
                  "finding the maxdeg root");
        else if (root < 0)
            check(gv_la_root_maxdeg(el, &root), "finding the maxdeg root");
        else if (root >= A.n) {
            if (gv_rank() == 0)
                fprintf(stderr, "gvgraph: --root %lld is not a vertex (the "
                        "graph has %lld)\n", (long long)root,
                        (long long)A.n);
            gv_barrier();
            gv_finalize();
            exit(1);
        }
    }
    n = (size_t)(A.nloc > 0 ? A.nloc : 1);
    if ((O.app == APP_PR) || (O.app == APP_SSSP))
        f = malloc(n * sizeof(double));
    else
        a = malloc(n * sizeof(int64_t));
    if (O.app == APP_BFS)
        b = malloc(n * sizeof(int64_t));
    if (((f == NULL) && (a == NULL)) || ((O.app == APP_BFS) && !b))
        gv_abort(1, "gvgraph: out of memory");
    check(gv_coll_barrier(), "a barrier");
    t0 = gv_wtime();
    c0 = cpu_s();
    switch (O.app) {
    case APP_PR:
        rc = gv_la_pagerank(&A, O.iters, O.tol, f, &iters, &lo, &st);
        break;
    case APP_BFS:
        rc = gv_la_bfs(&A, root, b, a, &lo, &st);
        break;
    case APP_CC:
        rc = gv_la_cc(&A, a, &lo, &st);
        break;
    default:
        rc = gv_la_sssp(&A, root, f, &lo, &st);
        break;
    }
    run_s = gv_wtime() - t0;
    c0    = cpu_s() - c0;
    check(rc, app_names[O.app]);
    check(gv_allreduce(&run_s, 1, GV_DOUBLE, GV_MAX), "a reduction");
    iters = st.iters;
    {
        where_t w = {NULL, A.n, A.nloc, A.lo};

        if (O.output != NULL)
            write_output(&w, a, b, f);
        head(A.n, el, load_s, build_s, run_s, c0, iters);
        fields(&w, root, f, a);
    }
    gv_la_stats_free(&st);
    free(f);
    free(a);
    free(b);
    if (gv_rank() == 0)
        fflush(stdout);
    gv_la_free(&A);
}

static void run(void *arg)
{
    gv_edgelist_t   el;
    gv_graph_t      g;
    gv_graph_opts_t go = {.placement = O.placement};
    gv_vx_opts_t    vo = {.verbose = O.verbose};
    gv_vx_stats_t   st = {0};
    gv_status_t     rc;
    double          t0, load_s, build_s, run_s;
    int             undirected = (O.app != APP_PR) && (O.app != APP_SSSP);

    (void)arg;
    memset(&el, 0, sizeof(el));
    t0 = gv_wtime();
    if (O.kron >= 0) {
        gv_kron_opts_t ko = {.scale = O.kron, .edgefactor = O.ef,
                             .seed = O.seed, .weighted = O.app == APP_SSSP};

        rc = gv_kron_generate(&ko, &el);
    } else if (O.input != NULL) {
        rc = gv_edgelist_load(GV_GRAPH_FMT_BINARY, O.input, O.weights,
                              O.vertices >= 0 ? O.vertices
                                              : GV_GRAPH_NVERTS_AUTO, &el);
    } else if (O.text != NULL) {
        rc = gv_edgelist_load(GV_GRAPH_FMT_TEXT, O.text, NULL,
                              O.vertices >= 0 ? O.vertices
                                              : GV_GRAPH_NVERTS_AUTO, &el);
    } else {
        rc = gv_edgelist_load(GV_GRAPH_FMT_MTX, O.mtx, NULL,
                              GV_GRAPH_NVERTS_AUTO, &el);
    }
    check(rc, "loading the graph");
    load_s = gv_wtime() - t0;
    if (O.linalg) {
        run_linalg(&el, load_s);
        gv_edgelist_free(&el);
        return;
    }
    check(gv_coll_barrier(), "a barrier");
    t0       = gv_wtime();
    go.flags = undirected ? GV_GRAPH_UNDIRECTED_SIMPLE
                          : GV_GRAPH_DIRECTED_SIMPLE;
    if (O.app != APP_SSSP)
        go.flags |= GV_GRAPH_UNWEIGHTED;
    if ((O.app == APP_SSSP) && (O.root < 0))
        go.flags |= GV_GRAPH_IN_EDGES; /* for the undirected degree */
    rc = gv_graph_build(&el, &go, &g);
    check(rc, "building the graph");
    check(gv_vx_attach(&g), "preparing the graph for the engine");
    check(gv_coll_barrier(), "a barrier");
    build_s = gv_wtime() - t0;
    if (O.app == APP_BFS500) {
        run_bfs500(&g, &el, load_s, build_s, &vo);
    } else {
        size_t  n = (size_t)(g.nlocal > 0 ? g.nlocal : 1);
        int64_t root = ((O.app == APP_BFS) || (O.app == APP_SSSP))
                           ? pick_root(&g) : -1;
        double  *f = NULL;
        int64_t *a = NULL, *b = NULL;
        int      iters = 0;
        double   c0;

        if ((O.app == APP_PR) || (O.app == APP_SSSP))
            f = malloc(n * sizeof(double));
        else
            a = malloc(n * sizeof(int64_t));
        if (O.app == APP_BFS)
            b = malloc(n * sizeof(int64_t));
        if (((f == NULL) && (a == NULL)) || ((O.app == APP_BFS) && !b))
            gv_abort(1, "gvgraph: out of memory");
        check(gv_coll_barrier(), "a barrier");
        c0 = cpu_s();
        t0 = gv_wtime();
        switch (O.app) {
        case APP_PR:
            rc = gv_vx_pagerank(&g, O.iters, O.tol, f, &iters, &vo, &st);
            break;
        case APP_BFS:
            rc = gv_vx_bfs(&g, root, b, a, &vo, &st);
            break;
        case APP_CC:
            rc = gv_vx_cc(&g, a, &vo, &st);
            break;
        case APP_CCNATIVE:
            rc = gv_vx_cc_native(&g, a, &vo, &st);
            break;
        default:
            rc = gv_vx_sssp(&g, root, O.delta, f, &vo, &st);
            break;
        }
        run_s = gv_wtime() - t0;
        c0    = cpu_s() - c0;
        check(rc, app_names[O.app]);
        check(gv_allreduce(&run_s, 1, GV_DOUBLE, GV_MAX), "a reduction");
        if (O.app != APP_PR)
            iters = st.steps;
        {
            where_t w = {&g, g.nverts, g.nlocal, 0};

            if (O.output != NULL)
                write_output(&w, a, b, f);
            head(g.nverts, &el, load_s, build_s, run_s, c0, iters);
            fields(&w, root, f, a);
        }
        gv_vx_stats_free(&st);
        free(f);
        free(a);
        free(b);
    }
    if (gv_rank() == 0)
        fflush(stdout);
    gv_vx_detach(&g);
    gv_graph_destroy(&g);
    gv_edgelist_free(&el);
}

int main(int argc, char **argv)
{
    int64_t bad;

    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "-h") == 0) || (strcmp(argv[i], "--help") == 0)) {
            usage(stdout);
            return 0;
        }
    }
    if (gv_init(&argc, &argv) != GV_OK) {
        fprintf(stderr, "gvgraph: gv_init failed\n");
        return 1;
    }
    parse(argc, argv);
    if (gv_run_all(run, NULL, 0) != GV_OK)
        failed = 1;
    bad = failed;
    gv_finalize();
    return bad ? 1 : 0;
}
