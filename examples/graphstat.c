/* Graph statistics: load or generate an edge list, build the distributed
 * graph, print its size, degree distribution and the load and build times.
 *   gvrun -n 2 build/examples/graphstat --kron 16
 *   gvrun -n 2 build/examples/graphstat --input FILE [--weights FILE] | --text FILE | --mtx FILE
 * SPDX-License-Identifier: BSD-3-Clause */
#include <grapevine/fw/graph.h>

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: graphstat INPUT [OPTIONS]\n"
    "INPUT, exactly one of:\n"
    "  --kron SCALE        Graph500 Kronecker graph of 2^SCALE vertices\n"
    "  --input FILE        binary edge list (little-endian uint64 pairs)\n"
    "  --text FILE         text edge list ('src dst [weight]', '#' comments)\n"
    "  --mtx FILE          Matrix Market coordinate file\n"
    "OPTIONS:\n"
    "  --edgefactor N      edges per vertex of --kron (default 16)\n"
    "  --seed N            seed of --kron (default 1)\n"
    "  --weighted          --kron: uniform (0, 1] weights\n"
    "  --weights FILE      --input: float32 weight file\n"
    "  --nverts N          declared vertex count of --input/--text\n"
    "  --undirected        symmetrize (each edge both ways)\n"
    "  --simple            drop self-loops and duplicate edges\n"
    "  --in-edges          also build the in-edges\n"
    "  --placement P       hash (default) or block\n"
    "  --write FILE        write the edge list (and FILE.w if weighted)\n";

static struct {
    gv_kron_opts_t  kron;
    int             have_kron;
    gv_graph_fmt_t  fmt;
    const char     *path, *wpath, *out;
    int64_t         nverts;
    gv_graph_opts_t gopts;
    int             rc;
} A = {.kron = {0, 16, 1, 0}, .nverts = GV_GRAPH_NVERTS_AUTO};

