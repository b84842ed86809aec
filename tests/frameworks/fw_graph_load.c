/* The loaders against hand-written files of every format, and every kind
 * of bad input: the error, its status and its message (file, line or byte
 * offset, problem) the same on every rank. The files are written by rank
 * 0 into a temporary directory. Run: gvrun -n 3 build/tests/frameworks/fw_graph_load
 * SPDX-License-Identifier: BSD-3-Clause */
#include "../multirank/mr.h"

#include <grapevine/fw/graph.h>

#include <endian.h>
#include <inttypes.h>
#include <math.h>
#include <sys/stat.h>

static char dir[256];

/* Rank 0 writes the file; everyone waits for it. @return its path (kept
 * until the end of the test). */
static const char *put(const char *name, const void *data, size_t len)
{
    char *path = malloc(512);
    FILE *f;

    snprintf(path, 512, "%s/%s", dir, name);
    if (gv_rank() == 0) {
        f = fopen(path, "wb");
        MR_CHECK(f != NULL, "cannot create %s", path);
        MR_CHECK(fwrite(data, 1, len, f) == len, "write %s", path);
        fclose(f);
    }
    MR_OK(gv_coll_barrier());
    return path;
}

static const char *put_str(const char *name, const char *s)
{
    return put(name, s, strlen(s));
}

static const char *put_edges(const char *name, const uint64_t *e, size_t n)
{
    uint64_t *le = malloc(2 * n * 8 + 8);
    size_t    i;
    const char *p;

    for (i = 0; i < 2 * n; i++)
        le[i] = htole64(e[i]);
    p = put(name, le, 2 * n * 8);
    free(le);
    return p;
}

/* The whole list on every rank, in list order. */
static void gather(const gv_edgelist_t *el, int64_t **s_p, int64_t **d_p,
                   double **w_p)
{
    int64_t i, n = el->total;

    *s_p = calloc((size_t)n + 1, 8);
    *d_p = calloc((size_t)n + 1, 8);
    *w_p = calloc((size_t)n + 1, 8);
    for (i = 0; i < el->n; i++) {
        (*s_p)[el->first + i] = el->src[i];
        (*d_p)[el->first + i] = el->dst[i];
        (*w_p)[el->first + i] = el->weighted ? el->w[i] : 0;
    }
    MR_OK(gv_allreduce(*s_p, (size_t)n, GV_INT64, GV_SUM));
    MR_OK(gv_allreduce(*d_p, (size_t)n, GV_INT64, GV_SUM));
    MR_OK(gv_allreduce(*w_p, (size_t)n, GV_DOUBLE, GV_SUM));
}

/* Load and expect exactly these edges (w NULL: unweighted). */
static void expect(gv_graph_fmt_t fmt, const char *path, const char *wpath,
                   int64_t nverts, int64_t want_nv, int64_t m,
                   const int64_t *s, const int64_t *d, const double *w)
{
    gv_edgelist_t el;
    int64_t      *gs, *gd, i, sum = 0;
    double       *gw;

    MR_OK(gv_edgelist_load(fmt, path, wpath, nverts, &el));
    MR_CHECK(el.total == m, "%s: %" PRId64 " edges, expected %" PRId64, path,
             el.total, m);
    MR_CHECK(el.nverts == want_nv, "%s: %" PRId64 " vertices, expected %"
             PRId64, path, el.nverts, want_nv);
    MR_CHECK(el.weighted == (w != NULL), "%s: weighted %d", path,
             el.weighted);
    sum = el.n;
    MR_OK(gv_allreduce(&sum, 1, GV_INT64, GV_SUM));
    MR_CHECK(sum == m, "%s: shares add to %" PRId64, path, sum);
    gather(&el, &gs, &gd, &gw);
    for (i = 0; i < m; i++) {
        MR_CHECK((gs[i] == s[i]) && (gd[i] == d[i]), "%s: edge %" PRId64
                 " is %" PRId64 " -> %" PRId64 ", expected %" PRId64
                 " -> %" PRId64, path, i, gs[i], gd[i], s[i], d[i]);
        if (w != NULL)
            MR_CHECK(gw[i] == w[i], "%s: weight %" PRId64 " is %g, "
                     "expected %g", path, i, gw[i], w[i]);
    }
    free(gs);
    free(gd);
    free(gw);
    gv_edgelist_free(&el);
}

