/* Runs fw_linalg (the tiling and the linear-algebra engine's applications
 * against the checkers and the vertex engine) on 1, 2, 3, 4, 5 and 8
 * ranks over tcp, shm and ucx/sm, with pretend nodes (GV_TEST_NODES); and
 * gvgraph --engine linalg: the same check values and the same --output
 * bytes as the vertex engine, the per-iteration breakdown, bad command
 * lines. SPDX-License-Identifier: BSD-3-Clause */
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
    int  nodes;     /* GV_TEST_NODES, 0: unset */
    char scales[16];
    int  timeout_s;
} la_case_t;

/* A run takes 1-8 s on a loaded 2-core machine (8 ranks oversubscribe
 * it: small graphs there); the limits leave 3x and more. */
static la_case_t cases[] = {
    {1, 1, 0, "10 12", 90}, {1, 2, 0, "10 12", 90}, {1, 3, 0, "10 12", 90},
    {1, 4, 0, "10 12", 90}, {1, 5, 0, "10 12", 90}, {1, 8, 0, "10", 120},
    {0, 1, 0, "10 11", 90}, {0, 2, 0, "10 11", 90}, {0, 3, 0, "10 11", 90},
    {0, 4, 0, "10 11", 90}, {0, 5, 0, "10", 90},    {0, 8, 0, "10", 120},
    {2, 2, 0, "10 11", 90}, {2, 3, 0, "10", 90},    {2, 4, 0, "10", 90},
    {2, 5, 0, "10", 90},
    {0, 4, 2, "10", 90},    {1, 8, 2, "10", 120},   {1, 8, 4, "10", 120},
    {1, 2, 0, "14", 120},
};

ParameterizedTestParameters(linalg, apps)
{
    return cr_make_param_array(la_case_t, cases,
                               sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(la_case_t *c, linalg, apps, .timeout = 180)
{
    const tl_cfg_t *t = &drv_tls[c->tl];
    char            cmd[1024], nodes[32] = "", *out = NULL, want[64];
    int             rc;

    if (!t->built)
        cr_skip_test("fw_linalg %s -n %d: transport %s was not built",
                     t->label, c->nranks, t->name);
    if (c->nodes > 0)
        snprintf(nodes, sizeof(nodes), "GV_TEST_NODES=%d", c->nodes);
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s %s %s GV_WARN_UNUSED_ENV=0 timeout -k 5 %d "
             "%s/bin/gvrun -n %d %s/tests/frameworks/fw_linalg --scales '%s'",
             t->name, t->env, nodes, c->timeout_s, GV_BUILD_DIR, c->nranks,
             GV_BUILD_DIR, c->scales);
    rc = drv_run(cmd, &out);
    if (rc == 77)
        cr_skip_test("fw_linalg over %s -n %d: %s", t->label, c->nranks,
                     out ? out : "");
    if ((rc != 0) || (out == NULL) || !strstr(out, "fw_linalg: "))
        cr_log_error("%s\n--- output ---\n%s--- end ---", cmd, out ? out : "");
    cr_expect_eq(rc, 0, "fw_linalg over %s with %d ranks (%d nodes): exit "
                 "%d%s", t->label, c->nranks, c->nodes, rc,
                 (rc == 124) ? " (timed out)" : "");
    snprintf(want, sizeof(want), "fw_linalg: %d ranks, %d nodes, ", c->nranks,
             c->nodes > 0 ? c->nodes : 1);
    if ((rc == 0) && (out != NULL))
        cr_expect(strstr(out, want), "fw_linalg did not report \"%s\"", want);
    free(out);
}

/* ---- gvgraph --engine linalg ------------------------------------------------ */

static int gvgraph(const char *tl, int nranks, const char *args, char **out_p)
{
    char cmd[1024];

    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s GV_WARN_UNUSED_ENV=0 timeout -k 5 60 "
             "%s/bin/gvrun -n %d %s/bin/gvgraph %s", tl, GV_BUILD_DIR, nranks,
             GV_BUILD_DIR, args);
    return drv_run(cmd, out_p);
}

/* The value of "name=" on the last 'graph ' line, or NaN. */
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

/* The same check values from both engines, on 1, 2 and 3 ranks, over shm
 * and tcp; the line as the vertex engine's with engine=linalg. */
