/* Teams and collectives (mr_team) over the transports on 2, 3, 4 and 8
 * ranks, with pretend nodes (GV_TEST_NODES). SPDX-License-Identifier: BSD-3-Clause */
#include "driver.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

typedef struct {
    int         label; /* index in labels[] (plain values: the test may
                          run in another process image) */
    int         nranks;
    int         nodes; /* GV_TEST_NODES */
} team_case_t;

/* 8 ranks take 3-6 s over shm and ucx/sm on an idle 2-core machine. */
#define GVRUN_LIMIT_S 120

static const char *const labels[] = {"tcp", "shm", "ucx/sm", "ofi/shm"};

ParameterizedTestParameters(team, mr_team)
{
    static team_case_t cases[16];
    static const int         nranks[] = {2, 3, 4, 8};
    size_t                   i, j, n = 0;

    for (i = 0; i < 4; i++)
        for (j = 0; j < 4; j++) {
            cases[n].label  = (int)i;
            cases[n].nranks = nranks[j];
            cases[n].nodes  = (int)j; /* 0 (real nodes), 1, 2, 3 */
            n++;
        }
    return cr_make_param_array(team_case_t, cases, n);
}

ParameterizedTest(team_case_t *c, team, mr_team, .timeout = 3 * GVRUN_LIMIT_S / 2)
{
    const tl_cfg_t *t = NULL;
    char            cmd[1024], *out = NULL;
    size_t          i;
    int             rc;

    for (i = 0; i < DRV_NTLS; i++)
        if (strcmp(drv_tls[i].label, labels[c->label]) == 0)
            t = &drv_tls[i];
    cr_assert_not_null(t, "no transport configuration %s in driver.h",
                       labels[c->label]);
    if (!t->built)
        cr_skip_test("mr_team over %s: transport %s was not built", t->label,
                     t->name);
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s %s GV_TEST_NODES=%d GV_WARN_UNUSED_ENV=0 "
             "timeout -k 5 %d %s/bin/gvrun -n %d %s/tests/multirank/mr_team",
             t->name, t->env, c->nodes, GVRUN_LIMIT_S, GV_BUILD_DIR,
             c->nranks, GV_BUILD_DIR);
    rc = drv_run(cmd, &out);
    if (rc != 0)
        cr_log_error("%s\n--- output ---\n%s--- end ---", cmd, out ? out : "");
    cr_expect_eq(rc, 0, "mr_team over %s with %d ranks: exit %d", t->label,
                 c->nranks, rc);
    cr_expect(out != NULL && strstr(out, "team: ") != NULL,
              "mr_team over %s with %d ranks printed no result line",
              t->label, c->nranks);
    free(out);
}
