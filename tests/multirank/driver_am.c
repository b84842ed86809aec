/* Criterion driver for the multi-rank tests: every tests/multirank/mr_*
 * program through gvrun, over every built transport configuration, with
 * 2, 4 and 8 ranks (8 oversubscribes 2 cores), each under a time limit;
 * plus fault tests (a rank killed, a bad transport name, a bad value).
 * SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "tests/multirank/driver.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef GV_BUILD_DIR
#define GV_BUILD_DIR "build"
#endif

#define tls  drv_tls
#define NTLS DRV_NTLS

/* Parameters are copied into each test's process, which Criterion may
 * start afresh (another address-space layout): no pointers, only arrays. */
typedef struct {
    int  tl;
    char prog[32];
    int  nranks;
    char args[48];
    int  timeout_s;
    char env[96];   /* extra GV_* settings for this case */
} mr_case_t;

#define ALL_TLS_ENV(_prog, _n, _args, _t, _e)                                \
    {0, _prog, _n, _args, _t, _e}, {1, _prog, _n, _args, _t, _e},            \
    {2, _prog, _n, _args, _t, _e}, {3, _prog, _n, _args, _t, _e},            \
    {4, _prog, _n, _args, _t, _e}, {5, _prog, _n, _args, _t, _e}
#define ALL_TLS(_prog, _n, _args, _t) ALL_TLS_ENV(_prog, _n, _args, _t, "")

static mr_case_t cases[] = {
    ALL_TLS("mr_alltoall", 2, "-n 3000 -S 8192", 90),
    ALL_TLS("mr_alltoall", 4, "-n 1000 -S 70000", 90),
    ALL_TLS("mr_alltoall", 8, "-n 300 -S 4096", 120),
    ALL_TLS("mr_sizes", 2, "", 90),
    ALL_TLS("mr_sizes", 4, "", 120),
    ALL_TLS("mr_barrier", 2, "", 90),
    ALL_TLS("mr_barrier", 8, "", 120),
    ALL_TLS("mr_idle", 4, "", 60),
    ALL_TLS("mr_idle", 8, "", 60),
    /* ofi over rxm: idle without a CQ wait object (GV_OFI_WAIT=auto when
     * ranks fit the cores), and either choice forced */
    {5, "mr_idle", 2, "", 60, ""},
    {5, "mr_idle", 2, "", 60, "GV_OFI_WAIT=fd"},
    {5, "mr_idle", 4, "", 60, "GV_OFI_WAIT=none"},
    {5, "mr_ucx_order", 2, "-N", 90, "GV_OFI_WAIT=fd"},
    ALL_TLS("mr_rma", 2, "", 90),
    ALL_TLS("mr_rma", 4, "", 120),
    ALL_TLS_ENV("mr_alltoall", 2, "-n 3000 -S 8192", 90, "GV_AGGREGATE=0"),
    ALL_TLS_ENV("mr_barrier", 4, "", 90, "GV_AGGREGATE=0"),
    ALL_TLS_ENV("mr_slow", 3, "", 120, "GV_AGG_BYTES=4096 GV_AGG_CREDITS=2"),
    ALL_TLS_ENV("mr_storm", 8, "", 120,
                "GV_AGG_BYTES=256 GV_AGG_CREDITS=1 GV_SHM_RING=8192 "
                "GV_TCP_SENDQ=65536"),
    ALL_TLS("mr_alltoall", 2, "-n 400000 -S 48", 180),
    ALL_TLS("mr_finalize", 4, "", 60),
    ALL_TLS("mr_word", 2, "", 90),
    ALL_TLS_ENV("mr_word", 4, "-n 20000", 120, "GV_AGG_BYTES=256"),
    ALL_TLS_ENV("mr_word", 2, "-n 20000", 90, "GV_AGGREGATE=0"),
    ALL_TLS("mr_ucx_order", 2, "", 90),
    ALL_TLS("mr_ucx_order", 3, "-N", 90),
    ALL_TLS_ENV("mr_ucx_order", 2, "-N", 90,
                "GV_AGG_BYTES=1024 GV_AGG_CREDITS=1"),
    ALL_TLS_ENV("mr_ucx_order", 2, "-N -n 2000", 90, "GV_AGGREGATE=0"),
    /* ucx: mid-size frames by UCX's own protocol choice (rendezvous from 8
     * KiB over tcp) instead of forced eager, mixed with tiny ones */
    {2, "mr_ucx_order", 2, "", 90, "GV_UCX_EAGER=0"},
    {3, "mr_ucx_order", 2, "", 90, "GV_UCX_EAGER=0"},
    /* ... and gv_am_send_now's frames (format I, am_send_id) among them,
     * held behind rendezvous data still arriving */
    {2, "mr_ucx_order", 2, "-N", 90, "GV_UCX_EAGER=0"},
    {3, "mr_ucx_order", 2, "-N", 90, "GV_UCX_EAGER=0"},
    {3, "mr_sizes", 2, "", 90, "GV_UCX_EAGER=0"},
    /* ofi/shm: a frame per message, so that those past inject_size go as
     * split parts (batched, the same sizes leave in larger frames) */
    {4, "mr_sizes", 2, "", 90, "GV_AGGREGATE=0"},
    {4, "mr_sizes", 4, "", 120, "GV_AGGREGATE=0"},
    ALL_TLS("mr_ofi_large", 2, "", 90),
    ALL_TLS("mr_ofi_large", 4, "", 120),
    ALL_TLS("mr_ofi_visible", 3, "", 90),
    ALL_TLS("mr_gups", 2, "--mode agg", 90),
    ALL_TLS("mr_gups", 2, "--mode am", 90),
    ALL_TLS("mr_gups", 2, "--mode native", 90),
    ALL_TLS("mr_gups", 4, "--mode agg", 120),
    /* A flood of unaggregated messages both ways: over ofi/shm it wedged a
     * rank before the ofi transport had flow control (2^20 words). */
    {4, "mr_gups", 2, "--mode am --log2 20", 120, ""},
    {4, "mr_gups", 4, "--mode am --log2 18", 120, ""},
    ALL_TLS("mr_steal", 2, "", 90),
    ALL_TLS("mr_steal", 4, "", 120),
    ALL_TLS("mr_dsm_atomic", 4, "", 120),
    ALL_TLS_ENV("mr_dsm_atomic", 2, "", 120, "GV_AMO=native"),
    ALL_TLS("mr_dsm_lock", 4, "", 120),
    ALL_TLS_ENV("mr_dsm_lock", 2, "", 120, "GV_AMO=native"),
    ALL_TLS("mr_dsm_loop", 4, "", 120),
    ALL_TLS_ENV("mr_dsm_loop", 2, "", 120, "GV_AMO=native"),
    ALL_TLS("mr_dsm_gce", 4, "", 120),
    ALL_TLS("mr_dsm_bad", 2, "", 90),
    ALL_TLS_ENV("mr_dsm_bad", 2, "", 90, "GV_AMO=native"),
    ALL_TLS_ENV("mr_pause", 2, "", 60, "GV_TIMEOUT_S=3 GV_SPIN_US=0"),
    ALL_TLS_ENV("mr_long_handler", 2, "", 60, "GV_TIMEOUT_S=3"),
    ALL_TLS_ENV("mr_lone_race", 2, "", 90, "GV_AGG_BYTES=1024 GV_AGG_CREDITS=1"),
    ALL_TLS("mr_flush_race", 2, "", 60),
    ALL_TLS("mr_wait_stream", 3, "", 60),
    {0, "mr_tcp_stranger", 4, "", 90, ""},
    {1, "mr_shm_cleanup", 4, "", 60, ""},
};