/* Load and expect the error, with @a msg in the message, on every rank. */
static void expect_err(gv_graph_fmt_t fmt, const char *path,
                       const char *wpath, int64_t nverts, gv_status_t want,
                       const char *msg)
{
    gv_edgelist_t el;
    gv_status_t   st = gv_edgelist_load(fmt, path, wpath, nverts, &el);
    const char   *base = strrchr(path, '/');
    char          full[600];

    MR_CHECK(st == want, "rank %d: %s: status %s, expected %s (message "
             "'%s')", gv_rank(), path, gv_status_str(st), gv_status_str(want),
             gv_graph_errmsg());
    MR_CHECK(strstr(gv_graph_errmsg(), msg) != NULL, "rank %d: %s: message "
             "'%s' lacks '%s'", gv_rank(), path, gv_graph_errmsg(), msg);
    snprintf(full, sizeof(full), "%s", base ? base + 1 : path);
    if ((strstr(gv_graph_errmsg(), full) == NULL) && (wpath != NULL)) {
        base = strrchr(wpath, '/');
        snprintf(full, sizeof(full), "%s", base ? base + 1 : wpath);
    }
    MR_CHECK(strstr(gv_graph_errmsg(), full) != NULL, "rank %d: message "
             "'%s' does not name the file", gv_rank(), gv_graph_errmsg());
}

