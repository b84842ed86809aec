/* Criterion driver for launching through mpirun: 4 ranks bootstrap through
 * PMIx with every built transport, the mpi transport bootstraps through MPI
 * over Open MPI's shared memory, TCP and UCX paths, a rank killed under
 * mpirun stops the job with a message naming it, the mpi transport drops
 * forged messages and delivers every real one (preload_forge_mpi.c), and
 * gvrun refuses the mpi transport. Every run is under a hard time limit
 * (timeout -k).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/driver.h"
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef GV_BUILD_DIR
#define GV_BUILD_DIR "build"
#endif

/* Open MPI refuses root without these; CI runs as root. The UCX PML only
 * accepts InfiniBand devices unless told otherwise (it then reports "PML
 * ucx cannot be selected"), so let it use shared memory and TCP. */
#define MPIRUN_ENV "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
#define MCA_UCX    "--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any"

typedef struct {
    const char *label;
    const char *tl;        /* GV_TRANSPORT */
    const char *mca;       /* mpirun options */
    int         built;     /* transport and its bootstrap were built */
    const char *why_not;
} cfg_t;

#define PMIX_TL(_name, _have)                                                \
    {_name, _name, "", (_have) && GV_HAVE_PMIX,                              \
     !(_have) ? "transport " _name " was not built"                          \
              : "built without PMIx (needs libpmix-dev; PMIX=1)"}
#define MPI_TL(_label, _mca)                                                 \
    {_label, "mpi", _mca, GV_HAVE_MPI,                                       \
     "transport mpi was not built (needs libopenmpi-dev; MPI=1)"}

static const cfg_t cfgs[] = {
    PMIX_TL("tcp", 1),
    PMIX_TL("shm", 1),
    PMIX_TL("ucx", GV_HAVE_UCX),
    PMIX_TL("ofi", GV_HAVE_OFI),
    MPI_TL("mpi", ""),
    MPI_TL("mpi/vader", "--mca btl self,vader"),
    MPI_TL("mpi/tcp", "--mca btl self,tcp"),
    MPI_TL("mpi/ucx", MCA_UCX),
};
#define NCFGS (sizeof(cfgs) / sizeof(cfgs[0]))

/* Criterion copies parameters into the test process, which is a fresh
 * exec (other addresses): so no pointers here, only bytes and indices. */
typedef struct {
    int  cfg;              /* index into cfgs */
    char prog[32];
    char args[48];
    int  nranks;
    int  timeout_s;
    char env[48];          /* extra GV_* settings for this case */
} case_t;

static case_t cases[] = {
    /* PMIx launch of 4 ranks for each transport (and MPI launch for mpi) */
    {0, "mr_alltoall", "-n 1000 -S 70000", 4, 120, ""},
    {1, "mr_alltoall", "-n 1000 -S 70000", 4, 120, ""},
    {2, "mr_alltoall", "-n 1000 -S 70000", 4, 120, ""},
    {3, "mr_alltoall", "-n 1000 -S 70000", 4, 120, ""},
    {4, "mr_alltoall", "-n 1000 -S 70000", 4, 120, ""},
    {5, "mr_alltoall", "-n 1000 -S 70000", 4, 120, ""},
    {6, "mr_alltoall", "-n 1000 -S 70000", 4, 120, ""},
    {7, "mr_alltoall", "-n 1000 -S 70000", 4, 120, ""},
    /* the mpi transport's own paths: large messages and the window */
    {5, "mr_sizes", "", 4, 120, ""},
    {6, "mr_sizes", "", 4, 120, ""},
    {7, "mr_sizes", "", 4, 120, ""},
    {5, "mr_rma", "", 4, 120, ""},
    {6, "mr_rma", "", 4, 120, ""},
    {7, "mr_rma", "", 4, 120, ""},
    {5, "mr_barrier", "", 8, 150, ""},
    /* order per pair with gv_am_send_now (the handler id in the MPI tag)
     * mixed with batches and large messages behind an RTS */
    {5, "mr_ucx_order", "-N", 3, 120, ""},
    {6, "mr_ucx_order", "-N", 2, 120, ""},
    {7, "mr_ucx_order", "-N", 2, 120, ""},
    /* MPI and PMIx initialize once per process: a second gv_init after
     * gv_finalize is refused with a status and a message, not a crash */
    {0, "mr_embed", "reinit-once", 2, 120, ""},
    {4, "mr_embed", "reinit-once", 2, 120, ""},
    /* ring slots of an odd eager size still give aligned payloads */
    {5, "mr_ucx_order", "-N", 2, 120, "GV_MPI_EAGER=1001"},
    /* an eager size under 1 KiB: no message larger than the ring's
     * receives goes out as one */
    {5, "mr_ucx_order", "-N", 2, 120, "GV_MPI_EAGER=256"},
};