static int exists(const char *prog)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/multirank/%s", GV_BUILD_DIR, prog);
    return access(path, X_OK) == 0;
}

ParameterizedTestParameters(multirank, run)
{
    return cr_make_param_array(mr_case_t, cases,
                               sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(mr_case_t *c, multirank, run, .timeout = 200)
{
    const tl_cfg_t *t = &tls[c->tl];
    char            cmd[1024], *out = NULL;
    int             rc;

    if (!t->built)
        cr_skip_test("%s %s -n %d: transport %s was not built", c->prog,
                     t->label, c->nranks, t->name);
    if (!exists(c->prog))
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

/* ---- ofi: ranks that opened their provider differently --------------- */

/* One rank without the tagged large-frame path (GV_OFI_TAGGED=0, as when
 * its first open failed and it settled for the next rung) and the others
 * with it: frames must go untagged and within every rank's limit, or the
 * job hangs (tagged frames nobody matches, or 1 MiB frames copied into a
 * multi-receive buffer that has 128 KiB left). mr_ofi_large checks every
 * byte; the first rank to start is the one without. */
static void ofi_one_untagged(const char *prov, int nranks)
{
    char  cmd[1024], flag[64], *out = NULL;
    int   rc;

    if (!GV_HAVE_OFI)
        cr_skip_test("ofi was not built");
    snprintf(flag, sizeof(flag), "/tmp/gv-untagged-%d", (int)getpid());
    rmdir(flag);
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=ofi FI_PROVIDER='%s' GV_LOG=info "
             "timeout -k 5 90 %s/bin/gvrun -n %d sh -c 'if mkdir %s "
             "2>/dev/null; then export GV_OFI_TAGGED=0; fi; exec "
             "%s/tests/multirank/mr_ofi_large'", prov, GV_BUILD_DIR, nranks,
             flag, GV_BUILD_DIR);
    rc = drv_run(cmd, &out);
    rmdir(flag);
    cr_expect_eq(rc, 0, "ofi %s, %d ranks, one without tagged frames: "
                 "exit %d%s:\n%s", prov, nranks, rc,
                 (rc == 124) ? " (timed out)" : "", out ? out : "");
    cr_expect(out && strstr(out, "opened without tagged messages, so no "
                                 "rank sends frames tagged"),
              "ofi %s: no rank said it saw a peer without tagged frames:\n%s",
              prov, out ? out : "");
    free(out);
}

Test(ofi, one_rank_untagged_shm, .timeout = 120)
{
    ofi_one_untagged("shm", 2);
}

Test(ofi, one_rank_untagged_of_four_rxm, .timeout = 120)
{
    ofi_one_untagged("tcp;ofi_rxm", 4);
}

/* ---- fault tests ------------------------------------------------------ */

/* The entries of /dev/shm whose names start with one of the @a npre
 * prefixes @a pre, at most @a max of them, into @a names. */
static int shm_named(const char *const *pre, int npre, char names[][64],
                     int max)
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
static int shm_objects(char names[][64], int max)
{
    static const char *const gv[] = {"gv-"};

    return shm_named(gv, 1, names, max);
}

/* Entries named after one of the @a n (at most 4) processes @a pids
 * ("<pid>:...", libfabric shm's regions). */
static int pid_objects(const int *pids, int n, char names[][64], int max)
{
    char        pre[4][24];
    const char *p[4];
    int         i;

    for (i = 0; (i < n) && (i < 4); i++) {
        snprintf(pre[i], sizeof(pre[i]), "%d:", pids[i]);
        p[i] = pre[i];
    }
    return shm_named(p, i, names, max);
}

/* Run @a cmd; expect exit @a want_rc and every one of the @a nlines
 * @a lines in its output. */
static void expect_run(const char *cmd, int want_rc, const char *const *lines,
                       size_t nlines)
{
    char *out = NULL;
    int   rc  = drv_run(cmd, &out);

    cr_expect_eq(rc, want_rc, "%s: exit %d, expected %d:\n%s", cmd, rc,
                 want_rc, out ? out : "");
    if (drv_expect_lines(out ? out : "", lines, nlines, cmd) > 0)
        cr_log_info("%s:\n%s", cmd, out ? out : "");
    free(out);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Kill rank @a victim of a 4-rank job, or the launcher itself when
 * @a victim is -1; either way every process of the job must be gone within
 * 3 s, with nothing left in /dev/shm, and a killed rank must be named. */
static void kill_one_of_four(const char *tl, const char *env, int victim)
{
    char   dir[] = "/tmp/gv-fault-XXXXXX", out_path[600], cmd[1024];
    char   before[64][64], after[64][64], path[640], *out;
    int    pids[4], i, nbefore, nafter, status = 0;
    pid_t  job;
    double t_kill, t_end = 0;
    FILE  *f;

    cr_assert_not_null(mkdtemp(dir));
    nbefore = shm_objects(before, 64);
    snprintf(out_path, sizeof(out_path), "%s/out", dir);
    snprintf(cmd, sizeof(cmd), "exec env GV_TRANSPORT=%s %s "
             "GV_WARN_UNUSED_ENV=0 %s/bin/gvrun -n 4 "
             "%s/tests/multirank/mr_longrun %s > %s 2>&1", tl, env,
             GV_BUILD_DIR, GV_BUILD_DIR, dir, out_path);
    job = fork();
    cr_assert(job >= 0);
    if (job == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    /* Wait for all four ranks to be up and running. */
    for (i = 0; i < 4; i++) {
        double t0 = now_s();
        pids[i]   = 0;
        snprintf(path, sizeof(path), "%s/rank.%d", dir, i);
        while (now_s() - t0 < 30) {
            f = fopen(path, "r");
            if ((f != NULL) && (fscanf(f, "%d", &pids[i]) == 1)) {
                fclose(f);
                break;
            }
            if (f != NULL)
                fclose(f);
            usleep(20000);
        }
        if (pids[i] == 0) {
            kill(job, SIGKILL);
            waitpid(job, NULL, 0);
            cr_assert_fail("rank %d of the %s job never started", i, tl);
        }
    }
    usleep(300000);
    t_kill = now_s();
    /* "exec env ... gvrun": the job's pid is gvrun's. */
    kill((victim >= 0) ? pids[victim] : job, SIGKILL);
    while (now_s() - t_kill < 10) {
        if (waitpid(job, &status, WNOHANG) == job) {
            t_end = now_s();
            break;
        }
        usleep(5000);
    }
    if (victim < 0) { /* the ranks must follow their launcher */
        while (now_s() - t_kill < 3.0) {
            for (i = 0; i < 4; i++)
                if ((kill(pids[i], 0) == 0) || (errno != ESRCH))
                    break;
            if (i == 4)
                break;
            usleep(5000);
        }
    }
    if (t_end == 0) {
        kill(job, SIGKILL);
        waitpid(job, &status, 0);
    }
    out = drv_slurp(out_path);
    cr_assert(t_end != 0, "%s: gvrun still running 10 s after rank 2 was "
              "killed; output:\n%s", tl, out ? out : "");
    if (victim >= 0) {
        cr_expect(t_end - t_kill < 3.0, "%s: gvrun took %.2f s to stop the "
                  "job", tl, t_end - t_kill);
        cr_expect(WIFEXITED(status) && (WEXITSTATUS(status) != 0),
                  "%s: gvrun exit status %d after a rank was killed", tl,
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        cr_expect(out && strstr(out, "rank 2 (pid") &&
                      strstr(out, "signal 9"),
                  "%s: gvrun's output does not name rank 2 and signal 9:\n%s",
                  tl, out ? out : "");
    }
    for (i = 0; i < 4; i++)
        cr_expect(kill(pids[i], 0) != 0 && errno == ESRCH,
                  "%s: rank %d (pid %d) is still alive %s", tl, i, pids[i],
                  (victim < 0) ? "3 s after gvrun was killed" : "");
    nafter = shm_objects(after, 64);
    cr_expect(nafter <= nbefore, "%s: %d shared-memory objects left in "
              "/dev/shm (first: %s)", tl, nafter - nbefore,
              nafter ? after[nafter - 1] : "");
    nafter = pid_objects(pids, 4, after, 64);
    cr_expect(nafter == 0, "%s: %d objects named after the job's processes "
              "left in /dev/shm (first: %s)", tl, nafter,
              (nafter > 0) ? after[0] : "");
    free(out);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        cr_log_warn("could not remove %s", dir);
}

/* gvrun stopped (SIGTERM) while the shm transport reserves a large
 * segment: the rank must still remove its name. The kernel holds a
 * SIGTERM until posix_fallocate returns, and reserving 6 GiB takes longer
 * than gvrun's second between SIGTERM and SIGKILL: one call for the whole
 * segment left the 6 GiB file in /dev/shm. */
Test(fault, stopped_during_shm_reserve_leaves_nothing, .timeout = 60)
{
    char   before[64][64], after[64][64], cmd[512];
    int    nbefore, nafter, status = 0, seen = 0;
    pid_t  job;
    double t0;

    nbefore = shm_objects(before, 64);
    snprintf(cmd, sizeof(cmd), "exec env GV_TRANSPORT=shm GV_HEAP=6g "
             "%s/bin/gvrun -n 1 %s/examples/hello > /dev/null 2>&1",
             GV_BUILD_DIR, GV_BUILD_DIR);
    job = fork();
    cr_assert(job >= 0);
    if (job == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    for (t0 = now_s(); (now_s() - t0 < 20) && !seen; usleep(2000))
        seen = shm_objects(after, 64) > nbefore;
    kill(job, SIGTERM);
    for (t0 = now_s(); now_s() - t0 < 15; usleep(5000))
        if (waitpid(job, &status, WNOHANG) == job)
            break;
    if (now_s() - t0 >= 15) {
        kill(job, SIGKILL);
        waitpid(job, &status, 0);
    }
    nafter = shm_objects(after, 64);
    cr_expect(seen, "the segment never appeared in /dev/shm");
    cr_expect(nafter <= nbefore, "%d shared-memory objects left in /dev/shm "
              "(first: %s)", nafter - nbefore,
              (nafter > 0) ? after[nafter - 1] : "");
    for (; nafter > nbefore; nafter--) { /* do not leave 6 GiB behind */
        snprintf(cmd, sizeof(cmd), "/dev/shm/%s", after[nafter - 1]);
        unlink(cmd);
    }
}

Test(fault, kill9_one_of_four_tcp, .timeout = 60)
{
    kill_one_of_four("tcp", "", 2);
}

Test(fault, kill9_one_of_four_shm, .timeout = 60)
{
    kill_one_of_four("shm", "", 2);
}

Test(fault, kill9_one_of_four_ucx, .timeout = 60)
{
    if (!GV_HAVE_UCX)
        cr_skip_test("ucx was not built");
    kill_one_of_four("ucx", "UCX_TLS=sm,self", 2);
}

Test(fault, kill9_one_of_four_ofi, .timeout = 60)
{
    if (!GV_HAVE_OFI)
        cr_skip_test("ofi was not built");
    kill_one_of_four("ofi", "FI_PROVIDER='tcp;ofi_rxm'", 2);
}

/* libfabric's shm provider keeps a region file per rank in /dev/shm; the
 * killed rank's must not stay behind either. */
Test(fault, kill9_one_of_four_ofi_shm, .timeout = 60)
{
    if (!GV_HAVE_OFI)
        cr_skip_test("ofi was not built");
    kill_one_of_four("ofi", "FI_PROVIDER=shm", 2);
}

Test(fault, killed_gvrun_takes_its_ranks_tcp, .timeout = 60)
{
    kill_one_of_four("tcp", "", -1);
}

Test(fault, killed_gvrun_takes_its_ranks_shm, .timeout = 60)
{
    kill_one_of_four("shm", "", -1);
}

/* Run @a prog (rank 1 sleeps 30 s while rank 0 waits on it) over @a t
 * with GV_TIMEOUT_S=5: the job must stop well before rank 1 wakes, with a
 * message naming rank 1 and containing @a also (when not NULL). An exit of
 * 77 skips the test when @a may_skip. */
static void expect_stuck_named(const tl_cfg_t *t, const char *prog,
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
    t0 = now_s();
    rc = drv_run(cmd, &out);
    if (may_skip && (rc == 77))
        cr_skip_test("%s %s: %s", prog, t->label, out ? out : "");
    cr_expect(rc != 0 && rc != 124, "%s %s: exit %d:\n%s", prog, t->label,
              rc, out ? out : "");
    cr_expect(now_s() - t0 < 20.0, "%s %s: took %.1f s to stop", prog,
              t->label, now_s() - t0);
    cr_expect(out && strstr(out, "rank 1 took none of the messages sent to "
                                 "it for 5 s") &&
                  ((also == NULL) || strstr(out, also)),
              "%s %s: the message does not name rank 1%s%s:\n%s", prog,
              t->label, also ? " and say " : "", also ? also : "",
              out ? out : "");
    free(out);
}

/* Over every transport configuration (tls[]), and with senders that are
 * tasks, which hand the core to each other while they wait. */
ParameterizedTestParameters(fault, stuck_receiver_named)
{
    static int idx[NTLS + 1];
    size_t     k;

    for (k = 0; k <= NTLS; k++)
        idx[k] = (int)k;
    return cr_make_param_array(int, idx, NTLS + 1);
}

ParameterizedTest(int *k, fault, stuck_receiver_named, .timeout = 60)
{
    /* the last one: tasks over shm */
    expect_stuck_named(&tls[(*k < (int)NTLS) ? *k : 1], "mr_stuck",
                       (*k < (int)NTLS) ? "" : "--tasks", NULL, 0);
}

/* The configuration of tls[] labelled @a label. */
static const tl_cfg_t *tl_labelled(const char *label)
{
    size_t k;

    for (k = 0; k < NTLS; k++)
        if (strcmp(tls[k].label, label) == 0)
            break;
    cr_assert(k < NTLS, "no transport configuration %s", label);
    return &tls[k];
}

/* A one-sided operation waiting for a stopped target is named too, over
 * the transports whose atomics need the target's progress (over shm and
 * ucx/sm they complete without it; over mpi the wait is inside
 * MPI_Win_flush, where the monitor thread names it: driver_mpirun). */
static void stuck_target_named(const char *label, const char *args)
{
    expect_stuck_named(tl_labelled(label), "mr_stuck_amo", args,
                       "one-sided operations waiting to complete: 1", 1);
}

Test(fault, stuck_target_named_ucx_tcp, .timeout = 60)
{
    stuck_target_named("ucx/tcp", "");
}

Test(fault, stuck_target_named_ofi_shm, .timeout = 60)
{
    stuck_target_named("ofi/shm", "");
}

Test(fault, stuck_target_named_ofi_rxm, .timeout = 60)
{
    stuck_target_named("ofi/tcp;ofi_rxm", "");
}

/* The rest of a split message that the receiver never takes: the AM
 * layer counted the message as sent, so the ofi transport itself must
 * name the rank (mr_ofi_owed.c). */
Test(fault, owed_parts_named_ofi_shm, .timeout = 60)
{
    expect_stuck_named(tl_labelled("ofi/shm"), "mr_ofi_owed", "",
                       "still owes it the last 4120 bytes of a split "
                       "message", 1);
}

/* Whether the ucx transport logged in @a out that it rejected for @a why
 * a frame whose payload (after the frame header) is longer than @a min
 * bytes. */
static int ucx_rejected_longer(const char *out, const char *why, size_t min)
{
    static const char pre[] = "ucx: rejected a frame (";
    const char       *p     = out;

    while ((p = strstr(p, pre)) != NULL) {
        size_t hbytes, dbytes;
        int    at = 0;

        p += sizeof(pre) - 1;
        if ((sscanf(p, "%zu header bytes, %zu data bytes): %n", &hbytes,
                    &dbytes, &at) == 2) &&
            (at > 0) && (dbytes > min) &&
            (strncmp(p + at, why, strlen(why)) == 0))
            return 1;
    }
    return 0;
}

/* Frames forged in front of real UCX (preload_forge_ucx.c: another job's
 * tag, a source rank out of range, sequence numbers ahead of the window
 * and behind it, a frame shorter than its header) among a stream of real
 * ones, requests and replies (format I) and batches alike: each is
 * rejected with its reason, and every real message still arrives once, in
 * order and intact (mr_ucx_order checks that). Format I frames of 4-16
 * KiB (gv_am_send_now() of mid-size payloads, sent eager in more than one
 * fragment) are forged too, and must be rejected for the same reasons:
 * accepted, a forged copy would pass for the real frame (same payload),
 * so only the log can tell. */
static void forged_frames_rejected(const char *tls_env)
{
    static const char *why[] = {
        "job tag mismatch (a frame of another job)",
        "bad source rank",
        "sequence number outside the window (duplicate or forged)",
        "frame without a header",
        "format I frame without its header",
    };
    char          cmd[1024], *out = NULL;
    const char   *line;
    unsigned long n = 0, mid = 0;
    int           rc, bad, i;

    if (!GV_HAVE_UCX)
        cr_skip_test("ucx was not built (the frames are forged into UCX)");
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=ucx %s GV_TEST_FORGE_EVERY=7 "
             "GV_WARN_UNUSED_ENV=0 "
             "LD_PRELOAD=%s/tests/multirank/preload_forge_ucx.so "
             "timeout -k 5 90 %s/bin/gvrun -n 2 "
             "%s/tests/multirank/mr_ucx_order -N -n 2000", tls_env,
             GV_BUILD_DIR, GV_BUILD_DIR, GV_BUILD_DIR);
    rc = drv_run(cmd, &out);
    cr_assert_not_null(out);
    line = strstr(out, "preload_forge_ucx: forged ");
    cr_assert(line != NULL, "the preload did not run:\n%s", out);
    sscanf(line, "preload_forge_ucx: forged %lu", &n);
    cr_assert(n > 0, "nothing was forged:\n%s", out);
    /* Each rank's preload reports its own mid-size forgeries. */
    for (; line != NULL;
         line = strstr(line + 1, "preload_forge_ucx: forged ")) {
        const char   *m   = strstr(line, "mid-size ");
        const char   *eol = strchr(line, '\n');
        unsigned long m_n = 0;

        if ((m != NULL) && ((eol == NULL) || (m < eol)) &&
            (sscanf(m, "mid-size %lu", &m_n) == 1))
            mid += m_n;
    }
    cr_assert(mid > 0, "no frame longer than 4 KiB was forged (format I "
              "frames of 4-16 KiB are not sent, or not forged):\n%s", out);
    cr_expect_eq(rc, 0, "real messages were lost, reordered or corrupted "
                 "(exit %d):\n%s", rc, out);
    bad = drv_expect_lines(out, why, sizeof(why) / sizeof(why[0]),
                           "no frame was rejected for");
    /* The forgeries a mid-size frame makes (its short copy is a tiny
     * frame): the frame header is what they get wrong. */
    for (i = 0; i < 3; i++) {
        if (!ucx_rejected_longer(out, why[i], 4096)) {
            cr_expect_fail("no frame with more than 4096 data bytes was "
                           "rejected for \"%s\" (%lu mid-size forgeries)",
                           why[i], mid);
            bad++;
        }
    }
    if (bad > 0)
        cr_log_error("--- output ---\n%s--- end ---", out);
    free(out);
}

Test(fault, forged_frames_rejected_ucx_sm, .timeout = 120)
{
    forged_frames_rejected("UCX_TLS=sm,self");
}

Test(fault, forged_frames_rejected_ucx_tcp, .timeout = 120)
{
    forged_frames_rejected("UCX_TLS=tcp,self");
}

/* Frames forged at an ofi job from a libfabric endpoint of rank 0's own
 * (mr_ofi_stranger: too short, too long, another job's key, impossible
 * sources, a delivered seq and one far ahead, bad padding, malformed
 * grants, id frames without a valid id; untagged and tagged) while real
 * messages fly, and before them id frames and parts of split messages out
 * of place with the very seq the receiver expects next (so that they meet
 * every check of the transport's fast path and its reassembly): each is
 * rejected with its reason, and every real message still arrives once, in
 * order and intact. Over shm the frames longer than the receive buffer
 * are left out (they wedge libfabric 1.17's shm receiver: see
 * mr_ofi_stranger.c). */
static void forged_frames_rejected_ofi(const char *prov, int kinds)
{
    static const char *why[] = {
        "dropped a 8-byte frame (frames are 16 to",
        "dropped a 24-byte frame without this job's key",
        "dropped a frame from invalid rank 2147483647",
        "dropped a frame from invalid rank 1",
        "dropped a stale frame from rank 0 (seq 0,",
        "dropped a frame from rank 0 too far ahead (seq 1073741824,",
        "dropped a 24-byte frame with 8 bytes of padding",
        "dropped a malformed grant (24 bytes, rank 0)",
        "dropped a grant from rank 0 for 1073741824 frames",
        "dropped a 24-byte id frame without a valid id",
        "dropped a 16-byte id frame without a valid id",
        "dropped a 72-byte frame without this job's key",
        "dropped a 128-byte frame with 64 bytes of padding",
        "dropped a 32-byte frame without this job's key",
        "dropped a 32-byte id frame without a valid id",
        /* fmore_pad, fcont_idf, fcont_lone (whose seq is the one rank 1
         * expects next: not known here) */
        "dropped a 32-byte part frame with 1 bytes of padding (only a "
        "message's last frame has any)",
        "dropped a 32-byte continuation frame marked as an id frame",
        "dropped a continuation frame from rank 0 (seq ",
        ") without a message in progress",
        /* fmore_long (split_max differs: 16320 over shm, 0 over rxm) */
        "): its message would be longer than ",
        "a receive failed: Truncation error", /* long, tlong: not shm */
    };
    char   cmd[1024], line[96], *out = NULL;
    size_t n = sizeof(why) / sizeof(why[0]);
    int    rc;

    if (!GV_HAVE_OFI)
        cr_skip_test("ofi was not built");
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=ofi FI_PROVIDER='%s' GV_WARN_UNUSED_ENV=0 "
             "timeout -k 5 90 %s/bin/gvrun -n 2 "
             "%s/tests/multirank/mr_ofi_stranger", prov, GV_BUILD_DIR,
             GV_BUILD_DIR);
    rc = drv_run(cmd, &out);
    cr_assert_not_null(out);
    snprintf(line, sizeof(line), "forged to rank 1 (%d kinds, provider %s)",
             kinds, prov);
    cr_assert(strstr(out, line) != NULL, "not every kind was forged (%s):\n%s",
              line, out);
    cr_expect_eq(rc, 0, "a forged frame was not rejected, or real messages "
                 "were lost, reordered or corrupted (exit %d%s):\n%s", rc,
                 (rc == 124) ? ", timed out" : "", out);
    if (strcmp(prov, "shm") == 0)
        n--;
    if (drv_expect_lines(out, why, n, "no frame was rejected for") > 0)
        cr_log_error("--- output ---\n%s--- end ---", out);
    free(out);
}

Test(fault, forged_frames_rejected_ofi_shm, .timeout = 120)
{
    forged_frames_rejected_ofi("shm", 23);
}

Test(fault, forged_frames_rejected_ofi_rxm, .timeout = 120)
{
    forged_frames_rejected_ofi("tcp;ofi_rxm", 25);
}

/* A rank stuck inside its network library's progress (fault injected
 * with LD_PRELOAD in front of real UCX: preload_hang.c) holds its only
 * thread, so neither it nor its peer polls: the monitor thread stops the
 * job within GV_TIMEOUT_S and names the rank. */
Test(fault, stuck_in_library_named, .timeout = 60)
{
    char   cmd[1024], flag[64], line[64], *out = NULL;
    double t0;
    int    rc, r;

    if (!GV_HAVE_UCX)
        cr_skip_test("ucx was not built (the fault is injected into UCX)");
    snprintf(flag, sizeof(flag), "/tmp/gv-hang-%d", (int)getpid());
    rmdir(flag);
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=ucx UCX_TLS=sm,self GV_TIMEOUT_S=5 "
             "GV_TEST_HANG_AFTER=100000 GV_TEST_HANG_FLAG=%s "
             "LD_PRELOAD=%s/tests/multirank/preload_hang.so "
             "timeout -k 5 50 %s/bin/gvrun -n 2 %s/perf/pingpong -s 8 -S 8 "
             "-r 64", flag, GV_BUILD_DIR, GV_BUILD_DIR, GV_BUILD_DIR);
    t0 = now_s();
    rc = drv_run(cmd, &out);
    rmdir(flag);
    cr_assert_not_null(out);
    cr_assert(strstr(out, "now stays inside ucp_worker_progress") != NULL,
              "the fault was not injected (the run ended first?): exit "
              "%d:\n%s", rc, out);
    cr_expect(rc != 0 && rc != 124, "exit %d:\n%s", rc, out);
    cr_expect(now_s() - t0 < 20.0, "took %.1f s to stop:\n%s",
              now_s() - t0, out);
    for (r = 0; r < 2; r++) {
        snprintf(line, sizeof(line), "gvrun: rank %d (pid", r);
        if (strstr(out, line) != NULL)
            break;
    }
    cr_assert(r < 2, "gvrun did not report which rank aborted:\n%s", out);
    snprintf(line, sizeof(line), "rank %d was stuck for 5 s", r);
    cr_expect(strstr(out, line) && strstr(out, "(GV_TIMEOUT_S) inside the "
                                               "transport's progress "
                                               "(transport ucx)"),
              "the message does not name rank %d stuck in the library:\n%s",
              r, out);
    free(out);
}

/* The same adds issued without waiting and completed by a flush to every
 * rank: one flush per rank with operations pending, so the rank that
 * never completes its part is named (a whole flush does not say which). */
Test(fault, stuck_flush_all_named_ucx_tcp, .timeout = 60)
{
    stuck_target_named("ucx/tcp", "--flush-all");
}

Test(fault, stuck_flush_all_named_ofi_rxm, .timeout = 60)
{
    stuck_target_named("ofi/tcp;ofi_rxm", "--flush-all");
}

/* Every rank aborts at once and is gone before gvrun's short wait for a
 * rank's death to explain the abort: the job still exits with the
 * abort's code and one line saying so (it once exited 0). */
Test(fault, all_ranks_abort_exit_code, .timeout = 60)
{
    char cmd[512], *out = NULL;
    int  rc, i;

    for (i = 0; i < 3; i++) {
        snprintf(cmd, sizeof(cmd), "env GV_TRANSPORT=shm timeout -k 5 30 "
                 "%s/bin/gvrun -n 2 %s/tests/multirank/mr_die --all-abort",
                 GV_BUILD_DIR, GV_BUILD_DIR);
        rc = drv_run(cmd, &out);
        cr_expect_eq(rc, 5, "exit %d, expected 5:\n%s", rc, out ? out : "");
        cr_expect(out && strstr(out, "the job (code 5): mr_die: rank"),
                  "no line reports the abort:\n%s", out ? out : "");
        free(out);
        out = NULL;
    }
}

Test(fault, bogus_transport_lists_available, .timeout = 60)
{
    char *out = NULL;
    char  cmd[512];
    int   rc;

    snprintf(cmd, sizeof(cmd), "env GV_TRANSPORT=bogus timeout 30 "
             "%s/bin/gvrun -n 2 %s/tests/multirank/mr_alltoall",
             GV_BUILD_DIR, GV_BUILD_DIR);
    rc = drv_run(cmd, &out);
    cr_expect(rc != 0 && rc != 124, "exit %d", rc);
    cr_expect(out && strstr(out, "transport 'bogus' (GV_TRANSPORT) is not "
                                 "available; built in: self,"),
              "unexpected output:\n%s", out ? out : "");
    cr_expect(out && strstr(out, "tcp"), "tcp not listed:\n%s", out);
    free(out);
}

/* GV_AMO=native over a transport without remote atomics: gv_init
 * refuses, naming the transport and what it lacks, and the job fails. It
 * once ran with every delegate failing: charcount printed "0 of 1000000
 * characters counted" and exited 0. */
Test(fault, native_amo_refused_without_atomics, .timeout = 60)
{
    char *out = NULL;
    char  cmd[512];
    int   rc;

    snprintf(cmd, sizeof(cmd), "env GV_TRANSPORT=tcp GV_AMO=native timeout "
             "30 %s/bin/gvrun -n 2 %s/examples/charcount", GV_BUILD_DIR,
             GV_BUILD_DIR);
    rc = drv_run(cmd, &out);
    cr_expect(rc != 0 && rc != 124, "exit %d:\n%s", rc, out ? out : "");
    cr_expect(out && strstr(out, "GV_AMO=native, but transport tcp has no "
                                 "native remote atomics"),
              "no line names GV_AMO, the transport and what it lacks:\n%s",
              out ? out : "");
    cr_expect(out && !strstr(out, "characters counted"),
              "the program ran:\n%s", out ? out : "");
    free(out);
}

/* A GV_HEAP larger than the node's memory, over the transports that
 * back the heap with shared memory: refused at start, naming GV_HEAP.
 * UCX once allocated it page by page in /dev/shm until the node's memory
 * ran out, and left the file behind. Under ulimit -v
 * and -f (64 MiB files), so that a regression fails the allocation, or
 * stops the rank with SIGXFSZ, instead of filling the node's memory (it
 * may still leave two 64 MiB files in /dev/shm then). */
static void huge_heap_refused(const char *tl)
{
    char *out = NULL;
    char  cmd[512];
    int   rc;

    if ((strcmp(tl, "ucx") == 0) && !GV_HAVE_UCX)
        cr_skip_test("ucx was not built");
    snprintf(cmd, sizeof(cmd), "ulimit -v 8000000; ulimit -f 131072; "
             "env GV_TRANSPORT=%s GV_HEAP=1t timeout 30 %s/bin/gvrun -n 2 "
             "%s/examples/hello", tl, GV_BUILD_DIR, GV_BUILD_DIR);
    rc = drv_run(cmd, &out);
    cr_expect(rc != 0 && rc != 124, "exit %d:\n%s", rc, out ? out : "");
    cr_expect(out && strstr(out, "GiB") && strstr(out, "lower GV_HEAP"),
              "no line says the heap does not fit and names GV_HEAP:\n%s",
              out ? out : "");
    free(out);
}

Test(fault, huge_heap_refused_ucx, .timeout = 60)
{
    huge_heap_refused("ucx");
}

Test(fault, huge_heap_refused_shm, .timeout = 60)
{
    huge_heap_refused("shm");
}

/* A transport's own selector that matches nothing here: the error says
 * what there is to choose from. */
Test(fault, bad_selector_lists_choices, .timeout = 60)
{
    static const char *bad[][3] = {
        {"GV_TRANSPORT=tcp GV_TCP_IFACE=bogus0",
         "GV_TCP_IFACE names 'bogus0', but there is no such network "
         "interface here; there are: ", "lo"},
        {"GV_TRANSPORT=ofi GV_OFI_PROVIDER=bogus",
         "no libfabric provider named 'bogus' (GV_OFI_PROVIDER)",
         "providers that offer one: "},
        {"GV_TRANSPORT=ofi FI_PROVIDER=bogus",
         "providers that offer one: none", "FI_PROVIDER='bogus' hides"},
        {"GV_TRANSPORT=self", "self: serves a job of one rank; this one "
         "has 2", "choose another GV_TRANSPORT"},
    };
    char   cmd[512];
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if ((strstr(bad[i][0], "=ofi") != NULL) && !GV_HAVE_OFI)
            continue;
        snprintf(cmd, sizeof(cmd), "env %s timeout 30 %s/bin/gvrun -n 2 "
                 "%s/examples/hello", bad[i][0], GV_BUILD_DIR, GV_BUILD_DIR);
        expect_run(cmd, 1, &bad[i][1], 2);
    }
}

/* The conformance programs skip (77) only where gv_init refuses
 * GV_AMO=native: a transport that does not start is a failure, or the
 * whole table would skip the day a transport broke (review of 3c2eeac). */
Test(fault, transport_failure_is_not_a_skip, .timeout = 60)
{
    char cmd[512];

    snprintf(cmd, sizeof(cmd), "env GV_TRANSPORT=self timeout 30 %s/bin/gvrun "
             "-n 2 %s/tests/multirank/mr_barrier", GV_BUILD_DIR, GV_BUILD_DIR);
    expect_run(cmd, 1, NULL, 0); /* 1: a failure, not a skip (77) */
}

Test(fault, bad_value_names_variable, .timeout = 60)
{
    static const char *bad[][3] = {
        {"GV_AGG_BYTES=-3", "GV_AGG_BYTES='-3'", "k, m, g suffix"},
        {"GV_LOG=loud", "GV_LOG='loud'", "error|warn|info|debug|trace"},
        {"GV_BIND=sometimes", "GV_BIND='sometimes'", "core|none"},
        {"GV_SPIN_US=1e3", "GV_SPIN_US='1e3'", "whole number"},
        {"GV_BLOCK=16385", "GV_BLOCK='16385' is not a power of two",
         "8 to 1048576"},
    };
    char   cmd[512];
    size_t i;

    /* Each message names the variable, the value and what is accepted. */
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(cmd, sizeof(cmd), "env %s timeout 30 %s/bin/gvrun -n 2 "
                 "%s/tests/multirank/mr_alltoall", bad[i][0], GV_BUILD_DIR,
                 GV_BUILD_DIR);
        expect_run(cmd, 1, &bad[i][1], 2);
    }
}

/* ---- launcher and gvinfo arguments ------------------------------------ */

/* --timeout is parsed strictly, within a range whose nanoseconds fit 64
 * bits: 18446744074 s once overflowed to half a second, and '' meant
 * "never". */
Test(args, gvrun_timeout_strict_and_bounded, .timeout = 60)
{
    static const char *bad[] = {"18446744074", "", " 5", "5s", "-1",
                                "1000000001"};
    const char *lines[3];
    char        cmd[512], quoted[64];
    double      t0;
    size_t      i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/bin/gvrun --timeout "
                 "'%s' -n 2 sleep 3", GV_BUILD_DIR, bad[i]);
        snprintf(quoted, sizeof(quoted), "--timeout '%s'", bad[i]);
        lines[0] = quoted;
        lines[1] = "from 0 (never) to 1000000000";
        t0       = now_s();
        expect_run(cmd, 2, lines, 2);
        cr_expect(now_s() - t0 < 2.0, "%s ran the job", cmd);
    }
    /* The largest accepted value runs the job to its end. */
    snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/bin/gvrun --timeout "
             "1000000000 -n 2 sleep 1", GV_BUILD_DIR);
    expect_run(cmd, 0, NULL, 0);
    /* A small one still stops the job, with 124. */
    snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/bin/gvrun --timeout 1 "
             "-n 2 sleep 20", GV_BUILD_DIR);
    lines[0] = "the job ran longer than --timeout 1 s";
    expect_run(cmd, 124, lines, 1);
}

