/* Runs fw_vertex (the vertex engine's applications against the checkers)
 * on 1, 2, 3 and 4 ranks over tcp, shm and ucx/sm, and with
 * GV_AMO=native over shm; and gvgraph on good and bad command lines.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "tests/multirank/driver.h"

#include <math.h>

#ifndef GV_BUILD_DIR
#define GV_BUILD_DIR "build"
#endif

typedef struct {
    int  tl;        /* row of drv_tls[] */
    int  nranks;
    int  native;    /* GV_AMO=native */
    char scales[16];
    int  timeout_s;
} vx_case_t;

#define RANKS_1_TO_4(_tl, _sc, _t)                                          \
    {_tl, 1, 0, _sc, _t}, {_tl, 2, 0, _sc, _t}, {_tl, 3, 0, _sc, _t},       \
    {_tl, 4, 0, _sc, _t}

/* A run takes 1-7 s on a loaded 2-core machine; limits leave 3x and more. */
static vx_case_t cases[] = {
    RANKS_1_TO_4(0, "10 12", 60),                       /* tcp    */
    RANKS_1_TO_4(1, "10 12", 60),                       /* shm    */
    RANKS_1_TO_4(2, "10 12", 60),                       /* ucx/sm */
    {1, 2, 1, "10 12", 60}, {1, 3, 1, "10 12", 60},     /* native */
    {1, 4, 1, "10 12", 60},
    {1, 2, 0, "14", 90}, {1, 2, 1, "14", 90},           /* larger */
};

ParameterizedTestParameters(vertex, apps)
{
    return cr_make_param_array(vx_case_t, cases,
                               sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(vx_case_t *c, vertex, apps, .timeout = 150)
{
    const tl_cfg_t *t = &drv_tls[c->tl];
    char            cmd[1024], *out = NULL;
    int             rc;

    if (!t->built)
        cr_skip_test("fw_vertex %s -n %d: transport %s was not built",
                     t->label, c->nranks, t->name);
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s %s %s GV_WARN_UNUSED_ENV=0 timeout -k 5 %d "
             "%s/bin/gvrun -n %d %s/tests/frameworks/fw_vertex --scales '%s'",
             t->name, t->env, c->native ? "GV_AMO=native" : "", c->timeout_s,
             GV_BUILD_DIR, c->nranks, GV_BUILD_DIR, c->scales);
    rc = drv_run(cmd, &out);
    if (rc == 77)
        cr_skip_test("fw_vertex over %s -n %d: %s", t->label, c->nranks,
                     out ? out : "");
    if ((rc != 0) || (out == NULL) || !strstr(out, "fw_vertex: "))
        cr_log_error("%s\n--- output ---\n%s--- end ---", cmd, out ? out : "");
    cr_expect_eq(rc, 0, "fw_vertex over %s with %d ranks%s: exit %d%s",
                 t->label, c->nranks, c->native ? " (native)" : "", rc,
                 (rc == 124) ? " (timed out)" : "");
    if ((rc == 0) && (out != NULL))
        cr_expect(strstr(out, c->native ? "amo=native: ok" : "amo=am: ok"),
                  "fw_vertex did not report the expected mode");
    free(out);
}

/* ---- gvgraph --------------------------------------------------------------- */

static int gvgraph(int nranks, const char *args, char **out_p)
{
    char cmd[1024];

    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=shm GV_WARN_UNUSED_ENV=0 timeout -k 5 60 "
             "%s/bin/gvrun -n %d %s/bin/gvgraph %s", GV_BUILD_DIR, nranks,
             GV_BUILD_DIR, args);
    return drv_run(cmd, out_p);
}

/* The value of "name=" (with its '=') on the last 'graph ' line, or NaN. */
static double field(const char *out, const char *name)
{
    const char *line = NULL, *p = out, *f;

    while ((p = strstr(p, "graph app=")) != NULL) {
        line = p;
        p++;
    }
    if (line == NULL)
        return NAN;
    f = strstr(line, name);
    if ((f == NULL) || ((f > line) && (f[-1] != ' ')))
        return NAN;
    return strtod(f + strlen(name), NULL);
}

/* The last line carries every field of the definitions, and the same
 * check values on 1 and 2 ranks. */
