/* GV_AGG_ROUTE over shm, tcp, ucx/tcp, shm+tcp and shm+ucx with pretend
 * nodes (GV_TEST_NODES): mr_route's exactly-once, in-order delivery and
 * barrier quiescence with each route on 4, 6 and 8 ranks in 2 and 3 nodes
 * (node2: 2, 3 and 4 nodes, 4 being a 2 x 2 grid); GUPS and the DSM tests
 * with GV_AGG_ROUTE=node and node2; a killed relay rank, which must stop
 * the job with its name; the tightest flow control through relays; and a
 * stopped or slowed relay over tcp and shm, which must keep every rank
 * within its memory bound (node and node2).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "driver.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

/* mr_route on 8 ranks takes 1-3 s on an idle 2-core machine. */
#define GVRUN_LIMIT_S 90

typedef struct {
    int tl;     /* enum drv_tl */
    int route;  /* an index into route_names[] */
    int nranks;
    int nodes;  /* GV_TEST_NODES */
} route_case_t;

/* shm+tcp and shm+ucx: the hops between pretend nodes go over the
 * network transport, those within one over shared memory. */
static const int route_tls[] = {DRV_SHM, DRV_TCP, DRV_UCX_TCP, DRV_SHM_TCP,
                                DRV_SHM_UCX};
static const char *const route_names[] = {"direct", "node", "node2"};
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
    static route_case_t cases[NROUTE_TLS * (2 * 6 + 4)];
    static const int    shapes[][2] = {{4, 2}, {4, 3}, {6, 2},
                                       {6, 3}, {8, 2}, {8, 3}};
    /* node2: with 2 nodes its grid is one row (node's way, other
     * relays); 3 nodes make a short last row; 4 a 2 x 2 grid. */
    static const int    shapes2[][2] = {{4, 2}, {6, 3}, {8, 3}, {8, 4}};
    size_t              i, r, j, n = 0;

    for (i = 0; i < NROUTE_TLS; i++) {
        for (r = 0; r < 2; r++)
            for (j = 0; j < 6; j++)
                cases[n++] = (route_case_t){route_tls[i], (int)r,
                                            shapes[j][0], shapes[j][1]};
        for (j = 0; j < 4; j++)
            cases[n++] = (route_case_t){route_tls[i], 2, shapes2[j][0],
                                        shapes2[j][1]};
    }
    return cr_make_param_array(route_case_t, cases, n);
}

ParameterizedTest(route_case_t *c, route, mr_route,
                  .timeout = 3 * GVRUN_LIMIT_S / 2)
{
    const tl_cfg_t *t = &drv_tls[c->tl];
    const char     *route = route_names[c->route];
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
    /* node, node2: the route was taken (some rank relayed); direct: no
     * rank printed a route line at all. */
    if (c->route > 0)
        cr_expect(out != NULL && relayed_any(out),
                  "route %s over %s: no rank relayed a message:\n%s", route,
                  t->label, out ? out : "");
    else
        cr_expect(out != NULL && strstr(out, "STATS route") == NULL,
                  "route direct over %s printed a route line:\n%s",
                  t->label, out ? out : "");
    free(out);
}

/* GUPS (aggregated, verified) and the DSM tests with GV_AGG_ROUTE=node
 * and node2. Cases hold plain values (the test may run in another process
 * image): an index into upper_progs[]. */
