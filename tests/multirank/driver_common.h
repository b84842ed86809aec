/* Shared by the multi-rank drivers (driver_matrix.c, driver_fault.c,
 * driver_args.c and the backends' <backend>/driver_<backend>.c): the case
 * of the "multirank/run" test that runs one mr_* program through gvrun
 * over one transport configuration, and the helpers their fault and
 * argument tests have in common. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_TESTS_DRIVER_COMMON_H
#define GV_TESTS_DRIVER_COMMON_H

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "tests/multirank/driver.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef GV_BUILD_DIR
#define GV_BUILD_DIR "build"
#endif

/* A case's transport configuration when it runs over every row of
 * drv_tls[] (DRV_MULTIRANK_RUN makes one case of each). */
#define DRV_ALL (-1)

/* One run of an mr_* program. Parameters are copied into each test's
 * process, which Criterion may start afresh (another address-space
 * layout): no pointers, only arrays. */
typedef struct {
    int  tl;        /* enum drv_tl, or DRV_ALL */
    char prog[32];
    int  nranks;
    char args[48];
    int  timeout_s;
    char env[96];   /* extra GV_* settings for this case */
} mr_case_t;

/* The @a n @a rows with each DRV_ALL one made a case per transport
 * configuration, in drv_tls[]'s order, into @a out (room for
 * n * DRV_NTLS); returns how many. */
static inline size_t drv_expand_cases(const mr_case_t *rows, size_t n,
                                      mr_case_t *out)
{
    size_t i, k, m = 0;

    for (i = 0; i < n; i++) {
        if (rows[i].tl != DRV_ALL) {
            out[m++] = rows[i];
            continue;
        }
        for (k = 0; k < DRV_NTLS; k++) {
            out[m]    = rows[i];
            out[m].tl = (int)k;
            m++;
        }
    }
    return m;
}

/* Run case @a c: its program through gvrun over its transport under its
 * time limit; expect exit 0, skip on 77 (the program says why) or when
 * the transport or the program was not built. */
static inline void drv_run_case(const mr_case_t *c)
{
    const tl_cfg_t *t = &drv_tls[c->tl];
    char            cmd[1024], path[512], *out = NULL;
    int             rc;

    if (!t->built)
        cr_skip_test("%s %s -n %d: transport %s was not built", c->prog,
                     t->label, c->nranks, t->name);
    snprintf(path, sizeof(path), "%s/tests/multirank/%s", GV_BUILD_DIR,
             c->prog);
    if (access(path, X_OK) != 0)
        cr_skip_test("%s was not built", c->prog);
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s %s %s GV_WARN_UNUSED_ENV=0 timeout -k 5 %d "
             "%s/bin/gvrun -n %d %s/tests/multirank/%s %s", t->name, t->env,
             c->env, c->timeout_s, GV_BUILD_DIR, c->nranks, GV_BUILD_DIR, c->prog,
             c->args);
    rc = drv_run(cmd, &out);
    if (rc == 77)
        cr_skip_test("%s over %s -n %d: %s", c->prog, t->label, c->nranks,
                     out ? out : "");
    cr_log_info("%s %s over %s -n %d: exit %d", c->env, c->prog, t->label,
                c->nranks, rc);
    if (rc != 0)
        cr_log_error("%s\n--- output ---\n%s--- end ---", cmd, out ? out : "");
    cr_expect_eq(rc, 0, "%s over %s with %d ranks: exit %d%s", c->prog,
                 t->label, c->nranks, rc,
                 (rc == 124) ? " (timed out)" : "");
    free(out);
}

/* The parameterized test "multirank/run" over the cases of the array
 * @a _rows (DRV_ALL rows expanded), each under its own time limit. */
