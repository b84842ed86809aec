/* gvjoin: relational queries on the frameworks library: triangle counting
 * as a three-way self-join, and hash joins of CSV files or generated
 * relations. Run under gvrun; the last line is key=value check values.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <grapevine.h>
#include <grapevine/fw/graph.h>
#include <grapevine/fw/join.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: gvrun -n N gvjoin COMMAND [options]\n"
    "  triangles --kron SCALE [--edgefactor F] [--seed X] [--csv FILE]\n"
    "  triangles --input FILE.el [--text]\n"
    "      triangles of the undirected graph: the Graph500 Kronecker graph\n"
    "      (edge factor default 16, seed default 1) or an edge file (binary\n"
    "      uint64 pairs; --text: SNAP-style text); --csv also writes the\n"
    "      edges as CSV\n"
    "  join --left A.csv --right B.csv --on L=R [--header] [--count]\n"
    "      A joined with B on column L of A = column R of B (1-based);\n"
    "      --header skips each file's first line\n"
    "  join --generate NR,NS [--keys uniform|zipf] [--zipf S] [--seed X]\n"
    "       [--count] [--csv A.csv,B.csv]\n"
    "      R(key 0..NR-1, payload) joined with S(key, payload) of NS tuples\n"
    "      whose keys are uniform or Zipf (exponent default 1.0) over R's;\n"
    "      --csv also writes R and S as CSV\n"
    "--count counts the joined rows without keeping them. Counts take k, m,\n"
    "g suffixes (powers of 1000 for rows: 10m = 10000000).\n";

typedef struct {
    const char *cmd, *left, *right, *input, *csv;
    int         kron, text, header, count, lcol, rcol, zipf_keys;
    int64_t     edgefactor, nr, ns;
    double      zipf;
    uint64_t    seed;
} cfg_t;

static cfg_t cfg;
static int   exit_code;

static int bad_usage(const char *fmt, const char *what)
{
    if (gv_rank() == 0) {
        fprintf(stderr, "gvjoin: ");
        fprintf(stderr, fmt, what);
        fprintf(stderr, "\n%s", usage_text);
    }
    return 2;
}

/* A count with an optional k, m, g suffix (powers of 1000); -1 if bad. */
static int64_t parse_count(const char *s, const char **end_p)
{
    char   *end;
    int64_t v;

    errno = 0;
    v     = strtoll(s, &end, 10);
    if ((errno != 0) || (end == s) || (v < 0))
        return -1;
    switch (*end) {
    case 'k': case 'K': v *= 1000; end++; break;
    case 'm': case 'M': v *= 1000000; end++; break;
    case 'g': case 'G': v *= 1000000000; end++; break;
    default: break;
    }
    if (end_p != NULL)
        *end_p = end;
    else if (*end != '\0')
        return -1;
    return v;
}