static int have_mpirun(void)
{
    char *out = NULL;
    int   rc  = drv_run("command -v mpirun", &out);

    free(out);
    return rc == 0;
}

static int built(const char *prog)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/tests/multirank/%s", GV_BUILD_DIR, prog);
    return access(path, X_OK) == 0;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void skip_unless_runnable(const cfg_t *c, const char *prog)
{
    if (!c->built)
        cr_skip_test("%s over %s: %s", prog, c->label, c->why_not);
    if (!have_mpirun())
        cr_skip_test("%s over %s: no mpirun on PATH (apt-get install "
                     "openmpi-bin)", prog, c->label);
    cr_assert(built(prog), "%s/tests/multirank/%s was not built",
              GV_BUILD_DIR, prog);
}

ParameterizedTestParameters(mpirun, launch)
{
    return cr_make_param_array(case_t, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(case_t *k, mpirun, launch, .timeout = 240)
{
    const cfg_t *c = &cfgs[k->cfg];
    char         cmd[1024], *out = NULL;
    int          rc;

    skip_unless_runnable(c, k->prog);
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s GV_WARN_UNUSED_ENV=0 %s " MPIRUN_ENV " "
             "timeout -k 5 %d mpirun --oversubscribe -np %d %s "
             "%s/tests/multirank/%s %s", c->tl, k->env, k->timeout_s,
             k->nranks, c->mca, GV_BUILD_DIR, k->prog, k->args);
    rc = drv_run(cmd, &out);
    if ((rc != 0) && (out != NULL) &&
        (strstr(out, "PML ucx cannot be selected") != NULL))
        cr_skip_test("%s over %s: this Open MPI has no usable UCX PML",
                     k->prog, c->label);
    if (rc == 77)
        cr_skip_test("%s over %s: %s", k->prog, c->label, out ? out : "");
    if (rc != 0)
        cr_log_error("%s\n--- output ---\n%s--- end ---", cmd,
                     out ? out : "");
    cr_expect_eq(rc, 0, "%s over %s with %d ranks under mpirun: exit %d%s",
                 k->prog, c->label, k->nranks, rc,
                 (rc == 124) ? " (timed out)" : "");
    free(out);
}

/* ---- a rank killed under mpirun ------------------------------------- */

/* Does a line other than mr_die's own announcement name rank 2? (mpirun:
 * "process rank 2 with PID ...", the runtime: "rank 2 failed ...") */
static int names_rank_2(const char *out)
{
    const char *line = out;

    while ((line != NULL) && (*line != '\0')) {
        const char *end = strchr(line, '\n');
        size_t      len = (end != NULL) ? (size_t)(end - line) : strlen(line);
        char        buf[512];

        snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
        if ((strstr(buf, "mr_die:") == NULL) &&
            (strstr(buf, "rank 2 ") != NULL))
            return 1;
        line = (end != NULL) ? end + 1 : NULL;
    }
    return 0;
}

static void kill_rank_2(int cfg)
{
    const cfg_t *c = &cfgs[cfg];
    const int    limit_s = 90;
    char         cmd[1024], *out = NULL;
    double       t0, elapsed;
    int          rc;

    skip_unless_runnable(c, "mr_die");
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s GV_WARN_UNUSED_ENV=0 " MPIRUN_ENV " "
             "timeout -k 5 %d mpirun --oversubscribe -np 4 %s "
             "%s/tests/multirank/mr_die --die", c->tl, limit_s, c->mca,
             GV_BUILD_DIR);
    t0      = now_s();
    rc      = drv_run(cmd, &out);
    elapsed = now_s() - t0;
    cr_log_info("%s: exit %d after %.1f s\n%s", c->label, rc, elapsed,
                out ? out : "");
    cr_assert_not_null(out);
    cr_expect(rc != 0, "the job exited 0 although rank 2 was killed:\n%s",
              out);
    /* mpirun itself exits 137 when a rank died of SIGKILL, so tell the
     * time limit apart by the clock, not by the code. */
    cr_expect((rc != 124) && (elapsed < limit_s - 1), "the job did not "
              "stop within %d s after rank 2 died (exit %d):\n%s", limit_s,
              rc, out);
    cr_expect(strstr(out, "mr_die: rank 2 kills itself") != NULL,
              "rank 2 never got to die:\n%s", out);
    cr_expect(names_rank_2(out), "no message from the launcher or the "
              "runtime names rank 2:\n%s", out);
    free(out);
}