static const struct {
    const char *prog, *args, *ok; /* ok: a line printed on success */
    const char *route;
    int         nranks, nodes;
} upper_progs[] = {
    {"mr_gups", "--mode agg", "errors=0", "node", 6, 2},
    {"mr_gups", "--mode am", "errors=0", "node", 6, 3},
    {"mr_dsm_atomic", "", "mr_dsm_atomic: ", "node", 6, 3},
    {"mr_dsm_gce", "", "mr_dsm_gce: ", "node", 4, 2},
    {"mr_gups", "--mode agg", "errors=0", "node2", 8, 4},
    {"mr_dsm_atomic", "", "mr_dsm_atomic: ", "node2", 6, 3},
    {"mr_dsm_gce", "", "mr_dsm_gce: ", "node2", 8, 4},
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
    const char     *route = upper_progs[c->prog].route;
    char            cmd[1024], *out = NULL;
    int             rc;

    if (!run_route(t, route, upper_progs[c->prog].nranks,
                   upper_progs[c->prog].nodes, prog, args, &rc, &out, cmd,
                   sizeof(cmd)))
        cr_skip_test("%s over %s: transport %s was not built", prog,
                     t->label, t->name);
    if (rc != 0)
        cr_log_error("%s\n--- output ---\n%s--- end ---", cmd, out ? out : "");
    cr_expect_eq(rc, 0, "%s %s over %s with GV_AGG_ROUTE=%s: exit %d",
                 prog, args, t->label, route, rc);
    cr_expect(out != NULL && strstr(out, ok) && relayed_any(out),
              "%s over %s with GV_AGG_ROUTE=%s: no \"%s\" line, or no "
              "rank relayed:\n%s", prog, t->label, route, ok,
              out ? out : "");
    free(out);
}

/* Flow control through the relays at its tightest (one credit, 256-byte
 * batches): neither a deadlock nor a lost message. */
