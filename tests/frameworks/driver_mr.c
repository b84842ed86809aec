/* Criterion driver for MapReduce and joins: fw_mr and fw_join through
 * gvrun on 1, 2, 3 and 4 ranks over tcp, shm and ucx/sm; the programs
 * gvmr and gvjoin: their check lines, the same answers on 1 and 3 ranks,
 * malformed input named by file and line, bad options refused.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "tests/multirank/driver.h"

#ifndef GV_BUILD_DIR
#define GV_BUILD_DIR "build"
#endif

/* Rows of drv_tls[]: tcp, shm, ucx/sm. */
enum { TL_TCP = 0, TL_SHM = 1, TL_UCX = 2 };

typedef struct {
    int  tl;
    char prog[16];
    int  nranks;
} mr_case_t;

/* Each run takes one or two seconds idle; 60 s is far beyond 3x that on
 * a loaded machine. */
#define ALL(_p)                                                               \
    {TL_TCP, _p, 1}, {TL_TCP, _p, 2}, {TL_TCP, _p, 3}, {TL_TCP, _p, 4},       \
    {TL_SHM, _p, 1}, {TL_SHM, _p, 2}, {TL_SHM, _p, 3}, {TL_SHM, _p, 4},       \
    {TL_UCX, _p, 1}, {TL_UCX, _p, 2}, {TL_UCX, _p, 3}, {TL_UCX, _p, 4}

static mr_case_t cases[] = {ALL("fw_mr"), ALL("fw_join")};