Test(mpirun, kill_rank_mpi, .timeout = 150)
{
    kill_rank_2(4);
}

Test(mpirun, kill_rank_tcp, .timeout = 150)
{
    kill_rank_2(0);
}

Test(mpirun, kill_rank_shm, .timeout = 150)
{
    kill_rank_2(1);
}

Test(mpirun, kill_rank_ucx, .timeout = 150)
{
    kill_rank_2(2);
}

Test(mpirun, kill_rank_ofi, .timeout = 150)
{
    kill_rank_2(3);
}

/* Run @a prog @a args with GV_TIMEOUT_S=5 under mpirun over configuration
 * @a c (plus @a mca): the job must stop within 20 s, non-zero, with a
 * line that contains @a named. */
static void expect_stuck_mpi(const cfg_t *c, const char *mca,
                             const char *prog, const char *args,
                             const char *named)
{
    char   cmd[1024], *out = NULL;
    double t0, elapsed;
    int    rc;

    skip_unless_runnable(c, prog);
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s GV_TIMEOUT_S=5 GV_WARN_UNUSED_ENV=0 "
             MPIRUN_ENV " timeout -k 5 50 mpirun -np 2 %s %s "
             "%s/tests/multirank/%s %s", c->tl, c->mca, mca, GV_BUILD_DIR,
             prog, args);
    t0      = now_s();
    rc      = drv_run(cmd, &out);
    elapsed = now_s() - t0;
    cr_assert_not_null(out);
    cr_expect((rc != 0) && (rc != 124), "exit %d:\n%s", rc, out);
    cr_expect(elapsed < 20.0, "took %.1f s to stop:\n%s", elapsed, out);
    cr_expect(strstr(out, named) != NULL, "no line says \"%s\":\n%s", named,
              out);
    free(out);
}

/* A rank that stops taking messages is named within GV_TIMEOUT_S under
 * mpirun too (mr_stuck: rank 1 sleeps while rank 0 sends to it). */
Test(mpirun, stuck_rank_named_mpi, .timeout = 90)
{
    expect_stuck_mpi(&cfgs[5], "", "mr_stuck", "",
                     "rank 1 took none of the messages sent to it for 5 s");
}

/* A one-sided wait inside the library: over Open MPI's pt2pt window a
 * fetch-add completes in MPI_Win_flush only when the target progresses,
 * and rank 1 sleeps (mr_stuck_amo). The AM watchdog cannot run while
 * MPI_Win_flush holds the thread; the monitor thread names rank 1. With
 * --flush-all the adds wait in a flush to every rank: one
 * MPI_Win_flush_all, which names the one rank with operations pending. */
#define NAMED_IN(_call)                                                      \
    "rank 1 failed or is unreachable (mpi): this rank waited 5 s "           \
    "(GV_TIMEOUT_S) inside " _call " for it"

Test(mpirun, stuck_target_named_mpi, .timeout = 90)
{
    expect_stuck_mpi(&cfgs[6], "--mca osc pt2pt", "mr_stuck_amo", "",
                     NAMED_IN("MPI_Win_flush"));
}

Test(mpirun, stuck_flush_all_named_mpi, .timeout = 90)
{
    expect_stuck_mpi(&cfgs[6], "--mca osc pt2pt", "mr_stuck_amo",
                     "--flush-all", NAMED_IN("MPI_Win_flush_all"));
}

/* ---- forged messages: the mpi transport's checks of what it gets ------ */