/* -n is range-checked before it becomes an int (4294967298 started 2
 * ranks) and takes digits only. */
Test(args, gvrun_np_strict, .timeout = 60)
{
    static const char *bad[] = {"4294967298", " 2", "", "0", "4097", "2x",
                                "+2"};
    const char *lines[2];
    char        cmd[512], quoted[64];
    size_t      i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/bin/gvrun -n '%s' "
                 "echo ran", GV_BUILD_DIR, bad[i]);
        snprintf(quoted, sizeof(quoted), "-n '%s'", bad[i]);
        lines[0] = quoted;
        lines[1] = "from 1 to 4096";
        expect_run(cmd, 2, lines, 2);
    }
    snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/bin/gvrun --np 4096 "
             "true", GV_BUILD_DIR);
    expect_run(cmd, 0, NULL, 0);
}

/* A rank that exits 0 before it joins the bootstrap is named at once (the
 * others waited GV_TIMEOUT_S, and the message did not say it had exited);
 * programs that never call gv_init still run, as do ones that finalize. */
Test(args, gvrun_rank_exits_0_before_bootstrap, .timeout = 90)
{
    const char *lines[1];
    char        cmd[768];
    double      t0;
    int         n;

    for (n = 2; n <= 3; n++) {
        snprintf(cmd, sizeof(cmd), "env GV_TIMEOUT_S=30 timeout -k 5 60 "
                 "%s/bin/gvrun -n %d sh -c 'if [ $(( $$ %% %d )) = 0 ]; "
                 "then exit 0; else exec %s/examples/hello; fi'",
                 GV_BUILD_DIR, n, n, GV_BUILD_DIR);
        lines[0] = "exited with status 0 before it joined the job's "
                   "bootstrap (gv_init), while";
        t0       = now_s();
        expect_run(cmd, 1, lines, 1);
        cr_expect(now_s() - t0 < 10.0, "%d ranks: took %.1f s to stop", n,
                  now_s() - t0);
    }
    snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/bin/gvrun -n 2 sh -c "
             "'sleep 1; exit 0'", GV_BUILD_DIR);
    expect_run(cmd, 0, NULL, 0);
    snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/bin/gvrun -n 3 "
             "%s/examples/hello", GV_BUILD_DIR, GV_BUILD_DIR);
    expect_run(cmd, 0, NULL, 0);
}

