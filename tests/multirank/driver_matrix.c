/* Criterion driver of the transport matrix: every tests/multirank/mr_*
 * program through gvrun, over every transport configuration of drv_tls[]
 * (those not built skip), with 2, 4 and 8 ranks (8 oversubscribes 2
 * cores), each under a time limit. The cases of one backend live in its
 * folder (ofi/driver_ofi.c, ...), under the same test name.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/driver_common.h"

/* A case over every transport configuration; with extra GV_* settings. */
#define ALL_TLS_ENV(_prog, _n, _args, _t, _e)                                \
    {DRV_ALL, _prog, _n, _args, _t, _e}
#define ALL_TLS(_prog, _n, _args, _t) ALL_TLS_ENV(_prog, _n, _args, _t, "")

/* A case over the composites shm+tcp and shm+ucx (driver.h), with the
 * ranks in @a _nodes pretend nodes: the basic conformance, not the whole
 * matrix (each row adds its time to the suite). */
#define COMPOSITE(_prog, _n, _args, _t, _nodes)                              \
    {DRV_SHM_TCP, _prog, _n, _args, _t, "GV_TEST_NODES=" #_nodes},           \
    {DRV_SHM_UCX, _prog, _n, _args, _t, "GV_TEST_NODES=" #_nodes}

static const mr_case_t cases[] = {
    ALL_TLS("mr_alltoall", 2, "-n 3000 -S 8192", 90),
    ALL_TLS("mr_alltoall", 4, "-n 1000 -S 70000", 90),
    ALL_TLS("mr_alltoall", 8, "-n 300 -S 4096", 120),
    ALL_TLS("mr_sizes", 2, "", 90),
    ALL_TLS("mr_sizes", 4, "", 120),
    ALL_TLS("mr_barrier", 2, "", 90),
    ALL_TLS("mr_barrier", 8, "", 120),
    ALL_TLS("mr_idle", 4, "", 60),
    ALL_TLS("mr_idle", 8, "", 60),
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
    ALL_TLS("mr_ofi_large", 2, "", 90),
    ALL_TLS("mr_ofi_large", 4, "", 120),
    ALL_TLS("mr_ofi_visible", 3, "", 90),
    ALL_TLS("mr_gups", 2, "--mode agg", 90),
    ALL_TLS("mr_gups", 2, "--mode am", 90),
    ALL_TLS("mr_gups", 2, "--mode native", 90),
    ALL_TLS("mr_gups", 4, "--mode agg", 120),
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
    COMPOSITE("mr_alltoall", 4, "-n 1000 -S 70000", 90, 2),
    COMPOSITE("mr_sizes", 4, "", 120, 2),
    COMPOSITE("mr_barrier", 8, "", 120, 3),
    COMPOSITE("mr_idle", 8, "", 60, 3),
    COMPOSITE("mr_word", 6, "-n 20000", 120, 3),
    /* The node view of the bootstrap those open shm over: no transport's
     * business, one run. */
    {DRV_TCP, "mr_boot_view", 4, "", 60, ""},
};

DRV_MULTIRANK_RUN(cases)
