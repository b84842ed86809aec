/* GV_AGG_ROUTE over shm, tcp, ucx/tcp, shm+tcp and shm+ucx with pretend
 * nodes (GV_TEST_NODES): mr_route's exactly-once, in-order delivery and barrier
 * quiescence with each route on 4, 6 and 8 ranks in 2 and 3 nodes; GUPS
 * and the DSM tests with GV_AGG_ROUTE=node; and a killed relay rank, which
 * must stop the job with its name; and the tightest flow control through
 * relays. SPDX-License-Identifier: BSD-3-Clause */
#include "driver.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

/* mr_route on 8 ranks takes 1-3 s on an idle 2-core machine. */
#define GVRUN_LIMIT_S 90

typedef struct {
    int tl;     /* enum drv_tl */
    int node;   /* 0: GV_AGG_ROUTE=direct, 1: node */
    int nranks;
    int nodes;  /* GV_TEST_NODES */
} route_case_t;

/* shm+tcp and shm+ucx: the hops between pretend nodes go over the
 * network transport, those within one over shared memory. */
static const int route_tls[] = {DRV_SHM, DRV_TCP, DRV_UCX_TCP, DRV_SHM_TCP,
                                DRV_SHM_UCX};
#define NROUTE_TLS (sizeof(route_tls) / sizeof(route_tls[0]))

/* Run @a prog with @a args under GV_AGG_ROUTE; 1 if the caller goes on
 * (the transport was built), with the exit code in *rc_p and the output
 * in *out_p. */
static int run_route(const tl_cfg_t *t, const char *route, int nranks,
                     int nodes, const char *prog, const char *args,
                     int *rc_p, char **out_p, char *cmd, size_t cmdlen)
{
    if (!t->built)
        return 0;
    snprintf(cmd, cmdlen,
             "env GV_TRANSPORT=%s %s GV_AGG_ROUTE=%s GV_TEST_NODES=%d "
             "GV_STATS=1 GV_WARN_UNUSED_ENV=0 timeout -k 5 %d %s/bin/gvrun "
             "-n %d %s/tests/multirank/%s %s",
             t->name, t->env, route, nodes, GVRUN_LIMIT_S, GV_BUILD_DIR,
             nranks, GV_BUILD_DIR, prog, args);
    *rc_p = drv_run(cmd, out_p);
    return 1;
}

/* Some rank relayed messages (GV_STATS' route line), or none did. */
static int relayed_any(const char *out)
{
    const char *p = out;

    while ((p != NULL) && ((p = strstr(p, "relayed ")) != NULL)) {
        p += strlen("relayed ");
        if (strtoull(p, NULL, 10) > 0)
            return 1;
    }
    return 0;
}

ParameterizedTestParameters(route, mr_route)
{
    static route_case_t cases[NROUTE_TLS * 2 * 6];
    static const int    shapes[][2] = {{4, 2}, {4, 3}, {6, 2},
                                       {6, 3}, {8, 2}, {8, 3}};
    size_t              i, r, j, n = 0;

    for (i = 0; i < NROUTE_TLS; i++)
        for (r = 0; r < 2; r++)
            for (j = 0; j < 6; j++) {
                cases[n].tl     = route_tls[i];
                cases[n].node   = (int)r;
                cases[n].nranks = shapes[j][0];
                cases[n].nodes  = shapes[j][1];
                n++;
            }
    return cr_make_param_array(route_case_t, cases, n);
}

ParameterizedTest(route_case_t *c, route, mr_route,
                  .timeout = 3 * GVRUN_LIMIT_S / 2)
{
    const tl_cfg_t *t = &drv_tls[c->tl];
    const char     *route = c->node ? "node" : "direct";
    char            cmd[1024], *out = NULL;
    int             rc;

    if (!run_route(t, route, c->nranks, c->nodes, "mr_route", "", &rc, &out,
                   cmd, sizeof(cmd)))
        cr_skip_test("mr_route over %s: transport %s was not built",
                     t->label, t->name);
    if (rc != 0)
        cr_log_error("%s\n--- output ---\n%s--- end ---", cmd, out ? out : "");
    cr_expect_eq(rc, 0, "mr_route over %s, route %s, %d ranks in %d nodes: "
                 "exit %d", t->label, route, c->nranks, c->nodes, rc);
    cr_expect(out != NULL && strstr(out, "each once and in order: ok"),
              "mr_route over %s, route %s, %d ranks in %d nodes printed no "
              "result line", t->label, route, c->nranks, c->nodes);
    /* node: the route was taken (some rank relayed); direct: no rank
     * printed a route line at all. */
    if (c->node)
        cr_expect(out != NULL && relayed_any(out),
                  "route node over %s: no rank relayed a message:\n%s",
                  t->label, out ? out : "");
    else
        cr_expect(out != NULL && strstr(out, "STATS route") == NULL,
                  "route direct over %s printed a route line:\n%s",
                  t->label, out ? out : "");
    free(out);
}

/* GUPS (aggregated, verified) and the DSM tests with GV_AGG_ROUTE=node.
 * Cases hold plain values (the test may run in another process image):
 * an index into upper_progs[]. */