Test(linalg, gvgraph_engines, .timeout = 300)
{
    static const struct {
        const char *app, *fields[2];
    } apps[] = {
        {"pagerank", {"sum=", "max="}},
        {"bfs", {"reached=", "depth="}},
        {"cc", {"components=", "largest="}},
        {"sssp", {"reached=", "sumdist="}},
    };

    for (size_t k = 0; k < sizeof(apps) / sizeof(apps[0]); k++) {
        char   args[256], *ref = NULL;
        double tol = !strcmp(apps[k].app, "pagerank") ? 1e-9
                   : !strcmp(apps[k].app, "sssp")     ? 1e-12
                                                      : 0;
        int    rc;

        snprintf(args, sizeof(args), "%s --kron 11 --iters 5 --engine vertex",
                 apps[k].app);
        rc = gvgraph("shm", 2, args, &ref);
        cr_expect_eq(rc, 0, "gvgraph %s: exit %d\n%s", args, rc,
                     ref ? ref : "");
        for (int n = 1; (ref != NULL) && (n <= 3); n++) {
            for (int tcp = 0; tcp < 2; tcp++) {
                char *out = NULL;

                if (tcp && (n != 2))
                    continue;
                snprintf(args, sizeof(args), "%s --kron 11 --iters 5 "
                         "--engine linalg", apps[k].app);
                rc = gvgraph(tcp ? "tcp" : "shm", n, args, &out);
                cr_expect_eq(rc, 0, "gvgraph %s on %d ranks: exit %d\n%s",
                             args, n, rc, out ? out : "");
                if (out == NULL)
                    continue;
                {
                    const char *head[] = {"engine=linalg", "vertices=2048",
                                          "edges=32768", "load_s=",
                                          "build_s=", "run_s="};

                    drv_expect_lines(out, head, 6, "gvgraph's line lacks");
                }
                for (int j = 0; j < 2; j++) {
                    double a = field(ref, apps[k].fields[j]);
                    double b = field(out, apps[k].fields[j]);

                    cr_expect(!isnan(a) && (fabs(a - b) <= tol * fabs(a)),
                              "%s: %s%.17g from the vertex engine, %.17g from "
                              "linalg on %d ranks", apps[k].app,
                              apps[k].fields[j], a, b, n);
                }
                free(out);
            }
        }
        free(ref);
    }
}

/* --output: the same bytes from both engines (levels, parents, labels,
 * distances), and --verbose: the Broadcast/Combine/Apply breakdown. */
Test(linalg, gvgraph_output, .timeout = 240)
{
    static const char *apps[] = {"bfs", "cc", "sssp"};
    char dir[] = "/tmp/gv-la-XXXXXX", args[512], p1[128], p2[128];
    char *out = NULL, *a, *b;
    int   rc;

    cr_assert(mkdtemp(dir) != NULL);
    for (size_t k = 0; k < sizeof(apps) / sizeof(apps[0]); k++) {
        snprintf(p1, sizeof(p1), "%s/%s.vx.txt", dir, apps[k]);
        snprintf(p2, sizeof(p2), "%s/%s.la.txt", dir, apps[k]);
        snprintf(args, sizeof(args), "%s --kron 10 --output %s", apps[k], p1);
        rc = gvgraph("shm", 2, args, &out);
        cr_expect_eq(rc, 0, "gvgraph %s: exit %d\n%s", args, rc,
                     out ? out : "");
        free(out);
        snprintf(args, sizeof(args), "%s --kron 10 --engine linalg --output "
                 "%s", apps[k], p2);
        rc = gvgraph("shm", 3, args, &out);
        cr_expect_eq(rc, 0, "gvgraph %s: exit %d\n%s", args, rc,
                     out ? out : "");
        free(out);
        a = drv_slurp(p1);
        b = drv_slurp(p2);
        cr_expect((a != NULL) && (b != NULL) && (strlen(a) > 1024 * 4) &&
                      !strcmp(a, b),
                  "%s: the engines' --output files differ", apps[k]);
        free(a);
        free(b);
    }
    rc = gvgraph("shm", 4, "sssp --kron 10 --engine linalg --verbose", &out);
    cr_expect_eq(rc, 0, "gvgraph --verbose: exit %d", rc);
    {
        const char *lines[] = {"linalg iter=1 active=1 ", "linalg total ",
                               "bcast_s=", "combine_s=", "reduce_s=",
                               "apply_s=", "bcast_bytes=", "combine_bytes="};

        if (out != NULL)
            drv_expect_lines(out, lines, 8, "gvgraph --verbose lacks");
    }
    free(out);
    snprintf(args, sizeof(args), "rm -rf %s", dir);
    cr_expect_eq(system(args), 0);
}

/* Bad command lines: a message naming the problem and a non-zero exit. */
Test(linalg, gvgraph_errors, .timeout = 120)
{
    static const struct {
        const char *args, *expect;
    } bad[] = {
        {"bfs500 --kron 8 --engine linalg", "bfs500 is written natively"},
        {"cc --kron 8 --engine linalg --placement block",
         "--placement is the vertex engine's"},
        {"cc --kron 8 --engine matrix", "--engine 'matrix' unknown"},
        {"bfs --kron 8 --engine linalg --root 999",
         "--root 999 is not a vertex"},
        {"pagerank --kron 8 --engine linalg --iters 0",
         "needs a --tol above 0"},
    };

    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        char *out = NULL;
        int   rc  = gvgraph("shm", 2, bad[k].args, &out);

        cr_expect((rc != 0) && (rc != 124), "gvgraph %s: exit %d, expected "
                  "an error", bad[k].args, rc);
        cr_expect((out != NULL) && strstr(out, bad[k].expect),
                  "gvgraph %s: expected \"%s\" in:\n%s", bad[k].args,
                  bad[k].expect, out ? out : "");
        free(out);
    }
}
