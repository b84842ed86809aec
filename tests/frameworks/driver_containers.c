/* Criterion driver for the distributed containers: each container's test
 * program (tests/frameworks/fw_containers_*) through gvrun on 1, 2, 3 and
 * 4 ranks over tcp, shm and ucx/sm, and variants (wide and small keys, a
 * set, block-cyclic arrays, another element size) on some of them; plus
 * the heap's limit and bad options. SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "tests/multirank/driver.h"

#ifndef GV_BUILD_DIR
#define GV_BUILD_DIR "build"
#endif

/* Rows of drv_tls[] these tests run over: tcp, shm, ucx/sm. */
enum { TL_TCP = 0, TL_SHM = 1, TL_UCX = 2 };

/* No pointers: Criterion may copy parameters into a fresh process. */
typedef struct {
    int  tl;
    char prog[32];
    int  nranks;
    char args[48];
    int  timeout_s;
} fw_case_t;

/* A program over the three transports with 1..4 ranks. Each run takes
 * about a second idle; 60 s is far beyond 3x that on a loaded machine. */
#define ALL(_prog, _args)                                                    \
    {TL_TCP, _prog, 1, _args, 60}, {TL_TCP, _prog, 2, _args, 60},            \
    {TL_TCP, _prog, 3, _args, 60}, {TL_TCP, _prog, 4, _args, 60},            \
    {TL_SHM, _prog, 1, _args, 60}, {TL_SHM, _prog, 2, _args, 60},            \
    {TL_SHM, _prog, 3, _args, 60}, {TL_SHM, _prog, 4, _args, 60},            \
    {TL_UCX, _prog, 1, _args, 60}, {TL_UCX, _prog, 2, _args, 60},            \
    {TL_UCX, _prog, 3, _args, 60}, {TL_UCX, _prog, 4, _args, 60}

static fw_case_t cases[] = {
    ALL("fw_containers_map", ""),
    ALL("fw_containers_array", ""),
    ALL("fw_containers_bag", ""),
    /* generic keys, wide values; a set; block-cyclic arrays with a block
     * that divides nothing; small elements */
    {TL_TCP, "fw_containers_map", 3, "-k 12 -v 24", 60},
    {TL_SHM, "fw_containers_map", 4, "-k 20 -v 16", 60},
    {TL_UCX, "fw_containers_map", 2, "-k 12 -v 24", 60},
    {TL_TCP, "fw_containers_map", 2, "-v 0", 60},
    {TL_SHM, "fw_containers_map", 3, "-k 16 -v 0", 60},
    {TL_TCP, "fw_containers_array", 3, "-c -b 5", 60},
    {TL_SHM, "fw_containers_array", 4, "-c", 60},
    {TL_UCX, "fw_containers_array", 3, "-c -b 7", 60},
    {TL_SHM, "fw_containers_array", 4, "-c -b 1 -N 9 -w 8", 60},
    {TL_TCP, "fw_containers_bag", 4, "-e 16", 60},
    {TL_SHM, "fw_containers_bag", 2, "-e 1000 -n 10", 60},
};

ParameterizedTestParameters(containers, run)
{
    return cr_make_param_array(fw_case_t, cases,
                               sizeof(cases) / sizeof(cases[0]));
}

static int run_case(const fw_case_t *c, const char *extra_env, char **out_p)
{
    const tl_cfg_t *t = &drv_tls[c->tl];
    char            cmd[1024];

    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s %s %s GV_WARN_UNUSED_ENV=0 timeout -k 5 %d "
             "%s/bin/gvrun -n %d %s/tests/frameworks/%s %s", t->name, t->env,
             extra_env, c->timeout_s, GV_BUILD_DIR, c->nranks, GV_BUILD_DIR,
             c->prog, c->args);
    return drv_run(cmd, out_p);
}

ParameterizedTest(fw_case_t *c, containers, run, .timeout = 120)
{
    const tl_cfg_t *t = &drv_tls[c->tl];
    char           *out = NULL;
    int             rc;

    if (!t->built)
        cr_skip_test("%s over %s -n %d: transport %s was not built", c->prog,
                     t->label, c->nranks, t->name);
    rc = run_case(c, "", &out);
    if (rc == 77)
        cr_skip_test("%s over %s -n %d: %s", c->prog, t->label, c->nranks,
                     out ? out : "");
    cr_expect_eq(rc, 0, "%s %s over %s with %d ranks: exit %d%s\n%s",
                 c->prog, c->args, t->label, c->nranks, rc,
                 (rc == 124) ? " (timed out)" : "", out ? out : "");
    cr_expect(out && strstr(out, "ok: "), "%s %s over %s -n %d said no ok "
              "line:\n%s", c->prog, c->args, t->label, c->nranks,
              out ? out : "");
    free(out);
}

/* An array beyond the global heap is refused on every rank, and the error
 * names the variable to raise. */
Test(containers, heap_exhausted_names_gv_heap, .timeout = 120)
{
    fw_case_t   c = {TL_TCP, "fw_containers_array", 2, "-H", 60};
    char       *out = NULL;
    int         rc  = run_case(&c, "GV_HEAP=4m", &out);
    const char *lines[] = {"raise GV_HEAP",
                           "ok: an array beyond the heap was refused"};

    cr_expect_eq(rc, 0, "exit %d:\n%s", rc, out ? out : "");
    if (drv_expect_lines(out ? out : "", lines, 2, "missing") > 0)
        cr_log_error("%s", out ? out : "");
    free(out);
}

/* Bad options are refused with a message and a non-zero exit. */
Test(containers, bad_options, .timeout = 60)
{
    fw_case_t c[] = {{TL_TCP, "fw_containers_map", 1, "-k 3", 30},
                     {TL_TCP, "fw_containers_bag", 1, "-e 2000", 30},
                     {TL_TCP, "fw_containers_array", 1, "-N 2", 30}};
    size_t    i;

    for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        char *out = NULL;
        int   rc  = run_case(&c[i], "", &out);
        cr_expect(rc != 0, "%s %s: exit 0", c[i].prog, c[i].args);
        cr_expect(out && strstr(out, "bad option values"),
                  "%s %s said:\n%s", c[i].prog, c[i].args, out ? out : "");
        free(out);
    }
}