static int parse_args(int argc, char **argv)
{
    int i;

    if (argc < 2)
        return bad_usage("%s", "no command given");
    cfg.cmd        = argv[1];
    cfg.edgefactor = 16;
    cfg.seed       = 1;
    cfg.zipf       = 1.0;
    cfg.nr         = -1;
    cfg.lcol       = -1;
    cfg.rcol       = -1;
    if (strcmp(cfg.cmd, "triangles") && strcmp(cfg.cmd, "join"))
        return bad_usage("unknown command '%s' (accepted: triangles, join)",
                         cfg.cmd);
    for (i = 2; i < argc; i++) {
        const char *o = argv[i], *v = (i + 1 < argc) ? argv[i + 1] : NULL, *e;
        int64_t     x;

        if (!strcmp(o, "--text")) {
            cfg.text = 1;
            continue;
        }
        if (!strcmp(o, "--header")) {
            cfg.header = 1;
            continue;
        }
        if (!strcmp(o, "--count")) {
            cfg.count = 1;
            continue;
        }
        if (strncmp(o, "--", 2) != 0)
            return bad_usage("unexpected argument '%s'", o);
        if (v == NULL)
            return bad_usage("option %s needs a value", o);
        i++;
        if (!strcmp(o, "--kron")) {
            x = parse_count(v, NULL);
            if ((x < 1) || (x > 32))
                return bad_usage("bad scale '%s' (1..32)", v);
            cfg.kron = (int)x;
        } else if (!strcmp(o, "--edgefactor")) {
            if ((cfg.edgefactor = parse_count(v, NULL)) < 1)
                return bad_usage("bad edge factor '%s'", v);
        } else if (!strcmp(o, "--seed")) {
            if ((x = parse_count(v, NULL)) < 0)
                return bad_usage("bad seed '%s'", v);
            cfg.seed = (uint64_t)x;
        } else if (!strcmp(o, "--input")) {
            cfg.input = v;
        } else if (!strcmp(o, "--csv")) {
            cfg.csv = v;
        } else if (!strcmp(o, "--left")) {
            cfg.left = v;
        } else if (!strcmp(o, "--right")) {
            cfg.right = v;
        } else if (!strcmp(o, "--on")) {
            x = parse_count(v, &e);
            if ((x < 1) || (*e != '=') || (x > GV_REL_COLS_MAX))
                return bad_usage("bad --on '%s' (L=R, 1-based columns)", v);
            cfg.lcol = (int)x - 1;
            x        = parse_count(e + 1, NULL);
            if ((x < 1) || (x > GV_REL_COLS_MAX))
                return bad_usage("bad --on '%s' (L=R, 1-based columns)", v);
            cfg.rcol = (int)x - 1;
        } else if (!strcmp(o, "--generate")) {
            cfg.nr = parse_count(v, &e);
            if ((cfg.nr < 1) || (*e != ',') ||
                ((cfg.ns = parse_count(e + 1, NULL)) < 0))
                return bad_usage("bad --generate '%s' (NR,NS)", v);
        } else if (!strcmp(o, "--keys")) {
            if (!strcmp(v, "zipf"))
                cfg.zipf_keys = 1;
            else if (strcmp(v, "uniform") != 0)
                return bad_usage("bad --keys '%s' (uniform or zipf)", v);
        } else if (!strcmp(o, "--zipf")) {
            char *end;
            errno    = 0;
            cfg.zipf = strtod(v, &end);
            if ((errno != 0) || (*end != '\0') || (end == v) || !(cfg.zipf > 0))
                return bad_usage("bad Zipf exponent '%s' (> 0)", v);
        } else {
            return bad_usage("unknown option '%s'", o);
        }
    }
    if (!strcmp(cfg.cmd, "triangles") && ((cfg.kron > 0) == (cfg.input != NULL)))
        return bad_usage("%s", "triangles takes --kron SCALE or --input FILE");
    if (!strcmp(cfg.cmd, "join")) {
        int files = (cfg.left != NULL) || (cfg.right != NULL);
        if (files == (cfg.nr > 0))
            return bad_usage("%s", "join takes --left and --right, or "
                             "--generate NR,NS");
        if (files && ((cfg.left == NULL) || (cfg.right == NULL)))
            return bad_usage("%s", "join needs both --left and --right");
        if (files && (cfg.lcol < 0))
            return bad_usage("%s", "join of files needs --on L=R");
    }
    return 0;
}

static void say(const char *msg, double t)
{
    if (gv_rank() == 0) {
        fprintf(stderr, "gvjoin: %s (%.3f s)\n", msg, t);
        fflush(stderr);
    }
}

static int triangles(void)
{
    gv_edgelist_t el;
    gv_rel_t     *e;
    int64_t      *rows, i, tri, wedges;
    double        t0 = gv_wtime();
    gv_status_t   status;

    if (cfg.kron > 0) {
        gv_kron_opts_t ko = {.scale = cfg.kron, .edgefactor = cfg.edgefactor,
                             .seed = cfg.seed};
        status = gv_kron_generate(&ko, &el);
    } else {
        status = gv_edgelist_load(cfg.text ? GV_GRAPH_FMT_TEXT
                                           : GV_GRAPH_FMT_BINARY,
                                  cfg.input, NULL, GV_GRAPH_NVERTS_AUTO, &el);
    }
    if (status != GV_OK)
        return 1; /* the graph layer logged why, naming the file */
    rows = malloc(sizeof(int64_t) * 2 * (size_t)(el.n > 0 ? el.n : 1));
    if (rows == NULL)
        return 1;
    for (i = 0; i < el.n; i++) {
        rows[2 * i]     = el.src[i];
        rows[2 * i + 1] = el.dst[i];
    }
    status = gv_rel_from_local(2, rows, el.n, &e);
    free(rows);
    gv_edgelist_free(&el);
    if (status != GV_OK)
        return 1;
    say("edges ready", gv_wtime() - t0);
    if ((cfg.csv != NULL) && (gv_rel_write_csv(e, cfg.csv) != GV_OK)) {
        gv_rel_destroy(e);
        return 1;
    }
    t0     = gv_wtime();
    status = gv_rel_triangles(e, &tri, &wedges);
    t0     = gv_wtime() - t0;
    if ((status == GV_OK) && (gv_rank() == 0))
        printf("edges=%lld wedges=%lld triangles=%lld seconds=%.6f\n",
               (long long)gv_rel_size(e), (long long)wedges, (long long)tri,
               t0);
    gv_rel_destroy(e);
    return (status == GV_OK) ? 0 : 1;
}

