/* Runs the distributed-graph test programs under gvrun on 1, 2, 3 and 4
 * ranks over tcp, shm and ucx/sm; checks that the Kronecker generator
 * gives the same list and the same file on every number of ranks; and
 * runs examples/graphstat on good and bad input.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "tests/multirank/driver.h"

#ifndef GV_BUILD_DIR
#define GV_BUILD_DIR "build"
#endif

typedef struct {
    int  tl;
    char prog[32];
    int  nranks;
    int  timeout_s;
} graph_case_t;

#define RANKS_1_TO_4(_tl, _prog, _t)                                          \
    {_tl, _prog, 1, _t}, {_tl, _prog, 2, _t}, {_tl, _prog, 3, _t},            \
    {_tl, _prog, 4, _t}
/* Rows of drv_tls[]: tcp, shm, ucx/sm. */
#define ALL(_prog, _t)                                                        \
    RANKS_1_TO_4(0, _prog, _t), RANKS_1_TO_4(1, _prog, _t),                   \
    RANKS_1_TO_4(2, _prog, _t)

/* Time limits: about 5 s and 2 s at most on a loaded 2-core machine. */
static graph_case_t cases[] = {
    ALL("fw_graph_build", 90),
    ALL("fw_graph_load", 90),
};

static int exists(const char *dir, const char *prog)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/%s/%s", GV_BUILD_DIR, dir, prog);
    return access(path, X_OK) == 0;
}