Test(vertex, gvgraph_lines, .timeout = 200)
{
    static const struct {
        const char *app, *fields[3];
    } apps[] = {
        {"pagerank", {"iters=5 ", " sum=", " max="}},
        {"bfs", {"iters=", " reached=", " depth="}},
        {"cc", {"iters=", " components=", " largest="}},
        {"sssp", {"iters=", " reached=", " sumdist="}},
        {"bfs500", {"valid=4 ", " reached=", " teps_hmean="}},
    };

    for (size_t k = 0; k < sizeof(apps) / sizeof(apps[0]); k++) {
        char  args[256], *out1 = NULL, *out2 = NULL;
        int   rc;

        snprintf(args, sizeof(args), "%s --kron 11 --iters 5%s", apps[k].app,
                 strcmp(apps[k].app, "bfs500") ? "" : " --roots 4");
        rc = gvgraph(1, args, &out1);
        cr_expect_eq(rc, 0, "gvgraph %s on 1 rank: exit %d\n%s", args, rc,
                     out1 ? out1 : "");
        rc = gvgraph(2, args, &out2);
        cr_expect_eq(rc, 0, "gvgraph %s on 2 ranks: exit %d\n%s", args, rc,
                     out2 ? out2 : "");
        if ((out1 == NULL) || (out2 == NULL)) {
            free(out1);
            free(out2);
            continue;
        }
        {
            const char *head[] = {"graph app=", "ranks=", "transport=",
                                  "engine=vertex", "vertices=2048",
                                  "edges=32768", "load_s=", "build_s=",
                                  "run_s=", " run_cpu_s="};

            drv_expect_lines(out2, head, 10, "gvgraph's line lacks");
            drv_expect_lines(out2, apps[k].fields, 3, "gvgraph's line lacks");
        }
        /* The check fields agree across rank counts: integers exactly,
         * PageRank within 1e-9 and SSSP within 1e-6, relative. */
        for (int j = 1; j < 3; j++) {
            const char *name = apps[k].fields[j] + 1;
            double      a    = field(out1, name), b = field(out2, name);
            double      tol  = !strcmp(apps[k].app, "pagerank") ? 1e-9
                             : !strcmp(apps[k].app, "sssp")     ? 1e-6
                                                                : 0;

            if (!strcmp(name, "teps_hmean="))
                continue;
            cr_expect(!isnan(a) && (fabs(a - b) <= tol * fabs(a)),
                      "%s: %s%.17g on 1 rank, %.17g on 2", apps[k].app, name,
                      a, b);
        }
        free(out1);
        free(out2);
    }
}

/* --output writes one value per vertex. */
Test(vertex, gvgraph_output, .timeout = 120)
{
    char  dir[] = "/tmp/gv-vx-XXXXXX", args[512], path[128], *out = NULL;
    FILE *f;
    long  len = -1;
    int   rc;

    cr_assert(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/cc.bin", dir);
    snprintf(args, sizeof(args), "cc --kron 10 --output %s", path);
    rc = gvgraph(2, args, &out);
    cr_expect_eq(rc, 0, "gvgraph %s: exit %d\n%s", args, rc, out ? out : "");
    f = fopen(path, "rb");
    if (f != NULL) {
        fseek(f, 0, SEEK_END);
        len = ftell(f);
        fclose(f);
    }
    cr_expect_eq(len, 1024 * 8, "cc output: %ld bytes, expected 8192", len);
    free(out);
    snprintf(path, sizeof(path), "%s/bfs.txt", dir);
    snprintf(args, sizeof(args), "bfs --kron 10 --output %s", path);
    rc = gvgraph(2, args, &out);
    cr_expect_eq(rc, 0, "gvgraph %s: exit %d\n%s", args, rc, out ? out : "");
    free(out);
    out = drv_slurp(path);
    cr_expect((out != NULL) && (strncmp(out, "0 ", 2) == 0) &&
              (strstr(out, "\n1023 ") != NULL),
              "bfs text output: lines 'id level parent' for 0..1023");
    free(out);
    snprintf(args, sizeof(args), "rm -rf %s", dir);
    cr_expect_eq(system(args), 0);
}

/* Bad command lines and bad input: a message naming the problem and a
 * non-zero exit. */
Test(vertex, gvgraph_errors, .timeout = 200)
{
    static const struct {
        const char *args, *expect;
    } bad[] = {
        {"", "an application is required"},
        {"walk --kron 8", "application 'walk' unknown"},
        {"bfs", "give exactly one graph"},
        {"bfs --kron 8 --text x.txt", "give exactly one graph"},
        {"bfs --kron x", "--kron 'x': expected an integer"},
        {"bfs --kron 8 --root -3", "--root '-3'"},
        {"bfs --kron 8 --root 999", "--root 999 is not a vertex"},
        {"pagerank --kron 8 --tol nan", "--tol 'nan'"},
        {"pagerank --kron 8 --iters 0", "needs a --tol above 0"},
        {"bfs500 --kron 8 --engine linalg", "bfs500 is written natively"},
        {"cc --kron 8 --engine spark", "--engine 'spark' unknown"},
        {"cc --kron 8 --placement round", "--placement 'round' unknown"},
        {"cc --kron 8 --bogus 1", "option '--bogus' unknown"},
        {"cc --kron 8 --iters", "needs a value"},
        {"cc --kron 8 --roots 3", "--roots is for bfs500"},
        {"bfs --kron 8 --tol 0.1", "--tol is for pagerank"},
        {"cc --input x.el --weights x.w", "--weights is for sssp"},
        {"cc --input /nonexistent/g.el", "/nonexistent/g.el"},
        {"cc --kron 8 --output /nonexistent/dir/out.bin", "cannot open"},
    };

    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        char *out = NULL;
        int   rc  = gvgraph(2, bad[k].args, &out);

        cr_expect((rc != 0) && (rc != 124), "gvgraph %s: exit %d, expected "
                  "an error", bad[k].args, rc);
        cr_expect((out != NULL) && strstr(out, bad[k].expect),
                  "gvgraph %s: expected \"%s\" in:\n%s", bad[k].args,
                  bad[k].expect, out ? out : "");
        free(out);
    }
}