/* What transports/mpi.c logs when it rejects each kind that
 * preload_forge_mpi.c forges (it logs its first ten rejections). */
static const char *const forged_said[] = {
    "unknown tag ",                            /* FORGE_TAG */
    "longer than ",                            /* FORGE_LONG */
    "control frame of ",                       /* FORGE_RTS_SHORT */
    "bad control frame: header of ",           /* FORGE_RTS_BAD */
    "control frame announces ",                /* FORGE_RTS_LEN */
    "is not a peer",                           /* FORGE_SELF */
};

/* mr_ucx_order -N over the mpi transport on 2 ranks, with
 * preload_forge_mpi.so in front of MPI: before every 20th message on the
 * transport's communicator each rank sends its peer forged ones. Every
 * real message must arrive once, in order and intact (exit 0); both
 * ranks must have forged every kind; and the receivers must have said
 * why they dropped each. */
static void forged(int cfg)
{
    const cfg_t *c = &cfgs[cfg];
    char         cmd[1024], cwd[512], *out = NULL;
    const char  *line;
    int          rc, ok, nlines = 0;

    skip_unless_runnable(c, "mr_ucx_order");
    cr_assert(built("preload_forge_mpi.so"),
              "%s/tests/multirank/preload_forge_mpi.so was not built",
              GV_BUILD_DIR);
    cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s GV_WARN_UNUSED_ENV=0 " MPIRUN_ENV " "
             "timeout -k 5 120 mpirun --oversubscribe -np 2 %s "
             "-x LD_PRELOAD=%s/%s/tests/multirank/preload_forge_mpi.so "
             "-x GV_TEST_FORGE_EVERY=20 %s/tests/multirank/mr_ucx_order -N",
             c->tl, c->mca, cwd, GV_BUILD_DIR, GV_BUILD_DIR);
    rc = drv_run(cmd, &out);
    cr_assert_not_null(out);
    cr_expect_eq(rc, 0, "mr_ucx_order over %s with forged messages: exit "
                 "%d%s", c->label, rc, (rc == 124) ? " (timed out)" : "");
    ok = (rc == 0);
    for (line = strstr(out, "preload_forge_mpi: forged "); line != NULL;
         line = strstr(line + 1, "preload_forge_mpi: forged ")) {
        unsigned long n = 0;
        int           kinds = 0;

        nlines++;
        if ((sscanf(line, "preload_forge_mpi: forged %lu messages (%d "
                          "kinds)", &n, &kinds) != 2) ||
            (n == 0) || (kinds != 6)) {
            cr_expect_fail("a rank forged too little (6 kinds expected)");
            ok = 0;
        }
    }
    if (nlines != 2) {
        cr_expect_fail("%d of 2 ranks said what they forged", nlines);
        ok = 0;
    }
    if (drv_expect_lines(out, forged_said,
                         sizeof(forged_said) / sizeof(forged_said[0]),
                         "no receiver said about a forged message") > 0)
        ok = 0;
    if (!ok)
        cr_log_error("%s\n--- output ---\n%s--- end ---", cmd, out);
    free(out);
}

Test(mpirun, forged_vader, .timeout = 150)
{
    forged(5);
}

Test(mpirun, forged_tcp, .timeout = 150)
{
    forged(6);
}

/* ---- gvrun ranks are not an MPI job ---------------------------------- */

Test(mpirun, gvrun_refuses_mpi_transport, .timeout = 90)
{
    char cmd[1024], *out = NULL;
    int  rc;

    if (!GV_HAVE_MPI)
        cr_skip_test("transport mpi was not built");
    cr_assert(built("mr_die"), "mr_die was not built");
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=mpi GV_WARN_UNUSED_ENV=0 timeout -k 5 60 "
             "%s/bin/gvrun -n 2 %s/tests/multirank/mr_die --init-only",
             GV_BUILD_DIR, GV_BUILD_DIR);
    rc = drv_run(cmd, &out);
    cr_assert_not_null(out);
    cr_expect(rc != 0 && rc != 124, "exit %d:\n%s", rc, out);
    cr_expect(strstr(out, "the mpi transport needs mpirun (or srun); gvrun "
                          "ranks are not an MPI job") != NULL,
              "no clear refusal in:\n%s", out);
    free(out);
}