ParameterizedTestParameters(graph, run)
{
    return cr_make_param_array(graph_case_t, cases,
                               sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(graph_case_t *c, graph, run, .timeout = 150)
{
    const tl_cfg_t *t = &drv_tls[c->tl];
    char            cmd[1024], *out = NULL;
    int             rc;

    if (!t->built)
        cr_skip_test("%s %s -n %d: transport %s was not built", c->prog,
                     t->label, c->nranks, t->name);
    if (!exists("tests/frameworks", c->prog))
        cr_skip_test("%s was not built", c->prog);
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s %s GV_WARN_UNUSED_ENV=0 timeout -k 5 %d "
             "%s/bin/gvrun -n %d %s/tests/frameworks/%s", t->name, t->env,
             c->timeout_s, GV_BUILD_DIR, c->nranks, GV_BUILD_DIR, c->prog);
    rc = drv_run(cmd, &out);
    if (rc == 77)
        cr_skip_test("%s over %s -n %d: %s", c->prog, t->label, c->nranks,
                     out ? out : "");
    if (rc != 0)
        cr_log_error("%s\n--- output ---\n%s--- end ---", cmd, out ? out : "");
    cr_expect_eq(rc, 0, "%s over %s with %d ranks: exit %d%s", c->prog,
                 t->label, c->nranks, rc, (rc == 124) ? " (timed out)" : "");
    free(out);
}

/* The generator's list (checksums) and written files, on 1..4 ranks. */
static void kron_same(int tl)
{
    const tl_cfg_t *t = &drv_tls[tl];
    char            dir[] = "/tmp/gv-kron-XXXXXX", cmd[1024], first[512] = "";
    char           *out = NULL;
    int             n, rc;

    if (!t->built)
        cr_skip_test("transport %s was not built", t->label);
    cr_assert(mkdtemp(dir) != NULL);
    for (n = 1; n <= 4; n++) {
        char *line, *end;

        snprintf(cmd, sizeof(cmd),
                 "env GV_TRANSPORT=%s %s GV_WARN_UNUSED_ENV=0 timeout -k 5 90 "
                 "%s/bin/gvrun -n %d %s/tests/frameworks/fw_graph_kron 11 16 "
                 "12345 %s/k%d.el", t->name, t->env, GV_BUILD_DIR, n,
                 GV_BUILD_DIR, dir, n);
        rc = drv_run(cmd, &out);
        cr_assert_eq(rc, 0, "%s: exit %d\n%s", cmd, rc, out ? out : "");
        line = strstr(out, "kron scale=11");
        cr_assert(line != NULL, "%s: no result line\n%s", cmd, out);
        end = strchr(line, '\n');
        if (end != NULL)
            *end = '\0';
        if (n == 1)
            snprintf(first, sizeof(first), "%s", line);
        else
            cr_expect_str_eq(line, first, "%d ranks over %s: '%s', 1 rank: "
                             "'%s'", n, t->label, line, first);
        free(out);
        if (n > 1) {
            snprintf(cmd, sizeof(cmd), "cmp %s/k1.el %s/k%d.el && cmp "
                     "%s/k1.el.w %s/k%d.el.w", dir, dir, n, dir, dir, n);
            rc = drv_run(cmd, &out);
            cr_expect_eq(rc, 0, "the file written by %d ranks differs: %s", n,
                         out ? out : "");
            free(out);
        }
    }
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    rc = drv_run(cmd, &out);
    free(out);
}

Test(graph, kron_same_on_1_to_4_ranks_tcp, .timeout = 400) { kron_same(0); }
Test(graph, kron_same_on_1_to_4_ranks_shm, .timeout = 400) { kron_same(1); }
Test(graph, kron_same_on_1_to_4_ranks_ucx_sm, .timeout = 400) { kron_same(2); }

/* graphstat: a run, the same graph through a written file and through
 * text, and bad arguments and bad files with their exit codes. */
static int graphstat(const char *args, char **out_p)
{
    char cmd[1024];

    snprintf(cmd, sizeof(cmd), "env GV_TRANSPORT=shm timeout -k 5 90 "
             "%s/bin/gvrun -n 2 %s/examples/graphstat %s", GV_BUILD_DIR,
             GV_BUILD_DIR, args);
    return drv_run(cmd, out_p);
}

Test(graph, graphstat, .timeout = 400)
{
    char  dir[] = "/tmp/gv-gstat-XXXXXX", args[600], *out = NULL, *a, *b;
    int   rc;
    FILE *f;

    if (!exists("examples", "graphstat"))
        cr_skip_test("graphstat was not built");
    cr_assert(mkdtemp(dir) != NULL);
    snprintf(args, sizeof(args), "--kron 10 --undirected --simple --write "
             "%s/k.el", dir);
    rc = graphstat(args, &out);
    cr_assert_eq(rc, 0, "graphstat %s: exit %d\n%s", args, rc, out);
    a = strstr(out, "vertices=1024 edges_read=16384 edges=");
    cr_assert(a != NULL, "%s", out);
    a = strdup(a);
    *strstr(a, " load_s") = '\0';
    free(out);
    snprintf(args, sizeof(args), "--input %s/k.el --undirected --simple", dir);
    rc = graphstat(args, &out);
    cr_assert_eq(rc, 0, "graphstat %s: exit %d\n%s", args, rc, out);
    b = strstr(out, "vertices=");
    cr_assert(b != NULL && strncmp(a, b, strlen(a)) == 0,
              "the written file gives another graph: '%s' vs\n%s", a, out);
    free(out);
    free(a);

    /* a small text file, checked to the vertex */
    snprintf(args, sizeof(args), "%s/g.txt", dir);
    f = fopen(args, "w");
    cr_assert(f != NULL);
    fputs("# three vertices\n0 1\n1 2\n2 0\n0 0\n0 1\n", f);
    fclose(f);
    snprintf(args, sizeof(args), "--text %s/g.txt --nverts 5 --simple "
             "--in-edges --placement block", dir);
    rc = graphstat(args, &out);
    cr_expect_eq(rc, 0, "exit %d\n%s", rc, out);
    cr_expect(strstr(out, "vertices=5 edges_read=5 edges=3 maxdeg=1 "
                          "isolated=2") != NULL, "%s", out);
    free(out);

    /* bad input: exit 1, the file and line named once */
    snprintf(args, sizeof(args), "%s/bad.txt", dir);
    f = fopen(args, "w");
    cr_assert(f != NULL);
    fputs("0 1\n1 two\n", f);
    fclose(f);
    snprintf(args, sizeof(args), "--text %s/bad.txt", dir);
    rc = graphstat(args, &out);
    cr_expect_eq(rc, 1, "bad file: exit %d\n%s", rc, out);
    cr_expect(strstr(out, "bad.txt: line 2: destination 'two' is not a "
                          "non-negative integer") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof(args), "--input %s/g.txt", dir); /* 37 bytes */
    rc = graphstat(args, &out);
    cr_expect_eq(rc, 1, "text as binary: exit %d\n%s", rc, out);
    cr_expect(strstr(out, "is not a multiple of 16") != NULL, "%s", out);
    free(out);

    /* bad arguments: exit 2 and what is accepted */
    rc = graphstat("--kron 10 --bogus", &out);
    cr_expect_eq(rc, 2, "unknown option: exit %d\n%s", rc, out);
    cr_expect(strstr(out, "unknown option '--bogus'") != NULL, "%s", out);
    free(out);
    rc = graphstat("--kron ten", &out);
    cr_expect_eq(rc, 2, "bad number: exit %d\n%s", rc, out);
    cr_expect(strstr(out, "--kron 'ten': expected an integer in 0..40") !=
              NULL, "%s", out);
    free(out);
    rc = graphstat("--kron 10 --text x", &out);
    cr_expect_eq(rc, 2, "two inputs: exit %d\n%s", rc, out);
    cr_expect(strstr(out, "exactly one of") != NULL, "%s", out);
    free(out);
    rc = graphstat("--kron 10 --placement round", &out);
    cr_expect_eq(rc, 2, "bad placement: exit %d\n%s", rc, out);
    cr_expect(strstr(out, "expected hash or block") != NULL, "%s", out);
    free(out);

    snprintf(args, sizeof(args), "rm -rf %s", dir);
    rc = drv_run(args, &out);
    free(out);
}