/* A name without a '/' is looked up on PATH only: a file of that name in
 * the current directory is not run, and the message says so (it said "No
 * such file or directory" of a file that is there). */
Test(args, gvrun_program_in_cwd_not_on_path, .timeout = 60)
{
    const char *lines[1];
    char        cmd[768];

    snprintf(cmd, sizeof(cmd), "env PATH=/usr/bin:/bin timeout -k 5 30 "
             "%s/bin/gvrun -n 2 README.md", GV_BUILD_DIR);
    lines[0] = "gvrun: cannot run README.md: not found in PATH; ./README.md "
               "exists but is not an executable file";
    expect_run(cmd, 127, lines, 1);
    snprintf(cmd, sizeof(cmd), "cd %s/examples && env PATH=/usr/bin:/bin "
             "timeout -k 5 30 ../bin/gvrun -n 1 hello", GV_BUILD_DIR);
    lines[0] = "gvrun: cannot run hello: not found in PATH; use ./hello";
    expect_run(cmd, 127, lines, 1);
    snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/bin/gvrun -n 1 "
             "./README.md", GV_BUILD_DIR);
    lines[0] = "gvrun: cannot run ./README.md: permission denied";
    expect_run(cmd, 127, lines, 1);
}

/* gvinfo takes options only: anything else is named, with the usage, and
 * exit 2 (it was ignored, exit 0); --help is the usage, exit 0. */