static void run(void *unused)
{
    static const int64_t s[] = {0, 2, 5, 1, 4}, d[] = {1, 3, 0, 1, 2};
    static const double  w[] = {0.5, 1, 2, -3, 0.25};
    uint64_t             e[10];
    float                wf[5];
    uint32_t             wl[5];
    const char          *p, *wp;
    char                 wpath[512];
    int                  i;

    if (gv_rank() == 0) {
        snprintf(dir, sizeof(dir), "/tmp/gv-fwgraph-XXXXXX");
        MR_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    }
    MR_OK(gv_broadcast(0, dir, sizeof(dir)));

    /* binary, with and without weights, declared and inferred counts */
    for (i = 0; i < 5; i++) {
        e[2 * i]     = (uint64_t)s[i];
        e[2 * i + 1] = (uint64_t)d[i];
        wf[i]        = (float)w[i];
        memcpy(&wl[i], &wf[i], 4);
        wl[i] = htole32(wl[i]);
    }
    wp = put("good.w", wl, sizeof(wl));
    snprintf(wpath, sizeof(wpath), "%s", wp);
    p = put_edges("good.el", e, 5);
    expect(GV_GRAPH_FMT_BINARY, p, wpath, GV_GRAPH_NVERTS_AUTO, 6, 5, s, d, w);
    expect(GV_GRAPH_FMT_BINARY, p, NULL, 10, 10, 5, s, d, NULL);
    expect(GV_GRAPH_FMT_BINARY, put("empty.el", "", 0), NULL,
           GV_GRAPH_NVERTS_AUTO, 0, 0, s, d, NULL);

    /* the writer reproduces the file byte for byte */
    {
        gv_edgelist_t el;
        char          out[512], outw[512];

        MR_OK(gv_edgelist_load(GV_GRAPH_FMT_BINARY, p, wpath,
                               GV_GRAPH_NVERTS_AUTO, &el));
        snprintf(out, sizeof(out), "%s/copy.el", dir);
        snprintf(outw, sizeof(outw), "%s/copy.w", dir);
        MR_OK(gv_edgelist_write(&el, out, outw));
        expect(GV_GRAPH_FMT_BINARY, out, outw, GV_GRAPH_NVERTS_AUTO, 6, 5, s,
               d, w);
        if (gv_rank() == 0) {
            uint8_t a[200], b[200];
            FILE   *f1 = fopen(out, "rb"), *f2 = fopen(p, "rb");
            size_t  n1 = fread(a, 1, sizeof(a), f1), n2 = fread(b, 1,
                                                               sizeof(b), f2);

            MR_CHECK((n1 == 80) && (n2 == 80) && (memcmp(a, b, 80) == 0),
                     "written file differs from the original");
            fclose(f1);
            fclose(f2);
        }
        gv_edgelist_free(&el);
    }

    /* SNAP text: comments, blank lines, tabs, CRLF, no final newline */
    p = put_str("good.txt", "# a comment\n\n0 1 0.5\n  2\t3 1\r\n  # mid\n"
                            "5 0 2e0\n1 1 -3\n4 2 0.25");
    expect(GV_GRAPH_FMT_TEXT, p, NULL, GV_GRAPH_NVERTS_AUTO, 6, 5, s, d, w);
    p = put_str("plain.txt", "0 1\n2 3\n5 0\n1 1\n4 2\n");
    expect(GV_GRAPH_FMT_TEXT, p, NULL, 7, 7, 5, s, d, NULL);
    expect(GV_GRAPH_FMT_TEXT, put_str("comments.txt", "# nothing\n"), NULL,
           GV_GRAPH_NVERTS_AUTO, 0, 0, s, d, NULL);

    /* Matrix Market */
    p = put_str("pat.mtx", "%%MatrixMarket matrix coordinate pattern general\n"
                           "% a comment\n6 6 5\n1 2\n3 4\n6 1\n2 2\n5 3\n");
    expect(GV_GRAPH_FMT_MTX, p, NULL, GV_GRAPH_NVERTS_AUTO, 6, 5, s, d, NULL);
    p = put_str("real.mtx", "%%MatrixMarket matrix coordinate real general\n"
                            "8 8 5\n1 2 0.5\n3 4 1\n6 1 2.0\n2 2 -3\n"
                            "5 3 .25\n");
    expect(GV_GRAPH_FMT_MTX, p, NULL, GV_GRAPH_NVERTS_AUTO, 8, 5, s, d, w);
    {
        static const int64_t ss[] = {1, 0, 2, 3, 1}, sd[] = {0, 1, 2, 1, 3};
        static const double  sw[] = {7, 7, -2, 5, 5};

        p = put_str("sym.mtx", "%%MatrixMarket matrix coordinate integer "
                               "symmetric\n4 4 3\n2 1 7\n3 3 -2\n4 2 5\n");
        expect(GV_GRAPH_FMT_MTX, p, NULL, GV_GRAPH_NVERTS_AUTO, 4, 5, ss, sd,
               sw);
    }

    /* a larger text file, so that every rank has lines; and its error
     * late in the file, counted across ranks */
    {
        size_t   cap = 64 * 1100, len = 0;
        char    *t = malloc(cap);
        int64_t *ls = malloc(1000 * 8), *ld = malloc(1000 * 8);

        for (i = 0; i < 1000; i++) {
            ls[i] = (i * 7919) % 1013;
            ld[i] = (i * 104729) % 1013;
            if (i % 97 == 0)
                len += (size_t)snprintf(t + len, cap - len, "# c %d\n", i);
            len += (size_t)snprintf(t + len, cap - len, "%" PRId64 " %" PRId64
                                    "\n", ls[i], ld[i]);
        }
        p = put("big.txt", t, len);
        expect(GV_GRAPH_FMT_TEXT, p, NULL, 1013, 1013, 1000, ls, ld, NULL);
        /* line 900 (after 10 comment lines before it): make it bad */
        {
            char *q = t;
            int   line;

            for (line = 1; line < 900; line++)
                q = strchr(q, '\n') + 1;
            q[0] = 'x';
        }
        p = put("bigbad.txt", t, len);
        expect_err(GV_GRAPH_FMT_TEXT, p, NULL, GV_GRAPH_NVERTS_AUTO,
                   GV_ERR_INVALID, "bigbad.txt: line 900: source 'x");
        free(t);
        free(ls);
        free(ld);
    }
    /* a larger binary file with a bad id in its last edge */
    {
        uint64_t *be = malloc(2 * 999 * 8);

        for (i = 0; i < 2 * 999; i++)
            be[i] = (uint64_t)(i % 50);
        be[2 * 998 + 1] = 50;
        p = put_edges("bigbad.el", be, 999);
        expect_err(GV_GRAPH_FMT_BINARY, p, NULL, 50, GV_ERR_INVALID,
                   "byte offset 15976: vertex id 50 is not below the declared "
                   "vertex count 50");
        free(be);
    }

    /* bad binary files */
    expect_err(GV_GRAPH_FMT_BINARY, put("trunc.el", e, 17), NULL,
               GV_GRAPH_NVERTS_AUTO, GV_ERR_INVALID,
               "size 17 bytes is not a multiple of 16");
    p = put_edges("good2.el", e, 5);
    expect_err(GV_GRAPH_FMT_BINARY, p, put("short.w", wl, 16),
               GV_GRAPH_NVERTS_AUTO, GV_ERR_INVALID,
               "size 16 bytes; the 5 edges");
    expect_err(GV_GRAPH_FMT_BINARY, p, NULL, 5, GV_ERR_INVALID,
               "byte offset 32: vertex id 5 is not below the declared vertex "
               "count 5");
    {
        uint64_t big[2] = {1, UINT64_MAX};

        expect_err(GV_GRAPH_FMT_BINARY, put_edges("huge.el", big, 1), NULL,
                   GV_GRAPH_NVERTS_AUTO, GV_ERR_INVALID,
                   "byte offset 8: vertex id 18446744073709551615 does not "
                   "fit in int64");
    }
    {
        float    nan = NAN;
        uint32_t nw[5];

        memcpy(nw, wl, sizeof(nw));
        memcpy(&nw[3], &nan, 4);
        expect_err(GV_GRAPH_FMT_BINARY, p, put("nan.w", nw, sizeof(nw)),
                   GV_GRAPH_NVERTS_AUTO, GV_ERR_INVALID,
                   "nan.w: byte offset 12: weight is not a finite number");
    }
    {
        char missing[600];

        snprintf(missing, sizeof(missing), "%s/missing.el", dir);
        expect_err(GV_GRAPH_FMT_BINARY, missing, NULL, GV_GRAPH_NVERTS_AUTO,
                   GV_ERR_IO, "missing.el: cannot open");
    }

    /* bad text files */
    expect_err(GV_GRAPH_FMT_TEXT, put_str("nonnum.txt", "0 1\n2 x\n"), NULL,
               GV_GRAPH_NVERTS_AUTO, GV_ERR_INVALID,
               "line 2: destination 'x' is not a non-negative integer");
    expect_err(GV_GRAPH_FMT_TEXT, put_str("beyond.txt", "0 1\n1 3\n"), NULL,
               3, GV_ERR_INVALID,
               "line 2: vertex id 3 is not below the declared vertex count 3");
    expect_err(GV_GRAPH_FMT_TEXT, put_str("onefield.txt", "0 1\n7\n"), NULL,
               GV_GRAPH_NVERTS_AUTO, GV_ERR_INVALID, "line 2: 1 field;");
    expect_err(GV_GRAPH_FMT_TEXT, put_str("fourfields.txt", "0 1 2 3\n"),
               NULL, GV_GRAPH_NVERTS_AUTO, GV_ERR_INVALID, "line 1: 4 fields;");
    expect_err(GV_GRAPH_FMT_TEXT, put_str("mixed.txt", "0 1\n# c\n1 2 0.5\n"),
               NULL, GV_GRAPH_NVERTS_AUTO, GV_ERR_INVALID,
               "line 3: 3 fields, but the edge lines before it have 2");
    expect_err(GV_GRAPH_FMT_TEXT, put_str("badw.txt", "0 1 abc\n"), NULL,
               GV_GRAPH_NVERTS_AUTO, GV_ERR_INVALID,
               "line 1: weight 'abc' is not a finite number");
    expect_err(GV_GRAPH_FMT_TEXT, put_str("neg.txt", "-1 2\n"), NULL,
               GV_GRAPH_NVERTS_AUTO, GV_ERR_INVALID,
               "line 1: source '-1' is not a non-negative integer");
    expect_err(GV_GRAPH_FMT_TEXT, put_str("ovf.txt",
                                          "1 99999999999999999999\n"),
               NULL, GV_GRAPH_NVERTS_AUTO, GV_ERR_INVALID,
               "does not fit in int64");
    expect_err(GV_GRAPH_FMT_TEXT, put_str("withw.txt", "0 1\n"), wpath,
               GV_GRAPH_NVERTS_AUTO, GV_ERR_INVALID,
               "goes only with a binary edge list");

    /* bad Matrix Market files */
    expect_err(GV_GRAPH_FMT_MTX, put_str("nobanner.mtx", "hello\n"), NULL, 0,
               GV_ERR_INVALID, "line 1: not a Matrix Market banner");
    expect_err(GV_GRAPH_FMT_MTX, put_str("empty.mtx", ""), NULL, 0,
               GV_ERR_INVALID, "empty file");
    expect_err(GV_GRAPH_FMT_MTX, put_str("array.mtx", "%%MatrixMarket matrix "
               "array real general\n2 2\n1\n2\n3\n4\n"), NULL, 0,
               GV_ERR_INVALID, "line 1: format 'array' is not supported");
    expect_err(GV_GRAPH_FMT_MTX, put_str("complex.mtx", "%%MatrixMarket matrix"
               " coordinate complex general\n2 2 1\n1 1 1 0\n"), NULL, 0,
               GV_ERR_INVALID, "field 'complex' is not supported");
    expect_err(GV_GRAPH_FMT_MTX, put_str("skew.mtx", "%%MatrixMarket matrix "
               "coordinate real skew-symmetric\n2 2 1\n2 1 1\n"), NULL, 0,
               GV_ERR_INVALID, "symmetry 'skew-symmetric' is not supported");
    expect_err(GV_GRAPH_FMT_MTX, put_str("nosize.mtx", "%%MatrixMarket matrix "
               "coordinate real general\n% only comments\n"), NULL, 0,
               GV_ERR_INVALID, "ends before the size line");
    expect_err(GV_GRAPH_FMT_MTX, put_str("badsize.mtx", "%%MatrixMarket "
               "matrix coordinate real general\n3 3\n"), NULL, 0,
               GV_ERR_INVALID, "line 2: size line has 2 fields");
    expect_err(GV_GRAPH_FMT_MTX, put_str("rect.mtx", "%%MatrixMarket matrix "
               "coordinate pattern general\n3 4 1\n1 1\n"), NULL, 0,
               GV_ERR_INVALID, "line 2: the matrix is 3 x 4");
    expect_err(GV_GRAPH_FMT_MTX, put_str("truncated.mtx", "%%MatrixMarket "
               "matrix coordinate pattern general\n4 4 3\n1 2\n2 3\n"), NULL,
               0, GV_ERR_INVALID,
               "ends after 2 of the 3 entries declared on line 2");
    expect_err(GV_GRAPH_FMT_MTX, put_str("extra.mtx", "%%MatrixMarket matrix "
               "coordinate pattern general\n% c\n4 4 1\n1 2\n2 3\n"), NULL, 0,
               GV_ERR_INVALID,
               "line 5: entry 2 is beyond the 1 entries declared on line 3");
    expect_err(GV_GRAPH_FMT_MTX, put_str("zero.mtx", "%%MatrixMarket matrix "
               "coordinate pattern general\n4 4 1\n0 2\n"), NULL, 0,
               GV_ERR_INVALID, "line 3: row index '0' is not an integer in "
               "1..4");
    expect_err(GV_GRAPH_FMT_MTX, put_str("upper.mtx", "%%MatrixMarket matrix "
               "coordinate pattern symmetric\n4 4 1\n1 2\n"), NULL, 0,
               GV_ERR_INVALID, "line 3: entry (1, 2) above the diagonal");
    expect_err(GV_GRAPH_FMT_MTX, put_str("intval.mtx", "%%MatrixMarket matrix"
               " coordinate integer general\n4 4 1\n1 2 1.5\n"), NULL, 0,
               GV_ERR_INVALID, "line 3: value '1.5' is not an integer");
    expect_err(GV_GRAPH_FMT_MTX, put_str("fields.mtx", "%%MatrixMarket matrix"
               " coordinate real general\n4 4 1\n1 2\n"), NULL, 0,
               GV_ERR_INVALID, "line 3: 2 fields; a valued entry");

    MR_OK(gv_coll_barrier());
    if (gv_rank() == 0) {
        char cmd[300];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        MR_CHECK(system(cmd) == 0, "cannot remove %s", dir);
        printf("fw_graph_load ok on %d ranks\n", gv_nranks());
    }
}

int main(int argc, char **argv)
{
    mr_init(&argc, &argv);
    MR_OK(gv_run_all(run, NULL, 0));
    gv_finalize();
    return 0;
}