static int join(void)
{
    gv_rel_t       *r, *s, *out = NULL;
    gv_join_stats_t st;
    int64_t         rows, sum = 0, n, i, rate[2];
    double          t0 = gv_wtime();
    gv_status_t     status;
    int             P = gv_nranks();

    if (cfg.nr > 0) {
        status = gv_rel_generate(cfg.nr, cfg.ns,
                                 cfg.zipf_keys ? GV_KEYS_ZIPF : GV_KEYS_UNIFORM,
                                 cfg.zipf, cfg.seed, &r, &s);
        if (status != GV_OK)
            return 1;
        cfg.lcol = cfg.rcol = 0;
        if (cfg.csv != NULL) {
            char *a = strdup(cfg.csv), *b = strchr(a, ',');
            if (b == NULL) {
                if (gv_rank() == 0)
                    fprintf(stderr, "gvjoin: --csv takes A.csv,B.csv\n");
                free(a);
                return 2;
            }
            *b++ = '\0';
            status = gv_rel_write_csv(r, a);
            if (status == GV_OK)
                status = gv_rel_write_csv(s, b);
            free(a);
            if (status != GV_OK)
                return 1;
        }
    } else {
        if (gv_rel_load_csv(cfg.left, cfg.header, &r) != GV_OK)
            return 1;
        if (gv_rel_load_csv(cfg.right, cfg.header, &s) != GV_OK) {
            gv_rel_destroy(r);
            return 1;
        }
        if ((cfg.lcol >= gv_rel_ncols(r)) || (cfg.rcol >= gv_rel_ncols(s))) {
            if (gv_rank() == 0)
                fprintf(stderr, "gvjoin: --on %d=%d, but %s has %d columns "
                        "and %s %d\n", cfg.lcol + 1, cfg.rcol + 1, cfg.left,
                        gv_rel_ncols(r), cfg.right, gv_rel_ncols(s));
            gv_rel_destroy(r);
            gv_rel_destroy(s);
            return 2;
        }
    }
    say("relations ready", gv_wtime() - t0);
    t0     = gv_wtime();
    status = gv_rel_join(r, cfg.lcol, s, cfg.rcol, cfg.count ? NULL : &out,
                         &rows, &st);
    t0     = gv_wtime() - t0;
    if (status == GV_OK) {
        if (out != NULL) {
            /* A checksum of the result: the sum of all its fields. */
            int64_t *v = gv_rel_local(out, &n);
            for (i = 0; i < n * gv_rel_ncols(out); i++)
                sum += v[i];
            gv_allreduce(&sum, 1, GV_INT64, GV_SUM);
        }
        rate[0] = gv_rel_size(r);
        rate[1] = gv_rel_size(s);
        if (gv_rank() == 0)
            printf("left=%lld right=%lld rows=%lld checksum=%lld "
                   "build_s=%.6f probe_s=%.6f build_rate=%.0f "
                   "probe_rate=%.0f seconds=%.6f\n",
                   (long long)rate[0], (long long)rate[1], (long long)rows,
                   (long long)sum, st.build_s, st.probe_s,
                   (double)rate[0] / P / st.build_s,
                   (double)rate[1] / P / st.probe_s, t0);
    }
    gv_rel_destroy(out);
    gv_rel_destroy(r);
    gv_rel_destroy(s);
    return (status == GV_OK) ? 0 : 1;
}

static void body(void *arg)
{
    (void)arg;
    exit_code = !strcmp(cfg.cmd, "triangles") ? triangles() : join();
}

int main(int argc, char **argv)
{
    if ((argc == 2) && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (gv_init(&argc, &argv) != GV_OK)
        return 1;
    exit_code = parse_args(argc, argv);
    if (exit_code == 0)
        gv_run_all(body, NULL, 0);
    gv_finalize();
    return exit_code;
}