Test(args, gvinfo_rejects_unknown_arguments, .timeout = 60)
{
    static const char *bad[][2] = {
        {"extra", "gvinfo: unexpected argument 'extra'"},
        {"-t junk", "gvinfo: unexpected argument 'junk'"},
        {"-q", "gvinfo: unknown option '-q'"},
        {"--bogus", "gvinfo: unknown option '--bogus'"},
    };
    const char *lines[2];
    char        cmd[512];
    size_t      i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(cmd, sizeof(cmd), "timeout 30 %s/bin/gvinfo %s",
                 GV_BUILD_DIR, bad[i][0]);
        lines[0] = bad[i][1];
        lines[1] = "usage: gvinfo";
        expect_run(cmd, 2, lines, 2);
    }
    lines[0] = "usage: gvinfo";
    snprintf(cmd, sizeof(cmd), "timeout 30 %s/bin/gvinfo --help",
             GV_BUILD_DIR);
    expect_run(cmd, 0, lines, 1);
    snprintf(cmd, sizeof(cmd), "timeout 30 %s/bin/gvinfo -h", GV_BUILD_DIR);
    expect_run(cmd, 0, lines, 1);
    lines[0] = "grapevine ";
    snprintf(cmd, sizeof(cmd), "timeout 30 %s/bin/gvinfo -v", GV_BUILD_DIR);
    expect_run(cmd, 0, lines, 1);
}