ParameterizedTestParameters(route, tight)
{
    static route_case_t cases[NROUTE_TLS * 3];
    size_t              i, n = 0;

    for (i = 0; i < NROUTE_TLS; i++) {
        cases[n++] = (route_case_t){route_tls[i], 1, 8, 2};
        cases[n++] = (route_case_t){route_tls[i], 1, 8, 3};
        cases[n++] = (route_case_t){route_tls[i], 2, 8, 4};
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
    if (!run_route(&t, route_names[c->route], c->nranks, c->nodes,
                   "mr_route", "", &rc, &out, cmd, sizeof(cmd)))
        cr_skip_test("mr_route over %s: transport %s was not built",
                     t.label, t.name);
    if (rc != 0)
        cr_log_error("%s\n--- output ---\n%s--- end ---", cmd, out ? out : "");
    cr_expect(rc == 0 && out != NULL &&
                  strstr(out, "each once and in order: ok") &&
                  relayed_any(out),
              "mr_route over %s, route %s with one credit, %d ranks in %d "
              "nodes: exit %d", t.label, route_names[c->route], c->nranks,
              c->nodes, rc);
    free(out);
}

/* A relay killed mid-stream: the job stops (well before its time limit)
 * and names it. node: 4 ranks in 2 nodes, where node 0 is ranks 0 and 1
 * and rank 1 serves node 1. node2: 8 ranks in a 2 x 2 grid of nodes,
 * where rank 0's messages to rank 7 (node 0 to node 3) go through node 1
 * (ranks 2 and 3), and rank 3 forwards them to node 3. */
static const struct {
    const char *route, *victim;
    int         nranks, nodes;
} kill_cases[] = {
    {"node", "rank 1", 4, 2},
    {"node2", "rank 3", 8, 4},
};
#define NKILL (sizeof(kill_cases) / sizeof(kill_cases[0]))

typedef struct {
    int tl, which; /* an index into kill_cases[] */
} kill_case_t;

ParameterizedTestParameters(route, killed_relay)
{
    static kill_case_t cases[NROUTE_TLS * NKILL];
    size_t             i, j, n = 0;

    for (i = 0; i < NROUTE_TLS; i++)
        for (j = 0; j < NKILL; j++)
            cases[n++] = (kill_case_t){route_tls[i], (int)j};
    return cr_make_param_array(kill_case_t, cases, n);
}

ParameterizedTest(kill_case_t *c, route, killed_relay,
                  .timeout = 3 * GVRUN_LIMIT_S / 2)
{
    const tl_cfg_t *t = &drv_tls[c->tl];
    const char     *route = kill_cases[c->which].route;
    const char     *victim = kill_cases[c->which].victim;
    char            cmd[1024], named[64], said[64], *out = NULL;
    int             rc;

    if (!run_route(t, route, kill_cases[c->which].nranks,
                   kill_cases[c->which].nodes, "mr_route", "--kill-relay",
                   &rc, &out, cmd, sizeof(cmd)))
        cr_skip_test("mr_route over %s: transport %s was not built",
                     t->label, t->name);
    cr_expect(rc != 0 && rc != 124,
              "%s, route %s: exit %d after the relay was killed (0: it was "
              "not; 124: the job did not stop):\n%s", t->label, route, rc,
              out ? out : "");
    snprintf(said, sizeof(said), "relay to be killed: %s\n", victim);
    snprintf(named, sizeof(named), "%s (pid", victim);
    cr_expect(out != NULL && strstr(out, said) && strstr(out, named) &&
                  strstr(out, "signal 9"),
              "%s, route %s: the output does not name relay %s and signal "
              "9:\n%s", t->label, route, victim, out ? out : "");
    free(out);
}

/* A relay stopped (SIGSTOP for 3 s) or slowed (a handler that sleeps)
 * while every rank streams updates to the other node through it: every
 * update arrives once and in order, and every rank's send queues stay
 * within the bound the aggregator states for it (relaying included) plus
 * one buffer (mr_relay). A small tcp send queue (GV_TCP_SENDQ) leaves the
 * backlog to the aggregator's queues, where the bound is checked. */
typedef struct {
    int tl;
    int stop;  /* 1: --stop 3, 0: --slow */
    int route; /* an index into route_names[] */
    int nodes;
} relay_case_t;

ParameterizedTestParameters(route, relay_held)
{
    static relay_case_t cases[9];
    size_t              n = 0;

    cases[n++] = (relay_case_t){DRV_TCP, 1, 1, 2};
    cases[n++] = (relay_case_t){DRV_TCP, 0, 1, 2};
    cases[n++] = (relay_case_t){DRV_TCP, 1, 1, 3};
    cases[n++] = (relay_case_t){DRV_SHM, 1, 1, 2};
    cases[n++] = (relay_case_t){DRV_SHM, 0, 1, 2};
    /* node2 on a 2 x 2 grid: ways through an intermediate node. */
    cases[n++] = (relay_case_t){DRV_TCP, 1, 2, 4};
    cases[n++] = (relay_case_t){DRV_TCP, 0, 2, 4};
    cases[n++] = (relay_case_t){DRV_SHM, 1, 2, 4};
    cases[n++] = (relay_case_t){DRV_SHM, 0, 2, 4};
    return cr_make_param_array(relay_case_t, cases, n);
}

ParameterizedTest(relay_case_t *c, route, relay_held,
                  .timeout = 3 * GVRUN_LIMIT_S / 2)
{
    tl_cfg_t t = drv_tls[c->tl];
    char     env[256], cmd[1024], *out = NULL;
    int      rc;

    snprintf(env, sizeof(env), "%s GV_TCP_SENDQ=65536", t.env);
    t.env = env;
    if (!run_route(&t, route_names[c->route], 8, c->nodes, "mr_relay",
                   c->stop ? "--stop 3" : "--slow", &rc, &out, cmd,
                   sizeof(cmd)))
        cr_skip_test("mr_relay over %s: transport %s was not built",
                     t.label, t.name);
    if (rc != 0)
        cr_log_error("%s\n--- output ---\n%s--- end ---", cmd, out ? out : "");
    cr_expect(rc == 0 && out != NULL && strstr(out, "bound: ok") != NULL,
              "mr_relay %s over %s, route %s, 8 ranks in %d nodes: exit %d",
              c->stop ? "--stop 3" : "--slow", t.label,
              route_names[c->route], c->nodes, rc);
    free(out);
}