#define DRV_MULTIRANK_RUN(_rows)                                             \
    ParameterizedTestParameters(multirank, run)                              \
    {                                                                        \
        static mr_case_t all[sizeof(_rows) / sizeof(_rows[0]) * DRV_NTLS]; \
        size_t           n;                                                  \
                                                                             \
        n = drv_expand_cases(_rows, sizeof(_rows) / sizeof(_rows[0]), all);  \
        return cr_make_param_array(mr_case_t, all, n);                       \
    }                                                                        \
                                                                             \
    ParameterizedTest(mr_case_t *c, multirank, run, .timeout = 200)          \
    {                                                                        \
        drv_run_case(c);                                                     \
    }

static inline double drv_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Run @a cmd; expect exit @a want_rc and every one of the @a nlines
 * @a lines in its output. */
static inline void drv_expect_run(const char *cmd, int want_rc,
                                  const char *const *lines, size_t nlines)
{
    char *out = NULL;
    int   rc  = drv_run(cmd, &out);

    cr_expect_eq(rc, want_rc, "%s: exit %d, expected %d:\n%s", cmd, rc,
                 want_rc, out ? out : "");
    if (drv_expect_lines(out ? out : "", lines, nlines, cmd) > 0)
        cr_log_info("%s:\n%s", cmd, out ? out : "");
    free(out);
}

/* The entries of /dev/shm whose names start with one of the @a npre
 * prefixes @a pre, at most @a max of them, into @a names. */
static inline int drv_shm_named(const char *const *pre, int npre,
                                char names[][64], int max)
{
    DIR           *d = opendir("/dev/shm");
    struct dirent *e;
    int            n = 0, i;

    if (d == NULL)
        return 0;
    while (((e = readdir(d)) != NULL) && (n < max))
        for (i = 0; i < npre; i++)
            if (strncmp(e->d_name, pre[i], strlen(pre[i])) == 0) {
                snprintf(names[n++], 64, "%.63s", e->d_name);
                break;
            }
    closedir(d);
    return n;
}

/* Our shm transport's segments ("gv-<job>-<rank>"). */
static inline int drv_shm_objects(char names[][64], int max)
{
    static const char *const gv[] = {"gv-"};

    return drv_shm_named(gv, 1, names, max);
}

/* Run @a prog (rank 1 sleeps 30 s while rank 0 waits on it) over @a t
 * with GV_TIMEOUT_S=5: the job must stop well before rank 1 wakes, with a
 * message naming rank 1 and containing @a also (when not NULL). An exit of
 * 77 skips the test when @a may_skip. */
static inline void drv_expect_stuck_named(const tl_cfg_t *t, const char *prog,
                                          const char *args, const char *also,
                                          int may_skip)
{
    char   cmd[512], *out = NULL;
    double t0;
    int    rc;

    if (!t->built)
        cr_skip_test("transport %s was not built", t->label);
    /* GV_TIMEOUT_S also bounds start-up: 5 s leaves a loaded machine room
     * for that, and the job still stops well before rank 1 wakes (30 s). */
    snprintf(cmd, sizeof(cmd), "env GV_TRANSPORT=%s %s GV_TIMEOUT_S=5 "
             "timeout -k 5 50 %s/bin/gvrun -n 2 %s/tests/multirank/%s %s",
             t->name, t->env, GV_BUILD_DIR, GV_BUILD_DIR, prog, args);
    t0 = drv_now_s();
    rc = drv_run(cmd, &out);
    if (may_skip && (rc == 77))
        cr_skip_test("%s %s: %s", prog, t->label, out ? out : "");
    cr_expect(rc != 0 && rc != 124, "%s %s: exit %d:\n%s", prog, t->label,
              rc, out ? out : "");
    cr_expect(drv_now_s() - t0 < 20.0, "%s %s: took %.1f s to stop", prog,
              t->label, drv_now_s() - t0);
    cr_expect(out && strstr(out, "rank 1 took none of the messages sent to "
                                 "it for 5 s") &&
                  ((also == NULL) || strstr(out, also)),
              "%s %s: the message does not name rank 1%s%s:\n%s", prog,
              t->label, also ? " and say " : "", also ? also : "",
              out ? out : "");
    free(out);
}

#endif