/* Usage errors: every rank finds them, rank 0 says so. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;

    if (gv_rank() != 0)
        return;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

static int parse_int(const char *opt, const char *s, int64_t lo, int64_t hi,
                     int64_t *v_p)
{
    char     *end;
    long long v;

    errno = 0;
    v     = strtoll(s, &end, 10);
    if ((errno != 0) || (*s == '\0') || (*end != '\0') || (v < lo) ||
        (v > hi)) {
        say("graphstat: %s '%s': expected an integer in %" PRId64
                "..%" PRId64 "\n", opt, s, lo, hi);
        return -1;
    }
    *v_p = v;
    return 0;
}

static int parse_args(int argc, char **argv)
{
    int     i, inputs = 0;
    int64_t v;

    for (i = 1; i < argc; i++) {
        const char *o = argv[i], *val = (i + 1 < argc) ? argv[i + 1] : NULL;
        int         takes = strcmp(o, "--weighted") && strcmp(o, "--undirected") &&
                            strcmp(o, "--simple") && strcmp(o, "--in-edges") &&
                            strcmp(o, "--help");

        if (!strcmp(o, "--help")) {
            if (gv_rank() == 0)
                fputs(usage, stdout);
            return 1;
        }
        if (takes && (val == NULL)) {
            static const char *with_value[] = {
                "--kron", "--input", "--text", "--mtx", "--edgefactor",
                "--seed", "--weights", "--nverts", "--placement", "--write"};
            size_t k;

            for (k = 0; k < sizeof(with_value) / sizeof(with_value[0]); k++)
                if (!strcmp(o, with_value[k]))
                    break;
            if (k == sizeof(with_value) / sizeof(with_value[0]))
                say("graphstat: unknown option '%s'\n%s", o, usage);
            else
                say("graphstat: %s needs a value\n%s", o, usage);
            return -1;
        }
        if (!strcmp(o, "--kron")) {
            if (parse_int(o, val, 0, 40, &v) != 0)
                return -1;
            A.kron.scale = (int)v;
            A.have_kron  = 1;
            inputs++;
        } else if (!strcmp(o, "--input") || !strcmp(o, "--text") ||
                   !strcmp(o, "--mtx")) {
            A.fmt  = !strcmp(o, "--input") ? GV_GRAPH_FMT_BINARY :
                     !strcmp(o, "--text")  ? GV_GRAPH_FMT_TEXT :
                                             GV_GRAPH_FMT_MTX;
            A.path = val;
            inputs++;
        } else if (!strcmp(o, "--edgefactor")) {
            if (parse_int(o, val, 0, INT64_C(1) << 40, &A.kron.edgefactor))
                return -1;
        } else if (!strcmp(o, "--seed")) {
            if (parse_int(o, val, 0, INT64_MAX, &v) != 0)
                return -1;
            A.kron.seed = (uint64_t)v;
        } else if (!strcmp(o, "--weighted")) {
            A.kron.weighted = 1;
        } else if (!strcmp(o, "--weights")) {
            A.wpath = val;
        } else if (!strcmp(o, "--nverts")) {
            if (parse_int(o, val, 0, INT64_MAX, &A.nverts) != 0)
                return -1;
        } else if (!strcmp(o, "--undirected")) {
            A.gopts.flags |= GV_GRAPH_SYMMETRIZE;
        } else if (!strcmp(o, "--simple")) {
            A.gopts.flags |= GV_GRAPH_NO_SELF_LOOPS | GV_GRAPH_DEDUP;
        } else if (!strcmp(o, "--in-edges")) {
            A.gopts.flags |= GV_GRAPH_IN_EDGES;
        } else if (!strcmp(o, "--placement")) {
            if (!strcmp(val, "hash"))
                A.gopts.placement = GV_GRAPH_HASH;
            else if (!strcmp(val, "block"))
                A.gopts.placement = GV_GRAPH_BLOCK;
            else {
                say("graphstat: --placement '%s': expected hash "
                        "or block\n", val);
                return -1;
            }
        } else if (!strcmp(o, "--write")) {
            A.out = val;
        } else {
            say("graphstat: unknown option '%s'\n%s", o, usage);
            return -1;
        }
        if (takes)
            i++;
    }
    if (inputs != 1) {
        say("graphstat: give exactly one of --kron, --input, "
                "--text, --mtx (%d given)\n%s", inputs, usage);
        return -1;
    }
    if ((A.wpath != NULL) && (A.fmt != GV_GRAPH_FMT_BINARY || A.have_kron)) {
        say("graphstat: --weights goes with --input only\n");
        return -1;
    }
    if ((A.nverts >= 0) && (A.have_kron || A.fmt == GV_GRAPH_FMT_MTX)) {
        say("graphstat: --nverts goes with --input or --text "
                "only (--kron and --mtx declare the count)\n");
        return -1;
    }
    return 0;
}

static void run(void *unused)
{
    gv_edgelist_t el;
    gv_graph_t    g;
    gv_status_t   st;
    double        t0, t_load, t_build;
    int64_t       hist[64] = {0}, mm[2], i, isolated = 0, in = 0;
    int           me = gv_rank(), b, top = 0;

    t0 = gv_wtime();
    st = A.have_kron ? gv_kron_generate(&A.kron, &el) :
                       gv_edgelist_load(A.fmt, A.path, A.wpath, A.nverts, &el);
    if (st == GV_OK && A.out != NULL) {
        char wp[4096];

        snprintf(wp, sizeof(wp), "%s.w", A.out);
        st = gv_edgelist_write(&el, A.out, el.weighted ? wp : NULL);
    }
    t_load = gv_wtime() - t0;
    if (st != GV_OK) { /* the library printed why, once */
        A.rc = 1;
        return;
    }
    gv_coll_barrier();
    t0 = gv_wtime();
    st = gv_graph_build(&el, &A.gopts, &g);
    gv_coll_barrier();
    t_build = gv_wtime() - t0;
    in      = el.total;
    gv_edgelist_free(&el);
    if (st != GV_OK) {
        A.rc = 1;
        return;
    }
    mm[0] = INT64_MAX;
    mm[1] = 0;
    for (i = 0; i < g.nlocal; i++) {
        int64_t d = g.out_deg[i];

        for (b = 0; (b < 63) && (((int64_t)1 << b) <= d); b++)
            ;
        hist[b]++; /* bin 0: degree 0; bin b: 2^(b-1) <= d < 2^b */
        isolated += (d == 0) && (g.in_deg == NULL || g.in_deg[i] == 0);
        mm[0] = (d < mm[0]) ? d : mm[0];
        mm[1] = (-d < mm[1]) ? -d : mm[1]; /* the max, negated */
    }
    /* A sum that did not happen must not print as the graph's. */
    if ((gv_allreduce(mm, 2, GV_INT64, GV_MIN) != GV_OK) ||
        (gv_allreduce(hist, 64, GV_INT64, GV_SUM) != GV_OK) ||
        (gv_allreduce(&isolated, 1, GV_INT64, GV_SUM) != GV_OK))
        gv_abort(1, "graphstat: a reduction over the ranks failed");
    if (me == 0) {
        printf("vertices %" PRId64 ", edges read %" PRId64 ", edges stored %"
               PRId64 " (%s%s%s), %s placement over %d ranks\n", g.nverts,
               in, g.nedges,
               (g.flags & GV_GRAPH_SYMMETRIZE) ? "undirected" : "directed",
               (g.flags & GV_GRAPH_DEDUP) ? ", simple" : "",
               g.weighted ? ", weighted" : "",
               g.placement == GV_GRAPH_HASH ? "hashed" : "block", g.nranks);
        printf("out-degree: min %" PRId64 ", max %" PRId64 ", mean %.2f\n",
               g.nverts ? mm[0] : 0, g.nverts ? -mm[1] : 0,
               g.nverts ? (double)g.nedges / (double)g.nverts : 0.0);
        for (b = 0; b < 64; b++)
            if (hist[b])
                top = b;
        for (b = 0; b <= top; b++)
            printf("  degree %" PRId64 "..%" PRId64 ": %" PRId64 " vertices\n",
                   b ? (int64_t)1 << (b - 1) : 0,
                   b ? ((int64_t)1 << b) - 1 : 0, hist[b]);
        printf("graphstat ranks=%d transport=%s vertices=%" PRId64
               " edges_read=%" PRId64 " edges=%" PRId64 " maxdeg=%" PRId64
               " %s=%" PRId64 " load_s=%.3f build_s=%.3f build_meps=%.2f\n",
               g.nranks, gv_transport_name(), g.nverts, in, g.nedges,
               g.nverts ? -mm[1] : 0,
               g.in_deg ? "isolated" : "outdeg0", g.in_deg ? isolated : hist[0],
               t_load, t_build, t_build > 0 ? (double)in / t_build / 1e6 : 0.0);
    }
    gv_graph_destroy(&g);
}

int main(int argc, char **argv)
{
    int rc;

    if (gv_init(&argc, &argv) != GV_OK)
        return 1;
    rc = parse_args(argc, argv);
    if (rc != 0) {
        gv_finalize();
        return (rc > 0) ? 0 : 2;
    }
    if (gv_run_all(run, NULL, 0) != GV_OK)
        A.rc = 1;
    gv_finalize();
    return A.rc;
}
