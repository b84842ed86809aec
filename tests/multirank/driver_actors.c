/* The example actor runtime (examples/actors.c) over every transport
 * configuration: a token ring on timers in its own epoll loop, and the
 * same with a rank killed on the way. SPDX-License-Identifier: BSD-3-Clause */
#include "driver.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

/* 300 hops of 2 ms take under a second idle; a loss waits 1 s more, and
 * the watchdog (GV_TIMEOUT_S=5) finds a dead rank where the transport
 * does not. */
#define GVRUN_LIMIT_S 60

typedef struct {
    int tl;   /* index in drv_tls[] */
    int kill; /* kill rank 2 at hop 40 */
} actors_case_t;

ParameterizedTestParameters(actors, ring)
{
    static actors_case_t cases[2 * DRV_NTLS];
    size_t               j, n = 0;

    for (j = 0; j < DRV_NTLS; j++) {
        cases[n++] = (actors_case_t){(int)j, 0};
        cases[n++] = (actors_case_t){(int)j, 1};
    }
    return cr_make_param_array(actors_case_t, cases, n);
}

ParameterizedTest(actors_case_t *c, actors, ring,
                  .timeout = 3 * GVRUN_LIMIT_S / 2)
{
    const tl_cfg_t *t = &drv_tls[c->tl];
    char            cmd[1024], *out = NULL;
    int             rc, bad;

    if (!t->built)
        cr_skip_test("actors over %s: transport %s was not built", t->label,
                     t->name);
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s %s GV_TIMEOUT_S=5 GV_WARN_UNUSED_ENV=0 "
             "timeout -k 5 %d %s/bin/gvrun %s -n 3 %s/examples/actors "
             "--hops 300 %s",
             t->name, t->env, GVRUN_LIMIT_S, GV_BUILD_DIR,
             c->kill ? "--keep-going" : "", GV_BUILD_DIR,
             c->kill ? "--kill 2:40" : "");
    rc = drv_run(cmd, &out);
    if (c->kill) {
        static const char *const lines[] = {
            "actors: rank 2 dies holding the token at hop",
            "actors: rank 0 hears that rank 2 failed",
            "actors: rank 1 hears that rank 2 failed",
            "actors: rank 0 makes a new token",
            "actors: the token made 300 hops (generation 1)",
            "actors: rank 0 passed the token", "actors: rank 1 passed the token"};

        cr_expect_eq(rc, 137, "actors --kill over %s: exit %d (want 137, the "
                     "killed rank's)", t->label, rc);
        bad = drv_expect_lines(out ? out : "", lines, 7, "no line") +
              (rc != 137);
    } else {
        static const char *const lines[] = {
            "actors: the token made 300 hops (generation 0)",
            "actors: rank 0 passed the token 100 times",
            "actors: rank 1 passed the token 100 times",
            "actors: rank 2 passed the token 100 times"};

        cr_expect_eq(rc, 0, "actors over %s: exit %d", t->label, rc);
        bad = drv_expect_lines(out ? out : "", lines, 4, "no line") + (rc != 0);
    }
    if (bad)
        cr_log_error("%s\n--- output ---\n%s--- end ---", cmd, out ? out : "");
    free(out);
}