static const struct {
    const char *prog, *args, *ok; /* ok: a line printed on success */
    int         nranks, nodes;
} upper_progs[] = {
    {"mr_gups", "--mode agg", "errors=0", 6, 2},
    {"mr_gups", "--mode am", "errors=0", 6, 3},
    {"mr_dsm_atomic", "", "mr_dsm_atomic: ", 6, 3},
    {"mr_dsm_gce", "", "mr_dsm_gce: ", 4, 2},
};
#define NUPPER (sizeof(upper_progs) / sizeof(upper_progs[0]))

typedef struct {
    int tl, prog;
} upper_case_t;

ParameterizedTestParameters(route, upper)
{
    static upper_case_t cases[NROUTE_TLS * NUPPER];
    size_t              i, j, n = 0;

    for (i = 0; i < NROUTE_TLS; i++)
        for (j = 0; j < NUPPER; j++)
            cases[n++] = (upper_case_t){route_tls[i], (int)j};
    return cr_make_param_array(upper_case_t, cases, n);
}

ParameterizedTest(upper_case_t *c, route, upper,
                  .timeout = 3 * GVRUN_LIMIT_S / 2)
{
    const tl_cfg_t *t = &drv_tls[c->tl];
    const char     *prog = upper_progs[c->prog].prog;
    const char     *args = upper_progs[c->prog].args;
    const char     *ok   = upper_progs[c->prog].ok;
    char            cmd[1024], *out = NULL;
    int             rc;

    if (!run_route(t, "node", upper_progs[c->prog].nranks,
                   upper_progs[c->prog].nodes, prog, args, &rc, &out, cmd,
                   sizeof(cmd)))
        cr_skip_test("%s over %s: transport %s was not built", prog,
                     t->label, t->name);
    if (rc != 0)
        cr_log_error("%s\n--- output ---\n%s--- end ---", cmd, out ? out : "");
    cr_expect_eq(rc, 0, "%s %s over %s with GV_AGG_ROUTE=node: exit %d",
                 prog, args, t->label, rc);
    cr_expect(out != NULL && strstr(out, ok) && relayed_any(out),
              "%s over %s with GV_AGG_ROUTE=node: no \"%s\" line, or no "
              "rank relayed:\n%s", prog, t->label, ok, out ? out : "");
    free(out);
}

/* Flow control through the relays at its tightest (one credit, 256-byte
 * batches): neither a deadlock nor a lost message. */
ParameterizedTestParameters(route, tight)
{
    static route_case_t cases[NROUTE_TLS * 2];
    size_t              i, n = 0;

    for (i = 0; i < NROUTE_TLS; i++) {
        cases[n++] = (route_case_t){route_tls[i], 1, 8, 2};
        cases[n++] = (route_case_t){route_tls[i], 1, 8, 3};
    }
    return cr_make_param_array(route_case_t, cases, n);
}

ParameterizedTest(route_case_t *c, route, tight,
                  .timeout = 3 * GVRUN_LIMIT_S / 2)
{
    tl_cfg_t t = drv_tls[c->tl];
    char     env[256], cmd[1024], *out = NULL;
    int      rc;

    snprintf(env, sizeof(env), "%s GV_AGG_CREDITS=1 GV_AGG_BYTES=256",
             t.env);
    t.env = env;
    if (!run_route(&t, "node", c->nranks, c->nodes, "mr_route", "", &rc,
                   &out, cmd, sizeof(cmd)))
        cr_skip_test("mr_route over %s: transport %s was not built",
                     t.label, t.name);
    if (rc != 0)
        cr_log_error("%s\n--- output ---\n%s--- end ---", cmd, out ? out : "");
    cr_expect(rc == 0 && out != NULL &&
                  strstr(out, "each once and in order: ok") &&
                  relayed_any(out),
              "mr_route over %s with one credit, %d ranks in %d nodes: exit "
              "%d", t.label, c->nranks, c->nodes, rc);
    free(out);
}

/* A relay killed mid-stream: the job stops (well before its time limit)
 * and names it. */
ParameterizedTestParameters(route, killed_relay)
{
    static int tls[NROUTE_TLS];
    size_t     i;

    for (i = 0; i < NROUTE_TLS; i++)
        tls[i] = route_tls[i];
    return cr_make_param_array(int, tls, NROUTE_TLS);
}

ParameterizedTest(int *tl, route, killed_relay,
                  .timeout = 3 * GVRUN_LIMIT_S / 2)
{
    const tl_cfg_t *t = &drv_tls[*tl];
    char            cmd[1024], *out = NULL;
    int             rc;

    if (!run_route(t, "node", 4, 2, "mr_route", "--kill-relay", &rc, &out,
                   cmd, sizeof(cmd)))
        cr_skip_test("mr_route over %s: transport %s was not built",
                     t->label, t->name);
    cr_expect(rc != 0 && rc != 124,
              "%s: exit %d after the relay was killed (0: it was not; 124: "
              "the job did not stop):\n%s", t->label, rc, out ? out : "");
    /* 4 ranks in 2 nodes: node 0 is ranks 0 and 1; rank 1 serves node 1. */
    cr_expect(out != NULL && strstr(out, "relay to be killed: rank 1") &&
                  strstr(out, "rank 1 (pid") && strstr(out, "signal 9"),
              "%s: the output does not name relay rank 1 and signal 9:\n%s",
              t->label, out ? out : "");
    free(out);
}
