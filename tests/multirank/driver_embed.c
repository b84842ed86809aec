/* Grapevine embedded in a host program (mr_embed): re-init, returned
 * errors, thread levels, the wait fd, named handlers and the
 * peer-failure callback, over every transport configuration.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "driver.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

/* The slowest mode (failure over a transport that notices the dead rank
 * only by the watchdog, GV_TIMEOUT_S=5 below) takes about 10 s idle. */
#define GVRUN_LIMIT_S 90

typedef struct {
    int  tl;      /* index in drv_tls[] */
    int  mode;    /* index in modes[] */
} embed_case_t;

static const struct {
    const char *name;
    int         nranks;
} modes[] = {
    {"reinit", 2}, {"errors", 2}, {"serialized", 2}, {"funneled", 2},
    {"fd", 2},     {"named", 3},  {"failure", 3},
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

ParameterizedTestParameters(embed, mr_embed)
{
    static embed_case_t cases[NMODES * DRV_NTLS];
    size_t              i, j, n = 0;

    for (i = 0; i < NMODES; i++)
        for (j = 0; j < DRV_NTLS; j++) {
            cases[n].tl   = (int)j;
            cases[n].mode = (int)i;
            n++;
        }
    return cr_make_param_array(embed_case_t, cases, n);
}

ParameterizedTest(embed_case_t *c, embed, mr_embed,
                  .timeout = 3 * GVRUN_LIMIT_S / 2)
{
    const tl_cfg_t *t       = &drv_tls[c->tl];
    const char     *mode    = modes[c->mode].name;
    int             failure = (strcmp(mode, "failure") == 0);
    char            cmd[1024], *out = NULL;
    int             rc, bad;

    if (!t->built)
        cr_skip_test("mr_embed %s over %s: transport %s was not built", mode,
                     t->label, t->name);
    /* ofi sleeps on an fd only with a wait object: ask for one (ofi/shm
     * has none and skips, saying so). */
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s %s %s GV_TIMEOUT_S=5 GV_WARN_UNUSED_ENV=0 "
             "timeout -k 5 %d %s/bin/gvrun %s -n %d "
             "%s/tests/multirank/mr_embed %s",
             t->name, t->env,
             ((strcmp(mode, "fd") == 0) && (strcmp(t->name, "ofi") == 0))
                 ? "GV_OFI_WAIT=fd" : "",
             GVRUN_LIMIT_S, GV_BUILD_DIR, failure ? "--keep-going" : "",
             modes[c->mode].nranks, GV_BUILD_DIR, mode);
    rc = drv_run(cmd, &out);
    if (rc == 77) {
        cr_log_info("%s", out ? out : "");
        free(out);
        cr_skip_test("mr_embed %s over %s skipped itself (its output says "
                     "why)", mode, t->label);
    }
    if (failure) {
        /* gvrun's status is the killed rank's (128 + SIGKILL); the others
         * went on and finished. */
        cr_expect_eq(rc, 137, "mr_embed failure over %s: exit %d (want "
                     "137, the killed rank's)", t->label, rc);
        static const char *const lines[] = {"rank 0 failure ok",
                                            "rank 1 failure ok"};

        bad = drv_expect_lines(out ? out : "", lines, 2,
                               "a living rank did not say");
        bad += (rc != 137);
    } else {
        char        want[64];
        const char *line = want;

        cr_expect_eq(rc, 0, "mr_embed %s over %s: exit %d", mode, t->label,
                     rc);
        snprintf(want, sizeof(want), "%s ok", mode);
        bad = drv_expect_lines(out ? out : "", &line, 1, "rank 0 did not say");
        bad += (rc != 0);
        if (strcmp(mode, "named") == 0) {
            /* The receivers name what they rejected. */
            static const char *const rejected[] = {
                "(\"never.registered\") is not registered on this rank",
                "is not registered on this rank ("};

            bad += drv_expect_lines(out ? out : "", rejected, 2,
                                    "no rejection saying");
        }
    }
    if (bad)
        cr_log_error("%s\n--- output ---\n%s--- end ---", cmd, out ? out : "");
    free(out);
}