ParameterizedTestParameters(mapreduce, run)
{
    return cr_make_param_array(mr_case_t, cases,
                               sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(mr_case_t *c, mapreduce, run, .timeout = 120)
{
    const tl_cfg_t *t = &drv_tls[c->tl];
    char            cmd[1024], *out = NULL;
    int             rc;

    if (!t->built)
        cr_skip_test("%s over %s -n %d: transport %s was not built", c->prog,
                     t->label, c->nranks, t->name);
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s %s GV_WARN_UNUSED_ENV=0 timeout -k 5 60 "
             "%s/bin/gvrun -n %d %s/tests/frameworks/%s", t->name, t->env,
             GV_BUILD_DIR, c->nranks, GV_BUILD_DIR, c->prog);
    rc = drv_run(cmd, &out);
    if (rc == 77)
        cr_skip_test("%s over %s -n %d: %s", c->prog, t->label, c->nranks,
                     out ? out : "");
    cr_expect_eq(rc, 0, "%s over %s with %d ranks: exit %d%s\n%s", c->prog,
                 t->label, c->nranks, rc, (rc == 124) ? " (timed out)" : "",
                 out ? out : "");
    cr_expect(out && strstr(out, "ok: fw_"), "%s over %s -n %d said no "
              "final ok line:\n%s", c->prog, t->label, c->nranks,
              out ? out : "");
    free(out);
}

/* Run @a args (a program of the build directory and its arguments) over
 * tcp on @a n ranks, in @a dir. */
static int run_prog(const char *dir, int n, const char *args, char **out_p)
{
    char  cmd[1024], *build = realpath(GV_BUILD_DIR, NULL);
    int   rc;

    cr_assert(build != NULL, "no build directory %s", GV_BUILD_DIR);
    snprintf(cmd, sizeof(cmd),
             "cd %s && env GV_TRANSPORT=tcp GV_WARN_UNUSED_ENV=0 timeout -k 5 "
             "60 %s/bin/gvrun -n %d %s/%s", dir, build, n, build, args);
    rc = drv_run(cmd, out_p);
    free(build);
    return rc;
}

static char *make_dir(void)
{
    char *d = strdup("/tmp/gv-drvmr-XXXXXX");

    cr_assert(mkdtemp(d) != NULL, "mkdtemp");
    return d;
}

static void put(const char *dir, const char *name, const char *text)
{
    char  p[256];
    FILE *f;

    snprintf(p, sizeof(p), "%s/%s", dir, name);
    f = fopen(p, "wb");
    cr_assert(f != NULL, "cannot create %s", p);
    fputs(text, f);
    fclose(f);
}

static void remove_dir(char *dir)
{
    char cmd[300];

    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        cr_log_warn("could not remove %s", dir);
    free(dir);
}

/* Word count of small files: exact totals on 1 and 3 ranks. */
Test(mapreduce, gvmr_wordcount, .timeout = 120)
{
    char       *dir = make_dir(), *out = NULL;
    int         n, rc;
    const char *lines[] = {"words=8 distinct=4", "           4 to"};

    put(dir, "a.txt", "to be\tor\nnot\v to\f be\r\n");
    put(dir, "b.txt", "");
    put(dir, "c.txt", "to to");
    for (n = 1; n <= 3; n += 2) {
        rc = run_prog(dir, n, "bin/gvmr wordcount a.txt b.txt c.txt", &out);
        cr_expect_eq(rc, 0, "gvmr wordcount -n %d: exit %d\n%s", n, rc,
                     out ? out : "");
        if (drv_expect_lines(out ? out : "", lines, 2, "missing") > 0)
            cr_log_error("%s", out ? out : "");
        free(out);
    }
    rc = run_prog(dir, 2, "bin/gvmr wordcount a.txt nothere.txt", &out);
    cr_expect(rc != 0, "a missing file: exit 0");
    cr_expect(out && strstr(out, "nothere.txt"), "the error does not name "
              "the file:\n%s", out ? out : "");
    free(out);
    remove_dir(dir);
}

/* k-means and triangles give the same check line on 1 and 3 ranks; the
 * generated join has exactly NS rows. */
Test(mapreduce, same_answers_on_1_and_3_ranks, .timeout = 180)
{
    static const char *args[] = {
        "bin/gvmr kmeans --generate 20000 --dim 4 --k 5 --iters 5",
        "bin/gvjoin triangles --kron 10",
        "bin/gvmr wordcount --generate 2m --vocab 1000"};
    char   *dir = make_dir();
    size_t  i;

    for (i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
        char *o1 = NULL, *o3 = NULL, *l1, *l3, *s;
        int   r1 = run_prog(dir, 1, args[i], &o1);
        int   r3 = run_prog(dir, 3, args[i], &o3);

        cr_expect((r1 == 0) && (r3 == 0), "%s: exit %d and %d\n%s\n%s",
                  args[i], r1, r3, o1 ? o1 : "", o3 ? o3 : "");
        /* Compare the key=value lines without their seconds. */
        l1 = o1 ? strstr(o1, "=") : NULL;
        l3 = o3 ? strstr(o3, "=") : NULL;
        if ((l1 != NULL) && (l3 != NULL)) {
            while ((l1 > o1) && (l1[-1] != '\n'))
                l1--;
            while ((l3 > o3) && (l3[-1] != '\n'))
                l3--;
            if ((s = strstr(l1, " seconds=")) != NULL)
                *s = '\0';
            if ((s = strstr(l3, " seconds=")) != NULL)
                *s = '\0';
            cr_expect_str_eq(l1, l3, "%s: 1 rank said %s, 3 ranks %s",
                             args[i], l1, l3);
        } else {
            cr_expect_fail("%s: no key=value line\n%s\n%s", args[i],
                           o1 ? o1 : "", o3 ? o3 : "");
        }
        free(o1);
        free(o3);
    }
    {
        char *o = NULL;
        int   rc = run_prog(dir, 2, "bin/gvjoin join --generate 3k,7k "
                                    "--keys zipf --count", &o);
        cr_expect(rc == 0 && o && strstr(o, "rows=7000 "), "generated "
                  "join: exit %d\n%s", rc, o ? o : "");
        free(o);
    }
    remove_dir(dir);
}

/* A join of CSV files, and a malformed one named by file and line. */
Test(mapreduce, gvjoin_csv, .timeout = 120)
{
    char       *dir = make_dir(), *out = NULL;
    int         rc;
    const char *ok[]  = {"rows=5 "};
    const char *bad[] = {"bad.csv:3: a field that is not an integer"};

    put(dir, "a.csv", "k,v\n1,10\n2,20\n2,21\n3,30\n");
    put(dir, "b.csv", "k,w\n2,200\n2,201\n3,300\n4,400\n");
    put(dir, "bad.csv", "1,2\n3,4\n5,five\n");
    put(dir, "c.csv", "1,2\n3,4\n");
    rc = run_prog(dir, 3, "bin/gvjoin join --left a.csv --right b.csv "
                          "--on 1=1 --header", &out);
    cr_expect_eq(rc, 0, "exit %d\n%s", rc, out ? out : "");
    if (drv_expect_lines(out ? out : "", ok, 1, "missing") > 0)
        cr_log_error("%s", out ? out : "");
    free(out);
    rc = run_prog(dir, 2, "bin/gvjoin join --left c.csv --right bad.csv "
                          "--on 1=1", &out);
    cr_expect(rc != 0, "a malformed file: exit 0");
    if (drv_expect_lines(out ? out : "", bad, 1, "missing") > 0)
        cr_log_error("%s", out ? out : "");
    free(out);
    remove_dir(dir);
}

/* Bad options: a message naming what was wrong, exit 2. */
Test(mapreduce, bad_options, .timeout = 120)
{
    static const struct {
        const char *args, *says;
    } c[] = {
        {"bin/gvmr", "no command given"},
        {"bin/gvmr count x", "unknown command 'count'"},
        {"bin/gvmr wordcount --generate 12q", "bad size '12q'"},
        {"bin/gvmr kmeans --generate 100 --k 3", "needs --points FILE or"},
        {"bin/gvmr wordcount --frob a.txt", "unknown option '--frob'"},
        {"bin/gvjoin triangles", "takes --kron SCALE or --input FILE"},
        {"bin/gvjoin join --left a.csv --right b.csv --on 1:1", "bad --on"},
        {"bin/gvjoin join --generate 10 --keys x", "bad --generate '10'"},
        {"bin/gvjoin join --generate 10,10 --keys skewed", "bad --keys"},
    };
    char  *dir = make_dir();
    size_t i;

    for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        char *out = NULL;
        int   rc  = run_prog(dir, 1, c[i].args, &out);
        cr_expect(rc == 2, "%s: exit %d, not 2", c[i].args, rc);
        cr_expect(out && strstr(out, c[i].says), "%s said:\n%s", c[i].args,
                  out ? out : "");
        free(out);
    }
    remove_dir(dir);
}
